/*
 * bpftrace.h - bpftrace map output to folded stacks: what bpftrace-collapse
 * and stackcollapse-bpftrace.pl read.
 *
 *	struct bpftrace_opts o = { .map = NULL };
 *	struct bpftrace_collapser *c = bpftrace_collapser_new(&o, skips);
 *	if (bpftrace_collapser_read(c, "out.bt", &err) < 0)
 *		report(err);
 *	fold_table_write(bpftrace_collapser_table(c), stdout, 1, &err);
 *	bpftrace_collapser_free(c);
 *
 * A map record is "@NAME[KEY]: VALUE", where the key's elements are
 * separated by ", " and a stack (kstack, ustack) prints as a line break
 * and one indented frame a line, leaf first:
 *
 *	@[
 *	    vfs_write+205                     <- kstack
 *	    ksys_write+111
 *	    do_syscall_64+113
 *	,
 *	    0x7f1c680b3091                    <- ustack (an empty stack
 *	    __libc_start_main+133                prints nothing: "@[, ")
 *	, dd]: 3                              <- comm, and the count
 *
 * becomes "dd;__libc_start_main;0x7f1c680b3091;do_syscall_64;ksys_write;
 * vfs_write 3": the key's other elements (comm, pid) first, in key order,
 * then its stacks root first, the last stack of the key outermost — so
 * `@[kstack, ustack, comm]`, the usual one-liner, puts the process, its
 * user stack, then the kernel stack above it.
 *
 * Frames are named by framename.h as fp-collapse names perf's: the
 * decimal "+205" offset is removed (keep_offsets keeps it), an argument
 * list is cut; the perf stack mode's "ADDR SYM+OFF (DSO)" lines give SYM,
 * with "[unknown]" becoming "[DSO]".  Key elements that are not stacks are
 * named like process names (blanks become '_').
 *
 * Only one map is folded: opts->map, or else the first map in the input
 * with a stack in a key (a script's other maps, such as "@start[tid]",
 * hold no stacks); bpftrace_collapser_note() names the maps dropped.
 * Skipped and counted: lines outside a record ("Attaching 2 probes..."
 * and blank lines are not counted), a record whose value is not a count
 * (hist(), stats()) or is negative or above 2^64-1, a record without frames
 * or other key elements, and a record the input ends or a new record cuts
 * short.  Errors are linereader.h's, and a last line without '\n'.
 *
 * Memory: one table per map seen, each with the distinct stacks of that
 * map; frames and caller chains are named once (stackcache.h).
 */
#ifndef FOLDKIT_BPFTRACE_H
#define FOLDKIT_BPFTRACE_H

#include "core/foldtable.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>

struct bpftrace_opts {
	bool keep_offsets;	/* "vfs_write+205", as the Perl script prints */
	const char *map;	/* "@stacks" or "stacks"; NULL: the first with
				   a stack */
};

struct bpftrace_collapser;

/* opts (and opts->map) and skips must outlive the collapser. */
struct bpftrace_collapser *bpftrace_collapser_new(const struct bpftrace_opts *opts,
						  struct skip_log *skips);
void bpftrace_collapser_free(struct bpftrace_collapser *c);

/*
 * Folds every record of path ("-": standard input) into its map's table.
 * Returns 0, or -1 with *err set (after folding the records before it).
 */
int bpftrace_collapser_read(struct bpftrace_collapser *c, const char *path,
			    GError **err);

/*
 * The folded stacks of the chosen map (an empty table if there is none),
 * owned by c.  Choosing happens here, so call it after the last read.
 */
struct fold_table *bpftrace_collapser_table(struct bpftrace_collapser *c);

/*
 * NULL when every record was of the chosen map; else one line such as
 * "kept map '@' (440 records); dropped '@start' (12 records), choose with
 * --map".  Free with g_free().
 */
char *bpftrace_collapser_note(struct bpftrace_collapser *c);

#endif
