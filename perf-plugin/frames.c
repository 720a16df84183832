#include "frames.h"

#include "core/bigmem.h"
#include "core/strmap.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#define KERNEL_SPACE FRAME_SPACE_KERNEL
#define HV_SPACE FRAME_SPACE_HV
#define NO_SPACE FRAME_SPACE_NONE
#define UNMAPPED_LATELY 4096	/* a power of two */
#define RECENT 64
/*
 * Whole chains are cached too, by their space and raw entries, so that a
 * chain seen before costs one lookup, not one per frame; bounded like the
 * collapser's chain cache (past it, chains are looked up frame by frame).
 */
#define CHAIN_CACHE_BYTES (256u << 20)

/* A cached address; its frame is store[id - 1] (id 0: an empty slot). */
struct slot {
	uint64_t space, ip;
	uint32_t id;
	uint32_t word;		/* the word's user's (frame_cache_word()) */
};

/*
 * The name word of an offset in a file (frame_cache_set_files()): the word
 * the caller set for the first address made a frame there; file 0: empty.
 */
struct file_frame {
	uint64_t offset;
	uint32_t file;		/* the file's number + 1 */
	uint32_t word;		/* 0 until the caller sets one */
};

struct thread_rec {
	int tid;
	const char *comm;	/* interned in names */
	int pid;		/* of gen, until */
	uint32_t gen;		/* its process's maps' generation, from map_gen */
	uint64_t until;		/* the time gen ends (0: not asked yet) */
	/* perf names the thread comm from name_since to name_until, when it
	 * is process name_pid's (name_until 0: not known) */
	uint64_t name_since, name_until;
	int name_pid;
};

struct frame_cache {
	const struct perf_dlfilter_fns *fns;
	unsigned max_stack;
	struct slot *slots;
	size_t nslots, nused;	/* nslots is a power of two */
	GStringChunk *strings;	/* symbol and address texts */
	GStringChunk *names;	/* DSO names and thread names, interned */
	GHashTable *threads;	/* tid -> struct thread_rec */
	struct thread_rec *recent[RECENT];	/* by tid % RECENT: threads
						 * looked up lately */
	int last_pid, last_tid;	/* the last sample's thread, or -1 */
	struct thread_rec *last;
	GHashTable *gens;	/* pid -> generation + 1 */
	GHashTable *build_ids;	/* interned DSO name -> hex build id */
	uint64_t space;		/* the current sample's user space */
	GArray *store;		/* struct perf_frame, by id: the cached frames */
	GArray *frames;		/* struct perf_frame, the current chain, when
				 * asked for or not all cached */
	GArray *ids;		/* uint32_t, the current chain's frames' ids */
	bool chain_cached;	/* every frame of the chain is in the store */
	bool copied;		/* frames holds the current chain */
	struct strmap *chains;	/* space + raw callchain -> chain id, the
				 * frames' ids (uint32_t each) */
	uint32_t nchains, chain_id;	/* the current chain's, or NO_CHAIN */
	GString *chain_key;
	GString *scratch;
	char ipbuf[24];		/* frame_cache_ip()'s address text */
	struct perf_frame uncached;	/* a NO_SPACE frame */
	bool intern;		/* keep() interns (for NO_SPACE frames) */
	frame_cache_may_map_fn *may_map;
	void *may_map_data;
	frame_cache_gen_fn *map_gen;
	void *map_gen_data;
	frame_cache_gen_fn *name_gen;
	void *name_gen_data;
	uint64_t until;		/* the last thread's space holds until then */
	uint64_t now;		/* the current sample's time */
	frame_cache_file_fn *file_at;	/* NULL: no frames shared by file */
	void *file_at_data;
	struct file_frame *file_frames;	/* open addressing */
	size_t nfile_slots, nfile_frames;	/* a power of two, and used */
	/* a file frame without a word, and the last slot made for it: the
	 * word the caller sets there is copied at the next frame_slot() */
	struct file_frame *wordless;
	struct slot *wordless_slot;
	uint64_t by_file, misplaced;	/* frame_cache_file_stats() */
	/* frame_cache_misplaced(): the first misplaced address, its file,
	 * and by_file then */
	uint64_t misplaced_ip, shared_before;
	char misplaced_file[256];
	bool shared;		/* the last frame_cache_word()'s slot is new,
				 * its word another process's */
	/* frame_cache_share_unmapped(): the frame of every user address
	 * the recording maps nothing at, once one was made (id 0: not yet) */
	bool share_unmapped;
	struct slot unmapped;
	/* user addresses lately found unmapped, by a hash: a stack walked
	 * without frame pointers gives the same garbage again (on
	 * bench/data/plugin.data, 214,000 lookups of 98,000 addresses), and
	 * each would search the process's files and its parents' again */
	struct unmapped_addr {
		uint64_t space, ip;
	} unmapped_lately[UNMAPPED_LATELY];
	bool word_claimed;	/* frame_cache_claim_word() said yes */
	bool lean;		/* frame_cache_set_lean(): the store stays empty */
	bool transient;		/* keep() keeps nothing: texts valid until the
				 * next frame made */
	char pcbuf[24];		/* a transient frame's address text */
	/* the last frame_cache_word()'s address, its frame's id, and
	 * whether uncached is its frame */
	uint64_t word_space, word_ip;
	uint32_t word_id;
	bool made;
	/* perf's DSO names lately interned: its pointer (checked by its
	 * text, perf may free it) -> the interned name */
	struct {
		const char *perf, *name;
	} dsos[64];
};

