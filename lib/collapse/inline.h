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
 *	"  11e4 work+0x44 (/tmp/prog)"  gives  "work;stage;mix"
 *	with context                           "work:prog.c:11;stage:chain.h:10;mix:chain.h:5"
 *
 * The answer is what `addr2line -a ADDR -e DSO -i -f -s -C` prints, the
 * way stackcollapse-perf.pl uses it: names outermost first, demangled with
 * their argument lists, " (discriminator N)" dropped, each followed by
 * ":FILE:LINE" (the file's basename) with context.  Separate debug files
 * are found by build-id and .gnu_debuglink, as addr2line finds them.
 *
 * Frames that keep their own symbol (framename.h), as when addr2line
 * answers "??": DSOs the Perl script skips ("[kernel.kallsyms]", any
 * "[...]", /tmp/perf-PID.map, paths containing "kernel."), perf's own
 * "(inlined)" frames, files that do not exist, are not regular files (a
 * FIFO or a device named in the input is never opened for reading) or are
 * not executables or shared objects, and addresses without line information (where addr2line
 * would guess a name from the symbol table).
 *
 * perf script prints a file offset, not an address; it is translated
 * through the PT_LOAD segments, so non-PIE executables resolve too (the
 * Perl script gets "??" there).  One process, no children: the Perl
 * script's addr2line per address is what made --inline unusable on real
 * profiles.  Memory: one open file per DSO, one string per distinct
 * address.
 */
#ifndef FOLDKIT_INLINE_H
#define FOLDKIT_INLINE_H

#include "collapse/collapse.h"

#include <stdbool.h>

/*
 * Returns a resolver for collapse_opts.inliner; context adds ":FILE:LINE".
 * The caller owns it; free it with inline_resolver_free() (NULL is fine)
 * after the collapser that uses it.
 */
struct inline_resolver *inline_resolver_new(bool context);
void inline_resolver_free(struct inline_resolver *ir);

/*
 * The function at frame f's address (f->dso, and f->pc as perf prints it:
 * the file offset in hex) from the file's symbol table (.symtab, else
 * .dynsym, or a separate debug file's), demangled with its argument list
 * as perf prints symbols: "ns::work(int)".  NULL when the file or the
 * symbol is unknown, as for resolve().  Cached per (file, address); the
 * string is owned by ir and lives until inline_resolver_free().  This is
 * how gperf-collapse names frames without --inline.
 */
const char *inline_resolver_symbol(struct inline_resolver *ir,
				   const struct perf_frame *f);

#endif
