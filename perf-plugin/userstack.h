/*
 * userstack.h - samples whose call chains are repaired where they pass
 * through code without frame pointers, from the user registers and stack
 * bytes perf recorded (unwind.h).
 *
 *	struct userstack *us = userstack_new(locate, pd);
 *	userstack_set_twins(us, perfdata_dump_twins(pd, attr->type, attr->config));
 *	...in filter_event_early(), for every sample, in perf's order:
 *	if (userstack_note(us, ds, attr))
 *		return 1;	// a dump for the next sample of its CPU: not counted
 *	...where the sample's stack is made:
 *	struct perf_dlfilter_sample copy;
 *	enum userstack_outcome why;
 *	ds = userstack_repair(us, ds, attr, &copy, &why);
 *	...ds->raw_callchain is the repaired chain (valid until the next call)
 *	userstack_free(us);
 *
 * Two recordings are repaired:
 *
 *  - twins (fp-record's off-CPU capture): perf record -e EV -e
 *    'EV/call-graph=dwarf,stack-size=N/' --user-regs=bp records, at each
 *    event, a sample with the user stack's first N bytes and the
 *    registers, then one with the whole frame-pointer chain, on the same
 *    CPU, for the same thread.  The dump (userstack_note()) repairs the
 *    chain of the next sample: unwind_cfi() from the registers up to the
 *    first frame that keeps a frame pointer; when that frame's rbp is the
 *    one the kernel's walk started from, the chain is those frames, then
 *    the kernel's from its second user entry (the caller of that frame),
 *    however deep; else (code without frame pointers changed rbp, as
 *    glibc's pthread_cond_wait() does) the frame-pointer chain is walked
 *    in the dump, as deep as it holds.
 *
 *  - dumps alone (perf record --call-graph dwarf): a sample's own dump
 *    repairs its own chain, which holds only the kernel's part: the user
 *    part is what the dump holds.
 *
 * The registers and the dump are not in perf's dlfilter sample: they are
 * read from the sample's record in perf's memory, just after its
 * tracepoint data (the fields perf_event_open(2) lays out after
 * PERF_SAMPLE_RAW), where perf's own parse of the record points
 * raw_data; userstack_note() checks that the call chain and the raw
 * data lie there as the record lays them out (else nothing is repaired:
 * USERSTACK_UNREADABLE).  The record layout is parsed by
 * userstack_parse_tail().
 *
 * Memory: a dump's bytes per CPU (copied from perf's record until its
 * twin comes), and what unwind.h keeps; nothing grows with the samples.
 */
#ifndef FOLDKIT_PLUGIN_USERSTACK_H
#define FOLDKIT_PLUGIN_USERSTACK_H

#include "unwind.h"

#include <perf/perf_dlfilter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What became of a sample's chain. */
enum userstack_outcome {
	USERSTACK_SPLICED,	/* unwound up to a frame with a frame pointer, then
				 * the kernel's chain from there */
	USERSTACK_WALKED,	/* unwound, then frame pointers in the dump, to
				 * the stack's first frame */
	USERSTACK_CUT,		/* the same, to the dump's end: outer frames missing */
	USERSTACK_NO_USER,	/* no user stack (a kernel thread): nothing to repair */
	USERSTACK_NOT_DUMPED,	/* a thread whose stacks are not dumped (not one
				 * the recording was made for) */
	USERSTACK_NO_DUMP,	/* no dump came for it (lost): the kernel's chain */
	USERSTACK_MISMATCH,	/* its dump is of another stack: the kernel's chain */
	USERSTACK_UNREADABLE,	/* the dump's record cannot be read here */
	/* unwinding stopped before a frame with a frame pointer, at: */
	USERSTACK_STOP_CUT,	/* the dump's end */
	USERSTACK_STOP_NO_MAP,	/* code in no file */
	USERSTACK_STOP_NO_FILE,	/* a file not readable, or not the one recorded */
	USERSTACK_STOP_NO_CFI,	/* code without unwind tables */
	USERSTACK_STOP_BAD_CFI,	/* a rule not followed */
	USERSTACK_OUTCOMES
};

/* Whether an outcome gave the sample its frames through the code without
 * frame pointers (the first three). */
static inline bool userstack_repaired(enum userstack_outcome o)
{
	return o <= USERSTACK_CUT;
}

/* A lowercase phrase for an outcome ("no stack dump"). */
const char *userstack_outcome_name(enum userstack_outcome o);

struct userstack;

/* locate and data as unwinder_new()'s.  Free with userstack_free(). */
struct userstack *userstack_new(unwind_locate_fn *locate, void *data);
void userstack_free(struct userstack *us);

/*
 * Whether samples with a dump are twins of samples with a frame-pointer
 * chain (perfdata_dump_twins()); else each repairs its own chain.
 */
void userstack_set_twins(struct userstack *us, bool twins);

/* Whether samples of attr have a user stack dump (PERF_SAMPLE_STACK_USER). */
bool userstack_has_dump(const struct perf_event_attr *attr);

/*
 * Tells the repair of a sample perf read, in perf's order: a twin's dump is
 * kept for the next sample of its CPU, and true returned (the sample is
 * not one to count); every other sample of a CPU takes the dump kept for it
 * if it is its twin's (the same thread, within 10 ms) and false is returned.
 */
bool userstack_note(struct userstack *us, const struct perf_dlfilter_sample *ds,
		    const struct perf_event_attr *attr);

/*
 * The sample with its call chain repaired: *copy, a copy of ds whose
 * raw_callchain is the repaired chain (both valid until the next call),
 * or ds itself when nothing was repaired; *why says which and why.  ds
 * must be the last sample userstack_note() was told of.
 */
const struct perf_dlfilter_sample *userstack_repair(struct userstack *us,
						    const struct perf_dlfilter_sample *ds,
						    const struct perf_event_attr *attr,
						    struct perf_dlfilter_sample *copy,
						    enum userstack_outcome *why);

/* Samples repaired so far by outcome (n[USERSTACK_OUTCOMES]). */
void userstack_counts(const struct userstack *us, uint64_t *n);

/*
 * Dumps that came after the sample they were for (the same thread on the
 * same CPU just before), when most did: perf record listed the dump event
 * first, so the kernel emitted it second, and samples were not repaired;
 * else 0.
 */
uint64_t userstack_late(const struct userstack *us);

/* The file named by the last USERSTACK_STOP_NO_FILE or _NO_CFI, or NULL. */
const char *userstack_last_file(const struct userstack *us);

/* The unwinder (for its statistics). */
const struct unwinder *userstack_unwinder(const struct userstack *us);

/*
 * The fields of a sample record after PERF_SAMPLE_RAW, as perf_event_open(2)
 * lays them out for sample_type (BRANCH_STACK is not read: false), from p
 * (avail bytes): the user registers (regs_mask: sample_regs_user) into
 * *regs, and the stack dump (at most stack_user bytes asked, dyn_size of
 * them valid) into *dump and *size.  False when the record cannot hold
 * them; true with *size 0 when it holds no dump (a kernel thread).
 */
bool userstack_parse_tail(const uint8_t *p, size_t avail, uint64_t sample_type,
			  uint64_t regs_mask, uint32_t stack_user, struct unwind_regs *regs,
			  const uint8_t **dump, size_t *size);

#endif
