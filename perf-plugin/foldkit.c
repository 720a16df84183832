/*
 * foldkit.so - a perf dlfilter that folds stacks inside `perf script`:
 * perf resolves the addresses, this folds them with lib/collapse/collapse.h (the
 * same code as `perf script | fp-collapse`), filters out every event so
 * perf prints nothing, and writes the folded stacks when perf stops.
 * See docs/foldkit-dlfilter.1.
 */
#include "collapse/collapse.h"
#include "collapse/inline.h"
#include "core/error.h"
#include "core/textesc.h"
#include "exports.h"
#include "frames.h"
#include "offcpu.h"
#include "offwake.h"
#include "options.h"
#include "core/outfile.h"
#include "perfdata.h"
#include "profiles.h"
#include "stacks.h"
#include "states.h"
#include "callerloss.h"
#include "userstack.h"

#include <perf/perf_dlfilter.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define NAME "foldkit"
#define SCHED_SWITCH "sched:sched_switch"
/* CPUs numbered below this are tracked in arrays */
#define DENSE_CPUS 4096

/* perf fills this in when it loads the plugin */
struct perf_dlfilter_fns perf_dlfilter_fns;

struct state {
	struct opts o;
	struct collapse_opts co;
	struct frame_cache *frames;
	struct stacks *sk;	/* the folded stacks, without an inliner, and
				 * with exports only when exports_keys_only()
				 * and on-CPU (NULL: folded by the collapsers) */
	/* the process ids (stacks_proc()) of the last few samples' threads */
	struct proc_memo {
		struct profile *pr;
		int pid, tid;
		const char *comm;	/* interned by frame_cache_note_comm() */
		uint32_t proc;
	} procs[4];
	unsigned proc_next;
	struct profiles *profiles;
	struct offcpu *off;
	/* offwake: the waits by their wakers (offcpu's, ended at the
	 * sched_waking), the collapser that names the wakers' stacks, the
	 * event name perf gives sched_waking (its pointer), wakings too short
	 * to decode, and whether one without a call chain was said */
	struct offwake *wake;
	struct collapser *waker_c;
	const char *waking_event;
	uint64_t bad_waking;
	bool waking_flat;
	/* states: the threads' states, the kind of the event perf last
	 * named (its name's pointer), the samples of each kind read and
	 * those too short to decode, and the first time read */
	struct states *states;
	/* offcpu: the wake-ups' decoder (made at the first), and whether it
	 * could not be made */
	struct states *wakes;
	bool wakes_failed;
	enum states_kind last_kind;	/* of last_event, off-CPU */
	const char *states_event;
	enum states_kind states_kind;
	uint64_t states_read[STATES_WAKEUP_NEW + 1], bad_states, first_time;
	/* stacks repaired from stack dumps (a recording with them), and
	 * the dumps skipped (twins of the samples they repair) */
	struct userstack *us;
	uint64_t twins;
	/* off-CPU with dumps: each pending wait's outcome (tid -> pid << 8 |
	 * outcome, + 1), and the time counted by outcome */
	GHashTable *wait_outcome;
	uint64_t outcome_ns[USERSTACK_OUTCOMES];
	GHashTable *proc_outcome;	/* pid -> uint64_t[USERSTACK_OUTCOMES] */
	/* on-CPU: the samples whose innermost function keeps no frame
	 * pointer there (its caller is missing from the stack) */
	struct callerloss *cl;
	struct inline_resolver *inliner;
	struct exports *ex;	/* speedscope=, pprof= (or NULL) */
	GString *key;
	char *kept;		/* the event being folded */
	GHashTable *dropped;	/* other event name -> samples */
	GHashTable *attrs_ok;	/* perf_event_attr * already checked */
	struct perfdata *pd;	/* the recording's file, if found and read */
	struct reading *reading;	/* it, while read (start_reading()) */
	struct perf_event_attr kept_attr;	/* the kept event's, for the unit */
	bool have_attr;
	/* every sample perf read (filter_event_early), and the latest time */
	uint64_t read, last_time;
	/* samples of the kept event that perf's selection let through, and
	 * of those the ones pid= left out */
	uint64_t samples, unselected;
	/* off-CPU: sched_switch samples read, undecodable ones, waits of
	 * threads without a pid in the recording; switches whose prev is not
	 * the thread the CPU's previous recorded switch brought in (a switch
	 * between them was not recorded), and switches from an idle task */
	uint64_t switches, bad_switch, foreign, gaps, idle_out;
	GHashTable *on_cpu;	/* cpu -> next_pid + 1 of its latest switch,
				 * for cpu >= DENSE_CPUS */
	int *on_cpu_dense;	/* the same, by cpu < DENSE_CPUS (0: none) */
	/* the event name perf last gave (its pointer: one per event), and
	 * whether it is the kept one, and sched_switch */
	const char *last_event;
	bool last_kept, last_switch;
	/* the last sched_switch decoded: (raw data, time, cpu) and fields */
	const void *sw_raw;
	uint64_t sw_time;
	int sw_cpu;
	bool sw_ok;
	struct sched_switch sw;
	GHashTable *sample_tid;	/* with exports: a switch's prev_pid -> its
				 * sample's tid (they differ in a PID namespace) */
	bool failed;
	/*
	 * perf script selects every sample (no --pid, --time, ...): each is
	 * folded in filter_event_early() and dropped there, sparing perf its
	 * own resolving of the samples the plugin has no use for
	 */
	bool early;
	/* off-CPU: a switch not counted (state=) needs no name from perf */
	bool skip_unwanted;
	char pidbuf[16], tidbuf[16];
	/* per sample, what the sample before had: nearly all repeat it */
	int pid_of_buf, tid_of_buf;	/* what pidbuf, tidbuf hold (-1: none) */
	size_t pidlen, tidlen;
	const struct perf_event_attr *attr_ok;	/* the last checked */
};

/* "%d" of v into buf (16 bytes); returns the length. */
static size_t format_int(char *buf, int v)
{
	char tmp[16];
	size_t n = 0, len = 0;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;

	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		buf[len++] = '-';
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

static void warn(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* names in messages come from the profiled programs: see core/textesc.h */
static void warn(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	GString *line = g_string_new(NAME ": ");

	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	fk_text_escape(line, msg, strlen(msg), 0);
	g_string_append_c(line, '\n');
	fflush(stdout);
	fputs(line->str, stderr);
	g_string_free(line, TRUE);
	g_free(msg);
}

const char *filter_description(const char **long_description)
{
	*long_description = plugin_help;
	return "fold stacks (per process, on- or off-CPU) like perf script | fp-collapse";
}

static struct perfdata *reading_done(struct state *st, GError **err);

static void free_state(struct state *st)
{
	if (!st)
		return;
	if (st->reading) {
		GError *err = NULL;

		perfdata_free(reading_done(st, &err));
		g_clear_error(&err);
	}
	exports_free(st->ex);
	frame_cache_free(st->frames);
	/* the tables hold the stacks' texts: freed first */
	profiles_free(st->profiles);
	stacks_free(st->sk);
	inline_resolver_free(st->inliner);
	offcpu_free(st->off);
	offwake_free(st->wake);
	collapser_free(st->waker_c);
	states_free(st->states);
	states_free(st->wakes);
	userstack_free(st->us);
	callerloss_free(st->cl);
	if (st->wait_outcome)
		g_hash_table_destroy(st->wait_outcome);
	if (st->proc_outcome)
		g_hash_table_destroy(st->proc_outcome);
	perfdata_free(st->pd);
	plugin_opts_clear(&st->o);
	g_string_free(st->key, TRUE);
	g_free(st->kept);
	g_hash_table_destroy(st->dropped);
	g_hash_table_destroy(st->attrs_ok);
	if (st->on_cpu)
		g_hash_table_destroy(st->on_cpu);
	g_free(st->on_cpu_dense);
	if (st->sample_tid)
		g_hash_table_destroy(st->sample_tid);
	g_free(st);
}

/*
 * The perf.data file perf script reads: perf has it open when it calls
 * start() (and closes it before stop()), so it is the one open regular
 * file that starts with perf's magic.  -1 if there is not exactly one (the
 * recording comes through a pipe, perf script -i -).
 */
static int find_recording(char **path)
{
	GDir *d = g_dir_open("/proc/self/fd", 0, NULL);
	const char *e;
	char link[40];
	int found = -1, n = 0;

	*path = NULL;
	while (d && (e = g_dir_read_name(d))) {
		int fd = atoi(e);
		struct stat sb;
		char magic[8];

		if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    pread(fd, magic, sizeof(magic), 0) != sizeof(magic) ||
		    (memcmp(magic, "PERFILE2", 8) != 0 && memcmp(magic, "2ELIFREP", 8) != 0))
			continue;
		found = fd;
		n++;
	}
	if (d)
		g_dir_close(d);
	if (n != 1)
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", found);
	*path = g_file_read_link(link, NULL);
	if (!*path)
		*path = g_strdup("perf.data");
	return found;
}

static bool recorded_may_map(void *data, int pid, uint64_t addr);
static uint32_t recorded_map_gen(void *data, int pid, uint64_t time, uint64_t *until);
static bool recorded_switch_in(void *data, int tid, uint64_t from, uint64_t to, uint64_t *time);
static uint32_t recorded_name_gen(void *data, int tid, uint64_t time, uint64_t *until);
static bool recorded_locate(void *data, int pid, uint64_t addr, uint64_t time,
			    struct unwind_where *w);
static void repair_begin(struct state *st, bool twins);
static void callerloss_begin(struct state *st);
static bool recorded_file_at(void *data, int pid, uint64_t addr, uint64_t time, uint32_t *file,
			     const char **name, uint64_t *offset);

/*
 * The recording's own file, read on a second thread from start() on:
 * meanwhile perf goes on to its first sample, and, handed it, loads the
 * symbols of its kernel or program (50 ms for the kernel's), which
 * use_recording() lets it do first.  Its own descriptor: perf closes its
 * one before stop().
 */
struct reading {
	pthread_t thread;
	bool running;
	int fd;
	char *path;
	struct perfdata *pd;
	GError *err;
};

static void *read_run(void *data)
{
	struct reading *r = data;

	r->pd = perfdata_read(r->fd, r->path, &r->err);
	return NULL;
}

/* false when the header shows it cut short: no profile */
static bool start_reading(struct state *st)
{
	char *path, *cut;
	int fd = find_recording(&path);
	struct reading *r;

	if (fd < 0) {
		warn("cannot find the perf.data file perf reads (a pipe?): "
		     "not checked for damage, processes named after their samples");
		return true;
	}
	if ((cut = perfdata_cut(fd, path))) {
		/* said before perf starts, as a damaged record would be */
		warn("%s: no profile made, it would hold only part of the recording", cut);
		g_free(cut);
		g_free(path);
		return false;
	}
	r = st->reading = g_new0(struct reading, 1);
	r->path = path;
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0)
		fk_error_at(&r->err, FK_ERROR_IO, path, 0, "cannot read: %s", g_strerror(errno));
	else if (!(r->running = pthread_create(&r->thread, NULL, read_run, r) == 0))
		read_run(r);
	return true;
}

