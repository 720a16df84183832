#include "report/runq.h"

#include "core/jsonesc.h"
#include "core/mdcode.h"
#include "report/model.h"

#include <glib.h>
#include <string.h>

struct stack_row {
	const struct runq_thread *t;
	char *stack;		/* without the root */
	fk_count count;
};

struct runq {
	const struct frame_classifier *fc;
	GHashTable *threads;	/* "process\nthread" -> struct runq_thread *
				 * (a name holds no line break: the process's
				 * is a file name, the thread's a frame) */
	GHashTable *stacks;	/* "process\nstack" -> struct stack_row * */
	GHashTable *windows;	/* process -> fk_count * */
	GPtrArray *order;	/* struct runq_thread *, heaviest first */
	GPtrArray *heavy;	/* struct stack_row *, heaviest first */
	fk_count total, after_lock;
	GString *key;
};

static void thread_free(gpointer p)
{
	struct runq_thread *t = p;

	g_free(t->file);
	g_free(t->process);
	g_free(t->thread);
	g_free(t->where);
	g_free(t);
}

static void stack_free(gpointer p)
{
	struct stack_row *s = p;

	g_free(s->stack);
	g_free(s);
}

struct runq *runq_new(const struct frame_classifier *fc)
{
	struct runq *q = g_new0(struct runq, 1);

	q->fc = fc;
	q->threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, thread_free);
	q->stacks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, stack_free);
	q->windows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	q->key = g_string_new(NULL);
	return q;
}

void runq_free(struct runq *q)
{
	if (!q)
		return;
	if (q->order)
		g_ptr_array_free(q->order, TRUE);
	if (q->heavy)
		g_ptr_array_free(q->heavy, TRUE);
	g_hash_table_destroy(q->stacks);
	g_hash_table_destroy(q->threads);
	g_hash_table_destroy(q->windows);
	g_string_free(q->key, TRUE);
	g_free(q);
}

/* whether a frame of s[0..len) waits on a lock */
static bool in_lock_wait(const struct runq *q, const char *s, size_t len)
{
	const char *end = s + len;

	while (s < end) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		const char *e = semi ? semi : end;

		if (frame_classify(q->fc, s, (size_t)(e - s)) & FRAME_LOCK_WAIT)
			return true;
		s = e + 1;
	}
	return false;
}

void runq_add(struct runq *q, const char *file, const char *process, const char *stack,
	      size_t len, fk_count count)
{
	const char *semi = memchr(stack, ';', len);
	size_t rlen = semi ? (size_t)(semi - stack) : len;
	const char *rest = semi ? semi + 1 : stack + len;
	size_t restlen = (size_t)(stack + len - rest);
	struct runq_thread *t;
	struct stack_row *sr;

	g_string_assign(q->key, process ? process : "");
	g_string_append_c(q->key, '\n');
	g_string_append_len(q->key, stack, (gssize)rlen);
	if (!(t = g_hash_table_lookup(q->threads, q->key->str))) {
		t = g_new0(struct runq_thread, 1);
		t->file = g_strdup(file);
		t->process = g_strdup(process);
		t->thread = g_strndup(stack, rlen);
		g_hash_table_insert(q->threads, g_strdup(q->key->str), t);
	}
	t->count += count;
	q->total += count;
	if (in_lock_wait(q, rest, restlen)) {
		t->after_lock += count;
		q->after_lock += count;
	}
	/* the same stack of the same thread, however many lines */
	g_string_assign(q->key, process ? process : "");
	g_string_append_c(q->key, '\n');
	g_string_append_len(q->key, stack, (gssize)len);
	if (!(sr = g_hash_table_lookup(q->stacks, q->key->str))) {
		sr = g_new0(struct stack_row, 1);
		sr->t = t;
		sr->stack = g_strndup(rest, restlen);
		g_hash_table_insert(q->stacks, g_strdup(q->key->str), sr);
	}
	sr->count += count;
}

