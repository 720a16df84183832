/*
 * perfdata-test - unit tests of the plugin's perf.data reader on files
 * built here record by record: process names (main thread, fork, exec,
 * executable), lost events, the sample times, switch-ins (perf record
 * --switch-events), where an address is in a file (perfdata_file_at()),
 * and every kind of damage
 * (cut short, unfinished, a record too short or too long, a cut pipe
 * file, a read error); and the reader's get() across its blocks.  Built
 * and run by test/scripts/plugin-unit.sh.
 */
#include <errno.h>
#include <unistd.h>

/* perfdata.c reads through fake_pread(), which fails as read_fail() says */
static ssize_t fake_pread(int fd, void *buf, size_t n, off_t off);
#define pread fake_pread
#include "../perfdata.c"
#undef pread
#include "check.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t fail_at = -1;
static int fail_errno;

/* Reads of the bytes from at on fail with error, or end there if error is 0; -1: none. */
static void read_fail(int64_t at, int error)
{
	fail_at = at;
	fail_errno = error;
}

static ssize_t fake_pread(int fd, void *buf, size_t n, off_t off)
{
	if (fail_at >= 0 && off + (off_t)n > fail_at) {
		if (off >= fail_at) {
			errno = fail_errno;
			return fail_errno ? -1 : 0;
		}
		n = (size_t)(fail_at - off);
	}
	return pread(fd, buf, n, off);
}

static void put64(GByteArray *b, uint64_t v) { g_byte_array_append(b, (guint8 *)&v, 8); }
static void put32(GByteArray *b, uint32_t v) { g_byte_array_append(b, (guint8 *)&v, 4); }

static void set64(GByteArray *b, size_t at, uint64_t v) { memcpy(b->data + at, &v, 8); }

/* a record: header, payload, padded to 8 bytes */
static void record(GByteArray *b, uint32_t type, uint16_t misc, const void *payload, size_t n)
{
	uint16_t size = (uint16_t)(8 + (n + 7) / 8 * 8);
	static const guint8 zero[8];

	put32(b, type);
	g_byte_array_append(b, (guint8 *)&misc, 2);
	g_byte_array_append(b, (guint8 *)&size, 2);
	g_byte_array_append(b, payload, (guint)n);
	g_byte_array_append(b, zero, (guint)(size - 8 - n));
}

static void comm(GByteArray *b, uint32_t pid, uint32_t tid, const char *name, bool exec)
{
	guint8 p[8 + 16] = { 0 };

	memcpy(p, &pid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, name, strlen(name) + 1);
	record(b, REC_COMM, exec ? MISC_EXEC : 0, p, 8 + strlen(name) + 1);
}

static void fork_(GByteArray *b, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	uint32_t p[6] = { pid, ppid, tid, ptid, 0, 0 };

	record(b, REC_FORK, 0, p, sizeof(p));
}

static void mmap2_at(GByteArray *b, uint32_t pid, const char *file, uint32_t prot,
		     uint64_t addr, uint64_t len)
{
	guint8 p[64 + 64] = { 0 };

	memcpy(p, &pid, 4);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &addr, 8);
	memcpy(p + 16, &len, 8);
	memcpy(p + 56, &prot, 4);
	memcpy(p + 64, file, strlen(file) + 1);
	record(b, REC_MMAP2, 0, p, 64 + strlen(file) + 1);
}

static void mmap2(GByteArray *b, uint32_t pid, const char *file, uint32_t prot)
{
	mmap2_at(b, pid, file, prot, 0, 0);
}

/*
 * A pipe file's event: sample_type with the tid, time, cpu and identifier
 * in every record's sample_id trailer (sample_id_all) unless !id_all.
 */
static void attr(GByteArray *b, bool id_all)
{
	guint8 a[128 + 8] = { 0 };
	uint64_t type = S_TID | S_TIME | S_CPU | S_IDENTIFIER | 1 /* ip */;
	uint64_t flags = id_all ? SAMPLE_ID_ALL : 0;

	memcpy(a + 4, &(uint32_t){ 128 }, 4);
	memcpy(a + ATTR_SAMPLE_TYPE, &type, 8);
	memcpy(a + ATTR_FLAGS, &flags, 8);
	record(b, REC_HEADER_ATTR, 0, a, sizeof(a));
}

static void mmap2_file(GByteArray *b, uint32_t pid, const char *file, uint64_t time,
		       uint64_t addr, uint64_t len, uint64_t pgoff, uint64_t ino, uint32_t prot);

/* An executable MMAP2 of pid at time of [addr, addr + len), with attr()'s trailer. */
static void mmap2_timed_at(GByteArray *b, uint32_t pid, const char *file, uint64_t time,
			   uint64_t addr, uint64_t len)
{
	mmap2_file(b, pid, file, time, addr, len, 0, 0, 5);
}

/* An executable MMAP2 of pid at time, always at the same address. */
static void mmap2_timed(GByteArray *b, uint32_t pid, const char *file, uint64_t time)
{
	mmap2_timed_at(b, pid, file, time, 0x400000, 0x1000);
}

/* A COMM of tid at time, with attr()'s trailer. */
static void comm_timed(GByteArray *b, uint32_t pid, uint32_t tid, const char *name, bool exec,
		       uint64_t time)
{
	guint8 p[8 + 16 + 32] = { 0 };
	uint64_t trailer[4] = { pid | (uint64_t)tid << 32, time, 1, 42 };

	memcpy(p, &pid, 4);
	memcpy(p + 4, &tid, 4);
	memcpy(p + 8, name, MIN(strlen(name), 15));
	memcpy(p + 24, trailer, sizeof(trailer));
	record(b, REC_COMM, exec ? MISC_EXEC : 0, p, sizeof(p));
}

/* A sample of tid at time, as attr() shapes it: identifier, ip, tid, time, cpu. */
static void sample_timed(GByteArray *b, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t p[5] = { 42, 0x400100, pid | (uint64_t)tid << 32, time, 1 };

	record(b, REC_SAMPLE, 0, p, sizeof(p));
}

/*
 * A SWITCH_CPU_WIDE record (prev or next pid/tid, then attr()'s trailer)
 * of tid on cpu at time, in or out; n bytes of it when n is not 0.
 */
static void switch_cpu_wide(GByteArray *b, uint32_t tid, uint32_t other, uint32_t cpu,
			    uint64_t time, bool out, size_t n)
{
	uint64_t p[5] = { other | (uint64_t)other << 32, tid | (uint64_t)tid << 32, time,
			  cpu, 42 };

	record(b, REC_SWITCH_CPU_WIDE, out ? MISC_SWITCH_OUT : 0, p, n ? n : sizeof(p));
}

/* A pipe file's header and its event (attr()). */
static GByteArray *pipe_file(bool id_all)
{
	GByteArray *b = g_byte_array_new();

	g_byte_array_append(b, (const guint8 *)"PERFILE2", 8);
	put64(b, 16);
	attr(b, id_all);
	return b;
}

/* perf's PERF_RECORD_FINISHED_ROUND: a header only */
static void round_(GByteArray *b)
{
	record(b, REC_FINISHED_ROUND, 0, NULL, 0);
}

/* A file header for data at [104, 104 + size), features after it. */
static GByteArray *file_header(void)
{
	GByteArray *b = g_byte_array_new();

	g_byte_array_append(b, (const guint8 *)"PERFILE2", 8);
	put64(b, 104);
	for (int i = 0; i < 11; i++)
		put64(b, 0);
	return b;
}

/*
 * Sets the data section to end here; adds features 3, 11 (perf record's
 * command line: "perf record -a -g -- sleep 1") and 21 (sample time).
 */
