#include "collapse/pprofread.h"

#include "collapse/framename.h"
#include "core/error.h"
#include "gen/profile.pb-c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Objects found by id: directly when the ids are 1..n in order (as every
 * writer does), else by binary search over the sorted ids. */
struct id_index {
	uint64_t *ids;		/* sorted; NULL when dense */
	uint32_t *pos;
	size_t n;
};

struct pprof_profile {
	char *name;
	Perftools__Profiles__Profile *m;
	struct id_index maps, locs, funcs;
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

/* --- checking what was decoded */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* ids[i] is object i's id; what names the objects in messages */
static bool index_ids(struct id_index *ix, const uint64_t *ids, size_t n,
		      const char *name, const char *what, GError **err)
{
	uint64_t *pairs;
	bool dense = true;

	ix->n = n;
	for (size_t i = 0; i < n; i++) {
		if (ids[i] == 0) {
			fk_error_at(err, FK_ERROR_PARSE, name, 0, "%s %zu has id 0", what, i + 1);
			return false;
		}
		if (ids[i] != i + 1)
			dense = false;
	}
	if (dense)
		return true;
	/* (id, position) pairs sorted by id */
	pairs = g_new(uint64_t, 2 * n);
	for (size_t i = 0; i < n; i++) {
		pairs[2 * i] = ids[i];
		pairs[2 * i + 1] = i;
	}
	qsort(pairs, n, 2 * sizeof(uint64_t), cmp_u64);
	ix->ids = g_new(uint64_t, n);
	ix->pos = g_new(uint32_t, n);
	for (size_t i = 0; i < n; i++) {
		ix->ids[i] = pairs[2 * i];
		ix->pos[i] = (uint32_t)pairs[2 * i + 1];
		if (i && ix->ids[i] == ix->ids[i - 1]) {
			fk_error_at(err, FK_ERROR_PARSE, name, 0, "two %ss have id %" G_GUINT64_FORMAT,
				    what, ix->ids[i]);
			g_free(pairs);
			return false;
		}
	}
	g_free(pairs);
	return true;
}

/* The position of the object with id, or -1. */
static long find_id(const struct id_index *ix, uint64_t id)
{
	size_t lo = 0, hi = ix->n;

	if (!ix->ids)
		return id >= 1 && id <= ix->n ? (long)(id - 1) : -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ix->n && ix->ids[lo] == id ? (long)ix->pos[lo] : -1;
}

struct checker {
	const struct pprof_profile *p;
	GError **err;
	bool ok;
};

/* A string index must name an entry of the string table. */
static void check_str(struct checker *c, int64_t i, const char *what, size_t n,
		      const char *field)
{
	size_t ns = c->p->m->n_string_table;

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

static void check_ref(struct checker *c, const struct id_index *ix, uint64_t id,
		      const char *what, size_t n, const char *target)
{
	if (!c->ok || find_id(ix, id) >= 0)
		return;
	fk_error_at(c->err, FK_ERROR_PARSE, c->p->name, 0,
		    "%s %zu: %s %" G_GUINT64_FORMAT " does not exist", what, n, target, id);
	c->ok = false;
}

static bool check(struct pprof_profile *p, GError **err)
{
	const Perftools__Profiles__Profile *m = p->m;
	struct checker c = { p, err, true };
	uint64_t *ids;
	size_t most = MAX(MAX(m->n_mapping, m->n_location), m->n_function);

	if (m->n_string_table == 0 || m->string_table[0][0] != '\0') {
		fk_error_at(err, FK_ERROR_PARSE, p->name, 0, "%s: not a pprof profile",
			    m->n_string_table ? "the string table does not start with \"\""
					      : "no string table");
		return false;
	}
	if (m->n_sample_type == 0) {
		fk_error_at(err, FK_ERROR_PARSE, p->name, 0, "no sample types: not a pprof profile");
		return false;
	}
	ids = g_new(uint64_t, most + 1);
	for (size_t i = 0; i < m->n_mapping; i++)
		ids[i] = m->mapping[i]->id;
	c.ok = index_ids(&p->maps, ids, m->n_mapping, p->name, "mapping", err);
	for (size_t i = 0; c.ok && i < m->n_location; i++)
		ids[i] = m->location[i]->id;
	c.ok = c.ok && index_ids(&p->locs, ids, m->n_location, p->name, "location", err);
	for (size_t i = 0; c.ok && i < m->n_function; i++)
		ids[i] = m->function[i]->id;
	c.ok = c.ok && index_ids(&p->funcs, ids, m->n_function, p->name, "function", err);
	g_free(ids);

	for (size_t i = 0; i < m->n_sample_type; i++) {
		check_str(&c, m->sample_type[i]->type, "sample type", i + 1, "type");
		check_str(&c, m->sample_type[i]->unit, "sample type", i + 1, "unit");
	}
	if (m->period_type) {
		check_str(&c, m->period_type->type, "period type", 0, "the period type");
		check_str(&c, m->period_type->unit, "period type", 0, "the period unit");
	}
	check_str(&c, m->drop_frames, "", 0, "drop_frames");
	check_str(&c, m->keep_frames, "", 0, "keep_frames");
	for (size_t i = 0; i < m->n_comment; i++)
		check_str(&c, m->comment[i], "comment", i + 1, "its text");
	for (size_t i = 0; i < m->n_mapping; i++) {
		check_str(&c, m->mapping[i]->filename, "mapping", i + 1, "the file name");
		check_str(&c, m->mapping[i]->build_id, "mapping", i + 1, "the build id");
	}
	for (size_t i = 0; i < m->n_function; i++) {
		check_str(&c, m->function[i]->name, "function", i + 1, "the name");
		check_str(&c, m->function[i]->system_name, "function", i + 1, "the system name");
		check_str(&c, m->function[i]->filename, "function", i + 1, "the file name");
	}
	for (size_t i = 0; c.ok && i < m->n_location; i++) {
		const Perftools__Profiles__Location *l = m->location[i];

		if (l->mapping_id)
			check_ref(&c, &p->maps, l->mapping_id, "location", i + 1, "mapping");
		for (size_t j = 0; j < l->n_line; j++)
			if (l->line[j]->function_id)
				check_ref(&c, &p->funcs, l->line[j]->function_id, "location", i + 1, "function");
	}
	for (size_t i = 0; c.ok && i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];

		if (s->n_value != m->n_sample_type) {
			fk_error_at(err, FK_ERROR_PARSE, p->name, 0,
				    "sample %zu: %zu values for %zu sample types", i + 1,
				    s->n_value, m->n_sample_type);
			c.ok = false;
		}
		for (size_t j = 0; c.ok && j < s->n_location_id; j++)
			check_ref(&c, &p->locs, s->location_id[j], "sample", i + 1, "location");
		for (size_t j = 0; c.ok && j < s->n_label; j++) {
			check_str(&c, s->label[j]->key, "sample", i + 1, "a label's key");
			check_str(&c, s->label[j]->str, "sample", i + 1, "a label's value");
			check_str(&c, s->label[j]->num_unit, "sample", i + 1, "a label's unit");
		}
	}
	return c.ok;
}

struct pprof_profile *pprof_profile_parse(const void *data, size_t len,
					  const char *name, size_t max_bytes,
					  GError **err)
{
	struct pprof_profile *p;
	GByteArray *plain = NULL;

	if (!max_bytes)
		max_bytes = PPROF_MAX_BYTES;
	name = name ? name : "<stdin>";
	if (is_gzip(data, len)) {
		if (!(plain = gunzip(data, len, name, max_bytes, err)))
			return NULL;
		data = plain->data;
		len = plain->len;
	} else if (len > max_bytes) {
		fk_error_at(err, FK_ERROR_RANGE, name, 0, "larger than %zu MiB: not read",
			    max_bytes >> 20);
		return NULL;
	}
	if (len == 0) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0, "empty: not a pprof profile");
		if (plain)
			g_byte_array_unref(plain);
		return NULL;
	}
	p = g_new0(struct pprof_profile, 1);
	p->name = g_strdup(name);
	p->m = perftools__profiles__profile__unpack(NULL, len, data);
	if (plain)
		g_byte_array_unref(plain);
	if (!p->m) {
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
	if (!max_bytes)
		max_bytes = PPROF_MAX_BYTES;
	buf = g_byte_array_new();
	if (read_all(fd, name, max_bytes, buf, err))
		p = pprof_profile_parse(buf->data, buf->len, name, max_bytes, err);
	g_byte_array_unref(buf);
	if (!in)
		close(fd);
	return p;
}

