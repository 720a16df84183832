/*
 * gperf.h - gperftools CPU profiles (what libprofiler.so writes for
 * CPUPROFILE=FILE) to folded stacks, symbolised in-process with libdw
 * through inline.h's resolver.
 *
 *	struct inline_resolver *ir = inline_resolver_new(false);
 *	struct gperf_opts o = { .executable = "./server", .resolver = ir };
 *	struct gperf_collapser *c = gperf_collapser_new(&o, skips);
 *	if (gperf_collapser_read(c, "server.prof", &err) < 0)
 *		report(err);            // "server.prof: at byte 24: ..."
 *	fold_table_write(gperf_collapser_table(c), stdout, 1, &err);
 *	gperf_collapser_free(c);
 *	inline_resolver_free(ir);
 *
 * The format (gperftools' docs/cpuprofile-fileformat.html) is machine
 * words, 32 or 64 bits, in the writer's byte order: a header (0, 3, 0,
 * sampling period in microseconds, 0), sample records (count, depth, then
 * depth program counters, the leaf first), a trailer (0, 1, 0), then the
 * process's /proc/self/maps as text.  Word size and byte order are read
 * from the header, so a profile written on another machine reads too.
 *
 * A counter falls in one of the maps' executable mappings; its offset in
 * the mapped file names it: from the symbol table (inline_resolver_symbol())
 * or, with expand_inline, as the chain of inlined functions
 * (inline_resolver's resolve(), the same that fp-collapse --inline uses),
 * each name then tidied by framename.h as fp-collapse tidies perf's
 * ("ns::work(int)" -> "ns::work").  Callers' counters are return
 * addresses: they are looked up one byte back, inside the call, as
 * pprof does.  A counter in no mapping is "[unknown]", one in a file
 * without a symbol for it "[FILE-BASENAME]" (with addrs "[FILE <ADDR>]").
 *
 * The mappings of the profiled program are read from executable
 * instead of the path the maps name (which may be a container's): those
 * whose path is executable's, or else whose file name is; failing both,
 * the first mapped file that is not a shared object (".so").  Other files
 * are read where the maps say.
 *
 * Memory grows with the distinct stacks (as program counters) and the
 * distinct counters, never with the number of records: records are
 * summed by their raw counters first, then each distinct one is named
 * once, and each distinct name kept once however many addresses have it.
 * Errors, none of which prints a stack: a header that is not a CPU
 * profile's, a record deeper than BOUNDS_MAX_FRAMES (2^20) frames, a
 * profile that ends before its trailer or has no maps, maps over 64 MiB,
 * and the limits of bounds.h, each checked before the memory is taken: a
 * name of more than BOUNDS_MAX_NAME bytes, a stack of more than
 * BOUNDS_MAX_FRAMES frames (with expand_inline) or BOUNDS_MAX_STACK
 * bytes, distinct stacks of more than max_output bytes in all.  Records
 * of depth 0 are skipped and counted ("sample without a stack").
 */
#ifndef FOLDKIT_GPERF_H
#define FOLDKIT_GPERF_H

#include "collapse/collapse.h"
#include "core/foldtable.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct gperf_opts {
	const char *executable;		/* the profiled program */
	struct inline_resolver *resolver;	/* inline.h; required */
	bool expand_inline;		/* --inline */
	bool addrs;			/* "[FILE <ADDR>]" for unknown symbols */
	uint64_t max_output;		/* the distinct stacks' bytes, each with
					   its line end; 0: BOUNDS_DEFAULT_OUTPUT */
};

/* What a profile held, for -v. */
struct gperf_stats {
	uint64_t period_us;	/* the last profile's sampling period */
	uint64_t samples;	/* the sum of the records' counts */
	uint64_t records;
	unsigned word_bits;	/* 32 or 64 */
	bool big_endian;
	bool executable_found;	/* a mapping was the executable's */
};

struct gperf_collapser;

/* opts (and what it points to) and skips must outlive the collapser. */
struct gperf_collapser *gperf_collapser_new(const struct gperf_opts *opts,
					    struct skip_log *skips);
void gperf_collapser_free(struct gperf_collapser *c);

/*
 * Reads the profile at path ("-": standard input), names its stacks and
 * adds them to the table.  Returns 0, or -1 with *err set, in which case
 * nothing of that profile was added.
 */
int gperf_collapser_read(struct gperf_collapser *c, const char *path,
			 GError **err);

struct fold_table *gperf_collapser_table(struct gperf_collapser *c);

/* The last profile read's figures. */
const struct gperf_stats *gperf_collapser_stats(const struct gperf_collapser *c);

#endif
