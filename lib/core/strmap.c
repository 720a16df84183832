#include "core/strmap.h"

#include "core/foldtable.h"

#include <glib.h>
#include <string.h>

#define CHUNK (1u << 20)

struct slot {
	uint64_t hash;
	const char *key;	/* NULL: empty slot; the value follows the key */
	uint32_t keylen, vallen;
};

struct strmap {
	struct slot *slots;
	size_t mask, n;
	GPtrArray *chunks;
	char *arena;
	size_t left, used, max;
};

struct strmap *strmap_new(size_t max_bytes)
{
	struct strmap *m = g_new0(struct strmap, 1);

	m->mask = 255;
	m->slots = g_new0(struct slot, m->mask + 1);
	m->chunks = g_ptr_array_new_with_free_func(g_free);
	m->max = max_bytes;
	return m;
}

void strmap_free(struct strmap *m)
{
	if (!m)
		return;
	g_free(m->slots);
	g_ptr_array_free(m->chunks, TRUE);
	g_free(m);
}

size_t strmap_size(const struct strmap *m)
{
	return m->n;
}

static struct slot *find(const struct strmap *m, uint64_t h, const void *key,
			 size_t keylen)
{
	for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
		struct slot *s = &m->slots[i];
		if (!s->key || (s->hash == h && s->keylen == keylen &&
				memcmp(s->key, key, keylen) == 0))
			return s;
	}
}

bool strmap_get_hashed(const struct strmap *m, uint64_t hash, const void *key,
		       size_t keylen, struct fk_str *val)
{
	struct slot *s = find(m, hash, key, keylen);

	if (!s->key)
		return false;
	val->s = s->key + s->keylen;
	val->len = s->vallen;
	return true;
}

bool strmap_get(const struct strmap *m, const void *key, size_t keylen,
		struct fk_str *val)
{
	return strmap_get_hashed(m, fk_hash_bytes(key, keylen), key, keylen, val);
}

static void grow(struct strmap *m)
{
	size_t cap = (m->mask + 1) * 2;
	struct slot *ns = g_new0(struct slot, cap);

	for (size_t i = 0; i <= m->mask; i++) {
		size_t j;
		if (!m->slots[i].key)
			continue;
		for (j = m->slots[i].hash & (cap - 1); ns[j].key; j = (j + 1) & (cap - 1))
			;
		ns[j] = m->slots[i];
	}
	g_free(m->slots);
	m->slots = ns;
	m->mask = cap - 1;
}

bool strmap_put_hashed(struct strmap *m, uint64_t hash, const void *key,
		       size_t keylen, const void *val, size_t vallen)
{
	size_t need = keylen + vallen;
	struct slot *s;
	char *p;

	if (keylen > UINT32_MAX || vallen > UINT32_MAX || m->used + need > m->max)
		return false;
	s = find(m, hash, key, keylen);
	if (s->key)
		return false;
	/* an empty key and value still need a non-NULL place: a NULL key
	 * marks an empty slot (found by make check SANITIZE=undefined) */
	if (need > m->left || !m->arena) {
		size_t sz = need > CHUNK / 4 ? need : CHUNK;
		p = g_malloc(sz ? sz : 1);
		g_ptr_array_add(m->chunks, p);
		if (sz == CHUNK) {
			m->arena = p;
			m->left = sz;
		}
	} else {
		p = m->arena;
	}
	if (p == m->arena) {
		m->arena += need;
		m->left -= need;
	}
	memcpy(p, key, keylen);
	memcpy(p + keylen, val, vallen);
	m->used += need;
	s->hash = hash;
	s->key = p;
	s->keylen = (uint32_t)keylen;
	s->vallen = (uint32_t)vallen;
	if (++m->n * 4 > (m->mask + 1) * 3)
		grow(m);
	return true;
}

bool strmap_put(struct strmap *m, const void *key, size_t keylen,
		const void *val, size_t vallen)
{
	return strmap_put_hashed(m, fk_hash_bytes(key, keylen), key, keylen, val, vallen);
}
