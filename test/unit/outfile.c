/*
 * outfile - unit tests of lib/core/outfile.c, how every result file is
 * written (the plugin's output=, split=, speedscope= and pprof=,
 * fold2pprof's -o): a new file gets the umask, a replaced one keeps its mode and
 * owner, a link is followed and never replaced, a link to a descriptor
 * writes to that descriptor (appending if it appends), a directory is an
 * error, and giving up leaves the old file as it was.
 */
#include "core/outfile.h"
#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


static char *dir;

static char *at(const char *name)
{
	return g_build_filename(dir, name, NULL);
}

/* writes text to path through outfile; 0 or -1 */
static int put(const char *path, const char *text)
{
	GError *err = NULL;
	struct fk_outfile *o = fk_outfile_open(path, &err);
	int rc;

	if (!o) {
		fprintf(stderr, "fk_outfile_open(%s): %s\n", path, err->message);
		g_error_free(err);
		return -1;
	}
	fputs(text, fk_outfile_stream(o));
	rc = fk_outfile_commit(o, &err);
	if (rc) {
		fprintf(stderr, "fk_outfile_commit(%s): %s\n", path, err->message);
		g_error_free(err);
	}
	return rc;
}

static void check_text(const char *path, const char *want)
{
	char *got = NULL;

	if (!g_file_get_contents(path, &got, NULL, NULL) || strcmp(got, want) != 0) {
		fprintf(stderr, "%s holds '%s', want '%s'\n", path, got ? got : "(nothing)", want);
		check_failures++;
	}
	g_free(got);
}

/* only the files named are left in dir: no temporary file */
static void check_only(const char *const *names)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *e;

	while (d && (e = g_dir_read_name(d))) {
		bool known = false;
		for (const char *const *n = names; *n; n++)
			known |= strcmp(*n, e) == 0;
		if (!known) {
			fprintf(stderr, "unexpected file %s\n", e);
			check_failures++;
		}
	}
	if (d)
		g_dir_close(d);
}

/*
 * fk_outfile_close(): a file is replaced whole or not at all (ok false
 * leaves the old one), a write error on a device is reported.
 */
static void test_close(void)
{
	char *dir = g_dir_make_tmp("foldkit-outfile-XXXXXX", NULL);
	char *path = g_build_filename(dir, "out", NULL), *text = NULL;
	struct fk_outfile *f;
	GError *err = NULL;
	GDir *gd;
	int n = 0;

	g_file_set_contents(path, "old", 3, NULL);
	f = fk_outfile_open(path, &err);
	CHECK(f != NULL);
	fputs("half", fk_outfile_stream(f));
	CHECK(fk_outfile_close(f, false, NULL) == -1);	/* not complete */
	g_file_get_contents(path, &text, NULL, NULL);
	CHECK_STR(text, "old");
	g_free(text);
	f = fk_outfile_open(path, &err);
	fputs("new", fk_outfile_stream(f));
	CHECK(fk_outfile_close(f, true, &err) == 0);
	g_file_get_contents(path, &text, NULL, NULL);
	CHECK_STR(text, "new");
	g_free(text);
	gd = g_dir_open(dir, 0, NULL);
	while (g_dir_read_name(gd))
		n++;
	g_dir_close(gd);
	CHECK(n == 1);		/* no temporary file left */
	f = fk_outfile_open("/dev/full", &err);
	CHECK(f != NULL);
	fputs("x", fk_outfile_stream(f));
	CHECK(fk_outfile_close(f, true, &err) == -1 && err && strstr(err->message, "/dev/full: write error"));
	g_clear_error(&err);
	CHECK(!fk_outfile_open("/no/such/dir/x", &err) && err);
	g_clear_error(&err);
	unlink(path);
	rmdir(dir);
	g_free(path);
	g_free(dir);
}