void runq_set_window(struct runq *q, const char *process, fk_count window)
{
	fk_count *w = g_new(fk_count, 1);

	*w = window;
	g_hash_table_insert(q->windows, g_strdup(process), w);
}

static int cmp_names(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_thread(gconstpointer a, gconstpointer b)
{
	const struct runq_thread *x = *(const struct runq_thread *const *)a;
	const struct runq_thread *y = *(const struct runq_thread *const *)b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if ((c = cmp_names(x->process, y->process)))
		return c;
	return strcmp(x->thread, y->thread);
}

static int cmp_stack(gconstpointer a, gconstpointer b)
{
	const struct stack_row *x = *(const struct stack_row *const *)a;
	const struct stack_row *y = *(const struct stack_row *const *)b;
	int c;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if ((c = cmp_names(x->t->process, y->t->process)))
		return c;
	if ((c = strcmp(x->t->thread, y->t->thread)))
		return c;
	return strcmp(x->stack, y->stack);
}

void runq_finish(struct runq *q)
{
	GHashTableIter it;
	gpointer v;

	q->order = g_ptr_array_new();
	g_hash_table_iter_init(&it, q->threads);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct runq_thread *t = v;
		fk_count *w = t->process ? g_hash_table_lookup(q->windows, t->process) : NULL;

		t->window = w ? *w : 0;
		g_ptr_array_add(q->order, t);
	}
	g_ptr_array_sort(q->order, cmp_thread);
	q->heavy = g_ptr_array_new();
	g_hash_table_iter_init(&it, q->stacks);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_ptr_array_add(q->heavy, v);
	g_ptr_array_sort(q->heavy, cmp_stack);
	/* each thread's heaviest stack: the first of its in that order */
	for (guint i = 0; i < q->heavy->len; i++) {
		const struct stack_row *s = g_ptr_array_index(q->heavy, i);
		struct runq_thread *t = (struct runq_thread *)s->t;

		if (!t->where) {
			t->where = g_strdup(s->stack);
			t->where_count = s->count;
		}
	}
}

size_t runq_nthreads(const struct runq *q)
{
	return q->order ? q->order->len : 0;
}

const struct runq_thread *runq_thread_at(const struct runq *q, size_t i)
{
	return g_ptr_array_index(q->order, i);
}

static void count_text(GString *out, fk_count c)
{
	char buf[FK_COUNT_BUFSZ];

	g_string_append_len(out, buf, (gssize)fk_count_format(c, buf));
}

