/*
 * record.c - the two perf records of a capture and the window between
 * "enable" and "disable": perf starts disabled, so that the on- and
 * off-CPU recordings begin and end together, whatever their start-up
 * costs (seconds, for a machine-wide one on a busy machine).
 */
#include "capture/internal.h"

#include "core/count.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- perf record ---- */

static bool in_init_pid_ns(const char *root)
{
	char *link = g_strdup_printf("%s/self/ns/pid", root);
	char *target = g_file_read_link(link, NULL);
	bool init = !target || strcmp(target, PID_NS_INIT) == 0;

	g_free(link);
	g_free(target);
	return init;
}

/*
 * The off-CPU recording's filter, in *out that of the switches out alone,
 * and in *wake that of the wake-ups
 */
static char *switch_filter(struct session *s, char **out, char **wake)
{
	GArray *pids = cap_tracked_pids(s, false, true), *tids = g_array_new(FALSE, FALSE, sizeof(int));
	char *filter;

	for (guint i = 0; i < pids->len; i++) {
		GArray *t = fk_proc_tids(s->cfg->proc_root, g_array_index(pids, int, i));

		g_array_append_vals(tids, t->data, t->len);
		g_array_unref(t);
	}
	/* read after the threads: every thread started later is newer */
	s->last_pid = fk_proc_last_pid(s->cfg->proc_root);
	s->pid_ns = !in_init_pid_ns(s->cfg->proc_root);
	if (s->pid_ns) {
		cap_warn(s, "fp-record runs in a PID namespace (a container), where the kernel's "
		     "thread ids are not visible: the off-CPU recording takes every switch "
		     "on the machine");
		filter = NULL;
	} else if (!(filter = fk_switch_filter((int *)(void *)tids->data, tids->len,
					       s->last_pid, FK_FILTER_MAX)) ||
		   !(*out = fk_switch_out_filter((int *)(void *)tids->data, tids->len,
						 s->last_pid, FK_FILTER_MAX)) ||
		   !(*wake = fk_wake_filter((int *)(void *)tids->data, tids->len,
					    s->last_pid, FK_FILTER_MAX))) {
		g_free(filter);
		g_free(*out);
		*out = NULL;
		filter = NULL;
		cap_warn(s, "%u threads are too many for a tracepoint filter: the off-CPU "
		     "recording takes every switch on the machine", tids->len);
	} else {
		cap_say(s, "off-CPU: the switches of %u threads, and of tasks started from now on",
		    tids->len);
	}
	g_array_unref(pids);
	g_array_unref(tids);
	return filter;
}

static gboolean on_ack(gint fd, GIOCondition cond, gpointer data)
{
	struct rec *r = data;
	char buf[256];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				r->acks++;
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		r->ack_src = 0;
		return G_SOURCE_REMOVE;
	}
	return G_SOURCE_CONTINUE;
}

static void rec_close(struct rec *r)
{
	if (r->ack_src)
		g_source_remove(r->ack_src);
	r->ack_src = 0;
	if (r->ctl >= 0)
		close(r->ctl);
	if (r->ack >= 0)
		close(r->ack);
	r->ctl = r->ack = -1;
}

static int rec_start(struct session *s, struct rec *r, char **argv, GError **err)
{
	int ctl[2], ack[2], fds[2], log;
	struct fk_spawn how = { .argv = (const char *const *)argv, .in_fd = -1,
				.fds = fds, .nfds = 2, .own_group = true,
				.cwd_fd = fk_outdir_fd(s->priv) };

	/* a second attempt (see cap_start_recording()) starts afresh */
	fk_outdir_unlink(s->priv, r->log, NULL);
	fk_outdir_unlink(s->priv, r->data, NULL);
	if ((log = fk_outdir_new_fd(s->priv, r->log, err)) < 0)
		return -1;
	if (!g_unix_open_pipe(ctl, FD_CLOEXEC, err)) {
		close(log);
		return -1;
	}
	if (!g_unix_open_pipe(ack, FD_CLOEXEC, err)) {
		close(ctl[0]);
		close(ctl[1]);
		close(log);
		return -1;
	}
	fds[0] = ctl[0];
	fds[1] = ack[1];
	how.out_fd = how.err_fd = log;
	r->child = fk_child_spawn(&how, err);
	close(ctl[0]);
	close(ack[1]);
	close(log);
	r->ctl = ctl[1];
	r->ack = ack[0];
	r->acks = 0;
	if (!r->child) {
		rec_close(r);
		return -1;
	}
	g_unix_set_fd_nonblocking(r->ack, TRUE, NULL);
	r->ack_src = g_unix_fd_add(r->ack, G_IO_IN | G_IO_HUP | G_IO_ERR, on_ack, r);
	return 0;
}

