/*
 * The JSON report: one object per profile, one table row a line, the
 * schema documented in docs/fold-report.1.  Names are JSON strings made
 * by jsonesc.h, the escaper of every JSON writer in foldkit: control
 * characters are \u escapes (byte 0x7f is "\u007f", never the text
 * "\x7f", which is a name of its own), invalid UTF-8 is U+FFFD, and '<',
 * '>', '&', U+2028 and U+2029 are \u escapes, so the document is valid
 * UTF-8 that can also sit inside an HTML <script> element.
 */
#include "core/jsonesc.h"
#include "report/model.h"

#include <string.h>

struct jw {
	FILE *out;
	GString *tmp;
	const char *pad;	/* the object's indentation */
	bool first;		/* no field written yet */
};

static void json_str(struct jw *w, const char *s, size_t len)
{
	g_string_truncate(w->tmp, 0);
	fk_json_escape(w->tmp, s, len, FK_JSON_HTML);
	fwrite(w->tmp->str, 1, w->tmp->len, w->out);
}

static void json_cstr(struct jw *w, const char *s)
{
	json_str(w, s, strlen(s));
}

static void json_count(struct jw *w, fk_count c)
{
	char buf[FK_COUNT_BUFSZ];

	fputs(count_str(c, buf), w->out);
}

static void json_share(struct jw *w, fk_count c, fk_count total)
{
	uint64_t s = share_scaled(c, total, 1000000);

	fprintf(w->out, "%" G_GUINT64_FORMAT ".%06" G_GUINT64_FORMAT, s / 1000000, s % 1000000);
}

/* Starts the next field: '"name": ' on a line of its own. */
static void field(struct jw *w, const char *name)
{
	fprintf(w->out, "%s\n%s  \"%s\": ", w->first ? "" : ",", w->pad, name);
	w->first = false;
}

/* Starts the i-th row of an array field. */
static void row(struct jw *w, guint i)
{
	fprintf(w->out, "%s\n%s    {", i ? "," : "", w->pad);
}

static void end_array(struct jw *w, guint n)
{
	if (n)
		fprintf(w->out, "\n%s  ]", w->pad);
	else
		fputs("]", w->out);
}

static void files(struct jw *w, const char *const *v, size_t n)
{
	putc('[', w->out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", w->out);
		json_cstr(w, v[i]);
	}
	putc(']', w->out);
}

/* Starts row i: '{"KEY": "NAME", "count": C, "share": S' (no '}'). */
static void named_row(struct jw *w, guint i, const char *key, const char *s, size_t len,
		      fk_count c, fk_count total)
{
	row(w, i);
	fprintf(w->out, "\"%s\": ", key);
	json_str(w, s, len);
	fputs(", \"count\": ", w->out);
	json_count(w, c);
	fputs(", \"share\": ", w->out);
	json_share(w, c, total);
}

/* A row's "kernel" field: the words of its summarised kernel part. */
static void kernel_field(struct jw *w, unsigned kpart)
{
	if (!kpart)
		return;
	fputs(", \"kernel\": ", w->out);
	json_cstr(w, profile_kpart_label(kpart));
}

/* "frame" is the frame, or "[kernel: LABEL]" for a kernel part alone;
 * "kernel" says the kernel part's words */
static void frame_rows(struct jw *w, const struct report *r, const GArray *v)
{
	GString *name = g_string_new(NULL);

	fputs("[", w->out);
	for (guint i = 0; i < v->len; i++) {
		const struct frame_row *f = &g_array_index(v, struct frame_row, i);

		g_string_truncate(name, 0);
		if (f->f)
			g_string_append_len(name, f->f->name.s, (gssize)f->f->name.len);
		else
			frame_row_name(f, name);
		named_row(w, i, "frame", name->str, name->len, f->count, r->p->total);
		kernel_field(w, f->kpart);
		putc('}', w->out);
	}
	end_array(w, v->len);
	g_string_free(name, TRUE);
}

static void amount(struct jw *w, fk_count c, fk_count total)
{
	fputs("{\"count\": ", w->out);
	json_count(w, c);
	fputs(", \"share\": ", w->out);
	json_share(w, c, total);
	putc('}', w->out);
}

static void finding_string(struct jw *w, const struct finding *f)
{
	GString *s = g_string_new(NULL);

	/* the text as Markdown would show it, names between backticks */
	for (guint i = 0; i < f->parts->len; i++) {
		const struct text_part *p = &g_array_index(f->parts, struct text_part, i);

		if (p->code)
			g_string_append_c(s, '`');
		g_string_append_len(s, f->buf->str + p->off, (gssize)p->len);
		if (p->code)
			g_string_append_c(s, '`');
	}
	json_str(w, s->str, s->len);
	g_string_free(s, TRUE);
}

