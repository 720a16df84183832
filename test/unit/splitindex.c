/*
 * splitindex - unit tests of lib/core/splitindex.c, how every reader of a
 * split directory (fold-report DIR, fp-record reading the plugin's) takes
 * its files: the ones index.tsv lists, their columns and unit; other
 * .folded files named as unlisted; a listed file that is not a regular file
 * (a FIFO would hang the reader) refused; errors naming file and line.
 */
#include "core/splitindex.h"
#include "check.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *root;

static char *at(const char *rel)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	return buf;
}

static void put(const char *rel, const char *text, size_t len)
{
	char *path = g_strdup(at(rel)), *dir = g_path_get_dirname(path);

	g_mkdir_with_parents(dir, 0755);
	CHECK(g_file_set_contents(path, text, (gssize)len, NULL));
	g_free(dir);
	g_free(path);
}

#define PUT(rel, lit) put(rel, lit, sizeof(lit) - 1)

static const struct fk_split_row *row(const struct fk_split_index *x, guint i)
{
	return g_ptr_array_index(x->rows, i);
}

/* the error of reading dir (flags), which must fail; "" if it did not */
static char *refusal(const char *dir, unsigned flags)
{
	GError *err = NULL;
	struct fk_split_index *x = fk_split_index_read(at(dir), flags, &err);
	char *msg;

	CHECK(!x && err);
	if (x || !err) {
		fk_split_index_free(x);
		return g_strdup("");
	}
	msg = g_strdup(err->message + strlen(root) + 1);	/* relative to root */
	g_error_free(err);
	return msg;
}

#define REFUSED(dir, flags, want) do { \
	char *m_ = refusal(dir, flags); \
	CHECK_STR(m_, want); \
	g_free(m_); \
} while (0)

static void test_columns(void)
{
	struct fk_split_index *x;
	GError *err = NULL;

	/* the plugin's index: every column typed, comm unescaped */
	PUT("p/index.tsv", "file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n"
	    "server-100.folded\tserver\t100\t30\t0.7500\t5.5\tus\n"
	    "b-8.folded\tb\\x09c\\\\x41\\xg\t8\t-\t0.2500\t1\tus\n");
	PUT("p/server-100.folded", "a 5.5\n");
	PUT("p/b-8.folded", "b 1\n");
	x = fk_split_index_read(at("p"), FK_SPLIT_PROCESSES, &err);
	CHECK(x && !err && x->has_index && x->rows->len == 2);
	if (x && x->rows->len == 2) {
		CHECK_STR(x->unit, "us");
		CHECK(row(x, 0)->pid == 100 && strcmp(row(x, 0)->file, "server-100.folded") == 0);
		CHECK(row(x, 0)->has_samples && row(x, 0)->samples == 30);
		CHECK(row(x, 0)->has_total &&
		      row(x, 0)->total == fk_count_from_u64(5) + FK_COUNT_ONE / 2);
		CHECK(row(x, 0)->line == 2 && row(x, 1)->line == 3);
		CHECK_STR(row(x, 1)->comm, "b\tc\\x41\\xg");
		CHECK(!row(x, 1)->has_samples);
		CHECK_STR(fk_split_index_cell(x, row(x, 1), "share"), "0.2500");
		CHECK(fk_split_index_cell(x, row(x, 1), "role") == NULL);
		CHECK(x->unlisted[0] == NULL);
	}
	fk_split_index_free(x);

	/* without a unit column a name is taken as it is (older plugins);
	 * columns in any order; CRLF and blank lines */
	PUT("o/index.tsv", "pid\tcomm\tfile\r\n\r\n8\tb\\x09c\tb-8.folded\r\n\n");
	PUT("o/b-8.folded", "b 1\n");
	x = fk_split_index_read(at("o"), FK_SPLIT_PROCESSES, &err);
	CHECK(x && x->rows->len == 1 && !x->unit);
	if (x && x->rows->len == 1)
		CHECK_STR(row(x, 0)->comm, "b\\x09c");
	fk_split_index_free(x);

	/* only a file column is needed, unless processes are */
	PUT("f/index.tsv", "file\tunit\na-1.folded\tns\n");
	PUT("f/a-1.folded", "a 1\n");
	x = fk_split_index_read(at("f"), 0, &err);
	CHECK(x && x->rows->len == 1 && row(x, 0)->pid == 0 && !row(x, 0)->comm);
	fk_split_index_free(x);
	REFUSED("f", FK_SPLIT_PROCESSES, "f/index.tsv:1: no file, comm and pid columns in the header");

	/* a header alone: no files, no unit */
	PUT("h/index.tsv", "file\tcomm\tpid\tunit\n");
	x = fk_split_index_read(at("h"), FK_SPLIT_PROCESSES, &err);
	CHECK(x && x->rows->len == 0 && !x->unit);
	fk_split_index_free(x);
}

