/*
 * push.h - fp-record --push: a capture, once written, sent to a profile
 * store (ClickHouse or Pyroscope) by fold-push, which runs as a program:
 * fp-record links no libcurl, and a store's errors are fold-push's own.
 *
 *	struct fk_capture_push p = {
 *		.fold_push = "/usr/local/bin/fold-push",  // fk_capture_find_tool()
 *		.url = "clickhouse://db1:8123/prof",       // checked by the caller
 *		.shown = "clickhouse://db1:8123/prof",     // the same, no password
 *		.labels = (const char *const[]){ "release=v2", NULL },
 *		.from = res.window_from, .until = res.window_until,
 *	};
 *	if (fk_capture_push(&p, "fp-record-1", &err) < 0)
 *		...report err...  // "fp-record-1: not pushed to clickhouse://...:
 *				  //  fold-push exited with status 1 (the capture is kept)"
 *
 * It runs "fold-push -v URL --from FROM --until UNTIL [--label K=V]... DIR":
 * every profile of the capture, labelled by the capture itself (host,
 * service, process, role, pid, profile, unit; store/profile.h) and by the
 * window fp-record timed, stored whole or not at all.  fold-push's lines
 * (what it stored, and any error, naming the server) go to standard
 * error, beside fp-record's progress.  The password stays out of the
 * child's arguments when the caller passes it in FOLDKIT_STORE_PASSWORD
 * (the child inherits the environment).  The capture is never touched:
 * whatever the push's outcome, its files stay as written.
 */
#ifndef FOLDKIT_CAPTURE_PUSH_H
#define FOLDKIT_CAPTURE_PUSH_H

#include <glib.h>
#include <stdint.h>

struct fk_capture_push {
	const char *fold_push;		/* the program */
	const char *url;		/* its URL argument, as given */
	const char *shown;		/* the URL for messages (no password) */
	const char *const *labels;	/* "K=V" each, NULL-terminated; may be NULL */
	int64_t from, until;		/* the window, Unix seconds */
};

/*
 * Pushes the capture in dir.  Returns 0 once fold-push has stored every
 * profile of it (or found it stored already), or -1 with *err set, naming
 * dir and the store.
 */
int fk_capture_push(const struct fk_capture_push *p, const char *dir, GError **err);

#endif
