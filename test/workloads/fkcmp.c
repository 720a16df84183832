/*
 * fkcmp - a small server for the before-and-after tests: a main process
 * that starts two workers of its own executable (fork, then exec with
 * --worker N, as a server spawns them), so that two runs can be recorded
 * with one change between them.  Build with frame pointers:
 *
 *	cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
 *	   -o fkcmp fkcmp.c
 *	[FKCMP_SLOW=1] fkcmp [MILLISECONDS]
 *
 * Every process runs for about MILLISECONDS (default 2000; 0: until
 * SIGTERM or SIGINT, which the main process passes on to its workers):
 *  - the main process's thread "accept" computes in parse_request for
 *    about 1 ms, then sleeps 9 ms in wait_request;
 *  - each worker's thread "decode" computes in decode_frame for about
 *    1 ms, then sleeps 9 ms in wait_frame; its thread "flush" sleeps
 *    10 ms at a time in wait_flush.
 * With FKCMP_SLOW=1 in the environment (the change), each worker's decode
 * also computes for about 1 ms in checksum_frame, which the other run
 * never calls, and its flush thread sleeps 2 ms more each time in
 * slow_flush; the main process is unchanged.  With FKCMP_SLOW=2, only
 * the worker numbered 2 does so: an unbalanced worker.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double deadline;		/* 0: until a signal */
static volatile sig_atomic_t stopping;
static volatile unsigned long sink;
static int slow;

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

	nanosleep(&ts, NULL);
}

/* about ms of CPU time, as a thread's own CPU clock counts it: inlined,
 * so that the time is its caller's own */
static inline __attribute__((always_inline)) void burn(double ms)
{
	struct timespec ts;
	double end;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec + ts.tv_nsec / 1e9 + ms / 1e3;
	do {
		for (int i = 0; i < 20000; i++)
			sink = sink * 6364136223846793005UL + 1442695040888963407UL;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
}

NOINLINE static void parse_request(void) { burn(1); }
NOINLINE static void wait_request(void) { nap(9000); }
NOINLINE static void decode_frame(void) { burn(1); }
NOINLINE static void checksum_frame(void) { burn(1); }
NOINLINE static void wait_frame(void) { nap(9000); }
NOINLINE static void wait_flush(void) { nap(10000); }
NOINLINE static void slow_flush(void) { nap(2000); }

static void *decoder(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "decode");
	while (running()) {
		decode_frame();
		if (slow)
			checksum_frame();
		wait_frame();
	}
	return NULL;
}

static void *flusher(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "flush");
	while (running()) {
		wait_flush();
		if (slow)
			slow_flush();
	}
	return NULL;
}

static void *acceptor(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "accept");
	while (running()) {
		parse_request();
		wait_request();
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

int main(int argc, char **argv)
{
	const char *env = getenv("FKCMP_SLOW");
	int is_worker = argc > 1 && strcmp(argv[1], "--worker") == 0;
	long ms = 2000;
	pthread_t t[2];
	pid_t kids[2];

	if (argc > 1 + 2 * is_worker)
		ms = atol(argv[1 + 2 * is_worker]);
	slow = env && (strcmp(env, "1") == 0 ||
		       (strcmp(env, "2") == 0 && is_worker && argc > 2 && strcmp(argv[2], "2") == 0));
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (ms > 0)
		deadline = now() + ms / 1e3;
	if (is_worker) {
		pthread_create(&t[0], NULL, decoder, NULL);
		pthread_create(&t[1], NULL, flusher, NULL);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		return 0;
	}
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (len <= 0)
		return 1;
	self[len] = 0;
	for (int i = 0; i < 2; i++) {
		char n[16], left[32];

		snprintf(n, sizeof(n), "%d", i + 1);
		snprintf(left, sizeof(left), "%ld", ms);
		kids[i] = fork();
		if (kids[i] == 0) {
			execl(self, argv[0], "--worker", n, left, (char *)NULL);
			_exit(127);
		}
	}
	pthread_create(&t[0], NULL, acceptor, NULL);
	pthread_join(t[0], NULL);
	for (int i = 0; i < 2; i++) {
		/* a signal that ended the main process ends its workers */
		if (kids[i] > 0 && stopping)
			kill(kids[i], SIGTERM);
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
	}
	return 0;
}
