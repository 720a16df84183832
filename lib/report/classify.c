#include "report/classify.h"

#include "report/categories.h"
#include "transform/stackops.h"

#include <glib.h>
#include <string.h>

/*
 * Base names (see frame_name_base()) and their classes: C and kernel
 * functions, whose names are stable across builds.  One table, so that a
 * name is in exactly one place; a name may carry several classes.
 */
static const struct known {
	const char *name;
	unsigned classes;
} known[] = {
	/* where threads start: user space, the kernel, Go */
	{ "start", FRAME_ENTRY },
	{ "libc_start_main", FRAME_ENTRY },
	{ "libc_start_call_main", FRAME_ENTRY },
	{ "dl_start_user", FRAME_ENTRY },
	{ "start_thread", FRAME_ENTRY },
	{ "thread_start", FRAME_ENTRY },
	{ "clone", FRAME_ENTRY },
	{ "clone3", FRAME_ENTRY },
	{ "ret_from_fork", FRAME_ENTRY },
	{ "ret_from_fork_asm", FRAME_ENTRY },
	{ "kthread", FRAME_ENTRY },
	{ "secondary_startup_64", FRAME_ENTRY },
	{ "secondary_startup_64_no_verify", FRAME_ENTRY },
	{ "common_startup_64", FRAME_ENTRY },
	{ "start_kernel", FRAME_ENTRY },
	{ "x86_64_start_kernel", FRAME_ENTRY },
	{ "x86_64_start_reservations", FRAME_ENTRY },
	{ "secondary_start_kernel", FRAME_ENTRY },
	{ "secondary_switched", FRAME_ENTRY },
	{ "runtime.goexit", FRAME_ENTRY },
	{ "runtime.goexit.abi0", FRAME_ENTRY },
	{ "runtime.mstart", FRAME_ENTRY },
	{ "runtime.mstart.abi0", FRAME_ENTRY },
	{ "runtime.rt0_go", FRAME_ENTRY },
	{ "runtime.rt0_go.abi0", FRAME_ENTRY },
	/* waiting for a lock: pthreads, glibc's low-level locks, futexes,
	 * semaphores, the kernel's sleeping and spinning locks */
	{ "pthread_mutex_lock", FRAME_LOCK_WAIT },
	{ "pthread_mutex_lock_full", FRAME_LOCK_WAIT },
	{ "pthread_mutex_timedlock", FRAME_LOCK_WAIT },
	{ "pthread_mutex_clocklock", FRAME_LOCK_WAIT },
	{ "pthread_mutex_cond_lock", FRAME_LOCK_WAIT },
	{ "pthread_rwlock_rdlock", FRAME_LOCK_WAIT },
	{ "pthread_rwlock_wrlock", FRAME_LOCK_WAIT },
	{ "pthread_rwlock_timedrdlock", FRAME_LOCK_WAIT },
	{ "pthread_rwlock_timedwrlock", FRAME_LOCK_WAIT },
	{ "pthread_rwlock_clockrdlock", FRAME_LOCK_WAIT },
	{ "pthread_rwlock_clockwrlock", FRAME_LOCK_WAIT },
	{ "pthread_cond_wait", FRAME_LOCK_WAIT },
	{ "pthread_cond_timedwait", FRAME_LOCK_WAIT },
	{ "pthread_cond_clockwait", FRAME_LOCK_WAIT },
	{ "pthread_spin_lock", FRAME_LOCK_WAIT },
	{ "pthread_barrier_wait", FRAME_LOCK_WAIT },
	{ "lll_lock_wait", FRAME_LOCK_WAIT },
	{ "lll_lock_wait_private", FRAME_LOCK_WAIT },
	{ "lll_lock_wait_shared", FRAME_LOCK_WAIT },
	{ "futex_abstimed_wait", FRAME_LOCK_WAIT },
	{ "futex_abstimed_wait_common", FRAME_LOCK_WAIT },
	{ "futex_abstimed_wait_common64", FRAME_LOCK_WAIT },
	{ "futex_lock_pi64", FRAME_LOCK_WAIT },
	{ "futex_wait", FRAME_LOCK_WAIT },
	{ "futex_wait_queue", FRAME_LOCK_WAIT },
	{ "futex_wait_queue_me", FRAME_LOCK_WAIT },
	{ "futex_do_wait", FRAME_LOCK_WAIT },
	{ "futex_lock_pi", FRAME_LOCK_WAIT },
	{ "sem_wait", FRAME_LOCK_WAIT },
	{ "sem_timedwait", FRAME_LOCK_WAIT },
	{ "sem_clockwait", FRAME_LOCK_WAIT },
	{ "new_sem_wait_slow", FRAME_LOCK_WAIT },
	{ "mutex_lock", FRAME_LOCK_WAIT },
	{ "mutex_lock_interruptible", FRAME_LOCK_WAIT },
	{ "mutex_lock_killable", FRAME_LOCK_WAIT },
	{ "mutex_lock_slowpath", FRAME_LOCK_WAIT },
	{ "rt_mutex_slowlock", FRAME_LOCK_WAIT },
	{ "rwsem_down_read_slowpath", FRAME_LOCK_WAIT },
	{ "rwsem_down_write_slowpath", FRAME_LOCK_WAIT },
	{ "down_read", FRAME_LOCK_WAIT },
	{ "down_write", FRAME_LOCK_WAIT },
	{ "raw_spin_lock", FRAME_LOCK_WAIT },
	{ "raw_spin_lock_irq", FRAME_LOCK_WAIT },
	{ "raw_spin_lock_irqsave", FRAME_LOCK_WAIT },
	{ "raw_spin_lock_bh", FRAME_LOCK_WAIT },
	{ "raw_read_lock", FRAME_LOCK_WAIT },
	{ "raw_write_lock", FRAME_LOCK_WAIT },
	{ "native_queued_spin_lock_slowpath", FRAME_LOCK_WAIT },
	{ "queued_spin_lock_slowpath", FRAME_LOCK_WAIT },
	{ "pv_queued_spin_lock_slowpath", FRAME_LOCK_WAIT },
	{ "osq_lock", FRAME_LOCK_WAIT },
	/* switched out, or the CPU idle */
	{ "schedule", FRAME_SCHED },
	{ "schedule_idle", FRAME_SCHED },
	{ "schedule_timeout", FRAME_SCHED },
	{ "schedule_hrtimeout_range", FRAME_SCHED },
	{ "schedule_hrtimeout_range_clock", FRAME_SCHED },
	{ "io_schedule", FRAME_SCHED },
	{ "preempt_schedule", FRAME_SCHED },
	{ "preempt_schedule_common", FRAME_SCHED },
	{ "preempt_schedule_irq", FRAME_SCHED },
	{ "finish_task_switch", FRAME_SCHED },
	{ "context_switch", FRAME_SCHED },
	{ "do_idle", FRAME_SCHED },
	{ "cpu_startup_entry", FRAME_SCHED },
	{ "default_idle", FRAME_SCHED },
	{ "default_idle_call", FRAME_SCHED },
	{ "arch_cpu_idle", FRAME_SCHED },
	{ "native_safe_halt", FRAME_SCHED },
	{ "pv_native_safe_halt", FRAME_SCHED },
	{ "acpi_safe_halt", FRAME_SCHED },
	{ "acpi_idle_do_entry", FRAME_SCHED },
	{ "cpuidle_enter", FRAME_SCHED },
	{ "cpuidle_enter_state", FRAME_SCHED },
	{ "mwait_idle", FRAME_SCHED },
	{ "mwait_idle_with_hints", FRAME_SCHED },
	{ "intel_idle", FRAME_SCHED },
	{ "poll_idle", FRAME_SCHED },
	/* the vDSO's clock functions */
	{ "vdso_clock_gettime", FRAME_VDSO },
	{ "vdso_gettimeofday", FRAME_VDSO },
	{ "vdso_time", FRAME_VDSO },
	{ "vdso_clock_getres", FRAME_VDSO },
	{ "vdso_getcpu", FRAME_VDSO },
	{ "kernel_clock_gettime", FRAME_VDSO },
	{ "kernel_gettimeofday", FRAME_VDSO },
	{ "do_hres", FRAME_VDSO },
	{ "do_coarse", FRAME_VDSO },
	{ "vread_tsc", FRAME_VDSO },
	/* allocation: glibc, jemalloc, tcmalloc, mimalloc, C++, the kernel */
	{ "malloc", FRAME_ALLOC },
	{ "calloc", FRAME_ALLOC },
	{ "realloc", FRAME_ALLOC },
	{ "reallocarray", FRAME_ALLOC },
	{ "free", FRAME_ALLOC },
	{ "cfree", FRAME_ALLOC },
	{ "posix_memalign", FRAME_ALLOC },
	{ "aligned_alloc", FRAME_ALLOC },
	{ "memalign", FRAME_ALLOC },
	{ "valloc", FRAME_ALLOC },
	{ "int_malloc", FRAME_ALLOC },
	{ "int_free", FRAME_ALLOC },
	{ "int_free_merge_chunk", FRAME_ALLOC },
	{ "int_realloc", FRAME_ALLOC },
	{ "int_memalign", FRAME_ALLOC },
	{ "libc_malloc", FRAME_ALLOC },
	{ "libc_free", FRAME_ALLOC },
	{ "libc_calloc", FRAME_ALLOC },
	{ "libc_realloc", FRAME_ALLOC },
	{ "libc_memalign", FRAME_ALLOC },
	{ "malloc_consolidate", FRAME_ALLOC },
	{ "sysmalloc", FRAME_ALLOC },
	{ "tcache_init", FRAME_ALLOC },
	{ "je_malloc", FRAME_ALLOC },
	{ "je_free", FRAME_ALLOC },
	{ "tc_malloc", FRAME_ALLOC },
	{ "tc_free", FRAME_ALLOC },
	{ "tc_new", FRAME_ALLOC },
	{ "tc_delete", FRAME_ALLOC },
	{ "mi_malloc", FRAME_ALLOC },
	{ "mi_free", FRAME_ALLOC },
	{ "operator new", FRAME_ALLOC },
	{ "operator new[]", FRAME_ALLOC },
	{ "operator delete", FRAME_ALLOC },
	{ "operator delete[]", FRAME_ALLOC },
	{ "kmalloc", FRAME_ALLOC },
	{ "kmalloc_noprof", FRAME_ALLOC },
	{ "kmalloc_trace", FRAME_ALLOC },
	{ "kmem_cache_alloc", FRAME_ALLOC },
	{ "kmem_cache_alloc_noprof", FRAME_ALLOC },
	{ "kmem_cache_free", FRAME_ALLOC },
	{ "kfree", FRAME_ALLOC },
	{ "vmalloc", FRAME_ALLOC },
	{ "vfree", FRAME_ALLOC },
	{ "alloc_pages", FRAME_ALLOC },
	{ "alloc_pages_noprof", FRAME_ALLOC },
	/* writing: libc, stdio, the system calls and the kernel's paths */
	{ "write", FRAME_WRITE },
	{ "libc_write", FRAME_WRITE },
	{ "writev", FRAME_WRITE },
	{ "pwrite", FRAME_WRITE },
	{ "pwrite64", FRAME_WRITE },
	{ "libc_pwrite", FRAME_WRITE },
	{ "fwrite", FRAME_WRITE },
	{ "IO_fwrite", FRAME_WRITE },
	{ "fflush", FRAME_WRITE },
	{ "IO_fflush", FRAME_WRITE },
	{ "IO_file_write", FRAME_WRITE },
	{ "IO_new_file_write", FRAME_WRITE },
	{ "IO_do_write", FRAME_WRITE },
	{ "IO_new_do_write", FRAME_WRITE },
	{ "new_do_write", FRAME_WRITE },
	{ "send", FRAME_WRITE },
	{ "sendto", FRAME_WRITE },
	{ "sendmsg", FRAME_WRITE },
	{ "libc_send", FRAME_WRITE },
	{ "libc_sendto", FRAME_WRITE },
	{ "libc_sendmsg", FRAME_WRITE },
	{ "fsync", FRAME_WRITE },
	{ "fdatasync", FRAME_WRITE },
	{ "ksys_write", FRAME_WRITE },
	{ "vfs_write", FRAME_WRITE },
	{ "vfs_writev", FRAME_WRITE },
	{ "do_writev", FRAME_WRITE },
	{ "x64_sys_write", FRAME_WRITE },
	{ "x64_sys_writev", FRAME_WRITE },
	{ "x64_sys_pwrite64", FRAME_WRITE },
	{ "x64_sys_sendto", FRAME_WRITE },
	{ "x64_sys_sendmsg", FRAME_WRITE },
	{ "arm64_sys_write", FRAME_WRITE },
	/* libc's other functions a program calls, unversioned where the
	 * collapser did not say the library (not the program's) */
	{ "syscall", FRAME_SYSTEM },
	{ "memcpy", FRAME_SYSTEM },
	{ "memmove", FRAME_SYSTEM },
	{ "memset", FRAME_SYSTEM },
	{ "memcmp", FRAME_SYSTEM },
	{ "strlen", FRAME_SYSTEM },
	{ "strcmp", FRAME_SYSTEM },
	{ "printf", FRAME_SYSTEM },
	{ "fprintf", FRAME_SYSTEM },
	{ "snprintf", FRAME_SYSTEM },
	{ "sprintf", FRAME_SYSTEM },
	{ "vfprintf", FRAME_SYSTEM },
	{ "vsnprintf", FRAME_SYSTEM },
	{ "read", FRAME_SYSTEM },
	{ "ioctl", FRAME_SYSTEM },
	{ "clock_gettime", FRAME_SYSTEM },
	{ "gettimeofday", FRAME_SYSTEM },
};

