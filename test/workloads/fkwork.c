/*
 * fkwork - a small multi-threaded, multi-process workload for the perf
 * plugin tests and benchmark.  Build with frame pointers:
 *
 *	cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
 *	   -o fkwork fkwork.c
 *	fkwork [MILLISECONDS] [SPINNERS]
 *
 * The main process "fkwork" runs, for about MILLISECONDS (default 1000):
 *  - SPINNERS (default 2) threads "spin-N" burning CPU in spin_outer ->
 *    spin_mid -> spin_leaf and hash_outer -> hash_leaf;
 *  - "sleep-long" and "sleep-short", both on a 10 ms cycle: the first
 *    sleeps 10 ms (wait_long), the second sleeps 1 ms (wait_short) then
 *    computes for 9 ms (between_naps): over any stretch of time the same
 *    number of sleeps, off-CPU times ten to one;
 *  - "lock-a" and "lock-b", which take turns holding one mutex for about
 *    2 ms (hold_lock), so each waits for the other (wait_for_lock).
 * It forks one child that renames itself "fkwork-child" (a process whose
 * name changes while it runs) and spins in child_work.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static double deadline;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static unsigned long spin_leaf(unsigned long x)
{
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

NOINLINE static unsigned long spin_mid(unsigned long x)
{
	return spin_leaf(x) ^ spin_leaf(x + 1);
}

NOINLINE static unsigned long spin_outer(unsigned long x)
{
	return spin_mid(x) + 1;
}

NOINLINE static unsigned long hash_leaf(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x ^= (x << 13) ^ (x >> 7) ^ (x << 17);
	return x;
}

NOINLINE static unsigned long hash_outer(unsigned long x)
{
	return hash_leaf(x) + hash_leaf(x ^ 0x55);
}

static void *spinner(void *arg)
{
	char name[16];
	unsigned long x = (unsigned long)arg;

	snprintf(name, sizeof(name), "spin-%lu", (unsigned long)arg);
	pthread_setname_np(pthread_self(), name);
	while (now() < deadline) {
		x = spin_outer(x);
		x = hash_outer(x);
	}
	sink += x;
	return NULL;
}

NOINLINE static void nap(long us)
{
	struct timespec ts = { us / 1000000, us % 1000000 * 1000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

NOINLINE static void wait_long(void)
{
	nap(10000);
}

NOINLINE static void wait_short(void)
{
	nap(1000);
}

NOINLINE static void between_naps(void)
{
	double until = now() + 0.009;
	unsigned long x = 3;

	while (now() < until)
		x = hash_leaf(x);
	sink += x;
}

static void *sleeper(void *arg)
{
	int is_long = arg != NULL;

	pthread_setname_np(pthread_self(), is_long ? "sleep-long" : "sleep-short");
	while (now() < deadline) {
		if (is_long) {
			wait_long();
		} else {
			wait_short();
			between_naps();
		}
	}
	return NULL;
}

NOINLINE static void hold_lock(void)
{
	double until = now() + 0.002;
	unsigned long x = 1;

	while (now() < until)
		x = spin_leaf(x);
	sink += x;
}

NOINLINE static void wait_for_lock(void)
{
	pthread_mutex_lock(&lock);
}

static void *locker(void *arg)
{
	pthread_setname_np(pthread_self(), arg ? "lock-a" : "lock-b");
	while (now() < deadline) {
		wait_for_lock();
		hold_lock();
		pthread_mutex_unlock(&lock);
		/* let the other one in */
		nap(100);
	}
	return NULL;
}

NOINLINE static void child_work(void)
{
	unsigned long x = 7;

	while (now() < deadline)
		x = spin_mid(x);
	sink += x;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	long spinners = argc > 2 ? atol(argv[2]) : 2;
	pthread_t t[64];
	int n = 0;
	pid_t child;

	if (ms <= 0 || spinners < 0 || spinners > 32) {
		fprintf(stderr, "usage: fkwork [MILLISECONDS] [SPINNERS]\n");
		return 2;
	}
	deadline = now() + ms / 1000.0;
	child = fork();
	if (child == 0) {
		prctl(PR_SET_NAME, "fkwork-child");
		child_work();
		return 0;
	}
	for (long i = 0; i < spinners; i++)
		pthread_create(&t[n++], NULL, spinner, (void *)(i + 1));
	pthread_create(&t[n++], NULL, sleeper, (void *)1);
	pthread_create(&t[n++], NULL, sleeper, NULL);
	pthread_create(&t[n++], NULL, locker, (void *)1);
	pthread_create(&t[n++], NULL, locker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
