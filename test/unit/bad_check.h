/*
 * bad_check.h - the few helpers the bad_*.c unit tests share: a CHECK that
 * reports and counts failures instead of stopping, and inputs written to
 * temporary files.
 *
 *	CHECK(n == 2, "got %d stacks", n);
 *	char *path = bad_tmpfile("a;b 1\n", 6);      // g_free() it, unlink()
 *	return bad_done();                           // 0 when nothing failed
 */
#ifndef FOLDKIT_BAD_CHECK_H
#define FOLDKIT_BAD_CHECK_H

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int bad_failures, bad_checks;

#define CHECK(cond, ...) do {						\
	bad_checks++;							\
	if (!(cond)) {							\
		bad_failures++;						\
		fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	}								\
} while (0)

/* Writes len bytes to a new temporary file; returns its path (g_free). */
static inline char *bad_tmpfile(const char *data, size_t len)
{
	char *path = g_build_filename(g_get_tmp_dir(), "foldkit-bad-XXXXXX", NULL);
	int fd = g_mkstemp(path);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
		perror("bad_tmpfile");
		exit(2);
	}
	close(fd);
	return path;
}

static inline int bad_done(void)
{
	printf("%d checks, %d failed\n", bad_checks, bad_failures);
	return bad_failures ? 1 : 0;
}

#endif
