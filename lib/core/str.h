/*
 * str.h - a byte span: the shape every parser hands out for text it does
 * not copy.
 *
 *	struct fk_str sym = { line + 8, 12 };   // points into the caller's buffer
 *	printf("%.*s\n", (int)sym.len, sym.s);
 *
 * An fk_str owns nothing: it stays valid as long as the buffer it points
 * into, which the function that returned it documents.  It is not
 * NUL-terminated and may hold any byte.
 */
#ifndef FOLDKIT_STR_H
#define FOLDKIT_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A byte string that is not NUL-terminated. */
struct fk_str {
	const char *s;
	size_t len;
};

/*
 * Whether a[0..n) and b[0..n) hold the same bytes: memcmp() == 0 for the
 * short fields of a line (a comm, a header's columns), compiled in place
 * rather than a call, 8 bytes a step.
 */
static inline bool fk_bytes_equal(const void *a, const void *b, size_t n)
{
	const char *p = a, *q = b;
	uint64_t x, y;

	if (n < 8) {
		for (size_t i = 0; i < n; i++)
			if (p[i] != q[i])
				return false;
		return true;
	}
	for (; n > 8; n -= 8, p += 8, q += 8) {
		memcpy(&x, p, 8);
		memcpy(&y, q, 8);
		if (x != y)
			return false;
	}
	/* the last 8 bytes, overlapping those already compared */
	memcpy(&x, p + n - 8, 8);
	memcpy(&y, q + n - 8, 8);
	return x == y;
}

#endif
