#include "core/linereader.h"

#include "core/error.h"
#include "core/simd.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/*
 * The read size.  Fuzz builds shrink it (-DFK_LINE_READER_BLOCK=16) so that
 * small inputs reach the refill and growth paths that real files reach.
 */
#ifndef FK_LINE_READER_BLOCK
#define FK_LINE_READER_BLOCK (1u << 20)
#endif
#define BLOCK ((size_t)FK_LINE_READER_BLOCK)

struct line_reader {
	int fd;
	bool owns_fd;
	bool eof;
	char *name;
	char *buf;
	size_t cap;
	size_t start;		/* first byte not yet returned */
	size_t end;		/* bytes in buf */
	size_t nul_at;		/* offset of the first NUL in buf, or SIZE_MAX */
	size_t pin;		/* offset kept by line_reader_pin(), or SIZE_MAX */
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
	r->nul_at = SIZE_MAX;
	r->pin = SIZE_MAX;
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

void line_reader_pin(struct line_reader *r, const char *p)
{
	r->pin = (size_t)(p - r->buf);
}

const char *line_reader_pinned(const struct line_reader *r)
{
	return r->buf + r->pin;
}

void line_reader_unpin(struct line_reader *r)
{
	r->pin = SIZE_MAX;
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
	size_t from = r->pin < r->start ? r->pin : r->start;
	size_t keep = r->end - from;
	ssize_t n;

	if (from > 0) {
		memmove(r->buf, r->buf + from, keep);
		if (r->nul_at != SIZE_MAX)
			r->nul_at -= from;
		if (r->pin != SIZE_MAX)
			r->pin -= from;
		r->start -= from;
		r->end = keep;
	}
	if (r->end == r->cap) {
		if (r->cap >= LINE_READER_MAX_LINE) {
			fk_error_at(err, FK_ERROR_RANGE, r->name, r->lineno + 1,
				    "line (or sample) longer than %u MiB",
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
	if (r->nul_at == SIZE_MAX) {
		const char *nul = memchr(r->buf + r->end, '\0', (size_t)n);
		if (nul)
			r->nul_at = (size_t)(nul - r->buf);
	}
	r->end += (size_t)n;
	r->bytes += (uint64_t)n;
	return 0;
}

int line_reader_next(struct line_reader *r, struct line *line, GError **err)
{
	char *nl;
	size_t len, scanned = 0;

	/*
	 * scanned counts the bytes after start already known to hold no
	 * '\n', so a long line arriving in small reads (a pipe gives 64 KiB
	 * at a time) is searched once, not once per read.  refill() moves
	 * the unread bytes to the front but keeps them in order, so the
	 * count stays valid across it.
	 */
	for (;;) {
		nl = memchr(r->buf + r->start + scanned, '\n',
			    r->end - r->start - scanned);
		if (nl || r->eof)
			break;
		scanned = r->end - r->start;
		if (refill(r, err) < 0)
			return -1;
	}
	if (!nl && r->start == r->end)
		return 0;
	len = (nl ? (size_t)(nl - r->buf) : r->end) - r->start;
	r->lineno++;
	/*
	 * NUL bytes are looked for a block at a time (see refill()); the line
	 * that holds the first one is the error.
	 */
	if (r->nul_at != SIZE_MAX && r->nul_at < r->start + len) {
		fk_error_at(err, FK_ERROR_BINARY, r->name, r->lineno,
			    "NUL byte in line: binary input?");
		return -1;
	}
	line->s = r->buf + r->start;
	line->len = len;
	line->no = r->lineno;
	line->newline = nl != NULL;
	if (len && line->s[len - 1] == '\r')
		line->len--;
	r->start += len + (nl != NULL);
	return 1;
}

const char *line_reader_cursor(const struct line_reader *r)
{
	return r->buf + r->start;
}

size_t line_reader_avail(const struct line_reader *r)
{
	size_t end = r->nul_at != SIZE_MAX && r->nul_at < r->end ? r->nul_at : r->end;

	return end > r->start ? end - r->start : 0;
}

uint64_t line_reader_advance(struct line_reader *r, size_t n, size_t lines)
{
	r->start += n;
	r->lineno += lines;
	return r->lineno;
}

/* popcount of a 16-bit mask without needing the POPCNT instruction */
static inline size_t ones16(unsigned m)
{
	static const unsigned char bits[256] = {
#define B2(n) n, n + 1, n + 1, n + 2
#define B4(n) B2(n), B2(n + 1), B2(n + 1), B2(n + 2)
#define B6(n) B4(n), B4(n + 1), B4(n + 1), B4(n + 2)
		B6(0), B6(1), B6(1), B6(2)
#undef B2
#undef B4
#undef B6
	};
	return (size_t)bits[m & 0xff] + bits[(m >> 8) & 0xff];
}

static inline bool indent_char(char c)
{
	return c == ' ' || c == '\t';
}

static inline size_t ones32(uint32_t m)
{
	return ones16(m & 0xffff) + ones16(m >> 16);
}

/*
 * One block of fk_skip_indented()'s scan, from its masks: bit k of m_nl
 * says byte i + k is a '\n', of m_in that the byte after it is an indent,
 * of m_z that it is a NUL.  Counts the block's line ends into *lines and
 * sets *last_nl to the last; returns true when the run ends in the block
 * (at a line end before a line that is not indented, or before the line
 * holding a NUL, which is not skipped).  popcnt says the caller is
 * compiled for the popcnt instruction (the table serves otherwise).
 */
static inline __attribute__((always_inline)) bool
skip_block(uint32_t m_nl, uint32_t m_in, uint32_t m_z, size_t i,
	   size_t *lines, size_t *last_nl, bool popcnt)
{
	uint32_t stop = m_nl & ~m_in;
#define ONES(m) (popcnt ? (size_t)__builtin_popcount(m) : ones32(m))

	if (m_z) {
		uint32_t before = m_nl & ((m_z & -m_z) - 1);
		if (!(stop & before)) {
			*lines += ONES(before);
			if (before)
				*last_nl = i + 31 - (size_t)__builtin_clz(before);
			return true;
		}
	}
	if (stop) {
		unsigned pos = (unsigned)__builtin_ctz(stop);
		/* 2u << 31 is 0: the mask is then all ones */
		*lines += ONES(m_nl & ((2u << pos) - 1));
		*last_nl = i + pos;
		return true;
	}
	if (m_nl) {
		*lines += ONES(m_nl);
		*last_nl = i + 31 - (size_t)__builtin_clz(m_nl);
	}
	return false;
#undef ONES
}

#ifdef FK_AVX2_PATH
/*
 * The scan of fk_skip_indented() 32 bytes at a time, on processors with
 * AVX2 (checked at run time: the build targets plain x86-64).  Advances
 * *ip, *lines and *last_nl as the 16-byte loop does; returns true when it
 * found the end of the run.
 */
__attribute__((target("avx2,popcnt")))
static bool skip_indented_avx2(const char *base, size_t limit, size_t *ip,
			       size_t *lines, size_t *last_nl)
{
	const __m256i nl = _mm256_set1_epi8('\n'), sp = _mm256_set1_epi8(' '),
		      tab = _mm256_set1_epi8('\t'), zero = _mm256_setzero_si256();
	size_t i;

	for (i = *ip; i + 33 <= limit; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(base + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(base + i + 1));
		uint32_t m_nl = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl));
		uint32_t m_in = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(
			_mm256_cmpeq_epi8(b, sp), _mm256_cmpeq_epi8(b, tab)));
		uint32_t m_z = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, zero));

