/*
 * palette.h - flame graph colours, as flamegraph.pl picks them.
 *
 *	enum fg_palette p;
 *	if (palette_from_name("java", &p) < 0) ...     // unknown palette
 *	struct rgb c = palette_color(p, COLOR_BY_NAME, "Lfoo/Bar;run_[j]", 16, NULL);
 *	// the same name always gives the same colour, here a green
 *
 * Three ways to get the palette's variation values v1..v3 in [0,1):
 *   COLOR_BY_NAME  (default) a 48-bit drand48 generator seeded with the sum
 *                  of the name's characters; v1 = v2 = v3
 *   COLOR_HASH     (--hash) a weighted hash of the first three characters
 *                  (after any "module`" prefix) and of the reversed name
 *   COLOR_RANDOM   (--random) the caller's generator, so colours vary
 * Characters are Unicode code points of the UTF-8 name (an invalid byte
 * counts as U+FFFD), as flamegraph.pl sees them with its UTF-8 input layer.
 *
 * The multi-hue palettes (java, js, perl, chain, wakeup) pick a base hue
 * from annotations (_[k] kernel, _[j] JIT, _[i] inlined, _[w] waker) and
 * name patterns, exactly as flamegraph.pl does.
 *
 * The palette map (--cp) remembers a colour per name across runs in a
 * text file of "NAME->rgb(R,G,B)" lines.
 */
#ifndef FOLDKIT_PALETTE_H
#define FOLDKIT_PALETTE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fg_palette {
	PAL_HOT, PAL_MEM, PAL_IO, PAL_WAKEUP, PAL_CHAIN, PAL_JAVA, PAL_JS,
	PAL_PERL, PAL_RED, PAL_GREEN, PAL_BLUE, PAL_AQUA, PAL_YELLOW,
	PAL_PURPLE, PAL_ORANGE,
};

enum fg_color_mode { COLOR_BY_NAME, COLOR_HASH, COLOR_RANDOM };

struct rgb {
	uint8_t r, g, b;
};

/* drand48's generator: x = 0x5DEECE66D x + 11 mod 2^48. */
struct rand48 {
	uint64_t x;
};

static inline void rand48_seed(struct rand48 *r, uint32_t seed)
{
	r->x = (uint64_t)seed << 16 | 0x330e;
}

static inline double rand48_next(struct rand48 *r)
{
	r->x = (r->x * 0x5deece66dull + 0xb) & ((1ull << 48) - 1);
	return (double)r->x / (double)(1ull << 48);
}

/* Sets *out and returns 0, or returns -1 for an unknown name. */
int palette_from_name(const char *name, enum fg_palette *out);

/* The list of palette names, for messages: "hot, mem, ..., orange". */
const char *palette_names(void);

/* flamegraph.pl's namehash(): the --hash variation value of a name. */
double palette_namehash(const char *name, size_t len, bool reversed);

/*
 * The colour of a frame called name[0..len) (annotation included).  rng is
 * used only with COLOR_RANDOM.
 */
struct rgb palette_color(enum fg_palette p, enum fg_color_mode mode,
			 const char *name, size_t len, struct rand48 *rng);

/*
 * A differential frame's colour: white for no change, redder for growth and
 * bluer for shrinkage in proportion to delta / maxdelta (swapped by negate).
 */
struct rgb palette_delta(double delta, double maxdelta, bool negate);

/*
 * The colour of a differential frame absent from the first profile
 * (--mark-new): a purple that no delta gives (those keep red = green or
 * green = blue), as async-profiler marks new frames in its --diff graphs.
 */
struct rgb palette_delta_new(void);

/*
 * The two background gradient stops ("#rrggbb", NUL-terminated) for
 * --bgcolors spec (yellow, blue, green, grey or #rrggbb), or for the
 * palette's default when spec is NULL.  Returns -1 for a bad spec.
 */
int palette_background(const char *spec, enum fg_palette p, char bg1[8],
		       char bg2[8]);

/* The consistent palette (--cp): name -> colour, saved between runs. */
struct palette_map;

/*
 * Reads path if it exists (a missing file gives an empty map).  Lines
 * without "->" or with a colour that is not rgb(R,G,B) are errors naming
 * the file and line.
 */
struct palette_map *palette_map_load(const char *path, GError **err);

/* The colour stored for name, or computes it with compute and stores it. */
struct rgb palette_map_get(struct palette_map *m, const char *name, size_t len,
			   struct rgb (*compute)(const char *name, size_t len,
						 void *data),
			   void *data);

/* Writes the map sorted by name ("NAME->rgb(R,G,B)\n"); -1 with *err. */
int palette_map_save(const struct palette_map *m, const char *path,
		     GError **err);

void palette_map_free(struct palette_map *m);

#endif
