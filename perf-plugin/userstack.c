#include "userstack.h"

#include <glib.h>
#include <string.h>

/* CPUs numbered below this keep their dumps in an array */
#define DENSE_CPUS 4096
/* a dump and its twin come from one tracepoint call, on one CPU: each is
 * the other's if the CPU has no sample between them and they are this
 * close (a few microseconds apart; more on a host that stopped the CPU) */
#define TWIN_NS 10000000ull
/* a dump that follows a sample of its thread this closely is its twin's */
#define LATE_NS 50000ull
/* a chain's entries past this are not repaired (perf's limit is 127) */
#define MAX_CHAIN 1024

/* A dump taken from a sample's record, for its twin. */
struct dump {
	bool valid;
	bool seen;		/* a dump of tid came before */
	int last_tid;		/* the CPU's last sample without a dump, */
	uint64_t last_time;	/* when (a dump of it after it came late) */
	int cpu, pid, tid;
	uint64_t time;
	struct unwind_regs regs;
	uint8_t *bytes;
	size_t size, cap;
};

struct userstack {
	struct unwinder *u;
	bool twins;
	struct dump **dense;	/* by CPU, made when first used */
	GHashTable *sparse;	/* cpu -> struct dump, CPUs >= DENSE_CPUS */
	GHashTable *dumped;	/* tid -> 1: the threads whose stacks are dumped */
	struct dump cur;	/* the dump of the sample last noted, if any */
	bool cur_unreadable;	/* that sample's twin's record could not be read */
	__u64 chain[MAX_CHAIN + UNWIND_MAX + 2];
	struct unwind_result res;
	uint64_t counts[USERSTACK_OUTCOMES];
	uint64_t late;		/* dumps that came after their twins, it seems */
	uint64_t dumps;		/* dumps that came */
	const char *last_file;
};

static const char *const outcome_names[USERSTACK_OUTCOMES] = {
	[USERSTACK_SPLICED] = "repaired, then the kernel's frame-pointer chain",
	[USERSTACK_WALKED] = "repaired to the stack's first frame",
	[USERSTACK_CUT] = "repaired, the outer frames beyond the stack dump",
	[USERSTACK_NO_USER] = "no user stack",
	[USERSTACK_NOT_DUMPED] = "a thread whose stacks were not dumped",
	[USERSTACK_NO_DUMP] = "no stack dump",
	[USERSTACK_MISMATCH] = "a stack dump of another stack",
	[USERSTACK_UNREADABLE] = "a stack dump that cannot be read",
	[USERSTACK_STOP_CUT] = "a stack dump too small to reach a frame pointer",
	[USERSTACK_STOP_NO_MAP] = "code in no file (JIT or anonymous memory)",
	[USERSTACK_STOP_NO_FILE] = "a library that cannot be read or is not the one recorded",
	[USERSTACK_STOP_NO_CFI] = "code without unwind tables",
	[USERSTACK_STOP_BAD_CFI] = "an unwind rule that cannot be followed",
};

const char *userstack_outcome_name(enum userstack_outcome o)
{
	return o < USERSTACK_OUTCOMES ? outcome_names[o] : "?";
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

bool userstack_parse_tail(const uint8_t *p, size_t avail, uint64_t sample_type,
			  uint64_t regs_mask, uint32_t stack_user, struct unwind_regs *regs,
			  const uint8_t **dump, size_t *size)
{
	size_t at = 0;

	memset(regs, 0, sizeof(*regs));
	*dump = NULL;
	*size = 0;
	if (sample_type & PERF_SAMPLE_BRANCH_STACK)
		return false;
	if (sample_type & PERF_SAMPLE_REGS_USER) {
		uint64_t abi, values[64];
		size_t n = (size_t)__builtin_popcountll(regs_mask);

		if (avail < 8)
			return false;
		abi = u64_at(p);
		at = 8;
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			if ((avail - at) / 8 < n)
				return false;
			for (size_t i = 0; i < n; i++)
				values[i] = u64_at(p + at + 8 * i);
			at += 8 * n;
			/* a 32-bit process's registers are not unwound */
			if (abi == PERF_SAMPLE_REGS_ABI_64)
				(void)unwind_regs_from_perf(regs, regs_mask, values, n);
		}
	}
	if (sample_type & PERF_SAMPLE_STACK_USER) {
		uint64_t asked, dyn;

		if (avail - at < 8)
			return false;
		asked = u64_at(p + at);
		at += 8;
		if (asked == 0)
			return true;
		if (asked > stack_user || asked > avail - at || avail - at - asked < 8)
			return false;
		dyn = u64_at(p + at + asked);
		if (dyn > asked)
			return false;
		*dump = p + at;
		*size = (size_t)dyn;
	}
	return true;
}

bool userstack_has_dump(const struct perf_event_attr *attr)
{
	return attr && (attr->sample_type & PERF_SAMPLE_STACK_USER);
}

/*
 * The registers and dump of a sample, read from its record in perf's
 * memory: its RAW field follows its call chain there, as the record lays
 * them out, or perf's pointers are not into the record and nothing is read.
 */
