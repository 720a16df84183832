#include "collapse/inline.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * One open DSO.  dwfl is NULL when the file could not be opened or is not
 * an executable or shared object: the negative answer is cached too, so a
 * missing file costs one open() however many frames name it.
 */
struct dso_entry {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GArray *loads;		/* struct load: the PT_LOAD segments */
};

/* A PT_LOAD segment: file bytes [offset, offset + size) sit at vaddr. */
struct load {
	uint64_t offset, size, vaddr;
};

/* A resolved address; the result table's key. */
struct addr_key {
	const struct dso_entry *dso;
	uint64_t pc;
};

struct resolver {
	struct inline_resolver pub;	/* first: inline_resolver_free() casts */
	GHashTable *dsos;	/* path (owned) -> struct dso_entry * (owned) */
	GHashTable *results;	/* struct addr_key * (owned) -> char * or NULL */
	GHashTable *symbols;	/* the same, for inline_resolver_symbol() */
	GString *path;		/* the last frame's DSO, NUL-terminated */
	struct dso_entry *last;	/* its entry, or NULL */
	GString *chain;		/* scratch: the names being built */
};

static char *debuginfo_path;	/* NULL: the standard search path */

/*
 * Offline use: addresses are the file's own (its p_vaddr), the ones
 * addr2line takes; file_to_vaddr() maps perf's file offsets to them.
 * Separate debug files are found by build-id and .gnu_debuglink (and
 * through debuginfod if DEBUGINFOD_URLS is set: fp-collapse unsets it, so
 * that a fold never waits on the network).
 */
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static guint addr_key_hash(gconstpointer p)
{
	const struct addr_key *k = p;

	return g_direct_hash(k->dso) ^ g_int64_hash(&k->pc);
}

static gboolean addr_key_equal(gconstpointer a, gconstpointer b)
{
	const struct addr_key *x = a, *y = b;

	return x->dso == y->dso && x->pc == y->pc;
}

static void dso_entry_free(gpointer p)
{
	struct dso_entry *d = p;

	if (d->dwfl)
		dwfl_end(d->dwfl);
	if (d->loads)
		g_array_free(d->loads, TRUE);
	g_free(d);
}

/*
 * The DSOs stackcollapse-perf.pl leaves alone: anything matching its
 * /(perf-\d+.map|kernel\.|\[[^\]]+\])/, i.e. JIT maps, the kernel and
 * "[...]" pseudo-DSOs such as "[vdso]" and "[unknown]".
 */
static bool dso_skipped(const char *dso)
{
	const char *p;

	if (strstr(dso, "kernel."))
		return true;
	for (p = dso; (p = strchr(p, '[')); p++)
		if (p[1] && p[1] != ']' && strchr(p + 2, ']'))
			return true;
	for (p = dso; (p = strstr(p, "perf-")); p++) {
		const char *q = p + 5;
		if (!g_ascii_isdigit(*q))
			continue;
		while (g_ascii_isdigit(*q))
			q++;
		if (*q && strncmp(q + 1, "map", 3) == 0)
			return true;
	}
	return false;
}

/*
 * The entry for path, opening the file the first time it is seen (or
 * recording that it is skipped or cannot be opened).
 */
