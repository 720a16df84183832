/*
 * fold2speedscope - folded stacks to a speedscope file (its JSON format),
 * one sampled profile, or one per root frame.  See docs/fold2speedscope.1.
 */
#include "core/foldtable.h"
#include "core/intern.h"
#include "core/splitindex.h"
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
	"  fold2speedscope --split capture/on/server-4242.folded > server.json\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fold2speedscope(1).";

/*
 * The unit the index.tsv beside each file gives it (a split= directory's,
 * or a capture's on/ and off/), the same for all, into *unit (NULL: none
 * says).  A file the index does not list says nothing.  FK_EXIT_FAILURE
 * after an error message: a bad index.tsv, or files of two units, which
 * one profile cannot hold.
 */
static int files_unit(char **files, int n, char **unit)
{
	char *from = NULL;
	int status = FK_EXIT_OK;

	*unit = NULL;
	for (int i = 0; i < n && status == FK_EXIT_OK; i++) {
		char *dir = g_path_get_dirname(files[i]);
		char *base = g_path_get_basename(files[i]);
		char *index = g_build_filename(dir, "index.tsv", NULL);
		struct fk_split_index *x = NULL;
		GError *err = NULL;

		if (strcmp(files[i], "-") != 0 && g_file_test(index, G_FILE_TEST_EXISTS) &&
		    !(x = fk_split_index_read(dir, 0, &err))) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		}
		for (guint j = 0; x && x->unit && j < x->rows->len; j++) {
			const struct fk_split_row *r = g_ptr_array_index(x->rows, j);

			if (strcmp(r->file, base) != 0)
				continue;
			if (*unit && strcmp(*unit, x->unit) != 0) {
				tool_warn("%s: counts in %s, but %s's in %s (index.tsv): one profile holds one unit",
					  files[i], x->unit, from, *unit);
				status = FK_EXIT_FAILURE;
			} else if (!*unit) {
				*unit = g_strdup(x->unit);
				from = g_strdup(files[i]);
			}
			break;
		}
		fk_split_index_free(x);
		g_free(index);
		g_free(base);
		g_free(dir);
	}
	g_free(from);
	return status;
}

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
	char *index_unit;
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
	if (files_unit(argv + 1, argc - 1, &index_unit) != FK_EXIT_OK)
		return tool_finish(FK_EXIT_FAILURE);
	if (index_unit) {
		enum ss_unit u;

		if (!ss_unit_parse(index_unit, &u)) {
			tool_warn("index.tsv gives the unit '%s', which speedscope cannot show: "
				  "give --unit", index_unit);
			g_free(index_unit);
			return tool_finish(FK_EXIT_FAILURE);
		}
		if (opts.unit && u != unit)
			tool_usage_error("--unit %s, but index.tsv gives the counts in %s",
					 opts.unit, index_unit);
		unit = u;
		g_free(index_unit);
	}

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
