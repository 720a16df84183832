/*
 * inline.h - the --inline resolver: inlined-function chains for the frames
 * of ELF files, read in-process from their DWARF debug information with
 * elfutils' libdw, cached per (file, address).
 *
 *	struct inline_resolver *ir = inline_resolver_new(false);
 *	struct collapse_opts o = { .inliner = ir };
 *	...
 *	inline_resolver_free(ir);
 *
 * A frame is resolved when its DSO is a file (not "[kernel.kallsyms]", not a
 * "[...]" pseudo-DSO, not a perf-PID.map JIT map) and the file has line
 * information for the address; the names come out outermost first,
 * demangled, each followed by ":FILE:LINE" with context.  Anything else
 * falls back to the frame's own symbol, as stackcollapse-perf.pl does when
 * addr2line answers "??".  One process, no children: the Perl script's
 * `addr2line` per address is what made --inline unusable on real profiles.
 */
#ifndef FOLDKIT_INLINE_H
#define FOLDKIT_INLINE_H

#include "collapse.h"

#include <stdbool.h>

/* Returns a resolver for collapse_opts.inliner; free with _free(). */
struct inline_resolver *inline_resolver_new(bool context);
void inline_resolver_free(struct inline_resolver *ir);

#endif
