#include "capture/threads.h"

#include "capture/proc.h"
#include "core/error.h"
#include "core/textesc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STACK_FRAMES 6

/* ---- /proc as the window opens ---- */

#if defined(__x86_64__)
/* the system calls a thread waits in, most often (x86-64's numbers) */
static const struct {
	int nr;
	const char *name;
} syscalls[] = {
	{ 0, "read" }, { 1, "write" }, { 7, "poll" }, { 17, "pread64" }, { 18, "pwrite64" },
	{ 19, "readv" }, { 20, "writev" }, { 23, "select" }, { 24, "sched_yield" },
	{ 34, "pause" }, { 35, "nanosleep" }, { 42, "connect" }, { 43, "accept" },
	{ 44, "sendto" }, { 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" },
	{ 56, "clone" }, { 57, "fork" }, { 58, "vfork" }, { 59, "execve" }, { 61, "wait4" },
	{ 65, "semop" }, { 69, "msgsnd" }, { 70, "msgrcv" }, { 73, "flock" }, { 74, "fsync" },
	{ 75, "fdatasync" }, { 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" },
	{ 202, "futex" }, { 208, "io_getevents" }, { 220, "semtimedop" },
	{ 230, "clock_nanosleep" }, { 232, "epoll_wait" }, { 247, "waitid" },
	{ 270, "pselect6" }, { 271, "ppoll" }, { 281, "epoll_pwait" }, { 288, "accept4" },
	{ 299, "recvmmsg" }, { 426, "io_uring_enter" }, { 441, "epoll_pwait2" },
	{ 449, "futex_waitv" },
};
#endif

static const char *syscall_name(long nr)
{
#if defined(__x86_64__)
	for (size_t i = 0; i < G_N_ELEMENTS(syscalls); i++)
		if (syscalls[i].nr == nr)
			return syscalls[i].name;
#endif
	(void)nr;
	return NULL;
}

/* a word of /proc text (up to a blank or the end), escaped for a TSV cell */
static void word(GString *out, const char *s)
{
	size_t n = strcspn(s, " \t\r\n");

	fk_text_escape(out, s, n, FK_ESC_BACKSLASH);
}

/* "NR ARGS... SP PC", "-1 SP PC" (not in a system call), or "running" */
static bool add_syscall(GString *out, const char *text)
{
	char *end;
	long nr;
	const char *name;

	while (*text == ' ')
		text++;
	if (g_str_has_prefix(text, "running")) {
		g_string_append(out, " syscall=running");
		return true;
	}
	errno = 0;
	nr = strtol(text, &end, 10);
	if (end == text || errno || (*end && *end != ' ' && *end != '\n'))
		return false;
	if (nr < 0)
		g_string_append(out, " syscall=none");
	else if ((name = syscall_name(nr)))
		g_string_append_printf(out, " syscall=%s", name);
	else
		g_string_append_printf(out, " syscall=%ld", nr);
	return true;
}

/* "[<0>] futex_wait_queue+0x63/0xb0" lines: the names, leaf first */
static bool add_stack(GString *out, const char *text)
{
	int n = 0;

	for (const char *l = text; *l && n < STACK_FRAMES;) {
		const char *eol = strchr(l, '\n'), *p = l, *e;

		if (!eol)
			eol = l + strlen(l);
		if (*p == '[' && (e = memchr(p, ']', (size_t)(eol - p))))
			p = e + 1;
		while (p < eol && *p == ' ')
			p++;
		for (e = p; e < eol && *e != '+' && *e != ' ' && *e != '\t'; e++)
			;
		if (e > p) {
			g_string_append(out, n ? "<-" : " stack=");
			fk_text_escape(out, p, (size_t)(e - p), FK_ESC_BACKSLASH);
			n++;
		}
		l = *eol ? eol + 1 : eol;
	}
	return n > 0;
}

char *fk_thread_wait_text(char state, const char *wchan, const char *syscall,
			  const char *stack)
{
	GString *out = g_string_new(NULL);
	bool any = false;

	if (g_ascii_isgraph(state))
		g_string_append_c(out, state);
	else
		g_string_append_c(out, '?');
	if (syscall)
		any |= add_syscall(out, syscall);
	/* "0": the kernel hides it, or the thread runs */
	if (wchan && *wchan && strcmp(wchan, "0") != 0 && !g_ascii_isspace(*wchan)) {
		g_string_append(out, " wchan=");
		word(out, wchan);
		any = true;
	}
	if (stack)
		any |= add_stack(out, stack);
	if (!any)
		g_string_append(out, " unreadable");
	return g_string_free(out, FALSE);
}

static void start_free(gpointer p)
{
	struct fk_thread_start *t = p;

	g_free(t->comm);
	g_free(t->waiting);
	g_free(t);
}

/* root/pid/task/tid/what, or NULL if it cannot be read */
static char *task_file(const char *root, int pid, int tid, const char *what)
{
	char *path = g_strdup_printf("%s/%d/task/%d/%s", root, pid, tid, what), *s = NULL;

	if (!g_file_get_contents(path, &s, NULL, NULL))
		s = NULL;
	g_free(path);
	return s;
}

GPtrArray *fk_threads_at_start(const char *root, const int *pids, size_t n)
{
	GPtrArray *all = g_ptr_array_new_with_free_func(start_free);

	for (size_t i = 0; i < n; i++) {
		GArray *tids = fk_proc_tids(root, pids[i]);

		for (guint k = 0; k < tids->len; k++) {
			int tid = g_array_index(tids, int, k);
			char *stat = task_file(root, pids[i], tid, "stat"), *wchan, *sc, *stack;
			struct fk_proc p = { 0 };
			struct fk_thread_start *t;

			if (!stat || !fk_proc_parse_stat(stat, &p) || p.state == 'Z' ||
			    p.state == 'X') {
				g_free(stat);
				g_free(p.comm);
				continue;
			}
			g_free(stat);
			wchan = task_file(root, pids[i], tid, "wchan");
			sc = task_file(root, pids[i], tid, "syscall");
			stack = task_file(root, pids[i], tid, "stack");
			t = g_new0(struct fk_thread_start, 1);
			t->pid = pids[i];
			t->tid = tid;
			t->state = p.state;
			t->comm = fk_text_escape_dup(p.comm, strlen(p.comm), FK_ESC_BACKSLASH);
			t->waiting = fk_thread_wait_text(p.state, wchan, sc, stack);
			g_ptr_array_add(all, t);
			g_free(p.comm);
			g_free(wchan);
			g_free(sc);
			g_free(stack);
		}
		g_array_unref(tids);
	}
	/* the pids came sorted, and each process's tids */
	return all;
}

/* ---- the plugin's TSV ---- */

static void row_free(gpointer p)
{
	struct fk_thread_row *r = p;

	g_free(r->comm);
	g_free(r->waiting);
	g_free(r);
}

/*
 * a pid (0 too) or a tid (above 0), or -1 for either: the plugin's
 * unknown pid, and perf's tid of a sample it could not place
 */
static bool cell_int(const char *s, size_t n, bool pid, int *v)
{
	long x = 0;

	if (n == 2 && memcmp(s, "-1", 2) == 0) {
		*v = -1;
		return true;
	}
	if (pid && n == 1 && *s == '0') {
		*v = 0;
		return true;
	}
	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!g_ascii_isdigit(s[i]))
			return false;
		x = x * 10 + (s[i] - '0');
	}
	if (x <= 0 || x > G_MAXINT)
		return false;
	*v = (int)x;
	return true;
}

