/*
 * fold-report - what a folded profile says: threads, hot paths, functions,
 * categories, symbol quality, contention and findings, as Markdown or
 * JSON.  See docs/fold-report.1.
 */
#include "core/folded.h"
#include "core/splitindex.h"
#include "report/compare.h"
#include "report/profile.h"
#include "report/report.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>

static struct opts {
	gboolean json, group_threads, no_default_categories, verbose, kernel_stacks;
	int top;
	char *offcpu, *min_share, *unit, *offcpu_unit, *offwake, *runq;
	char **thresholds, **wait_kinds;
	char *base;
	double window[2];
	char **categories;
} opts = { .top = 15 };

static const GOptionEntry entries[] = {
	{ "offcpu", 'o', 0, G_OPTION_ARG_FILENAME, &opts.offcpu, "Add contention with this off-CPU profile (a file or split= directory)", "OFF" },
	{ "offwake", 'w', 0, G_OPTION_ARG_FILENAME, &opts.offwake, "Add who released the locks waited for, from this off-wake profile (foldkit.so offwake; a file or split= directory)", "WAKE" },
	{ "runq", 0, 0, G_OPTION_ARG_FILENAME, &opts.runq, "Add where threads waited for a CPU, from this run-queue profile (foldkit.so runq, us; a file or split= directory)", "RUNQ" },
	{ "json", 'j', 0, G_OPTION_ARG_NONE, &opts.json, "Write JSON instead of Markdown", NULL },
	{ "top", 'n', 0, G_OPTION_ARG_INT, &opts.top, "Rows per table (default 15)", "N" },
	{ "group-threads", 'g', 0, G_OPTION_ARG_NONE, &opts.group_threads, "Merge thread names that differ only in digits", NULL },
	{ "kernel-stacks", 'k', 0, G_OPTION_ARG_NONE, &opts.kernel_stacks, "Show the kernel's frames in the tables, not its part of a stack summarised", NULL },
	{ "categories", 'c', 0, G_OPTION_ARG_FILENAME_ARRAY, &opts.categories, "Add or replace categories: NAME<TAB>REGEX lines (repeatable)", "FILE" },
	{ "no-default-categories", 0, 0, G_OPTION_ARG_NONE, &opts.no_default_categories, "Start from no categories instead of the built-in ones", NULL },
	{ "threshold", 't', 0, G_OPTION_ARG_STRING_ARRAY, &opts.thresholds, "A rule's threshold: RULE=PERCENT (repeatable)", "RULE=PCT" },
	{ "wait-kinds", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opts.wait_kinds, "Add wait kinds: KIND<TAB>REGEX lines (repeatable)", "FILE" },
	{ "min-share", 0, 0, G_OPTION_ARG_STRING, &opts.min_share, "Contention: least inclusive share in both profiles (default 1%)", "PERCENT" },
	{ "unit", 'u', 0, G_OPTION_ARG_STRING, &opts.unit, "What a count is: samples (default), ns, us, switches...", "UNIT" },
	{ "countname", 0, 0, G_OPTION_ARG_STRING, &opts.unit, "The same as --unit (fold2svg's name)", "UNIT" },
	{ "offcpu-unit", 0, 0, G_OPTION_ARG_STRING, &opts.offcpu_unit, "What an off-CPU count is (default us, as foldkit.so offcpu)", "UNIT" },
	{ "base", 'b', 0, G_OPTION_ARG_FILENAME, &opts.base, "Compare with this earlier profile, split directory or capture", "OLD" },
	{ "base-window", 0, 0, G_OPTION_ARG_DOUBLE, &opts.window[0], "--base: the base's window in seconds", "SECONDS" },
	{ "window", 0, 0, G_OPTION_ARG_DOUBLE, &opts.window[1], "--base: the new profile's window in seconds", "SECONDS" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads folded stacks from each FILE (or standard input, or '-') as one\n"
	"profile, or from every *.folded file of a split= directory DIR (the whole,\n"
	"then one report per file), or fp-record's capture directory (on/ and off/\n"
	"together, with wake/ and runq/ where it has them), and writes what they\n"
	"say: summary, findings, threads, hot paths, self and inclusive functions,\n"
	"categories, symbol quality, with --offcpu, contention, with --offwake, the\n"
	"lock holders and, with --runq, the time threads waited for a CPU.\n"
	"\n"
	"Examples:\n"
	"  fold-report capture\n"
	"  fold-report cpu.folded\n"
	"  fold-report --unit ns --offcpu off.folded cpu.folded\n"
	"  fold-report --offwake wake.folded --offcpu off.folded cpu.folded\n"
	"  fold-report --runq runq.folded --offcpu off.folded cpu.folded\n"
	"  fold-report --json -n 5 on-cpu/ | jq '.findings'\n"
	"  fold-report --base capture-before capture-after\n"
	"\n"
	"Exit status: 0 success, 1 unreadable or differential input or a write\n"
	"error, 2 usage error.  See fold-report(1).";

static int cmp_path(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A profile, and the mapped files its parts refer to. */
struct input {
	struct report_source src;
	GPtrArray *readers;
};

/*
 * Every part is read as a plain profile: a line with two counts is not
 * returned but counted in plain, whose first such line the message names.
 */
static struct folded_shape plain = { .ncounts = 1 };

static void add_line(const struct folded_line *fl, bool stable, void *data)
{
	profile_add(data, fl->stack, fl->len, fl->count[0], stable);
}

/*
 * A split directory's files, as its index.tsv lists them (core/splitindex.h):
 * sorted bytewise, as paths "DIR/NAME"; its unit in *unit (NULL: none) and
 * the index in *index (free it).  Files there that the index does not list
 * are left out, and said so; without an index every .folded file is read,
 * and that is said too.  NULL after an error.
 */
static char **dir_files(const char *dir, char **unit, struct fk_split_index **index)
{
	GError *err = NULL;
	struct fk_split_index *x = fk_split_index_read(dir, 0, &err);
	const char *sep = g_str_has_suffix(dir, "/") ? "" : "/";
	GPtrArray *v;
	GString *list;

	*unit = NULL;
	if (!x) {
		tool_warn_error(err);
		return NULL;
	}
	if (x->rows->len == 0) {
		tool_warn("%s: %s", dir, x->has_index ? "its index.tsv lists no profile"
			  : "no .folded files (expected a split= directory)");
		fk_split_index_free(x);
		return NULL;
	}
	if (!x->has_index)
		tool_warn("%s: no index.tsv: each of its %u .folded files is read as a profile",
			  dir, x->rows->len);
	if (x->unlisted[0]) {
		list = g_string_new(NULL);
		for (char **f = x->unlisted; *f; f++)
			g_string_append_printf(list, "%s%s", f == x->unlisted ? "" : ", ", *f);
		tool_warn("%s: %u .folded file%s not listed in its index.tsv, left out "
			  "(from an earlier run?): %s", dir, g_strv_length(x->unlisted),
			  x->unlisted[1] ? "s" : "", list->str);
		g_string_free(list, TRUE);
	}
	v = g_ptr_array_new();
	for (guint i = 0; i < x->rows->len; i++)
		g_ptr_array_add(v, g_strconcat(dir, sep,
			((struct fk_split_row *)g_ptr_array_index(x->rows, i))->file, NULL));
	g_ptr_array_sort(v, cmp_path);
	g_ptr_array_add(v, NULL);
	*unit = g_steal_pointer(&x->unit);
	*index = x;
	return (char **)g_ptr_array_free(v, FALSE);
}

/*
 * foldkit.so's on-CPU index.tsv says how much of each process's time is in
 * samples whose caller is missing (caller_lost, in the profile's unit, and
 * caller_lost_in, the function most of it is in): given to the parts of
 * src (its files[i] is "DIR/" x's row's file), for the caller-lost rule.
 * A cell that is not a whole number up to the row's total is refused,
 * naming index.tsv's line: the rule would cite a wrong number.
 */
static int take_caller_lost(struct report_source *src, const struct fk_split_index *x)
{
	GHashTable *part_of = g_hash_table_new(g_str_hash, g_str_equal);
	int status = FK_EXIT_OK;

	for (size_t i = 0; i < src->nfiles; i++) {
		const char *f = src->files[i], *slash = strrchr(f, '/');

		g_hash_table_insert(part_of, (gpointer)(slash ? slash + 1 : f), src->parts[i]);
	}
	for (guint i = 0; i < x->rows->len && status == FK_EXIT_OK; i++) {
		const struct fk_split_row *e = g_ptr_array_index(x->rows, i);
		const char *lost = fk_split_index_cell(x, e, "caller_lost");
		const char *in = fk_split_index_cell(x, e, "caller_lost_in");
		struct profile *part = g_hash_table_lookup(part_of, e->file);
		guint64 n;

		if (!lost || !strcmp(lost, "-") || !part)
			continue;
		if (!g_ascii_string_to_unsigned(lost, 10, 0, G_MAXUINT64, &n, NULL) ||
		    (e->has_total && fk_count_from_u64(n) > e->total)) {
			tool_warn("%s:%" G_GUINT64_FORMAT ": caller_lost '%s' is not a whole "
				  "number up to the row's total", x->path, e->line, lost);
			status = FK_EXIT_FAILURE;
			break;
		}
		profile_set_caller_lost(part, fk_count_from_u64(n),
					in && strcmp(in, "-") && *in ? in : NULL);
	}
	g_hash_table_destroy(part_of);
	return status;
}

/*
 * Reads FILE... as one profile, or DIR's files one each (see report.h);
 * *unit gets DIR's unit (free it).
 */
static int read_input(struct input *in, char **args, int n, struct skip_log *skips,
		      char **unit)
{
	bool dir = n == 1 && g_file_test(args[0], G_FILE_TEST_IS_DIR);
	struct fk_split_index *index = NULL;
	int status = FK_EXIT_OK;
	char **files;

	*unit = NULL;
	for (int i = 0; i < n && !dir; i++)
		if (g_file_test(args[i], G_FILE_TEST_IS_DIR))
			tool_usage_error("'%s' is a directory: a split= directory must be the only operand",
					 args[i]);
	if (dir && !(files = dir_files(args[0], unit, &index)))
		return FK_EXIT_FAILURE;
	if (!dir) {	/* args need not end in NULL (--offcpu's does not) */
		files = g_new0(char *, (size_t)MAX(n, 1) + 1);
		for (int i = 0; i < MAX(n, 1); i++)
			files[i] = g_strdup(n ? args[i] : "-");
	}
	report_source_init(&in->src, files, dir, dir ? args[0] : NULL);
	if (index) {
		status = take_caller_lost(&in->src, index);
		fk_split_index_free(index);
	}
	in->readers = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
	for (size_t i = 0; i < in->src.nfiles; i++) {
		GPtrArray *r;

		if (tool_read_folded(&files[i], 1, skips, &plain, add_line,
				     in->src.parts[i], &r) != FK_EXIT_OK)
			status = FK_EXIT_FAILURE;
		g_ptr_array_add(in->readers, r);
	}
	report_source_merge(&in->src);
	return status;
}

static void input_free(struct input *in)
{
	report_source_release(&in->src);
	if (in->readers)
		g_ptr_array_free(in->readers, TRUE);
}

/*
 * Sets *unit to what a split directory's index.tsv says its counts are
 * (dir_unit, NULL: nothing), so that a directory of nanoseconds is not
 * reported as "samples"; an option given (option, *unit) must agree.
 */
static void take_unit(const char *dir, const char *dir_unit, const char *option,
		      const char **unit, bool given)
{
	if (!dir_unit)
		return;
	if (given && strcmp(dir_unit, *unit) != 0)
		tool_usage_error("%s=%s, but %s/index.tsv gives the counts in %s",
				 option, *unit, dir, dir_unit);
	*unit = dir_unit;
}

/* An off-wake profile's stack, to the lock holders (report/holders.h). */
static void add_wake(struct fold_entry *e, void *data)
{
	GString *text = g_string_new(NULL);

	profile_stack_text(profile_stack_key(e), text);
	holders_add(data, text->str, text->len, e->count[0]);
	g_string_free(text, TRUE);
}

/* A run-queue profile's stack, to the run queue (report/runq.h). */
struct runq_add {
	struct runq *q;
	const char *file, *process;
	GString *text;
};

static void add_runq_stack(struct fold_entry *e, void *data)
{
	struct runq_add *a = data;

	g_string_truncate(a->text, 0);
	profile_stack_text(profile_stack_key(e), a->text);
	runq_add(a->q, a->file, a->process, a->text->str, a->text->len, e->count[0]);
}

/*
 * A process's window from a split directory's index.tsv: its window
 * column (seconds, as fp-record writes it) in us; 0 when it has none, or
 * one that is not a positive number of seconds (said).
 */
static fk_count index_window(const struct fk_split_index *x, const struct fk_split_row *r,
			     const char *dir)
{
	const char *w = fk_split_index_cell(x, r, "window");
	fk_count c;

	if (!w || strcmp(w, "-") == 0)
		return 0;
	if (fk_count_parse(w, strlen(w), &c) != FK_COUNT_OK || c <= 0 ||
	    c > fk_count_from_u64(1000000000)) {
		tool_warn("%s/index.tsv: the window of %s, '%s', is not a number of seconds: "
			  "its threads' shares of it are unknown", dir, r->file, w);
		return 0;
	}
	return c * 1000000;
}

/*
 * A run-queue profile's parts, each a process when it is a split
 * directory, whose index.tsv gives each process's window when the counts
 * are in us.
 */
static void add_runq(struct runq *q, const struct input *in, const char *arg,
		     const char *unit)
{
	struct fk_split_index *x = NULL;
	struct runq_add a = { .q = q, .text = g_string_new(NULL) };
	GError *err = NULL;

	if (in->src.dir && unit && (strcmp(unit, "us") == 0 || strcmp(unit, "\u00b5s") == 0) &&
	    !(x = fk_split_index_read(arg, 0, &err))) {
		tool_warn_error(err);
		g_clear_error(&err);
	}
	for (size_t i = 0; i < in->src.nfiles; i++) {
		char *process = NULL;

		if (in->src.dir) {
			process = g_path_get_basename(in->src.files[i]);
			if (g_str_has_suffix(process, ".folded"))
				process[strlen(process) - 7] = '\0';
		}
		for (guint k = 0; x && process && k < x->rows->len; k++) {
			const struct fk_split_row *r = g_ptr_array_index(x->rows, k);
			char *base = g_path_get_basename(in->src.files[i]);
			fk_count w;

			if (strcmp(r->file, base) == 0 && (w = index_window(x, r, arg)) > 0)
				runq_set_window(q, process, w);
			g_free(base);
		}
		a.file = in->src.files[i];
		a.process = process;
		fold_table_foreach(in->src.parts[i]->stacks, add_runq_stack, &a);
		g_free(process);
	}
	runq_finish(q);
	fk_split_index_free(x);
	g_string_free(a.text, TRUE);
}

/* --base OLD NEW: what changed (report/compare.h) */
static int compare_main(int argc, char **argv, const struct report_opts *ro)
{
	struct cmp_opts o = CMP_OPTS_INIT;
	struct skip_log *skips = skip_log_new();
	struct cmp_side *side[2] = { NULL, NULL };
	GError *err = NULL;
	int status = FK_EXIT_FAILURE;

	if (argc != 2 || opts.offcpu)
		tool_usage_error("--base OLD takes one NEW (a file, split directory or capture), and no --offcpu");
	if (opts.offwake || opts.runq)
		tool_usage_error("--base compares two profiles: no --offwake or --runq");
	for (int i = 0; i < 2; i++)
		if (!(opts.window[i] >= 0 && opts.window[i] < 1e9))
			tool_usage_error("--%swindow must be a number of seconds", i ? "" : "base-");
	o.top = ro->top;
	o.format = ro->format;
	o.unit = opts.unit;
	o.window[0] = opts.window[0];
	o.window[1] = opts.window[1];
	for (int i = 0; i < 2 && !err; i++)
		if ((side[i] = cmp_side_read(i ? argv[1] : opts.base, i, &o, skips, &err)))
			for (const char *const *n = cmp_side_notes(side[i]); *n; n++)
				tool_warn("%s", *n);
	tool_report_skips(skips, opts.verbose);
	if (!err && cmp_pair(side[0], side[1], &err) == 0 &&
	    cmp_write(stdout, side[0], side[1], &o, &err) == 0)
		status = FK_EXIT_OK;
	if (err)
		tool_warn_error(err);
	cmp_side_free(side[0]);
	cmp_side_free(side[1]);
	skip_log_free(skips);
	return status;
}

/* DIR/SUB/index.tsv is there: fp-record's capture side */
static bool has_side(const char *dir, const char *sub)
{
	char *p = g_build_filename(dir, sub, "index.tsv", NULL);
	bool yes = g_file_test(p, G_FILE_TEST_IS_REGULAR);

	g_free(p);
	return yes;
}

int main(int argc, char **argv)
{
	struct report_opts o = REPORT_OPTS_INIT;
	struct category_list *cats;
	struct input on = { 0 }, off = { 0 }, wake = { 0 }, rq = { 0 };
	char *on_unit = NULL, *off_unit = NULL, *wake_unit = NULL, *rq_unit = NULL;
	struct frame_classifier *fc = NULL;
	struct holders *holders = NULL;
	struct runq *runq = NULL;
	struct wait_kinds *wk = NULL;
	char *cap_on = NULL, *cap_off = NULL, *cap_wake = NULL, *cap_runq = NULL;
	bool off_only = false;
	struct skip_log *skips;
	GError *err = NULL;
	int status;

	tool_init("fold-report");
	tool_parse(&argc, &argv, "[FILE…|DIR]",
		   "Report what a folded profile says: findings, hot paths, functions.",
		   description, entries);
	if (opts.top < 1)
		tool_usage_error("--top must be at least 1, not %d", opts.top);
	if (opts.min_share && report_parse_percent(opts.min_share, &o.min_share) < 0)
		tool_usage_error("bad --min-share '%s': a percentage from 0 to 100", opts.min_share);
	if ((opts.unit && !report_unit_ok(opts.unit)) ||
	    (opts.offcpu_unit && !report_unit_ok(opts.offcpu_unit)))
		tool_usage_error("bad unit '%s': one word of letters, digits, '_', '-', '/', '.' or \u00b5",
				 opts.unit && !report_unit_ok(opts.unit) ? opts.unit : opts.offcpu_unit);
	for (char **t = opts.thresholds; t && *t; t++)
		if (report_set_threshold(&o, *t, &err) < 0)
			tool_usage_error("%s", err->message);
	cats = category_list_new(!opts.no_default_categories);
	for (char **c = opts.categories; c && *c; c++)
		if (category_list_read(cats, *c, &err) < 0) {
			tool_warn_error(err);
			category_list_free(cats);
			return FK_EXIT_USAGE;
		}
	o.top = (unsigned)opts.top;
	o.group_threads = opts.group_threads;
	o.kernel_stacks = opts.kernel_stacks;
	o.unit = opts.unit ? opts.unit : o.unit;
	o.offcpu_unit = opts.offcpu_unit ? opts.offcpu_unit : o.offcpu_unit;
	o.categories = cats;
	if (opts.wait_kinds) {
		o.wait_kinds = wk = wait_kinds_new(true);
		for (char **c = opts.wait_kinds; *c; c++)
			if (wait_kinds_read(wk, *c, &err) < 0) {
				tool_warn_error(err);
				wait_kinds_free(wk);
				category_list_free(cats);
				return FK_EXIT_USAGE;
			}
	}
	o.format = opts.json ? REPORT_JSON : REPORT_MARKDOWN;
	if (opts.base) {
		category_list_free(cats);
		return tool_finish(compare_main(argc, argv, &o));
	}

	/* fp-record's capture: DIR/on and DIR/off, each a split directory */
	if (argc == 2 && !opts.offcpu && g_file_test(argv[1], G_FILE_TEST_IS_DIR) &&
	    (has_side(argv[1], "on") || has_side(argv[1], "off"))) {
		/* the same recording's waits by their wakers, and time runnable */
		if (!opts.offwake && has_side(argv[1], "wake"))
			opts.offwake = cap_wake = g_build_filename(argv[1], "wake", NULL);
		if (!opts.runq && has_side(argv[1], "runq"))
			opts.runq = cap_runq = g_build_filename(argv[1], "runq", NULL);
		if (has_side(argv[1], "off"))
			opts.offcpu = cap_off = g_build_filename(argv[1], "off", NULL);
		if (has_side(argv[1], "on"))
			argv[1] = cap_on = g_build_filename(argv[1], "on", NULL);
		else
			off_only = true;
	}
	skips = skip_log_new();
	if (off_only) {
		status = read_input(&on, &opts.offcpu, 1, skips, &on_unit);
		take_unit(opts.offcpu, on_unit, "--unit", &o.unit, opts.unit != NULL);
		opts.offcpu = NULL;
	} else {
		status = read_input(&on, argv + 1, argc - 1, skips, &on_unit);
	}
	if (!off_only)
	take_unit(argv[1], on_unit, "--unit", &o.unit, opts.unit != NULL);
	if (opts.offcpu && read_input(&off, &opts.offcpu, 1, skips, &off_unit) != FK_EXIT_OK)
		status = FK_EXIT_FAILURE;
	take_unit(opts.offcpu, off_unit, "--offcpu-unit", &o.offcpu_unit,
		  opts.offcpu_unit != NULL);
	if (opts.offwake) {
		if (read_input(&wake, &opts.offwake, 1, skips, &wake_unit) != FK_EXIT_OK)
			status = FK_EXIT_FAILURE;
		fc = frame_classifier_new();
		holders = holders_new(fc);
		fold_table_foreach(wake.src.whole->stacks, add_wake, holders);
		holders_finish(holders);
		o.holders = holders;
		o.holders_source = opts.offwake;
		o.holders_unit = wake_unit ? wake_unit : "us";
	}
	if (opts.runq) {
		if (read_input(&rq, &opts.runq, 1, skips, &rq_unit) != FK_EXIT_OK)
			status = FK_EXIT_FAILURE;
		if (!fc)
			fc = frame_classifier_new();
		runq = runq_new(fc);
		add_runq(runq, &rq, opts.runq, rq_unit);
		o.runq = runq;
		o.runq_source = opts.runq;
		o.runq_unit = rq_unit ? rq_unit : "us";
	}
	tool_report_skips(skips, opts.verbose);
	if (plain.odd) {
		tool_warn("%s:%" G_GUINT64_FORMAT ": a differential profile (two counts a line): "
			  "fold-report reads one profile; compare two with fold-diff",
			  plain.odd_file, plain.odd_line);
		status = FK_EXIT_FAILURE;
		goto out;
	}
	if (status == FK_EXIT_OK &&	/* shares of a profile read in part would be wrong */
	    report_write(stdout, &on.src, off_only ? &on.src : opts.offcpu ? &off.src : NULL,
			 &o, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
out:
	folded_shape_release(&plain);
	skip_log_free(skips);
	input_free(&on);
	input_free(&off);
	input_free(&wake);
	input_free(&rq);
	holders_free(holders);
	runq_free(runq);
	frame_classifier_free(fc);
	g_free(wake_unit);
	g_free(rq_unit);
	g_free(cap_wake);
	g_free(cap_runq);
	category_list_free(cats);
	wait_kinds_free(wk);
	g_free(cap_on);
	g_free(cap_off);
	g_free(on_unit);
	g_free(off_unit);
	return tool_finish(status);
}
