/*
 * fuzz/bpftrace.c - bpftrace output through bpftrace-collapse's reader and
 * naming.
 *
 * Input: one option byte, then the text.  Bit 1 keeps offsets (--offsets),
 * bit 2 asks for map "@stacks" (--map stacks), bit 4 reads the input twice
 * (as two files, which must double every count of the chosen map).
 *
 * Checked besides memory safety and UB: an error is set exactly when
 * reading fails, and names the file; the note is one line; reading twice
 * doubles the chosen table's total; fuzz_check_collapsed() on the table.
 */
#include "collapsed.h"

#include "collapse/bpftrace.h"

static struct fold_table *collapse(const struct bpftrace_opts *o, const char *path,
				   int times, struct bpftrace_collapser **c,
				   struct skip_log *skips)
{
	GError *err = NULL;
	char *note;

	*c = bpftrace_collapser_new(o, skips);
	for (int i = 0; i < times; i++)
		fuzz_check_error(bpftrace_collapser_read(*c, path, &err), &err);
	if ((note = bpftrace_collapser_note(*c))) {
		FUZZ_CHECK(!strchr(note, '\n'), "the note is not one line");
		g_free(note);
	}
	return bpftrace_collapser_table(*c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpftrace_opts o;
	struct bpftrace_collapser *c1, *c2;
	struct skip_log *skips = skip_log_new();
	struct fold_table *t1, *t2;
	const char *path;

	if (size < 1) {
		skip_log_free(skips);
		return 0;
	}
	o = (struct bpftrace_opts){ .keep_offsets = data[0] & 1,
				    .map = data[0] & 2 ? "stacks" : NULL };
	path = fuzz_file(data + 1, size - 1);
	t1 = collapse(&o, path, 1, &c1, skips);
	fuzz_check_collapsed(t1);
	if (data[0] & 4) {
		t2 = collapse(&o, path, 2, &c2, skips);
		FUZZ_CHECK(fold_table_total(t2, 0) == 2 * fold_table_total(t1, 0),
			   "reading twice does not double the counts");
		FUZZ_CHECK(fold_table_size(t2) == fold_table_size(t1),
			   "reading twice makes other stacks");
		bpftrace_collapser_free(c2);
	}
	bpftrace_collapser_free(c1);
	skip_log_free(skips);
	return 0;
}
