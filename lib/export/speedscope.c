#include "export/speedscope.h"

#include "core/error.h"
#include "core/intern.h"
#include "core/jsonesc.h"
#include "core/str.h"
#include "export/framepath.h"

#include <errno.h>
#include <string.h>

/*
 * A stack is a node of one call tree: node = (parent node, frame), so a
 * sample is one node index.  ROOT is the empty stack.  Folded stacks add
 * their nodes without a lookup (see add_folded), so a path may have more
 * than one node: the output is the same, only node equality is lost.
 */
#define ROOT UINT32_MAX

struct node {
	uint32_t parent, frame;
};

/* A growable array appended to per frame: GArray's call is too dear. */
#define VEC(T) struct { T *v; size_t n, cap; }
#define VEC_PUSH(a, x) do {						\
	if ((a).n == (a).cap)						\
		vec_grow((void **)&(a).v, &(a).cap, sizeof(*(a).v));	\
	(a).v[(a).n++] = (x);						\
} while (0)

static void vec_grow(void **v, size_t *cap, size_t size)
{
	*cap = *cap ? *cap * 2 : 64;
	*v = g_realloc_n(*v, *cap, size);
}

static const char *const unit_names[] = {
	[SS_UNIT_NONE] = "none",
	[SS_UNIT_NANOSECONDS] = "nanoseconds",
	[SS_UNIT_MICROSECONDS] = "microseconds",
	[SS_UNIT_MILLISECONDS] = "milliseconds",
	[SS_UNIT_SECONDS] = "seconds",
	[SS_UNIT_BYTES] = "bytes",
};

struct frame {
	struct fk_str name, file;
	uint32_t line;
};

/* A stack's text among those written (ss_doc_write()). */
struct span {
	size_t at, len;
};

struct ss_profile {
	struct ss_doc *doc;
	char *name;
	uint64_t order;
	size_t index;		/* creation order */
	enum ss_unit unit;
	VEC(uint32_t) stacks;	/* the node of each sample */
	VEC(fk_count) weights;	/* the weight of each sample */
	fk_count total;
};

struct ss_doc {
	char *name;
	struct fk_intern *frames;	/* frame keys, see frame_key() */
	GArray *finfo;			/* struct frame, by frame index */
	VEC(struct node) nodes;
	struct fk_idmap *node_keys;	/* (parent, frame) -> i, for ss_profile_add() */
	GArray *node_of_key;		/* uint32_t: node of key i */
	GPtrArray *profiles;
	struct ss_profile *active;
	GString *key;
	struct frame_path fp;		/* folded stacks' frames (add_folded) */
	bool fp_stable;			/* the frames fp interned are stable */
	VEC(uint32_t) next;		/* ss_doc_stack_next()'s last stack's
					 * nodes, root first */
	VEC(uint32_t) path;		/* for writing */
	/* while writing: each sampled stack's text "[0,1,2]", made once */
	uint32_t *written;		/* node + 1 -> its span + 1 (0: not yet) */
	VEC(struct span) spans;
	VEC(char) texts;
	uint32_t last_stack;
	uint64_t replaced, inexact;
	bool dropped;			/* a profile was dropped */
	uint32_t *remap;		/* while writing after a drop: frame ->
					 * its index in the file, or UINT32_MAX */
};

/*
 * The words foldkit's other tools and files use for a count (fold-report
 * --unit, fold2svg --countname, index.tsv's unit column): time units in
 * speedscope's own words, counts of things (samples, context switches,
 * events) as "none", which speedscope shows as plain numbers.
 */
static const struct { const char *word; enum ss_unit unit; } unit_words[] = {
	{ "ns", SS_UNIT_NANOSECONDS }, { "nsec", SS_UNIT_NANOSECONDS },
	{ "us", SS_UNIT_MICROSECONDS }, { "\u00b5s", SS_UNIT_MICROSECONDS },
	{ "usec", SS_UNIT_MICROSECONDS },
	{ "ms", SS_UNIT_MILLISECONDS }, { "msec", SS_UNIT_MILLISECONDS },
	{ "s", SS_UNIT_SECONDS }, { "sec", SS_UNIT_SECONDS },
	{ "B", SS_UNIT_BYTES }, { "byte", SS_UNIT_BYTES },
	{ "samples", SS_UNIT_NONE }, { "switches", SS_UNIT_NONE },
	{ "events", SS_UNIT_NONE }, { "count", SS_UNIT_NONE },
	{ "counts", SS_UNIT_NONE },
};

