/*
 * stackkey.c - SipHash-2-4 (Aumasson and Bernstein, 2012), written from
 * the paper: four 64-bit words of state, two rounds per 8-byte word of
 * input, four at the end; the last word holds the length's low byte at
 * the top.  The key is zero, as in ClickHouse's sipHash64().
 */
#include "store/stackkey.h"

#include <string.h>

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32);
	v[2] += v[3]; v[3] = rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32);
}

static inline void sip_word(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

static inline uint64_t load_le64(const unsigned char *p)
{
	uint64_t m = 0;

	for (int i = 7; i >= 0; i--)
		m = (m << 8) | p[i];
	return m;
}

void fk_siphash_init(struct fk_siphash *h)
{
	/* "somepseudorandomlygeneratedbytes" xor a zero key */
	h->v[0] = 0x736f6d6570736575ULL;
	h->v[1] = 0x646f72616e646f6dULL;
	h->v[2] = 0x6c7967656e657261ULL;
	h->v[3] = 0x7465646279746573ULL;
	h->tail = 0;
	h->ntail = 0;
	h->len = 0;
}

void fk_siphash_feed(struct fk_siphash *h, const void *p, size_t len)
{
	const unsigned char *s = p;

	h->len += len;
	while (len && h->ntail) {
		h->tail |= (uint64_t)*s++ << (8 * h->ntail);
		len--;
		if (++h->ntail == 8) {
			sip_word(h->v, h->tail);
			h->tail = 0;
			h->ntail = 0;
		}
	}
	for (; len >= 8; s += 8, len -= 8)
		sip_word(h->v, load_le64(s));
	for (size_t i = 0; i < len; i++)
		h->tail |= (uint64_t)s[i] << (8 * i);
	h->ntail = len;
}

uint64_t fk_siphash_finish(struct fk_siphash *h)
{
	uint64_t *v = h->v;

	sip_word(v, h->tail | (h->len << 56));
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t fk_stack_key(const void *s, size_t len)
{
	struct fk_siphash h;

	fk_siphash_init(&h);
	fk_siphash_feed(&h, s, len);
	return fk_siphash_finish(&h);
}