/*
 * Opens path if it is a regular file, else returns -1.  The path comes
 * from the input: a FIFO there would block open() and a read forever, and
 * a device could be anything, so the file is opened without waiting and
 * checked before anything reads it.
 */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static struct dso_entry *dso_get(struct resolver *r, const char *path)
{
	struct dso_entry *d = g_hash_table_lookup(r->dsos, path);
	GElf_Addr bias;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t nph;
	int fd;

	if (d)
		return d;
	d = g_new0(struct dso_entry, 1);
	g_hash_table_insert(r->dsos, g_strdup(path), d);
	if (dso_skipped(path) || (fd = open_regular(path)) < 0)
		return d;
	if (!(d->dwfl = dwfl_begin(&callbacks))) {
		close(fd);
		return d;
	}
	/* base 0 with add_p_vaddr: the module sits at its own p_vaddr; on
	 * success libdwfl owns fd */
	d->mod = dwfl_report_elf(d->dwfl, path, path, fd, 0, true);
	if (!d->mod)
		close(fd);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (d->mod && (elf = dwfl_module_getelf(d->mod, &bias)) &&
	    gelf_getehdr(elf, &ehdr) &&
	    (ehdr.e_type == ET_EXEC || ehdr.e_type == ET_DYN) &&
	    elf_getphdrnum(elf, &nph) == 0) {
		d->loads = g_array_new(FALSE, FALSE, sizeof(struct load));
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				struct load l = { ph.p_offset, ph.p_filesz, ph.p_vaddr + bias };
				g_array_append_val(d->loads, l);
			}
		}
		return d;
	}
	dwfl_end(d->dwfl);
	d->dwfl = NULL;
	d->mod = NULL;
	return d;
}

/* Parses perf's hex address (no "0x"); false if it is not one. */
static bool parse_pc(const struct fk_str *s, uint64_t *pc)
{
	uint64_t v = 0;

	if (s->len == 0 || s->len > 16)
		return false;
	for (size_t i = 0; i < s->len; i++) {
		int d = g_ascii_xdigit_value(s->s[i]);
		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	*pc = v;
	return true;
}

/*
 * The name addr2line prints for a function DIE: its linkage name when it
 * has one (following DW_AT_abstract_origin and DW_AT_specification, as for
 * inlined instances and out-of-class definitions), else DW_AT_name, and
 * *linkage says which.
 */
static const char *die_name(Dwarf_Die *die, bool *linkage)
{
	Dwarf_Attribute a;
	const char *s;

	*linkage = true;
	if ((s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a))))
		return s;
	if ((s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))))
		return s;
	*linkage = false;
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/*
 * Languages whose DW_AT_name is the symbol's name.  For the others (C++
 * and the like) addr2line distrusts a bare DW_AT_name such as "operator()"
 * of a lambda and names the innermost function after the ELF symbol that
 * contains the address instead.
 */
static bool name_is_symbol(int lang)
{
	switch (lang) {
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_C99: case DW_LANG_C11:
	case DW_LANG_ObjC: case DW_LANG_UPC: case DW_LANG_Cobol74:
	case DW_LANG_Cobol85: case DW_LANG_Fortran77: case DW_LANG_Pascal83:
	case DW_LANG_Mips_Assembler:
		return true;
	default:
		return false;
	}
}

/* Appends name demangled as `addr2line -C` does, or "??" when unknown. */
static void append_name(GString *out, const char *name)
{
	char *d;

	if (!name || !*name) {
		g_string_append(out, "??");
		return;
	}
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	g_string_append(out, d ? d : name);
	free(d);
}

/* Appends ":FILE:LINE" as `addr2line -s` prints it ("??", "?" if unknown). */
static void append_place(GString *out, const char *file, int line)
{
	const char *slash = file ? strrchr(file, '/') : NULL;

	g_string_append_c(out, ':');
	g_string_append(out, !file ? "??" : slash ? slash + 1 : file);
	if (line > 0)
		g_string_append_printf(out, ":%d", line);
	else
		g_string_append(out, ":?");
}

static bool is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* One function of an inline chain, innermost first. */
struct chain_entry {
	const char *name;
	const char *file;
	int line;
};

/*
 * Fills *out with the chain at pc, innermost first, from the DIEs; returns
 * the number of entries (0 when no function DIE covers pc).  The innermost
 * place comes from the line table, each caller's from the call site the
 * inlined instance inside it records.
 */
