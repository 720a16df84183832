#include "collapse/gperf.h"

#include "collapse/bounds.h"
#include "collapse/framename.h"
#include "collapse/inline.h"
#include "core/error.h"
#include "core/intern.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH BOUNDS_MAX_FRAMES
#define MAX_HEADER_WORDS 1024
#define MAX_MAPS_BYTES (64u << 20)
#define BUF_SIZE (1u << 20)

/* An executable mapping of the profiled process. */
struct mapping {
	uint64_t start, end, offset;
	const char *path;	/* into the collapser's paths */
};

struct gperf_collapser {
	const struct gperf_opts *o;
	struct skip_log *skips;
	struct fold_table *table;
	struct gperf_stats stats;
	/* per profile */
	GArray *maps;		/* struct mapping, sorted by start */
	GPtrArray *paths;	/* owned strings */
	struct fk_idmap *addrs;	/* each address looked up, numbered */
	GArray *addr_name;	/* uint32_t: by address number, its names' id */
	struct fk_intern *names;	/* the names of an address (';'-separated),
					   each text once however many
					   addresses have it */
	GArray *name_frames;	/* uint32_t: by names' id, how many frames */
	GString *scratch;
	GString *name_buf;	/* an address's names being made */
};

/* Buffered input of a binary file, with its byte offset for messages. */
struct input {
	int fd;
	bool owns;
	const char *name;
	unsigned char *buf;
	size_t pos, end, cap;
	uint64_t consumed;	/* bytes before buf[0] */
	bool eof;
};

/*
 * Makes n bytes available at in->buf + in->pos.  Returns 1, 0 when the
 * input ends first (after the bytes it had), or -1 with *err set.
 */
static int need(struct input *in, size_t n, GError **err)
{
	while (in->end - in->pos < n) {
		ssize_t got;

		if (in->eof)
			return 0;
		if (in->pos > 0) {
			memmove(in->buf, in->buf + in->pos, in->end - in->pos);
			in->consumed += in->pos;
			in->end -= in->pos;
			in->pos = 0;
		}
		if (n > in->cap) {	/* a deep record: at most MAX_DEPTH words */
			in->cap = n;
			in->buf = g_realloc(in->buf, in->cap);
		}
		do
			got = read(in->fd, in->buf + in->end, in->cap - in->end);
		while (got < 0 && errno == EINTR);
		if (got < 0) {
			fk_error_at(err, FK_ERROR_IO, in->name, 0, "read error: %s",
				    g_strerror(errno));
			return -1;
		}
		if (got == 0)
			in->eof = true;
		in->end += (size_t)got;
	}
	return 1;
}

static uint64_t offset_of(const struct input *in)
{
	return in->consumed + in->pos;
}

/* The word layout a header shows. */
struct layout {
	unsigned size;		/* 4 or 8 */
	bool big;
};

static uint64_t word_at(const unsigned char *p, struct layout l)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < l.size; i++)
		v |= (uint64_t)p[l.big ? l.size - 1 - i : i] << (8 * i);
	return v;
}

/* Reads n words into out (host order); 1, 0 at a short end, or -1. */
static int read_words(struct input *in, struct layout l, size_t n, uint64_t *out,
		      GError **err)
{
	int rc = need(in, n * l.size, err);

	if (rc <= 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		out[i] = word_at(in->buf + in->pos + i * l.size, l);
	in->pos += n * l.size;
	return 1;
}

static bool zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Finds the layout in which the profile starts with the words 0, 3. */
static bool detect(const unsigned char *p, size_t n, struct layout *l)
{
	static const struct layout cand[] = { { 8, false }, { 8, true }, { 4, false }, { 4, true } };

	for (size_t i = 0; i < G_N_ELEMENTS(cand); i++) {
		if (n < 2u * cand[i].size || !zero(p, cand[i].size))
			continue;
		if (word_at(p + cand[i].size, cand[i]) == 3) {
			*l = cand[i];
			return true;
		}
	}
	return false;
}

struct gperf_collapser *gperf_collapser_new(const struct gperf_opts *opts,
					    struct skip_log *skips)
{
	struct gperf_collapser *c = g_new0(struct gperf_collapser, 1);

	c->o = opts;
	c->skips = skips;
	c->table = fold_table_new();
	c->scratch = g_string_new(NULL);
	c->name_buf = g_string_new(NULL);
	return c;
}

static void clear_profile(struct gperf_collapser *c)
{
	if (c->maps)
		g_array_free(c->maps, TRUE);
	if (c->paths)
		g_ptr_array_free(c->paths, TRUE);
	if (c->addrs)
		fk_idmap_free(c->addrs);
	if (c->addr_name)
		g_array_free(c->addr_name, TRUE);
	if (c->names)
		fk_intern_free(c->names);
	if (c->name_frames)
		g_array_free(c->name_frames, TRUE);
	c->maps = NULL;
	c->paths = NULL;
	c->addrs = NULL;
	c->addr_name = NULL;
	c->names = NULL;
	c->name_frames = NULL;
}

void gperf_collapser_free(struct gperf_collapser *c)
{
	if (!c)
		return;
	clear_profile(c);
	fold_table_free(c->table);
	g_string_free(c->scratch, TRUE);
	g_string_free(c->name_buf, TRUE);
	g_free(c);
}

struct fold_table *gperf_collapser_table(struct gperf_collapser *c)
{
	return c->table;
}

const struct gperf_stats *gperf_collapser_stats(const struct gperf_collapser *c)
{
	return &c->stats;
}

/* Parses a hex number at *p (no "0x"), advancing *p; false if none. */
static bool hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (*p < end && g_ascii_isxdigit(**p) && *p - s < 16)
		x = x << 4 | (uint64_t)g_ascii_xdigit_value(*(*p)++);
	if (*p == s || (*p < end && g_ascii_isxdigit(**p)))
		return false;
	*v = x;
	return true;
}

