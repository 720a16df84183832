#include "collapse/bounds.h"

#include "core/error.h"

#include <inttypes.h>
#include <stdio.h>

int output_bound_add(struct output_bound *b, struct fold_table *t,
		     const char *stack, size_t len, fk_count c,
		     const char *name, GError **err)
{
	size_t before = fold_table_size(t);
	char size[32];

	fold_table_add(t, stack, len, c);
	if (fold_table_size(t) == before)
		return 0;
	b->used += (uint64_t)len + 1;
	if (b->used <= b->limit)
		return 0;
	fk_error_at(err, FK_ERROR_RANGE, name, 0,
		    "its folded stacks pass %s, the output limit (--max-output)",
		    bounds_size(b->limit, size));
	return -1;
}

const char *bounds_size(uint64_t bytes, char buf[32])
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buf, 32, "%" PRIu64 " MiB", bytes >> 20);
	else if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, 32, "%" PRIu64 " KiB", bytes >> 10);
	else
		snprintf(buf, 32, "%" PRIu64 " bytes", bytes);
	return buf;
}
