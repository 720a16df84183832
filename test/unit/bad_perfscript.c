/*
 * bad_perfscript.c - malformed perf script headers and the line reader on
 * long lines through a pipe: the lib/ fixes behind docs/bad-input.md.
 */
#include "bad_check.h"

#include "core/error.h"
#include "core/linereader.h"
#include "collapse/perfscript.h"

#include <string.h>
#include <sys/wait.h>

static bool header(const char *period, struct perf_sample *s)
{
	char line[256];
	struct fk_str rest;

	snprintf(line, sizeof(line), "prog 1234 [000] 1.000000: %s cycles: ", period);
	return perf_script_parse_header(line, strlen(line), s, &rest);
}

static void test_periods(void)
{
	struct perf_sample s;

	CHECK(header("100", &s) && s.has_period && s.period == 100, "100");
	/* 20 digits: refused before the fix, which weighed the sample 1 */
	CHECK(header("18446744073709551615", &s) && s.period == UINT64_MAX, "2^64-1");
	CHECK(header("0", &s) && s.has_period && s.period == 0, "0");
	CHECK(!header("18446744073709551616", &s), "2^64 accepted");
	CHECK(!header("99999999999999999999999", &s), "huge accepted");
	CHECK(!header("-5", &s), "negative accepted");
	CHECK(!header("100x", &s), "100x accepted");
	CHECK(!header("0x64", &s), "0x64 accepted");
	CHECK(!header("+5", &s), "+5 accepted");
	/* no period column (perf script -F without period): weight 1 */
	CHECK(header("", &s) && !s.has_period && s.period == 1, "no period");
}


static void collect(const char *file, uint64_t line, const char *reason, void *data)
{
	g_string_append_printf(data, "%" G_GUINT64_FORMAT ": %s\n", line, reason);
}

static void test_reader(void)
{
	static const char in[] =
		"prog 1 [000] 1.0: -5 cycles:\n"		/* 1 */
		"\t1 a+0x1 (/bin/p)\n"
		"\n"
		"prog 1 [000] 2.0: 7 cycles:\n"			/* 4 */
		"\t1 b+0x1 (/bin/p)\n"
		"prog 1 [000] 3.0: 18446744073709551616 cycles:\n"	/* 6: no blank before */
		"\t1 c+0x1 (/bin/p)\n"
		"\n"
		"prog 1 [000] 4.0: 9 cycles:\n"			/* 9 */
		"\t1 d+0x1 (/bin/p)\n"
		"\n";
	char *path = bad_tmpfile(in, sizeof(in) - 1);
	struct perf_script_opts po = { 0 };
	struct skip_log *skips = skip_log_new();
	struct perf_script_reader *r = perf_script_reader_open(path, &po, skips, NULL);
	GString *got = g_string_new(NULL), *sk = g_string_new(NULL);
	struct perf_sample s;
	GError *err = NULL;
	int rc;

	GArray *frames = g_array_new(FALSE, FALSE, sizeof(struct perf_frame));

	while ((rc = perf_script_reader_next(r, &s, &err)) > 0) {
		const struct perf_frame *f;

		perf_script_parse_frames(&s, false, frames, skips);
		CHECK(frames->len == 1, "%u frames", frames->len);
		f = (const struct perf_frame *)(void *)frames->data;
		g_string_append_printf(got, "%" G_GUINT64_FORMAT " %.*s %" G_GUINT64_FORMAT "\n",
				       s.lineno, frames->len ? (int)f->sym.len : 0,
				       frames->len ? f->sym.s : "", s.period);
	}
	g_array_free(frames, TRUE);
	CHECK(rc == 0 && !err, "rc %d", rc);
	/* the bad header after b's frame ends b's sample, and c is not added to b */
	CHECK(strcmp(got->str, "4 b+0x1 7\n9 d+0x1 9\n") == 0, "samples:\n%s", got->str);
	skip_log_foreach(skips, collect, sk);
	CHECK(strcmp(sk->str, "1: sample with a negative period\n"
			      "6: sample period above 2^64-1\n") == 0, "skips:\n%s", sk->str);
	perf_script_reader_free(r);
	skip_log_free(skips);
	g_string_free(got, TRUE);
	g_string_free(sk, TRUE);
	unlink(path);
	g_free(path);
}

/*
 * Lines of blanks between samples end them, as empty lines do, and are
 * not counted as bad frame lines (the reader's bulk skip of indented
 * lines passes over them when a header follows).
 */
