/*
 * fkidle - a process with threads asleep for as long as it runs, beside
 * threads that work, for fp-record's thread states (threads.tsv):
 *
 *	cc -O1 -g -fno-omit-frame-pointer -pthread -o fkidle fkidle.c
 *	fkidle
 *
 * Until it is killed:
 *  - the main thread waits to join "piper" (a futex, forever);
 *  - "piper" reads a pipe no one writes to (read(), forever);
 *  - "napper" sleeps 1 ms at a time (it switches all the time);
 *  - "worker" computes for a while, then sleeps 1 ms, over and over.
 * The two asleep are there like a server's master process: no switch, no
 * wake-up while recorded, so no event names them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];
static volatile unsigned long sink;

static void *piper(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "piper");
	while (read(fds[0], &c, 1) != 0)
		;
	return NULL;
}

static void *napper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "napper");
	for (;;)
		usleep(1000);
	return NULL;
}

static void *worker(void *arg)
{
	unsigned long x = 1;

	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	for (;;) {
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
		usleep(1000);
	}
	return NULL;
}

int main(void)
{
	pthread_t p, n, w;

	if (pipe(fds) != 0) {
		perror("pipe");
		return 1;
	}
	pthread_create(&p, NULL, piper, NULL);
	pthread_create(&n, NULL, napper, NULL);
	pthread_create(&w, NULL, worker, NULL);
	/* the write end stays open: piper's read never returns */
	pthread_join(p, NULL);
	return 0;
}
