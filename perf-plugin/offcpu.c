#include "offcpu.h"

#include "core/error.h"

#include <event-parse.h>
#include <string.h>
#include <sys/mount.h>

#define TRACEFS "/sys/kernel/tracing"
#define FORMAT "/events/sched/sched_switch/format"

/* prev_state bits, as the kernel's sched_switch format prints them */
#define STATE_S 0x01
#define STATE_D 0x02
#define STATE_DEAD (0x10 | 0x20)	/* "X", "Z" */
#define STATE_MASK 0xff			/* above: the preemption mark "+" */

/*
 * A thread seen switching: its pending wait, if any, and what guards
 * against records perf hands over late (out of time order).
 */
struct pending {
	int tid;		/* 0: an empty slot (tid 0 never waits) */
	bool waiting;		/* a wait is pending: the fields up to counter */
	int perf_tid;		/* tid as perf names it (a PID namespace's) */
	uint64_t since;
	struct fold_table *table;	/* NULL: counted by add */
	char *key;
	size_t len;
	offcpu_add_fn *add;
	void *add_data;
	uint64_t id;
	uint64_t *counter;
	uint64_t wake;		/* the wait's first wake-up (offcpu_wake()), or 0 */
	bool preempted;		/* the wait began runnable (offcpu_preempted()) */
	uint64_t seen;		/* the latest switch of the thread, in or out */
	/*
	 * A wake-up while the thread ran, since its latest switch-in: a waker
	 * can wake a thread that has set itself asleep but not yet switched
	 * out (sched_waking, in the waker, is recorded before the wakee's
	 * sched_switch): the sleep it then switches out into ended at once,
	 * and its time off the CPU is runnable.  0: none.
	 */
	uint64_t woke_running;
	uint64_t off_ns;	/* its waits counted */
};

/* CPUs numbered below this have their last switch's time in an array */
#define DENSE_CPUS 4096

struct offcpu {
	unsigned states;
	bool runq;		/* count the runnable part (offcpu_set_runq()) */
	uint64_t min_ns;
	struct tep_handle *tep;
	/* the fields' places in the raw record, learnt from the format */
	struct raw_field {
		uint32_t offset, size;
	} prev_pid, prev_state, next_pid;
	/*
	 * the threads seen, by tid: open addressing, linear probing; never
	 * removed (memory grows with the threads, as the output does)
	 */
	struct pending *pending;
	size_t nthreads, mask;
	uint64_t first_time, last_time;
	bool ticked;		/* first_time is set */
	struct cpu_time {
		uint64_t time;	/* of the CPU's last sched_switch */
		bool seen;	/* time is set */
	} *cpu_time;		/* by cpu < DENSE_CPUS */
	GHashTable *cpu_time_far;	/* the others: cpu -> struct cpu_time * */
	uint64_t counted, short_waits, unseen, recorded, late, woken;
	offcpu_switch_in_fn switch_in;
	void *switch_in_data;
	offcpu_credit_fn on_credit;
	void *on_credit_data;
};

static size_t tid_slot(const struct offcpu *o, int tid)
{
	return ((uint32_t)tid * 0x9e3779b9u) & o->mask;
}

/* The thread tid, or NULL if never seen. */
static struct pending *thread_find(struct offcpu *o, int tid)
{
	for (size_t i = tid_slot(o, tid); o->pending[i].tid; i = (i + 1) & o->mask)
		if (o->pending[i].tid == tid)
			return &o->pending[i];
	return NULL;
}

/* The pending wait of tid, or NULL. */
static struct pending *pending_find(struct offcpu *o, int tid)
{
	struct pending *w = thread_find(o, tid);

	return w && w->waiting ? w : NULL;
}

/* Ends w's wait (counted or not): the thread stays. */
static void pending_remove(struct offcpu *o, struct pending *w)
{
	(void)o;
	g_free(w->key);
	w->key = NULL;
	w->waiting = false;
}

static void threads_grow(struct offcpu *o)
{
	struct pending *old = o->pending;
	size_t n = o->mask + 1;

	o->mask = n * 2 - 1;
	o->pending = g_new0(struct pending, n * 2);
	for (size_t k = 0; k < n; k++) {
		size_t i;

		if (!old[k].tid)
			continue;
		for (i = tid_slot(o, old[k].tid); o->pending[i].tid; i = (i + 1) & o->mask)
			;
		o->pending[i] = old[k];
	}
	g_free(old);
}

