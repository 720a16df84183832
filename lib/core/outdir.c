#include "core/outdir.h"

#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fk_outdir {
	int fd;
	char *path;	/* for messages and children */
	char *name;	/* the last name of path */
	bool made;
};

static void fail(GError **err, const char *path, const char *what, int errnum)
{
	fk_error_at(err, FK_ERROR_IO, path, 0, "%s: %s", what, g_strerror(errnum));
}

static struct fk_outdir *wrap(int fd, char *path, bool made)
{
	struct fk_outdir *d = g_new0(struct fk_outdir, 1);

	d->fd = fd;
	d->path = path;
	d->name = g_path_get_basename(path);
	d->made = made;
	return d;
}

/*
 * Whether the directory fd may hold results: the caller's, and no other
 * user's to write in.  A group may write where the umask lets it (umask
 * 002 is common); others never.
 */
static bool trusted(int fd, const char *path, GError **err)
{
	struct stat sb;

	if (fstat(fd, &sb) != 0) {
		fail(err, path, "cannot inspect", errno);
		return false;
	}
	if (!S_ISDIR(sb.st_mode)) {
		fail(err, path, "refused", ENOTDIR);
		return false;
	}
	if (sb.st_uid != geteuid()) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "refused: the directory belongs to another "
			    "user (uid %u), who could plant links in it: name a new directory",
			    (unsigned)sb.st_uid);
		return false;
	}
	if (sb.st_mode & S_IWOTH) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "refused: any user may write to the "
			    "directory (mode %04o), and could plant links in it: name a new "
			    "directory", (unsigned)(sb.st_mode & 07777));
		return false;
	}
	return true;
}

/* opens the directory name of dirfd, no link followed; -1 with *err */
static int open_dir_at(int dirfd, const char *name, const char *path, GError **err)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR) {
			struct stat sb;

			if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode)) {
				fk_error_at(err, FK_ERROR_IO, path, 0, "refused: a symbolic link: "
					    "name the directory itself, or a new one");
				return -1;
			}
		}
		fail(err, path, errno == ENOTDIR ? "not a directory" : "cannot open", errno);
	}
	return fd;
}

static bool empty(int fd, const char *path, GError **err)
{
	char **names;
	struct fk_outdir tmp = { .fd = fd, .path = (char *)path };
	bool ok;

	if (!(names = fk_outdir_list(&tmp, err)))
		return false;
	ok = !names[0];
	if (!ok)
		fk_error_at(err, FK_ERROR_IO, path, 0, "refused: not empty (it holds '%s'%s): "
			    "name a new directory", names[0], names[1] ? ", ..." : "");
	g_strfreev(names);
	return ok;
}

struct fk_outdir *fk_outdir_create(const char *given, unsigned flags, GError **err)
{
	char *path = g_strdup(given), *parent;
	size_t n = strlen(path);
	struct fk_outdir *d;
	bool made;
	int fd;

	if (!n) {
		fk_error_at(err, FK_ERROR_IO, "''", 0, "cannot create: an empty name");
		g_free(path);
		return NULL;
	}
	while (n > 1 && path[n - 1] == '/')	/* "dir/" is dir */
		path[--n] = '\0';
	parent = g_path_get_dirname(path);
	/* the parents as mkdir -p makes them; the directory itself, below */
	d = NULL;
	if (g_mkdir_with_parents(parent, 0777) != 0) {
		fail(err, path, "cannot create directory", errno);
	} else if (!(made = mkdir(path, 0777) == 0) && errno != EEXIST) {
		fail(err, path, "cannot create directory", errno);
	} else if ((fd = open_dir_at(AT_FDCWD, path, path, err)) >= 0) {
		/* made here or not, it is checked: a name can change hands
		 * between mkdir() and open() */
		if (!trusted(fd, path, err) ||
		    (!made && !(flags & FK_OUTDIR_EXISTING) && !empty(fd, path, err)))
			close(fd);
		else
			d = wrap(fd, g_steal_pointer(&path), made);
	}
	g_free(parent);
	g_free(path);
	return d;
}

static char *sub_path(const struct fk_outdir *d, const char *name)
{
	return g_build_filename(d->path, name, NULL);
}

static bool plain_name(const char *name, const char *path, GError **err)
{
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "not a file name of the directory");
		return false;
	}
	return true;
}

struct fk_outdir *fk_outdir_open(struct fk_outdir *d, const char *name, GError **err)
{
	char *path = sub_path(d, name);
	int fd;

	if (!plain_name(name, path, err) || (fd = open_dir_at(d->fd, name, path, err)) < 0) {
		g_free(path);
		return NULL;
	}
	if (!trusted(fd, path, err)) {
		close(fd);
		g_free(path);
		return NULL;
	}
	return wrap(fd, path, false);
}

