#include "report/holders.h"

#include "core/jsonesc.h"
#include "core/mdcode.h"
#include "core/str.h"
#include "report/model.h"

#include <glib.h>
#include <string.h>

/*
 * The base names (frame_name_base()) of the functions a waker goes
 * through from the code that lets a lock go to the wake-up: the unlock
 * and wake calls of glibc, C++ and the kernel's futex path.  The frame
 * beyond the outermost of them is where the lock was held.
 */
static const char *const release_names[] = {
	"pthread_mutex_unlock", "pthread_mutex_unlock_usercnt", "pthread_mutex_unlock_full",
	"lll_lock_wake", "lll_lock_wake_private", "lll_unlock_wake", "lll_futex_wake",
	"pthread_rwlock_unlock", "pthread_cond_signal", "pthread_cond_broadcast",
	"pthread_spin_unlock", "sem_post", "new_sem_post", "futex_wake", "futex_wake_op",
	"futex_wake_mark", "syscall", "std::mutex::unlock", "std::__mutex_base::unlock",
	"std::condition_variable::notify_one", "std::condition_variable::notify_all",
	"wake_up_q", "try_to_wake_up", "wake_up_process", "wake_up_state", "do_futex",
	"x64_sys_futex", "rwsem_wake", "up_write", "up_read", "mutex_unlock",
	"mutex_unlock_slowpath", "rt_mutex_unlock", "rt_mutex_slowunlock",
	"do_syscall_64", "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64",
};

/*
 * A system call's way into the kernel: the frames before a lock wait that
 * are not the waiter's code (a futex wait called through syscall()).
 */
static const char *const syscall_names[] = {
	"syscall", "entry_SYSCALL_64_after_hwframe", "entry_SYSCALL_64", "do_syscall_64",
	"x64_sys_futex", "do_futex", "futex_wait", "futex_wait_queue", "futex_do_wait",
};

/* A wake-up by a timer: a wait that timed out, no lock released. */
static const char *const timer_names[] = {
	"hrtimer_wakeup", "process_timeout",
};

#define OUTERMOST "(outermost)"

struct row {
	char *lock, *site, *waker;	/* NUL-terminated copies */
	fk_count count;
};

struct lock {
	char *name;
	fk_count count;
	GPtrArray *rows;	/* struct row *, heaviest first */
};

struct holders {
	const struct frame_classifier *fc;
	GHashTable *release;	/* base names of release_names */
	GHashTable *syscall;	/* ... of syscall_names */
	GHashTable *timer;	/* ... of timer_names */
	GHashTable *rows;	/* "lock\nsite\nwaker" (no name holds a line
				 * break) -> struct row * */
	GHashTable *locks;	/* lock name -> struct lock * */
	GPtrArray *order;	/* struct lock *, heaviest first (finish) */
	fk_count lock_waits, other_waits, timeouts, no_waker;
	GString *key;
	GArray *frames;		/* struct fk_str: the line's frames */
};

static void row_free(gpointer p)
{
	struct row *r = p;

	g_free(r->lock);
	g_free(r->site);
	g_free(r->waker);
	g_free(r);
}

static void lock_free(gpointer p)
{
	struct lock *l = p;

	g_free(l->name);
	g_ptr_array_free(l->rows, TRUE);
	g_free(l);
}

struct holders *holders_new(const struct frame_classifier *fc)
{
	struct holders *h = g_new0(struct holders, 1);

	h->fc = fc;
	h->release = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < G_N_ELEMENTS(release_names); i++)
		g_hash_table_add(h->release, (gpointer)release_names[i]);
	h->syscall = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < G_N_ELEMENTS(syscall_names); i++)
		g_hash_table_add(h->syscall, (gpointer)syscall_names[i]);
	h->timer = g_hash_table_new(g_str_hash, g_str_equal);
	for (size_t i = 0; i < G_N_ELEMENTS(timer_names); i++)
		g_hash_table_add(h->timer, (gpointer)timer_names[i]);
	/* the rows are owned by their lock's array */
	h->rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	h->locks = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, lock_free);
	h->key = g_string_new(NULL);
	h->frames = g_array_new(FALSE, FALSE, sizeof(struct fk_str));
	return h;
}

