/*
 * store.c - lib/store's parts that need no server: URLs, labels, times,
 * stack keys (against values ClickHouse 18.16's sipHash64() gave), SQL
 * literals, ClickHouse's TabSeparated answers (whole, cut, or ended by an
 * exception), decimals, Pyroscope's request.  The servers themselves are
 * test/scripts/store.sh's.
 */
#include "check.h"
#include "core/foldtable.h"
#include "store/chtext.h"
#include "store/clickhouse.h"
#include "store/labels.h"
#include "store/pyroscope.h"
#include "store/stackkey.h"
#include "store/timearg.h"
#include "store/url.h"

static void test_url(void)
{
	struct fk_store_url u;
	GError *err = NULL;

	CHECK(fk_store_url_parse("clickhouse://fk:p%40ss@db1:9000/prof", &u, &err) == 0);
	CHECK(u.kind == FK_STORE_CLICKHOUSE && !u.tls && u.port == 9000);
	CHECK_STR(u.user, "fk");
	CHECK_STR(u.password, "p@ss");
	CHECK_STR(u.host, "db1");
	CHECK_STR(u.database, "prof");
	CHECK_STR(u.base, "http://db1:9000");
	CHECK_STR(u.display, "clickhouse://fk@db1:9000/prof");
	fk_store_url_release(&u);

	CHECK(fk_store_url_parse("clickhouses://db.example.com", &u, &err) == 0);
	CHECK(u.tls && u.port == 8443 && !u.user && !u.password);
	CHECK_STR(u.database, "default");
	CHECK_STR(u.base, "https://db.example.com:8443");
	fk_store_url_release(&u);

	CHECK(fk_store_url_parse("pyroscope://[::1]:4040/pyro/", &u, &err) == 0);
	CHECK(u.kind == FK_STORE_PYROSCOPE && u.port == 4040 && !u.database);
	CHECK_STR(u.host, "::1");
	CHECK_STR(u.path, "/pyro");
	CHECK_STR(u.base, "http://[::1]:4040");
	CHECK_STR(u.display, "pyroscope://[::1]:4040/pyro");
	fk_store_url_release(&u);

	CHECK(fk_store_url_parse("pyroscopes://p", &u, &err) == 0 && u.port == 443);
	CHECK_STR(u.path, "");
	fk_store_url_release(&u);

	{
		struct fk_store_url o;

		CHECK(fk_store_url_parse("clickhouse://u:pw@a:81/d", &u, &err) == 0);
		CHECK(fk_store_url_with_host(&u, "b.example", &o, &err) == 0);
		CHECK_STR(o.base, "http://b.example:81");
		CHECK_STR(o.password, "pw");
		CHECK_STR(o.display, "clickhouse://u@b.example:81/d");
		fk_store_url_release(&o);
		CHECK(fk_store_url_with_host(&u, "b/c", &o, &err) < 0);
		g_clear_error(&err);
		fk_store_url_release(&u);
	}

	static const char *const bad[] = {
		"http://h/db", "clickhouse:/h", "clickhouse://h/db?x=1", "clickhouse://h/db#f",
		"clickhouse://h:0/db", "clickhouse://h:65536/db", "clickhouse://h:8x/db",
		"clickhouse://h:/db", "clickhouse://a b/db", "clickhouse://h%41/db",
		"clickhouse://h/a-b", "clickhouse://h/1db", "clickhouse://h/db/x",
		"clickhouse://:80/db", "clickhouse://u:p%4@h/db", "clickhouse://u%00@h/db",
		"clickhouse://@h/db", "clickhouse://[zz]/db", "clickhouse://[::1]x/db",
		"pyroscope://h/a%20b", "pyroscope://h/../x", "clickhouse://-h/db", "pyroscope://[.1]:4/",
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		if (fk_store_url_parse(bad[i], &u, &err) == 0) {
			fprintf(stderr, "accepted bad URL %s\n", bad[i]);
			check_failures++;
			fk_store_url_release(&u);
			continue;
		}
		CHECK(err && strstr(err->message, "bad URL"));
		g_clear_error(&err);
	}
	/* a password is never in a message */
	CHECK(fk_store_url_parse("clickhouse://u:secret@h:0/db", &u, &err) < 0);
	CHECK(err && !strstr(err->message, "secret") && strstr(err->message, "clickhouse://u:...@h:0/db"));
	g_clear_error(&err);
}

