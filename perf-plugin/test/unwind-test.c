/*
 * unwind-test - unit tests of the stack unwinding (unwind.h) and of the
 * chains repaired with it (userstack.h), on this very program's stack:
 * main -> with_fp (keeps a frame pointer) -> no_fp (keeps none, leaves
 * rbp alone) -> snap(), which copies its registers and stack as perf
 * records them; and through clobber_rbp(), which keeps a value of its own
 * in rbp (as glibc's pthread_cond_wait() does) before calling snap().
 *  - the CFI walk reaches with_fp's frame and no further, its ips the
 *    return addresses of snap(), no_fp() and with_fp()'s call;
 *  - the frame-pointer walk in the dump goes on to main's call;
 *  - a dump too short, an address in no file, a file not the one
 *    recorded end the walk as they should;
 *  - the record's registers and dump are parsed from its bytes, and cut
 *    or inconsistent records refused;
 *  - a twin's dump repairs the next sample's chain: spliced to the
 *    kernel's walk when rbp is the one it walked from, walked in the dump
 *    when not; a sample without its twin, or of another thread, is kept.
 * Built and run by test/scripts/plugin-unit.sh (x86-64 only).
 */
#include "../unwind.c"
#include "../userstack.c"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>

#if defined(__x86_64__)

#define NOINLINE __attribute__((noinline))
#define DUMP 8192

/* what snap() saw */
static struct {
	uint64_t ip, sp, bp;
	uint64_t ret;		/* snap()'s return address */
	size_t size;		/* bytes of the dump: up to the stack's end */
	uint8_t dump[DUMP];
} shot;
static uint64_t stack_end;	/* of the main thread's stack, from /proc/self/maps */
/* the return addresses and frame of the functions above it */
static uint64_t no_fp_ret, with_fp_ret, with_fp_frame;
static volatile int sink;

/* The registers and stack as perf records them at a sample in snap(). */
static NOINLINE __attribute__((optimize("omit-frame-pointer"), no_sanitize("address")))
void snap(void)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	/* (the copy's own frames are below sp) */
	shot.size = stack_end - sp < DUMP ? stack_end - sp : DUMP;
	/* word by word: the stack as it is, sanitizers' red zones and all */
	for (size_t i = 0; i < shot.size / 8; i++)
		((volatile uint64_t *)shot.dump)[i] = ((const volatile uint64_t *)sp)[i];
	shot.ip = ip;
	shot.sp = sp;
	shot.bp = bp;
	shot.ret = (uint64_t)__builtin_return_address(0);
}

static NOINLINE __attribute__((optimize("omit-frame-pointer"))) void no_fp(void)
{
	snap();
	no_fp_ret = (uint64_t)__builtin_return_address(0);
	sink++;
}

/* rbp holds a value of its own across the call, saved in its prologue */
static NOINLINE __attribute__((optimize("omit-frame-pointer"))) void clobber_rbp(void)
{
	register long x __asm__("rbp") = 0x1234;

	__asm__ volatile("" : "+r"(x));
	snap();
	__asm__ volatile("" : : "r"(x));
	no_fp_ret = (uint64_t)__builtin_return_address(0);
	sink++;
}

static NOINLINE __attribute__((optimize("no-omit-frame-pointer"))) void with_fp(bool clobber)
{
	if (clobber)
		clobber_rbp();
	else
		no_fp();
	with_fp_ret = (uint64_t)__builtin_return_address(0);
	with_fp_frame = (uint64_t)__builtin_frame_address(0);
	sink++;
}

/* locate from /proc/self/maps; bad_inode: say every file has another inode */
static bool bad_inode, no_map;

static bool self_locate(void *data, int pid, uint64_t addr, uint64_t time,
			struct unwind_where *w)
{
	static char path[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];
	bool found = false;

	(void)data, (void)pid, (void)time;
	if (!f || no_map) {
		if (f)
			fclose(f);
		return false;
	}
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &start, &end, perms, &off, &maj,
			   &min, &ino, &at) < 7 || !at || perms[2] != 'x' || line[at] != '/' ||
		    addr < start || addr >= end)
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "%s", line + at);
		w->file = (uint32_t)ino;
		w->path = path;
		w->offset = addr - start + off;
		w->id_kind = 'i';
		memcpy(w->id, &maj, 4);
		memcpy(w->id + 4, &min, 4);
		ino += bad_inode;
		memcpy(w->id + 8, &ino, 8);
		found = true;
	}
	fclose(f);
	return found;
}

