/*
 * waitkind.h - what an off-CPU stack waits for, read from its frames: a
 * lock, a condition (or a queue, a join), an I/O event, a sleep, the disk,
 * a page fault, or a CPU (preempted, runnable).  fold-report charges each
 * off-CPU stack to one kind, so that a contended-lock finding comes from
 * lock waits only and an idle pool is reported as idle.
 *
 *	struct wait_kinds *wk = wait_kinds_new(true);     // the built-in table
 *	if (wait_kinds_read(wk, "my.waits", &err) < 0)
 *		...        // "my.waits:2: unknown wait kind 'lok'"
 *	enum wait_kind k = wait_kinds_frame(wk, "__GI___lll_lock_wait", 20);
 *	// k == WAIT_LOCK; "futex_wait" gives WAIT_NONE: it says nothing
 *	wait_kinds_free(wk);
 *
 * A frame's kind comes from one table (waitkind.c, listed in
 * docs/fold-report.1): base names (classify.h's frame_name_base(): "__GI_",
 * leading underscores, versions and clone suffixes off) of libc's,
 * libstdc++'s and the kernel's functions, and a few regexes for C++ names
 * (std::mutex::lock, std::condition_variable::wait_for, ...).  Generic
 * frames (futex_wait, schedule, the system call entry) have no kind
 * (WAIT_NONE): every kind of wait goes through them.
 *
 * A stack's kind is the kind of its innermost (leafmost) frame that has
 * one, so the most specific frame decides: pthread_cond_wait ->
 * __pthread_mutex_cond_lock -> __lll_lock_wait re-takes the mutex after a
 * signal (a lock), pthread_cond_wait -> futex_wait waits for the signal (a
 * condition), write -> ... -> io_schedule waits for the disk.  A stack
 * with no such frame is WAIT_OTHER.
 *
 * A kinds file (--wait-kinds) extends the table as --categories does:
 * "KIND<TAB>REGEX" a line (KIND one of wait_kind_name()'s words, or
 * "none" for a frame that says nothing), blank lines and '#' lines
 * ignored; the regexes (PCRE, over the whole frame name as written) are
 * tried in the file's order before the built-in table, so a line can
 * also take a built-in name out ("none\t^pthread_cond_broadcast").  Errors
 * name the file and line; at most WAIT_KINDS_MAX lines.
 */
#ifndef FOLDKIT_REPORT_WAITKIND_H
#define FOLDKIT_REPORT_WAITKIND_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum wait_kind {
	WAIT_NONE,	/* a frame: says nothing of the wait */
	WAIT_LOCK,	/* mutexes, rwlocks, the kernel's locks */
	WAIT_COND,	/* condition variables, semaphores, joins, waitpid */
	WAIT_IO,	/* epoll, poll, select, accept, sockets, pipes, terminals */
	WAIT_SLEEP,	/* nanosleep, clock_nanosleep, usleep */
	WAIT_DISK,	/* io_schedule and the block layer's waits (D state) */
	WAIT_FAULT,	/* a page fault */
	WAIT_CPU,	/* preempted or yielding: runnable, waiting for a CPU */
	WAIT_OTHER,	/* a stack: none of its frames has a kind */
	WAIT_NKINDS
};

#define WAIT_KINDS_MAX 1000

/* "lock", "condition", "io", "sleep", "disk", "fault", "cpu", "other"
 * ("none" for WAIT_NONE) */
const char *wait_kind_name(enum wait_kind k);

/* What a kind's waits are, for a finding: "waiting for a lock", ... */
const char *wait_kind_text(enum wait_kind k);

/* The kernel's part of a stack switched out for a kind, as fold-report's
 * tables summarise it ("[kernel: lock wait]"): "lock wait", "condition
 * wait", "I/O wait", "sleep", "disk wait", "page fault", "runnable",
 * "wait" (WAIT_OTHER and WAIT_NONE). */
const char *wait_kind_label(enum wait_kind k);

/* A kind by its name; -1 if none is (any bytes). */
int wait_kind_parse(const char *s, size_t len);

struct wait_kinds;

/* The built-in table (or with builtin false none of it, for the tests).
 * Free with wait_kinds_free(). */
struct wait_kinds *wait_kinds_new(bool builtin);
void wait_kinds_free(struct wait_kinds *wk);

/* Reads a kinds file (path "-": standard input) into wk.  Returns 0, or -1
 * with *err set ("FILE:LINE: ..."); wk keeps the lines before the bad one. */
int wait_kinds_read(struct wait_kinds *wk, const char *path, GError **err);

/* The kind of the frame s[0..len) (any bytes). */
enum wait_kind wait_kinds_frame(const struct wait_kinds *wk, const char *s, size_t len);

#endif
