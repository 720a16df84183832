/* Unit tests for lib/: counts, folded lines, the stack table, the line
 * reader and the string map. */
#include "check.h"
#include "core/count.h"
#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "core/stacksort.h"
#include "core/linereader.h"
#include "core/strmap.h"
#include "core/textesc.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static const char *fmt(fk_count c)
{
	static char buf[FK_COUNT_BUFSZ + 1];
	buf[fk_count_format(c, buf)] = '\0';
	return buf;
}

static enum fk_count_status parse(const char *s, fk_count *c)
{
	return fk_count_parse(s, strlen(s), c);
}

static void test_counts(void)
{
	fk_count c = 0;

	CHECK(parse("0", &c) == FK_COUNT_OK && c == 0);
	CHECK(parse("17", &c) == FK_COUNT_OK && c == fk_count_from_u64(17));
	CHECK(parse("18446744073709551615", &c) == FK_COUNT_OK);
	CHECK_STR(fmt(c), "18446744073709551615");
	CHECK_STR(fmt(c + c), "36893488147419103230");	/* no 64-bit overflow */
	CHECK(parse("18446744073709551616", &c) == FK_COUNT_TOO_LARGE);
	CHECK(parse("99999999999999999999999", &c) == FK_COUNT_TOO_LARGE);
	CHECK(parse("-1", &c) == FK_COUNT_NEGATIVE);
	CHECK(parse("", &c) == FK_COUNT_EMPTY);
	CHECK(parse("abc", &c) == FK_COUNT_INVALID);
	CHECK(parse("12x", &c) == FK_COUNT_INVALID);
	CHECK(parse("1.2.3", &c) == FK_COUNT_INVALID);
	CHECK(parse(".", &c) != FK_COUNT_OK);
	CHECK(parse("+", &c) != FK_COUNT_OK);
	CHECK(parse("1.5", &c) == FK_COUNT_OK);
	CHECK_STR(fmt(c), "1.5");
	CHECK(parse("0.000000001", &c) == FK_COUNT_OK && c == 1);
	/* past nine decimals: rounded to nearest, ties to even */
	CHECK(parse("0.0000000001", &c) == FK_COUNT_OK && c == 0);
	CHECK(parse("0.0000000005", &c) == FK_COUNT_OK && c == 0);
	CHECK(parse("0.0000000015", &c) == FK_COUNT_OK && c == 2);
	CHECK(parse("0.00000000050000000001", &c) == FK_COUNT_OK && c == 1);
	CHECK(parse("0.0000000025", &c) == FK_COUNT_OK && c == 2);
	CHECK(parse("0.0000000026", &c) == FK_COUNT_OK && c == 3);
	CHECK(parse("1.9999999999", &c) == FK_COUNT_OK && c == 2 * FK_COUNT_ONE);
	CHECK(parse("3.14159265358979", &c) == FK_COUNT_OK);
	CHECK_STR(fmt(c), "3.141592654");
	CHECK(parse("2.50", &c) == FK_COUNT_OK);
	CHECK_STR(fmt(c), "2.5");
	CHECK(parse("3.", &c) == FK_COUNT_OK);
	CHECK_STR(fmt(c), "3");
	CHECK(parse(".25", &c) == FK_COUNT_OK);
	CHECK_STR(fmt(c), "0.25");
	/* 0.1 + 0.2 is exactly 0.3 here, unlike in binary floating point */
	{
		fk_count a, b;
		parse("0.1", &a);
		parse("0.2", &b);
		CHECK_STR(fmt(a + b), "0.3");
		CHECK_STR(fmt(a - b), "-0.1");
	}
	CHECK_STR(fmt(-fk_count_from_u64(5)), "-5");
}

static const char *folded(const char *line, struct folded_line *fl)
{
	return folded_parse(line, strlen(line), fl);
}