static const char UNKNOWN[] = "[unknown]";

/* The thread record of tid, or NULL: a small cache in front of the table. */
static struct thread_rec *thread_rec(struct frame_cache *fc, int tid)
{
	struct thread_rec **r = &fc->recent[(unsigned)tid % RECENT];

	if (!*r || (*r)->tid != tid) {
		struct thread_rec *t = g_hash_table_lookup(fc->threads, GINT_TO_POINTER(tid));

		if (!t)
			return NULL;
		*r = t;
	}
	return *r;
}

struct frame_cache *frame_cache_new(const struct perf_dlfilter_fns *fns,
				    unsigned max_stack)
{
	struct frame_cache *fc = g_new0(struct frame_cache, 1);

	fc->fns = fns;
	fc->max_stack = max_stack;
	fc->nslots = 1 << 12;
	fc->slots = big_resize(NULL, 0, fc->nslots * sizeof(struct slot));
	fc->strings = g_string_chunk_new(1 << 16);
	fc->names = g_string_chunk_new(1 << 12);
	fc->threads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	fc->last_tid = -1;
	fc->gens = g_hash_table_new(g_direct_hash, g_direct_equal);
	fc->build_ids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	fc->scratch = g_string_sized_new(256);
	fc->frames = g_array_sized_new(FALSE, FALSE, sizeof(struct perf_frame), 128);
	fc->chains = strmap_new(CHAIN_CACHE_BYTES);
	fc->chain_key = g_string_sized_new(1024);
	fc->store = g_array_sized_new(FALSE, FALSE, sizeof(struct perf_frame), 1 << 12);
	fc->ids = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), 128);
	return fc;
}

void frame_cache_free(struct frame_cache *fc)
{
	if (!fc)
		return;
	big_free(fc->slots, fc->nslots * sizeof(struct slot));
	big_free(fc->file_frames, fc->nfile_slots * sizeof(struct file_frame));
	g_string_chunk_free(fc->strings);
	g_string_chunk_free(fc->names);
	g_hash_table_destroy(fc->threads);
	g_hash_table_destroy(fc->gens);
	g_hash_table_destroy(fc->build_ids);
	g_array_free(fc->frames, TRUE);
	g_array_free(fc->store, TRUE);
	g_array_free(fc->ids, TRUE);
	strmap_free(fc->chains);
	g_string_free(fc->chain_key, TRUE);
	g_string_free(fc->scratch, TRUE);
	g_free(fc);
}

void frame_cache_set_gen(struct frame_cache *fc, frame_cache_gen_fn *fn, void *data)
{
	fc->map_gen = fn;
	fc->map_gen_data = data;
}

void frame_cache_set_name_gen(struct frame_cache *fc, frame_cache_gen_fn *fn, void *data)
{
	fc->name_gen = fn;
	fc->name_gen_data = data;
}

