#include "core/maplines.h"

#include "core/error.h"
#include "core/simd.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define POPULATE_MAX ((off_t)1 << 30)
/* How far ahead of a line its reader fetches (bytes): measured best of
 * 512, 1024 and 2048 on folded lines of ~130 bytes. */
#define PREFETCH_AHEAD 1024

struct map_lines {
	const char *map;	/* never empty */
	size_t size;
	size_t pos;		/* first byte not yet returned */
	bool windowed;		/* map_lines_open_windowed() */
	size_t slide_at;	/* pos at which to move the window */
	size_t mapped_to;	/* populated up to here */
	size_t dropped_to;	/* released up to here */
	uint64_t lineno;
	char *name;
};

/*
 * The window: pages from MAP_LINES_WINDOW before pos to 2 windows after it
 * are mapped (one call, not a fault per few pages), those before released.
 */
static void slide(struct map_lines *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t drop = m->pos > MAP_LINES_WINDOW ? (m->pos - MAP_LINES_WINDOW) & ~(page - 1) : 0;
	size_t to = m->pos + 2 * MAP_LINES_WINDOW;

	if (to > m->size)
		to = m->size;
	if (drop > m->dropped_to) {
		madvise((void *)(m->map + m->dropped_to), drop - m->dropped_to, MADV_DONTNEED);
		m->dropped_to = drop;
	}
#ifdef MADV_POPULATE_READ
	if (to > m->mapped_to) {
		size_t from = m->mapped_to & ~(page - 1);
		/* failure (a kernel before 5.14) only means page faults */
		madvise((void *)(m->map + from), to - from, MADV_POPULATE_READ);
		m->mapped_to = to;
	}
#endif
	m->slide_at = m->pos + MAP_LINES_WINDOW;
}

static inline void maybe_slide(struct map_lines *m)
{
	if (m->windowed && m->pos >= m->slide_at)
		slide(m);
}

static struct map_lines *open_map(const char *path, int *fdp, bool windowed,
				  GError **err)
{
	struct map_lines *m;
	struct stat st;
	void *p;
	int fd;

	*fdp = -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "cannot open: %s",
			    g_strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0)
		st.st_mode = 0;
	if (S_ISDIR(st.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, path, 0, "is a directory");
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		/* a FIFO's data would be lost if it were closed and opened
		 * again: the caller reads this descriptor.  An empty file
		 * too: /proc and /sys files say 0 bytes but have more, or
		 * fail to read (/proc/self/mem) */
		*fdp = fd;
		return NULL;
	}
	/*
	 * MAP_POPULATE maps the whole file in one call rather than one fault
	 * per few pages; but it reads the file first, so not for one that may
	 * not fit in memory.  The mapping outlives the descriptor.
	 */
	p = mmap(NULL, (size_t)st.st_size, PROT_READ,
		 MAP_SHARED | (!windowed && st.st_size <= POPULATE_MAX ? MAP_POPULATE : 0),
		 fd, 0);
	if (p == MAP_FAILED) {
		*fdp = fd;
		return NULL;
	}
	close(fd);
	m = g_new0(struct map_lines, 1);
	m->map = p;
	m->size = (size_t)st.st_size;
	m->name = g_strdup(path);
	m->windowed = windowed;
	if (windowed)
		slide(m);
	return m;
}

struct map_lines *map_lines_open(const char *path, int *fdp, GError **err)
{
	return open_map(path, fdp, false, err);
}

struct map_lines *map_lines_open_windowed(const char *path, int *fdp, GError **err)
{
	return open_map(path, fdp, true, err);
}

#ifdef FK_AVX2_PATH
/* find_end() 32 bytes a step; *ip is where the steps stopped, when
 * fewer than 32 bytes are left. */
