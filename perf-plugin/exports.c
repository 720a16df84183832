#include "exports.h"

#include "core/error.h"
#include "core/intern.h"
#include "core/outfile.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "profiles.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A stack's text as its process name and frames: its hash, the name's
 * index + 1 (0: an empty slot) and its stack handle.  The frames are the
 * handle's: they are not kept twice.
 */
struct path_slot {
	uint64_t hash;
	uint32_t proc1, stack;
};

/* A speedscope document and the stack handles of the folded keys seen. */
struct doc {
	struct ss_doc *d;
	struct fk_intern *keys;
	GArray *stacks;		/* uint32_t stack handle, by key index */
	GHashTable *by_id;	/* the caller's stack id -> stack handle + 1 */
	GArray *by_stack;	/* speedscope=FILE's: uint32_t stack handle + 1
				 * (0: not seen), by the caller's stack number */
	GHashTable *by_number;	/* a process's (split): the caller's stack
				 * number + 1 -> stack handle + 1 (an array
				 * per process would grow with every process's
				 * stacks) */
	/* exports_sample_stack()'s: a stack number new to the doc is found
	 * by its frames, not its text */
	GArray *name_frame;	/* speedscope=FILE's: uint32_t NAME_* by name id */
	GHashTable *name_frames;	/* a process's (split): name id + 1 -> NAME_* */
	struct fk_intern *procs;	/* process names -> i */
	struct path_slot *paths;	/* (process name i, frames) -> stack
					 * handle: open addressing */
	size_t npaths, path_mask;
	int pid;		/* split: the process; its name is the main thread's */
	char *comm;
};

/*
 * What a doc knows of a name id (stacks.h): 0 nothing yet; else its one
 * frame's index + 1, or NAME_SPLIT: its text holds more than one frame
 * (an inlined chain), split at each use.
 */
#define NAME_SPLIT (UINT32_C(1) << 31)

struct thread {
	int pid, tid;
	char *comm;
	struct ss_profile *prof[2];	/* in x->all, in its process's doc */
	size_t pend[2];			/* off-CPU: the wait's sample */
	bool pending;
	uint32_t lset;			/* pprof: its labels (its current name) */
	uint32_t pchain;		/* off-CPU: the wait's pprof chain */
	uint32_t last;			/* exports_sample_stack(): its last
					 * sample's stack number + 1 (0: none) */
	uint32_t last_h[2];		/* and its stack handles + 1 */
};

/*
 * A pprof location as the samples found it; it is made in the profile
 * (id) only when written, and only if a selected process's sample has it.
 */
struct loc {
	struct fk_str dso;	/* interned by the frame cache */
	uint64_t addr;
	const char *names;	/* the folded output's, ';' between inlined */
	size_t nlen;
	uint64_t id;		/* 0 until made */
};

/* Threads found without a lookup: many run in turn on a few CPUs. */
#define RECENT_THREADS 256

struct exports {
	struct export_opts o;
	struct doc *all;		/* speedscope=FILE */
	GHashTable *procs;		/* pid -> struct doc, speedscope split */
	GHashTable *threads;		/* pid << 32 | tid -> struct thread */
	GHashTable *by_tid;		/* off-CPU: tid -> its latest struct thread */
	struct thread *recent[RECENT_THREADS];	/* by tid, modulo: its latest */
	bool typed;			/* the units are known */
	enum ss_unit unit;
	struct pprof_builder *pp;
	struct fk_intern *locs;		/* (dso, address, java) -> index */
	GArray *loc_info;		/* struct loc, by index */
	GStringChunk *loc_names;	/* their names */
	GHashTable *maps;		/* dso (interned) -> pprof mapping id */
	/* pprof: a sample's locations are a chain; weights are summed per
	 * (chain, labels) and added to the profile when it is written */
	struct fk_intern *chains;	/* location indexes -> chain */
	GHashTable *slot_locs[2];	/* a frame's pc text -> location index + 1,
					 * as the sample's leaf [0] or a caller [1] */
	GArray *chain_off;		/* size_t: a chain's first location */
	GArray *chain_locs;		/* uint64_t location indexes, chain after chain */
	struct fk_idmap *pairs;		/* chain << 32 | label set -> i */
	GArray *pair_weights;		/* fk_count, by i */
	struct fk_intern *lsets;	/* "PID TID COMM" -> label set */
	GString *chain_key;
	GArray *lines;			/* struct pprof_line */
	GString *tmp, *names;
	GString *key;			/* exports_sample_stack()'s */
	uint32_t *path;			/* a stack's frames (doc_stack_view()) */
	size_t npath, path_cap;
	/* exports_write_begin()'s thread, and what it was given and gives */
	pthread_t writer;
	bool writing;
	const char *(*name_of)(void *data, int pid);
	bool (*selected)(void *data, int pid);
	void *data;
	int write_rc;
	size_t write_nfiles;
	GError *write_err;
};

