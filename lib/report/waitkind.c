#include "report/waitkind.h"

#include "core/error.h"
#include "core/linereader.h"
#include "report/classify.h"
#include "transform/stackops.h"

#include <string.h>

/*
 * The table: base names (frame_name_base()) of the functions a wait goes
 * through and what waiting there is.  User space first (glibc and the
 * system call wrappers), then the kernel.  Only frames that tell one kind
 * from another are here: futex_wait, schedule and the system call entry
 * are every kind's, and so have none.  docs/fold-report.1 lists these
 * groups: change both together.
 */
static const struct {
	const char *name;
	enum wait_kind kind;
} table[] = {
	/* glibc's mutexes and rwlocks */
	{ "pthread_mutex_lock", WAIT_LOCK },
	{ "pthread_mutex_lock_full", WAIT_LOCK },
	{ "pthread_mutex_timedlock", WAIT_LOCK },
	{ "pthread_mutex_clocklock", WAIT_LOCK },
	{ "pthread_mutex_clocklock_common", WAIT_LOCK },
	{ "pthread_mutex_cond_lock", WAIT_LOCK },
	{ "pthread_mutex_cond_lock_full", WAIT_LOCK },
	{ "pthread_rwlock_rdlock", WAIT_LOCK },
	{ "pthread_rwlock_wrlock", WAIT_LOCK },
	{ "pthread_rwlock_timedrdlock", WAIT_LOCK },
	{ "pthread_rwlock_timedwrlock", WAIT_LOCK },
	{ "pthread_rwlock_clockrdlock", WAIT_LOCK },
	{ "pthread_rwlock_clockwrlock", WAIT_LOCK },
	{ "pthread_rwlock_rdlock_full64", WAIT_LOCK },
	{ "pthread_rwlock_wrlock_full64", WAIT_LOCK },
	{ "pthread_spin_lock", WAIT_LOCK },
	{ "lll_lock_wait", WAIT_LOCK },
	{ "lll_lock_wait_private", WAIT_LOCK },
	{ "lll_lock_wait_shared", WAIT_LOCK },
	{ "futex_lock_pi64", WAIT_LOCK },
	/* conditions, semaphores, barriers, joins: waiting for another
	 * thread or process to say so (a signal or broadcast waits for the
	 * condition's waiters to move on) */
	{ "pthread_cond_signal", WAIT_COND },
	{ "pthread_cond_broadcast", WAIT_COND },
	{ "condvar_quiesce_and_switch_g1", WAIT_COND },
	{ "condvar_acquire_lock", WAIT_COND },
	{ "pthread_cond_wait", WAIT_COND },
	{ "pthread_cond_timedwait", WAIT_COND },
	{ "pthread_cond_clockwait", WAIT_COND },
	{ "pthread_cond_wait_common", WAIT_COND },
	{ "sem_wait", WAIT_COND },
	{ "sem_timedwait", WAIT_COND },
	{ "sem_clockwait", WAIT_COND },
	{ "new_sem_wait_slow", WAIT_COND },
	{ "new_sem_wait_slow64", WAIT_COND },
	{ "pthread_barrier_wait", WAIT_COND },
	{ "pthread_join", WAIT_COND },
	{ "pthread_clockjoin_ex", WAIT_COND },
	{ "pthread_timedjoin_ex", WAIT_COND },
	{ "pthread_timedjoin_np", WAIT_COND },
	{ "waitpid", WAIT_COND },
	{ "wait4", WAIT_COND },
	{ "waitid", WAIT_COND },
	{ "do_wait", WAIT_COND },
	{ "sigtimedwait", WAIT_COND },
	{ "sigsuspend", WAIT_COND },
	{ "pause", WAIT_COND },
	/* I/O and event waits: the calls, then the kernel's waits */
	{ "epoll_wait", WAIT_IO },
	{ "epoll_pwait", WAIT_IO },
	{ "epoll_pwait2", WAIT_IO },
	{ "poll", WAIT_IO },
	{ "ppoll", WAIT_IO },
	{ "select", WAIT_IO },
	{ "pselect", WAIT_IO },
	{ "pselect6", WAIT_IO },
	{ "accept", WAIT_IO },
	{ "accept4", WAIT_IO },
	{ "recv", WAIT_IO },
	{ "recvfrom", WAIT_IO },
	{ "recvmsg", WAIT_IO },
	{ "recvmmsg", WAIT_IO },
	{ "connect", WAIT_IO },
	{ "ep_poll", WAIT_IO },
	{ "do_epoll_wait", WAIT_IO },
	{ "do_sys_poll", WAIT_IO },
	{ "do_poll", WAIT_IO },
	{ "do_select", WAIT_IO },
	{ "core_sys_select", WAIT_IO },
	{ "poll_schedule_timeout", WAIT_IO },
	{ "inet_csk_accept", WAIT_IO },
	{ "inet_csk_wait_for_connect", WAIT_IO },
	{ "sk_wait_data", WAIT_IO },
	{ "sk_stream_wait_memory", WAIT_IO },
	{ "sk_stream_wait_connect", WAIT_IO },
	{ "tcp_recvmsg", WAIT_IO },
	{ "tcp_recvmsg_locked", WAIT_IO },
	{ "unix_stream_read_generic", WAIT_IO },
	{ "unix_stream_data_wait", WAIT_IO },
	{ "unix_dgram_recvmsg", WAIT_IO },
	{ "skb_wait_for_more_packets", WAIT_IO },
	{ "pipe_read", WAIT_IO },
	{ "pipe_write", WAIT_IO },
	{ "pipe_wait_readable", WAIT_IO },
	{ "pipe_wait_writable", WAIT_IO },
	{ "n_tty_read", WAIT_IO },
	{ "wait_woken", WAIT_IO },
	{ "io_cqring_wait", WAIT_IO },
	{ "eventfd_read", WAIT_IO },
	{ "signalfd_dequeue", WAIT_IO },
	{ "inotify_read", WAIT_IO },
	/* sleeps */
	{ "nanosleep", WAIT_SLEEP },
	{ "clock_nanosleep", WAIT_SLEEP },
	{ "usleep", WAIT_SLEEP },
	{ "sleep", WAIT_SLEEP },
	{ "do_nanosleep", WAIT_SLEEP },
	{ "hrtimer_nanosleep", WAIT_SLEEP },
	{ "common_nsleep", WAIT_SLEEP },
	{ "msleep", WAIT_SLEEP },
	{ "msleep_interruptible", WAIT_SLEEP },
	/* the disk: uninterruptible waits for I/O */
	{ "io_schedule", WAIT_DISK },
	{ "io_schedule_timeout", WAIT_DISK },
	{ "folio_wait_bit_common", WAIT_DISK },
	{ "folio_wait_bit", WAIT_DISK },
	{ "folio_wait_writeback", WAIT_DISK },
	{ "wait_on_page_bit_common", WAIT_DISK },
	{ "bit_wait_io", WAIT_DISK },
	{ "submit_bio_wait", WAIT_DISK },
	{ "blk_mq_get_tag", WAIT_DISK },
	{ "jbd2_log_wait_commit", WAIT_DISK },
	{ "wait_on_buffer", WAIT_DISK },
	{ "fsync", WAIT_DISK },
	{ "fdatasync", WAIT_DISK },
	{ "sync_file_range", WAIT_DISK },
	/* page faults (a fault that waits for the disk is a disk wait: its
	 * io_schedule is further in) */
	{ "asm_exc_page_fault", WAIT_FAULT },
	{ "exc_page_fault", WAIT_FAULT },
	{ "do_user_addr_fault", WAIT_FAULT },
	{ "handle_mm_fault", WAIT_FAULT },
	{ "do_page_fault", WAIT_FAULT },
	/* the kernel's sleeping locks */
	{ "mutex_lock", WAIT_LOCK },
	{ "mutex_lock_interruptible", WAIT_LOCK },
	{ "mutex_lock_killable", WAIT_LOCK },
	{ "mutex_lock_slowpath", WAIT_LOCK },
	{ "mutex_lock_interruptible_slowpath", WAIT_LOCK },
	{ "mutex_lock_killable_slowpath", WAIT_LOCK },
	{ "rt_mutex_slowlock", WAIT_LOCK },
	{ "rt_mutex_slowlock_block", WAIT_LOCK },
	{ "rwsem_down_read_slowpath", WAIT_LOCK },
	{ "rwsem_down_write_slowpath", WAIT_LOCK },
	{ "down_read", WAIT_LOCK },
	{ "down_write", WAIT_LOCK },
	{ "down_read_killable", WAIT_LOCK },
	{ "down_write_killable", WAIT_LOCK },
	{ "percpu_rwsem_wait", WAIT_LOCK },
	{ "futex_lock_pi", WAIT_LOCK },
	{ "native_queued_spin_lock_slowpath", WAIT_LOCK },
	{ "queued_spin_lock_slowpath", WAIT_LOCK },
	{ "pv_queued_spin_lock_slowpath", WAIT_LOCK },
	/* runnable: preempted, or yielding the CPU; the runqueue profile's
	 * frame (fp-record) */
	{ "preempt_schedule", WAIT_CPU },
	{ "preempt_schedule_common", WAIT_CPU },
	{ "preempt_schedule_irq", WAIT_CPU },
	{ "preempt_schedule_notrace", WAIT_CPU },
	{ "preempt_schedule_thunk", WAIT_CPU },
	{ "irqentry_exit", WAIT_CPU },
	{ "irqentry_exit_to_user_mode", WAIT_CPU },
	{ "exit_to_user_mode_loop", WAIT_CPU },
	{ "exit_to_user_mode_prepare", WAIT_CPU },
	{ "cond_resched", WAIT_CPU },
	{ "sched_yield", WAIT_CPU },
	{ "do_sched_yield", WAIT_CPU },
	{ "x64_sys_sched_yield", WAIT_CPU },
	{ "[runnable]", WAIT_CPU },
	{ "[runqueue]", WAIT_CPU },
};

