#include "collapse/pprofread.h"

#include "collapse/bounds.h"
#include "collapse/framename.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* where things are in the profile's bytes: 32 bits suffice */
G_STATIC_ASSERT(PPROF_MAX_BYTES <= UINT32_MAX);

/* profile.proto's fields (pprof's proto/profile.proto) */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_DROP_FRAMES, PROFILE_KEEP_FRAMES,
	PROFILE_TIME_NANOS, PROFILE_DURATION_NANOS, PROFILE_PERIOD_TYPE, PROFILE_PERIOD,
	PROFILE_COMMENT, PROFILE_DEFAULT_SAMPLE_TYPE,
};
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL };
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE };

/* One kind of object found by id: mappings, locations or functions. */
struct objects {
	GArray *at;		/* uint32_t: where each one's bytes start, in
				   file order */
	struct id_pos *by_id;	/* sorted by id; NULL while the ids are 1..n
				   in order (as every writer makes them) */
	size_t zero_at;		/* the first one with id 0, from 1; 0: none */
	bool dense;
};

struct id_pos {
	uint64_t id;
	uint32_t pos;
};

struct pprof_profile {
	char *name;
	uint8_t *buf;		/* the profile, decompressed (owned) */
	size_t len;
	GArray *strings;	/* uint32_t: where each string starts */
	GArray *types;		/* uint32_t: each sample type */
	GArray *samples;	/* uint32_t: each sample */
	struct objects maps, locs, funcs;
	int64_t drop_frames, keep_frames, default_sample_type;
};

/* --- reading the bytes */

static bool read_all(int fd, const char *name, size_t max, GByteArray *out,
		     GError **err)
{
	for (;;) {
		ssize_t n;

		if (out->len > max) {
			fk_error_at(err, FK_ERROR_RANGE, name, 0,
				    "larger than %zu MiB: not read", max >> 20);
			return false;
		}
		g_byte_array_set_size(out, out->len + 65536);
		n = read(fd, out->data + out->len - 65536, 65536);
		g_byte_array_set_size(out, out->len - 65536 + (n > 0 ? (guint)n : 0));
		if (n == 0)
			return true;
		if (n < 0 && errno != EINTR) {
			fk_error_at(err, FK_ERROR_IO, name, 0, "read error: %s", g_strerror(errno));
			return false;
		}
	}
}

static bool is_gzip(const uint8_t *p, size_t len)
{
	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/* Gunzips data (one or more members, as gzip -d reads them). */
static GByteArray *gunzip(const uint8_t *data, size_t len, const char *name,
			  size_t max, GError **err)
{
	GByteArray *out = g_byte_array_new();
	z_stream z = { 0 };
	int rc;

	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "cannot start gzip decompression");
		g_byte_array_unref(out);
		return NULL;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)MIN(len, (size_t)UINT_MAX);
	for (;;) {
		size_t before = out->len;

		if (out->len > max) {
			fk_error_at(err, FK_ERROR_RANGE, name, 0,
				    "larger than %zu MiB once decompressed: not read", max >> 20);
			goto fail;
		}
		g_byte_array_set_size(out, out->len + 65536);
		z.next_out = out->data + before;
		z.avail_out = 65536;
		rc = inflate(&z, Z_NO_FLUSH);
		g_byte_array_set_size(out, (guint)(before + 65536 - z.avail_out));
		if (rc == Z_STREAM_END) {
			size_t used = (size_t)(z.next_in - data);

			if (used == len)
				break;
			if (!is_gzip(data + used, len - used)) {
				fk_error_at(err, FK_ERROR_PARSE, name, 0,
					    "junk after the gzip data (at byte %zu)", used);
				goto fail;
			}
			inflateReset(&z);
			continue;
		}
		if (rc == Z_BUF_ERROR && z.avail_in == 0) {
			fk_error_at(err, FK_ERROR_TRUNCATED, name, 0,
				    "gzip data ends early: truncated?");
			goto fail;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			fk_error_at(err, FK_ERROR_PARSE, name, 0, "bad gzip data: %s",
				    z.msg ? z.msg : "corrupt");
			goto fail;
		}
	}
	inflateEnd(&z);
	return out;
fail:
	inflateEnd(&z);
	g_byte_array_unref(out);
	return NULL;
}


/* --- the wire format: what is read is kept where it is, never copied */

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

/* A message's bytes, read field by field. */
struct wire {
	const uint8_t *p, *end;
};

struct field {
	uint32_t num;
	unsigned type;
	uint64_t v;		/* a number's value */
	const uint8_t *at;	/* where the value starts (a length's varint) */
	const uint8_t *data;	/* WIRE_LEN: the bytes */
	size_t len;
};

/* A varint of at most 10 bytes, as protobuf-c reads them. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < 10 && *p < end; i++) {
		uint8_t b = *(*p)++;

		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static uint64_t fixed(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * A field's key, read as protobuf-c reads it: at most 5 bytes, the field
 * number's bits in the first byte not all 0.
 */
static bool read_key(const uint8_t **p, const uint8_t *end, uint32_t *num, unsigned *type)
{
	const uint8_t *q = *p;
	size_t max = MIN((size_t)(end - q), 5);
	uint32_t tag;
	unsigned shift = 4;

	if (max == 0 || (q[0] & 0xf8) == 0)
		return false;
	*type = q[0] & 7;
	tag = (q[0] & 0x7fu) >> 3;
	for (size_t i = 0; i < max; i++) {
		if (i > 0) {
			tag |= (uint32_t)(q[i] & 0x7f) << shift;
			shift += 7;
		}
		if (!(q[i] & 0x80)) {
			*num = tag;
			*p = q + i + 1;
			return true;
		}
	}
	return false;
}

