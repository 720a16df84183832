/*
 * fuzz/linereader.c - the line reader against a plain split on '\n'.
 *
 * Input: any bytes.  The fuzz build reads 16 bytes at a time, so the
 * refill, slide and growth paths run on every input.  Each line must be
 * exactly the bytes between two '\n' (less one final '\r'), numbered from
 * 1, with newline false only for an unterminated last line; the first line
 * holding a NUL byte must fail with FK_ERROR_BINARY naming that line; the
 * end must be reported (and stay reported) once every byte is consumed.
 */
#include "fuzz.h"

#include "core/error.h"
#include "core/linereader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *path = fuzz_file(data, size);
	struct line_reader *r;
	struct line line;
	GError *err = NULL;
	size_t pos = 0;
	uint64_t no = 0;
	int rc;

	r = line_reader_open(path, &err);
	FUZZ_CHECK(r && !err, "cannot open the memfd");
	while (pos < size) {
		const char *nl = memchr(s + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - s) : size, len = end - pos;
		bool nul = memchr(s + pos, '\0', len) != NULL;

		no++;
		rc = line_reader_next(r, &line, &err);
		if (nul) {
			char want[64];
			FUZZ_CHECK(rc == -1 && err && err->code == FK_ERROR_BINARY,
				   "line %lu has a NUL: rc %d", (unsigned long)no, rc);
			snprintf(want, sizeof(want), "%s:%lu: ", path, (unsigned long)no);
			FUZZ_CHECK(strncmp(err->message, want, strlen(want)) == 0,
				   "wrong place: %s", err->message);
			g_clear_error(&err);
			line_reader_free(r);
			return 0;
		}
		FUZZ_CHECK(rc == 1 && !err, "line %lu: rc %d", (unsigned long)no, rc);
		if (len && s[end - 1] == '\r')
			len--;
		FUZZ_CHECK(line.no == no, "line %lu numbered %lu", (unsigned long)no,
			   (unsigned long)line.no);
		FUZZ_CHECK(line.len == len && memcmp(line.s, s + pos, len) == 0,
			   "line %lu differs", (unsigned long)no);
		FUZZ_CHECK(line.newline == (nl != NULL), "line %lu newline flag",
			   (unsigned long)no);
		pos = end + (nl != NULL);
	}
	FUZZ_CHECK(line_reader_next(r, &line, &err) == 0 && !err, "no end after %zu bytes", size);
	FUZZ_CHECK(line_reader_next(r, &line, &err) == 0 && !err, "the end not sticky");
	FUZZ_CHECK(line_reader_bytes(r) == size, "read %lu of %zu bytes",
		   (unsigned long)line_reader_bytes(r), size);
	line_reader_free(r);
	return 0;
}
