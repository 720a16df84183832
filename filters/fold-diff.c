/*
 * fold-diff - two folded profiles side by side, "STACK COUNT1 COUNT2", for
 * differential flame graphs; difffolded.pl with sorted output.  See
 * docs/fold-diff.1.
 */
#include "core/error.h"
#include "transform/folddiff.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "transform/stackops.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>

static struct opts {
	gboolean normalize, strip_hex, percent, verbose;
	char *min_delta;
} opts;

static const GOptionEntry entries[] = {
	{ "normalize", 'n', 0, G_OPTION_ARG_NONE, &opts.normalize, "Scale FOLDED1's counts to FOLDED2's total (as difffolded.pl -n)", NULL },
	{ "strip-hex", 's', 0, G_OPTION_ARG_NONE, &opts.strip_hex, "Replace hexadecimal numbers (0x...) before matching stacks", NULL },
	{ "percent", 0, 0, G_OPTION_ARG_NONE, &opts.percent, "Print each count as a percentage of its profile's total", NULL },
	{ "min-delta", 0, 0, G_OPTION_ARG_STRING, &opts.min_delta, "Leave out stacks whose counts differ by less than N", "N" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Prints \"STACK COUNT1 COUNT2\" for every stack in either profile, 0\n"
	"where a profile lacks it, sorted; fold2svg draws it as a differential\n"
	"flame graph (widths from FOLDED2, colours from the change).  '-' reads\n"
	"standard input.\n"
	"\n"
	"Examples:\n"
	"  fold-diff before.folded after.folded | fold2svg > diff.svg\n"
	"  fold-diff -n -s before.folded after.folded > diff.folded\n"
	"  fold-diff --percent --min-delta 0.5 short.folded long.folded\n"
	"\n"
	"Exit status: 0 success, 1 unreadable input or a write error,\n"
	"2 usage error.  See fold-diff(1).";

/* Adds one profile into column col; false after an error message. */
static bool read_profile(struct fold_table *t, const char *path, int col,
			 struct skip_log *skips, struct folded_shape *plain,
			 GString *buf)
{
	GError *err = NULL;
	struct folded_reader *fr = folded_reader_open(path, skips, &err);
	struct folded_line fl;
	int rc;

	if (!fr) {
		tool_warn_error(err);
		return false;
	}
	folded_reader_set_shape(fr, plain);
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		const char *s = fl.stack;
		size_t n = fl.len;

		if (opts.strip_hex)
			s = stack_strip_hex(s, n, buf, &n);
		fold_table_add2(t, s, n, col ? 0 : fl.count[0], col ? fl.count[0] : 0);
	}
	if (rc < 0)
		tool_warn_error(err);
	folded_reader_free(fr);
	return rc == 0;
}

int main(int argc, char **argv)
{
	struct fold_diff_opts o = { 0 };
	struct folded_shape plain = { .ncounts = 1 };	/* both inputs */
	struct fold_table *t;
	struct skip_log *skips;
	GString *buf;
	GError *err = NULL;
	int status = FK_EXIT_OK;
	bool ok;
	long omitted;

	tool_init("fold-diff");
	tool_parse(&argc, &argv, "FOLDED1 FOLDED2",
		   "Compare two folded profiles stack by stack.", description, entries);
	if (argc != 3)
		tool_usage_error("expected two files, FOLDED1 and FOLDED2");
	if (strcmp(argv[1], "-") == 0 && strcmp(argv[2], "-") == 0)
		tool_usage_error("only one of FOLDED1 and FOLDED2 can be '-'");
	if (opts.percent && opts.normalize)
		tool_usage_error("--percent and -n cannot be used together");
	if (opts.min_delta) {
		enum fk_count_status st = fk_count_parse(opts.min_delta,
							 strlen(opts.min_delta), &o.min_delta);
		if (st != FK_COUNT_OK)
			tool_usage_error("bad --min-delta '%s': %s", opts.min_delta,
					 fk_count_status_str(st));
		o.min_delta_set = true;
	}
	o.normalize = opts.normalize;
	o.percent = opts.percent;

	t = fold_table_new();
	skips = skip_log_new();
	buf = g_string_new(NULL);
	ok = read_profile(t, argv[1], 0, skips, &plain, buf);
	ok = read_profile(t, argv[2], 1, skips, &plain, buf) && ok;
	/* a line with two counts in an input: its samples are missing */
	ok = tool_report_shape(&plain) == FK_EXIT_OK && ok;
	folded_shape_release(&plain);
	if (!ok) {
		status = FK_EXIT_FAILURE;	/* half a diff would mislead */
	} else if ((omitted = fold_diff_write(t, &o, stdout, &err)) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	} else if (omitted && opts.verbose) {
		tool_warn("%ld stacks left out by --min-delta", omitted);
	}
	tool_report_skips(skips, opts.verbose);
	skip_log_free(skips);
	g_string_free(buf, TRUE);
	fold_table_free(t);
	return tool_finish(status);
}