/* The thread tid (not 0), added if new. */
static struct pending *thread_get(struct offcpu *o, int tid)
{
	struct pending *w = thread_find(o, tid);
	size_t i;

	if (w)
		return w;
	if ((o->nthreads + 1) * 2 > o->mask + 1)
		threads_grow(o);
	for (i = tid_slot(o, tid); o->pending[i].tid; i = (i + 1) & o->mask)
		;
	w = &o->pending[i];
	o->nthreads++;
	w->tid = tid;
	return w;
}

/*
 * Notes a switch of thread w at time; false when the thread switched
 * later already: perf handed this record over late (its "out of order
 * events"), and a wait begun or ended by it would overlap another.
 */
static bool thread_saw(struct offcpu *o, struct pending *w, uint64_t time)
{
	if (time < w->seen) {
		o->late++;
		return false;
	}
	w->seen = time;
	return true;
}

/* A new pending wait for tid, replacing any it had. */
static struct pending *pending_put(struct offcpu *o, int tid)
{
	struct pending *w = thread_get(o, tid);

	g_free(w->key);
	w->key = NULL;
	w->table = NULL;
	w->add = NULL;
	w->waiting = true;
	w->wake = 0;
	w->preempted = false;
	return w;
}

/* Where the time of cpu's last sched_switch is kept. */
static struct cpu_time *cpu_time_of(struct offcpu *o, int cpu)
{
	struct cpu_time *t;

	if (cpu >= 0 && cpu < DENSE_CPUS)
		return &o->cpu_time[cpu];
	t = g_hash_table_lookup(o->cpu_time_far, GINT_TO_POINTER(cpu));
	if (!t) {
		t = g_new0(struct cpu_time, 1);
		g_hash_table_insert(o->cpu_time_far, GINT_TO_POINTER(cpu), t);
	}
	return t;
}

bool offcpu_parse_states(const char *s, unsigned *states)
{
	char **parts = g_strsplit_set(s, ",|", -1);
	bool ok = true;

	*states = 0;
	for (char **p = parts; *p; p++) {
		if (strcmp(*p, "S") == 0)
			*states |= OFFCPU_S;
		else if (strcmp(*p, "D") == 0)
			*states |= OFFCPU_D;
		else if (strcmp(*p, "R") == 0)
			*states |= OFFCPU_R;
		else if (strcmp(*p, "all") == 0)
			*states |= OFFCPU_ALL;
		else
			ok = false;
	}
	g_strfreev(parts);
	return ok && *states;
}

/* The format text of the running kernel's sched_switch tracepoint. */
static char *read_format(const char *path, gsize *len, GError **err)
{
	static const char *const dirs[] = { TRACEFS, "/sys/kernel/debug/tracing" };
	char *buf = NULL;

	if (path) {
		if (!g_file_get_contents(path, &buf, len, NULL))
			fk_error_at(err, FK_ERROR_IO, path, 0, "cannot read the sched_switch format");
		return buf;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
			char *p = g_strconcat(dirs[i], FORMAT, NULL);
			bool ok = g_file_get_contents(p, &buf, len, NULL);
			g_free(p);
			if (ok)
				return buf;
		}
		/* not mounted (a container, a minimal system): try once */
		if (pass == 0 && mount("nodev", TRACEFS, "tracefs", 0, NULL) != 0)
			break;
	}
	fk_error_at(err, FK_ERROR_IO, TRACEFS FORMAT, 0,
		    "cannot read the sched_switch format (is tracefs mounted?); "
		    "pass --dlarg format=FILE");
	return NULL;
}

/* The place of a numeric field of the format in *rf; false if none. */
static bool field(struct tep_event *ev, const char *name, struct raw_field *rf,
		  const char *path, GError **err)
{
	struct tep_format_field *f = tep_find_field(ev, name);

	if (!f || f->size <= 0 || f->size > 8 || f->offset < 0) {
		fk_error_at(err, FK_ERROR_PARSE, path, 0,
			    "sched_switch format has no numeric field '%s'", name);
		return false;
	}
	rf->offset = (uint32_t)f->offset;
	rf->size = (uint32_t)f->size;
	return true;
}

