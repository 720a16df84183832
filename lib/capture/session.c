#include "capture/session.h"

#include "capture/child.h"
#include "capture/outputs.h"
#include "core/count.h"
#include "core/error.h"
#include "core/textesc.h"

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

#define POLL_MS 100
#define START_MS 120000		/* perf -a can take long to start on a busy machine */
#define ACK_MS 10000
#define STOP_MS 120000
#define END_MS 3000		/* grace for the load and the command */
#define PID_NS_INIT "pid:[4026531836]"	/* the initial PID namespace's link */
#define UNRESOLVED_SHARE 0.5	/* above it, a profile is mostly unnamed frames */

struct rec {
	const char *what;	/* "on-CPU", "off-CPU" */
	bool offcpu;
	char *data, *log;
	struct fk_child *child;
	int ctl, ack;		/* our ends of perf's control pipes, or -1 */
	guint ack_src;
	unsigned acks;
};

struct tracked {
	int pid;
	char *comm, *exe;
	bool selected, gone;
	double exited;		/* seconds into the window, or -1 */
};

struct fold;

struct session {
	const struct fk_capture_cfg *cfg;
	bool made_dir;
	char *tmp;		/* DIR/.fp-record-XXXXXX */
	char *version;		/* perf's */
	char *fold2svg, *collapse, *report;
	GHashTable *procs;	/* pid -> struct tracked */
	GHashTable *seen_new;	/* new pids already looked at */
	struct rec on, off;
	unsigned want_acks;	/* from each running perf */
	struct fold *folds[2];	/* on, off */
	struct fk_child *load, *cmd;
	bool load_warned;
	char *shell_exe;	/* the command's until it is exec'd */
	unsigned signals;
	bool window_timeout, all_gone;
	gint64 t0, t1;
	int last_pid;
	const char *ended;	/* why the window ended */
	GPtrArray *rows;	/* struct fk_out_row * */
	GPtrArray *notes;	/* char *: the warnings, for report.md */
	GPtrArray *paths;
};

/* one line to the caller; kept for report.md's notes with keep */
static void emit(struct session *s, bool keep, const char *fmt, va_list ap)
{
	char *line = g_strdup_vprintf(fmt, ap);

	if (s->cfg->say)
		s->cfg->say(s->cfg->say_data, line);
	if (keep)
		g_ptr_array_add(s->notes, line);
	else
		g_free(line);
}

static void say(struct session *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void say(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(s, false, fmt, ap);
	va_end(ap);
}

/* a warning: said, and in the report */
static void warn(struct session *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void warn(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(s, true, fmt, ap);
	va_end(ap);
}

static double now_s(const struct session *s)
{
	return (double)(g_get_monotonic_time() - s->t0) / 1e6;
}

static void tracked_free(gpointer p)
{
	struct tracked *t = p;

	g_free(t->comm);
	g_free(t->exe);
	g_free(t);
}

static struct tracked *track(struct session *s, const struct fk_proc *p, bool selected)
{
	struct tracked *t = g_new0(struct tracked, 1);

	t->pid = p->pid;
	t->comm = g_strdup(p->comm);
	t->exe = g_strdup(p->exe);
	t->selected = selected;
	t->exited = -1;
	g_hash_table_replace(s->procs, GINT_TO_POINTER(p->pid), t);
	return t;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* the tracked processes, by pid */
static GArray *tracked_pids(struct session *s, bool selected_only, bool alive_only)
{
	GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, s->procs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct tracked *t = val;

		if ((selected_only && !t->selected) || (alive_only && t->gone))
			continue;
		g_array_append_val(v, t->pid);
	}
	g_array_sort(v, int_cmp);
	return v;
}

/* ---- the programs fp-record needs ---- */

char *fk_capture_find_tool(const char *bindir, const char *name)
{
	char *p = bindir ? g_build_filename(bindir, name, NULL) : NULL;

	if (p && g_file_test(p, G_FILE_TEST_IS_EXECUTABLE) &&
	    !g_file_test(p, G_FILE_TEST_IS_DIR))
		return p;
	g_free(p);
	return g_find_program_in_path(name);
}

char *fk_capture_find_plugin(const char *given, const char *bindir, const char *installed)
{
	char *tries[] = {
		g_build_filename(bindir, "..", "perf-plugin", "foldkit.so", NULL),
		g_build_filename(bindir, "..", "libexec", "perf-core", "dlfilters", "foldkit.so", NULL),
		g_build_filename(installed, "foldkit.so", NULL),
	};
	char *found = given ? g_strdup(given) : NULL;

	for (size_t i = 0; i < G_N_ELEMENTS(tries); i++) {
		if (!found && g_file_test(tries[i], G_FILE_TEST_IS_REGULAR))
			found = g_canonicalize_filename(tries[i], NULL);
		g_free(tries[i]);
	}
	return found;
}

static int check_tools(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	const char *argv[] = { c->perf, "version", NULL };
	char *out = NULL, *errout = NULL;
	int status = 0;
	GError *e = NULL;

	if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
			  &out, &errout, &status, &e)) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "cannot run perf ('%s'): %s; %s",
			    c->perf, e->message, fk_perf_install_hint);
		g_error_free(e);
		return -1;
	}
	if (!g_spawn_check_wait_status(status, NULL) || !(s->version = fk_perf_version(out))) {
		char **lines = g_strsplit(errout && *errout ? errout : out ? out : "", "\n", 2);

		g_set_error(err, FK_ERROR, FK_ERROR_IO, "perf does not run here (%s): %s",
			    lines[0] && *lines[0] ? g_strstrip(lines[0]) : "no version",
			    fk_perf_install_hint);
		g_strfreev(lines);
		g_free(out);
		g_free(errout);
		return -1;
	}
	g_free(out);
	g_free(errout);
	if ((c->off || c->cg == FK_CG_FP) &&
	    (!c->plugin || !g_file_test(c->plugin, G_FILE_TEST_IS_REGULAR))) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO,
			    "the perf plugin foldkit.so was not found%s%s%s: build foldkit "
			    "(make), or name it with --plugin FILE or FOLDKIT_PLUGIN",
			    c->plugin ? " ('" : "", c->plugin ? c->plugin : "",
			    c->plugin ? "')" : "");
		return -1;
	}
	if (c->on && c->cg == FK_CG_DWARF &&
	    !(s->collapse = fk_capture_find_tool(c->bindir, "fp-collapse"))) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO,
			    "--call-graph dwarf needs fp-collapse, which was not found next "
			    "to fp-record or in PATH");
		return -1;
	}
	s->fold2svg = fk_capture_find_tool(c->bindir, "fold2svg");
	s->report = fk_capture_find_tool(c->bindir, "fold-report");
	return 0;
}

/* ---- the output directory ---- */