/* a command on perf's control pipe; false if perf is gone */
static bool rec_send(struct rec *r, const char *cmd)
{
	size_t n = strlen(cmd);

	return r->child && r->ctl >= 0 && write(r->ctl, cmd, n) == (ssize_t)n;
}

static bool rec_running(const struct rec *r)
{
	return r->child && !fk_child_exited(r->child);
}

char *cap_read_text(struct session *s, const char *name)
{
	char *path = cap_priv_path(s, name), *text = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		text = g_strdup("");
	g_free(path);
	return text;
}

/* whether the private directory holds name */
static bool priv_has(struct session *s, const char *name)
{
	struct stat sb;

	return fstatat(fk_outdir_fd(s->priv), name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
}

static char *rec_failure(struct session *s, const struct rec *r)
{
	char *log = cap_read_text(s, r->log), *p = NULL, *msg;
	struct fk_perf_context ctx = {
		.offcpu = r->offcpu, .root = geteuid() == 0, .paranoid = INT_MIN,
		.version = s->version,
	};

	if (g_file_get_contents("/proc/sys/kernel/perf_event_paranoid", &p, NULL, NULL))
		ctx.paranoid = atoi(p);
	g_free(p);
	msg = fk_perf_failure(log, &ctx);
	g_free(log);
	if (r->child && fk_child_exited(r->child) && !fk_child_ok(r->child, SIGINT)) {
		char *why = fk_child_exit_text(r->child), *both;

		both = g_strdup_printf("%s (perf %s)", msg, why);
		g_free(why);
		g_free(msg);
		msg = both;
	}
	return msg;
}

bool cap_recs_acked(struct session *s)
{
	struct rec *rs[] = { &s->on, &s->off };

	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++)
		if (rs[i]->child && rs[i]->acks < s->want_acks && !fk_child_exited(rs[i]->child))
			return false;
	return true;
}

/* drops the selected processes that have gone; true if there were any */
static bool drop_gone(struct session *s)
{
	GArray *pids = cap_tracked_pids(s, false, false);
	bool dropped = false;

	for (guint i = 0; i < pids->len; i++) {
		int pid = g_array_index(pids, int, i);
		struct fk_proc *p = fk_proc_read(s->cfg->proc_root, pid, 0);

		if (!p || p->state == 'Z' || p->state == 'X') {
			struct tracked *t = g_hash_table_lookup(s->procs, GINT_TO_POINTER(pid));

			cap_warn(s, "process %d (%s) exited before recording began", pid, t->comm);
			g_hash_table_remove(s->procs, GINT_TO_POINTER(pid));
			dropped = true;
		}
		fk_proc_free(p);
	}
	g_array_unref(pids);
	return dropped;
}

void cap_rec_kill(struct rec *r)
{
	rec_close(r);
	if (r->child) {
		fk_child_free(r->child);
		r->child = NULL;
	}
}

int cap_start_recording(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;

	for (int attempt = 0;; attempt++) {
		struct fk_record_cmd rc = { .perf = c->perf, .ctl_fd = 3, .ack_fd = 4,
					    .freq = c->freq, .cg = c->cg,
					    .stack_dump = c->stack_dump,
					    .mmap_kb = geteuid() == 0
						       ? fk_offcpu_buffer_kb(sysconf(_SC_NPROCESSORS_CONF))
						       : 0 };
		GArray *pids = cap_tracked_pids(s, false, false);
		struct rec *failed = NULL;
		char **argv, *msg;
		int rc_on = 0, rc_off = 0;

		if (pids->len == 0) {
			g_array_unref(pids);
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "every process chosen has exited: "
				    "nothing to record");
			return -1;
		}
		/* every process started from now on has a larger pid */
		s->last_pid = fk_proc_last_pid(c->proc_root);
		if (c->on) {
			rc.data = s->on.data;
			argv = fk_perf_record_on(&rc, (int *)(void *)pids->data, pids->len);
			rc_on = rec_start(s, &s->on, argv, err);
			g_strfreev(argv);
		}
		g_array_unref(pids);
		if (rc_on == 0 && c->off) {
			char *out = NULL, *wake = NULL, *filter = switch_filter(s, &out, &wake);

			rc.data = s->off.data;
			rc.dump_filter = out;
			rc.wake_filter = wake;
			argv = fk_perf_record_off(&rc, filter);
			rc_off = rec_start(s, &s->off, argv, err);
			g_strfreev(argv);
			g_free(filter);
			g_free(out);
			g_free(wake);
		}
		if (rc_on < 0 || rc_off < 0)
			return -1;
		/*
		 * Both start disabled.  perf answers a command only once it
		 * runs, so a "disable" tells when each is ready (seconds apart:
		 * a machine-wide recording starts slowly); only then are both
		 * enabled, together.
		 */
		s->want_acks = 1;
		rec_send(&s->on, "disable\n");
		rec_send(&s->off, "disable\n");
		cap_say(s, "starting perf record (the window opens when %s)",
		    c->on && c->off ? "both have started" : "it has started");
		if (cap_run_until(s, cap_recs_acked, START_MS) && !s->signals &&
		    !(s->on.child && fk_child_exited(s->on.child)) &&
		    !(s->off.child && fk_child_exited(s->off.child))) {
			s->want_acks = 2;
			s->t0 = g_get_monotonic_time();
			rec_send(&s->on, "enable\n");
			rec_send(&s->off, "enable\n");
			cap_run_until(s, cap_recs_acked, ACK_MS);
		}
		if (s->signals) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "interrupted before the window opened: nothing recorded");
			return -1;
		}
		if (s->on.child && fk_child_exited(s->on.child))
			failed = &s->on;
		else if (s->off.child && fk_child_exited(s->off.child))
			failed = &s->off;
		if (!failed && !cap_recs_acked(s)) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "perf record did not start within %d s", START_MS / 1000);
			return -1;
		}
		if (!failed)
			return 0;
		msg = rec_failure(s, failed);
		cap_rec_kill(&s->on);
		cap_rec_kill(&s->off);
		/* a process that exited meanwhile fails -p: try without it */
		if (attempt < 3 && !c->cmd && drop_gone(s)) {
			g_free(msg);
			continue;
		}
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s", msg);
		g_free(msg);
		return -1;
	}
}