void holders_free(struct holders *h)
{
	if (!h)
		return;
	g_hash_table_destroy(h->release);
	g_hash_table_destroy(h->syscall);
	g_hash_table_destroy(h->timer);
	g_hash_table_destroy(h->rows);
	g_hash_table_destroy(h->locks);
	if (h->order)
		g_ptr_array_free(h->order, TRUE);
	g_string_free(h->key, TRUE);
	g_array_free(h->frames, TRUE);
	g_free(h);
}

/* Whether f's base name (frame_name_base()) is in set. */
static bool in_set(GHashTable *set, struct fk_str f)
{
	const char *b;
	size_t n;
	char buf[96];

	frame_name_base(f.s, f.len, &b, &n);
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, b, n);
	buf[n] = '\0';
	return g_hash_table_contains(set, buf);
}

static void split_frames(GArray *out, const char *s, size_t len)
{
	size_t from = 0;

	g_array_set_size(out, 0);
	for (size_t i = 0; i <= len; i++)
		if (i == len || s[i] == ';') {
			struct fk_str f = { s + from, i - from };

			g_array_append_val(out, f);
			from = i + 1;
		}
}

void holders_add(struct holders *h, const char *stack, size_t len, fk_count count)
{
	const char *sep = memmem(stack, len, ";--;", 4);
	size_t wake_at, lock_i = 0, nw, site_i;
	struct fk_str *fr, lock, site, waker;
	struct lock *l;
	struct row *r;

	if (!sep) {
		h->no_waker += count;
		return;
	}
	/* the blocked stack: the caller of its first lock-wait frame */
	split_frames(h->frames, stack, (size_t)(sep - stack));
	fr = (struct fk_str *)h->frames->data;
	for (size_t i = 1; i < h->frames->len && !lock_i; i++)
		if (frame_classify(h->fc, fr[i].s, fr[i].len) & FRAME_LOCK_WAIT)
			lock_i = i;
	if (!lock_i) {
		h->other_waits += count;
		return;
	}
	/* the caller in the waiter's code, not the system call's way in,
	   nor a library's frame without a symbol ("[libc.so.6]" where libc's
	   symbols are not installed: its lock functions' names are not
	   known, and the program's frame is beyond them) */
	while (lock_i > 1 && (in_set(h->syscall, fr[lock_i - 1]) ||
			      (frame_classify(h->fc, fr[lock_i - 1].s, fr[lock_i - 1].len) &
			       FRAME_UNRESOLVED)))
		lock_i--;
	lock = lock_i > 1 ? fr[lock_i - 1] : (struct fk_str){ OUTERMOST, strlen(OUTERMOST) };
	g_string_assign(h->key, "");
	g_string_append_len(h->key, lock.s, (gssize)lock.len);
	g_string_append_c(h->key, '\n');
	/* the waker's part, leaf first, its name last */
	wake_at = (size_t)(sep - stack) + 4;
	split_frames(h->frames, stack + wake_at, len - wake_at);
	fr = (struct fk_str *)h->frames->data;
	nw = h->frames->len;
	waker = fr[nw - 1];
	site_i = 0;
	for (size_t i = 0; i + 1 < nw; i++) {
		if (in_set(h->timer, fr[i])) {
			h->timeouts += count;
			return;
		}
		if (in_set(h->release, fr[i]))
			site_i = i + 1;
	}
	/* (a stack of releases alone up to the name: its outermost) */
	if (site_i >= nw - 1)
		site_i = nw > 1 ? nw - 2 : 0;
	/* the holder's frame beyond a library's frames without a symbol
	   (its unlock's names not known) */
	while (site_i + 2 < nw && (frame_classify(h->fc, fr[site_i].s, fr[site_i].len) &
				   FRAME_UNRESOLVED))
		site_i++;
	site = fr[site_i];
	g_string_append_len(h->key, site.s, (gssize)site.len);
	g_string_append_c(h->key, '\n');
	g_string_append_len(h->key, waker.s, (gssize)waker.len);
	h->lock_waits += count;
	if ((r = g_hash_table_lookup(h->rows, h->key->str))) {
		r->count += count;
		l = g_hash_table_lookup(h->locks, r->lock);
		l->count += count;
		return;
	}
	r = g_new0(struct row, 1);
	r->lock = g_strndup(lock.s, lock.len);
	r->site = g_strndup(site.s, site.len);
	r->waker = g_strndup(waker.s, waker.len);
	r->count = count;
	if (!(l = g_hash_table_lookup(h->locks, r->lock))) {
		l = g_new0(struct lock, 1);
		l->name = g_strdup(r->lock);
		l->rows = g_ptr_array_new_with_free_func(row_free);
		g_hash_table_insert(h->locks, l->name, l);
	}
	l->count += count;
	g_ptr_array_add(l->rows, r);
	g_hash_table_replace(h->rows, g_strdup(h->key->str), r);
}

