#include "export/pprof.h"

#include "core/error.h"
#include "core/intern.h"
#include "core/jsonesc.h"
#include "export/framepath.h"
#include "gen/profile.pb-c.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

/*
 * Everything is interned as bytes: strings (with their NUL, so the string
 * table can point at them), and mappings, functions, locations and
 * samples as arrays of 64-bit fields.  An object's id is its intern index
 * + 1 (pprof reserves 0); a string's is its index (string 0 is "").
 */

struct sample {
	size_t locs, nlocs, labels, nlabels;
};

struct pprof_builder {
	struct fk_intern *strings;
	struct fk_intern *mappings;	/* start, limit, offset, file, build id */
	struct fk_intern *functions;	/* name, file */
	struct fk_intern *locations;	/* mapping, address, (function, line)... */
	/* samples, in order: their location ids and labels in two flat
	 * arrays (a label is 4 int64s: key, str, num, unit) */
	GArray *samples;		/* struct sample */
	GArray *slocs;			/* uint64_t */
	GArray *slabels;		/* int64_t */
	GArray *values;			/* fk_count per sample */
	struct fk_intern *sindex;	/* key -> sample, for pprof_add() */
	int64_t type[2], period_type[2], period;
	GArray *comments;		/* int64_t string ids */
	GString *tmp, *key;
	uint64_t replaced;
	/* pprof_add_folded(): a location per frame name, labels per root */
	struct frame_path fp;
	GArray *frame_loc;		/* uint32_t location id, by frame id */
	struct fk_intern *frame_names;
	GHashTable *root_labels;	/* location id -> GArray of int64_t[4] */
	bool stable;			/* frame names outlive the builder */
};

static int64_t string_id(struct pprof_builder *b, const char *s, size_t len)
{
	bool added;
	uint32_t id;

	g_string_truncate(b->tmp, 0);
	if (fk_utf8_ok(s, len)) {
		g_string_append_len(b->tmp, s, (gssize)len);
		g_string_append_c(b->tmp, '\0');
		return fk_intern_id(b->strings, b->tmp->str, b->tmp->len, NULL);
	}
	fk_utf8_fix(b->tmp, s, len);
	g_string_append_c(b->tmp, '\0');
	id = fk_intern_id(b->strings, b->tmp->str, b->tmp->len, &added);
	if (added)
		b->replaced++;
	return id;
}

static int64_t cstring_id(struct pprof_builder *b, const char *s)
{
	return s ? string_id(b, s, strlen(s)) : 0;
}

struct pprof_builder *pprof_new(const char *type, const char *unit)
{
	struct pprof_builder *b = g_new0(struct pprof_builder, 1);

	b->strings = fk_intern_new();
	b->mappings = fk_intern_new();
	b->functions = fk_intern_new();
	b->locations = fk_intern_new();
	b->samples = g_array_new(FALSE, FALSE, sizeof(struct sample));
	b->slocs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	b->slabels = g_array_new(FALSE, FALSE, sizeof(int64_t));
	b->sindex = fk_intern_new();
	b->values = g_array_new(FALSE, FALSE, sizeof(fk_count));
	b->comments = g_array_new(FALSE, FALSE, sizeof(int64_t));
	b->tmp = g_string_new(NULL);
	b->key = g_string_new(NULL);
	b->frame_loc = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	b->frame_names = fk_intern_new();
	b->root_labels = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)g_array_unref);
	fk_intern_id(b->strings, "", 1, NULL);		/* string 0 */
	b->type[0] = cstring_id(b, type);
	b->type[1] = cstring_id(b, unit);
	return b;
}

void pprof_free(struct pprof_builder *b)
{
	if (!b)
		return;
	fk_intern_free(b->strings);
	fk_intern_free(b->mappings);
	fk_intern_free(b->functions);
	fk_intern_free(b->locations);
	g_array_free(b->samples, TRUE);
	g_array_free(b->slocs, TRUE);
	g_array_free(b->slabels, TRUE);
	fk_intern_free(b->sindex);
	g_array_free(b->values, TRUE);
	g_array_free(b->comments, TRUE);
	g_string_free(b->tmp, TRUE);
	g_string_free(b->key, TRUE);
	frame_path_release(&b->fp);
	g_array_free(b->frame_loc, TRUE);
	fk_intern_free(b->frame_names);
	g_hash_table_destroy(b->root_labels);
	g_free(b);
}

