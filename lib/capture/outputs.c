#include "capture/outputs.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/foldtable.h"
#include "core/skiplog.h"
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

static void split_entry_free(gpointer p)
{
	struct fk_split_entry *e = p;

	g_free(e->file);
	g_free(e->comm);
	g_free(e->unit);
	g_free(e);
}

/* undoes core/textesc.h's escaping with FK_ESC_BACKSLASH: \xNN and \\ */
static char *unescape_cell(const char *s)
{
	GString *out = g_string_new(NULL);

	while (*s) {
		if (s[0] == '\\' && s[1] == '\\') {
			g_string_append_c(out, '\\');
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'x' && g_ascii_isxdigit(s[2]) &&
			   g_ascii_isxdigit(s[3])) {
			g_string_append_c(out, (char)(g_ascii_xdigit_value(s[2]) << 4 |
						      g_ascii_xdigit_value(s[3])));
			s += 4;
		} else {
			g_string_append_c(out, *s++);
		}
	}
	return g_string_free(out, FALSE);
}

static int column(char **cells, const char *name)
{
	for (int i = 0; cells[i]; i++)
		if (strcmp(cells[i], name) == 0)
			return i;
	return -1;
}

GPtrArray *fk_split_index_read(const char *path, GError **err)
{
	char *text = NULL, **lines, **head;
	GError *e = NULL;
	GPtrArray *out;
	gsize len = 0;
	int cf, cc, cp, cu, ct, ncols;

	if (!g_file_get_contents(path, &text, &len, &e)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read: %s", e->message);
		g_error_free(e);
		return NULL;
	}
	if (len == 0 || memchr(text, '\0', len)) {
		fk_error_at(err, FK_ERROR_PARSE, path, 0, len ? "NUL byte: not an index" : "empty");
		g_free(text);
		return NULL;
	}
	lines = g_strsplit(text, "\n", -1);
	g_free(text);
	head = g_strsplit(lines[0], "\t", -1);
	cf = column(head, "file");
	cc = column(head, "comm");
	cp = column(head, "pid");
	cu = column(head, "unit");
	ct = column(head, "total");
	ncols = (int)g_strv_length(head);
	g_strfreev(head);
	if (cf < 0 || cc < 0 || cp < 0) {
		fk_error_at(err, FK_ERROR_PARSE, path, 1,
			    "no file, comm and pid columns in the header");
		g_strfreev(lines);
		return NULL;
	}
	out = g_ptr_array_new_with_free_func(split_entry_free);
	for (int i = 1; lines[i]; i++) {
		char **cells, *end;
		struct fk_split_entry *en;
		long pid;

		if (!*lines[i])
			continue;
		cells = g_strsplit(lines[i], "\t", -1);
		errno = 0;
		pid = (int)g_strv_length(cells) >= ncols ? strtol(cells[cp], &end, 10) : -1;
		if (pid <= 0 || errno || *end || strchr(cells[cf], '/') || !*cells[cf]) {
			fk_error_at(err, FK_ERROR_PARSE, path, (uint64_t)i + 1,
				    "not a process line (file, comm, pid)");
			g_strfreev(cells);
			g_strfreev(lines);
			g_ptr_array_unref(out);
			return NULL;
		}
		en = g_new0(struct fk_split_entry, 1);
		en->file = g_strdup(cells[cf]);
		/* a plugin that says its unit escapes names (core/textesc.h);
		 * an older one wrote them raw, tabs and line breaks as blanks */
		en->comm = cu >= 0 ? unescape_cell(cells[cc]) : g_strdup(cells[cc]);
		en->pid = (int)pid;
		g_ptr_array_add(out, en);
		if (cu >= 0)
			en->unit = g_strdup(cells[cu]);
		if (ct >= 0 && fk_count_parse(cells[ct], strlen(cells[ct]), &en->total) != FK_COUNT_OK) {
			fk_error_at(err, FK_ERROR_PARSE, path, (uint64_t)i + 1,
				    "total '%s' is not a count", cells[ct]);
			g_strfreev(cells);
			g_strfreev(lines);
			g_ptr_array_unref(out);
			return NULL;
		}
		en->has_total = ct >= 0;
		g_strfreev(cells);
	}
	g_strfreev(lines);
	return out;
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

static int write_table(const struct fold_table *t, const char *path, GError **err)
{
	FILE *f = fopen(path, "w");
	GError *e = NULL;
	int rc;

	if (!f) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot create: %s", g_strerror(errno));
		return -1;
	}
	rc = fold_table_write(t, f, 1, &e);
	if (fclose(f) != 0 && rc == 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "write error: %s", g_strerror(errno));
		rc = -1;
	} else if (rc != 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "write error: %s", e->message);
	}
	g_clear_error(&e);
	return rc;
}

static int by_pid_key(const void *a, const void *b)
{
	int x = GPOINTER_TO_INT(*(const gpointer *)a), y = GPOINTER_TO_INT(*(const gpointer *)b);

	return (x > y) - (x < y);
}

static int write_split(GHashTable *procs, const char *dir, GError **err)
{
	GList *keys = g_hash_table_get_keys(procs);
	GPtrArray *pids = g_ptr_array_new();
	GString *idx = g_string_new("file\tcomm\tpid\n");
	char *path;
	int rc = 0;

	for (GList *k = keys; k; k = k->next)
		g_ptr_array_add(pids, k->data);
	g_list_free(keys);
	g_ptr_array_sort(pids, by_pid_key);
	for (guint i = 0; i < pids->len && rc == 0; i++) {
		int pid = GPOINTER_TO_INT(g_ptr_array_index(pids, i));
		struct split_proc *sp = g_hash_table_lookup(procs, GINT_TO_POINTER(pid));
		char *stem = fk_out_stem(sp->comm, pid);

		path = g_strdup_printf("%s/%s.folded", dir, stem);
		rc = write_table(sp->t, path, err);
		g_string_append_printf(idx, "%s.folded\t", stem);
		fk_text_escape(idx, sp->comm, strlen(sp->comm), FK_ESC_BACKSLASH);
		g_string_append_printf(idx, "\t%d\n", pid);
		g_free(path);
		g_free(stem);
	}
	if (rc == 0) {
		GError *e = NULL;

		path = g_strdup_printf("%s/index.tsv", dir);
		if (!g_file_set_contents(path, idx->str, (gssize)idx->len, &e)) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot write: %s", e->message);
			g_error_free(e);
			rc = -1;
		}
		g_free(path);
	}
	g_string_free(idx, TRUE);
	g_ptr_array_unref(pids);
	return rc;
}

int fk_split_by_pid(const char *in, const char *dir, uint64_t *unsplit, GError **err)
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
		rc = write_split(procs, dir, err);
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
	g_free(r);
}

static void cell(GString *s, const char *v)
{
	if (v)
		fk_text_escape(s, v, strlen(v), FK_ESC_BACKSLASH);
	else
		g_string_append_c(s, '-');
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
				  "on_folded\ton_svg\toff_folded\toff_svg\n");

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