static int cmp_count(fk_count a, fk_count b)
{
	return (a < b) - (a > b);	/* heaviest first */
}

static gint by_row(gconstpointer a, gconstpointer b)
{
	const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;
	int c = cmp_count(x->count, y->count);

	if (!c)
		c = strcmp(x->site, y->site);
	return c ? c : strcmp(x->waker, y->waker);
}

static gint by_lock(gconstpointer a, gconstpointer b)
{
	const struct lock *x = *(struct lock *const *)a, *y = *(struct lock *const *)b;
	int c = cmp_count(x->count, y->count);

	return c ? c : strcmp(x->name, y->name);
}

void holders_finish(struct holders *h)
{
	GHashTableIter it;
	gpointer v;

	if (h->order)
		return;
	h->order = g_ptr_array_new();
	g_hash_table_iter_init(&it, h->locks);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct lock *l = v;

		g_ptr_array_sort(l->rows, by_row);
		g_ptr_array_add(h->order, l);
	}
	g_ptr_array_sort(h->order, by_lock);
}

void holders_totals(const struct holders *h, fk_count *lock_waits, fk_count *other_waits,
		    fk_count *timeouts, fk_count *no_waker)
{
	*lock_waits = h->lock_waits;
	*other_waits = h->other_waits;
	*timeouts = h->timeouts;
	*no_waker = h->no_waker;
}

size_t holders_nlocks(const struct holders *h)
{
	return g_hash_table_size(h->locks);
}