static bool from_record(const struct perf_dlfilter_sample *ds, const struct perf_event_attr *attr,
			struct unwind_regs *regs, const uint8_t **dump, size_t *size)
{
	const uint64_t need = PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN;
	const uint8_t *raw = ds->raw_data;
	uint32_t raw_size;
	size_t avail;

	if ((attr->sample_type & need) != need || !raw || !ds->raw_callchain ||
	    ds->raw_callchain_nr > (1u << 20) ||
	    (const uint8_t *)(ds->raw_callchain + ds->raw_callchain_nr) + 4 != raw)
		return false;
	memcpy(&raw_size, raw - 4, 4);
	if (raw_size != ds->raw_size || (raw_size + 4) % 8)
		return false;
	/* what the fields can take at most (perf checked the record's size
	 * against the same layout before handing it over) */
	avail = 8 + 8 * (size_t)__builtin_popcountll(attr->sample_regs_user) + 16 +
		attr->sample_stack_user;
	return userstack_parse_tail(raw + raw_size, avail, attr->sample_type,
				    attr->sample_regs_user, attr->sample_stack_user, regs, dump,
				    size);
}

static struct dump *dump_of(struct userstack *us, int cpu)
{
	struct dump *d;

	if (cpu >= 0 && cpu < DENSE_CPUS) {
		if (!us->dense)
			us->dense = g_new0(struct dump *, DENSE_CPUS);
		if (!(d = us->dense[cpu]))
			d = us->dense[cpu] = g_new0(struct dump, 1);
		return d;
	}
	if (!(d = g_hash_table_lookup(us->sparse, GINT_TO_POINTER(cpu)))) {
		d = g_new0(struct dump, 1);
		g_hash_table_insert(us->sparse, GINT_TO_POINTER(cpu), d);
	}
	return d;
}

static void dump_free(gpointer p)
{
	struct dump *d = p;

	if (d) {
		g_free(d->bytes);
		g_free(d);
	}
}

struct userstack *userstack_new(unwind_locate_fn *locate, void *data)
{
	struct userstack *us = g_new0(struct userstack, 1);

	us->u = unwinder_new(locate, data);
	us->sparse = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, dump_free);
	us->dumped = g_hash_table_new(g_direct_hash, g_direct_equal);
	us->twins = true;
	return us;
}

void userstack_free(struct userstack *us)
{
	if (!us)
		return;
	if (us->dense)
		for (int i = 0; i < DENSE_CPUS; i++)
			dump_free(us->dense[i]);
	g_free(us->dense);
	g_hash_table_destroy(us->sparse);
	g_hash_table_destroy(us->dumped);
	g_free(us->cur.bytes);
	unwinder_free(us->u);
	g_free(us);
}

void userstack_set_twins(struct userstack *us, bool twins)
{
	us->twins = twins;
}

bool userstack_note(struct userstack *us, const struct perf_dlfilter_sample *ds,
		    const struct perf_event_attr *attr)
{
	struct dump *d, swap;
	const uint8_t *bytes;
	size_t size;
	bool is_dump = userstack_has_dump(attr);

	if (is_dump && !us->twins)
		return false;
	d = dump_of(us, ds->cpu);
	if (is_dump) {
		/* (most dumps are of the thread the CPU's last one was of) */
		if (ds->tid != d->tid || !d->seen)
			g_hash_table_add(us->dumped, GINT_TO_POINTER(ds->tid));
		d->seen = true;
		us->dumps++;
		if (d->last_tid == ds->tid && ds->time >= d->last_time &&
		    ds->time - d->last_time <= LATE_NS)
			us->late++;
		/* kept until its twin, the CPU's next sample */
		d->valid = true;
		d->cpu = ds->cpu;
		d->pid = ds->pid;
		d->tid = ds->tid;
		d->time = ds->time;
		d->size = 0;
		if (!from_record(ds, attr, &d->regs, &bytes, &size)) {
			d->regs.known = 0;
			d->size = SIZE_MAX;	/* unreadable */
			return true;
		}
		if (size > d->cap) {
			g_free(d->bytes);
			d->cap = size;
			d->bytes = g_malloc(size);
		}
		if (size)
			memcpy(d->bytes, bytes, size);
		d->size = size;
		return true;
	}
	us->cur.valid = false;
	d->last_tid = ds->tid;
	d->last_time = ds->time;
	if (d->valid && d->tid == ds->tid && ds->time >= d->time && ds->time - d->time <= TWIN_NS) {
		/* the dump is this sample's: take it (the buffers change hands) */
		swap = us->cur;
		us->cur = *d;
		*d = swap;
		d->last_tid = ds->tid;
		d->last_time = ds->time;
	}
	d->valid = false;
	return false;
}

/* The index of the chain's PERF_CONTEXT_USER marker, or nr. */
static size_t user_mark(const __u64 *c, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (c[i] == PERF_CONTEXT_USER)
			return i;
	return nr;
}

