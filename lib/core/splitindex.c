#include "core/splitindex.h"

#include "core/error.h"
#include "core/textesc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDEX "index.tsv"
#define SUFFIX ".folded"

bool fk_unit_ok(const char *unit)
{
	size_t n = strlen(unit);

	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (g_ascii_isalnum(unit[i]) || strchr("_-/.", unit[i]))
			continue;
		if ((unsigned char)unit[i] == 0xc2 && (unsigned char)unit[i + 1] == 0xb5) {
			i++;	/* µ */
			continue;
		}
		return false;
	}
	return true;
}

static void row_free(gpointer p)
{
	struct fk_split_row *r = p;

	g_free(r->file);
	g_free(r->comm);
	g_strfreev(r->cells);
	g_free(r);
}

void fk_split_index_free(struct fk_split_index *x)
{
	if (!x)
		return;
	g_free(x->path);
	g_strfreev(x->columns);
	g_free(x->unit);
	g_ptr_array_unref(x->rows);
	g_strfreev(x->unlisted);
	g_free(x);
}

static struct fk_split_index *index_new(const char *path)
{
	struct fk_split_index *x = g_new0(struct fk_split_index, 1);

	x->path = g_strdup(path);
	x->rows = g_ptr_array_new_with_free_func(row_free);
	x->columns = g_new0(char *, 1);
	x->unlisted = g_new0(char *, 1);
	return x;
}

static int column(char **names, const char *name)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

