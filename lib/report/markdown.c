/*
 * The Markdown report, laid out as seed 001's hand-made one: a summary
 * table, the findings, then one table per section.
 *
 * Every name from the input (frames, threads, files, categories) is a code
 * span: inside one, Markdown neither interprets HTML nor emphasis, so no
 * frame can inject markup or script.  Control characters and invalid UTF-8
 * become the text "\xNN" (textesc.h), the span's fence is one backtick
 * longer than the longest run of backticks in the name (and padded with a
 * space where the name starts or ends with one), and inside tables '|' is
 * written "\|", as GitHub's tables require.
 */
#include "core/textesc.h"
#include "report/model.h"

#include <string.h>

/* frames (or runs of one frame) of a hot path shown in Markdown; the
 * JSON has the whole stack */
#define PATH_FRAMES 4

struct mw {
	FILE *out;
	const struct report *r;
	GString *tmp;
};

static void code(struct mw *w, const char *s, size_t len, bool table)
{
	GString *t = w->tmp;
	size_t run = 0, longest = 0;
	bool pad;

	if (len == 0) {
		fputs("*(empty)*", w->out);
		return;
	}
	g_string_truncate(t, 0);
	fk_text_escape(t, s, len, 0);
	for (size_t i = 0; i < t->len; i++) {
		run = t->str[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = t->str[0] == '`' || t->str[t->len - 1] == '`' ||
	      (t->str[0] == ' ' && t->str[t->len - 1] == ' ');
	for (size_t i = 0; i <= longest; i++)
		putc('`', w->out);
	if (pad)
		putc(' ', w->out);
	for (size_t i = 0; i < t->len; i++) {
		if (table && t->str[i] == '|')
			putc('\\', w->out);
		putc(t->str[i], w->out);
	}
	if (pad)
		putc(' ', w->out);
	for (size_t i = 0; i <= longest; i++)
		putc('`', w->out);
}

static void cstr(struct mw *w, const char *s, bool table)
{
	code(w, s, strlen(s), table);
}

static void count(struct mw *w, fk_count c)
{
	char buf[FK_COUNT_BUFSZ * 2];

	fputs(count_grouped(c, buf), w->out);
}

static void pct(struct mw *w, fk_count c, fk_count total)
{
	uint64_t pm = share_scaled(c, total, 1000);

	if (pm == 0 && c > 0)
		fputs("\\<0.1%", w->out);	/* "<" escaped: not markup */
	else
		fprintf(w->out, "%" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT "%%", pm / 10, pm % 10);
}

/* "| HEAD | ... |" and its alignment row; 'r' in align right-aligns */
static void header(struct mw *w, const char *const *cols, const char *align)
{
	for (size_t i = 0; cols[i]; i++)
		fprintf(w->out, "| %s ", cols[i]);
	fputs("|\n", w->out);
	for (size_t i = 0; cols[i]; i++)
		fputs(align[i] == 'r' ? "| ---: " : "| --- ", w->out);
	fputs("|\n", w->out);
}

static void more(struct mw *w, size_t shown, size_t all, const char *what)
{
	if (all == 0)
		fputs("\nNone.\n", w->out);
	if (all > shown)
		fprintf(w->out, "\n(%zu more %s; --top N shows more.)\n", all - shown, what);
}

static bool time_unit(const char *u, uint64_t *per_sec)
{
	static const struct { const char *u; uint64_t n; } units[] = {
		{ "ns", 1000000000 }, { "us", 1000000 }, { "\u00b5s", 1000000 },
		{ "ms", 1000 }, { "s", 1 },
	};

	for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
		if (strcmp(u, units[i].u) == 0) {
			*per_sec = units[i].n;
			return true;
		}
	return false;
}

static void summary(struct mw *w, bool part)
{
	const struct report *r = w->r;
	const struct profile *p = r->p;
	uint64_t per_sec;

	fputs(part ? "# Process " : "# fold-report: ", w->out);
	cstr(w, r->in->title, false);
	fputs("\n\n", w->out);
	header(w, (const char *[]){ "Metric", "Value", NULL }, "lr");
	fputs("| Total | ", w->out);
	count(w, p->total);
	fprintf(w->out, " %s", r->o->unit);
	if (time_unit(r->o->unit, &per_sec) && p->total > 0) {
		uint64_t ms = share_scaled(p->total, fk_count_from_u64(per_sec), 1000);

		fprintf(w->out, " (%" G_GUINT64_FORMAT ".%03" G_GUINT64_FORMAT " s)",
			ms / 1000, ms % 1000);
	}
	fprintf(w->out, " |\n| Distinct stacks | %zu |\n", p->nstacks);
	if (r->in->nprocesses)
		fprintf(w->out, "| Processes | %zu |\n", r->in->nprocesses);
	fprintf(w->out, "| Threads (root frames of each process) | %zu |\n", r->in->nthreads);
	fprintf(w->out, "| Functions (distinct frames) | %u |\n", p->frames->len);
	fputs("| Unresolved | ", w->out);
	pct(w, p->unresolved, p->total);
	fputs(" |\n| Truncated | ", w->out);
	pct(w, p->truncated, p->total);
	fputs(" |\n", w->out);
	if (r->off) {
		fputs("| Off-CPU profile | ", w->out);
		for (size_t i = 0; i < r->in->noff_files; i++) {
			fputs(i ? ", " : "", w->out);
			cstr(w, r->in->off_files[i], true);
		}
		fputs(": ", w->out);
		count(w, r->off->total);
		fprintf(w->out, " %s in %zu stacks |\n", r->o->offcpu_unit, r->off->nstacks);
	}
}

static void findings(struct mw *w)
{
	const struct report *r = w->r;

	fputs("\n## Findings\n\n", w->out);
	if (r->findings->len == 0)
		fputs("Nothing stands out.\n", w->out);
	for (guint i = 0; i < r->findings->len; i++) {
		const struct finding *f = g_ptr_array_index(r->findings, i);

		fprintf(w->out, "%u. **%s**: ", i + 1, f->rule->name);
		for (guint k = 0; k < f->parts->len; k++) {
			const struct text_part *p = &g_array_index(f->parts, struct text_part, k);

			if (p->code)
				code(w, f->buf->str + p->off, p->len, false);
			else
				fwrite(f->buf->str + p->off, 1, p->len, w->out);
		}
		putc('\n', w->out);
	}
}

static void threads(struct mw *w)
{
	const struct report *r = w->r;
	guint n = MIN(r->threads->len, r->o->top);

	fputs("\n## Threads\n\n", w->out);
	header(w, (const char *[]){ "Thread", r->o->unit, "Share", NULL }, "lrr");
	for (guint i = 0; i < n; i++) {
		const struct thread_row *t = &g_array_index(r->threads, struct thread_row, i);

		fputs("| ", w->out);
		code(w, t->name.s, t->name.len, true);
		if (t->members > 1)
			fprintf(w->out, " (%u threads)", t->members);
		fputs(" | ", w->out);
		count(w, t->count);
		fputs(" | ", w->out);
		pct(w, t->count, r->p->total);
		fputs(" |\n", w->out);
	}
	more(w, n, r->threads->len, "threads");
}

static void hot_paths(struct mw *w)
{
	const struct report *r = w->r;
	GString *path = g_string_new(NULL);

	fputs("\n## Hot paths\n\n", w->out);
	header(w, (const char *[]){ "#", r->o->unit, "Share", "Thread",
				    "Path (last frames, leaf last)", NULL }, "rrrll");
	for (guint i = 0; i < r->top_paths->len; i++) {
		const struct path_row *e = g_ptr_array_index(r->top_paths, i);
		struct fk_str root = e->root, tail = e->tail;
		const char *t = tail.s, *from;
		int frames = 0;

		fprintf(w->out, "| %u | ", i + 1);
		count(w, e->count);
		fputs(" | ", w->out);
		pct(w, e->count, r->p->total);
		fputs(" | ", w->out);
		code(w, root.s, root.len, true);
		fputs(" | ", w->out);
		if (!t) {
			fputs("*(no function)* |\n", w->out);
			continue;
		}
		/* the last PATH_FRAMES frames, " -> " between them, a run of
		 * one frame (recursion) as "f ×N" */
		g_string_truncate(path, 0);
		from = t + tail.len;
		for (;;) {
			const char *start = from, *prev;
			size_t len;
			unsigned run = 1;

			while (start > t && start[-1] != ';')
				start--;
			len = (size_t)(from - start);
			while (start > t) {	/* the frames before: the same? */
				prev = start - 1;
				while (prev > t && prev[-1] != ';')
					prev--;
				if ((size_t)(start - 1 - prev) != len || memcmp(prev, start, len) != 0)
					break;
				start = prev;
				run++;
			}
			if (frames++)
				g_string_prepend(path, " -> ");
			if (run > 1) {
				char n[32];

				snprintf(n, sizeof(n), " \u00d7%u", run);
				g_string_prepend(path, n);
			}
			g_string_prepend_len(path, from - len, (gssize)len);
			if (start == t)
				break;
			from = start - 1;
			if (frames == PATH_FRAMES) {
				g_string_prepend(path, "\u2026 -> ");
				break;
			}
		}
		code(w, path->str, path->len, true);
		fputs(" |\n", w->out);
	}
	more(w, r->top_paths->len, r->npaths, "stacks");
	g_string_free(path, TRUE);
}

static void functions(struct mw *w, bool self)
{
	const struct report *r = w->r;
	const GArray *v = self ? r->self : r->incl;
	GString *name = g_string_new(NULL);

	fputs(self ? "\n## Self: functions at the leaf\n\n"
		   : "\n## Inclusive: functions on the stack\n\n", w->out);
	header(w, (const char *[]){ "Function", r->o->unit, "Share", NULL }, "lrr");
	for (guint i = 0; i < v->len; i++) {
		const struct frame_row *f = &g_array_index(v, struct frame_row, i);

		g_string_truncate(name, 0);
		frame_row_name(f, name);
		fputs("| ", w->out);
		code(w, name->str, name->len, true);
		fputs(" | ", w->out);
		count(w, f->count);
		fputs(" | ", w->out);
		pct(w, f->count, r->p->total);
		fputs(" |\n", w->out);
	}
	more(w, v->len, v->len, "functions");
	g_string_free(name, TRUE);
}

static void categories(struct mw *w)
{
	const struct report *r = w->r;
	const struct category_list *l = r->o->categories;
	guint n = MIN(r->cats->len, r->o->top);

	fputs("\n## Categories\n\n"
	      "Stacks through a frame matching each category's regex (a stack may be in\n"
	      "several; the regexes are in the JSON report and fold-report(1)).\n\n",
	      w->out);
	header(w, (const char *[]){ "Category", r->o->unit, "Share", NULL }, "lrr");
	for (guint i = 0; i < n; i++) {
		size_t ci = g_array_index(r->cats, size_t, i);

		fputs("| ", w->out);
		cstr(w, category_list_name(l, ci), true);
		fputs(" | ", w->out);
		count(w, r->p->cat_counts[ci]);
		fputs(" | ", w->out);
		pct(w, r->p->cat_counts[ci], r->p->total);
		fputs(" |\n", w->out);
	}
	more(w, n, r->cats->len, "categories");
}

static void quality(struct mw *w)
{
	const struct report *r = w->r;
	const struct profile *p = r->p;

	fputs("\n## Symbol quality\n\n", w->out);
	header(w, (const char *[]){ "Stacks", r->o->unit, "Share", NULL }, "lrr");
	fputs("| Unresolved: through `[unknown]` or a DSO without symbols | ", w->out);
	count(w, p->unresolved);
	fputs(" | ", w->out);
	pct(w, p->unresolved, p->total);
	fputs(" |\n| Truncated: not reaching a thread entry (`_start`, `start_thread`, `clone`, ...) | ",
	      w->out);
	count(w, p->truncated);
	fputs(" | ", w->out);
	pct(w, p->truncated, p->total);
	fputs(" |\n| Program frames hidden: an unresolved frame among or beyond them | ", w->out);
	count(w, p->hidden);
	fputs(" | ", w->out);
	pct(w, p->hidden, p->total);
	fputs(" |\n| Program's callers lost: truncated, not at a library's thread start | ", w->out);
	count(w, p->lost);
	fputs(" | ", w->out);
	pct(w, p->lost, p->total);
	fputs(" |\n", w->out);
	if (share_at_least(p->hidden, p->total, FK_COUNT_ONE / 20) ||
	    share_at_least(p->lost, p->total, FK_COUNT_ONE / 20))
		fputs("\nAbove 5%, they hide findings: build with `-g -fno-omit-frame-pointer`"
		      " (libraries too), or record with `perf record --call-graph dwarf`.\n",
		      w->out);
}

static void contention(struct mw *w)
{
	const struct report *r = w->r;
	guint n = MIN(r->contention->len, r->o->top);
	uint64_t ms = share_scaled(r->o->min_share, FK_COUNT_ONE, 1000);

	if (!r->off)
		return;
	fprintf(w->out, "\n## Contention: on-CPU and off-CPU\n\n"
		"Functions on at least %" G_GUINT64_FORMAT ".%" G_GUINT64_FORMAT
		"%% of the stacks of both profiles (roots and thread entries aside), by the smaller share;"
		" lock wait: most of their off-CPU time is in stacks that wait on a lock"
		" at or beyond them.\n\n", ms / 10, ms % 10);
	header(w, (const char *[]){ "Function", "On-CPU", "Off-CPU", "Lock wait", NULL }, "lrrl");
	for (guint i = 0; i < n; i++) {
		const struct contention_row *c = &g_array_index(r->contention, struct contention_row, i);

		fputs("| ", w->out);
		code(w, c->on->name.s, c->on->name.len, true);
		fputs(" | ", w->out);
		pct(w, c->on->incl, r->p->total);
		fputs(" | ", w->out);
		pct(w, c->off->incl, r->off->total);
		fputs(c->lock_wait ? " | yes (" : " | no (", w->out);
		pct(w, c->off->lock_wait, c->off->incl);
		fputs(") |\n", w->out);
	}
	more(w, n, r->contention->len, "functions");
}

void report_write_markdown(FILE *out, const struct report *r, bool part)
{
	struct mw w = { out, r, g_string_new(NULL) };

	if (part)
		putc('\n', out);
	summary(&w, part);
	findings(&w);
	threads(&w);
	hot_paths(&w);
	functions(&w, true);
	functions(&w, false);
	categories(&w);
	quality(&w);
	contention(&w);
	g_string_free(w.tmp, TRUE);
}
