/*
 * speedscope.c - each profile of a capture also as a speedscope file
 * (DIR/on/NAME.speedscope.json, DIR/off/...), which carries what a folded
 * file cannot: its unit (on-CPU ns, off-CPU us), so that speedscope shows
 * times, not raw counts; and one profile per thread (fold2speedscope
 * --split: a stack's root frame is its thread).
 */
#include "capture/internal.h"

#include <stdio.h>
#include <string.h>

/* DIR/side/NAME.speedscope.json from DIR/side/NAME.folded; its path in
 * DIR, or NULL after a warning */
static char *convert(struct session *s, const struct fk_out_row *r, const char *folded,
		     bool offcpu)
{
	const char *file = strrchr(folded, '/') + 1;	/* "side/NAME.folded" */
	struct fk_outdir *dir = s->sides[offcpu];
	char *name = g_strdup_printf("%s%s%s (%s) %s, pid %d", s->cfg->title ? s->cfg->title : "",
				     s->cfg->title ? ": " : "", r->comm, r->role,
				     offcpu ? "off-CPU" : "on-CPU", r->pid);
	char *namearg = g_strconcat("--name=", name, NULL);
	const char *argv[] = { s->speedscope, "--split", offcpu ? "--unit=us" : "--unit=ns",
			       namearg, "--", file, NULL };
	char *out = NULL, *errout = NULL, *json, *rel = NULL, cwd[40];
	struct fk_outfile *o;
	int status;
	GError *e = NULL;

	json = g_strconcat(r->name, ".speedscope.json", NULL);
	/* in DIR/side (its descriptor's), where no name reads as an option */
	snprintf(cwd, sizeof(cwd), "/proc/self/fd/%d", fk_outdir_fd(dir));
	if (!g_spawn_sync(cwd, (char **)argv, NULL, 0, NULL, NULL, &out, &errout, &status, &e) ||
	    !g_spawn_check_wait_status(status, &e)) {
		cap_warn(s, "%s/%s/%s: no speedscope file: %s%s%s", s->cfg->dir,
			 offcpu ? "off" : "on", json, e ? e->message : "",
			 errout && *errout ? ": " : "", errout ? g_strstrip(errout) : "");
	} else {
		if ((o = fk_outdir_file(dir, json, &e))) {
			/* the commit checks the stream's errors */
			fwrite(out, 1, strlen(out), fk_outfile_stream(o));
			if (fk_outfile_commit(o, &e) == 0)
				rel = g_strdup_printf("%s/%s", offcpu ? "off" : "on", json);
		}
		if (!rel)
			cap_warn(s, "%s", e ? e->message : "cannot write a speedscope file");
	}
	g_clear_error(&e);
	g_free(out);
	g_free(errout);
	g_free(json);
	g_free(name);
	g_free(namearg);
	return rel;
}

void cap_speedscope_all(struct session *s)
{
	if (!s->speedscope) {
		cap_warn(s, "fold2speedscope was not found next to fp-record or in PATH: no "
			 "speedscope files written");
		return;
	}
	for (guint i = 0; i < s->rows->len; i++) {
		struct fk_out_row *r = g_ptr_array_index(s->rows, i);

		if (r->on_folded)
			r->on_speedscope = convert(s, r, r->on_folded, false);
		if (r->off_folded)
			r->off_speedscope = convert(s, r, r->off_folded, true);
	}
}
