/*
 * fuzz/userstack.c - the perf plugin's stack repair (perf-plugin/userstack.c)
 * and unwinder (perf-plugin/unwind.c) on any bytes: a sample record's
 * fields after its tracepoint data (registers, stack dump) as
 * userstack_parse_tail() reads them; the CFI and frame-pointer walks over
 * fuzzed registers and stack bytes, with the unwind tables of real files
 * (this program and the libraries it maps: every address lands in one of
 * them, at an offset the input chooses, so the walk meets the rules of
 * any instruction of libc); and a twin's dump repairing the next
 * sample's frame-pointer chain.
 *
 * Input: byte 0 the sample_type's choice (bit 1 REGS_USER, 2 STACK_USER,
 * 4 BRANCH_STACK, 8 a dump alone (no twin), 16 the twin's chain agrees
 * with the registers), bytes 1-8 the register mask, 9-10 the dump size
 * asked, then the record's tail.  Checked: a parsed tail lies inside the
 * input, its dump no larger than asked; a walk gives at most UNWIND_MAX
 * addresses, the sampled one first, reads no byte past the dump, and ends
 * with a known reason; a repaired chain keeps the sample's kernel part
 * and marks the user part, within its bound; a chain not repaired is the
 * sample's own.
 */
#include "fuzz.h"

#include "userstack.h"

#include <glib.h>

struct mapping {
	char *path;
	uint64_t size, offset;
	uint32_t number;
};
static GArray *maps;

/* The executable mappings of this process, once. */
static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];

	maps = g_array_new(FALSE, FALSE, sizeof(struct mapping));
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off, ino;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %lu %n", &start, &end, perms, &off, &ino,
			   &at) < 5 || !at || perms[2] != 'x' || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = 0;
		g_array_append_val(maps, ((struct mapping){ g_strdup(line + at), end - start, off,
							    maps->len }));
	}
	if (f)
		fclose(f);
}

/* Any address: mapping (addr >> 40) % n, at its low bits within it. */
static bool fuzz_locate(void *data, int pid, uint64_t addr, uint64_t time, struct unwind_where *w)
{
	const struct mapping *m;

	(void)data, (void)pid, (void)time;
	if (!maps->len || (addr >> 63))
		return false;
	m = &g_array_index(maps, struct mapping, (addr >> 40) % maps->len);
	w->file = m->number;
	w->path = m->path;
	w->offset = m->offset + (addr & 0xffffffffffull) % m->size;
	w->id_kind = 0;
	return true;
}

