/* Unit tests for the perf script parser and the frame-naming rules. */
#include "check.h"
#include "collapse/collapse.h"
#include "collapse/framename.h"
#include "collapse/perfscript.h"

static char *str(struct fk_str s)
{
	static char buf[8][256];
	static int k;
	char *b = buf[k++ % 8];
	snprintf(b, 256, "%.*s", (int)s.len, s.s);
	return b;
}

static void header(const char *line, const char *comm, const char *pid,
		   const char *tid, const char *event, uint64_t period,
		   const char *rest)
{
	struct perf_sample s;
	struct fk_str r;

	if (!perf_script_parse_header(line, strlen(line), &s, &r)) {
		fprintf(stderr, "header not parsed: %s\n", line);
		check_failures++;
		return;
	}
	CHECK_STR(str(s.comm), comm);
	CHECK_STR(str(s.pid), pid);
	CHECK_STR(str(s.tid), tid);
	CHECK_STR(str(s.event), event);
	CHECK(s.period == period);
	CHECK_STR(str(r), rest);
}

static void test_headers(void)
{
	header("my worker 0  4053    81.899266:    1001001 cpu-clock:pppH: ",
	       "my worker 0", "", "4053", "cpu-clock:pppH", 1001001, "");
	header("java 24636/25607 [000] 4794564.109216: cycles:",
	       "java", "24636", "25607", "cycles", 1, "");
	header("V8 WorkerThread 24636/25607 [000] 94564.109216: cycles:",
	       "V8 WorkerThread", "24636", "25607", "cycles", 1, "");
	header("a 1 [000] 1.000000: 5 cpu-clock:", "a", "", "1", "cpu-clock", 5, "");
	header(":-1    -1/-1    [002]   100.000001:     250000 cpu-clock: ",
	       ":-1", "-1", "-1", "cpu-clock", 250000, "");
	header("java  3278 cpu-clock: ", "java", "", "3278", "cpu-clock", 1, "");
	header("7 4054    81.9: 1 cpu-clock:pppH: ", "7", "", "4054", "cpu-clock:pppH", 1, "");
	header("21789/21793   790.264289: cpu-clock:pppH: ", "", "21789", "21793",
	       "cpu-clock:pppH", 1, "");
	header("my worker 0 21789/21793 cpu-clock:pppH: ", "my worker 0", "21789",
	       "21793", "cpu-clock:pppH", 1, "");
	header("perf 123 [000] 1.23: sched:sched_switch: prev_comm=perf prev_pid=123 ==> next_pid=0",
	       "perf", "", "123", "sched:sched_switch", 1,
	       "prev_comm=perf prev_pid=123 ==> next_pid=0");
	header("     my worker 0 21793   790.264289: cpu-clock:pppH:      5606 spin (/tmp/w)",
	       "my worker 0", "", "21793", "cpu-clock:pppH", 1, "5606 spin (/tmp/w)");
	header("p 1 [000] 1.0:          7              cycles: ", "p", "", "1", "cycles", 7, "");
	{
		struct perf_sample s;
		struct fk_str r;
		const char *bad[] = { "", "just some words", "ffff foo (/bin/x)", "12345" };
		for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
			CHECK(!perf_script_parse_header(bad[i], strlen(bad[i]), &s, &r));
	}
}

static void frame(const char *line, const char *pc, const char *sym,
		  const char *dso, bool inlined)
{
	struct perf_frame f;

	if (!perf_script_parse_frame(line, strlen(line), &f)) {
		fprintf(stderr, "frame not parsed: %s\n", line);
		check_failures++;
		return;
	}
	CHECK_STR(str(f.pc), pc);
	CHECK_STR(str(f.sym), sym);
	CHECK_STR(str(f.dso), dso);
	CHECK(f.inlined == inlined);
}