/*
 * Classes known by the shape of a name.  C++ lock and wait methods:
 * std::mutex::lock, std::condition_variable::wait, absl::Mutex::Lock,
 * folly's and boost's; logging libraries and any Logger's or logger's
 * methods (CATEGORY_LOGGING_RE, the default "logging" category); the C++
 * allocator.
 */
#define CXX_LOCK_RE \
	"^std::.*(mutex|condition_variable(_any)?|semaphore)[^:]*::" \
	"(lock|lock_shared|wait|wait_for|wait_until|acquire|try_lock_for|try_lock_until)$" \
	"|_M_futex_wait" \
	"|(Mutex|SpinLock|Spinlock|RWLock|RwLock|SharedMutex)[^:]*::" \
	"(Lock|LockSlow\\w*|ReaderLock|WriterLock|lock|lock_shared|lockSlow\\w*|Await\\w*)$"
#define ALLOC_RE "::(de)?allocate$|^__gnu_cxx::new_allocator<|^std::__new_allocator<"

struct frame_classifier {
	GHashTable *known;	/* base name -> classes */
	struct frame_matcher *cxx_lock, *log, *alloc;
};

struct frame_classifier *frame_classifier_new(void)
{
	struct frame_classifier *fc = g_new0(struct frame_classifier, 1);

