#include "unwind.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/*
 * The registers a rule restores: the callee-saved ones of the x86-64 ABI
 * (rbx, rbp, r12-r15) and the return address.  Caller-saved registers
 * are not known in a caller's frame.
 */
static const uint8_t saved_regs[] = { 3, UNWIND_RBP, 12, 13, 14, 15, UNWIND_RIP };
#define NSAVED G_N_ELEMENTS(saved_regs)
#define SAVED_RBP 1
#define SAVED_RA 6

/* How a register of the caller is found (see dwarf_frame_register()). */
enum reg_kind {
	REG_SAME,	/* the callee's value */
	REG_UNDEF,	/* unknown */
	REG_AT,		/* saved at CFA + off */
	REG_VAL,	/* is CFA + off */
	REG_IN,		/* is the callee's register reg */
	REG_AT_EXPR,	/* saved at the address the expression gives */
	REG_VAL_EXPR,	/* is what the expression gives */
};

struct reg_rule {
	uint8_t kind, reg;
	int64_t off;
	const Dwarf_Op *ops;	/* the expression, kept by libdw's CFI */
	uint32_t nops;
};

/* One instruction address's rules, compiled from its CFI. */
struct rule {
	bool cfa_expr;		/* else cfa_reg + cfa_off */
	bool signal;		/* a signal frame: its caller's pc is no return address */
	bool fp_frame;		/* CFA = rbp + 16, rbp at CFA - 16, ra at CFA - 8 */
	uint8_t cfa_reg;
	int64_t cfa_off;
	const Dwarf_Op *cfa_ops;
	uint32_t cfa_nops;
	struct reg_rule saved[NSAVED];
};

struct load {
	uint64_t offset, filesz, vaddr;
};

/* A file, opened on first use. */
struct ufile {
	uint32_t number;
	bool ok;		/* else end says why not */
	enum unwind_end end;
	char *path;
	int fd;
	Elf *elf;
	Dwarf_CFI *cfi;
	struct load *loads;
	size_t nloads;
};

/* The rule cache: open addressing on (file number, address in the file). */
struct rule_slot {
	uint64_t vaddr;
	uint32_t file;		/* number + 1; 0: empty */
	uint32_t rule;		/* index in rules, or NO_RULE */
};
#define NO_RULE UINT32_MAX

struct unwinder {
	unwind_locate_fn *locate;
	void *data;
	GHashTable *files;	/* number -> struct ufile */
	struct ufile *last_file;
	struct rule_slot *slots;
	size_t nslots, nused;	/* a power of two */
	GArray *rules;		/* struct rule */
	uint64_t nfiles;
};

static const char *const end_names[UNWIND_ENDS] = {
	[UNWIND_FP] = "a frame with a frame pointer",
	[UNWIND_ROOT] = "the stack's first frame",
	[UNWIND_CUT] = "the end of the stack dump",
	[UNWIND_NO_MAP] = "code in no file (JIT or anonymous memory)",
	[UNWIND_NO_FILE] = "a file that cannot be read or is not the one recorded",
	[UNWIND_NO_CFI] = "code without unwind tables",
	[UNWIND_BAD_CFI] = "an unwind rule that cannot be followed",
};

const char *unwind_end_name(enum unwind_end end)
{
	return end < UNWIND_ENDS ? end_names[end] : "?";
}

bool unwind_regs_from_perf(struct unwind_regs *r, uint64_t mask, const uint64_t *values,
			   size_t n)
{
#if defined(__x86_64__)
	/* perf's x86 register numbers (asm/perf_regs.h) -> DWARF's */
	static const int8_t dwarf_of[64] = {
		[0] = 0, [1] = 3, [2] = 2, [3] = 1, [4] = 4, [5] = 5, [6] = 6, [7] = 7,
		[8] = 16, [9] = -1, [10] = -1, [11] = -1, [12] = -1, [13] = -1, [14] = -1,
		[15] = -1, [16] = 8, [17] = 9, [18] = 10, [19] = 11, [20] = 12, [21] = 13,
		[22] = 14, [23] = 15,
	};
	size_t k = 0;

	memset(r, 0, sizeof(*r));
	if ((size_t)__builtin_popcountll(mask) != n)
		return false;
	for (int bit = 0; bit < 64; bit++) {
		if (!(mask >> bit & 1))
			continue;
		if (bit < 24 && dwarf_of[bit] >= 0) {
			r->val[dwarf_of[bit]] = values[k];
			r->known |= 1u << dwarf_of[bit];
		}
		k++;
	}
	return true;
#else
	memset(r, 0, sizeof(*r));
	return false;
#endif
}