/* The next field: 1, 0 at the end, -1 when the bytes do not decode. */
static int next_field(struct wire *w, struct field *f)
{
	if (w->p == w->end)
		return 0;
	if (!read_key(&w->p, w->end, &f->num, &f->type))
		return -1;
	f->at = w->p;
	switch (f->type) {
	case WIRE_VARINT:
		return varint(&w->p, w->end, &f->v) ? 1 : -1;
	case WIRE_I64:
	case WIRE_I32: {
		unsigned n = f->type == WIRE_I64 ? 8 : 4;

		if ((size_t)(w->end - w->p) < n)
			return -1;
		f->v = fixed(w->p, n);
		w->p += n;
		return 1;
	}
	case WIRE_LEN: {
		/* a length of at most 5 bytes and 2^31-1, as protobuf-c takes */
		const uint8_t *lim = w->end - w->p > 5 ? w->p + 5 : w->end;
		uint64_t len;

		if (!varint(&w->p, lim, &len) || len > INT32_MAX ||
		    len > (uint64_t)(w->end - w->p))
			return -1;
		f->data = w->p;
		f->len = (size_t)len;
		w->p += len;
		return 1;
	}
	default:		/* groups, and types that do not exist */
		return -1;
	}
}

/* The numbers of one field of a repeated number: one varint, or a packed run. */
struct numbers {
	const uint8_t *p, *end;
	uint64_t one;
	bool single;
};

/* False when the field cannot hold numbers. */
static bool numbers_of(const struct field *f, struct numbers *n)
{
	if (f->type == WIRE_VARINT) {
		*n = (struct numbers){ NULL, NULL, f->v, true };
		return true;
	}
	if (f->type != WIRE_LEN)
		return false;
	*n = (struct numbers){ f->data, f->data + f->len, 0, false };
	return true;
}

/* 1 with *v, 0 at the end, -1 when the bytes do not decode. */
static int next_number(struct numbers *n, uint64_t *v)
{
	if (n->single) {
		n->single = false;
		*v = n->one;
		return 1;
	}
	if (n->p == n->end)
		return 0;
	return varint(&n->p, n->end, v) ? 1 : -1;
}

/*
 * A message whose fields 1..n are numbers (varints) into v[0..n), the
 * last of each kept, as protobuf reads them; other fields are skipped.
 * False when it does not decode.
 */
static bool read_numbers(const uint8_t *data, size_t len, uint64_t *v, unsigned n)
{
	struct wire w = { data, data + len };
	struct field f;
	int rc;

	memset(v, 0, n * sizeof(*v));
	while ((rc = next_field(&w, &f)) > 0) {
		if (f.num == 0 || f.num > n)	/* 0: a key protobuf-c reads so */
			continue;
		if (f.type != WIRE_VARINT)
			return false;
		v[f.num - 1] = f.v;
	}
	return rc == 0;
}

/* The LEN value whose length starts at p (checked when scanned). */
static struct fk_str value_at(const struct pprof_profile *pr, uint32_t at)
{
	const uint8_t *p = pr->buf + at;
	uint64_t len = 0;

	varint(&p, pr->buf + pr->len, &len);
	return (struct fk_str){ (const char *)p, (size_t)len };
}

static uint32_t where(const struct pprof_profile *p, const uint8_t *at)
{
	return (uint32_t)(at - p->buf);
}

static uint32_t at_of(const GArray *a, size_t i)
{
	return g_array_index(a, uint32_t, i);
}

/* The profile's objects, as their messages say (numbers by field). */
struct value_type {
	int64_t type, unit;
};
struct label {
	int64_t key, str, num, num_unit;
};
struct mapping {
	uint64_t id, start, limit, offset;
	int64_t filename, build_id;
};
struct function {
	uint64_t id;
	int64_t name, system_name, filename, start_line;
};
struct location {
	uint64_t id, mapping_id, address;
	size_t nlines;
};
struct loc_line {
	uint64_t function_id;
	int64_t line;
};

static struct value_type value_type_at(const struct pprof_profile *p, uint32_t at)
{
	struct fk_str s = value_at(p, at);
	uint64_t v[2];

	read_numbers((const uint8_t *)s.s, s.len, v, 2);
	return (struct value_type){ (int64_t)v[0], (int64_t)v[1] };
}

static struct mapping mapping_read(const struct fk_str s)
{
	uint64_t v[6];

	read_numbers((const uint8_t *)s.s, s.len, v, 6);
	return (struct mapping){ v[0], v[1], v[2], v[3], (int64_t)v[4], (int64_t)v[5] };
}

static struct function function_read(const struct fk_str s)
{
	uint64_t v[5];

	read_numbers((const uint8_t *)s.s, s.len, v, 5);
	return (struct function){ v[0], (int64_t)v[1], (int64_t)v[2], (int64_t)v[3], (int64_t)v[4] };
}

/*
 * A location's numbers, and each of its lines, in order, to on_line when
 * not NULL.  False when it does not decode.
 */
static bool location_read(const struct fk_str s, struct location *l,
			  void (*on_line)(const struct loc_line *ln, void *ctx), void *ctx)
{
	struct wire w = { (const uint8_t *)s.s, (const uint8_t *)s.s + s.len };
	struct field f;
	int rc;

	memset(l, 0, sizeof(*l));
	while ((rc = next_field(&w, &f)) > 0) {
		if (f.num == LOCATION_LINE) {
			uint64_t v[2];

			if (f.type != WIRE_LEN || !read_numbers(f.data, f.len, v, 2))
				return false;
			l->nlines++;
			if (on_line) {
				struct loc_line ln = { v[0], (int64_t)v[1] };

				on_line(&ln, ctx);
			}
		} else if (f.num >= 1 && f.num <= 3) {	/* (is_folded, 5, is a bool:
							   any wire type, as
							   protobuf-c reads it) */
			if (f.type != WIRE_VARINT)
				return false;
			if (f.num == LOCATION_ID)
				l->id = f.v;
			else if (f.num == LOCATION_MAPPING_ID)
				l->mapping_id = f.v;
			else if (f.num == LOCATION_ADDRESS)
				l->address = f.v;
		}
	}
	return rc == 0;
}

