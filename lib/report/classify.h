/*
 * classify.h - what a frame name says about the code it names, for
 * fold-report: unresolved, a thread's entry point, a lock wait, the
 * scheduler, the vDSO, a constructor, allocation, logging, a write.
 *
 *	struct frame_classifier *fc = frame_classifier_new();
 *	unsigned c = frame_classify(fc, "__GI___lll_lock_wait", 20);
 *	// c == FRAME_LOCK_WAIT
 *	c = frame_classify(fc, "[libstdc++.so.6.0.30]", 21);
 *	// c == FRAME_UNRESOLVED
 *	frame_classifier_free(fc);
 *
 * Names are matched after the decorations collapsers and linkers add are
 * taken off (frame_name_base()): an annotation ("_[k]", "_[j]", "_[i]",
 * "_[w]"), a symbol version ("@@GLIBC_2.3.2"), a compiler clone suffix
 * (".isra.0", ".constprop.0", ".part.0", ".cold"), glibc's "__GI_" alias
 * prefix and leading underscores: "__GI___pthread_mutex_lock@GLIBC_2.2.5"
 * is "pthread_mutex_lock".  Most classes are lists of such base names (in
 * classify.c, one table); constructors, the vDSO, C++ locks and logging
 * are recognised by the shape of the name.  Classes never depend on the
 * profile, so a frame's class is computed once per distinct name.
 *
 * The classifier owns nothing but its lookup table; it is not thread-safe
 * (one per thread).
 */
#ifndef FOLDKIT_REPORT_CLASSIFY_H
#define FOLDKIT_REPORT_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>

enum {
	/* "[unknown]", or a DSO with no symbol: "[libc.so.6]", "[perf]",
	 * "[[kernel.kallsyms]]", "[libx.so <7f12...>]" ("[kernel]", the
	 * frame kfold folds kernel runs into, is not one) */
	FRAME_UNRESOLVED = 1u << 0,
	/* where a thread's stack starts: _start, __libc_start_main,
	 * start_thread, clone, clone3, ret_from_fork, kthread, ... */
	FRAME_ENTRY = 1u << 1,
	/* waiting for a lock: pthread_mutex_lock, __lll_lock_wait,
	 * futex_wait, pthread_cond_wait, std::mutex::lock, spin locks ... */
	FRAME_LOCK_WAIT = 1u << 2,
	/* switching out or idling: schedule, finish_task_switch, do_idle ... */
	FRAME_SCHED = 1u << 3,
	/* the vDSO: "[vdso]", "[[vdso]]", __vdso_clock_gettime ... */
	FRAME_VDSO = 1u << 4,
	/* a C++ constructor or destructor: "ns::Request::Request",
	 * "Foo<int>::~Foo" */
	FRAME_CTOR = 1u << 5,
	/* memory allocation: malloc, free, operator new, _int_malloc ... */
	FRAME_ALLOC = 1u << 6,
	/* a logging library or a Logger's method: spdlog::, glog, syslog,
	 * "srv::Logger::log" */
	FRAME_LOG = 1u << 7,
	/* writing to a file or socket: write, fwrite, fflush, sendmsg,
	 * vfs_write ... */
	FRAME_WRITE = 1u << 8,
	/* not the program's own code, by its name: libc's, libstdc++'s, the
	 * dynamic linker's, the kernel's and the vDSO's functions, and frames
	 * without a symbol (see frame_is_system()) */
	FRAME_SYSTEM = 1u << 9,
	/* where the kernel's part of a stack starts: entry_SYSCALL_64,
	 * asm_exc_page_fault, asm_sysvec_*, ...; it and every frame after it
	 * (toward the leaf) are the kernel's */
	FRAME_KENTRY = 1u << 10,
};

struct frame_classifier;

/* Free with frame_classifier_free(). */
struct frame_classifier *frame_classifier_new(void);
void frame_classifier_free(struct frame_classifier *fc);

/* The FRAME_* classes of the frame name s[0..len) (any bytes). */
unsigned frame_classify(const struct frame_classifier *fc, const char *s,
			size_t len);

/*
 * The base name of s[0..len) as described above: *out and *outlen are set
 * to a slice of s (nothing is copied).  Exposed for the tests.
 */
void frame_name_base(const char *s, size_t len, const char **out,
		     size_t *outlen);

/*
 * True for a frame that is not the program's own code (FRAME_SYSTEM).  A
 * folded stack carries names only (fp-record's and the plugin's captures
 * have no file per frame), so this is read from the name's shape:
 *  - no symbol ("[libstdc++.so.6.0.30]", "[unknown]"), the vDSO, a frame
 *    annotated "_[k]";
 *  - a symbol version ("pthread_cond_wait@@GLIBC_2.3.2"): a shared
 *    library's export;
 *  - a reserved C identifier, "__" or "_" and a capital ("__GI___lll_lock_wait",
 *    "_IO_fwrite", "__schedule"), but not a mangled C++ name ("_Z...");
 *  - the C++ runtime's namespaces: "std::", "__gnu_cxx::", "__cxxabiv1::",
 *    and "operator new" / "operator delete";
 * and frame_classify() adds the names of classify.c's table of libc and
 * kernel functions (malloc, write, pthread_mutex_lock, schedule, ...).
 * The kernel's frames after a FRAME_KENTRY frame are the kernel's whatever
 * their names (profile.c), and so are a wait kind's (waitkind.h).  What is
 * left is the program's: its functions, templates of its own types
 * instantiated in it ("app::Queue<int>::pop") and its lambdas.
 */
bool frame_is_system(const char *s, size_t len);

/* True for a C++ constructor or destructor name (FRAME_CTOR). */
bool frame_is_ctor(const char *s, size_t len);

#endif