/* --- files --- */

static void ufile_free(gpointer p)
{
	struct ufile *f = p;

	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	g_free(f->loads);
	g_free(f->path);
	g_free(f);
}

/* Whether the file open on f->fd is the one the recording mapped. */
static bool same_file(struct ufile *f, const struct unwind_where *w, const struct stat *st)
{
	uint32_t maj, min;
	uint64_t ino;
	const void *id;
	ssize_t len;

	switch (w->id_kind) {
	case 'i':
		memcpy(&maj, w->id, 4);
		memcpy(&min, w->id + 4, 4);
		memcpy(&ino, w->id + 8, 8);
		return major(st->st_dev) == maj && minor(st->st_dev) == min &&
		       (uint64_t)st->st_ino == ino;
	case 'b':
		len = dwelf_elf_gnu_build_id(f->elf, &id);
		return len > 0 && len <= 20 && len == w->id[0] &&
		       memcmp(id, w->id + 4, (size_t)len) == 0;
	default:
		return true;
	}
}

static void ufile_open(struct ufile *f, const struct unwind_where *w)
{
	struct stat st;
	GElf_Ehdr eh;
	size_t nph;

	f->end = UNWIND_NO_FILE;
	/* not a FIFO's open to hang on, nor a device's to read */
	f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (f->fd < 0 || fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	/* read, not mapped: a file cut meanwhile is an error, not a SIGBUS */
	f->elf = elf_begin(f->fd, ELF_C_READ, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    !same_file(f, w, &st) || elf_getphdrnum(f->elf, &nph) != 0 || nph > 4096)
		return;
	f->loads = g_new0(struct load, nph ? nph : 1);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = (struct load){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	f->end = UNWIND_NO_CFI;
	f->cfi = dwarf_getcfi_elf(f->elf);
	f->ok = f->cfi != NULL;
}

static struct ufile *file_of(struct unwinder *u, const struct unwind_where *w)
{
	struct ufile *f = u->last_file;

	if (f && f->number == w->file)
		return f;
	f = g_hash_table_lookup(u->files, GUINT_TO_POINTER(w->file));
	if (!f) {
		f = g_new0(struct ufile, 1);
		f->number = w->file;
		f->fd = -1;
		f->path = g_strdup(w->path ? w->path : "");
		ufile_open(f, w);
		g_hash_table_insert(u->files, GUINT_TO_POINTER(w->file), f);
		u->nfiles++;
	}
	u->last_file = f;
	return f;
}

/* The address in the ELF file's own space of a file offset. */
static bool vaddr_of(const struct ufile *f, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const struct load *l = &f->loads[i];

		if (offset >= l->offset && offset - l->offset < l->filesz) {
			*vaddr = offset - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

/* --- rules --- */

static bool compile_reg(Dwarf_Frame *frame, int regno, struct reg_rule *rr)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	memset(rr, 0, sizeof(*rr));
	if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
		return false;
	if (nops == 0) {
		rr->kind = ops ? REG_UNDEF : REG_SAME;
		return true;
	}
	if (ops == mem) {
		bool value = ops[nops - 1].atom == DW_OP_stack_value;
		size_t n = nops - value;

		if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa &&
		    (n == 1 || (n == 2 && ops[1].atom == DW_OP_plus_uconst))) {
			rr->kind = value ? REG_VAL : REG_AT;
			rr->off = n == 2 ? (int64_t)ops[1].number : 0;
			return true;
		}
		if (value && n == 1 && ops[0].atom == DW_OP_bregx && ops[0].number2 == 0 &&
		    ops[0].number < UNWIND_NREGS) {
			rr->kind = REG_IN;
			rr->reg = (uint8_t)ops[0].number;
			return true;
		}
	}
	rr->kind = ops[nops - 1].atom == DW_OP_stack_value ? REG_VAL_EXPR : REG_AT_EXPR;
	rr->ops = ops;
	rr->nops = (uint32_t)nops;
	return true;
}

static bool compile(Dwarf_CFI *cfi, uint64_t vaddr, struct rule *ru)
{
	Dwarf_Frame *frame;
	Dwarf_Op *ops;
	size_t nops;
	Dwarf_Addr start, end;
	bool signal = false, ok = false;
	int ra;

	memset(ru, 0, sizeof(*ru));
	if (dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0)
		return false;
	ra = dwarf_frame_info(frame, &start, &end, &signal);
	if (ra != UNWIND_RIP || dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0)
		goto out;
	ru->signal = signal;
	if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < UNWIND_NREGS) {
		ru->cfa_reg = (uint8_t)ops[0].number;
		ru->cfa_off = (int64_t)ops[0].number2;
	} else {
		ru->cfa_expr = true;
		ru->cfa_ops = ops;
		ru->cfa_nops = (uint32_t)nops;
	}
	for (size_t i = 0; i < NSAVED; i++)
		if (!compile_reg(frame, saved_regs[i], &ru->saved[i]))
			goto out;
	ru->fp_frame = !ru->cfa_expr && ru->cfa_reg == UNWIND_RBP && ru->cfa_off == 16 &&
		       ru->saved[SAVED_RBP].kind == REG_AT && ru->saved[SAVED_RBP].off == -16 &&
		       ru->saved[SAVED_RA].kind == REG_AT && ru->saved[SAVED_RA].off == -8;
	ok = true;
out:
	free(frame);
	return ok;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static void grow_rules(struct unwinder *u)
{
	size_t n = u->nslots ? u->nslots * 2 : 1024;
	struct rule_slot *s = g_new0(struct rule_slot, n);

	for (size_t i = 0; i < u->nslots; i++) {
		const struct rule_slot *o = &u->slots[i];
		size_t j;

		if (!o->file)
			continue;
		j = hash64(o->vaddr * 31 + o->file) & (n - 1);
		while (s[j].file)
			j = (j + 1) & (n - 1);
		s[j] = *o;
	}
	g_free(u->slots);
	u->slots = s;
	u->nslots = n;
}

/* The rule of vaddr in f, compiled once (NULL: the file has none). */
static const struct rule *rule_of(struct unwinder *u, const struct ufile *f, uint64_t vaddr)
{
	size_t j;
	struct rule ru;
	uint32_t idx = NO_RULE;

	if (u->nused * 2 >= u->nslots)
		grow_rules(u);
	j = hash64(vaddr * 31 + f->number + 1) & (u->nslots - 1);
	for (;; j = (j + 1) & (u->nslots - 1)) {
		struct rule_slot *s = &u->slots[j];

		if (!s->file)
			break;
		if (s->file == f->number + 1 && s->vaddr == vaddr)
			return s->rule == NO_RULE ? NULL
				: &g_array_index(u->rules, struct rule, s->rule);
	}
	if (compile(f->cfi, vaddr, &ru)) {
		idx = u->rules->len;
		g_array_append_val(u->rules, ru);
	}
	u->slots[j] = (struct rule_slot){ vaddr, f->number + 1, idx };
	u->nused++;
	return idx == NO_RULE ? NULL : &g_array_index(u->rules, struct rule, idx);
}

/* --- the walk --- */

struct frame_state {
	const uint8_t *dump;
	uint64_t sp0;
	size_t size;
	uint64_t *used;		/* the most bytes of the dump read */
};

static bool read_u64(const struct frame_state *fs, uint64_t addr, uint64_t *v)
{
	uint64_t at = addr - fs->sp0;

	if (addr < fs->sp0 || at > fs->size || fs->size - at < 8)
		return false;
	memcpy(v, fs->dump + at, 8);
	if (at + 8 > *fs->used)
		*fs->used = at + 8;
	return true;
}

#define EXPR_STACK 16

/*
 * Evaluates a CFI expression with the callee's registers r (and the CFA,
 * when has_cfa): the top of the stack when it ends, DW_OP_stack_value
 * aside.  False when it needs what is unknown (a register, memory beyond
 * the dump) or uses an operation not followed here (branches, TLS, calls).
 */
static bool eval(const Dwarf_Op *ops, uint32_t nops, const struct unwind_regs *r,
		 bool has_cfa, uint64_t cfa, const struct frame_state *fs, uint64_t *out)
{
	uint64_t st[EXPR_STACK], a, b;
	int n = 0;

#define PUSH(v) do { if (n == EXPR_STACK) return false; st[n++] = (v); } while (0)
#define POP(v) do { if (n == 0) return false; (v) = st[--n]; } while (0)
	for (uint32_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		unsigned atom = op->atom;

		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH(atom - DW_OP_lit0);
			continue;
		}
		if ((atom >= DW_OP_breg0 && atom <= DW_OP_breg31) || atom == DW_OP_bregx) {
			unsigned reg = atom == DW_OP_bregx ? (unsigned)op->number : atom - DW_OP_breg0;
			uint64_t off = atom == DW_OP_bregx ? op->number2 : op->number;

			if (reg >= UNWIND_NREGS || !(r->known >> reg & 1))
				return false;
			PUSH(r->val[reg] + off);
			continue;
		}
		switch (atom) {
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
		case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_call_frame_cfa:
			if (!has_cfa)
				return false;
			PUSH(cfa);
			break;
		case DW_OP_dup:
			POP(a);
			PUSH(a);
			PUSH(a);
			break;
		case DW_OP_drop:
			POP(a);
			break;
		case DW_OP_over:
			if (n < 2)
				return false;
			a = st[n - 2];
			PUSH(a);
			break;
		case DW_OP_swap:
			POP(a);
			POP(b);
			PUSH(a);
			PUSH(b);
			break;
		case DW_OP_deref:
			POP(a);
			if (!read_u64(fs, a, &b))
				return false;
			PUSH(b);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + op->number);
			break;
		case DW_OP_neg:
			POP(a);
			PUSH(-a);
			break;
		case DW_OP_not:
			POP(a);
			PUSH(~a);
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and: case DW_OP_or:
		case DW_OP_xor: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: case DW_OP_eq:
		case DW_OP_ne: case DW_OP_lt: case DW_OP_le: case DW_OP_gt: case DW_OP_ge:
			POP(b);
			POP(a);
			switch (atom) {
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mul: a *= b; break;
			case DW_OP_and: a &= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra:
				a = b < 64 ? (uint64_t)((int64_t)a >> b) : (uint64_t)((int64_t)a >> 63);
				break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_ne: a = a != b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			}
			PUSH(a);
			break;
		case DW_OP_stack_value:
			if (i + 1 != nops)
				return false;
			break;
		case DW_OP_nop:
			break;
		default:
			return false;
		}
	}
#undef PUSH
#undef POP
	if (n == 0)
		return false;
	*out = st[n - 1];
	return true;
}

