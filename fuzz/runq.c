/*
 * fuzz/runq.c - fold-report's run queue (lib/report/runq.c): a run-queue
 * profile's folded text, any bytes, read by the folded reader as one
 * process's (or as a file's, without a process), then written as Markdown
 * and as the JSON member.
 *
 * Input: one option byte (bit 1: --top 1, else 1000; bit 2: no process;
 * bit 4: a window of 1000 us), then folded text.
 *
 * Checked, beyond memory safety and UB: the threads' times add up to the
 * counts read, heaviest first; the JSON member, in braces, parses; every '<' and '>' of the
 * Markdown is inside a code span, and it holds no control character but
 * the line ends.
 */
#include "fuzz.h"
#include "jsoncheck.h"

#include "core/folded.h"
#include "core/skiplog.h"
#include "report/runq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct frame_classifier *fc;
	unsigned opt = size ? data[0] : 0, top = (opt & 1) ? 1 : 1000;
	const char *process = (opt & 2) ? NULL : "p<1>.main";
	const char *path = fuzz_file(size ? data + 1 : data, size ? size - 1 : 0);
	struct skip_log *skips = skip_log_new();
	struct runq *q;
	struct folded_reader *fr;
	struct folded_line fl;
	GError *err = NULL;
	fk_count read = 0, sum = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	int rc;

	if (!fc)
		fc = frame_classifier_new();
	q = runq_new(fc);
	if ((opt & 4) && process)
		runq_set_window(q, process, fk_count_from_u64(1000));
	fr = folded_reader_open(path, skips, &err);
	FUZZ_CHECK(fr != NULL, "cannot open the memfd");
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		if (fl.ncounts != 1)
			continue;
		runq_add(q, "runq/p.folded", process, fl.stack, fl.len, fl.count[0]);
		read += fl.count[0];
	}
	g_clear_error(&err);
	folded_reader_free(fr);
	runq_finish(q);
	for (size_t i = 0; i < runq_nthreads(q); i++) {
		const struct runq_thread *t = runq_thread_at(q, i);

		FUZZ_CHECK(i == 0 || runq_thread_at(q, i - 1)->count >= t->count, "threads out of order");
		sum += t->count;
	}
	FUZZ_CHECK(sum == read, "the threads do not add up");

	out = open_memstream(&buf, &len);
	fputc('{', out);
	fputs("\"x\": 0", out);
	runq_write_json(out, q, "runq", "us", top);
	fputs("}\n", out);
	fclose(out);
	{
		const char *end = fuzz_json_value(buf, 0);

		FUZZ_CHECK(end && *fuzz_json_ws(end) == '\0', "JSON does not parse: %.300s", buf);
	}
	free(buf);

	out = open_memstream(&buf, &len);
	runq_write_markdown(out, q, "runq<1>", "us", top);
	fclose(out);
	for (char *line = buf, *nl; line < buf + len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(buf + len - line));
		if (!nl)
			nl = buf + len;
		for (char *c = line; c < nl; c++)
			FUZZ_CHECK((unsigned char)*c >= 0x20 && *c != 0x7f, "control byte in Markdown");
		fuzz_markdown_line(line, (size_t)(nl - line));
	}
	free(buf);
	runq_free(q);
	skip_log_free(skips);
	return 0;
}
