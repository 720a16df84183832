#include "stacks.h"

#include "core/bigmem.h"
#include "core/intern.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Per CPU (its number modulo MEMO_SLOTS), the last chain counted: nearly
 * half the samples repeat the one before on their CPU (a thread in a
 * loop), and then cost one comparison.  Chains longer than MEMO_MAX
 * entries are not remembered.
 */
#define MEMO_SLOTS 64
#define MEMO_MAX 48
#define NO_STACK UINT32_MAX
/*
 * Whole chains counted, by (space, process, raw entries): a chain seen
 * before costs one hash of its entries and one lookup, not one per frame;
 * only chains of frames named before, of a stack counted before, are kept
 * (a chain with a new frame or of a new stack is often the only one of
 * its kind: on bench/data/plugin.data, keeping those too held 30% more
 * chains for 0.6% more hits), and only up to CHAINS_BYTES (past it,
 * chains are counted frame by frame).
 */
#define CHAINS_BYTES (128u << 20)

/*
 * A stack: its count, a process and its frames' name ids, leaf first: a
 * record in sk->pool of whole blocks, the n ids after the header, so that
 * a stack found costs one load that misses the cache after its slot's.
 */
struct stack {
	fk_count count;		/* UNCOUNTED: nothing added yet */
	uint64_t hash;
	uint32_t proc, n;
	/* uint32_t nids[n]; */
};
struct block {
	_Alignas(fk_count) unsigned char b[16];
};
#define BLOCKS(n) (uint32_t)((sizeof(struct stack) + (n) * sizeof(uint32_t) + \
			      sizeof(struct block) - 1) / sizeof(struct block))

/* A chain counted: a slot of the chain table (stack1 0: empty). */
struct chain {
	uint64_t hash, space;
	uint32_t proc, nr;
	uint32_t ips;		/* its first entry in sk->chain_ips */
	uint32_t stack1;	/* its stack + 1 */
};

/* A chain counted: (space, proc, raw entries) -> its stack. */
struct memo {
	uint64_t space;
	uint32_t proc, nr;
	uint32_t stack;		/* or NO_STACK: empty */
	uint64_t ips[MEMO_MAX];
};

struct proc {
	struct fold_table *table;
	struct fk_str name;
	bool java;
};

/*
 * Blocks of folded text: large, so that the kernel may back them with
 * huge pages (one page fault per 2 MiB, not per 4 KiB: the texts are as
 * large as the output, and page faults were a tenth of the plugin's time).
 */
struct texts {
	GPtrArray *blocks;	/* of TEXT_BLOCK bytes or more */
	char *at, *end;		/* the free part of the last block */
};
#define TEXT_BLOCK ((size_t)32 << 20)
#define HUGE_PAGE ((size_t)2 << 20)
/* a mark every 1 KiB of stacks (a small recording is split too: tested) */
#define MARK_BLOCKS ((size_t)1 << 6)

/* A slot of an open-addressing table: a hash's high 32 bits, an id + 1. */
#define SLOT_ID(v) ((uint32_t)(v) - 1)
#define SLOT_TAG(h) ((h) >> 32 << 32)

