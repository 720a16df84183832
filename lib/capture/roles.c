#include "capture/roles.h"

#include <glib.h>
#include <stdbool.h>
#include <string.h>

#define ROLE_MAX 32

/* A role: a word of [A-Za-z0-9_-], 1 to 32 bytes, not all digits. */
static bool role_word(const char *s, size_t n)
{
	bool letter = false;

	if (n == 0 || n > ROLE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!g_ascii_isalnum(s[i]) && s[i] != '_' && s[i] != '-')
			return false;
		letter |= !g_ascii_isdigit(s[i]);
	}
	return letter;
}

/* Rule 1: "--role=R", "--role R", "--type=R", "--type R". */
static char *arg_role(char *const *argv)
{
	static const char *const opts[] = { "--role", "--type" };

	for (size_t i = 1; argv && argv[0] && argv[i]; i++)
		for (size_t k = 0; k < G_N_ELEMENTS(opts); k++) {
			size_t n = strlen(opts[k]);
			const char *v = NULL;

			if (strncmp(argv[i], opts[k], n) != 0)
				continue;
			if (argv[i][n] == '=')
				v = argv[i] + n + 1;
			else if (!argv[i][n] && argv[i + 1])
				v = argv[i + 1];
			if (v && role_word(v, strlen(v)))
				return g_strdup(v);
		}
	return NULL;
}

/* An option that is a word: "--worker" or "-worker" give "worker". */
static const char *flag_word(const char *arg)
{
	const char *w = arg[0] == '-' ? arg + 1 + (arg[1] == '-') : NULL;

	return w && role_word(w, strlen(w)) && w[0] != '-' ? w : NULL;
}

static bool has_flag(char *const *argv, const char *word)
{
	for (size_t i = 1; argv && argv[0] && argv[i]; i++) {
		const char *w = flag_word(argv[i]);

		if (w && strcmp(w, word) == 0)
			return true;
	}
	return false;
}

/* The file name stem of a process name, as fk_out_stem() makes it. */
static char *name_stem(const char *comm)
{
	GString *s = g_string_new(NULL);

	for (const char *c = comm ? comm : "[unknown]"; *c; c++)
		g_string_append_c(s, g_ascii_isalnum(*c) || *c == '.' || *c == '_' ||
				     *c == '-' ? *c : '_');
	if (s->len == 0 || s->str[0] == '.' || s->str[0] == '-')
		g_string_prepend_c(s, '_');
	return g_string_free(s, FALSE);
}

struct item {
	const struct fk_role_in *in;
	struct fk_role *out;
	char *stem;
	bool root;		/* no recorded parent, and no role of rule 1 */
};

static int by_start(const void *a, const void *b)
{
	const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;

	if (x->in->start != y->in->start)
		return x->in->start < y->in->start ? -1 : 1;
	return (x->in->pid > y->in->pid) - (x->in->pid < y->in->pid);
}

/* Rule 3 for the roots of one name, group[0..n) in start order. */
static void roots_by_flag(struct item **group, size_t n)
{
	const char *word = NULL;

	for (size_t i = 0; i < n && !word; i++)
		for (size_t a = 1; group[i]->in->argv && group[i]->in->argv[0] &&
				   group[i]->in->argv[a] && !word; a++) {
			const char *w = flag_word(group[i]->in->argv[a]);
			size_t have = 0;

			if (!w)
				continue;
			for (size_t j = 0; j < n; j++)
				have += has_flag(group[j]->in->argv, w);
			if (have < n)
				word = w;
		}
	if (!word)
		return;
	for (size_t i = 0; i < n; i++)
		if (has_flag(group[i]->in->argv, word)) {
			g_free(group[i]->out->role);
			group[i]->out->role = g_strdup(word);
		}
}

void fk_roles_assign(const struct fk_role_in *in, size_t n, struct fk_role *out)
{
	struct item *items = g_new0(struct item, n);
	struct item **v = g_new(struct item *, n);
	GHashTable *pids = g_hash_table_new(g_direct_hash, g_direct_equal);

	for (size_t i = 0; i < n; i++)
		g_hash_table_add(pids, GINT_TO_POINTER(in[i].pid));
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];

		it->in = &in[i];
		it->out = &out[i];
		it->stem = name_stem(in[i].comm);
		out[i].role = arg_role(in[i].argv);
		if (!out[i].role) {
			bool child = in[i].ppid != in[i].pid &&
				     g_hash_table_contains(pids, GINT_TO_POINTER(in[i].ppid));

			out[i].role = g_strdup(child ? "worker" : "main");
			it->root = !child;
		}
		v[i] = it;
	}
	qsort(v, n, sizeof(*v), by_start);

	/* rule 3: roots of one name, in start order */
	for (size_t i = 0; i < n; i++) {
		struct item **group;
		size_t m = 0;

		if (!v[i]->root)
			continue;
		group = g_new(struct item *, n);
		for (size_t j = i; j < n; j++)
			if (v[j]->root && strcmp(v[j]->stem, v[i]->stem) == 0) {
				group[m++] = v[j];
				v[j]->root = false;
			}
		if (m > 1)
			roots_by_flag(group, m);
		g_free(group);
	}

	/* names: one of a name and role is "stem.role", several are numbered
	 * in start order */
	{
		GHashTable *count = g_hash_table_new(g_str_hash, g_str_equal);
		GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
		char **keys = g_new(char *, n);

		for (size_t i = 0; i < n; i++) {
			keys[i] = g_strdup_printf("%s.%s", v[i]->stem, v[i]->out->role);
			g_hash_table_insert(count, keys[i], GSIZE_TO_POINTER(
				GPOINTER_TO_SIZE(g_hash_table_lookup(count, keys[i])) + 1));
		}
		for (size_t i = 0; i < n; i++) {
			size_t k;

			if (GPOINTER_TO_SIZE(g_hash_table_lookup(count, keys[i])) == 1) {
				v[i]->out->name = g_strdup(keys[i]);
				continue;
			}
			k = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, keys[i])) + 1;
			g_hash_table_insert(seen, keys[i], GSIZE_TO_POINTER(k));
			v[i]->out->name = g_strdup_printf("%s-%zu", keys[i], k);
		}
		g_hash_table_destroy(seen);
		g_hash_table_destroy(count);
		for (size_t i = 0; i < n; i++)
			g_free(keys[i]);
		g_free(keys);
	}
	for (size_t i = 0; i < n; i++)
		g_free(items[i].stem);
	g_hash_table_destroy(pids);
	g_free(v);
	g_free(items);
}

void fk_roles_clear(struct fk_role *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		g_free(out[i].role);
		g_free(out[i].name);
		out[i].role = out[i].name = NULL;
	}
}
