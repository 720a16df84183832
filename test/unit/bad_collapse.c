/*
 * bad_collapse.c - an input naming very many distinct events must cost
 * neither quadratic time nor memory that grows with the input, and its
 * note on stderr stays one short line.
 */
#include "bad_check.h"

#include "collapse/collapse.h"

#include <string.h>

static void add(struct collapser *c, const char *event)
{
	struct perf_frame f = {
		.pc = { "1000", 4 }, .sym = { "leaf", 4 }, .dso = { "/bin/p", 6 },
	};
	struct perf_sample s = {
		.comm = { "prog", 4 }, .tid = { "1", 1 },
		.event = { event, strlen(event) },
		.period = 1, .has_period = true, .frames = &f, .nframes = 1,
	};
	collapser_add(c, &s);
}

static fk_count total(struct collapser *c)
{
	return fold_table_total(collapser_table(c), 0);
}

int main(void)
{
	struct collapse_opts o = { 0 };
	struct collapser *c;
	char ev[32], *note;
	gint64 t0 = g_get_monotonic_time();
	double secs;

	/* 200,000 distinct events: the first is kept, the rest counted */
	c = collapser_new(&o);
	for (int i = 0; i < 200000; i++) {
		snprintf(ev, sizeof(ev), "ev%d", i);
		add(c, ev);
	}
	add(c, "ev0");
	secs = (double)(g_get_monotonic_time() - t0) / 1e6;
	printf("200,000 distinct events: %.3f s\n", secs);
	CHECK(total(c) == fk_count_from_u64(2), "kept samples");
	note = collapser_event_note(c);
	CHECK(note && strlen(note) < 600, "note of %zu bytes", note ? strlen(note) : 0);
	CHECK(note && strstr(note, "kept event 'ev0' (2 samples)"), "%.300s", note ? note : "(no note)");
	/* 8 listed, the other 199,991 dropped samples summed */
	CHECK(note && strstr(note, "'ev8' (1 samples) and over 1015 more events (199991 samples)"),
	      "%.300s", note ? note : "(no note)");
	g_free(note);
	collapser_free(c);

	/* the filtered event is kept even when it comes after the first 1024 */
	o.event_filter = "ev150000";
	c = collapser_new(&o);
	for (int i = 0; i < 200000; i++) {
		snprintf(ev, sizeof(ev), "ev%d", i);
		add(c, ev);
		if (i % 2)
			add(c, "ev150000");
	}
	CHECK(total(c) == fk_count_from_u64(100001), "filtered samples");
	note = collapser_event_note(c);
	CHECK(note && strstr(note, "kept event 'ev150000' (100001 samples); dropped 'ev0' (1 samples)"),
	      "%.300s", note ? note : "(no note)");
	g_free(note);
	collapser_free(c);

	/* two events, as perf records them: the note is as before */
	o.event_filter = NULL;
	c = collapser_new(&o);
	add(c, "cycles");
	add(c, "instructions");
	add(c, "cycles");
	note = collapser_event_note(c);
	CHECK(note && strcmp(note, "kept event 'cycles' (2 samples); dropped 'instructions' "
			     "(1 samples); choose with --event-filter") == 0, "%.300s", note ? note : "(no note)");
	g_free(note);
	collapser_free(c);
	/*
	 * Without a process name, a chain that names no frame (only a
	 * comment line) gives an empty stack: skipped and counted each time,
	 * also once the chain is cached (found by fuzz/perfscript.c: the
	 * second such sample was folded in as an empty stack)
	 */
	{
		struct skip_log *skips = skip_log_new();
		struct perf_sample s = {
			.tid = { "1", 1 }, .period = 1, .raw = { "# c\n", 4 },
			.file = "in", .lineno = 7,
		};

		o.skips = skips;
		c = collapser_new(&o);
		for (int i = 0; i < 3; i++)
			collapser_add(c, &s);
		CHECK(fold_table_size(collapser_table(c)) == 0, "%zu stacks",
		      fold_table_size(collapser_table(c)));
		CHECK(skip_log_total(skips) == 3, "%lu skips",
		      (unsigned long)skip_log_total(skips));
		collapser_free(c);
		skip_log_free(skips);
	}
	return bad_done();
}