static struct doc *doc_new(const char *name, int pid, const char *comm)
{
	struct doc *d = g_new0(struct doc, 1);

	d->d = ss_doc_new(name);
	d->keys = fk_intern_new();
	d->stacks = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	d->by_id = g_hash_table_new(g_direct_hash, g_direct_equal);
	d->by_stack = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	d->by_number = g_hash_table_new(g_direct_hash, g_direct_equal);
	if (pid < 0)
		d->name_frame = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	else
		d->name_frames = g_hash_table_new(g_direct_hash, g_direct_equal);
	d->procs = fk_intern_new();
	d->pid = pid;
	d->comm = g_strdup(comm);
	return d;
}

static void doc_free(gpointer p)
{
	struct doc *d = p;

	if (!d)
		return;
	ss_doc_free(d->d);
	fk_intern_free(d->keys);
	g_array_free(d->stacks, TRUE);
	g_hash_table_destroy(d->by_id);
	g_array_free(d->by_stack, TRUE);
	g_hash_table_destroy(d->by_number);
	if (d->name_frame)
		g_array_free(d->name_frame, TRUE);
	if (d->name_frames)
		g_hash_table_destroy(d->name_frames);
	fk_intern_free(d->procs);
	g_free(d->paths);
	g_free(d->comm);
	g_free(d);
}

static void thread_free(gpointer p)
{
	struct thread *t = p;

	g_free(t->comm);
	g_free(t);
}

struct exports *exports_new(const struct export_opts *o)
{
	struct exports *x;

	if (!o->speedscope && !(o->speedscope_split && o->split) && !o->pprof)
		return NULL;
	x = g_new0(struct exports, 1);
	x->o = *o;
	if (o->speedscope) {
		char *base = g_path_get_basename(o->speedscope);

		x->all = doc_new(base, -1, NULL);
		g_free(base);
	}
	if (o->speedscope_split && o->split)
		x->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, doc_free);
	x->threads = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, thread_free);
	x->by_tid = g_hash_table_new(g_direct_hash, g_direct_equal);
	x->locs = fk_intern_new();
	x->loc_info = g_array_new(FALSE, FALSE, sizeof(struct loc));
	x->loc_names = g_string_chunk_new(1 << 14);
	x->maps = g_hash_table_new(g_direct_hash, g_direct_equal);
	x->chains = fk_intern_new();
	x->slot_locs[0] = g_hash_table_new(g_direct_hash, g_direct_equal);
	x->slot_locs[1] = g_hash_table_new(g_direct_hash, g_direct_equal);
	x->chain_off = g_array_new(FALSE, FALSE, sizeof(size_t));
	x->chain_locs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	x->pairs = fk_idmap_new();
	x->pair_weights = g_array_new(FALSE, FALSE, sizeof(fk_count));
	x->lsets = fk_intern_new();
	x->chain_key = g_string_new(NULL);
	x->lines = g_array_new(FALSE, FALSE, sizeof(struct pprof_line));
	x->tmp = g_string_new(NULL);
	x->names = g_string_new(NULL);
	x->key = g_string_new(NULL);
	return x;
}

static int write_all(struct exports *x, const char *(*name_of)(void *data, int pid),
		     bool (*selected)(void *data, int pid), void *data, size_t *nfiles,
		     GError **err);

void exports_free(struct exports *x)
{
	if (!x)
		return;
	if (x->writing)
		pthread_join(x->writer, NULL);
	g_clear_error(&x->write_err);
	doc_free(x->all);
	if (x->procs)
		g_hash_table_destroy(x->procs);
	g_hash_table_destroy(x->threads);
	g_hash_table_destroy(x->by_tid);
	pprof_free(x->pp);
	fk_intern_free(x->locs);
	g_array_free(x->loc_info, TRUE);
	g_string_chunk_free(x->loc_names);
	g_hash_table_destroy(x->maps);
	fk_intern_free(x->chains);
	g_hash_table_destroy(x->slot_locs[0]);
	g_hash_table_destroy(x->slot_locs[1]);
	g_array_free(x->chain_off, TRUE);
	g_array_free(x->chain_locs, TRUE);
	fk_idmap_free(x->pairs);
	g_array_free(x->pair_weights, TRUE);
	fk_intern_free(x->lsets);
	g_string_free(x->chain_key, TRUE);
	g_array_free(x->lines, TRUE);
	g_string_free(x->tmp, TRUE);
	g_string_free(x->names, TRUE);
	g_string_free(x->key, TRUE);
	g_free(x->path);
	g_free(x);
}

