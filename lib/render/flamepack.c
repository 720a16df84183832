#include "render/flamepack.h"

#include "core/intern.h"
#include "render/xmlesc.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

static const int64_t POW10[] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000,
};

/* Decimals c needs (0 to 9). */
static unsigned decimals(fk_count c)
{
	int64_t frac;
	unsigned d = 9;

	if (c >= INT64_MIN && c <= INT64_MAX)
		frac = (int64_t)c % (int64_t)FK_COUNT_ONE;	/* a multiply */
	else
		frac = (int64_t)(c % FK_COUNT_ONE);
	if (!frac)
		return 0;
	while (frac % 10 == 0) {
		frac /= 10;
		d--;
	}
	return d;
}

fk_count flame_pack_units(fk_count c, unsigned scale)
{
	int64_t div = POW10[9 - scale];

	if (div == 1)
		return c;
	if (c >= INT64_MIN && c <= INT64_MAX)
		return (int64_t)c / div;
	return c / div;
}

/* Room for one frame's record: a head, a name and three 128-bit values. */
#define RECORD_MAX (10 + 5 + 1 + 4 * 19)

struct out {
	uint8_t *p;
	size_t len, cap;
};

static void reserve(struct out *o, size_t n)
{
	if (o->len + n <= o->cap)
		return;
	while (o->len + n > o->cap)
		o->cap = o->cap ? o->cap * 2 : 1 << 16;
	o->p = g_realloc(o->p, o->cap);
}

static inline uint8_t *put_u64(uint8_t *d, uint64_t v)
{
	while (v >= 128) {
		*d++ = (uint8_t)(v | 128);
		v >>= 7;
	}
	*d++ = (uint8_t)v;
	return d;
}

static inline uint8_t *put_signed(uint8_t *d, fk_count v)
{
	if (v >= INT64_MIN / 2 && v <= INT64_MAX / 2) {
		int64_t s = (int64_t)v;

		return put_u64(d, (uint64_t)(s * 2) ^ (uint64_t)(s >> 63));
	}
	u128 z = ((u128)v << 1) ^ (u128)(v >> 127);

	while (z >= 128) {
		*d++ = (uint8_t)(z | 128);
		z >>= 7;
	}
	*d++ = (uint8_t)z;
	return d;
}

static void put_varint(struct out *o, uint64_t v)
{
	reserve(o, 10);
	o->len = (size_t)(put_u64(o->p + o->len, v) - o->p);
}

/* The name as shown: svgwriter's rule for a trailing annotation. */
static size_t strip_annotation(const char *s, size_t n)
{
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    s[n - 2] && strchr("kwij", s[n - 2]))
		return n - 4;
	return n;
}

/* s[0..len) as valid UTF-8 without control characters (xmlesc.h's rule);
 * dst holds 3 * len bytes. */
static size_t clean_name(uint8_t *dst, const char *s, size_t len)
{
	size_t i = 0, n = 0;

	while (i < len) {
		unsigned char b = (unsigned char)s[i];

		if (b >= 0x20 && b < 0x7f) {
			dst[n++] = b;
			i++;
			continue;
		}
		uint32_t c = utf8_next(s, len, &i);

		n += utf8_put((char *)dst + n, xml_char_ok(c) ? c : UTF8_REPLACEMENT);
	}
	return n;
}