/* C++ and other libraries' names, by their shape */
static const struct {
	const char *regex;
	enum wait_kind kind;
} shapes[] = {
	{ "^std::(__1::)?(recursive_|timed_|recursive_timed_|shared_|shared_timed_)?mutex::"
	  "(lock|lock_shared|try_lock_for|try_lock_until)$", WAIT_LOCK },
	{ "(Mutex|SpinLock|Spinlock|RWLock|RwLock|SharedMutex)[^:]*::"
	  "(Lock|LockSlow\\w*|ReaderLock|WriterLock|lock|lock_shared|lockSlow\\w*)$", WAIT_LOCK },
	{ "^std::(__1::)?(_V2::)?condition_variable(_any)?::(wait|wait_for|wait_until|__wait_until_impl)",
	  WAIT_COND },
	{ "^std::(__1::)?(counting_semaphore|binary_semaphore|latch|barrier)<?.*::(acquire|wait|arrive_and_wait)",
	  WAIT_COND },
	{ "^std::(__1::)?thread::join$|^std::(__1::)?(future|shared_future)<.*>::(get|wait)"
	  "|^std::__(basic_)?future_base::|_M_futex_wait", WAIT_COND },
	{ "^std::(__1::)?this_thread::(sleep_for|sleep_until)", WAIT_SLEEP },
};