static void skip_blanks(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* Skips a run of non-blank characters; false if there is none. */
static bool token(const char **p, const char *end)
{
	const char *s = *p;

	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	return *p > s;
}

/*
 * "START-END PERMS OFFSET DEV INODE PATH", as /proc/self/maps prints it:
 * an executable mapping of a file is kept.
 */
static void parse_map_line(struct gperf_collapser *c, const char *s, size_t n)
{
	const char *p = s, *end = s + n, *perms;
	struct mapping m;

	if (!hex(&p, end, &m.start) || p == end || *p++ != '-' || !hex(&p, end, &m.end))
		return;
	skip_blanks(&p, end);
	perms = p;
	if (!token(&p, end) || p - perms < 3 || perms[2] != 'x')
		return;
	skip_blanks(&p, end);
	if (!hex(&p, end, &m.offset))
		return;
	skip_blanks(&p, end);
	if (!token(&p, end))	/* dev */
		return;
	skip_blanks(&p, end);
	if (!token(&p, end))	/* inode */
		return;
	skip_blanks(&p, end);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (p == end || m.end <= m.start || memchr(p, '\0', (size_t)(end - p)))
		return;
	m.path = NULL;
	for (guint i = 0; i < c->paths->len; i++)
		if (strlen(c->paths->pdata[i]) == (size_t)(end - p) &&
		    memcmp(c->paths->pdata[i], p, (size_t)(end - p)) == 0)
			m.path = c->paths->pdata[i];
	if (!m.path) {
		m.path = g_strndup(p, (size_t)(end - p));
		g_ptr_array_add(c->paths, (char *)m.path);
	}
	g_array_append_val(c->maps, m);
}

static int by_start(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Points the profiled program's mappings at opts->executable: those of
 * its path, else of its file name, else of the first file that is not a
 * shared object.
 */
static void find_executable(struct gperf_collapser *c)
{
	const char *exe = c->o->executable, *found = NULL;
	char *real = exe ? realpath(exe, NULL) : NULL;

	c->stats.executable_found = false;
	if (!exe)
		return;
	for (int pass = 0; pass < 3 && !found; pass++)
		for (guint i = 0; i < c->paths->len && !found; i++) {
			const char *p = c->paths->pdata[i];
			if (pass == 0 ? strcmp(p, exe) == 0 || (real && strcmp(p, real) == 0) :
			    pass == 1 ? strcmp(base_name(p), base_name(exe)) == 0 :
			    p[0] == '/' && !strstr(base_name(p), ".so"))
				found = p;
		}
	free(real);
	if (!found)
		return;
	c->stats.executable_found = true;
	g_ptr_array_add(c->paths, g_strdup(exe));
	for (guint i = 0; i < c->maps->len; i++) {
		struct mapping *m = &g_array_index(c->maps, struct mapping, i);
		if (m->path == found)
			m->path = c->paths->pdata[c->paths->len - 1];
	}
}

static const struct mapping *mapping_of(const struct gperf_collapser *c, uint64_t a)
{
	size_t lo = 0, hi = c->maps->len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mapping *m = &g_array_index(c->maps, struct mapping, mid);
		if (a < m->start)
			hi = mid;
		else if (a >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/*
 * Appends the names of the code at address a (';'-separated) to out.
 * False (with *err set) for a name longer than BOUNDS_MAX_NAME.
 */
static bool name_address(struct gperf_collapser *c, uint64_t a, GString *out,
			 const char *file, GError **err)
{
	struct frame_name_opts names = { .include_addrs = c->o->addrs };
	const struct mapping *m = mapping_of(c, a);
	struct inline_resolver *ir = c->o->resolver;
	char pc[17];
	struct perf_frame f = { .dso = { "[unknown]", 9 } };
	const char *sym = NULL;
	size_t from = out->len;

	snprintf(pc, sizeof(pc), "%" PRIx64, m ? a - m->start + m->offset : a);
	f.pc = (struct fk_str){ pc, strlen(pc) };
	if (m) {
		f.dso = (struct fk_str){ m->path, strlen(m->path) };
		if (c->o->expand_inline) {
			GString *chain = c->scratch;
			g_string_truncate(chain, 0);
			/* every address as it is, as pprof's own names are */
			if (ir->resolve(ir->self, &f, false, false, chain)) {
				char **parts = g_strsplit(chain->str, ";", -1);
				for (char **q = parts; *q; q++) {
					if (q != parts)
						g_string_append_c(out, ';');
					frame_name_append_text(out, *q, strlen(*q), FRAME_TEXT_ARGS);
				}
				g_strfreev(parts);
				goto check;
			}
		}
		sym = inline_resolver_symbol(ir, &f);
	}
	f.sym = sym ? (struct fk_str){ sym, strlen(sym) } : (struct fk_str){ "[unknown]", 9 };
	frame_name_append(out, &names, &f, false);
	if (out->len == from)	/* a symbol such as "(x": nothing survives rule 3 */
		g_string_append_c(out, '-');
check:
	/* a frame's name, or each of an inline chain's */
	for (const char *p = out->str + from, *end = out->str + out->len; p < end;) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		size_t n = (size_t)((semi ? semi : end) - p);

		if (n > BOUNDS_MAX_NAME) {
			fk_error_at(err, FK_ERROR_RANGE, file, 0,
				    "address 0x%" PRIx64 ": a name of %zu bytes, more than %u MiB",
				    a, n, BOUNDS_MAX_NAME >> 20);
			return false;
		}
		p = semi ? semi + 1 : end;
	}
	return true;
}

/*
 * The id in c->names of address a's names, looked up once; UINT32_MAX
 * with *err set.
 */
static uint32_t names_of(struct gperf_collapser *c, uint64_t a, const char *file,
			 GError **err)
{
	bool added;
	uint32_t k = fk_idmap_id(c->addrs, a, &added), id, frames = 1;
	GString *out;

	if (!added) {
		id = g_array_index(c->addr_name, uint32_t, k);
		if (id != UINT32_MAX)
			return id;
		/* (an address whose name was refused: refused again) */
	}
	out = c->name_buf;	/* (reused: a name may have a megabyte) */
	g_string_truncate(out, 0);
	id = UINT32_MAX;
	if (name_address(c, a, out, file, err)) {
		id = fk_intern_id(c->names, out->str, out->len, &added);
		for (size_t i = 0; i < out->len; i++)
			frames += out->str[i] == ';';
		if (added)
			g_array_append_val(c->name_frames, frames);
	}
	if (k >= c->addr_name->len)
		g_array_set_size(c->addr_name, k + 1);
	g_array_index(c->addr_name, uint32_t, k) = id;
	return id;
}

struct naming {
	struct gperf_collapser *c;
	struct fold_table *table;	/* the profile's named stacks */
	struct output_bound bound;
	size_t stack_limit;		/* the most bytes a stack may have */
	GString *stack;
	GArray *ids;			/* uint32_t: the frames' names, root first */
	const char *file;
	GError **err;
	bool failed;
};

/* Sets *err: a stack of frames frames passes nm->stack_limit. */
static void too_long(struct naming *nm, size_t frames)
{
	char size[32];

	if (nm->stack_limit < BOUNDS_MAX_STACK)
		fk_error_at(nm->err, FK_ERROR_RANGE, nm->file, 0,
			    "its folded stacks pass %s, the output limit (--max-output)",
			    bounds_size(nm->bound.limit, size));
	else
		fk_error_at(nm->err, FK_ERROR_RANGE, nm->file, 0,
			    "a stack of %zu frames longer than %u MiB, the longest line foldkit's readers take",
			    frames, LINE_READER_MAX_LINE >> 20);
}

/*
 * Names one distinct raw stack (host-order counters, leaf first): its
 * size first, so that a stack refused is never made.
 */
static void name_stack(struct fold_entry *e, void *data)
{
	struct naming *nm = data;
	struct gperf_collapser *c = nm->c;
	size_t depth = e->len / sizeof(uint64_t), len = 0, frames = 0;
	GString *s = nm->stack;

	if (nm->failed)
		return;
	g_array_set_size(nm->ids, 0);
	for (size_t i = depth; i-- > 0;) {
		uint64_t pc;
		uint32_t id;

		memcpy(&pc, e->stack + i * sizeof(pc), sizeof(pc));
		/* a caller's counter is a return address: look inside the call */
		if (i > 0 && pc > 0)
			pc--;
		if ((id = names_of(c, pc, nm->file, nm->err)) == UINT32_MAX) {
			nm->failed = true;
			return;
		}
		g_array_append_val(nm->ids, id);
		len += (len > 0) + fk_intern_str(c->names, id).len;
		frames += g_array_index(c->name_frames, uint32_t, id);
		if (frames > BOUNDS_MAX_FRAMES) {
			fk_error_at(nm->err, FK_ERROR_RANGE, nm->file, 0,
				    "a stack of more than %u frames (inlined functions expanded)",
				    BOUNDS_MAX_FRAMES);
			nm->failed = true;
			return;
		}
		if (len > nm->stack_limit) {
			too_long(nm, depth);
			nm->failed = true;
			return;
		}
	}
	g_string_truncate(s, 0);
	for (guint i = 0; i < nm->ids->len; i++) {
		struct fk_str name = fk_intern_str(c->names, g_array_index(nm->ids, uint32_t, i));

		if (i)
			g_string_append_c(s, ';');
		g_string_append_len(s, name.s, (gssize)name.len);
	}
	/* folded readers take a line starting with '#' for a comment */
	if (s->len && s->str[0] == '#')
		s->str[0] = '_';
	if (s->len && output_bound_add(&nm->bound, nm->table, s->str, s->len, e->count[0],
				       nm->file, nm->err) < 0)
		nm->failed = true;
}

/* Adds entry e of a profile's table to the collapser's. */
static void add_entry(struct fold_entry *e, void *table)
{
	fold_table_add(table, e->stack, e->len, e->count[0]);
}

static int open_input(struct input *in, const char *path, GError **err)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	if (!path || strcmp(path, "-") == 0) {
		in->fd = STDIN_FILENO;
		in->name = "<stdin>";
	} else {
		in->name = path;
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot open: %s",
				    g_strerror(errno));
			return -1;
		}
		in->owns = true;
		if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			fk_error_at(err, FK_ERROR_IO, path, 0, "is a directory");
			close(in->fd);
			return -1;
		}
	}
	in->cap = BUF_SIZE;
	in->buf = g_malloc(in->cap);
	return 0;
}

