/*
 * stacks-test - unit tests of the plugin's stack tree (stacks.h) with a
 * stand-in for perf's resolve_address(): the folded text of a chain; runs
 * cached (a chain seen again, or a known kernel run under a new user run,
 * asks perf nothing); an address in no map named after the library mapped
 * there later, unless the recording maps nothing there for the process
 * (then perf is not asked); max_stack; a guest context; counts; a
 * count added to later (stacks_slot()); stacks_prefetch() changes no
 * count; stacks_flush() with two threads as with one.
 * Built and run by test/scripts/plugin-unit.sh.
 */
#include "../frames.c"
#include "../stacks.c"
#include "check.h"

#include <stdio.h>

#define K1 0xffffffff81000010ull	/* do_syscall_64 */
#define K2 0xffffffff81000120ull	/* ksys_read */
#define MAIN 0x401020ull
#define WORK 0x401110ull
#define LIB 0x7f0000001010ull		/* in the library once it is mapped */
#define JUNK 0x2ull			/* never mapped */

static bool lib_mapped;
static int lookups, lib_lookups, junk_lookups;

static __s32 fake_resolve_address(void *ctx, __u64 address, struct perf_dlfilter_al *al)
{
	(void)ctx;
	lookups++;
	al->is_kernel_ip = address >= 0xffff000000000000ull;
	switch (address) {
	case K1: al->sym = "do_syscall_64"; al->symoff = 0x10; al->dso = "[kernel.kallsyms]"; break;
	case K2: al->sym = "ksys_read"; al->symoff = 0x20; al->dso = "[kernel.kallsyms]"; break;
	case MAIN: al->sym = "main"; al->symoff = 0x20; al->dso = "/usr/bin/prog"; break;
	case WORK: al->sym = "work(int)"; al->symoff = 0x10; al->dso = "/usr/bin/prog"; break;
	case LIB:
		lib_lookups++;
		if (!lib_mapped)
			return -1;
		al->sym = "plugin_entry";
		al->symoff = 0x10;
		al->dso = "/usr/lib/libplug.so";
		break;
	default:
		junk_lookups += address == JUNK;
		return -1;
	}
	al->addr = address & 0xffff;
	return 0;
}

static bool junk_unmapped(void *data, int pid, uint64_t addr)
{
	(void)data;
	(void)pid;
	return addr != JUNK;
}

struct fixture {
	struct frame_cache *fc;
	struct stacks *sk;
	struct fold_table *t;
	uint32_t proc;
	GString *key;
};

/* The folded text of one sample of process 100 ("prog") with chain c. */
static const char *fold(struct fixture *f, const __u64 *c, size_t n)
{
	struct perf_dlfilter_sample s = {
		.size = sizeof(s), .pid = 100, .tid = 100,
		.raw_callchain = c, .raw_callchain_nr = n,
	};

	frame_cache_note_comm(f->fc, 100, 100, "prog", 0);
	stacks_key(f->sk, f->proc, stacks_chain(f->sk, &s, NULL, f->proc), f->key);
	return f->key->str;
}

static void setup(struct fixture *f, const struct frame_name_opts *names, unsigned max)
{
	static const struct perf_dlfilter_fns fns = { .resolve_address = fake_resolve_address };

	f->fc = frame_cache_new(&fns, max);
	f->sk = stacks_new(names, f->fc, max);
	f->t = fold_table_new();
	f->proc = stacks_proc(f->sk, f->t, "prog", 4, false);
	f->key = g_string_new(NULL);
}

static void teardown(struct fixture *f)
{
	stacks_free(f->sk);
	frame_cache_free(f->fc);
	fold_table_free(f->t);
	g_string_free(f->key, TRUE);
}

static void entry(struct fold_entry *e, void *data)
{
	char buf[FK_COUNT_BUFSZ];

	buf[fk_count_format(e->count[0], buf)] = '\0';
	g_string_append_printf(data, "%.*s %s\n", (int)e->len, e->stack, buf);
}

