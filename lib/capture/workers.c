/*
 * workers.c - fp-record --group-workers: in a capture, the processes of
 * one program and role (two or more: a server's workers) merged into one
 * profile per side, and the spread of the work among them (group.h):
 *
 *	DIR/group/on/NAME.folded, .svg		the group's on-CPU profile (ns)
 *	DIR/group/off/NAME.folded, .svg		its off-CPU profile (us)
 *	DIR/group/spread.tsv			each group's top functions and
 *						their lowest and highest share
 *						in a member
 *
 * and report.md's section "Workers as a group".  NAME is the members'
 * name without their number ("server.worker" for server.worker-1,
 * server.worker-2: roles.h).  The group files stay out of on/ and off/
 * and their index.tsv: a tool that sums a capture's profiles (fold-report,
 * fold-push) would count each member twice.
 *
 * spread.tsv has a header line, then one line per on-CPU group and
 * function, the groups by name, the functions most self first (off-CPU,
 * every stack's leaf is the scheduler's, so self time there tells the
 * members apart by nothing: an off-CPU group has its profile and its
 * least and most loaded member, no spread):
 *
 *	profile	group	members	unit	function	self	share	low	low_process	high	high_process
 *	on	server.worker	2	ns	checksum_frame	1200000000	0.2500	0.0000	server.worker-1	0.5000	server.worker-2
 *
 * self is the function's self count in the group's profile, share that
 * over the group's total, low and high its lowest and highest share of a
 * member's own total; names are escaped as in index.tsv (core/textesc.h).
 * Nothing here fails the capture: what cannot be grouped is a warning.
 */
#include "capture/group.h"
#include "capture/internal.h"

#include "core/count.h"
#include "core/mdcode.h"
#include "core/textesc.h"

#include <stdint.h>
#include <string.h>

#define GROUP_TOP 10

struct cap_group {
	bool offcpu;
	char *name;		/* "server.worker" */
	const struct fk_out_row *first;	/* for the process and role */
	GPtrArray *members;	/* const struct fk_out_row *, by number */
	struct fk_group *g;
	char *folded, *svg;	/* relative to DIR; NULL: not written */
};

static void group_free(gpointer p)
{
	struct cap_group *c = p;

	g_free(c->name);
	g_ptr_array_unref(c->members);
	fk_group_free(c->g);
	g_free(c->folded);
	g_free(c->svg);
	g_free(c);
}