static const char *const names[WAIT_NKINDS] = {
	"none", "lock", "condition", "io", "sleep", "disk", "fault", "cpu", "other",
};

static const char *const texts[WAIT_NKINDS] = {
	"not a wait",
	"waiting for a lock",
	"waiting on a condition (or a queue, a join)",
	"waiting for I/O or an event",
	"sleeping",
	"waiting for the disk",
	"in a page fault",
	"waiting for a CPU (runnable)",
	"waiting for something unrecognised",
};

static const char *const labels[WAIT_NKINDS] = {
	"wait", "lock wait", "condition wait", "I/O wait", "sleep", "disk wait",
	"page fault", "runnable", "wait",
};

struct rule {
	struct frame_matcher *m;
	enum wait_kind kind;
};

struct wait_kinds {
	GHashTable *names;	/* base name -> kind + 1 */
	GArray *rules;		/* struct rule: the file's lines, then the shapes */
	guint nuser;		/* rules from files, first */
};

const char *wait_kind_name(enum wait_kind k)
{
	return (unsigned)k < WAIT_NKINDS ? names[k] : "other";
}

const char *wait_kind_text(enum wait_kind k)
{
	return (unsigned)k < WAIT_NKINDS ? texts[k] : texts[WAIT_OTHER];
}

const char *wait_kind_label(enum wait_kind k)
{
	return (unsigned)k < WAIT_NKINDS ? labels[k] : labels[WAIT_OTHER];
}

int wait_kind_parse(const char *s, size_t len)
{
	for (int k = 0; k < WAIT_NKINDS; k++)
		if (strlen(names[k]) == len && memcmp(names[k], s, len) == 0)
			return k;
	return -1;
}

struct wait_kinds *wait_kinds_new(bool builtin)
{
	struct wait_kinds *wk = g_new0(struct wait_kinds, 1);

