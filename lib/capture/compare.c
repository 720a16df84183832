/*
 * compare.c - fp-record --compare OLD: the capture just written set
 * against an earlier one of the same program, inside the new capture:
 *
 *	DIR/compare.md, DIR/compare.json	fold-report --base OLD DIR
 *	DIR/compare/on/NAME.diff.folded	fold-diff OLD/on/NAME DIR/on/NAME
 *	DIR/compare/on/NAME.svg		its differential flame graph
 *	DIR/compare/off/...			the same off-CPU
 *
 * NAME is a process's name and role (roles.h), which is what makes the
 * files of two runs meet: a process of OLD that this capture does not
 * have, or the reverse, gets no graph (compare.md lists it).  The graphs
 * are drawn as fold2svg --diff=total --mark-new -n draws them: widths the
 * new profile's, colours the change of each frame's inclusive time with
 * OLD scaled to the new total (so a share that grew is red whatever the
 * windows' lengths), frames only in the new profile purple.
 *
 * Nothing here fails the capture: what cannot be compared is a warning.
 */
#include "capture/internal.h"

#include "core/error.h"

#include <string.h>

char *cap_run_out(struct session *s, const char *const *argv, const char *what, gsize *len)
{
	char *out = NULL, *errout = NULL;
	int status;
	GError *e = NULL;

	if (!g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL, &out, &errout, &status, &e) ||
	    !g_spawn_check_wait_status(status, &e)) {
		cap_warn(s, "%s failed: %s%s%s", what, e ? e->message : "",
			 errout && *errout ? ": " : "", errout ? g_strstrip(errout) : "");
		g_clear_error(&e);
		g_free(out);
		g_free(errout);
		return NULL;
	}
	g_free(errout);
	*len = strlen(out);
	return out;
}

bool cap_put(struct session *s, struct fk_outdir *dir, const char *name, const char *text,
		gsize len)
{
	GError *e = NULL;
	struct fk_outfile *o = fk_outdir_file(dir, name, &e);

	if (o) {
		fwrite(text, 1, len, fk_outfile_stream(o));
		if (fk_outfile_commit(o, &e) == 0) {
			g_ptr_array_add(s->paths, g_build_filename(fk_outdir_path(dir), name, NULL));
			return true;
		}
	}
	cap_warn(s, "%s", e->message);
	g_error_free(e);
	return false;
}

/* fold-report --base OLD DIR into DIR/compare.md and DIR/compare.json */
static bool report(struct session *s, const char *old)
{
	const char *md[] = { s->report, NULL, "--", s->cfg->dir, NULL };
	const char *json[] = { s->report, NULL, "--json", "--", s->cfg->dir, NULL };
	char *base = g_strconcat("--base=", old, NULL);
	bool ok = false;
	char *out;
	gsize len;

	md[1] = json[1] = base;
	if ((out = cap_run_out(s, md, "--compare: fold-report --base", &len))) {
		ok = cap_put(s, s->out, "compare.md", out, len);
		g_free(out);
	}
	if (ok && (out = cap_run_out(s, json, "--compare: fold-report --base --json", &len))) {
		ok = cap_put(s, s->out, "compare.json", out, len);
		g_free(out);
	}
	g_free(base);
	return ok;
}

/* the differential graph of one process's profile on one side */
static void graph(struct session *s, struct fk_outdir *dir, const char *old_dir,
		  const struct fk_out_row *r, bool offcpu, unsigned *drawn)
{
	const char *side = offcpu ? "off" : "on";
	char *file = g_strconcat(r->name, ".folded", NULL);
	char *old = g_build_filename(old_dir, file, NULL);
	char *new = g_build_filename(s->cfg->dir, side, file, NULL);
	char *diffname = g_strconcat(r->name, ".diff.folded", NULL);
	char *diffpath = g_build_filename(fk_outdir_path(dir), diffname, NULL);
	char *svgname = g_strconcat(r->name, ".svg", NULL);
	char *title = g_strdup_printf("%s%s%s (%s) %s: before and after",
				      s->cfg->title ? s->cfg->title : "",
				      s->cfg->title ? ": " : "", r->comm, r->role,
				      offcpu ? "off-CPU" : "on-CPU");
	char *subtitle = g_strdup_printf("%s: widths after, colours the change of inclusive "
					 "time with before scaled to after's total; purple: "
					 "only after; counts in %s", r->name,
					 offcpu ? "microseconds" : "nanoseconds");
	const char *diff[] = { s->diff, "--", old, new, NULL };
	const char *svg[] = { s->fold2svg, "--diff=total", "--mark-new", "--normalize",
			      "--title", title, "--subtitle", subtitle,
			      offcpu ? "--countname=us" : "--countname=ns", "--", diffpath, NULL };
	char *out;
	gsize len;

	if (g_file_test(old, G_FILE_TEST_IS_REGULAR) &&
	    (out = cap_run_out(s, diff, "--compare: fold-diff", &len))) {
		bool ok = cap_put(s, dir, diffname, out, len);

		g_free(out);
		if (ok && s->fold2svg && (out = cap_run_out(s, svg, "--compare: fold2svg", &len))) {
			if (cap_put(s, dir, svgname, out, len))
				(*drawn)++;
			g_free(out);
		}
	}
	g_free(file);
	g_free(old);
	g_free(new);
	g_free(diffname);
	g_free(diffpath);
	g_free(svgname);
	g_free(title);
	g_free(subtitle);
}

void cap_compare(struct session *s)
{
	const char *old = s->cfg->compare;
	struct fk_outdir *top, *sides[2] = { NULL, NULL };
	unsigned drawn = 0;
	GError *e = NULL;

	if (!s->report) {
		cap_warn(s, "--compare: fold-report was found neither next to fp-record nor in "
			 "PATH: no comparison with %s", old);
		return;
	}
	if (!s->diff)
		cap_warn(s, "--compare: fold-diff was found neither next to fp-record nor in "
			 "PATH: no differential graphs");
	s->compared = report(s, old);
	if (!s->diff || !(top = fk_outdir_mkdir(s->out, "compare", &e))) {
		if (e)
			cap_warn(s, "--compare: %s", e->message);
		g_clear_error(&e);
		return;
	}
	for (int i = 0; i < 2; i++) {
		const char *side = i ? "off" : "on";
		char *old_dir = g_build_filename(old, side, NULL);

		for (guint k = 0; k < s->rows->len; k++) {
			const struct fk_out_row *r = g_ptr_array_index(s->rows, k);

			if (!(i ? r->off_folded : r->on_folded))
				continue;
			if (!sides[i] && !(sides[i] = fk_outdir_mkdir(top, side, &e))) {
				cap_warn(s, "--compare: %s", e->message);
				g_clear_error(&e);
				break;
			}
			graph(s, sides[i], old_dir, r, i == 1, &drawn);
		}
		g_free(old_dir);
		fk_outdir_free(sides[i]);
	}
	fk_outdir_free(top);
	if (!drawn)
		cap_warn(s, "--compare: no process of %s has the name of one of this capture's "
			 "(NAME.folded in on/ or off/, the process and its role): no graphs "
			 "drawn", old);
	else
		cap_say(s, "compared with %s: compare.md, and %u differential graph%s in "
			"compare/", old, drawn, drawn == 1 ? "" : "s");
}