static int make_dir(struct session *s, GError **err)
{
	const char *dir = s->cfg->dir;
	GDir *d;

	if (g_file_test(dir, G_FILE_TEST_EXISTS)) {
		bool empty;

		if (!(d = g_dir_open(dir, 0, NULL))) {
			fk_error_at(err, FK_ERROR_IO, dir, 0, "not a directory one can write to");
			return -1;
		}
		empty = g_dir_read_name(d) == NULL;
		g_dir_close(d);
		if (!empty) {
			fk_error_at(err, FK_ERROR_IO, dir, 0,
				    "not empty: name a new directory with -o DIR");
			return -1;
		}
	} else if (g_mkdir_with_parents(dir, 0777) != 0) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "cannot create: %s", g_strerror(errno));
		return -1;
	} else {
		s->made_dir = true;
	}
	s->tmp = g_build_filename(dir, ".fp-record-XXXXXX", NULL);
	if (!g_mkdtemp(s->tmp)) {
		fk_error_at(err, FK_ERROR_IO, s->tmp, 0, "cannot create: %s", g_strerror(errno));
		g_clear_pointer(&s->tmp, g_free);
		return -1;
	}
	return 0;
}

static void rm_tree(const char *path)
{
	GDir *d = g_dir_open(path, 0, NULL);
	const char *name;

	if (d) {
		while ((name = g_dir_read_name(d))) {
			char *p = g_build_filename(path, name, NULL);

			if (g_file_test(p, G_FILE_TEST_IS_DIR) &&
			    !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
				rm_tree(p);
			else
				g_unlink(p);
			g_free(p);
		}
		g_dir_close(d);
	}
	g_rmdir(path);
}

static int open_log(const char *path, GError **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

	if (fd < 0)
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot create: %s", g_strerror(errno));
	return fd;
}

/* ---- choosing the processes ---- */

static bool is_script(const char *path)
{
	char buf[2] = { 0, 0 };
	FILE *f = fopen(path, "rb");

	if (!f)
		return false;
	if (fread(buf, 1, 2, f) != 2)
		buf[0] = 0;
	fclose(f);
	return buf[0] == '#' && buf[1] == '!';
}

static int choose(struct session *s, int skip_pgid, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	struct fk_select sel = {
		.by = c->by, .root = c->proc_root, .exe = c->exe, .name = c->name,
		.pids = c->pids, .npids = c->npids, .skip_pid = getpid(),
		.skip_pgid = skip_pgid,
	};
	GPtrArray *all = fk_proc_scan(c->proc_root, FK_PROC_ALL, err);
	struct fk_match m;
	int rc = 0;

	if (!all)
		return -1;
	fk_proc_select(all, &sel, &m);
	if (m.missing->len) {
		GString *list = g_string_new(NULL);

		for (guint i = 0; i < m.missing->len; i++)
			g_string_append_printf(list, "%s%d", i ? ", " : "",
					       g_array_index(m.missing, int, i));
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "no process with pid %s", list->str);
		g_string_free(list, TRUE);
		rc = -1;
	}
	if (rc == 0 && (m.near->len || m.hidden) && (m.chosen->len == 0 || c->by == FK_BY_PID)) {
		if (m.near->len)
			say(s, "near misses (not chosen):");
		for (guint i = 0; i < m.near->len; i++)
			say(s, "  %s", (char *)g_ptr_array_index(m.near, i));
		if (m.hidden && c->by != FK_BY_PID && geteuid() != 0)
			say(s, "%u process%s could not be inspected (%s other users'): run "
			    "fp-record as root to see them all", m.hidden,
			    m.hidden == 1 ? "" : "es", m.hidden == 1 ? "it is" : "they are");
	}
	if (rc == 0 && m.chosen->len == 0) {
		if (c->by == FK_BY_EXE && is_script(c->exe))
			say(s, "%s is a script: its processes run its interpreter, so choose "
			    "them with --name or --pid", c->exe);
		if (c->by == FK_BY_EXE)
			g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "no process runs %s", c->exe);
		else if (c->by == FK_BY_NAME)
			g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "no process is named '%s' "
				    "(by its comm or its executable's file name)", c->name);
		else
			g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "no process to record");
		rc = -1;
	}
	for (guint i = 0; rc == 0 && i < m.chosen->len; i++) {
		struct fk_proc *p = g_ptr_array_index(m.chosen, i);

		if (!p->exe && p->exe_errno == EACCES && geteuid() != 0) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "process %d (%s) belongs to another user: run fp-record "
				    "as root (sudo), or as that user", p->pid, p->comm);
			rc = -1;
		}
	}
	if (rc == 0) {
		g_hash_table_remove_all(s->procs);
		for (guint i = 0; i < m.chosen->len; i++)
			track(s, g_ptr_array_index(m.chosen, i), true);
	}
	fk_match_clear(&m);
	g_ptr_array_unref(all);
	return rc;
}

/* ---- waiting ---- */

static gboolean on_signal(gpointer data)
{
	((struct session *)data)->signals++;
	return G_SOURCE_CONTINUE;
}

static gboolean on_flag(gpointer data)
{
	*(bool *)data = true;
	return G_SOURCE_REMOVE;
}

/*
 * Runs the main loop until done(s) or a new signal or timeout_ms (-1:
 * none).  Returns done(s).
 */
static bool run_until(struct session *s, bool (*done)(struct session *), int timeout_ms)
{
	unsigned signals = s->signals;
	bool timed_out = false;
	guint t = timeout_ms >= 0 ? g_timeout_add((guint)timeout_ms, on_flag, &timed_out) : 0;

	while (!done(s) && !timed_out && s->signals == signals)
		g_main_context_iteration(NULL, TRUE);
	if (t && !timed_out)
		g_source_remove(t);
	return done(s);
}

/* ---- the load generator and the command ---- */

static bool load_exited(struct session *s)
{
	return fk_child_exited(s->load);
}

static int start_load(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	char *log = g_build_filename(c->dir, "load.log", NULL);
	const char *argv[] = { "/bin/sh", "-c", c->load, NULL };
	struct fk_spawn how = { .argv = argv, .in_fd = -1, .own_group = true };
	int fd = open_log(log, err);

	if (fd < 0) {
		g_free(log);
		return -1;
	}
	how.out_fd = how.err_fd = fd;
	s->load = fk_child_spawn(&how, err);
	close(fd);
	if (!s->load) {
		g_free(log);
		return -1;
	}
	g_ptr_array_add(s->paths, g_strdup(log));
	say(s, "started the load (pid %d, output in %s); warming up for %g s",
	    fk_child_pid(s->load), log, c->warmup);
	run_until(s, load_exited, (int)(c->warmup * 1000));
	if (s->signals) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "interrupted during the warmup: nothing recorded");
	} else if (fk_child_exited(s->load)) {
		char *why = fk_child_exit_text(s->load);

		s->load_warned = true;
		if (fk_child_ok(s->load, 0))
			warn(s, "the load %s during the warmup: the window runs without it", why);
		else
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "the load %s during the warmup: "
				    "see %s", why, log);
		g_free(why);
	}
	g_free(log);
	return err && *err ? -1 : 0;
}

