#include "collapse/bpftrace.h"

#include "collapse/framename.h"
#include "collapse/stackcache.h"
#include "core/error.h"
#include "core/linereader.h"

#include <string.h>

/* One map's records. */
struct map {
	char *name;		/* "@" or "@stacks" */
	struct fold_table *table;
	struct stack_cache *cache;
	uint64_t records;
	bool has_stack;		/* a record of it had a frame */
};

struct bpftrace_collapser {
	const struct bpftrace_opts *o;
	struct skip_log *skips;
	GPtrArray *maps;	/* struct map *, first-seen order */
	GHashTable *by_name;	/* map name -> struct map * */
	struct map *chosen;
	struct fold_table *empty;
	/* scratch for naming a record */
	GArray *frames;		/* struct fk_str: every frame line */
	GArray *stacks;		/* guint pairs: first frame, frame count */
	GArray *scalars;	/* struct fk_str */
	bool named_frame;	/* the last record named had a frame */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_name_char(char c)
{
	return g_ascii_isalnum(c) || c == '_';
}

/* The length of "@NAME[" at the start of s[0..n), or 0. */
static size_t record_start(const char *s, size_t n)
{
	size_t i = 1;

	if (n < 2 || s[0] != '@')
		return 0;
	while (i < n && is_name_char(s[i]))
		i++;
	return i < n && s[i] == '[' ? i + 1 : 0;
}

/*
 * A record's last line ends in "]: VALUE": returns where the "]: " starts
 * and the value in *value, or SIZE_MAX.  The last "]: " counts: a comm may
 * hold one.
 */
static size_t record_end(const char *s, size_t n, struct fk_str *value)
{
	for (size_t i = n; i >= 3; i--)
		if (s[i - 3] == ']' && s[i - 2] == ':' && s[i - 1] == ' ') {
			value->s = s + i;
			value->len = n - i;
			return i - 3;
		}
	return SIZE_MAX;
}

struct bpftrace_collapser *bpftrace_collapser_new(const struct bpftrace_opts *opts,
						  struct skip_log *skips)
{
	struct bpftrace_collapser *c = g_new0(struct bpftrace_collapser, 1);

	c->o = opts;
	c->skips = skips;
	c->maps = g_ptr_array_new();
	c->by_name = g_hash_table_new(g_str_hash, g_str_equal);
	c->empty = fold_table_new();
	c->frames = g_array_new(FALSE, FALSE, sizeof(struct fk_str));
	c->stacks = g_array_new(FALSE, FALSE, sizeof(guint) * 2);
	c->scalars = g_array_new(FALSE, FALSE, sizeof(struct fk_str));
	return c;
}

void bpftrace_collapser_free(struct bpftrace_collapser *c)
{
	if (!c)
		return;
	for (guint i = 0; i < c->maps->len; i++) {
		struct map *m = c->maps->pdata[i];
		stack_cache_free(m->cache);
		fold_table_free(m->table);
		g_free(m->name);
		g_free(m);
	}
	g_ptr_array_free(c->maps, TRUE);
	g_hash_table_destroy(c->by_name);
	fold_table_free(c->empty);
	g_array_free(c->frames, TRUE);
	g_array_free(c->stacks, TRUE);
	g_array_free(c->scalars, TRUE);
	g_free(c);
}

static struct map *map_get(struct bpftrace_collapser *c, const char *s, size_t n)
{
	char *name = g_strndup(s, n);	/* a name is "@" and word characters */
	struct map *m = g_hash_table_lookup(c->by_name, name);

