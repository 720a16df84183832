/*
 * fuzz_found.c - regression cases for what the kfold and plugin fuzz
 * targets found (their inputs are in fuzz/regress/): a kfold rule name
 * that would break the output line or lose its last blank is refused, a
 * kfold or fgrep-stacks result of only blanks becomes a placeholder, and
 * a process name with a line break or a leading '#', or a symbol or DSO
 * with a line break, cannot split the folded line or turn it into a
 * comment.
 */
#include "bad_check.h"

#include "collapse/collapse.h"
#include "transform/stackops.h"

#include <string.h>

static bool name_ok(const char *name)
{
	struct kfold_rule r = { "x", name };
	struct kfold_opts o = KFOLD_OPTS_INIT;
	GError *err = NULL;
	struct kfolder *k;

	o.rules = &r;
	o.nrules = 1;
	k = kfolder_new(&o, &err);
	CHECK((k == NULL) == (err != NULL), "kfolder_new and its error disagree");
	if (err) {
		CHECK(strstr(err->message, "bad name '") == err->message, "%s", err->message);
		g_error_free(err);
	}
	kfolder_free(k);
	return k != NULL;
}

static char *key_of2(const char *comm, const char *sym, const char *dso)
{
	struct collapse_opts o = { .include_pid = true };
	struct collapser *c = collapser_new(&o);
	struct perf_frame f = {
		.pc = { "1000", 4 }, .sym = { sym, strlen(sym) }, .dso = { dso, strlen(dso) },
	};
	struct perf_sample s = {
		.comm = { comm, strlen(comm) }, .pid = { "7", 1 }, .tid = { "7", 1 },
		.event = { "cycles", 6 }, .period = 1, .has_period = true,
		.frames = &f, .nframes = 1,
	};
	GString *key = g_string_new(NULL);

	collapser_stack_key(c, &s, key);
	collapser_free(c);
	return g_string_free(key, FALSE);
}

static char *key_of(const char *comm)
{
	return key_of2(comm, "leaf", "/bin/p");
}

static char *kfold_drop(const char *stack)
{
	struct kfold_opts o = KFOLD_OPTS_INIT;
	struct kfolder *k;
	size_t n;
	const char *r;
	char *out;

	o.drop_kernel = true;
	k = kfolder_new(&o, NULL);
	r = kfolder_apply(k, stack, strlen(stack), &n);
	out = g_strndup(r, n);
	kfolder_free(k);
	return out;
}

static char *filter(const char *pattern, enum stack_view view, const char *exclude,
		    const char *stack)
{
	const char *ex[] = { exclude };
	struct stack_filter_opts o = {
		.pattern = pattern, .view = view, .exclude = ex, .nexclude = exclude ? 1 : 0,
	};
	struct stack_filter *f = stack_filter_new(&o, NULL);
	const char *r;
	size_t n;
	char *out;

	out = stack_filter_apply(f, stack, strlen(stack), &r, &n) ? g_strndup(r, n)
								  : g_strdup("(dropped)");
	stack_filter_free(f);
	return out;
}

int main(void)
{
	char *k;

	CHECK(name_ok("lock"), "a plain name");
	CHECK(name_ok(" lead"), "a leading blank is kept as written");
	CHECK(!name_ok(""), "an empty name");
	CHECK(!name_ok("a;b"), "a ';'");
	CHECK(!name_ok("a\nb"), "a line break");
	CHECK(!name_ok("end "), "a trailing space");
	CHECK(!name_ok("end\t"), "a trailing tab");

	/* a result of only blanks would be read as no stack at all */
	k = kfold_drop(" ;a_[k]");
	CHECK(strcmp(k, "[kernel]") == 0, "kfold --drop-kernel ' ;a_[k]' gave '%s'", k);
	g_free(k);
	k = kfold_drop("b ;a_[k]");
	CHECK(strcmp(k, "b ") == 0, "kfold --drop-kernel 'b ;a_[k]' gave '%s'", k);
	g_free(k);
	k = filter(NULL, VIEW_WHOLE, "^a$", "\t;a");
	CHECK(strcmp(k, "[excluded]") == 0, "excluding 'a' from '\\t;a' gave '%s'", k);
	g_free(k);
	k = filter("^ $", VIEW_FOCUS, NULL, "a; ");
	CHECK(strcmp(k, "[empty]") == 0, "focus on ' ' in 'a; ' gave '%s'", k);
	g_free(k);
	k = filter("^ $", VIEW_CALLERS, NULL, " ;a");
	CHECK(strcmp(k, "[empty]") == 0, "callers of ' ' in ' ;a' gave '%s'", k);
	g_free(k);

	k = key_of("#app");
	CHECK(strcmp(k, "_app-7;leaf") == 0, "'#app' gave '%s'", k);
	g_free(k);
	k = key_of("a\nb c\r\t");
	CHECK(strcmp(k, "a_b_c__-7;leaf") == 0, "gave '%s'", k);
	g_free(k);
	k = key_of("a#b");
	CHECK(strcmp(k, "a#b-7;leaf") == 0, "'a#b' gave '%s'", k);
	g_free(k);
	k = key_of2("p", "le\naf", "/bin/p");
	CHECK(strcmp(k, "p-7;le_af") == 0, "a symbol with a line break gave '%s'", k);
	g_free(k);
	k = key_of2("p", "[unknown]", "/tmp/a\nb.so");
	CHECK(!strchr(k, '\n'), "a DSO with a line break gave '%s'", k);
	g_free(k);
	return bad_done();
}
