/*
 * fuzz/collapsed.h - what every collapser's table must be, whatever its
 * input: the checks the dtrace, stap, bpftrace and gperf targets share.
 *
 *	fuzz_check_collapsed(table);
 *
 * Every stack is non-empty, holds no line break, no empty frame (";;",
 * or ';' first or last); the entries are distinct, sorted, and sum to the
 * table's total; and the written table is valid folded input: it reads
 * back through folded_reader with no skips and the same stacks and
 * counts, unless a count is past 2^64-1.  No stack is one the format
 * cannot carry (fuzz_folded_ambiguous(), README.md): the collapsers' shared
 * naming rules (lib/collapse/framename.h) never make one.
 */
#ifndef FOLDKIT_FUZZ_COLLAPSED_H
#define FOLDKIT_FUZZ_COLLAPSED_H

#include "fuzz.h"

#include "core/folded.h"
#include "core/foldtable.h"

static void fuzz_check_collapsed(struct fold_table *t)
{
	size_t n;
	struct fold_entry **v = fold_table_sorted(t, &n);
	struct fold_table *want = fold_table_new(), *got = fold_table_new();
	bool readable = true;
	fk_count sum = 0;
	GError *err = NULL;

	for (size_t i = 0; i < n; i++) {
		struct fold_entry *e = v[i];
		size_t l = e->len;

		FUZZ_CHECK(e->len > 0, "empty stack");
		FUZZ_CHECK(!memchr(e->stack, '\n', e->len), "line break in '%s'", e->stack);
		FUZZ_CHECK(e->stack[0] != ';' && e->stack[e->len - 1] != ';' &&
			   !g_strstr_len(e->stack, (gssize)e->len, ";;"),
			   "empty frame in '%s'", e->stack);
		if (i) {
			size_t m = v[i - 1]->len < e->len ? v[i - 1]->len : e->len;
			int c = memcmp(v[i - 1]->stack, e->stack, m);
			FUZZ_CHECK(c < 0 || (c == 0 && v[i - 1]->len < e->len),
				   "entries %zu and %zu out of order or equal", i - 1, i);
		}
		sum += e->count[0];
		FUZZ_CHECK(!fuzz_folded_ambiguous(e->stack, e->len),
			   "a stack the folded format cannot carry: '%s'", e->stack);
		if (e->count[0] > (fk_count)UINT64_MAX * FK_COUNT_ONE)
			readable = false;
		while (l > 0 && fuzz_is_blank(e->stack[l - 1]))
			l--;
		if (l == 0)
			readable = false;	/* a stack of blanks: read as none */
		else	/* trailing blanks are the leaf's: read back as written */
			fold_table_add(want, e->stack, e->len, e->count[0]);
	}
	FUZZ_CHECK(v[n] == NULL, "sorted array not NULL-terminated");
	FUZZ_CHECK(sum == fold_table_total(t, 0), "entries do not sum to the total");
	if (readable) {
		char *buf = NULL;
		size_t buflen = 0;
		FILE *out = open_memstream(&buf, &buflen);
		struct skip_log *skips = skip_log_new();
		struct folded_reader *fr;
		struct folded_line fl;
		int rc;

		FUZZ_CHECK(fold_table_write(t, out, 1, &err) == 0, "write failed");
		fclose(out);
		fr = folded_reader_open(fuzz_file2(buf, buflen), skips, &err);
		FUZZ_CHECK(fr, "cannot open the second memfd");
		while ((rc = folded_reader_next(fr, &fl, &err)) > 0)
			fold_table_add(got, fl.stack, fl.len, fl.count[0]);
		FUZZ_CHECK(rc == 0, "the output does not read back: %s",
			   err ? err->message : "?");
		if (skip_log_total(skips)) {
			char *why = skip_log_summary(skips, NULL);
			FUZZ_CHECK(0, "output lines skipped: %s; the output:\n%.800s", why, buf);
		}
		FUZZ_CHECK(fold_table_size(got) == fold_table_size(want),
			   "%zu stacks written, %zu read back", fold_table_size(want),
			   fold_table_size(got));
		for (size_t i = 0; i < n; i++) {
			struct fold_entry *w, *g;
			w = fold_table_find(want, v[i]->stack, v[i]->len);
			g = fold_table_find(got, v[i]->stack, v[i]->len);
			FUZZ_CHECK(g, "stack '%s' lost in the round trip", v[i]->stack);
			FUZZ_CHECK(g->count[0] == w->count[0], "stack '%s' changed its count",
				   v[i]->stack);
		}
		folded_reader_free(fr);
		skip_log_free(skips);
		free(buf);
	}
	fold_table_free(want);
	fold_table_free(got);
	g_free(v);
}

/* An error names the file it is about (the memfd's /proc/self/fd path). */
static inline void fuzz_check_error(int rc, GError **err)
{
	FUZZ_CHECK((rc < 0) == (*err != NULL), "rc %d but err %p", rc, (void *)*err);
	if (*err) {
		FUZZ_CHECK(strncmp((*err)->message, "/proc/self/fd/", 14) == 0,
			   "error does not name the file: %s", (*err)->message);
		g_clear_error(err);
	}
}

#endif
