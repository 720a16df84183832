#include "capture/outputs.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "core/skiplog.h"
#include "core/splitindex.h"
#include "core/textesc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

char *fk_out_stem(const char *comm, int pid)
{
	GString *s = g_string_new(NULL);

	for (const char *c = comm ? comm : ""; *c; c++)
		g_string_append_c(s, g_ascii_isalnum(*c) || *c == '.' || *c == '_' ||
				     *c == '-' ? *c : '_');
	/* no hidden file, no "." or "..", nothing an option parser takes */
	if (s->len == 0 || s->str[0] == '.' || s->str[0] == '-')
		g_string_prepend_c(s, '_');
	g_string_append_printf(s, "-%d", pid);
	return g_string_free(s, FALSE);
}

struct split_proc {
	struct fold_table *t;
	char *comm;
};

static void split_proc_free(gpointer p)
{
	struct split_proc *sp = p;

	fold_table_free(sp->t);
	g_free(sp->comm);
	g_free(sp);
}

static int by_pid_key(const void *a, const void *b)
{
	int x = GPOINTER_TO_INT(*(const gpointer *)a), y = GPOINTER_TO_INT(*(const gpointer *)b);

	return (x > y) - (x < y);
}

/* the profiles by pid into dir, each NAME-PID.folded, and their index */
static int write_split(GHashTable *procs, struct fk_outdir *dir, const char *unit, GError **err)
{
	GList *keys = g_hash_table_get_keys(procs);
	GPtrArray *pids = g_ptr_array_new();
	struct fk_split_out *rows;
	GString *idx = g_string_new(NULL);
	struct fk_outfile *o;
	int rc = 0;

	for (GList *k = keys; k; k = k->next)
		g_ptr_array_add(pids, k->data);
	g_list_free(keys);
	g_ptr_array_sort(pids, by_pid_key);
	rows = g_new0(struct fk_split_out, pids->len + 1);
	for (guint i = 0; i < pids->len && rc == 0; i++) {
		int pid = GPOINTER_TO_INT(g_ptr_array_index(pids, i));
		struct split_proc *sp = g_hash_table_lookup(procs, GINT_TO_POINTER(pid));
		char *stem = fk_out_stem(sp->comm, pid);
		GError *e = NULL;

		rows[i] = (struct fk_split_out){ .file = g_strconcat(stem, ".folded", NULL),
						 .comm = sp->comm, .pid = pid,
						 .total = fold_table_total(sp->t, 0) };
		if (!(o = fk_outdir_file(dir, rows[i].file, err))) {
			rc = -1;
		} else if (fold_table_write(sp->t, fk_outfile_stream(o), 1, &e) != 0) {
			fk_outfile_abort(o);
			fk_error_at(err, FK_ERROR_IO, fk_outdir_path(dir), 0, "%s: write error: %s",
				    rows[i].file, e->message);
			g_error_free(e);
			rc = -1;
		} else {
			rc = fk_outfile_commit(o, err);
		}
		g_free(stem);
	}
	if (rc == 0) {
		fk_split_index_format(idx, rows, pids->len, unit, NULL);
		if (!(o = fk_outdir_file(dir, "index.tsv", err)))
			rc = -1;
		else	/* the commit checks the stream's errors */
			rc = (fwrite(idx->str, 1, idx->len, fk_outfile_stream(o)),
			      fk_outfile_commit(o, err));
	}
	for (guint i = 0; i < pids->len; i++)
		g_free((char *)rows[i].file);
	g_free(rows);
	g_string_free(idx, TRUE);
	g_ptr_array_unref(pids);
	return rc;
}