/* The reading's end: what it read, or NULL and why in *err. */
static struct perfdata *reading_done(struct state *st, GError **err)
{
	struct reading *r = st->reading;
	struct perfdata *pd;

	st->reading = NULL;
	if (r->running)
		pthread_join(r->thread, NULL);
	if (r->fd >= 0)
		close(r->fd);
	pd = r->pd;
	if (!pd)
		g_propagate_error(err, r->err);
	g_free(r->path);
	g_free(r);
	return pd;
}

/*
 * Waits for the recording's reading, if started, and puts it to use;
 * false when it is cut short or corrupt: perf would hand over part of
 * the samples and stop, and the profile of part of a recording would
 * pass for the whole.
 */
static bool use_recording(struct state *st)
{
	GError *err = NULL;
	uint64_t late;
	unsigned procs;

	if (!st->reading)
		return true;
	if (!(st->pd = reading_done(st, &err))) {
		warn("%s: not checked for damage", err->message);
		g_error_free(err);
		return true;
	}
	if (perfdata_damage(st->pd)) {
		warn("%s: no profile made, it would hold only part of the recording",
		     perfdata_damage(st->pd));
		return false;
	}
	if (perfdata_compressed(st->pd) && (st->o.split || st->o.comm_re))
		warn("the recording is compressed (perf record -z): processes are "
		     "named after their samples");
	/* said, not refused: only samples inside an exec can be misnamed */
	if (!perfdata_has_map_times(st->pd))
		warn("the recording gives no times of its map changes (perf record -z, "
		     "or no sample_id_all): a frame sampled during an exec may be "
		     "named after the program before it");
	else if ((late = perfdata_unordered(st->pd, &procs)))
		warn("%" G_GUINT64_FORMAT " process record%s may reach perf after later samples (out of "
		     "order): %u process%s resolved through perf at every sample, without "
		     "caching", late, late == 1 ? "" : "s", procs, procs == 1 ? "" : "es");
	/* perf record -e EV -e 'EV/call-graph=dwarf/': stacks repaired */
	if (perfdata_dump_twins(st->pd))
		repair_begin(st, true);
	/* on-CPU without dumps: where the stacks lost a caller */
	if (!st->off && !st->us)
		callerloss_begin(st);
	/* perf record --switch-events: the switch-ins the tracepoint lacks */
	if (st->off && perfdata_switches(st->pd))
		offcpu_on_unseen(st->off, recorded_switch_in, st->pd);
	frame_cache_set_may_map(st->frames, recorded_may_map, st->pd);
	if (perfdata_has_map_times(st->pd)) {
		frame_cache_set_gen(st->frames, recorded_map_gen, st->pd);
		frame_cache_set_name_gen(st->frames, recorded_name_gen, st->pd);
		if (st->sk)	/* the lean cache's: stacks.h names the frames */
			frame_cache_set_files(st->frames, recorded_file_at, st->pd);
	}
	/*
	 * A switch not counted still names its thread (frame_cache_note_comm())
	 * and, per process, its process (profiles_get()); that changes nothing
	 * when perf gives the maps' times (a renamed thread does not start a
	 * new generation of frames) and processes are not written apart.
	 */
	st->skip_unwanted = st->off && !st->o.split && !st->o.comm_re &&
			    perfdata_has_map_times(st->pd);
	return true;
}

/*
 * A counted wait, to the exports: offcpu.h keys waits by the kernel's
 * thread ids (the switch's), the exports by the samples' (perf's, the
 * namespace's inside a container).
 */
static void credit_export(void *data, int tid, uint64_t since, uint64_t ns)
{
	struct state *st = data;
	gpointer t;

	if (g_hash_table_lookup_extended(st->sample_tid, GINT_TO_POINTER(tid), NULL, &t))
		exports_credit(st->ex, GPOINTER_TO_INT(t), since, ns);
}

/* A counted wait: to the exports, and to its stack's repair's outcome. */
static void credit_wait(void *data, int tid, uint64_t since, uint64_t ns)
{
	struct state *st = data;
	gpointer o;
	gsize v;
	int pid;
	uint64_t *by;

	if (st->ex)
		credit_export(data, tid, since, ns);
	if (!st->wait_outcome ||
	    !(o = g_hash_table_lookup(st->wait_outcome, GINT_TO_POINTER(tid))))
		return;
	v = GPOINTER_TO_SIZE(o) - 1;
	pid = (int)(v >> 8);
	st->outcome_ns[v & 0xff] += ns;
	if (!(by = g_hash_table_lookup(st->proc_outcome, GINT_TO_POINTER(pid)))) {
		by = g_new0(uint64_t, USERSTACK_OUTCOMES);
		g_hash_table_insert(st->proc_outcome, GINT_TO_POINTER(pid), by);
	}
	by[v & 0xff] += ns;
}

/*
 * index.tsv's columns with stack dumps: a process's off-CPU time in
 * stacks repaired through code without frame pointers, and in those its
 * dumps could not repair, with the reason of most of it (microseconds;
 * "-" for a process none of whose threads was dumped).
 */
#define REPAIR_COLUMNS "repaired_us\tunrepaired_us\tunrepaired_why"

static void repair_cells(void *data, int pid, GString *cells)
{
	struct state *st = data;
	const uint64_t *by = g_hash_table_lookup(st->proc_outcome, GINT_TO_POINTER(pid));
	uint64_t fixed = 0, not = 0, most = 0;
	int why = -1;

	for (int o = 0; by && o < USERSTACK_OUTCOMES; o++) {
		if (o == USERSTACK_NO_USER || o == USERSTACK_NOT_DUMPED)
			continue;
		if (userstack_repaired(o)) {
			fixed += by[o];
		} else {
			not += by[o];
			if (by[o] > most) {
				most = by[o];
				why = o;
			}
		}
	}
	if (!fixed && !not) {
		g_string_append(cells, "\t-\t-\t-");
		return;
	}
	g_string_append_printf(cells, "\t%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\t%s",
			       (fixed + 500) / 1000, (not + 500) / 1000,
			       why >= 0 ? userstack_outcome_name(why) : "-");
}

/*
 * index.tsv's columns on-CPU: a process's samples (in the profile's unit)
 * whose innermost function keeps no frame pointer where sampled, so that
 * its caller is missing, and the function most of them are in ("-": none).
 */
#define CALLER_COLUMNS "caller_lost\tcaller_lost_in"

static void caller_cells(void *data, int pid, GString *cells)
{
	struct state *st = data;
	uint64_t all, lost;
	const char *top;

	callerloss_process(st->cl, pid, &all, &lost, &top);
	g_string_append_printf(cells, "\t%" G_GUINT64_FORMAT "\t", lost);
	if (!top) {
		g_string_append_c(cells, '-');
		return;
	}
	for (const char *c = top; *c; c++)	/* no tab or newline in a cell */
		g_string_append_c(cells, *c == '\t' || *c == '\n' || *c == '\r' ? ' ' : *c);
}

static void callerloss_begin(struct state *st)
{
	st->cl = callerloss_new(recorded_locate, st->pd, &perf_dlfilter_fns);
	profiles_set_index_columns(st->profiles, CALLER_COLUMNS, caller_cells, st);
}