static void close_input(struct input *in)
{
	if (in->owns)
		close(in->fd);
	g_free(in->buf);
}

static int truncated(struct input *in, GError **err)
{
	fk_error_at(err, FK_ERROR_TRUNCATED, in->name, 0,
		    "ends at byte %" PRIu64 ", before the profile's trailer and maps: truncated?",
		    offset_of(in) + (in->end - in->pos));
	return -1;
}

/* The header; 0, or -1 with *err set. */
static int read_header(struct gperf_collapser *c, struct input *in, struct layout *l,
		       GError **err)
{
	uint64_t w[3];
	int rc = need(in, 16, err);

	if (rc < 0)
		return -1;
	if (!detect(in->buf + in->pos, in->end - in->pos, l)) {
		fk_error_at(err, FK_ERROR_PARSE, in->name, 0,
			    in->end == in->pos ? "empty file: not a gperftools CPU profile" :
			    "not a gperftools CPU profile (its header is not 0, 3)");
		return -1;
	}
	in->pos += 2 * l->size;	/* 0 and 3 (three more header words) */
	if ((rc = read_words(in, *l, 3, w, err)) <= 0)
		return rc < 0 ? -1 : truncated(in, err);
	if (w[0] != 0) {
		fk_error_at(err, FK_ERROR_PARSE, in->name, 0,
			    "profile format version %" PRIu64 ", only version 0 is known", w[0]);
		return -1;
	}
	c->stats.period_us = w[1];
	c->stats.word_bits = l->size * 8;
	c->stats.big_endian = l->big;
	return 0;
}

