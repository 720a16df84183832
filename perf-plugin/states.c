#include "states.h"

#include "core/error.h"
#include "core/textesc.h"

#include <errno.h>
#include <event-parse.h>
#include <string.h>

#define TRACEFS_SCHED "/sys/kernel/tracing/events/sched"
#define DEBUGFS_SCHED "/sys/kernel/debug/tracing/events/sched"
#define COMM_LEN 16

/* prev_state, as the kernel's sched_switch reports it (offcpu.h) */
#define ST_S 0x01
#define ST_D 0x02
#define ST_DEAD (0x10 | 0x20)	/* "X", "Z" */
#define ST_MASK 0xff		/* above: the preemption mark "+" */

/* a thread's state between its events; NONE before its first */
enum tstate { T_NONE = -1, T_GONE = -2 };

struct thr {
	int tid;		/* the kernel's; 0: an empty slot */
	int pid, ptid;		/* perf's, from a switch-out sample; pid -1: none */
	bool outside;		/* a switch-out's sample named no thread: outside
				 * perf's PID namespace */
	int st;			/* STATE_* since `since`, or T_NONE, T_GONE */
	uint64_t since;
	uint64_t first;		/* its first event */
	int head;		/* the state before it, or T_NONE (made then) */
	uint64_t seen;		/* its latest event */
	uint64_t ns[STATES_N];
	char comm[COMM_LEN + 1];
};

struct field {
	uint32_t offset, size;
};

struct states {
	/* sched_switch's fields, and the wake-ups' */
	struct field prev_pid, prev_state, next_pid, prev_comm, next_comm;
	struct field wake_pid[2], wake_comm[2];	/* [0] waking, [1] wakeup_new */
	struct thr *t;		/* open addressing by tid, never removed */
	size_t n, mask;
	GHashTable *cpu_last;	/* cpu -> time + 1 of its last sched_switch */
	uint64_t late, unknown_pid, outside, unplaced;
	/*
	 * a switch-out's sample named its thread otherwise than the kernel:
	 * the recording's ids are a PID namespace's, and a kernel tid is no
	 * thread id of perf's
	 */
	bool pidns;
	states_pid_fn *pid_of;
	void *pid_data;
};

static size_t slot(const struct states *s, int tid)
{
	return ((uint32_t)tid * 0x9e3779b9u) & s->mask;
}

static void grow(struct states *s)
{
	struct thr *old = s->t;
	size_t n = s->mask + 1;

	s->mask = n * 2 - 1;
	s->t = g_new0(struct thr, n * 2);
	for (size_t k = 0; k < n; k++) {
		size_t i;

		if (!old[k].tid)
			continue;
		for (i = slot(s, old[k].tid); s->t[i].tid; i = (i + 1) & s->mask)
			;
		s->t[i] = old[k];
	}
	g_free(old);
}

/* The thread tid (not 0), added if new. */
static struct thr *thread(struct states *s, int tid)
{
	size_t i;
	struct thr *t;

	for (i = slot(s, tid); s->t[i].tid; i = (i + 1) & s->mask)
		if (s->t[i].tid == tid)
			return &s->t[i];
	if ((s->n + 1) * 2 > s->mask + 1) {
		grow(s);
		for (i = slot(s, tid); s->t[i].tid; i = (i + 1) & s->mask)
			;
	}
	t = &s->t[i];
	s->n++;
	*t = (struct thr){ .tid = tid, .pid = -1, .ptid = tid, .st = T_NONE, .head = T_NONE };
	return t;
}

/* The format text of events/sched/NAME/format, from dir or tracefs. */
static char *read_format(const char *dir, const char *name, gsize *len, GError **err)
{
	const char *dirs[] = { dir, TRACEFS_SCHED, DEBUGFS_SCHED };
	char *buf = NULL;

	for (size_t i = dir ? 0 : 1; i < (dir ? 1 : G_N_ELEMENTS(dirs)); i++) {
		char *p = g_strconcat(dirs[i], "/", name, "/format", NULL);
		bool ok = g_file_get_contents(p, &buf, len, NULL);

		g_free(p);
		if (ok)
			return buf;
	}
	fk_error_at(err, FK_ERROR_IO, dir ? dir : TRACEFS_SCHED, 0,
		    "cannot read the sched_%s format (is tracefs mounted?)", name + 6);
	return NULL;
}

/*
 * The places of the fields names[] (numeric, or char arrays where
 * array[i]) of event NAME in out[].
 */
