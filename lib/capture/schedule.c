/*
 * schedule.c - a delay before the window, and repeated windows, each a
 * capture of its own (schedule.h).
 */
#include "capture/schedule.h"

#include "core/error.h"
#include "core/outdir.h"

#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static void say(const struct fk_capture_cfg *cfg, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void say(const struct fk_capture_cfg *cfg, const char *fmt, ...)
{
	va_list ap;
	char *line;

	if (!cfg->say)
		return;
	va_start(ap, fmt);
	line = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	cfg->say(cfg->say_data, line);
	g_free(line);
}

static gboolean on_signal(gpointer data)
{
	*(bool *)data = true;
	return G_SOURCE_CONTINUE;
}

static gboolean on_timeout(gpointer data)
{
	*(bool *)data = true;
	return G_SOURCE_REMOVE;
}

/* waits until the monotonic time until (µs); false when a signal came */
static bool wait_until(gint64 until)
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	guint src[3], timer;
	bool signalled = false, timed_out = false;
	gint64 now = g_get_monotonic_time();

	if (until <= now)
		return true;
	for (int i = 0; i < 3; i++)
		src[i] = g_unix_signal_add(sigs[i], on_signal, &signalled);
	timer = g_timeout_add((guint)((until - now + 999) / 1000), on_timeout, &timed_out);
	while (!signalled && !timed_out)
		g_main_context_iteration(NULL, TRUE);
	if (!timed_out)
		g_source_remove(timer);
	/* the capture adds its own for its window */
	for (int i = 0; i < 3; i++)
		g_source_remove(src[i]);
	return !signalled;
}

/* moves the paths of one capture into all */
static void take_paths(GPtrArray *all, struct fk_capture_result *one)
{
	for (guint i = 0; one->paths && i < one->paths->len; i++)
		g_ptr_array_add(all, g_strdup(g_ptr_array_index(one->paths, i)));
}

int fk_capture_schedule(const struct fk_capture_cfg *cfg, const struct fk_schedule *sch,
			struct fk_capture_result *res, GError **err)
{
	unsigned count = sch->count ? sch->count : 1;
	int digits = snprintf(NULL, 0, "%u", count);
	gint64 start = g_get_monotonic_time() + (gint64)(sch->delay * 1e6);
	struct fk_outdir *top = NULL;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->paths = g_ptr_array_new_with_free_func(g_free);
	if (cfg->cmd) {
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "a command cannot be recorded after "
			    "a delay or in repeated windows: it would be started anew; choose "
			    "running processes (--exe, --name or --pid)");
		return -1;
	}
	if (count > 1 && !(top = fk_outdir_create(cfg->dir, 0, err)))
		return -1;
	for (unsigned k = 1; k <= count && rc == 0; k++) {
		gint64 due = start + (gint64)((k - 1) * sch->every * 1e6);
		struct fk_capture_cfg one = *cfg;
		struct fk_capture_result r;
		char *dir = NULL;

		if (k > 1 && g_get_monotonic_time() > due)
			say(cfg, "window %u of %u opens %.1f s late: the previous capture took "
			    "longer than --every", k, count,
			    (double)(g_get_monotonic_time() - due) / 1e6);
		else if (due > g_get_monotonic_time())
			say(cfg, "window %u of %u opens in %.1f s", k, count,
			    (double)(due - g_get_monotonic_time()) / 1e6);
		if (!wait_until(due)) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "interrupted before window %u of %u: "
				    "%u captured", k, count, k - 1);
			rc = -1;
			break;
		}
		if (top) {
			dir = g_strdup_printf("%s/%0*u", cfg->dir, digits, k);
			one.dir = dir;
		}
		rc = fk_capture_run(&one, &r, err);
		take_paths(res->paths, &r);
		res->processes = r.processes;
		res->interrupted = r.interrupted;
		res->window_from = r.window_from;
		res->window_until = r.window_until;
		if (rc == 0 && sch->written)
			sch->written(sch->data, one.dir, &r);
		fk_capture_result_clear(&r);
		if (rc != 0 && count > 1)
			g_prefix_error(err, "window %u of %u (%s): ", k, count, one.dir);
		g_free(dir);
		if (rc == 0 && res->interrupted && k < count) {
			say(cfg, "interrupted: no more windows (%u of %u captured)", k, count);
			break;
		}
	}
	fk_outdir_free(top);
	return rc;
}