/* The units, from the first sample's event (the plugin keeps one). */
static void set_units(struct exports *x, const struct perf_event_attr *attr,
		      const char *event)
{
	char *type;

	x->typed = true;
	if (x->o.offcpu) {
		x->unit = SS_UNIT_MICROSECONDS;
		if (x->o.pprof)
			x->pp = pprof_new("off_cpu", "nanoseconds");
		return;
	}
	if (attr && attr->type == PERF_TYPE_SOFTWARE &&
	    (attr->config == PERF_COUNT_SW_CPU_CLOCK || attr->config == PERF_COUNT_SW_TASK_CLOCK)) {
		/* the period of a clock event is the nanoseconds it stands for */
		x->unit = SS_UNIT_NANOSECONDS;
		if (x->o.pprof)
			x->pp = pprof_new("cpu", "nanoseconds");
		return;
	}
	x->unit = SS_UNIT_NONE;
	if (!x->o.pprof)
		return;
	if (attr && attr->type == PERF_TYPE_TRACEPOINT) {
		x->pp = pprof_new("samples", "count");	/* each weighs 1 */
		return;
	}
	type = g_strndup(event, strcspn(event, ":"));	/* "cycles:P" */
	x->pp = pprof_new(*type ? type : "events", "count");
	g_free(type);
}

/* pprof's labels of a thread under a name: samples keep the name they
 * were taken under, as in the folded output */
static uint32_t label_set(struct exports *x, int pid, int tid, const char *comm)
{
	g_string_printf(x->tmp, "%d %d %s", pid, tid, comm);
	return fk_intern_id(x->lsets, x->tmp->str, x->tmp->len, NULL);
}

static struct thread *get_thread(struct exports *x, int pid, int tid, const char *comm)
{
	gint64 k = (gint64)((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid);
	struct thread **recent = &x->recent[(uint32_t)tid % RECENT_THREADS], *t = *recent;

	if (t && t->pid == pid && t->tid == tid && strcmp(t->comm, comm) == 0)
		return t;
	t = g_hash_table_lookup(x->threads, &k);

	if (!t) {
		gint64 *key = g_new(gint64, 1);

		*key = k;
		t = g_new0(struct thread, 1);
		t->pid = pid;
		t->tid = tid;
		t->comm = g_strdup(comm);
		t->lset = label_set(x, pid, tid, comm);
		g_hash_table_insert(x->threads, key, t);
	} else if (strcmp(t->comm, comm) != 0) {
		g_free(t->comm);
		t->comm = g_strdup(comm);
		t->lset = label_set(x, pid, tid, comm);
		g_string_printf(x->tmp, "%s %d/%d", comm, pid, tid);
		for (int i = 0; i < 2; i++)
			if (t->prof[i])
				ss_profile_set_name(t->prof[i], x->tmp->str);
	}
	/* (a recent thread is its tid's latest: the same slot) */
	if (x->o.offcpu && g_hash_table_lookup(x->by_tid, GINT_TO_POINTER(tid)) != t)
		g_hash_table_insert(x->by_tid, GINT_TO_POINTER(tid), t);
	*recent = t;
	return t;
}

static struct doc *proc_doc(struct exports *x, int pid, int tid, const char *comm)
{
	struct doc *d = g_hash_table_lookup(x->procs, GINT_TO_POINTER(pid));

