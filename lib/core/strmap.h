/*
 * strmap.h - a byte-string to byte-string map for caches (call-chain text
 * to folded frame names, addresses to symbols).
 *
 *	struct strmap *m = strmap_new(64 << 20);      // stop growing at 64 MiB
 *	struct fk_str v;
 *	if (!strmap_get(m, key, keylen, &v)) {
 *		compute(out);
 *		strmap_put(m, key, keylen, out->str, out->len);
 *	}
 *	strmap_free(m);
 *
 * The map copies keys and values into its own arena; values returned by
 * strmap_get() stay valid until strmap_free().  Once the arena reaches the
 * byte limit given to strmap_new(), strmap_put() stores nothing more (and
 * returns false): a cache that stops growing is still correct, and memory
 * stays bounded whatever the input.  An existing key is never overwritten.
 */
#ifndef FOLDKIT_STRMAP_H
#define FOLDKIT_STRMAP_H

#include "core/str.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap;

struct strmap *strmap_new(size_t max_bytes);
void strmap_free(struct strmap *m);

/* Looks key up; on a hit fills *val (owned by the map) and returns true. */
bool strmap_get(const struct strmap *m, const void *key, size_t keylen,
		struct fk_str *val);

/* Same, with the key's fk_hash_bytes() already computed. */
bool strmap_get_hashed(const struct strmap *m, uint64_t hash, const void *key,
		       size_t keylen, struct fk_str *val);

/* Stores a copy of key -> val unless present or full; true if stored. */
bool strmap_put(struct strmap *m, const void *key, size_t keylen,
		const void *val, size_t vallen);

bool strmap_put_hashed(struct strmap *m, uint64_t hash, const void *key,
		       size_t keylen, const void *val, size_t vallen);

size_t strmap_size(const struct strmap *m);

#endif
