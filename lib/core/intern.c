#include "core/intern.h"

#include "core/foldtable.h"

#include <glib.h>
#include <string.h>

/*
 * Open addressing with linear probing; a slot holds the key's full hash
 * and its id + 1 (0 is empty), keys live in an array indexed by id, their
 * bytes in arena chunks that never move.
 */

#define CHUNK (64u << 10)

struct slot {
	uint64_t hash;
	uint32_t id1;
};

struct fk_intern {
	struct slot *slots;
	size_t mask;
	GArray *keys;		/* struct fk_str, by id */
	GPtrArray *chunks;
	char *arena;
	size_t arena_left;
};

struct fk_intern *fk_intern_new(void)
{
	struct fk_intern *in = g_new0(struct fk_intern, 1);

	in->mask = 255;
	in->slots = g_new0(struct slot, in->mask + 1);
	in->keys = g_array_new(FALSE, FALSE, sizeof(struct fk_str));
	in->chunks = g_ptr_array_new_with_free_func(g_free);
	return in;
}

void fk_intern_free(struct fk_intern *in)
{
	if (!in)
		return;
	g_free(in->slots);
	g_array_free(in->keys, TRUE);
	g_ptr_array_free(in->chunks, TRUE);
	g_free(in);
}

static const char *copy(struct fk_intern *in, const void *s, size_t len)
{
	char *p;

	if (len > CHUNK / 8) {		/* a big key gets a block of its own */
		p = g_malloc(len ? len : 1);
		g_ptr_array_add(in->chunks, p);
		memcpy(p, s, len);
		return p;
	}
	/* an empty key still needs a place: memcpy() to NULL is undefined */
	if (len > in->arena_left || !in->arena) {
		in->arena = g_malloc(CHUNK);
		in->arena_left = CHUNK;
		g_ptr_array_add(in->chunks, in->arena);
	}
	p = in->arena;
	memcpy(p, s, len);
	in->arena += len;
	in->arena_left -= len;
	return p;
}

static void grow(struct fk_intern *in)
{
	size_t cap = (in->mask + 1) * 2;
	struct slot *ns = g_new0(struct slot, cap);

	for (size_t i = 0; i <= in->mask; i++) {
		size_t j;

		if (!in->slots[i].id1)
			continue;
		for (j = in->slots[i].hash & (cap - 1); ns[j].id1; j = (j + 1) & (cap - 1))
			;
		ns[j] = in->slots[i];
	}
	g_free(in->slots);
	in->slots = ns;
	in->mask = cap - 1;
}

static struct slot *lookup(const struct fk_intern *in, uint64_t h,
			   const void *s, size_t len)
{
	for (size_t i = h & in->mask;; i = (i + 1) & in->mask) {
		struct slot *sl = &in->slots[i];
		const struct fk_str *k;

		if (!sl->id1)
			return sl;
		if (sl->hash != h)
			continue;
		k = &g_array_index(in->keys, struct fk_str, sl->id1 - 1);
		if (k->len == len && memcmp(k->s, s, len) == 0)
			return sl;
	}
}

static uint32_t intern(struct fk_intern *in, const void *s, size_t len,
		       bool *added, bool ref)
{
	uint64_t h = fk_hash_bytes(s, len);
	struct slot *sl = lookup(in, h, s, len);
	struct fk_str k;

	if (added)
		*added = !sl->id1;
	if (sl->id1)
		return sl->id1 - 1;
	k.s = ref ? s : copy(in, s, len);
	k.len = len;
	g_array_append_val(in->keys, k);
	sl->hash = h;
	sl->id1 = in->keys->len;
	if (in->keys->len * 4 > (in->mask + 1) * 3)
		grow(in);
	return in->keys->len - 1;
}

uint32_t fk_intern_id(struct fk_intern *in, const void *s, size_t len, bool *added)
{
	return intern(in, s, len, added, false);
}

uint32_t fk_intern_id_ref(struct fk_intern *in, const void *s, size_t len,
			  bool *added)
{
	return intern(in, s, len, added, true);
}

uint32_t fk_intern_find(const struct fk_intern *in, const void *s, size_t len)
{
	struct slot *sl = lookup(in, fk_hash_bytes(s, len), s, len);

	return sl->id1 ? sl->id1 - 1 : UINT32_MAX;
}

struct fk_str fk_intern_str(const struct fk_intern *in, uint32_t id)
{
	return g_array_index(in->keys, struct fk_str, id);
}

size_t fk_intern_size(const struct fk_intern *in)
{
	return in->keys->len;
}

/* --- fk_idmap: the same scheme with the key in the slot */

struct islot {
	uint64_t key;
	uint32_t id1;
};

struct fk_idmap {
	struct islot *slots;
	size_t mask;
	GArray *keys;		/* uint64_t, by id */
};

/* murmur3's finalizer: every key bit reaches the low bits the mask keeps */
static inline uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

struct fk_idmap *fk_idmap_new(void)
{
	struct fk_idmap *m = g_new0(struct fk_idmap, 1);

	m->mask = 255;
	m->slots = g_new0(struct islot, m->mask + 1);
	m->keys = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	return m;
}

void fk_idmap_free(struct fk_idmap *m)
{
	if (!m)
		return;
	g_free(m->slots);
	g_array_free(m->keys, TRUE);
	g_free(m);
}

static void igrow(struct fk_idmap *m)
{
	size_t cap = (m->mask + 1) * 2;
	struct islot *ns = g_new0(struct islot, cap);

	for (size_t i = 0; i <= m->mask; i++) {
		size_t j;

		if (!m->slots[i].id1)
			continue;
		for (j = mix64(m->slots[i].key) & (cap - 1); ns[j].id1; j = (j + 1) & (cap - 1))
			;
		ns[j] = m->slots[i];
	}
	g_free(m->slots);
	m->slots = ns;
	m->mask = cap - 1;
}

uint32_t fk_idmap_id(struct fk_idmap *m, uint64_t key, bool *added)
{
	size_t i;

	for (i = mix64(key) & m->mask; m->slots[i].id1; i = (i + 1) & m->mask)
		if (m->slots[i].key == key) {
			if (added)
				*added = false;
			return m->slots[i].id1 - 1;
		}
	if (added)
		*added = true;
	g_array_append_val(m->keys, key);
	m->slots[i].key = key;
	m->slots[i].id1 = m->keys->len;
	if (m->keys->len * 4 > (m->mask + 1) * 3)
		igrow(m);
	return m->keys->len - 1;
}

uint64_t fk_idmap_key(const struct fk_idmap *m, uint32_t id)
{
	return g_array_index(m->keys, uint64_t, id);
}

size_t fk_idmap_size(const struct fk_idmap *m)
{
	return m->keys->len;
}
