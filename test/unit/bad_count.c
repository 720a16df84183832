/*
 * bad_count.c - fk_count at its edges: the largest counts, refused ones and
 * the reasons given, and formatting of every 128-bit extreme.
 */
#include "bad_check.h"

#include "core/count.h"

#include <string.h>

static enum fk_count_status parse(const char *s, fk_count *c)
{
	return fk_count_parse(s, strlen(s), c);
}

static const char *fmt(fk_count c)
{
	static char buf[FK_COUNT_BUFSZ + 1];
	buf[fk_count_format(c, buf)] = '\0';
	return buf;
}

int main(void)
{
	fk_count c = 0;
	const fk_count max = ((fk_count)1 << 126) - 1 + ((fk_count)1 << 126);
	const fk_count min = -max - 1;

	CHECK(parse("18446744073709551615", &c) == FK_COUNT_OK &&
	      c == fk_count_from_u64(UINT64_MAX), "2^64-1");
	CHECK(parse("18446744073709551615.999999999", &c) == FK_COUNT_OK, "2^64-1 and a fraction");
	CHECK(parse("18446744073709551616", &c) == FK_COUNT_TOO_LARGE, "2^64");
	CHECK(parse("340282366920938463463374607431768211456", &c) == FK_COUNT_TOO_LARGE, "2^128");
	CHECK(parse("00000000000000000000000000000000000000001", &c) == FK_COUNT_OK &&
	      c == FK_COUNT_ONE, "leading zeros");
	CHECK(parse("-1", &c) == FK_COUNT_NEGATIVE, "-1");
	CHECK(parse("-0", &c) == FK_COUNT_NEGATIVE, "-0");
	CHECK(fk_count_parse("", 0, &c) == FK_COUNT_EMPTY, "empty");
	/* a sign or a point alone is not a number (they said "missing count") */
	CHECK(parse("+", &c) == FK_COUNT_INVALID, "+");
	CHECK(parse(".", &c) == FK_COUNT_INVALID, ".");
	CHECK(parse("+.", &c) == FK_COUNT_INVALID, "+.");
	CHECK(parse("1.", &c) == FK_COUNT_OK && c == FK_COUNT_ONE, "1.");
	CHECK(parse(".5", &c) == FK_COUNT_OK && c == FK_COUNT_ONE / 2, ".5");
	CHECK(parse("1e3", &c) == FK_COUNT_INVALID, "1e3");
	CHECK(parse("12x", &c) == FK_COUNT_INVALID, "12x");
	CHECK(parse(" 1", &c) == FK_COUNT_INVALID, "leading blank");
	CHECK(parse("0.0000000001", &c) == FK_COUNT_OK && c == 0, "1e-10 rounds to 0");
	CHECK(parse("18446744073709551615.9999999994", &c) == FK_COUNT_OK &&
	      c == fk_count_from_u64(UINT64_MAX) + FK_COUNT_ONE - 1, "2^64-1 and a fraction, rounded down");
	CHECK(parse("18446744073709551615.9999999995", &c) == FK_COUNT_TOO_LARGE,
	      "rounds up to 2^64");
	{	/* many decimals: rounded once, by the first dropped digit and
		 * whether any later one is non-zero */
		GString *g = g_string_new("7.");
		for (int i = 0; i < 100000; i++)
			g_string_append_c(g, i == 50000 ? '1' : '0');
		CHECK(fk_count_parse(g->str, g->len, &c) == FK_COUNT_OK &&
		      c == 7 * FK_COUNT_ONE, "100000 decimals");
		g_string_free(g, TRUE);
	}
	CHECK(fk_count_parse("12", 1, &c) == FK_COUNT_OK && c == FK_COUNT_ONE, "reads only len");

	/* the 128-bit extremes format in the buffer */
	CHECK(strcmp(fmt(max), "170141183460469231731687303715.884105727") == 0, "max: %s", fmt(max));
	CHECK(strcmp(fmt(min), "-170141183460469231731687303715.884105728") == 0, "min: %s", fmt(min));
	CHECK(strcmp(fmt(-FK_COUNT_ONE / 2), "-0.5") == 0, "-0.5: %s", fmt(-FK_COUNT_ONE / 2));
	CHECK(strcmp(fmt(0), "0") == 0, "0");
	/* a sum above 2^64-1 prints exactly; it does not parse back */
	c = fk_count_from_u64(UINT64_MAX) * 2;
	CHECK(strcmp(fmt(c), "36893488147419103230") == 0, "2 * (2^64-1): %s", fmt(c));
	CHECK(parse(fmt(c), &c) == FK_COUNT_TOO_LARGE, "a big sum reads back");
	return bad_done();
}
