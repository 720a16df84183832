#include "collapse/collapse.h"

#include "core/intern.h"
#include "core/strmap.h"

#include <string.h>

/*
 * Call chains repeat: most samples' frame text has been seen before, so
 * the names a chain folds to are cached by its raw text (one cache for
 * "java" processes, whose names are tidied differently).  Bounded: past
 * CHAIN_CACHE_BYTES the cache stops growing and misses are just slower.
 */
#define CHAIN_CACHE_BYTES (256u << 20)

struct event_count {
	char *name;
	size_t len;
	uint64_t samples;
	bool kept;		/* name is the event being aggregated */
};

#define PROC_MEMOS 4

/*
 * What a reader's block (perf_sample.block) folds to: its cached names,
 * and the entry of its last sample's process name.
 */
struct block_rec {
	uint32_t names;		/* the names' id + 1 in names_ids; 0: not yet known */
	uint32_t last_proc;	/* process id + 1 of last's sample, or 0 */
	struct fold_entry *last;
};

/*
 * What a header layout (perf_sample.layout) gives every sample of it: the
 * event's index, and the process name's id.  Direct mapped by the number.
 */
struct layout_rec {
	uint64_t layout;	/* 0: empty */
	guint event;		/* index in events; G_MAXUINT: no event */
	uint32_t proc;		/* process id + 1, or 0: not yet known */
};

#define LAYOUTS 64

/*
 * A chain's names' id and a process name's id -> the stack's entry: open
 * addressing, the key in the slot.
 */
struct pair_slot {
	uint64_t key;		/* names id << 32 | process id, + 1; 0: empty */
	struct fold_entry *e;
};

#define PAIRS_MAX (1u << 20)	/* pairs kept, at most; then misses are slower */

/* A chain numbered by the caller (collapser_add_chain()) */
struct chain_rec {
	struct fk_str names;
	struct fold_entry *last;	/* its latest sample's entry, or NULL */
};

struct collapser {
	struct collapse_opts o;
	struct fold_table *table;
	GString *key;
	char *kept;		/* the event being aggregated */
	GArray *events;		/* struct event_count, first-seen order */
	struct strmap *chains[2];	/* raw frame text -> ";name;name" */
	struct strmap *entries;	/* process name + cached chain address ->
				   its fold_entry: skips building and
				   hashing the whole stack per sample */
	GString *scratch;
	GArray *frames;		/* scratch for parsing */
	/*
	 * collapser_add_chain(): a frame id -> its name id + 1 (0: not named
	 * yet); name ids number the distinct ";NAME"s, so chains are cached
	 * by their names' ids, 4 bytes a frame, not by the names' text.
	 */
	GArray *frame_names[2];
	struct strmap *name_index;	/* ";NAME" -> its id */
	struct strmap *id_chains[2];	/* a chain's name (or frame) ids ->
					 * ";name;name" */
	GArray *name_strs;		/* struct fk_str, by name id */
	GArray *nids;			/* a chain's name ids */
	GString *name_buf;
	GStringChunk *names;
	struct fk_idmap *chain_ids;	/* chain id << 1 | java -> i */
	GArray *chain_names;		/* struct chain_rec, by i */
	GString *names_buf;
	/*
	 * The last PROC_MEMOS process names made, by the comm, pid and tid
	 * they were made from: samples of a few threads interleave, and the
	 * name with its hash is the entries key's larger part.
	 */
	struct proc_memo {
		GString *from;	/* comm, pid, tid bytes, one after another */
		size_t comm_len, pid_len, tid_len;
		GString *name;	/* append_process()'s bytes */
		uint32_t id;	/* name's in procs */
		bool used;
	} proc[PROC_MEMOS];
	unsigned proc_last, proc_next;	/* the last hit; the next to replace */
	struct fk_intern *procs;	/* process names -> ids */
	struct fk_intern *names_ids;	/* chains' names -> ids: one id for
					   the same names, whatever the text */
	struct perf_blocks *blocks;	/* the reader's whose numbers these are */
	struct layout_rec layouts[LAYOUTS];
	GArray *block_recs[2];	/* struct block_rec, by block number */
	struct pair_slot *pairs;
	size_t pairs_mask, npairs;
	/*
	 * Event name -> index + 1 in events.  Event names come from the
	 * input, so a scan of events per sample would make an input with many
	 * distinct events quadratic (50,000 took 3 s); last is the index of
	 * the previous sample's event, which almost every sample repeats.
	 */
	GHashTable *event_index;
	GString *evname;	/* the event being looked up, NUL-terminated */
	guint last;
	/* samples of events past MAX_EVENTS, which are counted, not named */
	uint64_t untracked;
	/* samples named "COMM-?" by include_pid or include_tid */
	uint64_t no_pid;
};

