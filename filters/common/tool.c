#include "tool.h"

#include "core/textesc.h"

#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *name = "foldkit";
static char outbuf[1 << 16];

void tool_init(const char *tool)
{
	name = tool;
	/*
	 * glib writes its messages (--help) in the locale's charset, and under
	 * the C locale turns "…" into "?"; the tools treat their data as bytes
	 * whatever the locale, so a UTF-8 character type costs nothing.
	 */
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		setlocale(LC_CTYPE, "");
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
}

const char *tool_name(void)
{
	return name;
}

/*
 * Messages quote names the profiled programs chose (processes, frames,
 * events, file names): control characters in them are escaped, so that no
 * input can drive the user's terminal or forge a line of output.
 */
static void vwarn(const char *fmt, va_list ap)
{
	char *msg = g_strdup_vprintf(fmt, ap);
	GString *line = g_string_new(name);

	g_string_append(line, ": ");
	fk_text_escape(line, msg, strlen(msg), 0);
	g_string_append_c(line, '\n');
	fflush(stdout);
	fputs(line->str, stderr);
	g_string_free(line, TRUE);
	g_free(msg);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void tool_warn_error(GError *err)
{
	tool_warn("%s", err->message);
	g_error_free(err);
}

uint64_t tool_size_arg(const char *option, const char *value)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	uint64_t v;

	errno = 0;
	v = g_ascii_strtoull(value, &end, 10);
	if (!g_ascii_isdigit(*value) || errno)
		goto bad;
	if (*end) {
		if (end[1] || !(u = strchr(units, g_ascii_toupper(*end))))
			goto bad;
		for (int shift = 10 * (int)(u - units + 1); shift > 0; shift -= 10) {
			if (v > UINT64_MAX >> 10)
				goto bad;
			v <<= 10;
		}
	}
	return v ? v : UINT64_MAX;
bad:
	tool_usage_error("%s '%s': not a size (bytes, or a number with K, M, G or T)",
			 option, value);
}

void tool_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", name);
	exit(FK_EXIT_USAGE);
}

void tool_parse(int *argc, char ***argv, const char *params,
		const char *summary, const char *description,
		const GOptionEntry *entries)
{
	gboolean version = FALSE;
	GOptionEntry common[] = {
		{ "version", 0, 0, G_OPTION_ARG_NONE, &version,
		  "Print the version and exit", NULL },
		{ NULL },
	};
	GOptionContext *ctx = g_option_context_new(params);
	GError *err = NULL;

	g_option_context_set_summary(ctx, summary);
	g_option_context_set_description(ctx, description);
	g_option_context_add_main_entries(ctx, entries, NULL);
	g_option_context_add_main_entries(ctx, common, NULL);
	if (!g_option_context_parse(ctx, argc, argv, &err)) {
		char *msg = g_strdup(err->message);
		g_error_free(err);
		g_option_context_free(ctx);
		tool_usage_error("%s", msg);
	}
	g_option_context_free(ctx);
	if (version) {
		printf("%s %s\n", name, FOLDKIT_VERSION);
		exit(tool_finish(FK_EXIT_OK));
	}
	/* GOption leaves "--" in place when it ends the options */
	if (*argc > 1 && strcmp((*argv)[1], "--") == 0) {
		memmove(&(*argv)[1], &(*argv)[2], (size_t)(*argc - 1) * sizeof(char *));
		(*argc)--;
	}
}

static void print_skip(const char *file, uint64_t line, const char *reason, void *data)
{
	tool_warn("%s:%" G_GUINT64_FORMAT ": skipped: %s", file, line, reason);
}

void tool_report_skips(const struct skip_log *skips, bool verbose)
{
	tool_report_skipped(skips, verbose, NULL);
}

void tool_report_skipped(const struct skip_log *skips, bool verbose,
			 const char *what)
{
	char *s = skip_log_summary(skips, what);
	uint64_t more;

	if (!s)
		return;
	if (verbose) {
		more = skip_log_foreach(skips, print_skip, NULL);
		if (more)
			tool_warn("... and %" G_GUINT64_FORMAT " more", more);
	}
	tool_warn("%s%s", s, verbose ? "" : " (-v lists them)");
	g_free(s);
}

int tool_report_shape(const struct folded_shape *sh)
{
	char *note = folded_shape_note(sh);

	if (!note)
		return FK_EXIT_OK;
	tool_warn("%s", note);
	g_free(note);
	return FK_EXIT_FAILURE;
}

static const char *folded_name = "-";

const char *tool_folded_name(void)
{
	return folded_name;
}

int tool_read_folded(char **paths, int n, struct skip_log *skips,
		     struct folded_shape *sh, tool_folded_fn fn, void *data,
		     GPtrArray **inputs)
{
	int status = FK_EXIT_OK;
	struct folded_shape own = FOLDED_SHAPE_INIT;	/* one profile */
	struct folded_shape *shape = sh ? sh : &own;

	*inputs = g_ptr_array_new_with_free_func((GDestroyNotify)folded_reader_free);
	for (int i = 0; i < n || i == 0; i++) {
		GError *err = NULL;
		struct folded_reader *fr = folded_reader_open_mapped(i < n ? paths[i] : "-",
								     skips, &err);
		struct folded_line fl;
		bool stable;
		int rc;

		if (!fr) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
			continue;
		}
		stable = folded_reader_stable(fr);
		folded_reader_set_shape(fr, shape);
		folded_name = folded_reader_name(fr);
		while ((rc = folded_reader_next(fr, &fl, &err)) > 0)
			fn(&fl, stable, data);
		if (rc < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		}
		g_ptr_array_add(*inputs, fr);
	}
	if (!sh && tool_report_shape(&own) != FK_EXIT_OK)
		status = FK_EXIT_FAILURE;
	folded_shape_release(&own);
	return status;
}

int tool_read_inputs(char **paths, int n, tool_input_fn fn, void *data)
{
	int status = FK_EXIT_OK;

	for (int i = 0; i < n || i == 0; i++) {
		GError *err = NULL;

		if (fn(i < n ? paths[i] : "-", data, &err) < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		}
	}
	return status;
}

struct table_run {
	struct fold_table *t;
	bool single;
	uint64_t diffs;
};

static void table_line(const struct folded_line *fl, bool stable, void *data)
{
	struct table_run *run = data;

	if (run->single && fl->ncounts > 1) {
		if (!run->diffs++)
			tool_warn("%s:%" G_GUINT64_FORMAT ": a differential line (two counts): "
				  "this output has one count per stack", tool_folded_name(),
				  fl->lineno);
		return;
	}
	tool_table_add(run->t, fl, stable, fl->stack, fl->len);
}

int tool_read_table(char **paths, int n, struct skip_log *skips,
		    struct fold_table *t, bool single, GPtrArray **inputs)
{
	struct table_run run = { t, single, 0 };
	int status = tool_read_folded(paths, n, skips, NULL, table_line, &run, inputs);

	if (run.diffs > 1)
		tool_warn("... and %" G_GUINT64_FORMAT " more differential lines", run.diffs - 1);
	return run.diffs ? FK_EXIT_FAILURE : status;
}

int tool_finish(int status)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		/* a failed status means lib/ has reported the write already */
		if (status == FK_EXIT_OK)
			tool_warn("write error: %s", g_strerror(errno ? errno : EIO));
		return FK_EXIT_FAILURE;
	}
	return status;
}