/* The caller's value of a saved register, by its rule; false: unknown. */
static bool restore(const struct reg_rule *rr, unsigned regno, const struct unwind_regs *r,
		    uint64_t cfa, const struct frame_state *fs, uint64_t *v)
{
	uint64_t a;

	switch (rr->kind) {
	case REG_SAME:
		*v = r->val[regno];
		return r->known >> regno & 1;
	case REG_AT:
		return read_u64(fs, cfa + (uint64_t)rr->off, v);
	case REG_VAL:
		*v = cfa + (uint64_t)rr->off;
		return true;
	case REG_IN:
		*v = r->val[rr->reg];
		return r->known >> rr->reg & 1;
	case REG_AT_EXPR:
		return eval(rr->ops, rr->nops, r, true, cfa, fs, &a) && read_u64(fs, a, v);
	case REG_VAL_EXPR:
		return eval(rr->ops, rr->nops, r, true, cfa, fs, v);
	default:
		return false;
	}
}

void unwind_cfi(struct unwinder *u, int pid, uint64_t time, const struct unwind_regs *r,
		const uint8_t *dump, size_t size, struct unwind_result *res)
{
	const uint32_t need = 1u << UNWIND_RIP | 1u << UNWIND_RSP;
	struct frame_state fs = { dump, r->val[UNWIND_RSP], size, &res->used };
	struct unwind_regs cur = *r, next;
	bool signal = false;

	res->n = 0;
	res->used = 0;
	res->fp = 0;
	res->path = NULL;
	res->end = UNWIND_BAD_CFI;
#if !defined(__x86_64__)
	return;
#endif
	if ((cur.known & need) != need)
		return;
	res->ips[res->n++] = cur.val[UNWIND_RIP];
	for (;;) {
		uint64_t pc = cur.val[UNWIND_RIP], vaddr, cfa, ra;
		/* a return address is the instruction after the call, maybe in
		 * the next function: its call is the byte before */
		uint64_t at = res->n == 1 || signal ? pc : pc - 1;
		struct unwind_where w = { 0 };
		const struct ufile *f;
		const struct rule *ru;

		if (!u->locate(u->data, pid, at, time, &w)) {
			res->end = UNWIND_NO_MAP;
			return;
		}
		f = file_of(u, &w);
		if (!f->ok) {
			res->end = f->end;
			res->path = f->path;
			return;
		}
		if (!vaddr_of(f, w.offset, &vaddr) || !(ru = rule_of(u, f, vaddr))) {
			res->end = UNWIND_NO_CFI;
			res->path = f->path;
			return;
		}
		if (ru->fp_frame && (cur.known >> UNWIND_RBP & 1)) {
			res->fp = cur.val[UNWIND_RBP];
			res->end = UNWIND_FP;
			return;
		}
		if (ru->cfa_expr) {
			if (!eval(ru->cfa_ops, ru->cfa_nops, &cur, false, 0, &fs, &cfa))
				return;
		} else {
			if (!(cur.known >> ru->cfa_reg & 1))
				return;
			cfa = cur.val[ru->cfa_reg] + (uint64_t)ru->cfa_off;
		}
		/* the caller's frame lies above its callee's */
		if (cfa <= cur.val[UNWIND_RSP])
			return;
		if (ru->saved[SAVED_RA].kind == REG_UNDEF) {
			res->end = UNWIND_ROOT;
			return;
		}
		if (!restore(&ru->saved[SAVED_RA], UNWIND_RIP, &cur, cfa, &fs, &ra)) {
			/* the return address is beyond the dump, or a rule's
			 * register is unknown */
			res->end = ru->saved[SAVED_RA].kind == REG_AT ? UNWIND_CUT : UNWIND_BAD_CFI;
			return;
		}
		if (ra == 0) {
			res->end = UNWIND_ROOT;
			return;
		}
		memset(&next, 0, sizeof(next));
		for (size_t i = 0; i + 1 < NSAVED; i++) {
			unsigned reg = saved_regs[i];

			if (restore(&ru->saved[i], reg, &cur, cfa, &fs, &next.val[reg]))
				next.known |= 1u << reg;
		}
		next.val[UNWIND_RSP] = cfa;
		next.val[UNWIND_RIP] = ra;
		next.known |= need;
		if (res->n == UNWIND_MAX) {
			res->end = UNWIND_CUT;
			return;
		}
		res->ips[res->n++] = ra;
		signal = ru->signal;
		cur = next;
	}
}