/* Dropped events listed by name in the note; the rest are summed. */
#define NOTE_EVENTS 8
/* Distinct events remembered: memory must not grow with the input. */
#define MAX_EVENTS 1024

struct collapser *collapser_new(const struct collapse_opts *opts)
{
	struct collapser *c = g_new0(struct collapser, 1);

	c->o = *opts;
	c->table = fold_table_new();
	c->key = g_string_sized_new(1024);
	c->events = g_array_new(FALSE, FALSE, sizeof(struct event_count));
	c->event_index = g_hash_table_new(g_str_hash, g_str_equal);
	c->evname = g_string_new(NULL);
	if (opts->event_filter)
		c->kept = g_strdup(opts->event_filter);
	c->chains[0] = strmap_new(CHAIN_CACHE_BYTES);
	c->chains[1] = strmap_new(CHAIN_CACHE_BYTES);
	c->frames = g_array_new(FALSE, FALSE, sizeof(struct perf_frame));
	c->entries = strmap_new(CHAIN_CACHE_BYTES / 4);
	c->scratch = g_string_sized_new(256);
	for (unsigned i = 0; i < PROC_MEMOS; i++) {
		c->proc[i].from = g_string_new(NULL);
		c->proc[i].name = g_string_new(NULL);
	}
	c->frame_names[0] = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	c->frame_names[1] = g_array_new(FALSE, TRUE, sizeof(uint32_t));
	c->name_index = strmap_new(CHAIN_CACHE_BYTES / 4);
	c->id_chains[0] = strmap_new(CHAIN_CACHE_BYTES);
	c->id_chains[1] = strmap_new(CHAIN_CACHE_BYTES);
	c->name_strs = g_array_new(FALSE, FALSE, sizeof(struct fk_str));
	c->nids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	c->name_buf = g_string_sized_new(256);
	c->names = g_string_chunk_new(1 << 16);
	c->chain_ids = fk_idmap_new();
	c->chain_names = g_array_new(FALSE, FALSE, sizeof(struct chain_rec));
	c->names_buf = g_string_sized_new(1024);
	c->procs = fk_intern_new();
	c->names_ids = fk_intern_new();
	c->block_recs[0] = g_array_new(FALSE, TRUE, sizeof(struct block_rec));
	c->block_recs[1] = g_array_new(FALSE, TRUE, sizeof(struct block_rec));
	c->pairs_mask = 1023;
	c->pairs = g_new0(struct pair_slot, c->pairs_mask + 1);
	return c;
}

void collapser_free(struct collapser *c)
{
	if (!c)
		return;
	for (guint i = 0; i < c->events->len; i++)
		g_free(g_array_index(c->events, struct event_count, i).name);
	g_array_free(c->events, TRUE);
	strmap_free(c->chains[0]);
	strmap_free(c->chains[1]);
	strmap_free(c->entries);
	g_string_free(c->scratch, TRUE);
	for (unsigned i = 0; i < PROC_MEMOS; i++) {
		g_string_free(c->proc[i].from, TRUE);
		g_string_free(c->proc[i].name, TRUE);
	}
	g_array_free(c->frames, TRUE);
	g_array_free(c->frame_names[0], TRUE);
	g_array_free(c->frame_names[1], TRUE);
	strmap_free(c->name_index);
	strmap_free(c->id_chains[0]);
	strmap_free(c->id_chains[1]);
	g_array_free(c->name_strs, TRUE);
	g_array_free(c->nids, TRUE);
	g_string_free(c->name_buf, TRUE);
	g_string_chunk_free(c->names);
	fk_idmap_free(c->chain_ids);
	g_array_free(c->chain_names, TRUE);
	g_string_free(c->names_buf, TRUE);
	fk_intern_free(c->procs);
	fk_intern_free(c->names_ids);
	perf_blocks_unref(c->blocks);
	g_array_free(c->block_recs[0], TRUE);
	g_array_free(c->block_recs[1], TRUE);
	g_free(c->pairs);
	g_hash_table_destroy(c->event_index);
	g_string_free(c->evname, TRUE);
	fold_table_free(c->table);
	g_string_free(c->key, TRUE);
	g_free(c->kept);
	g_free(c);
}