/* On-CPU: how much of the time is in stacks that lost a caller, and where. */
static void callerloss_notes(struct state *st)
{
	uint64_t all, lost, top_n;
	const char *top;

	callerloss_totals(st->cl, &all, &lost, &top, &top_n);
	if (!lost)
		return;
	warn("on-CPU: %.1f%% of the samples are in code that keeps no frame pointer "
	     "where sampled (most in %s: %.1f%%), as libc's leaf functions are: the "
	     "function that called it is missing from those stacks, its time under "
	     "its caller's caller", 100.0 * (double)lost / (double)all, top,
	     100.0 * (double)top_n / (double)all);
}

/* Stack dumps in the recording: twins of the counted samples, or not. */
static void repair_begin(struct state *st, bool twins)
{
	if (!st->us) {
		st->us = userstack_new(recorded_locate, st->pd);
		if (st->off) {
			st->wait_outcome = g_hash_table_new(g_direct_hash, g_direct_equal);
			st->proc_outcome = g_hash_table_new_full(g_direct_hash, g_direct_equal,
								 NULL, g_free);
			offcpu_on_credit(st->off, credit_wait, st);
			profiles_set_index_columns(st->profiles, REPAIR_COLUMNS, repair_cells, st);
		}
	}
	userstack_set_twins(st->us, twins);
}

/*
 * Whether perf script was given no option that selects samples (--pid,
 * --tid, --comm, --cpu, --time, --dsos, --switch-on, ...): its command line
 * is "perf script" with only -i, --dlfilter, --dlarg, -f and -q.  Anything
 * else, or a command line not read, answers no.
 */
static bool perf_selects_nothing(void)
{
	static const char *const with_value[] = { "-i", "--input", "--dlfilter", "--dlarg" };
	static const char *const alone[] = { "-f", "--force", "-q", "--quiet" };
	char *buf = NULL;
	gsize len = 0;
	bool ok;
	size_t i = 0, argc = 0;

	if (!g_file_get_contents("/proc/self/cmdline", &buf, &len, NULL))
		return false;
	ok = len > 0 && buf[len - 1] == '\0';
	while (ok && i < len) {
		const char *arg = buf + i;
		size_t n = strlen(arg);
		bool known = false;

		i += n + 1;
		if (argc++ < 2) {
			/* the program, then the command */
			ok = argc == 1 || strcmp(arg, "script") == 0;
			continue;
		}
		for (size_t k = 0; !known && k < G_N_ELEMENTS(alone); k++)
			known = strcmp(arg, alone[k]) == 0;
		for (size_t k = 0; !known && k < G_N_ELEMENTS(with_value); k++) {
			size_t kn = strlen(with_value[k]);

			if (strncmp(arg, with_value[k], kn) != 0)
				continue;
			if (arg[kn] == '\0') {
				/* the value is the next argument */
				known = i < len;
				i += known ? strlen(buf + i) + 1 : 0;
			} else {
				/* "--input=FILE", "-iFILE" */
				known = arg[kn] == '=' || kn == 2;
			}
		}
		ok = known;
	}
	g_free(buf);
	return ok && argc >= 2;
}

int start(void **data, void *ctx)
{
	struct state *st = g_new0(struct state, 1);
	char **argv;
	int argc = 0, rc;
	GError *err = NULL;

	plugin_opts_init(&st->o);
	st->pid_of_buf = st->tid_of_buf = -1;
	st->key = g_string_sized_new(1024);
	st->dropped = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	st->attrs_ok = g_hash_table_new(g_direct_hash, g_direct_equal);
	*data = st;
	argv = perf_dlfilter_fns.args ? perf_dlfilter_fns.args(ctx, &argc) : NULL;
	rc = plugin_parse_args(&st->o, argv ? argc : 0, argv, &err);
	if (rc != 0) {
		if (rc > 0)
			fputs(plugin_help, stdout);
		else
			warn("%s", err->message);
		g_clear_error(&err);
		fflush(stdout);
		st->failed = true;
		return -1;
	}
	if (st->o.offcpu)
		st->kept = g_strdup(SCHED_SWITCH);
	st->co = (struct collapse_opts){
		.include_pid = st->o.pid,
		.include_tid = st->o.tid,
		.names = {
			.annotate_kernel = st->o.kernel || st->o.all,
			.annotate_jit = st->o.jit || st->o.all,
			.include_addrs = st->o.addrs,
		},
	};
	if (st->o.inline_)
		st->co.inliner = st->inliner = inline_resolver_new(st->o.context);
	if (st->o.offcpu) {
		st->on_cpu = g_hash_table_new(g_direct_hash, g_direct_equal);
		st->on_cpu_dense = g_new0(int, DENSE_CPUS);
		st->off = offcpu_new(st->o.states, st->o.min_us * 1000, st->o.format, &err);
		if (!st->off) {
			warn("%s", err->message);
			g_error_free(err);
			st->failed = true;
			return -1;
		}
		offcpu_set_runq(st->off, st->o.runq);
	}
	if (st->o.offwake) {
		st->wake = offwake_new(st->o.waking_format, st->o.min_us * 1000, &err);
		if (!st->wake) {
			warn("%s", err->message);
			g_error_free(err);
			st->failed = true;
			return -1;
		}
		st->waker_c = collapser_new(&st->co);
	}
	if (st->o.thread_states && !(st->states = states_new(NULL, &err))) {
		warn("%s", err->message);
		g_error_free(err);
		st->failed = true;
		return -1;
	}
	if (!start_reading(st)) {
		st->failed = true;
		return -1;
	}
	st->frames = frame_cache_new(&perf_dlfilter_fns, st->o.max_stack);
	/* comm= picks processes by a name known only at the end */
	st->profiles = profiles_new(&st->co, st->o.split || st->o.comm_re);
	st->ex = exports_new(&(struct export_opts){
		.speedscope = st->o.speedscope, .speedscope_split = st->o.speedscope_split,
		.split = st->o.split, .pprof = st->o.pprof, .pid = st->o.pid, .tid = st->o.tid,
		.context = st->o.context, .offcpu = st->o.offcpu, .names = &st->co.names,
		.inliner = st->inliner, .frames = st->frames,
	});
	/* off-CPU exports stay with the collapsers (their waits' keys) */
	/* (offwake joins the wakee's and the waker's keys: the collapsers') */
	if (!st->inliner && !st->wake &&
	    (!st->ex || (exports_keys_only(st->ex) && !st->o.offcpu))) {
		/* stacks.h names the frames: the only user of the cache's
		 * frames but frame_cache_ip(), which keeps none (the exports
		 * here need only the keys) */
		frame_cache_set_lean(st->frames);
		st->sk = stacks_new(&st->co.names, st->frames, st->o.max_stack);
		stacks_set_threads(st->sk, st->o.threads);
	}
	if (st->ex && st->off) {
		st->sample_tid = g_hash_table_new(g_direct_hash, g_direct_equal);
		offcpu_on_credit(st->off, credit_wait, st);
	}
	st->early = perf_selects_nothing();
	return 0;
}

/*
 * perf hands a dlfilter the raw callchain; for DWARF and LBR call graphs
 * that is only a part of the stack (perf unwinds the rest itself while
 * printing), so folding it would give a wrong, flat profile.
 */
static bool check_attr(struct state *st, const struct perf_event_attr *attr,
		       const char *event)
{
	if (!attr || attr == st->attr_ok)
		return true;
	if (g_hash_table_contains(st->attrs_ok, attr)) {
		st->attr_ok = attr;
		return true;
	}
	if ((attr->sample_type & PERF_SAMPLE_STACK_USER) && st->o.offcpu && st->pd) {
		/* a recording of dumps alone: each repairs its own chain */
		repair_begin(st, false);
	} else if (attr->sample_type & PERF_SAMPLE_STACK_USER) {
		warn("'%s' was recorded with --call-graph dwarf: perf gives a dlfilter "
		     "only the kernel part of such stacks, and the plugin unwinds the "
		     "rest only off-CPU (--dlarg offcpu) or beside a frame-pointer twin "
		     "(perf record -e EV -e 'EV/call-graph=dwarf/'); "
		     "use: perf script | fp-collapse", event);
		return false;
	}
	if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) {
		warn("'%s' was recorded with --call-graph lbr: perf rebuilds those stacks "
		     "itself while printing, so they cannot be folded here; "
		     "use: perf script | fp-collapse", event);
		return false;
	}
	if (st->o.offcpu && (attr->sample_type & (PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)) !=
			    (PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)) {
		warn("'%s' was recorded without time stamps or tracepoint data: "
		     "off-CPU time cannot be measured", event);
		return false;
	}
	g_hash_table_add(st->attrs_ok, (gpointer)attr);
	st->attr_ok = attr;
	return true;
}

/* Keeps one event: event=NAME, else the first seen (as fp-collapse). */
static bool wanted_event(struct state *st, const char *event)
{
	gpointer n;

	if (!st->kept)
		st->kept = g_strdup(st->o.event ? st->o.event : event);
	if (event == st->last_event && st->last_kept)
		return true;
	if (strcmp(event, st->kept) == 0) {
		st->last_event = event;
		st->last_kept = true;
		st->last_switch = strcmp(event, SCHED_SWITCH) == 0;
		return true;
	}
	n = g_hash_table_lookup(st->dropped, event);
	g_hash_table_replace(st->dropped, g_strdup(event), GSIZE_TO_POINTER(GPOINTER_TO_SIZE(n) + 1));
	return false;
}

