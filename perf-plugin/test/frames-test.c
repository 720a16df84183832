/*
 * frames-test - unit tests of the plugin's frame cache with a stand-in for
 * perf's resolve_address(): a user address that no map held when it was
 * first seen is named after the library mapped there later (dlopen), as
 * perf script names it, while an address in a file's map is resolved once;
 * a process that execs names an address in the program perf maps there at
 * each sample, changed at its MMAP record, not at its exec's COMM; two
 * processes mapping one file at different addresses share its frames,
 * each resolved by perf once (until perf places one elsewhere than the
 * file's map says); an address where the recording maps nothing is
 * "[unknown]" without asking perf, all such addresses one frame.
 * Built and run by test/scripts/plugin-unit.sh.
 */
#include "../frames.c"
#include "check.h"

#include <stdio.h>

#define LIB_IP 0x7f0000001010ull	/* in the library once it is mapped */
#define EXE_IP 0x401020ull		/* in the executable from the start */

static bool lib_mapped;
static const char *exe = "/usr/bin/prog";	/* what perf maps at EXE_IP */
static int lookups[2];			/* resolve_address() calls: LIB_IP, EXE_IP */

static __s32 fake_resolve_address(void *ctx, __u64 address, struct perf_dlfilter_al *al)
{
	(void)ctx;
	if (address == EXE_IP) {
		lookups[1]++;
		al->sym = "main";
		al->symoff = 0x20;
		al->dso = exe;
		al->addr = 0x1020;
		return 0;
	}
	lookups[0]++;
	if (address != LIB_IP || !lib_mapped)
		return -1;
	al->sym = "plugin_entry";
	al->symoff = 0x10;
	al->dso = "/usr/lib/libplug.so";
	al->addr = 0x1010;
	return 0;
}

/* The leaf's symbol and DSO, "SYM (DSO)", of a one-sample chain. */
static void leaf(struct frame_cache *fc, char *buf, size_t len)
{
	static __u64 chain[] = { PERF_CONTEXT_USER, LIB_IP, EXE_IP };
	struct perf_dlfilter_sample s = {
		.size = sizeof(s), .ip = LIB_IP, .pid = 100, .tid = 100,
		.raw_callchain = chain, .raw_callchain_nr = 3,
	};
	const struct perf_frame *f;

	frame_cache_note_comm(fc, 100, 100, "prog", 0);
	if (frame_cache_chain(fc, &s, NULL) != 2) {
		snprintf(buf, len, "(not 2 frames)");
		return;
	}
	f = frame_cache_frames(fc);
	snprintf(buf, len, "%.*s (%.*s)", (int)f[0].sym.len, f[0].sym.s,
		 (int)f[0].dso.len, f[0].dso.s);
}

/* The maps of process 100 change at time 20 (the new program's MMAP). */
/* thread 7's name: changes at 100 and 200 (perf's COMMs) */
static uint32_t fake_name_gen(void *data, int tid, uint64_t time, uint64_t *until)
{
	(void)data;
	*until = UINT64_MAX;
	if (tid != 7)
		return 0;
	if (time == 100 || time == 200) {
		*until = time;
		return FRAME_CACHE_NO_GEN;
	}
	*until = time < 100 ? 100 : time < 200 ? 200 : UINT64_MAX;
	return time < 100 ? 0 : time < 200 ? 1 : 2;
}

static uint32_t fake_gen(void *data, int pid, uint64_t time, uint64_t *until)
{
	(void)data;
	(void)pid;
	*until = time <= 20 ? 20 : UINT64_MAX;
	return time < 20 ? 0 : time == 20 ? FRAME_CACHE_NO_GEN : 1;
}

