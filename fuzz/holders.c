/*
 * fuzz/holders.c - fold-report's lock holders (lib/report/holders.c): an
 * off-wake profile's folded text, any bytes, read by the folded reader
 * and taken apart, then written as Markdown and as the JSON member.
 *
 * Input: one option byte (bit 1: --top 1, else 1000), then folded text.
 *
 * Checked, beyond memory safety and UB: the lock waits, timeouts, other
 * waits and lines without "--" add up to the counts read; the JSON member,
 * in braces, parses; every '<' and '>' of the Markdown is inside a code
 * span, and it holds no control character but the line ends.
 */
#include "fuzz.h"
#include "jsoncheck.h"

#include "core/folded.h"
#include "core/skiplog.h"
#include "report/holders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct frame_classifier *fc;
	unsigned top = size && (data[0] & 1) ? 1 : 1000;
	const char *path = fuzz_file(size ? data + 1 : data, size ? size - 1 : 0);
	struct skip_log *skips = skip_log_new();
	struct holders *h;
	struct folded_reader *fr;
	struct folded_line fl;
	GError *err = NULL;
	fk_count read = 0, lw, other, timeouts, no_waker;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	int rc;

	if (!fc)
		fc = frame_classifier_new();
	h = holders_new(fc);
	fr = folded_reader_open(path, skips, &err);
	FUZZ_CHECK(fr != NULL, "cannot open the memfd");
	while ((rc = folded_reader_next(fr, &fl, &err)) > 0) {
		if (fl.ncounts != 1)
			continue;
		holders_add(h, fl.stack, fl.len, fl.count[0]);
		read += fl.count[0];
	}
	g_clear_error(&err);
	folded_reader_free(fr);
	holders_finish(h);
	holders_totals(h, &lw, &other, &timeouts, &no_waker);
	FUZZ_CHECK(lw + other + timeouts + no_waker == read, "the parts do not add up");

	out = open_memstream(&buf, &len);
	fputc('{', out);
	fputs("\"x\": 0", out);
	holders_write_json(out, h, "wake.folded", "us", top);
	fputs("}\n", out);
	fclose(out);
	{
		const char *end = fuzz_json_value(buf, 0);

		FUZZ_CHECK(end && *fuzz_json_ws(end) == '\0', "JSON does not parse: %.300s", buf);
	}
	free(buf);

	out = open_memstream(&buf, &len);
	holders_write_markdown(out, h, "wake<1>.folded", "us", top);
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
	holders_free(h);
	skip_log_free(skips);
	return 0;
}