struct fold_table *collapser_table(struct collapser *c)
{
	return c->table;
}

/*
 * Counts a sample of event ev; returns whether it is the kept event, and
 * sets *index to its index in events (G_MAXUINT: one past MAX_EVENTS,
 * not tracked).
 */
static bool count_event(struct collapser *c, struct fk_str ev, guint *index)
{
	struct event_count *e = NULL;
	guint at;

	if (c->last < c->events->len) {
		e = &g_array_index(c->events, struct event_count, c->last);
		/* nearly every sample has the event of the one before */
		if (e->len != ev.len || !fk_bytes_equal(e->name, ev.s, ev.len))
			e = NULL;
	}
	if (!e) {
		g_string_truncate(c->evname, 0);
		g_string_append_len(c->evname, ev.s, (gssize)ev.len);
		at = GPOINTER_TO_UINT(g_hash_table_lookup(c->event_index, c->evname->str));
		if (at) {
			c->last = at - 1;
		} else if (c->events->len >= MAX_EVENTS && c->kept &&
			   strcmp(c->evname->str, c->kept) != 0) {
			c->untracked++;
			*index = G_MAXUINT;
			return false;
		} else {
			struct event_count ne = { g_strndup(ev.s, ev.len), ev.len, 0, false };
			if (!c->kept)
				c->kept = g_strdup(ne.name);
			ne.kept = strcmp(ne.name, c->kept) == 0;
			g_array_append_val(c->events, ne);
			c->last = c->events->len - 1;
			/* keys point into events' names, which never move */
			g_hash_table_insert(c->event_index, ne.name,
					    GUINT_TO_POINTER(c->events->len));
		}
		e = &g_array_index(c->events, struct event_count, c->last);
	}
	e->samples++;
	*index = c->last;
	return e->kept;
}

/* the bytes of a comm that are replaced, and by what (see append_process()) */
static const char unsafe_in_name[256] = {
	[' '] = '_', ['\t'] = '_', ['\n'] = '_', ['\r'] = '_', [';'] = ':',
};

static void append_process(struct collapser *c, const struct perf_sample *s,
			   GString *k)
{
	bool pid = c->o.include_pid || c->o.include_tid, tid = c->o.include_tid;
	size_t from = k->len, pidlen = s->pid.len ? s->pid.len : 1;
	size_t need = s->comm.len + (pid ? 1 + pidlen : 0) + (tid ? 1 + s->tid.len : 0);
	char *p;

	/* one resize, then plain copies: this runs for every sample */
	g_string_set_size(k, from + need);
	p = k->str + from;
	/* an empty field may have no address: memcpy() must not see it */
	if (s->comm.len)
		memcpy(p, s->comm.s, s->comm.len);
	p += s->comm.len;
	if (pid) {
		*p++ = '-';
		if (s->pid.len)
			memcpy(p, s->pid.s, s->pid.len);
		else
			*p = '?';
		p += pidlen;
		if (tid) {
			*p++ = '/';
			if (s->tid.len)
				memcpy(p, s->tid.s, s->tid.len);
		}
	}
	/*
	 * A comm is any bytes a thread named itself (the perf plugin gets
	 * it unfiltered): a line break would split the folded line, and a
	 * leading '#' would make it a comment, so either would lose the
	 * samples, and a tab is a blank a reader trims (found by fuzz/plugin.c).
	 * A ';' would split the root frame in two ("nginx;main-12/13": a
	 * thread "nginx", and no comm-pid/tid for fold2pprof's labels): it
	 * becomes ':', as in every frame name (framename.h, rule 3).
	 */
	for (char *q = k->str + from, *end = k->str + k->len; q < end; q++)
		if (unsafe_in_name[(unsigned char)*q])
			*q = unsafe_in_name[(unsigned char)*q];
	if (from == 0 && k->len && k->str[0] == '#')
		k->str[0] = '_';
}