struct offcpu *offcpu_new(unsigned states, uint64_t min_ns,
			  const char *format_path, GError **err)
{
	struct offcpu *o = g_new0(struct offcpu, 1);
	const char *where = format_path ? format_path : TRACEFS FORMAT;
	struct tep_event *ev = NULL;
	gsize len = 0;
	char *buf, *pf;

	o->states = states;
	o->min_ns = min_ns;
	o->mask = 255;
	o->pending = g_new0(struct pending, o->mask + 1);
	o->cpu_time = g_new0(struct cpu_time, DENSE_CPUS);
	o->cpu_time_far = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	o->tep = tep_alloc();
	if (!(buf = read_format(format_path, &len, err)))
		goto fail;
	/*
	 * Only the fields are needed; the print format is left out, and
	 * with it libtraceevent's parser of C expressions, which crashes on
	 * a print format that names a missing field.
	 */
	if ((pf = strstr(buf, "\nprint fmt:")))
		len = (gsize)(pf - buf) + 1;
	if (tep_parse_format(o->tep, &ev, buf, len, "sched") != 0 || !ev) {
		fk_error_at(err, FK_ERROR_PARSE, where, 0, "cannot parse the sched_switch format");
		g_free(buf);
		goto fail;
	}
	g_free(buf);
	if (!field(ev, "prev_pid", &o->prev_pid, where, err) ||
	    !field(ev, "prev_state", &o->prev_state, where, err) ||
	    !field(ev, "next_pid", &o->next_pid, where, err))
		goto fail;
	return o;
fail:
	offcpu_free(o);
	return NULL;
}

void offcpu_free(struct offcpu *o)
{
	if (!o)
		return;
	for (size_t i = 0; o->pending && i <= o->mask; i++)
		g_free(o->pending[i].key);
	g_free(o->pending);
	g_free(o->cpu_time);
	if (o->cpu_time_far)
		g_hash_table_destroy(o->cpu_time_far);
	tep_free(o->tep);
	g_free(o);
}

/*
 * A field of a raw record, zero-extended; false if the record is short or
 * the field not of 1, 2, 4 or 8 bytes (as tep_read_number_field()).  Read
 * in place, in this machine's byte order (the kernel's, which wrote them),
 * without a call into libtraceevent per field.
 */
static inline bool read_field(const struct raw_field *f, const void *raw,
			      uint32_t size, uint64_t *v)
{
	const unsigned char *p = (const unsigned char *)raw + f->offset;

	if ((uint64_t)f->offset + f->size > size)
		return false;
	switch (f->size) {
	case 1:
		*v = *p;
		return true;
	case 2: {
		uint16_t x;
		memcpy(&x, p, sizeof(x));
		*v = x;
		return true;
	}
	case 4: {
		uint32_t x;
		memcpy(&x, p, sizeof(x));
		*v = x;
		return true;
	}
	case 8:
		memcpy(v, p, sizeof(*v));
		return true;
	default:
		return false;
	}
}

bool offcpu_decode(const struct offcpu *o, const void *raw, uint32_t size,
		   struct sched_switch *sw)
{
	uint64_t prev, state, next;

	if (!raw || !read_field(&o->prev_pid, raw, size, &prev) ||
	    !read_field(&o->prev_state, raw, size, &state) ||
	    !read_field(&o->next_pid, raw, size, &next))
		return false;
	/* pid_t fields read as unsigned: bring back their sign */
	sw->prev_pid = (int)(int32_t)(uint32_t)prev;
	sw->next_pid = (int)(int32_t)(uint32_t)next;
	sw->prev_state = state;
	return true;
}

bool offcpu_wanted(const struct offcpu *o, const struct sched_switch *sw)
{
	uint64_t st = sw->prev_state & STATE_MASK;

	if (sw->prev_pid <= 0 || (st & STATE_DEAD))
		return false;
	if (st == 0)
		return o->states & OFFCPU_R;
	if (st & STATE_S)
		return o->states & OFFCPU_S;
	if (st & STATE_D)
		return o->states & OFFCPU_D;
	return o->states & OFFCPU_OTHER;
}