	if (!d) {
		d = doc_new(comm, pid, comm);
		g_hash_table_insert(x->procs, GINT_TO_POINTER(pid), d);
	} else if (tid == pid && strcmp(d->comm, comm) != 0) {
		/* the main thread names the process, as in split's folded files */
		g_free(d->comm);
		d->comm = g_strdup(comm);
	}
	return d;
}

/* The length of the process frame the collapser put first in a key. */
static size_t process_frame_len(const struct exports *x, const char *comm,
				const struct perf_dlfilter_sample *ds)
{
	char buf[32];

	if (x->o.tid)
		return strlen(comm) + (size_t)snprintf(buf, sizeof(buf), "-%d/%d", ds->pid, ds->tid);
	if (x->o.pid)
		return strlen(comm) + (size_t)snprintf(buf, sizeof(buf), "-%d", ds->pid);
	return strlen(comm);
}

/*
 * With inline context a folded name is "NAME:FILE:LINE": splits it,
 * returning NAME's length, or len when it has no such suffix.
 */
static size_t split_srcline(const char *s, size_t len, const char **file,
			    size_t *flen, uint32_t *line)
{
	size_t i = len, colon;

	while (i > 0 && g_ascii_isdigit(s[i - 1]))
		i--;
	if (i == len || i < 3 || s[i - 1] != ':' || len - i > 9)
		return len;
	colon = i - 1;
	for (i = colon; i > 0 && s[i - 1] != ':'; i--)
		;
	if (i < 2 || i == colon)
		return len;
	*file = s + i;
	*flen = colon - i;
	*line = (uint32_t)strtoul(s + colon + 1, NULL, 10);
	return i - 1;
}

/*
 * The stack handle of a key's frames below the process frame; id, when
 * not NULL, stands for the key (its table entry) and is cheaper to look
 * up than the key's bytes.
 */
static uint32_t doc_stack(struct exports *x, struct doc *d, const void *id,
			  const char *key, size_t len, size_t root)
{
	bool added;
	uint32_t i, st;
	const char *s = key + root + 1;
	size_t n = root < len ? len - root - 1 : 0;
	gpointer hit = id ? g_hash_table_lookup(d->by_id, id) : NULL;

	if (hit)
		return GPOINTER_TO_UINT(hit) - 1;
	i = fk_intern_id(d->keys, key, len, &added);
	if (!added) {
		st = g_array_index(d->stacks, uint32_t, i);
		if (id)
			g_hash_table_insert(d->by_id, (gpointer)id, GUINT_TO_POINTER(st + 1));
		return st;
	}
	if (!x->o.context) {
		st = ss_doc_stack_folded(d->d, n ? s : "", n, false);
	} else {
		GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
		size_t pos = 0;

		while (n && pos <= n) {
			const char *semi = memchr(s + pos, ';', n - pos), *file = NULL;
			size_t end = semi ? (size_t)(semi - s) : n, flen = 0;
			uint32_t line = 0, f;
			size_t nl = split_srcline(s + pos, end - pos, &file, &flen, &line);

			f = ss_frame_at(d->d, s + pos, nl, file, flen, line);
			g_array_append_val(ids, f);
			pos = end + 1;
		}
		st = ss_doc_stack(d->d, (const uint32_t *)(void *)ids->data, ids->len);
		g_array_free(ids, TRUE);
	}
	g_array_append_val(d->stacks, st);
	if (id)
		g_hash_table_insert(d->by_id, (gpointer)id, GUINT_TO_POINTER(st + 1));
	return st;
}

/* Appends frame f to x->path. */
static inline void path_push(struct exports *x, uint32_t f)
{
	if (x->npath == x->path_cap) {
		x->path_cap = x->path_cap ? x->path_cap * 2 : 256;
		x->path = g_renew(uint32_t, x->path, x->path_cap);
	}
	x->path[x->npath++] = f;
}

/* Appends the frames of name id nid ("NAME", or "A;B" split) to x->path. */
static void name_frames(struct exports *x, struct doc *d, struct stacks *sk, uint32_t nid)
{
	uint32_t *known = NULL, v = 0, f;
	struct fk_str t;
	size_t pos = 1;

	if (d->name_frame) {
		if (nid >= d->name_frame->len)
			g_array_set_size(d->name_frame, nid + 1);
		known = &g_array_index(d->name_frame, uint32_t, nid);
		v = *known;
	} else {
		v = GPOINTER_TO_UINT(g_hash_table_lookup(d->name_frames, GUINT_TO_POINTER(nid + 1)));
	}
	if (v && v != NAME_SPLIT) {
		path_push(x, v - 1);
		return;
	}
	t = stacks_name(sk, nid);	/* ";NAME" */
	if (!v && !memchr(t.s + 1, ';', t.len - 1)) {
		f = ss_frame(d->d, t.s + 1, t.len - 1);
		path_push(x, f);
		v = f + 1;
	} else {
		/* as frame_path_ids() splits a text: "a;;b" has an empty frame */
		while (pos <= t.len) {
			const char *semi = memchr(t.s + pos, ';', t.len - pos);
			size_t end = semi ? (size_t)(semi - t.s) : t.len;

			f = ss_frame(d->d, t.s + pos, end - pos);
			path_push(x, f);
			pos = end + 1;
		}
		v = NAME_SPLIT;
	}
	if (known)
		*known = v;
	else
		g_hash_table_insert(d->name_frames, GUINT_TO_POINTER(nid + 1), GUINT_TO_POINTER(v));
}

/* Room for one more path in d->paths (a power of two, at most half full). */
static void paths_reserve(struct doc *d)
{
	size_t n = d->path_mask ? (d->path_mask + 1) * 2 : 1024;
	struct path_slot *old = d->paths;

	if (d->path_mask && (d->npaths + 1) * 2 <= d->path_mask + 1)
		return;
	d->paths = g_new0(struct path_slot, n);
	for (size_t k = 0; old && k <= d->path_mask; k++) {
		size_t i = old[k].hash & (n - 1);

		if (!old[k].proc1)
			continue;
		while (d->paths[i].proc1)
			i = (i + 1) & (n - 1);
		d->paths[i] = old[k];
	}
	g_free(old);
	d->path_mask = n - 1;
}

/*
 * doc_stack() of a stack of stacks.h by its number, without its text:
 * the same handle, the same frames made in the same order.  A text seen
 * before is its process name and frames seen before (two processes of
 * one name with tables of their own; an inlined chain's name); a new one
 * is made as ss_doc_stack_folded() makes a text's (ss_doc_stack_next()).
 */
static uint32_t doc_stack_view(struct exports *x, struct doc *d, struct stacks *sk,
			       uint32_t stack, size_t root)
{
	struct stack_view v;
	uint32_t proc1;
	uint64_t h;
	size_t i;

	stacks_view(sk, stack, &v);
	if (!v.proc_name.len) {
		/* the root frame's text differs from its name's: by text */
		stacks_key(sk, v.proc, stack, x->key);
		return doc_stack(x, d, NULL, x->key->str, x->key->len, root);
	}
	proc1 = fk_intern_id(d->procs, v.proc_name.s, v.proc_name.len, NULL) + 1;
	x->npath = 0;
	/* a text "PROC;" has no frames, not an empty one */
	if (v.n > 1 || (v.n == 1 && stacks_name(sk, v.names[0]).len > 1))
		for (uint32_t k = v.n; k-- > 0;)	/* root first */
			name_frames(x, d, sk, v.names[k]);
	h = (uint64_t)proc1 * 0x9e3779b97f4a7c15ULL ^ x->npath;
	for (size_t k = 0; k < x->npath; k++) {
		h = (h ^ x->path[k]) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	paths_reserve(d);
	for (i = h & d->path_mask; d->paths[i].proc1; i = (i + 1) & d->path_mask) {
		const struct path_slot *p = &d->paths[i];

		if (p->hash == h && p->proc1 == proc1 &&
		    ss_doc_stack_is(d->d, p->stack, x->path, x->npath))
			return p->stack;
	}
	d->paths[i] = (struct path_slot){ h, proc1, ss_doc_stack_next(d->d, x->path, x->npath) };
	d->npaths++;
	return d->paths[i].stack;
}

static struct ss_profile *thread_profile(struct exports *x, struct thread *t,
					 struct doc *d, int k)
{
	if (!t->prof[k]) {
		g_string_printf(x->tmp, "%s %d/%d", t->comm, t->pid, t->tid);
		t->prof[k] = ss_profile_new(d->d, x->tmp->str, x->unit);
		ss_profile_set_order(t->prof[k], (uint64_t)(uint32_t)t->pid << 32 | (uint32_t)t->tid);
	}
	return t->prof[k];
}

/* --- pprof */

static uint64_t mapping_of(struct exports *x, const struct loc *l)
{
	gpointer id = g_hash_table_lookup(x->maps, l->dso.s);
	char *dso;
	const char *bid;

	if (id)
		return GPOINTER_TO_SIZE(id);
	dso = g_strndup(l->dso.s, l->dso.len);
	bid = frame_cache_build_id(x->o.frames, l->dso.s);
	id = GSIZE_TO_POINTER(pprof_mapping(x->pp, 0, 0, 0, dso, bid));
	g_free(dso);
	g_hash_table_insert(x->maps, (gpointer)l->dso.s, id);
	return GPOINTER_TO_SIZE(id);
}

/*
 * The frame's names as the folded output has them, outermost first: a
 * caller (not the sample's leaf) at its call, address - 1, as the
 * collapser asks (collapse.h), so that pprof's lines are the folded
 * output's.
 */
static void frame_names(struct exports *x, const struct perf_frame *f, bool java,
			bool caller)
{
	const struct inline_resolver *ir = x->o.inliner;

	g_string_truncate(x->names, 0);
	if (ir && ir->resolve && ir->resolve(ir->self, f, ir->context, caller, x->names))
		return;
	frame_name_append(x->names, x->o.names, f, java);
}

/*
 * The location of a frame: cached by its binary (an interned name),
 * address and role, which name it whatever the process (a JIT map's name
 * holds its pid; an unknown binary's address is absolute).  Its address
 * is the frame's, as perf gave it; a caller's (a return address) is named
 * where the call was made, so the same address as a sample's leaf (the
 * instruction after a call that returned) is another location, with the
 * lines of its own instruction.  Returns its index.
 */
static uint32_t location_of(struct exports *x, const struct perf_frame *f, bool java,
			    bool caller)
{
	struct { const char *dso; uint64_t addr; bool java, caller; } k;
	bool added;
	uint32_t i;
	struct loc l;

	memset(&k, 0, sizeof(k));
	k.dso = f->dso.s;
	k.addr = g_ascii_strtoull(f->pc.s, NULL, 16);
	k.java = java;
	/* without an inliner the names are the frame's own, whatever it is */
	k.caller = caller && x->o.inliner;
	i = fk_intern_id(x->locs, &k, sizeof(k), &added);
	if (!added)
		return i;
	frame_names(x, f, java, k.caller);
	l.dso = f->dso;
	l.addr = k.addr;
	l.names = g_string_chunk_insert_len(x->loc_names, x->names->str, (gssize)x->names->len);
	l.nlen = x->names->len;
	l.id = 0;
	g_array_append_val(x->loc_info, l);
	return i;
}

/* Makes location i in the profile, once; returns its id. */
static uint64_t location_id(struct exports *x, uint32_t i)
{
	struct loc *l = &g_array_index(x->loc_info, struct loc, i);
	size_t pos = 0;
	const char *s = l->names;

	if (l->id)
		return l->id;
	g_array_set_size(x->lines, 0);
	while (pos <= l->nlen) {		/* innermost first */
		const char *semi = memchr(s + pos, ';', l->nlen - pos), *file = NULL;
		size_t end = semi ? (size_t)(semi - s) : l->nlen, flen = 0, nl = end - pos;
		uint32_t line = 0;
		struct pprof_line ln;

		if (x->o.context)
			nl = split_srcline(s + pos, end - pos, &file, &flen, &line);
		ln.function = pprof_function(x->pp, s + pos, nl, file, flen);
		ln.line = line;
		g_array_prepend_val(x->lines, ln);
		pos = end + 1;
	}
	l->id = pprof_location(x->pp, mapping_of(x, l), l->addr,
			       (const struct pprof_line *)(void *)x->lines->data, x->lines->len);
	return l->id;
}

/*
 * The chain of frames[0..n): its locations (a frame of a call chain is
 * looked up by its text's address, unique to the frame cache's slot for
 * a process and address; a sample's own frame, own is true, shares one
 * buffer and is looked up by content), then the chain by them.
 */
static uint32_t chain_of(struct exports *x, const struct perf_frame *frames,
			 size_t n, bool java, bool own)
{
	bool added;
	uint32_t c;
	uint64_t *locs;
	size_t leaf = perf_frames_leaf(frames, n);

	g_string_set_size(x->chain_key, n * sizeof(uint64_t));
	locs = (uint64_t *)(void *)x->chain_key->str;
	for (size_t i = 0; i < n; i++) {
		GHashTable *slots = x->slot_locs[i > leaf];
		gpointer hit = own ? NULL : g_hash_table_lookup(slots, frames[i].pc.s);
		uint64_t id = hit ? GPOINTER_TO_SIZE(hit) - 1
				  : location_of(x, &frames[i], java, i > leaf);

		if (!hit && !own)
			g_hash_table_insert(slots, (gpointer)frames[i].pc.s, GSIZE_TO_POINTER(id + 1));
		memcpy(&locs[i], &id, sizeof(id));
	}
	c = fk_intern_id(x->chains, x->chain_key->str, x->chain_key->len, &added);
	if (added) {
		size_t off = x->chain_locs->len;

		g_array_append_val(x->chain_off, off);
		g_array_append_vals(x->chain_locs, x->chain_key->str, (guint)n);
	}
	return c;
}

static void pprof_count(struct exports *x, uint32_t chain, const struct thread *t,
			fk_count weight)
{
	bool added;
	uint32_t i = fk_idmap_id(x->pairs, (uint64_t)chain << 32 | t->lset, &added);

	if (added)
		g_array_append_val(x->pair_weights, weight);
	else
		g_array_index(x->pair_weights, fk_count, i) += weight;
}

/* The thread of a sample, the units set by the first. */
static struct thread *sample_thread(struct exports *x, const struct perf_dlfilter_sample *ds,
				    const struct perf_event_attr *attr, const char *comm)
{
	if (!x->typed)
		set_units(x, attr, ds->event);
	return get_thread(x, ds->pid, ds->tid, comm);
}

/* The speedscope document of output k (0: speedscope=, 1: split's), or NULL. */
static struct doc *sample_doc(struct exports *x, int k, const struct perf_dlfilter_sample *ds,
			      const char *comm)
{
	return k == 0 ? x->all : x->procs ? proc_doc(x, ds->pid, ds->tid, comm) : NULL;
}

bool exports_keys_only(const struct exports *x)
{
	return !x->o.pprof && !x->o.context;
}

void exports_sample_stack(struct exports *x, const struct perf_dlfilter_sample *ds,
			  const struct perf_event_attr *attr, const char *comm,
			  struct stacks *sk, uint32_t stack, fk_count weight)
{
	struct thread *t = sample_thread(x, ds, attr, comm);
	/* a thread's stack as before (a loop): its handles are known */
	bool again = t->last == stack + 1;

	g_assert(exports_keys_only(x));
	for (int k = 0; k < 2; k++) {
		struct doc *d = sample_doc(x, k, ds, comm);
		struct ss_profile *p;
		uint32_t h;

		if (!d)
			continue;
		p = thread_profile(x, t, d, k);
		if (again) {
			h = t->last_h[k];
		} else if (k == 0) {
			if (stack >= d->by_stack->len)
				g_array_set_size(d->by_stack, stack + 1);
			h = g_array_index(d->by_stack, uint32_t, stack);
		} else {
			h = GPOINTER_TO_UINT(g_hash_table_lookup(d->by_number,
								 GUINT_TO_POINTER(stack + 1)));
		}
		if (!h) {
			h = doc_stack_view(x, d, sk, stack, process_frame_len(x, comm, ds)) + 1;
			if (k == 0)
				g_array_index(d->by_stack, uint32_t, stack) = h;
			else
				g_hash_table_insert(d->by_number, GUINT_TO_POINTER(stack + 1),
						    GUINT_TO_POINTER(h));
		}
		t->last_h[k] = h;
		t->pend[k] = ss_profile_add_stack(p, h - 1, weight);
	}
	t->last = stack + 1;
	t->pending = x->o.offcpu;
}

void exports_sample(struct exports *x, const struct perf_dlfilter_sample *ds,
		    const struct perf_event_attr *attr, const char *comm,
		    const void *id, const char *key, size_t len,
		    const struct perf_frame *frames, size_t n, fk_count weight)
{
	struct thread *t = sample_thread(x, ds, attr, comm);
	size_t root = process_frame_len(x, comm, ds);

	for (int k = 0; k < 2; k++) {
		struct doc *d = sample_doc(x, k, ds, comm);
		struct ss_profile *p;

		if (!d)
			continue;
		p = thread_profile(x, t, d, k);
		t->pend[k] = ss_profile_add_stack(p, doc_stack(x, d, id, key, len, root), weight);
	}
	if (x->pp) {
		/* as fill_sample(): without call chains, the sample's own frame */
		bool own = attr && !(attr->sample_type & PERF_SAMPLE_CALLCHAIN);
		uint32_t c = chain_of(x, frames, n, strcmp(comm, "java") == 0, own);

		if (x->o.offcpu)
			t->pchain = c;
		else
			pprof_count(x, c, t, weight);
	}
	t->pending = x->o.offcpu;
}

void exports_credit(void *data, int tid, uint64_t since, uint64_t ns)
{
	struct exports *x = data;
	struct thread *t = g_hash_table_lookup(x->by_tid, GINT_TO_POINTER(tid));

	if (!t || !t->pending)
		return;
	for (int k = 0; k < 2; k++)
		if (t->prof[k])
			ss_profile_add_weight(t->prof[k], t->pend[k],
					      (fk_count)ns * (FK_COUNT_ONE / 1000));
	if (x->pp)
		pprof_count(x, t->pchain, t, fk_count_from_u64(ns));
	t->pending = false;
}

/* --- writing */

static int write_doc(struct ss_doc *d, const char *path, GError **err)
{
	struct fk_outfile *f = fk_outfile_open(path, err);
	int rc;

	if (!f)
		return -1;
	rc = ss_doc_write(d, fk_outfile_stream(f), path, err);
	return fk_outfile_close(f, rc == 0, rc == 0 ? err : NULL) < 0 ? -1 : rc;
}

/* The process, thread and name of pprof's label set i ("PID TID COMM"). */
static const char *label_text(struct exports *x, uint32_t i, char **text, long *pid, long *tid)
{
	struct fk_str ls = fk_intern_str(x->lsets, i);
	char *comm;

	*text = g_strndup(ls.s, ls.len);
	*pid = strtol(*text, &comm, 10);
	*tid = strtol(comm, &comm, 10);
	return comm + 1;
}

static void keep_error(GError **first, GError *e)
{
	if (!*first)
		g_propagate_error(first, e);
	else
		g_error_free(e);
}

static int write_pprof(struct exports *x, bool (*selected)(void *data, int pid),
		       void *data, GError **err)
{
	uint32_t npairs = fk_idmap_size(x->pairs);
	bool *kept = g_new(bool, npairs + 1);
	GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	struct fk_outfile *f;
	int rc;

	/* the locations first, in the order the samples found them, as
	 * pprof numbers its strings in first-use order */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < npairs; i++) {
			uint64_t k = fk_idmap_key(x->pairs, i);
			uint32_t c = (uint32_t)(k >> 32);
			char *text;
			long pid, tid;
			const char *comm = label_text(x, (uint32_t)k, &text, &pid, &tid);
			size_t off = g_array_index(x->chain_off, size_t, c);
			size_t end = c + 1 < x->chain_off->len
				     ? g_array_index(x->chain_off, size_t, c + 1) : x->chain_locs->len;
			struct pprof_label l[3] = {
				{ .key = "comm", .str = comm },
				{ .key = "pid", .num = pid },
				{ .key = "tid", .num = tid },
			};

			if (pass == 0)
				kept[i] = !selected || selected(data, (int)pid);
			if (!kept[i]) {
				g_free(text);
				continue;
			}
			g_array_set_size(ids, 0);
			for (size_t j = off; j < end; j++) {
				uint64_t id = location_id(x, (uint32_t)g_array_index(x->chain_locs, uint64_t, j));

				g_array_append_val(ids, id);
			}
			/* values are whole: periods, nanoseconds */
			if (pass == 1)
				pprof_add(x->pp, (const uint64_t *)(void *)ids->data, ids->len,
					  l, 3, g_array_index(x->pair_weights, fk_count, i), NULL);
			g_free(text);
		}
	}
	g_free(kept);
	g_array_free(ids, TRUE);
	f = fk_outfile_open(x->o.pprof, err);
	rc = f ? pprof_write(x->pp, fk_outfile_stream(f), x->o.pprof, err) : -1;
	if (f && fk_outfile_close(f, rc == 0, rc == 0 ? err : NULL) < 0)
		rc = -1;
	return rc;
}

