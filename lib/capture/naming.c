/*
 * naming.c - which process of a capture is which: each row's role,
 * parent, arguments and file name (roles.h), so that two captures of one
 * program name their files alike and compare process by process.
 */
#include "capture/internal.h"
#include "capture/roles.h"

#include <string.h>

void cap_refresh_args(struct session *s)
{
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, s->procs);
	while (g_hash_table_iter_next(&it, NULL, &val)) {
		struct tracked *t = val;
		struct fk_proc *p;

		if (t->gone)
			continue;
		p = fk_proc_read(s->cfg->proc_root, t->pid, FK_PROC_CMDLINE);
		/* the same process (not a new one of its pid), and not yet a
		 * zombie, whose arguments the kernel no longer shows */
		if (p && p->argv && p->state != 'Z' && p->state != 'X' &&
		    (!t->start || p->start == t->start)) {
			g_strfreev(t->argv);
			t->argv = g_strdupv(p->argv);
			t->ppid = p->ppid;
			t->start = p->start;
		}
		fk_proc_free(p);
	}
}

static int by_pid(const void *a, const void *b)
{
	const struct fk_out_row *x = *(struct fk_out_row *const *)a;
	const struct fk_out_row *y = *(struct fk_out_row *const *)b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

void cap_name_rows(struct session *s, GHashTable *rows)
{
	GPtrArray *v = g_ptr_array_new();
	struct fk_role_in *in;
	struct fk_role *out;
	GHashTable *used = g_hash_table_new(g_str_hash, g_str_equal);
	GHashTableIter it;
	gpointer val;

	g_hash_table_iter_init(&it, rows);
	while (g_hash_table_iter_next(&it, NULL, &val))
		g_ptr_array_add(v, val);
	g_ptr_array_sort(v, by_pid);	/* ties of start order broken alike */
	in = g_new0(struct fk_role_in, v->len + 1);
	out = g_new0(struct fk_role, v->len + 1);
	for (guint i = 0; i < v->len; i++) {
		struct fk_out_row *r = g_ptr_array_index(v, i);
		const struct tracked *t = g_hash_table_lookup(s->procs, GINT_TO_POINTER(r->pid));

		if (t) {
			r->ppid = t->ppid;
			r->argv = g_strdupv(t->argv);
		}
		/* a process perf followed that came and went between two
		 * looks: no parent known, and it starts last */
		in[i] = (struct fk_role_in){ .pid = r->pid, .ppid = r->ppid, .comm = r->comm,
					     .argv = r->argv, .start = t ? t->start : G_MAXUINT64 };
	}
	fk_roles_assign(in, v->len, out);
	for (guint i = 0; i < v->len; i++) {
		struct fk_out_row *r = g_ptr_array_index(v, i);

		r->role = g_strdup(out[i].role);
		/* two names alike (a role an argument gives that reads like a
		 * number of another's): the pid tells them apart */
		if (g_hash_table_contains(used, out[i].name))
			r->name = g_strdup_printf("%s-pid%d", out[i].name, r->pid);
		else
			r->name = g_strdup(out[i].name);
		g_hash_table_add(used, r->name);
	}
	fk_roles_clear(out, v->len);
	g_free(out);
	g_free(in);
	g_hash_table_destroy(used);
	g_ptr_array_unref(v);
}