static void test_stack_key(void)
{
	/* SELECT sipHash64('abc'), sipHash64(''), sipHash64('0123456789abcdefghij')
	 * on ClickHouse 18.16 */
	CHECK(fk_stack_key("abc", 3) == 4596069200710135518ULL);
	CHECK(fk_stack_key("", 0) == 2202906307356721367ULL);
	CHECK(fk_stack_key("0123456789abcdefghij", 20) == 11705670278533836341ULL);
	{
		struct fk_siphash h;

		fk_siphash_init(&h);
		fk_siphash_feed(&h, "0123456", 7);
		fk_siphash_feed(&h, "789abcdefghi", 12);
		fk_siphash_feed(&h, "j", 1);
		CHECK(fk_siphash_finish(&h) == 11705670278533836341ULL);
	}
}

static void test_labels(void)
{
	struct fk_labels *l = fk_labels_new();
	GError *err = NULL;
	char *k, *v, *shown;

	fk_labels_set(l, "release", "v1");
	fk_labels_set(l, "host", "web\x1b[2J");
	fk_labels_set(l, "a_b", "");
	fk_labels_set(l, "release", "v2");
	CHECK(fk_labels_size(l) == 3);
	CHECK_STR(fk_labels_key(l, 0), "a_b");
	CHECK_STR(fk_labels_key(l, 1), "host");
	CHECK_STR(fk_labels_value(l, 2), "v2");
	CHECK_STR(fk_labels_get(l, "nope"), "");
	shown = fk_labels_show(l);
	CHECK_STR(shown, "host=web\\x1b[2J release=v2");
	g_free(shown);
	CHECK(fk_label_is_standard("profile") && !fk_label_is_standard("release"));
	CHECK(fk_label_parse("k=v=w", &k, &v, &err) == 0);
	CHECK_STR(k, "k");
	CHECK_STR(v, "v=w");
	g_free(k);
	g_free(v);
	CHECK(fk_label_parse("_x1=", &k, &v, &err) == 0 && *v == '\0');
	g_free(k);
	g_free(v);
	static const char *const bad[] = { "novalue", "=v", "1k=v", "a b=v", "a-b=v", "a'=v" };
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		CHECK(fk_label_parse(bad[i], &k, &v, &err) < 0 && !k && !v);
		g_clear_error(&err);
	}
	{
		char *big = g_strnfill(FK_LABEL_VALUE_MAX + 1, 'x'), *arg = g_strconcat("k=", big, NULL);

		CHECK(fk_label_parse(arg, &k, &v, &err) < 0);
		g_clear_error(&err);
		g_free(arg);
		g_free(big);
	}
	fk_labels_free(l);
}

static void test_time(void)
{
	GError *err = NULL;
	int64_t t;

	CHECK(fk_time_parse("1733400000", 0, &t, &err) == 0 && t == 1733400000);
	CHECK(fk_time_parse("2024-12-06", 0, &t, &err) == 0 && t == 1733443200);
	CHECK(fk_time_parse("2024-12-06T07:30:00Z", 0, &t, &err) == 0 && t == 1733470200);
	CHECK(fk_time_parse("2024-12-06T07:30:00", 0, &t, &err) == 0 && t == 1733470200);
	CHECK(fk_time_parse("2024-12-06T08:30:00+01:00", 0, &t, &err) == 0 && t == 1733470200);
	CHECK(fk_time_parse("now", 10000, &t, &err) == 0 && t == 10000);
	CHECK(fk_time_parse("now-1h", 10000, &t, &err) == 0 && t == 6400);
	CHECK(fk_time_parse("now-90s", 10000, &t, &err) == 0 && t == 9910);
	CHECK(fk_time_parse("now-2d", 200000, &t, &err) == 0 && t == 27200);
	static const char *const bad[] = { "", "yesterday", "now-5x", "now+1h", "now-1hh", "-5",
					   "99999999999", "now-2d", "2024-13-01", "1.5" };
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		CHECK(fk_time_parse(bad[i], 1000, &t, &err) < 0);
		CHECK(err && strstr(err->message, "bad time"));
		g_clear_error(&err);
	}
	{
		char *s = fk_time_format(1733470200);

		CHECK_STR(s, "2024-12-06T07:30:00Z");
		g_free(s);
	}
}

