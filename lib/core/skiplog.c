#include "core/skiplog.h"

#include <string.h>

struct skip_entry {
	const char *file;	/* points into files[] */
	uint64_t line;
	const char *reason;
};

struct reason_count {
	const char *reason;
	uint64_t n;
};

struct skip_log {
	GPtrArray *files;	/* owned copies of file names */
	GArray *entries;	/* struct skip_entry, at most SKIP_LOG_KEEP */
	GArray *reasons;	/* struct reason_count, first-seen order */
	uint64_t total;
};

struct skip_log *skip_log_new(void)
{
	struct skip_log *log = g_new0(struct skip_log, 1);

	log->files = g_ptr_array_new_with_free_func(g_free);
	log->entries = g_array_new(FALSE, FALSE, sizeof(struct skip_entry));
	log->reasons = g_array_new(FALSE, FALSE, sizeof(struct reason_count));
	return log;
}

void skip_log_free(struct skip_log *log)
{
	if (!log)
		return;
	g_ptr_array_free(log->files, TRUE);
	g_array_free(log->entries, TRUE);
	g_array_free(log->reasons, TRUE);
	g_free(log);
}

void skip_log_add(struct skip_log *log, const char *file, uint64_t line,
		  const char *reason)
{
	struct reason_count *rc = NULL;

	log->total++;
	for (guint i = 0; i < log->reasons->len; i++) {
		struct reason_count *r = &g_array_index(log->reasons, struct reason_count, i);
		if (r->reason == reason || strcmp(r->reason, reason) == 0) {
			rc = r;
			break;
		}
	}
	if (rc) {
		rc->n++;
	} else {
		struct reason_count nr = { reason, 1 };
		g_array_append_val(log->reasons, nr);
	}
	if (log->entries->len < SKIP_LOG_KEEP) {
		const char *name = NULL;
		struct skip_entry e;

		file = file ? file : "<stdin>";
		if (log->files->len)
			name = g_ptr_array_index(log->files, log->files->len - 1);
		if (!name || strcmp(name, file) != 0) {
			name = g_strdup(file);
			g_ptr_array_add(log->files, (gpointer)name);
		}
		e.file = name;
		e.line = line;
		e.reason = reason;
		g_array_append_val(log->entries, e);
	}
}

uint64_t skip_log_total(const struct skip_log *log)
{
	return log->total;
}

char *skip_log_summary(const struct skip_log *log, const char *what)
{
	GString *s;

	if (!log->total)
		return NULL;
	s = g_string_new(NULL);
	g_string_printf(s, "%" G_GUINT64_FORMAT " %s skipped:", log->total,
			what ? what : (log->total == 1 ? "line" : "lines"));
	for (guint i = 0; i < log->reasons->len; i++) {
		struct reason_count *r = &g_array_index(log->reasons, struct reason_count, i);
		g_string_append_printf(s, "%s %" G_GUINT64_FORMAT " %s",
				       i ? "," : "", r->n, r->reason);
	}
	return g_string_free(s, FALSE);
}

uint64_t skip_log_foreach(const struct skip_log *log,
			  void (*fn)(const char *, uint64_t, const char *, void *),
			  void *data)
{
	for (guint i = 0; i < log->entries->len; i++) {
		struct skip_entry *e = &g_array_index(log->entries, struct skip_entry, i);
		fn(e->file, e->line, e->reason, data);
	}
	return log->total - log->entries->len;
}
