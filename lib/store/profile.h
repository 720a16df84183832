/*
 * profile.h - the profiles fold-push sends: what its operands hold, and
 * each one read whole into a stack table.
 *
 *	GPtrArray *items = g_ptr_array_new_with_free_func(fk_push_item_free);
 *	if (fk_push_items("capture-dir", items, &err) < 0) ...
 *	for (guint i = 0; i < items->len; i++) {
 *		struct fk_push_item *it = items->pdata[i];
 *		struct fk_profile *p = fk_profile_read(it->path, &err);
 *		...it->labels (process, profile, unit...), p->entries...
 *		fk_profile_free(p);
 *	}
 *
 * An operand is one of:
 *  - a folded file, or "-" for standard input: one profile, labelled by
 *    the command line alone;
 *  - a split= directory of the perf plugin (its index.tsv has the columns
 *    file, comm and pid): a profile per row, labelled process (comm), pid
 *    and unit (the index's unit column, when it has one);
 *  - an fp-record capture (its index.tsv has on_folded, off_folded or
 *    wake_folded columns): a profile per process and side, labelled
 *    process, pid, service (the file name of the process's executable, or
 *    its name when the executable is unknown), role (when the index has a
 *    role column), profile (on-cpu, off-cpu, off-wake) and unit (the
 *    on_unit, off_unit or wake_unit column; ns, us, us without one).
 * An index's names are unescaped as the tools escape them (\xNN, \\).
 * The files an index names must lie inside its directory (relative,
 * without "." or ".." parts) and be regular files, not links: an index
 * cannot make fold-push read, and send away, a file elsewhere.
 */
#ifndef FOLDKIT_STORE_PROFILE_H
#define FOLDKIT_STORE_PROFILE_H

#include "core/count.h"
#include "core/foldtable.h"
#include "store/labels.h"

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

struct fk_push_item {
	char *path;			/* the folded file; "-" is standard input */
	struct fk_labels *labels;	/* what the operand says of it */
	int64_t written;		/* a directory's: when its index.tsv was
					   written (its profiles' time, which
					   they share), else 0 */
};

void fk_push_item_free(gpointer item);

/*
 * Appends operand's profiles to items (struct fk_push_item *).  Returns
 * 0, or -1 with *err set (naming the file, and the index's line) when the
 * operand cannot be read or its index is not one.
 */
int fk_push_items(const char *operand, GPtrArray *items, GError **err);

/* One profile read whole. */
struct fk_profile {
	char *path;			/* as given */
	struct fold_table *table;	/* its stacks, merged */
	struct fold_entry **entries;	/* sorted bytewise; owned */
	size_t n;
	fk_count total;
	int64_t mtime;			/* the file's modification time, or
					   the time it was read (stdin) */
};

/*
 * Reads path ("-": standard input) into a new profile.  A profile is
 * stored whole or not at all, so any line that is not a folded stack (a
 * comment, a missing or negative count) and any line with two counts (a
 * differential profile, which a store cannot add up) fails it: NULL with
 * *err naming the file and the first such line.  Free with
 * fk_profile_free().
 */
struct fk_profile *fk_profile_read(const char *path, GError **err);

void fk_profile_free(struct fk_profile *p);

#endif