static void finish(GByteArray *b, uint64_t first, uint64_t last)
{
	static const char *const words[] = { "perf", "record", "-ag", "--", "sleep", "1" };
	uint64_t end = b->len, bits = 1ULL << 3 | 1ULL << 11 | 1ULL << 21;
	uint64_t cmd = end + 48, cmdsize = 4 + G_N_ELEMENTS(words) * (4 + 8);
	/* the data's start: after the header, or where timed_file() put it */
	uint64_t data = u64(b->data + 40) ? u64(b->data + 40) : 104;

	set64(b, 40, data);
	set64(b, 48, end - data);
	set64(b, 72, bits);
	/* the feature table: {offset, size} for bits 3, 11, 21 */
	put64(b, cmd + cmdsize);
	put64(b, 4);
	put64(b, cmd);
	put64(b, cmdsize);
	put64(b, cmd + cmdsize + 4);
	put64(b, 16);
	/* each word in 8 bytes, NUL-padded, as perf pads them */
	put32(b, G_N_ELEMENTS(words));
	for (size_t i = 0; i < G_N_ELEMENTS(words); i++) {
		char w[8] = { 0 };
		strncpy(w, words[i], sizeof(w) - 1);
		put32(b, 8);
		g_byte_array_append(b, (const guint8 *)w, 8);
	}
	put32(b, 0xdeadbeef);	/* feature 3's 4 bytes */
	put64(b, first);
	put64(b, last);
}

static void check_scope(enum perfdata_scope want, const char *line)
{
	char **argv = g_strsplit(line, " ", -1);
	enum perfdata_scope got = scope_of(argv, (int)g_strv_length(argv));

	if (got != want) {
		fprintf(stderr, "scope of '%s': %d, want %d\n", line, got, want);
		check_failures++;
	}
	g_strfreev(argv);
}

static char *tmpdir;

static struct perfdata *read_bytes(GByteArray *b, GError **err)
{
	char *path = g_build_filename(tmpdir, "x.data", NULL);
	struct perfdata *pd;
	int fd;

	CHECK(g_file_set_contents(path, (const char *)b->data, b->len, NULL));
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	pd = perfdata_read(fd, "x.data", err);
	close(fd);
	g_free(path);
	return pd;
}

/*
 * The damage the file's reading finds; and perfdata_cut(), from the
 * header alone, the same when it is the header's (a file's data section
 * cut short, without a size, or out of place), else none.
 */
static void expect_damage(GByteArray *b, const char *want)
{
	GError *err = NULL;
	struct perfdata *pd = read_bytes(b, &err);
	char *path = g_build_filename(tmpdir, "x.data", NULL), *cut;
	int fd = open(path, O_RDONLY);
	bool header = strstr(want, "cut short: its header") || strstr(want, "not finished") ||
		      strstr(want, "corrupt header");

	CHECK(pd != NULL);
	if (pd && (!perfdata_damage(pd) || !strstr(perfdata_damage(pd), want))) {
		fprintf(stderr, "damage '%s', want '%s'\n",
			perfdata_damage(pd) ? perfdata_damage(pd) : "(none)", want);
		check_failures++;
	}
	CHECK(fd >= 0);
	cut = perfdata_cut(fd, "x.data");
	if (header ? !cut || !pd || strcmp(cut, perfdata_damage(pd)) != 0 : cut != NULL) {
		fprintf(stderr, "perfdata_cut() '%s', damage '%s'\n", cut ? cut : "(none)",
			pd && perfdata_damage(pd) ? perfdata_damage(pd) : "(none)");
		check_failures++;
	}
	g_free(cut);
	close(fd);
	g_free(path);
	perfdata_free(pd);
	g_clear_error(&err);
}

static void check_name(struct perfdata *pd, int pid, const char *want, bool want_exe)
{
	bool exe = false;
	const char *got = perfdata_process_name(pd, pid, &exe);

	if (g_strcmp0(got, want) != 0 || exe != want_exe) {
		fprintf(stderr, "process %d: name '%s'%s, want '%s'%s\n", pid, got ? got : "(none)",
			exe ? " (exe)" : "", want ? want : "(none)", want_exe ? " (exe)" : "");
		check_failures++;
	}
}

#define FILLER_MAX 65528	/* the largest record: its size is 16 bits, 8-aligned */

/* A record of perf's own that walk() skips (HEADER_BUILD_ID), size bytes. */
static void filler(GByteArray *b, size_t size)
{
	static const guint8 zero[FILLER_MAX];

	record(b, 67, 0, zero, size - 8);
}

/* Fillers up to byte end exactly. */
static void fill_to(GByteArray *b, uint64_t end)
{
	while (b->len < end)
		filler(b, (size_t)MIN(end - b->len, FILLER_MAX));
}

/*
 * Records up to past byte end: a COMM of pid 1000 + i named "proc-i", then
 * a filler of 33 to 64 KiB, so that the blocks end in records of either
 * kind.  Returns how many processes.
 */
static int many_records(GByteArray *b, uint64_t end)
{
	int n = 0;

	for (; b->len < end; n++) {
		char name[24];

		snprintf(name, sizeof(name), "proc-%d", n);
		comm(b, 1000 + n, 1000 + n, name, false);
		filler(b, FILLER_MAX - 8 * (size_t)(n * 37 % 4000));
	}
	return n;
}

static void check_many(GByteArray *b, int n, bool pipe)
{
	GError *err = NULL;
	struct perfdata *pd = read_bytes(b, &err);

	CHECK(pd && !perfdata_damage(pd) && perfdata_is_pipe(pd) == pipe);
	if (pd && perfdata_damage(pd))
		fprintf(stderr, "%s\n", perfdata_damage(pd));
	{
		/* nor does its header look cut */
		char *path = g_build_filename(tmpdir, "x.data", NULL), *cut;
		int fd = open(path, O_RDONLY);

		CHECK(fd >= 0 && !(cut = perfdata_cut(fd, "x.data")));
		close(fd);
		g_free(path);
	}
	for (int i = 0; pd && i < n; i++) {
		char name[24];

		snprintf(name, sizeof(name), "proc-%d", i);
		check_name(pd, 1000 + i, name, false);
	}
	perfdata_free(pd);
	g_clear_error(&err);
}

/*
 * get() of [off, off + n), n <= BLOCK, in a file of size bytes: the file's
 * bytes wherever the reads fall (at the start, across a block's end, a
 * whole block at an odd offset, backwards, the last byte), NULL past the
 * end, which is no error; then walk()'s way, each record's header and then
 * the record, records of 8 bytes to 64 KiB, to the end.
 */
static void check_get(uint64_t size)
{
	static const size_t sizes[] = { 24, 40, 65528, 8, 104, 65535, 4096 };
	const struct { uint64_t off; size_t n; } at[] = {
		{ 0, 16 }, { 0, 104 }, { BLOCK - 8, 16 }, { BLOCK - 8, 8 }, { BLOCK + 8, BLOCK },
		{ 2 * (uint64_t)BLOCK + 7, 65535 }, { 7, BLOCK }, { size - BLOCK, BLOCK },
		{ size - 1, 1 }, { 2 * (uint64_t)BLOCK - 1, 2 }, { 0, BLOCK },
	};
	GByteArray *b = g_byte_array_new();
	char *path = g_build_filename(tmpdir, "get.data", NULL);
	struct reader r = { .size = size };
	uint64_t off = 0;
	int bad = 0;

	/* bytes that differ from their neighbours' a block away */
	g_byte_array_set_size(b, (guint)size);
	for (uint64_t i = 0; i < size; i++)
		b->data[i] = (guint8)((i * 2654435761u) >> 24);
	CHECK(g_file_set_contents(path, (const char *)b->data, b->len, NULL));
	r.fd = open(path, O_RDONLY);
	CHECK(r.fd >= 0);
	r.buf = g_malloc(BLOCK);
	for (size_t i = 0; i < G_N_ELEMENTS(at); i++) {
		const uint8_t *p;

		if (at[i].off > size || at[i].n > size - at[i].off)
			continue;
		p = get(&r, at[i].off, at[i].n);
		if (!p || memcmp(p, b->data + at[i].off, at[i].n) != 0) {
			fprintf(stderr, "file of %" G_GUINT64_FORMAT " bytes: get(%" G_GUINT64_FORMAT
				", %zu): %s\n", size, at[i].off, at[i].n, p ? "other bytes" : "NULL");
			check_failures++;
		}
	}
	CHECK(!get(&r, size - 8, 9) && !get(&r, size + 1, 0) && !r.error);
	for (size_t i = 0; off + 8 <= size; i++) {
		size_t n = (size_t)MIN(sizes[i % G_N_ELEMENTS(sizes)], size - off);
		const uint8_t *h = get(&r, off, 8), *p = get(&r, off, n);

		bad += !h || !p || memcmp(p, b->data + off, n) != 0;
		off += n;
	}
	if (bad) {
		fprintf(stderr, "file of %" G_GUINT64_FORMAT " bytes: %d records read wrong\n",
			size, bad);
		check_failures++;
	}
	g_free(r.buf);
	close(r.fd);
	g_free(path);
	g_byte_array_unref(b);
}

