/*
 * profile.c - fold-push's operands: files, split= directories and
 * fp-record captures, found by what their index.tsv's header names, so
 * that columns added later change nothing.
 */
#include "store/profile.h"

#include "core/error.h"
#include "core/folded.h"
#include "core/skiplog.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define INDEX_MAX (64u << 20)

void fk_push_item_free(gpointer p)
{
	struct fk_push_item *it = p;

	if (!it)
		return;
	g_free(it->path);
	fk_labels_free(it->labels);
	g_free(it);
}

/* Undoes core/textesc.h's FK_ESC_BACKSLASH escaping ("\xNN", "\\"); any
 * other backslash is kept as it is. */
static char *unescape(const char *s)
{
	GString *out = g_string_sized_new(strlen(s));

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == '\\') {
			g_string_append_c(out, '\\');
			s++;
		} else if (s[0] == '\\' && s[1] == 'x' && g_ascii_isxdigit(s[2]) &&
			   g_ascii_isxdigit(s[3])) {
			char c = (char)(g_ascii_xdigit_value(s[2]) * 16 + g_ascii_xdigit_value(s[3]));

			if (c)
				g_string_append_c(out, c);
			s += 3;
		} else {
			g_string_append_c(out, *s);
		}
	}
	return g_string_free(out, FALSE);
}

static int column(char **head, const char *name)
{
	for (int i = 0; head[i]; i++)
		if (strcmp(head[i], name) == 0)
			return i;
	return -1;
}

/* DIR/CELL when CELL is a relative path inside DIR naming a regular file
 * (not a link), else NULL with *err set. */
static char *listed_file(const char *dir, const char *index, uint64_t line, const char *cell,
			 GError **err)
{
	char **parts = g_strsplit(cell, "/", -1);
	bool ok = *cell != '\0';
	struct stat st;
	char *path;

	for (int i = 0; ok && parts[i]; i++)
		ok = *parts[i] && strcmp(parts[i], ".") != 0 && strcmp(parts[i], "..") != 0;
	g_strfreev(parts);
	if (!ok) {
		fk_error_at(err, FK_ERROR_PARSE, index, line,
			    "a file that is not inside the directory");
		return NULL;
	}
	path = g_build_filename(dir, cell, NULL);
	if (lstat(path, &st) != 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read (listed in %s:%" G_GUINT64_FORMAT "): %s",
			    index, line, g_strerror(errno));
		g_free(path);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "%s, not a regular file: not read",
			    S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
		g_free(path);
		return NULL;
	}
	return path;
}

/* The program's name from an exe cell: its file name, without the
 * " (deleted)" of a program rebuilt while it ran. */
static char *service_of(const char *exe, const char *process)
{
	const char *slash;
	char *s;

	if (!*exe || strcmp(exe, "-") == 0)
		return g_strdup(process);
	slash = strrchr(exe, '/');
	s = g_strdup(slash ? slash + 1 : exe);
	if (g_str_has_suffix(s, " (deleted)"))
		s[strlen(s) - 10] = '\0';
	if (!*s) {
		g_free(s);
		return g_strdup(process);
	}
	return s;
}

static const struct side {
	const char *file_col, *unit_col, *profile, *unit;
} sides[] = {
	{ "on_folded", "on_unit", "on-cpu", "ns" },
	{ "off_folded", "off_unit", "off-cpu", "us" },
	{ "wake_folded", "wake_unit", "off-wake", "us" },
};