static void test_sql(void)
{
	GString *s = g_string_new(NULL);

	fk_sql_quote(s, "a'b\\c\n\xff\0z", 9);
	CHECK_STR(s->str, "'a\\x27b\\x5cc\\x0a\\xff\\x00z'");
	g_string_truncate(s, 0);
	CHECK(fk_ch_tsv_unescape("a\\tb\\\\c\\0\\x41\\'", 15, s));
	CHECK(s->len == 8 && memcmp(s->str, "a\tb\\c\0A'", 8) == 0);
	g_string_truncate(s, 0);
	CHECK(!fk_ch_tsv_unescape("a\\q", 3, s));
	CHECK(!fk_ch_tsv_unescape("a\\", 2, s));
	CHECK(!fk_ch_tsv_unescape("\\x4", 3, s));
	g_string_free(s, TRUE);
}

static void test_exception(void)
{
	const char *t = "Code: 60, e.displayText() = DB::Exception: Table x doesn't exist., "
			"e.what() = DB::Exception\n";
	int code;
	char *m = fk_ch_exception(t, strlen(t), &code);

	CHECK(m && code == 60);
	CHECK_STR(m ? m : "", "Table x doesn't exist (code 60)");
	g_free(m);
	t = "Code: 241, e.displayText() = DB::Exception: a\x1b[2Jb";
	m = fk_ch_exception(t, strlen(t), &code);
	CHECK_STR(m ? m : "", "a\\x1b[2Jb (code 241)");
	g_free(m);
	CHECK(!fk_ch_exception("no code here", 12, &code) && code == 0);
	CHECK(!fk_ch_exception("Code: x", 7, NULL));
}

struct seen {
	GString *rows;
	int totals;
};

static int on_row(char **f, const size_t *lens, bool totals, void *data, GError **err)
{
	struct seen *s = data;

	if (totals)
		s->totals++;
	g_string_append_printf(s->rows, "%s%s|%s;", totals ? "T:" : "", f[0], f[1]);
	CHECK(lens[1] == strlen(f[1]) || memchr(f[1], '\0', lens[1]));
	return 0;
}

/* Reads text in pieces of step bytes: 0 when whole, -1 with *err. */
static int read_answer(const char *text, size_t len, size_t step, struct seen *s, GError **err)
{
	struct fk_ch_rows *r = fk_ch_rows_new(2, on_row, s);
	int rc = 0;

	g_string_truncate(s->rows, 0);
	s->totals = 0;
	for (size_t i = 0; rc == 0 && i < len; i += step)
		rc = fk_ch_rows_feed(r, text + i, MIN(step, len - i), err);
	if (rc == 0)
		rc = fk_ch_rows_finish(r, err);
	fk_ch_rows_free(r);
	return rc;
}

