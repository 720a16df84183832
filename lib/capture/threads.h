/*
 * threads.h - each thread of a capture's processes over the window, by
 * scheduler state (DIR/threads.tsv, report.md's thread tables): the perf
 * plugin's states TSV of the off-CPU recording (--dlarg states), with the
 * threads it cannot know, those that never switched, read from /proc as
 * the window opened.
 *
 *	GPtrArray *start = fk_threads_at_start("/proc", pids, npids);
 *	...the window, then the plugin's TSV and window (its stderr)...
 *	GPtrArray *tsv = fk_states_parse(text, len, "states.tsv", &err);
 *	uint64_t us;
 *	fk_states_window_us(log, &us);
 *	GPtrArray *rows = fk_threads_merge(tsv, start, pids, npids, us, &err);
 *	GString *out = g_string_new(NULL);
 *	fk_threads_format(out, rows);
 *
 * A thread asleep for the whole window (a server's master process, an idle
 * pool thread) has no event in the recording, so the plugin does not list
 * it; it is not 0 either: it was asleep, or blocked, for all of it.  Its
 * state and what it waits in (its system call, /proc/TID/wchan and, where
 * root reads it, the kernel stack /proc/TID/stack) are read when the
 * window opens, before anyone knows which threads will not switch, so
 * every thread of the processes is read then.  A thread in state R then
 * that never switched ran for the whole window (nothing else ends a run);
 * D is blocked; S and the rest (T, t, I, P) sleeping, as the plugin counts
 * them.
 *
 * The file has the plugin's seven columns, then waiting_in (what /proc
 * said for a thread that never switched, "-" for the others):
 *
 *	pid tid comm on_cpu_us runnable_us sleeping_us blocked_us waiting_in
 *
 * Times are microseconds; a row adds up to the window, or to the part of
 * it the thread lived.  Names are escaped as the plugin does
 * (core/textesc.h, FK_ESC_BACKSLASH).
 */
#ifndef FOLDKIT_CAPTURE_THREADS_H
#define FOLDKIT_CAPTURE_THREADS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the plugin's TSV header, and threads.tsv's */
#define FK_STATES_HEADER "pid\ttid\tcomm\ton_cpu_us\trunnable_us\tsleeping_us\tblocked_us"
#define FK_THREADS_HEADER FK_STATES_HEADER "\twaiting_in"

enum { FK_ST_ON_CPU, FK_ST_RUNNABLE, FK_ST_SLEEPING, FK_ST_BLOCKED, FK_ST_N };

/* A thread as /proc showed it when the window opened. */
struct fk_thread_start {
	int pid, tid;
	char state;		/* stat's: 'S', 'D', 'R'... */
	char *comm;		/* escaped (FK_ESC_BACKSLASH) */
	char *waiting;		/* fk_thread_wait_text()'s */
};

/* A row of the TSVs. */
struct fk_thread_row {
	int pid, tid;		/* pid -1: the plugin did not know it */
	char *comm;		/* escaped */
	uint64_t us[FK_ST_N];
	char *waiting;		/* NULL: it switched in the window */
};

/*
 * The threads of processes pids[0..n) under root ("/proc"), each with its
 * state and what it waits in, sorted by pid then tid; threads that vanish
 * while read, and zombies, are left out.  Free with g_ptr_array_unref().
 */
GPtrArray *fk_threads_at_start(const char *root, const int *pids, size_t n);

/*
 * What a thread in state waits in, one line without tabs, from the texts
 * of /proc/TID/wchan, /proc/TID/syscall and /proc/TID/stack (each NULL
 * when unreadable):
 *	"S syscall=epoll_wait wchan=do_epoll_wait stack=do_epoll_wait<-__x64_sys_epoll_wait"
 * the system call by name where this build knows it (x86-64), else
 * "syscall=232"; "syscall=none" when the thread waits outside one (a page
 * fault), "syscall=running" when it ran; the stack's first 6 frames, leaf
 * first, without offsets; parts unreadable or hidden (wchan "0") left
 * out, "unreadable" when every one is.  Free with g_free().
 */
char *fk_thread_wait_text(char state, const char *wchan, const char *syscall,
			  const char *stack);

/*
 * The plugin's states TSV (text[0..len), name for messages): its header,
 * then rows of seven cells (pid: -1, 0 or more; tid; comm without control
 * characters; four whole numbers).  NULL with *err naming name and the line otherwise.
 * Free with g_ptr_array_unref().
 */
GPtrArray *fk_states_parse(const char *text, size_t len, const char *name, GError **err);

/*
 * The window, in whole microseconds, from the plugin's standard error in
 * states mode ("foldkit: states of N threads over S s, US us ..."); false
 * if it does not say it.
 */
bool fk_states_window_us(const char *log, uint64_t *us);

/*
 * The rows of threads.tsv: the TSV's threads of the processes pids[0..n)
 * (tsv may be NULL: none switched), a thread of unknown pid taken as the
 * one start gives its tid, and each thread of start the TSV lacks, in
 * its state at the start for the whole window_us; sorted by pid, then
 * tid.  NULL with *err if a row adds up to more than the window (a wrong
 * number), or one of the processes' has tid -1 (perf could not place it,
 * and a thread of start it is could not be told), or a thread is listed
 * twice.  Free with g_ptr_array_unref().
 */
GPtrArray *fk_threads_merge(GPtrArray *tsv, GPtrArray *start, const int *pids, size_t n,
			    uint64_t window_us, GError **err);

/* threads.tsv: its header, then rows (from fk_threads_merge()). */
void fk_threads_format(GString *out, GPtrArray *rows);

#endif