static struct unwind_regs shot_regs(void)
{
	/* perf's order: bp (6), sp (7), ip (8) */
	uint64_t v[3] = { shot.bp, shot.sp, shot.ip };
	struct unwind_regs r;

	CHECK(unwind_regs_from_perf(&r, 0x1c0, v, 3));
	return r;
}

static void check_walks(void)
{
	struct unwinder *u = unwinder_new(self_locate, NULL);
	struct unwind_regs r;
	struct unwind_result res;
	uint64_t files, rules;

	/* rbp left alone: the walk stops at with_fp, whose rbp it started with */
	with_fp(false);
	r = shot_regs();
	unwind_cfi(u, 1, 1, &r, shot.dump, shot.size, &res);
	CHECK(res.end == UNWIND_FP);
	CHECK(res.n == 3 && res.ips[0] == shot.ip && res.ips[1] == shot.ret &&
	      res.ips[2] == no_fp_ret);
	CHECK(res.fp == with_fp_frame && res.fp == shot.bp);
	CHECK(res.used > 0 && res.used < 256);
	/* the frame-pointer walk on: with_fp's caller, then main's callers */
	unwind_fp(shot.dump, shot.size, shot.sp, &res);
	CHECK(res.n >= 4 && res.ips[3] == with_fp_ret);

	/* rbp clobbered: the walk restores with_fp's from clobber_rbp's frame */
	with_fp(true);
	r = shot_regs();
	CHECK(shot.bp == 0x1234);
	unwind_cfi(u, 1, 1, &r, shot.dump, shot.size, &res);
	CHECK(res.end == UNWIND_FP && res.n == 3 && res.ips[2] == no_fp_ret);
	CHECK(res.fp == with_fp_frame);

	/* a dump that ends before snap()'s return address */
	unwind_cfi(u, 1, 1, &r, shot.dump, 0, &res);
	CHECK(res.end == UNWIND_CUT && res.n == 1);
	/* and one beyond with_fp's record, for the frame-pointer walk */
	with_fp(false);
	r = shot_regs();
	unwind_cfi(u, 1, 1, &r, shot.dump, shot.size, &res);
	unwind_fp(shot.dump, (size_t)(with_fp_frame - shot.sp) + 8, shot.sp, &res);
	CHECK(res.end == UNWIND_CUT && res.n == 3);

	/* no map, and a file that is not the one recorded */
	no_map = true;
	unwind_cfi(u, 1, 1, &r, shot.dump, shot.size, &res);
	CHECK(res.end == UNWIND_NO_MAP && res.n == 1);
	no_map = false;
	unwinder_free(u);
	u = unwinder_new(self_locate, NULL);
	bad_inode = true;
	unwind_cfi(u, 1, 1, &r, shot.dump, shot.size, &res);
	CHECK(res.end == UNWIND_NO_FILE && res.path && res.path[0] == '/');
	bad_inode = false;
	/* registers missing */
	r.known &= ~(1u << UNWIND_RSP);
	unwind_cfi(u, 1, 1, &r, shot.dump, shot.size, &res);
	CHECK(res.end == UNWIND_BAD_CFI && res.n == 0);
	unwinder_stats(u, &files, &rules);
	CHECK(files == 1);
	unwinder_free(u);
}

/* perf's record of a sample: the chain, RAW, REGS_USER (bp sp ip), STACK_USER */
struct record {
	uint64_t words[64 + 8 + DUMP / 8];
};

static const uint64_t dump_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
				  PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

/*
 * Lays out a sample's record (nr chain entries, 12 bytes of raw data, the
 * registers and size bytes of dump when dumped) and points *ds into it.
 */
