/*
 * perfcmd.h - the perf command lines fp-record runs, and what perf's
 * error output means for the user.
 *
 *	struct fk_record_cmd c = { .perf = "perf", .data = "DIR/on.data",
 *				   .ctl_fd = 3, .ack_fd = 4, .freq = 99 };
 *	char **argv = fk_perf_record_on(&c, pids, npids);
 *	// perf record -e cpu-clock -F 99 --call-graph fp -p 12,15 -o DIR/on.data
 *	//   --delay=-1 --control fd:3,4 --no-buildid-cache
 *	g_strfreev(argv);
 *
 * Both recordings start disabled (--delay=-1) and are switched on and off
 * through perf's control descriptors ("enable", "disable", each answered
 * "ack"), so that the on- and off-CPU recordings cover the same window.
 *
 * On-CPU: the cpu-clock event, so the counts are nanoseconds of CPU time
 * on every machine (a PMU's cycles would count cycles, and most virtual
 * machines have none).  With -p, perf follows the threads and children
 * the processes start while it records.
 *
 * Off-CPU: every sched:sched_switch (period 1) with its stack, machine
 * wide, as the plugin's offcpu mode needs both ends of each wait (the
 * switch-in happens in another task).  fk_switch_filter() keeps the
 * recording small: only the switches of the given threads, and of tasks
 * newer than a pid (threads and children started during the window).
 * With --switch-events, perf also writes a small record of every switch
 * on the machine (no filter applies to them): the tracepoint misses many
 * switches from the idle task, and the plugin ends a wait at the
 * switch-in only these records then give.  With stack_dump, a second
 * sched:sched_switch event records the first stack_dump bytes of the user
 * stack and rip, rsp and rbp at each switch out of the threads
 * (fk_switch_out_filter()): the plugin repairs each switch's frame-pointer
 * chain with it where it passes through code without frame pointers
 * (perf-plugin/userstack.h):
 * The threads' wake-ups too (sched:sched_waking, sched:sched_wakeup_new,
 * filtered by the wakee, fk_wake_filter()): the plugin cuts each sleep
 * at its wake-up, the time after it being runnable, not waiting:
 *	perf record -e sched:sched_switch --filter F
 *	  -e sched:sched_switch/call-graph=dwarf,stack-size=1024,max-stack=1/ --filter G
 *	  --user-regs=bp -e sched:sched_waking --filter W -e sched:sched_wakeup_new --filter W
 *	  -m 8192K -c 1 --call-graph fp -a --switch-events ...
 */
#ifndef FOLDKIT_CAPTURE_PERFCMD_H
#define FOLDKIT_CAPTURE_PERFCMD_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* The kernel takes a tracepoint filter of at most a page. */
#define FK_FILTER_MAX 4000

enum fk_call_graph { FK_CG_FP, FK_CG_DWARF };

struct fk_record_cmd {
	const char *perf;	/* the perf program */
	const char *data;	/* the perf.data file to write */
	int ctl_fd, ack_fd;	/* perf's control descriptors, in the child */
	unsigned freq;		/* on-CPU samples per second */
	enum fk_call_graph cg;	/* on-CPU stacks */
	/* off-CPU: bytes of each thread's user stack dumped at its switches
	 * out (0: frame-pointer chains alone), with the tracepoint filter of
	 * those switches (fk_switch_out_filter(), or NULL: every one) */
	unsigned stack_dump;
	const char *dump_filter;
	/* off-CPU: the tracepoint filter of the wake-ups recorded
	 * (fk_wake_filter(), or NULL: every one) */
	const char *wake_filter;
	/* off-CPU: perf record -m, KiB per CPU (0: perf's default) */
	unsigned mmap_kb;
};

/*
 * The default stack_dump: enough for the frames of libc and libstdc++
 * between a blocked thread and the program's code, and, where they do
 * not keep the program's frame pointer (condition waits, sockets), for
 * the rest of a thread's stack as deep as most are (docs/fp-record.1).
 */
#define FK_STACK_DUMP_DEFAULT 1024
/* perf's limit (a sample is at most 64 KiB), rounded down to 8 bytes */
#define FK_STACK_DUMP_MAX 65528

/*
 * perf record -m for the off-CPU recording run as root, in KiB per CPU:
 * room for a busy CPU's switches while perf is late to copy them (a lost
 * one leaves a wait without an end; perf's default of 512 KiB lost some at
 * 50,000 switches a second on a loaded machine): 8 MiB (some 5,000
 * switches with their 1 KiB dumps), less on machines of more than 8 CPUs,
 * 64 MiB in all, at least 512 KiB.  (Others' locked memory is limited.)
 */
unsigned fk_offcpu_buffer_kb(long cpus);

/* Argument vectors: free with g_strfreev(). */
char **fk_perf_record_on(const struct fk_record_cmd *c, const int *pids, size_t n);
char **fk_perf_record_off(const struct fk_record_cmd *c, const char *filter);

/*
 * The tracepoint filter for the switches of threads tids[0..n) (any
 * order; runs of consecutive ids become ranges) and, when newer_than >=
 * 0, of every task with a larger id:
 *	"prev_pid==7||next_pid==7||(prev_pid>=9&&prev_pid<=12)||...||prev_pid>40||next_pid>40"
 * NULL when it would be longer than max bytes (then record everything).
 * Free with g_free().
 */
char *fk_switch_filter(const int *tids, size_t n, int newer_than, size_t max);

/*
 * The same for the switches out of those threads alone (prev_pid):
 *	"prev_pid==7||(prev_pid>=9&&prev_pid<=12)||...||prev_pid>40"
 */
char *fk_switch_out_filter(const int *tids, size_t n, int newer_than, size_t max);

/*
 * The same for the wake-ups of those threads (the wakee's pid field):
 *	"pid==7||(pid>=9&&pid<=12)||...||pid>40"
 */
char *fk_wake_filter(const int *tids, size_t n, int newer_than, size_t max);

/*
 * perf script -i DATA --dlfilter PLUGIN [--dlarg MODE] --dlarg split=DIR:
 * one folded file per process in DIR, with DIR/index.tsv.  mode is the
 * plugin's ("offcpu", "runq", "offwake"), NULL for on-CPU samples.
 */
char **fk_perf_fold(const char *perf, const char *data, const char *plugin,
		    const char *mode, const char *split_dir);

/*
 * perf script -i DATA --dlfilter PLUGIN --dlarg states --dlarg output=FILE:
 * each thread's time by state (the off-CPU recording), a TSV in FILE.
 */
char **fk_perf_states(const char *perf, const char *data, const char *plugin,
		      const char *output);

/* perf script -i DATA -F +pid: the text fp-collapse --pid reads (DWARF). */
char **fk_perf_script(const char *perf, const char *data);

/* "6.1.187" from `perf version` output ("perf version 6.1.187"), or NULL. */
char *fk_perf_version(const char *out);

/* What a failed perf record was doing, for fk_perf_failure(). */
struct fk_perf_context {
	bool offcpu;		/* the sched_switch recording */
	bool root;		/* fp-record runs as root */
	int paranoid;		/* kernel.perf_event_paranoid, or INT_MIN */
	const char *version;	/* perf's, or NULL */
};

/*
 * One message, with the fix, for perf record's error output log (what it
 * printed before failing): permissions (perf_event_paranoid, tracefs), a
 * process gone, a perf too old for --control, sched_switch missing; else
 * perf's first error line.  Free with g_free().
 */
char *fk_perf_failure(const char *log, const struct fk_perf_context *ctx);

/* How to install perf on Debian and Ubuntu, for "perf not found". */
extern const char fk_perf_install_hint[];

#endif