static bool same_bytes(const char *a, struct fk_str b)
{
	return fk_bytes_equal(a, b.s, b.len);
}

/*
 * The sample's process name (append_process()) and its hash, from the
 * memo when one of the last few samples had the same comm (and pid and
 * tid, when they are part of the name).
 */
static const struct proc_memo *process_name(struct collapser *c,
					    const struct perf_sample *s)
{
	bool pid = c->o.include_pid || c->o.include_tid, tid = c->o.include_tid;
	struct fk_str none = { NULL, 0 };
	struct fk_str p = pid ? s->pid : none, t = tid ? s->tid : none;
	struct proc_memo *m;

	for (unsigned k = 0; k < PROC_MEMOS; k++) {
		m = &c->proc[(c->proc_last + k) % PROC_MEMOS];
		if (m->used && m->comm_len == s->comm.len &&
		    m->pid_len == p.len && m->tid_len == t.len &&
		    same_bytes(m->from->str, s->comm) &&
		    same_bytes(m->from->str + s->comm.len, p) &&
		    same_bytes(m->from->str + s->comm.len + p.len, t)) {
			c->proc_last = (c->proc_last + k) % PROC_MEMOS;
			return m;
		}
	}
	c->proc_last = c->proc_next;
	c->proc_next = (c->proc_next + 1) % PROC_MEMOS;
	m = &c->proc[c->proc_last];
	m->comm_len = s->comm.len;
	m->pid_len = p.len;
	m->tid_len = t.len;
	g_string_truncate(m->from, 0);
	g_string_append_len(m->from, s->comm.s, (gssize)s->comm.len);
	g_string_append_len(m->from, p.s, (gssize)p.len);
	g_string_append_len(m->from, t.s, (gssize)t.len);
	g_string_truncate(m->name, 0);
	append_process(c, s, m->name);
	m->used = true;
	m->id = fk_intern_id(c->procs, m->name->str, m->name->len, NULL);
	return m;
}

/* Appends ";NAME" for each frame, root first. */
static void append_frames(struct collapser *c, const struct perf_frame *frames,
			  size_t n, bool java, GString *key)
{
	const struct perf_frame *expanded = NULL;	/* by the inliner */
	size_t mark, leaf = perf_frames_leaf(frames, n);

	for (size_t i = n; i-- > 0;) {
		const struct perf_frame *f = &frames[i];
		/*
		 * perf's "(inlined)" frames sit leafward of their real frame
		 * with its address; once the inliner has expanded that frame
		 * they would only repeat its names.
		 */
		if (f->inlined && expanded && expanded->pc.len == f->pc.len &&
		    memcmp(expanded->pc.s, f->pc.s, f->pc.len) == 0)
			continue;
		if (!f->inlined)
			expanded = NULL;
		mark = key->len + 1;
		g_string_append_c(key, ';');
		if (c->o.inliner && c->o.inliner->resolve &&
		    c->o.inliner->resolve(c->o.inliner->self, f, c->o.inliner->context,
					  i > leaf, key)) {
			/* names from debug information, which any binary chooses */
			frame_name_make_safe(key, mark);
			expanded = f;
			continue;
		}
		frame_name_append(key, &c->o.names, f, java);
	}
}

