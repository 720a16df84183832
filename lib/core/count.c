#include "core/count.h"

#include <string.h>

/*
 * Past the ninth decimal a count is rounded to the nearest 10^-9, a tie to
 * the even neighbour: summing many rounded counts then drifts neither up
 * nor down, and it is IEEE 754's default, the rounding Perl's and inferno's
 * floating-point sums make.
 */
static bool round_up(unsigned __int128 kept, int first, bool rest)
{
	return first > 5 || (first == 5 && (rest || kept % 2 == 1));
}

enum fk_count_status fk_count_parse(const char *s, size_t len, fk_count *out)
{
	unsigned __int128 whole = 0, frac = 0;
	size_t i = 0, ndigits = 0, nfrac = 0;
	int dropped = -1;	/* the first digit past the ninth, or -1 */
	bool rest = false;	/* a non-zero digit after that one */

	if (len == 0)
		return FK_COUNT_EMPTY;
	/* The usual count: an integer of at most 19 digits, which cannot
	 * overflow 64 bits, so no 128-bit step per digit. */
	if (len < 20) {
		uint64_t v = 0;

		for (i = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			v = v * 10 + (unsigned)(s[i] - '0');
		if (i == len) {
			*out = (fk_count)v * FK_COUNT_ONE;
			return FK_COUNT_OK;
		}
		i = 0;
	}
	if (s[0] == '-')
		return FK_COUNT_NEGATIVE;
	if (s[0] == '+')
		i++;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, ndigits++) {
		whole = whole * 10 + (unsigned)(s[i] - '0');
		if (whole > UINT64_MAX)
			return FK_COUNT_TOO_LARGE;
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
			if (nfrac < FK_COUNT_FRAC_DIGITS) {
				frac = frac * 10 + (unsigned)(s[i] - '0');
				nfrac++;
			} else if (dropped < 0) {
				dropped = s[i] - '0';
			} else if (s[i] != '0') {
				rest = true;
			}
		}
	}
	if (i != len)
		return FK_COUNT_INVALID;
	if (ndigits + nfrac == 0)	/* "+", ".", "+.": a sign or point alone */
		return FK_COUNT_INVALID;
	for (; nfrac < FK_COUNT_FRAC_DIGITS; nfrac++)
		frac *= 10;
	whole = whole * FK_COUNT_ONE + frac;
	if (dropped >= 0 && round_up(whole, dropped, rest)) {
		whole++;
		/* "18446744073709551615.9999999999" rounds up to 2^64 */
		if (whole / FK_COUNT_ONE > UINT64_MAX)
			return FK_COUNT_TOO_LARGE;
	}
	*out = (fk_count)whole;
	return FK_COUNT_OK;
}

const char *fk_count_status_str(enum fk_count_status st)
{
	switch (st) {
	case FK_COUNT_OK: return "ok";
	case FK_COUNT_EMPTY: return "missing count";
	case FK_COUNT_INVALID: return "count is not a number";
	case FK_COUNT_NEGATIVE: return "negative count";
	case FK_COUNT_TOO_LARGE: return "count above 2^64-1";
	}
	return "bad count";
}

/* "00" to "99": a count's digits are written two at a time, halving the
 * divisions (every line of every tool's output ends in one). */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Writes v's decimal digits right-aligned ending at end; returns the start. */
static char *put_u128(char *end, unsigned __int128 v)
{
	uint64_t w;

	while (v > UINT64_MAX) {	/* 128-bit division only while it must */
		*--end = (char)('0' + (int)(v % 10));
		v /= 10;
	}
	w = (uint64_t)v;
	while (w >= 100) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * (w % 100), 2);
		w /= 100;
	}
	if (w >= 10) {
		end -= 2;
		memcpy(end, digit_pairs + 2 * w, 2);
	} else {
		*--end = (char)('0' + (int)w);
	}
	return end;
}

size_t fk_count_format(fk_count c, char *buf)
{
	char tmp[FK_COUNT_BUFSZ];
	char *end = tmp + sizeof(tmp), *p;
	unsigned __int128 mag = c < 0 ? -(unsigned __int128)c : (unsigned __int128)c;
	unsigned __int128 whole;
	uint64_t frac;		/* below 10^9 */
	size_t n;

	/* a 64-bit magnitude (counts below 1.8e10) divides in 64 bits */
	if (mag <= UINT64_MAX) {
		frac = (uint64_t)mag % (uint64_t)FK_COUNT_ONE;
		whole = (uint64_t)mag / (uint64_t)FK_COUNT_ONE;
	} else {
		frac = (uint64_t)(mag % FK_COUNT_ONE);
		whole = mag / FK_COUNT_ONE;
	}

	if (frac) {
		int digits = FK_COUNT_FRAC_DIGITS;
		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		p = end;
		for (int i = 0; i < digits; i++) {
			*--p = (char)('0' + (int)(frac % 10));
			frac /= 10;
		}
		*--p = '.';
		end = p;
	}
	p = put_u128(end, whole);
	if (c < 0)
		*--p = '-';
	n = (size_t)(tmp + sizeof(tmp) - p);
	memcpy(buf, p, n);
	return n;
}
