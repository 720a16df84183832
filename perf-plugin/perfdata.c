#include "perfdata.h"

#include "core/error.h"
#include "core/intern.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC 0x32454c4946524550ULL	/* "PERFILE2" */
#define FILE_HEADER 104			/* sizeof(struct perf_file_header) */
#define PIPE_HEADER 16			/* sizeof(struct perf_pipe_file_header) */
#define FEATURE_CMDLINE 11		/* HEADER_CMDLINE */
#define FEATURE_SAMPLE_TIME 21		/* HEADER_SAMPLE_TIME */
#define BLOCK (1u << 20)		/* > the largest record, 64 KiB */

/* record types: the kernel's (linux/perf_event.h) and perf's own */
enum {
	REC_MMAP = 1,
	REC_LOST = 2,
	REC_COMM = 3,
	REC_EXIT = 4,
	REC_FORK = 7,
	REC_SAMPLE = 9,
	REC_MMAP2 = 10,
	REC_LOST_SAMPLES = 13,
	REC_SWITCH = 14,	/* a thread's own switch (perf record per thread) */
	REC_SWITCH_CPU_WIDE = 15,	/* a CPU's switch (perf record -a) */
	REC_USER = 64,		/* perf's own from here: never time-ordered */
	REC_HEADER_ATTR = 64,	/* a pipe file's event attributes */
	REC_TRACING_DATA = 66,	/* followed by the tracing data (pipe files) */
	REC_FINISHED_ROUND = 68,
	REC_AUXTRACE = 71,	/* followed by the trace */
	REC_COMPRESSED = 81,
	REC_FINISHED_INIT = 82,
};
#define MISC_EXEC (1 << 13)	/* COMM: at exec; MMAP: a data mapping */
#define MISC_MMAP_BUILD_ID (1 << 14)	/* MMAP2: a build id, not an inode */
#define MISC_SWITCH_OUT (1 << 13)	/* SWITCH: out, not in */
#define PROT_X 4

/* perf_event_attr: sample_type (u64 at byte 24), the flags (u64 at 40) */
#define ATTR_CONFIG 8
#define ATTR_SAMPLE_TYPE 24
#define ATTR_FLAGS 40
#define ATTR_MIN 48
#define SAMPLE_ID_ALL (1ull << 18)	/* the flags' bit */
#define MAX_EVENTS 4096		/* attributes kept for perfdata_dump_twins() */
#define S_CALLCHAIN (1ull << 5)
#define S_STACK_USER (1ull << 13)
enum {
	S_IP = 1 << 0, S_TID = 1 << 1, S_TIME = 1 << 2, S_ID = 1 << 6, S_CPU = 1 << 7,
	S_STREAM_ID = 1 << 9, S_IDENTIFIER = 1 << 16,
};
/* the sample_type bits that shape the sample_id trailer of other records */
#define S_TRAILER (S_TID | S_TIME | S_ID | S_CPU | S_STREAM_ID | S_IDENTIFIER)
/* the sample_type bits that place a sample's time */
#define S_HEAD (S_IDENTIFIER | S_IP | S_TID | S_TIME)

/*
 * perf writes each CPU's records in order, but one CPU's after another's
 * within a round: a child's own records (its COMM at exec, its mappings)
 * can come before the FORK its parent's CPU wrote.  A thread's own record
 * always happened after its creation, so what a FORK passes on never
 * replaces what the thread's own records said.
 */
struct proc {
	const char *main;	/* the main thread's latest name */
	const char *exe;	/* first executable mapping since exec */
	bool main_own, exe_own;	/* set by the process's own records */
};

struct thread {
	const char *name;
	bool own;		/* from its own COMM, not inherited */
	int pid;		/* its process (a COMM's or FORK's), + 1; 0: none */
};

/*
 * When perf script may hand a record over late.  It queues every kernel
 * record that has a time (util/ordered-events.c), and hands the queue
 * over in time order only up to a limit: at each FINISHED_ROUND, the
 * queue's latest time as of the round before (0 at first: nothing).  A
 * record queued with a time below the last one already handed over
 * ("out of order" to perf) goes out at the next flush, after samples of
 * later times; one without a time (0) goes out at once, before samples
 * still queued.  The limit is a time read before the round before, so
 * the latest time read by then bounds what perf has handed over: a
 * record below that bound may be late.  perf's other flushes: HALF (when the queue's memory passes
 * max_alloc_size; perf script never sets it, so only a failed malloc),
 * TIME (auxtrace decoders), FINAL (the end); FINISHED_INIT is taken as a
 * flush of everything read, which can only make the bound higher.
 */
struct order {
	uint64_t seen;		/* the latest time read so far */
	uint64_t next;		/* seen, at the last round */
	uint64_t bound;		/* perf handed over nothing later */
};

struct perfdata {
	char *name;
	char *damage;
	uint64_t first_time, last_time;
	uint64_t lost, lost_samples;
	bool compressed, pipe;
	enum perfdata_scope scope;
	GStringChunk *strings;
	GHashTable *threads;	/* tid -> struct thread */
	GHashTable *procs;	/* pid -> struct proc */
	GHashTable *maps;	/* pid -> GArray of struct range: its mappings */
	GHashTable *parents;	/* pid -> the pid that forked it */
	int attrs;		/* event attributes read */
	uint64_t trailer;	/* their S_TRAILER bits, if all agree */
	bool trailer_mixed;	/* they do not: no record times */
	GHashTable *changes;	/* pid -> struct changes */
	GHashTable *renames;	/* tid -> struct changes: its name's */
	uint64_t head;		/* the attributes' S_HEAD bits, if all agree */
	bool head_mixed;	/* they do not: samples' times unknown */
	struct order order;	/* perf's flushes, as far as the file shows */
	uint64_t unordered;	/* records perf may hand over late */
	GHashTable *late;	/* pid -> 1: processes of those records */
	GHashTable *switch_ins;	/* tid -> GArray of uint64_t: its switch-ins' times */
	uint64_t switches;	/* SWITCH records read, in and out */
	struct may_map *may_map;	/* perfdata_may_map()'s, once read */
	struct file_index *files;	/* perfdata_file_at()'s */
	/* the FORKs and mappings read, in the file's order: perf hands
	 * records of one time over in that order (perf record's records of
	 * the processes it found running all have time 0) */
	uint64_t fork_map_seq;
	GArray *events;		/* struct event: the attributes read */
};

/* What perfdata_dump_twins() asks of an event attribute. */
struct event {
	uint32_t type;
	uint64_t config, sample_type;
};

/*
 * perfdata_may_map() asks for a user address perf finds in no map, which
 * a build's short-lived processes have many of: each process's ranges
 * merged and sorted, searched by halves, and the process it was forked
 * from found once, not by a lookup per step of each walk.
 */
struct spans {
	struct range *r;	/* sorted by start, disjoint, none empty */
	guint n;
	struct spans *parent;	/* the process it was forked from, or NULL */
};

struct may_map {
	GHashTable *pids;	/* pid -> struct spans */
	/* every process's ranges: an address none holds is asked about
	 * without walking a process's ancestors (a stack walked through code
	 * without frame pointers gives many such addresses) */
	struct spans all;
	/* the last pid asked about: most ask about the same process */
	int last_pid;
	const struct spans *last;
};

/*
 * The times perf's view of a process's maps changed: its MMAP and MMAP2
 * records (perf lays each new map over the ones it overlaps), the FORK
 * that made it (perf copies its parent's maps, dropping a reused pid's).
 * Sorted once the records are read; past MAX_CHANGES, not kept (the
 * process's frames are then resolved every time).
 */
struct range {
	uint64_t start, end;
};

/*
 * A map change: an MMAP counts as a change of the process's maps only when
 * it overlaps another map the process may have had (its own, at any time,
 * or one it may have inherited through a FORK): a map laid over unused
 * addresses changes no earlier address's name, since an address in no
 * map is never cached (frames.h).  So an exec, whose maps replace the old
 * program's, is a change; a library loaded beside the others is not.
 */
struct timed_range {
	uint64_t time;
	struct range r;
};

/*
 * perfdata_file_at() places a user address in a mapping of a file that
 * perf names the same in every process mapping it: the process's own
 * MMAP and MMAP2 records, each with its time, its file's number and
 * whether another of the process's records overlaps it (then none of the
 * two is trusted: which one perf lays last is not asked).
 */
struct file_map {
	struct range r;		/* first: sorted by cmp_range() */
	uint64_t time, pgoff;
	uint64_t seq;		/* its place among the FORKs and mappings read */
	uint32_t file;		/* its file's number + 1; 0: none (see file_key()) */
	bool overlapped;
};

struct file_maps {
	GArray *maps;		/* struct file_map, sorted by start once read */
	GArray *forks;		/* struct fork: the FORKs making a process of this pid */
	bool off;		/* a record without its time, or too many: none trusted */
};

/* where a file_key()'s name starts */
#define FILE_KEY_NAME 25

