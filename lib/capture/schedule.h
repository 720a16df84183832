/*
 * schedule.h - fp-record's windows without restarting: a first window
 * after a delay, and repeated windows of a running program, one numbered
 * capture each, so that before and after are taken from one server.
 *
 *	struct fk_schedule sch = { .delay = 10, .every = 60, .count = 3 };
 *	struct fk_capture_result res;
 *	int rc = fk_capture_schedule(&cfg, &sch, &res, &err);
 *	// cfg.dir/1, cfg.dir/2, cfg.dir/3: one capture each (session.h),
 *	// the first 10 s from now, then one every 60 s (start to start)
 *	fk_capture_result_clear(&res);
 *
 * With count 1 and every 0, one capture into cfg.dir itself, after the
 * delay.  With count above 1, cfg.dir is made first (core/outdir.h) and
 * holds the captures 1..count, numbered with as many digits as count
 * has (01..12), so that they sort in order.  A window that would open
 * before the previous capture has been written opens as soon as it has,
 * and says so.
 *
 * SIGINT, SIGTERM or SIGHUP during a wait ends the schedule there; during
 * a window, they end that window (session.h), which is written, and the
 * schedule.  A capture that fails ends the schedule with its error; the
 * captures written before it stay and are in res->paths.  The processes
 * are chosen again for each window (those of cfg, as session.h does).
 * A command (cfg->cmd) cannot be scheduled: it would be started anew.
 */
#ifndef FOLDKIT_CAPTURE_SCHEDULE_H
#define FOLDKIT_CAPTURE_SCHEDULE_H

#include "capture/session.h"

struct fk_schedule {
	double delay;		/* seconds before the first window */
	double every;		/* seconds from one window's start to the next's */
	unsigned count;		/* windows; 0 is 1 */
	/* when not NULL: called once each window's capture is written, with
	 * its directory and result (its window's times), before the next
	 * window waits: fp-record --push sends each capture as it comes */
	void (*written)(void *data, const char *dir, const struct fk_capture_result *r);
	void *data;
};

/* 0 when every window was captured; -1 with *err set.  res->processes
 * and res->window_from, window_until are the last capture's. */
int fk_capture_schedule(const struct fk_capture_cfg *cfg, const struct fk_schedule *sch,
			struct fk_capture_result *res, GError **err);

#endif