void pprof_profile_free(struct pprof_profile *p)
{
	if (!p)
		return;
	perftools__profiles__profile__free_unpacked(p->m, NULL);
	g_free(p->maps.ids);
	g_free(p->maps.pos);
	g_free(p->locs.ids);
	g_free(p->locs.pos);
	g_free(p->funcs.ids);
	g_free(p->funcs.pos);
	g_free(p->name);
	g_free(p);
}

size_t pprof_profile_types(const struct pprof_profile *p)
{
	return p->m->n_sample_type;
}

static const char *str(const struct pprof_profile *p, int64_t i)
{
	return p->m->string_table[i];
}

char *pprof_profile_type(const struct pprof_profile *p, size_t i)
{
	return g_strdup_printf("%s/%s", str(p, p->m->sample_type[i]->type),
			       str(p, p->m->sample_type[i]->unit));
}

int pprof_profile_sample_index(const struct pprof_profile *p, const char *spec,
			       GError **err)
{
	size_t n = p->m->n_sample_type;
	char *end;
	unsigned long v;

	if (!spec) {
		/* pprof's default: default_sample_type, else the last type */
		for (size_t i = 0; p->m->default_sample_type && i < n; i++)
			if (p->m->sample_type[i]->type == p->m->default_sample_type)
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
		if (strcmp(str(p, p->m->sample_type[i]->type), spec) == 0)
			return (int)i;
	{
		GString *types = g_string_new(NULL);

		for (size_t i = 0; i < n; i++)
			g_string_append_printf(types, "%s%s", i ? ", " : "",
					       str(p, p->m->sample_type[i]->type));
		fk_error_at(err, FK_ERROR_USAGE, p->name, 0,
			    "--sample-index '%s': no such sample type (the profile has %s)",
			    spec, types->str);
		g_string_free(types, TRUE);
	}
	return -1;
}

/* --- collapsing */

/* A location's frames, root first: its lines from the last to the first. */
static void location_frames(const struct pprof_profile *p,
			    const Perftools__Profiles__Location *l,
			    const struct pprof_collapse_opts *o, GString *out)
{
	const Perftools__Profiles__Profile *m = p->m;

	if (l->n_line == 0) {
		long mi = l->mapping_id ? find_id(&p->maps, l->mapping_id) : -1;
		const char *file = mi >= 0 ? str(p, m->mapping[mi]->filename) : "";
		char pc[24];
		struct frame_name_opts fo = { .include_addrs = o->addrs };
		struct perf_frame f = {
			.sym = { "[unknown]", 9 },
			.dso = *file ? (struct fk_str){ file, strlen(file) }
				     : (struct fk_str){ "[unknown]", 9 },
		};

		f.pc.len = (size_t)g_snprintf(pc, sizeof(pc), "%" G_GINT64_MODIFIER "x", l->address);
		f.pc.s = pc;
		frame_name_append(out, &fo, &f, false);
		return;
	}
	for (size_t j = l->n_line; j-- > 0;) {
		const Perftools__Profiles__Line *ln = l->line[j];
		long fi = ln->function_id ? find_id(&p->funcs, ln->function_id) : -1;
		const char *name = "[unknown]", *file = NULL;

		if (fi >= 0) {
			const Perftools__Profiles__Function *fn = m->function[fi];

			name = *str(p, fn->name) || !*str(p, fn->system_name)
			       ? str(p, fn->name) : str(p, fn->system_name);
			file = o->lines ? str(p, fn->filename) : NULL;
		}
		if (out->len)
			g_string_append_c(out, ';');
		frame_name_append_text(out, name, strlen(name), 0);
		if (file && *file) {
			g_string_append_c(out, ':');
			frame_name_append_text(out, file, strlen(file), 0);
			if (ln->line)
				g_string_append_printf(out, ":%" G_GINT64_FORMAT, ln->line);
		}
	}
}

/* "KEY=VALUE[,VALUE...]" for the sample's labels with key; false if none */
static bool label_frame(const struct pprof_profile *p,
			const Perftools__Profiles__Sample *s, const char *key,
			GString *out)
{
	size_t from = out->len;
	bool any = false;

	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		char buf[64];

		if (strcmp(str(p, l->key), key) != 0)
			continue;
		if (!any)
			g_string_append_printf(out, "%s=", key);
		else
			g_string_append_c(out, ',');
		any = true;
		if (l->str) {
			g_string_append(out, str(p, l->str));
			continue;
		}
		g_snprintf(buf, sizeof(buf), "%" G_GINT64_FORMAT, l->num);
		g_string_append(out, buf);
		if (*str(p, l->num_unit)) {
			g_string_append_c(out, ' ');
			g_string_append(out, str(p, l->num_unit));
		}
	}
	if (any) {
		/* the folded format's separators, as in frame names */
		GString *tmp = g_string_new(NULL);

		frame_name_append_text(tmp, out->str + from, out->len - from, 0);
		g_string_truncate(out, from);
		g_string_append_len(out, tmp->str, (gssize)tmp->len);
		g_string_free(tmp, TRUE);
	}
	return any;
}