void pprof_set_period(struct pprof_builder *b, const char *type,
		      const char *unit, int64_t period)
{
	b->period_type[0] = cstring_id(b, type);
	b->period_type[1] = cstring_id(b, unit);
	b->period = period;
}

void pprof_add_comment(struct pprof_builder *b, const char *text)
{
	int64_t id = cstring_id(b, text);

	g_array_append_val(b->comments, id);
}

static void key_u64(GString *k, uint64_t v)
{
	g_string_append_len(k, (const char *)&v, sizeof(v));
}

static uint64_t intern_key(struct fk_intern *in, GString *k)
{
	return (uint64_t)fk_intern_id(in, k->str, k->len, NULL) + 1;
}

uint64_t pprof_mapping(struct pprof_builder *b, uint64_t start, uint64_t limit,
		       uint64_t offset, const char *file, const char *build_id)
{
	int64_t f = cstring_id(b, file), id = cstring_id(b, build_id);

	g_string_truncate(b->key, 0);
	key_u64(b->key, start);
	key_u64(b->key, limit);
	key_u64(b->key, offset);
	key_u64(b->key, (uint64_t)f);
	key_u64(b->key, (uint64_t)id);
	return intern_key(b->mappings, b->key);
}

uint64_t pprof_function(struct pprof_builder *b, const char *name, size_t len,
			const char *file, size_t flen)
{
	int64_t n = string_id(b, name, len), f = file ? string_id(b, file, flen) : 0;

	g_string_truncate(b->key, 0);
	key_u64(b->key, (uint64_t)n);
	key_u64(b->key, (uint64_t)f);
	return intern_key(b->functions, b->key);
}

uint64_t pprof_location(struct pprof_builder *b, uint64_t mapping,
			uint64_t address, const struct pprof_line *lines,
			size_t n)
{
	g_string_truncate(b->key, 0);
	key_u64(b->key, mapping);
	key_u64(b->key, address);
	for (size_t i = 0; i < n; i++) {
		key_u64(b->key, lines[i].function);
		key_u64(b->key, (uint64_t)lines[i].line);
	}
	return intern_key(b->locations, b->key);
}

static void new_sample(struct pprof_builder *b, const uint64_t *locs, size_t n,
		       const int64_t *labels, size_t nlabels, fk_count value)
{
	struct sample smp = { b->slocs->len, n, b->slabels->len, nlabels };

	g_array_append_val(b->samples, smp);
	g_array_append_vals(b->slocs, locs, (guint)n);
	g_array_append_vals(b->slabels, labels, (guint)(4 * nlabels));
	g_array_append_val(b->values, value);
}

static int check_value(fk_count value, GError **err)
{
	char buf[FK_COUNT_BUFSZ];

	if (value >= 0 && fk_count_is_integer(value))
		return 0;
	buf[fk_count_format(value, buf)] = '\0';
	g_set_error(err, FK_ERROR, FK_ERROR_RANGE,
		    value < 0 ? "value %s is negative"
			      : "value %s is not a whole number: pprof values are integers", buf);
	return -1;
}

int pprof_add(struct pprof_builder *b, const uint64_t *locations, size_t n,
	      const struct pprof_label *labels, size_t nlabels, fk_count value,
	      GError **err)
{
	int64_t *l = g_new(int64_t, nlabels * 4 + 1);
	size_t k = 0;
	bool added;
	uint32_t i;

	if (check_value(value, err) < 0) {
		g_free(l);
		return -1;
	}
	for (size_t i = 0; i < nlabels; i++) {
		/* pprof takes a number label of 0 without a unit for no label:
		 * leave it out rather than write what no reader sees */
		if (!labels[i].str && !labels[i].num && !labels[i].unit)
			continue;
		l[4 * k] = cstring_id(b, labels[i].key);
		l[4 * k + 1] = labels[i].str ? cstring_id(b, labels[i].str) : 0;
		l[4 * k + 2] = labels[i].str ? 0 : labels[i].num;
		l[4 * k + 3] = labels[i].str ? 0 : cstring_id(b, labels[i].unit);
		k++;
	}
	/* the same locations and labels make the same sample */
	g_string_truncate(b->key, 0);
	key_u64(b->key, n);
	g_string_append_len(b->key, (const char *)locations, (gssize)(n * sizeof(*locations)));
	g_string_append_len(b->key, (const char *)l, (gssize)(k * 4 * sizeof(*l)));
	i = fk_intern_id(b->sindex, b->key->str, b->key->len, &added);
	if (added)
		new_sample(b, locations, n, l, k, value);
	else
		g_array_index(b->values, fk_count, i) += value;
	g_free(l);
	return 0;
}