/* Makes t (thread tid of process pid, its comm set) the current thread. */
static const char *enter(struct frame_cache *fc, struct thread_rec *t, int pid, int tid,
			 uint64_t time)
{
	guint gen;

	if (fc->map_gen) {
		/* perf's maps change at the process's MMAP records, not at
		 * its exec's COMM: an address resolved before a change is
		 * never reused after it */
		if (!t->until || t->pid != pid || time >= t->until) {
			t->gen = fc->map_gen(fc->map_gen_data, pid, time, &t->until);
			t->pid = pid;
		}
		gen = t->gen;
		fc->until = t->until;
	} else {
		gen = GPOINTER_TO_UINT(g_hash_table_lookup(fc->gens, GINT_TO_POINTER(pid)));
		fc->until = UINT64_MAX;
	}
	fc->space = pid > 0 && gen != FRAME_CACHE_NO_GEN ? (uint64_t)gen << 32 | (uint32_t)pid
							 : NO_SPACE;
	fc->last_pid = pid;
	fc->last_tid = tid;
	fc->last = t;
	return t->comm;
}

/* perf named t comm at time: until when it will (see frame_cache_known_comm()). */
static void note_name_time(struct frame_cache *fc, struct thread_rec *t, int pid, int tid,
			   uint64_t time)
{
	uint64_t until;

	if (!fc->name_gen || tid <= 0 ||
	    (t->name_pid == pid && time >= t->name_since && time < t->name_until))
		return;
	/* a change at the very time: perf's order of the two is unknown */
	if (fc->name_gen(fc->name_gen_data, tid, time, &until) == FRAME_CACHE_NO_GEN)
		until = time;
	t->name_pid = pid;
	t->name_since = time;
	t->name_until = until;
}

const char *frame_cache_note_comm(struct frame_cache *fc, int pid, int tid,
				  const char *comm, uint64_t time)
{
	gpointer key = GINT_TO_POINTER(tid);
	struct thread_rec *t;
	guint gen;

	fc->now = time;
	if (!comm)
		comm = "";
	if (fc->last && tid == fc->last_tid && pid == fc->last_pid && time < fc->until &&
	    (fc->last->comm == comm || strcmp(fc->last->comm, comm) == 0)) {
		note_name_time(fc, fc->last, pid, tid, time);
		return fc->last->comm;	/* fc->space is this thread's already */
	}
	t = thread_rec(fc, tid);
	if (!t) {
		t = g_new0(struct thread_rec, 1);
		t->tid = tid;
		t->comm = g_string_chunk_insert_const(fc->names, comm);
		g_hash_table_insert(fc->threads, key, t);
	} else if (strcmp(t->comm, comm) != 0) {
		t->comm = g_string_chunk_insert_const(fc->names, comm);
		t->name_until = 0;
		if (!fc->map_gen) {
			/*
			 * Without the maps' times, a renamed thread may
			 * have exec'd a new program: the process's old
			 * addresses can no longer be trusted.
			 */
			gen = GPOINTER_TO_UINT(g_hash_table_lookup(fc->gens, GINT_TO_POINTER(pid)));
			g_hash_table_insert(fc->gens, GINT_TO_POINTER(pid), GUINT_TO_POINTER(gen + 1));
		}
	}
	note_name_time(fc, t, pid, tid, time);
	return enter(fc, t, pid, tid, time);
}

const char *frame_cache_known_comm(struct frame_cache *fc, int pid, int tid, uint64_t time)
{
	struct thread_rec *t;

	fc->now = time;
	if (!fc->name_gen || tid <= 0)
		return NULL;
	if (fc->last && tid == fc->last_tid)
		t = fc->last;
	else
		t = thread_rec(fc, tid);
	if (!t || t->name_pid != pid || time < t->name_since || time >= t->name_until)
		return NULL;
	if (t == fc->last && pid == fc->last_pid && time < fc->until)
		return t->comm;	/* fc->space is this thread's already */
	return enter(fc, t, pid, tid, time);
}

static inline uint64_t mix(uint64_t space, uint64_t ip)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ULL ^ (space + 0x632be59bd9b4e019ULL);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h;
}

static void grow(struct frame_cache *fc)
{
	struct slot *old = fc->slots;
	size_t n = fc->nslots;

	fc->nslots = n * 2;
	fc->slots = big_resize(NULL, 0, fc->nslots * sizeof(struct slot));
	for (size_t i = 0; i < n; i++) {
		if (!old[i].id)
			continue;
		size_t j = mix(old[i].space, old[i].ip) & (fc->nslots - 1);
		while (fc->slots[j].id)
			j = (j + 1) & (fc->nslots - 1);
		fc->slots[j] = old[i];
	}
	big_free(old, n * sizeof(struct slot));
}

