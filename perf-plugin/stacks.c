#include "stacks.h"

#include "core/intern.h"

#include <string.h>

/* The run cache's bound: past it, new runs are named every time. */
#define STACKS_CACHE_BYTES (256u << 20)
#define ROOT 0u
#define NO_RUN UINT32_MAX
/*
 * Per CPU (its number modulo MEMO_SLOTS), the last chain counted: nearly
 * half the samples repeat the one before on their CPU (a thread in a
 * loop), and then cost one comparison.  Chains longer than MEMO_MAX
 * entries are not remembered.
 */
#define MEMO_SLOTS 64
#define MEMO_MAX 48
#define NO_COUNT UINT32_MAX
/*
 * Whole chains counted, by (space, process, raw entries): a chain seen
 * before costs one hash of its entries and one lookup, not one per run
 * and one for its count; bounded like the run cache.
 */
#define CHAINS_BYTES (128u << 20)

/* A cached run: raw addresses of one space, leaf first. */
struct run {
	uint64_t hash, space;
	uint32_t ips;		/* its first address in sk->ips */
	uint32_t nids;		/* its first frame's name id in sk->nids */
	uint32_t n;
	uint32_t vols;		/* its first entry in sk->vols: the indexes of
				 * its addresses in no file's map */
	uint32_t nvol;
	uint32_t root;		/* the node it makes below the root */
	bool java, live;	/* live: in the slots (not made anew) */
};

struct node {
	uint32_t parent, nid;
};

/* A chain counted, in the chain table. */
struct chain {
	uint64_t hash, space;
	uint32_t proc, nr;
	uint32_t ips;		/* its first entry in sk->chain_ips */
	uint32_t count;		/* its count's index in sk->counts */
};

/* A chain counted: (space, proc, raw entries) -> its count's index. */
struct memo {
	uint64_t space;
	uint32_t proc, nr;
	uint32_t count;		/* in sk->counts, or NO_COUNT: empty */
	uint64_t ips[MEMO_MAX];
};

struct proc {
	struct fold_table *table;
	struct fk_str name;
	bool java;
};

/* A run of the current chain. */
struct span {
	uint64_t space, hash;
	uint32_t from, n;
};

#define SLOT_ID(v) ((uint32_t)(v) - 1)
#define SLOT_TAG(h) ((h) >> 32 << 32)

struct stacks {
	const struct frame_name_opts *names;
	struct frame_cache *fc;
	unsigned max_stack;
	GArray *runs;		/* struct run, by run id */
	uint64_t *slots;	/* the run's hash's high 32 bits << 32 | run
				 * id + 1 (0: empty), open addressing */
	size_t nslots, nlive;	/* nslots is a power of two */
	GArray *ips;		/* uint64_t: the runs' addresses */
	GArray *nids;		/* uint32_t: the runs' frames' name ids */
	GArray *vols;		/* uint32_t: see struct run */
	size_t bytes;		/* held by the run cache */
	struct fk_intern *name_ids;	/* ";NAME" -> name id */
	GArray *frame_nids[2];	/* frame id -> name id + 1 (0: not named yet),
				 * [1] for processes named "java" */
	struct fk_idmap *tree;	/* parent node << 32 | name id -> node - 1 */
	GArray *nodes;		/* struct node, by node (0: the root) */
	struct fk_idmap *below;	/* node << 32 | run id -> i */
	GArray *below_nodes;	/* uint32_t, by i: the node it makes */
	struct fk_intern *proc_ids;	/* table pointer, then name -> proc id */
	GArray *procs;		/* struct proc, by proc id */
	struct fk_idmap *counted;	/* proc << 32 | node -> i */
	GArray *counts;		/* fk_count, by i */
	GArray *spans;		/* struct span: the current chain's runs */
	GArray *scratch;	/* uint32_t: name ids of a run not cached */
	GString *buf;
	GStringChunk *texts;	/* the folded texts stacks_flush() made */
	bool stable;		/* the last stacks_chain()'s node holds for the
				 * same raw chain in the same space: every run
				 * cached, none with an address in no file */
	bool fresh;		/* ... and it made a new run */
	struct memo *memo;	/* MEMO_SLOTS of them */
	GArray *chains;		/* struct chain, by id */
	uint64_t *chain_slots;	/* as slots, for chains */
	size_t nchain_slots;	/* a power of two */
	GArray *chain_ips;	/* uint64_t: the chains' raw entries */
	size_t chain_bytes;
};

