#include "core/error.h"

#include <inttypes.h>
#include <stdarg.h>

G_DEFINE_QUARK(foldkit-error-quark, fk_error)

void fk_error_at(GError **err, enum fk_error_code code, const char *file,
		 uint64_t line, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (!err)
		return;
	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	if (line)
		g_set_error(err, FK_ERROR, code, "%s:%" PRIu64 ": %s",
			    file ? file : "<stdin>", line, msg);
	else
		g_set_error(err, FK_ERROR, code, "%s: %s",
			    file ? file : "<stdin>", msg);
	g_free(msg);
}