/* A FORK that made a process: when, and of which (its maps copied). */
struct fork {
	uint64_t time;		/* first: sorted by cmp_time() */
	int ppid;
	uint64_t seq;		/* as file_map's */
};

/*
 * An answer of perfdata_file_at() from a process's own mapping, and for
 * how long it holds: for any address in the mapping, at any time after
 * the mapping's and before the process's next FORK (a pid reused), as
 * the mapping overlaps no other of its process's.
 */
struct file_hit {
	int pid;
	uint32_t file;
	uint64_t start, len, pgoff;
	uint64_t after, before;	/* times, both excluded */
	const char *name;
};
#define FILE_HITS 256		/* a power of two */

struct file_index {
	GHashTable *pids;	/* pid -> struct file_maps */
	struct fk_intern *keys;	/* file_key() -> its file's number */
	int last_pid;		/* the last pid asked about, and its maps */
	const struct file_maps *last;
	/* the last answers, by pid and megabyte: the frames of a stack new
	 * to its process are mostly in a few mappings */
	struct file_hit hits[FILE_HITS];
};

struct changes {
	GArray *times;		/* uint64_t */
	GArray *mmaps;		/* struct timed_range: MMAPs, sorted out at the end */
	GArray *ppids;		/* int: every process its pid was forked from */
	bool overflow;
};
/* a process's mappings kept one by one; past this, their span */
#define MAX_RANGES 4096
#define MAX_CHANGES 4096
/* the forks of one pid, and the processes searched for a map it inherited */
#define MAX_PARENTS 64

struct reader {
	int fd;
	uint64_t size;		/* of the file */
	uint8_t *buf;
	uint64_t start;		/* file offset of buf[0] */
	size_t len;
	int error;		/* errno of a failed read */
};

static const uint8_t *get_slow(struct reader *r, uint64_t off, size_t n);

/* [off, off + n) of the file, n <= BLOCK, or NULL if past the end */
static inline const uint8_t *get(struct reader *r, uint64_t off, size_t n)
{
	if (off >= r->start && off - r->start <= r->len && n <= r->len - (off - r->start))
		return r->buf + (off - r->start);
	return get_slow(r, off, n);
}

/* get() of what buf does not hold: read into it */
static const uint8_t *get_slow(struct reader *r, uint64_t off, size_t n)
{
	size_t want;

	if (off > r->size || n > r->size - off)
		return NULL;
	want = r->size - off < BLOCK ? (size_t)(r->size - off) : BLOCK;
	r->start = off;
	r->len = 0;
	while (r->len < want) {
		ssize_t got = pread(r->fd, r->buf + r->len, want - r->len, (off_t)(off + r->len));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			/* the file shrank under us, or an I/O error */
			r->error = got < 0 ? errno : EIO;
			r->len = 0;
			return NULL;
		}
		r->len += (size_t)got;
	}
	return r->buf;
}

static uint64_t u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static struct proc *proc_of(struct perfdata *pd, int pid)
{
	struct proc *p = g_hash_table_lookup(pd->procs, GINT_TO_POINTER(pid));

	if (!p) {
		p = g_new0(struct proc, 1);
		g_hash_table_insert(pd->procs, GINT_TO_POINTER(pid), p);
	}
	return p;
}

/* a NUL-terminated string within p[0..n), or its first n bytes */
static const char *keep(struct perfdata *pd, const uint8_t *p, size_t n)
{
	return g_string_chunk_insert_len(pd->strings, (const char *)p,
					 (gssize)strnlen((const char *)p, n));
}

static struct thread *thread_of(struct perfdata *pd, int tid)
{
	struct thread *t = g_hash_table_lookup(pd->threads, GINT_TO_POINTER(tid));

	if (!t) {
		t = g_new0(struct thread, 1);
		g_hash_table_insert(pd->threads, GINT_TO_POINTER(tid), t);
	}
	return t;
}

static void free_changes(gpointer p)
{
	struct changes *c = p;

	g_array_unref(c->times);
	g_array_unref(c->mmaps);
	g_array_unref(c->ppids);
	g_free(c);
}

static struct changes *changes_of(GHashTable *table, int id)
{
	struct changes *c = g_hash_table_lookup(table, GINT_TO_POINTER(id));

	if (!c) {
		c = g_new0(struct changes, 1);
		c->times = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		c->mmaps = g_array_new(FALSE, FALSE, sizeof(struct timed_range));
		c->ppids = g_array_new(FALSE, FALSE, sizeof(int));
		g_hash_table_insert(table, GINT_TO_POINTER(id), c);
	}
	return c;
}

static struct file_maps *file_maps_of(struct perfdata *pd, int pid)
{
	struct file_maps *fm = g_hash_table_lookup(pd->files->pids, GINT_TO_POINTER(pid));

	if (!fm) {
		fm = g_new0(struct file_maps, 1);
		fm->maps = g_array_new(FALSE, FALSE, sizeof(struct file_map));
		fm->forks = g_array_new(FALSE, FALSE, sizeof(struct fork));
		g_hash_table_insert(pd->files->pids, GINT_TO_POINTER(pid), fm);
	}
	return fm;
}

/* Whether c can take one more change; past MAX_CHANGES, none are kept. */
static bool room(struct changes *c)
{
	if (c->overflow)
		return false;
	if (c->times->len + c->mmaps->len >= MAX_CHANGES) {
		c->overflow = true;
		g_array_set_size(c->times, 0);
		g_array_set_size(c->mmaps, 0);
		return false;
	}
	return true;
}

/* A change at time to what table keeps for id (a pid or a tid). */
static void note_change_in(GHashTable *table, int id, uint64_t time)
{
	struct changes *c;

	if (id <= 0)
		return;
	c = changes_of(table, id);
	if (room(c))
		g_array_append_val(c->times, time);
}

static void note_change(struct perfdata *pd, int pid, uint64_t time)
{
	note_change_in(pd->changes, pid, time);
}

/* An MMAP of pid at time: a change if it overlaps (see struct timed_range). */
static void note_mmap(struct perfdata *pd, int pid, uint64_t time, struct range r)
{
	struct changes *c = changes_of(pd->changes, pid);
	struct timed_range m = { time, r };

	if (room(c))
		g_array_append_val(c->mmaps, m);
}

/*
 * The time in a record's sample_id trailer (n payload bytes, of which the
 * first fixed are the record's own), or false when the recording gives
 * none: the trailer ends with the time, then id, stream_id, cpu and
 * identifier, as sample_type has them.
 */
/* The bytes of a sample_id trailer after its time (sample_type t). */
static size_t trailer_after_time(uint64_t t)
{
	return 8 * (size_t)(!!(t & S_ID) + !!(t & S_STREAM_ID) + !!(t & S_CPU) +
			    !!(t & S_IDENTIFIER));
}

static bool trailer_time(const struct perfdata *pd, const uint8_t *p, size_t n, size_t fixed,
			 uint64_t *time)
{
	uint64_t t = pd->trailer;
	size_t after = trailer_after_time(t);

	if (!pd->attrs || pd->trailer_mixed || !(t & S_TIME) || n < fixed + after + 8)
		return false;
	*time = u64(p + n - after - 8);
	return true;
}

/*
 * A SWITCH or SWITCH_CPU_WIDE record (n payload bytes, fixed of them its
 * own): a switch-in's time is kept under its thread, both from its
 * sample_id trailer (tid, time, then id, stream_id, cpu, identifier, as
 * sample_type has them); without them, nothing is kept.
 */
static void on_switch(struct perfdata *pd, const uint8_t *p, size_t n, size_t fixed,
		      unsigned misc)
{
	uint64_t time;
	GArray *a;
	int tid;

	pd->switches++;
	/* the tid (pid, tid: u32 each) comes right before the time */
	if ((misc & MISC_SWITCH_OUT) || !(pd->trailer & S_TID) ||
	    !trailer_time(pd, p, n, fixed + 8, &time))
		return;
	tid = (int)u32(p + n - trailer_after_time(pd->trailer) - 8 - 4);
	if (!(a = g_hash_table_lookup(pd->switch_ins, GINT_TO_POINTER(tid)))) {
		a = g_array_new(FALSE, FALSE, sizeof(uint64_t));
		g_hash_table_insert(pd->switch_ins, GINT_TO_POINTER(tid), a);
	}
	g_array_append_val(a, time);
}