/* "NAME-PID/TID": comm, pid and tid labels (PID may be "?": no pid label) */
static GArray *thread_labels(struct pprof_builder *b, const char *s, size_t len)
{
	size_t slash, dash, i;
	GArray *l;
	int64_t lab[4];
	char num[24];

	for (slash = len; slash > 0 && s[slash - 1] != '/'; slash--)
		;
	if (slash < 2 || slash == len || len - slash > 10)
		return NULL;
	for (i = slash; i < len; i++)
		if (!g_ascii_isdigit(s[i]))
			return NULL;
	for (dash = slash - 1; dash > 0 && s[dash - 1] != '-'; dash--)
		;
	if (dash < 2 || slash - 1 - dash > 10 || slash - 1 == dash)
		return NULL;
	if (!(slash - 1 - dash == 1 && s[dash] == '?'))
		for (i = dash; i < slash - 1; i++)
			if (!g_ascii_isdigit(s[i]))
				return NULL;
	l = g_array_new(FALSE, FALSE, sizeof(lab));
	lab[0] = cstring_id(b, "comm");
	lab[1] = string_id(b, s, dash - 1);
	lab[2] = lab[3] = 0;
	g_array_append_val(l, lab);
	/* pprof reads a number label of 0 without a unit as no label at
	 * all: the idle task's pid and tid 0 are left out, not written */
	if (s[dash] != '?' && !(slash - 1 - dash == 1 && s[dash] == '0')) {
		memcpy(num, s + dash, slash - 1 - dash);
		num[slash - 1 - dash] = '\0';
		lab[0] = cstring_id(b, "pid");
		lab[1] = 0;
		lab[2] = (int64_t)g_ascii_strtoull(num, NULL, 10);
		g_array_append_val(l, lab);
	}
	memcpy(num, s + slash, len - slash);
	num[len - slash] = '\0';
	lab[0] = cstring_id(b, "tid");
	lab[1] = 0;
	lab[2] = (int64_t)g_ascii_strtoull(num, NULL, 10);
	if (lab[2])
		g_array_append_val(l, lab);
	return l;
}

/* frame_path's callback: the location of a frame name */
static uint32_t folded_location(void *ctx, uint32_t prev, const char *name, size_t len)
{
	struct pprof_builder *b = ctx;
	bool added;
	/* names are copied even from a stable stack: looked up over and
	 * over, they are better packed together than spread over the input */
	uint32_t f = fk_intern_id(b->frame_names, name, len, &added);

	if (added) {
		struct pprof_line line = { pprof_function(b, name, len, NULL, 0), 0 };
		uint32_t loc = (uint32_t)pprof_location(b, 0, 0, &line, 1);

		GArray *l = thread_labels(b, name, len);

		g_array_append_val(b->frame_loc, loc);
		if (l)		/* used where the frame is a root */
			g_hash_table_insert(b->root_labels, GUINT_TO_POINTER(loc), l);
	}
	return g_array_index(b->frame_loc, uint32_t, f);
}

int pprof_add_folded(struct pprof_builder *b, const char *stack, size_t len,
		     fk_count value, bool stable, GError **err)
{
	const uint32_t *ids;
	size_t n, at = b->slocs->len;
	GArray *labels;
	struct sample smp;
	uint64_t *locs;

	if (check_value(value, err) < 0)
		return -1;
	b->stable = stable;
	ids = frame_path_ids(&b->fp, stack, len, stable, folded_location, b, &n);
	labels = n ? g_hash_table_lookup(b->root_labels, GUINT_TO_POINTER(ids[0])) : NULL;
	/* a sample of its own: pprof adds samples with the same stack, so
	 * merging them here would change nothing but the time it takes */
	g_array_set_size(b->slocs, at + n);
	locs = &g_array_index(b->slocs, uint64_t, at);
	for (size_t i = 0; i < n; i++)		/* leaf first */
		locs[i] = ids[n - 1 - i];
	smp = (struct sample){ at, n, b->slabels->len, labels ? labels->len : 0 };
	g_array_append_val(b->samples, smp);
	if (labels)
		g_array_append_vals(b->slabels, labels->data, labels->len * 4);
	g_array_append_val(b->values, value);
	return 0;
}

