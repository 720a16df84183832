/*
 * fuzz/pprof.c - pprof profiles (gzip or raw profile.proto) through
 * pprofread into folded stacks, and those back through fold2pprof's
 * writer.
 *
 * Input: one option byte, then the profile's bytes.  Bit 1 asks for
 * --lines, bit 2 --addrs, bit 4 --tagroot=comm,pid,tid, bit 8 an output
 * limit of 4 KiB (else 1 MiB, so that a small input declaring a large
 * output reaches it), bits 16-128 the sample index (modulo the number of
 * sample types).
 *
 * Properties: a profile is accepted or refused whole, with an error
 * naming it; pprofread's own decoder agrees with protobuf-c's on which
 * bytes decode as profile.proto; an accepted one collapses, or is refused
 * whole past a limit of bounds.h (an FK_ERROR_RANGE naming it), never
 * more: the distinct stacks' bytes stay within the output limit, each
 * stack within BOUNDS_MAX_FRAMES frames; every stack is non-empty, one
 * line (no '\n'), without NUL bytes, not a comment (no leading '#');
 * writing the table and reading it back gives the same stacks and counts
 * (but the stacks the folded format cannot carry, see fuzz.h); and the
 * table written as a pprof profile by lib/export/pprof.c and read again
 * gives the same table, as fold2pprof | pprof-collapse promises (for
 * names that are UTF-8, the writer makes others so; and for non-empty
 * frames, an empty one comes back "-").
 */
#include "fuzz.h"

#include "collapse/bounds.h"
#include "collapse/pprofread.h"
#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "core/jsonesc.h"
#include "export/pprof.h"
#include "gen/profile.pb-c.h"

#define MAX_BYTES ((size_t)16 << 20)

static bool same_tables(struct fold_table *a, struct fold_table *b)
{
	size_t na, nb;
	struct fold_entry **ea = fold_table_sorted(a, &na), **eb = fold_table_sorted(b, &nb);
	bool same = na == nb;

	for (size_t i = 0; same && i < na; i++)
		same = ea[i]->len == eb[i]->len && memcmp(ea[i]->stack, eb[i]->stack, ea[i]->len) == 0 &&
		       ea[i]->count[0] == eb[i]->count[0];
	g_free(ea);
	g_free(eb);
	return same;
}

/* Writes t as folded text and reads it back into a new table. */
static void folded_round_trip(struct fold_table *t)
{
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&buf, &len);
	struct fold_table *back = fold_table_new(), *want = fold_table_new();
	struct skip_log *skips = skip_log_new();
	struct folded_reader *fr;
	struct folded_line fl;
	struct fold_entry **e = fold_table_sorted(t, &n);
	GError *err = NULL;

	FUZZ_CHECK(fold_table_write(t, f, 1, &err) == 0, "write failed");
	fclose(f);
	fr = folded_reader_open(fuzz_file2(buf, len), skips, &err);
	FUZZ_CHECK(fr, "cannot open the memfd");
	while (folded_reader_next(fr, &fl, &err) > 0)
		fold_table_add(back, fl.stack, fl.len, fl.count[0]);
	FUZZ_CHECK(!err, "reading back failed: %s", err->message);
	folded_reader_free(fr);
	bool comparable = true;

	for (size_t i = 0; i < n; i++) {
		size_t l = e[i]->len;

		/* a stack's trailing blanks stay its own: only the last blank
		 * before the count separates (folded.h); see fuzz.h for the
		 * rest */
		if (l == 0 || fuzz_folded_ambiguous(e[i]->stack, l) ||
		    e[i]->count[0] > (fk_count)UINT64_MAX * FK_COUNT_ONE)
			comparable = false;
		else
			fold_table_add(want, e[i]->stack, l, e[i]->count[0]);
	}
	if (comparable) {
		FUZZ_CHECK(skip_log_total(skips) == 0, "lines skipped reading the table back");
		FUZZ_CHECK(same_tables(want, back), "the folded text read back differs");
	}
	fold_table_free(back);
	fold_table_free(want);
	skip_log_free(skips);
	g_free(e);
	free(buf);
}

