/*
 * framename.h - how a perf frame becomes a folded-stack frame name.  The one
 * set of naming rules shared by fp-collapse (perf script text) and the perf
 * plugin (perf's own resolved symbols), so their outputs cannot drift apart.
 *
 *	struct frame_name_opts o = { .annotate_kernel = true };
 *	GString *out = g_string_new(NULL);
 *	frame_name_append(out, &o, &frame, false);
 *	// "do_syscall_64_[k]" for do_syscall_64+0x71 ([kernel.kallsyms])
 *
 * The rules are stackcollapse-perf.pl's, applied in its order:
 *  1. a "+0x1f" offset is removed; "a->b" (an inline chain) gives one name
 *     per part, every part after the first annotated "_[i]";
 *  2. "[unknown]" becomes "[DSO-BASENAME]" (or "[unknown]"), with
 *     include_addrs "[DSO-BASENAME <ADDR>]";
 *  3. ';' becomes ':'; an argument list is removed (not for Go method names
 *     such as "net/http.(*Client).Do"); quotes are deleted;
 *  4. for a process named exactly "java", "Lpkg/Class;" loses its 'L';
 *  5. annotations: "_[k]" for kernel DSOs (see frame_dso_is_kernel()),
 *     "_[j]" for JIT maps (/tmp/perf-PID.map, jitted-PID-N.so), "_[i]"
 *     for the parts of an inline chain after the first and, only with
 *     annotate_inlined, for frames perf printed as "(inlined)" (the Perl
 *     script and inferno leave those unannotated);
 *  6. a source line (perf script -F+srcline) is appended as ":FILE:LINE";
 *  7. a frame that ends in a blank and a number ("evil 1", or "f 0.5 ")
 *     gets '_' for that blank ("evil_1"): "p;evil 1 5" would read as a
 *     differential line (stack "p;evil", counts 1 and 5) everywhere.
 *     frame_name_append_text() applies it too, for every collapser.
 *
 * Where the Perl script mangles names, these rules do better (see
 * docs/fp-collapse.1, COMPATIBILITY): the argument list is cut only at the
 * top nesting level, so "std::function<void (int)>::operator()" and
 * "{lambda(int)#1}" survive, and frames starting with '(' such as
 * "(anonymous namespace)::run" are kept rather than dropped.
 */
#ifndef FOLDKIT_FRAMENAME_H
#define FOLDKIT_FRAMENAME_H

#include "collapse/perfscript.h"

#include <glib.h>
#include <stdbool.h>

struct frame_name_opts {
	bool annotate_kernel;	/* --kernel: "_[k]" */
	bool annotate_jit;	/* --jit: "_[j]" */
	bool include_addrs;	/* --addrs: "[dso <addr>]" for unknown symbols */
	bool annotate_inlined;	/* --annotate-inlined: "_[i]" for perf's
				   "(inlined)" frames */
	bool kernel_user_maps;	/* with annotate_kernel, "_[k]" also for the
				   process's own "[...]" mappings ("[vdso]"),
				   as stackcollapse-perf.pl writes them:
				   fp-collapse's output stays byte-identical
				   to the Perl script's (kfold --kernel does
				   not believe that mark); the plugin leaves
				   them unannotated */
};

/*
 * Appends the frame's name (or names, ';'-separated, for an inline chain)
 * to out.  java is true when the process name is exactly "java".
 */
void frame_name_append(GString *out, const struct frame_name_opts *o,
		       const struct perf_frame *f, bool java);

/*
 * Makes the ';'-separated frames in out from byte from on safe to print as
 * folded stacks (rule 7, and '\n' becomes '_'), in place: for names that
 * did not go through frame_name_append(), such as --inline's.
 */
void frame_name_make_safe(GString *out, size_t from);

/*
 * Removes a C++/C argument list from name[0..len) in place, the way rule 3
 * does, and returns the new length.  Exposed for tests.
 */
size_t frame_name_cut_args(char *name, size_t len);

/*
 * True for DSOs that get "_[k]": "[kernel.kallsyms]" and the other "[...]"
 * names (modules such as "[nf_conntrack]"), a vmlinux with or without a
 * version (".../vmlinux", "/usr/lib/debug/boot/vmlinux-5.4.0") and module
 * files ("/lib/modules/.../x.ko", also .ko.xz, .ko.gz, .ko.zst).  Not:
 * names containing "unknown", and, unless user_maps (the Perl script's
 * rule, see frame_name_opts.kernel_user_maps), the "[...]" mappings of the
 * process's own address space, whose code runs in user space: "[vdso]"
 * (and "[vdso32]", "[vdsox32]"), "[vsyscall]", "[vvar]", "[heap]",
 * "[stack...]", "[anon...]", "[uprobes]".
 */
bool frame_dso_is_kernel(const char *dso, size_t len, bool user_maps);

/* True for JIT symbol maps: "/tmp/perf-123.map", "jitted-123-4.so". */
bool frame_dso_is_jit(const char *dso, size_t len);

/*
 * Frames that are only text: DTrace's "libc.so.1`malloc", SystemTap's
 * symbol, bpftrace's "vfs_read": no address or DSO column, so rules 2, 5
 * and 6 do not apply.  The profiler's own syntax (offsets, addresses,
 * modules) is the parser's to remove; frame_name_append_text() then
 * applies the naming rules flags choose, always replacing ';' with ':' and
 * a line break with '_', and appending "-" for an empty name, so that the
 * folded line keeps one frame per name.
 *
 *	frame_name_append_text(out, "mysqld`do_command(THD*)", 23,
 *			       FRAME_TEXT_SCOPED_ARGS);   // unchanged: no "::"
 *	frame_name_append_text(out, "a`ns::f(int)", 12,
 *			       FRAME_TEXT_SCOPED_ARGS);   // "a`ns::f"
 *	frame_name_append_text(out, "foo->bar", 8, FRAME_TEXT_ARROWS);
 *						       // "foo;bar_[i]"
 */
enum frame_text_flags {
	FRAME_TEXT_ARROWS = 1,		/* "a->b" is an inline chain (rule 1;
					   "operator->" is one name) */
	FRAME_TEXT_ARGS = 2,		/* cut the argument list (rule 3) */
	FRAME_TEXT_SCOPED_ARGS = 4,	/* ... only when "::" comes before it */
	FRAME_TEXT_JAVA = 8,		/* rule 4 whatever the process */
	FRAME_TEXT_PROCESS = 16,	/* a process name, as collapse.h makes
					   it: blanks become '_'
					   ("my worker 1" -> "my_worker_1") */
};

void frame_name_append_text(GString *out, const char *s, size_t n,
			    unsigned flags);

/*
 * Where a final offset in s[0..e) starts: "+0x1a6" (DTrace), "+0x5/0x2f"
 * (the kernel's %pS, SystemTap; *sized is then true), or with decimal
 * true "+142" (bpftrace).  Returns SIZE_MAX when s[0..e) does not end in
 * one.
 */
size_t frame_text_offset(const char *s, size_t e, bool decimal, bool *sized);

#endif