static bool cell_u64(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (!g_ascii_isdigit(s[i]) || x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

GPtrArray *fk_states_parse(const char *text, size_t len, const char *name, GError **err)
{
	GPtrArray *rows = g_ptr_array_new_with_free_func(row_free);
	size_t hl = strlen(FK_STATES_HEADER);
	const char *p = text, *end = text + len;
	unsigned long line = 1;

	if (memchr(text, '\0', len)) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0, "holds a NUL byte: not the plugin's "
			    "states table");
		goto fail;
	}
	if (len < hl + 1 || memcmp(text, FK_STATES_HEADER "\n", hl + 1) != 0) {
		fk_error_at(err, FK_ERROR_PARSE, name, 1, "not the plugin's states table (its "
			    "header is pid, tid, comm, on_cpu_us, runnable_us, sleeping_us, "
			    "blocked_us)");
		goto fail;
	}
	for (p = text + hl + 1; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *c[8];
		size_t nc = 0;
		struct fk_thread_row *r;

		line++;
		if (!eol) {
			fk_error_at(err, FK_ERROR_PARSE, name, line, "cut short (no newline)");
			goto fail;
		}
		c[nc++] = p;
		for (const char *q = p; q < eol; q++)
			if (*q == '\t') {
				if (nc == 7)
					break;
				c[nc++] = q + 1;
			}
		c[nc] = eol + 1;
		if (nc != 7 || memchr(c[6], '\t', (size_t)(eol - c[6]))) {
			fk_error_at(err, FK_ERROR_PARSE, name, line, "not seven cells");
			goto fail;
		}
		r = g_new0(struct fk_thread_row, 1);
		g_ptr_array_add(rows, r);
		if (!cell_int(c[0], (size_t)(c[1] - c[0] - 1), true, &r->pid) ||
		    !cell_int(c[1], (size_t)(c[2] - c[1] - 1), false, &r->tid)) {
			char *pt = fk_text_escape_dup(c[0], MIN((size_t)(c[2] - c[0] - 1), 40), 0);

			fk_error_at(err, FK_ERROR_PARSE, name, line, "pid or tid is not one: '%s'", pt);
			g_free(pt);
			goto fail;
		}
		if (!fk_text_is_safe(c[2], (size_t)(c[3] - c[2] - 1), 0)) {
			fk_error_at(err, FK_ERROR_PARSE, name, line,
				    "a name with a control character or invalid UTF-8");
			goto fail;
		}
		r->comm = g_strndup(c[2], (size_t)(c[3] - c[2] - 1));
		for (int k = 0; k < FK_ST_N; k++)
			if (!cell_u64(c[3 + k], (size_t)(c[4 + k] - c[3 + k] - 1), &r->us[k])) {
				fk_error_at(err, FK_ERROR_PARSE, name, line,
					    "a time that is not a whole number of microseconds");
				goto fail;
			}
		p = eol + 1;
	}
	return rows;
fail:
	g_ptr_array_unref(rows);
	return NULL;
}

