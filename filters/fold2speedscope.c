/*
 * fold2speedscope - folded stacks to a speedscope file (its JSON format),
 * one sampled profile, or one per root frame.  See docs/fold2speedscope.1.
 */
#include "core/foldtable.h"
#include "core/intern.h"
#include "export/speedscope.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>

static struct opts {
	char *name, *unit;
	gboolean split, verbose;
} opts;

static const GOptionEntry entries[] = {
	{ "name", 0, 0, G_OPTION_ARG_STRING, &opts.name, "The profile's name (default: the first FILE's name)", "NAME" },
	{ "unit", 0, 0, G_OPTION_ARG_STRING, &opts.unit, "The counts' unit: ns, us, ms, s, bytes, or samples, switches, events, none (counts; the default)", "UNIT" },
	{ "split", 0, 0, G_OPTION_ARG_NONE, &opts.split, "One profile per root frame (process or thread), named after it", NULL },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads folded stacks from each FILE (or standard input, or '-') as one\n"
	"profile and writes it to standard output as a speedscope file: one\n"
	"sampled profile whose samples are the stacks in sorted order, weighted\n"
	"by their counts, or with --split one profile per root frame.\n"
	"\n"
	"Examples:\n"
	"  fp-collapse --tid perf.txt | fold2speedscope --unit ns > cpu.speedscope.json\n"
	"  fold2speedscope --split --unit us offcpu.folded > offcpu.speedscope.json\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fold2speedscope(1).";

/* Bytewise order of the roots, as in the folded file. */
static int cmp_str(const void *a, const void *b)
{
	const struct fk_str *x = a, *y = b;
	int c = memcmp(x->s, y->s, MIN(x->len, y->len));

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* One profile per root frame, sorted by name (speedscope opens the
 * heaviest first). */
static void add_split(struct ss_doc *d, struct fold_entry **e, size_t n,
		      enum ss_unit unit)
{
	struct fk_intern *roots = fk_intern_new();
	struct fk_str *sorted;
	struct ss_profile **byid;
	size_t nroots;

	for (size_t i = 0; i < n; i++) {
		const char *semi = memchr(e[i]->stack, ';', e[i]->len);
		fk_intern_id_ref(roots, e[i]->stack, semi ? (size_t)(semi - e[i]->stack) : e[i]->len, NULL);
	}
	nroots = fk_intern_size(roots);
	if (nroots == 0) {	/* no stacks: no profile (and no qsort(NULL)) */
		fk_intern_free(roots);
		return;
	}
	sorted = g_new(struct fk_str, nroots);
	for (size_t i = 0; i < nroots; i++)
		sorted[i] = fk_intern_str(roots, (uint32_t)i);
	qsort(sorted, nroots, sizeof(*sorted), cmp_str);
	byid = g_new(struct ss_profile *, nroots);
	for (size_t i = 0; i < nroots; i++) {
		char *name = g_strndup(sorted[i].s, sorted[i].len);

		byid[fk_intern_find(roots, sorted[i].s, sorted[i].len)] = ss_profile_new(d, name, unit);
		g_free(name);
	}
	for (size_t i = 0; i < n; i++) {
		const char *s = e[i]->stack, *semi = memchr(s, ';', e[i]->len);
		size_t rlen = semi ? (size_t)(semi - s) : e[i]->len;
		struct ss_profile *p = byid[fk_intern_find(roots, s, rlen)];

		if (semi)
			ss_profile_add_folded(p, semi + 1, e[i]->len - rlen - 1, e[i]->count[0], true);
		else
			ss_profile_add_folded(p, s, 0, e[i]->count[0], true);
	}
	g_free(byid);
	g_free(sorted);
	fk_intern_free(roots);
}

int main(int argc, char **argv)
{
	enum ss_unit unit = SS_UNIT_NONE;
	struct fold_table *t;
	struct fold_entry **e;
	struct skip_log *skips;
	struct ss_doc *d;
	GPtrArray *inputs;
	char *name;
	size_t n;
	int status;
	GError *err = NULL;

	tool_init("fold2speedscope");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Convert folded stacks to a speedscope profile (JSON).",
		   description, entries);
	if (opts.unit && !ss_unit_parse(opts.unit, &unit))
		tool_usage_error("--unit '%s': not a time (ns, us, ms, s, or nanoseconds ...), "
				 "bytes, or a count (samples, switches, events, none)", opts.unit);

	t = fold_table_new();
	skips = skip_log_new();
	status = tool_read_table(argv + 1, argc - 1, skips, t, true, &inputs);
	tool_report_skips(skips, opts.verbose);

	name = opts.name ? g_strdup(opts.name)
	       : argc > 1 && strcmp(argv[1], "-") != 0 ? g_path_get_basename(argv[1])
	       : g_strdup("stdin");
	d = ss_doc_new(name);
	e = fold_table_sorted(t, &n);
	if (opts.split) {
		add_split(d, e, n, unit);
	} else {
		struct ss_profile *p = ss_profile_new(d, name, unit);

		for (size_t i = 0; i < n; i++)
			ss_profile_add_folded(p, e[i]->stack, e[i]->len, e[i]->count[0], true);
	}
	if (ss_doc_write(d, stdout, "<stdout>", &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	if (ss_doc_replaced(d))
		tool_warn("%" G_GUINT64_FORMAT " names held bytes that are not UTF-8: written with U+FFFD",
			  ss_doc_replaced(d));
	if (ss_doc_inexact(d))
		tool_warn("%" G_GUINT64_FORMAT " weights are above 2^53: speedscope reads them rounded",
			  ss_doc_inexact(d));
	ss_doc_free(d);
	g_free(e);
	g_free(name);
	skip_log_free(skips);
	fold_table_free(t);
	g_ptr_array_free(inputs, TRUE);
	return tool_finish(status);
}
