/*
 * resolve-once.c - a perf script --dlfilter for plugin.bench: drops every
 * sample early (filter_event_early(), before perf resolves the sample, as
 * foldkit.so does), after asking perf's resolve_address() once for each
 * distinct address of the samples' call chains (user addresses per
 * process, kernel ones once), as foldkit.so's frame cache does.  Its time
 * over a filter that only drops early (nop-early.so) is what perf's own
 * address resolution costs a filter that names frames and caches them
 * per process; the plugin cannot go below it without asking perf less
 * (e.g. sharing frames between processes that map the same file).  It
 * asks a little less than the plugin, which asks again when a process's
 * maps change.  RESOLVE_ONCE_COUNT=1 prints the number of calls.
 */
#include <perf/perf_dlfilter.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct perf_dlfilter_fns perf_dlfilter_fns;

struct key {
	uint64_t space, ip;	/* space: pid + 1 for user space, 0 for the kernel */
};

static struct key *keys;
static size_t nkeys, used;
static unsigned long calls;

static size_t slot_of(const struct key *t, size_t n, uint64_t space, uint64_t ip)
{
	uint64_t h = (ip * 0x9e3779b97f4a7c15ULL ^ space) * 0xbf58476d1ce4e5b9ULL;
	size_t i = (h ^ h >> 29) & (n - 1);

	while ((t[i].space || t[i].ip) && (t[i].space != space || t[i].ip != ip))
		i = (i + 1) & (n - 1);
	return i;
}

/* Whether (space, ip) was seen before; remembers it. */
static int seen(uint64_t space, uint64_t ip)
{
	size_t i;

	if ((used + 1) * 2 > nkeys) {
		size_t n = nkeys ? nkeys * 2 : 1 << 16;
		struct key *t = calloc(n, sizeof(*t));

		if (!t)
			abort();
		for (size_t k = 0; k < nkeys; k++)
			if (keys[k].space || keys[k].ip)
				t[slot_of(t, n, keys[k].space, keys[k].ip)] = keys[k];
		free(keys);
		keys = t;
		nkeys = n;
	}
	i = slot_of(keys, nkeys, space, ip);
	if (keys[i].space == space && keys[i].ip == ip && (space || ip))
		return 1;
	keys[i].space = space;
	keys[i].ip = ip;
	used++;
	return 0;
}

int filter_event_early(void *data, const struct perf_dlfilter_sample *s, void *ctx)
{
	uint64_t user = (uint64_t)(uint32_t)s->pid + 1, space = user;

	(void)data;
	for (uint64_t i = 0; i < s->raw_callchain_nr; i++) {
		uint64_t ip = s->raw_callchain[i];
		struct perf_dlfilter_al al;

		if (ip >= PERF_CONTEXT_MAX) {
			space = ip == PERF_CONTEXT_USER ? user : 0;
			continue;
		}
		/* threads without a pid: the plugin asks every time */
		if (s->pid > 0 && seen(space, ip))
			continue;
		memset(&al, 0, sizeof(al));
		al.size = sizeof(al);
		perf_dlfilter_fns.resolve_address(ctx, ip, &al);
		calls++;
	}
	return 1;
}

int stop(void *data, void *ctx)
{
	(void)data;
	(void)ctx;
	if (getenv("RESOLVE_ONCE_COUNT"))
		fprintf(stderr, "resolve-once: %lu resolve_address() calls\n", calls);
	free(keys);
	return 0;
}