static bool fields(const char *dir, const char *name, const char *const *names,
		   const bool *array, struct field *const *out, size_t n, GError **err)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_event *ev = NULL;
	gsize len = 0;
	char *buf = read_format(dir, name, &len, err), *pf;
	bool ok = buf != NULL;

	/* the fields alone: libtraceevent's parser of print formats is left out */
	if (ok && (pf = strstr(buf, "\nprint fmt:")))
		len = (gsize)(pf - buf) + 1;
	if (ok && (tep_parse_format(tep, &ev, buf, len, "sched") != 0 || !ev)) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0, "cannot parse the %s format", name);
		ok = false;
	}
	for (size_t i = 0; ok && i < n; i++) {
		struct tep_format_field *f = tep_find_field(ev, names[i]);

		if (!f || f->offset < 0 || f->size <= 0 ||
		    (array[i] ? f->size > COMM_LEN : f->size > 8)) {
			fk_error_at(err, FK_ERROR_PARSE, name, 0, "the %s format has no %s field '%s'",
				    name, array[i] ? "name" : "numeric", names[i]);
			ok = false;
			break;
		}
		out[i]->offset = (uint32_t)f->offset;
		out[i]->size = (uint32_t)f->size;
	}
	g_free(buf);
	tep_free(tep);
	return ok;
}

struct states *states_new(const char *format_dir, GError **err)
{
	struct states *s = g_new0(struct states, 1);
	static const char *const sw[] = { "prev_pid", "prev_state", "next_pid", "prev_comm",
					  "next_comm" };
	static const bool sw_array[] = { false, false, false, true, true };
	static const char *const wk[] = { "pid", "comm" };
	static const bool wk_array[] = { false, true };

	s->mask = 255;
	s->t = g_new0(struct thr, s->mask + 1);
	s->cpu_last = g_hash_table_new(g_direct_hash, g_direct_equal);
	if (!fields(format_dir, "sched_switch", sw, sw_array,
		    (struct field *const[]){ &s->prev_pid, &s->prev_state, &s->next_pid,
					     &s->prev_comm, &s->next_comm }, 5, err) ||
	    !fields(format_dir, "sched_waking", wk, wk_array,
		    (struct field *const[]){ &s->wake_pid[0], &s->wake_comm[0] }, 2, err) ||
	    !fields(format_dir, "sched_wakeup_new", wk, wk_array,
		    (struct field *const[]){ &s->wake_pid[1], &s->wake_comm[1] }, 2, err)) {
		states_free(s);
		return NULL;
	}
	return s;
}

void states_free(struct states *s)
{
	if (!s)
		return;
	g_free(s->t);
	if (s->cpu_last)
		g_hash_table_destroy(s->cpu_last);
	g_free(s);
}

enum states_kind states_kind(const char *event)
{
	if (strncmp(event, "sched:sched_w", 13) != 0)
		return strcmp(event, "sched:sched_switch") == 0 ? STATES_SWITCH : STATES_OTHER;
	if (strcmp(event + 13, "aking") == 0)
		return STATES_WAKING;
	return strcmp(event + 13, "akeup_new") == 0 ? STATES_WAKEUP_NEW : STATES_OTHER;
}

void states_on_pid(struct states *s, states_pid_fn *fn, void *data)
{
	s->pid_of = fn;
	s->pid_data = data;
}

/* A numeric field, zero-extended; false if past the record's end. */
static bool num(const struct field *f, const void *raw, uint32_t size, uint64_t *v)
{
	const unsigned char *p = (const unsigned char *)raw + f->offset;
	uint8_t b;
	uint16_t h;
	uint32_t w;

	if (!raw || (uint64_t)f->offset + f->size > size)
		return false;
	switch (f->size) {
	case 1: memcpy(&b, p, 1); *v = b; return true;
	case 2: memcpy(&h, p, 2); *v = h; return true;
	case 4: memcpy(&w, p, 4); *v = w; return true;
	case 8: memcpy(v, p, 8); return true;
	default: return false;
	}
}

/* A name field into t->comm (up to its NUL), if it fits the record. */
static void name(struct thr *t, const struct field *f, const void *raw, uint32_t size)
{
	const char *p = (const char *)raw + f->offset;

	if ((uint64_t)f->offset + f->size > size)
		return;
	memcpy(t->comm, p, f->size);
	t->comm[f->size] = '\0';
}

static int as_tid(uint64_t v)
{
	return (int)(int32_t)(uint32_t)v;
}

