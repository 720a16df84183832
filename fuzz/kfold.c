/*
 * fuzz/kfold.c - folded stacks through kfold's kfolder (lib/transform/stackops.h),
 * summed into a fold_table as the kfold tool does.
 *
 * Input: one option byte, a first line "REGEX<TAB>NAME[<TAB>REGEX<TAB>NAME]"
 * giving the -e REGEX --as NAME rules, then folded text.  Bits: 1 --kernel,
 * 2 --keep-entry, 4 --unknown, 8 --drop-kernel, 16 no placeholders, 32 and
 * 64 how many rules of the first line to use (0, 1 or 2).  A rule the
 * kfolder refuses (bad regex, bad name) ends the input: that is a usage
 * error, not a bug.
 *
 * Checked for every stack read: the result is non-empty, holds no newline,
 * has an empty frame only if the input had one; without rules (the man
 * page's promise) folding the result again changes nothing.  For the whole
 * input: the table's total is the sum of the counts read (kfold merges,
 * never loses or invents samples), and the table written out reads back
 * through folded_reader with no skips and the same stacks and counts.
 */
#include "fuzz.h"

#include "core/count.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "transform/stackops.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kfold_opts ko = KFOLD_OPTS_INIT;
	struct kfold_rule rules[2];
	struct kfolder *k;
	struct folded_reader *fr;
	struct folded_line fl;
	struct fold_table *t, *t2, *ts;
	struct skip_log *skips;
	GError *err = NULL;
	const char *nl, *rest;
	char *line, **f;
	fk_count in0 = 0, in1 = 0;
	bool overflow = false;
	size_t restlen, ndiff = 0;
	uint8_t opt;
	int rc;

	if (size < 1)
		return 0;
	opt = data[0];
	data++, size--;
	nl = memchr(data, '\n', size);
	line = g_strndup((const char *)data, nl ? (size_t)(nl - (const char *)data) : size);
	rest = nl ? nl + 1 : (const char *)data + size;
	restlen = size - (size_t)(rest - (const char *)data);
	if (strlen(line) != (nl ? (size_t)(nl - (const char *)data) : size)) {
		g_free(line);	/* a NUL in the rules: argv cannot hold one */
		return 0;
	}

	ko.kernel = opt & 1;
	ko.keep_entry = opt & 2;
	ko.unknown = opt & 4;
	ko.drop_kernel = opt & 8;
	ko.placeholders = !(opt & 16);
	f = g_strsplit(line, "\t", 4);
	for (size_t i = 0; i < 2 && i < (size_t)((opt >> 5) & 3); i++) {
		if (!f[2 * i] || !f[2 * i + 1])
			break;
		rules[i].regex = f[2 * i];
		rules[i].name = f[2 * i + 1];
		ko.nrules = i + 1;
	}
	ko.rules = rules;
	k = kfolder_new(&ko, &err);
	if (!k) {
		FUZZ_CHECK(err, "kfolder_new failed without an error");
		g_error_free(err);
		g_strfreev(f);
		g_free(line);
		return 0;
	}

	t = fold_table_new();
	ts = fold_table_new();	/* the same additions, queued (kfold's own path) */
	skips = skip_log_new();
	fr = folded_reader_open(fuzz_file(rest, restlen), skips, &err);
	FUZZ_CHECK(fr && !err, "cannot open the memfd");
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		size_t n, n2;
		const char *s = kfolder_apply(k, fl.stack, fl.len, &n);
		char *once;

		FUZZ_CHECK(n > 0, "empty result for '%.*s'", (int)fl.len, fl.stack);
		fuzz_touch(s, n);
		FUZZ_CHECK(!memchr(s, '\n', n), "newline in '%.*s'", (int)n, s);
		FUZZ_CHECK(!fuzz_has_empty_frame(s, n) || fuzz_has_empty_frame(fl.stack, fl.len),
			   "'%.*s' became '%.*s', with an empty frame",
			   (int)fl.len, fl.stack, (int)n, s);
		if (ko.nrules == 0) {
			once = g_strndup(s, n);
			const char *s2 = kfolder_apply(k, once, n, &n2);
			FUZZ_CHECK(n2 == n && memcmp(s2, once, n) == 0,
				   "not idempotent: '%.*s' -> '%s' -> '%.*s'",
				   (int)fl.len, fl.stack, once, (int)n2, s2);
			g_free(once);
			s = kfolder_apply(k, fl.stack, fl.len, &n);
		}
		fold_table_add2(t, s, n, fl.count[0], fl.count[1]);
		fold_table_add2_soon(ts, s, n, fl.count[0], fl.count[1], false);
		if (in0 > FK_COUNT_ONE * (fk_count)UINT64_MAX * 4 ||
		    in1 > FK_COUNT_ONE * (fk_count)UINT64_MAX * 4)
			overflow = true;
		in0 += fl.count[0];
		in1 += fl.count[1];
		ndiff += fl.ncounts == 2;
	}
	FUZZ_CHECK((rc < 0) == (err != NULL), "rc %d but err %p", rc, (void *)err);
	g_clear_error(&err);
	folded_reader_free(fr);

	if (!overflow) {
		FUZZ_CHECK(fold_table_total(t, 0) == in0 && fold_table_total(t, 1) == in1,
			   "the table's totals differ from the input's");
	}

	/* the output is what the next filter reads: it must read back whole */
	size_t nst;
	struct fold_entry **v = fold_table_sorted(t, &nst);

	FUZZ_CHECK(fold_table_size(ts) == nst, "%zu stacks queued, %zu added",
		   fold_table_size(ts), nst);
	for (size_t i = 0; i < nst; i++) {
		const struct fold_entry *q = fold_table_find(ts, v[i]->stack, v[i]->len);

		FUZZ_CHECK(q && q->count[0] == v[i]->count[0] && q->count[1] == v[i]->count[1],
			   "'%.*s': the queued addition's counts differ", (int)v[i]->len, v[i]->stack);
	}
	fold_table_free(ts);
	bool readable = !overflow;
	for (size_t i = 0; i < nst; i++)
		if (v[i]->count[0] > (fk_count)UINT64_MAX * FK_COUNT_ONE ||
		    v[i]->count[1] > (fk_count)UINT64_MAX * FK_COUNT_ONE ||
		    fuzz_folded_ambiguous(v[i]->stack, v[i]->len))
			readable = false;
	if (readable) {
		char *buf = NULL;
		size_t buflen = 0;
		FILE *out = open_memstream(&buf, &buflen);
		struct skip_log *skips2 = skip_log_new();

		FUZZ_CHECK(fold_table_write(t, out, ndiff ? 2 : 1, &err) == 0, "write failed");
		fclose(out);
		t2 = fold_table_new();
		fr = folded_reader_open(fuzz_file2(buf, buflen), skips2, &err);
		FUZZ_CHECK(fr, "cannot open the second memfd");
		while ((rc = folded_reader_next(fr, &fl, &err)) > 0)
			fold_table_add2(t2, fl.stack, fl.len, fl.count[0], fl.count[1]);
		FUZZ_CHECK(rc == 0, "the output does not read back: %s",
			   err ? err->message : "?");
		if (skip_log_total(skips2)) {
			char *why = skip_log_summary(skips2, NULL);
			FUZZ_CHECK(0, "output lines skipped: %s; the output:\n%.800s", why, buf);
		}
		/* a stack that ends in a blank (from "a ;b_[k]" with
		 * --drop-kernel: "a ") reads back with it, as written */
		FUZZ_CHECK(fold_table_size(t2) == nst, "%zu stacks written, %zu read back",
			   nst, fold_table_size(t2));
		for (size_t i = 0; i < nst; i++) {
			struct fold_entry *e = fold_table_find(t2, v[i]->stack, v[i]->len);
			FUZZ_CHECK(e, "stack '%s' lost in the round trip", v[i]->stack);
			FUZZ_CHECK(e->count[0] == v[i]->count[0] && e->count[1] == v[i]->count[1],
				   "stack '%s' changed its counts in the round trip", v[i]->stack);
		}
		folded_reader_free(fr);
		fold_table_free(t2);
		skip_log_free(skips2);
		free(buf);
	}
	g_free(v);
	skip_log_free(skips);
	fold_table_free(t);
	kfolder_free(k);
	g_strfreev(f);
	g_free(line);
	return 0;
}
