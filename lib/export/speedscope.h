/*
 * speedscope.h - profiles written in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): one JSON document
 * holding a shared frame table and one or more "sampled" profiles, each a
 * list of samples (stacks of frame indexes, root first) with their weights.
 *
 *	struct ss_doc *d = ss_doc_new("app");
 *	struct ss_profile *p = ss_profile_new(d, "app 12/12", SS_UNIT_NANOSECONDS);
 *	ss_profile_add_folded(p, "main;run;work", 13, fk_count_from_u64(250), false);
 *	uint32_t f[2] = { ss_frame(d, "main", 4), ss_frame_at(d, "work", 4, "w.c", 3, 12) };
 *	ss_profile_add(p, f, 2, fk_count_from_u64(250));
 *	if (ss_doc_write(d, out, "<stdout>", &err) < 0)
 *		...
 *	ss_doc_free(d);
 *
 * Samples keep the order they are added in: speedscope's "Time Order"
 * view draws them left to right in that order, each as wide as its
 * weight.  Two samples in a row with the same stack become one sample
 * with both weights (speedscope merges them the same way when it loads a
 * file, so what it shows is unchanged and the file is smaller).
 *
 * Memory: frames and stacks are interned (a stack is a node of one call
 * tree shared by every profile), so each sample costs a node index and a
 * weight, about 20 bytes, and the rest grows with the distinct frames and
 * stacks.
 *
 * Names are bytes from untrusted programs: every string is written as a
 * well-formed JSON string (see core/jsonesc.h).  Invalid UTF-8 cannot be
 * carried by JSON; its bytes become U+FFFD and ss_doc_replaced() counts
 * the names that changed, so the tool can say so.  Weights are written
 * exactly (decimals with up to nine places); speedscope reads them as
 * JavaScript numbers, exact up to 2^53 (ss_doc_inexact() counts larger
 * weights and totals).
 */
#ifndef FOLDKIT_SPEEDSCOPE_H
#define FOLDKIT_SPEEDSCOPE_H

#include "core/count.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ss_unit {
	SS_UNIT_NONE,
	SS_UNIT_NANOSECONDS,
	SS_UNIT_MICROSECONDS,
	SS_UNIT_MILLISECONDS,
	SS_UNIT_SECONDS,
	SS_UNIT_BYTES,
};

/*
 * Parses a unit: speedscope's own names ("nanoseconds", "none", ...) or the
 * words foldkit's tools and index.tsv files use: "ns", "nsec", "us", "µs",
 * "usec", "ms", "msec", "s", "sec", "B", "byte", and counts of things
 * ("samples", "switches", "events", "count", "counts") as SS_UNIT_NONE.
 * False if unknown.
 */
bool ss_unit_parse(const char *s, enum ss_unit *unit);

/* The unit's name in the file format. */
const char *ss_unit_name(enum ss_unit unit);

struct ss_doc;
struct ss_profile;

/* A document named name (the file's "name"); name is copied. */
struct ss_doc *ss_doc_new(const char *name);

/* Renames the document; name is copied. */
void ss_doc_set_name(struct ss_doc *d, const char *name);

/* Frees the document and its profiles. */
void ss_doc_free(struct ss_doc *d);

/*
 * A new profile, appended to the document's list (the order they are
 * written in); name is copied.  Owned by d.
 */
struct ss_profile *ss_profile_new(struct ss_doc *d, const char *name,
				  enum ss_unit unit);

/* The frame index of name[0..len) (a frame without file or line). */
uint32_t ss_frame(struct ss_doc *d, const char *name, size_t len);

/*
 * The frame index of name with its source file and line (line 0: none;
 * file NULL or flen 0: none).  Frames differing only in file or line are
 * distinct.  Names and files are copied.
 */
uint32_t ss_frame_at(struct ss_doc *d, const char *name, size_t len,
		     const char *file, size_t flen, uint32_t line);

/* Appends a sample: frames[0..n) root first (n may be 0: an empty stack). */
void ss_profile_add(struct ss_profile *p, const uint32_t *frames, size_t n,
		    fk_count weight);