static void percent(GString *out, fk_count c, fk_count total)
{
	uint64_t t = share_scaled(c, total, 1000);

	g_string_append_printf(out, "%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT "%%", t / 10, t % 10);
}

static void md_name(GString *s, const char *name)
{
	if (name)
		fk_md_code(s, name, strlen(name), true);
	else
		g_string_append(s, "-");
}

void runq_write_markdown(FILE *out, const struct runq *q, const char *source,
			 const char *unit, unsigned top)
{
	GString *s = g_string_new(NULL);

	g_string_append(s, "\n## Run queue\n\nWhere threads waited for a CPU, from the run-queue profile ");
	fk_md_code(s, source, strlen(source), false);
	g_string_append_printf(s, ": each thread's time runnable (preempted, or woken and not yet "
			       "running) in %s, its share of its process's window, the part in "
			       "stacks waiting on a lock (runnable once woken with the lock free), "
			       "and the stack it waited at most.  This time is waiting for a CPU, "
			       "not for a lock or for work: no lock wait counts it.\n\n", unit);
	if (!q->order || !q->order->len) {
		g_string_append(s, "No time runnable in it.\n");
		fputs(s->str, out);
		g_string_free(s, TRUE);
		return;
	}
	g_string_append_printf(s, "| process | thread | runnable (%s) | share of the window | "
			       "after a lock wait (%s) | waited most at |\n"
			       "|---|---|--:|--:|--:|---|\n", unit, unit);
	for (guint i = 0; i < q->order->len && i < top; i++) {
		const struct runq_thread *t = g_ptr_array_index(q->order, i);

		g_string_append(s, "| ");
		md_name(s, t->process);
		g_string_append(s, " | ");
		md_name(s, t->thread);
		g_string_append(s, " | ");
		count_text(s, t->count);
		g_string_append(s, " | ");
		if (t->window > 0)
			percent(s, t->count, t->window);
		else
			g_string_append(s, "-");
		g_string_append(s, " | ");
		count_text(s, t->after_lock);
		g_string_append(s, " | ");
		md_name(s, t->where);
		g_string_append(s, " |\n");
	}
	g_string_append_printf(s, "\n| process | thread | stack | runnable (%s) |\n|---|---|---|--:|\n",
			       unit);
	for (guint i = 0; i < q->heavy->len && i < top; i++) {
		const struct stack_row *r = g_ptr_array_index(q->heavy, i);

		g_string_append(s, "| ");
		md_name(s, r->t->process);
		g_string_append(s, " | ");
		md_name(s, r->t->thread);
		g_string_append(s, " | ");
		md_name(s, r->stack);
		g_string_append(s, " | ");
		count_text(s, r->count);
		g_string_append(s, " |\n");
	}
	g_string_append(s, "\nRunnable: ");
	count_text(s, q->total);
	g_string_append_printf(s, " %s in %u thread%s; of it after lock waits: ", unit,
			       q->order->len, q->order->len == 1 ? "" : "s");
	count_text(s, q->after_lock);
	g_string_append_printf(s, " %s.\n", unit);
	fputs(s->str, out);
	g_string_free(s, TRUE);
}

static void json_name(GString *s, const char *name)
{
	if (name)
		fk_json_string(s, name, strlen(name));
	else
		g_string_append(s, "null");
}

void runq_write_json(FILE *out, const struct runq *q, const char *source, const char *unit,
		     unsigned top)
{
	GString *s = g_string_new(",\n  \"run_queue\": {\"source\": ");

	fk_json_string(s, source, strlen(source));
	g_string_append(s, ", \"unit\": ");
	fk_json_string(s, unit, strlen(unit));
	g_string_append(s, ", \"runnable\": ");
	count_text(s, q->total);
	g_string_append(s, ", \"after_lock_wait\": ");
	count_text(s, q->after_lock);
	g_string_append(s, ", \"threads\": [");
	for (guint i = 0; q->order && i < q->order->len && i < top; i++) {
		const struct runq_thread *t = g_ptr_array_index(q->order, i);

		g_string_append(s, i ? ",\n    {\"process\": " : "\n    {\"process\": ");
		json_name(s, t->process);
		g_string_append(s, ", \"thread\": ");
		json_name(s, t->thread);
		g_string_append(s, ", \"runnable\": ");
		count_text(s, t->count);
		g_string_append(s, ", \"window\": ");
		if (t->window > 0)
			count_text(s, t->window);
		else
			g_string_append(s, "null");
		g_string_append(s, ", \"after_lock_wait\": ");
		count_text(s, t->after_lock);
		g_string_append(s, ", \"stack\": ");
		json_name(s, t->where);
		g_string_append(s, ", \"stack_runnable\": ");
		count_text(s, t->where_count);
		g_string_append(s, "}");
	}
	g_string_append(s, q->order && q->order->len ? "\n  ], \"stacks\": [" : "], \"stacks\": [");
	for (guint i = 0; q->heavy && i < q->heavy->len && i < top; i++) {
		const struct stack_row *r = g_ptr_array_index(q->heavy, i);

		g_string_append(s, i ? ",\n    {\"process\": " : "\n    {\"process\": ");
		json_name(s, r->t->process);
		g_string_append(s, ", \"thread\": ");
		json_name(s, r->t->thread);
		g_string_append(s, ", \"stack\": ");
		json_name(s, r->stack);
		g_string_append(s, ", \"runnable\": ");
		count_text(s, r->count);
		g_string_append(s, "}");
	}
	g_string_append(s, q->heavy && q->heavy->len ? "\n  ]}" : "]}");
	fputs(s->str, out);
	g_string_free(s, TRUE);
}
