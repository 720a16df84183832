/*
 * fuzz/gperf.c - gperftools CPU profiles through gperf-collapse's reader
 * and naming (with the libdw resolver).
 *
 * Input: one option byte, then the profile.  Bit 1 expands inlined
 * functions (--inline), bit 2 names unknown frames with addresses
 * (--addrs), bit 4 sets an output limit of 4 KiB (else 1 MiB, so that a
 * small profile declaring a large output reaches it).  The executable is
 * /nonexistent/app; a fuzzed map may name real files, which are then read
 * as gperf-collapse reads them.
 *
 * Checked besides memory safety and UB: an error is set exactly when
 * reading fails, names the file, and leaves the table as it was; without
 * an error the table holds every sample of the records read (their counts'
 * sum, unless it passes 2^64-1), its distinct stacks' bytes stay within
 * the output limit and each stack within BOUNDS_MAX_FRAMES frames (the
 * limits of bounds.h); fuzz_check_collapsed() on the table.
 */
#include "collapsed.h"

#include "collapse/bounds.h"
#include "collapse/gperf.h"
#include "collapse/inline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct inline_resolver *ir;
	struct gperf_opts o;
	struct gperf_collapser *c;
	struct skip_log *skips;
	const struct gperf_stats *st;
	GError *err = NULL;
	int rc;

	if (size < 1)
		return 0;
	if (!ir) {	/* one resolver: files opened once across inputs */
		g_unsetenv("DEBUGINFOD_URLS");
		ir = inline_resolver_new(false);
	}
	o = (struct gperf_opts){ .executable = "/nonexistent/app", .resolver = ir,
				 .expand_inline = data[0] & 1, .addrs = data[0] & 2,
				 .max_output = data[0] & 4 ? 4096 : 1u << 20 };
	skips = skip_log_new();
	c = gperf_collapser_new(&o, skips);
	rc = gperf_collapser_read(c, fuzz_file(data + 1, size - 1), &err);
	fuzz_check_error(rc, &err);
	st = gperf_collapser_stats(c);
	if (rc < 0)
		FUZZ_CHECK(fold_table_size(gperf_collapser_table(c)) == 0,
			   "a failed read added stacks");
	else if (st->samples != UINT64_MAX)
		FUZZ_CHECK(fold_table_total(gperf_collapser_table(c), 0) ==
			   fk_count_from_u64(st->samples), "the table's total is not the samples'");
	{
		size_t n, bytes = 0;
		struct fold_entry **e = fold_table_sorted(gperf_collapser_table(c), &n);

		for (size_t i = 0; i < n; i++) {
			size_t frames = 1;

			bytes += e[i]->len + 1;
			for (size_t k = 0; k < e[i]->len; k++)
				frames += e[i]->stack[k] == ';';
			FUZZ_CHECK(frames <= BOUNDS_MAX_FRAMES, "a stack of %zu frames", frames);
		}
		FUZZ_CHECK(bytes <= o.max_output, "%zu bytes of stacks, past the limit of %" G_GUINT64_FORMAT,
			   bytes, o.max_output);
		g_free(e);
	}
	fuzz_check_collapsed(gperf_collapser_table(c));
	gperf_collapser_free(c);
	skip_log_free(skips);
	return 0;
}