struct stacks *stacks_new(const struct frame_name_opts *names, struct frame_cache *fc,
			  unsigned max_stack)
{
	struct stacks *sk = g_new0(struct stacks, 1);
	struct node root = { 0, 0 };

	sk->names = names;
	sk->fc = fc;
	sk->max_stack = max_stack;
	sk->runs = g_array_new(FALSE, FALSE, sizeof(struct run));
	sk->nslots = 1 << 12;
	sk->slots = g_new0(uint64_t, sk->nslots);
	sk->ips = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	sk->nids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->vols = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->name_ids = fk_intern_new();
	sk->frame_nids[0] = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	sk->frame_nids[1] = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	sk->tree = fk_idmap_new();
	sk->nodes = g_array_new(FALSE, FALSE, sizeof(struct node));
	g_array_append_val(sk->nodes, root);
	sk->below = fk_idmap_new();
	sk->below_nodes = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->proc_ids = fk_intern_new();
	sk->procs = g_array_new(FALSE, FALSE, sizeof(struct proc));
	sk->counted = fk_idmap_new();
	sk->counts = g_array_new(FALSE, FALSE, sizeof(fk_count));
	sk->spans = g_array_new(FALSE, FALSE, sizeof(struct span));
	sk->scratch = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	sk->buf = g_string_sized_new(256);
	sk->chains = g_array_new(FALSE, FALSE, sizeof(struct chain));
	sk->nchain_slots = 1 << 12;
	sk->chain_slots = g_new0(uint64_t, sk->nchain_slots);
	sk->chain_ips = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	sk->memo = g_new(struct memo, MEMO_SLOTS);
	for (size_t i = 0; i < MEMO_SLOTS; i++)
		sk->memo[i].count = NO_COUNT;
	return sk;
}

