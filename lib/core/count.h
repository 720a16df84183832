/*
 * count.h - exact sample counts: integers up to 2^64-1 and decimals with up
 * to nine fractional digits, summed without overflow or rounding.  A count
 * written with more decimals is rounded to nine when parsed: to the nearest
 * 10^-9, a tie to the even neighbour (0.0000000005 -> 0, 0.0000000015 ->
 * 0.000000002, 0.00000000051 -> 0.000000001).
 *
 *	fk_count c;
 *	if (fk_count_parse("12.5", 4, &c) == FK_COUNT_OK)
 *		total += c;                     // plain + on fk_count is exact
 *	char buf[FK_COUNT_BUFSZ];
 *	fwrite(buf, 1, fk_count_format(total, buf), out);   // "12.5"
 *
 * An fk_count is a signed 128-bit fixed-point number in units of 10^-9, so
 * differences (fold-diff deltas) may be negative and sums stay exact up to
 * about 1.7e29: more than nine thousand million counts of 2^64-1 each, or
 * 2^64 counts of up to 9.2e9 each (adding past that would overflow).
 * Integer counts print as integers, byte for byte what the Perl tools
 * print.  A sum above 2^64-1 prints exactly but fk_count_parse() refuses
 * it (FK_COUNT_TOO_LARGE), so such a line cannot be read back.
 */
#ifndef FOLDKIT_COUNT_H
#define FOLDKIT_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef __int128 fk_count;

#define FK_COUNT_ONE ((fk_count)1000000000)
#define FK_COUNT_FRAC_DIGITS 9
#define FK_COUNT_BUFSZ 48

enum fk_count_status {
	FK_COUNT_OK = 0,
	FK_COUNT_EMPTY,		/* len is 0 */
	FK_COUNT_INVALID,	/* not a decimal number */
	FK_COUNT_NEGATIVE,	/* starts with '-' */
	FK_COUNT_TOO_LARGE,	/* integer part above 2^64-1 (after rounding) */
};

/* Parses s[0..len) entirely ("17", "0.25"); never reads past len.  Digits
 * past the ninth decimal round (see above). */
enum fk_count_status fk_count_parse(const char *s, size_t len, fk_count *out);

/* A short English reason for a status, for error messages. */
const char *fk_count_status_str(enum fk_count_status st);

/* Writes c in decimal (no NUL) and returns the length; buf holds
 * FK_COUNT_BUFSZ bytes.  Fractions print without trailing zeros. */
size_t fk_count_format(fk_count c, char *buf);

static inline fk_count fk_count_from_u64(uint64_t v)
{
	return (fk_count)v * FK_COUNT_ONE;
}

static inline bool fk_count_is_integer(fk_count c)
{
	return c % FK_COUNT_ONE == 0;
}

static inline double fk_count_to_double(fk_count c)
{
	return (double)(c / FK_COUNT_ONE) +
	       (double)(c % FK_COUNT_ONE) / (double)FK_COUNT_ONE;
}

/* Truncates toward zero to a whole number of samples (of units, not 10^-9). */
static inline fk_count fk_count_whole(fk_count c)
{
	return c / FK_COUNT_ONE;
}

#endif