static void test_refusals(void)
{
	PUT("e1/index.tsv", "file\tcomm\tpid\na.folded\ta\t12x\n");
	REFUSED("e1", 0, "e1/index.tsv:2: pid '12x' is not a process id");
	PUT("e2/index.tsv", "file\tcomm\tpid\n../x.folded\ta\t3\n");
	REFUSED("e2", 0, "e2/index.tsv:2: file '../x.folded' is not a file name of the "
		"directory (empty, hidden, or with a '/')");
	PUT("e3/index.tsv", "file\tpid\n.x.folded.AbCd12\t3\n");
	REFUSED("e3", 0, "e3/index.tsv:2: file '.x.folded.AbCd12' is not a file name of the "
		"directory (empty, hidden, or with a '/')");
	PUT("e4/index.tsv", "name\tpid\n");
	REFUSED("e4", 0, "e4/index.tsv:1: no file column in the header");
	put("e5/index.tsv", "file\tcomm\tpid\n\0\n", 16);
	REFUSED("e5", 0, "e5/index.tsv:2: NUL byte");
	PUT("e6/index.tsv", "");
	REFUSED("e6", 0, "e6/index.tsv: empty: not an index");
	PUT("e7/index.tsv", "file\tcomm\tpid\ttotal\tunit\na-7.folded\ta\t7\tmany\tus\n");
	REFUSED("e7", 0, "e7/index.tsv:2: total 'many' is not a count");
	/* a file listed twice would be summed twice */
	PUT("e8/index.tsv", "file\tunit\na-1.folded\tns\na-1.folded\tns\n");
	PUT("e8/a-1.folded", "a 1\n");
	REFUSED("e8", 0, "e8/index.tsv:3: 'a-1.folded' is listed twice");
	/* two units cannot be added; a unit must be a plain word */
	PUT("e9/index.tsv", "file\tunit\na-1.folded\tns\nb-2.folded\tus\n");
	REFUSED("e9", 0, "e9/index.tsv:3: unit 'us', but 'ns' above: the files' counts cannot "
		"be added");
	PUT("e10/index.tsv", "file\tunit\na-1.folded\t<script>\n");
	REFUSED("e10", 0, "e10/index.tsv:2: bad unit '<script>'");
	/* a row cut short, or one too long */
	PUT("e11/index.tsv", "file\tpid\tunit\na-1.folded\t1\tns\nb-2.folded\t2\n");
	REFUSED("e11", 0, "e11/index.tsv:3: 2 cells where the header names 3");
	PUT("e12/index.tsv", "file\nb-2.folded\t2\n");
	REFUSED("e12", 0, "e12/index.tsv:2: 2 cells where the header names 1");
	PUT("e13/index.tsv", "file\tsamples\na-1.folded\t-3\n");
	REFUSED("e13", 0, "e13/index.tsv:2: samples '-3' is not a count");
	/* a pid past int, or 0 */
	PUT("e14/index.tsv", "file\tpid\na-1.folded\t2147483648\n");
	REFUSED("e14", 0, "e14/index.tsv:2: pid '2147483648' is not a process id");
	PUT("e15/index.tsv", "file\tpid\na-1.folded\t0\n");
	REFUSED("e15", 0, "e15/index.tsv:2: pid '0' is not a process id");
}