/*
 * An event of t at time: false if late (older than one already seen).
 * The first one also says what the thread was doing before: head.
 */
static bool event(struct states *s, struct thr *t, uint64_t time, int head)
{
	if (t->st == T_NONE && !t->seen) {
		t->first = time;
		t->head = head;
	} else if (time < t->seen) {
		s->late++;
		return false;
	}
	t->seen = time;
	return true;
}

/* t enters state st at time (the time since its last change counted). */
static void enter(struct thr *t, int st, uint64_t time)
{
	if (t->st >= 0 && time > t->since)
		t->ns[t->st] += time - t->since;
	t->st = st;
	t->since = time;
}

bool states_switch(struct states *s, const void *raw, uint32_t size, int cpu, uint64_t time,
		   int pid, int tid)
{
	uint64_t prev, state, next, st;
	gpointer last = NULL;
	struct thr *t;
	uint64_t tprev = 0;

	if (!num(&s->prev_pid, raw, size, &prev) || !num(&s->prev_state, raw, size, &state) ||
	    !num(&s->next_pid, raw, size, &next))
		return false;
	if (g_hash_table_lookup_extended(s->cpu_last, GINT_TO_POINTER(cpu), NULL, &last))
		tprev = (uint64_t)GPOINTER_TO_SIZE(last) - 1;
	if (!last || time > tprev)
		g_hash_table_insert(s->cpu_last, GINT_TO_POINTER(cpu),
				    GSIZE_TO_POINTER((gsize)time + 1));
	/*
	 * the sample is the thread switched out: perf names it with the ids
	 * of its PID namespace, 0 for a thread outside it (-1 for one
	 * exiting, as outside a namespace)
	 */
	if (as_tid(prev) > 0 && ((tid > 0 && tid != as_tid(prev)) || (pid == 0 && tid == 0))) {
		s->pidns = true;
		if (tid == 0)
			thread(s, as_tid(prev))->outside = true;
	}
	if (as_tid(prev) > 0 && event(s, t = thread(s, as_tid(prev)), time, STATE_ON_CPU)) {
		name(t, &s->prev_comm, raw, size);
		if (pid > 0) {
			t->pid = pid;
			t->ptid = tid;
		}
		/*
		 * not seen coming in: timehist's start, the CPU's last
		 * switch, or, if the thread changed state after it (the CPU
		 * was idle, and the kernel left out the switch from the idle
		 * task), the change: it was woken (or switched out) then;
		 * never after this switch (the CPU's last one may be a later
		 * record perf handed over first)
		 */
		if (t->st != STATE_ON_CPU && t->st != T_NONE && last)
			enter(t, STATE_ON_CPU, MIN(MAX(tprev, t->since), time));
		if (t->st == T_NONE || t->st == T_GONE) {
			t->st = STATE_ON_CPU;
			t->since = time;
		}
		st = state & ST_MASK;
		enter(t, STATE_ON_CPU, t->st == STATE_ON_CPU ? t->since : time);
		if (st & ST_DEAD)
			enter(t, T_GONE, time);
		else if (st == 0 || (state & ~(uint64_t)ST_MASK))
			enter(t, STATE_RUNNABLE, time);
		else if (st & ST_D && !(st & ST_S))
			enter(t, STATE_BLOCKED, time);
		else
			enter(t, STATE_SLEEPING, time);
	}
	if (as_tid(next) > 0 && event(s, t = thread(s, as_tid(next)), time, STATE_RUNNABLE)) {
		name(t, &s->next_comm, raw, size);
		if (t->st == T_NONE || t->st == T_GONE) {
			t->st = STATE_ON_CPU;
			t->since = time;
		} else if (t->st != STATE_ON_CPU) {
			enter(t, STATE_ON_CPU, time);
		}
	}
	return true;
}

bool states_wake(struct states *s, enum states_kind kind, const void *raw, uint32_t size,
		 uint64_t time)
{
	int k = kind == STATES_WAKEUP_NEW;
	uint64_t v;
	struct thr *t;

	if (!num(&s->wake_pid[k], raw, size, &v))
		return false;
	if (as_tid(v) <= 0)
		return true;
	t = thread(s, as_tid(v));
	/* a thread made now was nothing before */
	if (!event(s, t, time, k ? T_NONE : STATE_SLEEPING))
		return true;
	name(t, &s->wake_comm[k], raw, size);
	if (t->st == T_NONE || t->st == T_GONE) {
		t->st = STATE_RUNNABLE;
		t->since = time;
	} else if (t->st == STATE_SLEEPING || t->st == STATE_BLOCKED) {
		enter(t, STATE_RUNNABLE, time);
	}
	return true;
}