/* Files of several blocks, of one block exactly, and get() in them. */
static void check_blocks(void)
{
	GByteArray *b = file_header(), *t = file_header();
	char name[24];
	size_t tail;
	int n;

	check_get(3 * (uint64_t)BLOCK + 4321);
	check_get(BLOCK);
	check_get(BLOCK - 1);
	check_get(100);

	/* four blocks, then a damaged record: found where it is */
	n = many_records(b, 4 * (uint64_t)BLOCK);
	finish(b, 0, 0);
	check_many(b, n, false);
	g_byte_array_set_size(b, (guint)(104 + u64(b->data + 48)));
	{
		uint64_t at = b->len;
		char *want = g_strdup_printf("byte %" G_GUINT64_FORMAT ": a record of type 0", at);

		record(b, 0, 0, NULL, 0);
		finish(b, 0, 0);
		expect_damage(b, want);
		g_free(want);
	}
	g_byte_array_unref(b);

	/* a file of one block exactly, features and all */
	finish(t, 0, 0);
	tail = t->len - 104;
	b = file_header();
	n = many_records(b, BLOCK - 3 * 65536);
	fill_to(b, BLOCK - tail);
	finish(b, 0, 0);
	CHECK(b->len == BLOCK);
	check_many(b, n, false);
	g_byte_array_unref(b);
	g_byte_array_unref(t);

	/* a pipe file of one block exactly, and of one block and a record */
	b = g_byte_array_new();
	g_byte_array_append(b, (const guint8 *)"PERFILE2", 8);
	put64(b, 16);
	n = many_records(b, BLOCK - 3 * 65536);
	snprintf(name, sizeof(name), "proc-%d", n);
	/* (the last COMM's size: its header, pid, tid and name, 8-aligned) */
	fill_to(b, BLOCK - (8 + (8 + strlen(name) + 1 + 7) / 8 * 8));
	comm(b, 1000 + n, 1000 + n, name, false);
	CHECK(b->len == BLOCK);
	check_many(b, n + 1, true);
	snprintf(name, sizeof(name), "proc-%d", n + 1);
	comm(b, 1000 + n + 1, 1000 + n + 1, name, false);
	check_many(b, n + 2, true);
	g_byte_array_unref(b);
}

/*
 * A read error, or the file ending early (it shrank), is "read error"
 * damage; in the header, no perfdata.  The reads go a block at a time
 * from the first record not in the last one, so an error anywhere in that
 * block is reported before a damaged record in it.
 */
static void check_read_errors(void)
{
	GByteArray *b = file_header();
	char *want = g_strdup_printf("read error: %s", g_strerror(EIO));
	char *cut;
	uint64_t start, bad;
	GError *err = NULL;

	/* (a record at the first block's end: the next read is for its header) */
	many_records(b, BLOCK - 3 * 65536);
	fill_to(b, BLOCK);
	many_records(b, 3 * (uint64_t)BLOCK + BLOCK / 2);
	finish(b, 0, 0);
	read_fail(BLOCK + 100, EIO);
	expect_damage(b, want);
	read_fail(2 * (int64_t)BLOCK + 100, 0);
	expect_damage(b, want);
	/* in the features, after the data */
	read_fail((int64_t)(104 + u64(b->data + 48)) + 8, EIO);
	expect_damage(b, want);
	read_fail(0, EIO);
	CHECK(!read_bytes(b, &err) && err && err->code == FK_ERROR_IO &&
	      strstr(err->message, g_strerror(EIO)));
	g_clear_error(&err);
	read_fail(-1, 0);
	g_byte_array_unref(b);

	/* the second read starts at a record across the first block's end */
	b = file_header();
	many_records(b, BLOCK - 3 * 65536);
	fill_to(b, BLOCK - 1000);
	start = b->len;
	filler(b, 4096);
	bad = b->len;
	record(b, 0, 0, NULL, 0);
	many_records(b, 3 * (uint64_t)BLOCK);
	finish(b, 0, 0);
	read_fail((int64_t)(start + BLOCK) - 8, EIO);
	expect_damage(b, want);
	read_fail((int64_t)(start + BLOCK), EIO);
	cut = g_strdup_printf("byte %" G_GUINT64_FORMAT ": a record of type 0", bad);
	expect_damage(b, cut);
	read_fail(-1, 0);
	g_free(cut);
	g_free(want);
	g_byte_array_unref(b);
}

/*
 * perfdata_may_map() against the records themselves: processes with
 * ranges unsorted, overlapping, nested, adjacent and empty, forked in
 * chains (the walk stops past 64 processes, with true), every address
 * near an end asked.
 */
#define MM_PROCS 80
#define MM_RANGES 12
static void check_may_map(void)
{
	struct range ranges[MM_PROCS][MM_RANGES];
	int parent[MM_PROCS];
	GByteArray *b = file_header();
	GError *err = NULL;
	struct perfdata *pd;
	GRand *rnd = g_rand_new_with_seed(16);

	for (int i = 0; i < MM_PROCS; i++) {
		/* pids 100..179: a chain of 70 forks from 100 up, others alone
		 * or forked from a process with no maps (200) */
		parent[i] = i == 0 ? -1 : i < 70 ? 100 + i - 1 : i % 3 == 0 ? 200 : -1;
		if (parent[i] >= 0)
			fork_(b, 100 + i, parent[i], 100 + i, parent[i]);
		for (int k = 0; k < MM_RANGES; k++) {
			uint64_t start = 0x1000 * g_rand_int_range(rnd, 0, 64);
			uint64_t len = 0x1000 * g_rand_int_range(rnd, 0, 8);

			/* only a few processes map anything in the chain */
			if (i < 70 && i % 17 != 5)
				len = 0;
			ranges[i][k] = (struct range){ start, start + len };
			mmap2_at(b, 100 + i, "/lib/x.so", 5, start, len);
		}
	}
	finish(b, 1000, 2000);
	pd = read_bytes(b, &err);
	CHECK(pd && !perfdata_damage(pd));
	for (int i = 0; pd && i < MM_PROCS; i++) {
		for (uint64_t a = 0; a <= 0x48000; a += 0x800) {
			uint64_t at[] = { a, a + 1, a ? a - 1 : 0 };

			for (size_t q = 0; q < G_N_ELEMENTS(at); q++) {
				bool want = false;
				int depth = 0, j = i;

				/* the records, as perf would take them */
				for (;;) {
					for (int k = 0; k < MM_RANGES; k++)
						want |= at[q] >= ranges[j][k].start &&
							at[q] < ranges[j][k].end;
					/* (200: a process with no records of its own) */
					if (want || parent[j] != 100 + j - 1)
						break;
					if (++depth == 64) {
						/* too deep to follow: unless
						 * no process maps it at all */
						for (int o = 0; o < MM_PROCS; o++)
							for (int k = 0; k < MM_RANGES; k++)
								want |= at[q] >= ranges[o][k].start &&
									at[q] < ranges[o][k].end;
						break;
					}
					j = parent[j] - 100;
				}
				if (perfdata_may_map(pd, 100 + i, at[q]) != want) {
					fprintf(stderr, "may_map(%d, %#" G_GINT64_MODIFIER "x): %d\n",
						100 + i, at[q], !want);
					check_failures++;
				}
			}
		}
	}
	CHECK(pd && !perfdata_may_map(pd, 200, 0x1000) && !perfdata_may_map(pd, 300, 0x1000));
	perfdata_free(pd);
	g_byte_array_free(b, TRUE);
	g_rand_free(rnd);
}