bool ss_unit_parse(const char *s, enum ss_unit *unit)
{
	for (size_t i = 0; i < G_N_ELEMENTS(unit_names); i++)
		if (strcmp(s, unit_names[i]) == 0) {
			*unit = (enum ss_unit)i;
			return true;
		}
	for (size_t i = 0; i < G_N_ELEMENTS(unit_words); i++)
		if (strcmp(s, unit_words[i].word) == 0) {
			*unit = unit_words[i].unit;
			return true;
		}
	return false;
}

const char *ss_unit_name(enum ss_unit unit)
{
	return unit_names[unit];
}

struct ss_doc *ss_doc_new(const char *name)
{
	struct ss_doc *d = g_new0(struct ss_doc, 1);

	d->name = g_strdup(name);
	d->frames = fk_intern_new();
	d->finfo = g_array_new(FALSE, FALSE, sizeof(struct frame));
	d->node_keys = fk_idmap_new();
	d->node_of_key = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	d->profiles = g_ptr_array_new();
	d->key = g_string_new(NULL);
	d->last_stack = ROOT;
	return d;
}

void ss_doc_set_name(struct ss_doc *d, const char *name)
{
	g_free(d->name);
	d->name = g_strdup(name);
}

static void profile_free(struct ss_profile *p)
{
	g_free(p->name);
	g_free(p->stacks.v);
	g_free(p->weights.v);
	g_free(p);
}

void ss_doc_free(struct ss_doc *d)
{
	if (!d)
		return;
	for (guint i = 0; i < d->profiles->len; i++)
		profile_free(d->profiles->pdata[i]);
	g_ptr_array_free(d->profiles, TRUE);
	fk_intern_free(d->frames);
	g_array_free(d->finfo, TRUE);
	g_free(d->nodes.v);
	fk_idmap_free(d->node_keys);
	g_array_free(d->node_of_key, TRUE);
	g_string_free(d->key, TRUE);
	frame_path_release(&d->fp);
	g_free(d->next.v);
	g_free(d->path.v);
	g_free(d->name);
	g_free(d);
}

struct ss_profile *ss_profile_new(struct ss_doc *d, const char *name,
				  enum ss_unit unit)
{
	struct ss_profile *p = g_new0(struct ss_profile, 1);

	p->doc = d;
	p->name = g_strdup(name);
	p->unit = unit;
	p->index = d->profiles->len;
	g_ptr_array_add(d->profiles, p);
	return p;
}

/*
 * A frame without file or line is keyed by its name alone when the name
 * holds no NUL byte; any other frame by name, a NUL, file, line and the
 * two lengths, which always holds a NUL, so the two kinds never collide.
 */
static uint32_t frame_id(struct ss_doc *d, const char *name, size_t len,
			 const char *file, size_t flen, uint32_t line, bool stable)
{
	bool added;
	uint32_t id;
	struct frame f;

	if (!flen && !line && !memchr(name, '\0', len)) {
		id = stable ? fk_intern_id_ref(d->frames, name, len, &added)
			    : fk_intern_id(d->frames, name, len, &added);
		if (added) {
			f.name = fk_intern_str(d->frames, id);
			f.file = (struct fk_str){ NULL, 0 };
			f.line = 0;
			g_array_append_val(d->finfo, f);
		}
		return id;
	}
	g_string_truncate(d->key, 0);
	g_string_append_len(d->key, name, (gssize)len);
	g_string_append_c(d->key, '\0');
	g_string_append_len(d->key, file, (gssize)flen);
	g_string_append_len(d->key, (const char *)&line, sizeof(line));
	g_string_append_len(d->key, (const char *)&len, sizeof(len));
	g_string_append_len(d->key, (const char *)&flen, sizeof(flen));
	id = fk_intern_id(d->frames, d->key->str, d->key->len, &added);
	if (added) {
		struct fk_str k = fk_intern_str(d->frames, id);

		f.name = (struct fk_str){ k.s, len };
		f.file = (struct fk_str){ k.s + len + 1, flen };
		f.line = line;
		g_array_append_val(d->finfo, f);
	}
	return id;
}

uint32_t ss_frame(struct ss_doc *d, const char *name, size_t len)
{
	return frame_id(d, name, len, NULL, 0, 0, false);
}

uint32_t ss_frame_at(struct ss_doc *d, const char *name, size_t len,
		     const char *file, size_t flen, uint32_t line)
{
	return frame_id(d, name, len, file ? file : "", file ? flen : 0, line, false);
}

static inline uint32_t node_new(struct ss_doc *d, uint32_t parent, uint32_t frame)
{
	struct node n = { parent, frame };

	VEC_PUSH(d->nodes, n);
	return (uint32_t)(d->nodes.n - 1);
}