static int start_command(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	char *path = g_find_program_in_path(c->cmd[0]);
	GPtrArray *argv;
	struct fk_spawn how = { .in_fd = -1, .inherit_in = true, .out_fd = -1,
				.err_fd = -1, .own_group = true };
	struct fk_proc *p = NULL;
	struct tracked *t;

	if (!path) {
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "cannot run '%s': not found", c->cmd[0]);
		return -1;
	}
	g_free(path);
	/*
	 * A shell that stops itself, then becomes the command: its pid is
	 * known, and perf attached, before the command's first instruction.
	 */
	argv = g_ptr_array_new();
	g_ptr_array_add(argv, "/bin/sh");
	g_ptr_array_add(argv, "-c");
	g_ptr_array_add(argv, "kill -STOP $$ && exec \"$@\"");
	g_ptr_array_add(argv, "fp-record");
	for (char **a = c->cmd; *a; a++)
		g_ptr_array_add(argv, *a);
	g_ptr_array_add(argv, NULL);
	how.argv = (const char *const *)argv->pdata;
	s->cmd = fk_child_spawn(&how, err);
	g_ptr_array_free(argv, TRUE);
	if (!s->cmd)
		return -1;
	for (int waited = 0; waited < 10000 && !fk_child_exited(s->cmd); waited += 5) {
		fk_proc_free(p);
		p = fk_proc_read(c->proc_root, fk_child_pid(s->cmd), 0);
		if (p && p->state == 'T')
			break;
		g_main_context_iteration(NULL, FALSE);
		g_usleep(5000);
	}
	if (!p || p->state != 'T') {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "cannot start '%s'", c->cmd[0]);
		fk_proc_free(p);
		return -1;
	}
	{
		struct fk_proc *full = fk_proc_read(c->proc_root, p->pid, FK_PROC_EXE);

		s->shell_exe = g_strdup(full && full->exe ? full->exe : "");
		fk_proc_free(full);
	}
	t = track(s, p, true);
	fk_proc_free(p);
	/* it becomes the command at exec: until then, call it that */
	g_free(t->comm);
	t->comm = g_path_get_basename(c->cmd[0]);
	g_clear_pointer(&t->exe, g_free);
	return 0;
}

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

