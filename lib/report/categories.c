#include "report/categories.h"

#include "core/error.h"
#include "core/linereader.h"
#include "transform/stackops.h"

#include <string.h>

/*
 * The built-in categories: seed 001's subsystem and lock tables as
 * regexes over frame names.  They overlap (a futex wait is a lock, a
 * system call and a sleep), so their shares do not sum to 100%.
 * docs/fold-report.1 lists them: change both together.
 */
static const struct {
	const char *name, *regex;
} defaults[] = {
	{ "locks", "(?i)mutex|futex|spin_?lock|rwlock|rwsem|lll_lock|pthread_cond"
		   "|condition_variable|semaphore|sem_(timed|clock)?wait|sem_post" },
	{ "allocation", "^(__libc_|_int_|__GI___libc_)?(malloc|calloc|realloc|free|cfree"
			"|memalign|posix_memalign|aligned_alloc)\\b|^operator (new|delete)"
			"|^(je|tc|mi)_(malloc|free|new|delete|calloc|realloc)|malloc_consolidate"
			"|^sysmalloc|::(de)?allocate$|^kmalloc|^kmem_cache_(alloc|free)|^kfree$"
			"|^_*alloc_pages" },
	{ "syscalls-io", "^entry_SYSCALL|^do_syscall_64|^__(x64|arm64|ia32)_sys_|^ksys_"
			 "|^vfs_|^(__GI___libc_|__libc_|__)?(read|write|readv|writev|pread64"
			 "|pwrite64|send|sendto|sendmsg|recv|recvfrom|recvmsg|epoll_wait"
			 "|epoll_pwait|poll|ppoll|select|ioctl|open64|openat64|openat|close"
			 "|fsync|fdatasync)(@.*)?$|^syscall$|^tcp_|^sock_|^io_uring" },
	{ "sleeping", "^_*(clock_)?nanosleep|^_*u?sleep(@.*)?$|^do_nanosleep|^hrtimer_nanosleep"
		      "|this_thread::sleep|^_*schedule|finish_task_switch"
		      "|^_*pthread_cond_(timed|clock)?wait|condition_variable(_any)?::wait|epoll_wait"
		      "|futex_wait|^_*io_schedule|poll_schedule_timeout|^do_idle$" },
	{ "kernel", "_\\[k\\]$|^\\[\\[?kernel\\.kallsyms\\]|^\\[kernel\\]$|^entry_SYSCALL"
		    "|^asm_(exc|sysvec|common_interrupt)|^ret_from_fork|^secondary_startup_64"
		    "|^start_kernel$|^el[01]_" },
	{ "logging", CATEGORY_LOGGING_RE },
	{ "unresolved", "^\\[(?!kernel\\](_\\[[kjiw]\\])?$).*\\](_\\[[kjiw]\\])?$" },
};

struct category {
	char *name, *regex;
	struct frame_matcher *m;
};

struct category_list {
	GPtrArray *cats;	/* struct category */
};

static void category_free(gpointer p)
{
	struct category *c = p;

	g_free(c->name);
	g_free(c->regex);
	frame_matcher_free(c->m);
	g_free(c);
}

struct category_list *category_list_new(bool with_defaults)
{
	struct category_list *l = g_new0(struct category_list, 1);

	l->cats = g_ptr_array_new_with_free_func(category_free);
	for (size_t i = 0; with_defaults && i < G_N_ELEMENTS(defaults); i++) {
		int rc = category_list_set(l, defaults[i].name, strlen(defaults[i].name),
					   defaults[i].regex, strlen(defaults[i].regex),
					   NULL, 0, NULL);

		g_assert(rc == 0);	/* constant patterns */
	}
	return l;
}

void category_list_free(struct category_list *l)
{
	if (!l)
		return;
	g_ptr_array_free(l->cats, TRUE);
	g_free(l);
}

int category_list_set(struct category_list *l, const char *name, size_t namelen,
		      const char *regex, size_t regexlen, const char *file,
		      uint64_t line, GError **err)
{
	struct category *c = NULL;
	struct frame_matcher *m;
	char *re;
	GError *e = NULL;

	if (namelen == 0) {
		fk_error_at(err, FK_ERROR_PARSE, file, line, "empty category name");
		return -1;
	}
	if (memchr(name, '\0', namelen) || memchr(regex, '\0', regexlen)) {
		fk_error_at(err, FK_ERROR_PARSE, file, line, "NUL byte in a category");
		return -1;
	}
	if (regexlen == 0) {
		fk_error_at(err, FK_ERROR_PARSE, file, line, "empty regex for category '%.*s'",
			    (int)MIN(namelen, 200), name);
		return -1;
	}
	re = g_strndup(regex, regexlen);
	if (!(m = frame_matcher_new(re, 0, &e))) {
		fk_error_at(err, FK_ERROR_PARSE, file, line, "%s", e->message);
		g_error_free(e);
		g_free(re);
		return -1;
	}
	for (guint i = 0; i < l->cats->len; i++) {
		struct category *o = g_ptr_array_index(l->cats, i);

		if (strlen(o->name) == namelen && memcmp(o->name, name, namelen) == 0)
			c = o;
	}
	if (!c) {
		if (l->cats->len >= CATEGORY_LIST_MAX) {
			fk_error_at(err, FK_ERROR_PARSE, file, line,
				    "more than %d categories", CATEGORY_LIST_MAX);
			frame_matcher_free(m);
			g_free(re);
			return -1;
		}
		c = g_new0(struct category, 1);
		c->name = g_strndup(name, namelen);
		g_ptr_array_add(l->cats, c);
	}
	g_free(c->regex);
	frame_matcher_free(c->m);
	c->regex = re;
	c->m = m;
	return 0;
}

int category_list_read(struct category_list *l, const char *path, GError **err)
{
	struct line_reader *r = line_reader_open(path, err);
	struct line line;
	int rc;

	if (!r)
		return -1;
	while ((rc = line_reader_next(r, &line, err)) > 0) {
		const char *tab;
		size_t i = 0;

		while (i < line.len && (line.s[i] == ' ' || line.s[i] == '\t'))
			i++;
		if (i == line.len || line.s[i] == '#')
			continue;
		if (!(tab = memchr(line.s, '\t', line.len))) {
			fk_error_at(err, FK_ERROR_PARSE, line_reader_name(r), line.no,
				    "expected NAME<TAB>REGEX");
			rc = -1;
			break;
		}
		if (category_list_set(l, line.s, (size_t)(tab - line.s), tab + 1,
				      line.len - (size_t)(tab + 1 - line.s),
				      line_reader_name(r), line.no, err) < 0) {
			rc = -1;
			break;
		}
	}
	line_reader_free(r);
	return rc < 0 ? -1 : 0;
}

size_t category_list_size(const struct category_list *l)
{
	return l->cats->len;
}

const char *category_list_name(const struct category_list *l, size_t i)
{
	return ((struct category *)g_ptr_array_index(l->cats, i))->name;
}

const char *category_list_regex(const struct category_list *l, size_t i)
{
	return ((struct category *)g_ptr_array_index(l->cats, i))->regex;
}

bool category_list_match(const struct category_list *l, size_t i,
			 const char *s, size_t len)
{
	return frame_matcher_test(((struct category *)g_ptr_array_index(l->cats, i))->m,
				  s, len);
}