/* What a sample holds, counted; false when it does not decode. */
struct sample_counts {
	size_t nlocations, nvalues, nlabels;
};

static bool sample_scan(const uint8_t *data, size_t len, struct sample_counts *c)
{
	struct wire w = { data, data + len };
	struct field f;
	struct numbers n;
	uint64_t v[4];
	int rc, got;

	memset(c, 0, sizeof(*c));
	while ((rc = next_field(&w, &f)) > 0) {
		if (f.num == SAMPLE_LOCATION_ID || f.num == SAMPLE_VALUE) {
			size_t *count = f.num == SAMPLE_VALUE ? &c->nvalues : &c->nlocations;

			if (!numbers_of(&f, &n))
				return false;
			while ((got = next_number(&n, v)) > 0)
				++*count;
			if (got < 0)
				return false;
		} else if (f.num == SAMPLE_LABEL) {
			if (f.type != WIRE_LEN || !read_numbers(f.data, f.len, v, 4))
				return false;
			c->nlabels++;
		}
	}
	return rc == 0;
}

/*
 * Calls fn on each number of the sample's field num (location ids or
 * values), in order, until it returns false.
 */
static void sample_numbers(struct fk_str s, uint32_t num,
			   bool (*fn)(uint64_t v, void *ctx), void *ctx)
{
	struct wire w = { (const uint8_t *)s.s, (const uint8_t *)s.s + s.len };
	struct field f;
	struct numbers n;
	uint64_t v;

	while (next_field(&w, &f) > 0) {
		if (f.num != num || !numbers_of(&f, &n))
			continue;
		while (next_number(&n, &v) > 0)
			if (!fn(v, ctx))
				return;
	}
}

/* The sample's labels, in order: fn on each. */
static void sample_labels(struct fk_str s, void (*fn)(const struct label *l, void *ctx),
			  void *ctx)
{
	struct wire w = { (const uint8_t *)s.s, (const uint8_t *)s.s + s.len };
	struct field f;
	uint64_t v[4];

	while (next_field(&w, &f) > 0) {
		struct label l;

		if (f.num != SAMPLE_LABEL || f.type != WIRE_LEN)
			continue;
		read_numbers(f.data, f.len, v, 4);
		l = (struct label){ (int64_t)v[0], (int64_t)v[1], (int64_t)v[2], (int64_t)v[3] };
		fn(&l, ctx);
	}
}

/* --- scanning: every message checked, every object's place kept */

static void objects_init(struct objects *o)
{
	o->at = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	o->by_id = NULL;
	o->zero_at = 0;
	o->dense = true;
}

static void objects_clear(struct objects *o)
{
	if (o->at)
		g_array_free(o->at, TRUE);
	g_free(o->by_id);
}

static void objects_add(struct pprof_profile *p, struct objects *o,
			const struct field *f, uint64_t id)
{
	uint32_t at = where(p, f->at);

	g_array_append_val(o->at, at);
	if (id == 0 && !o->zero_at)
		o->zero_at = o->at->len;
	if (id != o->at->len)
		o->dense = false;
}

static bool scan(struct pprof_profile *p)
{
	struct wire w = { p->buf, p->buf + p->len };
	struct field f;
	int rc;

	while ((rc = next_field(&w, &f)) > 0) {
		struct fk_str s = { (const char *)f.data, f.len };
		uint32_t at = where(p, f.at);
		struct sample_counts sc;
		struct location l;
		uint64_t v[2];

		switch (f.num) {
		case PROFILE_SAMPLE_TYPE:
		case PROFILE_PERIOD_TYPE:
			if (f.type != WIRE_LEN || !read_numbers(f.data, f.len, v, 2))
				return false;
			if (f.num == PROFILE_SAMPLE_TYPE)
				g_array_append_val(p->types, at);
			break;
		case PROFILE_SAMPLE:
			if (f.type != WIRE_LEN || !sample_scan(f.data, f.len, &sc))
				return false;
			g_array_append_val(p->samples, at);
			break;
		case PROFILE_MAPPING:
		case PROFILE_FUNCTION: {
			uint64_t m[6];

			if (f.type != WIRE_LEN ||
			    !read_numbers(f.data, f.len, m, f.num == PROFILE_MAPPING ? 6 : 5))
				return false;
			objects_add(p, f.num == PROFILE_MAPPING ? &p->maps : &p->funcs, &f, m[0]);
			break;
		}
		case PROFILE_LOCATION:
			if (f.type != WIRE_LEN || !location_read(s, &l, NULL, NULL))
				return false;
			objects_add(p, &p->locs, &f, l.id);
			break;
		case PROFILE_STRING_TABLE:
			if (f.type != WIRE_LEN)
				return false;
			g_array_append_val(p->strings, at);
			break;
		case PROFILE_COMMENT: {
			struct numbers n;
			int got;

			if (!numbers_of(&f, &n))
				return false;
			while ((got = next_number(&n, v)) > 0)
				;
			if (got < 0)
				return false;
			break;
		}
		case PROFILE_DROP_FRAMES:
		case PROFILE_KEEP_FRAMES:
		case PROFILE_TIME_NANOS:
		case PROFILE_DURATION_NANOS:
		case PROFILE_PERIOD:
		case PROFILE_DEFAULT_SAMPLE_TYPE:
			if (f.type != WIRE_VARINT)
				return false;
			if (f.num == PROFILE_DROP_FRAMES)
				p->drop_frames = (int64_t)f.v;
			else if (f.num == PROFILE_KEEP_FRAMES)
				p->keep_frames = (int64_t)f.v;
			else if (f.num == PROFILE_DEFAULT_SAMPLE_TYPE)
				p->default_sample_type = (int64_t)f.v;
			break;
		default:	/* a field of a newer profile.proto */
			break;
		}
	}
	return rc == 0;
}

