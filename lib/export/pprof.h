/*
 * pprof.h - profiles written as pprof's profile.proto
 * (perftools.profiles.Profile), gzip-compressed, as Google's pprof, Parca,
 * Pyroscope and OpenTelemetry read them.
 *
 *	struct pprof_builder *b = pprof_new("cpu", "nanoseconds");
 *	if (pprof_add_folded(b, "app-12/12;main;work", 19, fk_count_from_u64(250), false, &err) < 0)
 *		...                               // not a whole number, too big
 *	if (pprof_write(b, out, "cpu.pb.gz", &err) < 0)
 *		...
 *	pprof_free(b);
 *
 * The encoding is protobuf-c's, from code generated at build time from the
 * profile.proto Debian installs (build/gen/profile.pb-c.h), compressed by
 * zlib; the output is byte for byte the same for the same calls: ids and
 * the string table are numbered in first-use order, the gzip header holds
 * no time or name.
 *
 * The model: a Function per distinct (name, file); a Location per
 * distinct (mapping, address, lines); a Sample per distinct (locations,
 * labels), whose value is the sum of the values added with them.  Values
 * are 64-bit signed integers in pprof: a value that is not a whole number
 * is refused when added, a sum above 2^63-1 when written.
 *
 * Strings in a protocol buffer must be UTF-8: each byte of an invalid
 * sequence (and a NUL) becomes U+FFFD, and pprof_replaced() counts the
 * strings that changed.  Strings are copied.
 */
#ifndef FOLDKIT_PPROF_H
#define FOLDKIT_PPROF_H

#include "core/count.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pprof_builder;

/* A profile with one sample type, type/unit ("samples", "count"). */
struct pprof_builder *pprof_new(const char *type, const char *unit);
void pprof_free(struct pprof_builder *b);

/* The period: every sample stands for period units of type/unit. */
void pprof_set_period(struct pprof_builder *b, const char *type,
		      const char *unit, int64_t period);

/* A comment line (pprof -comments shows them). */
void pprof_add_comment(struct pprof_builder *b, const char *text);

/*
 * A mapping of a binary: [start, limit) at file offset; file and build_id
 * may be NULL.  Returns its id (never 0), the same for the same arguments.
 */
uint64_t pprof_mapping(struct pprof_builder *b, uint64_t start, uint64_t limit,
		       uint64_t offset, const char *file, const char *build_id);

/* A function; file may be NULL.  Returns its id (never 0). */
uint64_t pprof_function(struct pprof_builder *b, const char *name, size_t len,
			const char *file, size_t flen);

struct pprof_line {
	uint64_t function;	/* an id from pprof_function() */
	int64_t line;		/* 0: unknown */
};

/*
 * A location: an address in a mapping (both may be 0) and the functions
 * at it, lines[0] the innermost (an inlined callee) and lines[n-1] the
 * function the address is in.  Returns its id (never 0).
 */
uint64_t pprof_location(struct pprof_builder *b, uint64_t mapping,
			uint64_t address, const struct pprof_line *lines,
			size_t n);

/*
 * A label: a string, or a number with an optional unit.  pprof reads a
 * number 0 without a unit as no label at all, so such a label is not
 * written.
 */
struct pprof_label {
	const char *key;
	const char *str;	/* a string label, or NULL for a number: */
	int64_t num;
	const char *unit;	/* of num; may be NULL */
};

/*
 * Adds value to the sample of locations[0..n) (leaf first) with
 * labels[0..nlabels), creating it on first use.  Returns 0, or -1 with
 * *err set when value is negative or not a whole number.
 */
int pprof_add(struct pprof_builder *b, const uint64_t *locations, size_t n,
	      const struct pprof_label *labels, size_t nlabels, fk_count value,
	      GError **err);

/*
 * Adds a folded stack "root;...;leaf": a function and a location (with
 * no address) per distinct frame name.  A root frame that looks like
 * fp-collapse --tid's thread frame, "NAME-PID/TID" with PID and TID
 * numbers (or PID "?"), also gives the sample the labels comm (NAME),
 * pid and tid (not a pid or tid 0, see struct pprof_label); the frame
 * stays in the stack.  stable: the stack's bytes stay valid and unchanged
 * until pprof_free() (a mapped file, a fold_table's entry), so names are
 * not copied.  Each call makes a sample of its own (pprof adds up samples
 * with the same stack).
 */
int pprof_add_folded(struct pprof_builder *b, const char *stack, size_t len,
		     fk_count value, bool stable, GError **err);

/* The number of distinct samples so far. */
size_t pprof_samples(const struct pprof_builder *b);

/*
 * Writes the profile, gzip-compressed, to out; name is what errors call
 * it.  Returns 0, or -1 with *err set (a sum above 2^63-1, a write error).
 */
int pprof_write(struct pprof_builder *b, FILE *out, const char *name,
		GError **err);

/* After pprof_write(): how many strings had bytes replaced by U+FFFD. */
uint64_t pprof_replaced(const struct pprof_builder *b);

#endif
