#include "offwake.h"

#include "core/error.h"

#include <event-parse.h>
#include <string.h>

#define FORMAT "/events/sched/sched_waking/format"

/* A thread seen switching, and its wait if one is pending. */
struct sleeper {
	uint64_t seen;		/* its latest switch or waking */
	uint64_t since;		/* the pending wait's switch-out */
	bool waiting;
	struct fold_table *table;
	char *key;
	size_t len;
	uint64_t *counter;
	uint64_t blocked_ns;	/* its waits counted */
};

struct offwake {
	uint32_t pid_offset, pid_size;	/* the field "pid" of sched_waking */
	uint64_t min_ns;
	GHashTable *threads;		/* tid -> struct sleeper * */
	GString *line;			/* the stack being counted */
	struct offwake_stats st;
};

static void sleeper_free(gpointer p)
{
	struct sleeper *s = p;

	g_free(s->key);
	g_free(s);
}

/* The format of the running kernel's sched_waking, or of path. */
static char *read_format(const char *path, gsize *len, GError **err)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char *buf = NULL;

	if (path) {
		if (!g_file_get_contents(path, &buf, len, NULL))
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read the sched_waking format");
		return buf;
	}
	/* (offcpu_new() read the sched_switch format, mounting tracefs if need be) */
	for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
		char *p = g_strconcat(dirs[i], FORMAT, NULL);
		bool ok = g_file_get_contents(p, &buf, len, NULL);

		g_free(p);
		if (ok)
			return buf;
	}
	fk_error_at(err, FK_ERROR_IO, "/sys/kernel/tracing" FORMAT, 0,
		    "cannot read the sched_waking format (is tracefs mounted?); "
		    "pass --dlarg waking-format=FILE");
	return NULL;
}

struct offwake *offwake_new(const char *format_path, uint64_t min_ns, GError **err)
{
	const char *where = format_path ? format_path : "/sys/kernel/tracing" FORMAT;
	struct tep_handle *tep = tep_alloc();
	struct tep_event *ev = NULL;
	struct tep_format_field *f;
	struct offwake *w = NULL;
	gsize len = 0;
	char *buf, *pf;

	if (!(buf = read_format(format_path, &len, err)))
		goto out;
	/* the fields alone: libtraceevent's parser of the print format's
	 * C expressions is left out (see offcpu_new()) */
	if ((pf = strstr(buf, "\nprint fmt:")))
		len = (gsize)(pf - buf) + 1;
	if (tep_parse_format(tep, &ev, buf, len, "sched") != 0 || !ev) {
		fk_error_at(err, FK_ERROR_PARSE, where, 0, "cannot parse the sched_waking format");
		g_free(buf);
		goto out;
	}
	g_free(buf);
	f = tep_find_field(ev, "pid");
	if (!f || f->size <= 0 || f->size > 8 || f->offset < 0 || (f->size & (f->size - 1))) {
		fk_error_at(err, FK_ERROR_PARSE, where, 0,
			    "sched_waking format has no numeric field 'pid'");
		goto out;
	}
	w = g_new0(struct offwake, 1);
	w->pid_offset = (uint32_t)f->offset;
	w->pid_size = (uint32_t)f->size;
	w->min_ns = min_ns;
	w->threads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, sleeper_free);
	w->line = g_string_sized_new(1024);
out:
	tep_free(tep);
	return w;
}

void offwake_free(struct offwake *w)
{
	if (!w)
		return;
	g_hash_table_destroy(w->threads);
	g_string_free(w->line, TRUE);
	g_free(w);
}

bool offwake_decode(const struct offwake *w, const void *raw, uint32_t size, int *tid)
{
	const unsigned char *p = raw;
	uint64_t v = 0;

	if (!raw || (uint64_t)w->pid_offset + w->pid_size > size)
		return false;
	p += w->pid_offset;
	switch (w->pid_size) {
	case 1:
		v = *p;
		break;
	case 2: {
		uint16_t x;
		memcpy(&x, p, sizeof(x));
		v = x;
		break;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, p, sizeof(x));
		v = x;
		break;
	}
	default:
		memcpy(&v, p, sizeof(v));
	}
	/* a pid_t read as unsigned: its sign back */
	*tid = (int)(int32_t)(uint32_t)v;
	return true;
}