/* --- checking what was scanned */

static int cmp_id_pos(const void *a, const void *b)
{
	const struct id_pos *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The id of object i (an object's id is its field 1, in every kind). */
static uint64_t id_of(const struct pprof_profile *p, const struct objects *o, size_t i)
{
	struct fk_str s = value_at(p, at_of(o->at, i));
	uint64_t v[1];

	read_numbers((const uint8_t *)s.s, s.len, v, 1);
	return v[0];
}

/* what names the objects in messages */
static bool index_ids(const struct pprof_profile *p, struct objects *o, const char *what,
		      GError **err)
{
	size_t n = o->at->len;

	if (o->zero_at) {
		fk_error_at(err, FK_ERROR_PARSE, p->name, 0, "%s %zu has id 0", what, o->zero_at);
		return false;
	}
	if (o->dense)
		return true;
	o->by_id = g_new(struct id_pos, n);
	for (size_t i = 0; i < n; i++)
		o->by_id[i] = (struct id_pos){ id_of(p, o, i), (uint32_t)i };
	qsort(o->by_id, n, sizeof(*o->by_id), cmp_id_pos);
	for (size_t i = 1; i < n; i++)
		if (o->by_id[i].id == o->by_id[i - 1].id) {
			fk_error_at(err, FK_ERROR_PARSE, p->name, 0,
				    "two %ss have id %" G_GUINT64_FORMAT, what, o->by_id[i].id);
			return false;
		}
	return true;
}

/* The position of the object with id, or -1. */
static long find_id(const struct objects *o, uint64_t id)
{
	size_t lo = 0, hi = o->at->len;

	if (!o->by_id)
		return id >= 1 && id <= o->at->len ? (long)(id - 1) : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->by_id[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->at->len && o->by_id[lo].id == id ? (long)o->by_id[lo].pos : -1;
}

/* Object i's bytes. */
static struct fk_str object(const struct pprof_profile *p, const struct objects *o, size_t i)
{
	return value_at(p, at_of(o->at, i));
}

struct checker {
	const struct pprof_profile *p;
	GError **err;
	bool ok;
	size_t sample;		/* the sample being checked, from 1 */
	size_t location;	/* the location being checked, from 1 */
};

/* A string index must name an entry of the string table. */
static void check_str(struct checker *c, int64_t i, const char *what, size_t n,
		      const char *field)
{
	size_t ns = c->p->strings->len;

	if (!c->ok || (i >= 0 && (uint64_t)i < ns))
		return;
	if (n)
		fk_error_at(c->err, FK_ERROR_PARSE, c->p->name, 0,
			    "%s %zu: %s is string %" G_GINT64_FORMAT ", past the %zu strings",
			    what, n, field, i, ns);
	else
		fk_error_at(c->err, FK_ERROR_PARSE, c->p->name, 0,
			    "%s is string %" G_GINT64_FORMAT ", past the %zu strings", field, i, ns);
	c->ok = false;
}

static void check_ref(struct checker *c, const struct objects *o, uint64_t id,
		      const char *what, size_t n, const char *target)
{
	if (!c->ok || find_id(o, id) >= 0)
		return;
	fk_error_at(c->err, FK_ERROR_PARSE, c->p->name, 0,
		    "%s %zu: %s %" G_GUINT64_FORMAT " does not exist", what, n, target, id);
	c->ok = false;
}

static void check_line(const struct loc_line *ln, void *ctx)
{
	struct checker *c = ctx;

	if (ln->function_id)
		check_ref(c, &c->p->funcs, ln->function_id, "location", c->location, "function");
}

static bool check_location_ref(uint64_t id, void *ctx)
{
	struct checker *c = ctx;

	check_ref(c, &c->p->locs, id, "sample", c->sample, "location");
	return c->ok;
}

static void check_label(const struct label *l, void *ctx)
{
	struct checker *c = ctx;

	check_str(c, l->key, "sample", c->sample, "a label's key");
	check_str(c, l->str, "sample", c->sample, "a label's value");
	check_str(c, l->num_unit, "sample", c->sample, "a label's unit");
}

/*
 * The string indexes of the top level's field num that are not kept:
 * the period type's, the comments.
 */
static void check_top_strings(struct checker *c, uint32_t num)
{
	const struct pprof_profile *p = c->p;
	struct wire w = { p->buf, p->buf + p->len };
	struct field f;
	size_t ncomment = 0;

	while (c->ok && next_field(&w, &f) > 0) {
		if (f.num != num)
			continue;
		if (f.num == PROFILE_PERIOD_TYPE) {
			struct value_type t = value_type_at(p, where(p, f.at));

			check_str(c, t.type, "period type", 0, "the period type");
			check_str(c, t.unit, "period type", 0, "the period unit");
		} else if (f.num == PROFILE_COMMENT) {
			struct numbers n;
			uint64_t v;

			if (!numbers_of(&f, &n))	/* (checked by scan()) */
				continue;
			while (c->ok && next_number(&n, &v) > 0)
				check_str(c, (int64_t)v, "comment", ++ncomment, "its text");
		}
	}
}

static bool check(struct pprof_profile *p, GError **err)
{
	struct checker c = { p, err, true, 0, 0 };

	if (p->strings->len == 0 || value_at(p, at_of(p->strings, 0)).len != 0) {
		fk_error_at(err, FK_ERROR_PARSE, p->name, 0, "%s: not a pprof profile",
			    p->strings->len ? "the string table does not start with \"\""
					    : "no string table");
		return false;
	}
	if (p->types->len == 0) {
		fk_error_at(err, FK_ERROR_PARSE, p->name, 0, "no sample types: not a pprof profile");
		return false;
	}
	c.ok = index_ids(p, &p->maps, "mapping", err) && index_ids(p, &p->locs, "location", err) &&
	       index_ids(p, &p->funcs, "function", err);

	for (size_t i = 0; c.ok && i < p->types->len; i++) {
		struct value_type t = value_type_at(p, at_of(p->types, i));

		check_str(&c, t.type, "sample type", i + 1, "type");
		check_str(&c, t.unit, "sample type", i + 1, "unit");
	}
	check_top_strings(&c, PROFILE_PERIOD_TYPE);
	check_str(&c, p->drop_frames, "", 0, "drop_frames");
	check_str(&c, p->keep_frames, "", 0, "keep_frames");
	check_top_strings(&c, PROFILE_COMMENT);
	for (size_t i = 0; c.ok && i < p->maps.at->len; i++) {
		struct mapping m = mapping_read(object(p, &p->maps, i));

		check_str(&c, m.filename, "mapping", i + 1, "the file name");
		check_str(&c, m.build_id, "mapping", i + 1, "the build id");
	}
	for (size_t i = 0; c.ok && i < p->funcs.at->len; i++) {
		struct function fn = function_read(object(p, &p->funcs, i));

		check_str(&c, fn.name, "function", i + 1, "the name");
		check_str(&c, fn.system_name, "function", i + 1, "the system name");
		check_str(&c, fn.filename, "function", i + 1, "the file name");
	}
	for (size_t i = 0; c.ok && i < p->locs.at->len; i++) {
		struct location l;

		c.location = i + 1;
		location_read(object(p, &p->locs, i), &l, NULL, NULL);
		if (l.mapping_id)
			check_ref(&c, &p->maps, l.mapping_id, "location", i + 1, "mapping");
		if (c.ok)
			location_read(object(p, &p->locs, i), &l, check_line, &c);
		if (c.ok && l.nlines > BOUNDS_MAX_FRAMES) {
			fk_error_at(err, FK_ERROR_RANGE, p->name, 0,
				    "location %zu: %zu lines, more than the %u frames a stack may have",
				    i + 1, l.nlines, BOUNDS_MAX_FRAMES);
			c.ok = false;
		}
	}
	for (size_t i = 0; c.ok && i < p->samples->len; i++) {
		struct fk_str s = value_at(p, at_of(p->samples, i));
		struct sample_counts sc;

		c.sample = i + 1;
		sample_scan((const uint8_t *)s.s, s.len, &sc);
		if (sc.nvalues != p->types->len) {
			fk_error_at(err, FK_ERROR_PARSE, p->name, 0,
				    "sample %zu: %zu values for %u sample types", i + 1,
				    sc.nvalues, p->types->len);
			c.ok = false;
			break;
		}
		sample_numbers(s, SAMPLE_LOCATION_ID, check_location_ref, &c);
		if (c.ok)
			sample_labels(s, check_label, &c);
		if (c.ok && sc.nlocations > BOUNDS_MAX_FRAMES) {
			fk_error_at(err, FK_ERROR_RANGE, p->name, 0,
				    "sample %zu: %zu locations, more than the %u frames a stack may have",
				    i + 1, sc.nlocations, BOUNDS_MAX_FRAMES);
			c.ok = false;
		}
	}
	return c.ok;
}

/* Takes buf (g_malloc'd, len bytes of profile.proto). */
static struct pprof_profile *parse_owned(uint8_t *buf, size_t len, const char *name,
					 GError **err)
{
	struct pprof_profile *p = g_new0(struct pprof_profile, 1);

	p->name = g_strdup(name);
	p->buf = buf;
	p->len = len;
	p->strings = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	p->types = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	p->samples = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	objects_init(&p->maps);
	objects_init(&p->locs);
	objects_init(&p->funcs);
	if (len == 0) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0, "empty: not a pprof profile");
		pprof_profile_free(p);
		return NULL;
	}
	if (!scan(p)) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0,
			    "not a pprof profile: the protocol buffer does not decode");
		pprof_profile_free(p);
		return NULL;
	}
	if (!check(p, err)) {
		pprof_profile_free(p);
		return NULL;
	}
	return p;
}

