/*
 * fuzz/states.c - the plugin's thread states (perf-plugin/states.c, the
 * --dlarg states table) without perf: fuzzed sched_switch, sched_waking
 * and sched_wakeup_new records, encoded in the kernel's layouts and
 * decoded by field name, as foldkit.c's on_states() hands them over.
 *
 * Input: events.  An event: a kind byte (bits 1|2: 0 and 1 a switch, 2
 * sched_waking, 3 sched_wakeup_new; 4|8 the CPU; 16 a record cut short;
 * 32 a late one, its time the step before the latest; 64 the sample's
 * pid -1), then for a switch prev_pid and next_pid (signed bytes),
 * prev_state (a byte; kind bit 128 adds the preemption mark 0x100), for
 * a wake-up the wakee's pid (a signed byte); a comm (length byte & 15,
 * bytes); a 16-bit time step in ns.
 *
 * Checked: a record cut short is refused and changes nothing; no
 * thread's states add up to more than the window (first to last time
 * given); the table has its header and a line per thread with seven
 * cells, none with a control character, the four times whole numbers
 * adding up to at most the window in microseconds (rounded: + 1).
 */
#include "fuzz.h"

#include "states.h"

#include <glib.h>
#include <sys/stat.h>

#define COMMON \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* The 6.x kernel's layouts (fuzz/plugin.c's sched_switch) */
static const char SWITCH[] =
	"name: sched_switch\nID: 372\nformat:\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_pid=%d next_pid=%d\", REC->prev_pid, REC->next_pid\n";
#define WAKE(name, id) \
	"name: " name "\nID: " id "\nformat:\n" COMMON \
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n" \
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n" \
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n" \
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n" \
	"print fmt: \"pid=%d\", REC->pid\n"

static char g_dir[] = "/dev/shm/fuzz-states-XXXXXX";
static bool g_made;

static void put(const char *event, const char *text)
{
	char *d = g_strconcat(g_dir, "/", event, NULL), *f = g_strconcat(d, "/format", NULL);

	FUZZ_CHECK(mkdir(d, 0700) == 0, "mkdir %s failed", d);
	FUZZ_CHECK(g_file_set_contents(f, text, -1, NULL), "cannot write %s", f);
	g_free(d);
	g_free(f);
}

static void cleanup(void)
{
	static const char *const ev[] = { "sched_switch", "sched_waking", "sched_wakeup_new" };

	for (size_t i = 0; i < G_N_ELEMENTS(ev); i++) {
		char *d = g_strconcat(g_dir, "/", ev[i], NULL), *f = g_strconcat(d, "/format", NULL);

		unlink(f);
		rmdir(d);
		g_free(d);
		g_free(f);
	}
	rmdir(g_dir);
}

static void setup(void)
{
	if (g_made)
		return;
	FUZZ_CHECK(mkdtemp(g_dir), "mkdtemp failed");
	put("sched_switch", SWITCH);
	put("sched_waking", WAKE("sched_waking", "375"));
	put("sched_wakeup_new", WAKE("sched_wakeup_new", "376"));
	g_made = true;
	atexit(cleanup);
}

struct in {
	const uint8_t *p, *end;
};

static unsigned byte(struct in *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static void put32(uint8_t *raw, size_t at, int32_t v)
{
	memcpy(raw + at, &v, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, data + size };
	GError *err = NULL;
	struct states *s;
	uint64_t t = 1000000, latest = t, first = t, ns;
	bool any = false;
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	long n;
	int tid;
	bool perf_id;

	setup();
	s = states_new(g_dir, &err);
	FUZZ_CHECK(s, "states_new: %s", err ? err->message : "?");
	while (in.p < in.end) {
		unsigned kind = byte(&in), k = kind & 3, clen;
		uint8_t raw[64] = { 0 };
		uint32_t rsize = k < 2 ? 64 : 40;
		uint64_t when;
		bool ok;

		if (k < 2) {
			uint64_t state = byte(&in) | (kind & 128 ? 0x100 : 0);

			put32(raw, 24, (int8_t)byte(&in));
			put32(raw, 56, (int8_t)byte(&in));
			memcpy(raw + 32, &state, 8);
		} else {
			put32(raw, 24, (int8_t)byte(&in));
		}
		clen = byte(&in) & 15;
		for (unsigned i = 0; i < clen; i++)
			raw[8 + i] = (uint8_t)byte(&in);
		if (k < 2)
			memcpy(raw + 40, raw + 8, 16);
		latest += byte(&in) | byte(&in) << 8;
		when = kind & 32 && latest > first + 1 ? latest - 1 - (latest - first) / 2 : latest;
		if (kind & 16)
			rsize = k < 2 ? 59 : 27;
		/* a sample's ids: the kernel's; -1 (exiting); and, by the
		 * name's length, those of a PID namespace: 0 (a thread outside
		 * it) or another number */
		if (k < 2 && clen >= 14 && !(kind & 64))
			ok = states_switch(s, raw, rsize, (kind >> 2) & 3, when, clen == 15 ? 0 : 7,
					   clen == 15 ? 0 : (int)raw[24] ^ 0x40);
		else if (k < 2)
			ok = states_switch(s, raw, rsize, (kind >> 2) & 3, when,
					   kind & 64 ? -1 : 7, kind & 64 ? -1 : (int)raw[24]);
		else
			ok = states_wake(s, k == 2 ? STATES_WAKING : STATES_WAKEUP_NEW, raw, rsize,
					 when);
		FUZZ_CHECK(ok == !(kind & 16), "a record of %u bytes %s", rsize,
			   ok ? "decoded" : "refused");
		any = true;
	}
	states_finish(s, first, latest);
	if (any && states_longest(s, &tid, &perf_id, &ns))
		FUZZ_CHECK(ns <= latest - first, "thread %d: %llu ns in a window of %llu ns", tid,
			   (unsigned long long)ns, (unsigned long long)(latest - first));
	out = open_memstream(&text, &len);
	FUZZ_CHECK(out, "open_memstream failed");
	n = states_write(s, out, "<memory>", NULL, &err);
	fclose(out);
	FUZZ_CHECK(n >= 0, "states_write: %s", err ? err->message : "?");
	FUZZ_CHECK(g_str_has_prefix(text, STATES_HEADER), "no header");
	{
		char **lines = g_strsplit(text + strlen(STATES_HEADER), "\n", -1);
		long rows = 0;

		for (char **l = lines; *l && **l; l++, rows++) {
			char **cells = g_strsplit(*l, "\t", -1);
			uint64_t sum = 0;

			FUZZ_CHECK(g_strv_length(cells) == 7, "a line of %u cells: %s",
				   g_strv_length(cells), *l);
			for (const char *c = *l; *c; c++)
				FUZZ_CHECK(*c == '\t' || (unsigned char)*c >= 0x20, "a control character");
			for (int i = 3; i < 7; i++) {
				FUZZ_CHECK(cells[i][0] && strspn(cells[i], "0123456789") == strlen(cells[i]),
					   "not a number: %s", cells[i]);
				sum += g_ascii_strtoull(cells[i], NULL, 10);
			}
			FUZZ_CHECK(sum <= (latest - first) / 1000 + 1, "a thread of %llu us",
				   (unsigned long long)sum);
			g_strfreev(cells);
		}
		FUZZ_CHECK(rows == n, "%ld lines for %ld threads", rows, n);
		g_strfreev(lines);
	}
	free(text);
	states_free(s);
	return 0;
}
