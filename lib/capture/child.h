/*
 * child.h - the programs fp-record runs (perf, the load generator, the
 * command to profile, fold2svg...), spawned with GLib, watched from the
 * main loop, and never left behind.
 *
 *	struct fk_spawn how = { .argv = argv, .out_fd = log, .err_fd = log,
 *				.own_group = true };
 *	struct fk_child *c = fk_child_spawn(&how, &err);
 *	while (!fk_child_exited(c))
 *		g_main_context_iteration(NULL, TRUE);   // its exit wakes the loop
 *	char *why = fk_child_exit_text(c);              // "exited with status 1"
 *	fk_child_free(c);
 *
 * A child in its own process group (own_group) is signalled as a group,
 * so a load generator's own children stop with it; every child gets
 * SIGTERM should fp-record die first (PR_SET_PDEATHSIG).  fk_child_free()
 * of a child still running kills it (SIGTERM, then SIGKILL) and reaps it:
 * no child outlives its struct.
 */
#ifndef FOLDKIT_CAPTURE_CHILD_H
#define FOLDKIT_CAPTURE_CHILD_H

#include <glib.h>
#include <stdbool.h>

struct fk_spawn {
	const char *const *argv;	/* argv[0] is looked up in PATH */
	int in_fd, out_fd, err_fd;	/* the child's 0, 1, 2; -1: /dev/null
					   for 0, inherited for 1 and 2 */
	bool inherit_in;		/* in_fd -1: inherit stdin instead */
	const int *fds;			/* fds[i] becomes the child's fd 3 + i */
	int nfds;
	bool own_group;			/* setpgid(0, 0) */
	int cwd_fd;			/* > 2: run in this directory, the
					   descriptor's (no path looked up
					   again); else in ours */
};

struct fk_child;

/* NULL with *err set if it cannot be started. */
struct fk_child *fk_child_spawn(const struct fk_spawn *how, GError **err);

int fk_child_pid(const struct fk_child *c);
bool fk_child_exited(const struct fk_child *c);

/* The wait status (see waitpid(2)); valid once exited. */
int fk_child_status(const struct fk_child *c);

/* True if it exited with status 0, or was killed by signal sig (0: none). */
bool fk_child_ok(const struct fk_child *c, int sig);

/* "exited with status 3", "was killed by signal 9 (Killed)"; g_free(). */
char *fk_child_exit_text(const struct fk_child *c);

/* Sends sig to the child, or to its process group with own_group. */
void fk_child_signal(struct fk_child *c, int sig);

/*
 * Runs the default main context until c exits, or until timeout_ms (-1:
 * none) has passed, or *stop becomes true (stop may be NULL).  Returns
 * whether it exited.
 */
bool fk_child_wait(struct fk_child *c, int timeout_ms, const bool *stop);

/*
 * Ends c if it still runs: sig (SIGTERM, SIGINT) first, SIGKILL after
 * grace_ms; returns when it has exited.
 */
void fk_child_end(struct fk_child *c, int sig, int grace_ms);

/* Ends the child as fk_child_end(c, SIGTERM, 2000) would, and frees it. */
void fk_child_free(struct fk_child *c);

#endif