void collapser_stack_key(struct collapser *c, const struct perf_sample *s,
			 GString *key)
{
	/* stackcollapse-perf.pl tidies Java names only for a process "java" */
	bool java = s->comm.len == 4 && memcmp(s->comm.s, "java", 4) == 0;
	GString *saved = c->key;
	size_t from;

	c->key = key;
	g_string_truncate(key, 0);
	if (s->comm.len)
		append_process(c, s, key);
	from = key->len;
	if (s->frames || (!s->raw.len && !s->inline_frame.len)) {
		append_frames(c, s->frames, s->nframes, java, key);
	} else {
		struct strmap *cache = c->chains[java];
		uint64_t h = fk_hash_bytes(s->raw.s, s->raw.len);
		struct fk_str names;

		if (!s->inline_frame.len &&
		    strmap_get_hashed(cache, h, s->raw.s, s->raw.len, &names)) {
			g_string_append_len(key, names.s, (gssize)names.len);
		} else {
			size_t bad = perf_script_parse_frames(s, c->o.srcline,
							      c->frames, c->o.skips);
			append_frames(c, (struct perf_frame *)(void *)c->frames->data,
				      c->frames->len, java, key);
			/* a chain with unreadable lines is parsed every time,
			 * so that each occurrence is counted */
			if (!bad && !s->inline_frame.len)
				strmap_put_hashed(cache, h, s->raw.s, s->raw.len,
						  key->str + from, key->len - from);
		}
	}
	/* without a process name the root frame needs no separator, and
	 * must not start with '#': the line would read as a comment */
	if (from == 0 && key->len) {
		g_string_erase(key, 0, 1);
		if (key->len && key->str[0] == '#')
			key->str[0] = '_';
	}
	c->key = saved;
}

/*
 * A sample without a process name whose frames name nothing (no call
 * chain, or only comment lines) has no stack to count it under: it is
 * reported, not folded in as an empty stack (which no reader accepts).
 */
static void skip_empty(struct collapser *c, const struct perf_sample *s)
{
	if (c->o.skips)
		skip_log_add(c->o.skips, s->file, s->lineno,
			     "sample with neither a process name nor frames");
}

static inline size_t pair_slot(const struct collapser *c, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & c->pairs_mask;
}

static struct fold_entry *pair_get(const struct collapser *c, uint64_t key)
{
	for (size_t i = pair_slot(c, key);; i = (i + 1) & c->pairs_mask) {
		const struct pair_slot *p = &c->pairs[i];
		if (!p->key || p->key == key)
			return p->e;
	}
}

static void pair_put(struct collapser *c, uint64_t key, struct fold_entry *e)
{
	size_t i;

	if (c->npairs >= PAIRS_MAX)
		return;
	if (++c->npairs * 2 > c->pairs_mask + 1) {
		size_t old_mask = c->pairs_mask;
		struct pair_slot *old = c->pairs;

		c->pairs_mask = old_mask * 2 + 1;
		c->pairs = g_new0(struct pair_slot, c->pairs_mask + 1);
		for (size_t k = 0; k <= old_mask; k++) {
			if (!old[k].key)
				continue;
			for (i = pair_slot(c, old[k].key); c->pairs[i].key;
			     i = (i + 1) & c->pairs_mask)
				;
			c->pairs[i] = old[k];
		}
		g_free(old);
	}
	for (i = pair_slot(c, key); c->pairs[i].key; i = (i + 1) & c->pairs_mask)
		;
	c->pairs[i] = (struct pair_slot){ key, e };
}

/*
 * The stack key of a sample whose chain's names and process name are
 * known: as collapser_stack_key() makes it.
 */
static void key_from_names(struct collapser *c, const struct perf_sample *s,
			   uint32_t proc, struct fk_str names, GString *key)
{
	struct fk_str p = fk_intern_str(c->procs, proc);

	g_string_truncate(key, 0);
	if (s->comm.len)
		g_string_append_len(key, p.s, (gssize)p.len);
	g_string_append_len(key, names.s, (gssize)names.len);
	if (!s->comm.len && key->len) {
		g_string_erase(key, 0, 1);
		if (key->len && key->str[0] == '#')
			key->str[0] = '_';
	}
}

/* Whether the sample's numbers are of the set this collapser keys by. */
static bool our_numbers(struct collapser *c, const struct perf_sample *s)
{
	if (!s->blocks)
		return false;
	if (!c->blocks)
		c->blocks = perf_blocks_ref(s->blocks);
	return s->blocks == c->blocks;
}

/* The record of the sample's block, or NULL when it has none. */
static struct block_rec *block_rec(struct collapser *c, const struct perf_sample *s,
				   bool java)
{
	GArray *a = c->block_recs[java];

	if (!s->block)
		return NULL;
	if (s->block >= a->len)
		g_array_set_size(a, s->block + 1024);
	return &g_array_index(a, struct block_rec, s->block);
}