/* The leaf of a sample of EXE_IP in process 100 named comm at time. */
static void exe_leaf(struct frame_cache *fc, const char *comm, uint64_t time, char *buf,
		     size_t len)
{
	static __u64 chain[] = { PERF_CONTEXT_USER, EXE_IP };
	struct perf_dlfilter_sample s = {
		.size = sizeof(s), .ip = EXE_IP, .pid = 100, .tid = 100,
		.raw_callchain = chain, .raw_callchain_nr = 2,
	};
	const struct perf_frame *f;

	frame_cache_note_comm(fc, 100, 100, comm, time);
	if (frame_cache_chain(fc, &s, NULL) != 1) {
		snprintf(buf, len, "(not 1 frame)");
		return;
	}
	f = frame_cache_frames(fc);
	snprintf(buf, len, "%.*s", (int)f[0].dso.len, f[0].dso.s);
}

/*
 * Processes 200 and 300 map /usr/bin/cc at different addresses (the
 * file's first 64 KiB); perf resolves in the process of cur_base, and
 * places addresses misplace bytes away from where the maps say.
 */
#define CC_SIZE 0x10000ull
#define CC_BASE(pid) ((pid) == 200 ? 0x555500000000ull : 0x555600000000ull)
static uint64_t cur_base;
static uint64_t misplace;
static const char *cc_dso = "/usr/bin/cc";	/* perf's name of it */
static int cc_lookups;

static __s32 fake_resolve_cc(void *ctx, __u64 address, struct perf_dlfilter_al *al)
{
	(void)ctx;
	cc_lookups++;
	if (address < cur_base || address >= cur_base + CC_SIZE)
		return -1;
	al->sym = "compile";
	al->symoff = (uint32_t)(address - cur_base);
	al->dso = cc_dso;
	al->addr = address - cur_base + misplace;
	return 0;
}

static int map_asks;	/* fake_file_at() and fake_may_map() calls */

static bool fake_file_at(void *data, int pid, uint64_t addr, uint64_t time, uint32_t *file,
			 const char **name, uint64_t *offset)
{
	(void)data;
	(void)time;
	map_asks++;
	if (addr < CC_BASE(pid) || addr >= CC_BASE(pid) + CC_SIZE)
		return false;
	*file = 0;
	*name = "/usr/bin/cc";
	*offset = addr - CC_BASE(pid);
	return true;
}

static bool fake_may_map(void *data, int pid, uint64_t addr)
{
	(void)data;
	map_asks++;
	return addr >= CC_BASE(pid) && addr < CC_BASE(pid) + CC_SIZE;
}

/* The word of the frame at offset in /usr/bin/cc of process pid: set to word when 0. */
static uint32_t cc_word(struct frame_cache *fc, int pid, uint64_t offset, uint32_t word)
{
	uint32_t id, *w;

	cur_base = CC_BASE(pid);
	frame_cache_note_comm(fc, pid, pid, "cc", 10);
	w = frame_cache_word(fc, NULL, frame_cache_space(fc), cur_base + offset, &id);
	if (!w)
		return UINT32_MAX;
	if (!*w)
		*w = word;
	return *w;
}

