/*
 * fgrep-stacks - stack-aware grep for folded stacks: keep the stacks in
 * which a frame matches, re-root them at the match, remove noise frames,
 * or count the matching share.  See docs/fgrep-stacks.1.
 */
#include "core/folded.h"
#include "core/foldtable.h"
#include "report/waitkind.h"
#include "transform/stackops.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>

static struct opts {
	gboolean fixed, icase, whole, invert, leaf, root, focus, callers, count, verbose;
	char **exclude;
	char *wait_kind;
} opts;

static const GOptionEntry entries[] = {
	{ "fixed-strings", 'F', 0, G_OPTION_ARG_NONE, &opts.fixed, "PATTERN is a fixed string, not a regex", NULL },
	{ "ignore-case", 'i', 0, G_OPTION_ARG_NONE, &opts.icase, "Ignore case", NULL },
	{ "frame-regexp", 'x', 0, G_OPTION_ARG_NONE, &opts.whole, "PATTERN must match a whole frame", NULL },
	{ "invert-match", 'v', 0, G_OPTION_ARG_NONE, &opts.invert, "Keep the stacks that do not match", NULL },
	{ "leaf", 0, 0, G_OPTION_ARG_NONE, &opts.leaf, "Match only the leaf (last) frame", NULL },
	{ "root", 0, 0, G_OPTION_ARG_NONE, &opts.root, "Match only the root (first) frame", NULL },
	{ "focus", 0, 0, G_OPTION_ARG_NONE, &opts.focus, "Keep the frames from the first match to the leaf (what it calls)", NULL },
	{ "callers", 0, 0, G_OPTION_ARG_NONE, &opts.callers, "Keep the frames from the root to the first match (who calls it)", NULL },
	{ "exclude", 'X', 0, G_OPTION_ARG_STRING_ARRAY, &opts.exclude, "Remove frames matching REGEX from every stack (repeatable)", "REGEX" },
	{ "wait-kind", 'k', 0, G_OPTION_ARG_STRING, &opts.wait_kind, "Only the stacks waiting for KIND: lock, condition, io, sleep, disk, fault, cpu, other", "KIND" },
	{ "count", 'c', 0, G_OPTION_ARG_NONE, &opts.count, "Print only the matched count, the total and the percentage", NULL },
	{ "verbose", 'V', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads folded stacks from each FILE (or standard input, or '-') and prints,\n"
	"sorted, the stacks in which some frame matches PATTERN (a PCRE regex).\n"
	"--exclude is applied first; identical results are merged.  An empty\n"
	"PATTERN matches every stack.\n"
	"\n"
	"Examples:\n"
	"  fgrep-stacks --callers pthread_mutex_lock off.folded\n"
	"  fgrep-stacks --wait-kind lock -c '' capture/off/*.folded\n"
	"  fgrep-stacks -c 'DecodeScheduler::' worker.folded\n"
	"  fgrep-stacks --exclude '\\[unknown\\]' '' main.folded | fold2svg > main.svg\n"
	"\n"
	"Exit status: 0 success (whether or not a stack matched), 1 unreadable\n"
	"input or a write error, 2 usage error.  See fgrep-stacks(1).";

static void print_count(fk_count matched, fk_count total)
{
	char a[FK_COUNT_BUFSZ], b[FK_COUNT_BUFSZ];
	/* percent in hundredths, rounded half up */
	fk_count pc = total > 0 ? (matched * 20000 + total) / (2 * total) : 0;

	a[fk_count_format(matched, a)] = '\0';
	b[fk_count_format(total, b)] = '\0';
	printf("%s %s %d.%02d%%\n", a, b, (int)(pc / 100), (int)(pc % 100));
}

/* tool_report_skips() would point at -v, which here inverts the match */
static void report_skips(const struct skip_log *skips)
{
	char *s;

	if (opts.verbose || !(s = skip_log_summary(skips, NULL))) {
		tool_report_skips(skips, opts.verbose);
		return;
	}
	tool_warn("%s (--verbose lists them)", s);
	g_free(s);
}

struct grep_run {
	struct stack_filter *f;
	struct wait_kinds *wk;	/* --wait-kind: the table, and the kind */
	int kind;
	struct fold_table *t;
	fk_count matched, total;
	int ncounts;
};

/* A stack's wait kind, as fold-report reads it (report/waitkind.h): its
 * innermost frame's that has one, WAIT_OTHER when none has; the root
 * frame (a thread's name) is not a function. */
static int wait_of(const struct wait_kinds *wk, const char *s, size_t len)
{
	const char *end = s + len, *semi = memchr(s, ';', len);
	int kind = WAIT_OTHER;

	while (semi) {
		const char *f = semi + 1, *next = memchr(f, ';', (size_t)(end - f));
		enum wait_kind k = wait_kinds_frame(wk, f, (size_t)((next ? next : end) - f));

		if (k != WAIT_NONE)
			kind = k;
		semi = next;
	}
	return kind;
}

static void grep_line(const struct folded_line *fl, bool stable, void *data)
{
	struct grep_run *run = data;
	const char *s;
	size_t n;
	bool keep;

	/* -c counts the last column: the profile a graph shows */
	run->total += fl->count[fl->ncounts - 1];
	if (run->wk && wait_of(run->wk, fl->stack, fl->len) != run->kind)
		return;
	keep = stack_filter_apply(run->f, fl->stack, fl->len, &s, &n);
	if (!keep)
		return;
	if (opts.count)
		run->matched += fl->count[fl->ncounts - 1];
	else
		tool_table_add(run->t, fl, stable, s, n);
	if (fl->ncounts > run->ncounts)
		run->ncounts = fl->ncounts;
}

int main(int argc, char **argv)
{
	struct stack_filter_opts so = { 0 };
	struct stack_filter *f;
	struct grep_run run = { .ncounts = 1 };
	struct skip_log *skips;
	GPtrArray *inputs;
	int status;
	GError *err = NULL;

	tool_init("fgrep-stacks");
	tool_parse(&argc, &argv, "PATTERN [FILE…]",
		   "Keep the folded stacks in which a frame matches PATTERN.",
		   description, entries);
	if (argc < 2)
		tool_usage_error("missing PATTERN");
	if (opts.leaf && opts.root)
		tool_usage_error("--leaf and --root cannot be used together");
	if (opts.focus && opts.callers)
		tool_usage_error("--focus and --callers cannot be used together");
	if (opts.invert && (opts.focus || opts.callers))
		tool_usage_error("-v keeps stacks without a match: nothing to re-root at");
	if (opts.wait_kind) {
		int k = wait_kind_parse(opts.wait_kind, strlen(opts.wait_kind));

		if (k <= 0)
			tool_usage_error("bad --wait-kind '%s': lock, condition, io, sleep, disk, "
					 "fault, cpu or other", opts.wait_kind);
		run.kind = k;
		run.wk = wait_kinds_new(true);
	}
	so.pattern = argv[1];
	so.flags = (opts.fixed ? FRAME_MATCH_FIXED : 0) | (opts.icase ? FRAME_MATCH_ICASE : 0) |
		   (opts.whole ? FRAME_MATCH_WHOLE : 0);
	so.where = opts.leaf ? STACK_LEAF : opts.root ? STACK_ROOT : STACK_ANY;
	so.view = opts.focus ? VIEW_FOCUS : opts.callers ? VIEW_CALLERS : VIEW_WHOLE;
	so.invert = opts.invert;
	so.exclude = (const char *const *)opts.exclude;
	so.nexclude = opts.exclude ? g_strv_length(opts.exclude) : 0;
	if (!(f = stack_filter_new(&so, &err))) {
		tool_warn_error(err);
		return FK_EXIT_USAGE;
	}

	run.f = f;
	run.t = fold_table_new();
	skips = skip_log_new();
	status = tool_read_folded(argv + 2, argc - 2, skips, NULL, grep_line, &run, &inputs);

	if (opts.count) {
		print_count(run.matched, run.total);
	} else if (fold_table_write(run.t, stdout, run.ncounts, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	report_skips(skips);
	skip_log_free(skips);
	if (tool_frees_at_exit()) {
		fold_table_free(run.t);
		g_ptr_array_free(inputs, TRUE);
	}
	stack_filter_free(f);
	wait_kinds_free(run.wk);
	g_strfreev(opts.exclude);
	return tool_finish(status);
}