/* Writes t as a pprof profile, reads it back: the same table. */
static void pprof_round_trip(struct fold_table *t)
{
	struct pprof_builder *b = pprof_new("samples", "count");
	struct fold_entry **e;
	size_t n;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	GError *err = NULL;
	struct pprof_profile *p;
	struct fold_table *back;
	struct pprof_collapse_opts o = PPROF_COLLAPSE_OPTS_INIT;

	e = fold_table_sorted(t, &n);
	for (size_t i = 0; i < n; i++) {
		/* what pprof cannot carry: bytes that are not UTF-8, values
		 * past 2^63-1 */
		/* (and empty frames: they come back as "-", see
		 * frame_name_append_text()) */
		if (!fk_utf8_ok(e[i]->stack, e[i]->len) || fuzz_has_empty_frame(e[i]->stack, e[i]->len) ||
		    e[i]->count[0] > (fk_count)INT64_MAX * FK_COUNT_ONE) {
			g_free(e);
			pprof_free(b);
			return;
		}
		FUZZ_CHECK(pprof_add_folded(b, e[i]->stack, e[i]->len, e[i]->count[0], true, &err) == 0,
			   "pprof_add_folded: %s", err->message);
	}
	g_free(e);
	f = open_memstream(&buf, &len);
	FUZZ_CHECK(pprof_write(b, f, "mem", &err) == 0, "pprof_write: %s", err->message);
	fclose(f);
	FUZZ_CHECK(pprof_replaced(b) == 0, "names changed though they were UTF-8");
	pprof_free(b);
	p = pprof_profile_parse(buf, len, "mem", 0, &err);
	FUZZ_CHECK(p, "our own profile is refused: %s", err->message);
	o.max_output = UINT64_MAX;	/* t was within a limit already */
	back = pprof_collapse(p, &o, NULL, &err);
	FUZZ_CHECK(back, "collapse failed: %s", err->message);
	FUZZ_CHECK(same_tables(t, back), "fold2pprof | pprof-collapse changed the stacks");
	fold_table_free(back);
	pprof_profile_free(p);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "comm", "pid", "tid" };
	struct pprof_collapse_opts o = PPROF_COLLAPSE_OPTS_INIT;
	struct pprof_profile *p;
	struct fold_table *t;
	struct skip_log *skips;
	struct fold_entry **e;
	size_t n;
	GError *err = NULL;
	uint8_t opt;

	if (size < 1)
		return 0;
	opt = data[0];
	p = pprof_profile_parse(data + 1, size - 1, "fuzz", MAX_BYTES, &err);
	FUZZ_CHECK(!p == !!err, "a result and an error, or neither");
	if (size > 3 && !(data[1] == 0x1f && data[2] == 0x8b)) {
		/* the same bytes through protobuf-c: decoded alike */
		Perftools__Profiles__Profile *m =
			perftools__profiles__profile__unpack(NULL, size - 1, data + 1);

		if (p)
			FUZZ_CHECK(m, "accepted, but protobuf-c does not decode it");
		else if (strstr(err->message, "does not decode"))
			FUZZ_CHECK(!m, "protobuf-c decodes what pprofread does not");
		if (m)
			perftools__profiles__profile__free_unpacked(m, NULL);
	}
	if (!p) {
		FUZZ_CHECK(strncmp(err->message, "fuzz: ", 6) == 0,
			   "error does not name the input: %s", err->message);
		g_error_free(err);
		return 0;
	}
	FUZZ_CHECK(pprof_profile_types(p) > 0, "accepted without sample types");
	o.lines = opt & 1;
	o.addrs = opt & 2;
	if (opt & 4) {
		o.tagroot = keys;
		o.ntagroot = 3;
	}
	o.sample_index = (int)((opt >> 4) % pprof_profile_types(p));
	o.max_output = opt & 8 ? 4096 : 1u << 20;
	skips = skip_log_new();
	t = pprof_collapse(p, &o, skips, &err);
	FUZZ_CHECK(!t == !!err, "a table and an error, or neither");
	if (!t) {
		FUZZ_CHECK(g_error_matches(err, FK_ERROR, FK_ERROR_RANGE) &&
			   strncmp(err->message, "fuzz: ", 6) == 0,
			   "collapse failed other than on a limit: %s", err->message);
		g_error_free(err);
		skip_log_free(skips);
		pprof_profile_free(p);
		return 0;
	}
	e = fold_table_sorted(t, &n);
	for (size_t i = 0, bytes = 0, frames; i < n; i++) {
		FUZZ_CHECK(e[i]->len > 0, "empty stack");
		FUZZ_CHECK(!memchr(e[i]->stack, '\n', e[i]->len), "a line break in a stack");
		FUZZ_CHECK(!memchr(e[i]->stack, '\0', e[i]->len), "a NUL byte in a stack");
		FUZZ_CHECK(e[i]->stack[0] != '#', "a stack reads as a comment");
		FUZZ_CHECK(e[i]->count[0] >= 0, "negative count");
		bytes += e[i]->len + 1;
		FUZZ_CHECK(bytes <= o.max_output, "%zu bytes of stacks, past the limit of %" G_GUINT64_FORMAT,
			   bytes, o.max_output);
		frames = 1;
		for (size_t k = 0; k < e[i]->len; k++)
			frames += e[i]->stack[k] == ';';
		FUZZ_CHECK(frames <= BOUNDS_MAX_FRAMES, "a stack of %zu frames", frames);
		fuzz_touch(e[i]->stack, e[i]->len);
	}
	g_free(e);
	folded_round_trip(t);
	pprof_round_trip(t);
	fold_table_free(t);
	skip_log_free(skips);
	pprof_profile_free(p);
	return 0;
}