const char *fk_split_index_cell(const struct fk_split_index *x, const struct fk_split_row *r,
				const char *name)
{
	int c = column(x->columns, name);

	return c >= 0 && r->cells ? r->cells[c] : NULL;
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

/* a file the directory can hold: no '/', not hidden (temporary files are) */
static bool plain_file(const char *f)
{
	return *f && *f != '.' && !strchr(f, '/');
}

/* the columns of a row, checked and typed; -1 with *err */
static int fill_row(struct fk_split_index *x, struct fk_split_row *r, GHashTable *seen,
		    GError **err)
{
	const int cf = column(x->columns, "file"), cc = column(x->columns, "comm");
	const int cp = column(x->columns, "pid"), cs = column(x->columns, "samples");
	const int ct = column(x->columns, "total"), cu = column(x->columns, "unit");
	char **c = r->cells, *end;
	const char *why = NULL;

	if (!plain_file(c[cf])) {
		fk_error_at(err, FK_ERROR_PARSE, x->path, r->line, "file '%s' is not a file name "
			    "of the directory (empty, hidden, or with a '/')", c[cf]);
		return -1;
	}
	if (g_hash_table_contains(seen, c[cf])) {
		fk_error_at(err, FK_ERROR_PARSE, x->path, r->line, "'%s' is listed twice", c[cf]);
		return -1;
	}
	r->file = g_strdup(c[cf]);
	g_hash_table_add(seen, r->file);
	if (cc >= 0)	/* a plugin that says its unit escapes names */
		r->comm = cu >= 0 ? unescape_cell(c[cc]) : g_strdup(c[cc]);
	if (cp >= 0) {
		long long pid;

		errno = 0;
		pid = g_ascii_isdigit(*c[cp]) ? strtoll(c[cp], &end, 10) : 0;
		if (errno || pid <= 0 || pid > INT_MAX || *end)
			why = "pid";
		r->pid = why ? 0 : (int)pid;
	}
	if (!why && cs >= 0 && strcmp(c[cs], "-") != 0) {
		guint64 v = 0;

		if (!g_ascii_string_to_unsigned(c[cs], 10, 0, G_MAXUINT64, &v, NULL))
			why = "samples";
		r->samples = v;
		r->has_samples = !why;
	}
	if (!why && ct >= 0) {
		if (fk_count_parse(c[ct], strlen(c[ct]), &r->total) != FK_COUNT_OK)
			why = "total";
		r->has_total = !why;
	}
	if (why) {
		int col = column(x->columns, why);

		fk_error_at(err, FK_ERROR_PARSE, x->path, r->line, "%s '%s' is not %s", why,
			    c[col], strcmp(why, "pid") == 0 ? "a process id" : "a count");
		return -1;
	}
	if (cu >= 0) {
		if (!fk_unit_ok(c[cu])) {
			fk_error_at(err, FK_ERROR_PARSE, x->path, r->line, "bad unit '%s'", c[cu]);
			return -1;
		}
		if (x->unit && strcmp(x->unit, c[cu]) != 0) {
			fk_error_at(err, FK_ERROR_PARSE, x->path, r->line, "unit '%s', but '%s' "
				    "above: the files' counts cannot be added", c[cu], x->unit);
			return -1;
		}
		if (!x->unit)
			x->unit = g_strdup(c[cu]);
	}
	return 0;
}

struct fk_split_index *fk_split_index_parse(const char *text, size_t len, const char *path,
					    unsigned flags, GError **err)
{
	struct fk_split_index *x = index_new(path);
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	const char *p = text, *end = text + len;
	uint64_t line = 0;
	int rc = 0;

	if (len == 0) {
		fk_error_at(err, FK_ERROR_PARSE, path, 0, "empty: not an index");
		rc = -1;
	}
	while (rc == 0 && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		char *s, **cells;
		guint n;

		line++;
		if (memchr(p, '\0', (size_t)(e - p))) {	/* the split would stop there */
			fk_error_at(err, FK_ERROR_PARSE, path, line, "NUL byte");
			rc = -1;
			break;
		}
		if (e > p && e[-1] == '\r')
			e--;
		s = g_strndup(p, (gsize)(e - p));
		p = nl ? nl + 1 : end;
		if (line > 1 && !*s) {
			g_free(s);
			continue;
		}
		cells = g_strsplit(s, "\t", -1);
		g_free(s);
		n = g_strv_length(cells);
		if (line == 1) {
			g_strfreev(x->columns);
			x->columns = cells;
			if (column(cells, "file") < 0 || ((flags & FK_SPLIT_PROCESSES) &&
			    (column(cells, "comm") < 0 || column(cells, "pid") < 0))) {
				fk_error_at(err, FK_ERROR_PARSE, path, 1, "no %s column%s in the header",
					    flags & FK_SPLIT_PROCESSES ? "file, comm and pid" : "file",
					    flags & FK_SPLIT_PROCESSES ? "s" : "");
				rc = -1;
			}
		} else if (n != g_strv_length(x->columns)) {
			fk_error_at(err, FK_ERROR_PARSE, path, line, "%u cell%s where the header "
				    "names %u", n, n == 1 ? "" : "s", g_strv_length(x->columns));
			g_strfreev(cells);
			rc = -1;
		} else {
			struct fk_split_row *r = g_new0(struct fk_split_row, 1);

			r->cells = cells;
			r->line = line;
			g_ptr_array_add(x->rows, r);
			rc = fill_row(x, r, seen, err);
		}
	}
	g_hash_table_destroy(seen);
	x->has_index = true;
	if (rc != 0) {
		fk_split_index_free(x);
		return NULL;
	}
	return x;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the text of dirfd's index.tsv, a regular file; NULL with *err (ENOENT: *missing) */
static char *read_index(int dirfd, const char *path, size_t *len, bool *missing, GError **err)
{
	int fd = openat(dirfd, INDEX, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	GString *s;
	struct stat sb;
	char buf[65536];
	ssize_t n;

	*missing = fd < 0 && errno == ENOENT;
	if (fd < 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read: %s", g_strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read: not a regular file");
		close(fd);
		return NULL;
	}
	s = g_string_sized_new((gsize)MIN(sb.st_size, 1 << 20) + 1);
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read: %s", g_strerror(errno));
			close(fd);
			g_string_free(s, TRUE);
			return NULL;
		}
		g_string_append_len(s, buf, n);
	}
	close(fd);
	*len = s->len;
	return g_string_free(s, FALSE);
}

/* NULL-terminated sorted "*.folded" names of dirfd not hidden, or NULL with *err */
static GPtrArray *folded_names(int dirfd, const char *dir, GError **err)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	GPtrArray *v;
	struct dirent *de;

	if (!d) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "cannot read directory: %s", g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	v = g_ptr_array_new_with_free_func(g_free);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] != '.' && n > strlen(SUFFIX) &&
		    strcmp(de->d_name + n - strlen(SUFFIX), SUFFIX) == 0)
			g_ptr_array_add(v, g_strdup(de->d_name));
	}
	closedir(d);
	g_ptr_array_sort(v, cmp_str);
	return v;
}

/* file is a regular file of dirfd (a link to one is); -1 with *err */
static int check_file(int dirfd, const char *dir, const char *file, const struct fk_split_index *x,
		      uint64_t line, GError **err)
{
	struct stat sb;
	char *path = g_build_filename(dir, file, NULL);
	int rc = 0;

	if (fstatat(dirfd, file, &sb, 0) != 0) {
		if (line)
			fk_error_at(err, FK_ERROR_IO, x->path, line, "'%s': %s", file, g_strerror(errno));
		else
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read: %s", g_strerror(errno));
		rc = -1;
	} else if (!S_ISREG(sb.st_mode)) {
		/* a FIFO would block its reader for ever, a device too */
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read: not a regular file");
		rc = -1;
	}
	g_free(path);
	return rc;
}