static size_t die_chain(Dwfl_Module *mod, uint64_t pc, GArray *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
	Dwarf_Die *scopes = NULL, *chain = NULL;
	Dwarf_Files *files = NULL;
	Dwfl_Line *line;
	const char *file = NULL;
	int lineno = 0, n, m, i;

	g_array_set_size(out, 0);
	if (!cu)
		return 0;
	if ((line = dwfl_module_getsrc(mod, pc)))
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	for (i = 0; i < n && !is_function(&scopes[i]); i++)
		;
	/*
	 * Past an inlined instance dwarf_getscopes() follows the lexical
	 * scopes of its abstract definition; the callers are the DIEs that
	 * physically contain the instance, as eu-addr2line -i walks them.
	 */
	m = i < n ? dwarf_getscopes_die(&scopes[i], &chain) : 0;
	(void)dwarf_getsrcfiles(cu, &files, NULL);
	for (int j = 0; j < m; j++) {
		Dwarf_Die *die = &chain[j];
		struct chain_entry e;
		Dwarf_Attribute a;
		Dwarf_Word w;

		bool linkage;

		if (!is_function(die))
			continue;
		e = (struct chain_entry){ .name = die_name(die, &linkage), .file = file, .line = lineno };
		if (out->len == 0 && !linkage && !name_is_symbol(dwarf_srclang(cu))) {
			const char *sym = dwfl_module_addrname(mod, pc);
			if (sym)
				e.name = sym;
		}
		g_array_append_val(out, e);
		if (dwarf_tag(die) != DW_TAG_inlined_subroutine)
			break;
		/* the caller's place: where this instance was inlined */
		file = NULL;
		lineno = 0;
		if (files && dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0)
			file = dwarf_filesrc(files, w, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= INT_MAX)
			lineno = (int)w;
	}
	free(chain);
	free(scopes);
	/* no line for the address itself: addr2line would only guess */
	if (out->len && g_array_index(out, struct chain_entry, 0).line <= 0)
		g_array_set_size(out, 0);
	else if (out->len == 0 && line && lineno > 0) {
		/*
		 * Line information without a function DIE (assembly sources):
		 * addr2line names the function from the symbol table.
		 */
		struct chain_entry e = { dwfl_module_addrname(mod, pc), file, lineno };
		g_array_append_val(out, e);
	}
	return out->len;
}

/*
 * The frame's names, outermost first, or NULL to fall back to its own
 * symbol.  Like stackcollapse-perf.pl, which falls back when addr2line
 * answers "??" (or "??:??:0" with context); unlike it, an address with no
 * line information also falls back rather than taking addr2line's guess
 * from the symbol table.
 */
static char *resolve_pc(struct resolver *r, Dwfl_Module *mod, uint64_t pc)
{
	GArray *chain = g_array_new(FALSE, FALSE, sizeof(struct chain_entry));
	GString *s = r->chain;
	char *result = NULL;

	g_string_truncate(s, 0);
	if (die_chain(mod, pc, chain) == 0)
		goto out;
	for (guint i = chain->len; i-- > 0;) {
		const struct chain_entry *e = &g_array_index(chain, struct chain_entry, i);
		if (s->len)
			g_string_append_c(s, ';');
		append_name(s, e->name);
		if (r->pub.context)
			append_place(s, e->file, e->line);
	}
	if (strcmp(s->str, "??") && strcmp(s->str, "??:??:?") && strcmp(s->str, "??:??:0"))
		result = g_strdup(s->str);
out:
	g_array_free(chain, TRUE);
	return result;
}

/*
 * perf script prints a user-space address as an offset into the file
 * (perf's map_ip(): ip - map start + map pgoff), which equals the
 * address addr2line takes only where segments sit at their own file
 * offsets, as in PIE executables and shared objects that GNU ld links.
 * A non-PIE executable's code is at 0x400000 and up: translate through the
 * PT_LOAD segments.  (stackcollapse-perf.pl passes the offset to addr2line
 * as it is and so gets "??" for every frame of a non-PIE executable.)
 */
static uint64_t file_to_vaddr(const struct dso_entry *d, uint64_t off)
{
	for (guint i = 0; i < d->loads->len; i++) {
		const struct load *l = &g_array_index(d->loads, struct load, i);
		if (off >= l->offset && off - l->offset < l->size)
			return off - l->offset + l->vaddr;
	}
	return off;
}