/* The one node of (parent, frame) among those made here. */
static uint32_t node_find(struct ss_doc *d, uint32_t parent, uint32_t frame)
{
	bool added;
	uint32_t i = fk_idmap_id(d->node_keys, (uint64_t)parent << 32 | frame, &added);

	if (added) {
		uint32_t n = node_new(d, parent, frame);

		g_array_append_val(d->node_of_key, n);
	}
	return g_array_index(d->node_of_key, uint32_t, i);
}

size_t ss_profile_add_stack(struct ss_profile *p, uint32_t stack, fk_count weight)
{
	size_t n = p->stacks.n;

	p->total += weight;
	p->doc->last_stack = stack;
	if (n && p->stacks.v[n - 1] == stack) {
		p->weights.v[n - 1] += weight;
		return n - 1;
	}
	VEC_PUSH(p->stacks, stack);
	VEC_PUSH(p->weights, weight);
	return n;
}

void ss_profile_add_weight(struct ss_profile *p, size_t i, fk_count weight)
{
	p->weights.v[i] += weight;
	p->total += weight;
}

void ss_profile_drop(struct ss_profile *p)
{
	struct ss_doc *d = p->doc;

	g_ptr_array_remove(d->profiles, p);
	if (d->active == p)
		d->active = NULL;
	d->dropped = true;
	profile_free(p);
}

void ss_profile_set_name(struct ss_profile *p, const char *name)
{
	g_free(p->name);
	p->name = g_strdup(name);
}

void ss_profile_set_order(struct ss_profile *p, uint64_t key)
{
	p->order = key;
}

uint32_t ss_doc_last_stack(const struct ss_doc *d)
{
	return d->last_stack;
}

uint32_t ss_doc_stack(struct ss_doc *d, const uint32_t *frames, size_t n)
{
	uint32_t node = ROOT;

	for (size_t i = 0; i < n; i++)
		node = node_find(d, node, frames[i]);
	return node;
}

void ss_profile_add(struct ss_profile *p, const uint32_t *frames, size_t n,
		    fk_count weight)
{
	ss_profile_add_stack(p, ss_doc_stack(p->doc, frames, n), weight);
}

/* frame_path's callback: the node of frame name under node prev */
static uint32_t folded_node(void *ctx, uint32_t prev, const char *name, size_t len)
{
	struct ss_doc *d = ctx;

	return node_new(d, prev, frame_id(d, name, len, NULL, 0, 0, d->fp_stable));
}

uint32_t ss_doc_stack_folded(struct ss_doc *d, const char *stack, size_t len,
			     bool stable)
{
	const uint32_t *nodes;
	size_t n;

	d->fp_stable = stable;
	nodes = frame_path_ids(&d->fp, stack, len, stable, folded_node, d, &n);
	return n ? nodes[n - 1] : ROOT;
}

uint32_t ss_doc_stack_next(struct ss_doc *d, const uint32_t *frames, size_t n)
{
	size_t keep = 0, m = n < d->next.n ? n : d->next.n;
	uint32_t node;

	while (keep < m && d->nodes.v[d->next.v[keep]].frame == frames[keep])
		keep++;
	node = keep ? d->next.v[keep - 1] : ROOT;
	d->next.n = keep;
	for (size_t i = keep; i < n; i++) {
		node = node_new(d, node, frames[i]);
		VEC_PUSH(d->next, node);
	}
	return node;
}

bool ss_doc_stack_is(const struct ss_doc *d, uint32_t stack, const uint32_t *frames,
		     size_t n)
{
	for (; n > 0 && stack != ROOT; stack = d->nodes.v[stack].parent)
		if (d->nodes.v[stack].frame != frames[--n])
			return false;
	return n == 0 && stack == ROOT;
}

void ss_profile_add_folded(struct ss_profile *p, const char *stack, size_t len,
			   fk_count weight, bool stable)
{
	ss_profile_add_stack(p, ss_doc_stack_folded(p->doc, stack, len, stable), weight);
}

fk_count ss_profile_total(const struct ss_profile *p)
{
	return p->total;
}

size_t ss_profile_samples(const struct ss_profile *p)
{
	return p->stacks.n;
}

const char *ss_profile_name(const struct ss_profile *p)
{
	return p->name;
}

void ss_doc_set_active(struct ss_doc *d, struct ss_profile *p)
{
	d->active = p;
}

size_t ss_doc_profiles(const struct ss_doc *d)
{
	return d->profiles->len;
}