struct stacks {
	const struct frame_name_opts *names;
	struct frame_cache *fc;
	unsigned max_stack;
	struct fk_intern *name_ids;	/* ";NAME" -> name id */
	bool word;		/* the frame cache keeps name ids + 1 for
				 * processes not named "java" (its word) */
	GArray *frame_nids[2];	/* frame id -> name id + 1 (0: not named yet),
				 * [1] for processes named "java" (and [0]
				 * without the word) */
	struct fk_intern *sym_ids;	/* DSO, java, symbol -> i */
	GArray *sym_nids;	/* uint32_t, by i: its name id */
	GArray *walk;		/* struct frame_addr: the current chain's frames */
	struct fk_intern *proc_ids;	/* table pointer, then name -> proc id */
	GArray *procs;		/* struct proc, by proc id */
	struct block *pool;	/* the stacks, a stack's id its first block
				 * (bigmem.h, as the tables) */
	size_t pool_len, pool_cap;	/* blocks used, and room for */
	size_t nstacks;
	uint64_t *slots;	/* SLOT_TAG(hash) | stack id + 1 (0: empty) */
	size_t nslots;		/* a power of two */
	GArray *nids;		/* uint32_t: the current chain's name ids */
	GString *buf;
	struct texts texts;	/* the folded texts stacks_flush() made */
	GArray *marks;		/* uint32_t: the first stack at or after each
				 * MARK_BLOCKS blocks (where flush splits) */
	unsigned threads;	/* stacks_set_threads() */
	bool stable;		/* the last stacks_chain()'s stack holds for the
				 * same raw chain in the same space: every frame
				 * cached */
	bool fresh;		/* ... and one was named for the first time, or
				 * its stack is new */
	struct memo *memo;	/* MEMO_SLOTS of them */
	struct chain *chains;	/* open addressing, in the slot: a hit costs
				 * no second load before the entries' */
	size_t nchain_slots;	/* a power of two */
	size_t nchains;
	uint64_t *chain_ips;	/* the chains' raw entries */
	size_t nchain_ips, chain_ips_cap;
	size_t chain_bytes;
	/* stacks_prefetch()'s sample and its chain's hash */
	const struct perf_dlfilter_sample *pre_sample;
	uint64_t pre_hash;
};

struct stacks *stacks_new(const struct frame_name_opts *names, struct frame_cache *fc,
			  unsigned max_stack)
{
	struct stacks *sk = g_new0(struct stacks, 1);

	sk->names = names;
	sk->fc = fc;
	sk->max_stack = max_stack;
	sk->name_ids = fk_intern_new();
	sk->frame_nids[0] = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	sk->frame_nids[1] = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	sk->word = frame_cache_claim_word(fc);
	/* "[unknown]" names them alike, but for the address it shows */
	if (sk->word && !names->include_addrs)
		frame_cache_share_unmapped(fc);
	sk->sym_ids = fk_intern_new();
	sk->sym_nids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->walk = g_array_new(FALSE, FALSE, sizeof(struct frame_addr));
	sk->proc_ids = fk_intern_new();
	sk->procs = g_array_new(FALSE, FALSE, sizeof(struct proc));
	sk->nslots = 1 << 12;
	sk->slots = big_resize(NULL, 0, sk->nslots * sizeof(*sk->slots));
	sk->nids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->buf = g_string_sized_new(256);
	sk->nchain_slots = 1 << 12;
	sk->chains = big_resize(NULL, 0, sk->nchain_slots * sizeof(*sk->chains));
	sk->marks = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->threads = 2;
	sk->memo = g_new(struct memo, MEMO_SLOTS);
	for (size_t i = 0; i < MEMO_SLOTS; i++)
		sk->memo[i].stack = NO_STACK;
	return sk;
}

void stacks_free(struct stacks *sk)
{
	if (!sk)
		return;
	fk_intern_free(sk->name_ids);
	g_array_free(sk->frame_nids[0], TRUE);
	g_array_free(sk->frame_nids[1], TRUE);
	fk_intern_free(sk->sym_ids);
	g_array_free(sk->sym_nids, TRUE);
	g_array_free(sk->walk, TRUE);
	fk_intern_free(sk->proc_ids);
	g_array_free(sk->procs, TRUE);
	big_free(sk->slots, sk->nslots * sizeof(*sk->slots));
	big_free(sk->pool, sk->pool_cap * sizeof(*sk->pool));
	g_array_free(sk->nids, TRUE);
	g_string_free(sk->buf, TRUE);
	if (sk->texts.blocks)
		g_ptr_array_free(sk->texts.blocks, TRUE);
	g_array_free(sk->marks, TRUE);
	g_free(sk->memo);
	big_free(sk->chains, sk->nchain_slots * sizeof(*sk->chains));
	big_free(sk->chain_ips, sk->chain_ips_cap * sizeof(*sk->chain_ips));
	g_free(sk);
}

