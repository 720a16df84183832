/*
 * foldkit.so - a perf dlfilter that folds stacks inside `perf script`:
 * perf resolves the addresses, this folds them with lib/collapse/collapse.h (the
 * same code as `perf script | fp-collapse`), filters out every event so
 * perf prints nothing, and writes the folded stacks when perf stops.
 * See docs/foldkit-dlfilter.1.
 */
#include "collapse/collapse.h"
#include "collapse/inline.h"
#include "core/textesc.h"
#include "exports.h"
#include "frames.h"
#include "offcpu.h"
#include "options.h"
#include "profiles.h"

#include <perf/perf_dlfilter.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define NAME "foldkit"
#define SCHED_SWITCH "sched:sched_switch"

/* perf fills this in when it loads the plugin */
struct perf_dlfilter_fns perf_dlfilter_fns;

struct state {
	struct opts o;
	struct collapse_opts co;
	struct frame_cache *frames;
	struct profiles *profiles;
	struct offcpu *off;
	struct inline_resolver *inliner;
	struct exports *ex;	/* speedscope=, pprof= (or NULL) */
	GString *key;
	char *kept;		/* the event being folded */
	GHashTable *dropped;	/* other event name -> samples */
	GHashTable *attrs_ok;	/* perf_event_attr * already checked */
	uint64_t samples, bad_switch, mismatched;
	bool failed;
	char pidbuf[16], tidbuf[16];
};

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

static void free_state(struct state *st)
{
	if (!st)
		return;
	exports_free(st->ex);
	frame_cache_free(st->frames);
	profiles_free(st->profiles);
	inline_resolver_free(st->inliner);
	offcpu_free(st->off);
	g_string_free(st->key, TRUE);
	g_free(st->kept);
	g_hash_table_destroy(st->dropped);
	g_hash_table_destroy(st->attrs_ok);
	g_free(st);
}

