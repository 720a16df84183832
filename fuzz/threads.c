/*
 * threads - fp-record's thread states (lib/capture/threads.h): the perf
 * plugin's states TSV, the window its standard error says, and the texts
 * of /proc/TID/wchan, syscall and stack.  The first byte picks (bit 1: the
 * /proc texts, else the TSV); the rest is the input:
 *  - TSV: read as the plugin's table, and its text as the plugin's
 *    standard error; an accepted table merged with two threads /proc might
 *    list (one the table has, one it lacks) into threads.tsv's rows, which
 *    never add up to more than the window, list each wanted thread once,
 *    and written, cut to their first seven cells, read back the same;
 *  - /proc: the state byte, then wchan, syscall and stack separated by
 *    '\001' (a part left out is unreadable): one line, without a tab or a
 *    control character, that starts with the state.
 */
#include "fuzz.h"

#include "capture/threads.h"
#include "core/textesc.h"

#include <glib.h>

static void tsv(const char *s, size_t n)
{
	GError *err = NULL;
	GPtrArray *rows = fk_states_parse(s, n, "states.tsv", &err), *merged, *again;
	struct fk_thread_start st[2] = {
		{ .pid = 7, .tid = 7, .state = 'S', .comm = "main", .waiting = "S syscall=read" },
		{ .pid = 7, .tid = 8, .state = 'D', .comm = "io", .waiting = "D unreadable" },
	};
	GPtrArray *start = g_ptr_array_new();
	GHashTable *seen;
	GString *out, *cut;
	uint64_t window = 0;
	int pids[] = { 7, 0 };
	size_t np = 1;
	char *z = g_strndup(s, n);

	FUZZ_CHECK(!rows == !!err, "a result and an error, or neither");
	FUZZ_CHECK(!err || g_str_has_prefix(err->message, "states.tsv"), "'%s'", err->message);
	g_clear_error(&err);
	if (fk_states_window_us(z, &window))
		FUZZ_CHECK(strstr(z, "foldkit: states of "), "a window from nowhere");
	g_free(z);
	if (!rows) {
		g_ptr_array_unref(start);
		return;
	}
	for (guint i = 0; i < rows->len; i++) {
		const struct fk_thread_row *r = g_ptr_array_index(rows, i);

		FUZZ_CHECK(r->pid >= -1 && (r->tid > 0 || r->tid == -1), "pid %d tid %d", r->pid,
			   r->tid);
		FUZZ_CHECK(fk_text_is_safe(r->comm, strlen(r->comm), 0), "comm '%s'", r->comm);
		if (i == 0 && r->pid > 0) {
			pids[1] = r->pid;
			np = 2;
		}
	}
	g_ptr_array_add(start, &st[0]);
	g_ptr_array_add(start, &st[1]);
	if (!window)
		window = n;
	merged = fk_threads_merge(rows, start, pids, np, window, &err);
	FUZZ_CHECK(!merged == !!err, "a result and an error, or neither");
	g_clear_error(&err);
	if (merged) {
		seen = g_hash_table_new(g_direct_hash, g_direct_equal);
		for (guint i = 0; i < merged->len; i++) {
			const struct fk_thread_row *r = g_ptr_array_index(merged, i);
			uint64_t sum = 0;

			for (int k = 0; k < FK_ST_N; k++)
				sum += r->us[k];
			FUZZ_CHECK(sum <= window, "thread %d: %llu us in %llu", r->tid,
				   (unsigned long long)sum, (unsigned long long)window);
			FUZZ_CHECK(r->pid == pids[0] || r->pid == pids[np - 1], "pid %d", r->pid);
			FUZZ_CHECK(r->tid > 0, "tid %d", r->tid);
			FUZZ_CHECK(!g_hash_table_contains(seen, GINT_TO_POINTER(r->tid)),
				   "thread %d twice", r->tid);
			g_hash_table_add(seen, GINT_TO_POINTER(r->tid));
			if (r->waiting)
				FUZZ_CHECK(sum == window, "thread %d of /proc: %llu us", r->tid,
					   (unsigned long long)sum);
		}
		/* the threads /proc gave are there, whatever the table held */
		FUZZ_CHECK(g_hash_table_contains(seen, GINT_TO_POINTER(7)) &&
			   g_hash_table_contains(seen, GINT_TO_POINTER(8)), "a thread of /proc left out");
		g_hash_table_destroy(seen);
		out = g_string_new(NULL);
		fk_threads_format(out, merged);
		/* the first seven cells are the plugin's table again */
		cut = g_string_new(NULL);
		for (const char *l = out->str; *l;) {
			const char *eol = strchr(l, '\n'), *tab = l;

			FUZZ_CHECK(eol, "a line without its end");
			for (int k = 0; k < 7 && tab; k++)
				tab = memchr(tab + (k > 0), '\t', (size_t)(eol - tab - (k > 0)));
			FUZZ_CHECK(tab && !memchr(tab + 1, '\t', (size_t)(eol - tab - 1)),
				   "not eight cells");
			z = g_strndup(l, (size_t)(eol - l));
			g_strdelimit(z, "\t", ' ');
			FUZZ_CHECK(fk_text_is_safe(z, strlen(z), 0), "a control character: '%s'", z);
			g_free(z);
			g_string_append_len(cut, l, tab - l);
			g_string_append_c(cut, '\n');
			l = eol + 1;
		}
		again = fk_states_parse(cut->str, cut->len, "threads.tsv", &err);
		FUZZ_CHECK(again && again->len == merged->len, "%s", err ? err->message : "rows");
		for (guint i = 0; i < again->len; i++) {
			const struct fk_thread_row *a = g_ptr_array_index(again, i);
			const struct fk_thread_row *b = g_ptr_array_index(merged, i);

			FUZZ_CHECK(a->pid == b->pid && a->tid == b->tid && !strcmp(a->comm, b->comm) &&
				   !memcmp(a->us, b->us, sizeof(a->us)), "row %u read back", i);
		}
		g_ptr_array_unref(again);
		g_string_free(cut, TRUE);
		g_string_free(out, TRUE);
		g_ptr_array_unref(merged);
	}
	g_ptr_array_unref(start);
	g_ptr_array_unref(rows);
}

static void proc_texts(const char *s, size_t n)
{
	char *z = g_strndup(s + (n > 0), n - (n > 0)), **parts = g_strsplit(z, "\001", 4), *w;
	char state = n ? s[0] : 'S';
	const char *p[3] = { NULL, NULL, NULL };

	for (int i = 0; i < 3 && parts[i]; i++)
		p[i] = *parts[i] ? parts[i] : NULL;
	w = fk_thread_wait_text(state, p[0], p[1], p[2]);
	FUZZ_CHECK(*w && !strchr(w, '\t') && !strchr(w, '\n'), "'%s'", w);
	FUZZ_CHECK(fk_text_is_safe(w, strlen(w), 0), "a control character in '%s'", w);
	FUZZ_CHECK(w[0] == (g_ascii_isgraph(state) ? state : '?'), "'%s' starts otherwise", w);
	g_free(w);
	g_strfreev(parts);
	g_free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		proc_texts((const char *)data + 1, size - 1);
	else
		tsv((const char *)data + 1, size - 1);
	return 0;
}