static void test_frames(void)
{
	struct perf_frame f;

	frame("\t    11f7 worker+0x6e (/tmp/rec/w)", "11f7", "worker+0x6e", "/tmp/rec/w", false);
	frame("\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])", "ffffffff8103ce3b",
	      "native_safe_halt", "[kernel.kallsyms]", false);
	frame("    1234 run (/opt/my app (x86)/lib.so)", "1234", "run", "/opt/my app (x86)/lib.so", false);
	frame("    1234 foo(int) const (/x)", "1234", "foo(int) const", "/x", false);
	frame("    7f1e2215d058  (/lib/libc.so)", "7f1e2215d058", " ", "/lib/libc.so", false);
	frame("    4005c8 inner (inlined)", "4005c8", "inner", "", true);
	frame("    4005c8 inner (/a.out) (inlined)", "4005c8", "inner", "/a.out", true);
	CHECK(!perf_script_parse_frame("    no dso here", 15, &f));
	CHECK(!perf_script_parse_frame("", 0, &f));
}

static const char *named(const char *sym, const char *dso, bool kernel, bool jit,
			 bool addrs, bool java)
{
	static char buf[512];
	struct frame_name_opts o = { .annotate_kernel = kernel, .annotate_jit = jit,
				     .include_addrs = addrs };
	struct perf_frame f = {
		.pc = { "abc", 3 }, .sym = { sym, strlen(sym) }, .dso = { dso, strlen(dso) },
	};
	GString *out = g_string_new(NULL);

	frame_name_append(out, &o, &f, java);
	snprintf(buf, sizeof(buf), "%s", out->str);
	g_string_free(out, TRUE);
	return buf;
}

/* The name of a frame perf printed as "SYM (inlined)". */
static const char *named_inlined(const char *sym, bool annotate)
{
	static char buf[512];
	struct frame_name_opts o = { .annotate_kernel = true, .annotate_inlined = annotate };
	struct perf_frame f = {
		.pc = { "abc", 3 }, .sym = { sym, strlen(sym) }, .inlined = true,
	};
	GString *out = g_string_new(NULL);

	frame_name_append(out, &o, &f, false);
	snprintf(buf, sizeof(buf), "%s", out->str);
	g_string_free(out, TRUE);
	return buf;
}

static const char *cut(const char *name)
{
	static char buf[512];
	snprintf(buf, sizeof(buf), "%s", name);
	buf[frame_name_cut_args(buf, strlen(buf))] = '\0';
	return buf;
}

