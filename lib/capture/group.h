/*
 * group.h - fp-record --group-workers: the processes of one program and
 * role (its workers) as one profile, and how evenly the work is spread
 * among them, so that a worker that does more of something stands out.
 *
 *	struct fk_group_member m[] = {
 *		{ .name = "server.worker-1", .path = "cap/on/server.worker-1.folded" },
 *		{ .name = "server.worker-2", .path = "cap/on/server.worker-2.folded" },
 *	};
 *	struct fk_group *g = fk_group_read(m, 2, 10, &err);
 *	fold_table_write(fk_group_table(g), out, 1, &err);   // the merged profile
 *	for (size_t i = 0; i < fk_group_nfns(g); i++) {
 *		const struct fk_group_fn *f = fk_group_fn(g, i);
 *		// f->frame, its self count in the group, its share there, and
 *		// its lowest and highest share among the members (which ones)
 *	}
 *	fk_group_free(g);
 *
 * The merged profile is every member's stacks summed (counts exact, as
 * core/foldtable.h keeps them), so its total is the sum of theirs.  The
 * functions are the group's top ones by self count (the stack's leaf;
 * a stack of the root frame alone, the thread, has none), ties by name
 * bytewise.  A function's share in a profile is its self count over that
 * profile's total; its spread is its lowest and highest share among the
 * members that have samples (a member with none is no evidence of
 * balance), the first member in the order given on a tie.  Each member's
 * total is kept too: the least and most loaded members.
 *
 * Members' files are read with core/folded.h: a line that is not a folded
 * stack is counted in the member's skips (fk_group_skipped()); a file
 * that cannot be read, or a differential one, is an error naming it.
 */
#ifndef FOLDKIT_CAPTURE_GROUP_H
#define FOLDKIT_CAPTURE_GROUP_H

#include "core/count.h"
#include "core/foldtable.h"

#include <glib.h>
#include <stddef.h>

struct fk_group_member {
	const char *name;	/* for the spread: "server.worker-1" */
	const char *path;	/* its folded file */
};

struct fk_group_fn {
	char *frame;		/* the function (the leaf frame's text) */
	fk_count self;		/* in the merged profile */
	double share;		/* self over the merged total */
	double low, high;	/* its lowest and highest share in a member */
	size_t low_at, high_at;	/* which members (indexes into the given) */
};

struct fk_group;

/* Reads the n members' files (n >= 1) and keeps the top functions (top
 * >= 1).  NULL with *err set naming the file when one cannot be read. */
struct fk_group *fk_group_read(const struct fk_group_member *m, size_t n, size_t top,
			       GError **err);
void fk_group_free(struct fk_group *g);

/* The merged profile. */
const struct fold_table *fk_group_table(const struct fk_group *g);
fk_count fk_group_total(const struct fk_group *g);
/* Member i's total, and how many of its lines were not stacks. */
fk_count fk_group_member_total(const struct fk_group *g, size_t i);
uint64_t fk_group_skipped(const struct fk_group *g, size_t i);
/* The members with samples, and the least and most loaded of them (by
 * total, the first on a tie); both SIZE_MAX when none has samples. */
size_t fk_group_sampled(const struct fk_group *g);
size_t fk_group_least(const struct fk_group *g);
size_t fk_group_most(const struct fk_group *g);

/* The top functions, most self first. */
size_t fk_group_nfns(const struct fk_group *g);
const struct fk_group_fn *fk_group_fn(const struct fk_group *g, size_t i);

#endif
