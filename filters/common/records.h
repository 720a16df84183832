/*
 * records.h - the whole of dtrace-collapse and stap-collapse after their
 * options: the collapsers of stacks ended by count lines differ only in
 * their header rule and frame names.
 *
 *	return tool_collapse_records(argc - 1, argv + 1, &ro, &dtrace_frames,
 *				     opts.verbose);
 */
#ifndef FOLDKIT_RECORDS_TOOL_H
#define FOLDKIT_RECORDS_TOOL_H

#include "collapse/stackcache.h"
#include "collapse/stackrecords.h"

#include <stdbool.h>

/*
 * Folds paths[0..n) (standard input when n is 0) as one profile with
 * stackrecords.h and rules, prints the sorted stacks, reports skips (each
 * with verbose) and returns the tool's exit status (tool_finish()'s).
 */
int tool_collapse_records(char **paths, int n, const struct stack_records_opts *ro,
			  const struct stack_frame_rules *rules, bool verbose);

#endif