	fc->known = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < G_N_ELEMENTS(known); i++) {
		unsigned c = GPOINTER_TO_UINT(g_hash_table_lookup(fc->known, known[i].name));

		g_hash_table_insert(fc->known, (gpointer)known[i].name,
				    GUINT_TO_POINTER(c | known[i].classes));
	}
	/* constant patterns: compiling them cannot fail */
	fc->cxx_lock = frame_matcher_new(CXX_LOCK_RE, 0, NULL);
	fc->log = frame_matcher_new(CATEGORY_LOGGING_RE, 0, NULL);
	fc->alloc = frame_matcher_new(ALLOC_RE, 0, NULL);
	g_assert(fc->cxx_lock && fc->log && fc->alloc);
	return fc;
}

void frame_classifier_free(struct frame_classifier *fc)
{
	if (!fc)
		return;
	g_hash_table_destroy(fc->known);
	frame_matcher_free(fc->cxx_lock);
	frame_matcher_free(fc->log);
	frame_matcher_free(fc->alloc);
	g_free(fc);
}

static bool has_prefix(const char *s, size_t len, const char *p)
{
	size_t n = strlen(p);

	return len >= n && memcmp(s, p, n) == 0;
}

/* The length of s without an annotation "_[k]", "_[j]", "_[i]", "_[w]". */
static size_t strip_annotation(const char *s, size_t len)
{
	if (len >= 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']' &&
	    strchr("kjiw", s[len - 2]) && s[len - 2])
		return len - 4;
	return len;
}

