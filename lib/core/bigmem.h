/*
 * bigmem.h - big arrays (hash slots, the pools they index, an entry per
 * stack) in memory the kernel may back with 2 MiB pages.
 *
 *	struct slot *s = big_resize(NULL, 0, n * sizeof(*s));     // zeroed
 *	s = big_resize(s, n * sizeof(*s), 2 * n * sizeof(*s));   // grown
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
/* Frees p, of size bytes (NULL: nothing). */
void big_free(void *p, size_t size);

#endif