/*
 * Counts the sample's event (by its layout's record when *lr is one, else
 * filling it); false when the sample is not of the kept event.
 */
static bool layout_event(struct collapser *c, const struct perf_sample *s,
			 struct layout_rec *lr)
{
	guint ev = G_MAXUINT;
	bool kept = true;

	if (lr && lr->layout == s->layout) {
		struct event_count *e;

		if (lr->event == G_MAXUINT)
			return true;
		e = &g_array_index(c->events, struct event_count, lr->event);
		e->samples++;
		c->last = lr->event;
		return e->kept;
	}
	if (s->event.len) {
		kept = count_event(c, s->event, &ev);
		/* an untracked event is counted as such every time */
		if (ev == G_MAXUINT)
			return kept;
	}
	if (lr)
		*lr = (struct layout_rec){ s->layout, ev, 0 };
	return kept;
}

void collapser_add(struct collapser *c, const struct perf_sample *s)
{
	fk_count n;
	struct fold_entry *e;
	bool ours = our_numbers(c, s);
	struct layout_rec *lr = ours && s->layout ? &c->layouts[s->layout % LAYOUTS] : NULL;

	if (!layout_event(c, s, lr))
		return;
	c->no_pid += (c->o.include_pid || c->o.include_tid) && !s->pid.len;
	n = fk_count_from_u64(s->has_period ? s->period : 1);
	/*
	 * The fast path: a chain already named (found by the reader's
	 * number for its text, or by the text), for a process name already
	 * seen with it, goes straight to its table entry.
	 */
	if (!s->frames && s->raw.len && !s->inline_frame.len) {
		bool java = s->comm.len == 4 && memcmp(s->comm.s, "java", 4) == 0;
		struct block_rec *br = ours ? block_rec(c, s, java) : NULL;
		struct fk_str names;
		uint32_t proc, nid;
		uint64_t key;

		if (br && br->names) {
			nid = br->names - 1;
		} else if (!strmap_get(c->chains[java], s->raw.s, s->raw.len, &names)) {
			goto slow;
		} else {
			nid = fk_intern_id(c->names_ids, names.s, names.len, NULL);
			if (br)
				br->names = nid + 1;
		}
		if (lr && lr->proc) {
			proc = lr->proc - 1;
		} else {
			proc = process_name(c, s)->id;
			if (lr)
				lr->proc = proc + 1;
		}
		if (br && br->last_proc == proc + 1) {
			fold_table_bump(c->table, br->last, n, 0);
			return;
		}
		key = ((uint64_t)nid << 32 | proc) + 1;
		if ((e = pair_get(c, key))) {
			fold_table_bump(c->table, e, n, 0);
		} else {
			key_from_names(c, s, proc, fk_intern_str(c->names_ids, nid), c->key);
			if (c->key->len == 0) {	/* found by fuzz/perfscript.c */
				skip_empty(c, s);
				return;
			}
			e = fold_table_add(c->table, c->key->str, c->key->len, n);
			pair_put(c, key, e);
		}
		if (br) {
			br->last = e;
			br->last_proc = proc + 1;
		}
		return;
	}
slow:
	collapser_stack_key(c, s, c->key);
	if (c->key->len == 0) {
		skip_empty(c, s);
		return;
	}
	fold_table_add(c->table, c->key->str, c->key->len, n);
}

/*
 * The name id of frame id: its ";NAME" is made once (without an inliner a
 * frame's name is its own), and the same name gets the same id (unless
 * the index is full: then only a chain cached twice).
 */
static uint32_t frame_name_id(struct collapser *c, const struct perf_frame *by_id,
			      uint32_t id, bool java)
{
	GArray *ids = c->frame_names[java];
	GString *b = c->name_buf;
	struct fk_str hit, name;
	uint32_t nid;

	if (id < ids->len && (nid = g_array_index(ids, uint32_t, id)) != 0)
		return nid - 1;
	if (id >= ids->len)
		g_array_set_size(ids, id + 1);
	g_string_truncate(b, 0);
	g_string_append_c(b, ';');
	frame_name_append(b, &c->o.names, &by_id[id], java);
	if (strmap_get(c->name_index, b->str, b->len, &hit)) {
		memcpy(&nid, hit.s, sizeof(nid));
	} else {
		nid = c->name_strs->len;
		name.s = g_string_chunk_insert_len(c->names, b->str, (gssize)b->len);
		name.len = b->len;
		g_array_append_val(c->name_strs, name);
		strmap_put(c->name_index, b->str, b->len, &nid, sizeof(nid));
	}
	g_array_index(ids, uint32_t, id) = nid + 1;
	return nid;
}

