/*
 * capture - fp-record's readers of what others wrote (lib/capture/): a
 * process's /proc stat line (its name is the process's choice) and its
 * arguments as index.tsv writes them, the
 * plugin's split index.tsv, fp-collapse --pid output split by pid, perf's
 * error output, --pid lists, and --group-workers' members' folded files
 * (capture/group.h; the input cut in two at its first NUL).  The first
 * byte picks one (mod 6); the rest is the input.
 */
#include "fuzz.h"

#include "capture/group.h"
#include "capture/outputs.h"
#include "capture/perfcmd.h"
#include "capture/proc.h"
#include "core/outdir.h"
#include "core/splitindex.h"

#include <ftw.h>
#include <glib.h>
#include <limits.h>

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

/* a stat line: the name is what lies between the first '(' and the last ')' */
static void stat_line(const char *s, size_t n)
{
	char *z = g_strndup(s, n);
	struct fk_proc p = { 0 };

	if (fk_proc_parse_stat(z, &p)) {
		const char *open = strchr(z, '('), *close = strrchr(z, ')');

		FUZZ_CHECK(open && close && close > open, "parsed without parentheses");
		FUZZ_CHECK(strlen(p.comm) == (size_t)(close - open - 1) &&
			   memcmp(p.comm, open + 1, strlen(p.comm)) == 0,
			   "the name is not the text between the parentheses");
	}
	g_free(p.comm);
	g_free(z);
}

/* a cell's "\\" and "\xNN" undone (core/textesc.h) */
static GString *unescape(const char *c, size_t n)
{
	GString *out = g_string_new(NULL);

	for (size_t i = 0; i < n; i++) {
		if (c[i] == '\\' && i + 1 < n && c[i + 1] == '\\') {
			g_string_append_c(out, '\\');
			i++;
		} else if (c[i] == '\\' && i + 3 < n && c[i + 1] == 'x' &&
			   g_ascii_isxdigit(c[i + 2]) && g_ascii_isxdigit(c[i + 3])) {
			g_string_append_c(out, (char)(g_ascii_xdigit_value(c[i + 2]) * 16 +
						      g_ascii_xdigit_value(c[i + 3])));
			i += 3;
		} else {
			g_string_append_c(out, c[i]);
		}
	}
	return out;
}

/* the input as a process's arguments (NUL-separated, as /proc/PID/cmdline
 * gives them: the process's choice) in fp-record's index.tsv: one line of
 * 18 cells, the args cell splitting back at blanks into the arguments */
static void args_row(const char *s, size_t n)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	struct fk_out_row r = { .pid = 42, .comm = "p", .role = "main", .ppid = 1 };
	GPtrArray *rows = g_ptr_array_new();
	char *buf = NULL, **lines, **cells, **args;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < n;) {
		size_t k = strnlen(s + i, n - i);

		g_ptr_array_add(argv, g_strndup(s + i, k));
		i += k + 1;
	}
	g_ptr_array_add(argv, NULL);
	r.argv = (char **)argv->pdata;
	g_ptr_array_add(rows, &r);
	FUZZ_CHECK(f && fk_index_write(f, rows, "index.tsv", NULL) == 0, "index not written");
	fclose(f);
	lines = g_strsplit(buf, "\n", -1);
	FUZZ_CHECK(g_strv_length(lines) == 3 && !*lines[2], "not a header and one line");
	cells = g_strsplit(lines[1], "\t", -1);
	FUZZ_CHECK(g_strv_length(cells) == 18, "%u cells", g_strv_length(cells));
	if (argv->len > 1) {
		args = g_strsplit(cells[15], " ", -1);
		FUZZ_CHECK(g_strv_length(args) == argv->len - 1, "%u arguments back, not %u",
			   g_strv_length(args), argv->len - 1);
		for (guint i = 0; args[i]; i++) {
			GString *a = unescape(args[i], strlen(args[i]));
			const char *want = g_ptr_array_index(argv, i);

			FUZZ_CHECK(a->len == strlen(want) && memcmp(a->str, want, a->len) == 0,
				   "argument %u does not read back", i);
			g_string_free(a, TRUE);
		}
		g_strfreev(args);
	}
	g_strfreev(cells);
	g_strfreev(lines);
	free(buf);
	g_ptr_array_unref(rows);
	g_ptr_array_unref(argv);
}

