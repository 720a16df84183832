/*
 * unwind.h - a thread's user stack unwound from what perf recorded at a
 * sample: its user registers (PERF_SAMPLE_REGS_USER) and the bytes of its
 * stack from the stack pointer up (PERF_SAMPLE_STACK_USER), with the
 * unwind tables (.eh_frame's CFI, read with libdw) of the files the code
 * is in.  These are the frames a frame-pointer walk loses in code built
 * without frame pointers (Debian's libc and libstdc++): a thread blocked
 * in pthread_cond_wait() has, in the kernel's walk, no frame of the
 * program that called it.
 *
 *	struct unwinder *u = unwinder_new(locate, pd);
 *	struct unwind_regs r;
 *	unwind_regs_from_perf(&r, attr->sample_regs_user, values, nvalues);
 *	struct unwind_result res;
 *	unwind_cfi(u, pid, time, &r, dump, dump_size, &res);
 *	if (res.end == UNWIND_FP)
 *		...res.ips[0..n) then the frame-pointer chain from res.fp:
 *		   the kernel's, if res.fp is the sample's rbp, else
 *		   unwind_fp(dump, dump_size, sp, &res) walks it in the dump...
 *	unwinder_free(u);
 *
 * The walk (unwind_cfi()) follows the CFI from the sampled instruction
 * frame by frame until it reaches a frame whose CFI says it keeps a frame
 * pointer (the canonical frame address is rbp + 16, the caller's rbp
 * saved below the return address): from there on the frame-pointer chain
 * is right, and the caller splices the chain the kernel walked from that
 * frame (when that frame's rbp is the one the kernel started from), or
 * walks it in the dump as the kernel would have (unwind_fp()).  So a
 * repaired stack ends where the kernel's walk ends in code with frame
 * pointers (at the thread's first function with one: its roots are those
 * of the other stacks of the recording), and only the frames it lost in
 * between are added.
 *
 * What the walk reads of the stack must lie in the dump: a frame beyond
 * it ends the walk (UNWIND_CUT).  Registers perf did not record are
 * unknown, and a rule that needs one ends the walk (UNWIND_BAD_CFI); a
 * recording with rbp, rsp and rip (perf record --user-regs=bp with
 * --call-graph dwarf) unwinds what compilers emit: canonical frame
 * addresses from rsp or rbp, registers saved at offsets from it, and
 * expressions over those (PLT entries, signal frames).
 *
 * Files: an address is placed in a file by the locate callback (the
 * recording's own maps: perfdata_file_at()); the file is opened by its
 * recorded name and used only if it is the file recorded (the device and
 * inode, or the build id, the MMAP2 record gave), so a program rebuilt
 * since is not unwound with the wrong tables.  Each file is opened once;
 * the rules of each instruction address are compiled once and cached, so
 * a stack seen before costs a lookup per frame.  Memory grows with the
 * distinct files and instruction addresses unwound through, never with the
 * samples.  x86-64 only (elsewhere unwind_cfi() ends with UNWIND_BAD_CFI).
 * Not thread-safe.
 */
#ifndef FOLDKIT_PLUGIN_UNWIND_H
#define FOLDKIT_PLUGIN_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most addresses one walk gives (the sampled one and its callers). */
#define UNWIND_MAX 256

/* DWARF's x86-64 register numbers: rbp, rsp, and the return address */
#define UNWIND_NREGS 17
#define UNWIND_RBP 6
#define UNWIND_RSP 7
#define UNWIND_RIP 16

/* A thread's registers by DWARF number, and which of them are known. */
struct unwind_regs {
	uint64_t val[UNWIND_NREGS];
	uint32_t known;		/* bit n: val[n] is known */
};

/*
 * The registers of a sample from perf's PERF_SAMPLE_REGS_USER values: one
 * u64 for each bit set in mask (perf's register numbers, the
 * perf_event_attr's sample_regs_user), lowest bit first; n is how many
 * values there are.  False (nothing known) when n does not match the mask
 * or this is not x86-64.
 */
bool unwind_regs_from_perf(struct unwind_regs *r, uint64_t mask, const uint64_t *values,
			   size_t n);