/* More frequent first, then first seen first. */
static int by_count(const void *a, const void *b, void *data)
{
	const uint64_t *count = data;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (count[x] != count[y])
		return count[x] > count[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

void flame_pack_build(const struct flamegraph *fg, flame_pack_color_fn color,
		      void *color_data, struct flame_pack *pack)
{
	size_t n = fg_nframes(fg), kept = 0;
	uint32_t depthmax = fg_depthmax(fg);
	uint32_t *ids = g_new(uint32_t, n ? n : 1);
	fk_count *self = g_new(fk_count, n ? n : 1);
	/* per depth: the frame open there; where its next child starts */
	size_t *open = g_new(size_t, (size_t)depthmax + 2);
	fk_count *cursor = g_new(fk_count, (size_t)depthmax + 2);
	struct fk_intern *in = fk_intern_new();
	GArray *counts = g_array_new(FALSE, TRUE, sizeof(uint64_t));
	unsigned scale = decimals(fg_timemax(fg));
	bool diff = fg_differential(fg);
	bool total = diff && fg_diff_mode(fg) == FG_DIFF_TOTAL;
	uint32_t deepest = 0;
	int64_t last = -1;	/* the depth of the frame kept last */
	struct out o = { 0 };

	/*
	 * Names, self counts; frames whose parent is missing are marked.
	 * Every count written (self, gap, change) is a sum or difference of
	 * places, widths and changes, so it needs no more decimals than
	 * they do: those set the scale (exact, if at times one digit more
	 * than needed).
	 */
	for (size_t i = 0; i < n; i++) {
		const struct fg_frame *f = fg_frame(fg, i);
		bool added;

		if ((int64_t)f->depth > last + 1) {
			ids[i] = UINT32_MAX;
			continue;
		}
		last = f->depth;
		ids[i] = fk_intern_id(in, f->name, f->len, &added);
		if (added)
			g_array_set_size(counts, counts->len + 1);
		g_array_index(counts, uint64_t, ids[i])++;
		self[i] = f->end - f->start;
		if (f->depth)
			self[open[f->depth - 1]] -= self[i];
		open[f->depth] = i;
		if (f->depth > deepest)
			deepest = f->depth;
		kept++;
		if (scale < 9)
			scale = MAX(scale, MAX(decimals(f->start), decimals(f->end)));
		if (scale < 9 && f->delta)
			scale = MAX(scale, decimals(f->delta));
		if (scale < 9 && total)
			scale = MAX(scale, decimals(fg_frame_total_change(fg, f)));
	}

	/* names by frequency, then first appearance */
	size_t nnames = fk_intern_size(in);
	uint32_t *order = g_new(uint32_t, nnames ? nnames : 1);
	uint32_t *rank = g_new(uint32_t, nnames ? nnames : 1);
	size_t namebytes = 0;

	for (uint32_t k = 0; k < nnames; k++)
		order[k] = k;
	qsort_r(order, nnames, sizeof(*order), by_count, counts->data);
	for (uint32_t k = 0; k < nnames; k++) {
		rank[order[k]] = k;
		namebytes += fk_intern_str(in, k).len * 3 + 1;
	}

	/* header, names (cleaned: exact length known after), colours */
	uint8_t *names = g_malloc(namebytes + 1);
	size_t nb = 0;

	for (uint32_t k = 0; k < nnames; k++) {
		struct fk_str s = fk_intern_str(in, order[k]);

		if (k)
			names[nb++] = '\n';
		nb += clean_name(names + nb, s.s, strip_annotation(s.s, s.len));
	}
	put_varint(&o, nnames);
	put_varint(&o, kept);
	put_varint(&o, nb);
	reserve(&o, nb + 3 * nnames + kept * 4);
	memcpy(o.p + o.len, names, nb);
	o.len += nb;
	g_free(names);
	for (uint32_t k = 0; k < nnames; k++) {
		struct fk_str s = fk_intern_str(in, order[k]);
		struct rgb c = color(s.s, s.len, k, color_data);

		o.p[o.len++] = c.r;
		o.p[o.len++] = c.g;
		o.p[o.len++] = c.b;
	}

	/* the frames */
	last = -1;
	for (size_t i = 0; i < n; i++) {
		const struct fg_frame *f = fg_frame(fg, i);
		fk_count gap;
		uint8_t *d;
		unsigned head;

		if (ids[i] == UINT32_MAX)
			continue;
		gap = f->depth ? f->start - cursor[f->depth] : 0;
		cursor[f->depth] = f->end;
		cursor[f->depth + 1] = f->start + self[i];
		fk_count change = total ? fg_frame_total_change(fg, f) : 0;
		unsigned kind = diff ? (f->delta != 0) | (change != 0) << 1 |
				       fg_frame_is_new(f) << 2 : 0;

		head = (unsigned)(last + 1 - (int64_t)f->depth) << 3 |
		       (self[i] != 0) | (gap != 0) << 1 | (kind != 0) << 2;
		last = f->depth;
		reserve(&o, RECORD_MAX);
		d = put_u64(o.p + o.len, head);
		d = put_u64(d, rank[ids[i]]);
		if (self[i])
			d = put_signed(d, flame_pack_units(self[i], scale));
		if (gap)
			d = put_signed(d, flame_pack_units(gap, scale));
		if (kind) {
			*d++ = (uint8_t)kind;
			if (f->delta)
				d = put_signed(d, flame_pack_units(f->delta, scale));
			if (change)
				d = put_signed(d, flame_pack_units(change, scale));
		}
		o.len = (size_t)(d - o.p);
	}

	pack->data = o.p;
	pack->len = o.len;
	pack->scale = scale;
	pack->nnames = nnames;
	pack->nframes = kept;
	pack->depthmax = deepest;
	g_free(order);
	g_free(rank);
	g_array_free(counts, TRUE);
	fk_intern_free(in);
	g_free(cursor);
	g_free(open);
	g_free(self);
	g_free(ids);
}

void flame_pack_clear(struct flame_pack *pack)
{
	g_free(pack->data);
	memset(pack, 0, sizeof(*pack));
}