uint32_t stacks_proc(struct stacks *sk, struct fold_table *t, const char *name, size_t len,
		     bool java)
{
	GString *b = sk->buf;
	bool added;
	uint32_t id;

	g_string_truncate(b, 0);
	g_string_append_len(b, (const char *)&t, sizeof(t));
	g_string_append_c(b, java);
	g_string_append_len(b, name, (gssize)len);
	id = fk_intern_id(sk->proc_ids, b->str, b->len, &added);
	if (added) {
		struct fk_str k = fk_intern_str(sk->proc_ids, id);
		struct proc p = {
			t, { k.s + sizeof(t) + 1, k.len - sizeof(t) - 1 }, java,
		};

		g_array_append_val(sk->procs, p);
	}
	return id;
}

/* The name id of a frame's ";NAME". */
static uint32_t name_id(struct stacks *sk, const struct perf_frame *f, bool java)
{
	g_string_truncate(sk->buf, 0);
	g_string_append_c(sk->buf, ';');
	frame_name_append(sk->buf, sk->names, f, java);
	return fk_intern_id(sk->name_ids, sk->buf->str, sk->buf->len, NULL);
}

/*
 * The length of a symbol without its final "+0x1f" offset: the part of
 * it a frame's name is made of, as frame_name_append() cuts it.
 */
static size_t sym_len(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || (s[i - 1] >= 'a' && s[i - 1] <= 'f')))
		i--;
	return i < n && i >= 3 && memcmp(s + i - 3, "+0x", 3) == 0 ? i - 3 : n;
}

/*
 * The name id of a new frame: far fewer names than addresses (each
 * offset in a function is an address), so a name is made once per
 * (DSO, symbol without its offset), the only parts of the frame it is
 * made of (with include_addrs, an unknown symbol's address too: made
 * every time then).  The DSO is interned: its pointer names its text.
 */
static uint32_t new_name_id(struct stacks *sk, const struct perf_frame *f, bool java)
{
	GString *b = sk->buf;
	bool added;
	uint32_t i, nid;

	if (sk->names->include_addrs || f->srcline.len || f->inlined)
		return name_id(sk, f, java);
	g_string_truncate(b, 0);
	g_string_append_len(b, (const char *)&f->dso.s, sizeof(f->dso.s));
	g_string_append_c(b, java);
	g_string_append_len(b, f->sym.s, (gssize)sym_len(f->sym.s, f->sym.len));
	i = fk_intern_id(sk->sym_ids, b->str, b->len, &added);
	if (!added)
		return g_array_index(sk->sym_nids, uint32_t, i);
	nid = name_id(sk, f, java);
	g_array_append_val(sk->sym_nids, nid);
	return nid;
}

/* The name id of the frame of ip in space: named once per cached frame. */
static uint32_t frame_nid(struct stacks *sk, void *ctx, uint64_t space, uint64_t ip, bool java)
{
	GArray *a = sk->frame_nids[java];
	uint32_t id, nid, *word = frame_cache_word(sk->fc, ctx, space, ip, &id);

	if (!word) {
		sk->stable = false;	/* named again at each use */
		return name_id(sk, frame_cache_word_frame(sk->fc, ctx), java);
	}
	if (sk->word && !java) {
		if (*word) {
			/* new to the process all the same: its chain is often
			 * the only one of its kind (see CHAINS_BYTES) */
			if (frame_cache_word_shared(sk->fc))
				sk->fresh = true;
			return *word - 1;
		}
		sk->fresh = true;
		nid = new_name_id(sk, frame_cache_word_frame(sk->fc, ctx), java);
		*word = nid + 1;
		return nid;
	}
	if (id < a->len && (nid = g_array_index(a, uint32_t, id)))
		return nid - 1;
	sk->fresh = true;
	nid = new_name_id(sk, frame_cache_word_frame(sk->fc, ctx), java);
	if (id >= a->len)
		g_array_set_size(a, id + 1);
	g_array_index(a, uint32_t, id) = nid + 1;
	return nid;
}