	if (m) {
		g_free(name);
		return m;
	}
	m = g_new0(struct map, 1);
	m->name = name;
	m->table = fold_table_new();
	m->cache = stack_cache_new(m->table);
	g_ptr_array_add(c->maps, m);
	g_hash_table_insert(c->by_name, m->name, m);
	return m;
}

/* Adds the non-empty ", "-separated elements of s[0..n) as scalars. */
static void add_scalars(struct bpftrace_collapser *c, const char *s, size_t n)
{
	const char *end = s + n;

	while (s < end) {
		const char *sep = g_strstr_len(s, end - s, ", ");
		const char *e = sep ? sep : end;
		struct fk_str x = { s, (size_t)(e - s) };

		if (x.len)
			g_array_append_val(c->scalars, x);
		s = sep ? sep + 2 : end;
	}
}

/* "557c52a7b3e0 fib+64 (/tmp/w)": the perf stack mode's address column */
static size_t perf_address(const char *s, size_t n)
{
	size_t i = 0;
	bool digit = false;

	while (i < n && g_ascii_isxdigit(s[i]))
		digit |= g_ascii_isdigit(s[i++]);
	return i >= 4 && digit && i < n && s[i] == ' ' ? i : 0;
}

static void name_frame(struct bpftrace_collapser *c, GString *out, struct fk_str line)
{
	static const struct frame_name_opts no_annotations;
	struct perf_frame f = { .sym = line };
	size_t a = perf_address(line.s, line.len), from;
	bool sized;

	if (a) {
		const char *open;
		f.pc = (struct fk_str){ line.s, a };
		f.sym = (struct fk_str){ line.s + a + 1, line.len - a - 1 };
		/* " (DSO)" at the end; the DSO may hold blanks and parentheses */
		if (f.sym.len > 3 && f.sym.s[f.sym.len - 1] == ')' &&
		    (open = g_strstr_len(f.sym.s, (gssize)f.sym.len, " ("))) {
			f.dso = (struct fk_str){ open + 2, (size_t)(f.sym.s + f.sym.len - 1 - open - 2) };
			f.sym.len = (size_t)(open - f.sym.s);
		}
	}
	if (!c->o->keep_offsets) {
		size_t off = frame_text_offset(f.sym.s, f.sym.len, true, &sized);
		if (off != SIZE_MAX)
			f.sym.len = off;
	}
	from = out->len;
	frame_name_append(out, &no_annotations, &f, false);
	/* "(x" loses everything to the argument-list rule: found by fuzz/bpftrace.c */
	if (out->len == from)
		g_string_append_c(out, '-');
}

/*
 * Names a record from its text, "@NAME[" through the key (the "]: VALUE"
 * left out): other elements first, then the stacks, the last one
 * outermost, each root first.
 */
static enum stack_name_result name_record(void *ctx, const char *raw, size_t len,
					  GString *stack)
{
	struct bpftrace_collapser *c = ctx;
	const char *p = raw, *end = raw + len;
	bool in_stack = false;

	g_array_set_size(c->frames, 0);
	g_array_set_size(c->stacks, 0);
	g_array_set_size(c->scalars, 0);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		struct fk_str line = { p, (size_t)(e - p) };

		if (line.len && line.s[line.len - 1] == '\r')
			line.len--;
		if (p == raw) {
			size_t k = record_start(line.s, line.len);
			line.s += k;
			line.len -= k;
			add_scalars(c, line.s, line.len);
			in_stack = false;
		} else if (line.len && is_blank(line.s[0])) {
			while (line.len && is_blank(line.s[0]))
				line.s++, line.len--;
			while (line.len && is_blank(line.s[line.len - 1]))
				line.len--;
			if (!in_stack) {
				guint st[2] = { c->frames->len, 0 };
				g_array_append_val(c->stacks, st);
				in_stack = true;
			}
			if (line.len) {
				g_array_append_val(c->frames, line);
				((guint *)(void *)c->stacks->data)[2 * (c->stacks->len - 1) + 1]++;
			}
		} else {
			add_scalars(c, line.s, line.len);
			in_stack = false;
		}
		p = nl ? nl + 1 : end;
	}
	c->named_frame = c->frames->len > 0;
	for (guint i = 0; i < c->scalars->len; i++) {
		struct fk_str x = g_array_index(c->scalars, struct fk_str, i);
		if (stack->len)
			g_string_append_c(stack, ';');
		frame_name_append_text(stack, x.s, x.len, FRAME_TEXT_PROCESS);
	}
	for (guint i = c->stacks->len; i-- > 0;) {
		guint *st = &((guint *)(void *)c->stacks->data)[2 * i];
		for (guint j = st[0] + st[1]; j-- > st[0];) {
			if (stack->len)
				g_string_append_c(stack, ';');
			name_frame(c, stack, g_array_index(c->frames, struct fk_str, j));
		}
	}
	return stack->len ? STACK_NAMED : STACK_EMPTY;
}

