/*
 * stap-collapse - SystemTap backtraces with counts to folded stacks; a
 * faster stackcollapse-stap.pl.  See docs/stap-collapse.1.
 */
#include "collapse/stap.h"
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
	"Reads SystemTap output (print_stack(), print_ustack() or\n"
	"print_ubacktrace() lines, each stack followed by a line holding its\n"
	"count) from each FILE (or standard input, or '-') and prints one line\n"
	"per distinct stack, \"root;...;leaf COUNT\", sorted.\n"
	"\n"
	"Examples:\n"
	"  stap -D MAXBACKTRACE=100 -D MAXSTRINGLEN=4096 -ve 'global s;\n"
	"      probe timer.profile { s[backtrace()] <<< 1; }\n"
	"      probe end { foreach (i in s+) { print_stack(i);\n"
	"      printf(\"\\t%d\\n\", @count(s[i])); } }\n"
	"      probe timer.s(60) { exit(); }' > out.stap-stacks\n"
	"  stap-collapse out.stap-stacks | fold2svg > stap-kernel.svg\n"
	"  ngx-sample-bt -p 1302 -t 5 -u > a.bt && stap-collapse a.bt | fold2svg > a.svg\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See stap-collapse(1).";

int main(int argc, char **argv)
{
	struct stack_records_opts ro = { .dtrace_header = false };

	tool_init("stap-collapse");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Collapse SystemTap backtraces into folded stacks.",
		   description, entries);
	return tool_collapse_records(argv + 1, argc - 1, &ro, &stap_frames, opts.verbose);
}