static void fill_sample(struct state *st, struct perf_sample *s,
			const struct perf_dlfilter_sample *ds, void *ctx,
			const struct perf_event_attr *attr, const char *comm)
{
	memset(s, 0, sizeof(*s));
	s->comm.s = comm;
	s->comm.len = strlen(comm);
	if (ds->pid != st->pid_of_buf || st->pid_of_buf < 0) {
		st->pidlen = format_int(st->pidbuf, ds->pid);
		st->pid_of_buf = ds->pid;
	}
	s->pid.s = st->pidbuf;
	s->pid.len = st->pidlen;
	if (ds->tid != st->tid_of_buf || st->tid_of_buf < 0) {
		st->tidlen = format_int(st->tidbuf, ds->tid);
		st->tid_of_buf = ds->tid;
	}
	s->tid.s = st->tidbuf;
	s->tid.len = st->tidlen;
	s->event.s = ds->event;
	s->event.len = strlen(ds->event);
	/*
	 * perf script prints the period for every kind of event but
	 * tracepoints, the recording's fixed one (-c) when samples carry none
	 */
	s->has_period = !attr || attr->type != PERF_TYPE_TRACEPOINT;
	s->period = s->has_period ? ds->period : 1;
	if (attr && !(attr->sample_type & PERF_SAMPLE_CALLCHAIN))
		s->nframes = frame_cache_ip(st->frames, ds, ctx);
	else
		s->nframes = frame_cache_chain(st->frames, ds, ctx);
	s->file = "perf.data";
}

/* The sample's frames, copied (see frame_cache_frames()). */
static void copy_frames(struct state *st, struct perf_sample *s)
{
	s->frames = (struct perf_frame *)frame_cache_frames(st->frames);
}

/*
 * Off-CPU time needs every switch: a recording that kept one switch in N
 * (perf record -F or -c N) would weight the waits of the switches it kept
 * up to switches it dropped.
 */
static bool check_sampling(const struct perf_event_attr *attr, const char *event)
{
	if (!attr || (!attr->freq && attr->sample_period == 1))
		return true;
	if (attr->freq)
		warn("'%s' was sampled at %llu Hz (perf record -F): "
		     "off-CPU time needs every switch; record with -c 1, the default "
		     "for tracepoints: perf record -e " SCHED_SWITCH " -a -g", event,
		     (unsigned long long)attr->sample_freq);
	else
		warn("'%s' was sampled once every %llu events "
		     "(perf record -c %llu): off-CPU time needs every switch; record "
		     "with -c 1, the default for tracepoints: perf record -e "
		     SCHED_SWITCH " -a -g", event, (unsigned long long)attr->sample_period,
		     (unsigned long long)attr->sample_period);
	return false;
}

/*
 * Called for every sample perf reads, before perf script's own selection
 * (--pid, --tid, --comm, --cpu, --time): so the time of the last sample
 * read is known, and off-CPU every switch-in ends its thread's wait even
 * when the thread switched out is one perf script leaves out.  When perf
 * script selects nothing, the sample is folded here too (see state.early):
 * perf would pass every one on to filter_event().
 *
 * The switch's pids are the kernel's; the sample's pid and tid are those
 * of perf's PID namespace (in a container, not the same numbers).  Waits
 * are therefore keyed by the switch's pids, and the sample's only name the
 * stack.
 */
/*
 * offcpu_decode() of a sample's switch, once: filter_event() gets the
 * sample filter_event_early() had.
 */
static bool decode_switch(struct state *st, const struct perf_dlfilter_sample *ds,
			  struct sched_switch *sw)
{
	if (!st->sw_raw || ds->raw_data != st->sw_raw || ds->time != st->sw_time ||
	    ds->cpu != st->sw_cpu) {
		st->sw_raw = ds->raw_data;
		st->sw_time = ds->time;
		st->sw_cpu = ds->cpu;
		st->sw_ok = offcpu_decode(st->off, ds->raw_data, ds->raw_size, &st->sw);
	}
	*sw = st->sw;
	return st->sw_ok;
}

static int fold(struct state *st, const struct perf_dlfilter_sample *ds, void *ctx);

/*
 * offwake: a sched_waking sample, in the waker's context, before perf
 * script's selection (a waker of another process wakes a selected
 * thread too).  Its stack is named only when it ends a wait; the sample
 * is always dropped (perf has nothing to print).
 */
static int on_waking(struct state *st, const struct perf_dlfilter_sample *ds, void *ctx)
{
	const struct perf_event_attr *attr = perf_dlfilter_fns.attr(ctx);
	const struct perf_dlfilter_al *al;
	struct perf_sample s;
	const uint32_t *ids;
	const char *comm;
	int tid;

	if (!offwake_decode(st->wake, ds->raw_data, ds->raw_size, &tid)) {
		st->bad_waking++;
		return 1;
	}
	if (!offwake_waiting(st->wake, tid, ds->time))
		return 1;
	if (attr && !(attr->sample_type & PERF_SAMPLE_CALLCHAIN) && !st->waking_flat) {
		warn("'" OFFWAKE_EVENT "' was recorded without call chains: the wakers' "
		     "stacks are their sampled functions alone; record it with -g");
		st->waking_flat = true;
	}
	comm = frame_cache_known_comm(st->frames, ds->pid, ds->tid, ds->time);
	if (!comm) {
		al = perf_dlfilter_fns.resolve_ip(ctx);
		comm = al && al->comm && *al->comm ? al->comm : ":-1";
		comm = frame_cache_note_comm(st->frames, ds->pid, ds->tid, comm, ds->time);
	}
	fill_sample(st, &s, ds, ctx, attr, comm);
	ids = frame_cache_chain_ids(st->frames);
	if (ids && s.nframes) {
		collapser_chain_key(st->waker_c, &s, frame_cache_chain_id(st->frames), ids,
				    frame_cache_store(st->frames), st->key);
	} else {
		copy_frames(st, &s);
		collapser_stack_key(st->waker_c, &s, st->key);
	}
	offwake_woken(st->wake, tid, ds->time, st->key->str, st->key->len);
	return 1;
}

/*
 * states: every sample of the three events, before perf script's
 * selection (a thread's state changes whoever perf script prints), then
 * dropped (perf prints nothing); other events are counted and dropped.
 */
static int on_states(struct state *st, const struct perf_dlfilter_sample *ds, void *ctx)
{
	const struct perf_event_attr *attr;
	bool ok;

	if (ds->event != st->states_event) {
		st->states_event = ds->event;
		st->states_kind = states_kind(ds->event);
	}
	if (st->states_kind == STATES_OTHER) {
		gpointer n = g_hash_table_lookup(st->dropped, ds->event);

		g_hash_table_replace(st->dropped, g_strdup(ds->event),
				     GSIZE_TO_POINTER(GPOINTER_TO_SIZE(n) + 1));
		return 1;
	}
	attr = perf_dlfilter_fns.attr(ctx);
	if (attr != st->attr_ok) {
		/* each of the events whole and with its fields and times */
		if (!check_sampling(attr, ds->event)) {
			st->failed = true;
			return -1;
		}
		if (attr && (attr->sample_type & (PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)) !=
			    (PERF_SAMPLE_TIME | PERF_SAMPLE_RAW)) {
			warn("'%s' was recorded without time stamps or tracepoint data: "
			     "the threads' states cannot be measured", ds->event);
			st->failed = true;
			return -1;
		}
		st->attr_ok = attr;
	}
	st->states_read[st->states_kind]++;
	if (st->states_kind == STATES_SWITCH)
		ok = states_switch(st->states, ds->raw_data, ds->raw_size, ds->cpu, ds->time,
				   ds->pid, ds->tid);
	else
		ok = states_wake(st->states, st->states_kind, ds->raw_data, ds->raw_size,
				 ds->time);
	st->bad_states += !ok;
	return 1;
}

/*
 * offcpu: a wake-up ends its thread's sleep (offcpu.h): the time after it
 * is runnable.  Decoded by field name, with the wake-up formats read at
 * the first (a failure is said once, and the waits then end at their
 * switch-ins, as in a recording without wake-ups).
 */
static void off_wake(struct state *st, const struct perf_dlfilter_sample *ds)
{
	GError *err = NULL;
	int tid;

	if (!st->wakes && !st->wakes_failed && !(st->wakes = states_new(NULL, &err))) {
		warn("%s: wake-ups not used", err->message);
		g_error_free(err);
		st->wakes_failed = true;
	}
	if (!st->wakes)
		return;
	if (!states_wakee(st->wakes, st->last_kind, ds->raw_data, ds->raw_size, &tid)) {
		st->bad_states++;
		return;
	}
	offcpu_wake(st->off, tid, ds->time);
}