/* An event's perf_event_attr (n bytes): the shape of the records' trailers. */
static void on_attr(struct perfdata *pd, const uint8_t *a, size_t n)
{
	uint64_t trailer;

	if (n < ATTR_MIN) {
		pd->trailer_mixed = true;
		return;
	}
	if (pd->events->len < MAX_EVENTS) {
		struct event e = { u32(a), u64(a + ATTR_CONFIG), u64(a + ATTR_SAMPLE_TYPE) };

		g_array_append_val(pd->events, e);
	}
	trailer = u64(a + ATTR_FLAGS) & SAMPLE_ID_ALL ? u64(a + ATTR_SAMPLE_TYPE) & S_TRAILER : 0;
	if (pd->attrs && (u64(a + ATTR_SAMPLE_TYPE) & S_HEAD) != pd->head)
		pd->head_mixed = true;
	pd->head = u64(a + ATTR_SAMPLE_TYPE) & S_HEAD;
	if (pd->attrs++ && trailer != pd->trailer)
		pd->trailer_mixed = true;
	pd->trailer = trailer;
}

static void on_comm(struct perfdata *pd, const uint8_t *p, size_t n, unsigned misc)
{
	int pid = (int)u32(p), tid = (int)u32(p + 4);
	/* comm[16] at most (TASK_COMM_LEN), padded; sample_id fields follow */
	const char *name = keep(pd, p + 8, MIN(n - 8, 16));
	struct thread *t = thread_of(pd, tid);
	uint64_t time;

	/* perf names the thread anew */
	if (trailer_time(pd, p, n, 16, &time))
		note_change_in(pd->renames, tid, time);
	else
		pd->trailer_mixed = true;	/* no times: none are used */
	t->name = name;
	t->own = true;
	t->pid = pid + 1;
	if (pid == tid) {
		struct proc *pr = proc_of(pd, pid);
		pr->main = name;
		pr->main_own = true;
		if (misc & MISC_EXEC) {
			/* a new program: its mappings follow */
			pr->exe = NULL;
			pr->exe_own = true;
		}
	}
}

static void on_fork(struct perfdata *pd, const uint8_t *p, size_t n)
{
	int pid = (int)u32(p), ppid = (int)u32(p + 4), tid = (int)u32(p + 8);
	int ptid = (int)u32(p + 12);
	struct thread *parent = g_hash_table_lookup(pd->threads, GINT_TO_POINTER(ptid));
	const char *name = parent ? parent->name : NULL;
	struct thread *t = thread_of(pd, tid);

	if (!t->own)
		t->name = name;
	t->pid = pid + 1;
	/* perf makes the thread anew, named after its parent */
	if (n >= 24)
		note_change_in(pd->renames, tid, u64(p + 16));
	else
		pd->trailer_mixed = true;
	if (pid == tid && pid != ppid) {
		struct changes *c = changes_of(pd->changes, pid);

		g_hash_table_insert(pd->parents, GINT_TO_POINTER(pid), GINT_TO_POINTER(ppid));
		if (c->ppids->len < MAX_PARENTS)
			g_array_append_val(c->ppids, ppid);
		else
			c->overflow = true;	/* too many to follow: no generations */
		if (n >= 24) {
			struct fork f = { u64(p + 16), ppid, pd->fork_map_seq++ };

			note_change(pd, pid, f.time);
			g_array_append_val(file_maps_of(pd, pid)->forks, f);
		} else {
			pd->trailer_mixed = true;	/* no times: none are used */
		}
	}
	if (pid == tid && pid != ppid) {
		/* a new process: its parent's name and address space */
		struct proc *pp = g_hash_table_lookup(pd->procs, GINT_TO_POINTER(ppid));
		struct proc *pr = proc_of(pd, pid);
		if (!pr->main_own)
			pr->main = name;
		if (!pr->exe_own)
			pr->exe = pp ? pp->exe : NULL;
	}
}

/*
 * The number + 1 of the file an executable MMAP (name_at 32) or MMAP2 (64)
 * record maps, told apart as perf tells its DSOs apart: by name and, for
 * MMAP2, the device and inode or the build id the record gives; 0 for a
 * mapping perf names after the process rather than a file, or whose file
 * may not be the one of that name (deleted, replaced, a device or a
 * memfd), or with no NUL-terminated name.
 */
static uint32_t file_key(struct perfdata *pd, const uint8_t *p, size_t n, size_t name_at,
			 unsigned misc)
{
	static const char *const not_files[] = { "//", "/dev/", "/memfd:", "/tmp/perf-", "/SYSV" };
	static const guint8 no_identity[24];
	const char *name = (const char *)p + name_at;
	size_t len = n > name_at ? strnlen(name, n - name_at) : 0;
	GByteArray *key;
	uint32_t id;

	if (!len || len == n - name_at || name[0] != '/' || strstr(name, " (deleted)"))
		return 0;
	for (size_t i = 0; i < G_N_ELEMENTS(not_files); i++)
		if (strncmp(name, not_files[i], strlen(not_files[i])) == 0)
			return 0;
	/* its kind, its identity (MMAP2's 24 bytes), the name and its NUL */
	key = g_byte_array_sized_new((guint)(FILE_KEY_NAME + len + 1));
	if (name_at == 64) {
		g_byte_array_append(key, (const guint8 *)(misc & MISC_MMAP_BUILD_ID ? "b" : "i"), 1);
		g_byte_array_append(key, p + 32, 24);
	} else {
		g_byte_array_append(key, (const guint8 *)"-", 1);
		g_byte_array_append(key, no_identity, sizeof(no_identity));
	}
	g_byte_array_append(key, (const guint8 *)name, (guint)(len + 1));
	id = fk_intern_id(pd->files->keys, key->data, key->len, NULL);
	g_byte_array_free(key, TRUE);
	return id + 1;
}

/* An MMAP or MMAP2 of a process, for perfdata_file_at(). */
static void note_file_map(struct perfdata *pd, int pid, const uint8_t *p, size_t n,
			  size_t name_at, unsigned misc, bool exec, bool timed, uint64_t time)
{
	struct file_maps *fm = file_maps_of(pd, pid);
	struct file_map m = {
		{ u64(p + 8), u64(p + 8) + u64(p + 16) }, time, u64(p + 24), pd->fork_map_seq++, 0,
		false,
	};

	if (fm->off)
		return;
	if (!timed || fm->maps->len >= MAX_RANGES || m.r.end < m.r.start) {
		fm->off = true;
		g_array_set_size(fm->maps, 0);
		return;
	}
	if (exec)
		m.file = file_key(pd, p, n, name_at, misc);
	if (m.r.start < m.r.end)
		g_array_append_val(fm->maps, m);
}

static void on_mmap(struct perfdata *pd, const uint8_t *p, size_t n, size_t name_at,
		    bool exec, unsigned misc)
{
	int pid = (int)u32(p);
	const char *file, *base;
	struct proc *pr;
	struct range r = { u64(p + 8), u64(p + 8) + u64(p + 16) };
	GArray *maps;
	uint64_t time = 0;

	if (r.end < r.start)
		r.end = UINT64_MAX;
	if (pid > 0) {
		bool timed = trailer_time(pd, p, n, name_at, &time);

		if (timed)
			note_mmap(pd, pid, time, r);
		else
			pd->trailer_mixed = true;	/* no times: none are used */
		note_file_map(pd, pid, p, n, name_at, misc, exec, timed, time);
		maps = g_hash_table_lookup(pd->maps, GINT_TO_POINTER(pid));
		if (!maps) {
			maps = g_array_new(FALSE, FALSE, sizeof(struct range));
			g_hash_table_insert(pd->maps, GINT_TO_POINTER(pid), maps);
		}
		if (maps->len < MAX_RANGES) {
			g_array_append_val(maps, r);
		} else {
			/* bounded: past MAX_RANGES, one range spans them all
			 * (an address in it may be mapped: still correct) */
			struct range *all = &g_array_index(maps, struct range, 0);

			for (guint i = 1; i < maps->len; i++) {
				all->start = MIN(all->start, g_array_index(maps, struct range, i).start);
				all->end = MAX(all->end, g_array_index(maps, struct range, i).end);
			}
			g_array_set_size(maps, 1);
			all->start = MIN(all->start, r.start);
			all->end = MAX(all->end, r.end);
		}
	}
	if (!exec || n <= name_at || p[name_at] != '/' || pid <= 0)
		return;
	pr = proc_of(pd, pid);
	pr->exe_own = true;
	if (pr->exe)
		return;
	file = keep(pd, p + name_at, n - name_at);
	base = strrchr(file, '/') + 1;
	if (*base)
		pr->exe = base;
}