size_t pprof_samples(const struct pprof_builder *b)
{
	return b->samples->len;
}

uint64_t pprof_replaced(const struct pprof_builder *b)
{
	return b->replaced;
}

/* --- writing: protobuf-c packs the message into one buffer (its
 * streaming interface costs a call per field), zlib compresses it */

static int gzip_write(const uint8_t *data, size_t len, FILE *out)
{
	z_stream z = { 0 };
	unsigned char buf[1 << 16];
	int rc;

	/* gzip (15 + 16) at level 1, as pprof itself writes: the header
	 * zlib writes holds no time and no file name */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (Bytef *)data;
	do {
		size_t chunk = MIN(len, (size_t)1 << 30), n;

		z.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			rc = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			n = sizeof(buf) - z.avail_out;
			if (rc == Z_STREAM_ERROR || (n && fwrite(buf, 1, n, out) != n)) {
				deflateEnd(&z);
				return -1;
			}
		} while (z.avail_out == 0);
	} while (len);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -1;
}

static uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The message, pointing into the builder's interned keys where it can. */
struct message {
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType type, period_type, *types[1];
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
	int64_t *values;
	char **strings;
};

static void message_free(struct message *m)
{
	g_free(m->samples);
	g_free(m->sample_ptrs);
	g_free(m->labels);
	g_free(m->label_ptrs);
	g_free(m->mappings);
	g_free(m->mapping_ptrs);
	g_free(m->locations);
	g_free(m->location_ptrs);
	g_free(m->lines);
	g_free(m->line_ptrs);
	g_free(m->functions);
	g_free(m->function_ptrs);
	g_free(m->values);
	g_free(m->strings);
}

static int build_samples(struct pprof_builder *b, struct message *m, const char *name,
			 GError **err)
{
	size_t n = b->samples->len, nlabels = b->slabels->len / 4;
	uint64_t *locs = (uint64_t *)(void *)b->slocs->data;
	const int64_t *lab = (const int64_t *)(void *)b->slabels->data;

	m->samples = g_new(Perftools__Profiles__Sample, n + 1);
	m->sample_ptrs = g_new(Perftools__Profiles__Sample *, n + 1);
	m->values = g_new(int64_t, n + 1);
	m->labels = g_new(Perftools__Profiles__Label, nlabels + 1);
	m->label_ptrs = g_new(Perftools__Profiles__Label *, nlabels + 1);
	for (size_t i = 0; i < nlabels; i++) {
		Perftools__Profiles__Label *l = &m->labels[i];

		perftools__profiles__label__init(l);
		l->key = lab[4 * i];
		l->str = lab[4 * i + 1];
		l->num = lab[4 * i + 2];
		l->num_unit = lab[4 * i + 3];
		m->label_ptrs[i] = l;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sample *smp = &g_array_index(b->samples, struct sample, i);
		Perftools__Profiles__Sample *s = &m->samples[i];
		fk_count v = g_array_index(b->values, fk_count, i);

		if (v / FK_COUNT_ONE > INT64_MAX) {
			char buf[FK_COUNT_BUFSZ];

			buf[fk_count_format(v, buf)] = '\0';
			fk_error_at(err, FK_ERROR_RANGE, name, 0,
				    "a sample's values add up to %s, above pprof's limit of 2^63-1", buf);
			return -1;
		}
		perftools__profiles__sample__init(s);
		m->sample_ptrs[i] = s;
		s->n_location_id = smp->nlocs;
		s->location_id = locs + smp->locs;
		s->n_value = 1;
		s->value = m->values + i;
		m->values[i] = (int64_t)(v / FK_COUNT_ONE);
		s->n_label = smp->nlabels;
		s->label = m->label_ptrs + smp->labels / 4;
	}
	m->p.n_sample = n;
	m->p.sample = m->sample_ptrs;
	return 0;
}

