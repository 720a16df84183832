/*
 * fuzz/plugin.c - the perf plugin's aggregation without perf: fuzzed
 * samples (pid, tid, comm, frames, period) and sched_switch records
 * (states, CPUs, times) through perf-plugin/profiles.c and offcpu.c, the
 * way perf-plugin/foldkit.c's filter_event() and on_switch() drive them.
 *
 * Input: one option byte, then events.  Bits: 1 split per process, 2 pid
 * and 4 tid in the process frame, 8 off-CPU mode (every event is a
 * sched_switch), 16 kernel annotation, 32 min= 1 us, 64|128 the states
 * (0 S,D; 64 all; 128 R; 192 S).  An event: a kind byte, pid and tid
 * (signed bytes), a comm (length byte & 31, bytes, cut at a NUL as perf's
 * C string is; empty, it is ":-1" as in filter_event()), frames (count byte & 7; each a symbol and a DSO, length
 * byte & 15 then bytes), a 16-bit period; in off-CPU mode also
 * prev_state (a byte; kind bit 2 adds the preemption mark 0x100), next
 * pid, CPU (kind bits 4|8) and a 24-bit time step in ns; kind bit 16
 * makes prev_pid differ from the sample's tid (as in a PID namespace), kind
 * bit 128 makes the record a late one (perf's out of order events: its
 * time is the step before the latest, which stays).  The
 * record is encoded in the kernel's sched_switch layout and decoded by
 * field name.
 *
 * Each sample's frames also become a raw call chain (an address per
 * distinct symbol and DSO, kernel addresses for DSOs starting with '[',
 * a context marker at each change, a guest marker after them when kind
 * bit 32 is set) that a stand-in for perf's resolve_address() places:
 * nowhere for an empty DSO, and for a DSO starting with 'L' only while
 * a library is mapped (kind bit 64 flips it).  stacks.h must fold it to
 * exactly the text collapser_stack_key() makes of frames.h's frames for
 * it (max_stack 2 to 8, from the input's size); counted again by
 * stacks_sample(), or (kind bit 1) by stacks_slot() and stacks_add_at(),
 * over a lean frame cache (frame_cache_set_lean(), as the plugin's),
 * each chain must get the same count.
 *
 * Checked: every sample is counted once (profile sample counts add up;
 * the tables hold the sum of the periods of the samples with a stack,
 * and the others are counted skips); off-CPU, the tables hold exactly the
 * waits a plain model of the documented rules credits (and as many);
 * the output reads back through folded_reader with no skips, its counts
 * whole microseconds in off-CPU mode, summing to the per-stack rounded
 * totals; split files are named inside the directory (no '/', no "." or
 * "..", nothing hidden, no leading '-', no temporary file left) and listed
 * in index.tsv, whose lines hold no control character.
 */
#include "fuzz.h"

#include "collapse/collapse.h"
#include "core/count.h"
#include "core/folded.h"
#include "frames.h"
#include "offcpu.h"
#include "profiles.h"
#include "stacks.h"
#include "core/skiplog.h"

#include <dirent.h>
#include <sys/stat.h>

/* The 6.x kernel's sched_switch layout (as perf-plugin/test/offcpu-test.c). */
static const char FORMAT[] =
	"name: sched_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";

struct in {
	const uint8_t *p, *end;
	bool short_read;
};

static unsigned byte(struct in *in)
{
	if (in->p >= in->end) {
		in->short_read = true;
		return 0;
	}
	return *in->p++;
}

/* len bytes as a C string would hold them: up to the first NUL */
static struct fk_str str(struct in *in, unsigned len)
{
	struct fk_str s = { (const char *)in->p, 0 };

	if ((size_t)(in->end - in->p) < len) {
		in->short_read = true;
		in->p = in->end;
		return s;
	}
	s.len = strnlen(s.s, len);
	in->p += len;
	return s;
}