/* One word more into hash h (hash_ips(), hash_nids()). */
static inline uint64_t hash_step(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
	return h ^ h >> 31;
}

/* A hash of n raw entries, from a seed (what else tells them apart). */
static uint64_t hash_ips(uint64_t seed, const uint64_t *ips, uint32_t n)
{
	uint64_t h = (seed ^ n) * 0x9e3779b97f4a7c15ULL;

	for (uint32_t i = 0; i < n; i++)
		h = hash_step(h, ips[i]);
	return h ^ h >> 29;
}

/* A hash of a process's n name ids. */
static uint64_t hash_nids(uint32_t proc, const uint32_t *nids, uint32_t n)
{
	uint64_t h = ((uint64_t)proc << 32 ^ n) * 0x9e3779b97f4a7c15ULL;
	uint32_t i = 0;

	for (; i + 1 < n; i += 2)
		h = hash_step(h, (uint64_t)nids[i] << 32 | nids[i + 1]);
	if (i < n)
		h = hash_step(h, nids[i]);
	return h ^ h >> 29;
}

static struct stack *stack_at(struct stacks *sk, uint32_t id)
{
	return (struct stack *)(void *)&sk->pool[id];
}

/* A stack's name ids. */
static const uint32_t *nids_of(const struct stack *s)
{
	return (const uint32_t *)(const void *)(s + 1);
}

/* Puts id, of hash h, in the first free slot of n (a power of two) from h. */
static void slot_put(uint64_t *slots, size_t n, uint64_t h, guint id)
{
	size_t i = h & (n - 1);

	while (slots[i])
		i = (i + 1) & (n - 1);
	slots[i] = SLOT_TAG(h) | (id + 1);
}

static void stack_grow(struct stacks *sk)
{
	size_t n = sk->nslots * 2;

	big_free(sk->slots, sk->nslots * sizeof(*sk->slots));
	sk->slots = big_resize(NULL, 0, n * sizeof(*sk->slots));
	sk->nslots = n;
	for (uint32_t id = 0; id < sk->pool_len; id += BLOCKS(stack_at(sk, id)->n))
		slot_put(sk->slots, n, stack_at(sk, id)->hash, id);
}

/* A count made by stacks_slot(), nothing added to it yet: never written. */
#define UNCOUNTED ((fk_count)-1)

/* The stack of a process's n name ids (leaf first), made when new. */
static uint32_t stack_of(struct stacks *sk, uint32_t proc, const uint32_t *nids, uint32_t n)
{
	uint64_t h = hash_nids(proc, nids, n);
	size_t mask, i;
	uint32_t id;
	struct stack *s;

	if ((sk->nstacks + 1) * 2 > sk->nslots)
		stack_grow(sk);
	mask = sk->nslots - 1;
	/* the tag in the slot spares loading the stacks that differ */
	for (i = h & mask; sk->slots[i]; i = (i + 1) & mask) {
		const struct stack *t;

		if (SLOT_TAG(sk->slots[i]) != SLOT_TAG(h))
			continue;
		t = stack_at(sk, SLOT_ID(sk->slots[i]));
		/* (an empty stack's ids may be nowhere: no pointer to them) */
		if (t->hash == h && t->proc == proc && t->n == n &&
		    (!n || memcmp(nids_of(t), nids, n * sizeof(*nids)) == 0))
			return SLOT_ID(sk->slots[i]);
	}
	sk->fresh = true;
	id = (uint32_t)sk->pool_len;
	sk->pool = big_reserve(sk->pool, &sk->pool_cap, sk->pool_len + BLOCKS(n), sizeof(*sk->pool));
	sk->pool_len += BLOCKS(n);
	while (id >= sk->marks->len * MARK_BLOCKS)
		g_array_append_val(sk->marks, id);
	s = stack_at(sk, id);
	*s = (struct stack){ UNCOUNTED, h, proc, n };
	if (n)
		memcpy(s + 1, nids, n * sizeof(*nids));
	sk->nstacks++;
	sk->slots[i] = SLOT_TAG(h) | (id + 1);
	return id;
}

