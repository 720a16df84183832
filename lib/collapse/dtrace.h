/*
 * dtrace.h - DTrace's frame names, for stackrecords.h: what dtrace-collapse
 * and stackcollapse.pl make of `ustack()`, `stack()` and `jstack()` lines
 * (and of ktap's backtraces, which print kernel frames the same way).
 *
 *	struct stack_records_opts o = { .dtrace_header = true };
 *	stack_records_collapse(path, &o, skips, cache, &dtrace_frames, &err);
 *
 *	"libc.so.1`__priocntlset+0xa"            -> "libc.so.1`__priocntlset"
 *	"mysqld`_Z10do_commandP3THD+0x198"       -> "mysqld`_Z10do_commandP3THD"
 *	"libjvm.dylib`JavaCalls::call_helper(JavaValue*, methodHandle*)+0x6ae"
 *	                                         -> "libjvm.dylib`JavaCalls::call_helper"
 *	"java/lang/Thread.run()V"                -> unchanged
 *	"ftrace_call+0x5/0x2f [ktap]"            -> "ftrace_call" (ktap, %pS)
 *	"test`foo->bar"                          -> "test`foo;bar_[i]"
 *
 * The rules are stackcollapse.pl's: the offset is removed, a C++ name
 * ("::" before its argument list) loses its arguments, ';' becomes ':',
 * "a->b" is an inline chain, and a Java type descriptor "Lpkg/Class;"
 * loses its 'L'.  Where the Perl script loses or mangles names, these do
 * better (docs/dtrace-collapse.1, COMPATIBILITY): the offset removed is
 * only a "+0x..." one (the Perl script cuts at the last '+', so a frame of
 * libstdc++ without an offset becomes "libstdc+"), the argument list is
 * cut at the top nesting level (the Perl script cuts at the last '(' or
 * '<', so "<A::B<T> as C>::f" becomes "<A::B"), and the 'L' is removed
 * only from Java type descriptors (the Perl script removes a leading 'L'
 * from every frame).
 */
#ifndef FOLDKIT_DTRACE_H
#define FOLDKIT_DTRACE_H

#include "collapse/stackcache.h"
#include "collapse/stackrecords.h"

#include <glib.h>

/* The rules for stackcache.h: a frame's key is its text without offset. */
extern const struct stack_frame_rules dtrace_frames;

/* Appends the name of DTrace frame line s[0..n) to out. */
void dtrace_frame_name(GString *out, const char *s, size_t n);

/*
 * The length of s[0..n) without a final offset: "+0x1a6", or the kernel's
 * "+0x5/0x2f" with an optional " [module]" after it (ktap, SystemTap);
 * n when there is none.  Shared with stap.h.
 */
size_t dtrace_offset_start(const char *s, size_t n);

#endif
