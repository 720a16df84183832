/*
 * push.c - a written capture handed to fold-push.  fold-push says what it
 * stored and why it could not; this only runs it and tells success from
 * failure, so that fp-record's exit status says whether the store has the
 * capture.
 */
#include "capture/push.h"

#include "capture/child.h"
#include "core/error.h"

#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

int fk_capture_push(const struct fk_capture_push *p, const char *dir, GError **err)
{
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	/* its standard output to our standard error: GLib's spawn takes no
	 * descriptor below 3 as a source, so a copy of 2 */
	int out = fcntl(2, F_DUPFD_CLOEXEC, 3);
	struct fk_spawn how = { .in_fd = -1, .out_fd = out, .err_fd = -1 };
	struct fk_child *child;
	GError *e = NULL;
	int rc = 0;

	g_ptr_array_add(argv, g_strdup(p->fold_push));
	g_ptr_array_add(argv, g_strdup("-v"));
	g_ptr_array_add(argv, g_strdup(p->url));
	g_ptr_array_add(argv, g_strdup_printf("--from=%" PRId64, p->from));
	g_ptr_array_add(argv, g_strdup_printf("--until=%" PRId64, p->until));
	for (const char *const *l = p->labels; l && *l; l++)
		g_ptr_array_add(argv, g_strconcat("--label=", *l, NULL));
	/* "--" : a directory named "-x" is an operand, not an option */
	g_ptr_array_add(argv, g_strdup("--"));
	g_ptr_array_add(argv, g_strdup(dir));
	g_ptr_array_add(argv, NULL);
	how.argv = (const char *const *)argv->pdata;
	child = fk_child_spawn(&how, &e);
	if (!child) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: not pushed to %s: %s (the capture is kept)",
			    dir, p->shown, e->message);
		g_error_free(e);
		rc = -1;
	} else if (!fk_child_wait(child, -1, NULL) || !fk_child_ok(child, 0)) {
		char *why = fk_child_exit_text(child);

		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: not pushed to %s: fold-push %s (the "
			    "capture is kept)", dir, p->shown, why);
		g_free(why);
		rc = -1;
	}
	fk_child_free(child);
	if (out >= 0)
		close(out);
	g_ptr_array_unref(argv);
	return rc;
}