	wk->names = g_hash_table_new(g_str_hash, g_str_equal);
	wk->rules = g_array_new(FALSE, FALSE, sizeof(struct rule));
	for (size_t i = 0; builtin && i < G_N_ELEMENTS(table); i++)
		g_hash_table_insert(wk->names, (gpointer)table[i].name,
				    GUINT_TO_POINTER(table[i].kind + 1));
	for (size_t i = 0; builtin && i < G_N_ELEMENTS(shapes); i++) {
		struct rule r = { frame_matcher_new(shapes[i].regex, 0, NULL), shapes[i].kind };

		g_assert(r.m);	/* constant patterns */
		g_array_append_val(wk->rules, r);
	}
	return wk;
}

void wait_kinds_free(struct wait_kinds *wk)
{
	if (!wk)
		return;
	for (guint i = 0; i < wk->rules->len; i++)
		frame_matcher_free(g_array_index(wk->rules, struct rule, i).m);
	g_array_free(wk->rules, TRUE);
	g_hash_table_destroy(wk->names);
	g_free(wk);
}

int wait_kinds_read(struct wait_kinds *wk, const char *path, GError **err)
{
	struct line_reader *r = line_reader_open(path, err);
	struct line line;
	int rc;

	if (!r)
		return -1;
	while ((rc = line_reader_next(r, &line, err)) > 0) {
		const char *tab;
		struct rule rule;
		GError *e = NULL;
		char *re;
		int k;
		size_t i = 0;

		while (i < line.len && (line.s[i] == ' ' || line.s[i] == '\t'))
			i++;
		if (i == line.len || line.s[i] == '#')
			continue;
		if (!(tab = memchr(line.s, '\t', line.len))) {
			fk_error_at(err, FK_ERROR_PARSE, line_reader_name(r), line.no,
				    "expected KIND<TAB>REGEX");
			rc = -1;
			break;
		}
		if ((k = wait_kind_parse(line.s, (size_t)(tab - line.s))) < 0 || k == WAIT_OTHER) {
			fk_error_at(err, FK_ERROR_PARSE, line_reader_name(r), line.no,
				    "unknown wait kind '%.*s' (lock, condition, io, sleep, disk, "
				    "fault, cpu or none)", (int)MIN((size_t)(tab - line.s), 200),
				    line.s);
			rc = -1;
			break;
		}
		if (line.s + line.len == tab + 1 ||
		    memchr(tab + 1, '\0', line.len - (size_t)(tab + 1 - line.s))) {
			fk_error_at(err, FK_ERROR_PARSE, line_reader_name(r), line.no,
				    "an empty regex, or a NUL byte in it");
			rc = -1;
			break;
		}
		if (wk->nuser >= WAIT_KINDS_MAX) {
			fk_error_at(err, FK_ERROR_PARSE, line_reader_name(r), line.no,
				    "more than %d wait kind lines", WAIT_KINDS_MAX);
			rc = -1;
			break;
		}
		re = g_strndup(tab + 1, line.len - (size_t)(tab + 1 - line.s));
		rule.m = frame_matcher_new(re, 0, &e);
		g_free(re);
		if (!rule.m) {
			fk_error_at(err, FK_ERROR_PARSE, line_reader_name(r), line.no, "%s",
				    e->message);
			g_error_free(e);
			rc = -1;
			break;
		}
		rule.kind = (enum wait_kind)k;
		/* after the earlier lines, before the built-in shapes */
		g_array_insert_val(wk->rules, wk->nuser, rule);
		wk->nuser++;
	}
	line_reader_free(r);
	return rc < 0 ? -1 : 0;
}

enum wait_kind wait_kinds_frame(const struct wait_kinds *wk, const char *s, size_t len)
{
	const char *base;
	size_t blen;
	char key[64];
	gpointer v;

	for (guint i = 0; i < wk->nuser; i++) {
		const struct rule *r = &g_array_index(wk->rules, struct rule, i);

		if (frame_matcher_test(r->m, s, len))
			return r->kind;
	}
	frame_name_base(s, len, &base, &blen);
	if (blen > 0 && blen < sizeof(key) && !memchr(base, '\0', blen)) {
		memcpy(key, base, blen);
		key[blen] = '\0';
		if ((v = g_hash_table_lookup(wk->names, key)))
			return (enum wait_kind)(GPOINTER_TO_UINT(v) - 1);
	}
	for (guint i = wk->nuser; i < wk->rules->len; i++) {
		const struct rule *r = &g_array_index(wk->rules, struct rule, i);

		if (frame_matcher_test(r->m, s, len))
			return r->kind;
	}
	return WAIT_NONE;
}