int filter_event_early(void *data, const struct perf_dlfilter_sample *ds, void *ctx)
{
	struct state *st = data;
	struct sched_switch sw;
	gpointer on_cpu;

	if (st->failed)
		return -1;
	if (st->reading) {
		/* perf loads this sample's symbols while the recording is read */
		(void)perf_dlfilter_fns.resolve_ip(ctx);
		if (!use_recording(st)) {
			st->failed = true;
			return -1;
		}
	}
	if (ds->time > st->last_time)
		st->last_time = ds->time;
	if (!st->read || ds->time < st->first_time)
		st->first_time = ds->time;
	if (st->states) {
		st->read++;
		return on_states(st, ds, ctx);
	}
	if (st->us && userstack_note(st->us, ds, perf_dlfilter_fns.attr(ctx))) {
		st->twins++;
		return 1;	/* a dump for its twin, the CPU's next sample */
	}
	st->read++;
	if (!st->off)
		goto done;
	if (ds->event != st->last_event) {
		st->last_event = ds->event;
		st->last_kept = st->kept && strcmp(ds->event, st->kept) == 0;
		st->last_switch = strcmp(ds->event, SCHED_SWITCH) == 0;
		if (st->wake && !st->waking_event && strcmp(ds->event, OFFWAKE_EVENT) == 0)
			st->waking_event = ds->event;
		st->last_kind = states_kind(ds->event);
	}
	/* a wake-up (offwake's are its own): no stack to fold */
	if (!st->wake && (st->last_kind == STATES_WAKING || st->last_kind == STATES_WAKEUP_NEW)) {
		off_wake(st, ds);
		return 1;
	}
	if (st->wake && ds->event == st->waking_event)
		return on_waking(st, ds, ctx);
	if (!st->last_switch)
		goto done;
	st->switches++;
	if (!check_sampling(perf_dlfilter_fns.attr(ctx), SCHED_SWITCH)) {
		st->failed = true;
		return -1;
	}
	offcpu_tick(st->off, ds->time);
	if (!decode_switch(st, ds, &sw)) {
		st->bad_switch++;
		goto done;
	}
	if (ds->cpu >= 0 && ds->cpu < DENSE_CPUS) {
		on_cpu = GINT_TO_POINTER(st->on_cpu_dense[ds->cpu]);
		st->on_cpu_dense[ds->cpu] = sw.next_pid + 1;
	} else {
		on_cpu = g_hash_table_lookup(st->on_cpu, GINT_TO_POINTER(ds->cpu));
		g_hash_table_insert(st->on_cpu, GINT_TO_POINTER(ds->cpu),
				    GINT_TO_POINTER(sw.next_pid + 1));
	}
	if (on_cpu && GPOINTER_TO_INT(on_cpu) != sw.prev_pid + 1)
		st->gaps++;
	st->idle_out += sw.prev_pid == 0;
	offcpu_switch_in(st->off, sw.next_pid, ds->time);
	offcpu_switch_unseen(st->off, sw.prev_pid, ds->cpu, ds->time);
	if (st->wake) {
		offwake_ran(st->wake, sw.next_pid, ds->time);
		offwake_ran(st->wake, sw.prev_pid, ds->time);
	}
done:
	return st->early ? fold(st, ds, ctx) : 0;
}

/*
 * The stacks_proc() id of a sample's process name, as the collapser
 * writes it (comm, and pid and tid if asked): the name is made once for
 * each of the last few threads sampled.
 */
static uint32_t proc_of(struct state *st, struct profile *pr,
			const struct perf_dlfilter_sample *ds, const char *comm)
{
	struct proc_memo *m;
	struct perf_sample s;
	struct perf_frame none;

	for (unsigned k = 0; k < G_N_ELEMENTS(st->procs); k++) {
		m = &st->procs[k];
		if (m->comm == comm && m->pr == pr && m->pid == ds->pid && m->tid == ds->tid)
			return m->proc;
	}
	memset(&s, 0, sizeof(s));
	s.comm.s = comm;
	s.comm.len = strlen(comm);
	st->pidlen = format_int(st->pidbuf, ds->pid);
	st->pid_of_buf = ds->pid;
	st->tidlen = format_int(st->tidbuf, ds->tid);
	st->tid_of_buf = ds->tid;
	s.pid.s = st->pidbuf;
	s.pid.len = st->pidlen;
	s.tid.s = st->tidbuf;
	s.tid.len = st->tidlen;
	/* no frames: the process name alone */
	s.frames = &none;
	collapser_stack_key(pr->c, &s, st->key);
	m = &st->procs[st->proc_next];
	st->proc_next = (st->proc_next + 1) % G_N_ELEMENTS(st->procs);
	*m = (struct proc_memo){ .pr = pr, .pid = ds->pid, .tid = ds->tid, .comm = comm };
	m->proc = stacks_proc(st->sk, collapser_table(pr->c), st->key->str, st->key->len,
			      strcmp(comm, "java") == 0);
	return m->proc;
}

/* A counted wait, to its stack (offcpu_switch_out_id()). */
static void add_wait(void *sk, uint64_t id, fk_count weight)
{
	stacks_add_at(sk, (uint32_t)id, weight);
}

/* A sched_switch sample that perf script's selection kept, sw its
 * decoded switch, one offcpu_wanted() (fold() decides). */
static void on_switch(struct state *st, const struct perf_dlfilter_sample *ds,
		      void *ctx, const struct perf_event_attr *attr,
		      const char *comm, struct profile *pr, const struct sched_switch *sw)
{
	struct perf_sample s;
	const uint32_t *ids;
	struct perf_dlfilter_sample repaired;

	if (st->us) {
		enum userstack_outcome why;

		ds = userstack_repair(st->us, ds, attr, &repaired, &why);
		g_hash_table_insert(st->wait_outcome, GINT_TO_POINTER(sw->prev_pid),
				    GSIZE_TO_POINTER(((gsize)(unsigned)ds->pid << 8 | why) + 1));
	}
	if (st->sk && (!attr || (attr->sample_type & PERF_SAMPLE_CALLCHAIN))) {
		uint32_t proc = proc_of(st, pr, ds, comm);

		uint64_t id = stacks_slot(st->sk, ds, ctx, proc);

		offcpu_switch_out_id(st->off, sw->prev_pid, ds->tid, ds->time, add_wait, st->sk, id,
				     &pr->samples);
		if (offcpu_is_preempted(sw))
			offcpu_preempted(st->off, sw->prev_pid);
		return;
	}
	fill_sample(st, &s, ds, ctx, attr, comm);
	ids = frame_cache_chain_ids(st->frames);
	if (ids && s.nframes) {
		collapser_chain_key(pr->c, &s, frame_cache_chain_id(st->frames), ids,
				    frame_cache_store(st->frames), st->key);
	} else {
		copy_frames(st, &s);
		collapser_stack_key(pr->c, &s, st->key);
	}
	if (st->wake) {
		offwake_sleep(st->wake, sw->prev_pid, ds->time, collapser_table(pr->c),
			      st->key->str, st->key->len, &pr->samples);
		return;
	}
	offcpu_switch_out(st->off, sw->prev_pid, ds->tid, ds->time, collapser_table(pr->c),
			  st->key->str, st->key->len, &pr->samples);
	if (offcpu_is_preempted(sw))
		offcpu_preempted(st->off, sw->prev_pid);
	if (st->ex) {	/* weighed when the wait is counted */
		copy_frames(st, &s);
		g_hash_table_insert(st->sample_tid, GINT_TO_POINTER(sw->prev_pid),
				    GINT_TO_POINTER(ds->tid));
		exports_sample(st->ex, ds, attr, comm, NULL, st->key->str, st->key->len,
			       s.frames, s.nframes, 0);
	}
}

