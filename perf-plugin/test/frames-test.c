/*
 * frames-test - unit tests of the plugin's frame cache with a stand-in for
 * perf's resolve_address(): a user address that no map held when it was
 * first seen is named after the library mapped there later (dlopen), as
 * perf script names it, while an address in a file's map is resolved once.
 * Built and run by test/scripts/plugin-unit.sh.
 */
#include "../frames.c"
#include "check.h"

#include <stdio.h>

#define LIB_IP 0x7f0000001010ull	/* in the library once it is mapped */
#define EXE_IP 0x401020ull		/* in the executable from the start */

static bool lib_mapped;
static int lookups[2];			/* resolve_address() calls: LIB_IP, EXE_IP */

static __s32 fake_resolve_address(void *ctx, __u64 address, struct perf_dlfilter_al *al)
{
	(void)ctx;
	if (address == EXE_IP) {
		lookups[1]++;
		al->sym = "main";
		al->symoff = 0x20;
		al->dso = "/usr/bin/prog";
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

	frame_cache_note_comm(fc, 100, 100, "prog");
	if (frame_cache_chain(fc, &s, NULL) != 2) {
		snprintf(buf, len, "(not 2 frames)");
		return;
	}
	f = frame_cache_frames(fc);
	snprintf(buf, len, "%.*s (%.*s)", (int)f[0].sym.len, f[0].sym.s,
		 (int)f[0].dso.len, f[0].dso.s);
}

int main(void)
{
	static const struct perf_dlfilter_fns fns = { .resolve_address = fake_resolve_address };
	struct frame_cache *fc = frame_cache_new(&fns, 127);
	char got[256];

	/* the first sample of a thread without ids (tid -1, pid 0): no
	 * thread before it to compare with (found by fuzz/plugin.c) */
	CHECK_STR(frame_cache_note_comm(fc, 0, -1, "x"), "x");
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
	return CHECK_DONE();
}