static bool safe_file_name(const char *f)
{
	if (!*f || f[0] == '.' || strchr(f, '/'))
		return false;
	return true;
}

static void index_file(const char *s, size_t n)
{
	GError *err = NULL;
	struct fk_split_index *e = fk_split_index_parse(s, n, "index.tsv", FK_SPLIT_PROCESSES, &err);

	FUZZ_CHECK(!e == !!err, "a result and an error, or neither");
	for (guint i = 0; e && i < e->rows->len; i++) {
		struct fk_split_row *x = g_ptr_array_index(e->rows, i);

		FUZZ_CHECK(x->pid > 0, "pid %d", x->pid);
		FUZZ_CHECK(x->comm, "no comm");
		FUZZ_CHECK(*x->file && !strchr(x->file, '/'), "file '%s' leaves the directory", x->file);
	}
	fk_split_index_free(e);
	g_clear_error(&err);
}

/* split by pid: safe names, each in the index, no more than the input */
static void split(const char *s, size_t n)
{
	char tmpl[] = "/tmp/fuzz-capture-XXXXXX", *dir = g_mkdtemp(tmpl);
	GError *err = NULL;
	uint64_t unsplit = 0;
	struct fk_folded_sum in, part;
	fk_count sum = 0;
	const char *path = fuzz_file(s, n);
	struct fk_outdir *out;

	FUZZ_CHECK(dir, "mkdtemp");
	if (fk_folded_sum(path, NULL, &in, NULL) != 0)
		in.total = -1;
	out = fk_outdir_create(dir, FK_OUTDIR_EXISTING, NULL);
	FUZZ_CHECK(out, "cannot open %s", dir);
	if (fk_split_by_pid(path, out, "ns", &unsplit, &err) == 0) {
		struct fk_split_index *x = fk_split_index_read(dir, FK_SPLIT_PROCESSES |
							       FK_SPLIT_NEED_INDEX, NULL);
		GPtrArray *e = x ? x->rows : NULL;
		GDir *d = g_dir_open(dir, 0, NULL);
		const char *name;
		guint files = 0;

		FUZZ_CHECK(e && d, "no index or directory");
		while ((name = g_dir_read_name(d))) {
			char *p = g_build_filename(dir, name, NULL);
			bool listed = false;

			if (strcmp(name, "index.tsv") != 0) {
				FUZZ_CHECK(safe_file_name(name) && g_str_has_suffix(name, ".folded"),
					   "file name '%s'", name);
				for (guint i = 0; i < e->len; i++)
					listed |= strcmp(((struct fk_split_row *)
							  g_ptr_array_index(e, i))->file, name) == 0;
				FUZZ_CHECK(listed, "'%s' is not in index.tsv", name);
				FUZZ_CHECK(fk_folded_sum(p, NULL, &part, NULL) == 0, "'%s' unreadable", name);
				sum += part.total;
				files++;
			}
			g_free(p);
		}
		g_dir_close(d);
		FUZZ_CHECK(files == e->len, "%u files, %u in index.tsv", files, e->len);
		FUZZ_CHECK(in.total < 0 || sum <= in.total, "the parts hold more than the whole");
		FUZZ_CHECK(!x->unlisted[0], "'%s' is not in index.tsv", x->unlisted[0]);
		fk_split_index_free(x);
	}
	fk_outdir_free(out);
	g_clear_error(&err);
	FUZZ_CHECK(nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS) == 0, "cannot remove %s", dir);
}