/* The records, into raw (counters -> count); 0 at the trailer, or -1. */
static int read_records(struct gperf_collapser *c, struct input *in, struct layout l,
			struct fold_table *raw, GError **err)
{
	size_t cap = 256;
	uint64_t *pcs = g_new(uint64_t, cap);
	int rc = -1;

	for (;;) {
		uint64_t hdr[2], at = offset_of(in);
		int got = read_words(in, l, 2, hdr, err);

		if (got <= 0) {
			if (got == 0)
				truncated(in, err);
			break;
		}
		if (hdr[1] > MAX_DEPTH) {
			fk_error_at(err, FK_ERROR_PARSE, in->name, 0,
				    "at byte %" PRIu64 ": a record of %" PRIu64
				    " frames: not a CPU profile, or corrupt", at, hdr[1]);
			break;
		}
		if (hdr[1] > cap) {
			cap = (size_t)hdr[1];
			pcs = g_renew(uint64_t, pcs, cap);
		}
		if ((got = read_words(in, l, (size_t)hdr[1], pcs, err)) <= 0) {
			if (got == 0)
				truncated(in, err);
			break;
		}
		if (hdr[0] == 0 && hdr[1] == 1 && pcs[0] == 0) {
			rc = 0;		/* the trailer */
			break;
		}
		c->stats.records++;
		if (hdr[1] == 0) {
			skip_log_add(c->skips, in->name, at, "sample without a stack");
			continue;
		}
		c->stats.samples = c->stats.samples + hdr[0] < c->stats.samples ?
				   UINT64_MAX : c->stats.samples + hdr[0];
		if (hdr[0])
			fold_table_add(raw, (const char *)pcs, (size_t)hdr[1] * sizeof(uint64_t),
				       fk_count_from_u64(hdr[0]));
	}
	g_free(pcs);
	return rc;
}

