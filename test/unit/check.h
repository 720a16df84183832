/*
 * check.h - the few macros the unit tests share.  A failed CHECK prints
 * "FILE:LINE: expression" and the test program exits 1 at the end.
 */
#ifndef FOLDKIT_CHECK_H
#define FOLDKIT_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		check_failures++; \
	} \
} while (0)

#define CHECK_STR(got, want) do { \
	const char *g_ = (got), *w_ = (want); \
	if (strcmp(g_, w_) != 0) { \
		fprintf(stderr, "%s:%d: got \"%s\", want \"%s\"\n", __FILE__, __LINE__, g_, w_); \
		check_failures++; \
	} \
} while (0)

#define CHECK_DONE() (check_failures ? (fprintf(stderr, "%d checks failed\n", check_failures), 1) : 0)

#endif
