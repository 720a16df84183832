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

#include <stddef.h>

/* A byte string that is not NUL-terminated. */
struct fk_str {
	const char *s;
	size_t len;
};

#endif
