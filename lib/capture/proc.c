#include "capture/proc.h"

#include "core/error.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DELETED " (deleted)"
#define NEAR_MAX 10
#define COMM_MAX 15		/* the kernel keeps 15 bytes of a name */

void fk_proc_free(struct fk_proc *p)
{
	if (!p)
		return;
	g_free(p->comm);
	g_free(p->exe);
	g_free(p->cmdline);
	g_strfreev(p->argv);
	g_free(p);
}

static char *path_of(const char *root, int pid, const char *what)
{
	return g_strdup_printf("%s/%d/%s", root, pid, what);
}

/* a blank, then a decimal int (the kernel's "-1" included) */
static bool stat_int(const char **s, int *v)
{
	char *end;
	long n;

	if (**s != ' ')
		return false;
	errno = 0;
	n = strtol(*s + 1, &end, 10);
	if (end == *s + 1 || errno || n < INT_MIN || n > INT_MAX)
		return false;
	*v = (int)n;
	*s = end;
	return true;
}

bool fk_proc_parse_stat(const char *s, struct fk_proc *p)
{
	const char *open = strchr(s, '('), *close = strrchr(s, ')'), *f;
	int ppid, pgid;
	char state;

	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return false;
	state = close[2];
	f = close + 3;
	if (!stat_int(&f, &ppid) || !stat_int(&f, &pgid))
		return false;
	/* session ... itrealvalue (fields 6 to 21), then starttime */
	p->start = 0;
	for (int field = 6; field <= 22 && *f == ' '; field++) {
		const char *v = f + 1;

		f = v + strcspn(v, " ");
		if (field == 22 && g_ascii_isdigit(*v))
			p->start = g_ascii_strtoull(v, NULL, 10);
	}
	g_free(p->comm);
	p->comm = g_strndup(open + 1, (gsize)(close - open - 1));
	p->state = state;
	p->ppid = ppid;
	p->pgid = pgid;
	return true;
}

/* The arguments, joined by spaces (the result) and one by one (*argv). */
static char *read_cmdline(const char *root, int pid, char ***argv)
{
	char *path = path_of(root, pid, "cmdline"), *s = NULL;
	gsize len = 0;

	*argv = NULL;
	if (g_file_get_contents(path, &s, &len, NULL)) {
		GPtrArray *v = g_ptr_array_new();

		while (len > 0 && s[len - 1] == '\0')
			len--;
		for (gsize i = 0, a = 0; i <= len && len > 0; i++)
			if (i == len || s[i] == '\0') {
				g_ptr_array_add(v, g_strndup(s + a, i - a));
				a = i + 1;
			}
		g_ptr_array_add(v, NULL);
		*argv = (char **)g_ptr_array_free(v, FALSE);
		for (gsize i = 0; i < len; i++)
			if (s[i] == '\0')
				s[i] = ' ';
		s[len] = '\0';
		if (len == 0) {
			g_clear_pointer(&s, g_free);
			g_clear_pointer(argv, g_strfreev);
		}
	}
	g_free(path);
	return s;
}

struct fk_proc *fk_proc_read(const char *root, int pid, unsigned what)
{
	char *path = path_of(root, pid, "stat"), *s = NULL;
	struct fk_proc *p;
	GError *err = NULL;

	if (!g_file_get_contents(path, &s, NULL, &err)) {
		errno = err->code == G_FILE_ERROR_NOENT ? ENOENT : EIO;
		g_error_free(err);
		g_free(path);
		return NULL;
	}
	g_free(path);
	p = g_new0(struct fk_proc, 1);
	p->pid = pid;
	if (!fk_proc_parse_stat(s, p)) {
		g_free(s);
		fk_proc_free(p);
		errno = EINVAL;
		return NULL;
	}
	g_free(s);
	if (what & FK_PROC_EXE) {
		path = path_of(root, pid, "exe");
		p->exe = g_file_read_link(path, &err);
		if (!p->exe) {
			p->exe_errno = err->code == G_FILE_ERROR_ACCES ||
				       err->code == G_FILE_ERROR_PERM ? EACCES : ENOENT;
			g_clear_error(&err);
		}
		g_free(path);
	}
	if (what & FK_PROC_CMDLINE)
		p->cmdline = read_cmdline(root, pid, &p->argv);
	return p;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!g_ascii_isdigit(*s))
			return false;
	return true;
}