/* The model of the off-CPU rules in offcpu.h, for the totals. */
struct wait {
	uint64_t since, seen;	/* the wait's start; the thread's latest switch */
	bool pending;
};

struct model {
	GHashTable *waits;	/* tid -> struct wait */
	GHashTable *cpu;	/* cpu -> last switch time + 1 */
	uint64_t min_ns, ns, counted, last, late;
};

static void model_credit(struct model *m, struct wait *w, uint64_t until)
{
	uint64_t ns = until > w->since ? until - w->since : 0;

	if (ns >= m->min_ns) {
		m->ns += ns;
		m->counted++;
	}
	w->pending = false;
}

/* A switch of thread tid at time: false if late (one later was seen). */
static bool model_saw(struct model *m, struct wait *w, int tid, uint64_t time)
{
	if (!tid)
		return false;
	if (time < w->seen) {
		m->late++;
		return false;
	}
	w->seen = time;
	return true;
}

static struct wait *model_wait(struct model *m, int tid)
{
	struct wait *w = g_hash_table_lookup(m->waits, GINT_TO_POINTER(tid));

	if (!w) {
		w = g_new0(struct wait, 1);
		g_hash_table_insert(m->waits, GINT_TO_POINTER(tid), w);
	}
	return w;
}

/* The stand-in for perf's resolve_address(): address -> frame. */
struct fake_frame {
	char sym[16], dso[16];
};
static GHashTable *g_fake;	/* address -> struct fake_frame */
static bool g_lib_mapped;

#define KERNEL_BIT (1ull << 63)

static __s32 fake_resolve_address(void *ctx, __u64 address, struct perf_dlfilter_al *al)
{
	const struct fake_frame *f = g_hash_table_lookup(g_fake, &address);

	(void)ctx;
	al->is_kernel_ip = (address & KERNEL_BIT) != 0;
	if (!f || !f->dso[0] || (f->dso[0] == 'L' && !g_lib_mapped))
		return -1;
	al->sym = f->sym[0] ? f->sym : NULL;
	al->symoff = (uint32_t)(address & 0xff);
	al->dso = f->dso;
	al->addr = address & 0xffff;
	return 0;
}

/* Truthful: only the 'L' DSOs' addresses are ever mapped. */
static bool fake_may_map(void *data, int pid, uint64_t addr)
{
	const struct fake_frame *f = g_hash_table_lookup(g_fake, &addr);

	(void)data;
	(void)pid;
	return f && f->dso[0] == 'L';
}