static struct fk_str str_of(const char *s)
{
	struct fk_str r = { s, strlen(s) };
	return r;
}

/* s[len] is a NUL; transient: s itself, which must outlive the frame */
static struct fk_str keep(struct frame_cache *fc, const char *s, size_t len)
{
	struct fk_str r = { fc->transient ? s
			    : fc->intern ? g_string_chunk_insert_const(fc->names, s)
					 : g_string_chunk_insert_len(fc->strings, s, (gssize)len),
			    len };
	return r;
}

/* "%x" of v into buf (at least 17 bytes), NUL-terminated; returns the length. */
static size_t hex(char *buf, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	size_t n = 0, len = 0;

	do
		tmp[n++] = digits[v & 15];
	while ((v >>= 4) != 0);
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

static struct fk_str keep_hex(struct frame_cache *fc, uint64_t v)
{
	char buf[24];

	if (fc->transient)
		return keep(fc, fc->pcbuf, hex(fc->pcbuf, v));
	return keep(fc, buf, hex(buf, v));
}

/* The interned name of a DSO perf names dso. */
static const char *dso_name(struct frame_cache *fc, const char *dso)
{
	size_t i = ((uintptr_t)dso >> 4) % G_N_ELEMENTS(fc->dsos);

	if (fc->dsos[i].perf != dso || strcmp(fc->dsos[i].name, dso) != 0) {
		fc->dsos[i].perf = dso;
		fc->dsos[i].name = g_string_chunk_insert_const(fc->names, dso);
	}
	return fc->dsos[i].name;
}

/* The frame perf script prints for an address it could not place. */
static void unknown_frame(struct frame_cache *fc, uint64_t ip, struct perf_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->pc = keep_hex(fc, ip);
	f->sym = str_of(UNKNOWN);
	f->dso = str_of(UNKNOWN);
}

/* Remembers the build id perf gave for a DSO (for the pprof output). */
static void note_build_id(struct frame_cache *fc, const char *dso,
			  const struct perf_dlfilter_al *al)
{
	GString *hex;

	if (!al->buildid || !al->buildid_size || g_hash_table_contains(fc->build_ids, dso))
		return;
	hex = g_string_sized_new(2 * al->buildid_size);
	for (uint32_t i = 0; i < al->buildid_size; i++)
		g_string_append_printf(hex, "%02x", al->buildid[i]);
	g_hash_table_insert(fc->build_ids, (gpointer)dso, g_string_free(hex, FALSE));
}

const char *frame_cache_build_id(const struct frame_cache *fc, const char *dso)
{
	return g_hash_table_lookup(fc->build_ids, dso);
}

/*
 * Fills f from a resolved location the way perf script's callchain
 * printer does: "%16lx" of the DSO-relative address for user space (the
 * absolute one for the kernel or without a map), "SYM+0xOFF" or
 * "[unknown]", and the DSO name or "[unknown]".
 */
static void frame_from_al(struct frame_cache *fc, uint64_t ip,
			  const struct perf_dlfilter_al *al, struct perf_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->pc = keep_hex(fc, al->dso && !al->is_kernel_ip ? al->addr : ip);
	if (al->sym) {
		/* "%s+0x%x" */
		char off[24];
		size_t n = hex(off, al->symoff);

		g_string_assign(fc->scratch, al->sym);
		g_string_append_len(fc->scratch, "+0x", 3);
		g_string_append_len(fc->scratch, off, (gssize)n);
		f->sym = keep(fc, fc->scratch->str, fc->scratch->len);
	} else {
		f->sym = str_of(UNKNOWN);
	}
	if (al->dso)
		f->dso = str_of(dso_name(fc, al->dso));
	else
		f->dso = str_of(UNKNOWN);
	note_build_id(fc, f->dso.s, al);
}

/*
 * perf's location of ip in space, or false when it has none (then the
 * frame is "[unknown]"): no map holds the address, or only
 * resolve_address()'s fallback to the other context found it.
 */
static bool locate(struct frame_cache *fc, void *ctx, uint64_t space, uint64_t ip,
		   struct perf_dlfilter_al *al)
{
	memset(al, 0, sizeof(*al));
	al->size = sizeof(*al);

	return space != HV_SPACE && fc->fns->resolve_address(ctx, ip, al) == 0 &&
	       (bool)al->is_kernel_ip == (space == KERNEL_SPACE);
}

static void fill(struct frame_cache *fc, uint64_t ip, bool found,
		 const struct perf_dlfilter_al *al, struct perf_frame *f)
{
	if (found)
		frame_from_al(fc, ip, al, f);
	else
		unknown_frame(fc, ip, f);
}

/*
 * A lean cache's frame of ip into f, its texts valid until the next frame
 * made (frame_cache_word_frame() gives it).
 */
static void fill_transient(struct frame_cache *fc, uint64_t ip, bool found,
			   const struct perf_dlfilter_al *al, struct perf_frame *f)
{
	fc->transient = true;
	fill(fc, ip, found, al, f);
	fc->transient = false;
	fc->made = true;
}

/* Copies the chain so far (n frames) from the store to frames. */
static void copy_chain(struct frame_cache *fc, size_t n)
{
	const uint32_t *ids = (const uint32_t *)(const void *)fc->ids->data;

	g_array_set_size(fc->frames, 0);
	for (size_t i = 0; i < n; i++)
		g_array_append_vals(fc->frames, &g_array_index(fc->store, struct perf_frame, ids[i]), 1);
	fc->copied = true;
}

static inline size_t file_hash(uint32_t file, uint64_t offset)
{
	return (size_t)mix((uint64_t)file << 1 | 1, offset);
}

/* The file frame of (file + 1, offset), or the empty one where it would go. */
static struct file_frame *file_frame_slot(struct frame_cache *fc, uint32_t file,
					  uint64_t offset)
{
	size_t mask, i;

	if ((fc->nfile_frames + 1) * 2 > fc->nfile_slots) {
		struct file_frame *old = fc->file_frames;
		size_t n = fc->nfile_slots;

		fc->nfile_slots = n ? n * 2 : 1 << 12;
		fc->file_frames = big_resize(NULL, 0, fc->nfile_slots * sizeof(*old));
		mask = fc->nfile_slots - 1;
		for (size_t k = 0; k < n; k++) {
			if (!old[k].file)
				continue;
			for (i = file_hash(old[k].file, old[k].offset) & mask; fc->file_frames[i].file;
			     i = (i + 1) & mask)
				;
			fc->file_frames[i] = old[k];
		}
		big_free(old, n * sizeof(*old));
	}
	mask = fc->nfile_slots - 1;
	for (i = file_hash(file, offset) & mask; fc->file_frames[i].file; i = (i + 1) & mask)
		if (fc->file_frames[i].file == file && fc->file_frames[i].offset == offset)
			break;
	return &fc->file_frames[i];
}

/*
 * A new user address's slot s, when its file's offset was made a frame
 * before (in any process): the word of that frame, without asking perf
 * (and a frame id of its own, as any new slot).  Else false, and *ff
 * the file frame to keep once perf places the address (NULL: none).
 */
static bool by_file(struct frame_cache *fc, struct slot *s, uint64_t space, uint64_t ip,
		    struct file_frame **ff, const char **name)
{
	uint32_t file;
	uint64_t offset;
	struct file_frame *f;

	*ff = NULL;
	if (!fc->file_at || space >= NO_SPACE ||
	    !fc->file_at(fc->file_at_data, (int)(uint32_t)space, ip, fc->now, &file, name, &offset))
		return false;
	f = file_frame_slot(fc, file + 1, offset);
	if (!f->file) {
		f->file = file + 1;
		f->offset = offset;
		fc->nfile_frames++;
		*ff = f;	/* kept or emptied by the caller */
		return false;
	}
	*s = (struct slot){ space, ip, (uint32_t)(fc->nused + 1), f->word };
	if (!f->word) {
		fc->wordless = f;
		fc->wordless_slot = s;
	}
	fc->by_file++;
	fc->shared = true;
	return true;
}

/*
 * Whether perf placed an address where its file said (by_file()).  When
 * perf names the file otherwise, only that offset is not shared; when it
 * places the address elsewhere, or nowhere, the recording's maps are not
 * perf's: no more frames are shared (frame_cache_misplaced()).
 */
static bool placed_as_file(struct frame_cache *fc, struct file_frame *ff, const char *name,
			   bool found, uint64_t ip, const struct perf_dlfilter_al *al)
{
	bool placed = found && al->dso && !al->is_kernel_ip && al->addr == ff->offset;

	if (placed && strcmp(al->dso, name) == 0)
		return true;
	if (!placed) {
		if (!fc->misplaced++) {
			fc->shared_before = fc->by_file;
			fc->misplaced_ip = ip;
			snprintf(fc->misplaced_file, sizeof(fc->misplaced_file), "%s", name);
		}
		fc->file_at = NULL;
	}
	*ff = (struct file_frame){ 0 };	/* the last one put: no other moves */
	fc->nfile_frames--;
	return false;
}

/* The frame every unmapped user address shares (made before), its slot in *sp. */
static uint32_t unmapped_frame(struct frame_cache *fc, uint64_t ip, struct perf_frame *f,
			       struct slot **sp)
{
	if (!fc->unmapped.word) {
		/* its caller names it from this one */
		fill_transient(fc, ip, false, NULL, f);
	}
	*sp = &fc->unmapped;
	return fc->unmapped.id - 1;
}

/*
 * The id of the frame of an address in a space, resolved and cached on
 * first sight, its slot in *sp; FRAME_CACHE_UNCACHED when it is not cached
 * (a thread without a pid, or a user address in no file's map): then *f
 * gets the frame, its texts interned (as many as the distinct addresses),
 * and *sp NULL.
 */
static uint32_t frame_slot(struct frame_cache *fc, void *ctx, uint64_t space, uint64_t ip,
			   struct perf_frame *f, struct slot **sp)
{
	struct perf_dlfilter_al al;
	struct slot *s;
	struct file_frame *ff = NULL;
	const char *file_name = NULL;
	size_t i;
	bool found, mapped, first_unmapped = false;
	struct unmapped_addr *lately;

	if (fc->wordless) {
		/* before any table moves */
		fc->wordless->word = fc->wordless_slot->word;
		fc->wordless = NULL;
	}
	if (space == NO_SPACE) {
		found = locate(fc, ctx, space, ip, &al);
		goto uncached;
	}
	if ((fc->nused + 1) * 2 > fc->nslots)
		grow(fc);
	i = mix(space, ip) & (fc->nslots - 1);
	while ((s = &fc->slots[i])->id) {
		if (s->ip == ip && s->space == space) {
			*sp = s;
			return s->id - 1;
		}
		i = (i + 1) & (fc->nslots - 1);
	}
	lately = &fc->unmapped_lately[mix(space, ip) >> 40 & (UNMAPPED_LATELY - 1)];
	if (lately->ip == ip && lately->space == space && fc->unmapped.id)
		return unmapped_frame(fc, ip, f, sp);
	if (fc->lean && by_file(fc, s, space, ip, &ff, &file_name)) {
		fc->nused++;
		*sp = s;
		return s->id - 1;
	}
	/*
	 * A user address where the recording maps nothing for the process
	 * is in no map of perf's either: "[unknown]" without asking perf (a
	 * stack walked through code without frame pointers has many such).
	 * One in a file's mapping (by_file()) is mapped.
	 */
	mapped = ff || space == KERNEL_SPACE || space == HV_SPACE || !fc->may_map ||
		 fc->may_map(fc->may_map_data, (int)(uint32_t)space, ip);
	found = mapped && locate(fc, ctx, space, ip, &al);
	if (ff && placed_as_file(fc, ff, file_name, found, ip, &al)) {
		/* its word: the one the caller sets in the slot made below */
		fc->wordless = ff;
		fc->wordless_slot = s;
	}
	if (!mapped && fc->lean && fc->share_unmapped) {
		/*
		 * Unmapped for as long as the space lasts: no MMAP of the
		 * process or its parents ever covers it (perfdata_may_map()),
		 * so only the parent it was forked from could, and that is
		 * one per space (a FORK starts a new one).
		 */
		lately->space = space;
		lately->ip = ip;
		if (!fc->unmapped.id)
			first_unmapped = true;	/* made below, then shared */
		else
			return unmapped_frame(fc, ip, f, sp);
	}
	if ((!found || !al.dso) && space != KERNEL_SPACE && space != HV_SPACE && mapped) {
		/*
		 * A user address in no map of the process (or one of no
		 * file): perf may map a library there later (dlopen) and
		 * name the address then, so it is resolved every time,
		 * unless the recording maps nothing there for the process.
		 */
		goto uncached;
	}
	s->space = space;
	s->ip = ip;
	s->word = 0;
	*sp = s;
	fc->nused++;
	if (fc->lean) {
		/* the caller names it now: only its word is kept */
		fill_transient(fc, ip, found, &al, f);
	} else {
		g_array_set_size(fc->store, (guint)fc->nused);
		fill(fc, ip, found, &al,
		     &g_array_index(fc->store, struct perf_frame, fc->nused - 1));
	}
	s->id = (uint32_t)fc->nused;
	if (first_unmapped)
		fc->unmapped = (struct slot){ 0, 0, s->id, 0 };
	return s->id - 1;
uncached:
	fc->intern = true;
	fill(fc, ip, found, &al, f);
	fc->intern = false;
	fc->made = true;
	*sp = NULL;
	return FRAME_CACHE_UNCACHED;
}

static uint32_t frame_id(struct frame_cache *fc, void *ctx, uint64_t space, uint64_t ip,
			 struct perf_frame *f)
{
	struct slot *s;

	return frame_slot(fc, ctx, space, ip, f, &s);
}

/* Appends the frame of an address in a space to the current chain. */
static void resolve(struct frame_cache *fc, void *ctx, uint64_t space, uint64_t ip)
{
	uint32_t id = frame_id(fc, ctx, space, ip, &fc->uncached);

	if (id == FRAME_CACHE_UNCACHED) {
		/* the chain is not cached either */
		if (!fc->copied)
			copy_chain(fc, fc->ids->len);
		fc->chain_cached = false;
		g_array_append_val(fc->frames, fc->uncached);
		g_array_append_val(fc->ids, id);
		return;
	}
	g_array_append_val(fc->ids, id);
	if (fc->copied)
		g_array_append_vals(fc->frames, &g_array_index(fc->store, struct perf_frame, id), 1);
}

void frame_cache_share_unmapped(struct frame_cache *fc)
{
	fc->share_unmapped = true;
}

void frame_cache_set_files(struct frame_cache *fc, frame_cache_file_fn *fn, void *data)
{
	fc->file_at = fn;
	fc->file_at_data = data;
}

void frame_cache_file_stats(const struct frame_cache *fc, uint64_t *by_file, uint64_t *misplaced)
{
	*by_file = fc->by_file;
	*misplaced = fc->misplaced;
}

uint64_t frame_cache_misplaced(const struct frame_cache *fc, const char **file, uint64_t *ip)
{
	if (!fc->misplaced)
		return 0;
	*file = fc->misplaced_file;
	*ip = fc->misplaced_ip;
	return fc->shared_before;
}

void frame_cache_set_may_map(struct frame_cache *fc, frame_cache_may_map_fn *fn, void *data)
{
	fc->may_map = fn;
	fc->may_map_data = data;
}

uint64_t frame_cache_space(const struct frame_cache *fc)
{
	return fc->space;
}

bool frame_cache_claim_word(struct frame_cache *fc)
{
	bool mine = !fc->word_claimed;

	fc->word_claimed = true;
	return mine;
}

void frame_cache_prefetch(const struct frame_cache *fc, const struct frame_addr *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		__builtin_prefetch(&fc->slots[mix(a[i].space, a[i].ip) & (fc->nslots - 1)]);
}

void frame_cache_set_lean(struct frame_cache *fc)
{
	fc->lean = true;
}

uint32_t *frame_cache_word(struct frame_cache *fc, void *ctx, uint64_t space, uint64_t ip,
			   uint32_t *id)
{
	struct slot *s;

	fc->made = false;
	fc->shared = false;
	fc->word_space = space;
	fc->word_ip = ip;
	*id = fc->word_id = frame_slot(fc, ctx, space, ip, &fc->uncached, &s);
	return s ? &s->word : NULL;
}

bool frame_cache_word_shared(const struct frame_cache *fc)
{
	return fc->shared;
}

const struct perf_frame *frame_cache_word_frame(struct frame_cache *fc, void *ctx)
{
	struct perf_dlfilter_al al;
	bool found;

	if (fc->made)
		return &fc->uncached;
	if (!fc->lean)
		return &g_array_index(fc->store, struct perf_frame, fc->word_id);
	/* not kept: resolved again, as it was when cached */
	found = locate(fc, ctx, fc->word_space, fc->word_ip, &al);
	fill_transient(fc, fc->word_ip, found, &al, &fc->uncached);
	return &fc->uncached;
}

size_t frame_cache_chain(struct frame_cache *fc,
			 const struct perf_dlfilter_sample *sample, void *ctx)
{
	uint64_t space = fc->space;
	unsigned entries = 0;
	GString *key = fc->chain_key;
	struct fk_str hit;

	g_assert(!fc->lean);
	g_array_set_size(fc->ids, 0);
	fc->chain_cached = true;
	fc->copied = false;
	/* the raw entries name the same frames in the same space (kernel
	 * entries in any) until the space's generation changes */
	if (fc->space != NO_SPACE) {
		g_string_truncate(key, 0);
		g_string_append_len(key, (const char *)&fc->space, sizeof(fc->space));
		g_string_append_len(key, (const char *)sample->raw_callchain,
				    (gssize)(sample->raw_callchain_nr * sizeof(uint64_t)));
		if (strmap_get(fc->chains, key->str, key->len, &hit)) {
			memcpy(&fc->chain_id, hit.s, sizeof(uint32_t));
			g_array_set_size(fc->ids, (guint)(hit.len / sizeof(uint32_t) - 1));
			memcpy(fc->ids->data, hit.s + sizeof(uint32_t), hit.len - sizeof(uint32_t));
			return fc->ids->len;
		}
	}
	fc->chain_id = FRAME_CACHE_NO_CHAIN;
	for (uint64_t i = 0; i < sample->raw_callchain_nr && entries < fc->max_stack; i++) {
		uint64_t ip = sample->raw_callchain[i];
		enum frame_chain_entry e = frame_chain_entry(ip, fc->space, &space);

		if (e == FRAME_CHAIN_MARK)
			continue;
		if (e == FRAME_CHAIN_DROP) {
			g_array_set_size(fc->ids, 0);
			g_array_set_size(fc->frames, 0);
			fc->chain_cached = false;
			fc->copied = true;
			return 0;
		}
		entries++;
		resolve(fc, ctx, space, ip);
	}
	if (fc->space != NO_SPACE && fc->chain_cached && fc->nchains < FRAME_CACHE_NO_CHAIN) {
		/* the id first, then the frames' */
		g_array_prepend_val(fc->ids, fc->nchains);
		if (strmap_put(fc->chains, key->str, key->len, fc->ids->data,
			       fc->ids->len * sizeof(uint32_t)))
			fc->chain_id = fc->nchains++;
		g_array_remove_index(fc->ids, 0);
	}
	return fc->ids->len;
}

const struct perf_frame *frame_cache_frames(struct frame_cache *fc)
{
	if (!fc->copied)
		copy_chain(fc, fc->ids->len);
	return (const struct perf_frame *)(const void *)fc->frames->data;
}

const struct perf_frame *frame_cache_store(const struct frame_cache *fc)
{
	return (const struct perf_frame *)(const void *)fc->store->data;
}

uint32_t frame_cache_chain_id(const struct frame_cache *fc)
{
	return fc->chain_cached ? fc->chain_id : FRAME_CACHE_NO_CHAIN;
}

const uint32_t *frame_cache_chain_ids(const struct frame_cache *fc)
{
	return fc->chain_cached ? (const uint32_t *)(const void *)fc->ids->data : NULL;
}

size_t frame_cache_ip(struct frame_cache *fc,
		      const struct perf_dlfilter_sample *sample, void *ctx)
{
	const struct perf_dlfilter_al *al = fc->fns->resolve_ip(ctx);
	struct perf_frame f;
	int n;

	memset(&f, 0, sizeof(f));
	/* perf script prints the sample's own address absolute */
	n = snprintf(fc->ipbuf, sizeof(fc->ipbuf), "%" G_GINT64_MODIFIER "x",
		     (uint64_t)sample->ip);
	f.pc.s = fc->ipbuf;
	f.pc.len = (size_t)n;
	f.sym = str_of(UNKNOWN);
	f.dso = str_of(UNKNOWN);
	if (al) {
		if (al->sym) {
			/* interned: this runs for every sample */
			g_string_printf(fc->scratch, "%s+0x%x", al->sym, al->symoff);
			f.sym = str_of(g_string_chunk_insert_const(fc->names, fc->scratch->str));
		}
		if (al->dso) {
			f.dso = str_of(g_string_chunk_insert_const(fc->names, al->dso));
			note_build_id(fc, f.dso.s, al);
		}
	}
	g_array_set_size(fc->frames, 0);
	g_array_append_val(fc->frames, f);
	g_array_set_size(fc->ids, 0);
	fc->chain_cached = false;
	fc->copied = true;
	return 1;
}
