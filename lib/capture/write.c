/*
 * write.c - a capture's recordings folded (by the plugin, or for DWARF
 * stacks by perf script | fp-collapse), and its files: DIR/on, DIR/off,
 * the graphs, index.tsv and report.md (outputs.h).
 */
#include "capture/internal.h"

#include "core/mdcode.h"
#include "core/textesc.h"
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

/* ---- folding ---- */

/*
 * Each side's directory, its unit, and how its graph is titled and drawn
 * (indexed by enum cap_side)
 */
static const struct side_info {
	const char *dir, *unit;
	const char *title;	/* after the process and role */
	const char *counts;	/* the graph's subtitle: what a count is */
	const char *colors;	/* fold2svg's palette, or NULL */
} sides[CAP_NSIDES] = {
	[CAP_ON] = { "on", FK_ON_UNIT, "on-CPU", NULL, NULL },
	[CAP_OFF] = { "off", FK_OFF_UNIT, "off-CPU", "time off the CPU in microseconds",
		      "--colors=io" },
	[CAP_RUNQ] = { "runq", FK_OFF_UNIT, "run queue",
		       "time runnable, waiting for a CPU, in microseconds, by the stack at "
		       "preemption or wake-up", "--colors=io" },
	[CAP_WAKE] = { "wake", FK_OFF_UNIT, "off-wake",
		       "time blocked in microseconds, by the blocked stack, then '--' and "
		       "the waker's stack", "--colors=chain" },
};

struct fold {
	const char *what;
	const char *mode;	/* the plugin's: "offcpu", "runq"...; NULL: on-CPU */
	bool states;		/* the states TSV (threads.h), not profiles */
	const char *dir, *log;	/* the split directory, the log: names in the
				   private directory */
	const char *folded;	/* DWARF: fp-collapse's whole output, or NULL */
	struct fk_child *a, *b;	/* perf script [| fp-collapse] */
};

static bool folds_done(struct session *s)
{
	for (int i = 0; i < CAP_NFOLDS; i++) {
		struct fold *f = s->folds[i];

		if (f && ((f->a && !fk_child_exited(f->a)) || (f->b && !fk_child_exited(f->b))))
			return false;
	}
	return true;
}

