/*
 * holders.h - who released the locks threads blocked on, from an
 * off-wake profile (foldkit.so's offwake, bcc's offwaketime -f): lines
 *
 *	WAKEE;ROOT;...;LEAF;--;WLEAF;...;WROOT;WAKER COUNT
 *
 * the blocked thread's stack, "--", the waker's stack at the wake-up,
 * leaf first, and its name, weighted by the time blocked.
 *
 *	struct holders *h = holders_new(fc);
 *	holders_add(h, "app;main;take;pthread_mutex_lock;futex_wait;--;"
 *		    "futex_wake;__lll_lock_wake;pthread_mutex_unlock;"
 *		    "release;main;app", 77, fk_count_from_u64(40));
 *	holders_finish(h);
 *	// one lock, "take" (the frame that called the lock wait), waited
 *	// 40 us; released in "release" (the waker's frame that called the
 *	// unlock) by "app"
 *	holders_write_markdown(out, h, "us", 15);
 *	holders_free(h);
 *
 * A wait is a lock wait when a frame of the blocked stack is
 * FRAME_LOCK_WAIT (classify.h): the lock is named by the frame just before
 * the first such frame, the one that called it (the lock's site in the
 * waiter; "(outermost)" if the lock wait is the stack's first function),
 * a system call's way in (syscall(), do_syscall_64, do_futex ...) and
 * frames without a symbol ("[libc.so.6]": a libc whose symbols are not
 * installed) passed over.  A lock wait a timer ended (hrtimer_wakeup, process_timeout in
 * the waker's stack: a timed wait that expired) released no lock: it is
 * counted apart (timeouts).
 * The waker released it where its stack leaves the release functions: the
 * frame just beyond (toward the root) the outermost frame whose base name
 * (frame_name_base()) is an unlock or wake-up function of the list in
 * holders.c (pthread_mutex_unlock, __lll_lock_wake, futex_wake, ...), so
 * the frame of the holder's code that let go of the lock, frames without
 * a symbol passed over.  Where the waker's stack holds none, the release
 * site is its leaf.
 *
 * Waits that are not lock waits are counted apart (other_waits), and so
 * are lines without "--" (not off-wake lines, no_waker).  Rows are per
 * (lock, release site, waker name), heaviest first, ties bytewise by
 * names; each lock's rows follow its total, locks heaviest first.  Names
 * are copied; the writers escape them (Markdown code spans, JSON strings).
 */
#ifndef FOLDKIT_REPORT_HOLDERS_H
#define FOLDKIT_REPORT_HOLDERS_H

#include "core/count.h"
#include "report/classify.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct holders;

/* fc must outlive h.  Free with holders_free(). */
struct holders *holders_new(const struct frame_classifier *fc);
void holders_free(struct holders *h);

/* One folded line of the off-wake profile: its stack and count. */
void holders_add(struct holders *h, const char *stack, size_t len, fk_count count);

/* Sorts the locks and their rows; call once, after the last add. */
void holders_finish(struct holders *h);

/*
 * The time in lock waits, in other waits, in lock waits a timer ended
 * (timeouts), and in lines without "--".
 */
void holders_totals(const struct holders *h, fk_count *lock_waits, fk_count *other_waits,
		    fk_count *timeouts, fk_count *no_waker);

/* The number of locks found. */
size_t holders_nlocks(const struct holders *h);

/*
 * The "## Lock holders" section: the top locks, and for each the top
 * release sites, with the time blocked in unit and shares of the lock's.
 * source names the off-wake profile read.
 */
void holders_write_markdown(FILE *out, const struct holders *h, const char *source,
			    const char *unit, unsigned top);

/*
 * The same as a JSON member, `"lock_holders": {...}` (after a ",\n"),
 * indented by two spaces, for the report's top-level object.
 */
void holders_write_json(FILE *out, const struct holders *h, const char *source,
			const char *unit, unsigned top);

#endif
