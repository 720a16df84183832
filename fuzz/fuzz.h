/*
 * fuzz.h - what the libFuzzer targets share: the input as a file the lib/
 * readers can open by name, and checks that abort (so libFuzzer keeps the
 * input as a crash) with a message saying which property failed.
 *
 *	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 *	{
 *		const char *path = fuzz_file(data, size);  // "/proc/self/fd/N"
 *		struct line_reader *r = line_reader_open(path, NULL);
 *		...
 *		FUZZ_CHECK(n == expected, "read %zu lines, wrote %zu", n, expected);
 *		return 0;
 *	}
 *
 * One memfd per process is rewritten for every input, so a target can
 * reopen the same bytes as often as it likes; the returned path stays valid
 * until the next fuzz_file() call.  fuzz_file2() gives a second, separate
 * file (for round trips: write, then read back).
 */
#ifndef FOLDKIT_FUZZ_H
#define FOLDKIT_FUZZ_H

#include "core/count.h"
#include "core/folded.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_CHECK(cond, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s: ",		\
			__FILE__, __LINE__, #cond);			\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	}								\
} while (0)

/*
 * What the folded format cannot carry: a stack ending in " NUMBER" (a frame
 * "x 20" left last) is written as "x 20 5", which reads back as a
 * differential line, and one starting with '#' reads back as a comment.
 * Targets that read their output back skip such stacks (see README.md).
 */
static inline bool fuzz_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* (folded.h's own rule for the last frame: "x 20" but not "x 1x", nor
 * "x 99999999999999999999", which the reader does not take for a count) */
static inline bool fuzz_folded_ambiguous(const char *s, size_t n)
{
	return (n && s[0] == '#') || folded_count_blank(s, n) < n;
}

/* An empty frame: a leading or trailing ';', or ";;"; "" is one too. */
static inline bool fuzz_has_empty_frame(const char *s, size_t n)
{
	if (n == 0 || s[0] == ';' || s[n - 1] == ';')
		return true;
	for (size_t i = 1; i < n; i++)
		if (s[i] == ';' && s[i - 1] == ';')
			return true;
	return false;
}

static inline const char *fuzz_file_at(int *fd, char *path, size_t pathsz,
				       const void *data, size_t size)
{
	if (*fd < 0) {
		*fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		FUZZ_CHECK(*fd >= 0, "memfd_create failed");
		snprintf(path, pathsz, "/proc/self/fd/%d", *fd);
	}
	FUZZ_CHECK(ftruncate(*fd, 0) == 0, "ftruncate failed");
	for (size_t off = 0; off < size;) {
		ssize_t n = pwrite(*fd, (const char *)data + off, size - off, (off_t)off);
		FUZZ_CHECK(n > 0, "pwrite failed");
		off += (size_t)n;
	}
	return path;
}

static inline const char *fuzz_file(const void *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	return fuzz_file_at(&fd, path, sizeof(path), data, size);
}

static inline const char *fuzz_file2(const void *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	return fuzz_file_at(&fd, path, sizeof(path), data, size);
}

/* Reads every byte of s[0..n) so ASan sees a bad pointer or length. */
static inline unsigned fuzz_touch(const char *s, size_t n)
{
	unsigned h = 0;
	for (size_t i = 0; i < n; i++)
		h = h * 31 + (unsigned char)s[i];
	return h;
}

/* True when [p, p+n) lies inside [base, base+size). */
static inline int fuzz_within(const char *p, size_t n, const void *base, size_t size)
{
	const char *b = base;
	return p >= b && p <= b + size && n <= (size_t)(b + size - p);
}

#endif
