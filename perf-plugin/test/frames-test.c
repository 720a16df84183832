/*
 * frames-test - unit tests of the plugin's frame cache with a stand-in for
 * perf's resolve_address(): a user address that no map held when it was
 * first seen is named after the library mapped there later (dlopen), as
 * perf script names it, while an address in a file's map is resolved once;
 * a process that execs names an address in the program perf maps there at
 * each sample, changed at its MMAP record, not at its exec's COMM.
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
	return CHECK_DONE();
}
