/*
 * fuzz/indexunit.c - the unit of a split= directory's index.tsv
 * (report_index_unit() in lib/report/report.c), which fold-report
 * trusts to name what a directory's counts are.
 *
 * Input: any bytes, as the text of an index.tsv.
 *
 * Checked, beyond memory safety and UB, against a second reading done here
 * line by line with memchr(): a unit is given only when the header has a
 * "unit" column and every non-blank row has the same usable unit there; a
 * refusal sets an error naming the file, and gives no unit.
 */
#include "fuzz.h"

#include "report/report.h"

/* Cell col of the tab-separated [s, end), or NULL; *n its length. */
static const char *cell(const char *s, const char *end, int col, size_t *n)
{
	for (int c = 0; c < col; c++) {
		const char *t = memchr(s, '\t', (size_t)(end - s));

		if (!t)
			return NULL;
		s = t + 1;
	}
	const char *t = memchr(s, '\t', (size_t)(end - s));
	*n = (size_t)((t ? t : end) - s);
	return s;
}

/* Whether text gives one unit (*want, NULL if none) by the rules above. */
static bool reference(const char *text, size_t len, char **want)
{
	const char *p = text, *end = text + len;
	int col = -1;

	*want = NULL;
	if (memchr(text, '\0', len))
		return false;
	for (int line = 0; p <= end; line++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		/* g_strchomp(): trailing ASCII white space is not part of a line */
		while (e > p && g_ascii_isspace(e[-1]))
			e--;
		if (line == 0) {
			for (int c = 0; ; c++) {
				size_t n;
				const char *s = cell(p, e, c, &n);

				if (!s)
					break;
				if (n == 4 && memcmp(s, "unit", 4) == 0)
					col = c;
			}
			if (col < 0)
				return true;
		} else if (e > p) {
			size_t n;
			const char *s = cell(p, e, col, &n);
			char *u;

			if (!s)
				goto bad;
			u = g_strndup(s, n);
			if (!report_unit_ok(u) || (*want && strcmp(*want, u) != 0)) {
				g_free(u);
				goto bad;
			}
			if (*want)
				g_free(u);
			else
				*want = u;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return true;
bad:
	g_clear_pointer(want, g_free);
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char *unit = (char *)"unset", *want;
	GError *err = NULL;
	int rc = report_index_unit(text, size, "dir/index.tsv", &unit, &err);
	bool ok = reference(text, size, &want);

	FUZZ_CHECK((rc == 0) == ok, "rc %d, reference %s", rc, ok ? "accepts" : "refuses");
	if (rc == 0) {
		FUZZ_CHECK(!err, "error set on success: %s", err->message);
		FUZZ_CHECK((!unit && !want) || (unit && want && strcmp(unit, want) == 0),
			   "unit '%s', reference '%s'", unit ? unit : "(none)",
			   want ? want : "(none)");
	} else {
		FUZZ_CHECK(!unit, "a unit '%s' with an error", unit);
		FUZZ_CHECK(err && g_str_has_prefix(err->message, "dir/index.tsv:"),
			   "error not naming the file: %s", err ? err->message : "(none)");
		g_error_free(err);
	}
	g_free(unit);
	g_free(want);
	return 0;
}
