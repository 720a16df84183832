#include "core/outfile.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

struct fk_outfile {
	char *path;
	char *tmp;		/* NULL when written in place */
	FILE *f;
};

struct fk_outfile *fk_outfile_open(const char *path, GError **err)
{
	struct fk_outfile *o = g_new0(struct fk_outfile, 1);
	struct stat sb;
	mode_t mask;
	int fd;

	o->path = g_strdup(path);
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (!(o->f = fopen(path, "w"))) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot open: %s", g_strerror(errno));
			goto fail;
		}
		return o;
	}
	o->tmp = g_strdup_printf("%s.XXXXXX", path);
	mask = umask(0);
	umask(mask);
	fd = g_mkstemp_full(o->tmp, O_WRONLY | O_CLOEXEC, 0666 & ~mask);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot create: %s", g_strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		goto fail;
	}
	/* mkstemp makes 0600 whatever it is told on some systems */
	(void)fchmod(fd, 0666 & ~mask);
	return o;
fail:
	g_free(o->tmp);
	g_free(o->path);
	g_free(o);
	return NULL;
}

FILE *fk_outfile_stream(struct fk_outfile *o)
{
	return o->f;
}

int fk_outfile_close(struct fk_outfile *o, bool ok, GError **err)
{
	int rc = 0;

	errno = 0;
	if (fflush(o->f) != 0 || ferror(o->f)) {
		if (ok)
			fk_error_at(err, FK_ERROR_IO, o->path, 0, "write error: %s",
				    g_strerror(errno ? errno : EIO));
		ok = false;
	}
	if (fclose(o->f) != 0 && ok) {
		fk_error_at(err, FK_ERROR_IO, o->path, 0, "write error: %s", g_strerror(errno));
		ok = false;
	}
	if (o->tmp) {
		if (ok && rename(o->tmp, o->path) != 0) {
			fk_error_at(err, FK_ERROR_IO, o->path, 0, "cannot rename into place: %s",
				    g_strerror(errno));
			ok = false;
		}
		if (!ok)
			unlink(o->tmp);
	}
	if (!ok)
		rc = -1;
	g_free(o->tmp);
	g_free(o->path);
	g_free(o);
	return rc;
}