static char *switch_filter(struct session *s)
{
	GArray *pids = tracked_pids(s, false, true), *tids = g_array_new(FALSE, FALSE, sizeof(int));
	char *filter;

	for (guint i = 0; i < pids->len; i++) {
		GArray *t = fk_proc_tids(s->cfg->proc_root, g_array_index(pids, int, i));

		g_array_append_vals(tids, t->data, t->len);
		g_array_unref(t);
	}
	/* read after the threads: every thread started later is newer */
	s->last_pid = fk_proc_last_pid(s->cfg->proc_root);
	if (!in_init_pid_ns(s->cfg->proc_root)) {
		warn(s, "fp-record runs in a PID namespace (a container), where the kernel's "
		     "thread ids are not visible: the off-CPU recording takes every switch "
		     "on the machine");
		filter = NULL;
	} else if (!(filter = fk_switch_filter((int *)(void *)tids->data, tids->len,
					       s->last_pid, FK_FILTER_MAX))) {
		warn(s, "%u threads are too many for a tracepoint filter: the off-CPU "
		     "recording takes every switch on the machine", tids->len);
	} else {
		say(s, "off-CPU: the switches of %u threads, and of tasks started from now on",
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
				.fds = fds, .nfds = 2, .own_group = true };

	if ((log = open_log(r->log, err)) < 0)
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

static char *read_text(const char *path)
{
	char *text = NULL;

	if (g_file_get_contents(path, &text, NULL, NULL))
		return text;
	return g_strdup("");
}

static char *rec_failure(struct session *s, const struct rec *r)
{
	char *log = read_text(r->log), *p = NULL, *msg;
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

static bool recs_acked(struct session *s)
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
	GArray *pids = tracked_pids(s, false, false);
	bool dropped = false;

	for (guint i = 0; i < pids->len; i++) {
		int pid = g_array_index(pids, int, i);
		struct fk_proc *p = fk_proc_read(s->cfg->proc_root, pid, 0);

		if (!p || p->state == 'Z' || p->state == 'X') {
			struct tracked *t = g_hash_table_lookup(s->procs, GINT_TO_POINTER(pid));

			warn(s, "process %d (%s) exited before recording began", pid, t->comm);
			g_hash_table_remove(s->procs, GINT_TO_POINTER(pid));
			dropped = true;
		}
		fk_proc_free(p);
	}
	g_array_unref(pids);
	return dropped;
}

static void rec_kill(struct rec *r)
{
	rec_close(r);
	if (r->child) {
		fk_child_free(r->child);
		r->child = NULL;
	}
}

static int start_recording(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;

	for (int attempt = 0;; attempt++) {
		struct fk_record_cmd rc = { .perf = c->perf, .ctl_fd = 3, .ack_fd = 4,
					    .freq = c->freq, .cg = c->cg };
		GArray *pids = tracked_pids(s, false, false);
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
			char *filter = switch_filter(s);

			rc.data = s->off.data;
			argv = fk_perf_record_off(&rc, filter);
			rc_off = rec_start(s, &s->off, argv, err);
			g_strfreev(argv);
			g_free(filter);
		}
		if (rc_on < 0 || rc_off < 0)
			return -1;
		/* both start disabled; "enable" is answered once they run */
		s->want_acks = 1;
		rec_send(&s->on, "enable\n");
		rec_send(&s->off, "enable\n");
		say(s, "starting perf record (the window opens when %s)",
		    c->on && c->off ? "both have started" : "it has started");
		run_until(s, recs_acked, START_MS);
		if (s->signals) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "interrupted before the window opened: nothing recorded");
			return -1;
		}
		if (s->on.child && fk_child_exited(s->on.child))
			failed = &s->on;
		else if (s->off.child && fk_child_exited(s->off.child))
			failed = &s->off;
		if (!failed && !recs_acked(s)) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "perf record did not start within %d s", START_MS / 1000);
			return -1;
		}
		if (!failed)
			return 0;
		msg = rec_failure(s, failed);
		rec_kill(&s->on);
		rec_kill(&s->off);
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
			t->exited = now_s(s);
			continue;
		}
		any = true;
		if (strcmp(p->comm, t->comm) != 0 || !t->exe ||
		    (s->shell_exe && strcmp(t->exe, s->shell_exe) == 0)) {
			/* renamed, or the command has been exec'd */
			struct fk_proc *full = fk_proc_read(c->proc_root, t->pid, FK_PROC_EXE);

			g_free(t->comm);
			t->comm = g_strdup(p->comm);
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
		struct fk_proc *full = fk_proc_read(c->proc_root, p->pid, FK_PROC_EXE);

		if (full && full->state != 'Z') {
			say(s, "process %d (%s) started during the window as a child of %d: "
			    "recorded with it", p->pid, full->comm, p->ppid);
			track(s, full, false);
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
			warn(s, "process %d (%s) started during the window from the same program, "
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

static void run_window(struct session *s)
{
	guint timer, poller;

	s->t0 = g_get_monotonic_time();
	if (s->cmd)
		fk_child_signal(s->cmd, SIGCONT);
	say(s, "recording for %g s (Ctrl-C ends the window early)", s->cfg->seconds);
	timer = g_timeout_add((guint)(s->cfg->seconds * 1000), on_flag, &s->window_timeout);
	poller = g_timeout_add(POLL_MS, on_poll, s);
	run_until(s, window_over, -1);
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
	char *log = read_text(r->log), *p = strstr(log, " samples) ]"), *q, **lines;
	GStatBuf st;
	double mb = g_stat(r->data, &st) == 0 ? (double)st.st_size / 1e6 : 0;

	/* perf: "[ perf record: Captured and wrote 0.015 MB on.data (147 samples) ]" */
	for (q = p; q && q > log && g_ascii_isdigit(q[-1]); q--)
		;
	if (p && q < p)
		say(s, "%s: %.*s %s, %.1f MB", r->what, (int)(p - q), q,
		    r->offcpu ? "sched_switch events" : "samples", mb);
	else
		say(s, "%s: %.1f MB recorded", r->what, mb);
	lines = g_strsplit(log, "\n", -1);
	for (char **l = lines; *l; l++)
		if (strstr(*l, "lost") || strstr(*l, "LOST"))
			warn(s, "%s: perf says: %s", r->what, g_strstrip(*l));
	g_strfreev(lines);
	g_free(log);
}

static bool recs_disabled(struct session *s)
{
	return recs_acked(s);
}

static void stop_recording(struct session *s)
{
	struct rec *rs[] = { &s->on, &s->off };

	/* disable both first, so that they end together */
	s->want_acks = 2;
	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++)
		if (rec_running(rs[i]))
			rec_send(rs[i], "disable\n");
	run_until(s, recs_disabled, ACK_MS);
	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
		struct rec *r = rs[i];

		if (!r->child)
			continue;
		/* perf record ends on SIGINT, writing what it has */
		fk_child_end(r->child, SIGINT, STOP_MS);
		rec_close(r);
		if (!fk_child_ok(r->child, SIGINT)) {
			char *why = fk_child_exit_text(r->child), *msg = rec_failure(s, r);

			warn(s, "perf record (%s) %s: %s", r->what, why, msg);
			g_free(why);
			g_free(msg);
		}
		if (g_file_test(r->data, G_FILE_TEST_EXISTS))
			say_size(s, r);
	}
}

static void end_helpers(struct session *s)
{
	if (s->load) {
		if (fk_child_exited(s->load) && !s->load_warned) {
			char *why = fk_child_exit_text(s->load);

			warn(s, "the load %s before the window ended: part of the window ran "
			     "without it (see load.log)", why);
			g_free(why);
		}
		fk_child_end(s->load, SIGTERM, END_MS);
		say(s, "stopped the load");
	}
	if (s->cmd) {
		if (!fk_child_exited(s->cmd)) {
			say(s, "stopping the command, still running at the end of the window");
			fk_child_end(s->cmd, SIGTERM, END_MS);
		} else {
			char *why = fk_child_exit_text(s->cmd);

			say(s, "the command %s", why);
			g_free(why);
			fk_child_end(s->cmd, SIGTERM, END_MS);
		}
	}
}

/* ---- folding ---- */

struct fold {
	const char *what;
	bool offcpu;
	char *dir, *log;	/* the split directory, the log */
	char *folded;		/* DWARF: fp-collapse's whole output */
	struct fk_child *a, *b;	/* perf script [| fp-collapse] */
};

static bool folds_done(struct session *s)
{
	for (int i = 0; i < 2; i++) {
		struct fold *f = s->folds[i];

		if (f && ((f->a && !fk_child_exited(f->a)) || (f->b && !fk_child_exited(f->b))))
			return false;
	}
	return true;
}

static int fold_start(struct session *s, struct fold *f, const struct rec *r, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	int log = open_log(f->log, err);
	struct fk_spawn how = { .in_fd = -1, .err_fd = log, .own_group = true };
	char **argv;

	if (log < 0)
		return -1;
	if (r->offcpu || c->cg == FK_CG_FP) {
		argv = fk_perf_fold(c->perf, r->data, c->plugin, r->offcpu, f->dir);
		how.argv = (const char *const *)argv;
		how.out_fd = log;
		f->a = fk_child_spawn(&how, err);
		g_strfreev(argv);
	} else {
		/* perf gives a dlfilter only part of a DWARF stack */
		const char *collapse[] = { s->collapse, "--pid", NULL };
		int p[2], out = open_log(f->folded, err);

		if (out >= 0 && g_unix_open_pipe(p, FD_CLOEXEC, err)) {
			argv = fk_perf_script(c->perf, r->data);
			how.argv = (const char *const *)argv;
			how.out_fd = p[1];
			f->a = fk_child_spawn(&how, err);
			g_strfreev(argv);
			how.argv = collapse;
			how.in_fd = p[0];
			how.out_fd = out;
			f->b = f->a ? fk_child_spawn(&how, err) : NULL;
			close(p[0]);
			close(p[1]);
		}
		if (out >= 0)
			close(out);
	}
	close(log);
	return f->a && (f->b || !f->folded) ? 0 : -1;
}

static void fold_free(struct fold *f)
{
	if (!f)
		return;
	fk_child_free(f->a);
	fk_child_free(f->b);
	g_free(f->dir);
	g_free(f->log);
	g_free(f->folded);
	g_free(f);
}

/* the index of a finished fold, or NULL after saying why there is none */
static GPtrArray *fold_result(struct session *s, struct fold *f)
{
	char *idx = g_build_filename(f->dir, "index.tsv", NULL);
	GPtrArray *entries = NULL;
	GError *e = NULL;
	bool ok = fk_child_ok(f->a, 0) && (!f->b || fk_child_ok(f->b, 0));

	if (ok && f->folded) {
		uint64_t unsplit = 0;

		if (fk_split_by_pid(f->folded, f->dir, &unsplit, &e) != 0) {
			warn(s, "%s: %s", f->what, e->message);
			g_clear_error(&e);
			ok = false;
		} else if (unsplit) {
			warn(s, "%s: %" G_GUINT64_FORMAT " stacks without a process id left out",
			     f->what, unsplit);
		}
	}
	if (g_file_test(idx, G_FILE_TEST_EXISTS) && ok) {
		if (!(entries = fk_split_index_read(idx, &e))) {
			warn(s, "%s: %s", f->what, e->message);
			g_clear_error(&e);
		}
	} else {
		char *log = read_text(f->log), **lines = g_strsplit(log, "\n", -1), *why = NULL;

		/* the plugin's "foldkit: no sched:sched_switch samples...",
		 * "... holds no samples ...": nothing to fold is no failure */
		for (char **l = lines; *l && !why; l++)
			if (g_str_has_prefix(*l, "foldkit: no ") || strstr(*l, " no samples"))
				why = g_strdup(g_strstrip(*l));
		if (why) {
			say(s, "%s: no samples (%s)", f->what, why);
			entries = g_ptr_array_new();
		} else {
			for (char **l = lines; *l && !why; l++)
				if (**l)
					why = g_strdup(g_strstrip(*l));
			warn(s, "folding the %s recording failed: %s", f->what,
			     why ? why : "(no message)");
		}
		g_free(why);
		g_strfreev(lines);
		g_free(log);
	}
	g_free(idx);
	return entries;
}

static int fold_all(struct session *s, GPtrArray **on, GPtrArray **off, GError **err)
{
	struct rec *rs[] = { &s->on, &s->off };
	unsigned signals = s->signals;
	int rc = 0;

	*on = *off = NULL;
	for (int i = 0; i < 2; i++) {
		struct rec *r = rs[i];
		struct fold *f;

		s->folds[i] = NULL;
		if (!r->child || !g_file_test(r->data, G_FILE_TEST_EXISTS))
			continue;
		f = g_new0(struct fold, 1);
		f->what = r->what;
		f->dir = g_build_filename(s->tmp, r->offcpu ? "off" : "on", NULL);
		f->log = g_build_filename(s->tmp, r->offcpu ? "fold-off.log" : "fold-on.log", NULL);
		if (!r->offcpu && s->cfg->cg == FK_CG_DWARF) {
			f->folded = g_build_filename(s->tmp, "on.folded", NULL);
			g_mkdir_with_parents(f->dir, 0777);
		}
		s->folds[i] = f;
		if (fold_start(s, f, r, err) != 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0) {
		say(s, "folding");
		run_until(s, folds_done, -1);
		if (s->signals != signals) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "interrupted while folding: no profiles written");
			rc = -1;
		}
	}
	for (int i = 0; rc == 0 && i < 2; i++)
		if (s->folds[i])
			*(i ? off : on) = fold_result(s, s->folds[i]);
	for (int i = 0; i < 2; i++) {
		fold_free(s->folds[i]);
		s->folds[i] = NULL;
	}
	return rc;
}

