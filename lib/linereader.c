#include "linereader.h"

#include "error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK (1u << 20)

struct line_reader {
	int fd;
	bool owns_fd;
	bool eof;
	char *name;
	char *buf;
	size_t cap;
	size_t start;		/* first byte not yet returned */
	size_t end;		/* bytes in buf */
	size_t nul_scanned;	/* buf[start..nul_scanned) holds no NUL */
	uint64_t lineno;
	uint64_t bytes;
};

static struct line_reader *reader_new(int fd, bool owns, const char *name)
{
	struct line_reader *r = g_new0(struct line_reader, 1);

	r->fd = fd;
	r->owns_fd = owns;
	r->name = g_strdup(name);
	r->cap = BLOCK;
	r->buf = g_malloc(r->cap);
	return r;
}

struct line_reader *line_reader_open(const char *path, GError **err)
{
	struct stat st;
	int fd;

	if (!path || strcmp(path, "-") == 0)
		return reader_new(STDIN_FILENO, false, "<stdin>");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot open: %s",
			    g_strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "is a directory");
		close(fd);
		return NULL;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return reader_new(fd, true, path);
}

struct line_reader *line_reader_from_fd(int fd, const char *name)
{
	return reader_new(fd, false, name);
}

const char *line_reader_name(const struct line_reader *r)
{
	return r->name;
}

uint64_t line_reader_bytes(const struct line_reader *r)
{
	return r->bytes;
}

void line_reader_free(struct line_reader *r)
{
	if (!r)
		return;
	if (r->owns_fd)
		close(r->fd);
	g_free(r->name);
	g_free(r->buf);
	g_free(r);
}

/* Makes room after the unread bytes, sliding them to the front first. */
static int refill(struct line_reader *r, GError **err)
{
	size_t keep = r->end - r->start;
	ssize_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, keep);
		r->nul_scanned -= r->start;
		r->start = 0;
		r->end = keep;
	}
	if (r->end == r->cap) {
		if (r->cap >= LINE_READER_MAX_LINE) {
			fk_error_at(err, FK_ERROR_RANGE, r->name, r->lineno + 1,
				    "line longer than %u MiB",
				    LINE_READER_MAX_LINE >> 20);
			return -1;
		}
		r->cap *= 2;
		r->buf = g_realloc(r->buf, r->cap);
	}
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		fk_error_at(err, FK_ERROR_IO, r->name, 0, "read error: %s",
			    g_strerror(errno));
		return -1;
	}
	if (n == 0)
		r->eof = true;
	r->end += (size_t)n;
	r->bytes += (uint64_t)n;
	return 0;
}

int line_reader_next(struct line_reader *r, struct line *line, GError **err)
{
	char *nl;
	size_t len;

	for (;;) {
		nl = memchr(r->buf + r->start, '\n', r->end - r->start);
		if (nl || r->eof)
			break;
		if (refill(r, err) < 0)
			return -1;
	}
	if (!nl && r->start == r->end)
		return 0;
	len = (nl ? (size_t)(nl - r->buf) : r->end) - r->start;
	r->lineno++;
	/*
	 * NUL bytes are looked for once per byte, lazily: whole blocks at a
	 * time would be faster still, but this keeps the error on the right
	 * line without a second pass.
	 */
	if (r->nul_scanned < r->start + len) {
		size_t from = r->nul_scanned > r->start ? r->nul_scanned : r->start;
		if (memchr(r->buf + from, '\0', r->start + len - from)) {
			fk_error_at(err, FK_ERROR_BINARY, r->name, r->lineno,
				    "NUL byte in line: binary input?");
			return -1;
		}
		r->nul_scanned = r->start + len;
	}
	line->s = r->buf + r->start;
	line->len = len;
	line->no = r->lineno;
	line->newline = nl != NULL;
	if (len && line->s[len - 1] == '\r')
		line->len--;
	r->start += len + (nl != NULL);
	if (r->nul_scanned < r->start)
		r->nul_scanned = r->start;
	return 1;
}
