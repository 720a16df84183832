/*
 * stap.h - SystemTap's frame names, for stackrecords.h: what stap-collapse
 * and stackcollapse-stap.pl make of print_stack(), print_ustack() and
 * print_ubacktrace() lines, each stack followed by a printf of its count.
 *
 *	struct stack_records_opts o = { 0 };
 *	stack_records_collapse(path, &o, skips, cache, &stap_frames, &err);
 *
 *	"0x3880ef2877 : socket+0x7/0x30 [/usr/lib64/libc-2.15.so]" -> "socket"
 *	" 0xffffffff8119d340 : pipe_write+0x3c0/0x540 [kernel]"    -> "pipe_write"
 *	"0x4d24ab : Perl_runops_standard+0x17/0x40 [perl] (inexact)"
 *	                                            -> "Perl_runops_standard"
 *	"0x41e1a9 [/opt/perl/bin/perl+0x1e1a9/0x20000]"  (no symbol)
 *	                                            -> "0x41e1a9 [/opt/perl/bin/perl"
 *	"0x41e1a9"                                  -> unchanged
 *	"Test::Nginx::Util::run_test"               -> unchanged (a script's
 *	                                               own backtrace lines)
 *
 * The name is the text after "ADDRESS : " up to its "+0xOFF/0xSIZE"
 * offset (dropping the " [module]" and " (inexact)" after it); a frame
 * without a symbol keeps its address and module, and one without an offset
 * all of its text, as stackcollapse-stap.pl prints them.  That
 * script removes everything from the last '+', which mangles frames of
 * libraries with a '+' in their path (libstdc++: "foo+0x1/0x2
 * [/usr/lib/libstdc+"); these rules remove only an offset.  ';' becomes
 * ':' (the script leaves it, splitting the frame in two); nothing else is
 * changed: SystemTap prints symbol table names, not argument lists.
 */
#ifndef FOLDKIT_STAP_H
#define FOLDKIT_STAP_H

#include "collapse/stackcache.h"
#include "collapse/stackrecords.h"

#include <glib.h>

/* The rules for stackcache.h: a frame's key is its symbol, no offset. */
extern const struct stack_frame_rules stap_frames;

/* Appends the name of SystemTap frame line s[0..n) to out. */
void stap_frame_name(GString *out, const char *s, size_t n);

#endif
