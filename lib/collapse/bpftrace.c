#include "collapse/bpftrace.h"

#include "collapse/framename.h"
#include "collapse/stackcache.h"
#include "core/error.h"
#include "core/linesource.h"

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
	GString *stack;		/* the record's folded stack */
	GString *callers;	/* a record's text less its leaf line */
	struct map *current;	/* the map of the record being named */
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
	c->stack = g_string_sized_new(1024);
	c->callers = g_string_sized_new(1024);
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
	g_string_free(c->stack, TRUE);
	g_string_free(c->callers, TRUE);
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

/*
 * The name of a frame line: "SYM+OFF" (bpftrace's stack mode) or
 * "ADDR SYM+OFF (DSO)" (perf's), named as fp-collapse names perf's.
 */
static void name_frame(GString *out, const char *s, size_t n, bool strip)
{
	static const struct frame_name_opts no_annotations;
	struct perf_frame f = { .sym = { s, n } };
	size_t a = perf_address(s, n), from;
	bool sized;

	if (a) {
		const char *open;
		f.pc = (struct fk_str){ s, a };
		f.sym = (struct fk_str){ s + a + 1, n - a - 1 };
		/* " (DSO)" at the end; the DSO may hold blanks and parentheses */
		if (f.sym.len > 3 && f.sym.s[f.sym.len - 1] == ')' &&
		    (open = g_strstr_len(f.sym.s, (gssize)f.sym.len, " ("))) {
			f.dso = (struct fk_str){ open + 2, (size_t)(f.sym.s + f.sym.len - 1 - open - 2) };
			f.sym.len = (size_t)(open - f.sym.s);
		}
	}
	if (strip) {
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
 * The rules for stackcache.h.  Without --offsets a frame's key is its
 * text without its offset, which the name then has no more to remove;
 * perf's layout keeps its whole text as the key (the offset is inside).
 */
static struct fk_str key_plain(const char *s, size_t n)
{
	bool sized;
	size_t off = perf_address(s, n) ? SIZE_MAX : frame_text_offset(s, n, true, &sized);

	return (struct fk_str){ s, off != SIZE_MAX ? off : n };
}

static struct fk_str key_offsets(const char *s, size_t n)
{
	return (struct fk_str){ s, n };
}

static void name_plain(GString *out, const char *s, size_t n)
{
	name_frame(out, s, n, perf_address(s, n) != 0);
}

static void name_offsets(GString *out, const char *s, size_t n)
{
	name_frame(out, s, n, false);
}

static const struct stack_frame_rules rules_plain = { key_plain, name_plain };
static const struct stack_frame_rules rules_offsets = { key_offsets, name_offsets };

/*
 * Names a record from its text, "@NAME[" through the key (the "]: VALUE"
 * left out), into c->stack: other elements first, then the stacks, the
 * last one outermost, each root first.  Returns the number of frames.
 */
static guint name_record(struct bpftrace_collapser *c, struct map *m,
			 const char *raw, size_t len, GString *stack)
{
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
	for (guint i = 0; i < c->scalars->len; i++) {
		struct fk_str x = g_array_index(c->scalars, struct fk_str, i);
		if (stack->len)
			g_string_append_c(stack, ';');
		frame_name_append_text(stack, x.s, x.len, FRAME_TEXT_PROCESS);
	}
	for (guint i = c->stacks->len; i-- > 0;) {
		guint *st = &((guint *)(void *)c->stacks->data)[2 * i];
		for (guint j = st[0] + st[1]; j-- > st[0];) {
			struct fk_str f = g_array_index(c->frames, struct fk_str, j);
			if (stack->len)
				g_string_append_c(stack, ';');
			stack_cache_frame(m->cache, stack, f.s, f.len,
					  c->o->keep_offsets ? &rules_offsets : &rules_plain);
		}
	}
	return c->frames->len;
}

/* stack_callers_fn: the text is a record's without its leaf line */
static void name_callers(void *ctx, const char *text, size_t len, GString *out)
{
	struct bpftrace_collapser *c = ctx;

	name_record(c, c->current, text, len, out);
}

/*
 * A record: the pinned text up to its "]: " (len bytes), leaf its first
 * frame line (trimmed at the front; empty when it has none).
 */
static void fold_record(struct bpftrace_collapser *c, struct line_source *lr,
			uint64_t lineno, size_t len, struct fk_str value, struct fk_str leaf)
{
	const char *raw = line_source_pinned(lr), *nl, *line_start;
	size_t nk = record_start(raw, len);
	struct map *m = map_get(c, raw, nk - 1);
	const char *name = line_source_name(lr);
	fk_count n;
	enum fk_count_status st;

	m->records++;
	c->current = m;
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
	if (leaf.len == 0) {	/* no frame: the key's other elements */
		g_string_truncate(c->stack, 0);
		name_record(c, m, raw, len, c->stack);
		if (stack_cache_add(m->cache, c->stack, n) < 0)
			skip_log_add(c->skips, name, lineno, "record without frames or key");
		return;
	}
	/* the leaf is the first frame line; the callers are the rest */
	m->has_stack = true;
	nl = memchr(leaf.s, '\n', (size_t)(raw + len - leaf.s));
	g_string_truncate(c->callers, 0);
	line_start = memrchr(raw, '\n', (size_t)(leaf.s - raw));	/* the first line is "@[" */
	g_string_append_len(c->callers, raw, line_start ? (gssize)(line_start + 1 - raw) : 0);
	if (nl)
		g_string_append_len(c->callers, nl + 1, (gssize)(raw + len - nl - 1));
	while (leaf.len && is_blank(leaf.s[leaf.len - 1]))
		leaf.len--;
	stack_cache_add_record(m->cache, c->stack, c->callers->str, c->callers->len,
			       name_callers, c, leaf.s, leaf.len,
			       c->o->keep_offsets ? &rules_offsets : &rules_plain, n);
}

int bpftrace_collapser_read(struct bpftrace_collapser *c, const char *path,
			    GError **err)
{
	struct line_source *lr = line_source_open(path, err);
	struct line line;
	bool in_record = false;
	uint64_t first = 0;
	size_t leaf_off = 0, leaf_len = 0;	/* in the pinned text */
	int rc;

	if (!lr)
		return -1;
	for (;;) {
		struct fk_str value;
		size_t at;

		/* once the leaf is found, the other frames need no look */
		if (in_record && leaf_len)
			line_source_skip_indented(lr);
		if ((rc = line_source_next(lr, &line, err)) <= 0)
			break;

		if (!line.newline) {
			fk_error_at(err, FK_ERROR_TRUNCATED, line_source_name(lr),
				    line.no, "input ends in the middle of a line: truncated?");
			rc = -1;
			break;
		}
		if (in_record && line.len && is_blank(line.s[0])) {
			size_t b = 0;
			while (b < line.len && is_blank(line.s[b]))
				b++;
			if (!leaf_len && b < line.len) {	/* the first frame */
				leaf_off = (size_t)(line.s + b - line_source_pinned(lr));
				leaf_len = line.len - b;
			}
			continue;
		}
		if (record_start(line.s, line.len)) {
			if (in_record)
				skip_log_add(c->skips, line_source_name(lr), first,
					     "record cut short by the next");
			in_record = true;
			first = line.no;
			leaf_len = 0;
			line_source_pin(lr, line.s);
		} else if (!in_record) {
			if (line.len && !(line.len > 10 && memcmp(line.s, "Attaching ", 10) == 0))
				skip_log_add(c->skips, line_source_name(lr), line.no,
					     "line outside a map record");
			continue;
		}
		if ((at = record_end(line.s, line.len, &value)) != SIZE_MAX) {
			const char *pinned = line_source_pinned(lr);
			fold_record(c, lr, first, (size_t)(line.s + at - pinned), value,
				    (struct fk_str){ pinned + leaf_off, leaf_len });
			in_record = false;
			line_source_unpin(lr);
		}
	}
	if (rc == 0 && in_record)
		skip_log_add(c->skips, line_source_name(lr), first,
			     "record not ended at the end of the input");
	line_source_free(lr);
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