/*
 * The names of a chain of frame ids, cached by the ids (so one chain's
 * names have one address), and by the caller's chain id (one lookup of a
 * number; *rec gets its record, or NULL); false when the cache is full
 * and *names are only for now.
 */
static bool chain_names(struct collapser *c, uint32_t chain, const uint32_t *ids,
			size_t n, const struct perf_frame *by_id, bool java,
			struct fk_str *names, struct chain_rec **rec)
{
	size_t len = n * sizeof(*ids);
	const void *key = ids;
	bool added = false;
	uint32_t i = 0;
	struct chain_rec r = { { NULL, 0 }, NULL };

	*rec = NULL;
	if (chain != COLLAPSE_NO_CHAIN) {
		i = fk_idmap_id(c->chain_ids, (uint64_t)chain << 1 | java, &added);
		if (!added) {
			*rec = &g_array_index(c->chain_names, struct chain_rec, i);
			*names = (*rec)->names;
			return (*rec)->names.s != NULL;
		}
	}
	/* chains are keyed by their names' ids; with an inliner (a name
	 * depends on its neighbour) by the frames' */
	if (!c->o.inliner) {
		g_array_set_size(c->nids, (guint)n);
		for (size_t k = 0; k < n; k++)
			g_array_index(c->nids, uint32_t, k) = frame_name_id(c, by_id, ids[k], java);
		key = c->nids->data;
	}
	if (!strmap_get(c->id_chains[java], key, len, names)) {
		g_string_truncate(c->names_buf, 0);
		if (c->o.inliner) {
			g_array_set_size(c->frames, 0);
			for (size_t k = 0; k < n; k++)
				g_array_append_vals(c->frames, &by_id[ids[k]], 1);
			append_frames(c, (const struct perf_frame *)(const void *)c->frames->data,
				      n, java, c->names_buf);
		} else {
			for (size_t k = n; k-- > 0;) {
				struct fk_str nm = g_array_index(c->name_strs, struct fk_str,
								 g_array_index(c->nids, uint32_t, k));

				g_string_append_len(c->names_buf, nm.s, (gssize)nm.len);
			}
		}
		if (!strmap_put(c->id_chains[java], key, len, c->names_buf->str, c->names_buf->len) ||
		    !strmap_get(c->id_chains[java], key, len, names)) {
			/* the cache is full: the chain is named every time */
			*names = (struct fk_str){ c->names_buf->str, c->names_buf->len };
			if (added)
				g_array_append_val(c->chain_names, r);
			return false;
		}
	}
	if (added) {
		r.names = *names;
		g_array_append_val(c->chain_names, r);
		*rec = &g_array_index(c->chain_names, struct chain_rec, i);
	}
	return true;
}