static void test_folded(void)
{
	struct folded_line fl;

	CHECK(folded("a;b 5", &fl) == NULL && fl.len == 3 && fl.ncounts == 1 &&
	      fl.count[0] == fk_count_from_u64(5));
	CHECK(folded("a;b 1 2", &fl) == NULL && fl.len == 3 && fl.ncounts == 2 &&
	      fl.count[0] == fk_count_from_u64(1) && fl.count[1] == fk_count_from_u64(2));
	CHECK(folded("a b;c\t3  ", &fl) == NULL && fl.len == 5 &&
	      fl.count[0] == fk_count_from_u64(3));
	/* only the last blank before the count separates: the leaf keeps
	 * the others, as flamegraph.pl reads it */
	CHECK(folded("a;f<unsigned long  5", &fl) == NULL && fl.len == 18 &&
	      fl.stack[17] == ' ' && fl.ncounts == 1);
	CHECK(folded("a;b \t 1 2", &fl) == NULL && fl.len == 5 && fl.ncounts == 2);
	CHECK(folded("a;b 0.5", &fl) == NULL && fl.count[0] == FK_COUNT_ONE / 2);
	CHECK_STR(folded("a;b", &fl), "missing count");
	CHECK_STR(folded("5", &fl), "missing stack");
	CHECK_STR(folded("a;b -1", &fl), "negative count");
	CHECK_STR(folded("a;b 1x", &fl), "count is not a number");
	CHECK_STR(folded("a;b 18446744073709551616", &fl), "count above 2^64-1");
	CHECK_STR(folded("# comment 1", &fl), "comment");
	/* the edges of the usual line's shortcut: it must read as the
	 * general parser does */
	CHECK(folded("a 1234567890123456789", &fl) == NULL && fl.len == 1 &&
	      fl.count[0] == fk_count_from_u64(1234567890123456789u));
	CHECK(folded("a 12345678901234567890", &fl) == NULL && fl.len == 1 &&
	      fl.count[0] == fk_count_from_u64(12345678901234567890u));
	CHECK(folded("a 007", &fl) == NULL && fl.count[0] == fk_count_from_u64(7));
	CHECK(folded("a\t5", &fl) == NULL && fl.len == 1 && fl.ncounts == 1);
	CHECK(folded("  a 5", &fl) == NULL && fl.len == 3 && fl.stack[2] == 'a');
	CHECK(folded("+ 5", &fl) == NULL && fl.len == 1 && fl.ncounts == 1);
	CHECK(folded("a. 5", &fl) == NULL && fl.len == 2 && fl.ncounts == 1);
	CHECK(folded("x1 5", &fl) == NULL && fl.len == 2 && fl.ncounts == 1 &&
	      fl.count[0] == fk_count_from_u64(5));
	CHECK(folded("x 1. 5", &fl) == NULL && fl.len == 1 && fl.ncounts == 2 &&
	      fl.count[0] == fk_count_from_u64(1));
	CHECK(folded("x +1 5", &fl) == NULL && fl.len == 1 && fl.ncounts == 2);
	CHECK_STR(folded("#a 5", &fl), "comment");
	CHECK_STR(folded(" 5", &fl), "missing stack");
}

static void count_entry(struct fold_entry *e, void *data)
{
	size_t *seen = data;

	seen[0]++;
	seen[1] += (size_t)e->count[1];
}