static void lay_out(struct record *rec, struct perf_dlfilter_sample *ds, const uint64_t *chain,
		    size_t nr, bool dumped, size_t size)
{
	uint64_t *w = rec->words;
	uint32_t raw = 12;

	memset(rec, 0, sizeof(*rec));
	w[0] = nr;
	memcpy(w + 1, chain, nr * 8);
	w += 1 + nr;
	memcpy(w, &raw, 4);
	memcpy((uint8_t *)w + 4, "prev=1 next=", 12);
	w += 2;
	ds->raw_callchain = (const __u64 *)(rec->words + 1);
	ds->raw_callchain_nr = nr;
	ds->raw_data = (const uint8_t *)(rec->words + 1 + nr) + 4;
	ds->raw_size = raw;
	if (!dumped)
		return;
	*w++ = PERF_SAMPLE_REGS_ABI_64;
	*w++ = shot.bp;
	*w++ = shot.sp;
	*w++ = shot.ip;
	*w++ = DUMP;
	memcpy(w, shot.dump, shot.size);
	w += DUMP / 8;
	*w = size < shot.size ? size : shot.size;
}

static void check_parse(void)
{
	static struct record rec;
	struct perf_dlfilter_sample ds = { 0 };
	struct unwind_regs r;
	const uint8_t *dump, *tail;
	size_t size, full;

	with_fp(false);
	lay_out(&rec, &ds, (uint64_t[]){ PERF_CONTEXT_KERNEL, 0xffffffff81000000ull }, 2, true, 400);
	tail = (const uint8_t *)ds.raw_data + ds.raw_size;
	full = 8 + 24 + 8 + DUMP + 8;
	CHECK(userstack_parse_tail(tail, full, dump_type, 0x1c0, DUMP, &r, &dump, &size));
	CHECK(size == 400 && dump == tail + 40 && r.val[UNWIND_RIP] == shot.ip &&
	      r.val[UNWIND_RSP] == shot.sp && r.val[UNWIND_RBP] == shot.bp);
	/* cut anywhere: refused */
	for (size_t n = 0; n < full; n += n < 48 ? 1 : 997)
		CHECK(!userstack_parse_tail(tail, n, dump_type, 0x1c0, DUMP, &r, &dump, &size));
	/* a dump larger than asked, a valid size larger than the dump */
	CHECK(!userstack_parse_tail(tail, full, dump_type, 0x1c0, DUMP - 8, &r, &dump, &size));
	memcpy((uint8_t *)tail + 40 + DUMP, &(uint64_t){ DUMP + 8 }, 8);
	CHECK(!userstack_parse_tail(tail, full, dump_type, 0x1c0, DUMP, &r, &dump, &size));
	/* no registers (a kernel thread): no dump either */
	memcpy((uint8_t *)tail, &(uint64_t){ PERF_SAMPLE_REGS_ABI_NONE }, 8);
	memcpy((uint8_t *)tail + 8, &(uint64_t){ 0 }, 8);
	CHECK(userstack_parse_tail(tail, 16, dump_type, 0x1c0, DUMP, &r, &dump, &size));
	CHECK(size == 0 && r.known == 0);
	/* a branch stack lies between: not read */
	CHECK(!userstack_parse_tail(tail, full, dump_type | PERF_SAMPLE_BRANCH_STACK, 0x1c0, DUMP,
				    &r, &dump, &size));
}

