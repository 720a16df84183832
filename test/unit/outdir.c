/*
 * outdir - unit tests of lib/core/outdir.c, the directories fp-record and
 * the plugin's split= write their results to: which existing directory is
 * taken (the caller's, writable by no other user, empty), and that a name
 * planted in it - a link to a file outside, at every name a result is
 * written to, at the moment before it is written - is never followed or
 * replaced: the write fails and the file the link names is untouched.
 */
#include "core/outdir.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *root;

static char *at(const char *rel)
{
	static char buf[4][4096];
	static int n;

	n = (n + 1) % 4;
	snprintf(buf[n], sizeof(buf[n]), "%s/%s", root, rel);
	return buf[n];
}

static char *slurp(const char *rel)
{
	char *s = NULL;

	if (!g_file_get_contents(at(rel), &s, NULL, NULL))
		s = g_strdup("(unreadable)");
	return s;
}

#define CHECK_FILE(rel, want) do { \
	char *s_ = slurp(rel); \
	CHECK_STR(s_, want); \
	g_free(s_); \
} while (0)

/* the message of creating rel (flags), which must fail, relative to root */
static char *refusal(const char *rel, unsigned flags)
{
	GError *err = NULL;
	struct fk_outdir *d = fk_outdir_create(at(rel), flags, &err);
	char *msg;

	CHECK(!d && err);
	fk_outdir_free(d);
	if (!err)
		return g_strdup("");
	msg = g_strdup(strstr(err->message, rel) ? strstr(err->message, rel) : err->message);
	g_error_free(err);
	return msg;
}

#define REFUSED(rel, flags, want) do { \
	char *m_ = refusal(rel, flags); \
	CHECK_STR(m_, want); \
	g_free(m_); \
} while (0)

static void test_create(void)
{
	GError *err = NULL;
	struct fk_outdir *d;
	struct stat sb;

	/* made with its parents, 0777 less the umask */
	umask(022);
	d = fk_outdir_create(at("a/b/new/"), 0, &err);
	CHECK(d && !err && fk_outdir_made(d));
	CHECK(stat(at("a/b/new"), &sb) == 0 && (sb.st_mode & 07777) == 0755);
	if (d)
		CHECK_STR(fk_outdir_name(d), "new");
	fk_outdir_free(d);
	/* an existing empty one of the caller's is taken, not made */
	d = fk_outdir_create(at("a/b/new"), 0, &err);
	CHECK(d && !fk_outdir_made(d));
	fk_outdir_free(d);
	/* not empty: refused, unless the caller looks at it (FK_OUTDIR_EXISTING) */
	CHECK(g_file_set_contents(at("a/b/new/x"), "x", -1, NULL));
	REFUSED("a/b/new", 0, "a/b/new: refused: not empty (it holds 'x'): name a new directory");
	d = fk_outdir_create(at("a/b/new"), FK_OUTDIR_EXISTING, &err);
	CHECK(d && !fk_outdir_made(d));
	if (d) {
		char **names = fk_outdir_list(d, &err);

		CHECK(names && names[0] && strcmp(names[0], "x") == 0 && !names[1]);
		g_strfreev(names);
	}
	fk_outdir_free(d);
	/* a link to a directory, a file, a directory others may write to */
	CHECK(symlink("a/b/new", at("link")) == 0);
	REFUSED("link", FK_OUTDIR_EXISTING, "link: refused: a symbolic link: name the directory "
		"itself, or a new one");
	REFUSED("a/b/new/x", 0, "a/b/new/x: not a directory: Not a directory");
	CHECK(mkdir(at("open"), 0777) == 0 && chmod(at("open"), 01777) == 0);
	REFUSED("open", 0, "open: refused: any user may write to the directory (mode 1777), and "
		"could plant links in it: name a new directory");
	/* another user's, even empty (as root: another user can be made) */
	if (geteuid() == 0) {
		CHECK(mkdir(at("theirs"), 0755) == 0 && chown(at("theirs"), 65534, 65534) == 0);
		REFUSED("theirs", 0, "theirs: refused: the directory belongs to another user (uid "
			"65534), who could plant links in it: name a new directory");
	}
	CHECK(fk_outdir_create("", 0, &err) == NULL && err &&
	      strcmp(err->message, "'': cannot create: an empty name") == 0);
	g_clear_error(&err);
}

