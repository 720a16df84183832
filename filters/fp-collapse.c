/*
 * fp-collapse - perf script text to folded stacks; a byte-compatible,
 * faster stackcollapse-perf.pl.  See docs/fp-collapse.1.
 */
#include "collapse/collapse.h"
#include "collapse/inline.h"
#include "collapse/perfscript.h"
#include "tool.h"

#include <stdio.h>

static struct opts {
	gboolean pid, tid, kernel, jit, all, addrs, annotate_inlined, user_maps;
	gboolean inline_, context, srcline, keep_last, perl_last, verbose;
	char *event_filter;
} opts;

static const GOptionEntry entries[] = {
	{ "pid", 0, 0, G_OPTION_ARG_NONE, &opts.pid, "Include the PID with process names", NULL },
	{ "tid", 0, 0, G_OPTION_ARG_NONE, &opts.tid, "Include the PID and TID with process names", NULL },
	{ "kernel", 0, 0, G_OPTION_ARG_NONE, &opts.kernel, "Annotate kernel functions with _[k]", NULL },
	{ "jit", 0, 0, G_OPTION_ARG_NONE, &opts.jit, "Annotate JIT functions with _[j]", NULL },
	{ "all", 0, 0, G_OPTION_ARG_NONE, &opts.all, "Both --kernel and --jit", NULL },
	{ "user-maps", 0, 0, G_OPTION_ARG_NONE, &opts.user_maps, "With --kernel, leave [vdso], [heap] and other user mappings unannotated", NULL },
	{ "annotate-inlined", 0, 0, G_OPTION_ARG_NONE, &opts.annotate_inlined, "Annotate frames perf printed as (inlined) with _[i]", NULL },
	{ "addrs", 0, 0, G_OPTION_ARG_NONE, &opts.addrs, "Include raw addresses where symbols are unknown", NULL },
	{ "event-filter", 0, 0, G_OPTION_ARG_STRING, &opts.event_filter, "Keep only samples of EVENT (default: the first event seen)", "EVENT" },
	{ "inline", 0, 0, G_OPTION_ARG_NONE, &opts.inline_, "Expand inlined functions from debug information", NULL },
	{ "context", 0, 0, G_OPTION_ARG_NONE, &opts.context, "With --inline, add FILE:LINE to each function", NULL },
	{ "srcline", 0, 0, G_OPTION_ARG_NONE, &opts.srcline, "Input has perf script -F+srcline lines; append them", NULL },
	{ "perl-last", 0, 0, G_OPTION_ARG_NONE, &opts.perl_last, "Drop a last sample that lacks its ending blank line, as the Perl script does", NULL },
	/* the default since the last sample is kept; accepted so old scripts run */
	{ "keep-last", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_NONE, &opts.keep_last, NULL, NULL },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads perf script output from each FILE (or standard input, or '-')\n"
	"and prints one line per distinct stack, \"proc;root;...;leaf COUNT\",\n"
	"sorted, weighted by the sample period when perf prints one.\n"
	"\n"
	"Examples:\n"
	"  perf script | fp-collapse > out.folded\n"
	"  perf script -F comm,pid,tid,time,event,ip,sym,dso | fp-collapse --tid\n"
	"  perf script | fp-collapse --kernel | fold2svg > out.svg\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fp-collapse(1).";

int main(int argc, char **argv)
{
	struct perf_script_opts po;
	struct collapse_opts co = { 0 };
	struct collapser *c;
	struct skip_log *skips;
	struct inline_resolver *inliner = NULL;
	int status = FK_EXIT_OK;
	GError *err = NULL;
	char *note;

	tool_init("fp-collapse");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Collapse perf script output into folded stacks.",
		   description, entries);
	if (opts.context && !opts.inline_)
		tool_usage_error("--context needs --inline");
	if (opts.keep_last && opts.perl_last)
		tool_usage_error("--keep-last and --perl-last contradict each other");

	/* one set of known call chains for every file: numbers agree */
	po = (struct perf_script_opts){ .srcline = opts.srcline, .perl_last = opts.perl_last,
					.blocks = perf_blocks_new() };
	co.include_pid = opts.pid;
	co.include_tid = opts.tid;
	co.names.annotate_kernel = opts.kernel || opts.all;
	co.names.kernel_user_maps = !opts.user_maps;	/* the Perl script's bytes */
	co.names.annotate_jit = opts.jit || opts.all;
	co.names.include_addrs = opts.addrs;
	co.names.annotate_inlined = opts.annotate_inlined;
	co.srcline = opts.srcline;
	co.event_filter = opts.event_filter;
	if (opts.inline_) {
		/* fold offline: never wait on a debuginfod server mid-profile */
		g_unsetenv("DEBUGINFOD_URLS");
		inliner = inline_resolver_new(opts.context);
		co.inliner = inliner;
	}
	skips = skip_log_new();
	co.skips = skips;
	c = collapser_new(&co);

	for (int i = 1; i < argc || i == 1; i++) {
		const char *path = i < argc ? argv[i] : "-";
		struct perf_script_reader *r = perf_script_reader_open(path, &po, skips, &err);
		struct perf_sample s;
		int rc;

		if (!r) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
			continue;
		}
		while ((rc = perf_script_reader_next(r, &s, &err)) > 0)
			collapser_add(c, &s);
		if (rc < 0) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		}
		perf_script_reader_free(r);
	}

	if (fold_table_write(collapser_table(c), stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	if ((note = collapser_event_note(c))) {
		tool_warn("%s", note);
		g_free(note);
	}
	if ((note = collapser_pid_note(c))) {
		tool_warn("%s", note);
		g_free(note);
	}
	tool_report_skips(skips, opts.verbose);
	skip_log_free(skips);
	collapser_free(c);
	perf_blocks_unref(po.blocks);
	inline_resolver_free(inliner);
	return tool_finish(status);
}
