#include "collapse/stackcache.h"

#include "core/strmap.h"

#include <string.h>

#define CACHE_BYTES (256u << 20)

struct stack_cache {
	struct fold_table *table;
	struct strmap *entries;	/* raw bytes -> struct fold_entry * */
	GString *stack;
};

struct stack_cache *stack_cache_new(struct fold_table *t)
{
	struct stack_cache *sc = g_new0(struct stack_cache, 1);

	sc->table = t;
	sc->entries = strmap_new(CACHE_BYTES);
	sc->stack = g_string_sized_new(1024);
	return sc;
}

void stack_cache_free(struct stack_cache *sc)
{
	if (!sc)
		return;
	strmap_free(sc->entries);
	g_string_free(sc->stack, TRUE);
	g_free(sc);
}

int stack_cache_add(struct stack_cache *sc, const void *raw, size_t len,
		    fk_count n, stack_name_fn name, void *ctx)
{
	uint64_t h = fk_hash_bytes(raw, len);
	struct fold_entry *e;
	struct fk_str hit;
	enum stack_name_result r;

	if (strmap_get_hashed(sc->entries, h, raw, len, &hit)) {
		memcpy(&e, hit.s, sizeof(e));
		fold_table_bump(sc->table, e, n, 0);
		return 0;
	}
	g_string_truncate(sc->stack, 0);
	r = name(ctx, raw, len, sc->stack);
	if (r == STACK_EMPTY || sc->stack->len == 0)
		return -1;
	e = fold_table_add(sc->table, sc->stack->str, sc->stack->len, n);
	if (r == STACK_NAMED)
		strmap_put_hashed(sc->entries, h, raw, len, &e, sizeof(e));
	return 0;
}
