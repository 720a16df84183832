/*
 * resolve-once.c - a perf script --dlfilter for plugin.bench: drops every
 * sample early (filter_event_early(), before perf resolves the sample, as
 * foldkit.so does), after asking perf's resolve_address() once for each
 * distinct address of the samples' call chains (user addresses per
 * process, kernel ones once), as foldkit.so's frame cache does.  Its time
 * over a filter that only drops early (nop-early.so) is what perf's own
 * address resolution costs a filter that names frames and caches them
 * per process, plus the lookups of its own table (a cache miss for most
 * of the chains' entries, as the plugin's frame cache has); the plugin
 * cannot go below it without asking perf less.  It asks a little less
 * than the plugin, which asks again when a process's maps change.
 *
 * RESOLVE_ONCE_COUNT=1 prints the number of calls and, timing each,
 * where perf's time in them goes: kernel addresses; the first call that
 * lands in each DSO (perf loads the DSO's symbols then); else the first
 * call of each process; user addresses in no DSO; the calls whose (DSO,
 * DSO-relative address) an earlier call of another process gave already
 * (the same library mapped in many processes: what sharing frames between
 * processes could save, at most); and the rest.  A DSO is perf's pointer
 * to its name, stable while perf keeps the DSO.
 */
#include <perf/perf_dlfilter.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct perf_dlfilter_fns perf_dlfilter_fns;

struct key {
	uint64_t space, ip;	/* space: pid + 1 for user space, 0 for the kernel */
};

/* A set of keys, not both 0. */
struct set {
	struct key *keys;
	size_t n, used;
};

static struct set addrs;	/* (space, ip) asked */
static struct set dso_addrs;	/* counting: (DSO + 1, DSO-relative address) given */
static struct set spaces;	/* counting: (space, 0) asked */
static unsigned long calls;
static int counting = -1;

enum kind { KERNEL, FIRST_OF_DSO, FIRST_OF_PROCESS, SHAREABLE, NO_DSO, REST, NKINDS };
static const char *const kind_names[NKINDS] = {
	"kernel", "first of a DSO", "first of a process",
	"(DSO, address) given before", "user, in no DSO", "user, the rest",
};
static unsigned long kind_calls[NKINDS];
static uint64_t kind_ns[NKINDS];

static size_t slot_of(const struct key *t, size_t n, uint64_t space, uint64_t ip)
{
	uint64_t h = (ip * 0x9e3779b97f4a7c15ULL ^ space) * 0xbf58476d1ce4e5b9ULL;
	size_t i = (h ^ h >> 29) & (n - 1);

	while ((t[i].space || t[i].ip) && (t[i].space != space || t[i].ip != ip))
		i = (i + 1) & (n - 1);
	return i;
}

/* Whether (space, ip) was seen before; remembers it. */
static int seen(struct set *s, uint64_t space, uint64_t ip)
{
	size_t i;

	if ((s->used + 1) * 2 > s->n) {
		size_t n = s->n ? s->n * 2 : 1 << 16;
		struct key *t = calloc(n, sizeof(*t));

		if (!t)
			abort();
		for (size_t k = 0; k < s->n; k++)
			if (s->keys[k].space || s->keys[k].ip)
				t[slot_of(t, n, s->keys[k].space, s->keys[k].ip)] = s->keys[k];
		free(s->keys);
		s->keys = t;
		s->n = n;
	}
	i = slot_of(s->keys, s->n, space, ip);
	if (s->keys[i].space == space && s->keys[i].ip == ip && (space || ip))
		return 1;
	s->keys[i].space = space;
	s->keys[i].ip = ip;
	s->used++;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000 + (uint64_t)t.tv_nsec;
}

/* Counts one call to resolve_address(), r its result, ns its time. */
static void count(uint64_t space, int r, const struct perf_dlfilter_al *al, uint64_t ns)
{
	uint64_t dso = (uint64_t)(uintptr_t)al->dso;
	int in_dso = space && !r && al->dso && !al->is_kernel_ip;
	int first_of_dso = in_dso && !seen(&dso_addrs, dso + 1, UINT64_MAX);
	int given = in_dso && seen(&dso_addrs, dso + 1, al->addr);
	int first_of_process = space && !seen(&spaces, space, 0);
	enum kind k;

	if (!space)
		k = KERNEL;
	else if (first_of_dso)
		k = FIRST_OF_DSO;
	else if (first_of_process)
		k = FIRST_OF_PROCESS;
	else if (!in_dso)
		k = NO_DSO;
	else
		k = given ? SHAREABLE : REST;
	kind_calls[k]++;
	kind_ns[k] += ns;
}

int filter_event_early(void *data, const struct perf_dlfilter_sample *s, void *ctx)
{
	uint64_t user = (uint64_t)(uint32_t)s->pid + 1, space = user;

	(void)data;
	if (counting < 0)
		counting = getenv("RESOLVE_ONCE_COUNT") != NULL;
	for (uint64_t i = 0; i < s->raw_callchain_nr; i++) {
		uint64_t ip = s->raw_callchain[i], t0 = 0;
		struct perf_dlfilter_al al;
		int r;

		if (ip >= PERF_CONTEXT_MAX) {
			space = ip == PERF_CONTEXT_USER ? user : 0;
			continue;
		}
		/* threads without a pid: the plugin asks every time */
		if (s->pid > 0 && seen(&addrs, space, ip))
			continue;
		memset(&al, 0, sizeof(al));
		al.size = sizeof(al);
		if (counting)
			t0 = now_ns();
		r = perf_dlfilter_fns.resolve_address(ctx, ip, &al);
		if (counting)
			count(s->pid > 0 ? space : 1, r, &al, now_ns() - t0);
		calls++;
	}
	return 1;
}

int stop(void *data, void *ctx)
{
	(void)data;
	(void)ctx;
	if (counting > 0) {
		uint64_t ns = 0;

		for (int k = 0; k < NKINDS; k++)
			ns += kind_ns[k];
		fprintf(stderr, "resolve-once: %lu resolve_address() calls, %.3f s in them:",
			calls, ns / 1e9);
		for (int k = 0; k < NKINDS; k++)
			fprintf(stderr, "%s %s %lu, %.3f s", k ? ";" : "", kind_names[k],
				kind_calls[k], kind_ns[k] / 1e9);
		fputc('\n', stderr);
	}
	free(addrs.keys);
	free(dso_addrs.keys);
	free(spaces.keys);
	return 0;
}