int fk_split_by_pid(const char *in, struct fk_outdir *dir, const char *unit, uint64_t *unsplit,
		    GError **err)
{
	struct skip_log *skips = skip_log_new();
	struct folded_reader *fr = folded_reader_open(in, skips, err);
	GHashTable *procs;
	struct folded_line fl;
	GString *stack = g_string_new(NULL);
	int rc;

	*unsplit = 0;
	if (!fr) {
		skip_log_free(skips);
		g_string_free(stack, TRUE);
		return -1;
	}
	procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, split_proc_free);
	while ((rc = folded_reader_next(fr, &fl, err)) > 0) {
		const char *semi = memchr(fl.stack, ';', fl.len);
		size_t rootlen = semi ? (size_t)(semi - fl.stack) : fl.len;
		const char *dash = g_strrstr_len(fl.stack, (gssize)rootlen, "-");
		struct split_proc *sp;
		long pid = 0;

		for (const char *c = dash ? dash + 1 : NULL; c && c < fl.stack + rootlen; c++) {
			if (!g_ascii_isdigit(*c) || pid > 99999999) {
				pid = 0;
				break;
			}
			pid = pid * 10 + (*c - '0');
		}
		/* fp-collapse writes one count: a differential line is no profile */
		if (!dash || dash == fl.stack || pid <= 0 || fl.ncounts != 1) {
			(*unsplit)++;
			continue;
		}
		sp = g_hash_table_lookup(procs, GINT_TO_POINTER((int)pid));
		if (!sp) {
			sp = g_new0(struct split_proc, 1);
			sp->t = fold_table_new();
			g_hash_table_insert(procs, GINT_TO_POINTER((int)pid), sp);
		}
		/* the process is named after its main thread (tid == pid),
		 * which fp-collapse --pid cannot tell: the first name seen */
		if (!sp->comm)
			sp->comm = g_strndup(fl.stack, (gsize)(dash - fl.stack));
		g_string_assign(stack, "");
		g_string_append_len(stack, fl.stack, dash - fl.stack);
		/* as the collapser names a process: no blank, no leading '#',
		 * so that the root alone cannot read back as "stack COUNT" or
		 * as a comment */
		for (gsize k = 0; k < stack->len; k++)
			if (stack->str[k] == ' ' || stack->str[k] == '\t' ||
			    (k == 0 && stack->str[k] == '#'))
				stack->str[k] = '_';
		g_string_append_len(stack, fl.stack + rootlen, (gssize)(fl.len - rootlen));
		fold_table_add(sp->t, stack->str, stack->len, fl.count[0]);
	}
	*unsplit += skip_log_total(skips);
	folded_reader_free(fr);
	skip_log_free(skips);
	g_string_free(stack, TRUE);
	if (rc == 0)
		rc = write_split(procs, dir, unit, err);
	g_hash_table_destroy(procs);
	return rc < 0 ? -1 : 0;
}

/* whether frame f is in stack s[0..len) */
static bool has_frame(const char *s, size_t len, const char *f)
{
	const size_t n = strlen(f);
	const char *p = s, *end = s + len;

	while ((p = g_strstr_len(p, end - p, f))) {
		if ((p == s || p[-1] == ';') && (p + n == end || p[n] == ';'))
			return true;
		p += n;
	}
	return false;
}

int fk_folded_sum(const char *path, const char *const *unresolved,
		  struct fk_folded_sum *s, GError **err)
{
	struct skip_log *skips = skip_log_new();
	struct folded_reader *fr = folded_reader_open(path, skips, err);
	struct folded_line fl;
	int rc;

	memset(s, 0, sizeof(*s));
	if (!fr) {
		skip_log_free(skips);
		return -1;
	}
	while ((rc = folded_reader_next(fr, &fl, err)) > 0) {
		s->total += fl.count[0];
		s->stacks++;
		for (const char *const *u = unresolved; u && *u; u++) {
			if (has_frame(fl.stack, fl.len, *u)) {
				s->unresolved += fl.count[0];
				break;
			}
		}
	}
	s->skipped = skip_log_total(skips);
	folded_reader_free(fr);
	skip_log_free(skips);
	return rc < 0 ? -1 : 0;
}

void fk_out_row_free(struct fk_out_row *r)
{
	if (!r)
		return;
	g_free(r->comm);
	g_free(r->exe);
	g_free(r->on_folded);
	g_free(r->off_folded);
	g_free(r->on_svg);
	g_free(r->off_svg);
	g_free(r->on_html);
	g_free(r->off_html);
	g_free(r->off_unrepaired_why);
	g_free(r->on_caller_lost_in);
	g_free(r->on_speedscope);
	g_free(r->off_speedscope);
	g_free(r->runq_folded);
	g_free(r->runq_svg);
	g_free(r->wake_folded);
	g_free(r->wake_svg);
	g_free(r->role);
	g_free(r->name);
	g_strfreev(r->argv);
	g_free(r);
}

