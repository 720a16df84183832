/*
 * fuzz/perfdata.c - the perf plugin's perf.data reader
 * (perf-plugin/perfdata.c) on any bytes: the file header, the records of
 * the data section (or of a pipe file), the feature table, and what the
 * records say about processes.
 *
 * Input: the file, as is.  Checked: an unreadable file is an error naming
 * it, never a half-made result; damage is described naming the file and
 * makes no claim past it; a file read whole stays whole when read again
 * (the same damage, names and times); a whole file cut inside its data
 * section is cut short; every name is a C string of at most 15 bytes (a
 * thread's) or an executable's file name (no '/'), for the pids the
 * records mention and for pids they do not; a process's maps' generation
 * never goes back in time, holds until the time it gives, and a change
 * comes at that time; the records perf may hand over late touch no more
 * processes than there are of them, the same when read again.
 */
#include "fuzz.h"

#include "perfdata.h"

#include <fcntl.h>
#include <glib.h>

static struct perfdata *read_path(const char *path, GError **err)
{
	int fd = open(path, O_RDONLY);
	struct perfdata *pd;

	FUZZ_CHECK(fd >= 0, "cannot open %s", path);
	pd = perfdata_read(fd, "fuzz.data", err);
	close(fd);
	return pd;
}

/*
 * The generation of pid's maps (or of tid's name: gen_at is
 * perfdata_map_gen() or perfdata_name_gen()) at time, before it and at
 * its end.
 */
static void check_gen(const struct perfdata *pd,
		      uint32_t (*gen_at)(const struct perfdata *, int, uint64_t, uint64_t *),
		      int pid, uint64_t time)
{
	uint64_t until, u2;
	uint32_t gen, g2;

	if (!perfdata_has_map_times(pd))
		return;
	gen = gen_at(pd, pid, time, &until);
	if (gen == PERFDATA_NO_GEN) {
		FUZZ_CHECK(until == time, "no generation at %lu, until %lu",
			   (unsigned long)time, (unsigned long)until);
		return;
	}
	FUZZ_CHECK(until > time || until == UINT64_MAX, "generation %u at %lu until %lu", gen, (unsigned long)time,
		   (unsigned long)until);
	if (time > 0) {
		g2 = gen_at(pd, pid, time - 1, &u2);
		FUZZ_CHECK(g2 == PERFDATA_NO_GEN || g2 <= gen, "generation %u, then %u", g2, gen);
		FUZZ_CHECK(g2 != gen || u2 == until, "one generation, two ends");
	}
	if (until != UINT64_MAX) {
		g2 = gen_at(pd, pid, until, &u2);
		FUZZ_CHECK(g2 == PERFDATA_NO_GEN && u2 == until, "no change at %lu",
			   (unsigned long)until);
	}
}

/* tid's first switch-in at or after from: in range, and the first */
static void check_switch_in(const struct perfdata *pd, int tid, uint64_t from)
{
	uint64_t t, t2;

	if (!perfdata_switch_in(pd, tid, from, UINT64_MAX, &t))
		return;
	FUZZ_CHECK(t >= from, "switch-in at %lu, before %lu", (unsigned long)t,
		   (unsigned long)from);
	FUZZ_CHECK(perfdata_switch_in(pd, tid, from, t, &t2) && t2 == t,
		   "switch-in at %lu, then not", (unsigned long)t);
	FUZZ_CHECK(t == from || !perfdata_switch_in(pd, tid, from, t - 1, &t2),
		   "a switch-in before the first");
}

static void check_names(const struct perfdata *pd, const uint8_t *data, size_t size)
{
	/* pids the input holds in its records (any 4 aligned bytes) and a few others */
	for (size_t i = 0; i + 4 <= size && i < 4096; i += 4) {
		int pid;
		bool exe;
		const char *name;

		memcpy(&pid, data + i, 4);
		/* and where its mappings are: asked twice, the same answer
		 * (a walk through parents that fork each other ends) */
		if (i + 12 <= size) {
			uint64_t addr;

			memcpy(&addr, data + i + 4, 8);
			FUZZ_CHECK(perfdata_may_map(pd, pid, addr) == perfdata_may_map(pd, pid, addr),
				   "may_map changed its answer");
			check_gen(pd, perfdata_map_gen, pid, addr);
			check_gen(pd, perfdata_name_gen, pid, addr);
			check_switch_in(pd, pid, addr);
		}
		name = perfdata_process_name(pd, i < 16 ? (int)i - 8 : pid, &exe);
		if (!name)
			continue;
		FUZZ_CHECK(exe ? !strchr(name, '/') && *name : strlen(name) <= 16,
			   "pid %d named '%s'%s", pid, name, exe ? " (exe)" : "");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	GError *err = NULL;
	struct perfdata *pd, *again;
	uint64_t first, last, first2, last2, lost, lost_samples, late;
	unsigned procs, procs2;
	const char *damage;

	pd = read_path(fuzz_file(data, size), &err);
	if (!pd) {
		FUZZ_CHECK(err && g_str_has_prefix(err->message, "fuzz.data: "),
			   "no result, and no error naming the file");
		g_error_free(err);
		return 0;
	}
	FUZZ_CHECK(!err, "a result and an error");
	damage = perfdata_damage(pd);
	FUZZ_CHECK(!damage || g_str_has_prefix(damage, "fuzz.data: "), "damage '%s'", damage);
	check_names(pd, data, size);
	perfdata_lost(pd, &lost, &lost_samples);
	late = perfdata_unordered(pd, &procs);
	FUZZ_CHECK(procs <= late, "%u processes of %lu late records", procs, (unsigned long)late);

	/* the same bytes read again give the same */
	again = read_path(fuzz_file(data, size), &err);
	FUZZ_CHECK(again, "read once, not twice");
	FUZZ_CHECK(g_strcmp0(damage, perfdata_damage(again)) == 0, "damage differs");
	FUZZ_CHECK(perfdata_sample_times(pd, &first, &last) ==
		   perfdata_sample_times(again, &first2, &last2) &&
		   first == first2 && last == last2, "sample times differ");
	FUZZ_CHECK(perfdata_unordered(again, &procs2) == late && procs2 == procs,
		   "late records differ");
	perfdata_free(again);

	/* a whole file cut inside its data section is cut short */
	if (!damage && !perfdata_is_pipe(pd) && size >= 104) {
		uint64_t off, len, cut;

		memcpy(&off, data + 40, 8);
		memcpy(&len, data + 48, 8);
		cut = off + len / 2;
		if (len && cut < size) {
			again = read_path(fuzz_file(data, (size_t)cut), &err);
			FUZZ_CHECK(again && perfdata_damage(again) &&
				   strstr(perfdata_damage(again), "cut short"),
				   "cut at byte %lu of a whole file, read as '%s'", (unsigned long)cut,
				   again && perfdata_damage(again) ? perfdata_damage(again) : "whole");
			perfdata_free(again);
			g_clear_error(&err);
		}
	}
	perfdata_free(pd);
	return 0;
}
