/*
 * bigmem.h - the plugin's big tables (hash slots and the pools they
 * index), in memory the kernel may back with 2 MiB pages.
 *
 *	struct slot *s = big_resize(NULL, 0, n * sizeof(*s));     // zeroed
 *	s = big_resize(s, n * sizeof(*s), 2 * n * sizeof(*s));   // grown
 *	big_free(s, 2 * n * sizeof(*s));
 *
 * The tables are touched all over and grow to tens of megabytes on a
 * system-wide recording: in 4 KiB pages, their page faults (and the TLB
 * misses of their random lookups) were a tenth of the plugin's time.
 * New memory reads as zeros, grown memory keeps what it held (mremap():
 * no copy).  The caller remembers the size; sizes past 1 MiB are
 * rounded up to whole 2 MiB pages.  Out of memory aborts, as g_malloc().
 */
#ifndef FOLDKIT_PLUGIN_BIGMEM_H
#define FOLDKIT_PLUGIN_BIGMEM_H

#include <stddef.h>

/* p (of old bytes, or NULL) resized to size bytes; free with big_free(). */
void *big_resize(void *p, size_t old, size_t size);
/* Frees p, of size bytes (NULL: nothing). */
void big_free(void *p, size_t size);

#endif