uint32_t stacks_chain(struct stacks *sk, const struct perf_dlfilter_sample *sample,
		      void *ctx, uint32_t proc)
{
	bool java = g_array_index(sk->procs, struct proc, proc).java;
	uint64_t user = frame_cache_space(sk->fc), space = user;
	const __u64 *c = sample->raw_callchain;
	unsigned entries = 0;
	uint32_t n = 0, *nids;
	struct frame_addr *w;

	/* perf's walk, as frame_cache_chain(); the frames' slots in the
	 * frame cache are fetched together: each is a cache miss */
	sk->stable = true;
	sk->fresh = false;
	g_array_set_size(sk->walk, (guint)sample->raw_callchain_nr);
	w = (struct frame_addr *)(void *)sk->walk->data;
	for (uint32_t i = 0; i < sample->raw_callchain_nr && entries < sk->max_stack; i++) {
		enum frame_chain_entry e = frame_chain_entry(c[i], user, &space);

		if (e == FRAME_CHAIN_MARK)
			continue;
		if (e == FRAME_CHAIN_DROP) {
			entries = 0;
			break;
		}
		w[entries].space = space;
		w[entries++].ip = c[i];
	}
	frame_cache_prefetch(sk->fc, w, entries);
	g_array_set_size(sk->nids, entries);
	nids = (uint32_t *)(void *)sk->nids->data;
	for (; n < entries; n++)
		nids[n] = frame_nid(sk, ctx, w[n].space, w[n].ip, java);
	return stack_of(sk, proc, nids, n);
}

/* Adds n to stack id's count; n UNCOUNTED adds nothing. */
static inline void bump(struct stacks *sk, uint32_t id, fk_count n)
{
	fk_count *c = &stack_at(sk, id)->count;

	if (n != UNCOUNTED)
		*c = *c == UNCOUNTED ? n : *c + n;
}

void stacks_add(struct stacks *sk, uint32_t proc, uint32_t stack, fk_count n)
{
	g_assert(stack_at(sk, stack)->proc == proc);
	bump(sk, stack, n);
}

/*
 * A chain's hash: of its thread's pid and raw entries, known as soon as
 * perf gives the sample (stacks_prefetch()); its space and process are
 * compared, not hashed (one pid has one space at a time, and the same
 * process name nearly always).
 */
static uint64_t chain_hash(const struct perf_dlfilter_sample *sample, uint32_t nr)
{
	return hash_ips((uint64_t)(uint32_t)sample->pid, (const uint64_t *)sample->raw_callchain, nr);
}

static bool same_ips(const uint64_t *a, const __u64 *b, uint32_t n)
{
	uint32_t k = 0;

	/* short chains: inline, not memcmp() */
	while (k < n && a[k] == b[k])
		k++;
	return k == n;
}

void stacks_prefetch(struct stacks *sk, const struct perf_dlfilter_sample *sample)
{
	const struct memo *m = &sk->memo[(uint32_t)sample->cpu % MEMO_SLOTS];
	uint32_t nr = (uint32_t)sample->raw_callchain_nr;

	/* the chain its CPU counted last, most likely the memo's: no lookup,
	 * and no hash (one off-CPU: deep kernel chains, mostly repeated) */
	sk->pre_sample = NULL;
	if (m->stack != NO_STACK && m->nr == nr && same_ips(m->ips, sample->raw_callchain, nr))
		return;
	sk->pre_sample = sample;
	sk->pre_hash = chain_hash(sample, nr);
	__builtin_prefetch(&sk->chains[sk->pre_hash & (sk->nchain_slots - 1)]);
}

