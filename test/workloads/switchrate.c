/* switchrate RATE SECONDS: about RATE context switches a second (a
 * thread's switch out and back in counted once) of 50 threads, each
 * sleeping until its next tick (clock_nanosleep through libc, from a few
 * frames of its own): a busy server's rate of waits, for bench/. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#define THREADS 50
#define NOINLINE __attribute__((noinline))

static long period_ns;
static struct timespec end;
static volatile unsigned long sink;

static void add_ns(struct timespec *t, long ns)
{
	t->tv_nsec += ns;
	while (t->tv_nsec >= 1000000000) {
		t->tv_nsec -= 1000000000;
		t->tv_sec++;
	}
}

static int before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

NOINLINE static void wait_tick(struct timespec *next)
{
	add_ns(next, period_ns);
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

NOINLINE static void work(void)
{
	for (int i = 0; i < 200; i++)
		sink += (unsigned long)i * i;
}

NOINLINE static void serve(struct timespec *next)
{
	char frame[256];	/* a frame's worth of stack, as a handler's */

	frame[sink % sizeof(frame)] = 1;
	work();
	wait_tick(next);
	sink += (unsigned long)frame[0];
}

static void *run(void *arg)
{
	struct timespec next;

	/* ticks as asked, not rounded up to the default 50 us slack */
	prctl(PR_SET_TIMERSLACK, 1UL);
	clock_gettime(CLOCK_MONOTONIC, &next);
	add_ns(&next, (long)(size_t)arg * (period_ns / THREADS));
	while (before(&next, &end))
		serve(&next);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	double rate = argc == 3 ? atof(argv[1]) : 0, secs = argc == 3 ? atof(argv[2]) : 0;

	if (!(rate >= 1 && rate <= 1e7) || !(secs > 0 && secs < 1e6)) {
		fprintf(stderr, "usage: switchrate RATE SECONDS\n");
		return 2;
	}
	period_ns = (long)(1e9 * THREADS / rate);
	clock_gettime(CLOCK_MONOTONIC, &end);
	add_ns(&end, (long)(secs * 1e9));
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