static void set_damage(struct perfdata *pd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void set_damage(struct perfdata *pd, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (pd->damage)
		return;
	va_start(ap, fmt);
	msg = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	pd->damage = g_strdup_printf("%s: %s", pd->name, msg);
	g_free(msg);
}

/* The least payload (after the 8-byte header) each record read needs. */
static size_t min_payload(uint32_t type)
{
	switch (type) {
	case REC_MMAP:		return 32;	/* pid tid addr len pgoff */
	case REC_MMAP2:		return 64;	/* ... maj min ino gen prot flags */
	case REC_LOST:		return 16;	/* id lost */
	case REC_COMM:		return 8;	/* pid tid */
	case REC_FORK:		return 16;	/* pid ppid tid ptid (time) */
	case REC_EXIT:		return 16;	/* pid ppid tid ptid (time) */
	case REC_LOST_SAMPLES:	return 8;
	case REC_TRACING_DATA:	return 4;
	case REC_AUXTRACE:	return 8;
	case REC_SWITCH_CPU_WIDE: return 8;	/* next_prev_pid next_prev_tid */
	default:		return 0;
	}
}

/*
 * The time perf queues a kernel record under (n payload bytes): a
 * sample's from its head (identifier, ip, tid, time, as sample_type has
 * them), another's from its sample_id trailer; false when the
 * recording does not say where it is.
 */
static bool queue_time(const struct perfdata *pd, uint32_t type, const uint8_t *p, size_t n,
		       uint64_t *time)
{
	uint64_t h = pd->head;
	size_t at = 8 * (size_t)(!!(h & S_IDENTIFIER) + !!(h & S_IP) + !!(h & S_TID));

	if (type != REC_SAMPLE)
		return trailer_time(pd, p, n, type == REC_FORK || type == REC_EXIT ? 24
					      : min_payload(type), time);
	if (!pd->attrs || pd->head_mixed || !(h & S_TIME) || n < at + 8)
		return false;
	*time = u64(p + at);
	return true;
}

/* What a FINISHED_ROUND (or FINISHED_INIT, all) lets perf hand over. */
static void on_round(struct perfdata *pd, bool all)
{
	struct order *o = &pd->order;

	o->bound = MAX(o->bound, all ? o->seen : o->next);
	o->next = o->seen;
}

/* Forgets the generations of id's names or maps: perf's may change late. */
static void forget_times(GHashTable *table, int id)
{
	struct changes *c;

	if (id <= 0)
		return;
	c = changes_of(table, id);
	c->overflow = true;
	g_array_set_size(c->times, 0);
	g_array_set_size(c->mmaps, 0);
}

/*
 * A COMM, FORK, EXIT or MMAP of thread tid of process pid that perf may
 * hand over after later samples (struct order): no time is trusted for
 * the thread's name or the process's maps.
 */
static void check_order(struct perfdata *pd, uint64_t time, int pid, int tid)
{
	/* perf hands a record of time 0 or ~0 over at once (-ETIME) */
	if (time >= pd->order.bound && time != UINT64_MAX)
		return;
	pd->unordered++;
	forget_times(pd->renames, tid);
	forget_times(pd->changes, pid);
	if (pid > 0)
		g_hash_table_add(pd->late, GINT_TO_POINTER(pid));
}

/*
 * Walks the records from off on, up to stop, of data that ends at end:
 * names, losses, and whether all are whole.  The offset reached: stop,
 * or past it when a record runs across it; or UINT64_MAX when damage or
 * a read error ended the walk.
 */
static uint64_t walk(struct perfdata *pd, struct reader *r, uint64_t off, uint64_t stop,
		     uint64_t end)
{
	while (off < stop) {
		const uint8_t *h = end - off >= 8 ? get(r, off, 8) : NULL;
		uint32_t type;
		unsigned misc, size;
		uint64_t extra = 0, t;
		const uint8_t *p;
		bool timed;

		if (!h) {
			if (!r->error)
				set_damage(pd, "byte %" G_GUINT64_FORMAT ": a record cut short "
					   "(the data ends at byte %" G_GUINT64_FORMAT ")", off, end);
			return UINT64_MAX;
		}
		type = u32(h);
		misc = h[4] | h[5] << 8;
		size = h[6] | h[7] << 8;
		if (type == 0) {
			/* no record has type 0; perf skips it as unknown, and with
			 * it whatever it was */
			set_damage(pd, "byte %" G_GUINT64_FORMAT ": a record of type 0", off);
			return UINT64_MAX;
		}
		if (size < 8 + min_payload(type)) {
			set_damage(pd, "byte %" G_GUINT64_FORMAT ": a record of type %u and "
				   "%u bytes, too short", off, type, size);
			return UINT64_MAX;
		}
		if (size > end - off) {
			set_damage(pd, "byte %" G_GUINT64_FORMAT ": a record of %u bytes runs "
				   "past the end of the data at byte %" G_GUINT64_FORMAT,
				   off, size, end);
			return UINT64_MAX;
		}
		if (!(p = get(r, off, size)))
			return UINT64_MAX;
		p += 8;
		if (type < REC_USER) {
			timed = queue_time(pd, type, p, size - 8, &t);
			if (!timed && (type == REC_FORK || type == REC_EXIT) && size - 8 >= 24) {
				/* what the generations go by (perf: the same) */
				t = u64(p + 16);
				timed = true;
			}
			if (timed)
				pd->order.seen = MAX(pd->order.seen, t);
			else if (type == REC_SAMPLE)
				pd->order.seen = UINT64_MAX;	/* may be any */
			/* (a record without its time: no times are used) */
			if (timed && (type == REC_COMM || type == REC_MMAP || type == REC_MMAP2))
				check_order(pd, t, (int)u32(p), (int)u32(p + 4));
			else if (timed && (type == REC_FORK || type == REC_EXIT))
				check_order(pd, t, (int)u32(p), (int)u32(p + 8));
		}
		switch (type) {
		case REC_COMM:
			on_comm(pd, p, size - 8, misc);
			break;
		case REC_FORK:
			on_fork(pd, p, size - 8);
			break;
		case REC_EXIT:
			/* perf may forget the thread: a later sample of its tid
			 * makes it anew, named ":TID" */
			if (size - 8 >= 24)
				note_change_in(pd->renames, (int)u32(p + 8), u64(p + 16));
			else
				pd->trailer_mixed = true;
			break;
		case REC_MMAP:
			on_mmap(pd, p, size - 8, 32, !(misc & MISC_EXEC), misc);
			break;
		case REC_MMAP2:
			on_mmap(pd, p, size - 8, 64, (u32(p + 56) & PROT_X) && !(misc & MISC_EXEC),
				misc);
			break;
		case REC_LOST:
			pd->lost += u64(p + 8);
			break;
		case REC_FINISHED_ROUND:
		case REC_FINISHED_INIT:
			on_round(pd, type == REC_FINISHED_INIT);
			break;
		case REC_LOST_SAMPLES:
			pd->lost_samples += u64(p);
			break;
		case REC_SWITCH:
			on_switch(pd, p, size - 8, 0, misc);
			break;
		case REC_SWITCH_CPU_WIDE:
			on_switch(pd, p, size - 8, 8, misc);
			break;
		case REC_COMPRESSED:
			pd->compressed = true;
			break;
		case REC_HEADER_ATTR:
			on_attr(pd, p, size - 8);
			break;
		case REC_TRACING_DATA:
			extra = u32(p);
			break;
		case REC_AUXTRACE:
			extra = u64(p);
			break;
		}
		if (extra > end - off - size) {
			set_damage(pd, "byte %" G_GUINT64_FORMAT ": a record's %" G_GUINT64_FORMAT
				   " bytes of trace run past the end of the data at byte %"
				   G_GUINT64_FORMAT, off, extra, end);
			return UINT64_MAX;
		}
		off += size + extra;
	}
	return off;
}

/*
 * A file's data section of split_min bytes or more is walked by two
 * threads: this one walks the first half while another walks the second,
 * where nearly every record is a sample, which changes nothing here but
 * the latest time read (struct order), and reading is the cost.  The
 * other thread starts where AHEAD_SYNC record headers chain from near
 * the middle, and logs in file order each run of samples as its latest
 * time and a copy of every other record; this one then replays the log
 * as if it had read the records itself, once its own walk ends exactly
 * where the other's began (else that start was no record's, and this one
 * walks on alone).  Anything unusual (damage, a read error, a record
 * with bytes after it or one that changes how samples are read, a log
 * past AHEAD_LOG_MAX) ends the other's walk where it is, and this one
 * walks on from there: what it finds, and says, is as without the split.
 */
#define SPLIT_MIN ((uint64_t)16 << 20)
#define AHEAD_SYNC 64
#define AHEAD_LOG_MAX ((size_t)64 << 20)
#define AHEAD_SEARCH 65536	/* a record starts within: none is longer */

static uint64_t split_min = SPLIT_MIN;	/* (lowered by the tests) */

struct ahead {
	struct reader r;	/* its own: pread() leaves the fd's offset alone */
	uint64_t from, end;	/* where it started, and the data's end */
	uint64_t stop;		/* where it stopped: the log is of [from, stop) */
	struct perfdata reading;	/* attrs, head, head_mixed: what queue_time()
					 * reads of a sample, as when it started */
	GByteArray *log;	/* struct logged, then a record's bytes if any */
	pthread_t thread;
};

/* A log entry: a record at offset at, its bytes after; or, at RUN, samples. */
struct logged {
	uint64_t at;
	uint64_t latest;	/* RUN: the samples' latest time (UINT64_MAX: one
				 * had none, so any) */
};
#define RUN UINT64_MAX

/* The header at off, if its type and size are those of a record the other
 * thread logs or skips: in *type and *size. */
static const uint8_t *plain_header(struct reader *r, uint64_t off, uint64_t end, uint32_t *type,
				   unsigned *size)
{
	const uint8_t *h = end - off >= 8 ? get(r, off, 8) : NULL;

	if (!h)
		return NULL;
	*type = u32(h);
	*size = h[6] | h[7] << 8;
	if (*type == 0 || *type >= REC_USER + 64 || *size % 8 || *size < 8 + min_payload(*type) ||
	    *size > end - off || *type == REC_HEADER_ATTR || *type == REC_TRACING_DATA ||
	    *type == REC_AUXTRACE)
		return NULL;
	return h;
}

/* Whether records seem to start at off: AHEAD_SYNC headers chain from it. */
static bool records_at(struct reader *r, uint64_t off, uint64_t end)
{
	uint32_t type;
	unsigned size;

	for (int k = 0; k < AHEAD_SYNC && off < end; k++) {
		if (!plain_header(r, off, end, &type, &size))
			return false;
		off += size;
	}
	return true;
}

static void log_run(struct ahead *a, uint64_t latest)
{
	struct logged e = { RUN, latest };

	g_byte_array_append(a->log, (const guint8 *)&e, sizeof(e));
}

static void *ahead_walk(void *data)
{
	struct ahead *a = data;
	uint64_t off = a->from, latest = 0, t;
	bool run = false;
	const uint8_t *p;
	uint32_t type;
	unsigned size;

	while (off < a->end && plain_header(&a->r, off, a->end, &type, &size) &&
	       (p = get(&a->r, off, size))) {
		if (type == REC_SAMPLE) {
			/* walk()'s order.seen, of the whole run */
			latest = MAX(latest, queue_time(&a->reading, type, p + 8, size - 8, &t)
					     ? t : UINT64_MAX);
			run = true;
		} else {
			struct logged e = { off, 0 };

			if (a->log->len + size > AHEAD_LOG_MAX)
				break;
			if (run)
				log_run(a, latest);
			run = false;
			latest = 0;
			g_byte_array_append(a->log, (const guint8 *)&e, sizeof(e));
			g_byte_array_append(a->log, p, size);
		}
		off += size;
	}
	if (run)
		log_run(a, latest);
	a->stop = off;
	return NULL;
}

/* Starts the other thread on the second half of [off, end); false if not. */
static bool ahead_start(struct ahead *a, const struct perfdata *pd, const struct reader *r,
			uint64_t off, uint64_t end)
{
	uint64_t mid = off + (end - off) / 2 / 8 * 8, at;

	if (end - off < split_min)
		return false;
	*a = (struct ahead){ .r = { .fd = r->fd, .size = r->size }, .end = end };
	a->r.buf = g_malloc(BLOCK);
	for (at = mid; at < end && at - mid < AHEAD_SEARCH; at += 8)
		if (records_at(&a->r, at, end))
			break;
	a->from = at;
	a->reading.attrs = pd->attrs;
	a->reading.head = pd->head;
	a->reading.head_mixed = pd->head_mixed;
	a->log = g_byte_array_new();
	if (at < end && at - mid < AHEAD_SEARCH &&
	    pthread_create(&a->thread, NULL, ahead_walk, a) == 0)
		return true;
	g_byte_array_unref(a->log);
	g_free(a->r.buf);
	return false;
}

/*
 * Replays the other thread's log (what its walk found, in the order
 * found): where this thread's walk goes on from (a->stop, or a record
 * the replay could not take).
 */
static uint64_t ahead_replay(struct perfdata *pd, struct ahead *a)
{
	const uint8_t *log = a->log->data;

	for (size_t i = 0; i < a->log->len;) {
		struct logged e;
		unsigned size;

		memcpy(&e, log + i, sizeof(e));
		i += sizeof(e);
		if (e.at == RUN) {
			pd->order.seen = MAX(pd->order.seen, e.latest);
			continue;
		}
		size = log[i + 6] | log[i + 7] << 8;
		/* the record alone, from the log's copy of it */
		if (walk(pd, &(struct reader){ .fd = -1, .size = a->r.size, .buf = (uint8_t *)log + i,
				       .start = e.at, .len = size },
			 e.at, e.at + size, a->end) != e.at + size)
			return e.at;
		i += size;
	}
	return a->stop;
}

/* walk() of the data section [off, end), on two threads when it is long. */
static void walk_data(struct perfdata *pd, struct reader *r, uint64_t off, uint64_t end)
{
	struct ahead a;
	bool split = ahead_start(&a, pd, r, off, end);

	off = walk(pd, r, off, split ? a.from : end, end);
	if (!split)
		return;
	pthread_join(a.thread, NULL);
	if (off == a.from && pd->attrs == a.reading.attrs && pd->head == a.reading.head &&
	    pd->head_mixed == a.reading.head_mixed)
		off = ahead_replay(pd, &a);
	if (off < end)
		walk(pd, r, off, end, end);
	g_byte_array_unref(a.log);
	g_free(a.r.buf);
}

/* The file header's event attributes: the records' sample_id trailers. */
static void read_attrs(struct perfdata *pd, struct reader *r, const uint8_t *h)
{
	uint64_t each = u64(h + 16), off = u64(h + 24), size = u64(h + 32);
	const uint8_t *a;

	/* each: a perf_event_attr, then the section of its ids (16 bytes) */
	if (each < 16 + ATTR_MIN || each > BLOCK || size % each || size / each > 4096 ||
	    off > UINT64_MAX - size) {
		pd->trailer_mixed = true;
		return;
	}
	for (uint64_t i = 0; i < size / each; i++) {
		if (!(a = get(r, off + i * each, (size_t)each))) {
			pd->trailer_mixed = true;
			return;
		}
		on_attr(pd, a, (size_t)(each - 16));
	}
}

/* Where feature bit's section is: false if the header does not list it. */
static bool feature(struct reader *r, const uint8_t *bits, uint64_t table, unsigned bit,
		    uint64_t *off, uint64_t *size)
{
	unsigned idx = 0;
	const uint8_t *e;

	if (!(bits[bit / 8] >> (bit % 8) & 1))
		return false;
	for (unsigned b = 0; b < bit; b++)
		idx += bits[b / 8] >> (b % 8) & 1;
	if (table > UINT64_MAX - 16 * (uint64_t)(idx + 1) ||
	    !(e = get(r, table + 16 * (uint64_t)idx, 16)))
		return false;
	*off = u64(e);
	*size = u64(e + 8);
	return true;
}

/* HEADER_SAMPLE_TIME, if the header lists it and its section is there. */
static void read_sample_time(struct perfdata *pd, struct reader *r, const uint8_t *bits,
			     uint64_t table)
{
	uint64_t off, size;
	const uint8_t *t;

	if (!feature(r, bits, table, FEATURE_SAMPLE_TIME, &off, &size) || size < 16 ||
	    !(t = get(r, off, 16)))
		return;
	pd->first_time = u64(t);
	pd->last_time = u64(t + 8);
}

/* perf record's short options that take a value (the rest of the word or
 * the next one): only their values are skipped, so none is misread */
static const char VALUE_OPTS[] = "eFcoptuCGmrDjkIS";

/*
 * What perf record's command line (HEADER_CMDLINE) says it recorded:
 * every CPU (-a, or -C for some), or some threads (-p, -t, -u, or a
 * command after "--"); unknown otherwise.
 */
static enum perfdata_scope scope_of(char **argv, int argc)
{
	bool cpus = false, tasks = false;
	int i = 0;

	while (i < argc && strcmp(argv[i], "record") != 0)
		i++;
	if (i == argc)
		return PERFDATA_SCOPE_UNKNOWN;
	for (i++; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			tasks |= i + 1 < argc;
			break;
		}
		if (g_str_has_prefix(a, "--")) {
			a += 2;
			cpus |= strcmp(a, "all-cpus") == 0 || strcmp(a, "cpu") == 0 ||
				g_str_has_prefix(a, "cpu=");
			tasks |= strcmp(a, "pid") == 0 || strcmp(a, "tid") == 0 ||
				 strcmp(a, "uid") == 0 || g_str_has_prefix(a, "pid=") ||
				 g_str_has_prefix(a, "tid=") || g_str_has_prefix(a, "uid=");
			continue;
		}
		if (a[0] != '-')
			continue;
		/* a cluster of flags ("-ag"), up to an option with a value */
		for (a++; *a; a++) {
			cpus |= *a == 'a' || *a == 'C';
			tasks |= *a == 'p' || *a == 't' || *a == 'u';
			if (strchr(VALUE_OPTS, *a)) {
				i += a[1] == '\0';	/* the value is the next word */
				break;
			}
		}
	}
	return cpus ? PERFDATA_SCOPE_CPUS : tasks ? PERFDATA_SCOPE_TASKS
		    : PERFDATA_SCOPE_UNKNOWN;
}