static int write_all(struct exports *x, const char *(*name_of)(void *data, int pid),
		     bool (*selected)(void *data, int pid), void *data, size_t *nfiles,
		     GError **err)
{
	GError *first = NULL, *e = NULL;

	*nfiles = 0;
	if (x->all && selected) {
		GHashTableIter it;
		gpointer v;

		g_hash_table_iter_init(&it, x->threads);
		while (g_hash_table_iter_next(&it, NULL, &v)) {
			struct thread *t = v;

			if (t->prof[0] && !selected(data, t->pid)) {
				ss_profile_drop(t->prof[0]);
				t->prof[0] = NULL;
			}
		}
	}
	if (x->all && write_doc(x->all->d, x->o.speedscope, &e) < 0)
		g_propagate_error(&first, e), e = NULL;
	if (x->procs) {
		GHashTableIter it;
		gpointer v;

		g_hash_table_iter_init(&it, x->procs);
		while (g_hash_table_iter_next(&it, NULL, &v)) {
			struct doc *d = v;
			const char *named = name_of ? name_of(data, d->pid) : NULL;
			char *file, *path;

			if (selected && !selected(data, d->pid))
				continue;
			if (named && strcmp(named, d->comm) != 0) {
				g_free(d->comm);
				d->comm = g_strdup(named);
			}
			file = profiles_file_name(d->comm, d->pid);

			/* "<comm>-<pid>.folded" -> "<comm>-<pid>.speedscope.json" */
			file[strlen(file) - strlen(".folded")] = '\0';
			g_string_printf(x->tmp, "%s %d", d->comm, d->pid);
			ss_doc_set_name(d->d, x->tmp->str);
			path = g_strdup_printf("%s/%s.speedscope.json", x->o.split, file);
			if (write_doc(d->d, path, &e) < 0)
				keep_error(&first, e), e = NULL;
			else
				(*nfiles)++;
			g_free(path);
			g_free(file);
		}
	}
	if (x->pp && write_pprof(x, selected, data, &e) < 0 && e)
		keep_error(&first, e), e = NULL;
	if (first) {
		g_propagate_error(err, first);
		return -1;
	}
	return 0;
}

static void *write_run(void *data)
{
	struct exports *x = data;

	x->write_rc = write_all(x, x->name_of, x->selected, x->data, &x->write_nfiles,
				&x->write_err);
	return NULL;
}

bool exports_write_begin(struct exports *x, const char *(*name_of)(void *data, int pid),
			 bool (*selected)(void *data, int pid), void *data)
{
	/* split's files go to the directory the folded output makes; pprof's
	 * build ids come from the frame cache */
	if (x->writing || x->procs || x->o.pprof)
		return false;
	x->name_of = name_of;
	x->selected = selected;
	x->data = data;
	x->writing = pthread_create(&x->writer, NULL, write_run, x) == 0;
	return x->writing;
}

int exports_write(struct exports *x, const char *(*name_of)(void *data, int pid),
		  bool (*selected)(void *data, int pid), void *data, size_t *nfiles,
		  GError **err)
{
	if (!x->writing)
		return write_all(x, name_of, selected, data, nfiles, err);
	pthread_join(x->writer, NULL);
	x->writing = false;
	*nfiles = x->write_nfiles;
	if (x->write_err)
		g_propagate_error(err, g_steal_pointer(&x->write_err));
	return x->write_rc;
}