struct ss_profile *ss_doc_profile(const struct ss_doc *d, size_t i)
{
	return d->profiles->pdata[i];
}

size_t ss_doc_frames(const struct ss_doc *d)
{
	return d->finfo->len;
}

uint64_t ss_doc_replaced(const struct ss_doc *d)
{
	return d->replaced;
}

uint64_t ss_doc_inexact(const struct ss_doc *d)
{
	return d->inexact;
}

/* --- writing: into a buffer flushed every 64 KiB */

#define OUT_FLUSH (1u << 16)

struct out {
	GString *buf;
	FILE *f;
	bool failed;
};

static void flush(struct out *o)
{
	if (o->buf->len && fwrite(o->buf->str, 1, o->buf->len, o->f) != o->buf->len)
		o->failed = true;
	g_string_truncate(o->buf, 0);
}

/* Room for n more bytes at the end of the buffer; returns where they go. */
static inline char *reserve(struct out *o, size_t n)
{
	if (o->buf->len + n > o->buf->allocated_len - 1) {
		if (o->buf->len >= OUT_FLUSH)
			flush(o);
		g_string_set_size(o->buf, o->buf->len + n);
		g_string_set_size(o->buf, o->buf->len - n);
	}
	return o->buf->str + o->buf->len;
}

static inline void commit(struct out *o, const char *end)
{
	o->buf->len = (gsize)(end - o->buf->str);
	o->buf->str[o->buf->len] = '\0';
}