/* The slot of a chain in the chain table, or of the empty one where it would go. */
static size_t chain_find(struct stacks *sk, uint64_t h, uint64_t space, uint32_t proc,
			 const __u64 *ips, uint32_t n)
{
	size_t mask = sk->nchain_slots - 1, i = h & mask;
	const uint64_t *all = sk->chain_ips;

	for (; sk->chains[i].stack1; i = (i + 1) & mask) {
		const struct chain *c = &sk->chains[i];

		/* (an empty chain's entries may be nowhere: no pointer to them) */
		if (c->hash == h && c->nr == n && c->space == space && c->proc == proc &&
		    (!n || same_ips(all + c->ips, ips, n)))
			break;
	}
	return i;
}

static void chain_grow(struct stacks *sk)
{
	size_t n = sk->nchain_slots * 2;
	struct chain *old = sk->chains;

	sk->chains = big_resize(NULL, 0, n * sizeof(*sk->chains));
	for (size_t k = 0; k < sk->nchain_slots; k++) {
		size_t i = old[k].hash & (n - 1);

		if (!old[k].stack1)
			continue;
		while (sk->chains[i].stack1)
			i = (i + 1) & (n - 1);
		sk->chains[i] = old[k];
	}
	big_free(old, sk->nchain_slots * sizeof(*old));
	sk->nchain_slots = n;
}

/* Appends a chain's n raw entries to sk->chain_ips. */
static void chain_ips_put(struct stacks *sk, const __u64 *ips, uint32_t n)
{
	sk->chain_ips = big_reserve(sk->chain_ips, &sk->chain_ips_cap, sk->nchain_ips + n,
				    sizeof(uint64_t));
	if (n)
		memcpy(sk->chain_ips + sk->nchain_ips, ips, n * sizeof(uint64_t));
	sk->nchain_ips += n;
}

/* stacks_sample() and stacks_slot(): the stack, n added to its count. */
static uint32_t sample_count(struct stacks *sk, const struct perf_dlfilter_sample *sample,
			     void *ctx, uint32_t proc, fk_count n)
{
	struct memo *m = &sk->memo[(uint32_t)sample->cpu % MEMO_SLOTS];
	uint64_t space = frame_cache_space(sk->fc), h;
	const __u64 *ips = sample->raw_callchain;
	uint32_t nr = (uint32_t)sample->raw_callchain_nr, id;
	size_t slot;
	size_t cost = 2 * sizeof(struct chain) + nr * sizeof(uint64_t);

	if (m->stack != NO_STACK && m->proc == proc && m->space == space && m->nr == nr &&
	    same_ips(m->ips, ips, nr)) {
		bump(sk, m->stack, n);
		return m->stack;
	}
	if ((sk->nchains + 1) * 2 > sk->nchain_slots)
		chain_grow(sk);
	h = sample == sk->pre_sample ? sk->pre_hash : chain_hash(sample, nr);
	sk->pre_sample = NULL;
	slot = chain_find(sk, h, space, proc, ips, nr);
	if (sk->chains[slot].stack1) {
		id = sk->chains[slot].stack1 - 1;
	} else {
		id = stacks_chain(sk, sample, ctx, proc);
		if (!sk->stable) {
			bump(sk, id, n);
			m->stack = NO_STACK;
			return id;
		}
		if (!sk->fresh && sk->chain_bytes + cost <= CHAINS_BYTES &&
		    nr == sample->raw_callchain_nr) {
			struct chain c = { h, space, proc, nr, (uint32_t)sk->nchain_ips, id + 1 };

			sk->chain_bytes += cost;
			chain_ips_put(sk, ips, nr);
			sk->chains[slot] = c;
			sk->nchains++;
		}
	}
	bump(sk, id, n);
	if (nr > MEMO_MAX || nr != sample->raw_callchain_nr) {
		m->stack = NO_STACK;
		return id;
	}
	m->space = space;
	m->proc = proc;
	m->nr = nr;
	m->stack = id;
	if (nr)
		memcpy(m->ips, ips, nr * sizeof(*m->ips));
	return id;
}