static struct userstack *us;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t words[(65536 + 4096) / 8];
	uint64_t type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW, mask;
	struct perf_event_attr attr = { 0 };
	struct perf_dlfilter_sample dump = { .pid = 5, .tid = 6, .cpu = 1, .time = 10 };
	struct perf_dlfilter_sample fp = { .pid = 5, .tid = 6, .cpu = 1, .time = 11 };
	struct perf_dlfilter_sample copy;
	const struct perf_dlfilter_sample *got;
	struct perf_event_attr fattr = { .sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW };
	struct unwind_regs regs;
	struct unwind_result res;
	enum userstack_outcome why;
	const uint8_t *bytes, *tail;
	size_t n, dsize;
	uint16_t asked;
	uint8_t *p;
	uint64_t chain[8];

	if (size < 11 || size > sizeof(words) - 64)
		return 0;
	if (!maps) {
		read_maps();
		us = userstack_new(fuzz_locate, NULL);
	}
	type |= (data[0] & 1 ? PERF_SAMPLE_REGS_USER : 0) | (data[0] & 2 ? PERF_SAMPLE_STACK_USER : 0) |
		(data[0] & 4 ? PERF_SAMPLE_BRANCH_STACK : 0);
	memcpy(&mask, data + 1, 8);
	memcpy(&asked, data + 9, 2);
	tail = data + 11;
	n = size - 11;

	/* the tail alone */
	if (userstack_parse_tail(tail, n, type, mask, asked, &regs, &bytes, &dsize)) {
		FUZZ_CHECK(!(type & PERF_SAMPLE_BRANCH_STACK), "a branch stack parsed");
		FUZZ_CHECK(dsize <= asked, "a dump of %zu bytes, %u asked", dsize, asked);
		FUZZ_CHECK(!dsize || (bytes >= tail && bytes + dsize <= tail + n),
			   "the dump lies outside the record");
		unwind_cfi((struct unwinder *)userstack_unwinder(us), 5, 10, &regs, bytes, dsize, &res);
		FUZZ_CHECK(res.n <= UNWIND_MAX && res.end < UNWIND_ENDS, "%u addresses, end %d",
			   res.n, res.end);
		FUZZ_CHECK(res.used <= dsize, "read %lu bytes of %zu", (unsigned long)res.used, dsize);
		FUZZ_CHECK(!res.n || res.ips[0] == regs.val[UNWIND_RIP], "not the sampled address first");
		if (res.end == UNWIND_FP) {
			unwind_fp(bytes, dsize, regs.val[UNWIND_RSP], &res);
			FUZZ_CHECK(res.n <= UNWIND_MAX && res.used <= dsize,
				   "frame-pointer walk: %u addresses, %lu bytes read", res.n,
				   (unsigned long)res.used);
			FUZZ_CHECK(res.end == UNWIND_ROOT || res.end == UNWIND_CUT, "end %d", res.end);
		}
	}

	/* laid out as perf's record, after a chain and 4 bytes of raw data:
	 * a twin's dump, then its frame-pointer sample */
	memset(words, 0, 64);
	words[0] = 2;
	words[1] = PERF_CONTEXT_KERNEL;
	words[2] = 0xffffffff81000010ull;
	p = (uint8_t *)(words + 3);
	memcpy(p, &(uint32_t){ 4 }, 4);
	memcpy(p + 8, tail, n);
	dump.raw_callchain = (const __u64 *)(words + 1);
	dump.raw_callchain_nr = 2;
	dump.raw_data = p + 4;
	dump.raw_size = 4;
	attr.sample_type = type | PERF_SAMPLE_STACK_USER;
	attr.sample_regs_user = mask;
	attr.sample_stack_user = asked;
	/* (the plugin reads what perf checked fits the record: so must the
	 * input, here) */
	if (!userstack_parse_tail(tail, n, attr.sample_type, mask, asked, &regs, &bytes, &dsize) ||
	    8 + 8 * (size_t)__builtin_popcountll(mask) + 16 + asked > n)
		return 0;
	chain[0] = PERF_CONTEXT_KERNEL;
	chain[1] = 0xffffffff81000020ull;
	chain[2] = PERF_CONTEXT_USER;
	chain[3] = data[0] & 16 ? regs.val[UNWIND_RIP] : 0x1234;
	for (size_t i = 4; i < 8; i++) {
		size_t at = (i - 4) * 8 % n;

		chain[i] = 0;
		memcpy(&chain[i], tail + at, MIN((size_t)8, n - at));
	}
	fp.raw_callchain = (const __u64 *)chain;
	fp.raw_callchain_nr = 8;
	userstack_set_twins(us, !(data[0] & 8));
	if (data[0] & 8) {
		FUZZ_CHECK(!userstack_note(us, &dump, &attr), "a dump alone taken for a twin");
		got = userstack_repair(us, &dump, &attr, &copy, &why);
		chain[0] = PERF_CONTEXT_KERNEL, chain[1] = 0xffffffff81000010ull;
	} else {
		FUZZ_CHECK(userstack_note(us, &dump, &attr), "a twin not kept");
		FUZZ_CHECK(!userstack_note(us, &fp, &fattr), "a sample taken for a twin");
		got = userstack_repair(us, &fp, &fattr, &copy, &why);
	}
	FUZZ_CHECK(why < USERSTACK_OUTCOMES, "outcome %d", why);
	if (got == &copy) {
		FUZZ_CHECK(copy.raw_callchain_nr >= 3 && copy.raw_callchain_nr <= 1024 + UNWIND_MAX + 2,
			   "a repaired chain of %llu entries", (unsigned long long)copy.raw_callchain_nr);
		FUZZ_CHECK(copy.raw_callchain[0] == chain[0] && copy.raw_callchain[1] == chain[1] &&
			   copy.raw_callchain[2] == PERF_CONTEXT_USER,
			   "the kernel part not kept, or the user part not marked");
	} else {
		FUZZ_CHECK(!userstack_repaired(why) && (got == &fp || got == &dump),
			   "a repaired chain not given, or another sample");
	}
	return 0;
}