static void perf_log(const char *s, size_t n)
{
	char *z = g_strndup(s, n), *m;
	struct fk_perf_context ctx = { .offcpu = n & 1, .paranoid = INT_MIN };

	m = fk_perf_failure(z, &ctx);
	FUZZ_CHECK(m && *m && !strchr(m, '\n'), "a message of one line");
	g_free(m);
	m = fk_perf_version(z);
	FUZZ_CHECK(!m || (*m && strspn(m, "0123456789.") == strlen(m)), "version '%s'", m);
	g_free(m);
	g_free(z);
}

static void pids(const char *s, size_t n)
{
	char *z = g_strndup(s, n), *f;
	GArray *v = g_array_new(FALSE, FALSE, sizeof(int));

	if (fk_proc_parse_pids(z, v)) {
		FUZZ_CHECK(v->len > 0, "no pids");
		for (guint i = 0; i < v->len; i++)
			FUZZ_CHECK(g_array_index(v, int, i) > 0, "pid %d", g_array_index(v, int, i));
		f = fk_switch_filter((int *)(void *)v->data, v->len, -1, FK_FILTER_MAX);
		FUZZ_CHECK(!f || strlen(f) <= FK_FILTER_MAX, "filter too long");
		g_free(f);
	}
	g_array_unref(v);
	g_free(z);
}

/* two members' folded files: the group's total is theirs summed, and
 * every share a fraction between the lowest and the highest */
static void group(const char *s, size_t n)
{
	const char *nul = memchr(s, 0, n);
	size_t la = nul ? (size_t)(nul - s) : n;
	char *dir = g_dir_make_tmp("fuzz-group-XXXXXX", NULL);
	char *a, *b;
	struct fk_group_member m[2];
	struct fk_group *g;
	GError *err = NULL;

	if (!dir)
		return;
	a = g_build_filename(dir, "w-1.folded", NULL);
	b = g_build_filename(dir, "w-2.folded", NULL);
	g_file_set_contents(a, s, (gssize)la, NULL);
	g_file_set_contents(b, nul ? nul + 1 : "", nul ? (gssize)(n - la - 1) : 0, NULL);
	m[0] = (struct fk_group_member){ "w-1", a };
	m[1] = (struct fk_group_member){ "w-2", b };
	if ((g = fk_group_read(m, 2, 5, &err))) {
		FUZZ_CHECK(fk_group_total(g) == fk_group_member_total(g, 0) +
						 fk_group_member_total(g, 1),
			   "the group's total is not its members' summed");
		FUZZ_CHECK(fk_group_nfns(g) <= 5, "more functions than asked");
		for (size_t i = 0; i < fk_group_nfns(g); i++) {
			const struct fk_group_fn *f = fk_group_fn(g, i);

			FUZZ_CHECK(f->share >= 0 && f->share <= 1, "a share outside 0..1");
			FUZZ_CHECK(f->low_at == SIZE_MAX ||
				   (f->low >= 0 && f->low <= f->high && f->high <= 1 &&
				    f->low_at < 2 && f->high_at < 2),
				   "a spread out of order");
			FUZZ_CHECK(i == 0 || fk_group_fn(g, i - 1)->self >= f->self,
				   "functions not by self, most first");
		}
		fk_group_free(g);
	}
	g_clear_error(&err);
	remove(a);
	remove(b);
	remove(dir);
	g_free(a);
	g_free(b);
	g_free(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data + 1;

	if (size == 0)
		return 0;
	switch (data[0] % 6) {
	case 0: stat_line(s, size - 1); args_row(s, size - 1); break;
	case 1: index_file(s, size - 1); break;
	case 2: split(s, size - 1); break;
	case 3: perf_log(s, size - 1); break;
	case 4: pids(s, size - 1); break;
	case 5: group(s, size - 1); break;
	}
	return 0;
}