/* Where an address is, as the locate callback says. */
struct unwind_where {
	uint32_t file;		/* the file's number: the same for the same file */
	const char *path;	/* its name as recorded (valid as long as the unwinder) */
	uint64_t offset;	/* the address's offset in the file */
	char id_kind;		/* 'i': id holds MMAP2's major, minor (u32 each) and
				 * inode; 'b': a build id (id[0] its size, the bytes
				 * from id[4]); 0: nothing to check the file by */
	uint8_t id[24];
};

/*
 * Places addr, an address of process pid at time, in a file: false when it
 * is in none (anonymous memory, JIT code, a deleted file) or the
 * recording cannot say.
 */
typedef bool unwind_locate_fn(void *data, int pid, uint64_t addr, uint64_t time,
			      struct unwind_where *w);

struct unwinder;

/* data is locate's; both must outlive the unwinder.  Free with unwinder_free(). */
struct unwinder *unwinder_new(unwind_locate_fn *locate, void *data);
void unwinder_free(struct unwinder *u);

/* How a walk ended. */
enum unwind_end {
	UNWIND_FP,	/* at a frame with a frame pointer: res.fp */
	UNWIND_ROOT,	/* at the stack's first frame (no return address) */
	UNWIND_CUT,	/* the next frame lies beyond the dump */
	UNWIND_NO_MAP,	/* an address in no file (JIT code, anonymous memory) */
	UNWIND_NO_FILE,	/* the file cannot be read, or is not the one recorded */
	UNWIND_NO_CFI,	/* the file has no unwind rule for the address */
	UNWIND_BAD_CFI,	/* a rule that needs an unknown register or that this
			 * walk does not follow, or a frame below its callee's */
	UNWIND_ENDS
};

/* A lowercase phrase for an end ("the stack dump ends"). */
const char *unwind_end_name(enum unwind_end end);

struct unwind_result {
	/* ips[0] the sampled address, then the return addresses of its
	 * callers, as a frame-pointer chain gives them */
	uint64_t ips[UNWIND_MAX];
	uint32_t n;
	enum unwind_end end;
	/* UNWIND_FP: rbp in the frame of ips[n - 1], the address of its
	 * frame record (the caller's rbp, then the return address) */
	uint64_t fp;
	/* UNWIND_NO_FILE, UNWIND_NO_CFI: the file's name (the unwinder's) */
	const char *path;
	/* the bytes of the dump the walk read, from its start: what a dump
	 * must hold for this stack */
	uint64_t used;
};

/*
 * Walks the user stack of process pid at time from registers r and the
 * size bytes of stack recorded from r's rsp up (dump), as above, into
 * *res.  At least the sampled address is given when rip is known.
 */
void unwind_cfi(struct unwinder *u, int pid, uint64_t time, const struct unwind_regs *r,
		const uint8_t *dump, size_t size, struct unwind_result *res);

/*
 * Continues a walk that ended with UNWIND_FP along the frame-pointer chain
 * from res->fp, as the kernel walks it (the return address above each
 * record, then the record the saved rbp points to), reading the records in
 * the dump of size bytes recorded from sp: ends UNWIND_ROOT at a null or
 * impossible frame pointer (below the stack pointer, misaligned: where the
 * kernel's walk would end or read no stack), UNWIND_CUT at one beyond the
 * dump.
 */
void unwind_fp(const uint8_t *dump, size_t size, uint64_t sp, struct unwind_result *res);

/*
 * Whether the function at addr, the innermost user address of a sample of
 * process pid at time, keeps its frame pointer at that instruction, as its
 * unwind tables say (the canonical frame address is rbp + 16): 1 when it
 * does; 0 when it does not (a leaf without one, or its prologue or
 * epilogue): a frame-pointer walk from there goes from addr to the caller
 * of its caller, the caller missing; -1 when unknown (no file, not the
 * one recorded, no rule: *path then names the file, or is NULL).
 */
int unwind_keeps_fp(struct unwinder *u, int pid, uint64_t time, uint64_t addr,
		    const char **path);

/* Files opened and instruction addresses whose rules were compiled. */
void unwinder_stats(const struct unwinder *u, uint64_t *files, uint64_t *rules);

#endif