static void test_names(void)
{
	CHECK_STR(cut("foo(int)"), "foo");
	CHECK_STR(cut("std::function<void (int)>::operator()(int) const"),
		  "std::function<void (int)>::operator()");
	CHECK_STR(cut("Task<<lambda(uint64_t)>>::run(unsigned long)"), "Task<<lambda(uint64_t)>>::run");
	CHECK_STR(cut("main::{lambda(int)#1}::operator()(int) const"), "main::{lambda(int)#1}::operator()");
	CHECK_STR(cut("(anonymous namespace)::run(int)"), "(anonymous namespace)::run");
	CHECK_STR(cut("net/http.(*Client).Do"), "net/http.(*Client).Do");
	CHECK_STR(cut("operator<<(std::ostream&)"), "operator<<");
	CHECK_STR(cut("std::operator< <char>(a, b)"), "std::operator< <char>");
	CHECK_STR(cut("a::operator>>=(int)"), "a::operator>>=");
	CHECK_STR(cut("broken<x(int)"), "broken<x");	/* unbalanced: cut at first '(' */
	CHECK_STR(cut("plain"), "plain");
	CHECK_STR(cut("arr[2](int)"), "arr[2]");

	CHECK_STR(named("do_syscall_64+0x71", "[kernel.kallsyms]", true, false, false, false),
		  "do_syscall_64_[k]");
	CHECK_STR(named("tcp_sendmsg", "/lib/modules/4.3/build/vmlinux", true, false, false, false),
		  "tcp_sendmsg_[k]");
	CHECK_STR(named("tcp_sendmsg", "/usr/lib/debug/boot/vmlinux-5.4.0-42-generic", true, false, false, false),
		  "tcp_sendmsg_[k]");
	CHECK_STR(named("nf_hook", "/lib/modules/6.1.0/kernel/net/nf.ko", true, false, false, false),
		  "nf_hook_[k]");
	CHECK_STR(named("nf_hook", "/lib/modules/6.1.0/kernel/net/nf.ko.xz", true, false, false, false),
		  "nf_hook_[k]");
	CHECK_STR(named("nf_hook", "[nf_conntrack]", true, false, false, false), "nf_hook_[k]");
	CHECK_STR(named("f", "/opt/vmlinux-tools/bin/f", true, false, false, false), "f");
	CHECK_STR(named("f", "/opt/x.kor", true, false, false, false), "f");
	/* the vDSO and the process's other mappings run in user space */
	CHECK_STR(named("__vdso_clock_gettime+0x56", "[vdso]", true, false, false, false),
		  "__vdso_clock_gettime");
	CHECK_STR(named("[unknown]", "[vdso]", true, false, false, false), "[[vdso]]");
	CHECK_STR(named("f", "[vsyscall]", true, false, false, false), "f");
	CHECK_STR(named("f", "[heap]", true, false, false, false), "f");
	CHECK_STR(named("f", "[anon:jit]", true, false, false, false), "f");
	CHECK_STR(named("[unknown]", "[unknown]", true, false, false, false), "[unknown]");
	CHECK_STR(named("[unknown]", "[kernel.kallsyms]", false, false, false, false),
		  "[[kernel.kallsyms]]");
	CHECK_STR(named("[unknown]", "/usr/lib/libc.so.6", false, false, true, false),
		  "[libc.so.6 <abc>]");
	CHECK_STR(named("LFoo;::bar", "/tmp/perf-123.map", false, true, false, false), "LFoo:::bar_[j]");
	CHECK_STR(named("LFoo/Bar;::baz", "/tmp/perf-123.map", false, true, false, true), "Foo/Bar:::baz_[j]");
	CHECK_STR(named("f", "/x/jitted-123-4.so", false, true, false, false), "f_[j]");
	CHECK_STR(named("f", "/tmp/perf-.map", false, true, false, false), "f");
	CHECK_STR(named("outer->inner->leaf", "/a.out", false, false, false, false),
		  "outer;inner_[i];leaf_[i]");
	CHECK_STR(named("p->operator->", "/a.out", false, false, false, false), "p;operator->_[i]");
	/* perf's "(inlined)" frames: plain, as the Perl script and inferno
	 * name them, unless annotate_inlined asks for "_[i]" */
	CHECK_STR(named_inlined("mix+0x44", false), "mix");
	CHECK_STR(named_inlined("mix+0x44", true), "mix_[i]");
	CHECK_STR(named_inlined("a->b", false), "a;b_[i]");
	CHECK_STR(named("RegExp:[&<>\"']+0x1f", "/tmp/perf-7539.map", false, false, false, false),
		  "RegExp:[&<>]");
	CHECK_STR(named("off+0xABC", "/a", false, false, false, false), "off+0xABC");
	/* no frame ends in a blank and a number: "p;evil 1 5" would read as
	 * a differential line */
	CHECK_STR(named("evil 1+0x10", "/a", false, false, false, false), "evil_1");
	CHECK_STR(named("evil\t1", "/a", false, false, false, false), "evil_1");
	CHECK_STR(named("f 0.5 ", "/a", false, false, false, false), "f_0.5 ");
	CHECK_STR(named("f +2", "/a", false, false, false, false), "f_+2");
	CHECK_STR(named("f 1", "/tmp/perf-1.map", false, true, false, false), "f_1_[j]");
	CHECK_STR(named("a 1->b 2", "/a", false, false, false, false), "a_1;b_2_[i]");
	CHECK_STR(named("f -1", "/a", false, false, false, false), "f -1");
	CHECK_STR(named("f 1x", "/a", false, false, false, false), "f 1x");
	CHECK_STR(named("f 1.2.3", "/a", false, false, false, false), "f 1.2.3");
	CHECK_STR(named("12", "/a", false, false, false, false), "12");
	CHECK_STR(named("[unknown]", "/tmp/evil 1", false, false, false, false), "[evil 1]");
}

int main(void)
{
	test_headers();
	test_frames();
	test_names();
	return CHECK_DONE();
}