void unwind_fp(const uint8_t *dump, size_t size, uint64_t sp, struct unwind_result *res)
{
	struct frame_state fs = { dump, sp, size, &res->used };
	uint64_t fp = res->fp, next, ra;

	for (;;) {
		/* the kernel stops where it cannot read; below the stack
		 * pointer or misaligned, it is no frame of this stack */
		if (fp < sp || (fp & 7)) {
			res->end = UNWIND_ROOT;
			return;
		}
		if (!read_u64(&fs, fp, &next) || !read_u64(&fs, fp + 8, &ra)) {
			res->end = UNWIND_CUT;
			return;
		}
		if (res->n == UNWIND_MAX) {
			res->end = UNWIND_CUT;
			return;
		}
		res->ips[res->n++] = ra;
		/* each record lies above the one before, or the walk would
		 * loop (the kernel's goes on to its limit) */
		if (next <= fp) {
			res->end = UNWIND_ROOT;
			return;
		}
		fp = next;
	}
}

struct unwinder *unwinder_new(unwind_locate_fn *locate, void *data)
{
	struct unwinder *u = g_new0(struct unwinder, 1);

	elf_version(EV_CURRENT);
	u->locate = locate;
	u->data = data;
	u->files = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, ufile_free);
	u->rules = g_array_new(FALSE, FALSE, sizeof(struct rule));
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	g_hash_table_destroy(u->files);
	g_array_free(u->rules, TRUE);
	g_free(u->slots);
	g_free(u);
}

int unwind_keeps_fp(struct unwinder *u, int pid, uint64_t time, uint64_t addr,
		    const char **path)
{
	struct unwind_where w = { 0 };
	const struct ufile *f;
	const struct rule *ru;
	uint64_t vaddr;

	*path = NULL;
#if !defined(__x86_64__)
	return -1;
#endif
	if (!u->locate(u->data, pid, addr, time, &w))
		return -1;
	f = file_of(u, &w);
	*path = f->path;
	if (!f->ok || !vaddr_of(f, w.offset, &vaddr) || !(ru = rule_of(u, f, vaddr)))
		return -1;
	return ru->fp_frame;
}

void unwinder_stats(const struct unwinder *u, uint64_t *files, uint64_t *rules)
{
	*files = u->nfiles;
	*rules = u->rules->len;
}
