#include "core/bigmem.h"

#include <glib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* mmap() lengths: whole pages; past half a huge page, whole huge pages
 * (the kernel aligns mappings of them to huge pages) */
static size_t big_size(size_t size)
{
	size_t page = 4096;

	if (size >= HUGE_PAGE / 2)
		page = HUGE_PAGE;
	return size ? (size + page - 1) & ~(page - 1) : page;
}

void *big_resize(void *p, size_t old, size_t size)
{
	void *q;

	old = big_size(old);
	size = big_size(size);
	if (p && old == size)
		return p;
	q = p ? mremap(p, old, size, MREMAP_MAYMOVE)
	      : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		g_error("%s: failed to allocate %zu bytes", G_STRLOC, size);
#ifdef MADV_HUGEPAGE
	if (size >= HUGE_PAGE)
		(void)madvise(q, size, MADV_HUGEPAGE);	/* a hint only */
#endif
	return q;
}

void *big_reserve(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 4096;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = big_resize(p, *cap * size, n * size);
	*cap = n;
	return p;
}

void big_free(void *p, size_t size)
{
	if (p)
		munmap(p, big_size(size));
}