/* ---- the outputs ---- */

static struct fk_out_row *row_for(struct session *s, GHashTable *rows, int pid,
				  const char *comm)
{
	struct fk_out_row *r = g_hash_table_lookup(rows, GINT_TO_POINTER(pid));
	struct tracked *t;

	if (r)
		return r;
	t = g_hash_table_lookup(s->procs, GINT_TO_POINTER(pid));
	r = g_new0(struct fk_out_row, 1);
	r->pid = pid;
	r->on = s->cfg->on;
	r->off = s->cfg->off;
	r->exited = -1;
	if (t) {
		r->comm = g_strdup(t->comm);
		r->exe = g_strdup(t->exe);
		r->exited = t->exited;
		r->selected = t->selected;
	} else {
		/* a child perf followed that came and went between two looks */
		r->comm = g_strdup(comm);
	}
	g_hash_table_insert(rows, GINT_TO_POINTER(pid), r);
	return r;
}

static mode_t file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/* moves a split file into DIR/on or DIR/off; returns its path in DIR */
static char *place(struct session *s, const char *from_dir, const char *file,
		   const char *side, const struct fk_out_row *r)
{
	char *stem = fk_out_stem(r->comm, r->pid);
	char *from = g_build_filename(from_dir, file, NULL);
	char *rel = g_strdup_printf("%s/%s.folded", side, stem);
	char *to = g_build_filename(s->cfg->dir, rel, NULL);
	char *dir = g_build_filename(s->cfg->dir, side, NULL);

	g_mkdir_with_parents(dir, 0777);
	/* the plugin writes through mkstemp(): give the file the usual mode */
	g_chmod(from, file_mode());
	if (g_rename(from, to) != 0) {
		warn(s, "%s: cannot move to %s: %s", from, to, g_strerror(errno));
		g_clear_pointer(&rel, g_free);
	}
	g_free(stem);
	g_free(from);
	g_free(to);
	g_free(dir);
	return rel;
}

