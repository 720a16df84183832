/*
 * profile.h - one folded profile taken apart for fold-report: threads,
 * functions, categories, symbol quality, lock waits.  The tool builds it
 * (profile_new(), profile_add(), see report.h); the rest is internal to
 * lib/report/.
 *
 *	struct profile *p = profile_new();
 *	profile_add(p, "main;work;leaf", 14, fk_count_from_u64(3), false);
 *	profile_analyse(p, cats, fc);
 *	const struct frame_stat *f = profile_frame(p, "work", 4);
 *	// f->self 0, f->incl 3: exact counts; shares are counts / p->total
 *	profile_free(p);
 *
 * The first frame of a stack is its root: the process or thread name the
 * collapser put there.  The other frames are functions.  Each stack is
 * kept as its root, counted in p->roots, and its tail (the rest), counted
 * in p->tails, and the pair of them in p->stacks: one line's text is
 * hashed once, and the same code run by many threads or processes is
 * taken apart once.  profile_analyse() then counts, for every distinct
 * tail with its total count C:
 *  - its leaf (last frame) gets C in self; a stack of only its root frame
 *    has no function, and counts in root_only;
 *  - every distinct frame name in it gets C in incl, once however often
 *    the name recurs;
 *  - every category with a frame matching it gets C, once;
 *  - unresolved gets C if a frame is FRAME_UNRESOLVED, truncated if none
 *    is FRAME_ENTRY (the stack does not reach a thread's start; a stack of
 *    only its root is truncated too), and then its outermost function gets
 *    C in trunc_head;
 *  - if a frame is FRAME_LOCK_WAIT, the frames from the first up to the
 *    last lock-wait frame get C in lock_wait: their stack waits on a lock
 *    at or beyond them;
 *  - a frame that is not FRAME_LOCK_WAIT, just before one that is, gets
 *    C in calls_lock (once): it calls the lock;
 *  - if a FRAME_LOG frame has a FRAME_WRITE frame beyond it, the first
 *    such logging frame gets C in log_write;
 *  - if a frame is FRAME_ALLOC, C goes to alloc;
 *  - every distinct frame name of its program's side (the frames before
 *    its kernel part when that is summarised, see kpart below; all of
 *    them when not) gets C in uincl, once.
 * So self sums to total - root_only, and every incl is at most total.
 *
 * Memory grows with the distinct roots, tails and stacks, never with the
 * input.  Stacks added as stable (their bytes stay valid and unchanged
 * until profile_free(), as a mapped file's do) are not copied; the
 * profile owns everything else.
 */
#ifndef FOLDKIT_REPORT_PROFILE_H
#define FOLDKIT_REPORT_PROFILE_H

#include "core/count.h"
#include "core/foldtable.h"
#include "core/str.h"
#include "report/categories.h"
#include "report/classify.h"
#include "report/waitkind.h"

#include <glib.h>
#include <stdint.h>
#include <string.h>

struct frame_stat {
	struct fk_str name;	/* into the profile's stacks */
	fk_count self, incl, lock_wait, trunc_head, log_write;
	fk_count calls_lock;	/* stacks where a lock wait comes just after it */
	fk_count uincl;		/* incl without summarised kernel parts */
	unsigned classes;	/* FRAME_* (classify.h) */
	uint8_t wait;		/* its enum wait_kind (waitkind.h) */
	uint32_t id;		/* index in profile.frames */
	uint32_t cats_at, ncats;	/* its categories: profile.frame_cats */
	uint64_t mark, mark2;	/* private: the last tail counted */
};

/*
 * A distinct tail: its count and its frames, ids[first..first+n).  Where
 * the program is in it (positions from 0, the outermost frame): kernel is
 * the first of the kernel's frames (a FRAME_KENTRY and all after it; n
 * when none), site the innermost of the program's frames before it (not
 * FRAME_SYSTEM, nor of a wait kind; TAIL_NONE when none is): the frame a
 * finding names, and site + 1, when there is one, what it called.  kind is
 * its wait's (waitkind.h: its innermost frame's with a kind, WAIT_OTHER
 * when none has one).  hidden: an unresolved frame between two of the
 * program's, or unresolved frames and none of the program's (not a
 * thread's entry before them, nor a library's leaf); lost: its callers
 * are missing (no thread entry, and not a library's frame alone before
 * the program's: a thread's start routine in a library without frame
 * pointers loses nothing of the program).
 *
 * kpart: how fold-report's tables summarise its kernel part (frames
 * kernel..n-1), so that they show the program's stack and what the
 * kernel did for it in one word ("... -> __lll_lock_wait -> [kernel:
 * lock wait]") instead of the kernel's entry and scheduler frames, and a
 * kernel leaf (a sampling artefact such as _raw_spin_unlock_irqrestore
 * where interrupts are enabled again) is charged to the call the program
 * made: KPART_NONE when there is no kernel part or nothing before it (a
 * kernel thread's stack is all the kernel's, and kept whole); KPART_WAIT
 * + kind when a FRAME_SCHED frame in it says the thread was switched out
 * (or was being switched) there; else how the kernel was entered.
 */