static struct sleeper *thread_get(struct offwake *w, int tid)
{
	struct sleeper *s = g_hash_table_lookup(w->threads, GINT_TO_POINTER(tid));

	if (!s) {
		s = g_new0(struct sleeper, 1);
		g_hash_table_insert(w->threads, GINT_TO_POINTER(tid), s);
	}
	return s;
}

/* false (and counted) when perf handed this record of s over late */
static bool thread_saw(struct offwake *w, struct sleeper *s, uint64_t time)
{
	if (time < s->seen) {
		w->st.late++;
		return false;
	}
	s->seen = time;
	return true;
}

static void wait_end(struct sleeper *s)
{
	g_free(s->key);
	s->key = NULL;
	s->waiting = false;
}

void offwake_sleep(struct offwake *w, int tid, uint64_t time, struct fold_table *t,
		   const char *key, size_t len, uint64_t *counter)
{
	struct sleeper *s;

	if (tid <= 0)
		return;
	s = thread_get(w, tid);
	/* (offwake_ran() saw this switch already: late if it was) */
	if (time < s->seen)
		return;
	s->seen = time;
	g_free(s->key);
	s->key = g_strndup(key, len);
	s->len = len;
	s->table = t;
	s->counter = counter;
	s->since = time;
	s->waiting = true;
}

void offwake_ran(struct offwake *w, int tid, uint64_t time)
{
	struct sleeper *s;

	if (tid <= 0 || !(s = g_hash_table_lookup(w->threads, GINT_TO_POINTER(tid))))
		return;
	if (!thread_saw(w, s, time) || !s->waiting)
		return;
	w->st.unwoken++;
	w->st.unwoken_ns += time - s->since;
	wait_end(s);
}

bool offwake_waiting(struct offwake *w, int tid, uint64_t time)
{
	struct sleeper *s;

	w->st.wakings++;
	if (tid <= 0 || !(s = g_hash_table_lookup(w->threads, GINT_TO_POINTER(tid))))
		return false;
	/* a waking older than the switch-out is not its end */
	return s->waiting && time >= s->since;
}

void offwake_woken(struct offwake *w, int tid, uint64_t time, const char *waker, size_t len)
{
	struct sleeper *s = g_hash_table_lookup(w->threads, GINT_TO_POINTER(tid));
	uint64_t ns;
	size_t end;

	if (!s || !s->waiting || time < s->since)
		return;
	ns = time - s->since;
	s->seen = time;
	if (ns < w->min_ns) {
		w->st.short_waits++;
		wait_end(s);
		return;
	}
	/* the wakee's stack, "--", and the waker's frames from its leaf back */
	g_string_truncate(w->line, 0);
	g_string_append_len(w->line, s->key, (gssize)s->len);
	g_string_append(w->line, ";--");
	end = len;
	while (end > 0) {
		const char *semi = memrchr(waker, ';', end);
		size_t from = semi ? (size_t)(semi - waker) + 1 : 0;

		g_string_append_c(w->line, ';');
		g_string_append_len(w->line, waker + from, (gssize)(end - from));
		end = semi ? (size_t)(semi - waker) : 0;
	}
	/* microseconds, exact to the nanosecond until the writer rounds */
	fold_table_add(s->table, w->line->str, w->line->len, (fk_count)ns * (FK_COUNT_ONE / 1000));
	(*s->counter)++;
	s->blocked_ns += ns;
	w->st.counted++;
	wait_end(s);
}

uint64_t offwake_finish(struct offwake *w)
{
	GHashTableIter it;
	gpointer v;

	g_hash_table_iter_init(&it, w->threads);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct sleeper *s = v;

		if (s->waiting) {
			w->st.pending_end++;
			wait_end(s);
		}
	}
	return w->st.pending_end;
}

void offwake_stats(const struct offwake *w, struct offwake_stats *s)
{
	*s = w->st;
}

bool offwake_longest(const struct offwake *w, int *tid, uint64_t *ns)
{
	GHashTableIter it;
	gpointer k, v;
	bool found = false;

	g_hash_table_iter_init(&it, w->threads);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		const struct sleeper *s = v;
		int t = GPOINTER_TO_INT(k);

		if (s->blocked_ns && (!found || s->blocked_ns > *ns ||
				      (s->blocked_ns == *ns && t < *tid))) {
			*tid = t;
			*ns = s->blocked_ns;
			found = true;
		}
	}
	return found;
}
