/*
 * group.c - the processes of one role as one profile, and the spread of
 * the work among them (group.h).
 */
#include "capture/group.h"

#include "core/folded.h"
#include "core/skiplog.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct member {
	fk_count total;
	uint64_t skipped;
	GHashTable *self;	/* leaf frame -> fk_count * */
};

struct fk_group {
	struct fold_table *merged;
	size_t n;
	struct member *m;
	GPtrArray *fns;		/* struct fk_group_fn * */
	size_t sampled, least, most;
};

/* the leaf of stack[0..len), or NULL for a stack of its root alone */
static const char *leaf(const char *stack, size_t len, size_t *leaf_len)
{
	const char *semi = memrchr(stack, ';', len);

	if (!semi)
		return NULL;
	*leaf_len = len - (size_t)(semi + 1 - stack);
	return semi + 1;
}

static void add_self(GHashTable *t, const char *frame, size_t len, fk_count c)
{
	char *key = g_strndup(frame, len);
	fk_count *v = g_hash_table_lookup(t, key);

	if (v) {
		*v += c;
		g_free(key);
	} else {
		v = g_new(fk_count, 1);
		*v = c;
		g_hash_table_insert(t, key, v);
	}
}

static int read_member(struct fk_group *g, size_t i, const struct fk_group_member *m,
		       GError **err)
{
	struct skip_log *skips = skip_log_new();
	struct folded_shape shape = { .ncounts = 1 };	/* a plain profile */
	struct folded_reader *fr = folded_reader_open(m->path, skips, err);
	struct folded_line fl;
	int rc = -1;

	g->m[i].self = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (fr) {
		folded_reader_set_shape(fr, &shape);
		while ((rc = folded_reader_next(fr, &fl, err)) > 0) {
			const char *f;
			size_t flen;

			fold_table_add(g->merged, fl.stack, fl.len, fl.count[0]);
			g->m[i].total += fl.count[0];
			if ((f = leaf(fl.stack, fl.len, &flen)))
				add_self(g->m[i].self, f, flen, fl.count[0]);
		}
		folded_reader_free(fr);
	}
	g->m[i].skipped = skip_log_total(skips);
	skip_log_free(skips);
	folded_shape_release(&shape);
	return rc < 0 ? -1 : 0;
}

static int by_self(gconstpointer a, gconstpointer b)
{
	const struct fk_group_fn *x = *(struct fk_group_fn *const *)a;
	const struct fk_group_fn *y = *(struct fk_group_fn *const *)b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->frame, y->frame);
}

static double share(fk_count part, fk_count total)
{
	return total > 0 ? fk_count_to_double(part) / fk_count_to_double(total) : 0;
}

/* the top functions of the merged profile, and each one's spread */
static void rank(struct fk_group *g, size_t top)
{
	GHashTable *self = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	fk_count total = fold_table_total(g->merged, 0);
	GHashTableIter it;
	gpointer k, v;

	for (size_t i = 0; i < g->n; i++) {
		g_hash_table_iter_init(&it, g->m[i].self);
		while (g_hash_table_iter_next(&it, &k, &v))
			add_self(self, k, strlen(k), *(fk_count *)v);
	}
	g_hash_table_iter_init(&it, self);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		struct fk_group_fn *f = g_new0(struct fk_group_fn, 1);

		f->frame = g_strdup(k);
		f->self = *(fk_count *)v;
		f->share = share(f->self, total);
		g_ptr_array_add(g->fns, f);
	}
	g_hash_table_destroy(self);
	g_ptr_array_sort(g->fns, by_self);
	if (g->fns->len > top)
		g_ptr_array_set_size(g->fns, (guint)top);
	for (guint j = 0; j < g->fns->len; j++) {
		struct fk_group_fn *f = g_ptr_array_index(g->fns, j);
		bool any = false;

		f->low_at = f->high_at = SIZE_MAX;
		for (size_t i = 0; i < g->n; i++) {
			const fk_count *c;
			double sh;

			if (g->m[i].total <= 0)
				continue;
			c = g_hash_table_lookup(g->m[i].self, f->frame);
			sh = share(c ? *c : 0, g->m[i].total);
			if (!any || sh < f->low) {
				f->low = sh;
				f->low_at = i;
			}
			if (!any || sh > f->high) {
				f->high = sh;
				f->high_at = i;
			}
			any = true;
		}
	}
}

static void free_fn(gpointer p)
{
	struct fk_group_fn *f = p;

	g_free(f->frame);
	g_free(f);
}

struct fk_group *fk_group_read(const struct fk_group_member *m, size_t n, size_t top,
			       GError **err)
{
	struct fk_group *g = g_new0(struct fk_group, 1);

	g->merged = fold_table_new();
	g->n = n;
	g->m = g_new0(struct member, n ? n : 1);
	g->fns = g_ptr_array_new_with_free_func(free_fn);
	g->least = g->most = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (read_member(g, i, &m[i], err) < 0) {
			fk_group_free(g);
			return NULL;
		}
	for (size_t i = 0; i < n; i++) {
		if (g->m[i].total <= 0)
			continue;
		g->sampled++;
		if (g->least == SIZE_MAX || g->m[i].total < g->m[g->least].total)
			g->least = i;
		if (g->most == SIZE_MAX || g->m[i].total > g->m[g->most].total)
			g->most = i;
	}
	rank(g, top ? top : 1);
	return g;
}

void fk_group_free(struct fk_group *g)
{
	if (!g)
		return;
	fold_table_free(g->merged);
	for (size_t i = 0; i < g->n; i++)
		if (g->m[i].self)
			g_hash_table_destroy(g->m[i].self);
	g_free(g->m);
	g_ptr_array_unref(g->fns);
	g_free(g);
}

const struct fold_table *fk_group_table(const struct fk_group *g)
{
	return g->merged;
}

fk_count fk_group_total(const struct fk_group *g)
{
	return fold_table_total(g->merged, 0);
}

fk_count fk_group_member_total(const struct fk_group *g, size_t i)
{
	return g->m[i].total;
}

uint64_t fk_group_skipped(const struct fk_group *g, size_t i)
{
	return g->m[i].skipped;
}

size_t fk_group_sampled(const struct fk_group *g)
{
	return g->sampled;
}

size_t fk_group_least(const struct fk_group *g)
{
	return g->least;
}

size_t fk_group_most(const struct fk_group *g)
{
	return g->most;
}

size_t fk_group_nfns(const struct fk_group *g)
{
	return g->fns->len;
}

const struct fk_group_fn *fk_group_fn(const struct fk_group *g, size_t i)
{
	return g_ptr_array_index(g->fns, (guint)i);
}
