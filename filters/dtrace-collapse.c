/*
 * dtrace-collapse - DTrace (and ktap) stack aggregations to folded stacks;
 * a faster stackcollapse.pl that loses no frames.  See
 * docs/dtrace-collapse.1.
 */
#include "collapse/dtrace.h"
#include "records.h"
#include "tool.h"

#include <stdio.h>

static struct opts {
	gboolean verbose;
} opts;

static const GOptionEntry entries[] = {
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads DTrace aggregation output (ustack(), stack(), jstack() keys, each\n"
	"stack followed by its count) from each FILE (or standard input, or '-')\n"
	"and prints one line per distinct stack, \"root;...;leaf COUNT\", sorted.\n"
	"DTrace's header is skipped; ktap backtraces are read as they are.\n"
	"\n"
	"Examples:\n"
	"  dtrace -x ustackframes=100 -n 'profile-99 /execname == \"mysqld\" && arg1/ {\n"
	"      @[ustack()] = count(); } tick-60s { exit(0); }' -o out.stacks\n"
	"  dtrace-collapse out.stacks | fold2svg > out.svg\n"
	"  dtrace-collapse out.kstacks > out.kstacks.folded      # ktap\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See dtrace-collapse(1).";

int main(int argc, char **argv)
{
	struct stack_records_opts ro = { .dtrace_header = true };

	tool_init("dtrace-collapse");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Collapse DTrace stack aggregations into folded stacks.",
		   description, entries);
	return tool_collapse_records(argv + 1, argc - 1, &ro, &dtrace_frames, opts.verbose);
}
