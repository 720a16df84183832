/*
 * pprof-collapse - pprof profiles (profile.proto, gzip-compressed or raw)
 * to folded stacks.  See docs/pprof-collapse.1.
 */
#include "collapse/pprofread.h"
#include "core/foldtable.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>

static struct opts {
	char *sample_index, *max_output;
	char **tagroot;
	gboolean lines, addrs, verbose;
} opts;

static const GOptionEntry entries[] = {
	{ "sample-index", 0, 0, G_OPTION_ARG_STRING, &opts.sample_index, "The value to use: a number from 0, or a sample type's name (default: the profile's default, else its last)", "N" },
	{ "tagroot", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opts.tagroot, "Add root frames KEY=VALUE for these label keys (comma-separated, repeatable; the first is the root)", "KEYS" },
	{ "lines", 0, 0, G_OPTION_ARG_NONE, &opts.lines, "Append :FILE:LINE to each function's name", NULL },
	{ "addrs", 0, 0, G_OPTION_ARG_NONE, &opts.addrs, "Name frames without symbols [BINARY <ADDRESS>]", NULL },
	{ "max-output", 0, 0, G_OPTION_ARG_STRING, &opts.max_output, "Refuse a profile whose folded stacks pass SIZE bytes (K, M, G suffixes; default 1G; 0: no limit)", "SIZE" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped sample with its number", NULL },
	{ NULL },
};

/* Adds from's stacks to the table t. */
static void add_entry(struct fold_entry *e, void *t)
{
	fold_table_add(t, e->stack, e->len, e->count[0]);
}

static const char description[] =
	"Reads each pprof profile FILE (or standard input, or '-'), gzip-compressed\n"
	"or not, and writes its samples as folded stacks, root first, leaf last,\n"
	"inlined functions as frames of their own, sorted; several files add up.\n"
	"\n"
	"Examples:\n"
	"  pprof-collapse cpu.pb.gz | fold2svg > cpu.svg\n"
	"  pprof-collapse --sample-index=alloc_space heap.pb.gz > heap.folded\n"
	"  pprof -proto ./server server.prof | pprof-collapse --tagroot=thread\n"
	"\n"
	"A profile whose stacks would pass a limit (1 MiB a name, 2^20 frames or\n"
	"256 MiB a stack, --max-output in all) is refused, as is a bad one.\n"
	"\n"
	"Exit status: 0 success, 1 a bad or unreadable profile or a write error,\n"
	"2 usage error.  See pprof-collapse(1).";

int main(int argc, char **argv)
{
	struct pprof_collapse_opts o = PPROF_COLLAPSE_OPTS_INIT;
	struct fold_table *t;
	struct skip_log *skips;
	GPtrArray *keys = g_ptr_array_new_with_free_func(g_free);
	int status = FK_EXIT_OK;
	GError *err = NULL;

	tool_init("pprof-collapse");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Convert pprof profiles to folded stacks.", description, entries);
	for (char **k = opts.tagroot; k && *k; k++) {
		char **parts = g_strsplit(*k, ",", -1);

		for (char **p = parts; *p; p++)
			if (**p)
				g_ptr_array_add(keys, g_strdup(*p));
		g_strfreev(parts);
	}
	o.tagroot = (const char *const *)keys->pdata;
	o.ntagroot = keys->len;
	o.lines = opts.lines;
	o.addrs = opts.addrs;

	o.max_output = opts.max_output ? tool_size_arg("--max-output", opts.max_output) : 0;

	t = fold_table_new();
	skips = skip_log_new();
	for (int i = 1; i < argc || i == 1; i++) {
		struct pprof_profile *p = pprof_profile_read(i < argc ? argv[i] : "-", 0, &err);
		struct fold_table *got = NULL;

		if (!p || (o.sample_index = pprof_profile_sample_index(p, opts.sample_index, &err)) < 0 ||
		    !(got = pprof_collapse(p, &o, skips, &err))) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		} else if (fold_table_size(t) == 0) {
			fold_table_free(t);
			t = got;
		} else {
			fold_table_foreach(got, add_entry, t);
			fold_table_free(got);
		}
		pprof_profile_free(p);
	}
	if (fold_table_write(t, stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	tool_report_skipped(skips, opts.verbose,
			    skip_log_total(skips) == 1 ? "sample" : "samples");
	skip_log_free(skips);
	fold_table_free(t);
	g_ptr_array_free(keys, TRUE);
	return tool_finish(status);
}