static int row_by_pid(gconstpointer a, gconstpointer b)
{
	const struct fk_out_row *x = *(struct fk_out_row *const *)a;
	const struct fk_out_row *y = *(struct fk_out_row *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void build_rows(struct session *s, GPtrArray *on, GPtrArray *off)
{
	GHashTable *rows = g_hash_table_new(g_direct_hash, g_direct_equal);
	char *on_dir = g_build_filename(s->tmp, "on", NULL);
	char *off_dir = g_build_filename(s->tmp, "off", NULL);
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, s->procs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		row_for(s, rows, ((struct tracked *)val)->pid, NULL);
	/* on-CPU: perf recorded only the processes and their children */
	for (guint i = 0; on && i < on->len; i++) {
		struct fk_split_entry *e = g_ptr_array_index(on, i);
		struct fk_out_row *r = row_for(s, rows, e->pid, e->comm);

		r->on_folded = place(s, on_dir, e->file, "on", r);
	}
	/* off-CPU: the machine's switches that touched them; keep theirs */
	for (guint i = 0; off && i < off->len; i++) {
		struct fk_split_entry *e = g_ptr_array_index(off, i);
		struct fk_out_row *r = g_hash_table_lookup(rows, GINT_TO_POINTER(e->pid));

		if (r)
			r->off_folded = place(s, off_dir, e->file, "off", r);
	}
	g_hash_table_iter_init(&it, rows);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct fk_out_row *r = val;
		char *paths[2] = { r->on_folded, r->off_folded };
		struct fk_folded_sum *sums[2] = { &r->on_sum, &r->off_sum };

		char *exe_name = r->exe ? fk_proc_exe_name(r->exe) : NULL;
		char *placeholder = g_strdup_printf("[%s]", exe_name ? exe_name : "unknown");
		const char *unresolved[] = { "[unknown]", placeholder, NULL };

		for (int k = 0; k < 2; k++) {
			char *p;
			GError *e = NULL;

			if (!paths[k])
				continue;
			p = g_build_filename(s->cfg->dir, paths[k], NULL);
			if (fk_folded_sum(p, unresolved, sums[k], &e) != 0) {
				warn(s, "%s", e->message);
				g_error_free(e);
			}
			g_free(p);
		}
		g_free(exe_name);
		g_free(placeholder);
		g_ptr_array_add(s->rows, r);
	}
	g_ptr_array_sort(s->rows, row_by_pid);
	g_hash_table_destroy(rows);
	g_free(on_dir);
	g_free(off_dir);
}

static char *draw(struct session *s, const struct fk_out_row *r, const char *folded,
		  bool offcpu)
{
	const struct fk_capture_cfg *c = s->cfg;
	char *title, *subtitle, *svg, *svg_rel, *in, *tmp;
	const char *argv[12];
	int n = 0, fd;
	GError *e = NULL;
	struct fk_child *child;
	struct fk_spawn how = { .argv = argv, .in_fd = -1, .err_fd = -1 };
	bool ok;

	title = g_strdup_printf("%s%s%s %s", c->title ? c->title : "", c->title ? ": " : "",
				r->comm, offcpu ? "off-CPU" : "on-CPU");
	subtitle = offcpu
		? g_strdup_printf("pid %d, %.2f s window, time off the CPU in microseconds",
				  r->pid, (double)(s->t1 - s->t0) / 1e6)
		: g_strdup_printf("pid %d, %.2f s window, cpu-clock at %u Hz, counts in nanoseconds",
				  r->pid, (double)(s->t1 - s->t0) / 1e6, c->freq);
	in = g_build_filename(c->dir, folded, NULL);
	svg_rel = g_strdup(folded);
	strcpy(svg_rel + strlen(svg_rel) - strlen(".folded"), ".svg");
	svg = g_build_filename(c->dir, svg_rel, NULL);
	tmp = g_strconcat(svg, ".tmp", NULL);
	argv[n++] = s->fold2svg;
	argv[n++] = "--title";
	argv[n++] = title;
	argv[n++] = "--subtitle";
	argv[n++] = subtitle;
	argv[n++] = offcpu ? "--countname=us" : "--countname=ns";
	if (offcpu)
		argv[n++] = "--colors=io";
	argv[n++] = in;
	argv[n] = NULL;
	ok = (fd = open_log(tmp, &e)) >= 0;
	if (ok) {
		how.out_fd = fd;
		child = fk_child_spawn(&how, &e);
		close(fd);
		ok = child && fk_child_wait(child, -1, NULL) && fk_child_ok(child, 0);
		if (child && !ok && !e)
			e = g_error_new(FK_ERROR, FK_ERROR_IO, "fold2svg %s", fk_child_exit_text(child));
		fk_child_free(child);
	}
	if (ok && g_rename(tmp, svg) != 0) {
		e = g_error_new(FK_ERROR, FK_ERROR_IO, "cannot rename '%s': %s", tmp,
				g_strerror(errno));
		ok = false;
	}
	if (!ok) {
		warn(s, "%s: no graph: %s", svg, e ? e->message : "fold2svg failed");
		g_unlink(tmp);
		g_clear_pointer(&svg_rel, g_free);
	}
	g_clear_error(&e);
	g_free(title);
	g_free(subtitle);
	g_free(in);
	g_free(svg);
	g_free(tmp);
	return svg_rel;
}

static void draw_all(struct session *s)
{
	if (!s->fold2svg) {
		warn(s, "fold2svg was not found next to fp-record or in PATH: no graphs drawn");
		return;
	}
	for (guint i = 0; i < s->rows->len; i++) {
		struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		if (r->on_folded)
			r->on_svg = draw(s, r, r->on_folded, false);
		if (r->off_folded)
			r->off_svg = draw(s, r, r->off_folded, true);
	}
}

static bool captured(const struct fk_out_row *r)
{
	return r->on_sum.total > 0 || r->off_sum.total > 0;
}

static void judge_rows(struct session *s)
{
	double window = (double)(s->t1 - s->t0) / 1e6;

	for (guint i = 0; i < s->rows->len; i++) {
		struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		double unresolved = r->on_sum.total > 0
			? fk_count_to_double(r->on_sum.unresolved) /
			  fk_count_to_double(r->on_sum.total)
			: 0;

		/* a command's processes end with it: that is no news */
		if (r->exited >= 0 && !s->cmd)
			warn(s, "process %d (%s) exited %.2f s into the %.2f s window: its "
			     "profiles cover that part only", r->pid, r->comm, r->exited, window);
		if (r->on && r->on_sum.total == 0)
			warn(s, "process %d (%s): no on-CPU samples: it was idle during the window; "
			     "drive load (--load CMD) or record longer (-d)", r->pid, r->comm);
		else if (r->off && !r->on && r->off_sum.total == 0)
			warn(s, "process %d (%s): no off-CPU waits: it neither blocked nor "
			     "was seen to run during the window", r->pid, r->comm);
		if (unresolved > UNRESOLVED_SHARE) {
			char *name = r->exe ? fk_proc_exe_name(r->exe) : NULL;

			warn(s, "process %d (%s): %.0f%% of its on-CPU time is in stacks with "
			     "frames perf could not name ([unknown]%s%s%s): %s is stripped or "
			     "lacks frame pointers; build it with -g -fno-omit-frame-pointer "
			     "(or record with --call-graph dwarf)", r->pid, r->comm,
			     unresolved * 100, name ? " or [" : "", name ? name : "",
			     name ? "]" : "", r->exe ? r->exe : "its program");
			g_free(name);
		}
	}
}

static int write_index(struct session *s, GError **err)
{
	char *path = g_build_filename(s->cfg->dir, "index.tsv", NULL);
	char *tmp = g_strconcat(path, ".tmp", NULL);
	FILE *f = fopen(tmp, "w");
	int rc = -1;

	if (!f) {
		fk_error_at(err, FK_ERROR_IO, tmp, 0, "cannot create: %s", g_strerror(errno));
	} else {
		rc = fk_index_write(f, s->rows, path, err);
		if (fclose(f) != 0 && rc == 0) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "write error: %s", g_strerror(errno));
			rc = -1;
		}
		if (rc == 0 && g_rename(tmp, path) != 0) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot rename: %s", g_strerror(errno));
			rc = -1;
		}
		if (rc != 0)
			g_unlink(tmp);
	}
	if (rc == 0)
		g_ptr_array_add(s->paths, g_strdup(path));
	g_free(path);
	g_free(tmp);
	return rc;
}