static void test_files(void)
{
	struct fk_split_index *x;
	GError *err = NULL;

	/* a stale profile beside the listed ones: named, not taken */
	PUT("s/index.tsv", "file\tunit\nb-2.folded\tns\n");
	PUT("s/a-1.folded", "old 1\n");
	PUT("s/b-2.folded", "new 1\n");
	PUT("s/c-3.folded", "old 1\n");
	PUT("s/.hidden.folded", "x 1\n");
	PUT("s/notes.txt", "x\n");
	x = fk_split_index_read(at("s"), 0, &err);
	CHECK(x && x->rows->len == 1);
	if (x) {
		CHECK(x->unlisted[0] && strcmp(x->unlisted[0], "a-1.folded") == 0);
		CHECK(x->unlisted[0] && x->unlisted[1] && strcmp(x->unlisted[1], "c-3.folded") == 0);
		CHECK(x->unlisted[0] && x->unlisted[1] && !x->unlisted[2]);
	}
	fk_split_index_free(x);

	/* a listed file missing, or not a regular file: a FIFO */
	PUT("m/index.tsv", "file\nx-1.folded\n");
	REFUSED("m", 0, "m/index.tsv:2: 'x-1.folded': No such file or directory");
	PUT("q/index.tsv", "file\nx-1.folded\n");
	CHECK(mkfifo(at("q/x-1.folded"), 0644) == 0);
	REFUSED("q", 0, "q/x-1.folded: cannot read: not a regular file");
	/* a link to a regular file is one; index.tsv itself is never a link */
	PUT("l/real.txt", "a 1\n");
	PUT("l/index.tsv", "file\nx-1.folded\n");
	CHECK(symlink("real.txt", at("l/x-1.folded")) == 0);
	x = fk_split_index_read(at("l"), 0, &err);
	CHECK(x && x->rows->len == 1);
	fk_split_index_free(x);
	PUT("k/real.tsv", "file\n");
	CHECK(symlink("real.tsv", at("k/index.tsv")) == 0);
	REFUSED("k", 0, "k/index.tsv: cannot read: Too many levels of symbolic links");
	g_mkdir_with_parents(at("k3"), 0755);
	CHECK(mkfifo(at("k3/index.tsv"), 0644) == 0);
	REFUSED("k3", 0, "k3/index.tsv: cannot read: not a regular file");

	/* no index: every *.folded regular file, sorted; none unlisted */
	PUT("n/b-2.folded", "b 1\n");
	PUT("n/a-1.folded", "a 1\n");
	PUT("n/.tmp.folded", "t 1\n");
	x = fk_split_index_read(at("n"), 0, &err);
	CHECK(x && !x->has_index && x->rows->len == 2 && !x->unlisted[0]);
	if (x && x->rows->len == 2)
		CHECK(strcmp(row(x, 0)->file, "a-1.folded") == 0 &&
		      strcmp(row(x, 1)->file, "b-2.folded") == 0);
	fk_split_index_free(x);
	REFUSED("n", FK_SPLIT_NEED_INDEX, "n/index.tsv: cannot read: No such file or directory");
	CHECK(mkfifo(at("n/c-3.folded"), 0644) == 0);
	REFUSED("n", 0, "n/c-3.folded: cannot read: not a regular file");
	REFUSED("none", 0, "none: cannot read directory: No such file or directory");
}

static void test_format(void)
{
	const struct fk_split_out rows[] = {
		{ .file = "server-100.folded", .comm = "ser\tver\\", .pid = 100,
		  .has_samples = true, .samples = 30, .total = fk_count_from_u64(3) },
		{ .file = "unknown-7.folded", .pid = 7, .total = fk_count_from_u64(1) },
	};
	GString *s = g_string_new(NULL);
	struct fk_split_index *x;
	GError *err = NULL;

	fk_split_index_format(s, rows, 2, "ns", NULL);
	CHECK_STR(s->str, "file\tcomm\tpid\tsamples\tshare\ttotal\tunit\n"
		  "server-100.folded\tser\\x09ver\\\\\t100\t30\t0.7500\t3\tns\n"
		  "unknown-7.folded\t[unknown]\t7\t-\t0.2500\t1\tns\n");
	/* and it reads back */
	x = fk_split_index_parse(s->str, s->len, "index.tsv", FK_SPLIT_PROCESSES, &err);
	CHECK(x && x->rows->len == 2 && !err);
	if (x && x->rows->len == 2) {
		CHECK_STR(row(x, 0)->comm, "ser\tver\\");
		CHECK(row(x, 0)->total == fk_count_from_u64(3) && !row(x, 1)->has_samples);
	}
	fk_split_index_free(x);
	/* columns a caller adds (the plugin's stack repair) come after unit */
	g_string_truncate(s, 0);
	{
		struct fk_split_out more = rows[1];

		more.more = "\t12\t-";
		fk_split_index_format(s, &more, 1, "us", "repaired\twhy");
	}
	CHECK_STR(s->str, "file\tcomm\tpid\tsamples\tshare\ttotal\tunit\trepaired\twhy\n"
		  "unknown-7.folded\t[unknown]\t7\t-\t1.0000\t1\tus\t12\t-\n");
	x = fk_split_index_parse(s->str, s->len, "index.tsv", 0, &err);
	CHECK(x && x->rows->len == 1);
	if (x && x->rows->len == 1)
		CHECK_STR(fk_split_index_cell(x, row(x, 0), "repaired"), "12");
	fk_split_index_free(x);
	g_string_free(s, TRUE);
	CHECK(fk_unit_ok("ns") && fk_unit_ok("\xc2\xb5s") && !fk_unit_ok("") &&
	      !fk_unit_ok("a b") && !fk_unit_ok("123456789012345678901234567890123"));
}

int main(void)
{
	char tmpl[] = "/tmp/splitindex-test-XXXXXX";
	char *cmd;

	root = g_mkdtemp(tmpl);
	CHECK(root != NULL);
	test_columns();
	test_refusals();
	test_files();
	test_format();
	cmd = g_strdup_printf("rm -rf '%s'", root);
	if (system(cmd) != 0)
		check_failures++;
	g_free(cmd);
	return CHECK_DONE();
}