static void test_rows(void)
{
	struct seen s = { .rows = g_string_new(NULL) };
	GError *err = NULL;
	const char *whole = "1\ta\\tb\n22\tc\n\n0\t\n";

	for (size_t step = 1; step < 20; step++) {
		CHECK(read_answer(whole, strlen(whole), step, &s, &err) == 0);
		CHECK_STR(s.rows->str, "1|a\tb;22|c;T:0|;");
		CHECK(s.totals == 1);
	}
	/* an empty answer still has its totals row */
	CHECK(read_answer("\n0\t\n", 4, 1, &s, &err) == 0 && s.totals == 1);

	static const struct { const char *text, *msg; } bad[] = {
		{ "1\ta\n", "not whole" },				/* no totals */
		{ "1\ta\n\n", "not whole" },				/* no totals row */
		{ "1\ta\n\n0\t\n1\tb\n", "after the totals" },
		{ "1\ta\n\n0\t", "no end" },
		{ "1\ta\tb\n", "too many fields" },
		{ "1\n", "too few fields" },
		{ "x\ta\n", "does not start with a number" },
		{ "1\ta\\q\n", "bad escape" },
		{ "1\ta\n\n\n", "two empty lines" },
		{ "1\ta\nCode: 241, e.displayText() = DB::Exception: Memory limit (for query) "
		  "exceeded, e.what() = DB::Exception\n", "Memory limit (for query) exceeded (code 241)" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		CHECK(read_answer(bad[i].text, strlen(bad[i].text), 3, &s, &err) < 0);
		if (!err || !strstr(err->message, bad[i].msg)) {
			fprintf(stderr, "answer %zu: %s, not %s\n", i, err ? err->message : "no error",
				bad[i].msg);
			check_failures++;
		}
		g_clear_error(&err);
	}
	g_string_free(s.rows, TRUE);
}

static void test_decimal(void)
{
	fk_count c;

	CHECK(fk_ch_parse_decimal("1", 1, &c) && c == FK_COUNT_ONE);
	CHECK(fk_ch_parse_decimal("12.500000000", 12, &c) && c == 12 * FK_COUNT_ONE + FK_COUNT_ONE / 2);
	CHECK(fk_ch_parse_decimal("0.000000001", 11, &c) && c == 1);
	CHECK(fk_ch_parse_decimal("36893488147419103230.000000000", 30, &c) &&
	      c == (fk_count)36893488147419103230.0L * 0 + fk_count_from_u64(UINT64_MAX) * 2);
	CHECK(fk_ch_parse_decimal("100000000000000000000000000000", 30, &c));	/* 1e29 */
	static const char *const bad[] = { "", ".5", "1.", "1.0000000001", "-1", "1e3", "abc",
					   "1000000000000000000000000000000" };
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
		CHECK(!fk_ch_parse_decimal(bad[i], strlen(bad[i]), &c));
}

static void test_pyroscope(void)
{
	struct fk_store_url u;
	struct fk_labels *l = fk_labels_new();
	struct fk_profile p = { .path = (char *)"x.folded" };
	GError *err = NULL;
	GString *body = g_string_new(NULL);
	char *path;

	CHECK(fk_store_url_parse("pyroscope://p:4040/base", &u, &err) == 0);
	CHECK(!fk_pyroscope_path(&u, l, 1, 2, &err));
	CHECK(err && strstr(err->message, "service"));
	g_clear_error(&err);
	fk_labels_set(l, "host", " h 1 ");
	fk_labels_set(l, "service", "my app");
	fk_labels_set(l, "profile", "off-wake");
	fk_labels_set(l, "unit", "us");
	fk_labels_set(l, "process", "x,host=evil}\x01");
	path = fk_pyroscope_path(&u, l, 100, 130, &err);
	CHECK_STR(path ? path : "", "/base/ingest?name=my_app.off_wake%7Bhost%3D_h%201_%2Cprocess%3D"
		  "x_host_evil__%7D&from=100&until=130&format=folded&units=samples&sampleRate=1000000"
		  "&spyName=foldkit");
	g_free(path);
	fk_labels_set(l, "unit", "switches");
	path = fk_pyroscope_path(&u, l, 100, 130, &err);
	CHECK(path && strstr(path, "&units=objects&aggregationType=sum&spyName"));
	g_free(path);

	p.table = fold_table_new();
	fold_table_add(p.table, "b;c", 3, fk_count_from_u64(5));
	fold_table_add(p.table, "a", 1, fk_count_from_u64(INT64_MAX));
	p.entries = fold_table_sorted(p.table, &p.n);
	CHECK(fk_pyroscope_body(&p, body, &err) == 0);
	CHECK_STR(body->str, "a 9223372036854775807\nb;c 5\n");
	g_free(p.entries);
	fold_table_add(p.table, "a", 1, fk_count_from_u64(1));		/* 2^63 */
	p.entries = fold_table_sorted(p.table, &p.n);
	CHECK(fk_pyroscope_body(&p, body, &err) < 0 && strstr(err->message, "below 2^63"));
	g_clear_error(&err);
	g_free(p.entries);
	fold_table_add(p.table, "d", 1, FK_COUNT_ONE / 2);
	fold_table_add(p.table, "a", 1, -fk_count_from_u64(1));
	p.entries = fold_table_sorted(p.table, &p.n);
	CHECK(fk_pyroscope_body(&p, body, &err) < 0 && strstr(err->message, "whole counts"));
	g_clear_error(&err);
	g_free(p.entries);
	fold_table_free(p.table);
	g_string_free(body, TRUE);
	fk_labels_free(l);
	fk_store_url_release(&u);
}

int main(void)
{
	test_url();
	test_stack_key();
	test_labels();
	test_time();
	test_sql();
	test_exception();
	test_rows();
	test_decimal();
	test_pyroscope();
	return CHECK_DONE();
}