static void test_planted(void)
{
	GError *err = NULL;
	struct fk_outdir *d = fk_outdir_create(at("out"), 0, &err), *sub, *priv;
	struct fk_outfile *o;
	char **names;
	int fd;

	CHECK(d != NULL);
	if (!d)
		return;
	CHECK(g_file_set_contents(at("victim"), "precious\n", -1, NULL));

	/* a result file: written under a hidden name, renamed into place */
	o = fk_outdir_file(d, "index.tsv", &err);
	CHECK(o != NULL);
	fputs("a\n", fk_outfile_stream(o));
	CHECK(fk_outfile_commit(o, &err) == 0);
	CHECK_FILE("out/index.tsv", "a\n");
	/* written twice: refused, the first kept */
	o = fk_outdir_file(d, "index.tsv", &err);
	CHECK(o != NULL);
	fputs("b\n", fk_outfile_stream(o));
	CHECK(fk_outfile_commit(o, &err) == -1 && err &&
	      strstr(err->message, "out/index.tsv: cannot put the new file in place: File exists"));
	g_clear_error(&err);
	CHECK_FILE("out/index.tsv", "a\n");

	/* a link planted while a file is written: the file is not put in
	 * place, the link is not followed, what it names is unchanged */
	o = fk_outdir_file(d, "report.md", &err);
	CHECK(o != NULL);
	CHECK(symlink(at("victim"), at("out/report.md")) == 0);
	fputs("# report\n", fk_outfile_stream(o));
	CHECK(fk_outfile_commit(o, &err) == -1 && err);
	g_clear_error(&err);
	CHECK_FILE("victim", "precious\n");
	/* a link there before: the same */
	CHECK(symlink(at("victim"), at("out/load.log")) == 0);
	CHECK(fk_outdir_new_fd(d, "load.log", &err) == -1 && err &&
	      strstr(err->message, "out/load.log: cannot create: File exists"));
	g_clear_error(&err);
	CHECK(symlink(at("victim"), at("out/on")) == 0);
	CHECK(fk_outdir_mkdir(d, "on", &err) == NULL && err &&
	      strstr(err->message, "out/on: cannot create directory: File exists"));
	g_clear_error(&err);
	CHECK(fk_outdir_open(d, "on", &err) == NULL && err &&
	      strstr(err->message, "out/on: refused: a symbolic link"));
	g_clear_error(&err);
	CHECK_FILE("victim", "precious\n");
	/* no temporary file is left behind */
	names = fk_outdir_list(d, &err);
	CHECK(names && g_strv_length(names) == 4);	/* index.tsv load.log on report.md */
	for (char **n = names; n && *n; n++)
		CHECK(**n != '.');
	g_strfreev(names);

	/* a subdirectory, a private one, and a move between them */
	sub = fk_outdir_mkdir(d, "off", &err);
	priv = fk_outdir_mkdtemp(d, ".work-", &err);
	CHECK(sub && priv && fk_outdir_made(priv));
	if (sub && priv) {
		struct stat sb;

		CHECK(fstat(fk_outdir_fd(priv), &sb) == 0 && (sb.st_mode & 07777) == 0700);
		CHECK(g_str_has_prefix(fk_outdir_name(priv), ".work-") &&
		      strlen(fk_outdir_name(priv)) == strlen(".work-") + 6);
		fd = fk_outdir_new_fd(priv, "x.folded", &err);
		CHECK(fd >= 0 && write(fd, "a 1\n", 4) == 4);
		close(fd);
		CHECK(fk_outdir_move(priv, "x.folded", sub, "y.folded", &err) == 0);
		CHECK_FILE("out/off/y.folded", "a 1\n");
		/* never over a name, never a link moved */
		fd = fk_outdir_new_fd(priv, "x.folded", &err);
		close(fd);
		CHECK(fk_outdir_move(priv, "x.folded", sub, "y.folded", &err) == -1 && err);
		g_clear_error(&err);
		CHECK(symlinkat(at("victim"), fk_outdir_fd(priv), "l.folded") == 0);
		CHECK(fk_outdir_move(priv, "l.folded", sub, "l.folded", &err) == -1 && err &&
		      strstr(err->message, "refused: not a regular file"));
		g_clear_error(&err);
		/* a tree removed follows no link out of it */
		CHECK(mkdirat(fk_outdir_fd(priv), "deep", 0700) == 0);
		CHECK(symlinkat(root, fk_outdir_fd(priv), "deep/up") == 0);
		fk_outdir_remove_tree(d, fk_outdir_name(priv));
		CHECK(faccessat(fk_outdir_fd(d), fk_outdir_name(priv), F_OK, AT_SYMLINK_NOFOLLOW) != 0);
		CHECK_FILE("victim", "precious\n");
		CHECK_FILE("out/off/y.folded", "a 1\n");
	}
	/* names that leave the directory are refused */
	CHECK(fk_outdir_file(d, "../escape", &err) == NULL && err);
	g_clear_error(&err);
	CHECK(fk_outdir_mkdir(d, "..", &err) == NULL && err);
	g_clear_error(&err);
	CHECK(access(at("escape"), F_OK) != 0);
	fk_outdir_free(priv);
	fk_outdir_free(sub);
	fk_outdir_free(d);
}

int main(void)
{
	char tmpl[] = "/tmp/outdir-test-XXXXXX";
	char *cmd;

	root = g_mkdtemp(tmpl);
	CHECK(root != NULL);
	test_create();
	test_planted();
	cmd = g_strdup_printf("rm -rf '%s'", root);
	if (system(cmd) != 0)
		check_failures++;
	g_free(cmd);
	return CHECK_DONE();
}
