/*
 * internal.h - what the parts of one capture share (session.c, record.c,
 * write.c); not for use outside lib/capture/.  See session.h.
 */
#ifndef FOLDKIT_CAPTURE_INTERNAL_H
#define FOLDKIT_CAPTURE_INTERNAL_H

#include "capture/child.h"
#include "capture/outputs.h"
#include "capture/session.h"
#include "capture/threads.h"
#include "core/outdir.h"
#include "core/splitindex.h"

#include <glib.h>
#include <stdarg.h>
#include <stdbool.h>

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
	const char *data, *log;	/* names in the private directory */
	bool failed;		/* perf died, or its recording could not be
				   folded: this side's numbers are unknown */
	struct fk_child *child;
	int ctl, ack;		/* our ends of perf's control pipes, or -1 */
	guint ack_src;
	unsigned acks;
};

struct tracked {
	int pid, ppid;
	char *comm, *exe;
	char **argv;		/* its arguments, NULL: unknown (naming.c) */
	unsigned long long start;	/* stat's starttime: start order */
	bool selected, gone;
	double exited;		/* seconds into the window, or -1 */
};

struct fold;

/*
 * A capture's kinds of profile, each a directory of DIR: on/ (on-CPU,
 * ns), and from the off-CPU recording off/ (asleep or blocked, us),
 * runq/ (runnable, waiting for a CPU, us) and wake/ (off-wake stacks,
 * blocked us).  CAP_ON and CAP_OFF are 0 and 1, so that a bool offcpu
 * indexes them too.
 */
enum cap_side { CAP_ON, CAP_OFF, CAP_RUNQ, CAP_WAKE, CAP_NSIDES };
/* the folds: a side's each, then the off-CPU recording's states */
#define CAP_FOLD_STATES CAP_NSIDES
#define CAP_NFOLDS (CAP_NSIDES + 1)

struct session {
	const struct fk_capture_cfg *cfg;
	struct fk_outdir *out;	/* DIR (core/outdir.h) */
	struct fk_outdir *priv;	/* DIR/.fp-record-XXXXXX, mode 0700: the children
				   run there, and write only there */
	struct fk_outdir *sides[CAP_NSIDES];	/* DIR/on, DIR/off... once made */
	char *version;		/* perf's */
	char *fold2svg, *fold2html, *collapse, *report;
	char *diff;		/* fold-diff, for --compare */
	char *speedscope;	/* fold2speedscope */
	bool compared;		/* --compare wrote compare.md */
	GPtrArray *groups;	/* --group-workers: struct cap_group * */
	bool grouped;		/* it wrote group/spread.tsv */
	GHashTable *procs;	/* pid -> struct tracked */
	GHashTable *seen_new;	/* new pids already looked at */
	struct rec on, off;
	unsigned want_acks;	/* from each running perf */
	struct fold *folds[CAP_NFOLDS];	/* each side's, the off-CPU recording's states */
	/*
	 * The threads' states (threads.h): every thread of the processes as
	 * /proc showed it when the window opened, the plugin's states TSV
	 * (NULL when the recording held no switch), the window it covers in
	 * us, and whether they were measured at all.
	 */
	GPtrArray *at_start, *states;
	uint64_t states_us;
	bool states_ok, states_no_switch;
	GPtrArray *threads;	/* threads.tsv's rows, once written */
	struct fk_child *load, *cmd;
	bool load_warned;
	char *shell_exe;	/* the command's until it is exec'd */
	unsigned signals;
	bool window_timeout, all_gone;
	/*
	 * The window, monotonic µs: t0 when both recordings were told to
	 * start, t1 once both said they had stopped.  Each recording's events
	 * lie between them however late a loaded machine lets perf act on
	 * its commands, so no time it holds is longer than the window.
	 */
	gint64 t0, t1;
	int last_pid;
	bool pid_ns;		/* in a PID namespace other than the first */
	const char *ended;	/* why the window ended */
	GPtrArray *rows;	/* struct fk_out_row * */
	GPtrArray *notes;	/* char *: the warnings, for report.md */
	GPtrArray *paths;
};

