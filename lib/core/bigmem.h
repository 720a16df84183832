/*
 * bigmem.h - big arrays (hash slots, the pools they index, an entry per
 * stack) in memory the kernel may back with 2 MiB pages.
 *
 *	struct slot *s = big_resize(NULL, 0, n * sizeof(*s));     // zeroed
 *	s = big_resize(s, n * sizeof(*s), 2 * n * sizeof(*s));   // grown
 *	p = big_reserve(p, &cap, len + 1, sizeof(*p));         // room for one more
 *	big_free(s, 2 * n * sizeof(*s));
 *
 * Such arrays are touched all over and grow to tens of megabytes: in
 * 4 KiB pages, their page faults (and the TLB misses of random lookups)
 * were a tenth of the perf plugin's time on a system-wide recording and a
 * sixth of fold2svg's on the bench input.
 * New memory reads as zeros, grown memory keeps what it held (mremap():
 * no copy).  The caller remembers the size; sizes past 1 MiB are
 * rounded up to whole 2 MiB pages.  Out of memory aborts, as g_malloc().
 */
#ifndef FOLDKIT_CORE_BIGMEM_H
#define FOLDKIT_CORE_BIGMEM_H

#include <stddef.h>

/* p (of old bytes, or NULL) resized to size bytes; free with big_free(). */
void *big_resize(void *p, size_t old, size_t size);
/*
 * p (of *cap elements of size bytes, or NULL and 0) grown to room for at
 * least need elements: *cap doubled (from 4096) until it is enough.
 */
void *big_reserve(void *p, size_t *cap, size_t need, size_t size);
/* Frees p, of size bytes (NULL: nothing). */
void big_free(void *p, size_t size);

#endif