/* HEADER_CMDLINE: u32 count, then each word as u32 length and its bytes */
static void read_cmdline(struct perfdata *pd, struct reader *r, const uint8_t *bits,
			 uint64_t table)
{
	uint64_t off, size, end;
	const uint8_t *p;
	GPtrArray *argv;
	uint32_t n;

	if (!feature(r, bits, table, FEATURE_CMDLINE, &off, &size) || size < 4 ||
	    off > UINT64_MAX - size || !(p = get(r, off, 4)))
		return;
	end = off + size;
	n = u32(p);
	off += 4;
	argv = g_ptr_array_new();
	for (uint32_t i = 0; i < n && i < 4096 && end - off >= 4; i++) {
		uint32_t len;

		if (!(p = get(r, off, 4)))
			break;
		len = u32(p);
		off += 4;
		if (len > end - off || len > BLOCK || !(p = get(r, off, len)))
			break;
		g_ptr_array_add(argv, (gpointer)keep(pd, p, len));
		off += len;
	}
	pd->scope = scope_of((char **)argv->pdata, (int)argv->len);
	g_ptr_array_free(argv, TRUE);
}

static gint cmp_time(gconstpointer a, gconstpointer b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A process's maps, sorted by start, with the greatest end up to each. */
struct map_index {
	GArray *starts;		/* uint64_t */
	GArray *max_ends;	/* uint64_t */
};

static void free_map_index(gpointer p)
{
	struct map_index *x = p;

	g_array_unref(x->starts);
	g_array_unref(x->max_ends);
	g_free(x);
}

static gint cmp_range(gconstpointer a, gconstpointer b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* An empty map is taken as one byte long: it may overlap, never less. */
static uint64_t end_of(const struct range *r)
{
	return r->end > r->start ? r->end : r->start + (r->start < UINT64_MAX);
}

static struct map_index *map_index(struct perfdata *pd, GHashTable *indexes, int pid)
{
	struct map_index *x = g_hash_table_lookup(indexes, GINT_TO_POINTER(pid));
	const GArray *maps;
	GArray *sorted;
	uint64_t top = 0;

	if (x)
		return x;
	x = g_new0(struct map_index, 1);
	x->starts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	x->max_ends = g_array_new(FALSE, FALSE, sizeof(uint64_t));
	maps = g_hash_table_lookup(pd->maps, GINT_TO_POINTER(pid));
	sorted = g_array_new(FALSE, FALSE, sizeof(struct range));
	if (maps)
		g_array_append_vals(sorted, maps->data, maps->len);
	g_array_sort(sorted, cmp_range);
	for (guint i = 0; i < sorted->len; i++) {
		const struct range *r = &g_array_index(sorted, struct range, i);

		top = MAX(top, end_of(r));
		g_array_append_val(x->starts, r->start);
		g_array_append_val(x->max_ends, top);
	}
	g_array_unref(sorted);
	g_hash_table_insert(indexes, GINT_TO_POINTER(pid), x);
	return x;
}

/* Whether any of the index's maps overlaps r. */
static bool index_overlaps(const struct map_index *x, const struct range *r)
{
	const uint64_t *starts = (const uint64_t *)(const void *)x->starts->data;
	guint lo = 0, hi = x->starts->len;

	/* lo: the maps that start before r ends */
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;

		if (starts[mid] < end_of(r))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && g_array_index(x->max_ends, uint64_t, lo - 1) > r->start;
}

/*
 * The processes pid may have inherited maps from: the ones it was forked
 * from, theirs, and so on; false when there are more than MAX_PARENTS
 * (or a cycle of reused pids).
 */
static bool ancestors(struct perfdata *pd, int pid, GArray *out)
{
	g_array_set_size(out, 0);
	g_array_append_val(out, pid);
	for (guint i = 0; i < out->len; i++) {
		const struct changes *c = g_hash_table_lookup(pd->changes,
					GINT_TO_POINTER(g_array_index(out, int, i)));

		for (guint k = 0; c && k < c->ppids->len; k++) {
			int ppid = g_array_index(c->ppids, int, k);
			guint j = 0;

			while (j < out->len && g_array_index(out, int, j) != ppid)
				j++;
			if (j < out->len)
				continue;
			if (out->len > MAX_PARENTS)
				return false;
			g_array_append_val(out, ppid);
		}
	}
	g_array_remove_index(out, 0);
	return true;
}

static gint cmp_timed_start(gconstpointer a, gconstpointer b)
{
	return cmp_range(&((const struct timed_range *)a)->r, &((const struct timed_range *)b)->r);
}

/*
 * The MMAPs of one process that change its maps (struct timed_range): each
 * that overlaps another of its own, or a map of a process it may have
 * inherited from.
 */
static void settle_mmaps(struct perfdata *pd, GHashTable *indexes, GArray *up, struct changes *c,
			 int pid)
{
	GArray *m = c->mmaps;
	bool inherited = ancestors(pd, pid, up);
	uint64_t top = 0;

	if (!m->len)
		return;
	/* by start: one overlaps an earlier one if it starts before the
	 * greatest end so far, a later one if the next starts before its end */
	g_array_sort(m, cmp_timed_start);
	for (guint i = 0; i < m->len; i++) {
		const struct timed_range *t = &g_array_index(m, struct timed_range, i);
		bool change = !inherited || (i && top > t->r.start) ||
			      (i + 1 < m->len &&
			       g_array_index(m, struct timed_range, i + 1).r.start < end_of(&t->r));

		for (guint k = 0; !change && k < up->len; k++)
			change = index_overlaps(map_index(pd, indexes, g_array_index(up, int, k)),
						&t->r);
		top = MAX(top, end_of(&t->r));
		if (change)
			g_array_append_val(c->times, t->time);
	}
	g_array_set_size(m, 0);
}

/* perf writes one CPU's records after another's: the times in order */
static void sort_changes(struct perfdata *pd)
{
	GHashTableIter it;
	gpointer k, v;
	GHashTable *indexes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
						    free_map_index);
	GArray *up = g_array_new(FALSE, FALSE, sizeof(int));

	g_hash_table_iter_init(&it, pd->changes);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		if (!((struct changes *)v)->overflow)
			settle_mmaps(pd, indexes, up, v, GPOINTER_TO_INT(k));
		g_array_sort(((struct changes *)v)->times, cmp_time);
	}
	g_hash_table_destroy(indexes);
	g_array_unref(up);
	g_hash_table_iter_init(&it, pd->renames);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_array_sort(((struct changes *)v)->times, cmp_time);
	/* (in order already, but where a thread moved from CPU to CPU) */
	g_hash_table_iter_init(&it, pd->switch_ins);
	while (g_hash_table_iter_next(&it, NULL, &v))
		g_array_sort(v, cmp_time);
}