struct fold_entry *collapser_add_chain(struct collapser *c, const struct perf_sample *s,
				      uint32_t chain, const uint32_t *ids,
				      const struct perf_frame *by_id, fk_count n)
{
	bool java = s->comm.len == 4 && memcmp(s->comm.s, "java", 4) == 0;
	struct fk_str names, hit;
	struct fold_entry *e;
	struct chain_rec *rec;
	GString *k = c->scratch;
	const char *proc;
	size_t plen;
	bool cached;
	guint ev;

	if (s->event.len && !count_event(c, s->event, &ev))
		return NULL;
	cached = chain_names(c, chain, ids, s->nframes, by_id, java, &names, &rec);
	/* the names' address stands for the chain: the entry of a chain
	 * and a process name is found without building the key */
	g_string_truncate(k, 0);
	g_string_append_len(k, (const char *)&names.s, sizeof(names.s));
	append_process(c, s, k);
	proc = k->str + sizeof(names.s);
	plen = k->len - sizeof(names.s);
	/* most often the chain's previous sample's process: its key is the
	 * process name, then the chain's names */
	if (rec && (e = rec->last) && s->comm.len && e->len == plen + names.len &&
	    memcmp(e->stack, proc, plen) == 0) {
		fold_table_bump(c->table, e, n, 0);
		return e;
	}
	if (cached && strmap_get(c->entries, k->str, k->len, &hit)) {
		memcpy(&e, hit.s, sizeof(e));
		fold_table_bump(c->table, e, n, 0);
		if (rec)
			rec->last = e;
		return e;
	}
	/* the key as collapser_stack_key() makes it, from the names */
	g_string_truncate(c->key, 0);
	g_string_append_len(c->key, proc, (gssize)plen);
	g_string_append_len(c->key, names.s, (gssize)names.len);
	if (!s->comm.len && c->key->len) {
		g_string_erase(c->key, 0, 1);
		if (c->key->len && c->key->str[0] == '#')
			c->key->str[0] = '_';
	}
	if (c->key->len == 0) {
		skip_empty(c, s);
		return NULL;
	}
	e = fold_table_add(c->table, c->key->str, c->key->len, n);
	if (cached) {
		strmap_put(c->entries, k->str, k->len, &e, sizeof(e));
		if (rec)
			rec->last = e;
	}
	return e;
}

void collapser_chain_key(struct collapser *c, const struct perf_sample *s,
			 uint32_t chain, const uint32_t *ids,
			 const struct perf_frame *by_id, GString *key)
{
	bool java = s->comm.len == 4 && memcmp(s->comm.s, "java", 4) == 0;
	struct fk_str names;
	struct chain_rec *rec;

	chain_names(c, chain, ids, s->nframes, by_id, java, &names, &rec);
	g_string_truncate(key, 0);
	if (s->comm.len)
		append_process(c, s, key);
	g_string_append_len(key, names.s, (gssize)names.len);
	/* as collapser_stack_key() */
	if (!s->comm.len && key->len) {
		g_string_erase(key, 0, 1);
		if (key->len && key->str[0] == '#')
			key->str[0] = '_';
	}
}

char *collapser_pid_note(const struct collapser *c)
{
	if (!c->no_pid)
		return NULL;
	return g_strdup_printf("%" G_GUINT64_FORMAT " samples have no process id (perf script "
			       "printed only the thread's): their processes are all 'COMM-?'; "
			       "perf script -F comm,pid,tid,time,event,ip,sym,dso prints it",
			       c->no_pid);
}

char *collapser_event_note(const struct collapser *c)
{
	GString *s;
	bool any_dropped = false;
	guint listed = 0, more = 0;
	uint64_t more_samples = 0;

	for (guint i = 0; i < c->events->len; i++)
		if (strcmp(g_array_index(c->events, struct event_count, i).name, c->kept))
			any_dropped = true;
	more_samples = c->untracked;
	if (!any_dropped)
		return NULL;
	s = g_string_new(NULL);
	g_string_printf(s, "kept event '%s'", c->kept);
	for (guint i = 0; i < c->events->len; i++) {
		struct event_count *e = &g_array_index(c->events, struct event_count, i);
		if (strcmp(e->name, c->kept) == 0)
			g_string_append_printf(s, " (%" G_GUINT64_FORMAT " samples)", e->samples);
	}
	g_string_append(s, "; dropped");
	for (guint i = 0; i < c->events->len; i++) {
		struct event_count *e = &g_array_index(c->events, struct event_count, i);
		if (strcmp(e->name, c->kept) == 0)
			continue;
		/* one short line on stderr, however many events the input names */
		if (listed == NOTE_EVENTS) {
			more++;
			more_samples += e->samples;
			continue;
		}
		g_string_append_printf(s, "%s '%s' (%" G_GUINT64_FORMAT " samples)",
				       listed++ ? "," : "", e->name, e->samples);
	}
	if (more || c->untracked)
		g_string_append_printf(s, " and %s%u more events (%" G_GUINT64_FORMAT
				       " samples)", c->untracked ? "over " : "",
				       more, more_samples);
	if (!c->o.event_filter)
		g_string_append(s, "; choose with --event-filter");
	return g_string_free(s, FALSE);
}
