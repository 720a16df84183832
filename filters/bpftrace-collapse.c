/*
 * bpftrace-collapse - bpftrace stack maps to folded stacks; replaces
 * stackcollapse-bpftrace.pl.  See docs/bpftrace-collapse.1.
 */
#include "collapse/bpftrace.h"
#include "tool.h"

#include <stdio.h>

static struct opts {
	gboolean offsets, verbose;
	char *map;
} opts;

static const GOptionEntry entries[] = {
	{ "map", 0, 0, G_OPTION_ARG_STRING, &opts.map, "Fold map NAME (default: the first map with a stack in its key)", "NAME" },
	{ "offsets", 0, 0, G_OPTION_ARG_NONE, &opts.offsets, "Keep the +OFFSET of each frame, as stackcollapse-bpftrace.pl does", NULL },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads bpftrace output from each FILE (or standard input, or '-'): the\n"
	"maps printed at exit, keyed by kstack, ustack, comm and the like, and\n"
	"prints one line per distinct stack, \"comm;user...;kernel... COUNT\",\n"
	"sorted.\n"
	"\n"
	"Examples:\n"
	"  bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }\n"
	"      interval:s:30 { exit(); }' > out.bt\n"
	"  bpftrace-collapse out.bt | fold2svg > out.svg\n"
	"  bpftrace-collapse --map stacks offcpu.bt > offcpu.folded\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See bpftrace-collapse(1).";

static int read_input(const char *path, void *data, GError **err)
{
	return bpftrace_collapser_read(data, path, err);
}

int main(int argc, char **argv)
{
	struct bpftrace_opts bo;
	struct bpftrace_collapser *c;
	struct skip_log *skips;
	GError *err = NULL;
	char *note;
	int status;

	tool_init("bpftrace-collapse");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Collapse bpftrace stack maps into folded stacks.",
		   description, entries);
	bo = (struct bpftrace_opts){ .keep_offsets = opts.offsets, .map = opts.map };
	skips = skip_log_new();
	c = bpftrace_collapser_new(&bo, skips);
	status = tool_read_inputs(argv + 1, argc - 1, read_input, c);
	if (fold_table_write(bpftrace_collapser_table(c), stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	if ((note = bpftrace_collapser_note(c))) {
		tool_warn("%s", note);
		g_free(note);
	}
	tool_report_skips(skips, opts.verbose);
	bpftrace_collapser_free(c);
	skip_log_free(skips);
	return tool_finish(status);
}