uint32_t stacks_sample(struct stacks *sk, const struct perf_dlfilter_sample *sample, void *ctx,
		       uint32_t proc, fk_count n)
{
	return sample_count(sk, sample, ctx, proc, n);
}

uint32_t stacks_slot(struct stacks *sk, const struct perf_dlfilter_sample *sample, void *ctx,
		     uint32_t proc)
{
	return sample_count(sk, sample, ctx, proc, UNCOUNTED);
}

void stacks_add_at(struct stacks *sk, uint32_t slot, fk_count n)
{
	bump(sk, slot, n);
}

/*
 * The folded text of a stack: collapser_stack_key()'s.  Without a
 * process name the root frame needs no separator, and must not start
 * with '#'.
 */
static size_t key_len(struct stacks *sk, const struct stack *s)
{
	const struct proc *p = &g_array_index(sk->procs, struct proc, s->proc);
	const uint32_t *nids = nids_of(s);
	size_t len = p->name.len;

	for (uint32_t k = 0; k < s->n; k++)
		len += fk_intern_str(sk->name_ids, nids[k]).len;
	return !p->name.len && len ? len - 1 : len;
}

/* Writes the key_len() bytes of a stack's text to out. */
static void key_write(struct stacks *sk, const struct stack *s, char *out)
{
	const struct proc *p = &g_array_index(sk->procs, struct proc, s->proc);
	const uint32_t *nids = nids_of(s);
	char *o = out;
	bool first = !p->name.len;

	memcpy(o, p->name.s, p->name.len);
	o += p->name.len;
	/* root first */
	for (uint32_t k = s->n; k-- > 0;) {
		struct fk_str nm = fk_intern_str(sk->name_ids, nids[k]);

		if (first && nm.len) {
			/* no ';' before the root frame, no '#' to start */
			memcpy(o, nm.s + 1, nm.len - 1);
			if (nm.len > 1 && o[0] == '#')
				o[0] = '_';
			o += nm.len - 1;
			first = false;
			continue;
		}
		memcpy(o, nm.s, nm.len);
		o += nm.len;
	}
}

void stacks_key(struct stacks *sk, uint32_t proc, uint32_t stack, GString *key)
{
	const struct stack *s = stack_at(sk, stack);

	g_assert(s->proc == proc);
	g_string_set_size(key, key_len(sk, s));
	key_write(sk, s, key->str);
}

void stacks_view(struct stacks *sk, uint32_t stack, struct stack_view *v)
{
	const struct stack *s = stack_at(sk, stack);

	v->proc = s->proc;
	v->proc_name = g_array_index(sk->procs, struct proc, s->proc).name;
	v->names = nids_of(s);
	v->n = s->n;
}

struct fk_str stacks_name(struct stacks *sk, uint32_t name)
{
	return fk_intern_str(sk->name_ids, name);
}

/* Room for len bytes of text in t. */
static char *text_room(struct texts *t, size_t len)
{
	char *r;

	if (len > (size_t)(t->end - t->at)) {
		size_t size = len > TEXT_BLOCK ? len : TEXT_BLOCK;
		char *b = g_aligned_alloc(1, size, HUGE_PAGE);

#ifdef MADV_HUGEPAGE
		madvise(b, size, MADV_HUGEPAGE);	/* a hint: may fail */
#endif
		if (!t->blocks)
			t->blocks = g_ptr_array_new_with_free_func(g_aligned_free);
		g_ptr_array_add(t->blocks, b);
		t->at = b;
		t->end = b + size;
	}
	r = t->at;
	t->at += len;
	return r;
}