static int fold_start(struct session *s, struct fold *f, const struct rec *r, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	int log = fk_outdir_new_fd(s->priv, f->log, err);
	struct fk_spawn how = { .in_fd = -1, .err_fd = log, .own_group = true,
				.cwd_fd = fk_outdir_fd(s->priv) };
	char **argv;

	if (log < 0)
		return -1;
	if (f->states) {
		argv = fk_perf_states(c->perf, r->data, c->plugin, f->dir);
		how.argv = (const char *const *)argv;
		how.out_fd = log;
		f->a = fk_child_spawn(&how, err);
		g_strfreev(argv);
	} else if (r->offcpu || c->cg == FK_CG_FP) {
		/* the plugin makes f->dir in the private directory */
		argv = fk_perf_fold(c->perf, r->data, c->plugin, f->mode, f->dir);
		how.argv = (const char *const *)argv;
		how.out_fd = log;
		f->a = fk_child_spawn(&how, err);
		g_strfreev(argv);
	} else {
		/* perf gives a dlfilter only part of a DWARF stack */
		const char *collapse[] = { s->collapse, "--pid", NULL };
		int p[2], out = fk_outdir_new_fd(s->priv, f->folded, err);

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
	g_free(f);
}

/* splits fp-collapse --pid's output into f->dir as the plugin would */
static bool split_dwarf(struct session *s, struct fold *f)
{
	char *in = cap_priv_path(s, f->folded);
	struct fk_outdir *dir = fk_outdir_mkdir(s->priv, f->dir, NULL);
	uint64_t unsplit = 0;
	GError *e = NULL;
	bool ok = dir && fk_split_by_pid(in, dir, FK_ON_UNIT, &unsplit, &e) == 0;

	if (!ok) {
		cap_warn(s, "%s: %s", f->what, e ? e->message : "cannot make the split directory");
		g_clear_error(&e);
	} else if (unsplit) {
		cap_warn(s, "%s: %" G_GUINT64_FORMAT " stacks without a process id left out",
			 f->what, unsplit);
	}
	fk_outdir_free(dir);
	g_free(in);
	return ok;
}

/*
 * The index of a finished fold (core/splitindex.h) in *x, with *dir its
 * directory: 0.  When there is none, both are NULL: 0 when the recording
 * held nothing to fold, -1 (after a warning) when folding failed.
 */
static int fold_result(struct session *s, struct fold *f, struct fk_split_index **x,
		       struct fk_outdir **dir)
{
	int rc = 0;
	GError *e = NULL;
	bool ok = fk_child_ok(f->a, 0) && (!f->b || fk_child_ok(f->b, 0));

	*x = NULL;
	*dir = NULL;
	if (ok && f->folded)
		ok = split_dwarf(s, f);
	if (ok && (*dir = fk_outdir_open(s->priv, f->dir, NULL))) {
		*x = fk_split_index_readat(fk_outdir_fd(*dir), fk_outdir_path(*dir),
					   FK_SPLIT_PROCESSES | FK_SPLIT_NEED_INDEX, &e);
		if (!*x) {
			cap_warn(s, "folding the %s recording failed: %s", f->what, e->message);
			g_clear_error(&e);
			rc = -1;
		}
	} else {
		char *log = cap_read_text(s, f->log), **lines = g_strsplit(log, "\n", -1), *why = NULL;

		/* the plugin's "foldkit: no sched:sched_switch samples...",
		 * "... holds no samples ...", with its status 0 or 1: nothing
		 * to fold is no failure (a perf that died is not folded) */
		for (char **l = lines; *l && !why; l++)
			if (g_str_has_prefix(*l, "foldkit: no ") || strstr(*l, " no samples"))
				why = g_strdup(g_strstrip(*l));
		if (why) {
			cap_say(s, "%s: no samples (%s)", f->what, why);
		} else {
			for (char **l = lines; *l && !why; l++)
				if (**l)
					why = g_strdup(g_strstrip(*l));
			cap_warn(s, "folding the %s recording failed: %s", f->what,
			     why ? why : "(no message)");
			rc = -1;
		}
		g_free(why);
		g_strfreev(lines);
		g_free(log);
	}
	if (!*x)
		g_clear_pointer(dir, fk_outdir_free);
	return rc;
}

/*
 * The plugin's states of the off-CPU recording into s->states and
 * s->states_us (s->states_ok); else a warning saying why there are none.
 * A recording that holds no switch at all had every thread asleep: the
 * window is then fp-record's own.
 */
static void states_result(struct session *s, struct fold *f)
{
	char *log = cap_read_text(s, f->log), *text = NULL, *path = NULL, *why = NULL;
	gsize len = 0;
	GError *e = NULL;

	if (fk_child_ok(f->a, 0)) {
		path = cap_priv_path(s, f->dir);
		if (!g_file_get_contents(path, &text, &len, &e)) {
			why = g_strdup(e->message);
		} else if (!fk_states_window_us(log, &s->states_us)) {
			why = g_strdup("the plugin did not say the window (an older foldkit.so?)");
		} else if (!(s->states = fk_states_parse(text, len, "the plugin's states", &e))) {
			why = g_strdup(e->message);
		} else {
			s->states_ok = true;
		}
	} else if (strstr(log, "foldkit: no sched:sched_switch samples")) {
		s->states_us = (uint64_t)(s->t1 - s->t0);
		s->states_ok = s->states_no_switch = true;
	} else {
		char **lines = g_strsplit(log, "\n", -1);

		for (char **l = lines; *l && !why; l++)
			if (**l)
				why = g_strdup(g_strstrip(*l));
		g_strfreev(lines);
		if (!why)
			why = g_strdup("the plugin failed (no message)");
	}
	if (why)
		cap_warn(s, "the threads' states are not measured: %s", why);
	g_clear_error(&e);
	g_free(why);
	g_free(text);
	g_free(path);
	g_free(log);
}

/*
 * Starts the folding of the off-CPU recording r into side (runq, wake), by
 * the plugin's mode: one more perf script pass each, run beside the others
 * (the plugin writes one profile a pass).
 */
static int fold_more(struct session *s, const struct rec *r, enum cap_side side,
		     const char *what, const char *mode, const char *log, GError **err)
{
	struct fold *f = g_new0(struct fold, 1);

	f->what = what;
	f->mode = mode;
	f->dir = sides[side].dir;
	f->log = log;
	s->folds[side] = f;
	return fold_start(s, f, r, err);
}

int cap_fold_all(struct session *s, struct fk_split_index **x, struct fk_outdir **dirs,
		 GError **err)
{
	struct rec *rs[] = { &s->on, &s->off };
	unsigned signals = s->signals;
	int rc = 0;

	for (int i = 0; i < CAP_NSIDES; i++) {
		x[i] = NULL;
		dirs[i] = NULL;
	}
	for (int i = 0; i < CAP_NFOLDS; i++)
		s->folds[i] = NULL;
	for (int i = 0; i < 2; i++) {
		struct rec *r = rs[i];
		struct fold *f;
		struct stat sb;

		/* a recording whose perf died holds part of the window, if
		 * perf can read it at all: its numbers are unknown, not 0 */
		if (!r->child || r->failed ||
		    fstatat(fk_outdir_fd(s->priv), r->data, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		f = g_new0(struct fold, 1);
		f->what = r->what;
		f->mode = r->offcpu ? "offcpu" : NULL;
		f->dir = r->offcpu ? "off" : "on";
		f->log = r->offcpu ? "fold-off.log" : "fold-on.log";
		if (!r->offcpu && s->cfg->cg == FK_CG_DWARF)
			f->folded = "on.folded";
		s->folds[i] = f;
		if (fold_start(s, f, r, err) != 0) {
			rc = -1;
			break;
		}
		/* beside the off-CPU profiles, each thread's states, the time
		 * runnable and the waits by their wakers */
		if (r->offcpu && s->cfg->plugin) {
			f = g_new0(struct fold, 1);
			f->what = "states";
			f->states = true;
			f->dir = "states.tsv";
			f->log = "states.log";
			s->folds[CAP_FOLD_STATES] = f;
			if (fold_start(s, f, r, err) != 0 ||
			    fold_more(s, r, CAP_RUNQ, "run-queue", "runq", "fold-runq.log", err) != 0 ||
			    fold_more(s, r, CAP_WAKE, "off-wake", "offwake", "fold-wake.log", err) != 0) {
				rc = -1;
				break;
			}
		}
	}
	if (rc == 0) {
		cap_say(s, "folding");
		cap_run_until(s, folds_done, -1);
		if (s->signals != signals) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO,
				    "interrupted while folding: no profiles written");
			rc = -1;
		}
	}
	for (int i = 0; rc == 0 && i < 2; i++)
		if (s->folds[i] && fold_result(s, s->folds[i], &x[i], &dirs[i]) != 0)
			rs[i]->failed = true;
	/* folded from the off-CPU recording: nothing of a failed one; a
	 * fold of its own that fails leaves its side out (fold_result()
	 * said why), the off-CPU numbers still right */
	for (int i = CAP_RUNQ; rc == 0 && i < CAP_NSIDES; i++)
		if (s->folds[i] && !s->off.failed)
			fold_result(s, s->folds[i], &x[i], &dirs[i]);
	if (rc == 0 && s->folds[CAP_FOLD_STATES] && !s->off.failed)
		states_result(s, s->folds[CAP_FOLD_STATES]);
	for (int i = 0; i < CAP_NFOLDS; i++) {
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
	/* a side that failed has unknown totals ("-"), never 0 */
	r->on = s->cfg->on && !s->on.failed;
	r->off = s->cfg->off && !s->off.failed;
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

/* DIR/on, DIR/off... made on first use; NULL after a warning */
static struct fk_outdir *side_dir(struct session *s, enum cap_side i)
{
	GError *e = NULL;

	if (!s->sides[i] && !(s->sides[i] = fk_outdir_mkdir(s->out, sides[i].dir, &e))) {
		cap_warn(s, "%s", e->message);
		g_error_free(e);
	}
	return s->sides[i];
}

/* moves a split file into DIR/side; returns its path in DIR */
static char *place(struct session *s, struct fk_outdir *from, const char *file,
		   enum cap_side side, const struct fk_out_row *r)
{
	struct fk_outdir *to = side_dir(s, side);
	char *name = g_strconcat(r->name, ".folded", NULL);
	char *rel = NULL;
	GError *e = NULL;

	if (to && fk_outdir_move(from, file, to, name, &e) != 0) {
		cap_warn(s, "%s", e->message);
		g_error_free(e);
	} else if (to) {
		rel = g_strdup_printf("%s/%s", sides[side].dir, name);
	}
	g_free(name);
	return rel;
}

static int row_by_pid(gconstpointer a, gconstpointer b)
{
	const struct fk_out_row *x = *(struct fk_out_row *const *)a;
	const struct fk_out_row *y = *(struct fk_out_row *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * Moves a process's profile from the split directory into DIR/side and
 * sums it; returns its path in DIR, or NULL.
 */
static char *take(struct session *s, struct fk_outdir *dir, const struct fk_split_row *e,
		  enum cap_side side, struct fk_out_row *r, struct fk_folded_sum *sum)
{
	const char *unit = sides[side].unit;
	char *exe_name = r->exe ? fk_proc_exe_name(r->exe) : NULL;
	char *placeholder = g_strdup_printf("[%s]", exe_name ? exe_name : "unknown");
	const char *unresolved[] = { "[unknown]", placeholder, NULL };
	char *rel, *p;
	GError *err = NULL;

	if ((rel = place(s, dir, e->file, side, r))) {
		p = g_build_filename(s->cfg->dir, rel, NULL);
		if (fk_folded_sum(p, unresolved, sum, &err) != 0) {
			cap_warn(s, "%s", err->message);
			g_error_free(err);
		} else if (e->has_total && e->total != sum->total) {
			char want[FK_COUNT_BUFSZ + 1], got[FK_COUNT_BUFSZ + 1];

			want[fk_count_format(e->total, want)] = '\0';
			got[fk_count_format(sum->total, got)] = '\0';
			cap_warn(s, "%s: holds %s %s, where the plugin's index says %s", p, got,
				 unit, want);
		}
		g_free(p);
	}
	g_free(exe_name);
	g_free(placeholder);
	return rel;
}

/*
 * Whether a side's split index counts in unit (since it says): a unit
 * other than fp-record's would put a wrong one on every number, so that
 * side is left out, and counts as failed.
 */
static bool unit_ok(struct session *s, struct rec *r, const struct fk_split_index *x,
		    const char *unit)
{
	if (!x || !x->unit || strcmp(x->unit, unit) == 0)
		return true;
	cap_warn(s, "the plugin counts the %s profiles in '%s', not %s: left out", r->what,
		 x->unit, unit);
	r->failed = true;
	return false;
}

/*
 * The plugin's repair columns of a process (with stack dumps; "-" where
 * none of its threads was dumped) into r.
 */
static void repair_of(const struct fk_split_index *x, const struct fk_split_row *e,
		      struct fk_out_row *r)
{
	const char *fixed = fk_split_index_cell(x, e, "repaired_us");
	const char *not = fk_split_index_cell(x, e, "unrepaired_us");
	const char *why = fk_split_index_cell(x, e, "unrepaired_why");
	char *end1, *end2;

	if (!fixed || !not || !why)
		return;
	errno = 0;
	r->off_repaired_us = g_ascii_strtoull(fixed, &end1, 10);
	r->off_unrepaired_us = g_ascii_strtoull(not, &end2, 10);
	if (errno || end1 == fixed || *end1 || end2 == not || *end2)
		return;		/* "-": not dumped */
	r->off_has_repair = true;
	r->off_unrepaired_why = strcmp(why, "-") ? g_strdup(why) : NULL;
}

/* The plugin's on-CPU columns of a process's lost callers into r. */
static void caller_lost_of(const struct fk_split_index *x, const struct fk_split_row *e,
			   struct fk_out_row *r)
{
	const char *lost = fk_split_index_cell(x, e, "caller_lost");
	const char *in = fk_split_index_cell(x, e, "caller_lost_in");
	char *end;

	if (!lost || !in)
		return;
	errno = 0;
	r->on_caller_lost = g_ascii_strtoull(lost, &end, 10);
	if (errno || end == lost || *end)
		return;
	r->on_has_caller_lost = true;
	r->on_caller_lost_in = strcmp(in, "-") ? g_strdup(in) : NULL;
}

void cap_build_rows(struct session *s, struct fk_split_index *const *x,
		    struct fk_outdir *const *dirs)
{
	GHashTable *rows = g_hash_table_new(g_direct_hash, g_direct_equal);
	struct fk_split_index *on = unit_ok(s, &s->on, x[0], FK_ON_UNIT) ? x[0] : NULL;
	struct fk_split_index *off = unit_ok(s, &s->off, x[1], FK_OFF_UNIT) ? x[1] : NULL;
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, s->procs);
	while (g_hash_table_iter_next(&it, NULL, &val))
		row_for(s, rows, ((struct tracked *)val)->pid, NULL);
	/* on-CPU: perf recorded only the processes and their children */
	for (guint i = 0; on && i < on->rows->len; i++) {
		const struct fk_split_row *e = g_ptr_array_index(on->rows, i);

		row_for(s, rows, e->pid, e->comm);
	}
	/* every process known, which is which (and so the files' names) */
	cap_name_rows(s, rows);
	for (guint i = 0; on && i < on->rows->len; i++) {
		const struct fk_split_row *e = g_ptr_array_index(on->rows, i);
		struct fk_out_row *r = row_for(s, rows, e->pid, e->comm);

		r->on_folded = take(s, dirs[0], e, CAP_ON, r, &r->on_sum);
		r->on_has_samples = e->has_samples;
		r->on_samples = e->samples;
		caller_lost_of(on, e, r);
	}
	/* off-CPU: the machine's switches that touched them; keep theirs */
	for (guint i = 0; off && i < off->rows->len; i++) {
		const struct fk_split_row *e = g_ptr_array_index(off->rows, i);
		struct fk_out_row *r = g_hash_table_lookup(rows, GINT_TO_POINTER(e->pid));

		if (!r)
			continue;
		r->off_folded = take(s, dirs[1], e, CAP_OFF, r, &r->off_sum);
		r->off_has_samples = e->has_samples;
		r->off_samples = e->samples;
		repair_of(off, e, r);
	}
	/* the off-CPU recording's other profiles, for the same processes;
	 * none where the off-CPU one failed (its numbers are unknown) */
	for (int side = CAP_RUNQ; !s->off.failed && side < CAP_NSIDES; side++) {
		const struct fk_split_index *sx = x[side];

		if (sx && sx->unit && strcmp(sx->unit, sides[side].unit) != 0) {
			cap_warn(s, "the plugin counts the %s profiles in '%s', not %s: left out",
				 sides[side].dir, sx->unit, sides[side].unit);
			continue;
		}
		for (guint i = 0; sx && i < sx->rows->len; i++) {
			const struct fk_split_row *e = g_ptr_array_index(sx->rows, i);
			struct fk_out_row *r = g_hash_table_lookup(rows, GINT_TO_POINTER(e->pid));

			if (!r)
				continue;
			if (side == CAP_RUNQ) {
				r->runq_folded = take(s, dirs[side], e, side, r, &r->runq_sum);
				r->runq_has_samples = e->has_samples;
				r->runq_samples = e->samples;
			} else {
				r->wake_folded = take(s, dirs[side], e, side, r, &r->wake_sum);
				r->wake_has_samples = e->has_samples;
				r->wake_samples = e->samples;
			}
		}
	}
	g_hash_table_iter_init(&it, rows);
	while (g_hash_table_iter_next(&it, NULL, &val))
		g_ptr_array_add(s->rows, val);
	g_ptr_array_sort(s->rows, row_by_pid);
	g_hash_table_destroy(rows);
}

/*
 * Draws DIR/side/NAME.folded with tool (fold2svg or fold2html) into
 * DIR/side/NAME.ext; returns "side/NAME.ext", or NULL after saying why.
 */
static char *draw(struct session *s, const struct fk_out_row *r, const char *folded,
		  enum cap_side side, const char *tool, const char *ext)
{
	const struct fk_capture_cfg *c = s->cfg;
	const struct side_info *si = &sides[side];
	struct fk_outdir *dir = s->sides[side];
	const char *name = strrchr(folded, '/') + 1;	/* "side/NAME.folded" */
	char *title, *subtitle, *out, *out_rel;
	const char *argv[12];
	int n = 0;
	GError *e = NULL;
	struct fk_child *child;
	struct fk_outfile *o;
	/* in DIR/side, which a name from DIR ("-o -x") cannot be taken for
	 * an option; the graph goes to a new file there */
	struct fk_spawn how = { .argv = argv, .in_fd = -1, .err_fd = -1,
				.cwd_fd = fk_outdir_fd(dir) };
	bool ok;

	title = g_strdup_printf("%s%s%s (%s) %s", c->title ? c->title : "", c->title ? ": " : "",
				r->comm, r->role, si->title);
	subtitle = si->counts
		? g_strdup_printf("%s, pid %d, %.2f s window, %s",
				  r->name, r->pid, (double)(s->t1 - s->t0) / 1e6, si->counts)
		: g_strdup_printf("%s, pid %d, %.2f s window, cpu-clock at %u Hz, counts in "
				  "nanoseconds", r->name, r->pid, (double)(s->t1 - s->t0) / 1e6,
				  c->freq);
	out_rel = g_strconcat(folded, ext, NULL);
	strcpy(out_rel + strlen(folded) - strlen(".folded"), ext);
	out = g_path_get_basename(out_rel);
	argv[n++] = tool;
	argv[n++] = "--title";
	argv[n++] = title;
	argv[n++] = "--subtitle";
	argv[n++] = subtitle;
	argv[n++] = side == CAP_ON ? "--countname=ns" : "--countname=us";
	if (si->colors)
		argv[n++] = si->colors;
	argv[n++] = "--";
	argv[n++] = name;
	argv[n] = NULL;
	ok = (o = fk_outdir_file(dir, out, &e)) != NULL;
	if (ok) {
		/* the child writes to the descriptor; the stream holds nothing */
		how.out_fd = fileno(fk_outfile_stream(o));
		child = fk_child_spawn(&how, &e);
		ok = child && fk_child_wait(child, -1, NULL) && fk_child_ok(child, 0);
		if (child && !ok && !e)
			e = g_error_new(FK_ERROR, FK_ERROR_IO, "%s %s", tool, fk_child_exit_text(child));
		fk_child_free(child);
		if (!ok)
			fk_outfile_abort(o);
		else if (fk_outfile_commit(o, &e) != 0)
			ok = false;
	}
	if (!ok) {
		cap_warn(s, "%s/%s: no graph: %s", c->dir, out_rel, e ? e->message : "drawing failed");
		g_clear_pointer(&out_rel, g_free);
	}
	g_clear_error(&e);
	g_free(title);
	g_free(subtitle);
	g_free(out);
	return out_rel;
}

/* Each profile as an SVG (fold2svg) and as a page (fold2html) beside it. */
void cap_draw_all(struct session *s)
{
	if (!s->fold2svg)
		cap_warn(s, "fold2svg was not found next to fp-record or in PATH: no graphs drawn");
	if (!s->fold2html)
		cap_warn(s, "fold2html was not found next to fp-record or in PATH: no pages drawn");
	for (guint i = 0; i < s->rows->len; i++) {
		struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		if (r->on_folded && s->fold2svg)
			r->on_svg = draw(s, r, r->on_folded, CAP_ON, s->fold2svg, ".svg");
		if (r->on_folded && s->fold2html)
			r->on_html = draw(s, r, r->on_folded, CAP_ON, s->fold2html, ".html");
		if (r->off_folded && s->fold2svg)
			r->off_svg = draw(s, r, r->off_folded, CAP_OFF, s->fold2svg, ".svg");
		if (r->off_folded && s->fold2html)
			r->off_html = draw(s, r, r->off_folded, CAP_OFF, s->fold2html, ".html");
		if (r->runq_folded && s->fold2svg)
			r->runq_svg = draw(s, r, r->runq_folded, CAP_RUNQ, s->fold2svg, ".svg");
		if (r->wake_folded && s->fold2svg)
			r->wake_svg = draw(s, r, r->wake_folded, CAP_WAKE, s->fold2svg, ".svg");
	}
}

bool cap_captured(const struct fk_out_row *r)
{
	return r->on_sum.total > 0 || r->off_sum.total > 0;
}

void cap_judge_rows(struct session *s)
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
			cap_warn(s, "process %d (%s) exited %.2f s into the %.2f s window: its "
			     "profiles cover that part only", r->pid, r->comm, r->exited, window);
		if (r->on && r->on_sum.total == 0)
			cap_warn(s, "process %d (%s): no on-CPU samples: it was idle during the window; "
			     "drive load (--load CMD) or record longer (-d)", r->pid, r->comm);
		/* (an off-CPU capture's: with the on-CPU one failed, whether
		 * it ran is unknown) */
		else if (r->off && !s->cfg->on && r->off_sum.total == 0)
			cap_warn(s, "process %d (%s): no off-CPU waits: it neither blocked nor "
			     "was seen to run during the window", r->pid, r->comm);
		if (unresolved > UNRESOLVED_SHARE) {
			char *name = r->exe ? fk_proc_exe_name(r->exe) : NULL;

			cap_warn(s, "process %d (%s): %.0f%% of its on-CPU time is in stacks with "
			     "frames perf could not name ([unknown]%s%s%s): %s is stripped or "
			     "lacks frame pointers; build it with -g -fno-omit-frame-pointer "
			     "(or record with --call-graph dwarf)", r->pid, r->comm,
			     unresolved * 100, name ? " or [" : "", name ? name : "",
			     name ? "]" : "", r->exe ? r->exe : "its program");
			g_free(name);
		}
	}
	if (s->cfg->off && s->cfg->on && !s->off.failed && !s->on.failed) {
		bool ran = false, waited = false;

		for (guint i = 0; i < s->rows->len; i++) {
			const struct fk_out_row *r = g_ptr_array_index(s->rows, i);

			ran |= r->on_sum.total > 0;
			waited |= r->off_sum.total > 0;
		}
		/* threads that run block sooner or later: none did, so the
		 * off-CPU recording and the processes did not meet */
		if (ran && !waited)
			cap_warn(s, "no process has off-CPU time, though they ran: %s",
				 s->pid_ns ? "in a PID namespace the plugin must map the kernel's "
				 "thread ids to the namespace's, which this foldkit.so may not do; "
				 "update foldkit, or run fp-record outside the container"
				 : "their threads only ran or were preempted (states S and D "
				 "are counted), or the recording missed them");
	}
}

/* text to a new file name in dir; 0, or -1 with *err */
static int write_new(struct fk_outdir *dir, const char *name, const GString *text, GError **err)
{
	struct fk_outfile *o = fk_outdir_file(dir, name, err);

	if (!o)
		return -1;
	/* the commit checks the stream for errors */
	fwrite(text->str, 1, text->len, fk_outfile_stream(o));
	return fk_outfile_commit(o, err);
}

/* DIR/side/index.tsv: the files of a side, so that DIR/side is a split
 * directory fold-report reads as such (core/splitindex.h) */
static int write_side_index(struct session *s, enum cap_side side, GError **err)
{
	GArray *v = g_array_new(FALSE, FALSE, sizeof(struct fk_split_out));
	GString *text = g_string_new(NULL);
	bool caller_lost = false;
	int rc;

	/* on-CPU, the plugin's count of the samples whose caller is missing
	 * goes on, for fold-report's caller-lost rule */
	for (guint i = 0; i < s->rows->len && side == CAP_ON; i++)
		caller_lost |= ((const struct fk_out_row *)g_ptr_array_index(s->rows, i))
				       ->on_has_caller_lost;
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		const char *fs[] = { r->on_folded, r->off_folded, r->runq_folded, r->wake_folded };
		const bool has[] = { r->on_has_samples, r->off_has_samples, r->runq_has_samples,
				     r->wake_has_samples };
		const uint64_t n[] = { r->on_samples, r->off_samples, r->runq_samples,
				       r->wake_samples };
		const fk_count t[] = { r->on_sum.total, r->off_sum.total, r->runq_sum.total,
				       r->wake_sum.total };
		const char *f = fs[side];
		struct fk_split_out o = {
			.comm = r->comm, .pid = r->pid, .more = NULL,
			.has_samples = has[side], .samples = n[side], .total = t[side],
		};

		if (!f)
			continue;
		o.file = strrchr(f, '/') + 1;
		/* fold-report --base pairs the processes of two captures by
		 * role, and divides by the window (seconds) */
		o.more = g_strdup_printf("\t%s\t%.3f", r->role ? r->role : "-",
					 (double)(s->t1 - s->t0) / 1e6);
		if (caller_lost) {
			char *more = (char *)o.more;

			/* the name is the plugin's cell: no tab or line in it */
			o.more = r->on_has_caller_lost ?
				g_strdup_printf("%s\t%" G_GUINT64_FORMAT "\t%s", more,
						r->on_caller_lost,
						r->on_caller_lost_in ? r->on_caller_lost_in : "-") :
				g_strdup_printf("%s\t-\t-", more);
			g_free(more);
		}
		g_array_append_val(v, o);
	}
	fk_split_index_format(text, (struct fk_split_out *)(void *)v->data, v->len,
			      sides[side].unit,
			      caller_lost ? "role\twindow\tcaller_lost\tcaller_lost_in" : "role\twindow");
	for (guint i = 0; i < v->len; i++)
		g_free((char *)g_array_index(v, struct fk_split_out, i).more);
	rc = write_new(s->sides[side], "index.tsv", text, err);
	g_string_free(text, TRUE);
	g_array_free(v, TRUE);
	return rc;
}

int cap_write_index(struct session *s, GError **err)
{
	char *path = g_build_filename(s->cfg->dir, "index.tsv", NULL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	GString *text;
	int rc;

	rc = fk_index_write(f, s->rows, path, err);
	fclose(f);
	text = g_string_new_len(buf, (gssize)len);
	free(buf);
	for (int i = 0; rc == 0 && i < CAP_NSIDES; i++)
		if (s->sides[i])
			rc = write_side_index(s, i, err);
	if (rc == 0)
		rc = write_new(s->out, "index.tsv", text, err);
	if (rc == 0)
		g_ptr_array_add(s->paths, g_strdup(path));
	g_string_free(text, TRUE);
	g_free(path);
	return rc;
}

int cap_write_threads(struct session *s, GError **err)
{
	GArray *pids = g_array_new(FALSE, FALSE, sizeof(int));
	GString *text;
	GError *e = NULL;
	int rc;

	if (!s->states_ok)
		return 0;
	for (guint i = 0; i < s->rows->len; i++)
		g_array_append_val(pids, ((struct fk_out_row *)g_ptr_array_index(s->rows, i))->pid);
	s->threads = fk_threads_merge(s->states, s->at_start, (int *)(void *)pids->data, pids->len,
				      s->states_us, &e);
	g_array_free(pids, TRUE);
	if (!s->threads) {
		/* a wrong number is no table */
		cap_warn(s, "the threads' states are left out: %s", e->message);
		g_error_free(e);
		s->states_ok = false;
		return 0;
	}
	text = g_string_new(NULL);
	fk_threads_format(text, s->threads);
	if ((rc = write_new(s->out, "threads.tsv", text, err)) == 0)
		g_ptr_array_add(s->paths, g_build_filename(s->cfg->dir, "threads.tsv", NULL));
	g_string_free(text, TRUE);
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
static bool has_profiles(struct session *s, enum cap_side side)
{
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		const char *fs[] = { r->on_folded, r->off_folded, r->runq_folded, r->wake_folded };

		if (fs[side])
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
	bool on = has_profiles(s, CAP_ON), off = has_profiles(s, CAP_OFF);
	const char *argv[14];
	char *out = NULL, *errout = NULL, **lines, cwd[40];
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
	/* who released the locks waited for, and who waited for a CPU */
	if (off && has_profiles(s, CAP_WAKE)) {
		argv[n++] = "--offwake";
		argv[n++] = "wake";
	}
	if (off && has_profiles(s, CAP_RUNQ)) {
		argv[n++] = "--runq";
		argv[n++] = "runq";
	}
	argv[n++] = "--";
	argv[n++] = on ? "on" : "off";
	argv[n] = NULL;
	/* run in DIR (its descriptor's: GLib changes directory first thing
	 * after fork), so that the report names on/x-1.folded, not a path */
	snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d", fk_outdir_fd(s->out));
	if (!g_spawn_sync(cwd, (char **)argv, NULL, 0, NULL, NULL, &out, &errout,
			  &status, &e) || !g_spawn_check_wait_status(status, &e)) {
		cap_warn(s, "fold-report failed: %s%s%s", e ? e->message : "",
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

/*
 * With stack dumps, what share of the off-CPU time the plugin repaired
 * through code without frame pointers, and which processes kept stacks it
 * could not repair, and why: so that a stack that still stops in libc is
 * never silently one of the program's.
 */
static void describe_repair(struct session *s, GString *out)
{
	uint64_t fixed = 0, not = 0;

	if (!s->cfg->stack_dump) {
		g_string_append(out, "- Off-CPU stacks: the frame-pointer chains alone "
				"(--stack-dump=0): a thread blocked in code without frame "
				"pointers (libc, libstdc++) has lost the program's frames that "
				"called it\n");
		return;
	}
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		if (r->off_has_repair) {
			fixed += r->off_repaired_us;
			not += r->off_unrepaired_us;
		}
	}
	if (!fixed && !not)
		return;
	g_string_append_printf(out, "- Off-CPU stacks repaired through code without frame "
			       "pointers (libc) from the stack dumps (--stack-dump=%u): "
			       "%.1f%% of the off-CPU time of the dumped threads; not "
			       "repaired, so possibly without the program's frames: %.1f%%\n",
			       s->cfg->stack_dump, 100.0 * (double)fixed / (double)(fixed + not),
			       100.0 * (double)not / (double)(fixed + not));
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		uint64_t all = r->off_repaired_us + r->off_unrepaired_us;

		/* a process whose own share is not small: 1% of its time */
		if (!r->off_has_repair || !all || r->off_unrepaired_us * 100 < all)
			continue;
		g_string_append(out, "  - ");
		md(out, r->comm);
		g_string_append_printf(out, " (%d): %.1f%% of its off-CPU time not repaired, "
				       "most for: ", r->pid,
				       100.0 * (double)r->off_unrepaired_us / (double)all);
		md(out, r->off_unrepaired_why ? r->off_unrepaired_why : "-");
		g_string_append_c(out, '\n');
	}
}

/*
 * On-CPU: what share of the CPU time is in stacks whose innermost function
 * keeps no frame pointer where sampled (libc's leaves): whose caller is
 * missing there, its time under the caller's caller.  Not repaired (perf
 * records no stack bytes beside an on-CPU frame-pointer chain), so said.
 */
static void describe_caller_lost(struct session *s, GString *out)
{
	double lost = 0, all = 0;

	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		if (r->on_has_caller_lost) {
			lost += (double)r->on_caller_lost;
			all += fk_count_to_double(r->on_sum.total);
		}
	}
	if (!lost || !all)
		return;
	g_string_append_printf(out, "- On-CPU stacks: %.1f%% of the CPU time is in functions "
			       "that keep no frame pointer where sampled (leaves of libc, "
			       "most): the function that called each is missing from those "
			       "stacks, its time under the caller's caller\n",
			       100.0 * lost / all);
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		double total = fk_count_to_double(r->on_sum.total);

		if (!r->on_has_caller_lost || total <= 0 || (double)r->on_caller_lost * 100 < total)
			continue;
		g_string_append(out, "  - ");
		md(out, r->comm);
		g_string_append_printf(out, " (%d): %.1f%% of its CPU time, most in ", r->pid,
				       100.0 * (double)r->on_caller_lost / total);
		md(out, r->on_caller_lost_in ? r->on_caller_lost_in : "-");
		g_string_append_c(out, '\n');
	}
}

static void md_us(GString *out, uint64_t us)
{
	g_string_append_printf(out, "%" G_GUINT64_FORMAT, us);
}

/*
 * Each process's threads by state (threads.tsv), one table a process: so
 * that a thread asleep for the whole window is seen asleep, not missing,
 * and time waiting for a CPU is not taken for time waiting for work.
 */
static void describe_threads(struct session *s, GString *out)
{
	int pid = 0;

	if (!s->threads)
		return;
	g_string_append(out, "\n## Thread states\n\n");
	g_string_append_printf(out, "Each thread's time, in microseconds (µs), over %s ",
			       s->states_no_switch ? "the window," : "the off-CPU recording's");
	md_us(out, s->states_us);
	g_string_append(out, " µs");
	if (!s->states_no_switch)
		g_string_append(out, " (its first event to its last)");
	g_string_append(out, ": on a CPU; runnable (preempted, or woken and waiting for a "
			"CPU); sleeping (S: waiting for an event, a lock, a timer); blocked "
			"(D: waiting uninterruptibly, for the disk most often).  A thread's "
			"four times add up to the window, or to the part of it the thread "
			"lived.  A thread that never switched in the window was in its "
			"state at the start for all of it; what it waited in, read from "
			"/proc as the window opened, is in the last column (its system "
			"call, wchan and, where root reads it, kernel stack).  The same in "
			"[threads.tsv](threads.tsv).\n");
	if (s->states_no_switch)
		g_string_append(out, "\nThe off-CPU recording holds no switch at all: every "
				"thread was asleep, or ran, for the whole window.\n");
	for (guint i = 0; i < s->threads->len; i++) {
		const struct fk_thread_row *t = g_ptr_array_index(s->threads, i);

		if (i == 0 || t->pid != pid) {
			const char *comm = NULL;

			for (guint k = 0; k < s->rows->len && !comm; k++) {
				const struct fk_out_row *r = g_ptr_array_index(s->rows, k);

				if (r->pid == t->pid)
					comm = r->comm;
			}
			pid = t->pid;
			g_string_append(out, "\n### ");
			md(out, comm ? comm : "?");
			g_string_append_printf(out, " (pid %d)\n\n", pid);
			g_string_append(out, "| thread | tid | on-CPU µs | runnable µs | "
					"sleeping µs | blocked µs | waiting in (no switch "
					"in the window) |\n|---|---|---:|---:|---:|---:|---|\n");
		}
		g_string_append(out, "| ");
		md(out, t->comm);
		g_string_append_printf(out, " | %d", t->tid);
		for (int k = 0; k < FK_ST_N; k++) {
			g_string_append(out, " | ");
			md_us(out, t->us[k]);
		}
		g_string_append(out, " | ");
		if (t->waiting)
			fk_md_code(out, t->waiting, strlen(t->waiting), true);
		g_string_append(out, " |\n");
	}
}

int cap_write_report(struct session *s, GError **err)
{
	const struct fk_capture_cfg *c = s->cfg;
	GString *out = g_string_new("# ");
	char *path = g_build_filename(c->dir, "report.md", NULL);
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
				"and perf's switch records (--switch-events), "
				"folded by foldkit.so's offcpu mode; counts are microseconds "
				"off the CPU (sleeping, S, or blocked, D), each wait up to its "
				"wake-up (sched:sched_waking)\n"
				"- Run queue (runq/): the same recording by foldkit.so's runq "
				"mode; counts are microseconds runnable, waiting for a CPU "
				"(preempted, or woken and not yet running), by the stack at "
				"preemption or wake-up: time a CPU-starved thread lost, which "
				"is not waiting for a lock or for work\n"
				"- Off-wake (wake/): the same recording by foldkit.so's offwake "
				"mode; the blocked stack, '--', then the stack of the thread "
				"that woke it, weighted by microseconds blocked until the "
				"wake-up\n");
	if (c->on)
		describe_caller_lost(s, out);
	if (c->off)
		describe_repair(s, out);
	if (s->compared) {
		g_string_append(out, "- Compared with ");
		fk_md_code(out, c->compare, strlen(c->compare), false);
		g_string_append(out, ": [compare.md](compare.md), and the differential "
				"graphs in compare/on/ and compare/off/\n");
	}
	if (c->load) {
		/* a code span: Markdown's escapes would show there literally */
		g_string_append(out, "- Load: ");
		fk_md_code(out, c->load, strlen(c->load), false);
		g_string_append_printf(out, ", started %g s before the window; its output is "
				       "in [load.log](load.log)\n", c->warmup);
	}
	g_string_append(out, "\n| process | role | pid | on-CPU | off-CPU | files |\n"
			"|---|---|---|---|---|---|\n");
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		g_string_append(out, "| ");
		md(out, r->comm);
		g_string_append(out, " | ");
		md(out, r->role);
		g_string_append_printf(out, " | %d | ", r->pid);
		md_total(out, r->on, r->on_sum.total, FK_ON_UNIT);
		g_string_append(out, " | ");
		md_total(out, r->off, r->off_sum.total, FK_OFF_UNIT);
		g_string_append(out, " |");
		md_link(out, "on.folded", r->on_folded);
		md_link(out, "on.svg", r->on_svg);
		md_link(out, "on.html", r->on_html);
		md_link(out, "off.folded", r->off_folded);
		md_link(out, "off.svg", r->off_svg);
		md_link(out, "off.html", r->off_html);
		md_link(out, "on.speedscope", r->on_speedscope);
		md_link(out, "off.speedscope", r->off_speedscope);
		md_link(out, "runq.folded", r->runq_folded);
		md_link(out, "runq.svg", r->runq_svg);
		md_link(out, "wake.folded", r->wake_folded);
		md_link(out, "wake.svg", r->wake_svg);
		g_string_append(out, " |\n");
	}
	g_string_append(out, "\nThe .speedscope.json files open in https://www.speedscope.app/ "
			"(drag and drop) with their unit and a profile per thread (a .folded "
			"file there shows raw counts); the .svg files in any browser; the "
			".html pages in any browser too, with every frame, a sandwich view "
			"and no network.\n");
	describe_threads(s, out);
	cap_group_report(s, out);
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

		cap_say(s, "%s", msg);
		g_string_append_printf(out, "\n## Findings\n\n%s.\n", msg);
	} else if ((f = findings(s))) {
		g_string_append(out, "\nThe findings of fold-report(1): the whole capture, then each "
				"process with its off-CPU profile.\n\n");
		g_string_append(out, f);
		g_free(f);
	} else {
		g_string_append(out, "\n## Findings\n\nfold-report failed: see the notes.\n");
	}
	if ((rc = write_new(s->out, "report.md", out, err)) == 0)
		g_ptr_array_add(s->paths, g_strdup(path));
	g_string_free(out, TRUE);
	g_free(path);
	return rc;
}

void cap_list_paths(struct session *s)
{
	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		const char *files[] = { r->on_folded, r->on_svg, r->on_html, r->on_speedscope,
					r->off_folded, r->off_svg, r->off_html,
					r->off_speedscope, r->runq_folded, r->runq_svg,
					r->wake_folded, r->wake_svg };

		for (size_t k = 0; k < G_N_ELEMENTS(files); k++)
			if (files[k])
				g_ptr_array_add(s->paths, g_build_filename(s->cfg->dir, files[k], NULL));
	}
	if (s->cfg->keep_data) {
		struct rec *rs[] = { &s->on, &s->off };

		/* from the private directory, which goes, to DIR */
		for (size_t i = 0; i < G_N_ELEMENTS(rs); i++) {
			GError *e = NULL;

			if (!rs[i]->child)
				continue;
			if (fk_outdir_move(s->priv, rs[i]->data, s->out, rs[i]->data, &e) == 0) {
				g_ptr_array_add(s->paths, g_build_filename(s->cfg->dir, rs[i]->data, NULL));
			} else {
				cap_warn(s, "cannot keep the %s recording: %s", rs[i]->what, e->message);
				g_error_free(e);
			}
		}
	}
}
