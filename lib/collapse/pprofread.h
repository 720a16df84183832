/*
 * pprofread.h - pprof profiles (profile.proto, gzip-compressed or raw) to
 * folded stacks: what pprof-collapse does.
 *
 *	struct pprof_profile *p = pprof_profile_read("cpu.pb.gz", 0, &err);
 *	struct pprof_collapse_opts o = PPROF_COLLAPSE_OPTS_INIT;
 *	struct fold_table *t = p ? pprof_collapse(p, &o, skips, &err) : NULL;
 *	if (!t)
 *		...report err->message ("cpu.pb.gz: location 7: ...")...
 *	pprof_profile_free(p);
 *
 * A profile is untrusted input.  It is read whole (protocol buffers are
 * not a stream), at most max_bytes once decompressed (0: PPROF_MAX_BYTES),
 * then checked before anything is used: gzip data that is cut short,
 * corrupt or followed by junk, bytes that do not decode as profile.proto,
 * a string table not starting with "", a string index outside the table,
 * an object id that is 0 or given twice, a reference to a mapping,
 * location or function that does not exist, a sample whose values do not
 * match the sample types, a sample or location of more than
 * BOUNDS_MAX_FRAMES frames: each is an error naming the file and the
 * object, and nothing is collapsed.
 *
 * Memory: the decompressed profile, and 4 bytes for each string, sample,
 * sample type, mapping, location and function in it (16 more for each
 * object when their ids are not 1, 2, 3... in order): the messages are
 * read where they are, when they are used, never copied into structures
 * of their own (which took ten times the profile, and forty for a file
 * of empty strings).  Then the folded stacks, bounded as bounds.h says.
 *
 * A sample becomes one stack, root first: for each location from the
 * last (the root) to the first (the leaf), its lines from the last (the
 * function the address is in) to the first (the innermost inlined call),
 * each a frame named after its function (name, else system name) by
 * framename.h's frame_name_append_text() without flags (';' becomes ':',
 * a line break '_', an empty name "-"), with lines ":FILE:LINE".  A NUL
 * byte in a name, which the folded format cannot hold, is written "\0".
 * A location without lines (not symbolized) is "[BINARY]" after its
 * mapping's file, or "[unknown]", with addrs "[BINARY <ADDRESS>]".  With
 * tagroot, each label key given adds a root frame "KEY=VALUE" (values
 * joined by ','; numbers with their unit), in the order given, as pprof
 * -tagroot does; a sample without that label gets no frame for it.  A
 * stack starting with '#' (a comment in the folded format) starts with
 * '_' instead.
 *
 * The sample's value (sample_index) is added to its stack in the table.
 * A negative value (a pprof -diff_base profile) cannot be a folded count:
 * the sample is a counted skip, "sample with a negative value", as is a
 * sample left with no frame, "sample without locations"; skips are
 * numbered by the sample's position in the profile, from 1.
 *
 * The limits of bounds.h hold: a frame name (a function's name or file,
 * a mapping's file, a label's value) of more than BOUNDS_MAX_NAME bytes,
 * a stack of more than BOUNDS_MAX_FRAMES frames or BOUNDS_MAX_STACK
 * bytes, distinct stacks of more than max_output bytes in all: each is an
 * error, found before the memory is taken, and no table is returned.
 */
#ifndef FOLDKIT_PPROF_READ_H
#define FOLDKIT_PPROF_READ_H

#include "core/foldtable.h"
#include "core/skiplog.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPROF_MAX_BYTES ((size_t)1 << 30)

struct pprof_profile;

/* Reads path (NULL or "-": standard input); NULL with *err set. */
struct pprof_profile *pprof_profile_read(const char *path, size_t max_bytes,
					 GError **err);

/* The same from data[0..len); name is what messages call it. */
struct pprof_profile *pprof_profile_parse(const void *data, size_t len,
					  const char *name, size_t max_bytes,
					  GError **err);

void pprof_profile_free(struct pprof_profile *p);

/* The number of sample types (values per sample). */
size_t pprof_profile_types(const struct pprof_profile *p);

/* Sample type i as "TYPE/UNIT"; free with g_free(). */
char *pprof_profile_type(const struct pprof_profile *p, size_t i);

/*
 * The sample type spec names: a number ("0"), or a type ("cpu",
 * "alloc_space"); NULL names pprof's default (default_sample_type, else
 * the last type).  Returns the index, or -1 with *err set.
 */
int pprof_profile_sample_index(const struct pprof_profile *p, const char *spec,
			       GError **err);

struct pprof_collapse_opts {
	int sample_index;		/* from pprof_profile_sample_index() */
	const char *const *tagroot;	/* label keys, root first */
	size_t ntagroot;
	bool lines;			/* ":FILE:LINE" after each function */
	bool addrs;			/* "[BINARY <ADDRESS>]" for unknowns */
	uint64_t max_output;		/* the distinct stacks' bytes, each
					   with its line end; 0:
					   BOUNDS_DEFAULT_OUTPUT */
};

#define PPROF_COLLAPSE_OPTS_INIT { .sample_index = 0 }

/*
 * Every sample's stack and value in a new table, which the caller frees
 * with fold_table_free() (skips to skips, which may be NULL).  NULL with
 * *err set for a bad sample index or a limit passed: nothing of the
 * profile is kept.
 */
struct fold_table *pprof_collapse(const struct pprof_profile *p,
				  const struct pprof_collapse_opts *o,
				  struct skip_log *skips, GError **err);

#endif
