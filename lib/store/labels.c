/*
 * labels.c - a small sorted array: a profile has a handful of labels, and
 * sorted keys make every request that names them the same bytes.
 */
#include "store/labels.h"

#include "core/error.h"
#include "core/textesc.h"

#include <string.h>

const char *const fk_label_standard[6] = {
	"host", "service", "process", "role", "profile", "unit",
};

struct label {
	char *key;
	char *value;
};

struct fk_labels {
	GArray *items;		/* struct label, by key */
};

bool fk_label_is_standard(const char *key)
{
	for (size_t i = 0; i < G_N_ELEMENTS(fk_label_standard); i++)
		if (strcmp(key, fk_label_standard[i]) == 0)
			return true;
	return false;
}

bool fk_label_key_ok(const char *key)
{
	size_t n = strlen(key);

	if (n == 0 || n > FK_LABEL_KEY_MAX || !(g_ascii_isalpha(key[0]) || key[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!g_ascii_isalnum(key[i]) && key[i] != '_')
			return false;
	return true;
}

int fk_label_parse(const char *arg, char **key, char **value, GError **err)
{
	const char *eq = strchr(arg, '=');
	char *k;

	*key = *value = NULL;
	if (!eq) {
		char *shown = fk_text_escape_dup(arg, strlen(arg), 0);

		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "label '%s' is not KEY=VALUE", shown);
		g_free(shown);
		return -1;
	}
	k = g_strndup(arg, (size_t)(eq - arg));
	if (!fk_label_key_ok(k)) {
		char *shown = fk_text_escape_dup(k, strlen(k), 0);

		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "label key '%s': a letter or '_', then letters, digits or '_' "
			    "(%d bytes at most)", shown, FK_LABEL_KEY_MAX);
		g_free(shown);
		g_free(k);
		return -1;
	}
	if (strlen(eq + 1) > FK_LABEL_VALUE_MAX) {
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "label %s: the value is longer than %d bytes",
			    k, FK_LABEL_VALUE_MAX);
		g_free(k);
		return -1;
	}
	*key = k;
	*value = g_strdup(eq + 1);
	return 0;
}

static void label_clear(gpointer p)
{
	struct label *l = p;

	g_free(l->key);
	g_free(l->value);
}

struct fk_labels *fk_labels_new(void)
{
	struct fk_labels *l = g_new0(struct fk_labels, 1);

	l->items = g_array_new(FALSE, FALSE, sizeof(struct label));
	g_array_set_clear_func(l->items, label_clear);
	return l;
}

struct fk_labels *fk_labels_copy(const struct fk_labels *l)
{
	struct fk_labels *c = fk_labels_new();

	for (guint i = 0; i < l->items->len; i++) {
		struct label *it = &g_array_index(l->items, struct label, i);
		struct label n = { g_strdup(it->key), g_strdup(it->value) };

		g_array_append_val(c->items, n);
	}
	return c;
}

void fk_labels_free(struct fk_labels *l)
{
	if (!l)
		return;
	g_array_free(l->items, TRUE);
	g_free(l);
}

/* value cut to FK_LABEL_VALUE_MAX bytes, not inside a UTF-8 sequence */
static char *bounded(const char *value)
{
	size_t n = strlen(value);

	if (n <= FK_LABEL_VALUE_MAX)
		return g_strdup(value);
	n = FK_LABEL_VALUE_MAX;
	while (n > 0 && ((unsigned char)value[n] & 0xc0) == 0x80)
		n--;
	return g_strndup(value, n);
}

void fk_labels_set(struct fk_labels *l, const char *key, const char *value)
{
	guint i = 0;

	for (; i < l->items->len; i++) {
		struct label *it = &g_array_index(l->items, struct label, i);
		int c = strcmp(it->key, key);

		if (c == 0) {
			g_free(it->value);
			it->value = bounded(value);
			return;
		}
		if (c > 0)
			break;
	}
	{
		struct label n = { g_strdup(key), bounded(value) };

		g_array_insert_val(l->items, i, n);
	}
}

const char *fk_labels_get(const struct fk_labels *l, const char *key)
{
	for (guint i = 0; i < l->items->len; i++) {
		struct label *it = &g_array_index(l->items, struct label, i);

		if (strcmp(it->key, key) == 0)
			return it->value;
	}
	return "";
}

size_t fk_labels_size(const struct fk_labels *l)
{
	return l->items->len;
}

const char *fk_labels_key(const struct fk_labels *l, size_t i)
{
	return g_array_index(l->items, struct label, i).key;
}

const char *fk_labels_value(const struct fk_labels *l, size_t i)
{
	return g_array_index(l->items, struct label, i).value;
}

char *fk_labels_show(const struct fk_labels *l)
{
	GString *s = g_string_new(NULL);

	for (guint i = 0; i < l->items->len; i++) {
		struct label *it = &g_array_index(l->items, struct label, i);

		if (!*it->value)
			continue;
		if (s->len)
			g_string_append_c(s, ' ');
		g_string_append_printf(s, "%s=", it->key);
		fk_text_escape(s, it->value, strlen(it->value), 0);
	}
	return g_string_free(s, FALSE);
}