/* ---- session.c ---- */

/* a line of progress through cfg->say */
void cap_say(struct session *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* a warning: said, and kept for report.md's notes */
void cap_warn(struct session *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* seconds since the window opened */
double cap_now_s(const struct session *s);
/* starts tracking p (selected: chosen, not a child found later) */
struct tracked *cap_track(struct session *s, const struct fk_proc *p, bool selected);
/* the tracked pids, ascending; free with g_array_unref() */
GArray *cap_tracked_pids(struct session *s, bool selected_only, bool alive_only);
/* runs the main loop until done(s), a new signal, or timeout_ms (-1: none) */
bool cap_run_until(struct session *s, bool (*done)(struct session *), int timeout_ms);
/* a g_timeout_add() callback that sets a bool */
gboolean cap_on_flag(gpointer data);
/* the text of a file in the private directory, or "" */
char *cap_read_text(struct session *s, const char *name);
/* the path of a file in the private directory, for messages; g_free() */
char *cap_priv_path(struct session *s, const char *name);

/* ---- record.c: perf record and the window ---- */

void cap_rec_init(struct session *s, struct rec *r, bool offcpu);
/* starts both recordings, disabled, and enables them; -1 with *err */
int cap_start_recording(struct session *s, GError **err);
/* runs the window until its end, whatever ends it */
void cap_run_window(struct session *s);
/* disables and stops both recordings */
void cap_stop_recording(struct session *s);
/* ends a recording's perf and closes its pipes */
void cap_rec_kill(struct rec *r);
bool cap_recs_acked(struct session *s);

/* ---- naming.c: which process is which (roles.h) ---- */

/* re-reads the arguments and parent of the tracked processes still
 * running, which a worker that forked and then exec'd has changed since
 * it was first seen */
void cap_refresh_args(struct session *s);
/* gives each row (pid -> struct fk_out_row *) its role, ppid, arguments
 * and file name stem, the rows recorded together */
void cap_name_rows(struct session *s, GHashTable *rows);

/* ---- compare.c: --compare OLD ---- */

/* compare.md, compare.json and compare/: this capture against
 * cfg->compare, after index.tsv is written; problems are warnings */
void cap_compare(struct session *s);

/* a program's standard output (argv[0] a path), or NULL after a warning
 * that begins with what; *len its length */
char *cap_run_out(struct session *s, const char *const *argv, const char *what, gsize *len);
/* text[0..len) to the new file name in dir, listed in s->paths; false
 * after a warning */
bool cap_put(struct session *s, struct fk_outdir *dir, const char *name, const char *text,
	     gsize len);

/* ---- workers.c: --group-workers (group.h) ---- */

/* DIR/group/: the processes of one name and role merged, per side, and
 * spread.tsv; problems are warnings */
void cap_group_all(struct session *s);
/* report.md's section on the groups, when there are any */
void cap_group_report(struct session *s, GString *out);

/* ---- speedscope.c ---- */

/* each profile also as NAME.speedscope.json, with its unit and threads */
void cap_speedscope_all(struct session *s);

/* ---- write.c: folding and the files ---- */

/* x[side], dirs[side] (CAP_NSIDES each): each side's index and split
 * directory, NULL when it has none (r->failed says whether the on- or
 * off-CPU one failed; runq and wake, folded from the off-CPU recording,
 * are left out after a warning when their folding fails) */
int cap_fold_all(struct session *s, struct fk_split_index **x, struct fk_outdir **dirs,
		 GError **err);
void cap_build_rows(struct session *s, struct fk_split_index *const *x,
		    struct fk_outdir *const *dirs);
void cap_draw_all(struct session *s);
void cap_judge_rows(struct session *s);
bool cap_captured(const struct fk_out_row *r);
int cap_write_index(struct session *s, GError **err);
/* DIR/threads.tsv, when the states were measured */
int cap_write_threads(struct session *s, GError **err);
int cap_write_report(struct session *s, GError **err);
void cap_list_paths(struct session *s);

#endif