static int read_index(const char *dir, GPtrArray *out, GError **err)
{
	GPtrArray *items = g_ptr_array_new_with_free_func(fk_push_item_free);
	char *index = g_build_filename(dir, "index.tsv", NULL);
	char *text = NULL, **lines = NULL, **head = NULL;
	GError *e = NULL;
	gsize len = 0;
	struct stat st;
	int rc = -1;
	bool capture;
	int cfile, ccomm, cpid, cunit, cexe, crole, cside[G_N_ELEMENTS(sides)], cside_unit[G_N_ELEMENTS(sides)];

	if (lstat(index, &st) != 0 || !S_ISREG(st.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, dir, 0,
			    "a directory without an index.tsv: not a split= directory or an fp-record capture");
		goto out;
	}
	if (st.st_size > INDEX_MAX) {
		fk_error_at(err, FK_ERROR_RANGE, index, 0, "larger than %u MiB: not an index", INDEX_MAX >> 20);
		goto out;
	}
	if (!g_file_get_contents(index, &text, &len, &e)) {
		fk_error_at(err, FK_ERROR_IO, index, 0, "cannot read: %s", e->message);
		g_error_free(e);
		goto out;
	}
	if (len == 0 || memchr(text, '\0', len)) {
		fk_error_at(err, FK_ERROR_PARSE, index, 0, len ? "a NUL byte: not an index" : "empty");
		goto out;
	}
	lines = g_strsplit(text, "\n", -1);
	head = g_strsplit(lines[0], "\t", -1);
	capture = false;
	for (size_t s = 0; s < G_N_ELEMENTS(sides); s++) {
		cside[s] = column(head, sides[s].file_col);
		cside_unit[s] = column(head, sides[s].unit_col);
		capture = capture || cside[s] >= 0;
	}
	cfile = column(head, "file");
	ccomm = column(head, "process") >= 0 ? column(head, "process") : column(head, "comm");
	cpid = column(head, "pid");
	cunit = column(head, "unit");
	cexe = column(head, "exe");
	crole = column(head, "role");
	if ((!capture && cfile < 0) || ccomm < 0 || cpid < 0) {
		fk_error_at(err, FK_ERROR_PARSE, index, 1,
			    "not the index of a split= directory (file, comm, pid) or of an "
			    "fp-record capture (process, pid, on_folded, off_folded)");
		goto out;
	}
	for (int i = 1; lines[i]; i++) {
		guint ncols = g_strv_length(head);
		char **cells;
		struct fk_labels *base;
		char *process;

		if (!*lines[i])
			continue;
		cells = g_strsplit(lines[i], "\t", -1);
		if (g_strv_length(cells) < ncols || !*cells[cpid] ||
		    strspn(cells[cpid], "0123456789") != strlen(cells[cpid])) {
			fk_error_at(err, FK_ERROR_PARSE, index, (uint64_t)i + 1,
				    "not a process line (%u cells, a pid)", ncols);
			g_strfreev(cells);
			goto out;
		}
		/* a capture escapes its names; a split index does when it says
		 * its unit (an older plugin wrote them raw) */
		process = capture || cunit >= 0 ? unescape(cells[ccomm]) : g_strdup(cells[ccomm]);
		base = fk_labels_new();
		fk_labels_set(base, "process", process);
		fk_labels_set(base, "pid", cells[cpid]);
		if (crole >= 0 && strcmp(cells[crole], "-") != 0) {
			char *role = unescape(cells[crole]);

			fk_labels_set(base, "role", role);
			g_free(role);
		}
		if (capture) {
			char *exe = cexe >= 0 ? unescape(cells[cexe]) : g_strdup("");
			char *service = service_of(exe, process);

			fk_labels_set(base, "service", service);
			g_free(service);
			g_free(exe);
		}
		for (size_t s = 0; s < (capture ? G_N_ELEMENTS(sides) : 1); s++) {
			const char *cell = capture ? (cside[s] >= 0 ? cells[cside[s]] : "-")
						   : cells[cfile];
			struct fk_push_item *it;
			char *path;

			if (capture && strcmp(cell, "-") == 0)
				continue;
			if (!(path = listed_file(dir, index, (uint64_t)i + 1, cell, err))) {
				fk_labels_free(base);
				g_free(process);
				g_strfreev(cells);
				goto out;
			}
			it = g_new0(struct fk_push_item, 1);
			it->path = path;
			it->labels = fk_labels_copy(base);
			it->written = (int64_t)st.st_mtime;
			if (capture) {
				const char *unit = cside_unit[s] >= 0 ? cells[cside_unit[s]] : "-";

				fk_labels_set(it->labels, "profile", sides[s].profile);
				fk_labels_set(it->labels, "unit",
					      *unit && strcmp(unit, "-") != 0 ? unit : sides[s].unit);
			} else if (cunit >= 0 && *cells[cunit] && strcmp(cells[cunit], "-") != 0) {
				fk_labels_set(it->labels, "unit", cells[cunit]);
			}
			g_ptr_array_add(items, it);
		}
		fk_labels_free(base);
		g_free(process);
		g_strfreev(cells);
	}
	rc = 0;
	/* all of the directory's profiles, or none */
	for (guint i = 0; i < items->len; i++)
		g_ptr_array_add(out, g_steal_pointer(&items->pdata[i]));
out:
	g_ptr_array_unref(items);
	g_strfreev(head);
	g_strfreev(lines);
	g_free(text);
	g_free(index);
	return rc;
}