void frame_name_base(const char *s, size_t len, const char **out, size_t *outlen)
{
	static const char *const clones[] = {
		".isra.", ".constprop.", ".part.", ".cold", ".localalias",
		".lto_priv.", ".llvm.",
	};
	const char *at;

	len = strip_annotation(s, len);
	if ((at = memchr(s, '@', len)))
		len = (size_t)(at - s);
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '.')
			continue;
		for (size_t k = 0; k < G_N_ELEMENTS(clones); k++)
			if (has_prefix(s + i, len - i, clones[k])) {
				len = i;
				break;
			}
	}
	if (has_prefix(s, len, "__GI_")) {
		s += 5;
		len -= 5;
	}
	while (len > 0 && *s == '_') {
		s++;
		len--;
	}
	*out = s;
	*outlen = len;
}

/*
 * The start of the last component of s[0..len) at the top nesting level:
 * "a::B<c::d>::f" gives "f".  *sep gets the start of the "::" before it,
 * or s when there is none.
 */
static const char *last_component(const char *s, size_t len, const char **sep)
{
	int depth = 0;

	for (size_t i = len; i > 0; i--) {
		char c = s[i - 1];

		if (c == '>' || c == ')')
			depth++;
		else if ((c == '<' || c == '(') && depth > 0)
			depth--;
		else if (c == ':' && depth == 0 && i >= 2 && s[i - 2] == ':') {
			*sep = s + i - 2;
			return s + i;
		}
	}
	*sep = s;
	return s;
}