void stacks_free(struct stacks *sk)
{
	if (!sk)
		return;
	g_array_free(sk->runs, TRUE);
	g_free(sk->slots);
	g_array_free(sk->ips, TRUE);
	g_array_free(sk->nids, TRUE);
	g_array_free(sk->vols, TRUE);
	fk_intern_free(sk->name_ids);
	g_array_free(sk->frame_nids[0], TRUE);
	g_array_free(sk->frame_nids[1], TRUE);
	fk_idmap_free(sk->tree);
	g_array_free(sk->nodes, TRUE);
	fk_idmap_free(sk->below);
	g_array_free(sk->below_nodes, TRUE);
	fk_intern_free(sk->proc_ids);
	g_array_free(sk->procs, TRUE);
	fk_idmap_free(sk->counted);
	g_array_free(sk->counts, TRUE);
	g_array_free(sk->spans, TRUE);
	g_array_free(sk->scratch, TRUE);
	g_string_free(sk->buf, TRUE);
	if (sk->texts)
		g_string_chunk_free(sk->texts);
	g_free(sk->memo);
	g_array_free(sk->chains, TRUE);
	g_free(sk->chain_slots);
	g_array_free(sk->chain_ips, TRUE);
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

/* The name id of a frame (id: its frame cache id, or FRAME_CACHE_UNCACHED). */
static uint32_t name_of(struct stacks *sk, const struct perf_frame *f, uint32_t id, bool java)
{
	GArray *a = sk->frame_nids[java];
	uint32_t nid;

	if (id != FRAME_CACHE_UNCACHED && id < a->len && (nid = g_array_index(a, uint32_t, id)))
		return nid - 1;
	g_string_truncate(sk->buf, 0);
	g_string_append_c(sk->buf, ';');
	frame_name_append(sk->buf, sk->names, f, java);
	nid = fk_intern_id(sk->name_ids, sk->buf->str, sk->buf->len, NULL);
	if (id != FRAME_CACHE_UNCACHED) {
		if (id >= a->len)
			g_array_set_size(a, id + 1);
		g_array_index(a, uint32_t, id) = nid + 1;
	}
	return nid;
}

static uint32_t child(struct stacks *sk, uint32_t parent, uint32_t nid)
{
	bool added;
	uint32_t i = fk_idmap_id(sk->tree, (uint64_t)parent << 32 | nid, &added);

	if (added) {
		struct node n = { parent, nid };

		g_array_append_val(sk->nodes, n);
	}
	return i + 1;
}

/* The node below node of a run's names (nids[0] is the leaf's). */
static uint32_t walk(struct stacks *sk, uint32_t node, const uint32_t *nids, uint32_t n)
{
	for (uint32_t i = n; i-- > 0;)
		node = child(sk, node, nids[i]);
	return node;
}

/* A hash of n raw entries, from a seed (what else tells them apart). */
static uint64_t hash_ips(uint64_t seed, const uint64_t *ips, uint32_t n)
{
	uint64_t h = (seed ^ n) * 0x9e3779b97f4a7c15ULL;

	for (uint32_t i = 0; i < n; i++) {
		h = (h ^ ips[i]) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	return h ^ h >> 29;
}

static uint64_t run_hash(uint64_t space, bool java, const uint64_t *ips, uint32_t n)
{
	return hash_ips(space ^ (uint64_t)java << 63, ips, n);
}

static struct run *run_at(struct stacks *sk, uint32_t id)
{
	return &g_array_index(sk->runs, struct run, id);
}

/* The slot of a run, or of the empty slot where it would go. */
static size_t run_find(struct stacks *sk, uint64_t h, uint64_t space, bool java,
		       const uint64_t *ips, uint32_t n)
{
	size_t i = h & (sk->nslots - 1);
	const uint64_t *all = (const uint64_t *)(const void *)sk->ips->data;

	/* the tag in the slot spares loading the runs that differ */
	for (; sk->slots[i]; i = (i + 1) & (sk->nslots - 1)) {
		const struct run *r;

		if (SLOT_TAG(sk->slots[i]) != SLOT_TAG(h))
			continue;
		r = run_at(sk, SLOT_ID(sk->slots[i]));
		if (r->hash == h && r->n == n && r->space == space && r->java == java &&
		    memcmp(all + r->ips, ips, n * sizeof(*ips)) == 0)
			break;
	}
	return i;
}

/* Puts id, of hash h, in the first free slot of n (a power of two) from h. */
static void slot_put(uint64_t *slots, size_t n, uint64_t h, guint id)
{
	size_t i = h & (n - 1);

	while (slots[i])
		i = (i + 1) & (n - 1);
	slots[i] = SLOT_TAG(h) | (id + 1);
}

static void run_grow(struct stacks *sk)
{
	size_t n = sk->nslots * 2;

	g_free(sk->slots);
	sk->slots = g_new0(uint64_t, n);
	sk->nslots = n;
	for (guint id = 0; id < sk->runs->len; id++)
		if (run_at(sk, id)->live)
			slot_put(sk->slots, n, run_at(sk, id)->hash, id);
}

/* Whether the run's addresses in no file's map are still in none. */
static bool still_unknown(struct stacks *sk, void *ctx, const struct run *r)
{
	const uint64_t *ips = &g_array_index(sk->ips, uint64_t, r->ips);

	for (uint32_t k = 0; k < r->nvol; k++)
		if (!frame_cache_still_unknown(sk->fc, ctx, r->space,
					       ips[g_array_index(sk->vols, uint32_t, r->vols + k)]))
			return false;
	return true;
}

/*
 * Names a run's frames into sk->scratch and caches it in slot i (when it
 * can be: a frame outside the frame cache must be an unknown one, and
 * the cache must have room); returns its id, or NO_RUN.
 */
static uint32_t new_run(struct stacks *sk, void *ctx, size_t i, uint64_t h, uint64_t space,
			bool java, const uint64_t *ips, uint32_t n)
{
	struct run r = { h, space, 0, 0, n, 0, 0, ROOT, java, true };
	bool cacheable = space != FRAME_SPACE_NONE;
	guint vols = sk->vols->len;
	size_t cost;

	g_array_set_size(sk->scratch, 0);
	for (uint32_t k = 0; k < n; k++) {
		uint32_t id, nid;
		const struct perf_frame *f = frame_cache_frame(sk->fc, ctx, space, ips[k], &id);

		nid = name_of(sk, f, id, java);
		g_array_append_val(sk->scratch, nid);
		if (id == FRAME_CACHE_UNCACHED && cacheable) {
			if (frame_cache_is_unknown(f))
				g_array_append_val(sk->vols, k);
			else
				cacheable = false;
		}
	}
	r.nvol = sk->vols->len - vols;
	cost = sizeof(r) + 2 * sizeof(*sk->slots) +
	       n * (sizeof(*ips) + sizeof(uint32_t)) + r.nvol * sizeof(uint32_t);
	if (!cacheable || sk->bytes + cost > STACKS_CACHE_BYTES) {
		g_array_set_size(sk->vols, vols);
		return NO_RUN;
	}
	sk->bytes += cost;
	r.vols = vols;
	r.ips = sk->ips->len;
	g_array_append_vals(sk->ips, ips, n);
	r.nids = sk->nids->len;
	g_array_append_vals(sk->nids, sk->scratch->data, n);
	r.root = walk(sk, ROOT, (const uint32_t *)(const void *)sk->scratch->data, n);
	g_array_append_val(sk->runs, r);
	if (!sk->slots[i])
		sk->nlive++;
	sk->slots[i] = SLOT_TAG(h) | sk->runs->len;
	return sk->runs->len - 1;
}

/* The node below node of a run of addresses of one space (leaf first). */
static uint32_t run_node(struct stacks *sk, void *ctx, uint32_t node, uint64_t space,
			 bool java, const uint64_t *ips, uint32_t n, uint64_t h)
{
	uint32_t id = NO_RUN, i;
	size_t slot;
	bool added;

	if ((sk->nlive + 1) * 2 > sk->nslots)
		run_grow(sk);
	slot = run_find(sk, h, space, java, ips, n);
	if (sk->slots[slot]) {
		id = SLOT_ID(sk->slots[slot]);
		if (run_at(sk, id)->nvol && !still_unknown(sk, ctx, run_at(sk, id))) {
			/* perf names one of its addresses now: made anew */
			run_at(sk, id)->live = false;
			id = NO_RUN;
		}
	}
	if (id == NO_RUN) {
		sk->fresh = true;
		id = new_run(sk, ctx, slot, h, space, java, ips, n);
		if (id == NO_RUN) {
			sk->stable = false;
			return walk(sk, node, (const uint32_t *)(const void *)sk->scratch->data, n);
		}
	}
	if (run_at(sk, id)->nvol)
		sk->stable = false;	/* checked again at each use */
	if (node == ROOT)
		return run_at(sk, id)->root;
	i = fk_idmap_id(sk->below, (uint64_t)node << 32 | id, &added);
	if (added) {
		uint32_t below = walk(sk, node, &g_array_index(sk->nids, uint32_t,
							       run_at(sk, id)->nids), n);

		g_array_append_val(sk->below_nodes, below);
	}
	return g_array_index(sk->below_nodes, uint32_t, i);
}

uint32_t stacks_chain(struct stacks *sk, const struct perf_dlfilter_sample *sample,
		      void *ctx, uint32_t proc)
{
	bool java = g_array_index(sk->procs, struct proc, proc).java;
	uint64_t user = frame_cache_space(sk->fc), space = user;
	const __u64 *c = sample->raw_callchain;
	unsigned entries = 0;
	uint32_t node = ROOT;
	struct span *last = NULL;

	/* perf's walk, as frame_cache_chain() */
	sk->stable = true;
	sk->fresh = false;
	g_array_set_size(sk->spans, 0);
	for (uint32_t i = 0; i < sample->raw_callchain_nr && entries < sk->max_stack; i++) {
		enum frame_chain_entry e = frame_chain_entry(c[i], user, &space);

		if (e == FRAME_CHAIN_MARK)
			continue;
		if (e == FRAME_CHAIN_DROP)
			return ROOT;
		entries++;
		if (last && last->space == space && last->from + last->n == i) {
			last->n++;
		} else {
			struct span s = { space, 0, i, 1 };

			g_array_append_val(sk->spans, s);
			last = &g_array_index(sk->spans, struct span, sk->spans->len - 1);
		}
	}
	/* the runs' slots are fetched together: each is a cache miss */
	for (guint k = 0; k < sk->spans->len; k++) {
		struct span *s = &g_array_index(sk->spans, struct span, k);

		s->hash = run_hash(s->space, java, (const uint64_t *)c + s->from, s->n);
		__builtin_prefetch(&sk->slots[s->hash & (sk->nslots - 1)]);
	}
	for (guint k = sk->spans->len; k-- > 0;) {
		const struct span *s = &g_array_index(sk->spans, struct span, k);

		node = run_node(sk, ctx, node, s->space, java, (const uint64_t *)c + s->from, s->n,
				s->hash);
	}
	return node;
}

/* A count made by stacks_slot(), nothing added to it yet: never written. */
#define UNCOUNTED ((fk_count)-1)

/* Adds n to count i; n UNCOUNTED adds nothing. */
static inline void bump(struct stacks *sk, uint32_t i, fk_count n)
{
	fk_count *c = &g_array_index(sk->counts, fk_count, i);

	if (n != UNCOUNTED)
		*c = *c == UNCOUNTED ? n : *c + n;
}

/* Adds n to the count of (proc, node); returns the count's index. */
static uint32_t add(struct stacks *sk, uint32_t proc, uint32_t node, fk_count n)
{
	bool added;
	uint32_t i = fk_idmap_id(sk->counted, (uint64_t)proc << 32 | node, &added);

	if (added)
		g_array_append_val(sk->counts, n);
	else
		bump(sk, i, n);
	return i;
}

void stacks_add(struct stacks *sk, uint32_t proc, uint32_t node, fk_count n)
{
	add(sk, proc, node, n);
}

static uint64_t chain_hash(uint64_t space, uint32_t proc, const __u64 *ips, uint32_t n)
{
	return hash_ips(space ^ (uint64_t)proc << 40, (const uint64_t *)ips, n);
}

static bool same_ips(const uint64_t *a, const __u64 *b, uint32_t n)
{
	uint32_t k = 0;

	/* short chains: inline, not memcmp() */
	while (k < n && a[k] == b[k])
		k++;
	return k == n;
}

/* The slot of a chain in the chain table, or of the empty one where it would go. */
static size_t chain_find(struct stacks *sk, uint64_t h, uint64_t space, uint32_t proc,
			 const __u64 *ips, uint32_t n)
{
	size_t mask = sk->nchain_slots - 1, i = h & mask;
	const uint64_t *all = (const uint64_t *)(const void *)sk->chain_ips->data;

	for (; sk->chain_slots[i]; i = (i + 1) & mask) {
		const struct chain *c;

		if (SLOT_TAG(sk->chain_slots[i]) != SLOT_TAG(h))
			continue;
		c = &g_array_index(sk->chains, struct chain, SLOT_ID(sk->chain_slots[i]));
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

	g_free(sk->chain_slots);
	sk->chain_slots = g_new0(uint64_t, n);
	sk->nchain_slots = n;
	for (guint id = 0; id < sk->chains->len; id++)
		slot_put(sk->chain_slots, n, g_array_index(sk->chains, struct chain, id).hash, id);
}

/* stacks_sample() and stacks_slot(): the count's index, n added to it. */
static uint32_t sample_count(struct stacks *sk, const struct perf_dlfilter_sample *sample,
			     void *ctx, uint32_t proc, fk_count n)
{
	struct memo *m = &sk->memo[(uint32_t)sample->cpu % MEMO_SLOTS];
	uint64_t space = frame_cache_space(sk->fc), h;
	const __u64 *ips = sample->raw_callchain;
	uint32_t nr = (uint32_t)sample->raw_callchain_nr, i;
	size_t slot;
	size_t cost = sizeof(struct chain) + 2 * sizeof(uint64_t) + nr * sizeof(uint64_t);

	if (m->count != NO_COUNT && m->proc == proc && m->space == space && m->nr == nr &&
	    same_ips(m->ips, ips, nr)) {
		bump(sk, m->count, n);
		return m->count;
	}
	if ((sk->chains->len + 1) * 2 > sk->nchain_slots)
		chain_grow(sk);
	h = chain_hash(space, proc, ips, nr);
	slot = chain_find(sk, h, space, proc, ips, nr);
	if (sk->chain_slots[slot]) {
		i = g_array_index(sk->chains, struct chain, SLOT_ID(sk->chain_slots[slot])).count;
		bump(sk, i, n);
	} else {
		i = add(sk, proc, stacks_chain(sk, sample, ctx, proc), n);
		if (!sk->stable) {
			m->count = NO_COUNT;
			return i;
		}
		/* a chain of a new run is often the only one: kept when
		 * seen again */
		if (!sk->fresh && sk->chain_bytes + cost <= CHAINS_BYTES &&
		    nr == sample->raw_callchain_nr) {
			struct chain c = { h, space, proc, nr, sk->chain_ips->len, i };

			sk->chain_bytes += cost;
			g_array_append_vals(sk->chain_ips, ips, nr);
			g_array_append_val(sk->chains, c);
			sk->chain_slots[slot] = SLOT_TAG(h) | sk->chains->len;
		}
	}
	if (nr > MEMO_MAX || nr != sample->raw_callchain_nr) {
		m->count = NO_COUNT;
		return i;
	}
	m->space = space;
	m->proc = proc;
	m->nr = nr;
	m->count = i;
	if (nr)
		memcpy(m->ips, ips, nr * sizeof(*m->ips));
	return i;
}

void stacks_sample(struct stacks *sk, const struct perf_dlfilter_sample *sample, void *ctx,
		   uint32_t proc, fk_count n)
{
	sample_count(sk, sample, ctx, proc, n);
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

void stacks_key(struct stacks *sk, uint32_t proc, uint32_t node, GString *key)
{
	const struct proc *p = &g_array_index(sk->procs, struct proc, proc);
	size_t end;

	g_string_truncate(key, 0);
	g_string_append_len(key, p->name.s, (gssize)p->name.len);
	/* leaf to root, then turned round */
	g_array_set_size(sk->scratch, 0);
	for (; node != ROOT; node = g_array_index(sk->nodes, struct node, node).parent)
		g_array_append_val(sk->scratch, g_array_index(sk->nodes, struct node, node).nid);
	end = sk->scratch->len;
	for (size_t k = end; k-- > 0;) {
		struct fk_str nm = fk_intern_str(sk->name_ids,
						 g_array_index(sk->scratch, uint32_t, k));

		g_string_append_len(key, nm.s, (gssize)nm.len);
	}
	/* as collapser_stack_key(): without a process name the root frame
	 * needs no separator, and must not start with '#' */
	if (!p->name.len && key->len) {
		g_string_erase(key, 0, 1);
		if (key->len && key->str[0] == '#')
			key->str[0] = '_';
	}
}

void stacks_flush(struct stacks *sk)
{
	GString *key = g_string_sized_new(1024);

	if (!sk->texts)
		sk->texts = g_string_chunk_new(1 << 20);
	for (guint i = 0; i < sk->counts->len; i++) {
		uint64_t k = fk_idmap_key(sk->counted, i);
		uint32_t proc = (uint32_t)(k >> 32);

		if (g_array_index(sk->counts, fk_count, i) == UNCOUNTED)
			continue;
		stacks_key(sk, proc, (uint32_t)k, key);
		/* the texts live as long as sk, which outlives the tables' use */
		if (key->len)
			fold_table_add2_ref(g_array_index(sk->procs, struct proc, proc).table,
					    g_string_chunk_insert_len(sk->texts, key->str,
								      (gssize)key->len),
					    key->len, g_array_index(sk->counts, fk_count, i), 0);
	}
	g_string_free(key, TRUE);
	fk_idmap_free(sk->counted);
	sk->counted = fk_idmap_new();
	g_array_set_size(sk->counts, 0);
	for (size_t i = 0; i < MEMO_SLOTS; i++)
		sk->memo[i].count = NO_COUNT;
	/* the chains' counts are gone */
	g_array_set_size(sk->chains, 0);
	g_array_set_size(sk->chain_ips, 0);
	memset(sk->chain_slots, 0, sk->nchain_slots * sizeof(*sk->chain_slots));
	sk->chain_bytes = 0;
}