/*
 * An MMAP2 of pid at time of [addr, addr + len) at pgoff in file of inode
 * ino, prot as given, with attr()'s trailer.
 */
static void mmap2_file(GByteArray *b, uint32_t pid, const char *file, uint64_t time,
		       uint64_t addr, uint64_t len, uint64_t pgoff, uint64_t ino, uint32_t prot)
{
	guint8 p[64 + 64 + 32] = { 0 };
	size_t name = (strlen(file) + 1 + 7) / 8 * 8;
	uint64_t trailer[4] = { pid | (uint64_t)pid << 32, time, 1, 42 };

	memcpy(p, &pid, 4);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &addr, 8);
	memcpy(p + 16, &len, 8);
	memcpy(p + 24, &pgoff, 8);
	memcpy(p + 32, &(uint32_t){ 8 }, 4);	/* maj */
	memcpy(p + 40, &ino, 8);
	memcpy(p + 56, &prot, 4);
	memcpy(p + 64, file, strlen(file) + 1);
	memcpy(p + 64 + name, trailer, sizeof(trailer));
	record(b, REC_MMAP2, 0, p, 64 + name + sizeof(trailer));
}

/* perfdata_file_at()'s answer for an address, as "NAME+0xOFFSET #NUMBER" or "-". */
static const char *file_text(struct perfdata *pd, int pid, uint64_t addr, uint64_t time,
			     char *buf, size_t len)
{
	struct perfdata_file f;

	if (!perfdata_file_at(pd, pid, addr, time, &f))
		return "-";
	snprintf(buf, len, "%s+0x%" G_GINT64_MODIFIER "x #%u", f.name, f.offset, f.file);
	return buf;
}

/*
 * perfdata_file_at() as text; every answer is also asked again with its
 * last answers forgotten (struct file_hit), and must be the same.
 */
static const char *file_at(struct perfdata *pd, int pid, uint64_t addr, uint64_t time)
{
	static char buf[256], fresh[256];
	struct file_hit saved[FILE_HITS];
	const char *got = file_text(pd, pid, addr, time, buf, sizeof(buf)), *want;

	memcpy(saved, pd->files->hits, sizeof(saved));
	memset(pd->files->hits, 0, sizeof(saved));
	want = file_text(pd, pid, addr, time, fresh, sizeof(fresh));
	memcpy(pd->files->hits, saved, sizeof(saved));
	if (strcmp(got, want) != 0) {
		fprintf(stderr, "file_at(%d, 0x%" G_GINT64_MODIFIER "x, %" G_GUINT64_FORMAT
			"): '%s', asked afresh '%s'\n", pid, addr, time, got, want);
		check_failures++;
	}
	return got;
}

/*
 * Where perf finds an address in a file: in the process's own executable
 * mapping of a file by name, if exactly one holds the address, made before
 * the sample and since the process's FORK, else in the one its parent
 * had at the FORK; the file told apart by name and inode.
 */
static void check_file_at(void)
{
	GByteArray *c = pipe_file(true);
	struct perfdata *pd;
	GError *err = NULL;

	record(c, REC_FORK, 0, (uint32_t[]){ 60, 1, 60, 1, 5, 0 }, 24);
	mmap2_file(c, 60, "/usr/bin/cc", 10, 0x10000, 0x4000, 0x1000, 7, 5);
	mmap2_file(c, 61, "/usr/bin/cc", 12, 0x20000, 0x4000, 0x1000, 7, 5);
	mmap2_file(c, 62, "/usr/bin/cc", 12, 0x30000, 0x4000, 0x1000, 8, 5);	/* rebuilt */
	mmap2_file(c, 60, "//anon", 14, 0x50000, 0x1000, 0, 0, 5);
	mmap2_file(c, 60, "/usr/lib/old.so (deleted)", 14, 0x60000, 0x1000, 0, 9, 5);
	mmap2_file(c, 60, "/usr/lib/data", 14, 0x70000, 0x1000, 0, 10, 1);	/* not code */
	mmap2_file(c, 63, "/usr/lib/a.so", 10, 0x1000, 0x2000, 0, 11, 5);
	mmap2_file(c, 63, "/usr/lib/b.so", 11, 0x2000, 0x2000, 0, 12, 5);	/* over a */
	mmap2_file(c, 63, "/usr/lib/c.so", 11, 0x8000, 0x1000, 0, 13, 5);
	mmap2_file(c, 64, "/usr/bin/old", 20, 0x40000, 0x1000, 0, 14, 5);	/* pid reused: */
	record(c, REC_FORK, 0, (uint32_t[]){ 64, 1, 64, 1, 30, 0 }, 24);
	mmap2_file(c, 64, "/usr/bin/new", 35, 0x48000, 0x1000, 0, 15, 5);
	/* 70 forks 71 at 50, which forks 72 at 60 and execs (its own maps) */
	mmap2_file(c, 70, "/usr/bin/sh", 40, 0x80000, 0x4000, 0, 16, 5);
	mmap2_file(c, 70, "/usr/lib/late.so", 55, 0x90000, 0x1000, 0, 17, 5);
	record(c, REC_FORK, 0, (uint32_t[]){ 71, 70, 71, 70, 50, 0 }, 24);
	record(c, REC_FORK, 0, (uint32_t[]){ 72, 71, 72, 71, 60, 0 }, 24);
	mmap2_file(c, 72, "/usr/bin/cc", 65, 0xa0000, 0x1000, 0, 7, 5);
	mmap2_file(c, 72, "//anon", 66, 0x81000, 0x1000, 0, 0, 5);	/* over sh */
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_has_map_times(pd));
	if (pd) {
		/* the same file in two processes: one number, one offset */
		CHECK_STR(file_at(pd, 60, 0x10010, 20), "/usr/bin/cc+0x1010 #0");
		CHECK_STR(file_at(pd, 61, 0x20010, 20), "/usr/bin/cc+0x1010 #0");
		CHECK_STR(file_at(pd, 61, 0x23fff, 20), "/usr/bin/cc+0x4fff #0");
		CHECK_STR(file_at(pd, 62, 0x30010, 20), "/usr/bin/cc+0x1010 #1");
		/* before the mapping, at its very time, past its end */
		CHECK_STR(file_at(pd, 60, 0x10010, 9), "-");
		CHECK_STR(file_at(pd, 60, 0x10010, 10), "-");
		CHECK_STR(file_at(pd, 60, 0x14000, 20), "-");
		CHECK_STR(file_at(pd, 60, 0xfff0, 20), "-");
		/* not a file's code */
		CHECK_STR(file_at(pd, 60, 0x50010, 20), "-");
		CHECK_STR(file_at(pd, 60, 0x60010, 20), "-");
		CHECK_STR(file_at(pd, 60, 0x70010, 20), "-");
		/* two mappings over one another: neither */
		CHECK_STR(file_at(pd, 63, 0x1010, 20), "-");
		CHECK_STR(file_at(pd, 63, 0x3010, 20), "-");
		CHECK_STR(file_at(pd, 63, 0x8010, 20), "/usr/lib/c.so+0x10 #4");
		/* a mapping of the pid before its FORK is not the new process's */
		CHECK_STR(file_at(pd, 64, 0x40010, 25), "/usr/bin/old+0x10 #5");
		CHECK_STR(file_at(pd, 64, 0x40010, 40), "-");
		CHECK_STR(file_at(pd, 64, 0x48010, 40), "/usr/bin/new+0x10 #6");
		/* another process's address space */
		CHECK_STR(file_at(pd, 65, 0x10010, 20), "-");
		/* a child's copy of its parent's maps, and of its grandparent's */
		CHECK_STR(file_at(pd, 71, 0x80010, 52), "/usr/bin/sh+0x10 #7");
		CHECK_STR(file_at(pd, 72, 0x80010, 70), "/usr/bin/sh+0x10 #7");
		CHECK_STR(file_at(pd, 72, 0xa0010, 70), "/usr/bin/cc+0x10 #0");
		/* but not what the parent mapped after the FORK, nor what the
		 * child laid over its copy, nor at the FORK's very time */
		CHECK_STR(file_at(pd, 71, 0x90010, 70), "-");
		CHECK_STR(file_at(pd, 72, 0x81010, 70), "-");
		CHECK_STR(file_at(pd, 71, 0x80010, 50), "-");
	}
	perfdata_free(pd);
	g_byte_array_unref(c);

	/*
	 * perf record's records of the processes it found running all have
	 * time 0, each process's FORK before its maps: 80's are its own; 81's
	 * mapping came before its FORK, so it was the pid's earlier process's
	 */
	c = pipe_file(true);
	record(c, REC_FORK, 0, (uint32_t[]){ 80, 1, 80, 1, 0, 0 }, 24);
	mmap2_file(c, 80, "/usr/bin/srv", 0, 0xb0000, 0x1000, 0, 18, 5);
	mmap2_file(c, 81, "/usr/bin/gone", 0, 0xc0000, 0x1000, 0, 19, 5);
	record(c, REC_FORK, 0, (uint32_t[]){ 81, 1, 81, 1, 0, 0 }, 24);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_has_map_times(pd));
	if (pd) {
		CHECK_STR(file_at(pd, 80, 0xb0010, 5), "/usr/bin/srv+0x10 #0");
		CHECK_STR(file_at(pd, 81, 0xc0010, 5), "-");
	}
	perfdata_free(pd);
	g_byte_array_unref(c);

	/* without the records' times, nothing is known */
	c = pipe_file(false);
	mmap2_file(c, 60, "/usr/bin/cc", 10, 0x10000, 0x4000, 0x1000, 7, 5);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_has_map_times(pd));
	if (pd)
		CHECK_STR(file_at(pd, 60, 0x10010, 20), "-");
	perfdata_free(pd);
	g_byte_array_unref(c);
}