static void test_table(void)
{
	struct fold_table *t = fold_table_new();
	const char *keys[] = { "b", "a;b", "a", "\xff", "a;a", "B", "a;b" };
	const char *want[] = { "B", "a", "a;a", "a;b", "b", "\xff" };
	struct fold_entry **v;
	size_t n;

	for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
		fold_table_add(t, keys[i], strlen(keys[i]), fk_count_from_u64(i + 1));
	v = fold_table_sorted(t, &n);
	CHECK(n == 6);
	for (size_t i = 0; i < n && i < G_N_ELEMENTS(want); i++)
		CHECK_STR(v[i]->stack, want[i]);
	CHECK(v[n] == NULL);
	CHECK(fold_table_find(t, "a;b", 3)->count[0] == fk_count_from_u64(2 + 7));
	CHECK(fold_table_find(t, "zz", 2) == NULL);
	g_free(v);
	/* counts beyond 64 bits stay exact */
	fold_table_add(t, "big", 3, fk_count_from_u64(UINT64_MAX));
	fold_table_add(t, "big", 3, fk_count_from_u64(UINT64_MAX));
	CHECK_STR(fmt(fold_table_find(t, "big", 3)->count[0]), "36893488147419103230");
	/* many keys: growth keeps every entry */
	for (int i = 0; i < 100000; i++) {
		char k[32];
		int len = snprintf(k, sizeof(k), "k;%d", i);
		fold_table_add2(t, k, (size_t)len, 1, 2);
	}
	CHECK(fold_table_size(t) == 7 + 100000);
	CHECK(fold_table_find(t, "k;99999", 7)->count[1] == 2);
	/* every entry is visited, in blocks small and big */
	{
		size_t seen[2] = { 0, 0 };

		fold_table_foreach(t, count_entry, seen);
		CHECK(seen[0] == 7 + 100000 && seen[1] == 2 * 100000);
	}
	fold_table_free(t);

	/* the same stack in a row (added without a lookup), then one of the
	 * same length, a longer one, and the first again */
	t = fold_table_new();
	const char *row[] = { "x;y", "x;y", "x;z", "x;y", "x;yy", "x;yy", "x;y" };
	for (size_t i = 0; i < G_N_ELEMENTS(row); i++) {
		char copy[8];

		strcpy(copy, row[i]);	/* not the same pointer */
		fold_table_add2(t, copy, strlen(copy), fk_count_from_u64(1u << i), i);
	}
	CHECK(fold_table_size(t) == 3);
	CHECK(fold_table_find(t, "x;y", 3)->count[0] == fk_count_from_u64(1 + 2 + 8 + 64));
	CHECK(fold_table_find(t, "x;y", 3)->count[1] == 0 + 1 + 3 + 6);
	CHECK(fold_table_find(t, "x;z", 3)->count[0] == fk_count_from_u64(4));
	CHECK(fold_table_find(t, "x;yy", 4)->count[0] == fk_count_from_u64(16 + 32));
	CHECK(fold_table_total(t, 0) == fk_count_from_u64(127));
	CHECK(fold_table_total(t, 1) == 21);
	fold_table_free(t);
}

static int cmp_bytes(const void *a, const void *b)
{
	const GString *x = *(GString *const *)a, *y = *(GString *const *)b;
	size_t m = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->str, y->str, m);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/*
 * A random key for the sort tests: half share a long prefix (up to prefix
 * bytes of a typical stack), then up to 39 bytes from alphabet[0..k).
 */
static GString *random_key(GRand *rnd, const char *alphabet, int k, int prefix)
{
	GString *key = g_string_new(NULL);
	int len = g_rand_int_range(rnd, 0, 40);

	if (g_rand_boolean(rnd))	/* most keys share a prefix */
		g_string_append_len(key, "process-1234/1234;main;loop;work;more;and"
					 "more;and;more;frames;to;share;here;x", prefix);
	for (int j = 0; j < len; j++)
		g_string_append_c(key, alphabet[g_rand_int_range(rnd, 0, k)]);
	return key;
}

/*
 * fold_table_sorted() against qsort() on random keys made to stress the
 * string sort: long shared prefixes, keys that are prefixes of others,
 * NUL bytes (which pad a key's last 8 bytes), bytes above 0x7f, lengths
 * around multiples of 8, and many keys equal for a long way.
 */