static void test_shared_files(void)
{
	static const struct perf_dlfilter_fns fns = { .resolve_address = fake_resolve_cc };
	struct frame_cache *fc = frame_cache_new(&fns, 127);
	uint64_t by_file, misplaced, ip = 0;
	const char *file = "";
	uint32_t id, *w;
	int asks;

	frame_cache_set_lean(fc);
	frame_cache_share_unmapped(fc);
	frame_cache_set_files(fc, fake_file_at, NULL);
	frame_cache_set_may_map(fc, fake_may_map, NULL);
	/* the first process resolves, the second gets its frame */
	CHECK(cc_word(fc, 200, 0x100, 42) == 42);
	CHECK(cc_lookups == 1);
	CHECK(!frame_cache_word_shared(fc));
	CHECK(cc_word(fc, 300, 0x100, 99) == 42);
	CHECK(frame_cache_word_shared(fc));		/* new to process 300 */
	CHECK(cc_lookups == 1);
	/* and the other way round */
	CHECK(cc_word(fc, 300, 0x200, 43) == 43);
	CHECK(cc_word(fc, 200, 0x200, 99) == 43);
	CHECK(cc_lookups == 2);
	/* each address once in its own process */
	CHECK(cc_word(fc, 200, 0x100, 99) == 42);
	CHECK(!frame_cache_word_shared(fc));
	CHECK(cc_lookups == 2);
	frame_cache_file_stats(fc, &by_file, &misplaced);
	CHECK(by_file == 2 && misplaced == 0);
	/* an address the recording maps nothing at: unknown, perf not asked;
	 * shared, every other such address gets its frame and word */
	frame_cache_note_comm(fc, 300, 300, "cc", 10);
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x1000, &id)));
	CHECK_STR(frame_cache_word_frame(fc, NULL)->sym.s, "[unknown]");
	*w = 7;
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x2000, &id)));
	CHECK(*w == 0);		/* the first one's word is its own slot's */
	CHECK_STR(frame_cache_word_frame(fc, NULL)->pc.s, "2000");
	*w = 8;
	frame_cache_note_comm(fc, 200, 200, "cc", 10);
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x3000, &id)) && *w == 8);
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x1000, &id)) && *w == 8);
	frame_cache_note_comm(fc, 300, 300, "cc", 10);
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x1000, &id)) && *w == 7);
	CHECK(cc_lookups == 2);
	/* an unmapped address again in the same process: the maps are not
	 * asked again; in another process they are, once */
	asks = map_asks;
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x2000, &id)) && *w == 8);
	CHECK(map_asks == asks);
	frame_cache_note_comm(fc, 200, 200, "cc", 10);
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x2000, &id)) && *w == 8);
	CHECK(map_asks > asks);
	asks = map_asks;
	CHECK((w = frame_cache_word(fc, NULL, frame_cache_space(fc), 0x2000, &id)) && *w == 8);
	CHECK(map_asks == asks);
	/* perf names the file otherwise: that offset is not shared */
	cc_dso = "/usr/bin/cc-by-another-name";
	CHECK(cc_word(fc, 300, 0x280, 50) == 50);
	CHECK(cc_word(fc, 200, 0x280, 51) == 51);
	CHECK(cc_lookups == 4);
	cc_dso = "/usr/bin/cc";
	CHECK(cc_word(fc, 300, 0x2c0, 52) == 52);
	CHECK(cc_word(fc, 200, 0x2c0, 53) == 52);	/* still shared */
	CHECK(cc_lookups == 5);
	CHECK(frame_cache_misplaced(fc, &file, &ip) == 0);
	/* perf places an address elsewhere than the file's map said: no
	 * more sharing, every new address resolved by perf, and what was
	 * shared before is in doubt */
	misplace = 8;
	CHECK(cc_word(fc, 300, 0x300, 44) == 44);
	CHECK(cc_word(fc, 200, 0x300, 45) == 45);
	CHECK(cc_lookups == 7);
	frame_cache_file_stats(fc, &by_file, &misplaced);
	CHECK(by_file == 3 && misplaced == 1);
	CHECK(frame_cache_misplaced(fc, &file, &ip) == 3);
	CHECK_STR(file, "/usr/bin/cc");
	CHECK(ip == CC_BASE(300) + 0x300);
	misplace = 0;
	CHECK(cc_word(fc, 200, 0x400, 46) == 46);
	CHECK(cc_word(fc, 300, 0x400, 47) == 47);
	CHECK(cc_lookups == 9);
	frame_cache_free(fc);
}