/* A stack's folded text, made in t (an empty one is nowhere). */
static struct fk_str text_of(struct stacks *sk, struct texts *t, const struct stack *s)
{
	struct fk_str r = { NULL, key_len(sk, s) };

	if (r.len) {
		char *b = text_room(t, r.len);

		key_write(sk, s, b);
		r.s = b;
	}
	return r;
}

/*
 * The texts of the counted stacks from one id to another, made by a
 * second thread while stacks_flush() makes those before: their texts, in
 * order, in made (struct fk_str; an empty one too).
 */
struct texts_job {
	struct stacks *sk;
	uint32_t from, to;
	struct texts texts;
	GArray *made;
};

static void *texts_run(void *data)
{
	struct texts_job *j = data;
	struct stacks *sk = j->sk;

	for (uint32_t i = j->from; i < j->to; i += BLOCKS(stack_at(sk, i)->n)) {
		const struct stack *s = stack_at(sk, i);
		struct fk_str t;

		if (s->count == UNCOUNTED)
			continue;
		t = text_of(sk, &j->texts, s);
		g_array_append_val(j->made, t);
	}
	return NULL;
}

/* Adds a counted stack's text to its table, and forgets its count. */
static void flush_one(struct stacks *sk, struct stack *s, const char *text, size_t len)
{
	/* the texts live as long as sk, which outlives the tables' use */
	if (len)
		fold_table_add2_ref(g_array_index(sk->procs, struct proc, s->proc).table,
				    text, len, s->count, 0);
	s->count = UNCOUNTED;	/* counted again from nothing */
}

void stacks_set_threads(struct stacks *sk, unsigned n)
{
	sk->threads = n ? n : 1;
}

/*
 * The texts are made in pool order; with a second thread, it makes those
 * of the second half of the pool (from a mark) while this one makes and
 * adds the first, then this one adds them: the tables get the same adds
 * in the same order either way.
 */
void stacks_flush(struct stacks *sk)
{
	struct texts_job job = { sk, (uint32_t)sk->pool_len, (uint32_t)sk->pool_len, { 0 }, NULL };
	pthread_t worker;
	bool two = false;
	uint32_t i;
	size_t k = 0;

	if (sk->threads > 1 && sk->marks->len >= 2) {
		job.from = g_array_index(sk->marks, uint32_t, sk->marks->len / 2);
		job.made = g_array_new(FALSE, FALSE, sizeof(struct fk_str));
		two = pthread_create(&worker, NULL, texts_run, &job) == 0;
		if (!two)
			job.from = job.to;	/* all made here */
	}
	for (i = 0; i < job.from; i += BLOCKS(stack_at(sk, i)->n)) {
		struct stack *s = stack_at(sk, i);
		struct fk_str t;

		if (s->count == UNCOUNTED)
			continue;
		t = text_of(sk, &sk->texts, s);
		flush_one(sk, s, t.s, t.len);
	}
	if (two) {
		pthread_join(worker, NULL);
		for (; i < job.to; i += BLOCKS(stack_at(sk, i)->n)) {
			struct stack *s = stack_at(sk, i);
			struct fk_str t;

			if (s->count == UNCOUNTED)
				continue;
			t = g_array_index(job.made, struct fk_str, k++);
			flush_one(sk, s, t.s, t.len);
		}
		g_assert(k == job.made->len);
		/* sk owns the job's texts from now on */
		if (job.texts.blocks) {
			if (!sk->texts.blocks)
				sk->texts.blocks = g_ptr_array_new_with_free_func(g_aligned_free);
			for (guint b = 0; b < job.texts.blocks->len; b++)
				g_ptr_array_add(sk->texts.blocks, g_ptr_array_index(job.texts.blocks, b));
			g_ptr_array_set_free_func(job.texts.blocks, NULL);
			g_ptr_array_free(job.texts.blocks, TRUE);
		}
	}
	if (job.made)
		g_array_free(job.made, TRUE);
}
