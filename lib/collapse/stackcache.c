#include "collapse/stackcache.h"

#include "core/strmap.h"

#include <string.h>

#define CACHE_BYTES (64u << 20)

struct stack_cache {
	struct fold_table *table;
	struct strmap *frames;	/* a frame's key text -> its name */
	struct strmap *callers;	/* callers' text -> their names */
	struct strmap *pairs;	/* the addresses of two cached names ->
				   the struct fold_entry * of their stack */
	GString *scratch[2];	/* names being made: callers', a frame's
				   (naming callers names frames) */
};

struct stack_cache *stack_cache_new(struct fold_table *t)
{
	struct stack_cache *sc = g_new0(struct stack_cache, 1);

	sc->table = t;
	sc->frames = strmap_new(CACHE_BYTES);
	sc->callers = strmap_new(CACHE_BYTES);
	sc->pairs = strmap_new(CACHE_BYTES);
	sc->scratch[0] = g_string_new(NULL);
	sc->scratch[1] = g_string_new(NULL);
	return sc;
}

void stack_cache_free(struct stack_cache *sc)
{
	if (!sc)
		return;
	strmap_free(sc->frames);
	strmap_free(sc->callers);
	strmap_free(sc->pairs);
	g_string_free(sc->scratch[0], TRUE);
	g_string_free(sc->scratch[1], TRUE);
	g_free(sc);
}

/*
 * The name cached for key in m, named into scratch on first sight;
 * *stable says whether it is the cache's own copy (a full cache keeps
 * nothing new, and the scratch is reused by the next call).
 */
static struct fk_str cached(struct strmap *m, GString *scratch,
			    struct fk_str key, stack_callers_fn name, void *ctx,
			    bool *stable)
{
	uint64_t h = fk_hash_bytes(key.s, key.len);
	struct fk_str v;

	*stable = true;
	if (strmap_get_hashed(m, h, key.s, key.len, &v))
		return v;
	g_string_truncate(scratch, 0);
	name(ctx, key.s, key.len, scratch);
	if (strmap_put_hashed(m, h, key.s, key.len, scratch->str, scratch->len) &&
	    strmap_get_hashed(m, h, key.s, key.len, &v))
		return v;
	*stable = false;
	return (struct fk_str){ scratch->str, scratch->len };
}

static void name_key(void *ctx, const char *s, size_t n, GString *out)
{
	const struct stack_frame_rules *rules = ctx;

	rules->name(out, s, n);
}

static struct fk_str frame_name(struct stack_cache *sc, const char *s, size_t n,
				const struct stack_frame_rules *rules, bool *stable)
{
	return cached(sc->frames, sc->scratch[1], rules->key(s, n), name_key,
		      (void *)rules, stable);
}

void stack_cache_frame(struct stack_cache *sc, GString *out, const char *s,
		       size_t n, const struct stack_frame_rules *rules)
{
	bool stable;
	struct fk_str v = frame_name(sc, s, n, rules, &stable);

	g_string_append_len(out, v.s, (gssize)v.len);
}

void stack_cache_add_record(struct stack_cache *sc, GString *stack,
			    const char *callers, size_t clen,
			    stack_callers_fn name_callers, void *ctx,
			    const char *leaf, size_t llen,
			    const struct stack_frame_rules *rules, fk_count n)
{
	struct fk_str cv, lv, hit;
	bool cs, ls;
	const char *key[2];
	struct fold_entry *e;

	g_string_truncate(stack, 0);
	cv = cached(sc->callers, sc->scratch[0], (struct fk_str){ callers, clen },
		    name_callers, ctx, &cs);
	lv = frame_name(sc, leaf, llen, rules, &ls);
	key[0] = cv.s;
	key[1] = lv.s;
	if (cs && ls && strmap_get(sc->pairs, key, sizeof(key), &hit)) {
		memcpy(&e, hit.s, sizeof(e));
		fold_table_bump(sc->table, e, n, 0);
		return;
	}
	g_string_append_len(stack, cv.s, (gssize)cv.len);
	if (stack->len)
		g_string_append_c(stack, ';');
	g_string_append_len(stack, lv.s, (gssize)lv.len);
	if (stack->str[0] == '#')
		stack->str[0] = '_';
	e = fold_table_add(sc->table, stack->str, stack->len, n);
	if (cs && ls)
		strmap_put(sc->pairs, key, sizeof(key), &e, sizeof(e));
}

int stack_cache_add(struct stack_cache *sc, GString *stack, fk_count n)
{
	if (stack->len == 0)
		return -1;
	if (stack->str[0] == '#')
		stack->str[0] = '_';
	fold_table_add(sc->table, stack->str, stack->len, n);
	return 0;
}
