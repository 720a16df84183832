/*
 * fuzz/compare.c - fold-report --base (lib/report/compare.c): two folded
 * profiles compared.
 *
 * Input: one option byte, the base's folded text up to a line "%%", then
 * the new side's.  Bits: 1 JSON (else Markdown), 2 windows (1.5 s and
 * 2.5 s, else none), 4 unit "us" (off-CPU, measured), 8 unit "ns" (else
 * samples), 16 --top 1 (else 1000).
 *
 * Checked, beyond memory safety and UB: a side is read whenever its text
 * reads without error and has no differential line, and refused with an
 * error naming it otherwise; the output is valid UTF-8 holding no control character but
 * the line end; JSON parses (fuzz/jsoncheck.h) and has no '<' or '>'; in
 * Markdown every '<' and '>' is inside a code span; every JSON row's
 * delta is new less base and not 0, and the rows are ranked by the size
 * of their change.
 */
#include "jsoncheck.h"

#include "report/compare.h"

#include <math.h>

/* Whether a side is to be refused: a line of two counts, or a read
 * error (a NUL byte). */
static bool refusable(const char *path)
{
	struct folded_shape shape = { .ncounts = 1 };
	struct folded_reader *fr = folded_reader_open(path, NULL, NULL);
	struct folded_line fl;
	bool bad = false;
	int rc;

	FUZZ_CHECK(fr != NULL, "cannot open the input");
	folded_reader_set_shape(fr, &shape);
	while ((rc = folded_reader_next(fr, &fl, NULL)) > 0)
		bad |= fl.ncounts == 2;
	folded_reader_free(fr);
	bad |= shape.odd > 0;
	folded_shape_release(&shape);
	return bad || rc < 0;
}

/* The JSON rows: delta is new - base, never 0, ranked by |delta| in each
 * table (a '[' between two rows starts another). */
static void check_rows(const char *buf)
{
	double last = INFINITY;
	const char *prev = buf;

	for (const char *p = buf; (p = strstr(p, "{\"frame\": "));) {
		const char *b = strstr(p, "\"base\": "), *n = strstr(p, "\"new\": ");
		const char *d = strstr(p, "\"delta\": "), *end = strchr(p, '\n');
		double vb, vn, vd;

		FUZZ_CHECK(b && n && d && (!end || d < end), "a row without base, new, delta");
		if (!end)
			end = p + strlen(p);
		vb = strtod(b + 8, NULL);
		vn = strtod(n + 7, NULL);
		vd = strtod(d + 9, NULL);
		FUZZ_CHECK(vd != 0 && fabs(vn - vb - vd) <= 0.002 + 1e-9 * fabs(vd),
			   "delta %g, base %g, new %g", vd, vb, vn);
		if (memchr(prev, '[', (size_t)(p - prev)))
			last = INFINITY;
		FUZZ_CHECK(fabs(vd) <= last * (1 + 1e-12), "rows not ranked");
		last = fabs(vd);
		prev = p = end;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cmp_opts o = CMP_OPTS_INIT;
	struct cmp_side *side[2] = { NULL, NULL };
	const char *sep, *text[2], *path[2];
	size_t len[2], outlen = 0;
	char *buf = NULL;
	GError *err = NULL;
	FILE *out;
	uint8_t opt;
	bool refused = false;

	if (size < 1)
		return 0;
	opt = data[0];
	data++, size--;
	sep = memmem(data, size, "\n%%\n", 4);
	text[0] = (const char *)data;
	len[0] = sep ? (size_t)(sep - text[0]) + 1 : size;
	text[1] = sep ? sep + 4 : text[0] + size;
	len[1] = size - (size_t)(text[1] - text[0]);
	path[0] = fuzz_file(text[0], len[0]);
	path[1] = fuzz_file2(text[1], len[1]);

	o.format = opt & 1 ? REPORT_JSON : REPORT_MARKDOWN;
	if (opt & 2) {
		o.window[0] = 1.5;
		o.window[1] = 2.5;
	}
	o.unit = opt & 4 ? "us" : opt & 8 ? "ns" : NULL;
	o.top = opt & 16 ? 1 : 1000;
	for (int i = 0; i < 2; i++) {
		bool two = refusable(path[i]);

		side[i] = cmp_side_read(path[i], i, &o, NULL, &err);
		FUZZ_CHECK(!side[i] == two, "side %d %s", i, two ? "read" : "refused");
		if (!side[i]) {
			FUZZ_CHECK(err && strstr(err->message, path[i]), "the error does not name the file");
			g_clear_error(&err);
			refused = true;
		}
	}
	if (refused)
		goto done;
	FUZZ_CHECK(cmp_pair(side[0], side[1], &err) == 0, "cmp_pair: %s", err->message);
	out = open_memstream(&buf, &outlen);
	FUZZ_CHECK(cmp_write(out, side[0], side[1], &o, NULL) == 0, "cmp_write failed");
	fclose(out);

	FUZZ_CHECK(g_utf8_validate(buf, (gssize)outlen, NULL), "output is not UTF-8");
	for (size_t i = 0; i < outlen; i++)
		FUZZ_CHECK((unsigned char)buf[i] >= 0x20 || buf[i] == '\n',
			   "control character %#x at %zu", (unsigned char)buf[i], i);
	if (o.format == REPORT_JSON) {
		const char *end = fuzz_json_value(buf, 0);

		FUZZ_CHECK(end && *fuzz_json_ws(end) == '\0', "invalid JSON near byte %zu",
			   end ? (size_t)(end - buf) : 0);
		FUZZ_CHECK(!memchr(buf, '<', outlen) && !memchr(buf, '>', outlen), "raw < or > in JSON");
		check_rows(buf);
	} else {
		for (const char *l = buf, *e; l < buf + outlen; l = e + 1) {
			e = memchr(l, '\n', (size_t)(buf + outlen - l));
			if (!e)
				e = buf + outlen;
			fuzz_markdown_line(l, (size_t)(e - l));
		}
	}
	free(buf);
done:
	cmp_side_free(side[0]);
	cmp_side_free(side[1]);
	return 0;
}