/* text from programs and users, safe in Markdown and in HTML made of it */
static void md(GString *out, const char *s)
{
	GString *t = g_string_new(NULL);

	fk_text_escape(t, s, strlen(s), 0);
	for (const char *p = t->str; *p; p++) {
		if (*p == '<')
			g_string_append(out, "&lt;");
		else if (*p == '>')
			g_string_append(out, "&gt;");
		else if (*p == '&')
			g_string_append(out, "&amp;");
		else if (strchr("\\`*_[]|#", *p))
			g_string_append_printf(out, "\\%c", *p);
		else
			g_string_append_c(out, *p);
	}
	g_string_free(t, TRUE);
}

static void md_link(GString *out, const char *label, const char *path)
{
	if (!path)
		return;
	g_string_append_printf(out, " [%s](", label);
	/* file names are [A-Za-z0-9._-/] (fk_out_stem) */
	g_string_append(out, path);
	g_string_append_c(out, ')');
}

static void md_total(GString *out, bool recorded, fk_count c, const char *unit)
{
	char *h;

	if (!recorded) {
		g_string_append(out, "-");
		return;
	}
	h = fk_out_human(c, unit);
	g_string_append(out, h);
	g_free(h);
}

/* whether DIR/side holds a profile */
static bool has_profiles(struct session *s, const char *side)
{
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		if (strcmp(side, "on") == 0 ? r->on_folded != NULL : r->off_folded != NULL)
			return true;
	}
	return false;
}

/*
 * fold-report's Markdown, its headings one level down, or NULL after
 * saying why not.  One run reads DIR/on as a split directory (the whole,
 * then each process) and pairs each file with DIR/off's of the same pid.
 */
static char *findings(struct session *s)
{
	bool on = has_profiles(s, "on"), off = has_profiles(s, "off");
	const char *argv[8];
	char *out = NULL, *errout = NULL, **lines;
	GString *res;
	bool fence = false;
	int n = 0, status;
	GError *e = NULL;

	if (!on && !off)
		return NULL;
	argv[n++] = s->report;
	argv[n++] = "--unit";
	argv[n++] = on ? FK_ON_UNIT : FK_OFF_UNIT;
	if (on && off) {
		argv[n++] = "--offcpu";
		argv[n++] = "off";
	}
	argv[n++] = on ? "on" : "off";
	argv[n] = NULL;
	/* run in DIR, so that the report names on/x-1.folded, not a full path */
	if (!g_spawn_sync(s->cfg->dir, (char **)argv, NULL, 0, NULL, NULL, &out, &errout,
			  &status, &e) || !g_spawn_check_wait_status(status, &e)) {
		warn(s, "fold-report failed: %s%s%s", e ? e->message : "",
		     errout && *errout ? ": " : "", errout ? g_strstrip(errout) : "");
		g_clear_error(&e);
		g_free(out);
		g_free(errout);
		return NULL;
	}
	g_free(errout);
	res = g_string_new(NULL);
	lines = g_strsplit(out, "\n", -1);
	g_free(out);
	for (char **l = lines; *l; l++) {
		if (g_str_has_prefix(*l, "```"))
			fence = !fence;
		if (!fence && **l == '#')
			g_string_append_c(res, '#');
		g_string_append(res, *l);
		if (l[1])
			g_string_append_c(res, '\n');
	}
	g_strfreev(lines);
	return g_string_free(res, FALSE);
}

static void describe_selection(struct session *s, GString *out)
{
	const struct fk_capture_cfg *c = s->cfg;

	if (c->cmd) {
		char *cmd = g_strjoinv(" ", c->cmd);

		g_string_append(out, "- Command: `");
		md(out, cmd);
		g_string_append(out, "` and its children\n");
		g_free(cmd);
	} else if (c->by == FK_BY_EXE) {
		g_string_append(out, "- Processes: every one running ");
		md(out, c->exe);
		g_string_append(out, " (by /proc/PID/exe)\n");
	} else if (c->by == FK_BY_NAME) {
		g_string_append(out, "- Processes: every one named ");
		md(out, c->name);
		g_string_append(out, "\n");
	} else {
		g_string_append(out, "- Processes: pid");
		for (size_t i = 0; i < c->npids; i++)
			g_string_append_printf(out, "%s %d", i ? "," : "", c->pids[i]);
		g_string_append(out, "\n");
	}
}

static int write_report(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	GString *out = g_string_new("# ");
	char *path = g_build_filename(c->dir, "report.md", NULL);
	GError *e = NULL;
	char *f;
	int rc = 0;

	md(out, c->title ? c->title : "fp-record");
	g_string_append(out, "\n\n");
	describe_selection(s, out);
	g_string_append_printf(out, "- Window: %.2f s%s%s%s\n", (double)(s->t1 - s->t0) / 1e6,
			       s->ended ? " (ended early: " : "", s->ended ? s->ended : "",
			       s->ended ? ")" : "");
	if (c->on)
		g_string_append_printf(out, "- On-CPU: perf record -e cpu-clock -F %u "
				       "--call-graph %s; counts are nanoseconds of CPU time\n",
				       c->freq, c->cg == FK_CG_DWARF ? "dwarf" : "fp");
	if (c->off)
		g_string_append(out, "- Off-CPU: every sched:sched_switch with its stack, "
				"folded by foldkit.so's offcpu mode; counts are microseconds "
				"off the CPU (sleeping, S, or blocked, D)\n");
	if (c->load) {
		g_string_append(out, "- Load: `");
		md(out, c->load);
		g_string_append_printf(out, "`, started %g s before the window; its output is "
				       "in [load.log](load.log)\n", c->warmup);
	}
	g_string_append(out, "\n| process | pid | on-CPU | off-CPU | files |\n"
			"|---|---|---|---|---|\n");
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		g_string_append(out, "| ");
		md(out, r->comm);
		g_string_append_printf(out, " | %d | ", r->pid);
		md_total(out, r->on, r->on_sum.total, FK_ON_UNIT);
		g_string_append(out, " | ");
		md_total(out, r->off, r->off_sum.total, FK_OFF_UNIT);
		g_string_append(out, " |");
		md_link(out, "on.folded", r->on_folded);
		md_link(out, "on.svg", r->on_svg);
		md_link(out, "off.folded", r->off_folded);
		md_link(out, "off.svg", r->off_svg);
		g_string_append(out, " |\n");
	}
	g_string_append(out, "\nThe .folded files open in https://www.speedscope.app/ "
			"(drag and drop); the .svg files in any browser.\n");
	if (s->notes->len) {
		g_string_append(out, "\n## Notes\n\n");
		for (guint i = 0; i < s->notes->len; i++) {
			g_string_append(out, "- ");
			md(out, g_ptr_array_index(s->notes, i));
			g_string_append_c(out, '\n');
		}
	}
	if (!s->report) {
		const char *msg = "fold-report is not available (it was found neither next "
				  "to fp-record nor in PATH), so this report has no findings; "
				  "the profiles above are complete";

		say(s, "%s", msg);
		g_string_append_printf(out, "\n## Findings\n\n%s.\n", msg);
	} else if ((f = findings(s))) {
		g_string_append(out, "\nThe findings of fold-report(1): the whole capture, then each "
				"process with its off-CPU profile.\n\n");
		g_string_append(out, f);
		g_free(f);
	} else {
		g_string_append(out, "\n## Findings\n\nfold-report failed: see the notes.\n");
	}
	if (!g_file_set_contents(path, out->str, (gssize)out->len, &e)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot write: %s", e->message);
		g_error_free(e);
		rc = -1;
	} else {
		g_ptr_array_add(s->paths, g_strdup(path));
	}
	g_string_free(out, TRUE);
	g_free(path);
	return rc;
}