/* A sample perf script's selection kept: 1 (dropped, as every one), or -1. */
static int fold(struct state *st, const struct perf_dlfilter_sample *ds, void *ctx)
{
	const struct perf_event_attr *attr;
	const struct perf_dlfilter_al *al;
	const char *comm;
	struct profile *pr;
	struct perf_sample s;
	const uint32_t *ids;
	fk_count n;
	struct fold_entry *e;
	struct sched_switch sw;
	bool wanted = false;	/* off-CPU: a switch counted (state=) */
	struct perf_dlfilter_sample repaired;

	if (st->failed)
		return -1;
	attr = perf_dlfilter_fns.attr(ctx);
	if (!wanted_event(st, ds->event))
		return 1;
	if (!check_attr(st, attr, ds->event)) {
		st->failed = true;
		return -1;
	}
	if (!st->have_attr && attr) {
		st->kept_attr = *attr;
		st->have_attr = true;
	}
	st->samples++;
	if (st->o.pids && !g_hash_table_contains(st->o.pids, GINT_TO_POINTER(ds->pid))) {
		st->unselected++;
		return 1;
	}
	if (st->o.offcpu) {
		wanted = decode_switch(st, ds, &sw) && offcpu_wanted(st->off, &sw);

		/*
		 * a thread without a pid in the recording (the idle task,
		 * one outside perf's PID namespace, or exiting) has no stack
		 * to give a wait to, nor, like a switch not counted, any use
		 * for perf's name of it
		 */
		if (ds->tid <= 0) {
			st->foreign += wanted;
			return 1;
		}
		if (!wanted && st->skip_unwanted)
			return 1;
	}
	if (st->sk)	/* its load overlaps naming the process */
		stacks_prefetch(st->sk, ds);
	comm = frame_cache_known_comm(st->frames, ds->pid, ds->tid, ds->time);
	if (!comm) {
		al = perf_dlfilter_fns.resolve_ip(ctx);
		/* an empty name too: with no frames, the stack would be empty
		 * (an off-CPU wait would be written as a line without a stack) */
		comm = al && al->comm && *al->comm ? al->comm : ":-1";
		comm = frame_cache_note_comm(st->frames, ds->pid, ds->tid, comm, ds->time);
	}
	pr = profiles_get(st->profiles, ds->pid, ds->tid, comm);
	if (st->o.offcpu) {
		if (wanted)
			on_switch(st, ds, ctx, attr, comm, pr, &sw);
		return 1;
	}
	if (st->us) {	/* each sample counted, with its stack repaired */
		enum userstack_outcome why;

		ds = userstack_repair(st->us, ds, attr, &repaired, &why);
	} else if (st->cl && attr && attr->type != PERF_TYPE_TRACEPOINT) {
		callerloss_sample(st->cl, ds, ctx, ds->period);
	}
	if (st->sk && (!attr || (attr->sample_type & PERF_SAMPLE_CALLCHAIN))) {
		/* perf script prints the period of every kind of event but
		 * tracepoints (see fill_sample()) */
		uint32_t proc = proc_of(st, pr, ds, comm), stack;

		n = fk_count_from_u64(!attr || attr->type != PERF_TYPE_TRACEPOINT ? ds->period : 1);
		stack = stacks_sample(st->sk, ds, ctx, proc, n);
		if (st->ex)
			exports_sample_stack(st->ex, ds, attr, comm, st->sk, stack, n);
		pr->samples++;
		return 1;
	}
	fill_sample(st, &s, ds, ctx, attr, comm);
	ids = frame_cache_chain_ids(st->frames);
	n = fk_count_from_u64(s.has_period ? s.period : 1);
	if (ids && s.nframes) {
		/* a chain seen before is named from the collapser's cache */
		e = collapser_add_chain(pr->c, &s, frame_cache_chain_id(st->frames), ids,
					frame_cache_store(st->frames), n);
		if (e && st->ex) {
			copy_frames(st, &s);
			exports_sample(st->ex, ds, attr, comm, e, e->stack, e->len,
				       s.frames, s.nframes, n);
		}
		pr->samples++;
		return 1;
	}
	copy_frames(st, &s);
	if (st->ex) {
		/* as collapser_add() folds it (the event is already chosen),
		 * keeping the key for the other outputs */
		collapser_stack_key(pr->c, &s, st->key);
		e = fold_table_add(collapser_table(pr->c), st->key->str, st->key->len, n);
		exports_sample(st->ex, ds, attr, comm, e, st->key->str, st->key->len,
			       s.frames, s.nframes, n);
	} else {
		collapser_add(pr->c, &s);
	}
	pr->samples++;
	return 1;
}

int filter_event(void *data, const struct perf_dlfilter_sample *ds, void *ctx)
{
	struct state *st = data;

	/* (filter_event_early() put the recording to use already) */
	if (st->reading && !use_recording(st)) {
		st->failed = true;
		return -1;
	}
	return fold(st, ds, ctx);
}

static void report_dropped(struct state *st)
{
	GHashTableIter it;
	gpointer k, v;
	GString *s;

	if (!g_hash_table_size(st->dropped))
		return;
	s = g_string_new(NULL);
	if (st->o.thread_states)
		g_string_append(s, "states reads only " SCHED_SWITCH ", sched:sched_waking "
				"and sched:sched_wakeup_new; ignored");
	else if (st->o.offcpu)
		g_string_append(s, "offcpu folds only " SCHED_SWITCH "; ignored");
	else
		g_string_append_printf(s, "kept event '%s' (%" G_GUINT64_FORMAT
				       " samples); dropped", st->kept, st->samples);
	g_hash_table_iter_init(&it, st->dropped);
	for (int i = 0; g_hash_table_iter_next(&it, &k, &v); i++)
		g_string_append_printf(s, "%s '%s' (%zu samples)", i ? "," : "",
				       (const char *)k, GPOINTER_TO_SIZE(v));
	if (!st->o.offcpu && !st->o.thread_states && !st->o.event)
		g_string_append(s, "; choose with --dlarg event=NAME");
	warn("%s", s->str);
	g_string_free(s, TRUE);
}

/*
 * The unit of the counts written: cpu-clock and task-clock periods are
 * nanoseconds, off-CPU weights microseconds; a tracepoint recorded with
 * -c 1 counts each event once; otherwise perf's estimate of the events.
 */
static const char *unit_of(const struct state *st)
{
	const struct perf_event_attr *a = &st->kept_attr;

	if (st->off)
		return "us";
	if (!st->have_attr)
		return "samples";
	switch (a->type) {
	case PERF_TYPE_SOFTWARE:
		if (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK)
			return "ns";
		return a->config == PERF_COUNT_SW_CONTEXT_SWITCHES ? "switches" : "events";
	case PERF_TYPE_TRACEPOINT:
		/* perf script gives tracepoints no period: one per sample */
		if (a->freq || a->sample_period != 1)
			return "samples";
		return strcmp(st->kept, SCHED_SWITCH) == 0 ? "switches" : "events";
	default:
		return "events";
	}
}

static bool recorded_may_map(void *data, int pid, uint64_t addr)
{
	return perfdata_may_map(data, pid, addr);
}

static bool recorded_switch_in(void *data, int tid, uint64_t from, uint64_t to, uint64_t *time)
{
	return perfdata_switch_in(data, tid, from, to, time);
}

static uint32_t recorded_map_gen(void *data, int pid, uint64_t time, uint64_t *until)
{
	return perfdata_map_gen(data, pid, time, until);
}

static bool recorded_file_at(void *data, int pid, uint64_t addr, uint64_t time, uint32_t *file,
			     const char **name, uint64_t *offset)
{
	struct perfdata_file f;

	if (!perfdata_file_at(data, pid, addr, time, &f))
		return false;
	*file = f.file;
	*name = f.name;
	*offset = f.offset;
	return true;
}

/* Where an address of a dump's stack is, for the unwinder: the recording's maps. */
static bool recorded_locate(void *data, int pid, uint64_t addr, uint64_t time,
			    struct unwind_where *w)
{
	struct perfdata_file f;

	if (!perfdata_file_at(data, pid, addr, time, &f))
		return false;
	w->file = f.file;
	w->path = f.name;
	w->offset = f.offset;
	w->id_kind = perfdata_file_identity(data, f.file, w->id);
	return true;
}

static uint32_t recorded_name_gen(void *data, int tid, uint64_t time, uint64_t *until)
{
	return perfdata_name_gen(data, tid, time, until);
}

static const char *recorded_name(void *data, int pid)
{
	bool from_exe;

	return perfdata_process_name(data, pid, &from_exe);
}

/*
 * Whether perf read the whole recording: on a record it cannot read it
 * stops ("failed to process type"), yet still calls stop().  perf record
 * notes the time of the last sample in the file's header.
 */
static bool read_to_end(struct state *st)
{
	uint64_t first, last;

	if (!st->pd || !perfdata_sample_times(st->pd, &first, &last) || st->last_time >= last)
		return true;
	if (st->read)
		warn("perf stopped before the end of the recording: the last sample it "
		     "read is at %.6f s, the recording's last at %.6f s: no profile made, "
		     "it would hold only part of the recording",
		     (double)st->last_time / 1e9, (double)last / 1e9);
	else
		warn("perf stopped before reading any sample (the recording's last is "
		     "at %.6f s): no profile made", (double)last / 1e9);
	return false;
}

static bool offwake_seen(struct state *st);

/* Why there is no stack to write: every case says so and exits 1. */
static void say_empty(struct state *st, uint64_t dropped)
{
	if (!st->read)
		warn("the recording holds no samples (was the target idle?)");
	else if (st->wake && st->switches && !offwake_seen(st))
		warn("no " OFFWAKE_EVENT " samples: record with perf record -e "
		     SCHED_SWITCH " -e " OFFWAKE_EVENT " -a -g");
	else if (st->off && !st->samples && !st->switches)
		warn("no " SCHED_SWITCH " samples: record with "
		     "perf record -e " SCHED_SWITCH " -a -g");
	else if (!st->samples)
		warn("none of the %" G_GUINT64_FORMAT " samples perf read passed its "
		     "selection (perf script --pid, --tid, --comm, --cpu, --time)", st->read);
	else if (st->unselected == st->samples)
		warn("no samples of pid=%s (%" G_GUINT64_FORMAT " of other processes)",
		     st->o.pid_list, st->samples);
	else if (st->o.comm_re) {
		char *names = profiles_describe(st->profiles, 8);
		warn("no process matches comm=%s; the recording's: %s", st->o.comm_pattern, names);
		g_free(names);
	} else if (st->wake)
		warn("no off-wake time counted: no wait%s%s ended by a recorded " OFFWAKE_EVENT,
		     dropped ? " of 0.5 us or more" : "", st->o.min_us ? " and at least min= long" : "");
	else if (st->off && dropped)
		warn("no off-CPU time counted: every stack's waits add up to under 0.5 us");
	else if (st->off)
		warn("no off-CPU time counted: no wait in the states asked for%s",
		     st->o.min_us ? " and at least min= long" : "");
	else
		warn("no stacks: every sample was left out");
}

