/*
 * framepath.h - a folded stack's frames as ids, looked up only where the
 * stack differs from the one before: the exporters' per-stack loop.
 *
 *	struct frame_path fp = FRAME_PATH_INIT;
 *	size_t n;
 *	const uint32_t *ids = frame_path_ids(&fp, "a;b;c", 5, true, id_of, ctx, &n);
 *	// id_of(ctx, UINT32_MAX, "a", 1), (ctx, ids[0], "b", 1), (ctx, ids[1], "c", 1)
 *	ids = frame_path_ids(&fp, "a;b;d", 5, true, id_of, ctx, &n);
 *	// only id_of(ctx, ids[1], "d", 1): ids[0] and ids[1] are kept
 *	frame_path_release(&fp);
 *
 * Sorted folded stacks (a fold_table's order) share long prefixes, so most
 * frames are not looked up at all.  id_of() gets the id of the frame
 * before (UINT32_MAX for the root), so an id can stand for the whole path
 * (a call-tree node) as well as for one frame.  A frame is the bytes
 * between two ';' (so "a;;b" has an empty frame); an empty stack has no
 * frames.
 *
 * stable: the stack's bytes stay valid and unchanged until the next call
 * (or longer); otherwise they are copied, since the next call compares
 * against them.  The returned array belongs to fp and is valid until the
 * next call.
 */
#ifndef FOLDKIT_FRAMEPATH_H
#define FOLDKIT_FRAMEPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint32_t (*frame_id_fn)(void *ctx, uint32_t prev, const char *name,
				size_t len);

struct frame_path {
	const char *last;
	size_t last_len;
	char *copy;
	size_t copy_cap;
	size_t *ends;		/* end of each frame of the last stack */
	uint32_t *ids;		/* and its id */
	size_t n, cap;
};

#define FRAME_PATH_INIT { 0 }

/* The ids of stack's frames, root first; *n gets how many. */
const uint32_t *frame_path_ids(struct frame_path *fp, const char *stack,
			       size_t len, bool stable, frame_id_fn id_of,
			       void *ctx, size_t *n);

/* Forgets the last stack (when ids may have changed meaning). */
void frame_path_reset(struct frame_path *fp);

void frame_path_release(struct frame_path *fp);

#endif
