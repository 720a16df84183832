#include "inline.h"

/*
 * Placeholder until the libdw resolver lands: resolves nothing, so every
 * frame keeps its own symbol (fp-collapse --inline then behaves as without
 * it, and says so).
 */
struct inline_resolver *inline_resolver_new(bool context)
{
	struct inline_resolver *ir = g_new0(struct inline_resolver, 1);

	ir->context = context;
	return ir;
}

void inline_resolver_free(struct inline_resolver *ir)
{
	g_free(ir);
}
