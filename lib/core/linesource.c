#include "core/linesource.h"

#include "core/maplines.h"

#include <string.h>
#include <unistd.h>

struct line_source {
	struct map_lines *map;	/* a regular file, or NULL */
	struct line_reader *lr;	/* else a stream */
	int fd;			/* the stream's descriptor, if ours */
	const char *pin;	/* the mapping's pinned byte */
};

struct line_source *line_source_open(const char *path, GError **err)
{
	struct line_source *ls;
	struct map_lines *m = NULL;
	int fd = -1;

	if (path && strcmp(path, "-") != 0 &&
	    !(m = map_lines_open_windowed(path, &fd, err)) && fd < 0)
		return NULL;
	ls = g_new0(struct line_source, 1);
	ls->map = m;
	ls->fd = fd;
	if (!m)		/* standard input, a FIFO, /proc: read as a stream */
		ls->lr = fd >= 0 ? line_reader_from_fd(fd, path) : line_reader_open(path, err);
	return ls;
}

int line_source_next(struct line_source *ls, struct line *line, GError **err)
{
	return ls->map ? map_lines_next(ls->map, line, err)
		       : line_reader_next(ls->lr, line, err);
}

void line_source_pin(struct line_source *ls, const char *p)
{
	if (ls->map)
		ls->pin = p;
	else
		line_reader_pin(ls->lr, p);
}

const char *line_source_pinned(const struct line_source *ls)
{
	return ls->map ? ls->pin : line_reader_pinned(ls->lr);
}

void line_source_unpin(struct line_source *ls)
{
	if (ls->map)
		ls->pin = NULL;
	else
		line_reader_unpin(ls->lr);
}

size_t line_source_skip_indented(struct line_source *ls)
{
	return ls->map ? map_lines_skip_indented(ls->map)
		       : line_reader_skip_indented(ls->lr);
}

const char *line_source_cursor(const struct line_source *ls)
{
	return ls->map ? map_lines_cursor(ls->map) : line_reader_cursor(ls->lr);
}

size_t line_source_avail(const struct line_source *ls)
{
	return ls->map ? map_lines_avail(ls->map) : line_reader_avail(ls->lr);
}

uint64_t line_source_advance(struct line_source *ls, size_t n, size_t lines)
{
	return ls->map ? map_lines_advance(ls->map, n, lines)
		       : line_reader_advance(ls->lr, n, lines);
}

bool line_source_lines_stay(const struct line_source *ls)
{
	return ls->map != NULL;
}

uint64_t line_source_bytes(const struct line_source *ls)
{
	return ls->map ? map_lines_bytes(ls->map) : line_reader_bytes(ls->lr);
}

const char *line_source_name(const struct line_source *ls)
{
	return ls->map ? map_lines_name(ls->map) : line_reader_name(ls->lr);
}

void line_source_free(struct line_source *ls)
{
	if (!ls)
		return;
	map_lines_free(ls->map);
	line_reader_free(ls->lr);
	if (ls->fd >= 0)
		close(ls->fd);
	g_free(ls);
}
