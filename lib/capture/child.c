#include "capture/child.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

struct fk_child {
	GPid pid;
	bool own_group, exited;
	int status;
	guint watch;
};

struct setup {
	bool own_group;
	pid_t parent;
};

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child_setup(gpointer data)
{
	const struct setup *s = data;

	if (s->own_group)
		setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != s->parent)
		_exit(127);
}

static void on_exit_cb(GPid pid, gint status, gpointer data)
{
	struct fk_child *c = data;

	c->exited = true;
	c->status = status;
	c->watch = 0;
}

struct fk_child *fk_child_spawn(const struct fk_spawn *how, GError **err)
{
	struct setup s = { .own_group = how->own_group, .parent = getpid() };
	int targets[8];
	struct fk_child *c;
	GPid pid;
	GSpawnFlags flags = G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH;
	char cwd[40];
	int dir = -1;
	gboolean ok;

	g_return_val_if_fail(how->nfds <= (int)G_N_ELEMENTS(targets), NULL);
	for (int i = 0; i < how->nfds; i++)
		targets[i] = 3 + i;
	if (how->in_fd < 0 && how->inherit_in)
		flags |= G_SPAWN_CHILD_INHERITS_STDIN;
	/*
	 * The child changes directory to /proc/self/fd/N, N a copy of cwd_fd
	 * above the descriptors it maps (3 + nfds), so that it is still ours
	 * however GLib orders its steps between fork and exec.
	 */
	if (how->cwd_fd > 2) {
		if ((dir = fcntl(how->cwd_fd, F_DUPFD_CLOEXEC, 3 + G_N_ELEMENTS(targets))) < 0) {
			g_set_error(err, G_SPAWN_ERROR, G_SPAWN_ERROR_CHDIR, "%s",
				    g_strerror(errno));
			return NULL;
		}
		snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d", dir);
	}
	ok = g_spawn_async_with_pipes_and_fds(dir >= 0 ? cwd : NULL, how->argv, NULL, flags, child_setup, &s,
					      how->in_fd, how->out_fd, how->err_fd,
					      how->fds, targets, (gsize)how->nfds,
					      &pid, NULL, NULL, NULL, err);
	if (dir >= 0)
		close(dir);
	if (!ok)
		return NULL;
	c = g_new0(struct fk_child, 1);
	c->pid = pid;
	c->own_group = how->own_group;
	/* both sides set the group, so that it exists before any kill() */
	if (how->own_group)
		setpgid(pid, pid);
	c->watch = g_child_watch_add(pid, on_exit_cb, c);
	return c;
}

int fk_child_pid(const struct fk_child *c)
{
	return c->pid;
}

bool fk_child_exited(const struct fk_child *c)
{
	return c->exited;
}

int fk_child_status(const struct fk_child *c)
{
	return c->status;
}

bool fk_child_ok(const struct fk_child *c, int sig)
{
	if (!c->exited)
		return false;
	if (WIFEXITED(c->status))
		return WEXITSTATUS(c->status) == 0;
	return sig && WIFSIGNALED(c->status) && WTERMSIG(c->status) == sig;
}

char *fk_child_exit_text(const struct fk_child *c)
{
	if (!c->exited)
		return g_strdup("is still running");
	if (WIFEXITED(c->status))
		return g_strdup_printf("exited with status %d", WEXITSTATUS(c->status));
	if (WIFSIGNALED(c->status))
		return g_strdup_printf("was killed by signal %d (%s)", WTERMSIG(c->status),
				       strsignal(WTERMSIG(c->status)));
	return g_strdup_printf("ended with wait status %#x", c->status);
}

void fk_child_signal(struct fk_child *c, int sig)
{
	if (c->own_group)
		kill(-c->pid, sig);
	else if (!c->exited)
		kill(c->pid, sig);
}

static gboolean on_timeout(gpointer data)
{
	*(bool *)data = true;
	return G_SOURCE_REMOVE;
}

bool fk_child_wait(struct fk_child *c, int timeout_ms, const bool *stop)
{
	bool timed_out = false;
	guint t = timeout_ms >= 0 ? g_timeout_add((guint)timeout_ms, on_timeout, &timed_out) : 0;

	while (!c->exited && !timed_out && !(stop && *stop))
		g_main_context_iteration(NULL, TRUE);
	if (t && !timed_out)
		g_source_remove(t);
	return c->exited;
}

/* whether any process of c's group is left */
static bool group_alive(const struct fk_child *c)
{
	return c->own_group && kill(-c->pid, 0) == 0;
}

void fk_child_end(struct fk_child *c, int sig, int grace_ms)
{
	if (!c->exited) {
		fk_child_signal(c, sig);
		if (!fk_child_wait(c, grace_ms, NULL)) {
			fk_child_signal(c, SIGKILL);
			fk_child_wait(c, -1, NULL);
		}
	}
	/* the leader is gone; what it started in its group goes too */
	if (group_alive(c)) {
		kill(-c->pid, sig);
		for (int waited = 0; group_alive(c) && waited < grace_ms; waited += 20)
			g_usleep(20000);
		if (group_alive(c))
			kill(-c->pid, SIGKILL);
	}
}

void fk_child_free(struct fk_child *c)
{
	if (!c)
		return;
	fk_child_end(c, SIGTERM, 2000);
	if (c->watch)
		g_source_remove(c->watch);
	g_spawn_close_pid(c->pid);
	g_free(c);
}
