#include "callerloss.h"

#include <glib.h>
#include <linux/perf_event.h>
#include <string.h>

/* A process's address, for the cache of names. */
struct site {
	int pid;
	uint64_t addr;
};

struct proc_tot {
	uint64_t all, lost;
	GHashTable *by_name;	/* const char * (interned) -> uint64_t * */
};

struct callerloss {
	const struct perf_dlfilter_fns *fns;
	struct unwinder *u;
	GHashTable *names;	/* struct site * -> const char * (interned) */
	GStringChunk *strings;
	GHashTable *procs;	/* pid -> struct proc_tot * */
	GHashTable *by_name;	/* the whole recording's, as proc_tot's */
	uint64_t all, lost;
};

static guint site_hash(gconstpointer p)
{
	const struct site *s = p;

	return g_int64_hash(&s->addr) ^ (guint)s->pid * 2654435761u;
}

static gboolean site_equal(gconstpointer a, gconstpointer b)
{
	const struct site *x = a, *y = b;

	return x->pid == y->pid && x->addr == y->addr;
}

static void proc_free(gpointer p)
{
	struct proc_tot *t = p;

	g_hash_table_destroy(t->by_name);
	g_free(t);
}

static GHashTable *weights_new(void)
{
	return g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
}

struct callerloss *callerloss_new(unwind_locate_fn *locate, void *data,
				  const struct perf_dlfilter_fns *fns)
{
	struct callerloss *cl = g_new0(struct callerloss, 1);

	cl->fns = fns;
	cl->u = unwinder_new(locate, data);
	cl->names = g_hash_table_new_full(site_hash, site_equal, g_free, NULL);
	cl->strings = g_string_chunk_new(4096);
	cl->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, proc_free);
	cl->by_name = weights_new();
	return cl;
}

void callerloss_free(struct callerloss *cl)
{
	if (!cl)
		return;
	unwinder_free(cl->u);
	g_hash_table_destroy(cl->names);
	g_string_chunk_free(cl->strings);
	g_hash_table_destroy(cl->procs);
	g_hash_table_destroy(cl->by_name);
	g_free(cl);
}

/* The innermost user address of ds's chain, or 0. */
static uint64_t first_user(const struct perf_dlfilter_sample *ds)
{
	bool user = false;

	for (uint64_t i = 0; ds->raw_callchain && i < ds->raw_callchain_nr; i++) {
		uint64_t a = ds->raw_callchain[i];

		if (a >= PERF_CONTEXT_MAX)
			user = a == PERF_CONTEXT_USER;
		else if (user)
			return a;
	}
	return 0;
}

/* perf's name of addr in pid: its symbol, else "[file]", else "[unknown]" */
static const char *name_of(struct callerloss *cl, int pid, uint64_t addr, void *ctx)
{
	struct site key = { pid, addr };
	const char *name = g_hash_table_lookup(cl->names, &key);
	struct perf_dlfilter_al al;

	if (name)
		return name;
	memset(&al, 0, sizeof(al));
	al.size = sizeof(al);
	if (cl->fns->resolve_address && cl->fns->resolve_address(ctx, addr, &al) == 0 &&
	    al.sym && *al.sym) {
		name = g_string_chunk_insert_const(cl->strings, al.sym);
	} else if (al.dso && *al.dso) {
		const char *base = strrchr(al.dso, '/');
		char *s = g_strdup_printf("[%s]", base ? base + 1 : al.dso);

		name = g_string_chunk_insert_const(cl->strings, s);
		g_free(s);
	} else {
		name = "[unknown]";
	}
	g_hash_table_insert(cl->names, g_memdup2(&key, sizeof(key)), (gpointer)name);
	return name;
}

static void add_weight(GHashTable *t, const char *name, uint64_t n)
{
	uint64_t *w = g_hash_table_lookup(t, name);

	if (!w) {
		w = g_new0(uint64_t, 1);
		g_hash_table_insert(t, (gpointer)name, w);
	}
	*w += n;
}

void callerloss_sample(struct callerloss *cl, const struct perf_dlfilter_sample *ds, void *ctx,
		       uint64_t n)
{
	uint64_t addr = first_user(ds);
	const char *path, *name;
	struct proc_tot *t;
	int keeps;

	if (!addr || ds->pid <= 0 || !n)
		return;
	keeps = unwind_keeps_fp(cl->u, ds->pid, ds->time, addr, &path);
	if (keeps < 0)
		return;
	t = g_hash_table_lookup(cl->procs, GINT_TO_POINTER(ds->pid));
	if (!t) {
		t = g_new0(struct proc_tot, 1);
		t->by_name = weights_new();
		g_hash_table_insert(cl->procs, GINT_TO_POINTER(ds->pid), t);
	}
	t->all += n;
	cl->all += n;
	if (keeps)
		return;
	t->lost += n;
	cl->lost += n;
	name = name_of(cl, ds->pid, addr, ctx);
	add_weight(t->by_name, name, n);
	add_weight(cl->by_name, name, n);
}

/* The name with the most weight in t (ties: the first by name), or NULL. */
static const char *top_of(GHashTable *t, uint64_t *top_n)
{
	GHashTableIter it;
	gpointer k, v;
	const char *top = NULL;
	uint64_t most = 0;

	g_hash_table_iter_init(&it, t);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		uint64_t w = *(uint64_t *)v;

		if (w > most || (w == most && top && strcmp(k, top) < 0)) {
			most = w;
			top = k;
		}
	}
	if (top_n)
		*top_n = most;
	return top;
}

void callerloss_totals(const struct callerloss *cl, uint64_t *all, uint64_t *lost,
		       const char **top, uint64_t *top_n)
{
	*all = cl->all;
	*lost = cl->lost;
	*top = top_of(cl->by_name, top_n);
}

void callerloss_process(const struct callerloss *cl, int pid, uint64_t *all, uint64_t *lost,
			const char **top)
{
	const struct proc_tot *t = g_hash_table_lookup(cl->procs, GINT_TO_POINTER(pid));

	*all = t ? t->all : 0;
	*lost = t ? t->lost : 0;
	*top = t ? top_of(t->by_name, NULL) : NULL;
}