static int write_output(struct state *st, const char *unit)
{
	GError *err = NULL;
	size_t nfiles = 0;
	int rc;

	if (st->o.split) {
		rc = profiles_write_split(st->profiles, st->o.split, unit, &nfiles, &err);
		if (rc == 0)
			warn("wrote %zu profile%s and index.tsv to %s (counts in %s)", nfiles,
			     nfiles == 1 ? "" : "s", st->o.split, unit);
	} else if (st->o.output) {
		struct fk_outfile *o = fk_outfile_open(st->o.output, &err);

		rc = o ? profiles_write(st->profiles, fk_outfile_stream(o), st->o.output, &err) : -1;
		if (rc == 0)
			rc = fk_outfile_commit(o, &err);
		else
			fk_outfile_abort(o);
	} else {
		rc = profiles_write(st->profiles, stdout, "<stdout>", &err);
	}
	if (err) {
		warn("%s", err->message);
		g_error_free(err);
	}
	return rc == 0 ? 0 : -1;
}

/* A process's speedscope file is named as its folded file. */
static const char *exports_name(void *profiles, int pid)
{
	return profiles_name(profiles, pid);
}

/* Every output holds the processes comm= selects. */
static bool exports_selected(void *profiles, int pid)
{
	return profiles_selected(profiles, pid);
}

static int write_exports(struct state *st)
{
	GError *err = NULL;
	size_t nfiles;

	if (exports_write(st->ex, exports_name, exports_selected, st->profiles, &nfiles, &err) < 0) {
		warn("%s", err->message);
		g_error_free(err);
		return -1;
	}
	if (nfiles)
		warn("wrote %zu speedscope file%s to %s", nfiles, nfiles == 1 ? "" : "s",
		     st->o.split);
	return 0;
}

/*
 * Whether the frames shared between processes (frame_cache_set_files())
 * are perf's: perf placed every address it was still asked about where
 * the recording's maps said.  When it did not, frames shared before may
 * be misnamed: no profile.
 */
static bool shared_as_perf(struct state *st)
{
	const char *file;
	uint64_t ip, before = st->frames ? frame_cache_misplaced(st->frames, &file, &ip) : 0;

	if (!before)
		return true;
	warn("perf placed address %#" G_GINT64_MODIFIER "x of %s elsewhere than the recording's "
	     "maps say, after %" G_GUINT64_FORMAT " addresses were named from other processes "
	     "mapping the same files: no profile made, they may be misnamed; use: "
	     "perf script | fp-collapse", ip, file, before);
	return false;
}

/*
 * perf ignores what stop() returns and would exit 0 after a failed write:
 * the profile is lost, so say so with the exit status.
 */
static G_GNUC_NORETURN void fail_exit(struct state *st)
{
	free_state(st);
	fflush(stdout);
	exit(1);
}

/*
 * Off-CPU: whether the waits' ends are known.  A recording of some threads
 * only (perf record -p, or of a command) holds their switches out, but not
 * the switches of other threads that bring them back: a wait that such a
 * switch ends has no end there, and its length would be a guess.  That is
 * refused.  perf record's command line in the file says what it recorded;
 * where it does not (a pipe, an old perf), the switches tell: a system-wide
 * recording has switches from an idle task, and each switch's prev is the
 * thread the CPU's previous switch brought in, but for a few (perf misses
 * some switches from an idle task); a recording of some threads has none,
 * and a gap wherever another thread ran, often every other switch.
 */
static bool offcpu_verdict(struct state *st)
{
	uint64_t counted, short_waits, unseen, lost = 0, lost_samples = 0;
	enum perfdata_scope scope = st->pd ? perfdata_scope(st->pd) : PERFDATA_SCOPE_UNKNOWN;
	bool some_threads;

	offcpu_stats(st->off, &counted, &short_waits, &unseen);
	if (st->pd)
		perfdata_lost(st->pd, &lost, &lost_samples);
	if (scope == PERFDATA_SCOPE_UNKNOWN)
		some_threads = !st->idle_out && st->gaps * 5 > st->switches && !lost && !lost_samples;
	else
		some_threads = scope == PERFDATA_SCOPE_TASKS;
	if (unseen && some_threads) {
		warn("the recording is not system-wide (%s): %" G_GUINT64_FORMAT " of %"
		     G_GUINT64_FORMAT " waits ended by a switch-in perf did not record, "
		     "so their lengths are unknown: no profile made; record with "
		     "perf record -e " SCHED_SWITCH " -a -g",
		     scope == PERFDATA_SCOPE_TASKS ? "perf record was given threads or a command, not -a"
						   : "no switch from an idle task in it",
		     unseen, counted);
		return false;
	}
	return true;
}

/*
 * Off-CPU: no thread's waits may add up to more than the recording (from
 * its first sample to its last, as perf record noted them, else as
 * read): that would be a wrong number, whatever made it.
 */
/*
 * False, said, if thread tid's ns of what (off-CPU, blocked) is longer
 * than the recording (its sample times, else its switches' span).
 */
static bool thread_within_recording(struct state *st, int tid, uint64_t ns, const char *what)
{
	uint64_t first, last;

	if (!(st->pd && perfdata_sample_times(st->pd, &first, &last)) &&
	    !offcpu_span(st->off, &first, &last))
		return true;
	if (ns <= last - first)
		return true;
	warn("thread %d: %.6f s %s in a recording of %.6f s: no profile made "
	     "(the recording's times do not add up: damaged, or a bug to report "
	     "with it)", tid, (double)ns / 1e9, what, (double)(last - first) / 1e9);
	return false;
}

static bool offcpu_within_recording(struct state *st)
{
	uint64_t ns;
	int tid, perf_tid;

	return !offcpu_longest(st->off, &tid, &perf_tid, &ns) ||
	       thread_within_recording(st, perf_tid, ns, "off-CPU");
}

static int recorded_pid(void *data, int tid)
{
	return perfdata_thread_pid(data, tid);
}

/*
 * states: the table, once the window is known; -1 (said) when it cannot
 * be made or would hold a wrong number.
 */
static int states_stop(struct state *st)
{
	uint64_t first = st->first_time, last = st->last_time, ns;
	GError *err = NULL;
	FILE *out = stdout;
	struct fk_outfile *of = NULL;
	const char *name = st->o.output ? st->o.output : "<stdout>";
	long n;
	int tid;
	bool perf_id;

	if (!st->states_read[STATES_SWITCH]) {
		warn("no " SCHED_SWITCH " samples: record with perf record -e " SCHED_SWITCH
		     " -e sched:sched_waking -e sched:sched_wakeup_new -a");
		report_dropped(st);
		return -1;
	}
	if (st->pd && perfdata_scope(st->pd) == PERFDATA_SCOPE_TASKS) {
		warn("the recording is not system-wide (perf record was given threads or a "
		     "command, not -a): a thread's switch-in is recorded only with the "
		     "switch-out of the thread before it, so its states are unknown; "
		     "record with perf record -a");
		return -1;
	}
	/*
	 * perf record's first and last sample, else (it notes them only when
	 * it reads its samples back for build ids: not with --no-buildid, as
	 * fp-record records) those read here
	 */
	if (st->pd && !perfdata_sample_times(st->pd, &first, &last)) {
		first = st->first_time;
		last = st->last_time;
	}
	if (st->pd)
		states_on_pid(st->states, recorded_pid, st->pd);
	states_finish(st->states, first, last);
	/* (each thread's states fill at most the window, by construction) */
	if (states_longest(st->states, &tid, &perf_id, &ns) && ns > last - first) {
		warn("thread %d%s: %.6f s of states in a recording of %.6f s: no table made "
		     "(the recording's times do not add up: damaged, or a bug to report "
		     "with it)", tid, perf_id ? "" : " (the kernel's id)", (double)ns / 1e9,
		     (double)(last - first) / 1e9);
		return -1;
	}
	if (st->o.output && !(of = fk_outfile_open(st->o.output, &err)))
		goto fail;
	if (of)
		out = fk_outfile_stream(of);
	n = states_write(st->states, out, name, st->o.pids, &err);
	if (n < 0) {
		fk_outfile_abort(of);
		goto fail;
	}
	if (of && fk_outfile_commit(of, &err) != 0)
		goto fail;
	if (!n)
		warn("no thread of pid=%s switched or woke in the recording", st->o.pid_list);
	/* the window in whole us too, rounded as each row is: a thread there
	 * from first to last adds up to it exactly (fp-record reads it) */
	warn("states of %ld thread%s over %.6f s, %" G_GUINT64_FORMAT " us (times in us)", n,
	     n == 1 ? "" : "s", (double)(last - first) / 1e9, (last - first + 500) / 1000);
	if (!st->states_read[STATES_WAKING])
		warn("no sched:sched_waking samples: the time from a wake-up to the switch-in "
		     "is counted as sleeping; record with perf record -e sched:sched_waking too");
	if (states_late(st->states))
		warn("%" G_GUINT64_FORMAT " events reached perf after later ones of the same "
		     "thread (perf's out of order events): left out", states_late(st->states));
	if (states_unknown_pid(st->states))
		warn("%" G_GUINT64_FORMAT " threads never switched out and have no process in "
		     "the recording: written with pid -1", states_unknown_pid(st->states));
	if (states_outside(st->states))
		warn("%" G_GUINT64_FORMAT " threads outside perf's PID namespace (no pid in the "
		     "recording) left out; record outside the container to see them",
		     states_outside(st->states));
	if (states_unplaced(st->states))
		warn("%" G_GUINT64_FORMAT " threads never switched out with a pid in a recording "
		     "made in a PID namespace (their ids there are unknown) left out",
		     states_unplaced(st->states));
	if (st->bad_states)
		warn("%" G_GUINT64_FORMAT " samples too short to decode: skipped", st->bad_states);
	report_dropped(st);
	return n ? 0 : -1;
fail:
	warn("%s", err->message);
	g_error_free(err);
	return -1;
}