void report_write_json(FILE *out, const struct report *r, int indent, bool close)
{
	const struct profile *p = r->p;
	const struct report_input *in = r->in;
	unsigned top = r->o->top;
	char pad[16];
	struct jw w = { out, g_string_new(NULL), pad, true };
	GString *text;
	guint n;

	snprintf(pad, sizeof(pad), "%*s", indent > 8 ? 8 : indent, "");
	fprintf(out, "%s{", pad);
	field(&w, "title");
	json_cstr(&w, in->title);
	field(&w, "inputs");
	files(&w, in->files, in->nfiles);
	field(&w, "unit");
	json_cstr(&w, r->o->unit);
	field(&w, "total");
	json_count(&w, p->total);
	field(&w, "stacks");
	fprintf(out, "%zu", p->nstacks);
	field(&w, "process");
	json_cstr(&w, in->process ? in->process : "whole");
	field(&w, "process_count");
	fprintf(out, "%zu", in->nprocesses);
	field(&w, "thread_count");
	fprintf(out, "%zu", in->nthreads);
	field(&w, "thread_names");
	fprintf(out, "%u", r->threads->len);
	field(&w, "function_count");
	fprintf(out, "%u", p->frames->len);

	field(&w, "threads");
	putc('[', out);
	n = MIN(r->threads->len, top);
	for (guint i = 0; i < n; i++) {
		const struct thread_row *t = &g_array_index(r->threads, struct thread_row, i);

		named_row(&w, i, "name", t->name.s, t->name.len, t->count, p->total);
		if (r->o->group_threads)
			fprintf(out, ", \"members\": %u", t->members);
		putc('}', out);
	}
	end_array(&w, n);

	field(&w, "top_paths");
	text = g_string_new(NULL);
	putc('[', out);
	for (guint i = 0; i < r->top_paths->len; i++) {
		const struct path_row *e = g_ptr_array_index(r->top_paths, i);

		g_string_truncate(text, 0);
		g_string_append_len(text, e->root.s, (gssize)e->root.len);
		if (e->tail.s) {
			g_string_append_c(text, ';');
			g_string_append_len(text, e->tail.s, (gssize)e->tail.len);
		}
		named_row(&w, i, "stack", text->str, text->len, e->count, p->total);
		/* its kernel part summarised as its last frame (report.c) */
		kernel_field(&w, e->kpart);
		putc('}', out);
	}
	end_array(&w, r->top_paths->len);
	g_string_free(text, TRUE);

	field(&w, "self");
	frame_rows(&w, r, r->self);
	field(&w, "inclusive");
	frame_rows(&w, r, r->incl);

	field(&w, "categories");
	putc('[', out);
	n = MIN(r->cats->len, top);
	for (guint i = 0; i < n; i++) {
		size_t ci = g_array_index(r->cats, size_t, i);
		const char *name = category_list_name(r->o->categories, ci);

		named_row(&w, i, "name", name, strlen(name), p->cat_counts[ci], p->total);
		fputs(", \"regex\": ", out);
		json_cstr(&w, category_list_regex(r->o->categories, ci));
		putc('}', out);
	}
	end_array(&w, n);

	field(&w, "unresolved");
	amount(&w, p->unresolved, p->total);
	field(&w, "truncated");
	amount(&w, p->truncated, p->total);
	field(&w, "program_hidden");
	amount(&w, p->hidden, p->total);
	field(&w, "program_lost");
	amount(&w, p->lost, p->total);

	field(&w, "offcpu");
	if (r->off) {
		fputs("{\"inputs\": ", out);
		files(&w, in->off_files, in->noff_files);
		fputs(", \"unit\": ", out);
		json_cstr(&w, r->o->offcpu_unit);
		fputs(", \"total\": ", out);
		json_count(&w, r->off->total);
		fprintf(out, ", \"stacks\": %zu}", r->off->nstacks);
	} else {
		fputs("null", out);
	}
	field(&w, "contention");
	if (r->off) {
		putc('[', out);
		n = MIN(r->contention->len, top);
		for (guint i = 0; i < n; i++) {
			const struct contention_row *c = &g_array_index(r->contention,
									struct contention_row, i);

			row(&w, i);
			fputs("\"frame\": ", out);
			json_str(&w, c->on->name.s, c->on->name.len);
			fputs(", \"on_share\": ", out);
			json_share(&w, c->on->incl, p->total);
			fputs(", \"off_share\": ", out);
			json_share(&w, c->off->incl, r->off->total);
			fprintf(out, ", \"lock_wait\": %s", c->lock_wait ? "true" : "false");
			fputs(", \"lock_wait_share\": ", out);
			json_share(&w, c->off->lock_wait, c->off->incl);
			putc('}', out);
		}
		end_array(&w, n);
	} else {
		fputs("null", out);
	}

	field(&w, "findings");
	putc('[', out);
	for (guint i = 0; i < r->findings->len; i++) {
		const struct finding *f = g_ptr_array_index(r->findings, i);

		row(&w, i);
		fputs("\"rule\": ", out);
		json_cstr(&w, f->rule->name);
		fputs(", \"class\": ", out);
		json_cstr(&w, f->cls);
		fputs(", \"process\": ", out);
		json_cstr(&w, in->process ? in->process : "whole");
		fprintf(out, ", \"profile\": \"%s\", \"unit\": ",
			f->profile ? f->profile : f->off ? "off" : "on");
		json_cstr(&w, finding_unit(f, r));
		fputs(", \"frame\": ", out);
		json_str(&w, f->frame.s, f->frame.len);
		fputs(", \"edge\": [", out);
		if (f->from.len) {
			json_str(&w, f->from.s, f->from.len);
			fputs(", ", out);
		}
		if (f->to.len)
			json_str(&w, f->to.s, f->to.len);
		fputs("], \"count\": ", out);
		json_count(&w, f->count);
		fputs(", \"share\": ", out);
		json_share(&w, f->count, f->total ? f->total : p->total);
		fputs(", \"save_ns\": ", out);
		if (f->save >= 0)
			json_count(&w, f->save);
		else
			fputs("null", out);
		fputs(", \"text\": ", out);
		finding_string(&w, f);
		putc('}', out);
	}
	end_array(&w, r->findings->len);
	if (close)
		fprintf(out, "\n%s}", pad);
	g_string_free(w.tmp, TRUE);
}