static void test_table_sort_random(void)
{
	GRand *rnd = g_rand_new_with_seed(16);
	static const char alphabet[] = { 'a', 'b', ';', '\0', '\xff', '_' };

	for (int round = 0; round < 40; round++) {
		struct fold_table *t = fold_table_new();
		GPtrArray *keys = g_ptr_array_new();
		struct fold_entry **v;
		size_t n, want = 0;
		int nkeys = g_rand_int_range(rnd, 1, round < 30 ? 300 : 30000);
		int prefix = g_rand_int_range(rnd, 0, 70);
		int k = g_rand_int_range(rnd, 1, (int)sizeof(alphabet) + 1);

		for (int i = 0; i < nkeys; i++) {
			GString *key = random_key(rnd, alphabet, k, prefix);
			bool fresh = !fold_table_find(t, key->str, key->len);

			fold_table_add(t, key->str, key->len, FK_COUNT_ONE);
			if (fresh) {
				g_ptr_array_add(keys, key);
				want++;
			} else {
				g_string_free(key, TRUE);
			}
		}
		qsort(keys->pdata, keys->len, sizeof(void *), cmp_bytes);
		v = fold_table_sorted(t, &n);
		CHECK(n == want);
		size_t same = 0;
		for (size_t i = 0; i < n && i < keys->len; i++) {
			GString *key = g_ptr_array_index(keys, i);
			same += v[i]->len == key->len && memcmp(v[i]->stack, key->str, key->len) == 0;
		}
		CHECK(same == want);
		g_free(v);
		for (size_t i = 0; i < keys->len; i++)
			g_string_free(g_ptr_array_index(keys, i), TRUE);
		g_ptr_array_free(keys, TRUE);
		fold_table_free(t);
	}
	g_rand_free(rnd);
}

static void free_gstring(gpointer p)
{
	g_string_free(p, TRUE);
}

static void list_entry(struct fold_entry *e, void *data)
{
	g_ptr_array_add(data, e);
}

/*
 * fold_table_add2_soon() against fold_table_add2() / _add2_ref() on the
 * same additions: stacks repeated in a row (the shortcut), found and new,
 * longer than a queued copy holds, copied from a buffer that is
 * overwritten at once or kept by reference, with reads in between (which
 * make the queued additions first).  The two tables must hold the same
 * entries, in the same insertion order, with the same counts and totals.
 */
static void test_table_soon(void)
{
	GRand *rnd = g_rand_new_with_seed(23);
	static const char alphabet[] = { 'a', 'b', ';', '_' };

	for (int round = 0; round < 30; round++) {
		struct fold_table *now = fold_table_new(), *soon = fold_table_new();
		GPtrArray *keys = g_ptr_array_new_with_free_func(free_gstring);
		GPtrArray *a = g_ptr_array_new(), *b = g_ptr_array_new();
		int nkeys = g_rand_int_range(rnd, 1, round < 20 ? 50 : 5000);
		int nadd = g_rand_int_range(rnd, 1, 4 * nkeys + 2);
		size_t same = 0;
		char scratch[2048];

		for (int i = 0; i < nkeys; i++) {
			GString *key = random_key(rnd, alphabet, (int)sizeof(alphabet),
						  g_rand_int_range(rnd, 0, 70));

			if (g_rand_int_range(rnd, 0, 10) == 0)	/* past a queued copy's room */
				while (key->len < 600)
					g_string_append(key, ";long_frame");
			g_ptr_array_add(keys, key);
		}
		for (int i = 0, k = 0; i < nadd; i++) {
			GString *key;
			fk_count c0 = fk_count_from_u64((uint64_t)g_rand_int_range(rnd, 1, 1000));
			fk_count c1 = g_rand_int_range(rnd, 0, 3);
			bool ref = g_rand_boolean(rnd);

			if (g_rand_int_range(rnd, 0, 3))	/* else the same again */
				k = g_rand_int_range(rnd, 0, nkeys);
			key = g_ptr_array_index(keys, k);
			if (ref)
				fold_table_add2_ref(now, key->str, key->len, c0, c1);
			else
				fold_table_add2(now, key->str, key->len, c0, c1);
			memcpy(scratch, key->str, key->len);
			fold_table_add2_soon(soon, ref ? key->str : scratch, key->len, c0, c1, ref);
			memset(scratch, 'x', key->len);
			if (g_rand_int_range(rnd, 0, 500) == 0)
				CHECK(fold_table_size(soon) == fold_table_size(now));
		}
		fold_table_foreach(now, list_entry, a);
		fold_table_foreach(soon, list_entry, b);
		CHECK(a->len == b->len);
		for (guint i = 0; i < a->len && i < b->len; i++) {
			const struct fold_entry *x = g_ptr_array_index(a, i), *y = g_ptr_array_index(b, i);

			same += x->len == y->len && memcmp(x->stack, y->stack, x->len) == 0 &&
				x->count[0] == y->count[0] && x->count[1] == y->count[1];
		}
		CHECK(same == a->len);
		CHECK(fold_table_total(soon, 0) == fold_table_total(now, 0));
		CHECK(fold_table_total(soon, 1) == fold_table_total(now, 1));
		g_ptr_array_free(a, TRUE);
		g_ptr_array_free(b, TRUE);
		g_ptr_array_free(keys, TRUE);
		fold_table_free(now);
		fold_table_free(soon);
	}
	g_rand_free(rnd);
}