static int by_pid(gconstpointer a, gconstpointer b)
{
	const struct fk_proc *x = *(struct fk_proc *const *)a, *y = *(struct fk_proc *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

GPtrArray *fk_proc_scan(const char *root, unsigned what, GError **err)
{
	GError *e = NULL;
	GDir *d = g_dir_open(root, 0, &e);
	GPtrArray *all;
	const char *name;

	if (!d) {
		fk_error_at(err, FK_ERROR_IO, root, 0, "cannot list processes: %s", e->message);
		g_error_free(e);
		return NULL;
	}
	all = g_ptr_array_new_with_free_func((GDestroyNotify)fk_proc_free);
	while ((name = g_dir_read_name(d))) {
		struct fk_proc *p;

		if (!all_digits(name) || strlen(name) > 9)
			continue;
		if ((p = fk_proc_read(root, atoi(name), what)))
			g_ptr_array_add(all, p);
	}
	g_dir_close(d);
	g_ptr_array_sort(all, by_pid);
	return all;
}

struct fk_proc *fk_proc_find(GPtrArray *all, int pid)
{
	guint lo = 0, hi = all->len;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		struct fk_proc *p = g_ptr_array_index(all, mid);

		if (p->pid == pid)
			return p;
		if (p->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int int_cmp(gconstpointer a, gconstpointer b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

GArray *fk_proc_tids(const char *root, int pid)
{
	char *path = path_of(root, pid, "task");
	GDir *d = g_dir_open(path, 0, NULL);
	GArray *tids = g_array_new(FALSE, FALSE, sizeof(int));
	const char *name;

	g_free(path);
	if (!d)
		return tids;
	while ((name = g_dir_read_name(d))) {
		int tid;

		if (!all_digits(name) || strlen(name) > 9)
			continue;
		tid = atoi(name);
		g_array_append_val(tids, tid);
	}
	g_dir_close(d);
	g_array_sort(tids, int_cmp);
	return tids;
}

int fk_proc_tgid(const char *root, int tid)
{
	char *path = path_of(root, tid, "status"), *s = NULL, *line;
	int tgid = 0;

	if (g_file_get_contents(path, &s, NULL, NULL) &&
	    (line = strstr(s, "\nTgid:")))
		tgid = atoi(line + 6);
	g_free(s);
	g_free(path);
	return tgid;
}

int fk_proc_last_pid(const char *root)
{
	char *path = g_strdup_printf("%s/sys/kernel/ns_last_pid", root), *s = NULL;
	int pid = -1;

	if (g_file_get_contents(path, &s, NULL, NULL) && g_ascii_isdigit(s[0]))
		pid = atoi(s);
	g_free(s);
	g_free(path);
	return pid;
}

bool fk_proc_parse_pids(const char *s, GArray *pids)
{
	char **parts = g_strsplit(s, ",", -1);
	bool ok = parts[0] != NULL;

	for (char **p = parts; ok && *p; p++) {
		char *end;
		long v;

		errno = 0;
		v = strtol(*p, &end, 10);
		ok = g_ascii_isdigit(**p) && !*end && !errno && v > 0 && v <= INT32_MAX;
		if (ok) {
			int pid = (int)v;

			g_array_append_val(pids, pid);
		}
	}
	g_strfreev(parts);
	return ok;
}

char *fk_proc_exe_name(const char *exe)
{
	char *base = g_path_get_basename(exe);
	size_t n = strlen(base), d = strlen(DELETED);

	if (n > d && strcmp(base + n - d, DELETED) == 0)
		base[n - d] = '\0';
	return base;
}

static bool is_deleted_copy(const char *exe, const char *real)
{
	size_t n = strlen(real);

	return strncmp(exe, real, n) == 0 && strcmp(exe + n, DELETED) == 0;
}

static bool is_kernel_thread(const struct fk_proc *p)
{
	return !p->exe && p->exe_errno == ENOENT;
}

static void add_near(struct fk_match *m, const struct fk_proc *p, const char *fmt, ...)
	G_GNUC_PRINTF(3, 4);
static void add_near(struct fk_match *m, const struct fk_proc *p, const char *fmt, ...)
{
	va_list ap;
	char *why;

	va_start(ap, fmt);
	why = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	g_ptr_array_add(m->near, g_strdup_printf("%d %s: %s", p->pid, p->comm, why));
	g_free(why);
}

/* a comm is the first 15 bytes of a longer name */
static bool comm_cut_from(const char *comm, const char *name)
{
	return strlen(name) > COMM_MAX && strlen(comm) == COMM_MAX &&
	       strncmp(comm, name, COMM_MAX) == 0;
}

static void near_exe(struct fk_match *m, const struct fk_proc *p, const char *real)
{
	char *want = fk_proc_exe_name(real), *name;

	if (!p->exe) {
		if (p->exe_errno == EACCES) {
			m->hidden++;
			if (strcmp(p->comm, want) == 0 || comm_cut_from(p->comm, want))
				add_near(m, p, "is named '%s', but its executable cannot be read "
					 "(another user's process: run fp-record as root)", want);
		}
		g_free(want);
		return;
	}
	name = fk_proc_exe_name(p->exe);
	if (is_deleted_copy(p->exe, real))
		add_near(m, p, "runs the file %s had before it was replaced: restart it, "
			 "or record it with --pid %d", real, p->pid);
	else if (strcmp(name, want) == 0)
		add_near(m, p, "runs another file of that name, %s", p->exe);
	else if (p->cmdline && strstr(p->cmdline, want))
		add_near(m, p, "its command line names '%s', but it runs %s", want, p->exe);
	else if (strcmp(p->comm, want) == 0 || comm_cut_from(p->comm, want))
		add_near(m, p, "is named '%s', but runs %s", want, p->exe);
	g_free(name);
	g_free(want);
}

static bool name_matches(const struct fk_proc *p, const char *want)
{
	char *name;
	bool ok;

	if (strcmp(p->comm, want) == 0)
		return true;
	if (!p->exe)
		return false;
	name = fk_proc_exe_name(p->exe);
	ok = strcmp(name, want) == 0;
	g_free(name);
	return ok;
}

static void near_name(struct fk_match *m, const struct fk_proc *p, const char *want)
{
	char *name = p->exe ? fk_proc_exe_name(p->exe) : NULL;
	const char *runs = p->exe ? p->exe : "an executable that cannot be read";

	if (!p->exe && p->exe_errno == EACCES)
		m->hidden++;
	if (comm_cut_from(p->comm, want))
		add_near(m, p, "its name is '%s' cut to %d bytes, but it runs %s",
			 want, COMM_MAX, runs);
	else if (g_ascii_strcasecmp(p->comm, want) == 0 ||
		 (name && g_ascii_strcasecmp(name, want) == 0))
		add_near(m, p, "its name differs from '%s' only in case (runs %s)", want, runs);
	else if (strstr(p->comm, want) || (name && strstr(name, want)))
		add_near(m, p, "its name contains '%s' (runs %s)", want, runs);
	else if (p->cmdline && strstr(p->cmdline, want))
		add_near(m, p, "its command line names '%s', but it runs %s", want, runs);
	g_free(name);
}

void fk_proc_select(GPtrArray *all, const struct fk_select *sel, struct fk_match *m)
{
	memset(m, 0, sizeof(*m));
	m->chosen = g_ptr_array_new();
	m->near = g_ptr_array_new_with_free_func(g_free);
	m->missing = g_array_new(FALSE, FALSE, sizeof(int));
	if (sel->by == FK_BY_PID) {
		for (size_t i = 0; i < sel->npids; i++) {
			struct fk_proc *p = fk_proc_find(all, sel->pids[i]);
			int tgid;

			if (p) {
				if (!g_ptr_array_find(m->chosen, p, NULL))
					g_ptr_array_add(m->chosen, p);
				continue;
			}
			/* /proc lists processes, not threads: a thread's
			 * directory is there, but hidden */
			tgid = fk_proc_tgid(sel->root ? sel->root : "/proc", sel->pids[i]);
			if (tgid > 0 && tgid != sel->pids[i] && (p = fk_proc_find(all, tgid)))
				add_near(m, p, "%d is one of its threads: use --pid %d",
					 sel->pids[i], tgid);
			else
				g_array_append_val(m->missing, sel->pids[i]);
		}
		return;
	}
	for (guint i = 0; i < all->len; i++) {
		struct fk_proc *p = g_ptr_array_index(all, i);
		bool hit;

		if (p->pid == sel->skip_pid || (sel->skip_pgid > 0 && p->pgid == sel->skip_pgid) ||
		    is_kernel_thread(p))
			continue;
		if (sel->by == FK_BY_EXE)
			hit = p->exe && strcmp(p->exe, sel->exe) == 0;
		else
			hit = name_matches(p, sel->name);
		if (hit) {
			g_ptr_array_add(m->chosen, p);
			continue;
		}
		if (sel->by == FK_BY_EXE)
			near_exe(m, p, sel->exe);
		else
			near_name(m, p, sel->name);
	}
	if (m->near->len > NEAR_MAX) {
		char *more = g_strdup_printf("... and %u more", m->near->len - NEAR_MAX);

		g_ptr_array_set_size(m->near, NEAR_MAX);
		g_ptr_array_add(m->near, more);
	}
}

void fk_match_clear(struct fk_match *m)
{
	if (m->chosen)
		g_ptr_array_unref(m->chosen);
	if (m->near)
		g_ptr_array_unref(m->near);
	if (m->missing)
		g_array_unref(m->missing);
	memset(m, 0, sizeof(*m));
}

unsigned fk_proc_descendants(GPtrArray *all, GHashTable *family, int newer_than,
			     GPtrArray *added)
{
	unsigned n = 0;
	bool more = true;

	/* children usually have larger pids than their parents, so one
	 * pass mostly does; pids wrap, hence the loop */
	while (more) {
		more = false;
		for (guint i = 0; i < all->len; i++) {
			struct fk_proc *p = g_ptr_array_index(all, i);

			if (p->pid <= newer_than ||
			    g_hash_table_contains(family, GINT_TO_POINTER(p->pid)) ||
			    !g_hash_table_contains(family, GINT_TO_POINTER(p->ppid)))
				continue;
			g_hash_table_add(family, GINT_TO_POINTER(p->pid));
			if (added)
				g_ptr_array_add(added, p);
			n++;
			more = true;
		}
	}
	return n;
}