/* The maps: the rest of the input; 0 or -1. */
static int read_maps(struct gperf_collapser *c, struct input *in, GError **err)
{
	GString *text = g_string_new(NULL);
	int rc;

	for (;;) {
		size_t have = in->end - in->pos;
		g_string_append_len(text, (const char *)in->buf + in->pos, (gssize)have);
		in->pos = in->end;
		if (text->len > MAX_MAPS_BYTES) {
			fk_error_at(err, FK_ERROR_RANGE, in->name, 0,
				    "more than %u MiB after the trailer: not a process's maps",
				    MAX_MAPS_BYTES >> 20);
			g_string_free(text, TRUE);
			return -1;
		}
		if ((rc = need(in, 1, err)) < 0) {
			g_string_free(text, TRUE);
			return -1;
		}
		if (rc == 0)
			break;
	}
	for (const char *p = text->str, *end = text->str + text->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		parse_map_line(c, p, (size_t)(e - p));
		p = nl ? nl + 1 : end;
	}
	g_string_free(text, TRUE);
	if (c->maps->len == 0) {
		fk_error_at(err, FK_ERROR_PARSE, in->name, 0,
			    "no executable mapping in the maps after the samples: cannot name them");
		return -1;
	}
	g_array_sort(c->maps, by_start);
	return 0;
}

int gperf_collapser_read(struct gperf_collapser *c, const char *path, GError **err)
{
	struct input in;
	struct layout l;
	struct fold_table *raw;
	uint64_t limit = c->o->max_output ? c->o->max_output : BOUNDS_DEFAULT_OUTPUT;
	struct naming nm = {
		.c = c, .bound = { 0, limit }, .err = err,
		.stack_limit = (size_t)MIN((uint64_t)BOUNDS_MAX_STACK, limit),
	};
	int rc;

	if (open_input(&in, path, err) < 0)
		return -1;
	nm.file = in.name;
	clear_profile(c);
	memset(&c->stats, 0, sizeof(c->stats));
	c->maps = g_array_new(FALSE, FALSE, sizeof(struct mapping));
	c->paths = g_ptr_array_new_with_free_func(g_free);
	c->addrs = fk_idmap_new();
	c->addr_name = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	c->names = fk_intern_new();
	c->name_frames = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	raw = fold_table_new();
	rc = read_header(c, &in, &l, err);
	if (rc == 0)
		rc = read_records(c, &in, l, raw, err);
	if (rc == 0)
		rc = read_maps(c, &in, err);
	close_input(&in);
	if (rc == 0) {
		/* the profile's own table: one refused leaves nothing behind */
		find_executable(c);
		nm.table = fold_table_new();
		nm.stack = g_string_new(NULL);
		nm.ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
		fold_table_foreach(raw, name_stack, &nm);
		g_string_free(nm.stack, TRUE);
		g_array_free(nm.ids, TRUE);
		if (nm.failed) {
			rc = -1;
			fold_table_free(nm.table);
		} else if (fold_table_size(c->table) == 0) {
			fold_table_free(c->table);
			c->table = nm.table;
		} else {
			fold_table_foreach(nm.table, add_entry, c->table);
			fold_table_free(nm.table);
		}
	}
	fold_table_free(raw);
	return rc;
}