int main(void)
{
	static const struct frame_name_opts names = { .annotate_kernel = true };
	static const __u64 chain[] = { PERF_CONTEXT_KERNEL, K2, K1, PERF_CONTEXT_USER, WORK, MAIN };
	static const __u64 other_user[] = { PERF_CONTEXT_KERNEL, K2, K1, PERF_CONTEXT_USER, MAIN };
	static const __u64 with_lib[] = { PERF_CONTEXT_USER, LIB, MAIN };
	static const __u64 with_junk[] = { PERF_CONTEXT_USER, JUNK, MAIN };
	static const __u64 guest[] = { PERF_CONTEXT_USER, MAIN, PERF_CONTEXT_GUEST, WORK };
	struct fixture f;
	GString *out = g_string_new(NULL);
	int before;

	setup(&f, &names, 127);
	CHECK_STR(fold(&f, chain, 6), "prog;main;work;do_syscall_64_[k];ksys_read_[k]");
	before = lookups;
	CHECK_STR(fold(&f, chain, 6), "prog;main;work;do_syscall_64_[k];ksys_read_[k]");
	CHECK(lookups == before);	/* the chain again: perf is asked nothing */
	CHECK_STR(fold(&f, other_user, 5), "prog;main;do_syscall_64_[k];ksys_read_[k]");
	CHECK(lookups == before);	/* known runs in a new chain: nothing either */

	/* an address in no map, which a library mapped later names */
	CHECK_STR(fold(&f, with_lib, 3), "prog;main;[unknown]");
	CHECK_STR(fold(&f, with_lib, 3), "prog;main;[unknown]");
	lib_mapped = true;
	CHECK_STR(fold(&f, with_lib, 3), "prog;main;plugin_entry");
	before = lib_lookups;
	CHECK_STR(fold(&f, with_lib, 3), "prog;main;plugin_entry");
	CHECK(lib_lookups == before);	/* in a file's map now: cached */

	/* a guest context drops the chain, as perf does */
	CHECK_STR(fold(&f, guest, 4), "prog");

	/* counts go to the process's table at the end, once */
	stacks_add(f.sk, f.proc, stacks_chain(f.sk, &(struct perf_dlfilter_sample){
		.raw_callchain = chain, .raw_callchain_nr = 6 }, NULL, f.proc), fk_count_from_u64(3));
	stacks_add(f.sk, f.proc, stacks_chain(f.sk, &(struct perf_dlfilter_sample){
		.raw_callchain = chain, .raw_callchain_nr = 6 }, NULL, f.proc), fk_count_from_u64(4));
	stacks_flush(f.sk);
	stacks_flush(f.sk);
	fold_table_foreach(f.t, entry, out);
	CHECK_STR(out->str, "prog;main;work;do_syscall_64_[k];ksys_read_[k] 7\n");
	teardown(&f);

	/* an address the recording never maps for the process: "[unknown]"
	 * without asking perf */
	setup(&f, &names, 127);
	frame_cache_set_may_map(f.fc, junk_unmapped, NULL);
	CHECK_STR(fold(&f, with_junk, 3), "prog;main;[unknown]");
	CHECK_STR(fold(&f, with_junk, 3), "prog;main;[unknown]");
	CHECK(junk_lookups == 0);
	teardown(&f);
	/* ... and without that knowledge, every time */
	setup(&f, &names, 127);
	junk_lookups = 0;
	CHECK_STR(fold(&f, with_junk, 3), "prog;main;[unknown]");
	CHECK_STR(fold(&f, with_junk, 3), "prog;main;[unknown]");
	CHECK(junk_lookups == 2);
	teardown(&f);

	/*
	 * stacks_sample(): a chain repeated on a CPU is counted without
	 * asking perf, but one with an address in no map is checked again
	 * at each sample (a library mapped there later names it)
	 */
	setup(&f, &names, 127);
	lib_mapped = false;
	{
		struct perf_dlfilter_sample s = {
			.size = sizeof(s), .pid = 100, .tid = 100, .cpu = 1,
			.raw_callchain = chain, .raw_callchain_nr = 6,
		};

		struct perf_dlfilter_sample o = s;

		frame_cache_note_comm(f.fc, 100, 100, "prog", 0);
		stacks_prefetch(f.sk, &s);	/* a hint: changes no count */
		stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(1));
		before = lookups;
		stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(2));
		CHECK(lookups == before);
		s.cpu = 2;	/* another CPU: the run cache, no lookup either */
		/* (one sample prefetched, another counted: its own chain's) */
		o.raw_callchain = with_lib;
		o.raw_callchain_nr = 3;
		stacks_prefetch(f.sk, &o);
		stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(4));
		CHECK(lookups == before);
		s.raw_callchain = with_lib;
		s.raw_callchain_nr = 3;
		stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(8));
		before = lib_lookups;
		stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(16));
		CHECK(lib_lookups == before + 1);	/* asked again */
		lib_mapped = true;
		stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(32));
		/* another process with the same raw chain: not its memo */
		s.raw_callchain = chain;
		s.raw_callchain_nr = 6;
		frame_cache_note_comm(f.fc, 200, 200, "other", 0);
		stacks_sample(f.sk, &s, NULL, stacks_proc(f.sk, f.t, "other", 5, false),
			      fk_count_from_u64(64));
	}
	stacks_flush(f.sk);
	g_string_truncate(out, 0);
	fold_table_foreach(f.t, entry, out);
	CHECK_STR(out->str, "prog;main;work;do_syscall_64_[k];ksys_read_[k] 7\n"
			    "prog;main;[unknown] 24\n"
			    "prog;main;plugin_entry 32\n"
			    "other;main;work;do_syscall_64_[k];ksys_read_[k] 64\n");
	teardown(&f);

	/*
	 * stacks_slot(): a count to add to later (off-CPU, when a wait
	 * ends); one never added to is not written, one added 0 to is
	 */
	setup(&f, &names, 127);
	{
		struct perf_dlfilter_sample s = {
			.size = sizeof(s), .pid = 100, .tid = 100, .cpu = 1,
			.raw_callchain = chain, .raw_callchain_nr = 6,
		};
		uint32_t a, b, c;

		frame_cache_note_comm(f.fc, 100, 100, "prog", 0);
		a = stacks_slot(f.sk, &s, NULL, f.proc);
		CHECK(stacks_slot(f.sk, &s, NULL, f.proc) == a);
		s.raw_callchain_nr = 3;	/* the kernel's run alone */
		b = stacks_slot(f.sk, &s, NULL, f.proc);
		CHECK(b != a);
		s.raw_callchain_nr = 6;
		frame_cache_note_comm(f.fc, 200, 200, "other", 0);
		c = stacks_slot(f.sk, &s, NULL, stacks_proc(f.sk, f.t, "other", 5, false));
		CHECK(c != a && c != b);
		stacks_add_at(f.sk, a, fk_count_from_u64(5));
		stacks_add_at(f.sk, c, 0);
		stacks_add_at(f.sk, a, fk_count_from_u64(2));
	}
	stacks_flush(f.sk);
	g_string_truncate(out, 0);
	fold_table_foreach(f.t, entry, out);
	CHECK_STR(out->str, "prog;main;work;do_syscall_64_[k];ksys_read_[k] 7\n"
			    "other;main;work;do_syscall_64_[k];ksys_read_[k] 0\n");
	teardown(&f);

	/*
	 * stacks_flush() with a second thread making half the texts: the
	 * same adds, in the same order, as with one (thousands of stacks:
	 * enough for the split)
	 */
	{
		GString *got[2] = { g_string_new(NULL), g_string_new(NULL) };
		static const __u64 user[] = { MAIN, WORK, LIB };

		lib_mapped = true;
		for (unsigned threads = 1; threads <= 2; threads++) {
			setup(&f, &names, 127);
			stacks_set_threads(f.sk, threads);
			frame_cache_note_comm(f.fc, 100, 100, "prog", 0);
			for (unsigned i = 0; i < 6561; i++) {	/* 3^8 chains */
				__u64 c[9] = { PERF_CONTEXT_USER };
				struct perf_dlfilter_sample s = {
					.size = sizeof(s), .pid = 100, .tid = 100, .cpu = 1,
					.raw_callchain = c, .raw_callchain_nr = 9,
				};

				for (unsigned k = 0, v = i; k < 8; k++, v /= 3)
					c[k + 1] = user[v % 3];
				stacks_sample(f.sk, &s, NULL, f.proc, fk_count_from_u64(i + 1));
			}
			CHECK(f.sk->marks->len >= 2);	/* split in two */
			stacks_flush(f.sk);
			fold_table_foreach(f.t, entry, got[threads - 1]);
			teardown(&f);
		}
		CHECK(got[0]->len > 6561 * 20);
		CHECK_STR(got[1]->str, got[0]->str);
		g_string_free(got[0], TRUE);
		g_string_free(got[1], TRUE);
	}

	/* max_stack counts frames from the leaf, markers aside */
	setup(&f, &names, 3);
	CHECK_STR(fold(&f, chain, 6), "prog;work;do_syscall_64_[k];ksys_read_[k]");
	teardown(&f);
	g_string_free(out, TRUE);
	return CHECK_DONE();
}
