/*
 * simd.h - whether this processor runs the AVX2 scans some loops have
 * beside their SSE2 ones.
 *
 *	#ifdef FK_AVX2_PATH
 *	__attribute__((target("avx2")))
 *	static size_t scan_avx2(const char *s, size_t n) { ... }
 *	#endif
 *	...
 *	#ifdef FK_AVX2_PATH
 *	if (n >= 32 && fk_have_avx2())
 *		return scan_avx2(s, n);
 *	#endif
 *
 * The build targets plain x86-64 (SSE2), as Debian's packages do, so the
 * wider loops are compiled for AVX2 alone and chosen at run time: the
 * scans of every line (its end, a needle, its frames' marks) take half
 * the steps on lines of a hundred bytes or more.  FOLDKIT_NO_AVX2 set in
 * the environment keeps the SSE2 loops, so that the tests compare the two
 * (test/scripts/simd-paths.sh).
 */
#ifndef FOLDKIT_SIMD_H
#define FOLDKIT_SIMD_H

#include <stdbool.h>
#include <stdlib.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define FK_AVX2_PATH 1
#include <immintrin.h>

/* Whether the processor has AVX2 (and popcnt, which comes with it), and
 * FOLDKIT_NO_AVX2 does not say no: asked once. */
static inline bool fk_have_avx2(void)
{
	static int have = -1;

	if (have < 0)
		have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") &&
		       !getenv("FOLDKIT_NO_AVX2");
	return have;
}
#endif

#endif