/* The bytes of a GByteArray, no larger than they are. */
static uint8_t *bytes_of(GByteArray *a, size_t *len)
{
	*len = a->len;
	return g_realloc(g_byte_array_free(a, FALSE), MAX(*len, 1));
}

struct pprof_profile *pprof_profile_parse(const void *data, size_t len,
					  const char *name, size_t max_bytes,
					  GError **err)
{
	uint8_t *buf;

	if (!max_bytes || max_bytes > PPROF_MAX_BYTES)
		max_bytes = PPROF_MAX_BYTES;
	name = name ? name : "<stdin>";
	if (is_gzip(data, len)) {
		GByteArray *plain = gunzip(data, len, name, max_bytes, err);

		if (!plain)
			return NULL;
		buf = bytes_of(plain, &len);
	} else if (len > max_bytes) {
		fk_error_at(err, FK_ERROR_RANGE, name, 0, "larger than %zu MiB: not read",
			    max_bytes >> 20);
		return NULL;
	} else {
		buf = g_malloc(MAX(len, 1));
		if (len)
			memcpy(buf, data, len);
	}
	return parse_owned(buf, len, name, err);
}

struct pprof_profile *pprof_profile_read(const char *path, size_t max_bytes,
					 GError **err)
{
	bool in = !path || strcmp(path, "-") == 0;
	const char *name = in ? "<stdin>" : path;
	int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	GByteArray *buf;
	struct pprof_profile *p = NULL;
	struct stat st;

	if (fd < 0) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "cannot open: %s", g_strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "is a directory");
		if (!in)
			close(fd);
		return NULL;
	}
	if (!max_bytes || max_bytes > PPROF_MAX_BYTES)
		max_bytes = PPROF_MAX_BYTES;
	buf = g_byte_array_new();
	if (read_all(fd, name, max_bytes, buf, err)) {
		if (is_gzip(buf->data, buf->len)) {
			GByteArray *plain = gunzip(buf->data, buf->len, name, max_bytes, err);

			g_byte_array_unref(buf);
			buf = NULL;
			if (plain) {
				size_t len;
				uint8_t *bytes = bytes_of(plain, &len);

				p = parse_owned(bytes, len, name, err);
			}
		} else if (buf->len > max_bytes) {
			fk_error_at(err, FK_ERROR_RANGE, name, 0, "larger than %zu MiB: not read",
				    max_bytes >> 20);
		} else {
			size_t len;
			uint8_t *bytes = bytes_of(buf, &len);

			buf = NULL;
			p = parse_owned(bytes, len, name, err);
		}
	}
	if (buf)
		g_byte_array_unref(buf);
	if (!in)
		close(fd);
	return p;
}

