/*
 * stackops.h - operations on one folded stack ("root;caller;leaf"): split
 * it into frames, match frames against a pattern, fold runs of frames,
 * drop frames, cut the stack at a frame.  Used by kfold, fgrep-stacks and
 * fold-diff, and meant for the fuzzers and the perf plugin as well.
 *
 *	GError *err = NULL;
 *	struct frame_matcher *m = frame_matcher_new("mutex_lock", 0, &err);
 *	struct frame hit;
 *	if (frame_matcher_find(m, "a;pthread_mutex_lock;futex", 26, &hit))
 *		...                     // hit.s points at "pthread_mutex_lock"
 *	frame_matcher_free(m);
 *
 *	struct kfold_opts ko = KFOLD_OPTS_INIT;      // default: placeholders
 *	struct kfolder *k = kfolder_new(&ko, &err);
 *	size_t n;
 *	const char *s = kfolder_apply(k, "p;[[kernel.kallsyms]];"
 *	                              "[[kernel.kallsyms]]", 41, &n);
 *	// s[0..n) is "p;[kernel]"
 *	kfolder_free(k);
 *
 * A frame is a slice of the caller's stack text: nothing here copies a
 * frame unless it has to build a new stack.  A stack returned by
 * kfolder_apply() or stack_filter_apply() is either the input itself (when
 * nothing changed, the common case, or when stack_filter_apply() removed
 * only frames at its end: then a shorter length), so the caller can add it
 * to the table without a copy, or a buffer owned by the kfolder/stack_filter,
 * valid until its next call or its free.  Matchers, kfolders and filters keep scratch
 * buffers, so one object must not be used by two threads at once.
 *
 * Frames never contain ';' (it separates them) and never contain '\n' (it
 * separates lines); matching relies on both.
 */
#ifndef FOLDKIT_STACKOPS_H
#define FOLDKIT_STACKOPS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

struct frame {
	const char *s;		/* into the stack; not NUL-terminated */
	size_t len;
};

/* A growable array of frames; zero-initialise, then reuse across stacks. */
struct frame_vec {
	struct frame *v;
	size_t n, cap;
};

/* Replaces fv's contents with the frames of stack[0..len) (root first).
 * An empty stack has one empty frame, as "a;;b" has an empty middle one. */
void frame_vec_split(struct frame_vec *fv, const char *stack, size_t len);

/* Frees fv's array; fv may be reused afterwards. */
void frame_vec_release(struct frame_vec *fv);

/* --- matching frames ---------------------------------------------------- */

enum {
	FRAME_MATCH_FIXED = 1,	/* pattern is a fixed string, not a regex */
	FRAME_MATCH_ICASE = 2,	/* ignore ASCII case (regex: PCRE caseless) */
	FRAME_MATCH_WHOLE = 4,	/* the pattern must match the whole frame */
};

struct frame_matcher;

/*
 * Compiles pattern once (a PCRE regex unless FRAME_MATCH_FIXED).  A regex
 * without metacharacters, or with only backslash-escaped punctuation such
 * as "\[unknown\]", optionally anchored ("^std::", "_\[k\]$"), is matched
 * as a fixed string, prefix or suffix, much faster; other regexes are
 * first ruled out by a literal every match must contain, when they have
 * one.
 * Returns NULL and sets *err (FK_ERROR_USAGE, "bad regex 'P': REASON") for
 * a bad regex.  Free with frame_matcher_free().
 */
struct frame_matcher *frame_matcher_new(const char *pattern, unsigned flags,
					GError **err);
void frame_matcher_free(struct frame_matcher *m);

/* True if the one frame s[0..len) matches. */
bool frame_matcher_test(struct frame_matcher *m, const char *s, size_t len);

/*
 * Finds the first (outermost, nearest the root) frame of stack[0..len) that
 * matches and stores it in *hit.  Returns false if no frame matches.  Runs
 * one search over the whole stack rather than one per frame where the
 * pattern allows it, falling back to frame-by-frame tests otherwise.
 */
