/*
 * dtrace-collapse - DTrace (and ktap) stack aggregations to folded stacks;
 * a faster stackcollapse.pl that loses no frames.  See
 * docs/dtrace-collapse.1.
 */
#include "collapse/dtrace.h"
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

struct run {
	struct stack_records_opts ro;
	struct skip_log *skips;
	struct stack_cache *cache;
};

static int read_input(const char *path, void *data, GError **err)
{
	struct run *r = data;

	return stack_records_collapse(path, &r->ro, r->skips, r->cache,
				      dtrace_frame_name, err);
}

int main(int argc, char **argv)
{
	struct fold_table *t = fold_table_new();
	struct run r = { .ro = { .dtrace_header = true } };
	GError *err = NULL;
	int status;

	tool_init("dtrace-collapse");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Collapse DTrace stack aggregations into folded stacks.",
		   description, entries);
	r.skips = skip_log_new();
	r.cache = stack_cache_new(t);
	status = tool_read_inputs(argv + 1, argc - 1, read_input, &r);
	if (fold_table_write(t, stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	tool_report_skips(r.skips, opts.verbose);
	stack_cache_free(r.cache);
	skip_log_free(r.skips);
	fold_table_free(t);
	return tool_finish(status);
}