void pprof_profile_free(struct pprof_profile *p)
{
	if (!p)
		return;
	g_free(p->buf);
	g_array_free(p->strings, TRUE);
	g_array_free(p->types, TRUE);
	g_array_free(p->samples, TRUE);
	objects_clear(&p->maps);
	objects_clear(&p->locs);
	objects_clear(&p->funcs);
	g_free(p->name);
	g_free(p);
}

size_t pprof_profile_types(const struct pprof_profile *p)
{
	return p->types->len;
}

/* String i (checked to exist). */
static struct fk_str str(const struct pprof_profile *p, int64_t i)
{
	return value_at(p, at_of(p->strings, (size_t)i));
}

static bool str_is(struct fk_str s, const char *c)
{
	return s.len == strlen(c) && memcmp(s.s, c, s.len) == 0;
}

char *pprof_profile_type(const struct pprof_profile *p, size_t i)
{
	struct value_type t = value_type_at(p, at_of(p->types, i));
	struct fk_str type = str(p, t.type), unit = str(p, t.unit);
	GString *s = g_string_new_len(type.s, (gssize)type.len);

	g_string_append_c(s, '/');
	g_string_append_len(s, unit.s, (gssize)unit.len);
	return g_string_free(s, FALSE);
}

int pprof_profile_sample_index(const struct pprof_profile *p, const char *spec,
			       GError **err)
{
	size_t n = p->types->len;
	char *end;
	unsigned long v;

	if (!spec) {
		/* pprof's default: default_sample_type, else the last type */
		for (size_t i = 0; p->default_sample_type && i < n; i++)
			if (value_type_at(p, at_of(p->types, i)).type == p->default_sample_type)
				return (int)i;
		return (int)n - 1;
	}
	errno = 0;
	v = strtoul(spec, &end, 10);
	if (*spec && !*end && g_ascii_isdigit(*spec)) {
		if (errno || v >= n) {
			fk_error_at(err, FK_ERROR_USAGE, p->name, 0,
				    "--sample-index %s: the profile has %zu sample types (0 to %zu)",
				    spec, n, n - 1);
			return -1;
		}
		return (int)v;
	}
	for (size_t i = 0; i < n; i++)
		if (str_is(str(p, value_type_at(p, at_of(p->types, i)).type), spec))
			return (int)i;
	{
		GString *types = g_string_new(NULL);

		for (size_t i = 0; i < n; i++) {
			struct fk_str t = str(p, value_type_at(p, at_of(p->types, i)).type);

			g_string_append(types, i ? ", " : "");
			g_string_append_len(types, t.s, (gssize)t.len);
		}
		fk_error_at(err, FK_ERROR_USAGE, p->name, 0,
			    "--sample-index '%s': no such sample type (the profile has %s)",
			    spec, types->str);
		g_string_free(types, TRUE);
	}
	return -1;
}

/* --- collapsing */

/* What is written before each location's text in namer.texts. */
struct text_head {
	uint32_t len, frames;
};

/*
 * The names of the locations used, each made once (samples share them):
 * the texts one after another in one buffer, each after its text_head.
 */
struct namer {
	const struct pprof_profile *p;
	const struct pprof_collapse_opts *o;
	uint32_t *loc_text;	/* per location: 1 + where its head is in
				   texts; 0 until it is named */
	GString *texts;
	GArray *lines;		/* struct loc_line: scratch */
	GString *escaped;	/* a name with its NUL bytes written "\0" */
	GString *label;		/* a label frame before it is tidied */
	size_t stack_limit;	/* the most bytes a stack may have */
	bool limit_is_output;	/* ... because of the output limit */
	uint64_t output_limit;
	size_t sample;		/* the sample being collapsed, from 1 */
	GError **err;
};

/* Sets *err: the current sample's stack passes nm->stack_limit. */
static void too_long(struct namer *nm)
{
	char size[32];

	if (nm->limit_is_output)
		fk_error_at(nm->err, FK_ERROR_RANGE, nm->p->name, 0,
			    "its folded stacks pass %s, the output limit (--max-output)",
			    bounds_size(nm->output_limit, size));
	else
		fk_error_at(nm->err, FK_ERROR_RANGE, nm->p->name, 0,
			    "sample %zu: a stack longer than %u MiB, the longest line foldkit's readers take",
			    nm->sample, LINE_READER_MAX_LINE >> 20);
}

/*
 * s as the folded format can hold it: a NUL byte written "\0" (cutting
 * the name there would hide what follows).  NULL (with *err set) for a
 * name longer than BOUNDS_MAX_NAME; what and n say whose name it is.
 */