/* ---- the window ---- */

static void poll_procs(struct session *s)
{
	const struct fk_capture_cfg *c = s->cfg;
	GPtrArray *all = fk_proc_scan(c->proc_root, 0, NULL), *added;
	GHashTable *family;
	GHashTableIter it;
	gpointer val;
	bool any = false;

	if (!all)
		return;
	family = g_hash_table_new(g_direct_hash, g_direct_equal);
	g_hash_table_iter_init(&it, s->procs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct tracked *t = val;
		struct fk_proc *p = fk_proc_find(all, t->pid);

		g_hash_table_add(family, GINT_TO_POINTER(t->pid));
		if (t->gone)
			continue;
		if (!p || p->state == 'Z' || p->state == 'X') {
			t->gone = true;
			t->exited = cap_now_s(s);
			continue;
		}
		any = true;
		if (strcmp(p->comm, t->comm) != 0 || !t->exe ||
		    (s->shell_exe && strcmp(t->exe, s->shell_exe) == 0)) {
			/* renamed, or the command has been exec'd */
			struct fk_proc *full = fk_proc_read(c->proc_root, t->pid, FK_PROC_ALL);

			g_free(t->comm);
			t->comm = g_strdup(p->comm);
			if (full && full->argv) {
				g_strfreev(t->argv);
				t->argv = g_strdupv(full->argv);
			}
			if (full && full->exe) {
				g_free(t->exe);
				t->exe = g_strdup(full->exe);
			}
			if (t->exe && s->shell_exe && strcmp(t->exe, s->shell_exe) != 0)
				g_clear_pointer(&s->shell_exe, g_free);
			fk_proc_free(full);
		}
	}
	added = g_ptr_array_new();
	fk_proc_descendants(all, family, s->last_pid, added);
	for (guint i = 0; i < added->len; i++) {
		struct fk_proc *p = g_ptr_array_index(added, i);
		struct fk_proc *full = fk_proc_read(c->proc_root, p->pid, FK_PROC_ALL);

		if (full && full->state != 'Z') {
			cap_say(s, "process %d (%s) started during the window as a child of %d: "
			    "recorded with it", p->pid, full->comm, p->ppid);
			cap_track(s, full, false);
			any = true;
		}
		fk_proc_free(full);
	}
	g_ptr_array_unref(added);
	/* newcomers of the same program that perf cannot follow */
	for (guint i = 0; !c->cmd && c->by != FK_BY_PID && i < all->len; i++) {
		struct fk_proc *p = g_ptr_array_index(all, i), *full;
		bool hit;

		if (p->pid <= s->last_pid || g_hash_table_contains(family, GINT_TO_POINTER(p->pid)) ||
		    g_hash_table_contains(s->seen_new, GINT_TO_POINTER(p->pid)) || p->pid == getpid())
			continue;
		g_hash_table_add(s->seen_new, GINT_TO_POINTER(p->pid));
		if (!(full = fk_proc_read(c->proc_root, p->pid, FK_PROC_EXE)))
			continue;
		if (c->by == FK_BY_EXE) {
			hit = full->exe && strcmp(full->exe, c->exe) == 0;
		} else {
			char *name = full->exe ? fk_proc_exe_name(full->exe) : NULL;

			hit = strcmp(full->comm, c->name) == 0 || (name && strcmp(name, c->name) == 0);
			g_free(name);
		}
		if (hit)
			cap_warn(s, "process %d (%s) started during the window from the same program, "
			     "but not as a child of a recorded process: not recorded", p->pid,
			     full->comm);
		fk_proc_free(full);
	}
	s->all_gone = !any;
	g_hash_table_destroy(family);
	g_ptr_array_unref(all);
}

