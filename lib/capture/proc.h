/*
 * proc.h - the processes of a /proc tree, and fp-record's choice among
 * them: by executable (/proc/PID/exe), by name (the comm or the
 * executable's file name) or by pid, never by command-line text.
 *
 *	GPtrArray *all = fk_proc_scan("/proc", FK_PROC_ALL, &err);
 *	struct fk_select sel = { .by = FK_BY_EXE, .exe = "/srv/bin/server" };
 *	struct fk_match m;
 *	fk_proc_select(all, &sel, &m);
 *	// m.chosen: the struct fk_proc * whose exe is /srv/bin/server
 *	// m.near: why each near miss was not chosen, e.g.
 *	//   "4242 bash: its command line names 'server', but it runs /usr/bin/bash"
 *	fk_match_clear(&m);
 *	g_ptr_array_unref(all);
 *
 * A seed-000 pitfall is a pid picked by `pgrep -f`: a shell, a load
 * generator or pgrep itself whose arguments name the binary.  Here the
 * command line is read only to explain near misses.
 *
 * root is the /proc directory ("/proc"; the unit tests build a fake one):
 * PID/stat, PID/exe (a symbolic link), PID/cmdline, PID/task/TID and
 * PID/status are read.  Processes that vanish while being read are left
 * out.  The exe of a process the caller may not inspect (another user's)
 * is NULL with exe_errno EACCES; a kernel thread's is NULL with ENOENT.
 */
#ifndef FOLDKIT_CAPTURE_PROC_H
#define FOLDKIT_CAPTURE_PROC_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

struct fk_proc {
	int pid, ppid, pgid;
	char state;		/* from stat: 'R', 'S', 'Z'... */
	char *comm;		/* the main thread's name, from stat */
	char *exe;		/* the link's target, e.g. "/usr/bin/x" or
				   "/usr/bin/x (deleted)"; NULL: see exe_errno */
	int exe_errno;
	char *cmdline;		/* arguments joined by spaces, or NULL */
	char **argv;		/* the arguments, NULL-terminated, or NULL */
	unsigned long long start;	/* stat's starttime, clock ticks after
					   boot: start order (0: unknown) */
};

enum {
	FK_PROC_EXE = 1 << 0,		/* read exe */
	FK_PROC_CMDLINE = 1 << 1,	/* read cmdline */
	FK_PROC_ALL = FK_PROC_EXE | FK_PROC_CMDLINE,
};

/*
 * Reads process pid (stat always; what adds exe and cmdline).  Returns
 * NULL with errno set (ENOENT: no such process) when stat cannot be read.
 * Free with fk_proc_free().
 */
struct fk_proc *fk_proc_read(const char *root, int pid, unsigned what);
void fk_proc_free(struct fk_proc *p);

/*
 * Parses a stat line ("PID (COMM) S PPID PGRP ...": the name may hold any
 * byte but NUL, ')' and blanks included) into p's comm (owned by p),
 * state, ppid and pgid, and start when the line goes on to its 22nd field
 * (0 if it does not); false if it is not one.
 */
bool fk_proc_parse_stat(const char *s, struct fk_proc *p);

/*
 * Every process under root, by pid: a new array of struct fk_proc * that
 * frees them (g_ptr_array_unref()).  NULL with *err set if root cannot be
 * listed.
 */
GPtrArray *fk_proc_scan(const char *root, unsigned what, GError **err);

/* The process with this pid in a scan sorted by pid, or NULL. */
struct fk_proc *fk_proc_find(GPtrArray *all, int pid);

/*
 * The thread ids of process pid (PID/task), ascending; an empty array if
 * it has gone.  Free with g_array_unref().
 */
GArray *fk_proc_tids(const char *root, int pid);

/*
 * The thread group (process) that thread tid belongs to, from PID/status,
 * or 0 if tid does not exist.
 */
int fk_proc_tgid(const char *root, int tid);

/* The last pid the kernel gave out (root/sys/kernel/ns_last_pid), or -1. */
int fk_proc_last_pid(const char *root);

enum fk_select_by { FK_BY_EXE, FK_BY_NAME, FK_BY_PID };

struct fk_select {
	enum fk_select_by by;
	const char *root;	/* FK_BY_PID: for threads' status ("/proc") */
	const char *exe;	/* FK_BY_EXE: the real path to match */
	const char *name;	/* FK_BY_NAME: comm or the exe's file name */
	const int *pids;	/* FK_BY_PID */
	size_t npids;
	int skip_pid;		/* never chosen: the caller itself (0: none) */
	int skip_pgid;		/* never chosen: a process group, e.g. the
				   load generator's (0: none) */
};

struct fk_match {
	GPtrArray *chosen;	/* struct fk_proc *, borrowed from the scan */
	GPtrArray *near;	/* char *, owned: one sentence per near miss */
	GArray *missing;	/* FK_BY_PID: int pids with no process */
	unsigned hidden;	/* processes whose exe could not be read
				   (another user's): not judged */
};

/*
 * Fills m (which need not be initialised) from all, a scan with
 * FK_PROC_ALL.  At most 10 near misses are described.  Release with
 * fk_match_clear().
 */
void fk_proc_select(GPtrArray *all, const struct fk_select *sel, struct fk_match *m);
void fk_match_clear(struct fk_match *m);

/*
 * Adds to family (a set of pids, GINT_TO_POINTER keys) every process of
 * all with a pid above newer_than whose parent is in it, transitively,
 * and appends those processes (borrowed from all) to added.  Returns how
 * many were added.  (Children started since the kernel gave out pid
 * newer_than: pids grow until they wrap around at pid_max.)
 */
unsigned fk_proc_descendants(GPtrArray *all, GHashTable *family, int newer_than,
			     GPtrArray *added);

/*
 * Parses "1234,1240" into pids (appended to an int array); false on
 * anything else (an empty item, a sign, a non-digit, 0, above 2^31-1).
 */
bool fk_proc_parse_pids(const char *s, GArray *pids);

/* The file name of exe, without a " (deleted)" suffix; free with g_free(). */
char *fk_proc_exe_name(const char *exe);

#endif
