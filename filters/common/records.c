#include "records.h"

#include "tool.h"

#include <stdio.h>

struct run {
	const struct stack_records_opts *ro;
	const struct stack_frame_rules *rules;
	struct skip_log *skips;
	struct stack_cache *cache;
};

static int read_input(const char *path, void *data, GError **err)
{
	struct run *r = data;

	return stack_records_collapse(path, r->ro, r->skips, r->cache, r->rules, err);
}

int tool_collapse_records(char **paths, int n, const struct stack_records_opts *ro,
			  const struct stack_frame_rules *rules, bool verbose)
{
	struct fold_table *t = fold_table_new();
	struct run r = { ro, rules, skip_log_new(), stack_cache_new(t) };
	GError *err = NULL;
	int status = tool_read_inputs(paths, n, read_input, &r);

	if (fold_table_write(t, stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
	tool_report_skips(r.skips, verbose);
	stack_cache_free(r.cache);
	skip_log_free(r.skips);
	fold_table_free(t);
	return tool_finish(status);
}