static void free_spans(gpointer p)
{
	struct spans *sp = p;

	g_free(sp->r);
	g_free(sp);
}

static struct spans *spans_of(GHashTable *pids, int pid)
{
	struct spans *sp = g_hash_table_lookup(pids, GINT_TO_POINTER(pid));

	if (!sp) {
		sp = g_new0(struct spans, 1);
		g_hash_table_insert(pids, GINT_TO_POINTER(pid), sp);
	}
	return sp;
}

/* A process's ranges as spans: sorted, overlapping ones merged. */
static void merge_ranges(struct spans *sp, const GArray *maps)
{
	guint n = 0;

	sp->r = g_new(struct range, maps->len);
	if (!maps->len) {	/* (every process's, of none: no pointers) */
		sp->n = 0;
		return;
	}
	memcpy(sp->r, maps->data, maps->len * sizeof(struct range));
	qsort(sp->r, maps->len, sizeof(struct range), cmp_range);
	for (guint i = 0; i < maps->len; i++) {
		const struct range *r = &sp->r[i];

		if (r->start >= r->end)
			continue;
		if (n && r->start <= sp->r[n - 1].end)
			sp->r[n - 1].end = MAX(sp->r[n - 1].end, r->end);
		else
			sp->r[n++] = *r;
	}
	sp->n = n;
}

static void index_maps(struct perfdata *pd)
{
	struct may_map *mm = g_new0(struct may_map, 1);
	GHashTableIter it;
	gpointer k, v;
	GArray *all;

	mm->pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_spans);
	all = g_array_new(FALSE, FALSE, sizeof(struct range));
	g_hash_table_iter_init(&it, pd->maps);
	while (g_hash_table_iter_next(&it, &k, &v)) {
		merge_ranges(spans_of(mm->pids, GPOINTER_TO_INT(k)), v);
		g_array_append_vals(all, ((GArray *)v)->data, ((GArray *)v)->len);
	}
	merge_ranges(&mm->all, all);
	g_array_unref(all);
	g_hash_table_iter_init(&it, pd->parents);
	while (g_hash_table_iter_next(&it, &k, &v))
		spans_of(mm->pids, GPOINTER_TO_INT(k))->parent =
			spans_of(mm->pids, GPOINTER_TO_INT(v));
	mm->last_pid = -1;
	pd->may_map = mm;
}

