/*
 * roles.h - which recorded process is which: the main process and its
 * workers, and a name for each one's files that is the same in every run
 * of the same program, so that two captures compare process by process.
 *
 *	struct fk_role_in in[] = {
 *		{ .pid = 4242, .ppid = 1, .comm = "server",
 *		  .argv = (char *[]){ "server", "--port", "8000", NULL }, .start = 900 },
 *		{ .pid = 4250, .ppid = 4242, .comm = "server",
 *		  .argv = (char *[]){ "server", "--worker", "1", NULL }, .start = 905 },
 *		{ .pid = 4251, .ppid = 4242, .comm = "server",
 *		  .argv = (char *[]){ "server", "--worker", "2", NULL }, .start = 905 },
 *	};
 *	struct fk_role out[3];
 *	fk_roles_assign(in, 3, out);
 *	// out[0]: role "main",   name "server.main"
 *	// out[1]: role "worker", name "server.worker-1"
 *	// out[2]: role "worker", name "server.worker-2"
 *	fk_roles_clear(out, 3);
 *
 * A process's role, in this order:
 *  1. what its arguments say it is: "--role=R", "--role R", "--type=R" or
 *     "--type R" (Chromium's, for one) give R;
 *  2. the process tree among the processes recorded: one whose parent is
 *     among them is a "worker", one whose parent is not, "main";
 *  3. where the tree does not tell, because processes of one name are
 *     all started by one that is not recorded (a supervisor, a shell): an
 *     option "--WORD" (or "-WORD") that some of them have and the others
 *     lack makes those "WORD" (a server's "--worker"), the others "main".
 * A role is a word of [A-Za-z0-9_-], at most 32 bytes; arguments that give
 * anything else give none.
 *
 * The name is the process name (its comm, bytes other than [A-Za-z0-9._-]
 * as '_', as fk_out_stem() makes it, without the pid), a '.', and the
 * role; processes of one name and role are numbered "-1", "-2", ... in
 * the order they started (stat's starttime, then pid): the order a server
 * starts its workers in, the same in every run.
 */
#ifndef FOLDKIT_CAPTURE_ROLES_H
#define FOLDKIT_CAPTURE_ROLES_H

#include <stddef.h>

struct fk_role_in {
	int pid, ppid;
	const char *comm;		/* NULL: "[unknown]" */
	char *const *argv;		/* NULL-terminated; NULL: unknown */
	unsigned long long start;	/* starttime, for the numbering */
};

struct fk_role {
	char *role;		/* "main", "worker", or the arguments' */
	char *name;		/* "server.worker-1": a file name stem */
};

/* Fills out[0..n) for the processes in[0..n), recorded together. */
void fk_roles_assign(const struct fk_role_in *in, size_t n, struct fk_role *out);

/* Frees the strings of out[0..n). */
void fk_roles_clear(struct fk_role *out, size_t n);

#endif
