/*
 * perfscript.h - a streaming parser for `perf script` text.
 *
 *	struct perf_script_opts po = { .srcline = false };
 *	struct perf_script_reader *r =
 *		perf_script_reader_open("perf.txt", &po, skips, &err);
 *	struct perf_sample s;
 *	while ((rc = perf_script_reader_next(r, &s, &err)) > 0)
 *		collapser_add(c, &s);
 *	perf_script_reader_free(r);
 *
 * A sample is a header line followed by its call chain, one frame a line,
 * leaf first, and ends at a blank line:
 *
 *	my worker 1  4054 [001]  81.902814:    1001001 cpu-clock:pppH:
 *	            11ed worker+0x64 (/tmp/rec/w)
 *	           891f5 start_thread+0x305 (/usr/lib/x86_64-linux-gnu/libc.so.6)
 *
 * Header lines are recognised in every layout perf prints: with or without
 * comm, pid/tid ("TID" or "PID/TID", ":-1 -1/-1" for an unknown thread),
 * "[CPU]", time, period and event, comm names with spaces and digits, and
 * trailing tracepoint text.  The pid/tid column is the number followed by a
 * "[CPU]" or "TIME:" column; without either, the last number before the
 * event.  Frame lines are "ADDR SYMBOL[+0xOFF] (DSO)" where DSO may contain
 * spaces and parentheses; perf's "(inlined)" frames are flagged.  Lines
 * starting with '#' (perf script --header) are comments.
 *
 * Lines that fit nowhere are counted in the skip_log ("unrecognised line",
 * by perf_script_parse_frames()); a header that cannot be parsed loses its
 * sample, which is counted once as "sample with unrecognised header".  So
 * does a header whose period column (the number-like token just before the
 * event) is not an integer from 0 to 2^64-1, such as "-5", "100x" or
 * "18446744073709551616": the skip names the reason, rather than the sample
 * silently weighing 1.
 *
 * Real perf script output ends every sample with a blank line; a file that
 * lacks the last one was cut or edited by hand.  This reader keeps such a
 * last sample (as inferno does).  stackcollapse-perf.pl drops it
 * (FlameGraph#230); perl_last does the same, and counts the dropped sample
 * as a skip so the loss is reported.
 * An input whose last line has no '\n' is cut off mid-line: that is an
 * FK_ERROR_TRUNCATED error.
 */
#ifndef FOLDKIT_PERFSCRIPT_H
#define FOLDKIT_PERFSCRIPT_H

#include "core/skiplog.h"
#include "core/str.h"

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_frame {
	struct fk_str pc;	/* address as printed, hex without "0x" */
	struct fk_str sym;	/* symbol as printed, "+0x..." offset included */
	struct fk_str dso;	/* without the parentheses: "[kernel.kallsyms]" */
	struct fk_str srcline;	/* the --srcline line after the frame, or empty */
	bool inlined;		/* perf printed "(inlined)" for this frame */
};

struct perf_sample {
	struct fk_str comm;	/* empty when perf printed no comm */
	struct fk_str pid;	/* empty when perf printed only the tid */
	struct fk_str tid;
	struct fk_str event;	/* "cpu-clock:pppH" (no final ':'); may be empty */
	uint64_t period;	/* 1 when perf printed no period */
	bool has_period;
	struct perf_frame *frames;	/* leaf first; NULL when only raw is set */
	size_t nframes;
	struct fk_str raw;	/* the reader's samples: the text after the
				   header line as read, lines ending in '\n'
				   (see perf_script_parse_frames()) */
	struct fk_str inline_frame;	/* text after the event on the header
					   line: a frame when perf printed no
					   call chain, tracepoint fields, or
					   empty */
	const char *file;	/* input name, for messages */
	uint64_t lineno;	/* line of the header */
	/*
	 * 0, or a number the reader's blocks gave raw's bytes: samples with
	 * the same blocks and block have the same raw text, so a consumer
	 * may key what it makes of raw by the number instead of the text.
	 */
	uint32_t block;
	struct perf_blocks *blocks;
	/*
	 * 0, or a number of the blocks' (as block) for the header's layout:
	 * samples with the same blocks and layout have headers that differ
	 * only in the time: the same bytes in comm, pid, tid and event, and
	 * the same period (not always the same inline_frame: the reader
	 * drops it when a call chain follows).
	 */
	uint64_t layout;
};

