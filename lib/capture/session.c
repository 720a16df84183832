/*
 * session.c - one capture from start to end (session.h): the programs it
 * needs, the output directory, the processes, the load and the command,
 * and the order of the steps; record.c and write.c do the rest.
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

void cap_say(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(s, false, fmt, ap);
	va_end(ap);
}

/* a warning: said, and in the report */
void cap_warn(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(s, true, fmt, ap);
	va_end(ap);
}

double cap_now_s(const struct session *s)
{
	return (double)(g_get_monotonic_time() - s->t0) / 1e6;
}

static void tracked_free(gpointer p)
{
	struct tracked *t = p;

	g_free(t->comm);
	g_free(t->exe);
	g_strfreev(t->argv);
	g_free(t);
}

struct tracked *cap_track(struct session *s, const struct fk_proc *p, bool selected)
{
	struct tracked *t = g_new0(struct tracked, 1);

	t->pid = p->pid;
	t->ppid = p->ppid;
	t->start = p->start;
	t->comm = g_strdup(p->comm);
	t->exe = g_strdup(p->exe);
	t->argv = g_strdupv(p->argv);
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
GArray *cap_tracked_pids(struct session *s, bool selected_only, bool alive_only)
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

	char *found;

	if (p && g_file_test(p, G_FILE_TEST_IS_EXECUTABLE) &&
	    !g_file_test(p, G_FILE_TEST_IS_DIR))
		return p;
	g_free(p);
	/* the tools run in the private directory: a path from "." in PATH
	 * must not be relative */
	if (!(p = g_find_program_in_path(name)))
		return NULL;
	found = g_canonicalize_filename(p, NULL);
	g_free(p);
	return found;
}

char *fk_capture_find_plugin(const char *given, const char *bindir, const char *installed)
{
	char *tries[] = {
		g_build_filename(bindir, "..", "perf-plugin", "foldkit.so", NULL),
		g_build_filename(bindir, "..", "libexec", "perf-core", "dlfilters", "foldkit.so", NULL),
		g_build_filename(installed, "foldkit.so", NULL),
	};
	/* perf runs in the capture's private directory: never a relative path */
	char *found = given ? g_canonicalize_filename(given, NULL) : NULL;

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
	s->fold2html = fk_capture_find_tool(c->bindir, "fold2html");
	s->speedscope = fk_capture_find_tool(c->bindir, "fold2speedscope");
	s->report = fk_capture_find_tool(c->bindir, "fold-report");
	if (c->compare)
		s->diff = fk_capture_find_tool(c->bindir, "fold-diff");
	return 0;
}

/* ---- the output directory ---- */

/*
 * DIR is made here (core/outdir.h: an existing one must be the caller's,
 * writable by no other user, and empty), and in it a private directory,
 * mode 0700, where the children run and write: perf's recordings and
 * logs, the plugin's split files.  Everything fp-record puts in DIR is a
 * new name made relative to DIR's descriptor, and no other user can
 * enter the private directory, so no name anyone planted is followed.
 */
static int make_dir(struct session *s, GError **err)
{
	if (!(s->out = fk_outdir_create(s->cfg->dir, 0, err)))
		return -1;
	if (!(s->priv = fk_outdir_mkdtemp(s->out, ".fp-record-", err)))
		return -1;
	return 0;
}

