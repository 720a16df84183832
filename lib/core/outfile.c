#include "core/outfile.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40	/* as the kernel's path walk */

struct fk_outfile {
	char *path;	/* as given: what messages name */
	char *final;	/* the file the temporary one replaces, or NULL */
	char *tmp;	/* the temporary file, or NULL when written in place */
	int dirfd;	/* fk_outfile_openat(): final and tmp are names in it; else -1 */
	FILE *f;
};

static void fail(GError **err, const char *path, const char *what, int errnum)
{
	fk_error_at(err, FK_ERROR_IO, path, 0, "%s: %s", what, g_strerror(errnum));
}

/* Parses a whole decimal descriptor number; false if s is not one. */
static bool parse_fd(const char *s, int *fd)
{
	char *end;
	long v;

	if (!g_ascii_isdigit(*s))
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > INT_MAX)
		return false;
	*fd = (int)v;
	return true;
}

/* Whether p names one of this process's open descriptors, and which. */
static bool descriptor_path(const char *p, int *fd)
{
	char own[40];

	if (strcmp(p, "/dev/stdout") == 0)
		return *fd = 1, true;
	if (strcmp(p, "/dev/stderr") == 0)
		return *fd = 2, true;
	snprintf(own, sizeof(own), "/proc/%ld/fd/", (long)getpid());
	if (g_str_has_prefix(p, own))
		return parse_fd(p + strlen(own), fd);
	if (g_str_has_prefix(p, "/proc/self/fd/"))
		return parse_fd(p + strlen("/proc/self/fd/"), fd);
	if (g_str_has_prefix(p, "/proc/thread-self/fd/"))
		return parse_fd(p + strlen("/proc/thread-self/fd/"), fd);
	if (g_str_has_prefix(p, "/dev/fd/"))
		return parse_fd(p + strlen("/dev/fd/"), fd);
	return false;
}

/*
 * Whether p, an existing name that sb describes, may be written through
 * or replaced: not when it belongs to another user (neither the caller
 * nor the directory's owner) in a directory anyone may write to that has
 * the sticky bit (/tmp).  There that user may have planted it, a link to
 * a file of the caller's, or a file the caller would hand back to them:
 * the kernel's fs.protected_symlinks and protected_regular refuse these
 * when set, and this module follows links itself, so it asks the same
 * whether or not they are set.
 */
static bool may_use(const char *path, const char *p, const struct stat *sb, GError **err)
{
	char *dir = g_path_get_dirname(p);
	struct stat ds;
	bool ok = stat(dir, &ds) != 0 || !(ds.st_mode & S_ISVTX) || !(ds.st_mode & S_IWOTH) ||
		  sb->st_uid == geteuid() || sb->st_uid == ds.st_uid;

	if (!ok)
		fk_error_at(err, FK_ERROR_IO, path, 0, "refused: %s%s belongs to another user "
			    "(uid %u), in %s, a directory anyone may write to",
			    S_ISLNK(sb->st_mode) ? "the link " : "", p, (unsigned)sb->st_uid, dir);
	g_free(dir);
	return ok;
}

static struct fk_outfile *wrap(const char *path, int fd, char *final, char *tmp,
			    GError **err)
{
	struct fk_outfile *o;
	FILE *f = fdopen(fd, "w");

	if (!f) {
		fail(err, path, "cannot open", errno);
		close(fd);
		if (tmp)
			unlink(tmp);
		g_free(final);
		g_free(tmp);
		return NULL;
	}
	o = g_new0(struct fk_outfile, 1);
	o->path = g_strdup(path);
	o->final = final;
	o->tmp = tmp;
	o->dirfd = -1;
	o->f = f;
	return o;
}

/*
 * Opens p, a regular file or a device, to be written where it is.  p was
 * no link when looked at: should it be one now, it is not followed.
 */
static struct fk_outfile *in_place(const char *path, const char *p, int flags, GError **err)
{
	int fd = open(p, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW | flags);

	if (fd < 0) {
		fail(err, path, "cannot open", errno);
		return NULL;
	}
	return wrap(path, fd, NULL, NULL, err);
}

/*
 * A temporary file next to p that will replace it; old is p's stat when p
 * exists.  Where the result could not keep old's owner, or no file can be
 * made next to it, p is written in place instead.
 */
static struct fk_outfile *replace(const char *path, const char *p, const struct stat *old,
			       GError **err)
{
	char *dir = g_path_get_dirname(p), *base = g_path_get_basename(p);
	char *tmp = g_strdup_printf("%s/.%s.tmpXXXXXX", dir, base);
	int fd, errnum;

	g_free(dir);
	g_free(base);
	/* new files get 0666 less the umask, as any program's */
	fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, old ? 0600 : 0666);
	if (fd < 0) {
		errnum = errno;
		g_free(tmp);
		if (old && (errnum == EACCES || errnum == EPERM || errnum == EROFS))
			return in_place(path, p, O_TRUNC, err);
		fail(err, path, "cannot create", errnum);
		return NULL;
	}
	if (old && (fchmod(fd, old->st_mode & 07777) != 0 ||
		    ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
		     fchown(fd, old->st_uid, old->st_gid) != 0))) {
		close(fd);
		unlink(tmp);
		g_free(tmp);
		return in_place(path, p, O_TRUNC, err);
	}
	return wrap(path, fd, g_strdup(p), tmp, err);
}

struct fk_outfile *fk_outfile_open(const char *path, GError **err)
{
	char *p = g_strdup(path);
	struct fk_outfile *o = NULL;
	struct stat sb;
	int fd;