static gboolean on_poll(gpointer data)
{
	poll_procs(data);
	return G_SOURCE_CONTINUE;
}

static bool window_over(struct session *s)
{
	if (s->window_timeout)
		s->ended = NULL;
	else if (s->cmd && fk_child_exited(s->cmd))
		s->ended = "the command exited";
	else if (s->all_gone)
		s->ended = "every recorded process had exited";
	else if (s->on.child && fk_child_exited(s->on.child))
		s->ended = "perf record (on-CPU) stopped";
	else if (s->off.child && fk_child_exited(s->off.child))
		s->ended = "perf record (off-CPU) stopped";
	else
		return false;
	return true;
}

void cap_run_window(struct session *s)
{
	guint timer, poller;

	if (s->cmd)
		fk_child_signal(s->cmd, SIGCONT);
	cap_say(s, "recording for %g s (Ctrl-C ends the window early)", s->cfg->seconds);
	timer = g_timeout_add((guint)(s->cfg->seconds * 1000), cap_on_flag, &s->window_timeout);
	poller = g_timeout_add(POLL_MS, on_poll, s);
	cap_run_until(s, window_over, -1);
	if (!s->window_timeout)
		g_source_remove(timer);
	g_source_remove(poller);
	poll_procs(s);
	if (s->signals)
		s->ended = "interrupted";
	else if (s->all_gone)
		s->ended = "every recorded process had exited";
}

static void say_size(struct session *s, const struct rec *r)
{
	char *log = cap_read_text(s, r->log), *p = strstr(log, " samples) ]"), *q, **lines;
	struct stat st;
	double mb = fstatat(fk_outdir_fd(s->priv), r->data, &st, AT_SYMLINK_NOFOLLOW) == 0
		? (double)st.st_size / 1e6 : 0;

	/* perf: "[ perf record: Captured and wrote 0.015 MB on.data (147 samples) ]" */
	for (q = p; q && q > log && g_ascii_isdigit(q[-1]); q--)
		;
	if (p && q < p)
		cap_say(s, "%s: %.*s %s, %.1f MB", r->what, (int)(p - q), q,
		    r->offcpu ? "sched_switch events" : "samples", mb);
	else
		cap_say(s, "%s: %.1f MB recorded", r->what, mb);
	lines = g_strsplit(log, "\n", -1);
	for (char **l = lines; *l; l++)
		if (strstr(*l, "lost") || strstr(*l, "LOST"))
			cap_warn(s, "%s: perf says: %s", r->what, g_strstrip(*l));
	g_strfreev(lines);
	g_free(log);
}

static bool recs_disabled(struct session *s)
{
	return cap_recs_acked(s);
}

void cap_stop_recording(struct session *s)
{
	struct rec *rs[] = { &s->on, &s->off };

	/* disable both first, so that they end together */
	s->want_acks = 3;
	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++)
		if (rec_running(rs[i]))
			rec_send(rs[i], "disable\n");
	bool stopped = cap_run_until(s, recs_disabled, ACK_MS);

	s->t1 = g_get_monotonic_time();
	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
		struct rec *r = rs[i];

		if (!r->child)
			continue;
		/* perf record ends on SIGINT, writing what it has */
		fk_child_end(r->child, SIGINT, STOP_MS);
		rec_close(r);
		if (!fk_child_ok(r->child, SIGINT)) {
			char *why = fk_child_exit_text(r->child), *msg = rec_failure(s, r);

			cap_warn(s, "perf record (%s) %s: %s", r->what, why, msg);
			g_free(why);
			g_free(msg);
			r->failed = true;
		}
		if (priv_has(s, r->data))
			say_size(s, r);
	}
	/* one that never said it stopped recorded until it ended */
	if (!stopped)
		s->t1 = g_get_monotonic_time();
}

void cap_rec_init(struct session *s, struct rec *r, bool offcpu)
{
	r->what = offcpu ? "off-CPU" : "on-CPU";
	r->offcpu = offcpu;
	r->ctl = r->ack = -1;
	/* in the private directory, perf's working directory; kept ones
	 * are moved to DIR at the end */
	r->data = offcpu ? "off.data" : "on.data";
	r->log = offcpu ? "record-off.log" : "record-on.log";
}