static void free_file_maps(gpointer p)
{
	struct file_maps *fm = p;

	g_array_unref(fm->maps);
	g_array_unref(fm->forks);
	g_free(fm);
}

static struct file_index *file_index_new(void)
{
	struct file_index *fi = g_new0(struct file_index, 1);

	fi->pids = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_file_maps);
	fi->keys = fk_intern_new();
	fi->last_pid = -1;
	return fi;
}

static void file_index_free(struct file_index *fi)
{
	if (!fi)
		return;
	g_hash_table_destroy(fi->pids);
	fk_intern_free(fi->keys);
	g_free(fi);
}

/*
 * Sorts each process's mappings by start and marks those that overlap;
 * a process with a record that may reach perf late has none trusted.
 */
static void index_files(struct perfdata *pd)
{
	GHashTableIter it;
	gpointer k, v;

	g_hash_table_iter_init(&it, pd->late);
	while (g_hash_table_iter_next(&it, &k, NULL))
		file_maps_of(pd, GPOINTER_TO_INT(k))->off = true;
	g_hash_table_iter_init(&it, pd->files->pids);
	while (g_hash_table_iter_next(&it, NULL, &v)) {
		struct file_maps *fm = v;
		struct file_map *m = (struct file_map *)(void *)fm->maps->data;
		uint64_t reach = 0;	/* the furthest end of the maps before */

		g_array_sort(fm->maps, cmp_range);
		g_array_sort(fm->forks, cmp_time);
		for (guint i = 0; i < fm->maps->len; i++) {
			if ((i > 0 && m[i].r.start < reach) ||
			    (i + 1 < fm->maps->len && m[i + 1].r.start < m[i].r.end))
				m[i].overlapped = true;
			reach = MAX(reach, m[i].r.end);
		}
	}
}

static void *index_run(void *pd)
{
	index_maps(pd);
	index_files(pd);
	return NULL;
}

/*
 * The indexes of what the walk kept: sort_changes() here while another
 * thread makes those of the maps and the files (they read the same
 * tables, and each changes only its own).
 */
static void index_all(struct perfdata *pd)
{
	pthread_t other;
	bool two = pthread_create(&other, NULL, index_run, pd) == 0;

	sort_changes(pd);
	if (two)
		pthread_join(other, NULL);
	else
		index_run(pd);
}

/* What is wrong with a data section of size bytes at off in a file of file_size, or NULL. */
static char *section_damage(uint64_t off, uint64_t size, uint64_t file_size)
{
	if (off < FILE_HEADER || off > UINT64_MAX - size)
		return g_strdup_printf("corrupt header: data section at byte %" G_GUINT64_FORMAT
				       " of %" G_GUINT64_FORMAT " bytes", off, size);
	if (size == 0)
		return g_strdup("not finished: its header gives no size for the samples "
				"(was perf record killed?)");
	if (off + size > file_size)
		return g_strdup_printf("cut short: its header says the samples end at byte %"
				       G_GUINT64_FORMAT ", the file has %" G_GUINT64_FORMAT
				       " bytes", off + size, file_size);
	return NULL;
}

char *perfdata_cut(int fd, const char *name)
{
	uint8_t h[FILE_HEADER];
	struct stat sb;
	char *cut, *msg;

	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || u64(h) != MAGIC ||
	    u64(h + 8) != FILE_HEADER ||
	    !(cut = section_damage(u64(h + 40), u64(h + 48), (uint64_t)sb.st_size)))
		return NULL;
	msg = g_strdup_printf("%s: %s", name, cut);
	g_free(cut);
	return msg;
}

struct perfdata *perfdata_read(int fd, const char *name, GError **err)
{
	struct perfdata *pd;
	struct reader r = { .fd = fd };
	struct stat sb;
	const uint8_t *h;
	uint8_t bits[32];
	uint64_t magic, hsize, data_off, data_size;
	char *cut;

	if (fstat(fd, &sb) != 0) {
		fk_error_at(err, FK_ERROR_IO, name, 0, "cannot read: %s", g_strerror(errno));
		return NULL;
	}
	r.size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
	r.buf = g_malloc(BLOCK);
	if (!(h = get(&r, 0, PIPE_HEADER))) {
		fk_error_at(err, r.error ? FK_ERROR_IO : FK_ERROR_TRUNCATED, name, 0, "%s",
			    r.error ? g_strerror(r.error) : "not a perf.data file: too short");
		g_free(r.buf);
		return NULL;
	}
	magic = u64(h);
	hsize = u64(h + 8);
	if (magic != MAGIC) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0, "%s",
			    magic == GUINT64_SWAP_LE_BE(MAGIC)
			    ? "a perf.data file of the other byte order"
			    : "not a perf.data file (no PERFILE2 magic)");
		g_free(r.buf);
		return NULL;
	}
	if (hsize != PIPE_HEADER && (hsize != FILE_HEADER || !(h = get(&r, 0, FILE_HEADER)))) {
		fk_error_at(err, FK_ERROR_PARSE, name, 0,
			    "perf.data header of %" G_GUINT64_FORMAT " bytes: unknown layout", hsize);
		g_free(r.buf);
		return NULL;
	}
	pd = g_new0(struct perfdata, 1);
	pd->name = g_strdup(name);
	pd->strings = g_string_chunk_new(1 << 12);
	pd->threads = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	pd->procs = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	pd->maps = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
					 (GDestroyNotify)g_array_unref);
	pd->parents = g_hash_table_new(g_direct_hash, g_direct_equal);
	pd->changes = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_changes);
	pd->renames = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free_changes);
	pd->late = g_hash_table_new(g_direct_hash, g_direct_equal);
	pd->switch_ins = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
					       (GDestroyNotify)g_array_unref);
	pd->files = file_index_new();
	pd->events = g_array_new(FALSE, FALSE, sizeof(struct event));
	if (hsize == PIPE_HEADER) {
		/* records up to the end; a cut shows as a last record cut short */
		pd->pipe = true;
		walk(pd, &r, PIPE_HEADER, r.size, r.size);
		goto out;
	}
	data_off = u64(h + 40);
	data_size = u64(h + 48);
	memcpy(bits, h + 72, sizeof(bits));
	if ((cut = section_damage(data_off, data_size, r.size))) {
		set_damage(pd, "%s", cut);
		g_free(cut);
	} else {
		read_attrs(pd, &r, h);
		walk_data(pd, &r, data_off, data_off + data_size);
		read_sample_time(pd, &r, bits, data_off + data_size);
		read_cmdline(pd, &r, bits, data_off + data_size);
	}
out:
	index_all(pd);
	if (r.error && !pd->damage)
		set_damage(pd, "read error: %s", g_strerror(r.error));
	g_free(r.buf);
	return pd;
}

void perfdata_free(struct perfdata *pd)
{
	if (!pd)
		return;
	g_free(pd->name);
	g_free(pd->damage);
	g_string_chunk_free(pd->strings);
	g_hash_table_destroy(pd->threads);
	g_hash_table_destroy(pd->procs);
	g_hash_table_destroy(pd->maps);
	g_hash_table_destroy(pd->parents);
	g_hash_table_destroy(pd->changes);
	g_hash_table_destroy(pd->renames);
	g_hash_table_destroy(pd->late);
	g_hash_table_destroy(pd->switch_ins);
	g_array_free(pd->events, TRUE);
	if (pd->may_map) {
		g_hash_table_destroy(pd->may_map->pids);
		g_free(pd->may_map->all.r);
	}
	g_free(pd->may_map);
	file_index_free(pd->files);
	g_free(pd);
}

const char *perfdata_damage(const struct perfdata *pd)
{
	return pd->damage;
}

bool perfdata_sample_times(const struct perfdata *pd, uint64_t *first, uint64_t *last)
{
	*first = pd->first_time;
	*last = pd->last_time;
	return pd->last_time != 0;
}

void perfdata_lost(const struct perfdata *pd, uint64_t *events, uint64_t *samples)
{
	*events = pd->lost;
	*samples = pd->lost_samples;
}

bool perfdata_compressed(const struct perfdata *pd)
{
	return pd->compressed;
}

enum perfdata_scope perfdata_scope(const struct perfdata *pd)
{
	return pd->scope;
}

bool perfdata_is_pipe(const struct perfdata *pd)
{
	return pd->pipe;
}

const char *perfdata_process_name(const struct perfdata *pd, int pid, bool *from_exe)
{
	const struct proc *pr = g_hash_table_lookup(pd->procs, GINT_TO_POINTER(pid));

	*from_exe = false;
	if (!pr)
		return NULL;
	if (pr->main && *pr->main)
		return pr->main;
	*from_exe = pr->exe != NULL;
	return pr->exe;
}