void offcpu_tick(struct offcpu *o, uint64_t time)
{
	if (time > o->last_time)
		o->last_time = time;
	if (!o->ticked || time < o->first_time)
		o->first_time = time;
	o->ticked = true;
}

static void credit(struct offcpu *o, struct pending *w, uint64_t until)
{
	uint64_t from = w->since, ns;
	/* the run-queue part: after the wake-up, or all of a preemption */
	bool woken = !w->preempted && w->wake && w->wake < until;

	if (o->runq && !w->preempted) {
		if (!woken)
			return;		/* no wake-up seen: no time runnable */
		from = w->wake;
	} else if (woken) {
		until = w->wake;	/* asleep up to the wake-up */
	}
	ns = until > from ? until - from : 0;

	if (ns < o->min_ns) {
		o->short_waits++;
		return;
	}
	/* microseconds, exact to the nanosecond until the writer rounds */
	if (w->table)
		fold_table_add(w->table, w->key, w->len,
			       (fk_count)ns * (FK_COUNT_ONE / 1000));
	else
		w->add(w->add_data, w->id, (fk_count)ns * (FK_COUNT_ONE / 1000));
	(*w->counter)++;
	o->counted++;
	w->off_ns += ns;
	if (o->on_credit)
		o->on_credit(o->on_credit_data, w->tid, w->since, ns);
}

void offcpu_set_runq(struct offcpu *o, bool runq)
{
	o->runq = runq;
}

bool offcpu_is_preempted(const struct sched_switch *sw)
{
	return (sw->prev_state & STATE_MASK) == 0;
}

void offcpu_preempted(struct offcpu *o, int tid)
{
	struct pending *w = tid ? pending_find(o, tid) : NULL;

	if (w)
		w->preempted = true;
}

void offcpu_wake(struct offcpu *o, int tid, uint64_t time)
{
	struct pending *w = tid > 0 ? pending_find(o, tid) : NULL;

	/* the first after the switch-out; one before it woke an earlier sleep */
	if (w && !w->preempted && !w->wake && time >= w->since) {
		w->wake = time;
		o->woken++;
	} else if (!w && tid > 0) {
		/* running, or switching out: it wakes the sleep to come */
		w = thread_get(o, tid);
		/* the first since it last came on a CPU */
		if (!w->woke_running)
			w->woke_running = time;
	}
}

uint64_t offcpu_woken(const struct offcpu *o)
{
	return o->woken;
}

void offcpu_on_credit(struct offcpu *o, offcpu_credit_fn fn, void *data)
{
	o->on_credit = fn;
	o->on_credit_data = data;
}

void offcpu_switch_in(struct offcpu *o, int tid, uint64_t time)
{
	struct pending *w;
	uint64_t in;

	if (!tid)
		return;
	w = thread_get(o, tid);
	/* a late switch-in came before the wait pending: not its end */
	if (!thread_saw(o, w, time))
		return;
	w->woke_running = 0;	/* (one before it woke an earlier sleep) */
	if (!w->waiting)
		return;
	/* an earlier switch-in: the tracepoint lacks the switch-out after it */
	if (o->switch_in && o->switch_in(o->switch_in_data, w->perf_tid, w->since, time, &in) &&
	    in < time) {
		o->recorded++;
		credit(o, w, in);
	} else {
		credit(o, w, time);
	}
	pending_remove(o, w);
}

void offcpu_on_unseen(struct offcpu *o, offcpu_switch_in_fn fn, void *data)
{
	o->switch_in = fn;
	o->switch_in_data = data;
}

void offcpu_switch_unseen(struct offcpu *o, int tid, int cpu, uint64_t time)
{
	struct pending *w = tid ? thread_get(o, tid) : NULL;
	struct cpu_time *last = cpu_time_of(o, cpu);
	uint64_t in;

	/* (a late switch-out: offcpu_switch_out() leaves it out too) */
	if (w && thread_saw(o, w, time) && w->waiting) {
		if (o->switch_in &&
		    o->switch_in(o->switch_in_data, w->perf_tid, w->since, time, &in)) {
			o->recorded++;
			credit(o, w, in);
		} else if (last->seen && last->time >= w->since) {
			o->unseen++;
			credit(o, w, last->time);
		}
		pending_remove(o, w);
	}
	if (!last->seen || time > last->time)
		last->time = time;
	last->seen = true;
}