/*
 * The stack handle of frames[0..n) (root first), or of folded frames
 * "root;...;leaf" (see ss_profile_add_folded() for stable), for
 * ss_profile_add_stack(); handles stay valid until ss_doc_free().
 */
uint32_t ss_doc_stack(struct ss_doc *d, const uint32_t *frames, size_t n);
uint32_t ss_doc_stack_folded(struct ss_doc *d, const char *stack, size_t len,
			     bool stable);

/*
 * The stack handle of frames[0..n) (root first) made as
 * ss_doc_stack_folded() makes that of their names: sharing only the
 * frames it shares with the stack the call before gave (a prefix), with
 * no lookup, so the same frames given twice apart get two handles (that
 * write the same).  For a caller that keeps each distinct stack's handle
 * and knows its frames' indexes: no text to make and split.  Its calls
 * and ss_doc_stack_folded()'s share nothing.
 */
uint32_t ss_doc_stack_next(struct ss_doc *d, const uint32_t *frames, size_t n);

/* Whether stack handle stack is that of frames[0..n) (root first). */
bool ss_doc_stack_is(const struct ss_doc *d, uint32_t stack, const uint32_t *frames,
		     size_t n);

/*
 * Appends a sample given as folded frames "root;...;leaf" (len may be 0).
 * stable: the bytes stay valid and unchanged until ss_doc_free() (a
 * mapped file, a fold_table's entry), so frame names are not copied.
 * Consecutive stacks sharing a prefix (sorted input) share its lookups.
 */
void ss_profile_add_folded(struct ss_profile *p, const char *stack, size_t len,
			   fk_count weight, bool stable);

/*
 * Appends a sample with a stack handle (ss_doc_stack(), or
 * ss_doc_last_stack(): the stack of the last sample appended to any
 * profile of d).  Returns the sample's index, for
 * ss_profile_add_weight(): the index of the sample before when the two
 * merge.
 */
uint32_t ss_doc_last_stack(const struct ss_doc *d);
size_t ss_profile_add_stack(struct ss_profile *p, uint32_t stack, fk_count weight);

/*
 * Adds weight to sample i, for a weight known only later (an off-CPU
 * wait, weighted when it ends, placed when it began).  Samples whose
 * weight stays 0 are not written (speedscope drops them too).
 */
void ss_profile_add_weight(struct ss_profile *p, size_t i, fk_count weight);

/*
 * Removes the profile from its document and frees it; the document is
 * then written without the frames only dropped profiles used (the other
 * frames keep their order).
 */
void ss_profile_drop(struct ss_profile *p);

/* Renames the profile (a thread that renamed itself); name is copied. */
void ss_profile_set_name(struct ss_profile *p, const char *name);

/* Profiles are written by this key, lowest first, then in creation order. */
void ss_profile_set_order(struct ss_profile *p, uint64_t key);

/* The profile's sum of weights. */
fk_count ss_profile_total(const struct ss_profile *p);

/* The number of samples as they are kept (after merging; weights of 0
 * included). */
size_t ss_profile_samples(const struct ss_profile *p);

/* Which profile speedscope opens first; NULL (the default): the heaviest,
 * the first written of equals. */
void ss_doc_set_active(struct ss_doc *d, struct ss_profile *p);

size_t ss_doc_profiles(const struct ss_doc *d);
struct ss_profile *ss_doc_profile(const struct ss_doc *d, size_t i);
const char *ss_profile_name(const struct ss_profile *p);

/* The number of distinct frames. */
size_t ss_doc_frames(const struct ss_doc *d);

/*
 * Writes the document to out; name (e.g. "<stdout>", a path) is what a
 * write error calls it.  Returns 0, or -1 with *err set.  A document
 * without profiles is valid, without "activeProfileIndex" (an optional
 * field, which must name a profile); speedscope says it is empty.
 */
int ss_doc_write(struct ss_doc *d, FILE *out, const char *name, GError **err);

/* After ss_doc_write(): how many names had bytes replaced by U+FFFD. */
uint64_t ss_doc_replaced(const struct ss_doc *d);

/* After ss_doc_write(): how many weights or totals were above 2^53. */
uint64_t ss_doc_inexact(const struct ss_doc *d);

#endif