/*
 * fold_table_sorted() on tables filled in sorted runs, as when sorted
 * files are put together (it merges the runs rather than sorting):
 * against qsort() on the same keys, for one run, a few long ones, runs
 * that take keys at random or in blocks from the whole range, runs of one
 * key, and runs too short to merge (sorted instead).
 */
static void test_table_sort_runs(void)
{
	GRand *rnd = g_rand_new_with_seed(18);
	static const char alphabet[] = { 'a', 'b', ';', '\0', '\xff', '_' };

	for (int round = 0; round < 60; round++) {
		struct fold_table *t = fold_table_new();
		GPtrArray *keys = g_ptr_array_new_with_free_func(free_gstring);
		int nkeys = g_rand_int_range(rnd, 1, round < 40 ? 2000 : 40000);
		int prefix = g_rand_int_range(rnd, 0, 70);
		int k = g_rand_int_range(rnd, 2, (int)sizeof(alphabet) + 1);
		/* up to a run per 8 keys: past one per 16, they are sorted */
		int nruns = round % 6 == 0 ? 1 : g_rand_int_range(rnd, 1, nkeys / 8 + 2);
		bool blocks = g_rand_boolean(rnd);
		int *run_of;
		struct fold_entry **v;
		size_t n, same = 0;

		for (int i = 0; i < nkeys; i++)
			g_ptr_array_add(keys, random_key(rnd, alphabet, k, prefix));
		qsort(keys->pdata, keys->len, sizeof(void *), cmp_bytes);
		/* distinct keys only, each given a run */
		for (guint i = 1; i < keys->len;)
			if (cmp_bytes(&keys->pdata[i - 1], &keys->pdata[i]) == 0)
				g_ptr_array_remove_index(keys, i);
			else
				i++;
		run_of = g_new(int, keys->len);
		for (guint i = 0, r = 0; i < keys->len; i++) {
			if (!blocks)
				r = (guint)g_rand_int_range(rnd, 0, nruns);
			else if (g_rand_int_range(rnd, 0, 20) == 0)	/* a new block */
				r = (guint)g_rand_int_range(rnd, 0, nruns);
			run_of[i] = (int)r;
		}
		/* each run's keys in order, the runs one after the other */
		for (int r = 0; r < nruns; r++)
			for (guint i = 0; i < keys->len; i++)
				if (run_of[i] == r) {
					GString *key = g_ptr_array_index(keys, i);

					fold_table_add(t, key->str, key->len, FK_COUNT_ONE);
				}
		v = fold_table_sorted(t, &n);
		CHECK(n == keys->len);
		for (size_t i = 0; i < n && i < keys->len; i++) {
			GString *key = g_ptr_array_index(keys, i);
			same += v[i]->len == key->len && memcmp(v[i]->stack, key->str, key->len) == 0;
		}
		CHECK(same == keys->len);
		CHECK(v[n] == NULL);
		g_free(v);
		g_free(run_of);
		g_ptr_array_free(keys, TRUE);
		fold_table_free(t);
	}
	g_rand_free(rnd);
}


