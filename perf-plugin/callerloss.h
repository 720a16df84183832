/*
 * callerloss.h - on-CPU samples whose stack has lost the caller of its
 * innermost user function: the frame-pointer walk the kernel makes starts
 * from the sampled instruction, then reads the frame rbp points to; in a
 * function that keeps no frame pointer there (a leaf built without one, as
 * libc's memcpy or strlen are, or any function in its prologue or
 * epilogue) rbp is still its caller's, so the stack goes from the function
 * to its caller's caller, and the caller's time is charged to that one.
 * An on-CPU recording holds no stack bytes to find the caller with (perf
 * record cannot dump them beside a frame-pointer chain), so this says
 * where it happens, for the notes and index.tsv, and repairs nothing.
 *
 *	struct callerloss *cl = callerloss_new(locate, pd, &perf_dlfilter_fns);
 *	...for each on-CPU sample counted, weighing n:
 *	callerloss_sample(cl, ds, ctx, n);
 *	...at the end:
 *	callerloss_totals(cl, &all, &lost, &top, &top_n);
 *	callerloss_process(cl, pid, &all, &lost, &top);
 *	callerloss_free(cl);
 *
 * Whether a function keeps its frame pointer at an instruction is what its
 * unwind tables say (unwind.h: unwind_keeps_fp()), cached per address;
 * samples in code without tables (JIT, a file that cannot be read) are
 * neither counted as lost nor as kept.  Memory: a name per distinct
 * innermost address that lost its caller, and a total per process.
 */
#ifndef FOLDKIT_PLUGIN_CALLERLOSS_H
#define FOLDKIT_PLUGIN_CALLERLOSS_H

#include "unwind.h"

#include <perf/perf_dlfilter.h>
#include <stdint.h>

struct callerloss;

/*
 * locate and data as unwinder_new()'s; fns perf's (its resolve_address()
 * names the functions).  Free with callerloss_free().
 */
struct callerloss *callerloss_new(unwind_locate_fn *locate, void *data,
				  const struct perf_dlfilter_fns *fns);
void callerloss_free(struct callerloss *cl);

/*
 * Tells a counted sample of weight n (its period: nanoseconds of
 * cpu-clock, or 1 a sample): its innermost user address, from its call
 * chain, checked; named through perf (ctx) the first time it lost its
 * caller.
 */
void callerloss_sample(struct callerloss *cl, const struct perf_dlfilter_sample *ds, void *ctx,
		       uint64_t n);

/*
 * The weights so far of the samples checked (whose tables say either way)
 * and of those that lost their caller, and the function the most of these
 * are in (NULL if none) with its weight.
 */
void callerloss_totals(const struct callerloss *cl, uint64_t *all, uint64_t *lost,
		       const char **top, uint64_t *top_n);

/* The same for process pid (its function with the most, in *top). */
void callerloss_process(const struct callerloss *cl, int pid, uint64_t *all, uint64_t *lost,
			const char **top);

#endif