/*
 * Off-CPU with stack dumps: how much of the time is in stacks repaired
 * through code without frame pointers, and why the rest is not.
 */
static void unwind_notes(struct state *st)
{
	uint64_t total = 0, fixed = 0;
	GString *why = g_string_new(NULL);
	const char *file = userstack_last_file(st->us);

	/* the threads the dumps were for, less those without a user stack */
	for (int o = 0; o < USERSTACK_OUTCOMES; o++) {
		if (o == USERSTACK_NO_USER || o == USERSTACK_NOT_DUMPED)
			continue;
		total += st->outcome_ns[o];
		if (userstack_repaired(o))
			fixed += st->outcome_ns[o];
	}
	if (userstack_late(st->us))
		warn("%" G_GUINT64_FORMAT " stack dumps came after the switches they were for "
		     "(perf record's dump event listed first): those stacks not repaired; "
		     "list the event with call-graph=dwarf second", userstack_late(st->us));
	if (!total) {
		g_string_free(why, TRUE);
		return;
	}
	for (int o = 0; o < USERSTACK_OUTCOMES; o++) {
		if (userstack_repaired(o) || o == USERSTACK_NO_USER || o == USERSTACK_NOT_DUMPED ||
		    !st->outcome_ns[o])
			continue;
		g_string_append_printf(why, "%s%.1f%% %s", why->len ? ", " : "",
				       100.0 * (double)st->outcome_ns[o] / (double)total,
				       userstack_outcome_name(o));
		if ((o == USERSTACK_STOP_NO_FILE || o == USERSTACK_STOP_NO_CFI) && file)
			g_string_append_printf(why, " (%s)", file);
	}
	warn("off-CPU stacks repaired from stack dumps: %.1f%% of the time "
	     "(%.3f s of %.3f s)%s%s", 100.0 * (double)fixed / (double)total,
	     (double)fixed / 1e9, (double)total / 1e9, why->len ? "; not: " : "", why->str);
	g_string_free(why, TRUE);
}

/* offwake: whether any sched_waking was read */
static bool offwake_seen(struct state *st)
{
	struct offwake_stats ws;

	offwake_stats(st->wake, &ws);
	return ws.wakings || st->bad_waking;
}

/* offwake: as offcpu_within_recording() */
static bool offwake_within_recording(struct state *st)
{
	uint64_t ns;
	int tid;

	return !offwake_longest(st->wake, &tid, &ns) ||
	       thread_within_recording(st, tid, ns, "blocked");
}

/* offwake: the waits left out, and why */
static void offwake_notes(struct state *st)
{
	struct offwake_stats ws;
	enum perfdata_scope scope = st->pd ? perfdata_scope(st->pd) : PERFDATA_SCOPE_UNKNOWN;

	offwake_stats(st->wake, &ws);
	if (ws.unwoken)
		warn("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " waits (%.3f s) ended with "
		     "no " OFFWAKE_EVENT " recorded after their switch-out (woken before "
		     "they had left the CPU, or by an unrecorded thread): left out%s",
		     ws.unwoken, ws.unwoken + ws.counted, (double)ws.unwoken_ns / 1e9,
		     scope == PERFDATA_SCOPE_TASKS ? "; the recording is not system-wide "
		     "(perf record -a records every waker)" : "");
	if (ws.pending_end)
		warn("%" G_GUINT64_FORMAT " threads still blocked at the end of the recording: "
		     "not counted (no waker yet)", ws.pending_end);
	if (ws.short_waits)
		warn("%" G_GUINT64_FORMAT " waits under min=%" G_GUINT64_FORMAT " us left out",
		     ws.short_waits, st->o.min_us);
	if (st->bad_waking)
		warn("%" G_GUINT64_FORMAT " " OFFWAKE_EVENT " samples too short to decode: "
		     "skipped", st->bad_waking);
}

/* Off-CPU: what the accounting had to assume. */
static void offcpu_notes(struct state *st, uint64_t dropped)
{
	uint64_t counted, short_waits, unseen, lost = 0, lost_samples = 0;
	uint64_t recorded = offcpu_recorded(st->off);
	bool switch_records = st->pd && perfdata_switches(st->pd);

	offcpu_stats(st->off, &counted, &short_waits, &unseen);
	if (st->pd)
		perfdata_lost(st->pd, &lost, &lost_samples);
	if (recorded)
		warn("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " waits ended by a "
		     "switch-in only perf's switch records (--switch-events) have",
		     recorded, counted);
	if (unseen)
		warn("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " waits ended by a "
		     "switch-in perf did not record: ended at the CPU's previous switch, "
		     "as perf sched timehist does", unseen, counted);
	if (unseen && !switch_records)
		warn("the kernel does not emit sched_switch for many switches from the "
		     "idle task: record with perf record --switch-events too for their "
		     "true ends");
	if (unseen && (lost || lost_samples))
		warn("perf lost %" G_GUINT64_FORMAT " events while recording "
		     "(perf report --stats): record with a larger buffer (perf record -m) "
		     "or for a shorter time", lost + lost_samples);
	else if (unseen * 10 > counted && switch_records)
		/* (without the records, the kernel's missing switch-ins are
		 * reason enough) */
		warn("so many missing switch-ins, and none lost: was the recording "
		     "limited to some CPUs (perf record -C)?");
	if (offcpu_woken(st->off))
		warn("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " waits woken (sched:sched_waking): "
		     "%s", offcpu_woken(st->off), counted,
		     st->o.runq ? "counted from the wake-up to the switch-in (runnable)"
				: "counted up to the wake-up; the time runnable after it is runq's");
	if (offcpu_late(st->off))
		warn("%" G_GUINT64_FORMAT " switches reached perf after later ones of the same "
		     "thread (perf's out of order events): left out", offcpu_late(st->off));
	if (short_waits)
		warn("%" G_GUINT64_FORMAT " waits under min=%" G_GUINT64_FORMAT
		     " us left out", short_waits, st->o.min_us);
	if (dropped)
		warn("%" G_GUINT64_FORMAT " stacks under 0.5 us left out", dropped);
	if (st->foreign)
		warn("%" G_GUINT64_FORMAT " waits of threads without a pid in the recording "
		     "(outside perf's PID namespace, or exiting) left out; record outside "
		     "the container to see them", st->foreign);
}

int stop(void *data, void *ctx)
{
	struct state *st = data;
	uint64_t dropped = 0, tail, tail_ns;
	int rc;

	if (!st || st->failed) {
		free_state(st);
		return st ? -1 : 0;
	}
	if (!use_recording(st))
		fail_exit(st);
	if (!read_to_end(st))
		fail_exit(st);
	if (st->states) {
		if (states_stop(st) != 0)
			fail_exit(st);
		free_state(st);
		return 0;
	}
	if (st->off && st->samples) {
		tail = offcpu_finish(st->off, &tail_ns);
		if (tail)
			warn("%" G_GUINT64_FORMAT " thread%s still off-CPU at the end of the "
			     "recording: counted up to the last sample (%.3f s in all)",
			     tail, tail == 1 ? " was" : "s were", (double)tail_ns / 1e9);
		if (!offcpu_verdict(st) || !offcpu_within_recording(st))
			fail_exit(st);
	}
	if (st->wake && st->samples) {
		offwake_finish(st->wake);
		if (!offwake_within_recording(st))
			fail_exit(st);
	}
	if (!shared_as_perf(st))
		fail_exit(st);
	if (st->sk)
		stacks_flush(st->sk);
	if (profiles_finish(st->profiles, st->pd ? recorded_name : NULL, st->pd,
			    st->o.comm_re, st->off != NULL, &dropped) == 0) {
		say_empty(st, dropped);
		report_dropped(st);
		fail_exit(st);
	}
	/* speedscope= written meanwhile on a second thread (threads=2) */
	if (st->ex && st->o.threads > 1)
		exports_write_begin(st->ex, exports_name, exports_selected, st->profiles);
	rc = write_output(st, unit_of(st));
	if (st->ex && write_exports(st) < 0)
		rc = -1;
	report_dropped(st);
	if (st->off)
		offcpu_notes(st, dropped);
	if (st->wake)
		offwake_notes(st);
	if (st->off && st->us)
		unwind_notes(st);
	if (st->cl)
		callerloss_notes(st);
	if (st->bad_switch)
		warn("%" G_GUINT64_FORMAT " " SCHED_SWITCH " samples too short to decode: "
		     "skipped", st->bad_switch);
	if (st->bad_states)
		warn("%" G_GUINT64_FORMAT " wake-up samples too short to decode: skipped",
		     st->bad_states);
	if (rc != 0)
		fail_exit(st);
	free_state(st);
	return 0;
}