/* fold_table_write() into a string (a memory stream: the stdio path). */
static char *table_text(const struct fold_table *t, int ncounts)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	GError *err = NULL;

	CHECK(fold_table_write(t, f, ncounts, &err) == 0);
	fclose(f);
	return text;
}

/*
 * A table fed by fold_table_add2_soon() alone keeps no index while the
 * stacks come in ascending runs, and a stack in several runs is several
 * entries until the write merges the runs: against a table of the same
 * additions made with fold_table_add2() (indexed from the start), the
 * text written (twice: the write changes nothing), the totals, and the
 * entries and counts any other reader sees (which index it first, the
 * duplicates merged).  Runs that share stacks or not, a stack repeated
 * in a row, runs too short to merge, keys in no order, more additions
 * after a write, and tables past the entries at which duplicates are
 * first counted (262,144), with many or few of them.
 */
static void test_table_runs(void)
{
	GRand *rnd = g_rand_new_with_seed(77);
	static const char alphabet[] = { 'a', 'b', ';', '_', 'k' };

	for (int round = 0; round < 40; round++) {
		struct fold_table *now = fold_table_new(), *soon = fold_table_new();
		GPtrArray *keys = g_ptr_array_new_with_free_func(free_gstring);
		bool big = round >= 36, shared = round % 2 == 0;
		int nkeys = big ? (shared ? 3000 : 400000) : g_rand_int_range(rnd, 1, 3000);
		int nruns = big ? (shared ? 120 : 2) : g_rand_int_range(rnd, 1, 60);
		int mode = round % 5;	/* 4: keys in no order */
		char *a, *b, *c;

		for (int i = 0; i < nkeys; i++)
			g_ptr_array_add(keys, random_key(rnd, alphabet, (int)sizeof(alphabet),
							 g_rand_int_range(rnd, 0, 40)));
		qsort(keys->pdata, keys->len, sizeof(void *), cmp_bytes);
		for (int r = 0; r < nruns; r++) {
			/* a run: ascending keys, every key (shared) or its own share */
			for (guint i = 0; i < keys->len; i++) {
				guint k = mode == 4 ? (guint)g_rand_int_range(rnd, 0, (gint32)keys->len) : i;
				GString *key = g_ptr_array_index(keys, k);
				fk_count c0 = fk_count_from_u64((uint64_t)g_rand_int_range(rnd, 1, 100));
				fk_count c1 = g_rand_int_range(rnd, 0, 3);
				int again = g_rand_int_range(rnd, 0, 8) == 0 ? 2 : 1;

				if (!shared && !big && (int)(i % (guint)nruns) != r)
					continue;
				if (!shared && big && (int)(i % 2) != r)
					continue;
				if (!big && g_rand_int_range(rnd, 0, 3) == 0)
					continue;
				for (int j = 0; j < again; j++) {	/* the same in a row */
					fold_table_add2(now, key->str, key->len, c0, c1);
					fold_table_add2_soon(soon, key->str, key->len, c0, c1, true);
				}
			}
		}
		CHECK(fold_table_total(soon, 0) == fold_table_total(now, 0));
		CHECK(fold_table_total(soon, 1) == fold_table_total(now, 1));
		a = table_text(now, 2);
		b = table_text(soon, 2);
		c = table_text(soon, 2);
		CHECK(strcmp(a, b) == 0);
		CHECK(strcmp(b, c) == 0);
		free(a), free(b), free(c);
		if (round % 3 == 0) {	/* more after the write */
			for (guint i = 0; i < keys->len; i += 3) {
				GString *key = g_ptr_array_index(keys, i);

				fold_table_add2(now, key->str, key->len, 5, 0);
				fold_table_add2_soon(soon, key->str, key->len, 5, 0, true);
			}
			a = table_text(now, 2);
			b = table_text(soon, 2);
			CHECK(strcmp(a, b) == 0);
			free(a), free(b);
		}
		/* any other reader: the duplicates merged, insertion order kept */
		CHECK(fold_table_size(soon) == fold_table_size(now));
		if (g_rand_boolean(rnd) && keys->len) {
			GString *key = g_ptr_array_index(keys, 0);
			const struct fold_entry *x = fold_table_find(now, key->str, key->len),
						*y = fold_table_find(soon, key->str, key->len);

			CHECK(!x == !y);
			CHECK(!x || (x->count[0] == y->count[0] && x->count[1] == y->count[1]));
		}
		a = table_text(now, 2);
		b = table_text(soon, 2);
		CHECK(strcmp(a, b) == 0);
		free(a), free(b);
		g_ptr_array_free(keys, TRUE);
		fold_table_free(now);
		fold_table_free(soon);
	}
	g_rand_free(rnd);
}