/*
 * A file header whose event (in the header's attribute section, as perf
 * record writes it) is attr()'s: the records' times are known, as in a
 * pipe_file(true).
 */
static GByteArray *timed_file(void)
{
	GByteArray *b = file_header();
	guint8 a[128 + 16] = { 0 };	/* the attribute, then its ids' section */
	uint64_t type = S_TID | S_TIME | S_CPU | S_IDENTIFIER | 1 /* ip */, flags = SAMPLE_ID_ALL;

	memcpy(a + 4, &(uint32_t){ 128 }, 4);
	memcpy(a + ATTR_SAMPLE_TYPE, &type, 8);
	memcpy(a + ATTR_FLAGS, &flags, 8);
	set64(b, 16, sizeof(a));
	set64(b, 24, 104);
	set64(b, 32, sizeof(a));
	g_byte_array_append(b, a, sizeof(a));
	set64(b, 40, b->len);
	return b;
}

/* The kinds of recordings check_split() reads. */
enum split_kind {
	SPLIT_PLAIN,
	SPLIT_UNTIMED,		/* a sample without its time in the second half */
	SPLIT_LOOKALIKE,	/* records' headers inside a record across the middle */
	SPLIT_DAMAGE,		/* a record of type 0 in the second half */
	SPLIT_TRACE,		/* a record with its trace after it, second half */
	SPLIT_KINDS
};

/*
 * Rounds of samples of 50 processes, their names and maps changing, some
 * of those records late; halves of n steps each, and between them a
 * record of 64 KiB (a look-alike's, or a plain filler).
 */
static GByteArray *split_recording(enum split_kind kind, int n)
{
	GByteArray *b = timed_file();
	uint64_t t = 1000;

	for (int i = 0; i < 2 * n; i++) {
		uint32_t pid = 100 + (uint32_t)(i * 7 % 50);
		char name[32];

		if (i == n) {
			guint8 f[FILLER_MAX - 8] = { 0 };

			if (kind == SPLIT_LOOKALIKE) {
				/* past the middle, what looks like records: a
				 * process 999 named "fake", and samples */
				GByteArray *l = g_byte_array_new();

				for (int k = 0; k < AHEAD_SYNC; k++) {
					if (k % 2)
						sample_timed(l, 999, 999, t);
					else
						comm_timed(l, 999, 999, "fake", false, t);
				}
				CHECK(40000 + l->len <= sizeof(f));
				memcpy(f + 40000, l->data, l->len);
				g_byte_array_unref(l);
			}
			record(b, 67, 0, f, sizeof(f));
		}
		snprintf(name, sizeof(name), "p%d-%d", pid, i);
		for (int k = 0; k < 6; k++)
			sample_timed(b, pid, pid, t += 7);
		/* (the samples' times, not the other records', set the rounds') */
		if (i % 20 == 0)
			round_(b);
		if (i % 5 == 0)
			comm_timed(b, pid, pid, name, false, t - (uint64_t)(i * 37 % 1700));
		if (i % 11 == 0)
			mmap2_timed_at(b, pid, name, t - (uint64_t)(i * 53 % 2500), 0x400000 + 0x1000 * (uint64_t)(i % 3),
				       0x2000);
		if (i == n + n / 2 && kind == SPLIT_UNTIMED)
			record(b, REC_SAMPLE, 0, (uint64_t[]){ 42, 0x400100 }, 16);
		if (i == n + n / 2 && kind == SPLIT_DAMAGE)
			record(b, 0, 0, NULL, 0);
		if (i == n + n / 2 && kind == SPLIT_TRACE) {
			guint8 aux[40] = { 0 };

			memcpy(aux, &(uint64_t){ 24 }, 8);
			record(b, REC_AUXTRACE, 0, aux, 40);
			g_byte_array_append(b, (const guint8 *)"TRACE-TRACE-TRACE-TRACE-", 24);
		}
	}
	finish(b, 1000, t);
	return b;
}

/* What a reading of the file says, as text, split_min as given. */
static char *reading(GByteArray *b, uint64_t min)
{
	GString *out = g_string_new(NULL);
	GError *err = NULL;
	struct perfdata *pd;
	uint64_t until;
	unsigned procs = 0;

	split_min = min;
	pd = read_bytes(b, &err);
	split_min = 0;
	if (!pd) {
		g_string_append_printf(out, "error %s\n", err->message);
		g_clear_error(&err);
		return g_string_free(out, FALSE);
	}
	g_string_append_printf(out, "damage %s\nunordered %" G_GUINT64_FORMAT " of %u\n",
			       perfdata_damage(pd) ? perfdata_damage(pd) : "none",
			       perfdata_unordered(pd, &procs), procs);
	for (int pid = 100; pid <= 1000; pid = pid == 149 ? 999 : pid + 1) {
		bool exe = false;
		const char *name = perfdata_process_name(pd, pid, &exe);

		g_string_append_printf(out, "%d %s%s:", pid, name ? name : "-", exe ? " (exe)" : "");
		for (uint64_t at = 900; at < 130000; at += 1997) {
			uint32_t map = perfdata_map_gen(pd, pid, at, &until);

			g_string_append_printf(out, " %u<%" G_GUINT64_FORMAT, map, until);
			g_string_append_printf(out, " %u<%" G_GUINT64_FORMAT,
					       perfdata_name_gen(pd, pid, at, &until), until);
			g_string_append_printf(out, " %s", file_at(pd, pid, 0x400010, at));
		}
		g_string_append_c(out, '\n');
	}
	perfdata_free(pd);
	return g_string_free(out, FALSE);
}