bool frame_matcher_find(struct frame_matcher *m, const char *stack, size_t len,
			struct frame *hit);

/* --- kfold: folding runs of frames ------------------------------------- */

struct kfold_rule {
	const char *regex;	/* frames matching it ... */
	const char *name;	/* ... fold, a run at a time, into this frame */
};

struct kfold_opts {
	bool placeholders;	/* [[kernel.kallsyms]] runs -> [kernel] */
	bool kernel;		/* runs of any kernel frame -> [kernel] */
	bool keep_entry;	/* with kernel: keep each run's first frame */
	bool unknown;		/* [unknown] (or "[unknown <ADDR>]") runs -> [unknown] */
	bool drop_kernel;	/* remove kernel frames */
	const struct kfold_rule *rules;	/* tried first, in order */
	size_t nrules;
};

#define KFOLD_OPTS_INIT { .placeholders = true }

struct kfolder;

/* Compiles the rules (copies what it needs from o); NULL and *err for a
 * bad regex or an empty name. */
struct kfolder *kfolder_new(const struct kfold_opts *o, GError **err);
void kfolder_free(struct kfolder *k);

/*
 * Returns stack with its runs folded and its dropped frames removed (*outlen
 * gets the length): the input pointer when nothing changed.  A stack whose
 * every frame is dropped (or that keeps only blanks, which readers would
 * trim to nothing) becomes "[kernel]", so no sample is lost.
 */
const char *kfolder_apply(struct kfolder *k, const char *stack, size_t len,
			  size_t *outlen);

/* True for a kernel frame: "..._[k]", or a placeholder for an unnamed
 * kernel symbol ("[[kernel.kallsyms]]", "[kernel.kallsyms]", "[kernel]",
 * "[[kernel.kallsyms] <ffffffff8100e06>]" from fp-collapse --addrs).  Not
 * the vDSO's frames, which run in user space, even marked "_[k]" as
 * stackcollapse-perf.pl --kernel marks them ("__vdso_clock_gettime_[k]",
 * "[[vdso]]_[k]"). */
bool frame_is_kernel(const char *s, size_t len);
bool frame_is_kernel_placeholder(const char *s, size_t len);

/* --- fgrep-stacks: selecting and re-rooting stacks ----------------------- */

enum stack_where { STACK_ANY, STACK_LEAF, STACK_ROOT };
enum stack_view { VIEW_WHOLE, VIEW_FOCUS, VIEW_CALLERS };

struct stack_filter_opts {
	const char *pattern;	/* NULL: every stack matches */
	unsigned flags;		/* FRAME_MATCH_* for pattern */
	enum stack_where where;	/* which frames may match */
	enum stack_view view;	/* what of a matching stack to keep */
	bool invert;		/* keep the stacks that do not match */
	const char *const *exclude;	/* regexes; matching frames removed */
	size_t nexclude;
};

struct stack_filter;

/* NULL and *err for a bad regex. */
struct stack_filter *stack_filter_new(const struct stack_filter_opts *o,
				      GError **err);
void stack_filter_free(struct stack_filter *f);

/*
 * Applies excludes, then the match.  Returns true if the stack is kept,
 * with *out and *outlen the stack to keep (the input itself when unchanged,
 * or when only frames at its end are removed, with a shorter *outlen; a
 * stack whose every frame is excluded, or that keeps only blanks, becomes
 * "[excluded]", and a cut that leaves only an empty or blank frame
 * "[empty]").  The match and the
 * focus/callers cut use the first (outermost) matching frame.
 */
bool stack_filter_apply(struct stack_filter *f, const char *stack, size_t len,
			const char **out, size_t *outlen);

/* --- fold-diff: hexadecimal addresses ---------------------------------- */

/*
 * Replaces every "0x" followed by hexadecimal digits with "0x...", as
 * difffolded.pl -s does.  Returns stack itself when it holds no such
 * number, else buf's contents (buf is overwritten).
 */
const char *stack_strip_hex(const char *stack, size_t len, GString *buf,
			    size_t *outlen);

#endif