static void list_paths(struct session *s)
{
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		const char *files[] = { r->on_folded, r->on_svg, r->off_folded, r->off_svg };

		for (size_t k = 0; k < G_N_ELEMENTS(files); k++)
			if (files[k])
				g_ptr_array_add(s->paths, g_build_filename(s->cfg->dir, files[k], NULL));
	}
	if (s->cfg->keep_data) {
		struct rec *rs[] = { &s->on, &s->off };

		for (size_t i = 0; i < G_N_ELEMENTS(rs); i++)
			if (rs[i]->child && g_file_test(rs[i]->data, G_FILE_TEST_EXISTS))
				g_ptr_array_add(s->paths, g_strdup(rs[i]->data));
	}
}

/* ---- the whole run ---- */

static void say_selection(struct session *s)
{
	GArray *pids = tracked_pids(s, true, false);
	const struct fk_capture_cfg *c = s->cfg;

	say(s, "recording %u process%s (%s%s%s):", pids->len, pids->len == 1 ? "" : "es",
	    c->on ? "on-CPU" : "", c->on && c->off ? " and " : "", c->off ? "off-CPU" : "");
	for (guint i = 0; i < pids->len; i++) {
		struct tracked *t = g_hash_table_lookup(s->procs,
							GINT_TO_POINTER(g_array_index(pids, int, i)));

		say(s, "  %d %s %s", t->pid, t->comm, t->exe ? t->exe :
		    s->cmd ? "(the command, not started yet)" : "(executable unknown)");
	}
	g_array_unref(pids);
}

static void rec_init(struct session *s, struct rec *r, bool offcpu)
{
	const char *name = offcpu ? "off.data" : "on.data";

	r->what = offcpu ? "off-CPU" : "on-CPU";
	r->offcpu = offcpu;
	r->ctl = r->ack = -1;
	r->data = g_build_filename(s->cfg->keep_data ? s->cfg->dir : s->tmp, name, NULL);
	r->log = g_build_filename(s->tmp, offcpu ? "record-off.log" : "record-on.log", NULL);
}

static void cleanup(struct session *s, bool failed)
{
	struct rec *rs[] = { &s->on, &s->off };

	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
		if (rs[i]->child)
			fk_child_end(rs[i]->child, SIGINT, STOP_MS);
		rec_kill(rs[i]);
		if (failed && rs[i]->data)
			g_unlink(rs[i]->data);
		g_free(rs[i]->data);
		g_free(rs[i]->log);
	}
	fk_child_free(s->load);
	fk_child_free(s->cmd);
	if (s->tmp)
		rm_tree(s->tmp);
	/* a directory made for nothing goes too (g_rmdir() keeps a full one) */
	if (failed && s->made_dir)
		g_rmdir(s->cfg->dir);
	g_free(s->tmp);
	g_free(s->version);
	g_free(s->shell_exe);
	g_free(s->fold2svg);
	g_free(s->collapse);
	g_free(s->report);
	g_hash_table_destroy(s->procs);
	g_hash_table_destroy(s->seen_new);
	g_ptr_array_unref(s->rows);
	g_ptr_array_unref(s->notes);
}

int fk_capture_run(const struct fk_capture_cfg *cfg, struct fk_capture_result *res,
		   GError **err)
{
	struct session s = {
		.cfg = cfg,
		.procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, tracked_free),
		.seen_new = g_hash_table_new(g_direct_hash, g_direct_equal),
		.rows = g_ptr_array_new_with_free_func((GDestroyNotify)fk_out_row_free),
		.notes = g_ptr_array_new_with_free_func(g_free),
		.paths = g_ptr_array_new_with_free_func(g_free),
		.on = { .ctl = -1, .ack = -1 },
		.off = { .ctl = -1, .ack = -1 },
	};
	guint sig[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	GPtrArray *on = NULL, *off = NULL;
	bool any = false;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	for (int i = 0; i < 3; i++)
		sig[i] = g_unix_signal_add(sigs[i], on_signal, &s);
	if (check_tools(&s, err) != 0)
		goto out;
	/* before the directory, so that a typo leaves nothing behind */
	if (!cfg->cmd && choose(&s, 0, err) != 0)
		goto out;
	if (make_dir(&s, err) != 0)
		goto out;
	rec_init(&s, &s.on, false);
	rec_init(&s, &s.off, true);
	if (cfg->load) {
		if (start_load(&s, err) != 0)
			goto out;
		/* what runs now, without the load's own processes */
		if (!cfg->cmd && choose(&s, fk_child_pid(s.load), err) != 0)
			goto out;
	}
	if (cfg->cmd && start_command(&s, err) != 0)
		goto out;
	say_selection(&s);
	if (start_recording(&s, err) != 0)
		goto out;
	run_window(&s);
	s.t1 = g_get_monotonic_time();
	res->interrupted = s.signals > 0;
	if (s.ended)
		say(&s, "the window ended after %.2f s: %s", (double)(s.t1 - s.t0) / 1e6, s.ended);
	stop_recording(&s);
	end_helpers(&s);
	if (fold_all(&s, &on, &off, err) != 0)
		goto out;
	build_rows(&s, on, off);
	draw_all(&s);
	judge_rows(&s);
	for (guint i = 0; i < s.rows->len; i++)
		any |= captured(g_ptr_array_index(s.rows, i));
	if (write_index(&s, err) != 0 || write_report(&s, err) != 0)
		goto out;
	list_paths(&s);
	res->processes = s.rows->len;
	if (!any) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "nothing was captured: no process "
			    "has on- or off-CPU samples");
		goto out;
	}
	rc = 0;
out:
	if (on)
		g_ptr_array_unref(on);
	if (off)
		g_ptr_array_unref(off);
	for (int i = 0; i < 3; i++)
		g_source_remove(sig[i]);
	/* outputs written stay; nothing else does */
	cleanup(&s, rc != 0 && s.rows->len == 0);
	res->paths = s.paths;
	return rc;
}

void fk_capture_result_clear(struct fk_capture_result *res)
{
	if (res->paths)
		g_ptr_array_unref(res->paths);
	memset(res, 0, sizeof(*res));
}