const struct perf_dlfilter_sample *userstack_repair(struct userstack *us,
						    const struct perf_dlfilter_sample *ds,
						    const struct perf_event_attr *attr,
						    struct perf_dlfilter_sample *copy,
						    enum userstack_outcome *why)
{
	struct unwind_result *res = &us->res;
	const __u64 *c = ds->raw_callchain;
	size_t nr = c ? (size_t)ds->raw_callchain_nr : 0, mark, n = 0, user_n;
	const struct unwind_regs *regs;
	const uint8_t *bytes;
	size_t size;
	struct unwind_regs own;
	int pid;
	uint64_t time;
	bool self = userstack_has_dump(attr);

	if (self) {
		/* a recording of dumps alone: the sample's own */
		if (!from_record(ds, attr, &own, &bytes, &size)) {
			*why = USERSTACK_UNREADABLE;
			goto keep;
		}
		regs = &own;
		pid = ds->pid;
		time = ds->time;
	} else {
		if (!us->cur.valid || us->cur.cpu != ds->cpu || us->cur.tid != ds->tid ||
		    us->cur.time > ds->time || ds->time - us->cur.time > TWIN_NS) {
			*why = g_hash_table_contains(us->dumped, GINT_TO_POINTER(ds->tid))
			       ? USERSTACK_NO_DUMP : USERSTACK_NOT_DUMPED;
			goto keep;
		}
		if (us->cur.size == SIZE_MAX) {
			*why = USERSTACK_UNREADABLE;
			goto keep;
		}
		regs = &us->cur.regs;
		bytes = us->cur.bytes;
		size = us->cur.size;
		pid = us->cur.pid;
		time = us->cur.time;
	}
	mark = user_mark(c, nr);
	user_n = mark < nr ? nr - mark - 1 : 0;
	if (!(regs->known >> UNWIND_RIP & 1) || (!self && !user_n)) {
		*why = USERSTACK_NO_USER;
		goto keep;
	}
	if (mark > MAX_CHAIN) {
		*why = USERSTACK_MISMATCH;
		goto keep;
	}
	/* the twin's chain starts where its dump's registers are */
	if (!self && c[mark + 1] != regs->val[UNWIND_RIP]) {
		*why = USERSTACK_MISMATCH;
		goto keep;
	}
	unwind_cfi(us->u, pid, time, regs, bytes, size, res);
	switch (res->end) {
	case UNWIND_FP: {
		uint64_t bp = regs->val[UNWIND_RBP], sp = regs->val[UNWIND_RSP], ra;
		bool kernel_walked = !self && (regs->known >> UNWIND_RBP & 1) && res->fp == bp &&
				     user_n >= 2;

		if (kernel_walked) {
			/* the kernel walked from this very record: check its
			 * first step against the dump where it holds it */
			if (bp >= sp && bp - sp <= size && size - (bp - sp) >= 16) {
				memcpy(&ra, bytes + (bp - sp) + 8, 8);
				if (ra != c[mark + 2]) {
					*why = USERSTACK_MISMATCH;
					goto keep;
				}
			}
			*why = USERSTACK_SPLICED;
			break;
		}
		unwind_fp(bytes, size, sp, res);
		*why = res->end == UNWIND_CUT ? USERSTACK_CUT : USERSTACK_WALKED;
		break;
	}
	case UNWIND_ROOT:
		*why = USERSTACK_WALKED;
		break;
	case UNWIND_CUT:
		*why = USERSTACK_STOP_CUT;
		break;
	case UNWIND_NO_MAP:
		*why = USERSTACK_STOP_NO_MAP;
		break;
	case UNWIND_NO_FILE:
		*why = USERSTACK_STOP_NO_FILE;
		us->last_file = res->path;
		break;
	case UNWIND_NO_CFI:
		*why = USERSTACK_STOP_NO_CFI;
		us->last_file = res->path;
		break;
	default:
		*why = USERSTACK_STOP_BAD_CFI;
		break;
	}
	/* a walk stopped short keeps the kernel's chain, but for a dump
	 * alone, which has no other */
	if (!userstack_repaired(*why) && !self)
		goto keep;
	memcpy(us->chain, c, mark * sizeof(*c));
	n = mark;
	us->chain[n++] = PERF_CONTEXT_USER;
	memcpy(us->chain + n, res->ips, res->n * sizeof(*c));
	n += res->n;
	if (*why == USERSTACK_SPLICED) {
		/* the kernel's chain past the frame's record: its callers */
		size_t more = MIN(user_n - 1, (size_t)MAX_CHAIN);

		memcpy(us->chain + n, c + mark + 2, more * sizeof(*c));
		n += more;
	}
	*copy = *ds;
	copy->raw_callchain = us->chain;
	copy->raw_callchain_nr = n;
	us->counts[*why]++;
	return copy;
keep:
	us->counts[*why]++;
	return ds;
}

void userstack_counts(const struct userstack *us, uint64_t *n)
{
	memcpy(n, us->counts, sizeof(us->counts));
}

uint64_t userstack_late(const struct userstack *us)
{
	/* a thread back on its CPU and out again within LATE_NS looks the
	 * same: only most dumps late says the recording's order is */
	return us->late * 2 > us->dumps ? us->late : 0;
}

const char *userstack_last_file(const struct userstack *us)
{
	return us->last_file;
}

const struct unwinder *userstack_unwinder(const struct userstack *us)
{
	return us->u;
}