/*
 * The data walked on two threads (walk_data()) says what one thread's
 * walk says, whatever the second half holds: each kind of recording read
 * both ways.
 */
static void check_split(void)
{
	uint64_t saved = split_min;

	for (int kind = 0; kind < SPLIT_KINDS; kind++) {
		GByteArray *b = split_recording(kind, 1500);
		char *one = reading(b, UINT64_MAX), *two = reading(b, 0);

		if (strcmp(one, two) != 0) {
			fprintf(stderr, "kind %d read on two threads:\n%.2000s\non one:\n%.2000s\n", kind,
				two, one);
			check_failures++;
		}
		/* the recordings hold what they should, so the comparison says something */
		CHECK(strstr(one, "unordered 0 ") == NULL);
		CHECK((strstr(one, "damage none") != NULL) == (kind != SPLIT_DAMAGE));
		CHECK(strstr(one, "999 -:") != NULL);
		g_free(one);
		g_free(two);
		g_byte_array_unref(b);
	}
	split_min = saved;
}

static void check_all(void)
{
	GByteArray *b = file_header(), *c;
	struct perfdata *pd;
	GError *err = NULL;
	uint64_t first, last, lost, lost_samples;
	guint8 aux[40] = { 0 };

	/* a server whose worker forks a child that execs; a process known
	 * only by its mappings and a worker thread */
	comm(b, 10, 10, "server", false);
	comm(b, 10, 11, "worker-1", false);
	mmap2_at(b, 10, "/usr/lib/x86_64-linux-gnu/libc.so.6", 5, 0x7f0000000000, 0x200000);
	fork_(b, 20, 10, 20, 11);
	comm(b, 20, 20, "child", true);
	mmap2(b, 20, "/opt/x/data.bin", 1);		/* not executable */
	mmap2(b, 20, "[vdso]", 5);			/* not a file */
	mmap2(b, 20, "/opt/x/childexe", 5);
	mmap2(b, 30, "/bin/thing", 5);
	comm(b, 30, 31, "thing-worker", false);
	comm(b, 10, 10, "server-renamed", false);
	record(b, REC_LOST, 0, (uint64_t[]){ 1, 5 }, 16);
	record(b, REC_LOST_SAMPLES, 0, (uint64_t[]){ 7 }, 8);
	/* a trace record: 24 bytes of trace follow it, skipped */
	memcpy(aux, &(uint64_t){ 24 }, 8);
	record(b, REC_AUXTRACE, 0, aux, 40);
	g_byte_array_append(b, (const guint8 *)"TRACE-TRACE-TRACE-TRACE-", 24);
	comm(b, 40, 40, "after-trace", false);
	finish(b, 1000, 2000);

	pd = read_bytes(b, &err);
	CHECK(pd && !perfdata_damage(pd));
	if (pd && perfdata_damage(pd))
		fprintf(stderr, "%s\n", perfdata_damage(pd));
	if (pd) {
		check_name(pd, 10, "server-renamed", false);
		check_name(pd, 20, "child", false);
		check_name(pd, 30, "thing", true);
		check_name(pd, 40, "after-trace", false);
		check_name(pd, 50, NULL, false);
		CHECK(perfdata_sample_times(pd, &first, &last) && first == 1000 && last == 2000);
		perfdata_lost(pd, &lost, &lost_samples);
		CHECK(lost == 5 && lost_samples == 7);
		CHECK(!perfdata_compressed(pd) && !perfdata_is_pipe(pd));
		CHECK(perfdata_scope(pd) == PERFDATA_SCOPE_CPUS);
		/* where perf could ever place an address: the process's
		 * mappings and those of the process it was forked from */
		CHECK(perfdata_may_map(pd, 10, 0x7f0000001000));
		CHECK(!perfdata_may_map(pd, 10, 0x7f0000200000));
		CHECK(!perfdata_may_map(pd, 10, 0x2));
		CHECK(perfdata_may_map(pd, 20, 0x7f0000001000));
		CHECK(!perfdata_may_map(pd, 30, 0x7f0000001000));
		CHECK(!perfdata_may_map(pd, 50, 0x7f0000001000));
	}
	perfdata_free(pd);

	/* what perf record's command line says it recorded */
	check_scope(PERFDATA_SCOPE_CPUS, "/usr/bin/perf record -e sched:sched_switch -a -g -o x -- sleep 1");
	check_scope(PERFDATA_SCOPE_CPUS, "perf record -qag -o off.data");
	check_scope(PERFDATA_SCOPE_CPUS, "perf record --all-cpus -g");
	check_scope(PERFDATA_SCOPE_CPUS, "perf record -C 0,1 -g -- sleep 1");
	check_scope(PERFDATA_SCOPE_CPUS, "perf record --cpu=0 -g");
	check_scope(PERFDATA_SCOPE_TASKS, "perf record -e sched:sched_switch -g -p 4242 -- sleep 30");
	check_scope(PERFDATA_SCOPE_TASKS, "perf record -gp4242");
	check_scope(PERFDATA_SCOPE_TASKS, "perf record --pid=4242,4250 -g");
	check_scope(PERFDATA_SCOPE_TASKS, "perf record -t 4243");
	check_scope(PERFDATA_SCOPE_TASKS, "perf record -e sched:sched_switch -g -- ./server -a");
	/* an option's value is not read as options: -o -a.data, -e with 'a' */
	check_scope(PERFDATA_SCOPE_TASKS, "perf record -o -a.data -- ./x");
	check_scope(PERFDATA_SCOPE_TASKS, "perf record -esched:sched_switch -- ./x");
	/* no "--", no target: a command or the default system-wide */
	check_scope(PERFDATA_SCOPE_UNKNOWN, "perf record -e cs -g ./server");
	check_scope(PERFDATA_SCOPE_UNKNOWN, "perf script -i x");
	check_scope(PERFDATA_SCOPE_UNKNOWN, "");

	/* a child that never execs keeps the parent thread's name; one whose
	 * own records come first in the file (another CPU's) keeps those */
	c = file_header();
	comm(c, 10, 10, "server", false);
	comm(c, 10, 12, "spawner", false);
	fork_(c, 21, 10, 21, 12);
	comm(c, 22, 22, "renamed", false);
	mmap2(c, 23, "/usr/bin/python3", 5);
	mmap2(c, 10, "/usr/bin/server", 5);
	fork_(c, 22, 10, 22, 12);
	fork_(c, 23, 10, 23, 10);
	record(c, REC_COMPRESSED, 0, "zstd", 4);
	finish(c, 0, 0);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd));
	if (pd) {
		check_name(pd, 21, "spawner", false);
		check_name(pd, 22, "renamed", false);
		check_name(pd, 23, "server", false);
		CHECK(!perfdata_sample_times(pd, &first, &last));
		CHECK(perfdata_compressed(pd));
	}
	perfdata_free(pd);
	g_byte_array_unref(c);

	/* cut anywhere in the data section */
	c = g_byte_array_new();
	g_byte_array_append(c, b->data, 104 + 100);
	expect_damage(c, "x.data: cut short: its header says the samples end at byte");
	g_byte_array_unref(c);
	/* cut in the features only: whole, no sample times */
	c = g_byte_array_new();
	g_byte_array_append(c, b->data, b->len - 8);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && !perfdata_sample_times(pd, &first, &last));
	perfdata_free(pd);
	g_byte_array_unref(c);
	/* never finished */
	c = g_byte_array_new();
	g_byte_array_append(c, b->data, b->len);
	set64(c, 48, 0);
	expect_damage(c, "x.data: not finished");
	/* a record of 4 bytes, and one longer than the data */
	c->data[104 + 6] = 4;
	c->data[104 + 7] = 0;
	set64(c, 48, 200);
	expect_damage(c, "x.data: byte 104: a record of type 3 and 4 bytes, too short");
	c->data[104 + 6] = 0xf8;
	expect_damage(c, "x.data: byte 104: a record of 248 bytes runs past the end of the data at byte 304");
	c->data[104 + 6] = 32;
	c->data[104] = 0;
	expect_damage(c, "x.data: byte 104: a record of type 0");
	g_byte_array_unref(c);
	/* a data section past the end of the numbers */
	c = g_byte_array_new();
	g_byte_array_append(c, b->data, b->len);
	set64(c, 40, UINT64_MAX - 10);
	expect_damage(c, "x.data: corrupt header");
	g_byte_array_unref(c);

	/*
	 * When perf's maps of a process change: at the FORK that makes it
	 * and at each of its MMAPs, not at its exec's COMM; the records in
	 * the order perf wrote them (one CPU's after another's), their
	 * times in order here
	 */
	c = pipe_file(true);
	record(c, REC_FORK, 0, (uint32_t[]){ 5, 1, 5, 1, 100, 0 }, 24);
	mmap2_timed(c, 5, "/usr/bin/new", 300);
	comm_timed(c, 5, 5, "new", true, 250);
	mmap2_timed(c, 5, "/usr/bin/old", 200);
	mmap2_timed(c, 6, "/usr/bin/other", 50);
	/* thread 8 of process 5, from 120 to its exit at 400 */
	record(c, REC_EXIT, 0, (uint32_t[]){ 5, 5, 8, 8, 400, 0 }, 24);
	record(c, REC_FORK, 0, (uint32_t[]){ 5, 5, 8, 5, 120, 0 }, 24);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_has_map_times(pd));
	if (pd) {
		uint64_t until;

		/* perf's name of a thread changes at its FORK, COMMs and EXIT */
		CHECK(perfdata_name_gen(pd, 5, 10, &until) == 0 && until == 100);
		CHECK(perfdata_name_gen(pd, 5, 150, &until) == 1 && until == 250);
		CHECK(perfdata_name_gen(pd, 5, 300, &until) == 2 && until == UINT64_MAX);
		CHECK(perfdata_name_gen(pd, 5, 250, &until) == PERFDATA_NO_GEN && until == 250);
		CHECK(perfdata_name_gen(pd, 8, 130, &until) == 1 && until == 400);
		CHECK(perfdata_name_gen(pd, 8, 401, &until) == 2 && until == UINT64_MAX);
		CHECK(perfdata_name_gen(pd, 6, 10, &until) == 0 && until == UINT64_MAX);
		/* the maps do not change with the name, nor with a thread */

		CHECK(perfdata_map_gen(pd, 5, 10, &until) == 0 && until == 100);
		CHECK(perfdata_map_gen(pd, 5, 101, &until) == 1 && until == 200);
		CHECK(perfdata_map_gen(pd, 5, 299, &until) == 2 && until == 300);
		CHECK(perfdata_map_gen(pd, 5, 301, &until) == 3 && until == UINT64_MAX);
		/* at a change's very time: either order */
		CHECK(perfdata_map_gen(pd, 5, 200, &until) == PERFDATA_NO_GEN && until == 200);
		/* a map over no other: no change */
		CHECK(perfdata_map_gen(pd, 6, 10, &until) == 0 && until == UINT64_MAX);
		CHECK(perfdata_map_gen(pd, 7, 10, &until) == 0 && until == UINT64_MAX);
	}
	perfdata_free(pd);
	g_byte_array_unref(c);
	/*
	 * An MMAP changes perf's maps of a process only where it overlaps a
	 * map the process may have had: its own (before or after), or one
	 * inherited through FORKs from its parent, or theirs
	 */
	c = pipe_file(true);
	mmap2_timed_at(c, 40, "/usr/bin/a", 10, 0x1000, 0x1000);
	mmap2_timed_at(c, 40, "/usr/lib/b.so", 20, 0x5000, 0x1000);	/* beside */
	mmap2_timed_at(c, 40, "/usr/lib/c.so", 30, 0x1800, 0x100);	/* over a */
	record(c, REC_FORK, 0, (uint32_t[]){ 41, 40, 41, 40, 50, 0 }, 24);
	mmap2_timed_at(c, 41, "/usr/bin/d", 60, 0x5400, 0x1000);	/* over b */
	mmap2_timed_at(c, 41, "/usr/lib/e.so", 70, 0x9000, 0x1000);	/* beside */
	record(c, REC_FORK, 0, (uint32_t[]){ 42, 41, 42, 41, 80, 0 }, 24);
	mmap2_timed_at(c, 42, "/usr/bin/f", 90, 0x1f00, 0x1000);	/* over a */
	mmap2_timed_at(c, 42, "/usr/bin/g", 95, 0x20000, 0x1000);	/* beside */
	mmap2_timed_at(c, 43, "/usr/bin/h", 5, 0x1000, 0);		/* empty */
	mmap2_timed_at(c, 43, "/usr/bin/i", 6, 0x1000, 0x10);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_has_map_times(pd));
	if (pd) {
		uint64_t until;

		/* a at 10 (c overlaps it), c at 30 */
		CHECK(perfdata_map_gen(pd, 40, 5, &until) == 0 && until == 10);
		CHECK(perfdata_map_gen(pd, 40, 25, &until) == 1 && until == 30);
		CHECK(perfdata_map_gen(pd, 40, 35, &until) == 2 && until == UINT64_MAX);
		/* its FORK at 50, d over its parent's b at 60 */
		CHECK(perfdata_map_gen(pd, 41, 55, &until) == 1 && until == 60);
		CHECK(perfdata_map_gen(pd, 41, 75, &until) == 2 && until == UINT64_MAX);
		/* its FORK at 80, f over its grandparent's a at 90 */
		CHECK(perfdata_map_gen(pd, 42, 85, &until) == 1 && until == 90);
		CHECK(perfdata_map_gen(pd, 42, 99, &until) == 2 && until == UINT64_MAX);
		/* an empty map counts as a byte */
		CHECK(perfdata_map_gen(pd, 43, 1, &until) == 0 && until == 5);
	}
	perfdata_free(pd);
	g_byte_array_unref(c);

	/*
	 * perf hands records over in time order only up to what each
	 * FINISHED_ROUND lets it: the latest time read before the round
	 * before.  A record below that may reach it after later samples:
	 * its thread's names and its process's maps have no generations.
	 */
	c = pipe_file(true);
	comm_timed(c, 5, 5, "a", false, 10);
	mmap2_timed(c, 5, "/usr/bin/a", 20);
	mmap2_timed(c, 8, "/usr/bin/h", 20);
	sample_timed(c, 5, 5, 100);
	sample_timed(c, 5, 5, 200);
	comm_timed(c, 6, 6, "early", false, 50);	/* no round yet: in order */
	round_(c);					/* hands over nothing */
	sample_timed(c, 5, 5, 300);
	mmap2_timed(c, 7, "/usr/bin/g", 150);		/* still queued with 200: in order */
	round_(c);					/* hands over up to 200 */
	comm_timed(c, 5, 5, "b", false, 150);		/* late: 150 < 200 */
	mmap2_timed_at(c, 8, "/usr/bin/i", 199, 0x400000, 0x10);	/* late */
	comm_timed(c, 6, 6, "c", false, 200);		/* not before 200: in order */
	record(c, REC_FORK, 0, (uint32_t[]){ 9, 5, 9, 5, 120, 0 }, 24);	/* late */
	sample_timed(c, 5, 5, 400);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_has_map_times(pd));
	if (pd) {
		uint64_t until;
		unsigned procs = 0;

		CHECK(perfdata_unordered(pd, &procs) == 3 && procs == 3);
		CHECK(perfdata_name_gen(pd, 5, 12, &until) == PERFDATA_NO_GEN && until == 12);
		CHECK(perfdata_name_gen(pd, 5, 500, &until) == PERFDATA_NO_GEN && until == 500);
		CHECK(perfdata_map_gen(pd, 5, 250, &until) == PERFDATA_NO_GEN && until == 250);
		CHECK(perfdata_map_gen(pd, 8, 100, &until) == PERFDATA_NO_GEN && until == 100);
		CHECK(perfdata_map_gen(pd, 9, 130, &until) == PERFDATA_NO_GEN && until == 130);
		CHECK(perfdata_name_gen(pd, 9, 130, &until) == PERFDATA_NO_GEN && until == 130);
		/* the others keep theirs */
		CHECK(perfdata_name_gen(pd, 6, 100, &until) == 1 && until == 200);
		CHECK(perfdata_map_gen(pd, 7, 100, &until) == 0 && until == UINT64_MAX);
		CHECK(perfdata_name_gen(pd, 7, 100, &until) == 0 && until == UINT64_MAX);
		/* nor are its mappings placed, only the others' */
		CHECK_STR(file_at(pd, 5, 0x400010, 300), "-");
		CHECK_STR(file_at(pd, 7, 0x400010, 300), "/usr/bin/g+0x10 #2");
	}
	perfdata_free(pd);
	/* without the rounds perf sorts the whole file: nothing is late */
	{
		GByteArray *d = g_byte_array_new();
		size_t at = 16;

		g_byte_array_append(d, c->data, 16);
		while (at < c->len) {
			uint16_t size;

			memcpy(&size, c->data + at + 6, 2);
			if (u32(c->data + at) != REC_FINISHED_ROUND)
				g_byte_array_append(d, c->data + at, size);
			at += size;
		}
		pd = read_bytes(d, &err);
		CHECK(pd && !perfdata_damage(pd) && perfdata_has_map_times(pd));
		if (pd) {
			uint64_t until;
			unsigned procs = 1;

			CHECK(perfdata_unordered(pd, &procs) == 0 && procs == 0);
			CHECK(perfdata_name_gen(pd, 5, 100, &until) == 1 && until == 150);
		}
		perfdata_free(pd);
		g_byte_array_unref(d);
	}
	g_byte_array_unref(c);

	/* without the records' times (no sample_id_all), none are known */
	c = pipe_file(false);
	mmap2_timed(c, 5, "/usr/bin/new", 300);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && !perfdata_has_map_times(pd));
	perfdata_free(pd);
	g_byte_array_unref(c);

	/* perf record --switch-events: the switch-ins of each thread, from
	 * the sample_id trailer, in time order whatever the CPUs' order */
	c = pipe_file(true);
	switch_cpu_wide(c, 30, 0, 1, 500, false, 0);
	switch_cpu_wide(c, 30, 0, 1, 600, true, 0);
	switch_cpu_wide(c, 31, 30, 1, 600, false, 0);
	switch_cpu_wide(c, 30, 0, 0, 300, false, 0);	/* an earlier CPU's, later in the file */
	record(c, REC_SWITCH, 0, (uint64_t[]){ 30 | 30ULL << 32, 700, 0, 42 }, 32);
	switch_cpu_wide(c, 30, 0, 1, 800, false, 20);	/* too short for its trailer */
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_switches(pd) == 6);
	if (pd) {
		uint64_t t = 0;

		CHECK(perfdata_switch_in(pd, 30, 0, 1000, &t) && t == 300);
		CHECK(perfdata_switch_in(pd, 30, 301, 1000, &t) && t == 500);
		CHECK(perfdata_switch_in(pd, 30, 500, 500, &t) && t == 500);
		CHECK(perfdata_switch_in(pd, 30, 501, 1000, &t) && t == 700);
		CHECK(!perfdata_switch_in(pd, 30, 501, 699, &t));	/* 600 was out */
		CHECK(!perfdata_switch_in(pd, 30, 701, UINT64_MAX, &t));
		CHECK(perfdata_switch_in(pd, 31, 0, 1000, &t) && t == 600);
		CHECK(!perfdata_switch_in(pd, 0, 0, 1000, &t));
		CHECK(!perfdata_switch_in(pd, 32, 0, 1000, &t));
	}
	perfdata_free(pd);
	/* a record shorter than its own fields: damage, as for others */
	record(c, REC_SWITCH_CPU_WIDE, 0, NULL, 0);
	expect_damage(c, "a record of type 15 and 8 bytes, too short");
	g_byte_array_unref(c);
	/* without sample_id_all the records say no thread or time: none kept */
	c = pipe_file(false);
	switch_cpu_wide(c, 30, 0, 1, 500, false, 8);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_switches(pd) == 1);
	if (pd) {
		uint64_t t = 0;

		CHECK(!perfdata_switch_in(pd, 30, 0, UINT64_MAX, &t) &&
		      !perfdata_switch_in(pd, 0, 0, UINT64_MAX, &t));
	}
	perfdata_free(pd);
	g_byte_array_unref(c);
	/* events whose trailers disagree: where the fields are is unknown */
	c = pipe_file(true);
	switch_cpu_wide(c, 30, 0, 1, 500, false, 0);
	attr(c, false);
	switch_cpu_wide(c, 30, 0, 1, 600, false, 0);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_switches(pd) == 2);
	if (pd) {
		uint64_t t = 0;

		CHECK(!perfdata_switch_in(pd, 30, 0, UINT64_MAX, &t));
	}
	perfdata_free(pd);
	g_byte_array_unref(c);

	/* a pipe file: records to the end; cut in its last record */
	c = g_byte_array_new();
	g_byte_array_append(c, (const guint8 *)"PERFILE2", 8);
	put64(c, 16);
	comm(c, 7, 7, "piped", false);
	pd = read_bytes(c, &err);
	CHECK(pd && !perfdata_damage(pd) && perfdata_is_pipe(pd));
	if (pd)
		check_name(pd, 7, "piped", false);
	perfdata_free(pd);
	g_byte_array_set_size(c, c->len - 3);
	expect_damage(c, "x.data: byte 16: a record of 24 bytes runs past the end of the data at byte 37");
	g_byte_array_unref(c);

	/* not a perf.data file, or one of the other byte order */
	c = g_byte_array_new();
	g_byte_array_append(c, (const guint8 *)"2ELIFREP", 8);
	put64(c, GUINT64_SWAP_LE_BE((uint64_t)104));
	g_byte_array_set_size(c, 200);
	CHECK(!read_bytes(c, &err) && err && strstr(err->message, "other byte order"));
	g_clear_error(&err);
	memcpy(c->data, "NOTPERF!", 8);
	CHECK(!read_bytes(c, &err) && err && strstr(err->message, "x.data: not a perf.data file"));
	g_clear_error(&err);
	g_byte_array_set_size(c, 10);
	CHECK(!read_bytes(c, &err) && err && strstr(err->message, "too short"));
	g_clear_error(&err);
	g_byte_array_unref(c);

	g_byte_array_unref(b);
	check_may_map();
	check_blocks();
	check_read_errors();
	check_file_at();
	check_split();
}

int main(void)
{
	char tmpl[] = "/tmp/perfdata-test-XXXXXX";
	char *cmd;

	tmpdir = g_mkdtemp(tmpl);
	CHECK(tmpdir != NULL);
	check_all();
	/* again, every file's data walked on two threads (walk_data()) */
	split_min = 0;
	check_all();
	cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		check_failures++;
	g_free(cmd);
	return CHECK_DONE();
}