static uint64_t fake_address(const struct perf_frame *f)
{
	struct fake_frame ff = { { 0 }, { 0 } };
	uint64_t h = 1469598103934665603ull, a;
	struct fake_frame *old;

	memcpy(ff.sym, f->sym.s, MIN(f->sym.len, sizeof(ff.sym) - 1));
	memcpy(ff.dso, f->dso.s, MIN(f->dso.len, sizeof(ff.dso) - 1));
	for (const char *c = ff.sym; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (const char *c = ff.dso; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	/* below the context markers; kernel DSOs in the upper half */
	a = (h & 0x0000fffffffff000ull) | 0x100;
	if (ff.dso[0] == '[')
		a |= KERNEL_BIT;
	old = g_hash_table_lookup(g_fake, &a);
	if (!old) {
		uint64_t *k = g_new(uint64_t, 1);

		*k = a;
		g_hash_table_insert(g_fake, k, g_memdup2(&ff, sizeof(ff)));
	}
	return a;
}

static const char *g_dir;
static const char *g_format;

static void cleanup(void)
{
	if (g_dir) {
		unlink(g_format);
		rmdir(g_dir);
	}
}

static void setup(void)
{
	static char dir[] = "/dev/shm/fuzz-plugin-XXXXXX";
	static char fmt[] = "/dev/shm/fuzz-plugin-format-XXXXXX";
	int fd;

	if (g_dir)
		return;
	FUZZ_CHECK(mkdtemp(dir), "mkdtemp failed");
	fd = mkstemp(fmt);
	FUZZ_CHECK(fd >= 0 && write(fd, FORMAT, sizeof(FORMAT) - 1) ==
		   (ssize_t)sizeof(FORMAT) - 1, "cannot write the format");
	close(fd);
	g_dir = dir;
	g_format = fmt;
	atexit(cleanup);
}


/* Reads a written profile; returns its total, checking every line. */
static fk_count read_back(const char *path, bool round_us, size_t *nlines)
{
	struct skip_log *skips = skip_log_new();
	struct folded_reader *fr;
	struct folded_line fl;
	GError *err = NULL;
	fk_count total = 0;
	int rc;

	fr = folded_reader_open(path, skips, &err);
	FUZZ_CHECK(fr, "cannot open %s: %s", path, err ? err->message : "?");
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		FUZZ_CHECK(fl.ncounts == 1, "%s: %d counts", path, fl.ncounts);
		FUZZ_CHECK(!round_us || fk_count_is_integer(fl.count[0]),
			   "%s: '%.*s' has a fraction of a microsecond", path,
			   (int)fl.len, fl.stack);
		FUZZ_CHECK(!round_us || fl.count[0] > 0, "%s: a zero count written", path);
		total += fl.count[0];
		(*nlines)++;
	}
	FUZZ_CHECK(rc == 0, "%s does not read back: %s", path, err ? err->message : "?");
	if (skip_log_total(skips)) {
		char *text = NULL, *why = skip_log_summary(skips, NULL);
		g_file_get_contents(path, &text, NULL, NULL);
		FUZZ_CHECK(0, "%s: %s; it holds:\n%.600s", path, why, text ? text : "?");
	}
	folded_reader_free(fr);
	skip_log_free(skips);
	return total;
}

struct expect {
	fk_count total;		/* rounded per stack when round_us */
	size_t stacks;		/* written (after rounding) */
	uint64_t zero;		/* rounded to 0, left out */
	bool round_us;
};

static void sum_entry(struct fold_entry *e, void *data)
{
	struct expect *x = data;
	fk_count c = e->count[0];

	if (x->round_us)
		c = (c + FK_COUNT_ONE / 2) / FK_COUNT_ONE * FK_COUNT_ONE;
	x->total += c;
	x->stacks += c != 0 || !x->round_us;
	x->zero += c == 0 && x->round_us;
	/* the collapser names frames so that every stack reads back */
	FUZZ_CHECK(!fuzz_folded_ambiguous(e->stack, e->len),
		   "a stack the folded format cannot carry: '%s'", e->stack);
}

/* A stack's folded text made from stacks_view() as stacks.h says it is made. */
static void view_key(struct stacks *sk, uint32_t stack, GString *key)
{
	struct stack_view v;
	bool first;

	stacks_view(sk, stack, &v);
	first = !v.proc_name.len;
	g_string_truncate(key, 0);
	g_string_append_len(key, v.proc_name.s, (gssize)v.proc_name.len);
	for (uint32_t k = v.n; k-- > 0;) {
		struct fk_str t = stacks_name(sk, v.names[k]);
		size_t at = key->len;

		FUZZ_CHECK(t.len && t.s[0] == ';', "stacks_name() without its ';': '%.*s'",
			   (int)t.len, t.s);
		g_string_append_len(key, t.s + first, (gssize)t.len - first);
		if (first && key->len > at && key->str[at] == '#')
			key->str[at] = '_';
		first = false;
	}
}

/* stacks_sample()'s table holds what stacks_chain() and stacks_key() give. */
static void same_entry(struct fold_entry *e, void *data)
{
	struct fold_entry *got = fold_table_find(data, e->stack, e->len);

	FUZZ_CHECK(got && got->count[0] == e->count[0], "stacks_sample() counted '%.*s' %s",
		   (int)e->len, e->stack, got ? "differently" : "nowhere");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct collapse_opts co = { 0 };
	struct in in = { data, data + size, false };
	struct profiles *p;
	struct offcpu *o = NULL;
	struct model m = { 0 };
	struct skip_log *skips = skip_log_new();
	GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);	/* pid -> profile */
	GString *key = g_string_new(NULL), *key2 = g_string_new(NULL);
	static const struct perf_dlfilter_fns fns = { .resolve_address = fake_resolve_address };
	struct frame_cache *fc = NULL, *fc2 = NULL;	/* fc2: lean, sk2's */
	struct stacks *sk = NULL, *sk2 = NULL;	/* sk2: by stacks_sample() */
	struct fold_table *by_sample = NULL, *by_chain = NULL;
	GError *err = NULL;
	fk_count want_total = 0;
	uint64_t nsamples = 0, nempty = 0, tail_ns = 0, now = 1000000;
	bool split, offcpu;
	unsigned opt, states;

	if (size < 1)
		goto out;
	setup();
	opt = byte(&in);
	split = opt & 1;
	offcpu = opt & 8;
	co.include_pid = opt & 2;
	co.include_tid = opt & 4;
	co.names.annotate_kernel = opt & 16;
	co.skips = skips;
	p = profiles_new(&co, split);
	g_fake = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
	g_lib_mapped = false;
	fc = frame_cache_new(&fns, 2 + size % 7);
	fc2 = frame_cache_new(&fns, 2 + size % 7);
	frame_cache_set_lean(fc2);
	if (opt & 32) {
		frame_cache_set_may_map(fc, fake_may_map, NULL);
		frame_cache_set_may_map(fc2, fake_may_map, NULL);
	}
	sk = stacks_new(&co.names, fc, 2 + size % 7);
	sk2 = stacks_new(&co.names, fc2, 2 + size % 7);
	by_sample = fold_table_new();
	by_chain = fold_table_new();
	if (offcpu) {
		static const unsigned st[] = { OFFCPU_S | OFFCPU_D, OFFCPU_ALL, OFFCPU_R, OFFCPU_S };
		states = st[opt >> 6 & 3];
		o = offcpu_new(states, opt & 32 ? 1000 : 0, g_format, &err);
		FUZZ_CHECK(o, "offcpu_new: %s", err ? err->message : "?");
		m.min_ns = opt & 32 ? 1000 : 0;
		m.waits = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
		m.cpu = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	}

	while (in.p < in.end) {
		struct perf_frame frames[8];
		struct perf_sample s = { 0 };
		struct profile *pr;
		unsigned kind = byte(&in);
		int pid = (int8_t)byte(&in), tid = (int8_t)byte(&in);
		struct fk_str comm = str(&in, byte(&in) & 31);
		char comm0[32], pidbuf[16], tidbuf[16];
		unsigned nf = byte(&in) & 7;

		for (unsigned i = 0; i < nf; i++) {
			memset(&frames[i], 0, sizeof(frames[i]));
			frames[i].pc = (struct fk_str){ "1234", 4 };
			frames[i].sym = str(&in, byte(&in) & 15);
			frames[i].dso = str(&in, byte(&in) & 15);
		}
		s.period = byte(&in) << 8;
		s.period |= byte(&in);
		if (in.short_read)
			break;
		/* filter_event(): no name, or an empty one, is ":-1" */
		if (comm.len == 0)
			comm = (struct fk_str){ ":-1", 3 };
		memcpy(comm0, comm.s, comm.len);
		comm0[comm.len] = '\0';
		s.comm = (struct fk_str){ comm0, comm.len };
		s.pid.len = (size_t)snprintf(pidbuf, sizeof(pidbuf), "%d", pid);
		s.pid.s = pidbuf;
		s.tid.len = (size_t)snprintf(tidbuf, sizeof(tidbuf), "%d", tid);
		s.tid.s = tidbuf;
		s.event = (struct fk_str){ offcpu ? "sched:sched_switch" : "cycles",
					   offcpu ? 18 : 6 };
		s.has_period = !offcpu;
		s.period = offcpu ? 1 : s.period;
		s.frames = nf ? frames : NULL;
		s.nframes = nf;
		s.file = "perf.data";

		nsamples++;
		pr = profiles_get(p, pid, tid, comm0);
		FUZZ_CHECK(pr, "no profile");
		FUZZ_CHECK(!split || pr->pid == pid, "pid %d in the profile of %d", pid, pr->pid);
		g_hash_table_insert(seen, GINT_TO_POINTER(split ? pid : -1), pr);
		collapser_stack_key(pr->c, &s, key);
		FUZZ_CHECK(!memchr(key->str, '\n', key->len), "newline in the stack '%s'", key->str);

		FUZZ_CHECK(key->len > 0, "an empty stack");

		/* the same frames through frames.h, as a raw chain, folded by
		 * stacks.h and by the collapser */
		{
			__u64 chain[2 * 8 + 2];
			size_t nr = 0;
			int ctx_now = 0;	/* 1 kernel, 2 user */
			struct perf_dlfilter_sample ds = { .size = sizeof(ds), .pid = pid, .tid = tid };
			struct perf_sample s2 = s;
			struct perf_frame none;
			const char *icomm;
			uint32_t proc, node, proc2;
			size_t n;

			if (kind & 64)
				g_lib_mapped = !g_lib_mapped;
			for (unsigned i = 0; i < nf; i++) {
				uint64_t a = fake_address(&frames[i]);
				int want = a & KERNEL_BIT ? 1 : 2;

				if (want != ctx_now)
					chain[nr++] = want == 1 ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
				ctx_now = want;
				chain[nr++] = a;
			}
			if (kind & 32)
				chain[nr++] = PERF_CONTEXT_GUEST;
			ds.raw_callchain = chain;
			ds.raw_callchain_nr = nr;
			icomm = frame_cache_note_comm(fc, pid, tid, comm0, 0);
			frame_cache_note_comm(fc2, pid, tid, comm0, 0);
			FUZZ_CHECK(strcmp(icomm, comm0) == 0, "the comm interned as '%s'", icomm);
			s2.nframes = 0;
			s2.frames = &none;
			collapser_stack_key(pr->c, &s2, key2);
			proc = stacks_proc(sk, collapser_table(pr->c), key2->str, key2->len,
					   strcmp(comm0, "java") == 0);
			proc2 = stacks_proc(sk2, by_sample, key2->str, key2->len,
					    strcmp(comm0, "java") == 0);
			node = stacks_chain(sk, &ds, NULL, proc);
			/* the same sample, counted by stacks_sample() on a CPU,
			 * or (kind bit 1) by stacks_slot() and stacks_add_at(), as
			 * off-CPU counts a wait: a slot asked for twice is one */
			ds.cpu = (int)(kind >> 2 & 3);
			if (kind & 1) {
				uint32_t at = stacks_slot(sk2, &ds, NULL, proc2);

				FUZZ_CHECK(stacks_slot(sk2, &ds, NULL, proc2) == at,
					   "stacks_slot() gave two slots for one chain");
				stacks_add_at(sk2, at, FK_COUNT_ONE);
			} else {
				stacks_sample(sk2, &ds, NULL, proc2, FK_COUNT_ONE);
			}
			n = frame_cache_chain(fc, &ds, NULL);
			s2.frames = n ? (struct perf_frame *)frame_cache_frames(fc) : &none;
			s2.nframes = n;
			collapser_stack_key(pr->c, &s2, key2);
			stacks_key(sk, proc, node, key);
			FUZZ_CHECK(key->len == key2->len && memcmp(key->str, key2->str, key->len) == 0,
				   "stacks.h folds '%s', the collapser '%s'", key->str, key2->str);
			view_key(sk, node, key2);	/* what speedscope= reads */
			FUZZ_CHECK(key->len == key2->len && memcmp(key->str, key2->str, key->len) == 0,
				   "stacks_view() reads '%s', stacks_key() '%s'", key2->str, key->str);
			if (key->len)
				fold_table_add(by_chain, key->str, key->len, FK_COUNT_ONE);
			collapser_stack_key(pr->c, &s, key);
		}
		if (!offcpu) {
			collapser_add(pr->c, &s);
			pr->samples++;
			if (key->len)
				want_total += fk_count_from_u64(s.period);
			else
				nempty++;
			continue;
		}

		/* on_switch() */
		unsigned char raw[64] = { 0 };
		uint64_t state = byte(&in) | (kind & 2 ? 0x100 : 0);
		int next = (int8_t)byte(&in), cpu = kind >> 2 & 3;
		uint64_t step = byte(&in) << 16;
		step |= byte(&in) << 8;
		step |= byte(&in);
		int prev = kind & 16 ? next ^ 1 : tid;
		struct sched_switch sw;
		struct wait *w;

		uint64_t t;

		if (in.short_read)
			break;
		if (kind & 128) {
			t = now > step ? now - step : 0;
		} else {
			now += step;
			t = now;
		}
		memcpy(raw + 24, &(int32_t){ prev }, 4);
		memcpy(raw + 32, &state, 8);
		memcpy(raw + 56, &(int32_t){ next }, 4);
		offcpu_tick(o, t);
		m.last = now;
		FUZZ_CHECK(offcpu_decode(o, raw, sizeof(raw), &sw), "decode failed");
		FUZZ_CHECK(sw.prev_pid == prev && sw.next_pid == next && sw.prev_state == state,
			   "decoded %d %d %lu", sw.prev_pid, sw.next_pid,
			   (unsigned long)sw.prev_state);
		FUZZ_CHECK(!offcpu_decode(o, raw, 59, &sw), "a short record decoded");

		offcpu_switch_in(o, next, t);
		w = model_wait(&m, next);
		if (model_saw(&m, w, next, t) && w->pending)
			model_credit(&m, w, t);

		offcpu_switch_unseen(o, prev, cpu, t);
		w = model_wait(&m, prev);
		uint64_t *last = g_hash_table_lookup(m.cpu, GINT_TO_POINTER(cpu));
		bool late = !model_saw(&m, w, prev, t) && prev;
		if (!late) {
			if (w->pending && last && *last >= w->since)
				model_credit(&m, w, *last);
			w->pending = false;
		}
		if (!last) {
			last = g_new0(uint64_t, 1);
			g_hash_table_insert(m.cpu, GINT_TO_POINTER(cpu), last);
		}
		if (t > *last)
			*last = t;

		/* filter_event(): the waits are the switch's pids', the stack
		 * the sample's; a sample without a tid gives none */
		if (!offcpu_wanted(o, &sw) || tid <= 0)
			continue;
		/* the documented states */
		uint64_t stb = state & 0xff;
		FUZZ_CHECK(prev > 0 && !(stb & 0x30), "a dead or idle task waited for");
		FUZZ_CHECK(stb ? (stb & 1 ? states & OFFCPU_S : stb & 2 ? states & OFFCPU_D
				       : states & OFFCPU_OTHER) : states & OFFCPU_R,
			   "state %#lx is not one counted", (unsigned long)state);
		offcpu_switch_out(o, prev, prev, t, collapser_table(pr->c), key->str, key->len,
				  &pr->samples);
		if (!late) {
			w->pending = true;
			w->since = t;
		}
	}

	if (offcpu) {
		GHashTableIter it;
		gpointer v;
		uint64_t tail, counted, short_waits, unseen, model_tail = 0, model_tail_ns = 0;

		g_hash_table_iter_init(&it, m.waits);
		while (g_hash_table_iter_next(&it, NULL, &v)) {
			struct wait *w = v;
			if (!w->pending)
				continue;
			model_tail++;
			model_tail_ns += m.last > w->since ? m.last - w->since : 0;
			model_credit(&m, w, m.last);
		}
		tail = offcpu_finish(o, &tail_ns);
		FUZZ_CHECK(tail == model_tail && tail_ns == model_tail_ns,
			   "tail %lu threads %lu ns, model %lu %lu", (unsigned long)tail,
			   (unsigned long)tail_ns, (unsigned long)model_tail,
			   (unsigned long)model_tail_ns);
		offcpu_stats(o, &counted, &short_waits, &unseen);
		FUZZ_CHECK(counted == m.counted, "%lu waits counted, model %lu",
			   (unsigned long)counted, (unsigned long)m.counted);
		FUZZ_CHECK(offcpu_late(o) == m.late, "%lu late switches, model %lu",
			   (unsigned long)offcpu_late(o), (unsigned long)m.late);
		/* no thread's waits add up to more than the span of the times */
		uint64_t first, last_t, most;
		int most_tid, most_perf;
		if (offcpu_longest(o, &most_tid, &most_perf, &most))
			FUZZ_CHECK(offcpu_span(o, &first, &last_t) && most <= last_t - first,
				   "thread %d off-CPU %lu ns in a span of %lu", most_tid,
				   (unsigned long)most, (unsigned long)(last_t - first));
		want_total = (fk_count)m.ns * (FK_COUNT_ONE / 1000);
	}

	/* the tables hold what was counted */
	{
		GHashTableIter it;
		gpointer v;
		fk_count got = 0;
		uint64_t samples = 0;
		struct expect x = { .round_us = offcpu };

		g_hash_table_iter_init(&it, seen);
		while (g_hash_table_iter_next(&it, NULL, &v)) {
			struct profile *pr = v;
			struct fold_table *t = collapser_table(pr->c);
			got += fold_table_total(t, 0);
			samples += pr->samples;
			if (!split || (pr->samples && fold_table_size(t)))
				fold_table_foreach(t, sum_entry, &x);
		}
		FUZZ_CHECK(got == want_total, "the tables hold a different total");
		if (!offcpu) {
			FUZZ_CHECK(samples == nsamples, "%lu samples, profiles count %lu",
				   (unsigned long)nsamples, (unsigned long)samples);
			FUZZ_CHECK(skip_log_total(skips) == nempty, "%lu empty stacks, %lu skips",
				   (unsigned long)nempty, (unsigned long)skip_log_total(skips));
		} else {
			FUZZ_CHECK(samples == m.counted, "%lu waits, profiles count %lu",
				   (unsigned long)m.counted, (unsigned long)samples);
		}

		/* the output */
		uint64_t dropped = 0;
		size_t nlines = 0, nstacks;
		nstacks = profiles_finish(p, NULL, NULL, NULL, offcpu, &dropped);
		FUZZ_CHECK(nstacks == x.stacks, "%zu stacks to write, %zu expected", nstacks, x.stacks);
		if (!split) {
			char *buf = NULL;
			size_t buflen = 0;
			FILE *out = open_memstream(&buf, &buflen);
			FUZZ_CHECK(profiles_write(p, out, "<mem>", &err) == 0,
				   "write failed: %s", err ? err->message : "?");
			fclose(out);
			fk_count t = read_back(fuzz_file2(buf, buflen), offcpu, &nlines);
			FUZZ_CHECK(t == x.total, "the output's total differs");
			free(buf);
		} else {
			size_t nfiles = 0, nfound = 0, nindex = 0;
			fk_count t = 0;
			DIR *d;
			struct dirent *de;
			char *path, *index = NULL;

			FUZZ_CHECK(profiles_write_split(p, g_dir, offcpu ? "us" : "ns", &nfiles, &err) == 0,
				   "split write failed: %s", err ? err->message : "?");
			d = opendir(g_dir);
			FUZZ_CHECK(d, "cannot open the split directory");
			while ((de = readdir(d))) {
				if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
					continue;
				FUZZ_CHECK(de->d_name[0] != '.', "hidden file '%s' left", de->d_name);
				FUZZ_CHECK(de->d_type == DT_REG, "'%s' is not a file", de->d_name);
				path = g_strdup_printf("%s/%s", g_dir, de->d_name);
				if (strcmp(de->d_name, "index.tsv") == 0) {
					FUZZ_CHECK(g_file_get_contents(path, &index, NULL, NULL),
						   "cannot read index.tsv");
				} else {
					FUZZ_CHECK(g_str_has_suffix(de->d_name, ".folded"),
						   "stray file '%s'", de->d_name);
					t += read_back(path, offcpu, &nlines);
					nfound++;
				}
				unlink(path);
				g_free(path);
			}
			closedir(d);
			FUZZ_CHECK(index, "no index.tsv");
			FUZZ_CHECK(nfound == nfiles, "%zu files said, %zu found", nfiles, nfound);
			FUZZ_CHECK(t == x.total, "the split files' total differs");
			/* one line per file, seven tab-separated cells, no control
			 * character; a newline at the end */
			FUZZ_CHECK(g_str_has_suffix(index, "\n"), "index.tsv does not end with a newline");
			char **lines = g_strsplit(index, "\n", -1);
			for (char **l = lines + 1; *l && **l; l++, nindex++) {
				char **cells = g_strsplit(*l, "\t", -1);
				FUZZ_CHECK(g_strv_length(cells) == 7, "index line '%s'", *l);
				for (const char *c = *l; *c; c++)
					FUZZ_CHECK(*c == '\t' || ((unsigned char)*c >= 0x20 && *c != 0x7f),
						   "index line '%s' holds a control character", *l);
				FUZZ_CHECK(!strchr(cells[0], '/') && cells[0][0] != '.',
					   "index names '%s'", cells[0]);
				g_strfreev(cells);
			}
			FUZZ_CHECK(nindex == nfiles, "index lists %zu of %zu files", nindex, nfiles);
			g_strfreev(lines);
			g_free(index);

			/* every name, not only those written */
			g_hash_table_iter_init(&it, seen);
			while (g_hash_table_iter_next(&it, NULL, &v)) {
				struct profile *pr = v;
				char *fn = profiles_file_name(pr->name, pr->pid);
				FUZZ_CHECK(*fn && fn[0] != '.' && fn[0] != '-' && !strchr(fn, '/') &&
					   strcmp(fn, "..") != 0, "file name '%s'", fn);
				g_free(fn);
			}
		}
		FUZZ_CHECK(dropped == x.zero, "%lu stacks dropped, %lu round to 0",
			   (unsigned long)dropped, (unsigned long)x.zero);
		FUZZ_CHECK(nlines == x.stacks, "%zu stacks written, %zu expected",
			   nlines, x.stacks);
	}

	stacks_flush(sk2);
	FUZZ_CHECK(fold_table_size(by_sample) == fold_table_size(by_chain),
		   "stacks_sample() counted %zu stacks, stacks_chain() made %zu",
		   fold_table_size(by_sample), fold_table_size(by_chain));
	fold_table_foreach(by_chain, same_entry, by_sample);
	profiles_free(p);
	stacks_free(sk);
	stacks_free(sk2);
	fold_table_free(by_sample);
	fold_table_free(by_chain);
	frame_cache_free(fc);
	frame_cache_free(fc2);
	g_hash_table_destroy(g_fake);
	if (offcpu) {
		offcpu_free(o);
		g_hash_table_destroy(m.waits);
		g_hash_table_destroy(m.cpu);
	}
out:
	g_clear_error(&err);
	g_hash_table_destroy(seen);
	g_string_free(key, TRUE);
	g_string_free(key2, TRUE);
	skip_log_free(skips);
	return 0;
}
