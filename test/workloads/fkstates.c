/*
 * fkstates - a workload whose threads spend time in each scheduler state,
 * for the plugin's states mode tests:
 *
 *	cc -O1 -g -fno-omit-frame-pointer -pthread -o fkstates fkstates.c
 *	fkstates [MILLISECONDS]
 *
 * For about MILLISECONDS (default 1000):
 *  - "hog-N", one more than the machine has CPUs, burning CPU: on a
 *    CPU or runnable (preempted by each other);
 *  - "napper", sleeping 2 ms at a time (S), woken by its timer;
 *  - "forker", vfork()ing a child that sleeps 1 ms and exits: the parent
 *    waits for it uninterruptibly (D), woken by the child's exit.
 * Every thread lives until the end: none is made or exits in between.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double deadline;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *hog(void *arg)
{
	char name[16];
	unsigned long x = (unsigned long)arg;

	snprintf(name, sizeof(name), "hog-%lu", (unsigned long)arg);
	pthread_setname_np(pthread_self(), name);
	while (now() < deadline)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	return NULL;
}

static void *napper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "napper");
	while (now() < deadline)
		usleep(2000);
	return NULL;
}

static void *forker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "forker");
	while (now() < deadline) {
		pid_t p = vfork();

		if (p == 0) {
			usleep(1000);
			_exit(0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t[66];
	int n = 0;

	deadline = now() + ms / 1000.0;
	if (cpus < 1 || cpus > 63)
		cpus = cpus < 1 ? 1 : 63;
	for (long i = 0; i <= cpus; i++)
		pthread_create(&t[n++], NULL, hog, (void *)i);
	pthread_create(&t[n++], NULL, napper, NULL);
	pthread_create(&t[n++], NULL, forker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