int main(void)
{
	static const struct perf_dlfilter_fns fns = { .resolve_address = fake_resolve_address };
	struct frame_cache *fc = frame_cache_new(&fns, 127);
	char got[256];

	/* the first sample of a thread without ids (tid -1, pid 0): no
	 * thread before it to compare with (found by fuzz/plugin.c) */
	CHECK_STR(frame_cache_note_comm(fc, 0, -1, "x", 0), "x");
	frame_cache_free(fc);
	fc = frame_cache_new(&fns, 127);

	leaf(fc, got, sizeof(got));
	CHECK_STR(got, "[unknown] ([unknown])");
	lib_mapped = true;	/* the process dlopen()s the library */
	leaf(fc, got, sizeof(got));
	CHECK_STR(got, "plugin_entry+0x10 (/usr/lib/libplug.so)");
	leaf(fc, got, sizeof(got));
	CHECK_STR(got, "plugin_entry+0x10 (/usr/lib/libplug.so)");
	/* the executable's address was looked up once, then cached */
	CHECK(lookups[1] == 1);
	frame_cache_free(fc);

	/*
	 * Process 100 execs a new program at time 10 (its COMM), whose
	 * MMAP comes at time 20: perf names the address in the old program
	 * until then, in the new one after
	 */
	fc = frame_cache_new(&fns, 127);
	frame_cache_set_gen(fc, fake_gen, NULL);
	exe_leaf(fc, "prog", 5, got, sizeof(got));
	CHECK_STR(got, "/usr/bin/prog");
	exe_leaf(fc, "new", 15, got, sizeof(got));	/* after the COMM */
	CHECK_STR(got, "/usr/bin/prog");
	exe = "/usr/bin/new";				/* the MMAP, at 20 */
	exe_leaf(fc, "new", 20, got, sizeof(got));
	CHECK_STR(got, "/usr/bin/new");
	exe_leaf(fc, "new", 25, got, sizeof(got));
	CHECK_STR(got, "/usr/bin/new");
	lookups[1] = 0;
	exe_leaf(fc, "new", 30, got, sizeof(got));
	CHECK_STR(got, "/usr/bin/new");
	CHECK(lookups[1] == 0);				/* cached again */
	frame_cache_free(fc);

	/*
	 * A thread's name, known without perf until perf's next change of
	 * it, for the same process; nothing without the changes' times
	 */
	fc = frame_cache_new(&fns, 127);
	CHECK(!frame_cache_known_comm(fc, 7, 7, 10));
	frame_cache_note_comm(fc, 7, 7, "a", 10);
	CHECK(!frame_cache_known_comm(fc, 7, 7, 11));
	frame_cache_free(fc);
	fc = frame_cache_new(&fns, 127);
	frame_cache_set_name_gen(fc, fake_name_gen, NULL);
	CHECK(!frame_cache_known_comm(fc, 7, 7, 10));	/* never told */
	frame_cache_note_comm(fc, 7, 7, "a", 10);
	CHECK_STR(frame_cache_known_comm(fc, 7, 7, 50), "a");
	frame_cache_note_comm(fc, 8, 8, "b", 51);	/* another thread between */
	CHECK_STR(frame_cache_known_comm(fc, 7, 7, 99), "a");
	CHECK(frame_cache_space(fc) == 7);		/* and its space again */
	CHECK(!frame_cache_known_comm(fc, 7, 7, 100));	/* a change's very time */
	CHECK(!frame_cache_known_comm(fc, 7, 7, 150));	/* after it */
	CHECK(!frame_cache_known_comm(fc, 7, 7, 5));	/* before the first */
	CHECK(!frame_cache_known_comm(fc, 9, 7, 50));	/* another process's tid 7 */
	frame_cache_note_comm(fc, 7, 7, "c", 150);
	CHECK_STR(frame_cache_known_comm(fc, 7, 7, 199), "c");
	CHECK(!frame_cache_known_comm(fc, 7, 7, 200));
	frame_cache_note_comm(fc, 7, 7, "c", 200);	/* at the change: not kept */
	CHECK(!frame_cache_known_comm(fc, 7, 7, 201));
	CHECK_STR(frame_cache_known_comm(fc, 8, 8, 1000), "b");	/* no change of 8 */
	frame_cache_free(fc);

	test_shared_files();
	return CHECK_DONE();
}