/*
 * stack_sort() with common prefixes, against qsort() on the same kind of
 * keys, with repeated keys (a flame graph's references):
 * the order, and lcp[i] the bytes v[i] shares with v[i - 1].
 */
static void test_stack_sort_lcp(void)
{
	GRand *rnd = g_rand_new_with_seed(17);
	/* no NUL: lcp is for stacks read from text (stacksort.h) */
	static const char alphabet[] = { 'a', 'b', ';', '\x01', '\xff', '_' };

	for (int round = 0; round < 30; round++) {
		int n = g_rand_int_range(rnd, 1, round < 20 ? 300 : 20000);
		int prefix = g_rand_int_range(rnd, 0, 70);
		int k = g_rand_int_range(rnd, 1, (int)sizeof(alphabet) + 1);
		GPtrArray *keys = g_ptr_array_new_with_free_func(free_gstring);
		struct stack_key *v = g_new(struct stack_key, n);
		size_t *lcp = g_new(size_t, n), bad = 0, badlcp = 0;

		for (int i = 0; i < n; i++) {
			GString *key;

			if (i && g_rand_int_range(rnd, 0, 4) == 0) {	/* a repeat */
				GString *o = g_ptr_array_index(keys, g_rand_int_range(rnd, 0, i));

				key = g_string_new_len(o->str, (gssize)o->len);
			} else {
				key = random_key(rnd, alphabet, k, prefix);
			}
			g_ptr_array_add(keys, key);
			v[i] = (struct stack_key){ .p = key->str, .len = key->len, .i = (size_t)i };
		}
		stack_sort(v, (size_t)n, lcp, 0);
		g_ptr_array_sort(keys, cmp_bytes);
		for (int i = 0; i < n; i++) {
			GString *key = g_ptr_array_index(keys, i);

			bad += v[i].len != key->len || memcmp(v[i].p, key->str, key->len) != 0;
			if (i)
				badlcp += lcp[i] != stack_common_len(v[i - 1].p, v[i - 1].len,
								  v[i].p, v[i].len);
		}
		CHECK(lcp[0] == 0);
		CHECK(bad == 0);
		CHECK(badlcp == 0);
		g_free(v);
		g_free(lcp);
		g_ptr_array_free(keys, TRUE);
	}
	g_rand_free(rnd);
}

static struct line_reader *reader_on(const char *text, size_t len)
{
	int fds[2];
	if (pipe(fds) != 0)
		abort();
	if (write(fds[1], text, len) != (ssize_t)len)
		abort();
	close(fds[1]);
	return line_reader_from_fd(fds[0], "t");
}