char *cap_priv_path(struct session *s, const char *name)
{
	return g_build_filename(fk_outdir_path(s->priv), name, NULL);
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
			cap_say(s, "near misses (not chosen):");
		for (guint i = 0; i < m.near->len; i++)
			cap_say(s, "  %s", (char *)g_ptr_array_index(m.near, i));
		if (m.hidden && c->by != FK_BY_PID && geteuid() != 0)
			cap_say(s, "%u process%s could not be inspected (%s other users'): run "
			    "fp-record as root to see them all", m.hidden,
			    m.hidden == 1 ? "" : "es", m.hidden == 1 ? "it is" : "they are");
	}
	if (rc == 0 && m.chosen->len == 0) {
		if (c->by == FK_BY_EXE && is_script(c->exe))
			cap_say(s, "%s is a script: its processes run its interpreter, so choose "
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
			cap_track(s, g_ptr_array_index(m.chosen, i), true);
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

gboolean cap_on_flag(gpointer data)
{
	*(bool *)data = true;
	return G_SOURCE_REMOVE;
}

/*
 * Runs the main loop until done(s) or a new signal or timeout_ms (-1:
 * none).  Returns done(s).
 */
bool cap_run_until(struct session *s, bool (*done)(struct session *), int timeout_ms)
{
	unsigned signals = s->signals;
	bool timed_out = false;
	guint t = timeout_ms >= 0 ? g_timeout_add((guint)timeout_ms, cap_on_flag, &timed_out) : 0;

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
	int fd = fk_outdir_new_fd(s->out, "load.log", err);

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
	cap_say(s, "started the load (pid %d, output in %s); warming up for %g s",
	    fk_child_pid(s->load), log, c->warmup);
	cap_run_until(s, load_exited, (int)(c->warmup * 1000));
	if (s->signals) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "interrupted during the warmup: nothing recorded");
	} else if (fk_child_exited(s->load)) {
		char *why = fk_child_exit_text(s->load);

		s->load_warned = true;
		if (fk_child_ok(s->load, 0))
			cap_warn(s, "the load %s during the warmup: the window runs without it", why);
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
	t = cap_track(s, p, true);
	fk_proc_free(p);
	/* it becomes the command at exec: until then, call it that */
	g_free(t->comm);
	t->comm = g_path_get_basename(c->cmd[0]);
	g_clear_pointer(&t->exe, g_free);
	return 0;
}

static void end_helpers(struct session *s)
{
	if (s->load) {
		if (fk_child_exited(s->load) && !s->load_warned) {
			char *why = fk_child_exit_text(s->load);

			cap_warn(s, "the load %s before the window ended: part of the window ran "
			     "without it (see load.log)", why);
			g_free(why);
		}
		fk_child_end(s->load, SIGTERM, END_MS);
		cap_say(s, "stopped the load");
	}
	if (s->cmd) {
		if (!fk_child_exited(s->cmd)) {
			cap_say(s, "stopping the command, still running at the end of the window");
			fk_child_end(s->cmd, SIGTERM, END_MS);
		} else {
			char *why = fk_child_exit_text(s->cmd);

			cap_say(s, "the command %s", why);
			g_free(why);
			fk_child_end(s->cmd, SIGTERM, END_MS);
		}
	}
}

/* ---- the whole run ---- */

static void say_selection(struct session *s)
{
	GArray *pids = cap_tracked_pids(s, true, false);
	const struct fk_capture_cfg *c = s->cfg;

	cap_say(s, "recording %u process%s (%s%s%s):", pids->len, pids->len == 1 ? "" : "es",
	    c->on ? "on-CPU" : "", c->on && c->off ? " and " : "", c->off ? "off-CPU" : "");
	for (guint i = 0; i < pids->len; i++) {
		struct tracked *t = g_hash_table_lookup(s->procs,
							GINT_TO_POINTER(g_array_index(pids, int, i)));

		cap_say(s, "  %d %s %s", t->pid, t->comm, t->exe ? t->exe :
		    s->cmd ? "(the command, not started yet)" : "(executable unknown)");
	}
	g_array_unref(pids);
}

static void cleanup(struct session *s, bool failed)
{
	struct rec *rs[] = { &s->on, &s->off };

	for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
		if (rs[i]->child)
			fk_child_end(rs[i]->child, SIGINT, STOP_MS);
		cap_rec_kill(rs[i]);
	}
	fk_child_free(s->load);
	fk_child_free(s->cmd);
	if (s->priv)
		fk_outdir_remove_tree(s->out, fk_outdir_name(s->priv));
	fk_outdir_free(s->priv);
	for (int i = 0; i < CAP_NSIDES; i++)
		fk_outdir_free(s->sides[i]);
	/* a directory made for nothing goes too (rmdir() keeps a full one) */
	if (failed && s->out && fk_outdir_made(s->out))
		g_rmdir(s->cfg->dir);
	fk_outdir_free(s->out);
	g_free(s->version);
	g_free(s->shell_exe);
	g_free(s->fold2svg);
	g_free(s->fold2html);
	g_free(s->collapse);
	g_free(s->report);
	g_free(s->diff);
	g_free(s->speedscope);
	g_hash_table_destroy(s->procs);
	g_hash_table_destroy(s->seen_new);
	if (s->groups)
		g_ptr_array_unref(s->groups);
	g_ptr_array_unref(s->rows);
	g_ptr_array_unref(s->notes);
	if (s->at_start)
		g_ptr_array_unref(s->at_start);
	if (s->states)
		g_ptr_array_unref(s->states);
	if (s->threads)
		g_ptr_array_unref(s->threads);
}

