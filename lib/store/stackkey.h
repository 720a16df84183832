/*
 * stackkey.h - the 64-bit key a stack's text is stored under: SipHash-2-4
 * of its bytes with a key of zeros, which is what ClickHouse's
 * sipHash64() computes, so that a store can check every key against its
 * text by itself:
 *
 *	uint64_t k = fk_stack_key("main;work", 9);
 *	// SELECT count() FROM foldkit_stacks WHERE key != sipHash64(stack)
 *	// is 0 for every stack fold-push stored
 *
 * The key is part of the stored format (foldkit's schema version 1): it
 * must never change.  A key names a text, but 64 bits can collide, by
 * chance (once in some 10^8 distinct stacks squared over 2^65) or on
 * purpose (frame names come from the profiled binaries, and SipHash with
 * a known key is no defence): the stacks table keeps every distinct text
 * under its key, and fold-query refuses a key with two texts rather than
 * adding one's samples to the other (store/clickhouse.h).
 */
#ifndef FOLDKIT_STORE_STACKKEY_H
#define FOLDKIT_STORE_STACKKEY_H

#include <stddef.h>
#include <stdint.h>

uint64_t fk_stack_key(const void *s, size_t len);

/*
 * SipHash-2-4 over several pieces as if they were one: init, feed, then
 * finish (which may be called once).  fk_stack_key() is the same over one.
 */
struct fk_siphash {
	uint64_t v[4];
	uint64_t tail;		/* bytes not yet a whole word */
	size_t ntail;
	uint64_t len;
};

void fk_siphash_init(struct fk_siphash *h);
void fk_siphash_feed(struct fk_siphash *h, const void *p, size_t len);
uint64_t fk_siphash_finish(struct fk_siphash *h);

#endif