static void test_reader(void)
{
	struct line_reader *r;
	struct line l;
	GError *err = NULL;
	char *big;

	r = reader_on("a\r\nbc\n\nlast", 11);
	CHECK(line_reader_next(r, &l, &err) == 1 && l.len == 1 && l.no == 1 && l.newline);
	CHECK(line_reader_next(r, &l, &err) == 1 && l.len == 2 && memcmp(l.s, "bc", 2) == 0);
	CHECK(line_reader_next(r, &l, &err) == 1 && l.len == 0);
	CHECK(line_reader_next(r, &l, &err) == 1 && l.len == 4 && !l.newline && l.no == 4);
	CHECK(line_reader_next(r, &l, &err) == 0);
	line_reader_free(r);

	r = reader_on("ok\nbad\0line\n", 12);
	CHECK(line_reader_next(r, &l, &err) == 1);
	CHECK(line_reader_next(r, &l, &err) == -1 && err && err->code == FK_ERROR_BINARY);
	CHECK(err && strstr(err->message, "t:2:") == err->message);
	g_clear_error(&err);
	line_reader_free(r);

	/* a 3 MiB line, longer than the read block (pipes hold less: use a file) */
	{
		char path[] = "/tmp/foldkit-unit-XXXXXX";
		int fd = mkstemp(path);
		size_t n = 3u << 20;
		big = g_malloc(n + 1);
		memset(big, 'x', n);
		big[n] = '\n';
		CHECK(fd >= 0 && write(fd, big, n + 1) == (ssize_t)(n + 1));
		close(fd);
		r = line_reader_open(path, &err);
		CHECK(r && line_reader_next(r, &l, &err) == 1 && l.len == n);
		line_reader_free(r);
		unlink(path);
		g_free(big);
	}

	/* the indented-line skip counts lines and stops at the right place */
	{
		const char *text = "h\n\t1 a (x)\n\t2 b (y)\n   3 c (z)\n\nnext\n";
		r = reader_on(text, strlen(text));
		CHECK(line_reader_next(r, &l, &err) == 1 && l.no == 1);
		CHECK(line_reader_skip_indented(r) == 3);
		CHECK(line_reader_next(r, &l, &err) == 1 && l.len == 0 && l.no == 5);
		CHECK(line_reader_skip_indented(r) == 0);
		CHECK(line_reader_next(r, &l, &err) == 1 && l.no == 6 && memcmp(l.s, "next", 4) == 0);
		line_reader_free(r);
	}
}

static void test_strmap(void)
{
	struct strmap *m = strmap_new(64);
	struct fk_str v;

	CHECK(strmap_put(m, "k1", 2, "v1", 2));
	CHECK(!strmap_put(m, "k1", 2, "other", 5));	/* never overwritten */
	CHECK(strmap_get(m, "k1", 2, &v) && v.len == 2 && memcmp(v.s, "v1", 2) == 0);
	CHECK(!strmap_get(m, "k2", 2, &v));
	CHECK(!strmap_put(m, "long", 4, "................................................................", 64));
	CHECK(strmap_size(m) == 1);
	strmap_free(m);
}

static void esc(const char *in, size_t len, unsigned flags, const char *want)
{
	char *got = fk_text_escape_dup(in, len, flags);

	CHECK_STR(got, want);
	CHECK(fk_text_is_safe(in, len, flags) == (strlen(want) == len && memcmp(in, want, len) == 0));
	g_free(got);
}

static void test_textesc(void)
{
	esc("plain name", 10, 0, "plain name");
	esc("a\033[2Jb", 6, 0, "a\\x1b[2Jb");			/* clear screen */
	esc("a\\x1b", 5, 0, "a\\x1b");				/* text that looks escaped */
	esc("a\\x1b", 5, FK_ESC_BACKSLASH, "a\\\\x1b");
	esc("tab\there\n", 9, 0, "tab\\x09here\\x0a");
	esc("del\x7f", 4, 0, "del\\x7f");
	esc("nul\0x", 5, 0, "nul\\x00x");
	esc("caf\xc3\xa9", 5, 0, "caf\xc3\xa9");		/* printable UTF-8 kept */
	esc("\xe2\x82\xac", 3, 0, "\xe2\x82\xac");
	esc("\xc2\x9b" "31m", 5, 0, "\\xc2\\x9b31m");		/* C1 CSI in UTF-8 */
	esc("bad\xff\xc3", 5, 0, "bad\\xff\\xc3");		/* invalid, and cut */
}

int main(void)
{
	test_counts();
	test_folded();
	test_table();
	test_table_sort_random();
	test_table_sort_runs();
	test_table_soon();
	test_table_runs();
	test_stack_sort_lcp();
	test_reader();
	test_strmap();
	test_textesc();
	return CHECK_DONE();
}