/* worker-2 before worker-10: shorter first, then bytewise */
static int by_number(gconstpointer a, gconstpointer b)
{
	const struct fk_out_row *x = *(const struct fk_out_row *const *)a;
	const struct fk_out_row *y = *(const struct fk_out_row *const *)b;
	size_t lx = strlen(x->name), ly = strlen(y->name);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* name without its "-N", or NULL when it has none */
static char *unnumbered(const char *name)
{
	const char *dash = strrchr(name, '-');

	if (!dash || !dash[1] || strspn(dash + 1, "0123456789") != strlen(dash + 1))
		return NULL;
	return g_strndup(name, (gsize)(dash - name));
}

static const char *folded_of(const struct fk_out_row *r, bool offcpu)
{
	return offcpu ? r->off_folded : r->on_folded;
}

/* the groups of one side: rows of one process name and role, two or more */
static void find_groups(struct session *s, bool offcpu, GPtrArray *out)
{
	GHashTable *by = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	GPtrArray *keys = g_ptr_array_new();

	for (guint i = 0; i < s->rows->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(s->rows, i);
		char *key;
		GPtrArray *v;

		if (!folded_of(r, offcpu) || !r->role || !r->name)
			continue;
		key = g_strconcat(r->comm ? r->comm : "", "\n", r->role, NULL);
		if (!(v = g_hash_table_lookup(by, key))) {
			v = g_ptr_array_new();
			g_hash_table_insert(by, key, v);
			g_ptr_array_add(keys, v);
		} else {
			g_free(key);
		}
		g_ptr_array_add(v, (gpointer)r);
	}
	for (guint k = 0; k < keys->len; k++) {
		GPtrArray *v = g_ptr_array_index(keys, k);
		char *name = NULL;
		bool alike = v->len >= 2;

		g_ptr_array_sort(v, by_number);
		for (guint i = 0; alike && i < v->len; i++) {
			char *n = unnumbered(((const struct fk_out_row *)g_ptr_array_index(v, i))->name);

			alike = n && (!name || strcmp(n, name) == 0);
			if (!name)
				name = n;
			else
				g_free(n);
		}
		if (alike) {
			struct cap_group *c = g_new0(struct cap_group, 1);

			c->offcpu = offcpu;
			c->name = name;
			c->first = g_ptr_array_index(v, 0);
			c->members = v;
			g_ptr_array_add(out, c);
		} else {
			if (v->len >= 2)
				cap_warn(s, "--group-workers: the %u %s processes of role %s are "
					 "not numbered alike (%s...): not grouped", v->len,
					 ((const struct fk_out_row *)g_ptr_array_index(v, 0))->comm,
					 ((const struct fk_out_row *)g_ptr_array_index(v, 0))->role,
					 ((const struct fk_out_row *)g_ptr_array_index(v, 0))->name);
			g_free(name);
			g_ptr_array_unref(v);
		}
	}
	g_ptr_array_unref(keys);
	g_hash_table_destroy(by);
}

static int by_name(gconstpointer a, gconstpointer b)
{
	const struct cap_group *x = *(const struct cap_group *const *)a;
	const struct cap_group *y = *(const struct cap_group *const *)b;

	if (x->offcpu != y->offcpu)
		return x->offcpu ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* the group's folded file and its graph in dir (DIR/group/side) */
static void write_group(struct session *s, struct fk_outdir *dir, struct cap_group *c)
{
	const char *side = c->offcpu ? "off" : "on";
	char *file = g_strconcat(c->name, ".folded", NULL);
	char *svgname = g_strconcat(c->name, ".svg", NULL);
	char *path = g_build_filename(fk_outdir_path(dir), file, NULL);
	GString *who = g_string_new(NULL);
	double window = (double)(s->t1 - s->t0) / 1e6;
	GError *e = NULL;
	struct fk_outfile *o = fk_outdir_file(dir, file, &e);

	if (o && fold_table_write(fk_group_table(c->g), fk_outfile_stream(o), 1, &e) < 0) {
		fk_outfile_abort(o);
		o = NULL;
	}
	if (!o || fk_outfile_commit(o, &e) != 0) {
		cap_warn(s, "--group-workers: %s", e ? e->message : "cannot write");
		g_clear_error(&e);
		goto out;
	}
	g_ptr_array_add(s->paths, g_strdup(path));
	c->folded = g_strconcat("group/", side, "/", file, NULL);
	for (guint i = 0; i < c->members->len; i++) {
		const struct fk_out_row *r = g_ptr_array_index(c->members, i);

		g_string_append_printf(who, "%s%s (%d)", i ? ", " : "", r->name, r->pid);
	}
	if (s->fold2svg) {
		const struct fk_capture_cfg *cf = s->cfg;
		char *title = g_strdup_printf("%s%s%s (%s, %u processes) %s", cf->title ? cf->title : "",
					      cf->title ? ": " : "", c->first->comm, c->first->role,
					      c->members->len, c->offcpu ? "off-CPU" : "on-CPU");
		char *subtitle = g_strdup_printf("%s: %s merged, %.2f s window, %s", c->name,
						 who->str, window,
						 c->offcpu ? "time off the CPU in microseconds"
							   : "counts in nanoseconds");
		/* drawn as the members' graphs are (write.c) */
		const char *argv[] = { s->fold2svg, "--title", title, "--subtitle", subtitle,
				       c->offcpu ? "--countname=us" : "--countname=ns",
				       "--", path, NULL, NULL };
		gsize len;
		char *svg;

		if (c->offcpu) {	/* --colors=io before the "--" */
			memmove(argv + 7, argv + 6, 3 * sizeof(*argv));
			argv[6] = "--colors=io";
		}
		svg = cap_run_out(s, argv, "--group-workers: fold2svg", &len);

		if (svg && cap_put(s, dir, svgname, svg, len))
			c->svg = g_strconcat("group/", side, "/", svgname, NULL);
		g_free(svg);
		g_free(title);
		g_free(subtitle);
	}
out:
	g_string_free(who, TRUE);
	g_free(file);
	g_free(svgname);
	g_free(path);
}

static void tsv_text(GString *out, const char *v)
{
	fk_text_escape(out, v, strlen(v), FK_ESC_BACKSLASH);
}

static void write_spread(struct session *s, struct fk_outdir *top)
{
	GString *t = g_string_new("profile\tgroup\tmembers\tunit\tfunction\tself\tshare\tlow\t"
				  "low_process\thigh\thigh_process\n");
	char buf[FK_COUNT_BUFSZ];

	for (guint k = 0; k < s->groups->len; k++) {
		const struct cap_group *c = g_ptr_array_index(s->groups, k);

		/* off-CPU, every stack ends in the scheduler: its leaves tell
		 * the members apart by nothing */
		if (c->offcpu)
			continue;
		for (size_t i = 0; i < fk_group_nfns(c->g); i++) {
			const struct fk_group_fn *f = fk_group_fn(c->g, i);
			const struct fk_out_row *lo, *hi;

			if (f->low_at == SIZE_MAX)
				continue;
			lo = g_ptr_array_index(c->members, (guint)f->low_at);
			hi = g_ptr_array_index(c->members, (guint)f->high_at);
			g_string_append_printf(t, "%s\t", c->offcpu ? "off" : "on");
			tsv_text(t, c->name);
			g_string_append_printf(t, "\t%u\t%s\t", c->members->len,
					       c->offcpu ? FK_OFF_UNIT : FK_ON_UNIT);
			tsv_text(t, f->frame);
			g_string_append_c(t, '\t');
			g_string_append_len(t, buf, (gssize)fk_count_format(f->self, buf));
			g_string_append_printf(t, "\t%.4f\t%.4f\t", f->share, f->low);
			tsv_text(t, lo->name);
			g_string_append_printf(t, "\t%.4f\t", f->high);
			tsv_text(t, hi->name);
			g_string_append_c(t, '\n');
		}
	}
	if (cap_put(s, top, "spread.tsv", t->str, t->len))
		s->grouped = true;
	g_string_free(t, TRUE);
}

void cap_group_all(struct session *s)
{
	struct fk_outdir *top = NULL;
	GPtrArray *found = g_ptr_array_new_with_free_func(group_free);
	GError *e = NULL;

	s->groups = g_ptr_array_new_with_free_func(group_free);
	for (int side = 0; side < 2; side++) {
		if ((side ? &s->off : &s->on)->failed)
			continue;	/* partial profiles: no spread to trust */
		find_groups(s, side == 1, found);
	}
	while (found->len) {
		struct cap_group *c = g_ptr_array_steal_index(found, 0);
		struct fk_group_member *m = g_new0(struct fk_group_member, c->members->len);
		char **paths = g_new0(char *, c->members->len + 1);

		for (guint i = 0; i < c->members->len; i++) {
			const struct fk_out_row *r = g_ptr_array_index(c->members, i);

			paths[i] = g_build_filename(s->cfg->dir, folded_of(r, c->offcpu), NULL);
			m[i] = (struct fk_group_member){ .name = r->name, .path = paths[i] };
		}
		if ((c->g = fk_group_read(m, c->members->len, GROUP_TOP, &e))) {
			g_ptr_array_add(s->groups, c);
		} else {
			cap_warn(s, "--group-workers: %s: not grouped: %s", c->name, e->message);
			g_clear_error(&e);
			group_free(c);
		}
		g_strfreev(paths);
		g_free(m);
	}
	g_ptr_array_unref(found);
	if (!s->groups->len) {
		cap_warn(s, "--group-workers: no two processes have one name and role on one "
			 "side: nothing grouped");
		return;
	}
	g_ptr_array_sort(s->groups, by_name);
	if (!(top = fk_outdir_mkdir(s->out, "group", &e))) {
		cap_warn(s, "--group-workers: %s", e->message);
		g_clear_error(&e);
		return;
	}
	for (int side = 0; side < 2; side++) {
		struct fk_outdir *dir = NULL;

		for (guint k = 0; k < s->groups->len; k++) {
			struct cap_group *c = g_ptr_array_index(s->groups, k);

			if (c->offcpu != (side == 1))
				continue;
			if (!dir && !(dir = fk_outdir_mkdir(top, side ? "off" : "on", &e))) {
				cap_warn(s, "--group-workers: %s", e->message);
				g_clear_error(&e);
				break;
			}
			write_group(s, dir, c);
		}
		fk_outdir_free(dir);
	}
	write_spread(s, top);
	fk_outdir_free(top);
	cap_say(s, "grouped %u profile%s of processes of one role: group/spread.tsv",
		s->groups->len, s->groups->len == 1 ? "" : "s");
}

/* a count per second of window, in the unit's words */
static void rate(GString *out, fk_count c, bool offcpu, double window)
{
	double v = fk_count_to_double(c) / (window > 0 ? window : 1);

	if (offcpu)
		g_string_append_printf(out, "%.2f ms/s", v / 1e3);
	else
		g_string_append_printf(out, "%.2f ms/s", v / 1e6);
}

static void md_name(GString *out, const char *v, bool table)
{
	fk_md_code(out, v, strlen(v), table);
}

void cap_group_report(struct session *s, GString *out)
{
	double window = (double)(s->t1 - s->t0) / 1e6;

	if (!s->groups || !s->groups->len)
		return;
	g_string_append(out, "\n## Workers as a group\n\n"
			"The processes of one name and role merged into one profile "
			"(`--group-workers`), and, on-CPU, how evenly each top function's self "
			"time falls among them: its share of each process's own total, lowest "
			"and highest (off-CPU, every stack ends in the scheduler: no spread); "
			"times per second of the window (on-CPU: CPU time, off-CPU: time off "
			"the CPU).  Spread per function in [group/spread.tsv](group/spread.tsv).\n");
	for (guint k = 0; k < s->groups->len; k++) {
		const struct cap_group *c = g_ptr_array_index(s->groups, k);
		size_t lo = fk_group_least(c->g), hi = fk_group_most(c->g);

		g_string_append(out, "\n### ");
		md_name(out, c->name, false);
		g_string_append_printf(out, ": %s, %u processes\n\n",
				       c->offcpu ? "off-CPU (us)" : "on-CPU (ns)", c->members->len);
		g_string_append(out, "- Group: ");
		rate(out, fk_group_total(c->g), c->offcpu, window);
		if (c->folded) {
			g_string_append(out, " ([folded](");
			g_string_append(out, c->folded);
			g_string_append(out, ")");
			if (c->svg) {
				g_string_append(out, ", [svg](");
				g_string_append(out, c->svg);
				g_string_append(out, ")");
			}
			g_string_append(out, ")");
		}
		g_string_append(out, "\n");
		if (lo != SIZE_MAX) {
			const struct fk_out_row *l = g_ptr_array_index(c->members, (guint)lo);
			const struct fk_out_row *h = g_ptr_array_index(c->members, (guint)hi);

			g_string_append(out, "- Least loaded: ");
			md_name(out, l->name, false);
			g_string_append_printf(out, " (pid %d), ", l->pid);
			rate(out, fk_group_member_total(c->g, lo), c->offcpu, window);
			g_string_append(out, "; most loaded: ");
			md_name(out, h->name, false);
			g_string_append_printf(out, " (pid %d), ", h->pid);
			rate(out, fk_group_member_total(c->g, hi), c->offcpu, window);
			g_string_append(out, "\n");
		}
		if (fk_group_sampled(c->g) < c->members->len)
			g_string_append_printf(out, "- %zu of the %u processes have no samples: "
					       "left out of the spread\n",
					       c->members->len - fk_group_sampled(c->g),
					       c->members->len);
		if (!fk_group_nfns(c->g) || lo == SIZE_MAX || c->offcpu)
			continue;
		g_string_append(out, "\n| Function | Group share | Lowest share | "
				"Highest share |\n| --- | ---: | ---: | ---: |\n");
		for (size_t i = 0; i < fk_group_nfns(c->g); i++) {
			const struct fk_group_fn *f = fk_group_fn(c->g, i);
			const struct fk_out_row *a = g_ptr_array_index(c->members, (guint)f->low_at);
			const struct fk_out_row *b = g_ptr_array_index(c->members, (guint)f->high_at);

			g_string_append(out, "| ");
			md_name(out, f->frame, true);
			g_string_append_printf(out, " | %.1f%% | %.1f%% ", 100 * f->share, 100 * f->low);
			md_name(out, a->name, true);
			g_string_append_printf(out, " | %.1f%% ", 100 * f->high);
			md_name(out, b->name, true);
			g_string_append(out, " |\n");
		}
	}
}