/* tid's switch-out at time, if not late: a new wait, replacing any */
static struct pending *wait_from(struct offcpu *o, int tid, int perf_tid, uint64_t time)
{
	struct pending *w;

	if (!tid)
		return NULL;
	uint64_t woke;

	w = thread_get(o, tid);
	/* offcpu_switch_unseen() counted it late already */
	if (time < w->seen)
		return NULL;
	/* woken since it came on a CPU: asleep for no time at all */
	woke = w->woke_running && w->woke_running <= time ? w->woke_running : 0;
	w->woke_running = 0;
	w->seen = time;
	w = pending_put(o, tid);
	w->perf_tid = perf_tid;
	w->since = time;
	if (woke) {
		w->wake = time;
		o->woken++;
	}
	return w;
}

void offcpu_switch_out(struct offcpu *o, int tid, int perf_tid, uint64_t time,
		       struct fold_table *t, const char *key, size_t len,
		       uint64_t *counter)
{
	struct pending *w = wait_from(o, tid, perf_tid, time);

	if (!w)
		return;
	w->table = t;
	w->key = g_strndup(key, len);
	w->len = len;
	w->counter = counter;
}

void offcpu_switch_out_id(struct offcpu *o, int tid, int perf_tid, uint64_t time,
			  offcpu_add_fn *add, void *data, uint64_t id, uint64_t *counter)
{
	struct pending *w = wait_from(o, tid, perf_tid, time);

	if (!w)
		return;
	w->add = add;
	w->add_data = data;
	w->id = id;
	w->counter = counter;
}

void offcpu_forget(struct offcpu *o, int tid)
{
	struct pending *w = tid ? pending_find(o, tid) : NULL;

	if (w)
		pending_remove(o, w);
}

static gint by_tid(gconstpointer a, gconstpointer b)
{
	const struct pending *x = *(struct pending *const *)a, *y = *(struct pending *const *)b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

uint64_t offcpu_finish(struct offcpu *o, uint64_t *ns)
{
	uint64_t n = 0;
	GPtrArray *order = g_ptr_array_new();

	*ns = 0;
	/* by tid: the credits' order reaches the exports */
	for (size_t i = 0; i <= o->mask; i++)
		if (o->pending[i].tid && o->pending[i].waiting)
			g_ptr_array_add(order, &o->pending[i]);
	g_ptr_array_sort(order, by_tid);
	for (guint i = 0; i < order->len; i++) {
		struct pending *w = g_ptr_array_index(order, i);
		uint64_t in;

		/* back on a CPU, but never switched out again: ended there */
		if (o->switch_in && o->switch_in(o->switch_in_data, w->perf_tid, w->since,
						 o->last_time, &in)) {
			o->recorded++;
			credit(o, w, in);
		} else {
			n++;
			*ns += o->last_time > w->since ? o->last_time - w->since : 0;
			credit(o, w, o->last_time);
		}
		pending_remove(o, w);
	}
	g_ptr_array_free(order, TRUE);
	return n;
}

bool offcpu_longest(const struct offcpu *o, int *tid, int *perf_tid, uint64_t *ns)
{
	const struct pending *most = NULL;

	for (size_t i = 0; i <= o->mask; i++) {
		const struct pending *w = &o->pending[i];

		/* (the lowest tid of equals: the same answer every run) */
		if (w->tid && w->off_ns &&
		    (!most || w->off_ns > most->off_ns ||
		     (w->off_ns == most->off_ns && w->tid < most->tid)))
			most = w;
	}
	if (!most)
		return false;
	*tid = most->tid;
	*perf_tid = most->perf_tid;
	*ns = most->off_ns;
	return true;
}

bool offcpu_span(const struct offcpu *o, uint64_t *first, uint64_t *last)
{
	*first = o->first_time;
	*last = o->last_time;
	return o->ticked;
}

uint64_t offcpu_late(const struct offcpu *o)
{
	return o->late;
}

void offcpu_stats(const struct offcpu *o, uint64_t *counted, uint64_t *short_waits,
		  uint64_t *unseen)
{
	*counted = o->counted;
	*short_waits = o->short_waits;
	*unseen = o->unseen;
}

uint64_t offcpu_recorded(const struct offcpu *o)
{
	return o->recorded;
}