int pprof_collapse(const struct pprof_profile *p,
		   const struct pprof_collapse_opts *o, struct fold_table *t,
		   struct skip_log *skips, GError **err)
{
	const Perftools__Profiles__Profile *m = p->m;
	GString **frames, *stack = g_string_new(NULL);

	if (o->sample_index < 0 || (size_t)o->sample_index >= m->n_sample_type) {
		fk_error_at(err, FK_ERROR_USAGE, p->name, 0, "sample index %d: the profile has %zu sample types",
			    o->sample_index, m->n_sample_type);
		g_string_free(stack, TRUE);
		return -1;
	}
	/* each location's frames once: samples share them */
	frames = g_new(GString *, m->n_location + 1);
	for (size_t i = 0; i < m->n_location; i++) {
		frames[i] = g_string_new(NULL);
		location_frames(p, m->location[i], o, frames[i]);
	}
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];
		int64_t v = s->value[o->sample_index];

		if (v < 0) {
			if (skips)
				skip_log_add(skips, p->name, i + 1, "sample with a negative value");
			continue;
		}
		g_string_truncate(stack, 0);
		for (size_t k = 0; k < o->ntagroot; k++) {
			size_t before = stack->len;

			if (stack->len)
				g_string_append_c(stack, ';');
			if (!label_frame(p, s, o->tagroot[k], stack))
				g_string_truncate(stack, before);
		}
		for (size_t j = s->n_location_id; j-- > 0;) {
			const GString *f = frames[find_id(&p->locs, s->location_id[j])];

			if (stack->len)
				g_string_append_c(stack, ';');
			g_string_append_len(stack, f->str, (gssize)f->len);
		}
		if (!stack->len) {
			if (skips)
				skip_log_add(skips, p->name, i + 1, "sample without locations");
			continue;
		}
		if (stack->str[0] == '#')
			stack->str[0] = '_';
		fold_table_add(t, stack->str, stack->len, fk_count_from_u64((uint64_t)v));
	}
	for (size_t i = 0; i < m->n_location; i++)
		g_string_free(frames[i], TRUE);
	g_free(frames);
	g_string_free(stack, TRUE);
	return 0;
}
