/*
 * fuzz/offwake.c - the perf plugin's off-wake accounting (offwake.c)
 * without perf: a sched_waking format with "pid" placed and sized by the
 * input, raw records of any length decoded by it, and timelines of
 * switch-outs, runs and wakings, some late, driven as foldkit.c drives
 * them.
 *
 * Input: a format byte (pid's offset & 31, its size 1, 2, 4 or 8 from bits
 * 32|64), a min= byte (x 64 ns), then events: a kind byte (& 3: 0 sleep,
 * 1 run, 2 waking, 3 waking of a raw record: a length byte & 63, then the
 * bytes), a tid byte (& 7, 0 included), a 16-bit time step in ns (kind bit
 * 4: the step back from the latest time, a late record); a waking names
 * its waker by a length byte & 15 and that many bytes (any, ';' too).
 *
 * Checked: a raw record is decoded only when it holds the whole field; the
 * table holds exactly the waits a plain model of offwake.h's rules counts
 * (as many, and their nanoseconds), each under the wakee's key, ";--",
 * and the waker's ';'-separated parts in reverse order; no thread's waits
 * add up to more than the timeline.
 */
#include "fuzz.h"

#include "offwake.h"

#include <inttypes.h>

struct in {
	const uint8_t *p, *end;
};

static unsigned byte(struct in *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

struct mwait {
	uint64_t since, seen;
	bool waiting;
};

static const char *KEYS[8] = { "t0;a", "t1;b", "t2;c", "t3;d;e", "t4", "t5;f", "t6;g", "t7;h" };

/* "a;b;c" -> "c;b;a" */
static void reverse_parts(const char *s, size_t len, GString *out)
{
	size_t end = len;

	while (end > 0) {
		const char *semi = memrchr(s, ';', end);
		size_t from = semi ? (size_t)(semi - s) + 1 : 0;

		g_string_append_c(out, ';');
		g_string_append_len(out, s + from, (gssize)(end - from));
		end = semi ? (size_t)(semi - s) : 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, data + size };
	unsigned fb = byte(&in), off = fb & 31, sz = 1u << ((fb >> 5) & 3);
	uint64_t min_ns = (uint64_t)byte(&in) * 64, time = 1000000, first = time, ns_model = 0;
	uint64_t counted_model = 0, counter = 0;
	static const char *types[] = { "u8", "u16", "int", "long" };
	struct mwait m[8] = { { 0 } };
	struct fold_table *t = fold_table_new(), *want = fold_table_new();
	GString *fmt = g_string_new(NULL), *key = g_string_new(NULL);
	GError *err = NULL;
	struct offwake *w;
	struct offwake_stats st;
	const char *path;

	/* the field pid, after the common ones and a blank line */
	g_string_printf(fmt, "name: sched_waking\nID: 1\nformat:\n"
			"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n"
			"\tfield:%s pid;\toffset:%u;\tsize:%u;\tsigned:1;\n\n"
			"print fmt: \"pid=%%d\", REC->pid\n", types[(fb >> 5) & 3], off + 2, sz);
	path = fuzz_file(fmt->str, fmt->len);
	w = offwake_new(path, min_ns, &err);
	FUZZ_CHECK(w != NULL, "format refused: %s", err ? err->message : "?");
	while (in.p < in.end) {
		unsigned kind = byte(&in), tid = byte(&in) & 7;
		uint64_t step = byte(&in) | (uint64_t)byte(&in) << 8, at;
		struct mwait *mw = &m[tid];

		at = (kind & 4) && time - step >= first ? time - step : time + step;
		if (at > time)
			time = at;
		switch (kind & 3) {
		case 0:
			offwake_sleep(w, (int)tid, at, t, KEYS[tid], strlen(KEYS[tid]), &counter);
			if (tid && at >= mw->seen) {
				mw->seen = at;
				mw->since = at;
				mw->waiting = true;
			}
			break;
		case 1:
			offwake_ran(w, (int)tid, at);
			if (tid && at >= mw->seen) {
				mw->seen = at;
				mw->waiting = false;
			}
			break;
		default: {
			unsigned n = byte(&in) & 15;
			char waker[16];
			int got = (int)tid;

			for (unsigned i = 0; i < n; i++)
				waker[i] = (char)byte(&in);
			if ((kind & 3) == 3) {
				unsigned len = byte(&in) & 63;
				uint8_t raw[64] = { 0 };
				bool ok;

				for (unsigned i = 0; i < len; i++)
					raw[i] = (uint8_t)byte(&in);
				ok = offwake_decode(w, raw, len, &got);
				FUZZ_CHECK(ok == (off + 2 + sz <= len), "decode of %u bytes, field at %u+%u: %d",
					   len, off + 2, sz, ok);
				if (!ok)
					break;
				if (got < 0 || got > 7)
					got = 0;
				mw = &m[got];
			}
			if (!offwake_waiting(w, got, at))
				break;
			FUZZ_CHECK(got && mw->waiting && at >= mw->since, "tid %d waited unmodelled", got);
			offwake_woken(w, got, at, waker, n);
			mw->seen = at;
			mw->waiting = false;
			if (at - mw->since >= min_ns) {
				g_string_assign(key, KEYS[got]);
				g_string_append(key, ";--");
				reverse_parts(waker, n, key);
				fold_table_add(want, key->str, key->len,
					       (fk_count)(at - mw->since) * (FK_COUNT_ONE / 1000));
				ns_model += at - mw->since;
				counted_model++;
			}
		}
		}
	}
	offwake_finish(w);
	offwake_stats(w, &st);
	FUZZ_CHECK(st.counted == counted_model && counter == counted_model,
		   "counted %" PRIu64 " (counter %" PRIu64 "), model %" PRIu64,
		   st.counted, counter, counted_model);
	FUZZ_CHECK(fold_table_size(t) == fold_table_size(want), "%zu stacks, model %zu",
		   fold_table_size(t), fold_table_size(want));
	{
		size_t n;
		struct fold_entry **e = fold_table_sorted(want, &n);

		for (size_t i = 0; i < n; i++) {
			struct fold_entry *got = fold_table_find(t, e[i]->stack, e[i]->len);

			FUZZ_CHECK(got && got->count[0] == e[i]->count[0], "stack %.*s",
				   (int)e[i]->len, e[i]->stack);
		}
		g_free(e);
	}
	{
		int tid;
		uint64_t ns;

		if (offwake_longest(w, &tid, &ns))
			FUZZ_CHECK(ns <= time - first && ns <= ns_model, "thread %d: %" PRIu64 " ns", tid, ns);
	}
	offwake_free(w);
	fold_table_free(t);
	fold_table_free(want);
	g_string_free(fmt, TRUE);
	g_string_free(key, TRUE);
	return 0;
}