static struct fk_outdir *make_sub(struct fk_outdir *d, const char *name, mode_t mode,
				  GError **err)
{
	char *path = sub_path(d, name);
	struct fk_outdir *sub;

	if (!plain_name(name, path, err)) {
		g_free(path);
		return NULL;
	}
	if (mkdirat(d->fd, name, mode) != 0) {
		fail(err, path, "cannot create directory", errno);
		g_free(path);
		return NULL;
	}
	g_free(path);
	if ((sub = fk_outdir_open(d, name, err)))
		sub->made = true;
	return sub;
}

struct fk_outdir *fk_outdir_mkdir(struct fk_outdir *d, const char *name, GError **err)
{
	return make_sub(d, name, 0777, err);
}

struct fk_outdir *fk_outdir_mkdtemp(struct fk_outdir *d, const char *prefix, GError **err)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	for (int tries = 0; tries < 100; tries++) {
		GString *name = g_string_new(prefix);
		struct fk_outdir *sub;

		for (int i = 0; i < 6; i++)
			g_string_append_c(name, chars[g_random_int_range(0, sizeof(chars) - 1)]);
		/* mkdirat() fails on any name that exists: then another */
		if (mkdirat(d->fd, name->str, 0700) == 0) {
			if ((sub = fk_outdir_open(d, name->str, err)))
				sub->made = true;
			g_string_free(name, TRUE);
			return sub;
		}
		g_string_free(name, TRUE);
		if (errno != EEXIST)
			break;
	}
	fail(err, d->path, "cannot create a private directory in it", errno);
	return NULL;
}

void fk_outdir_free(struct fk_outdir *d)
{
	if (!d)
		return;
	close(d->fd);
	g_free(d->path);
	g_free(d->name);
	g_free(d);
}

int fk_outdir_fd(const struct fk_outdir *d)
{
	return d->fd;
}

const char *fk_outdir_path(const struct fk_outdir *d)
{
	return d->path;
}

const char *fk_outdir_name(const struct fk_outdir *d)
{
	return d->name;
}

bool fk_outdir_made(const struct fk_outdir *d)
{
	return d->made;
}

struct fk_outfile *fk_outdir_file(struct fk_outdir *d, const char *name, GError **err)
{
	char *path = sub_path(d, name);
	struct fk_outfile *o = plain_name(name, path, err)
		? fk_outfile_openat(d->fd, name, path, err) : NULL;

	g_free(path);
	return o;
}

int fk_outdir_new_fd(struct fk_outdir *d, const char *name, GError **err)
{
	char *path = sub_path(d, name);
	int fd = plain_name(name, path, err) ? fk_outfile_create_at(d->fd, name, path, err) : -1;

	g_free(path);
	return fd;
}

int fk_outdir_move(struct fk_outdir *from, const char *from_name, struct fk_outdir *to,
		   const char *to_name, GError **err)
{
	char *src = sub_path(from, from_name), *dst = sub_path(to, to_name);
	struct stat sb;
	int rc = -1;

	if (!plain_name(from_name, src, err) || !plain_name(to_name, dst, err))
		;
	else if (fstatat(from->fd, from_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
		fail(err, src, "cannot move", errno);
	else if (!S_ISREG(sb.st_mode))
		fk_error_at(err, FK_ERROR_IO, src, 0, "refused: not a regular file");
	else if (fk_rename_new(from->fd, from_name, to->fd, to_name) != 0)
		fk_error_at(err, FK_ERROR_IO, dst, 0, "cannot move %s here: %s", src,
			    g_strerror(errno));
	else
		rc = 0;
	g_free(src);
	g_free(dst);
	return rc;
}

int fk_outdir_unlink(struct fk_outdir *d, const char *name, GError **err)
{
	char *path = sub_path(d, name);
	int rc = -1;

	if (!plain_name(name, path, err))
		;
	else if (unlinkat(d->fd, name, 0) != 0)
		fail(err, path, "cannot remove", errno);
	else
		rc = 0;
	g_free(path);
	return rc;
}

/* empties the directory fd (which it closes), following no link */
static void empty_tree(int fd, int depth)
{
	DIR *dir = fdopendir(fd);
	struct dirent *de;

	if (!dir) {
		close(fd);
		return;
	}
	while ((de = readdir(dir))) {
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0)
			continue;
		/* a directory: its contents first (a link is unlinked above) */
		if (depth < 64 && (sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY |
						O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			empty_tree(sub, depth + 1);
			unlinkat(fd, de->d_name, AT_REMOVEDIR);
		}
	}
	closedir(dir);
}

void fk_outdir_remove_tree(struct fk_outdir *d, const char *name)
{
	int fd;

	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return;
	fd = openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		empty_tree(fd, 0);
	unlinkat(d->fd, name, AT_REMOVEDIR);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **fk_outdir_list(struct fk_outdir *d, GError **err)
{
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	GPtrArray *v;
	struct dirent *de;

	if (!dir) {
		fail(err, d->path, "cannot read the directory", errno);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	v = g_ptr_array_new();
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			g_ptr_array_add(v, g_strdup(de->d_name));
	closedir(dir);
	g_ptr_array_sort(v, cmp_str);
	g_ptr_array_add(v, NULL);
	return (char **)g_ptr_array_free(v, FALSE);
}