static const struct fk_str *name_text(struct namer *nm, struct fk_str *s,
				      const char *what, size_t n)
{
	if (s->len > BOUNDS_MAX_NAME) {
		fk_error_at(nm->err, FK_ERROR_RANGE, nm->p->name, 0,
			    "%s %zu: a name of %zu bytes, more than %u MiB", what, n, s->len,
			    BOUNDS_MAX_NAME >> 20);
		return NULL;
	}
	if (memchr(s->s, '\0', s->len)) {
		GString *e = nm->escaped;

		g_string_truncate(e, 0);
		for (size_t i = 0; i < s->len; i++)
			if (s->s[i])
				g_string_append_c(e, s->s[i]);
			else
				g_string_append(e, "\\0");
		*s = (struct fk_str){ e->str, e->len };
	}
	return s;
}

/* A location without lines (not symbolized): "[BINARY]", or "[unknown]". */
static bool unsymbolized_frame(struct namer *nm, const struct location *l, GString *out)
{
	const struct pprof_profile *p = nm->p;
	long mi = l->mapping_id ? find_id(&p->maps, l->mapping_id) : -1;
	struct fk_str file = { "", 0 };
	struct frame_name_opts fo = { .include_addrs = nm->o->addrs };
	char pc[24];
	struct perf_frame f = { .sym = { "[unknown]", 9 } };

	if (mi >= 0) {
		file = str(p, mapping_read(object(p, &p->maps, (size_t)mi)).filename);
		if (!name_text(nm, &file, "mapping", (size_t)mi + 1))
			return false;
	}
	f.dso = file.len ? file : (struct fk_str){ "[unknown]", 9 };
	f.pc.len = (size_t)g_snprintf(pc, sizeof(pc), "%" G_GINT64_MODIFIER "x", l->address);
	f.pc.s = pc;
	frame_name_append(out, &fo, &f, false);
	return true;
}

static void keep_line(const struct loc_line *ln, void *lines)
{
	g_array_append_vals(lines, ln, 1);
}

/*
 * Location pos's frames, root first (its lines from the last, the
 * function the address is in, to the first, the innermost inlined call),
 * named once into nm->texts.  False with *err set.
 */
static bool location_text(struct namer *nm, size_t pos, struct fk_str *text, uint32_t *frames)
{
	const struct pprof_profile *p = nm->p;
	GString *out = nm->texts;
	struct text_head h = { 0, 0 };
	struct location l;
	size_t head, from;

	if (nm->loc_text[pos]) {
		memcpy(&h, out->str + nm->loc_text[pos] - 1, sizeof(h));
		*text = (struct fk_str){ out->str + nm->loc_text[pos] - 1 + sizeof(h), h.len };
		*frames = h.frames;
		return true;
	}
	if (out->len > UINT32_MAX - nm->stack_limit - 2 * BOUNDS_MAX_NAME - 64) {
		fk_error_at(nm->err, FK_ERROR_RANGE, p->name, 0,
			    "the names of its locations pass 4 GiB");
		return false;
	}
	head = out->len;
	g_string_set_size(out, head + sizeof(h));
	from = out->len;
	g_array_set_size(nm->lines, 0);	/* at most BOUNDS_MAX_FRAMES (check()) */
	location_read(object(p, &p->locs, pos), &l, keep_line, nm->lines);
	if (nm->lines->len == 0) {
		if (!unsymbolized_frame(nm, &l, out))
			return false;
		h.frames = 1;
	}
	for (size_t j = nm->lines->len; j-- > 0;) {
		const struct loc_line *ln = &g_array_index(nm->lines, struct loc_line, j);
		long fi = ln->function_id ? find_id(&p->funcs, ln->function_id) : -1;
		struct fk_str name = { "[unknown]", 9 }, file = { "", 0 };

		if (fi >= 0) {
			struct function fn = function_read(object(p, &p->funcs, (size_t)fi));

			name = str(p, fn.name);
			if (!name.len)	/* else the system name */
				name = str(p, fn.system_name);
			if (nm->o->lines)
				file = str(p, fn.filename);
		}
		if (out->len > from)
			g_string_append_c(out, ';');
		if (!name_text(nm, &name, "function", (size_t)fi + 1))
			return false;
		frame_name_append_text(out, name.s, name.len, 0);
		if (file.len) {
			g_string_append_c(out, ':');
			if (!name_text(nm, &file, "function", (size_t)fi + 1))
				return false;
			frame_name_append_text(out, file.s, file.len, 0);
			if (ln->line)
				g_string_append_printf(out, ":%" G_GINT64_FORMAT, ln->line);
		}
		h.frames++;
		if (out->len - from > nm->stack_limit) {
			too_long(nm);
			return false;
		}
	}
	h.len = (uint32_t)(out->len - from);
	memcpy(out->str + head, &h, sizeof(h));
	nm->loc_text[pos] = (uint32_t)head + 1;
	*text = (struct fk_str){ out->str + from, h.len };
	*frames = h.frames;
	return true;
}

/* Building a root frame "KEY=VALUE[,VALUE...]" from a sample's labels. */
struct label_frame {
	struct namer *nm;
	const char *key;
	bool any, ok;
};

static void add_label_value(const struct label *l, void *ctx)
{
	struct label_frame *lf = ctx;
	struct namer *nm = lf->nm;
	GString *raw = nm->label;

	if (!lf->ok || !str_is(str(nm->p, l->key), lf->key))
		return;
	g_string_append(raw, lf->any ? "," : "=");
	lf->any = true;
	if (l->str) {
		struct fk_str v = str(nm->p, l->str);

		if (!name_text(nm, &v, "sample", nm->sample)) {
			lf->ok = false;
			return;
		}
		g_string_append_len(raw, v.s, (gssize)v.len);
	} else {
		struct fk_str unit = str(nm->p, l->num_unit);

		g_string_append_printf(raw, "%" G_GINT64_FORMAT, l->num);
		if (unit.len) {
			g_string_append_c(raw, ' ');
			if (!name_text(nm, &unit, "sample", nm->sample)) {
				lf->ok = false;
				return;
			}
			g_string_append_len(raw, unit.s, (gssize)unit.len);
		}
	}
	if (raw->len > nm->stack_limit) {
		too_long(nm);
		lf->ok = false;
	}
}