bool fk_states_window_us(const char *log, uint64_t *us)
{
	const char *p = log ? strstr(log, "foldkit: states of ") : NULL, *eol;
	char *end;

	if (!p)
		return false;
	eol = p + strcspn(p, "\n");
	/* "... over 1.983456 s, 1983456 us (times in us)" */
	for (const char *q = p; q + 2 < eol; q++) {
		if (q[0] != ',' || q[1] != ' ' || !g_ascii_isdigit(q[2]))
			continue;
		errno = 0;
		*us = g_ascii_strtoull(q + 2, &end, 10);
		if (!errno && end <= eol && g_str_has_prefix(end, " us"))
			return true;
	}
	return false;
}

/* ---- threads.tsv ---- */

static int by_pid_tid(gconstpointer a, gconstpointer b)
{
	const struct fk_thread_row *x = *(struct fk_thread_row *const *)a;
	const struct fk_thread_row *y = *(struct fk_thread_row *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

GPtrArray *fk_threads_merge(GPtrArray *tsv, GPtrArray *start, const int *pids, size_t n,
			    uint64_t window_us, GError **err)
{
	GPtrArray *rows = g_ptr_array_new_with_free_func(row_free);
	GHashTable *want = g_hash_table_new(g_direct_hash, g_direct_equal);
	GHashTable *at = g_hash_table_new(g_direct_hash, g_direct_equal);
	GHashTable *listed = g_hash_table_new(g_direct_hash, g_direct_equal);

	for (size_t i = 0; i < n; i++)
		g_hash_table_add(want, GINT_TO_POINTER(pids[i]));
	for (guint i = 0; start && i < start->len; i++) {
		struct fk_thread_start *t = g_ptr_array_index(start, i);

		g_hash_table_insert(at, GINT_TO_POINTER(t->tid), t);
	}
	for (guint i = 0; tsv && i < tsv->len; i++) {
		const struct fk_thread_row *r = g_ptr_array_index(tsv, i);
		struct fk_thread_start *t = g_hash_table_lookup(at, GINT_TO_POINTER(r->tid));
		int pid = r->pid < 0 && t ? t->pid : r->pid;
		struct fk_thread_row *c;
		uint64_t sum = 0;

		if (!g_hash_table_contains(want, GINT_TO_POINTER(pid)))
			continue;
		for (int k = 0; k < FK_ST_N; k++)
			sum += r->us[k];
		/* a thread perf could not place cannot be told from one /proc
		 * lists, which would then count as asleep: no table */
		if (sum > window_us || r->tid < 0) {
			if (r->tid < 0)
				fk_error_at(err, FK_ERROR_PARSE, "threads.tsv", 0, "process %d has "
					    "a thread whose id perf did not know (tid -1)", pid);
			else
				fk_error_at(err, FK_ERROR_PARSE, "threads.tsv", 0,
					    "thread %d: %" G_GUINT64_FORMAT " us of states in a "
					    "window of %" G_GUINT64_FORMAT " us", r->tid, sum,
					    window_us);
			g_ptr_array_unref(rows);
			rows = NULL;
			break;
		}
		if (g_hash_table_contains(listed, GINT_TO_POINTER(r->tid))) {
			fk_error_at(err, FK_ERROR_PARSE, "threads.tsv", 0,
				    "thread %d is listed twice", r->tid);
			g_ptr_array_unref(rows);
			rows = NULL;
			break;
		}
		c = g_new0(struct fk_thread_row, 1);
		*c = *r;
		c->pid = pid;
		c->comm = g_strdup(r->comm);
		c->waiting = NULL;
		g_ptr_array_add(rows, c);
		g_hash_table_add(listed, GINT_TO_POINTER(r->tid));
	}
	for (guint i = 0; rows && start && i < start->len; i++) {
		struct fk_thread_start *t = g_ptr_array_index(start, i);
		struct fk_thread_row *c;

		if (g_hash_table_contains(listed, GINT_TO_POINTER(t->tid)) ||
		    !g_hash_table_contains(want, GINT_TO_POINTER(t->pid)))
			continue;
		/* no switch in the window: in its state at the start for all of it */
		c = g_new0(struct fk_thread_row, 1);
		c->pid = t->pid;
		c->tid = t->tid;
		c->comm = g_strdup(t->comm);
		c->us[t->state == 'R' ? FK_ST_ON_CPU : t->state == 'D' ? FK_ST_BLOCKED
		      : FK_ST_SLEEPING] = window_us;
		c->waiting = g_strdup(t->waiting);
		g_ptr_array_add(rows, c);
	}
	if (rows)
		g_ptr_array_sort(rows, by_pid_tid);
	g_hash_table_destroy(want);
	g_hash_table_destroy(at);
	g_hash_table_destroy(listed);
	return rows;
}

void fk_threads_format(GString *out, GPtrArray *rows)
{
	g_string_append(out, FK_THREADS_HEADER "\n");
	for (guint i = 0; i < rows->len; i++) {
		const struct fk_thread_row *r = g_ptr_array_index(rows, i);

		g_string_append_printf(out, "%d\t%d\t%s", r->pid, r->tid, r->comm);
		for (int k = 0; k < FK_ST_N; k++)
			g_string_append_printf(out, "\t%" G_GUINT64_FORMAT, r->us[k]);
		g_string_append_printf(out, "\t%s\n", r->waiting ? r->waiting : "-");
	}
}
