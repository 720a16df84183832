/*
 * fold2pprof - folded stacks to a gzip-compressed pprof profile
 * (profile.proto).  See docs/fold2pprof.1.
 */
#include "core/foldtable.h"
#include "core/outfile.h"
#include "export/pprof.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct opts {
	char *output, *type;
	gboolean verbose;
} opts;

static const GOptionEntry entries[] = {
	{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &opts.output, "Write the profile to FILE (default: standard output)", "FILE" },
	{ "type", 0, 0, G_OPTION_ARG_STRING, &opts.type, "The sample type, e.g. cpu/nanoseconds, off_cpu/microseconds (default: samples/count)", "NAME/UNIT" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "List every skipped line with its line number", NULL },
	{ NULL },
};

static const char description[] =
	"Reads folded stacks from each FILE (or standard input, or '-') as one\n"
	"profile and writes it as a gzip-compressed pprof profile (profile.proto):\n"
	"one sample per stack, leaf first, valued by its count.  A root frame\n"
	"such as fp-collapse --tid writes (NAME-PID/TID) also labels its samples\n"
	"with comm, pid and tid.\n"
	"\n"
	"Examples:\n"
	"  fp-collapse --tid perf.txt | fold2pprof --type cpu/nanoseconds -o cpu.pb.gz\n"
	"  pprof -http=: cpu.pb.gz\n"
	"  fold2pprof -o app.pb.gz app.folded && pprof -top app.pb.gz\n"
	"\n"
	"Exit status: 0 success, 1 bad or unreadable input or a write error,\n"
	"2 usage error.  See fold2pprof(1).";

/* Writes -o FILE whole or not at all (see core/outfile.h). */
static int write_file(struct pprof_builder *b, const char *path)
{
	GError *err = NULL;
	struct fk_outfile *f = fk_outfile_open(path, &err);
	int rc;

	if (!f) {
		tool_warn_error(err);
		return -1;
	}
	rc = pprof_write(b, fk_outfile_stream(f), path, &err);
	if (fk_outfile_close(f, rc == 0, rc == 0 ? &err : NULL) < 0)
		rc = -1;
	if (err)
		tool_warn_error(err);
	return rc;
}

int main(int argc, char **argv)
{
	struct fold_table *t;
	struct fold_entry **e;
	struct skip_log *skips;
	struct pprof_builder *b;
	GPtrArray *inputs;
	char *type, *unit;
	size_t n;
	int status;
	GError *err = NULL;

	tool_init("fold2pprof");
	tool_parse(&argc, &argv, "[FILE…]",
		   "Convert folded stacks to a pprof profile (gzip-compressed profile.proto).",
		   description, entries);
	type = g_strdup(opts.type ? opts.type : "samples/count");
	if (!(unit = strchr(type, '/')) || unit == type || !unit[1] || strchr(unit + 1, '/'))
		tool_usage_error("--type '%s': expected NAME/UNIT, e.g. cpu/nanoseconds", type);
	*unit++ = '\0';
	if (!opts.output && isatty(STDOUT_FILENO))
		tool_usage_error("standard output is a terminal: use -o FILE or a redirection");

	t = fold_table_new();
	skips = skip_log_new();
	status = tool_read_table(argv + 1, argc - 1, skips, t, true, &inputs);
	tool_report_skips(skips, opts.verbose);

	b = pprof_new(type, unit);
	e = fold_table_sorted(t, &n);
	for (size_t i = 0; i < n; i++)
		if (pprof_add_folded(b, e[i]->stack, e[i]->len, e[i]->count[0], true, &err) < 0) {
			tool_warn("stack '%.*s': %s", (int)MIN(e[i]->len, 200), e[i]->stack, err->message);
			g_clear_error(&err);
			status = FK_EXIT_FAILURE;
		}
	if (opts.output ? write_file(b, opts.output) < 0
			: pprof_write(b, stdout, "<stdout>", &err) < 0) {
		if (err)
			tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	if (pprof_replaced(b))
		tool_warn("%" G_GUINT64_FORMAT " names held bytes that are not UTF-8: written with U+FFFD",
			  pprof_replaced(b));
	pprof_free(b);
	g_free(e);
	g_free(type);
	skip_log_free(skips);
	fold_table_free(t);
	g_ptr_array_free(inputs, TRUE);
	return tool_finish(status);
}
