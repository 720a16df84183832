/*
 * intern.h - byte strings numbered in first-seen order: the frame and
 * stack indexes the exporters (speedscope, pprof) write.
 *
 *	struct fk_intern *in = fk_intern_new();
 *	uint32_t a = fk_intern_id(in, "main", 4, NULL);   // 0
 *	uint32_t b = fk_intern_id(in, "work", 4, NULL);   // 1
 *	uint32_t c = fk_intern_id(in, "main", 4, NULL);   // 0 again
 *	struct fk_str s = fk_intern_str(in, b);           // "work"
 *	fk_intern_free(in);
 *
 * Ids are dense (0, 1, 2, ... in the order strings were first seen), so
 * output numbered by them is deterministic whatever the hash.  Keys are
 * any bytes (NUL included).  fk_intern_id() copies a new key into the
 * table's arena; fk_intern_id_ref() keeps the caller's bytes, which must
 * then stay valid and unchanged until fk_intern_free().  Strings returned
 * by fk_intern_str() belong to the table (or the caller, for _ref keys).
 * Memory grows with the distinct keys, never with the lookups.
 */
#ifndef FOLDKIT_INTERN_H
#define FOLDKIT_INTERN_H

#include "core/str.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fk_intern;

struct fk_intern *fk_intern_new(void);
void fk_intern_free(struct fk_intern *in);

/* The id of s[0..len), adding a copy when new (*added says so; may be NULL). */
uint32_t fk_intern_id(struct fk_intern *in, const void *s, size_t len,
		      bool *added);

/* Like fk_intern_id(), but a new key keeps s itself (see above). */
uint32_t fk_intern_id_ref(struct fk_intern *in, const void *s, size_t len,
			  bool *added);

/* The id of s[0..len), or UINT32_MAX when it was never added. */
uint32_t fk_intern_find(const struct fk_intern *in, const void *s, size_t len);

/* The key with id (id < fk_intern_size()). */
struct fk_str fk_intern_str(const struct fk_intern *in, uint32_t id);

/* The number of distinct keys. */
size_t fk_intern_size(const struct fk_intern *in);

/*
 * fk_idmap: 64-bit keys numbered the same way (dense ids, first-seen
 * order), for pairs of ids such as (parent stack, frame):
 *
 *	struct fk_idmap *m = fk_idmap_new();
 *	uint32_t node = fk_idmap_id(m, (uint64_t)parent << 32 | frame, NULL);
 *	uint64_t key = fk_idmap_key(m, node);
 *	fk_idmap_free(m);
 */
struct fk_idmap;

struct fk_idmap *fk_idmap_new(void);
void fk_idmap_free(struct fk_idmap *m);
uint32_t fk_idmap_id(struct fk_idmap *m, uint64_t key, bool *added);
uint64_t fk_idmap_key(const struct fk_idmap *m, uint32_t id);
size_t fk_idmap_size(const struct fk_idmap *m);

#endif