int fk_push_items(const char *operand, GPtrArray *items, GError **err)
{
	struct stat st;

	if (strcmp(operand, "-") != 0 && stat(operand, &st) == 0 && S_ISDIR(st.st_mode))
		return read_index(operand, items, err);
	{
		struct fk_push_item *it = g_new0(struct fk_push_item, 1);

		it->path = g_strdup(operand);
		it->labels = fk_labels_new();
		g_ptr_array_add(items, it);
	}
	return 0;
}

struct first_skip {
	char *file;
	uint64_t line;
	const char *reason;
};

static void note_first(const char *file, uint64_t line, const char *reason, void *data)
{
	struct first_skip *f = data;

	if (!f->reason) {
		f->file = g_strdup(file);
		f->line = line;
		f->reason = reason;
	}
}

struct fk_profile *fk_profile_read(const char *path, GError **err)
{
	struct folded_shape plain = { .ncounts = 1 };
	struct skip_log *skips = skip_log_new();
	struct folded_reader *fr = folded_reader_open(path, skips, err);
	struct fk_profile *p;
	struct folded_line fl;
	struct stat st;
	int rc;

	if (!fr) {
		skip_log_free(skips);
		return NULL;
	}
	folded_reader_set_shape(fr, &plain);
	p = g_new0(struct fk_profile, 1);
	p->path = g_strdup(path);
	p->table = fold_table_new();
	while ((rc = folded_reader_next(fr, &fl, err)) > 0)
		fold_table_add2_soon(p->table, fl.stack, fl.len, fl.count[0], 0, false);
	folded_reader_free(fr);
	if (rc == 0 && skip_log_total(skips)) {
		struct first_skip f = { 0 };

		skip_log_foreach(skips, note_first, &f);
		fk_error_at(err, FK_ERROR_PARSE, f.file ? f.file : path, f.line,
			    "%s (%" G_GUINT64_FORMAT " such lines): a profile is pushed whole, "
			    "so none of it was", f.reason ? f.reason : "not a folded stack",
			    skip_log_total(skips));
		g_free(f.file);
		rc = -1;
	}
	folded_shape_release(&plain);
	skip_log_free(skips);
	if (rc < 0) {
		fk_profile_free(p);
		return NULL;
	}
	p->entries = fold_table_sorted(p->table, &p->n);
	p->total = fold_table_total(p->table, 0);
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0)
		p->mtime = (int64_t)st.st_mtime;
	else
		p->mtime = (int64_t)time(NULL);
	return p;
}

void fk_profile_free(struct fk_profile *p)
{
	if (!p)
		return;
	g_free(p->entries);
	if (p->table)
		fold_table_free(p->table);
	g_free(p->path);
	g_free(p);
}
