/*
 * kfold - fold runs of kernel, unknown or matching frames in folded stacks
 * into one frame each, and merge the stacks that become identical.  See
 * docs/kfold.1.
 */
#include "core/folded.h"
#include "core/foldtable.h"
#include "transform/stackops.h"
#include "tool.h"

#include <stdio.h>

static struct opts {
	gboolean kernel, keep_entry, unknown, drop_kernel, verbose;
	GArray *rules;		/* struct kfold_rule, in command-line order */
} opts;

static gboolean add_rule(const char *opt, const char *value, void *data, GError **err)
{
	struct kfold_rule r = { .regex = g_strdup(value) };

	g_array_append_val(opts.rules, r);
	return TRUE;
}

static gboolean name_rule(const char *opt, const char *value, void *data, GError **err)
{
	struct kfold_rule *r = opts.rules->len
		? &g_array_index(opts.rules, struct kfold_rule, opts.rules->len - 1) : NULL;

	if (!r || r->name) {
		g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			    "--as '%s' must follow an -e REGEX", value);
		return FALSE;
	}
	r->name = g_strdup(value);
	return TRUE;
}

static const GOptionEntry entries[] = {
	{ "kernel", 'k', 0, G_OPTION_ARG_NONE, &opts.kernel, "Fold every run of kernel frames (_[k] or placeholders) into [kernel]", NULL },
	{ "keep-entry", 0, 0, G_OPTION_ARG_NONE, &opts.keep_entry, "With --kernel, keep each run's first (entry) frame", NULL },
	{ "unknown", 'u', 0, G_OPTION_ARG_NONE, &opts.unknown, "Fold runs of [unknown] frames into one", NULL },
	{ "regex", 'e', 0, G_OPTION_ARG_CALLBACK, (void *)add_rule, "Fold runs of frames matching REGEX (repeatable; each needs --as)", "REGEX" },
	{ "as", 0, 0, G_OPTION_ARG_CALLBACK, (void *)name_rule, "The frame that the previous -e REGEX folds into", "NAME" },
	{ "drop-kernel", 0, 0, G_OPTION_ARG_NONE, &opts.drop_kernel, "Remove kernel frames (_[k] or placeholders) entirely", NULL },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads folded stacks from each FILE (or standard input, or '-') and folds\n"
	"each run of [[kernel.kallsyms]] placeholder frames into one [kernel]\n"
	"frame (anywhere in the stack), plus what the options ask for; stacks\n"
	"that become identical are merged.  Output is sorted.\n"
	"\n"
	"Examples:\n"
	"  perf script | fp-collapse | kfold > out.folded\n"
	"  fp-collapse --kernel perf.txt | kfold --kernel --keep-entry\n"
	"  kfold --unknown -e '^std::' --as 'std::*' app.folded | fold2svg > app.svg\n"
	"\n"
	"Exit status: 0 success, 1 unreadable input or a write error,\n"
	"2 usage error.  See kfold(1).";

struct kfold_run {
	struct kfolder *k;
	struct fold_table *t;
	int ncounts;
};

static void fold_line(const struct folded_line *fl, bool stable, void *data)
{
	struct kfold_run *run = data;
	size_t n;
	const char *s = kfolder_apply(run->k, fl->stack, fl->len, &n);

	tool_table_add(run->t, fl, stable, s, n);
	if (fl->ncounts > run->ncounts)
		run->ncounts = fl->ncounts;
}

int main(int argc, char **argv)
{
	struct kfold_opts ko = KFOLD_OPTS_INIT;
	struct kfolder *k;
	struct kfold_run run = { .ncounts = 1 };
	struct skip_log *skips;
	GPtrArray *inputs;
	int status;
	GError *err = NULL;

	tool_init("kfold");
	opts.rules = g_array_new(FALSE, TRUE, sizeof(struct kfold_rule));
	tool_parse(&argc, &argv, "[FILE…]",
		   "Fold runs of kernel and other frames in folded stacks.",
		   description, entries);
	for (guint i = 0; i < opts.rules->len; i++)
		if (!g_array_index(opts.rules, struct kfold_rule, i).name)
			tool_usage_error("-e '%s' needs --as NAME",
					 g_array_index(opts.rules, struct kfold_rule, i).regex);
	if (opts.keep_entry && !opts.kernel)
		tool_usage_error("--keep-entry needs --kernel");
	ko.kernel = opts.kernel;
	ko.keep_entry = opts.keep_entry;
	ko.unknown = opts.unknown;
	ko.drop_kernel = opts.drop_kernel;
	ko.rules = (const struct kfold_rule *)(void *)opts.rules->data;
	ko.nrules = opts.rules->len;
	if (!(k = kfolder_new(&ko, &err))) {
		tool_warn_error(err);
		return FK_EXIT_USAGE;
	}

	run.k = k;
	run.t = fold_table_new();
	skips = skip_log_new();
	status = tool_read_folded(argv + 1, argc - 1, skips, NULL, fold_line, &run, &inputs);

	if (fold_table_write(run.t, stdout, run.ncounts, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	tool_report_skips(skips, opts.verbose);
	skip_log_free(skips);
	if (tool_frees_at_exit()) {
		fold_table_free(run.t);
		g_ptr_array_free(inputs, TRUE);
	}
	kfolder_free(k);
	for (guint i = 0; i < opts.rules->len; i++) {
		g_free((char *)g_array_index(opts.rules, struct kfold_rule, i).regex);
		g_free((char *)g_array_index(opts.rules, struct kfold_rule, i).name);
	}
	g_array_free(opts.rules, TRUE);
	return tool_finish(status);
}