static void build_tables(struct pprof_builder *b, struct message *m)
{
	size_t n = fk_intern_size(b->mappings), nlines = 0;

	m->mappings = g_new(Perftools__Profiles__Mapping, n + 1);
	m->mapping_ptrs = g_new(Perftools__Profiles__Mapping *, n + 1);
	for (size_t i = 0; i < n; i++) {
		const char *k = fk_intern_str(b->mappings, (uint32_t)i).s;
		Perftools__Profiles__Mapping *mp = &m->mappings[i];

		perftools__profiles__mapping__init(mp);
		mp->id = i + 1;
		mp->memory_start = load64(k);
		mp->memory_limit = load64(k + 8);
		mp->file_offset = load64(k + 16);
		mp->filename = (int64_t)load64(k + 24);
		mp->build_id = (int64_t)load64(k + 32);
		mp->has_functions = true;
		m->mapping_ptrs[i] = mp;
	}
	m->p.n_mapping = n;
	m->p.mapping = m->mapping_ptrs;

	n = fk_intern_size(b->locations);
	for (size_t i = 0; i < n; i++)
		nlines += (fk_intern_str(b->locations, (uint32_t)i).len - 16) / 16;
	m->locations = g_new(Perftools__Profiles__Location, n + 1);
	m->location_ptrs = g_new(Perftools__Profiles__Location *, n + 1);
	m->lines = g_new(Perftools__Profiles__Line, nlines + 1);
	m->line_ptrs = g_new(Perftools__Profiles__Line *, nlines + 1);
	nlines = 0;
	for (size_t i = 0; i < n; i++) {
		struct fk_str k = fk_intern_str(b->locations, (uint32_t)i);
		Perftools__Profiles__Location *l = &m->locations[i];
		size_t nl = (k.len - 16) / 16;

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->mapping_id = load64(k.s);
		l->address = load64(k.s + 8);
		l->n_line = nl;
		l->line = m->line_ptrs + nlines;
		for (size_t j = 0; j < nl; j++) {
			Perftools__Profiles__Line *ln = &m->lines[nlines];

			perftools__profiles__line__init(ln);
			ln->function_id = load64(k.s + 16 + j * 16);
			ln->line = (int64_t)load64(k.s + 24 + j * 16);
			m->line_ptrs[nlines++] = ln;
		}
		m->location_ptrs[i] = l;
	}
	m->p.n_location = n;
	m->p.location = m->location_ptrs;

	n = fk_intern_size(b->functions);
	m->functions = g_new(Perftools__Profiles__Function, n + 1);
	m->function_ptrs = g_new(Perftools__Profiles__Function *, n + 1);
	for (size_t i = 0; i < n; i++) {
		const char *k = fk_intern_str(b->functions, (uint32_t)i).s;
		Perftools__Profiles__Function *f = &m->functions[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		/* names are already what to show: no system name, or pprof
		 * would "demangle" them again (cut templates and arguments) */
		f->name = (int64_t)load64(k);
		f->filename = (int64_t)load64(k + 8);
		m->function_ptrs[i] = f;
	}
	m->p.n_function = n;
	m->p.function = m->function_ptrs;

	n = fk_intern_size(b->strings);
	m->strings = g_new(char *, n);
	for (size_t i = 0; i < n; i++)
		m->strings[i] = (char *)fk_intern_str(b->strings, (uint32_t)i).s;
	m->p.n_string_table = n;
	m->p.string_table = m->strings;
}

int pprof_write(struct pprof_builder *b, FILE *out, const char *name, GError **err)
{
	struct message m = { 0 };
	uint8_t *packed;
	size_t size;
	int rc = -1;

	perftools__profiles__profile__init(&m.p);
	perftools__profiles__value_type__init(&m.type);
	m.type.type = b->type[0];
	m.type.unit = b->type[1];
	m.types[0] = &m.type;
	m.p.n_sample_type = 1;
	m.p.sample_type = m.types;
	if (b->period_type[0] || b->period_type[1]) {
		perftools__profiles__value_type__init(&m.period_type);
		m.period_type.type = b->period_type[0];
		m.period_type.unit = b->period_type[1];
		m.p.period_type = &m.period_type;
		m.p.period = b->period;
	}
	m.p.n_comment = b->comments->len;
	m.p.comment = (int64_t *)(void *)b->comments->data;
	if (build_samples(b, &m, name, err) < 0)
		goto out;
	build_tables(b, &m);

	packed = g_malloc(perftools__profiles__profile__get_packed_size(&m.p) + 1);
	size = perftools__profiles__profile__pack(&m.p, packed);
	if (gzip_write(packed, size, out) < 0 || fflush(out) != 0 || ferror(out))
		fk_error_at(err, FK_ERROR_IO, name, 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
	else
		rc = 0;
	g_free(packed);
out:
	message_free(&m);
	return rc;
}
