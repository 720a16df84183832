/*
 * fuzz/stackrecords.c - DTrace, ktap and SystemTap text through the record
 * reader and the naming rules, as dtrace-collapse and stap-collapse run
 * them.
 *
 * Input: one option byte, then the text.  Bit 1 reads the input twice (as
 * two files, which must double every count); bit 2 turns DTrace's header
 * detection off; bit 4 names frames by SystemTap's rules, not DTrace's
 * (bits 2 and 4 together are stap-collapse).
 *
 * Checked besides memory safety and UB: every record's frame text ends
 * a line; each frame names the same through the cache as directly; a
 * record's count is what the table gains (the table's total is the
 * sum of the records returned); an error is set exactly when reading
 * fails, and names the file; fuzz_check_collapsed() on the table.
 */
#include "collapsed.h"

#include "collapse/dtrace.h"
#include "collapse/stap.h"
#include "collapse/stackcache.h"
#include "collapse/stackrecords.h"

static void (*namer)(GString *out, const char *s, size_t n);
static const struct stack_frame_rules *rules;

struct naming {
	GString *out;
	size_t frames;
};

struct cached {
	struct stack_cache *sc;
	GString *out;
};

static void cached_one(const char *s, size_t n, void *data)
{
	struct cached *c = data;

	if (c->out->len)
		g_string_append_c(c->out, ';');
	stack_cache_frame(c->sc, c->out, s, n, rules);
}

static void name_one(const char *s, size_t n, void *data)
{
	struct naming *nm = data;
	size_t from;

	FUZZ_CHECK(n > 0, "an empty frame line");
	FUZZ_CHECK(!memchr(s, '\n', n), "a frame line holds a line break");
	FUZZ_CHECK(s[0] != ' ' && s[0] != '\t' && s[n - 1] != ' ' && s[n - 1] != '\t',
		   "a frame line keeps its blanks");
	if (nm->out->len)
		g_string_append_c(nm->out, ';');
	from = nm->out->len;
	namer(nm->out, s, n);
	FUZZ_CHECK(nm->out->len > from, "a frame named by nothing");
	FUZZ_CHECK(!memchr(nm->out->str + from, '\n', nm->out->len - from),
		   "a line break in a name");
	nm->frames++;
}

/* The cached and the uncached name of every frame must agree. */
static void name_record(struct stack_cache *sc, const struct stack_record *rec,
			GString *stack, GString *direct)
{
	struct naming nm = { direct, 0 };

	g_string_truncate(stack, 0);
	g_string_truncate(direct, 0);
	stack_records_foreach_root_first(rec->raw, rec->len, name_one, &nm);
	FUZZ_CHECK(nm.frames > 0, "a record without a frame line");
	/* the same frames again, through the cache */
	stack_records_foreach_root_first(rec->raw, rec->len, cached_one, &(struct cached){ sc, stack });
	FUZZ_CHECK(stack->len == direct->len && memcmp(stack->str, direct->str, stack->len) == 0,
		   "the cache names differently: '%s' for '%s'", stack->str, direct->str);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_records_opts o;
	struct fold_table *t = fold_table_new(), *t2 = fold_table_new();
	struct stack_cache *sc = stack_cache_new(t), *sc2 = stack_cache_new(t2);
	struct skip_log *skips = skip_log_new();
	struct stack_records *r;
	struct stack_record rec;
	GString *stack = g_string_new(NULL), *direct = g_string_new(NULL);
	GError *err = NULL;
	fk_count sum = 0;
	const char *path;
	int rc;

	if (size < 1)
		goto out;
	o = (struct stack_records_opts){ .dtrace_header = !(data[0] & 2) };
	namer = data[0] & 4 ? stap_frame_name : dtrace_frame_name;
	rules = data[0] & 4 ? &stap_frames : &dtrace_frames;
	path = fuzz_file(data + 1, size - 1);
	r = stack_records_open(path, &o, skips, &err);
	FUZZ_CHECK(r && !err, "cannot open the memfd");
	while ((rc = stack_records_next(r, &rec, &err)) > 0) {
		FUZZ_CHECK(rec.len > 0 && rec.raw[rec.len - 1] == '\n',
			   "a record's frames do not end a line");
		name_record(sc, &rec, stack, direct);
		FUZZ_CHECK(stack_cache_add(sc, stack, rec.count) == 0, "a record without frames");
		sum += rec.count;
	}
	FUZZ_CHECK(rc == 0 || rc == -1, "next returned %d", rc);
	fuzz_check_error(rc, &err);
	stack_records_free(r);
	FUZZ_CHECK(fold_table_total(t, 0) == sum, "the table's total is not the records'");
	fuzz_check_collapsed(t);

	/* the tool's own loop, over the input once or twice */
	for (int i = 0; i < (data[0] & 1 ? 2 : 1); i++) {
		rc = stack_records_collapse(path, &o, skips, sc2, rules, &err);
		fuzz_check_error(rc, &err);
	}
	FUZZ_CHECK(fold_table_total(t2, 0) == (data[0] & 1 ? 2 : 1) * sum,
		   "stack_records_collapse() counts differently");
	FUZZ_CHECK(fold_table_size(t2) == fold_table_size(t), "the two loops fold differently");
out:
	stack_cache_free(sc);
	stack_cache_free(sc2);
	fold_table_free(t);
	fold_table_free(t2);
	skip_log_free(skips);
	g_string_free(stack, TRUE);
	g_string_free(direct, TRUE);
	return 0;
}