/* The window on the wall clock: the monotonic clock it was timed with
 * cannot jump, so its end is now and its start that much earlier. */
static void window_times(const struct session *s, struct fk_capture_result *res)
{
	gint64 end = g_get_real_time() - (g_get_monotonic_time() - s->t1);
	gint64 start = end - (s->t1 - s->t0);

	res->window_from = start / G_USEC_PER_SEC;
	res->window_until = (end + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC;
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
	struct fk_split_index *x[CAP_NSIDES] = { NULL };
	struct fk_outdir *splits[CAP_NSIDES] = { NULL };
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
	cap_rec_init(&s, &s.on, false);
	cap_rec_init(&s, &s.off, true);
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
	if (cap_start_recording(&s, err) != 0)
		goto out;
	/*
	 * Every thread as the window opens: what one that will not switch in
	 * it waits in can only be read now (threads.h)
	 */
	if (cfg->off) {
		GArray *pids = cap_tracked_pids(&s, false, true);

		s.at_start = fk_threads_at_start(cfg->proc_root, (int *)(void *)pids->data,
						 pids->len);
		g_array_unref(pids);
	}
	cap_run_window(&s);
	/* the arguments as they are at the end of the window (roles.h) */
	cap_refresh_args(&s);
	res->interrupted = s.signals > 0;
	if (s.ended)
		cap_say(&s, "the window ended after %.2f s: %s", cap_now_s(&s), s.ended);
	cap_stop_recording(&s);
	window_times(&s, res);
	end_helpers(&s);
	if (cap_fold_all(&s, x, splits, err) != 0)
		goto out;
	cap_build_rows(&s, x, splits);
	cap_draw_all(&s);
	cap_speedscope_all(&s);
	cap_judge_rows(&s);
	for (guint i = 0; i < s.rows->len; i++)
		any |= cap_captured(g_ptr_array_index(s.rows, i));
	if (cap_write_index(&s, err) != 0 || cap_write_threads(&s, err) != 0)
		goto out;
	/* a failed recording's profiles are partial: a comparison of them
	 * would show changes that are the failure's */
	if (cfg->compare && any && (s.on.failed || s.off.failed))
		cap_warn(&s, "--compare: no comparison with %s: a recording failed",
			 cfg->compare);
	else if (cfg->compare && any)
		cap_compare(&s);
	if (cfg->group_workers && any)
		cap_group_all(&s);
	if (cap_write_report(&s, err) != 0)
		goto out;
	cap_list_paths(&s);
	res->processes = s.rows->len;
	if (s.on.failed || s.off.failed) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "the %s recording failed (see above): "
			    "%s unknown, '-' in index.tsv and report.md",
			    s.on.failed && s.off.failed ? "on- and off-CPU" :
			    s.on.failed ? "on-CPU" : "off-CPU",
			    s.on.failed && s.off.failed ? "every total is" : "its totals are");
		goto out;
	}
	if (!any) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "nothing was captured: no process "
			    "has on- or off-CPU samples");
		goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < CAP_NSIDES; i++) {
		fk_split_index_free(x[i]);
		fk_outdir_free(splits[i]);
	}
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