/*
 * How many of the n elements of size bytes at base, sorted by the
 * uint64_t each starts with (a range's start, a FORK's time), start with
 * at most key.
 */
static guint count_upto(const void *base, guint n, size_t size, uint64_t key)
{
	guint lo = 0, hi = n;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		uint64_t at;

		memcpy(&at, (const char *)base + mid * size, sizeof(at));
		if (at <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether a span of sp holds addr. */
static bool spans_hold(const struct spans *sp, uint64_t addr)
{
	guint lo = count_upto(sp->r, sp->n, sizeof(*sp->r), addr);

	return lo > 0 && addr < sp->r[lo - 1].end;
}

bool perfdata_may_map(const struct perfdata *pd, int pid, uint64_t addr)
{
	struct may_map *mm = pd->may_map;
	const struct spans *sp;

	if (pd->compressed || pd->damage)
		return true;	/* records not read */
	if (!spans_hold(&mm->all, addr))
		return false;
	if (pid != mm->last_pid) {
		mm->last_pid = pid;
		mm->last = g_hash_table_lookup(mm->pids, GINT_TO_POINTER(pid));
	}
	/* its own mappings, and those a late FORK may still copy from its
	 * parent's, and from theirs (a bounded walk: a pid may be reused) */
	if (!(sp = mm->last))
		return false;
	for (int depth = 0; depth < 64; depth++) {
		if (spans_hold(sp, addr))
			return true;
		if (!(sp = sp->parent))
			return false;
	}
	return true;
}

uint64_t perfdata_unordered(const struct perfdata *pd, unsigned *processes)
{
	*processes = g_hash_table_size(pd->late);
	return pd->unordered;
}

bool perfdata_has_map_times(const struct perfdata *pd)
{
	return !pd->compressed && !pd->damage && !pd->trailer_mixed;
}

/* The generation at time of what table keeps for id: see perfdata_map_gen(). */
/* How many of the ascending t[0..n) are before time. */
static guint times_before(const uint64_t *t, guint n, uint64_t time)
{
	guint lo = 0, hi = n;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;

		if (t[mid] < time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t gen_at(GHashTable *table, int id, uint64_t time, uint64_t *until)
{
	const struct changes *c = g_hash_table_lookup(table, GINT_TO_POINTER(id));
	const uint64_t *t;
	guint lo;

	*until = UINT64_MAX;
	if (!c)
		return 0;
	if (c->overflow) {
		*until = time;
		return PERFDATA_NO_GEN;
	}
	/* lo: the number of changes before time */
	t = (const uint64_t *)(const void *)c->times->data;
	lo = times_before(t, c->times->len, time);
	if (lo < c->times->len && t[lo] == time) {
		/* a change at the sample's very time: perf may have seen
		 * either first */
		*until = time;
		return PERFDATA_NO_GEN;
	}
	if (lo < c->times->len)
		*until = t[lo];
	return lo;
}

uint32_t perfdata_map_gen(const struct perfdata *pd, int pid, uint64_t time, uint64_t *until)
{
	return gen_at(pd->changes, pid, time, until);
}

uint32_t perfdata_name_gen(const struct perfdata *pd, int tid, uint64_t time, uint64_t *until)
{
	return gen_at(pd->renames, tid, time, until);
}

int perfdata_thread_pid(const struct perfdata *pd, int tid)
{
	const struct thread *t = g_hash_table_lookup(pd->threads, GINT_TO_POINTER(tid));

	return t && t->pid > 0 ? t->pid - 1 : -1;
}

uint64_t perfdata_switches(const struct perfdata *pd)
{
	return pd->switches;
}

bool perfdata_switch_in(const struct perfdata *pd, int tid, uint64_t from, uint64_t to,
			uint64_t *time)
{
	GArray *a = g_hash_table_lookup(pd->switch_ins, GINT_TO_POINTER(tid));
	guint lo;

	/* (a trailer told apart only after its records: none can be read) */
	if (!a || pd->trailer_mixed)
		return false;
	/* the first at or after from */
	lo = times_before((const uint64_t *)(const void *)a->data, a->len, from);
	if (lo == a->len || g_array_index(a, uint64_t, lo) > to)
		return false;
	*time = g_array_index(a, uint64_t, lo);
	return true;
}

/* The FORK that made the process of pid last at or before time, or NULL. */
static const struct fork *fork_before(const struct file_maps *fm, uint64_t time)
{
	guint lo = count_upto(fm->forks->data, fm->forks->len, sizeof(struct fork), time);

	return lo ? &g_array_index(fm->forks, struct fork, lo - 1) : NULL;
}

/*
 * perfdata_file_at() in process fm at time: its own mapping of addr, or
 * the one the FORK that made it copied from its parent (perf copies the
 * parent's maps, and keeps each until one of the process's own overlaps
 * it, exec or not), up to depth more parents.
 */
static bool file_in(const struct perfdata *pd, const struct file_maps *fm, uint64_t addr,
		    uint64_t time, int depth, struct perfdata_file *f, struct file_hit *hit)
{
	const struct file_map *m = (const struct file_map *)(const void *)fm->maps->data;
	const struct fork *made = fork_before(fm, time);
	guint lo;
	struct fk_str key;

	/* (a FORK at the very time: perf's order of the two is unknown) */
	if (fm->off || (made && made->time == time))
		return false;
	/* the last mapping starting at or before addr: the only one that may
	 * hold it, unless it overlaps another */
	lo = count_upto(m, fm->maps->len, sizeof(*m), addr);
	m = lo ? m + lo - 1 : NULL;
	if (m && m->overlapped)
		return false;
	if (m && addr < m->r.end &&
	    (!made || m->time > made->time || (m->time == made->time && m->seq > made->seq))) {
		/* its own, since the FORK (a pid's earlier process's maps
		 * perf dropped at it) */
		if (!m->file || m->time >= time)
			return false;
		key = fk_intern_str(pd->files->keys, m->file - 1);
		f->file = m->file - 1;
		f->name = key.s + FILE_KEY_NAME;
		f->offset = addr - m->r.start + m->pgoff;
		if (hit) {
			guint next = count_upto(fm->forks->data, fm->forks->len, sizeof(*made),
						m->time);

			hit->file = f->file;
			hit->name = f->name;
			hit->start = m->r.start;
			hit->len = m->r.end - m->r.start;
			hit->pgoff = m->pgoff;
			hit->after = m->time;
			hit->before = next < fm->forks->len
				      ? g_array_index(fm->forks, struct fork, next).time : UINT64_MAX;
		}
		return true;
	}
	/* none of its own, then its parent's when it forked */
	if (!made || made->ppid <= 0 || depth <= 0 ||
	    !(fm = g_hash_table_lookup(pd->files->pids, GINT_TO_POINTER(made->ppid))))
		return false;
	return file_in(pd, fm, addr, made->time, depth - 1, f, NULL);
}

bool perfdata_file_at(const struct perfdata *pd, int pid, uint64_t addr, uint64_t time,
		      struct perfdata_file *f)
{
	struct file_index *fi = pd->files;
	struct file_hit *hit, new = { 0 };

	if (!perfdata_has_map_times(pd) || pid <= 0)
		return false;
	hit = &fi->hits[((guint)pid * 0x9e3779b1u ^ (guint)(addr >> 20)) & (FILE_HITS - 1)];
	if (hit->pid == pid && addr - hit->start < hit->len && time > hit->after &&
	    time < hit->before) {
		f->file = hit->file;
		f->name = hit->name;
		f->offset = addr - hit->start + hit->pgoff;
		return true;
	}
	if (pid != fi->last_pid) {
		fi->last_pid = pid;
		fi->last = g_hash_table_lookup(fi->pids, GINT_TO_POINTER(pid));
	}
	if (!fi->last || !file_in(pd, fi->last, addr, time, 16, f, &new))
		return false;
	if (new.len) {
		*hit = new;
		hit->pid = pid;
	}
	return true;
}

char perfdata_file_identity(const struct perfdata *pd, uint32_t file, uint8_t id[24])
{
	struct fk_str key;

	if (file >= fk_intern_size(pd->files->keys))
		return 0;
	key = fk_intern_str(pd->files->keys, file);
	if (key.len < FILE_KEY_NAME || (key.s[0] != 'i' && key.s[0] != 'b'))
		return 0;
	memcpy(id, key.s + 1, 24);
	return key.s[0];
}

bool perfdata_dump_twins(const struct perfdata *pd)
{
	for (guint i = 0; i < pd->events->len; i++) {
		const struct event *d = &g_array_index(pd->events, struct event, i);

		if (!(d->sample_type & S_STACK_USER))
			continue;
		for (guint j = 0; j < pd->events->len; j++) {
			const struct event *e = &g_array_index(pd->events, struct event, j);

			if (e->type == d->type && e->config == d->config &&
			    !(e->sample_type & S_STACK_USER) && (e->sample_type & S_CALLCHAIN))
				return true;
		}
	}
	return false;
}