bool frame_is_ctor(const char *s, size_t len)
{
	const char *sep, *sep2, *last = last_component(s, len, &sep), *prev;
	size_t lastlen = len - (size_t)(last - s), prevlen;

	if (sep == s || lastlen == 0)
		return false;
	if (*last == '~') {
		last++;
		lastlen--;
	}
	prev = last_component(s, (size_t)(sep - s), &sep2);
	prevlen = (size_t)(sep - prev);
	/* a class template's name ends at its arguments */
	for (size_t i = 0; i < prevlen; i++)
		if (prev[i] == '<') {
			prevlen = i;
			break;
		}
	if (lastlen == 0 || prevlen != lastlen || memcmp(prev, last, lastlen) != 0)
		return false;
	for (size_t i = 0; i < lastlen; i++)
		if (!g_ascii_isalnum(last[i]) && last[i] != '_')
			return false;
	return true;
}

static bool is_unresolved(const char *s, size_t len)
{
	len = strip_annotation(s, len);
	if (len < 2 || s[0] != '[' || s[len - 1] != ']')
		return false;
	return !(len == 8 && memcmp(s, "[kernel]", 8) == 0);
}

static bool is_vdso_placeholder(const char *s, size_t len)
{
	len = strip_annotation(s, len);
	return (len == 6 && memcmp(s, "[vdso]", 6) == 0) ||
	       (len == 8 && memcmp(s, "[[vdso]]", 8) == 0) ||
	       (len > 8 && memcmp(s, "[[vdso] ", 8) == 0);
}

static bool is_kentry(const char *s, size_t len)
{
	static const char *const prefixes[] = {
		"entry_SYSCALL", "entry_SYSENTER", "entry_INT80", "asm_exc_", "asm_sysvec_",
		"asm_common_interrupt", "ret_from_fork", "do_syscall_64", "el0_", "el1_",
	};

	len = strip_annotation(s, len);
	for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++)
		if (has_prefix(s, len, prefixes[i]))
			return true;
	return false;
}

static bool system_shape(const char *s, size_t len)
{
	static const char *const prefixes[] = {
		"std::", "__gnu_cxx::", "__cxxabiv1::", "__cxa_", "operator new",
		"operator delete", "__sanitizer::", "__asan::", "__ubsan::",
	};
	size_t n = strip_annotation(s, len);

	if (n < len && s[len - 2] == 'k')
		return true;	/* "_[k]" */
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']')
		return true;	/* no symbol, or the vDSO */
	if (memchr(s, '@', n))
		return true;	/* a versioned export */
	if (n >= 2 && s[0] == '_' && (s[1] == '_' || (g_ascii_isupper(s[1]) && s[1] != 'Z')))
		return true;
	for (size_t i = 0; i < G_N_ELEMENTS(prefixes); i++)
		if (has_prefix(s, n, prefixes[i]))
			return true;
	return false;
}

bool frame_is_system(const char *s, size_t len)
{
	return system_shape(s, len);
}

unsigned frame_classify(const struct frame_classifier *fc, const char *s,
			size_t len)
{
	unsigned c = 0;
	const char *base;
	size_t blen;
	char key[64];

	if (is_unresolved(s, len))
		c |= FRAME_UNRESOLVED;
	if (is_vdso_placeholder(s, len))
		c |= FRAME_VDSO;
	frame_name_base(s, len, &base, &blen);
	if (blen > 0 && blen < sizeof(key) && !memchr(base, '\0', blen)) {
		memcpy(key, base, blen);
		key[blen] = '\0';
		c |= GPOINTER_TO_UINT(g_hash_table_lookup(fc->known, key));
	}
	if (frame_is_ctor(s, len))
		c |= FRAME_CTOR;
	if (frame_matcher_test(fc->cxx_lock, s, len))
		c |= FRAME_LOCK_WAIT;
	if (frame_matcher_test(fc->log, s, len))
		c |= FRAME_LOG;
	if (frame_matcher_test(fc->alloc, s, len))
		c |= FRAME_ALLOC;
	if (is_kentry(s, len))
		c |= FRAME_KENTRY;
	/* a name of the table is libc's or the kernel's, "main" aside */
	if (system_shape(s, len) || (c & (FRAME_ENTRY | FRAME_LOCK_WAIT | FRAME_SCHED |
					   FRAME_VDSO | FRAME_UNRESOLVED | FRAME_KENTRY)) ||
	    ((c & (FRAME_ALLOC | FRAME_WRITE)) && !memchr(s, ':', len)))
		c |= FRAME_SYSTEM;
	return c;
}