int start(void **data, void *ctx)
{
	struct state *st = g_new0(struct state, 1);
	char **argv;
	int argc = 0, rc;
	GError *err = NULL;

	plugin_opts_init(&st->o);
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
		st->off = offcpu_new(st->o.states, st->o.min_us * 1000, st->o.format, &err);
		if (!st->off) {
			warn("%s", err->message);
			g_error_free(err);
			st->failed = true;
			return -1;
		}
	}
	st->frames = frame_cache_new(&perf_dlfilter_fns, st->o.max_stack);
	st->profiles = profiles_new(&st->co, st->o.split != NULL);
	st->ex = exports_new(&(struct export_opts){
		.speedscope = st->o.speedscope, .speedscope_split = st->o.speedscope_split,
		.split = st->o.split, .pprof = st->o.pprof, .pid = st->o.pid, .tid = st->o.tid,
		.context = st->o.context, .offcpu = st->o.offcpu, .names = &st->co.names,
		.inliner = st->inliner, .frames = st->frames,
	});
	if (st->ex && st->off)
		offcpu_on_credit(st->off, exports_credit, st->ex);
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
	if (!attr || g_hash_table_contains(st->attrs_ok, attr))
		return true;
	if (attr->sample_type & (PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER)) {
		warn("'%s' was recorded with --call-graph dwarf: perf gives a dlfilter "
		     "only the kernel part of such stacks, so they cannot be folded here; "
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
	return true;
}

/* Keeps one event: event=NAME, else the first seen (as fp-collapse). */
static bool wanted_event(struct state *st, const char *event)
{
	gpointer n;

	if (!st->kept)
		st->kept = g_strdup(st->o.event ? st->o.event : event);
	if (strcmp(event, st->kept) == 0)
		return true;
	n = g_hash_table_lookup(st->dropped, event);
	g_hash_table_replace(st->dropped, g_strdup(event), GSIZE_TO_POINTER(GPOINTER_TO_SIZE(n) + 1));
	return false;
}

static void fill_sample(struct state *st, struct perf_sample *s,
			const struct perf_dlfilter_sample *ds, void *ctx,
			const struct perf_event_attr *attr, const char *comm)
{
	const struct perf_frame *f;
	int n;

	memset(s, 0, sizeof(*s));
	s->comm.s = comm;
	s->comm.len = strlen(comm);
	n = snprintf(st->pidbuf, sizeof(st->pidbuf), "%d", ds->pid);
	s->pid.s = st->pidbuf;
	s->pid.len = (size_t)n;
	n = snprintf(st->tidbuf, sizeof(st->tidbuf), "%d", ds->tid);
	s->tid.s = st->tidbuf;
	s->tid.len = (size_t)n;
	s->event.s = ds->event;
	s->event.len = strlen(ds->event);
	/*
	 * perf script prints the period for every kind of event but
	 * tracepoints, the recording's fixed one (-c) when samples carry none
	 */
	s->has_period = !attr || attr->type != PERF_TYPE_TRACEPOINT;
	s->period = s->has_period ? ds->period : 1;
	if (attr && !(attr->sample_type & PERF_SAMPLE_CALLCHAIN))
		s->nframes = frame_cache_ip(st->frames, ds, ctx, &f);
	else
		s->nframes = frame_cache_chain(st->frames, ds, ctx, &f);
	s->frames = (struct perf_frame *)f;
	s->file = "perf.data";
}

static void on_switch(struct state *st, const struct perf_dlfilter_sample *ds,
		      void *ctx, const struct perf_event_attr *attr,
		      const char *comm, struct profile *pr)
{
	struct sched_switch sw;
	struct perf_sample s;

	offcpu_tick(st->off, ds->time);
	if (!offcpu_decode(st->off, ds->raw_data, ds->raw_size, &sw)) {
		st->bad_switch++;
		return;
	}
	offcpu_switch_in(st->off, sw.next_pid, ds->time);
	offcpu_switch_unseen(st->off, sw.prev_pid, ds->cpu, ds->time);
	if (!offcpu_wanted(st->off, &sw)) {
		offcpu_forget(st->off, sw.prev_pid);
		return;
	}
	if (sw.prev_pid != ds->tid) {
		/* the stack is the sample thread's: it must be the one leaving */
		st->mismatched++;
		offcpu_forget(st->off, sw.prev_pid);
		return;
	}
	fill_sample(st, &s, ds, ctx, attr, comm);
	collapser_stack_key(pr->c, &s, st->key);
	offcpu_switch_out(st->off, sw.prev_pid, ds->time, collapser_table(pr->c),
			  st->key->str, st->key->len, &pr->samples);
	if (st->ex)	/* weighed when the wait is counted */
		exports_sample(st->ex, ds, attr, comm, NULL, st->key->str, st->key->len,
			       s.frames, s.nframes, 0);
}

int filter_event(void *data, const struct perf_dlfilter_sample *ds, void *ctx)
{
	struct state *st = data;
	const struct perf_event_attr *attr;
	const struct perf_dlfilter_al *al;
	const char *comm;
	struct profile *pr;
	struct perf_sample s;

	if (st->failed)
		return -1;
	attr = perf_dlfilter_fns.attr(ctx);
	if (!wanted_event(st, ds->event))
		return 1;
	if (!check_attr(st, attr, ds->event)) {
		st->failed = true;
		return -1;
	}
	al = perf_dlfilter_fns.resolve_ip(ctx);
	/* an empty name too: with no frames, the stack would be empty (an
	 * off-CPU wait would be written as a line without a stack) */
	comm = al && al->comm && *al->comm ? al->comm : ":-1";
	st->samples++;
	frame_cache_note_comm(st->frames, ds->pid, ds->tid, comm);
	pr = profiles_get(st->profiles, ds->pid, ds->tid, comm);
	if (st->o.offcpu) {
		on_switch(st, ds, ctx, attr, comm, pr);
		return 1;
	}
	fill_sample(st, &s, ds, ctx, attr, comm);
	if (st->ex) {
		/* as collapser_add() folds it (the event is already chosen),
		 * keeping the key for the other outputs */
		fk_count n = fk_count_from_u64(s.has_period ? s.period : 1);
		struct fold_entry *e;

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

static void report_dropped(struct state *st)
{
	GHashTableIter it;
	gpointer k, v;
	GString *s;

	if (!g_hash_table_size(st->dropped))
		return;
	s = g_string_new(NULL);
	if (st->o.offcpu)
		g_string_append(s, "offcpu folds only " SCHED_SWITCH "; ignored");
	else
		g_string_append_printf(s, "kept event '%s' (%" G_GUINT64_FORMAT
				       " samples); dropped", st->kept, st->samples);
	g_hash_table_iter_init(&it, st->dropped);
	for (int i = 0; g_hash_table_iter_next(&it, &k, &v); i++)
		g_string_append_printf(s, "%s '%s' (%zu samples)", i ? "," : "",
				       (const char *)k, GPOINTER_TO_SIZE(v));
	if (!st->o.offcpu && !st->o.event)
		g_string_append(s, "; choose with --dlarg event=NAME");
	warn("%s", s->str);
	g_string_free(s, TRUE);
}

/* True if path exists and is not a regular file (nor a link to one). */
static bool output_is_special(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode);
}

static int write_output(struct state *st, uint64_t *dropped)
{
	GError *err = NULL;
	size_t nfiles = 0;
	int rc;

	if (st->o.split) {
		rc = profiles_write_split(st->profiles, st->o.split, st->off != NULL,
					  dropped, &nfiles, &err);
		if (rc == 0)
			warn("wrote %zu profile%s and index.tsv to %s", nfiles,
			     nfiles == 1 ? "" : "s", st->o.split);
	} else if (st->o.output && output_is_special(st->o.output)) {
		/*
		 * A device or FIFO (/dev/full, /dev/stdout, a named pipe) is
		 * written in place: renaming a temporary file over it would
		 * replace the device node with a regular file.
		 */
		FILE *f = fopen(st->o.output, "w");

		if (!f) {
			warn("%s: cannot open: %s", st->o.output, g_strerror(errno));
			return -1;
		}
		rc = profiles_write(st->profiles, f, st->o.output, st->off != NULL, dropped, &err);
		if (fclose(f) != 0 && rc == 0) {
			warn("%s: write error: %s", st->o.output, g_strerror(errno));
			rc = -2;
		}
	} else if (st->o.output) {
		char *tmp = g_strdup_printf("%s.tmpXXXXXX", st->o.output);
		int fd = g_mkstemp(tmp);
		FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

		if (!f) {
			warn("%s: cannot create: %s", tmp, g_strerror(errno));
			g_free(tmp);
			return -1;
		}
		rc = profiles_write(st->profiles, f, st->o.output, st->off != NULL, dropped, &err);
		if (fclose(f) != 0 && rc == 0) {
			warn("%s: write error: %s", st->o.output, g_strerror(errno));
			rc = -2;
		}
		if (rc == 0 && rename(tmp, st->o.output) != 0) {
			warn("%s: cannot rename: %s", st->o.output, g_strerror(errno));
			rc = -2;
		}
		if (rc != 0)
			unlink(tmp);
		g_free(tmp);
	} else {
		rc = profiles_write(st->profiles, stdout, "<stdout>", st->off != NULL, dropped, &err);
	}
	if (err) {
		warn("%s", err->message);
		g_error_free(err);
	}
	return rc == 0 ? 0 : -1;
}

static int write_exports(struct state *st)
{
	GError *err = NULL;
	size_t nfiles;

	if (exports_write(st->ex, &nfiles, &err) < 0) {
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
 * perf ignores what stop() returns and would exit 0 after a failed write:
 * the profile is lost, so say so with the exit status.
 */
static G_GNUC_NORETURN void fail_exit(void)
{
	fflush(stdout);
	exit(1);
}

int stop(void *data, void *ctx)
{
	struct state *st = data;
	uint64_t dropped = 0, tail, tail_ns, counted, short_waits, unseen;
	int rc = 0;

	if (!st || st->failed) {
		free_state(st);
		return st ? -1 : 0;
	}
	if (st->off) {
		if (!st->samples) {
			warn("no " SCHED_SWITCH " samples: record with "
			     "perf record -e " SCHED_SWITCH " -a -g");
			free_state(st);
			fail_exit();
		}
		tail = offcpu_finish(st->off, &tail_ns);
		if (tail)
			warn("%" G_GUINT64_FORMAT " thread%s still off-CPU at the end of the "
			     "recording: counted up to the last sample (%.3f s in all)",
			     tail, tail == 1 ? " was" : "s were", (double)tail_ns / 1e9);
	}
	rc = write_output(st, &dropped);
	if (st->ex && write_exports(st) < 0)
		rc = -1;
	report_dropped(st);
	if (st->off) {
		offcpu_stats(st->off, &counted, &short_waits, &unseen);
		if (unseen)
			warn("%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " waits ended by a "
			     "switch-in perf did not record: ended at the CPU's previous switch, "
			     "as perf sched timehist does", unseen, counted);
		if (unseen * 10 > counted)
			warn("so many missing switch-ins: was the recording system-wide "
			     "(perf record -e " SCHED_SWITCH " -a -g)?");
		if (short_waits)
			warn("%" G_GUINT64_FORMAT " waits under min=%" G_GUINT64_FORMAT
			     " us left out", short_waits, st->o.min_us);
		if (dropped)
			warn("%" G_GUINT64_FORMAT " stacks under 0.5 us left out", dropped);
	}
	if (st->bad_switch)
		warn("%" G_GUINT64_FORMAT " " SCHED_SWITCH " samples too short to decode: "
		     "skipped", st->bad_switch);
	if (st->mismatched)
		warn("%" G_GUINT64_FORMAT " " SCHED_SWITCH " samples whose prev_pid is not "
		     "the sampled thread: skipped", st->mismatched);
	free_state(st);
	if (rc != 0)
		fail_exit();
	return 0;
}