static bool resolve(void *self, const struct perf_frame *f, bool context,
		    bool caller, GString *out)
{
	struct resolver *r = self;
	struct dso_entry *d = r->last;
	struct addr_key k, *kp;
	gpointer value;
	uint64_t pc;

	/* perf's own "(inlined)" frames are already expanded */
	if (f->inlined || f->dso.len == 0 || !parse_pc(&f->pc, &pc))
		return false;
	/* consecutive frames mostly share their DSO: skip the path lookup */
	if (!d || r->path->len != f->dso.len || memcmp(r->path->str, f->dso.s, f->dso.len)) {
		g_string_truncate(r->path, 0);
		g_string_append_len(r->path, f->dso.s, (gssize)f->dso.len);
		r->last = NULL;
		if (memchr(f->dso.s, '\0', f->dso.len))
			return false;
		r->last = d = dso_get(r, r->path->str);
	}
	if (!d->mod)
		return false;
	/* a caller's address is where its call returns to: the call is
	 * before it (collapse.h) */
	if (caller && pc > 0)
		pc--;
	k = (struct addr_key){ d, pc };
	if (!g_hash_table_lookup_extended(r->results, &k, NULL, &value)) {
		value = resolve_pc(r, d->mod, file_to_vaddr(d, pc));
		kp = g_memdup2(&k, sizeof(k));
		g_hash_table_insert(r->results, kp, value);
	}
	if (!value)
		return false;
	g_string_append(out, value);
	return true;
}

struct inline_resolver *inline_resolver_new(bool context)
{
	struct resolver *r = g_new0(struct resolver, 1);

	r->pub = (struct inline_resolver){ .resolve = resolve, .self = r, .context = context };
	r->dsos = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, dso_entry_free);
	r->results = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, g_free);
	r->symbols = g_hash_table_new_full(addr_key_hash, addr_key_equal, g_free, g_free);
	r->path = g_string_new(NULL);
	r->chain = g_string_new(NULL);
	return &r->pub;
}

void inline_resolver_free(struct inline_resolver *ir)
{
	struct resolver *r = (struct resolver *)ir;

	if (!r)
		return;
	/* results' keys point at dso entries: drop them first */
	g_hash_table_destroy(r->results);
	g_hash_table_destroy(r->symbols);
	g_hash_table_destroy(r->dsos);
	g_string_free(r->path, TRUE);
	g_string_free(r->chain, TRUE);
	g_free(r);
}

/*
 * The entry and address for frame f, as resolve() finds them; NULL when
 * the frame names no usable ELF file.
 */
static struct dso_entry *frame_dso(struct resolver *r, const struct perf_frame *f,
				   uint64_t *pc)
{
	struct dso_entry *d = r->last;

	if (f->dso.len == 0 || !parse_pc(&f->pc, pc))
		return NULL;
	if (!d || r->path->len != f->dso.len || memcmp(r->path->str, f->dso.s, f->dso.len)) {
		g_string_truncate(r->path, 0);
		g_string_append_len(r->path, f->dso.s, (gssize)f->dso.len);
		r->last = NULL;
		if (memchr(f->dso.s, '\0', f->dso.len))
			return NULL;
		r->last = d = dso_get(r, r->path->str);
	}
	return d->mod ? d : NULL;
}

const char *inline_resolver_symbol(struct inline_resolver *ir,
				   const struct perf_frame *f)
{
	struct resolver *r = (struct resolver *)ir;
	struct dso_entry *d;
	struct addr_key k;
	gpointer value;
	uint64_t pc;

	if (!(d = frame_dso(r, f, &pc)))
		return NULL;
	k = (struct addr_key){ d, pc };
	if (!g_hash_table_lookup_extended(r->symbols, &k, NULL, &value)) {
		const char *name = dwfl_module_addrname(d->mod, file_to_vaddr(d, pc));
		GString *s = g_string_new(NULL);

		if (name && *name)
			append_name(s, name);
		value = s->len ? g_string_free(s, FALSE) : (g_string_free(s, TRUE), NULL);
		g_hash_table_insert(r->symbols, g_memdup2(&k, sizeof(k)), value);
	}
	return value;
}