/* A record: lines [first, the "]: " at value_at) of the pinned text. */
static void fold_record(struct bpftrace_collapser *c, struct line_reader *lr,
			uint64_t lineno, size_t len, struct fk_str value)
{
	const char *raw = line_reader_pinned(lr);
	size_t nk = record_start(raw, len);
	struct map *m = map_get(c, raw, nk - 1);
	const char *name = line_reader_name(lr);
	fk_count n;
	enum fk_count_status st;

	m->records++;
	if (value.len && value.s[0] == '-' && value.len > 1 && g_ascii_isdigit(value.s[1])) {
		skip_log_add(c->skips, name, lineno, "record with a negative value");
		return;
	}
	st = fk_count_parse(value.s, value.len, &n);
	if (st == FK_COUNT_TOO_LARGE) {
		skip_log_add(c->skips, name, lineno, "record value above 2^64-1");
		return;
	}
	if (st != FK_COUNT_OK || !fk_count_is_integer(n)) {
		skip_log_add(c->skips, name, lineno, "record value is not a count");
		return;
	}
	c->named_frame = false;
	if (stack_cache_add(m->cache, raw, len, n, name_record, c) < 0) {
		skip_log_add(c->skips, name, lineno, "record without frames or key");
		return;
	}
	/* a cache hit names nothing: its first occurrence had frames or not */
	if (c->named_frame)
		m->has_stack = true;
}

int bpftrace_collapser_read(struct bpftrace_collapser *c, const char *path,
			    GError **err)
{
	struct line_reader *lr = line_reader_open(path, err);
	struct line line;
	bool in_record = false;
	uint64_t first = 0;
	int rc;

	if (!lr)
		return -1;
	while ((rc = line_reader_next(lr, &line, err)) > 0) {
		struct fk_str value;
		size_t at;

		if (!line.newline) {
			fk_error_at(err, FK_ERROR_TRUNCATED, line_reader_name(lr),
				    line.no, "input ends in the middle of a line: truncated?");
			rc = -1;
			break;
		}
		if (in_record && line.len && is_blank(line.s[0]))
			continue;	/* a frame */
		if (record_start(line.s, line.len)) {
			if (in_record)
				skip_log_add(c->skips, line_reader_name(lr), first,
					     "record cut short by the next");
			in_record = true;
			first = line.no;
			line_reader_pin(lr, line.s);
		} else if (!in_record) {
			if (line.len && !(line.len > 10 && memcmp(line.s, "Attaching ", 10) == 0))
				skip_log_add(c->skips, line_reader_name(lr), line.no,
					     "line outside a map record");
			continue;
		}
		if ((at = record_end(line.s, line.len, &value)) != SIZE_MAX) {
			fold_record(c, lr, first, (size_t)(line.s + at - line_reader_pinned(lr)),
				    value);
			in_record = false;
			line_reader_unpin(lr);
		}
	}
	if (rc == 0 && in_record)
		skip_log_add(c->skips, line_reader_name(lr), first,
			     "record not ended at the end of the input");
	line_reader_free(lr);
	return rc < 0 ? -1 : 0;
}

static struct map *choose(struct bpftrace_collapser *c)
{
	const char *want = c->o->map;

	if (c->chosen)
		return c->chosen;
	for (guint i = 0; i < c->maps->len; i++) {
		struct map *m = c->maps->pdata[i];
		if (want ? strcmp(m->name + 1, want + (want[0] == '@')) == 0 : m->has_stack)
			return c->chosen = m;
	}
	if (!want && c->maps->len)
		c->chosen = c->maps->pdata[0];
	return c->chosen;
}

struct fold_table *bpftrace_collapser_table(struct bpftrace_collapser *c)
{
	struct map *m = choose(c);

	return m ? m->table : c->empty;
}

char *bpftrace_collapser_note(struct bpftrace_collapser *c)
{
	struct map *kept = choose(c);
	GString *s;
	bool first = true;

	if (c->maps->len == 0 || (kept && c->maps->len == 1))
		return NULL;
	s = g_string_new(NULL);
	if (kept)
		g_string_printf(s, "kept map '%s' (%" G_GUINT64_FORMAT " records); dropped",
				kept->name, kept->records);
	else
		g_string_printf(s, "no map '%s'; dropped", c->o->map);
	for (guint i = 0; i < c->maps->len; i++) {
		struct map *m = c->maps->pdata[i];
		if (m == kept)
			continue;
		g_string_append_printf(s, "%s '%s' (%" G_GUINT64_FORMAT " records)",
				       first ? "" : ",", m->name, m->records);
		first = false;
	}
	if (!c->o->map)
		g_string_append(s, "; choose with --map");
	return g_string_free(s, FALSE);
}