		if (skip_block(m_nl, m_in, m_z, i, lines, last_nl, true)) {
			*ip = i;
			return true;
		}
	}
	*ip = i;
	return false;
}

#endif

size_t fk_skip_indented(const char *base, size_t limit, size_t *lines_out)
{
	size_t i = 0, lines = 0, last_nl = SIZE_MAX;

	*lines_out = 0;
	if (limit == 0 || !indent_char(base[0]))
		return 0;
	/*
	 * Find the first '\n' whose next byte is not an indent; every line
	 * before it is skipped.  Without one, skip through the last '\n' seen.
	 */
#ifdef FK_AVX2_PATH
	if (limit >= 33 && fk_have_avx2() &&
	    skip_indented_avx2(base, limit, &i, &lines, &last_nl))
		goto done;
#endif
#ifdef __SSE2__
	{
		const __m128i nl = _mm_set1_epi8('\n'), sp = _mm_set1_epi8(' '),
			      tab = _mm_set1_epi8('\t'), zero = _mm_setzero_si128();
		for (; i + 17 <= limit; i += 16) {
			__m128i a = _mm_loadu_si128((const __m128i *)(base + i));
			__m128i b = _mm_loadu_si128((const __m128i *)(base + i + 1));
			uint32_t m_nl = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, nl));
			uint32_t m_in = (uint32_t)_mm_movemask_epi8(_mm_or_si128(
				_mm_cmpeq_epi8(b, sp), _mm_cmpeq_epi8(b, tab)));
			uint32_t m_z = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, zero));

			if (skip_block(m_nl, m_in, m_z, i, &lines, &last_nl, false))
				goto done;
		}
	}
#endif
	for (; i < limit && base[i]; i++) {
		if (base[i] != '\n')
			continue;
		lines++;
		last_nl = i;
		if (i + 1 < limit && !indent_char(base[i + 1]))
			break;
	}
done:
	if (last_nl == SIZE_MAX)
		return 0;
	*lines_out = lines;
	return last_nl + 1;
}

size_t line_reader_skip_indented(struct line_reader *r)
{
	size_t lines, n = fk_skip_indented(r->buf + r->start,
		(r->nul_at != SIZE_MAX ? r->nul_at : r->end) - r->start, &lines);

	r->start += n;
	r->lineno += lines;
	return lines;
}
