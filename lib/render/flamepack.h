/*
 * flamepack.h - a built flame graph packed into a few bytes a frame: a
 * name table and the prefix tree in pre-order, for fold2html's page to
 * decode into typed arrays (lib/render/fold2html.js, decode()).
 *
 *	struct fg_opts fo = FG_OPTS_INIT;
 *	fo.minwidth = 0;                       // keep every frame
 *	...fg_add_file(), fg_build()...
 *	struct flame_pack p;
 *	flame_pack_build(fg, color_of_name, &opts, &p);
 *	fwrite(p.data, 1, p.len, out);         // about 3 bytes a frame
 *	flame_pack_clear(&p);
 *
 * The bytes, all integers LEB128 varints (seven bits a byte, low bits
 * first), the signed ones zigzag-coded (0, -1, 1, -2 ... as 0, 1, 2, 3 ...):
 *
 *	NNAMES NFRAMES NAMEBYTES
 *	NAMES	NAMEBYTES bytes: every distinct frame name as shown, joined
 *		by '\n', the most frequent first (so that common names take
 *		one byte below).  Shown means without a trailing annotation
 *		(_[k], _[j], _[i], _[w]) and as valid UTF-8 with each invalid
 *		byte and each control character (C0 including tab and
 *		newline, DEL, C1, U+FFFE, U+FFFF) as U+FFFD, the rule of
 *		xmlesc.h.  Names are distinct as written in the input: two
 *		may show alike (foo and foo_[k], or two invalid byte runs).
 *	COLOURS	three bytes, red green blue, for each name: the colour the
 *		callback gave its full name (annotation included)
 *	FRAMES	NFRAMES records in pre-order (root first, each frame before
 *		its children, children left to right), each
 *		  HEAD   UP << 3 | 1 (has SELF) | 2 (has GAP) | 4 (has DIFF)
 *		  NAME   the name's index
 *		  SELF   signed: the counts of the stacks that end at the frame
 *		         (absent: 0); a frame's width is its SELF plus its
 *		         children's widths, the root's the graph's total
 *		  GAP    signed: where the frame starts, after the end of its
 *		         previous sibling, or for a first child after its
 *		         parent's start plus the parent's SELF (absent: 0,
 *		         which it is for every frame of sorted, merged input)
 *		  DIFF   differential input only (absent: no change, not new):
 *		         KIND, 1 (has DELTA) | 2 (has TOTAL) | 4 (new: absent
 *		         from the first profile), then
 *		  DELTA  signed: the second minus the first counts of the
 *		         stacks that end at the frame (flamegraph.pl's change)
 *		  TOTAL  signed, in a graph built with FG_DIFF_TOTAL: the
 *		         frame's total change, fg_frame_total_change()
 *		UP says where the frame hangs: its depth is the previous
 *		frame's depth + 1 - UP (the root's is 0; it is the only frame
 *		at depth 0).
 *
 * Every count is an integer in units of 10^-scale, scale from 0 to 9 the
 * fewest decimals that hold them all exactly (0 for integer counts).
 *
 * The graph must keep every frame's parent (built with minwidth 0, as
 * fold2html builds it); a frame whose parent was dropped is left out with
 * its descendants.  Memory: about 24 bytes a frame while packing, besides
 * the result.
 */
#ifndef FOLDKIT_FLAMEPACK_H
#define FOLDKIT_FLAMEPACK_H

#include "core/count.h"
#include "render/flamegraph.h"
#include "render/palette.h"

#include <stddef.h>
#include <stdint.h>

struct flame_pack {
	uint8_t *data;		/* the bytes above; freed by flame_pack_clear() */
	size_t len;
	unsigned scale;		/* counts are in units of 10^-scale */
	size_t nnames, nframes;
	uint32_t depthmax;	/* the deepest frame packed */
};

/*
 * A frame name's colour: name[0..len) as in the input (annotation
 * included; the root's name is empty), index its place in the name table.
 * Called once per distinct name, in the table's order.
 */
typedef struct rgb (*flame_pack_color_fn)(const char *name, size_t len,
					  size_t index, void *data);

/* Packs fg (after fg_build()) into *out. */
void flame_pack_build(const struct flamegraph *fg, flame_pack_color_fn color,
		      void *color_data, struct flame_pack *out);

/* Frees out->data and zeroes *out. */
void flame_pack_clear(struct flame_pack *out);

/* c in units of 10^-scale (scale from 0 to 9), exact: c must be a whole
 * number of them. */
fk_count flame_pack_units(fk_count c, unsigned scale);

#endif