static void cell(GString *s, const char *v)
{
	if (v)
		fk_text_escape(s, v, strlen(v), FK_ESC_BACKSLASH);
	else
		g_string_append_c(s, '-');
}

/* the arguments, escaped, a blank inside one as \x20 */
static void args_cell(GString *s, char *const *argv)
{
	if (!argv || !argv[0]) {
		g_string_append_c(s, '-');
		return;
	}
	for (size_t i = 0; argv[i]; i++) {
		GString *a = g_string_new(NULL);

		fk_text_escape(a, argv[i], strlen(argv[i]), FK_ESC_BACKSLASH);
		if (i)
			g_string_append_c(s, ' ');
		for (const char *c = a->str; *c; c++)
			if (*c == ' ')
				g_string_append(s, "\\x20");
			else
				g_string_append_c(s, *c);
		g_string_free(a, TRUE);
	}
}

static void total_cell(GString *s, bool recorded, fk_count c, const char *unit)
{
	char buf[FK_COUNT_BUFSZ];

	if (recorded)
		g_string_append_len(s, buf, (gssize)fk_count_format(c, buf));
	else
		g_string_append_c(s, '-');
	g_string_append_printf(s, "\t%s", unit);
}

int fk_index_write(FILE *f, GPtrArray *rows, const char *name, GError **err)
{
	GString *s = g_string_new("process\tpid\texe\ton_cpu\ton_unit\toff_cpu\toff_unit\t"
				  "on_folded\ton_svg\toff_folded\toff_svg\ton_html\toff_html\t"
				  "role\tppid\targs\ton_speedscope\toff_speedscope\n");

	for (guint i = 0; i < rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(rows, i);

		cell(s, r->comm);
		g_string_append_printf(s, "\t%d\t", r->pid);
		cell(s, r->exe);
		g_string_append_c(s, '\t');
		total_cell(s, r->on, r->on_sum.total, FK_ON_UNIT);
		g_string_append_c(s, '\t');
		total_cell(s, r->off, r->off_sum.total, FK_OFF_UNIT);
		g_string_append_c(s, '\t');
		cell(s, r->on_folded);
		g_string_append_c(s, '\t');
		cell(s, r->on_svg);
		g_string_append_c(s, '\t');
		cell(s, r->off_folded);
		g_string_append_c(s, '\t');
		cell(s, r->off_svg);
		g_string_append_c(s, '\t');
		cell(s, r->on_html);
		g_string_append_c(s, '\t');
		cell(s, r->off_html);
		g_string_append_c(s, '\t');
		cell(s, r->role);
		if (r->ppid > 0)
			g_string_append_printf(s, "\t%d\t", r->ppid);
		else
			g_string_append(s, "\t-\t");
		args_cell(s, r->argv);
		g_string_append_c(s, '\t');
		cell(s, r->on_speedscope);
		g_string_append_c(s, '\t');
		cell(s, r->off_speedscope);
		g_string_append_c(s, '\n');
	}
	errno = 0;
	fwrite(s->str, 1, s->len, f);
	g_string_free(s, TRUE);
	if (fflush(f) != 0 || ferror(f)) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

char *fk_out_human(fk_count c, const char *unit)
{
	double v = fk_count_to_double(c), ns;

	if (strcmp(unit, FK_ON_UNIT) == 0)
		ns = v;
	else if (strcmp(unit, FK_OFF_UNIT) == 0)
		ns = v * 1e3;
	else
		return g_strdup_printf("%.0f %s", v, unit);
	if (ns >= 1e9)
		return g_strdup_printf("%.3f s", ns / 1e9);
	if (ns >= 1e6)
		return g_strdup_printf("%.1f ms", ns / 1e6);
	if (ns >= 1e3)
		return g_strdup_printf("%.1f us", ns / 1e3);
	return g_strdup_printf("%.0f ns", ns);
}