int main(void)
{
	char tmpl[] = "/tmp/outfile-test-XXXXXX";
	char *p, *q, *link, *cmd;
	struct stat sb;
	GError *err = NULL;
	struct fk_outfile *o;
	int fd;
	char fdpath[64];

	dir = g_mkdtemp(tmpl);
	CHECK(dir != NULL);

	/* a new file: 0666 less the umask */
	umask(027);
	p = at("new.folded");
	CHECK(put(p, "a 1\n") == 0);
	check_text(p, "a 1\n");
	CHECK(stat(p, &sb) == 0 && (sb.st_mode & 07777) == 0640);

	/* an existing file keeps its mode, and its owner (when root) */
	CHECK(chmod(p, 0604) == 0);
	if (geteuid() == 0)
		CHECK(chown(p, 65534, 65534) == 0);
	CHECK(put(p, "b 2\n") == 0);
	check_text(p, "b 2\n");
	CHECK(stat(p, &sb) == 0 && (sb.st_mode & 07777) == 0604);
	if (geteuid() == 0)
		CHECK(sb.st_uid == 65534 && sb.st_gid == 65534);

	/* giving up leaves it as it was, and no temporary file */
	o = fk_outfile_open(p, &err);
	CHECK(o != NULL);
	if (o) {
		fputs("partial", fk_outfile_stream(o));
		fk_outfile_abort(o);
	}
	check_text(p, "b 2\n");
	check_only((const char *const[]){ "new.folded", NULL });

	/* a link: the file it names is replaced, the link stays */
	link = at("link.folded");
	CHECK(symlink("new.folded", link) == 0);
	CHECK(put(link, "c 3\n") == 0);
	CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
	check_text(p, "c 3\n");
	g_free(link);
	/* a dangling link: the file it names is made */
	link = at("dangling.folded");
	q = at("made.folded");
	CHECK(symlink(q, link) == 0);
	CHECK(put(link, "d 4\n") == 0);
	CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
	check_text(q, "d 4\n");
	g_free(link);
	g_free(q);

	/* a link to a descriptor (as /dev/stdout is) writes to it, appending
	 * where it appends; the link stays */
	q = at("appended");
	CHECK(g_file_set_contents(q, "old\n", -1, NULL));
	fd = open(q, O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	link = at("stdout-like");
	CHECK(symlink(fdpath, link) == 0);
	CHECK(put(link, "e 5\n") == 0);
	CHECK(put(fdpath, "f 6\n") == 0);
	CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
	check_text(q, "old\ne 5\nf 6\n");
	close(fd);
	g_free(link);
	g_free(q);
	/* a closed descriptor is an error */
	CHECK(fk_outfile_open(fdpath, &err) == NULL);
	CHECK(err && strstr(err->message, "cannot write to descriptor: Bad file descriptor"));
	g_clear_error(&err);

	/* a directory is an error; so is a loop of links */
	CHECK(fk_outfile_open(dir, &err) == NULL);
	CHECK(err && strstr(err->message, "Is a directory"));
	g_clear_error(&err);
	link = at("loop");
	CHECK(symlink("loop", link) == 0);
	CHECK(fk_outfile_open(link, &err) == NULL);
	CHECK(err && strstr(err->message, "cannot follow the link"));
	g_clear_error(&err);
	g_free(link);

	/* in a directory anyone may write to with the sticky bit (/tmp), a
	 * link or file of another user's is refused, as the kernel's
	 * fs.protected_symlinks and protected_regular would: whatever they
	 * say, this module follows links itself (as root: another user's
	 * names can be made) */
	if (geteuid() == 0) {
		char *pub = at("public"), *target = at("target");

		CHECK(mkdir(pub, 0777) == 0 && chmod(pub, 01777) == 0);
		CHECK(g_file_set_contents(target, "mine\n", -1, NULL));
		link = g_build_filename(pub, "out.folded", NULL);
		CHECK(symlink(target, link) == 0 && lchown(link, 65534, 65534) == 0);
		CHECK(fk_outfile_open(link, &err) == NULL);
		CHECK(err && strstr(err->message, "refused: the link") &&
		      strstr(err->message, "belongs to another user (uid 65534)"));
		g_clear_error(&err);
		check_text(target, "mine\n");
		/* the caller's own link there is followed */
		CHECK(lchown(link, 0, 0) == 0);
		CHECK(put(link, "h 8\n") == 0);
		check_text(target, "h 8\n");
		g_free(link);
		/* a file of another user's there is not replaced */
		q = g_build_filename(pub, "theirs.folded", NULL);
		CHECK(g_file_set_contents(q, "theirs\n", -1, NULL) && chown(q, 65534, 65534) == 0);
		CHECK(fk_outfile_open(q, &err) == NULL && err && strstr(err->message, "refused: "));
		g_clear_error(&err);
		check_text(q, "theirs\n");
		g_free(q);
		g_free(pub);
		g_free(target);
	}

	/* a device is written in place, never replaced */
	CHECK(put("/dev/null", "g 7\n") == 0);
	CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));

	g_free(p);
	cmd = g_strdup_printf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		check_failures++;
	g_free(cmd);
	test_close();
	return CHECK_DONE();
}