/*
 * Appends the sample's root frame for label key (its values joined by
 * ','), if it has that label, tidied as frame names are.  False with
 * *err set.
 */
static bool label_frame(struct namer *nm, struct fk_str s, const char *key, GString *out,
			uint32_t *frames)
{
	struct label_frame lf = { nm, key, false, true };

	g_string_assign(nm->label, key);
	sample_labels(s, add_label_value, &lf);
	if (!lf.ok || !lf.any)
		return lf.ok;
	if (out->len)
		g_string_append_c(out, ';');
	/* the folded format's separators, as in frame names */
	frame_name_append_text(out, nm->label->str, nm->label->len, 0);
	++*frames;
	if (out->len > nm->stack_limit) {
		too_long(nm);
		return false;
	}
	return true;
}

/* Picking a sample's value number want. */
struct pick {
	size_t at, want;
	int64_t v;
};

static bool pick_value(uint64_t v, void *ctx)
{
	struct pick *pk = ctx;

	if (pk->at++ != pk->want)
		return true;
	pk->v = (int64_t)v;
	return false;
}

/* Collecting a sample's locations, as positions, leaf first. */
struct positions {
	const struct objects *locs;
	GArray *pos;		/* uint32_t */
};

static bool add_position(uint64_t id, void *ctx)
{
	struct positions *ps = ctx;
	uint32_t pos = (uint32_t)find_id(ps->locs, id);

	g_array_append_val(ps->pos, pos);
	return true;
}

/* Sample s's stack into stack; false with *err set. */
static bool sample_stack(struct namer *nm, struct fk_str s, GString *stack, GArray *positions)
{
	uint32_t frames = 0;

	g_string_truncate(stack, 0);
	for (size_t k = 0; k < nm->o->ntagroot; k++)
		if (!label_frame(nm, s, nm->o->tagroot[k], stack, &frames))
			return false;
	g_array_set_size(positions, 0);	/* at most BOUNDS_MAX_FRAMES (check()) */
	sample_numbers(s, SAMPLE_LOCATION_ID, add_position,
		       &(struct positions){ &nm->p->locs, positions });
	/* its size first: a stack refused is never made */
	for (size_t j = positions->len, len = stack->len; j-- > 0;) {
		struct fk_str text;
		uint32_t n;

		if (!location_text(nm, g_array_index(positions, uint32_t, j), &text, &n))
			return false;
		frames += n;
		len += (len > 0) + text.len;
		if (frames > BOUNDS_MAX_FRAMES) {
			fk_error_at(nm->err, FK_ERROR_RANGE, nm->p->name, 0,
				    "sample %zu: a stack of more than %u frames", nm->sample,
				    BOUNDS_MAX_FRAMES);
			return false;
		}
		if (len > nm->stack_limit) {
			too_long(nm);
			return false;
		}
	}
	for (size_t j = positions->len; j-- > 0;) {
		struct fk_str text;
		uint32_t n;

		location_text(nm, g_array_index(positions, uint32_t, j), &text, &n);
		if (stack->len)
			g_string_append_c(stack, ';');
		g_string_append_len(stack, text.s, (gssize)text.len);
	}
	return true;
}

struct fold_table *pprof_collapse(const struct pprof_profile *p,
				  const struct pprof_collapse_opts *o,
				  struct skip_log *skips, GError **err)
{
	struct output_bound bound = { 0, o->max_output ? o->max_output : BOUNDS_DEFAULT_OUTPUT };
	struct namer nm = {
		.p = p, .o = o, .err = err, .output_limit = bound.limit,
		.stack_limit = (size_t)MIN((uint64_t)BOUNDS_MAX_STACK, bound.limit),
		.limit_is_output = bound.limit < BOUNDS_MAX_STACK,
	};
	struct fold_table *t;
	GString *stack;
	GArray *positions;
	bool ok = true;

	if (o->sample_index < 0 || (size_t)o->sample_index >= p->types->len) {
		fk_error_at(err, FK_ERROR_USAGE, p->name, 0, "sample index %d: the profile has %u sample types",
			    o->sample_index, p->types->len);
		return NULL;
	}
	t = fold_table_new();
	stack = g_string_new(NULL);
	positions = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	nm.loc_text = g_new0(uint32_t, p->locs.at->len + 1);
	nm.texts = g_string_new(NULL);
	nm.lines = g_array_new(FALSE, FALSE, sizeof(struct loc_line));
	nm.escaped = g_string_new(NULL);
	nm.label = g_string_new(NULL);
	for (size_t i = 0; ok && i < p->samples->len; i++) {
		struct fk_str s = value_at(p, at_of(p->samples, i));
		struct pick pk = { 0, (size_t)o->sample_index, 0 };

		nm.sample = i + 1;
		sample_numbers(s, SAMPLE_VALUE, pick_value, &pk);
		if (pk.v < 0) {
			if (skips)
				skip_log_add(skips, p->name, i + 1, "sample with a negative value");
			continue;
		}
		if (!(ok = sample_stack(&nm, s, stack, positions)))
			break;
		if (!stack->len) {
			if (skips)
				skip_log_add(skips, p->name, i + 1, "sample without locations");
			continue;
		}
		if (stack->str[0] == '#')
			stack->str[0] = '_';
		ok = output_bound_add(&bound, t, stack->str, stack->len,
				      fk_count_from_u64((uint64_t)pk.v), p->name, err) == 0;
	}
	g_free(nm.loc_text);
	g_string_free(nm.texts, TRUE);
	g_array_free(nm.lines, TRUE);
	g_string_free(nm.escaped, TRUE);
	g_string_free(nm.label, TRUE);
	g_array_free(positions, TRUE);
	g_string_free(stack, TRUE);
	if (!ok) {
		fold_table_free(t);
		return NULL;
	}
	return t;
}