__attribute__((target("avx2")))
static const char *find_end_avx2(const char *s, size_t n, size_t *ip)
{
	const __m256i nl = _mm256_set1_epi8('\n'), zero = _mm256_setzero_si256();
	size_t i;

	for (i = 0; i + 32 <= n; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
		unsigned mask = (unsigned)_mm256_movemask_epi8(
			_mm256_or_si256(_mm256_cmpeq_epi8(v, nl), _mm256_cmpeq_epi8(v, zero)));

		if (mask)
			return s + i + __builtin_ctz(mask);
	}
	*ip = i;
	return NULL;
}
#endif

/*
 * The first '\n' or NUL in s[0..n), or NULL: one pass finds both.  Inline
 * rather than libc's strchrnul(): on lines of a hundred bytes or so the
 * call and its set-up cost more than the search.
 */
static const char *find_end(const char *s, size_t n)
{
	size_t i = 0;

#ifdef FK_AVX2_PATH
	if (n >= 32 && fk_have_avx2()) {
		const char *e = find_end_avx2(s, n, &i);

		if (e)
			return e;
	}
#endif

#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		unsigned mask = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, zero)));

		if (mask)
			return s + i + __builtin_ctz(mask);
	}
#endif
	for (; i < n; i++)
		if (s[i] == '\n' || s[i] == '\0')
			return s + i;
	return NULL;
}

int map_lines_next(struct map_lines *m, struct line *line, GError **err)
{
	const char *s = m->map + m->pos, *e;
	size_t left = m->size - m->pos, len;

	if (!left)
		return 0;
	/*
	 * The lines are read once, in order, and this is their first read:
	 * the hardware's prefetcher stops at every 4 KiB page of the
	 * mapping, so the bytes a few lines ahead are asked for here.
	 */
	if (left > PREFETCH_AHEAD + 128) {
		__builtin_prefetch(s + PREFETCH_AHEAD);
		__builtin_prefetch(s + PREFETCH_AHEAD + 64);
	}
	e = find_end(s, left);
	while (e && *e == '\0') {
		/* the line holding the first NUL is the error, as in
		 * line_reader, unless it is longer than allowed */
		const char *nl = memchr(e, '\n', left - (size_t)(e - s));

		if ((size_t)((nl ? nl : s + left) - s) < LINE_READER_MAX_LINE) {
			fk_error_at(err, FK_ERROR_BINARY, m->name, m->lineno + 1,
				    "NUL byte in line: binary input?");
			return -1;
		}
		e = nl;
	}
	len = e ? (size_t)(e - s) : left;
	if (len >= LINE_READER_MAX_LINE) {
		fk_error_at(err, FK_ERROR_RANGE, m->name, m->lineno + 1,
			    "line (or sample) longer than %u MiB",
			    LINE_READER_MAX_LINE >> 20);
		return -1;
	}
	m->lineno++;
	m->pos += len + (e != NULL);
	maybe_slide(m);
	line->s = s;
	line->len = len && s[len - 1] == '\r' ? len - 1 : len;
	line->no = m->lineno;
	line->newline = e != NULL;
	return 1;
}

size_t map_lines_skip_indented(struct map_lines *m)
{
	const char *s = m->map + m->pos;
	/* stops before a line holding a NUL: map_lines_next() reports it */
	size_t lines, n = fk_skip_indented(s, m->size - m->pos, &lines);

	m->pos += n;
	m->lineno += lines;
	maybe_slide(m);
	return lines;
}

const char *map_lines_name(const struct map_lines *m)
{
	return m->name;
}

uint64_t map_lines_bytes(const struct map_lines *m)
{
	return m->pos;
}

const char *map_lines_cursor(const struct map_lines *m)
{
	return m->map + m->pos;
}

size_t map_lines_avail(const struct map_lines *m)
{
	return m->size - m->pos;
}

uint64_t map_lines_advance(struct map_lines *m, size_t n, size_t lines)
{
	m->pos += n;
	m->lineno += lines;
	maybe_slide(m);
	return m->lineno;
}

void map_lines_free(struct map_lines *m)
{
	if (!m)
		return;
	munmap((void *)m->map, m->size);
	g_free(m->name);
	g_free(m);
}