static inline char *put_u32(char *p, uint32_t v)
{
	char tmp[10];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

static void put_count(struct ss_doc *d, struct out *o, fk_count c)
{
	char *p = reserve(o, FK_COUNT_BUFSZ);

	if (c > (fk_count)(UINT64_C(1) << 53) * FK_COUNT_ONE)
		d->inexact++;
	commit(o, p + fk_count_format(c, p));
}

static void put_string(struct ss_doc *d, struct out *o, const char *s, size_t len)
{
	if (fk_json_string(o->buf, s, len))
		d->replaced++;
}

static void put(struct out *o, const char *s)
{
	g_string_append(o->buf, s);
}

static void write_frames(struct ss_doc *d, struct out *o)
{
	put(o, "\"shared\":{\"frames\":[");
	for (guint i = 0, k = 0; i < d->finfo->len; i++) {
		const struct frame *f = &g_array_index(d->finfo, struct frame, i);

		if (d->remap && d->remap[i] == UINT32_MAX)
			continue;
		put(o, k++ ? ",\n{\"name\":" : "\n{\"name\":");
		put_string(d, o, f->name.s, f->name.len);
		if (f->file.len) {
			put(o, ",\"file\":");
			put_string(d, o, f->file.s, f->file.len);
		}
		if (f->line) {
			char *p = reserve(o, 16);

			memcpy(p, ",\"line\":", 8);
			commit(o, put_u32(p + 8, f->line));
		}
		put(o, "}");
		if (o->buf->len >= OUT_FLUSH)
			flush(o);
	}
	put(o, "]},\n");
}

/* Makes a stack's text "[0,1,2]" (its frames, root first) in d->texts. */
static struct span stack_text(struct ss_doc *d, uint32_t node)
{
	const struct node *nodes = d->nodes.v;
	struct span sp = { d->texts.n, 0 };
	char *p;

	d->path.n = 0;
	for (; node != ROOT; node = nodes[node].parent)
		VEC_PUSH(d->path, nodes[node].frame);
	while (d->texts.cap - d->texts.n < d->path.n * 11 + 2)
		vec_grow((void **)&d->texts.v, &d->texts.cap, 1);
	p = d->texts.v + d->texts.n;
	*p++ = '[';
	for (size_t k = d->path.n; k-- > 0;) {
		p = put_u32(p, d->remap ? d->remap[d->path.v[k]] : d->path.v[k]);
		*p++ = ',';
	}
	if (d->path.n)
		p--;
	*p++ = ']';
	sp.len = (size_t)(p - (d->texts.v + d->texts.n));
	d->texts.n += sp.len;
	return sp;
}

/*
 * One sample's frames: its stack's text, made at the stack's first
 * sample (1.3 million samples of 127,000 stacks on the plugin's bench
 * recording: each stack's frames walked and numbered once).
 */
static void write_stack(struct ss_doc *d, struct out *o, uint32_t node, bool first)
{
	/* by node + 1: the root (ROOT + 1 wraps to 0), an empty stack, too */
	uint32_t *w = &d->written[(uint32_t)(node + 1)];
	struct span sp;
	char *p;

	if (!*w) {
		VEC_PUSH(d->spans, stack_text(d, node));
		*w = (uint32_t)d->spans.n;
	}
	sp = d->spans.v[*w - 1];
	p = reserve(o, sp.len + 2);
	if (!first)
		*p++ = ',';
	*p++ = '\n';
	memcpy(p, d->texts.v + sp.at, sp.len);
	commit(o, p + sp.len);
}

static void write_profile(struct ss_doc *d, struct ss_profile *p, struct out *o)
{
	put(o, "{\"type\":\"sampled\",\"name\":");
	put_string(d, o, p->name, strlen(p->name));
	put(o, ",\"unit\":\"");
	put(o, unit_names[p->unit]);
	put(o, "\",\"startValue\":0,\"endValue\":");
	put_count(d, o, p->total);
	put(o, ",\n\"samples\":[");
	for (size_t i = 0, k = 0; i < p->stacks.n; i++)
		if (p->weights.v[i])
			write_stack(d, o, p->stacks.v[i], k++ == 0);
	put(o, "],\n\"weights\":[");
	for (size_t i = 0, k = 0; i < p->weights.n; i++) {
		if (!p->weights.v[i])
			continue;
		if (k++)
			put(o, ",");
		put_count(d, o, p->weights.v[i]);
	}
	put(o, "]}");
}

/* The position of the profile speedscope opens first, once sorted. */
static uint32_t active_index(const struct ss_doc *d)
{
	uint32_t best = 0;

	for (guint i = 0; i < d->profiles->len; i++) {
		const struct ss_profile *p = d->profiles->pdata[i];

		if (d->active ? p == d->active
			      : p->total > ((struct ss_profile *)d->profiles->pdata[best])->total)
			best = i;
	}
	return best;
}

static int by_order(const void *a, const void *b)
{
	const struct ss_profile *x = *(struct ss_profile *const *)a;
	const struct ss_profile *y = *(struct ss_profile *const *)b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * After a drop: numbers the frames the written samples use, in their
 * order, so the file holds no frame of a dropped profile.
 */
static uint32_t *frames_in_use(const struct ss_doc *d)
{
	uint32_t *remap = g_new(uint32_t, d->finfo->len + 1);
	guint8 *seen = g_new0(guint8, d->nodes.n + 1);
	uint32_t n = 0;

	memset(remap, 0xff, (d->finfo->len + 1) * sizeof(*remap));
	for (guint i = 0; i < d->profiles->len; i++) {
		const struct ss_profile *p = d->profiles->pdata[i];

		for (size_t j = 0; j < p->stacks.n; j++) {
			if (!p->weights.v[j])
				continue;
			for (uint32_t node = p->stacks.v[j]; node != ROOT && !seen[node];
			     node = d->nodes.v[node].parent) {
				seen[node] = 1;
				remap[d->nodes.v[node].frame] = 0;
			}
		}
	}
	for (guint i = 0; i < d->finfo->len; i++)
		if (remap[i] == 0)
			remap[i] = n++;
	g_free(seen);
	return remap;
}

int ss_doc_write(struct ss_doc *d, FILE *out, const char *name, GError **err)
{
	struct out o = { g_string_sized_new(OUT_FLUSH * 2), out, false };
	char *p;

	d->replaced = d->inexact = 0;
	g_ptr_array_sort(d->profiles, by_order);
	if (d->dropped)
		d->remap = frames_in_use(d);
	d->written = g_new0(uint32_t, d->nodes.n + 1);
	put(&o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		"\"exporter\":\"foldkit\",\n\"name\":");
	put_string(d, &o, d->name, strlen(d->name));
	put(&o, ",\n");
	if (d->profiles->len) {	/* none to name in an empty document */
		put(&o, "\"activeProfileIndex\":");
		p = reserve(&o, 12);
		commit(&o, put_u32(p, active_index(d)));
		put(&o, ",\n");
	}
	write_frames(d, &o);
	put(&o, "\"profiles\":[");
	for (guint i = 0; i < d->profiles->len; i++) {
		put(&o, i ? ",\n" : "\n");
		write_profile(d, d->profiles->pdata[i], &o);
	}
	put(&o, "]}\n");
	flush(&o);
	g_string_free(o.buf, TRUE);
	g_free(d->remap);
	d->remap = NULL;
	g_free(d->written);
	d->written = NULL;
	g_free(d->spans.v);
	g_free(d->texts.v);
	d->spans.v = NULL;
	d->texts.v = NULL;
	d->spans.n = d->spans.cap = d->texts.n = d->texts.cap = 0;
	if (o.failed || fflush(out) != 0 || ferror(out)) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}
