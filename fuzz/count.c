/*
 * fuzz/count.c - fk_count parsing and formatting.
 *
 * Input: any bytes.  They are parsed as a count; a count that parses must
 * format and parse back to the same value.  The first 16 bytes are also
 * taken as a raw fk_count (any 128-bit value, negative ones included) that
 * must format within FK_COUNT_BUFSZ as a well-formed decimal which parses
 * back to the same value when it is in the parser's range, and to the
 * matching error when it is not.
 */
#include "fuzz.h"

#include "core/count.h"

#define MAX_WHOLE ((fk_count)UINT64_MAX)

/* A well-formed formatted count: -?DIGITS(.DIGITS without a final 0)? */
static void check_format(const char *s, size_t n)
{
	size_t i = 0, d = 0;

	FUZZ_CHECK(n > 0 && n < FK_COUNT_BUFSZ, "formatted length %zu", n);
	if (s[0] == '-')
		i++;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++, d++;
	FUZZ_CHECK(d > 0, "no integer digits in '%.*s'", (int)n, s);
	FUZZ_CHECK(d == 1 || s[i - d] != '0', "leading zero in '%.*s'", (int)n, s);
	if (i < n) {
		size_t f = 0;
		FUZZ_CHECK(s[i] == '.', "junk in '%.*s'", (int)n, s);
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			f++;
		FUZZ_CHECK(i == n && f >= 1 && f <= FK_COUNT_FRAC_DIGITS && s[n - 1] != '0',
			   "bad fraction in '%.*s'", (int)n, s);
	}
}

static void round_trip(fk_count c)
{
	char buf[FK_COUNT_BUFSZ + 16];
	fk_count back = -1;
	enum fk_count_status st;
	size_t n;

	memset(buf, 'x', sizeof(buf));
	n = fk_count_format(c, buf);
	FUZZ_CHECK(buf[FK_COUNT_BUFSZ] == 'x', "format wrote past FK_COUNT_BUFSZ");
	check_format(buf, n);
	FUZZ_CHECK(fk_count_is_integer(c) == !memchr(buf, '.', n),
		   "integer %d but '%.*s'", fk_count_is_integer(c), (int)n, buf);
	st = fk_count_parse(buf, n, &back);
	if (c < 0)
		FUZZ_CHECK(st == FK_COUNT_NEGATIVE, "'%.*s' gave %d", (int)n, buf, st);
	else if (c / FK_COUNT_ONE > MAX_WHOLE)
		FUZZ_CHECK(st == FK_COUNT_TOO_LARGE, "'%.*s' gave %d", (int)n, buf, st);
	else
		FUZZ_CHECK(st == FK_COUNT_OK && back == c, "'%.*s' does not read back",
			   (int)n, buf);
	(void)fk_count_to_double(c);
	(void)fk_count_whole(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fk_count c = -1;
	enum fk_count_status st = fk_count_parse((const char *)data, size, &c);

	FUZZ_CHECK(fk_count_status_str(st) != NULL, "no text for status %d", st);
	if (st == FK_COUNT_OK) {
		FUZZ_CHECK(c >= 0, "a parsed count is negative");
		FUZZ_CHECK(c / FK_COUNT_ONE <= MAX_WHOLE, "a parsed count above 2^64-1");
		round_trip(c);
	}
	if (size >= sizeof(fk_count)) {
		memcpy(&c, data, sizeof(c));
		round_trip(c);
	}
	return 0;
}