struct fk_split_index *fk_split_index_readat(int dirfd, const char *dir, unsigned flags,
					     GError **err)
{
	char *path = g_build_filename(dir, INDEX, NULL), *text;
	struct fk_split_index *x = NULL;
	GPtrArray *names = NULL, *unlisted;
	size_t len = 0;
	bool missing;
	GError *e = NULL;

	text = read_index(dirfd, path, &len, &missing, &e);
	if (!text && (!missing || (flags & FK_SPLIT_NEED_INDEX))) {
		g_propagate_error(err, e);
		goto out;
	}
	g_clear_error(&e);
	if (!(names = folded_names(dirfd, dir, err)))
		goto out;
	if (text) {
		x = fk_split_index_parse(text, len, path, flags, err);
	} else {
		/* no index: every *.folded file is the directory's */
		x = index_new(path);
		g_strfreev(x->columns);
		x->columns = g_new0(char *, 2);
		x->columns[0] = g_strdup("file");
		for (guint i = 0; i < names->len; i++) {
			struct fk_split_row *r = g_new0(struct fk_split_row, 1);

			r->file = g_strdup(g_ptr_array_index(names, i));
			r->cells = g_new0(char *, 2);
			r->cells[0] = g_strdup(r->file);
			g_ptr_array_add(x->rows, r);
		}
	}
	for (guint i = 0; x && i < x->rows->len; i++) {
		const struct fk_split_row *r = g_ptr_array_index(x->rows, i);

		if (check_file(dirfd, dir, r->file, x, r->line, err) != 0)
			g_clear_pointer(&x, fk_split_index_free);
	}
	if (!x)
		goto out;
	unlisted = g_ptr_array_new();
	for (guint i = 0; x->has_index && i < names->len; i++) {
		const char *n = g_ptr_array_index(names, i);
		bool listed = false;

		for (guint k = 0; k < x->rows->len && !listed; k++)
			listed = strcmp(((struct fk_split_row *)g_ptr_array_index(x->rows, k))->file, n) == 0;
		if (!listed)
			g_ptr_array_add(unlisted, g_strdup(n));
	}
	g_ptr_array_add(unlisted, NULL);
	g_strfreev(x->unlisted);
	x->unlisted = (char **)g_ptr_array_free(unlisted, FALSE);
out:
	if (names)
		g_ptr_array_unref(names);
	g_free(text);
	g_free(path);
	return x;
}

struct fk_split_index *fk_split_index_read(const char *dir, unsigned flags, GError **err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct fk_split_index *x;

	if (fd < 0) {
		fk_error_at(err, FK_ERROR_IO, dir, 0, "cannot read directory: %s", g_strerror(errno));
		return NULL;
	}
	x = fk_split_index_readat(fd, dir, flags, err);
	close(fd);
	return x;
}

void fk_split_index_format(GString *out, const struct fk_split_out *rows, size_t n,
			   const char *unit, const char *more_head)
{
	fk_count sum = 0;
	char buf[FK_COUNT_BUFSZ];

	for (size_t i = 0; i < n; i++)
		sum += rows[i].total;
	g_string_append(out, "file\tcomm\tpid\tsamples\tshare\ttotal\tunit");
	if (more_head)
		g_string_append_printf(out, "\t%s", more_head);
	g_string_append_c(out, '\n');
	for (size_t i = 0; i < n; i++) {
		const struct fk_split_out *r = &rows[i];
		const char *comm = r->comm ? r->comm : "[unknown]";

		g_string_append_printf(out, "%s\t", r->file);
		fk_text_escape(out, comm, strlen(comm), FK_ESC_BACKSLASH);
		g_string_append_printf(out, "\t%d\t", r->pid);
		if (r->has_samples)
			g_string_append_printf(out, "%" G_GUINT64_FORMAT, r->samples);
		else
			g_string_append_c(out, '-');
		g_string_append_printf(out, "\t%.4f\t", sum ? fk_count_to_double(r->total) /
				       fk_count_to_double(sum) : 0.0);
		g_string_append_len(out, buf, (gssize)fk_count_format(r->total, buf));
		g_string_append_printf(out, "\t%s%s\n", unit, r->more ? r->more : "");
	}
}
