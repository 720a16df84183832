/*
 * fkserver - a small multi-process "server" for the fp-record tests: a
 * main process that starts two workers of the same executable (as a
 * server spawns its workers: fork, then exec of its own file with
 * --worker N), each with several named threads.  Build with frame
 * pointers:
 *
 *	cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
 *	   -o fkserver fkserver.c
 *	fkserver [MILLISECONDS [RUSAGE_FILE]]
 *
 * Each process uses about half a CPU.  Every process runs for about MILLISECONDS (default 1000; 0 means until
 * SIGTERM or SIGINT), with the threads:
 *  - "spin" (main) or "decode" (workers): computes for 2 ms in
 *    accept_loop / decode_step, then sleeps 8 ms;
 *  - "lock-a" and "lock-b": each holds one mutex for about 0.5 ms
 *    (hold_lock), then sleeps 1 ms, so each often waits for the other
 *    (wait_for_lock);
 *  - "sleeper": sleeps 10 ms at a time in wait_tick.
 * The main thread of the main process waits for its workers.  With
 * RUSAGE_FILE, the main process writes there, at the end, one line per
 * process: "PID CPU_NS", the CPU time (user + system) the kernel
 * accounted to it, the main process first; the workers' come from wait4().
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double deadline;		/* 0: until a signal */
static volatile sig_atomic_t stopping;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static int is_worker;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int running(void)
{
	return !stopping && (deadline == 0 || now() < deadline);
}

NOINLINE static void nap(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) != 0 && !stopping)
		;
}

NOINLINE static unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 500; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

NOINLINE static void burn(double seconds)
{
	double until = now() + seconds;
	unsigned long x = 1;

	while (now() < until)
		x = mix(x);
	sink += x;
}

NOINLINE static void parse_request(void)
{
	burn(0.002);
}

NOINLINE static void accept_loop(void)
{
	parse_request();
}

NOINLINE static void decode_step(void)
{
	burn(0.002);
}

static void *spinner(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), is_worker ? "decode" : "spin");
	while (running()) {
		if (is_worker)
			decode_step();
		else
			accept_loop();
		nap(8000);
	}
	return NULL;
}

NOINLINE static void hold_lock(void)
{
	burn(0.0005);
}

NOINLINE static void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
}

static void *locker(void *arg)
{
	pthread_setname_np(pthread_self(), arg ? "lock-a" : "lock-b");
	while (running()) {
		wait_for_lock();
		hold_lock();
		pthread_mutex_unlock(&lock);
		nap(1000);
	}
	return NULL;
}

NOINLINE static void wait_tick(void)
{
	nap(10000);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	while (running())
		wait_tick();
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static long long cpu_ns(const struct rusage *ru)
{
	return (ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000000000LL +
	       (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1000LL;
}

int main(int argc, char **argv)
{
	long ms = 1000;
	const char *rusage_file = NULL;
	pthread_t t[4];
	pid_t workers[2] = { 0, 0 };
	struct rusage ru[2];
	struct sigaction sa = { .sa_handler = on_signal };
	char msarg[32], self[4096];
	ssize_t n;

	if (argc > 2 && strcmp(argv[1], "--worker") == 0) {
		is_worker = 1;
		ms = atol(argv[3]);
	} else {
		if (argc > 1)
			ms = atol(argv[1]);
		if (argc > 2)
			rusage_file = argv[2];
		if (ms < 0 || argc > 3) {
			fprintf(stderr, "usage: fkserver [MILLISECONDS [RUSAGE_FILE]]\n");
			return 2;
		}
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	deadline = ms ? now() + ms / 1000.0 : 0;
	if (!is_worker) {
		/* exec the file itself, not /proc/self/exe: the name of the
		 * file exec'd becomes the process's name */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0) {
			perror("fkserver: /proc/self/exe");
			return 1;
		}
		self[n] = 0;
		snprintf(msarg, sizeof(msarg), "%ld", ms);
		for (int i = 0; i < 2; i++) {
			workers[i] = fork();
			if (workers[i] == 0) {
				char n[2] = { (char)('1' + i), 0 };
				execl(self, argv[0], "--worker", n, msarg, (char *)NULL);
				perror("fkserver: exec");
				_exit(127);
			}
		}
	}
	pthread_create(&t[0], NULL, spinner, NULL);
	pthread_create(&t[1], NULL, locker, (void *)1);
	pthread_create(&t[2], NULL, locker, NULL);
	pthread_create(&t[3], NULL, sleeper, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (is_worker)
		return 0;
	for (int i = 0; i < 2; i++) {
		int st;

		memset(&ru[i], 0, sizeof(ru[i]));
		if (workers[i] > 0) {
			if (deadline == 0)
				kill(workers[i], SIGTERM);
			wait4(workers[i], &st, 0, &ru[i]);
		}
	}
	if (rusage_file) {
		struct rusage self;
		FILE *f = fopen(rusage_file, "w");

		getrusage(RUSAGE_SELF, &self);
		if (!f) {
			perror(rusage_file);
			return 1;
		}
		fprintf(f, "%d %lld\n", (int)getpid(), cpu_ns(&self));
		for (int i = 0; i < 2; i++)
			fprintf(f, "%d %lld\n", (int)workers[i], cpu_ns(&ru[i]));
		if (fclose(f) != 0)
			return 1;
	}
	return 0;
}