#define TAIL_NONE UINT32_MAX
enum {
	KPART_NONE,
	KPART_SYSCALL,		/* "system call": entry_SYSCALL_64, do_syscall_64 */
	KPART_FAULT,		/* "page fault": asm_exc_page_fault */
	KPART_INTERRUPT,	/* "interrupt": asm_sysvec_*, asm_common_interrupt */
	KPART_ENTRY,		/* "kernel": another entry (an exception, a trap) */
	KPART_WAIT,		/* + enum wait_kind: wait_kind_label() */
};
struct profile_tail {
	fk_count count;
	uint32_t first, n;
	uint32_t site, kernel;
	uint8_t kind, kpart;
	bool hidden, lost;
};

/* The words for a kpart: "system call", "lock wait", ... (NULL for
 * KPART_NONE) */
const char *profile_kpart_label(unsigned kpart);

/* A distinct stack: the key of p->stacks' entries (root;tail). */
struct stack_key {
	const struct fold_entry *root, *tail;	/* tail NULL: a root alone */
};

struct profile {
	fk_count total;
	size_t nstacks;			/* distinct stacks */
	struct fold_table *stacks;	/* struct stack_key bytes -> count */
	struct fold_table *roots;	/* root frame -> count */
	fk_count root_only;		/* stacks of a root frame alone */
	fk_count unresolved, truncated, alloc, log_write;
	fk_count hidden, lost;		/* tails' counts with hidden, lost */
	GArray *tails;			/* struct profile_tail */
	GArray *ids;			/* uint32_t frame ids of the tails */
	GPtrArray *frames;		/* struct frame_stat *, by id */
	GArray *frame_cats;		/* uint32_t category indexes */
	fk_count *cat_counts;		/* per category of the list */
	size_t ncats;
	bool analysed;
	/* beside the stacks, from the recording (profile_set_caller_lost()):
	   the count whose innermost function kept no frame pointer where
	   sampled, its caller missing; the function most of it is in (NULL:
	   unknown), and the count of the part that named it */
	bool has_caller_lost;
	fk_count caller_lost, caller_lost_in_count;
	char *caller_lost_in;
	/* private */
	GHashTable *index;		/* struct fk_str * -> struct frame_stat * */
	struct fold_table *tail_table;
	struct fold_entry *last_root;	/* of the last stack added */
};

/* profile_new(), profile_add(), profile_merge(), profile_free(): report.h */

/* Takes the stacks apart as above, once (later calls do nothing); cats,
 * fc and wk (NULL: the built-in table) are only used during the call. */
void profile_analyse(struct profile *p, const struct category_list *cats,
		     const struct frame_classifier *fc, const struct wait_kinds *wk);

/* The tail of a p->stacks key (NULL for a root alone), once analysed. */
const struct profile_tail *profile_tail_of(const struct profile *p, struct stack_key k);

/* The frame at position i of tail t. */
static inline struct frame_stat *profile_tail_frame(const struct profile *p,
						    const struct profile_tail *t, uint32_t i)
{
	return (struct frame_stat *)g_ptr_array_index(p->frames,
		((const uint32_t *)(const void *)p->ids->data)[t->first + i]);
}

/* The key of a p->stacks entry. */
static inline struct stack_key profile_stack_key(const struct fold_entry *e)
{
	struct stack_key k;

	memcpy(&k, e->stack, sizeof(k));
	return k;
}

/* Compares two stacks bytewise, as their "ROOT;TAIL" texts compare. */
int profile_stack_cmp(struct stack_key a, struct stack_key b);

/* Appends the stack's text, "ROOT;TAIL", to g. */
void profile_stack_text(struct stack_key k, GString *g);

/* The frame named s[0..len), or NULL when no stack has it (roots aside). */
const struct frame_stat *profile_frame(const struct profile *p, const char *s,
				       size_t len);

/*
 * The frame most often just beyond f (toward the leaf) or just before it
 * (toward the root, roots aside), with the count of stacks where it is
 * (each stack once): the heaviest, ties to the bytewise smaller name.
 * Returns NULL when f is never followed (or preceded) by a function.
 */
const struct frame_stat *profile_child(const struct profile *p,
				       const struct frame_stat *f, fk_count *count);
const struct frame_stat *profile_caller(const struct profile *p,
					const struct frame_stat *f, fk_count *count);

/* profile_child() among the children of class cls (FRAME_*) only. */
const struct frame_stat *profile_child_in(const struct profile *p,
					  const struct frame_stat *f, unsigned cls,
					  fk_count *count);

/* Compares two names bytewise (memcmp, a prefix first). */
int fk_str_cmp(struct fk_str a, struct fk_str b);

#endif
