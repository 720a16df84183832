/*
 * gperf-collapse - gperftools CPU profiles to folded stacks, symbolised
 * in-process with libdw.  See docs/gperf-collapse.1.
 */
#include "collapse/gperf.h"
#include "collapse/inline.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>

static struct opts {
	gboolean inline_, addrs, verbose;
	char *max_output;
} opts;

static const GOptionEntry entries[] = {
	{ "inline", 0, 0, G_OPTION_ARG_NONE, &opts.inline_, "Expand inlined functions from debug information", NULL },
	{ "addrs", 0, 0, G_OPTION_ARG_NONE, &opts.addrs, "Include raw addresses where symbols are unknown", NULL },
	{ "max-output", 0, 0, G_OPTION_ARG_STRING, &opts.max_output, "Refuse a profile whose folded stacks pass SIZE bytes (K, M, G suffixes; default 1G; 0: no limit)", "SIZE" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "Describe each profile; list every skipped record", NULL },
	{ NULL },
};

static const char description[] =
	"Reads the gperftools CPU profile PROFILE (what libprofiler.so writes\n"
	"for CPUPROFILE=PROFILE; '-' is standard input) of the program\n"
	"EXECUTABLE and prints one line per distinct stack, \"root;...;leaf\n"
	"SAMPLES\", sorted.  Frames are named from EXECUTABLE and the shared\n"
	"objects the profile's memory map names, read in-process.\n"
	"\n"
	"Examples:\n"
	"  LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libprofiler.so \\\n"
	"      CPUPROFILE=server.prof ./server\n"
	"  gperf-collapse ./server server.prof | fold2svg > server.svg\n"
	"  gperf-collapse --inline ./server server.prof.0 server.prof.1 > server.folded\n"
	"\n"
	"A profile whose stacks would pass a limit (1 MiB a name, 2^20 frames or\n"
	"256 MiB a stack, --max-output in all) is refused, as is a bad one.\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See gperf-collapse(1).";

static int read_input(const char *path, void *data, GError **err)
{
	struct gperf_collapser *c = data;
	const struct gperf_stats *st;
	const char *name = strcmp(path, "-") ? path : "<stdin>";

	if (gperf_collapser_read(c, path, err) < 0)
		return -1;
	st = gperf_collapser_stats(c);
	if (!st->executable_found)
		tool_warn("%s: no mapping of the executable: its frames are [unknown]", name);
	if (opts.verbose)
		tool_warn("%s: %" G_GUINT64_FORMAT " samples of %" G_GUINT64_FORMAT
			  " us in %" G_GUINT64_FORMAT " records (%u-bit, %s-endian)",
			  name, st->samples, st->period_us, st->records, st->word_bits,
			  st->big_endian ? "big" : "little");
	return 0;
}

int main(int argc, char **argv)
{
	struct gperf_opts go = { 0 };
	struct gperf_collapser *c;
	struct skip_log *skips;
	GError *err = NULL;
	int status;

	tool_init("gperf-collapse");
	tool_parse(&argc, &argv, "EXECUTABLE PROFILE…",
		   "Collapse gperftools CPU profiles into folded stacks.",
		   description, entries);
	if (argc < 3)
		tool_usage_error(argc < 2 ? "missing EXECUTABLE and PROFILE" : "missing PROFILE");
	/* fold offline: never wait on a debuginfod server */
	g_unsetenv("DEBUGINFOD_URLS");
	go = (struct gperf_opts){ .executable = argv[1], .expand_inline = opts.inline_,
				  .addrs = opts.addrs, .resolver = inline_resolver_new(false),
				  .max_output = opts.max_output ?
						tool_size_arg("--max-output", opts.max_output) : 0 };
	skips = skip_log_new();
	c = gperf_collapser_new(&go, skips);
	status = tool_read_inputs(argv + 2, argc - 2, read_input, c);
	if (fold_table_write(gperf_collapser_table(c), stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	tool_report_skips(skips, opts.verbose);
	gperf_collapser_free(c);
	inline_resolver_free(go.resolver);
	skip_log_free(skips);
	return tool_finish(status);
}