/* c / total as a percentage with one decimal, exactly rounded */
static void percent(GString *out, fk_count c, fk_count total)
{
	uint64_t t = share_scaled(c, total, 1000);

	g_string_append_printf(out, "%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT "%%", t / 10, t % 10);
}

static void count_text(GString *out, fk_count c)
{
	char buf[FK_COUNT_BUFSZ];

	/* whole units: the off-wake profile's are whole microseconds */
	g_string_append_len(out, buf, (gssize)fk_count_format(c, buf));
}

void holders_write_markdown(FILE *out, const struct holders *h, const char *source,
			    const char *unit, unsigned top)
{
	GString *s = g_string_new(NULL);
	fk_count all = h->lock_waits + h->other_waits + h->timeouts;

	g_string_append(s, "\n## Lock holders\n\nWho released the locks threads blocked on, from the off-wake profile ");
	fk_md_code(s, source, strlen(source), false);
	g_string_append(s, ": each lock is named by the frame that called the lock wait, each "
			"release site by the waker's frame that called the unlock (the code that "
			"held the lock), with the time blocked in ");
	g_string_append(s, unit);
	g_string_append(s, ".\n\n");
	if (!h->order || !h->order->len) {
		g_string_append(s, "No lock wait in it");
		if (all) {
			g_string_append(s, " (");
			count_text(s, h->other_waits + h->timeouts);
			g_string_append_printf(s, " %s of other waits)", unit);
		}
		g_string_append(s, ".\n");
		fputs(s->str, out);
		g_string_free(s, TRUE);
		return;
	}
	g_string_append_printf(s, "| lock (waiter's caller) | released in | by | blocked (%s) | share of the lock's |\n"
			       "|---|---|---|--:|--:|\n", unit);
	for (guint i = 0; i < h->order->len && i < top; i++) {
		const struct lock *l = g_ptr_array_index(h->order, i);

		for (guint j = 0; j < l->rows->len && j < top; j++) {
			const struct row *r = g_ptr_array_index(l->rows, j);

			g_string_append(s, "| ");
			if (j == 0)
				fk_md_code(s, l->name, strlen(l->name), true);
			else
				g_string_append(s, "\"");
			g_string_append(s, " | ");
			fk_md_code(s, r->site, strlen(r->site), true);
			g_string_append(s, " | ");
			fk_md_code(s, r->waker, strlen(r->waker), true);
			g_string_append(s, " | ");
			count_text(s, r->count);
			g_string_append(s, " | ");
			percent(s, r->count, l->count);
			g_string_append(s, " |\n");
		}
	}
	g_string_append(s, "\nLock waits: ");
	count_text(s, h->lock_waits);
	g_string_append_printf(s, " %s in %zu lock%s (", unit, holders_nlocks(h),
			       holders_nlocks(h) == 1 ? "" : "s");
	percent(s, h->lock_waits, all);
	g_string_append(s, " of the blocked time); lock waits that timed out: ");
	count_text(s, h->timeouts);
	g_string_append_printf(s, " %s; other waits: ", unit);
	count_text(s, h->other_waits);
	g_string_append_printf(s, " %s.\n", unit);
	if (h->no_waker) {
		g_string_append(s, "Lines without `--` (not off-wake stacks) left out: ");
		count_text(s, h->no_waker);
		g_string_append_printf(s, " %s.\n", unit);
	}
	fputs(s->str, out);
	g_string_free(s, TRUE);
}

void holders_write_json(FILE *out, const struct holders *h, const char *source,
			const char *unit, unsigned top)
{
	GString *s = g_string_new(",\n  \"lock_holders\": {\"source\": ");

	fk_json_string(s, source, strlen(source));
	g_string_append(s, ", \"unit\": ");
	fk_json_string(s, unit, strlen(unit));
	g_string_append(s, ", \"lock_waits\": ");
	count_text(s, h->lock_waits);
	g_string_append(s, ", \"timeouts\": ");
	count_text(s, h->timeouts);
	g_string_append(s, ", \"other_waits\": ");
	count_text(s, h->other_waits);
	g_string_append(s, ", \"no_waker\": ");
	count_text(s, h->no_waker);
	g_string_append(s, ", \"locks\": [");
	for (guint i = 0; h->order && i < h->order->len && i < top; i++) {
		const struct lock *l = g_ptr_array_index(h->order, i);

		g_string_append(s, i ? ",\n    {\"lock\": " : "\n    {\"lock\": ");
		fk_json_string(s, l->name, strlen(l->name));
		g_string_append(s, ", \"blocked\": ");
		count_text(s, l->count);
		g_string_append(s, ", \"released\": [");
		for (guint j = 0; j < l->rows->len && j < top; j++) {
			const struct row *r = g_ptr_array_index(l->rows, j);

			g_string_append(s, j ? ", {\"site\": " : "{\"site\": ");
			fk_json_string(s, r->site, strlen(r->site));
			g_string_append(s, ", \"waker\": ");
			fk_json_string(s, r->waker, strlen(r->waker));
			g_string_append(s, ", \"blocked\": ");
			count_text(s, r->count);
			g_string_append(s, "}");
		}
		g_string_append(s, "]}");
	}
	g_string_append(s, h->order && h->order->len ? "\n  ]}" : "]}");
	fputs(s->str, out);
	g_string_free(s, TRUE);
}