	for (int links = 0;; links++) {
		if (descriptor_path(p, &fd)) {
			int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
			if (copy < 0)
				fail(err, path, "cannot write to descriptor", errno);
			else
				o = wrap(path, copy, NULL, NULL, err);
			break;
		}
		if (lstat(p, &sb) != 0) {
			if (errno == ENOENT)
				o = replace(path, p, NULL, err);
			else
				fail(err, path, "cannot create", errno);
			break;
		}
		if (!S_ISDIR(sb.st_mode) && !may_use(path, p, &sb, err))
			break;
		if (S_ISLNK(sb.st_mode)) {
			GError *e = NULL;
			char *to = g_file_read_link(p, &e), *next;

			if (!to || links == MAX_LINKS) {
				fail(err, path, "cannot follow the link", to ? ELOOP : EINVAL);
				g_clear_error(&e);
				g_free(to);
				break;
			}
			if (g_path_is_absolute(to)) {
				next = to;
			} else {
				char *dir = g_path_get_dirname(p);
				next = g_build_filename(dir, to, NULL);
				g_free(dir);
				g_free(to);
			}
			g_free(p);
			p = next;
			continue;
		}
		if (S_ISDIR(sb.st_mode))
			fail(err, path, "cannot write", EISDIR);
		else if (S_ISREG(sb.st_mode))
			o = replace(path, p, &sb, err);
		else
			o = in_place(path, p, 0, err);
		break;
	}
	g_free(p);
	return o;
}

FILE *fk_outfile_stream(struct fk_outfile *o)
{
	return o->f;
}

static void fk_outfile_free(struct fk_outfile *o)
{
	if (o->dirfd >= 0)
		close(o->dirfd);
	g_free(o->path);
	g_free(o->final);
	g_free(o->tmp);
	g_free(o);
}

/* the temporary file's name for name: hidden, random, at most NAME_MAX */
static char *tmp_name(const char *name)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	GString *s = g_string_new(".");

	g_string_append_len(s, name, (gssize)MIN(strlen(name), 200));
	g_string_append_c(s, '.');
	for (int i = 0; i < 8; i++)
		g_string_append_c(s, chars[g_random_int_range(0, sizeof(chars) - 1)]);
	return g_string_free(s, FALSE);
}

/*
 * A new file in dirfd: name itself, or with tmp a hidden name made from it
 * (set in *tmp).  O_EXCL with O_CREAT refuses any name that exists, a
 * link included; O_NOFOLLOW says so twice.
 */
static int create_at(int dirfd, const char *name, const char *path, char **tmp, GError **err)
{
	for (int tries = 0; tries < 100; tries++) {
		char *n = tmp ? tmp_name(name) : g_strdup(name);
		int fd = openat(dirfd, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				O_NOCTTY | O_CLOEXEC, 0666);

		if (fd >= 0) {
			if (tmp)
				*tmp = n;
			else
				g_free(n);
			return fd;
		}
		g_free(n);
		if (errno != EEXIST || !tmp)
			break;
	}
	fail(err, path, "cannot create", errno);
	return -1;
}

int fk_outfile_create_at(int dirfd, const char *name, const char *path, GError **err)
{
	return create_at(dirfd, name, path, NULL, err);
}

struct fk_outfile *fk_outfile_openat(int dirfd, const char *name, const char *path,
				     GError **err)
{
	struct fk_outfile *o;
	char *tmp = NULL;
	int own = fcntl(dirfd, F_DUPFD_CLOEXEC, 3), fd;

	if (own < 0) {
		fail(err, path, "cannot create", errno);
		return NULL;
	}
	if ((fd = create_at(own, name, path, &tmp, err)) < 0) {
		close(own);
		return NULL;
	}
	o = wrap(path, fd, g_strdup(name), tmp, err);
	if (!o) {
		unlinkat(own, tmp, 0);	/* wrap() knew no directory */
		close(own);
		return NULL;
	}
	o->dirfd = own;
	return o;
}

int fk_rename_new(int from_dir, const char *from, int to_dir, const char *to)
{
	if (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: a hard link is made only
	 * where no name is, and follows no link */
	if (linkat(from_dir, from, to_dir, to, 0) != 0)
		return -1;
	unlinkat(from_dir, from, 0);
	return 0;
}

static void remove_tmp(struct fk_outfile *o)
{
	if (o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	else
		unlink(o->tmp);
}

int fk_outfile_commit(struct fk_outfile *o, GError **err)
{
	int rc = 0;

	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f)) {
		fail(err, o->path, "write error", errno ? errno : EIO);
		rc = -1;
	}
	if (fclose(o->f) != 0 && rc == 0) {
		fail(err, o->path, "write error", errno);
		rc = -1;
	}
	if (o->tmp && rc == 0) {
		if (o->dirfd >= 0 && fk_rename_new(o->dirfd, o->tmp, o->dirfd, o->final) != 0) {
			fail(err, o->path, "cannot put the new file in place", errno);
			rc = -1;
		} else if (o->dirfd < 0 && rename(o->tmp, o->final) != 0) {
			fail(err, o->path, "cannot rename the new file into place", errno);
			rc = -1;
		}
	}
	if (o->tmp && rc != 0)
		remove_tmp(o);
	fk_outfile_free(o);
	return rc;
}

void fk_outfile_abort(struct fk_outfile *o)
{
	if (!o)
		return;
	fclose(o->f);
	if (o->tmp)
		remove_tmp(o);
	fk_outfile_free(o);
}

int fk_outfile_close(struct fk_outfile *o, bool ok, GError **err)
{
	if (ok)
		return fk_outfile_commit(o, err);
	fk_outfile_abort(o);
	return -1;
}