/*
 * The call chains readers have seen, as text: a sample's frame lines
 * recur, a few thousand distinct blocks of them in a million samples, so
 * the reader compares the input with the blocks it has kept (found by
 * their first bytes) rather than looking for each line's end, and numbers
 * them (perf_sample.block).  Bounded: past a fixed size no more blocks are
 * kept, and samples are read line by line as before.  The set also numbers
 * header layouts (perf_sample.layout).  Reference counted:
 * readers and consumers that keep numbers hold a reference.
 */
struct perf_blocks;

struct perf_blocks *perf_blocks_new(void);
struct perf_blocks *perf_blocks_ref(struct perf_blocks *b);
void perf_blocks_unref(struct perf_blocks *b);

struct perf_script_opts {
	bool srcline;		/* each frame line is followed by a source line
				   (perf script -F+srcline), as with
				   stackcollapse-perf.pl --srcline */
	bool perl_last;		/* drop a last sample lacking its blank line */
	struct perf_blocks *blocks;	/* NULL: the reader makes its own;
					   share one among the readers whose
					   samples one consumer sees, so that
					   their numbers agree */
};

struct perf_script_reader;

/*
 * Opens path (NULL or "-": stdin).  opts and skips must outlive the reader.
 * A regular file is mapped into memory and read in place (linesource.h):
 * no copy from the kernel, and header lines are parsed where they lie;
 * anything else is read as a stream, with the same results.
 */
struct perf_script_reader *perf_script_reader_open(const char *path,
	const struct perf_script_opts *opts, struct skip_log *skips,
	GError **err);

/*
 * Returns 1 and fills *s with the next sample, 0 at the end, -1 on error.
 * Everything *s points to stays valid until the next call.  The reader does
 * not parse frames: it sets s->raw, and s->frames to NULL; consumers call
 * perf_script_parse_frames() (or, like the collapser, first look the raw
 * text up in a cache: the same call chain recurs in most samples).
 * With opts->srcline, -1 also when the first sample with a named frame
 * has no source line after it: the input was made without -F +srcline.
 */
int perf_script_reader_next(struct perf_script_reader *r,
			    struct perf_sample *s, GError **err);

/* Bytes read so far. */
uint64_t perf_script_reader_bytes(const struct perf_script_reader *r);

void perf_script_reader_free(struct perf_script_reader *r);

/*
 * Parses one header line; returns true and fills the header fields of *s
 * (comm, pid, tid, event, period; pointers into line).  *rest gets the text
 * after the event (tracepoint fields, or an inline "ADDR SYM (DSO)").
 */
bool perf_script_parse_header(const char *line, size_t len,
			      struct perf_sample *s, struct fk_str *rest);

/*
 * Parses the frames of a sample from the reader (s->raw and
 * s->inline_frame) into frames (struct perf_frame, leaf first, pointing into
 * the sample's text), replacing the array's contents.  With srcline, the
 * line after each frame (except an unknown symbol in an unknown DSO) is that
 * frame's source line.  Comment lines are ignored; any other line that is
 * not a frame is counted in skips (when not NULL) with its line number, and
 * the number of such lines is returned.
 */
size_t perf_script_parse_frames(const struct perf_sample *s, bool srcline,
				GArray *frames, struct skip_log *skips);

/* Parses one frame line; returns true and fills *f (pointers into line). */
bool perf_script_parse_frame(const char *line, size_t len,
			     struct perf_frame *f);

#endif