bool states_wakee(const struct states *s, enum states_kind kind, const void *raw, uint32_t size,
		  int *tid)
{
	uint64_t v;

	if (!num(&s->wake_pid[kind == STATES_WAKEUP_NEW], raw, size, &v))
		return false;
	*tid = as_tid(v);
	return true;
}

void states_finish(struct states *s, uint64_t first, uint64_t last)
{
	for (size_t i = 0; i <= s->mask; i++) {
		struct thr *t = &s->t[i];

		if (!t->tid)
			continue;
		if (t->st >= 0)
			enter(t, T_GONE, MAX(last, t->since));
		if (t->head >= 0 && t->first > first)
			t->ns[t->head] += t->first - first;
		/* (in a PID namespace, a kernel tid names no thread of perf's) */
		if (t->pid < 0 && s->pid_of && !s->pidns) {
			t->pid = s->pid_of(s->pid_data, t->tid);
			t->ptid = t->tid;
		}
	}
}

static gint by_pid_tid(gconstpointer a, gconstpointer b)
{
	const struct thr *x = *(struct thr *const *)a, *y = *(struct thr *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->ptid > y->ptid) - (x->ptid < y->ptid);
}

long states_write(struct states *s, FILE *out, const char *name, GHashTable *pids,
		  GError **err)
{
	GPtrArray *order = g_ptr_array_new();
	GString *line = g_string_new(NULL);
	long n = 0;

	s->unknown_pid = s->outside = s->unplaced = 0;
	for (size_t i = 0; i <= s->mask; i++) {
		struct thr *t = &s->t[i];

		if (!t->tid || (pids && !g_hash_table_contains(pids, GINT_TO_POINTER(t->pid))))
			continue;
		/* its row would bear the kernel's tid, not perf's: left out */
		if (s->pidns && t->pid < 0) {
			if (t->outside)
				s->outside++;
			else
				s->unplaced++;
			continue;
		}
		g_ptr_array_add(order, t);
		s->unknown_pid += t->pid < 0;
	}
	g_ptr_array_sort(order, by_pid_tid);
	fputs(STATES_HEADER, out);
	for (guint i = 0; i < order->len; i++) {
		const struct thr *t = g_ptr_array_index(order, i);
		uint64_t sum = 0, done = 0;

		g_string_printf(line, "%d\t%d\t", t->pid, t->ptid);
		fk_text_escape(line, t->comm, strlen(t->comm), FK_ESC_BACKSLASH);
		/* rounded by running sums: the four add up to the total rounded */
		for (int k = 0; k < STATES_N; k++) {
			uint64_t upto;

			sum += t->ns[k];
			upto = (sum + 500) / 1000;
			g_string_append_printf(line, "\t%" G_GUINT64_FORMAT, upto - done);
			done = upto;
		}
		g_string_append_c(line, '\n');
		fwrite(line->str, 1, line->len, out);
		n++;
	}
	g_string_free(line, TRUE);
	g_ptr_array_free(order, TRUE);
	if (fflush(out) != 0 || ferror(out)) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "cannot write: %s", g_strerror(errno));
		return -1;
	}
	return n;
}

uint64_t states_late(const struct states *s)
{
	return s->late;
}

uint64_t states_unknown_pid(const struct states *s)
{
	return s->unknown_pid;
}

uint64_t states_outside(const struct states *s)
{
	return s->outside;
}

uint64_t states_unplaced(const struct states *s)
{
	return s->unplaced;
}

bool states_longest(const struct states *s, int *tid, bool *perf_id, uint64_t *ns)
{
	const struct thr *most = NULL;
	uint64_t most_ns = 0;

	for (size_t i = 0; i <= s->mask; i++) {
		const struct thr *t = &s->t[i];
		uint64_t sum = 0;

		if (!t->tid)
			continue;
		for (int k = 0; k < STATES_N; k++)
			sum += t->ns[k];
		if (!most || sum > most_ns || (sum == most_ns && t->tid < most->tid)) {
			most = t;
			most_ns = sum;
		}
	}
	if (!most)
		return false;
	*tid = most->ptid;
	*perf_id = !s->pidns || most->pid >= 0;
	*ns = most_ns;
	return true;
}