static void test_blank_lines(void)
{
	static const char in[] =
		"prog 1 [000] 1.0: 3 cycles:\n\t1 a+0x1 (/bin/p)\n  \n"
		"prog 1 [000] 2.0: 4 cycles:\n\t1 b+0x1 (/bin/p)\n \t \n"
		"prog 1 [000] 3.0: 5 cycles:\n\t1 c+0x1 (/bin/p)\n\n";
	char *path = bad_tmpfile(in, sizeof(in) - 1);
	struct perf_script_opts po = { 0 };
	struct skip_log *skips = skip_log_new();
	struct perf_script_reader *r = perf_script_reader_open(path, &po, skips, NULL);
	GArray *frames = g_array_new(FALSE, FALSE, sizeof(struct perf_frame));
	struct perf_sample s;
	int n = 0, rc;
	size_t nframes = 0;

	while ((rc = perf_script_reader_next(r, &s, NULL)) > 0) {
		n++;
		perf_script_parse_frames(&s, false, frames, skips);
		nframes += frames->len;
	}
	CHECK(rc == 0 && n == 3 && nframes == 3, "rc %d, %d samples, %zu frames", rc, n, nframes);
	CHECK(skip_log_total(skips) == 0, "%lu skips", (unsigned long)skip_log_total(skips));
	g_array_free(frames, TRUE);
	perf_script_reader_free(r);
	skip_log_free(skips);
	unlink(path);
	g_free(path);
}

/*
 * A sample's raw text is whole lines, '\n' included, also when the last
 * one came through the line-by-line path with a CRLF end (found by
 * fuzz/perfscript.c: the raw text stopped at the '\r').
 */
static void test_crlf_raw(void)
{
	static const char in[] =
		"prog 1 [000] 1.0: 3 cycles:\r\n\t1 a+0x1 (/bin/p)\r\n# note\r\n\r\n"
		"prog 1 [000] 2.0: 3 cycles:\r\n\t1 b+0x1 (/bin/p)\r\njunk\r\n\r\n";
	static const char *const want[] = {
		"\t1 a+0x1 (/bin/p)\r\n# note\r\n",
		"\t1 b+0x1 (/bin/p)\r\njunk\r\n",
	};
	char *path = bad_tmpfile(in, sizeof(in) - 1);
	struct perf_script_opts po = { 0 };
	struct perf_script_reader *r = perf_script_reader_open(path, &po, NULL, NULL);
	struct perf_sample s;
	int n = 0;

	while (perf_script_reader_next(r, &s, NULL) > 0 && n < 2) {
		CHECK(s.raw.len == strlen(want[n]) && memcmp(s.raw.s, want[n], s.raw.len) == 0,
		      "sample %d raw text '%.*s'", n + 1, (int)s.raw.len, s.raw.s);
		n++;
	}
	CHECK(n == 2, "%d samples", n);
	perf_script_reader_free(r);
	unlink(path);
	g_free(path);
}

/*
 * A 32 MiB line through a pipe arrives in 64 KiB reads; each must be
 * searched once (before the fix every read rescanned the whole line).
 * This checks the line comes through intact; bounded-memory.sh and the
 * fuzz target cover the rest.
 */
static void test_long_line_pipe(void)
{
	const size_t len = 32u << 20;
	int fds[2];
	pid_t pid;
	struct line_reader *r;
	struct line line;
	GError *err = NULL;
	gint64 t0;
	bool intact = true;

	if (pipe(fds) != 0) {
		perror("pipe");
		exit(2);
	}
	pid = fork();
	if (pid == 0) {
		char *buf = g_malloc(len + 8);
		close(fds[0]);
		memset(buf, 'y', len);
		memcpy(buf + len, "\nz\n", 3);
		for (size_t off = 0; off < len + 3;) {
			ssize_t n = write(fds[1], buf + off, len + 3 - off);
			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(0);
	}
	close(fds[1]);
	r = line_reader_from_fd(fds[0], "pipe");
	t0 = g_get_monotonic_time();
	CHECK(line_reader_next(r, &line, &err) == 1 && line.len == len, "long line");
	for (size_t i = 0; i < line.len && intact; i++)
		intact = line.s[i] == 'y';
	CHECK(intact, "long line bytes");
	CHECK(line_reader_next(r, &line, &err) == 1 && line.len == 1 && line.s[0] == 'z' &&
	      line.no == 2, "line after the long one");
	CHECK(line_reader_next(r, &line, &err) == 0 && !err, "end");
	printf("32 MiB line through a pipe: %.3f s\n",
	       (double)(g_get_monotonic_time() - t0) / 1e6);
	line_reader_free(r);
	close(fds[0]);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	test_periods();
	test_reader();
	test_blank_lines();
	test_crlf_raw();
	test_long_line_pipe();
	return bad_done();
}