static void check_repair(void)
{
	static struct record drec, frec;
	struct perf_event_attr dattr = { .sample_type = dump_type, .sample_regs_user = 0x1c0,
					 .sample_stack_user = DUMP };
	struct perf_event_attr fattr = { .sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW };
	struct perf_dlfilter_sample dump = { .pid = 5, .tid = 6, .cpu = 1, .time = 1000 };
	struct perf_dlfilter_sample fp = { .pid = 5, .tid = 6, .cpu = 1, .time = 1002 };
	struct perf_dlfilter_sample copy;
	const struct perf_dlfilter_sample *got;
	struct userstack *us = userstack_new(self_locate, NULL);
	enum userstack_outcome why;
	uint64_t n[USERSTACK_OUTCOMES];
	/* the kernel's walk: the ip, then the record rbp points to (with_fp's
	 * caller), then two more */
	uint64_t chain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, PERF_CONTEXT_USER, 0,
			     0, 0x401000, 0x401100 };

	with_fp(false);
	chain[3] = shot.ip;
	chain[4] = with_fp_ret;
	lay_out(&drec, &dump, (uint64_t[]){ PERF_CONTEXT_KERNEL, 0xffffffff81000010ull }, 2, true,
		DUMP);
	lay_out(&frec, &fp, chain, G_N_ELEMENTS(chain), false, 0);
	CHECK(userstack_note(us, &dump, &dattr));
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK(why == USERSTACK_SPLICED && got == &copy);
	{
		uint64_t want[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ull, PERF_CONTEXT_USER,
				    shot.ip, shot.ret, no_fp_ret, with_fp_ret, 0x401000, 0x401100 };

		CHECK(got->raw_callchain_nr == G_N_ELEMENTS(want) &&
		      memcmp(got->raw_callchain, want, sizeof(want)) == 0);
	}
	/* the same dump against a chain the kernel walked from elsewhere */
	chain[4] = 0x999;
	lay_out(&frec, &fp, chain, G_N_ELEMENTS(chain), false, 0);
	CHECK(userstack_note(us, &dump, &dattr));
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK(why == USERSTACK_MISMATCH && got == &fp);

	/* rbp clobbered: the frame-pointer walk in the dump */
	with_fp(true);
	chain[3] = shot.ip;
	chain[4] = 0x5555;	/* garbage: the kernel walked from 0x1234 */
	lay_out(&drec, &dump, (uint64_t[]){ PERF_CONTEXT_KERNEL, 0xffffffff81000010ull }, 2, true,
		DUMP);
	lay_out(&frec, &fp, chain, 5, false, 0);
	CHECK(userstack_note(us, &dump, &dattr));
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK((why == USERSTACK_WALKED || why == USERSTACK_CUT) && got == &copy);
	CHECK(got->raw_callchain_nr >= 7 && got->raw_callchain[3] == shot.ip &&
	      got->raw_callchain[5] == no_fp_ret && got->raw_callchain[6] == with_fp_ret);

	/* no twin: a sample of another thread, or on another CPU, or none */
	CHECK(userstack_note(us, &dump, &dattr));
	fp.tid = 7;
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK(why == USERSTACK_NOT_DUMPED && got == &fp);
	fp.tid = 6;
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK(why == USERSTACK_NO_DUMP && got == &fp);
	CHECK(userstack_note(us, &dump, &dattr));
	fp.cpu = 2;
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK(why == USERSTACK_NO_DUMP && got == &fp);
	fp.cpu = 1;
	/* a twin whose record is not laid out as perf's: unreadable */
	dump.raw_data = (const uint8_t *)dump.raw_data + 8;
	CHECK(userstack_note(us, &dump, &dattr));
	CHECK(!userstack_note(us, &fp, &fattr));
	got = userstack_repair(us, &fp, &fattr, &copy, &why);
	CHECK(why == USERSTACK_UNREADABLE && got == &fp);

	/* dumps alone: a sample's own repairs its chain */
	userstack_set_twins(us, false);
	lay_out(&drec, &dump, (uint64_t[]){ PERF_CONTEXT_KERNEL, 0xffffffff81000010ull }, 2, true,
		DUMP);
	CHECK(!userstack_note(us, &dump, &dattr));
	got = userstack_repair(us, &dump, &dattr, &copy, &why);
	CHECK((why == USERSTACK_WALKED || why == USERSTACK_CUT) && got == &copy);
	CHECK(got->raw_callchain_nr >= 7 && got->raw_callchain[2] == PERF_CONTEXT_USER &&
	      got->raw_callchain[3] == shot.ip && got->raw_callchain[6] == with_fp_ret);
	userstack_counts(us, n);
	CHECK(n[USERSTACK_SPLICED] == 1 && n[USERSTACK_MISMATCH] == 1 && n[USERSTACK_NO_DUMP] == 2 &&
	      n[USERSTACK_UNREADABLE] == 1 && n[USERSTACK_NOT_DUMPED] == 1);
	userstack_free(us);
}

int main(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	unsigned long start, end, here = (unsigned long)__builtin_frame_address(0);

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && here >= start && here < end)
			stack_end = end;
	if (f)
		fclose(f);
	CHECK(stack_end != 0);
	check_walks();
	check_parse();
	check_repair();
	return CHECK_DONE();
}

#else
int main(void)
{
	fputs("unwind-test: x86-64 only\n", stderr);
	return 0;
}
#endif
