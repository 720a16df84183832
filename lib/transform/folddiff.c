#include "transform/folddiff.h"

#include "core/error.h"

#include <errno.h>
#include <math.h>

/* 2^53: above it a double no longer holds every integer, which is when
 * Perl (built with 64-bit IVs) tries an exact integer division first. */
#define NV_EXACT ((unsigned __int128)1 << 53)

fk_count fold_diff_scale(fk_count c1, fk_count total1, fk_count total2)
{
	double q;

	if (total1 == 0 || total1 == total2)
		return c1;
	if (fk_count_is_integer(c1) && fk_count_is_integer(total1) &&
	    fk_count_is_integer(total2)) {
		unsigned __int128 a = (unsigned __int128)fk_count_whole(c1);
		unsigned __int128 b = (unsigned __int128)fk_count_whole(total2);
		unsigned __int128 d = (unsigned __int128)fk_count_whole(total1);
		unsigned __int128 p = a * b;

		if (p <= UINT64_MAX) {		/* Perl's integer multiply */
			if (p > NV_EXACT && p >= d && p % d == 0)
				return fk_count_from_u64((uint64_t)(p / d));
			q = (double)(uint64_t)p / (double)(uint64_t)d;
		} else {
			q = (double)(uint64_t)a * (double)(uint64_t)b / (double)(uint64_t)d;
		}
	} else {
		q = fk_count_to_double(c1) * fk_count_to_double(total2) /
		    fk_count_to_double(total1);
	}
	q = trunc(q);
	if (q >= 18446744073709551615.0)
		return fk_count_from_u64(UINT64_MAX);
	return fk_count_from_u64((uint64_t)q);
}

fk_count fold_diff_percent(fk_count c, fk_count total)
{
	fk_count units = FK_COUNT_ONE / 10000;	/* 0.0001 */
	fk_count r;

	if (total <= 0)
		return 0;
	/* c/total*100 in steps of 0.0001, rounded half up; c <= 2^94 so
	 * c * 10^6 stays below 2^127 */
	r = (c * 1000000 + total / 2) / total;
	return r * units;
}

long fold_diff_write(const struct fold_table *t, const struct fold_diff_opts *o,
		     FILE *out, GError **err)
{
	struct fold_entry **v = fold_table_sorted(t, NULL);
	fk_count t1 = fold_table_total(t, 0), t2 = fold_table_total(t, 1);
	char buf[FK_COUNT_BUFSZ];
	long omitted = 0;

	for (struct fold_entry **p = v; *p; p++) {
		fk_count c1 = (*p)->count[0], c2 = (*p)->count[1], d;

		if (o->percent) {
			c1 = fold_diff_percent(c1, t1);
			c2 = fold_diff_percent(c2, t2);
		} else if (o->normalize) {
			c1 = fold_diff_scale(c1, t1, t2);
		}
		d = c2 > c1 ? c2 - c1 : c1 - c2;
		if (o->min_delta_set && d < o->min_delta) {
			omitted++;
			continue;
		}
		fwrite_unlocked((*p)->stack, 1, (*p)->len, out);
		putc_unlocked(' ', out);
		fwrite_unlocked(buf, 1, fk_count_format(c1, buf), out);
		putc_unlocked(' ', out);
		fwrite_unlocked(buf, 1, fk_count_format(c2, buf), out);
		if (putc_unlocked('\n', out) == EOF)
			break;
	}
	g_free(v);
	if (fflush(out) != 0 || ferror(out)) {
		fk_error_at(err, FK_ERROR_IO, "<stdout>", 0, "write error: %s",
			    g_strerror(errno ? errno : EIO));
		return -1;
	}
	return omitted;
}
