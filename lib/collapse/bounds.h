/*
 * bounds.h - the limits of the collapsers whose input names its frames
 * once and repeats them by reference (pprof-collapse: a location id;
 * gperf-collapse: an address), so that a small file can declare a huge
 * output: a 175-byte gzip file holding one 32 KiB name and a sample of
 * 32,768 references to it declares 1 GiB of folded text.
 *
 *	struct output_bound b = { .limit = BOUNDS_DEFAULT_OUTPUT };
 *	if (frames > BOUNDS_MAX_FRAMES || len > BOUNDS_MAX_STACK)
 *		...refuse the stack before making it...
 *	if (output_bound_add(&b, table, stack, len, count, "cpu.pb.gz", &err) < 0)
 *		...the table holds more than b.limit bytes of stacks: err says so...
 *
 * Every limit is far above what real profiles hold (see pprof-collapse(1)
 * and gperf-collapse(1) for the figures) and is checked before the memory
 * is taken, so memory stays bounded by these numbers whatever a file
 * declares:
 *  - BOUNDS_MAX_FRAMES frames in one stack;
 *  - BOUNDS_MAX_NAME bytes in one frame's name;
 *  - BOUNDS_MAX_STACK bytes in one stack: with its count, the longest
 *    line foldkit's folded readers take (LINE_READER_MAX_LINE);
 *  - a limit chosen by the caller on the bytes of the distinct stacks
 *    written (BOUNDS_DEFAULT_OUTPUT unless the user asks otherwise).
 */
#ifndef FOLDKIT_BOUNDS_H
#define FOLDKIT_BOUNDS_H

#include "core/foldtable.h"
#include "core/linereader.h"

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#define BOUNDS_MAX_FRAMES (1u << 20)
#define BOUNDS_MAX_NAME (1u << 20)
#define BOUNDS_MAX_STACK (LINE_READER_MAX_LINE - 64)
#define BOUNDS_DEFAULT_OUTPUT ((uint64_t)1 << 30)

/* The distinct stacks' bytes added so far, and how many may be. */
struct output_bound {
	uint64_t used;		/* each stack's bytes and its line end */
	uint64_t limit;
};

/*
 * Adds c to stack[0..len) in t; a stack new to t counts len + 1 bytes.
 * Returns 0, or -1 with *err set ("NAME: its folded stacks pass N MiB, the
 * output limit (--max-output)") once they pass b->limit: the stack is then
 * in t, and the caller throws t away.
 */
int output_bound_add(struct output_bound *b, struct fold_table *t,
		     const char *stack, size_t len, fk_count c,
		     const char *name, GError **err);

/*
 * "N MiB" (or "N KiB", "N bytes") for a limit in messages, into buf of 32
 * bytes; returns buf.
 */
const char *bounds_size(uint64_t bytes, char buf[32]);

#endif
