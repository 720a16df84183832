/*
 * labels.h - what a stored profile is called: a set of KEY=VALUE labels.
 *
 *	struct fk_labels *l = fk_labels_new();
 *	fk_labels_set(l, "host", "web-3");
 *	fk_labels_set(l, "release", "v2.1");
 *	fk_labels_get(l, "host");                // "web-3"
 *	for (size_t i = 0; i < fk_labels_size(l); i++)
 *		use(fk_labels_key(l, i), fk_labels_value(l, i));  // by key
 *	fk_labels_free(l);
 *
 * Six keys are the ones every profile has (empty when nothing says) and a
 * store keeps in columns of their own (fk_label_is_standard()):
 *
 *	host      the machine the profile was taken on
 *	service   the program: the executable's file name
 *	process   the process (its name, or its role's stable name)
 *	role      main, worker, ... where the capture says
 *	profile   on-cpu, off-cpu or off-wake
 *	unit      what a count is: ns, us, samples, ...
 *
 * Any other key is the user's (release, dc, ...).  A key is a letter or
 * '_' then letters, digits or '_', 64 bytes at most; a value any bytes
 * but NUL, 1024 at most, and the empty value is the same as no label (a
 * query for release= selects the profiles without one).  Values come
 * from the profiled programs (process names) and from users: whatever
 * writes them into a request escapes them for it (store/sqltext.h,
 * store/pyroscope.h).
 */
#ifndef FOLDKIT_STORE_LABELS_H
#define FOLDKIT_STORE_LABELS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

#define FK_LABEL_KEY_MAX 64
#define FK_LABEL_VALUE_MAX 1024

/* The standard keys, in the order a store's columns have them. */
extern const char *const fk_label_standard[6];

bool fk_label_is_standard(const char *key);

/* True for a well-formed key (see above). */
bool fk_label_key_ok(const char *key);

/*
 * Splits "KEY=VALUE" (the first '=') into new strings (g_free() both).
 * Returns 0, or -1 with *err set when the key or the value is not one.
 */
int fk_label_parse(const char *arg, char **key, char **value, GError **err);

struct fk_labels;

struct fk_labels *fk_labels_new(void);
struct fk_labels *fk_labels_copy(const struct fk_labels *l);
void fk_labels_free(struct fk_labels *l);

/* Sets key to a copy of value, replacing what it was; key must be
 * fk_label_key_ok() and value at most FK_LABEL_VALUE_MAX bytes (a longer
 * one is cut there, at a character's start). */
void fk_labels_set(struct fk_labels *l, const char *key, const char *value);

/* The value of key, or "" when it has none; owned by l. */
const char *fk_labels_get(const struct fk_labels *l, const char *key);

/* The labels in bytewise order of their keys; strings owned by l. */
size_t fk_labels_size(const struct fk_labels *l);
const char *fk_labels_key(const struct fk_labels *l, size_t i);
const char *fk_labels_value(const struct fk_labels *l, size_t i);

/*
 * "host=web-3 release=v2.1": the non-empty labels for people, values
 * escaped for a terminal (core/textesc.h).  Free with g_free().
 */
char *fk_labels_show(const struct fk_labels *l);

#endif
