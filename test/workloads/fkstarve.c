/*
 * fkstarve - threads that contend for one lock and are CPU-starved too,
 * for fp-record's run-queue and off-wake profiles (test/scripts/fp-record-runq.sh):
 *
 *	cc -O1 -g -fno-omit-frame-pointer -pthread -o fkstarve fkstarve.c
 *	fkstarve [THREADS]
 *
 * THREADS (default: three times the CPUs, at least 6) threads "locker-N"
 * loop for ever: each takes the one mutex in take_lock(), burns CPU for
 * about 200 us holding it (hold_lock()), releases it in release_lock(),
 * then burns about 600 us in work_free().  With more threads burning CPU
 * than there are CPUs, a thread is runnable (preempted, or woken and not
 * yet running) much of the time; one that waits for the mutex sleeps in
 * the kernel until the holder's unlock wakes it, and then waits again,
 * runnable, for a CPU: the two waits a profile must keep apart.
 * It runs until killed.  Built with frame pointers; the functions named are
 * never inlined.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

/* burns about us microseconds of CPU time (this thread's, not the clock's:
 * time preempted does not count) */
static void burn(long us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 200; i++)
			sink += (unsigned long)i * 7;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static NOINLINE void take_lock(void)
{
	pthread_mutex_lock(&lock);
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void hold_lock(void)
{
	burn(200);
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void release_lock(void)
{
	pthread_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void work_free(void)
{
	burn(600);
	__asm__ volatile("" ::: "memory");
}

static void *locker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "locker-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		take_lock();
		hold_lock();
		release_lock();
		work_free();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = argc > 1 ? atoi(argv[1]) : (int)(cpus > 2 ? cpus * 3 : 6);
	pthread_t t;

	if (n < 2)
		n = 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, NULL, locker, (void *)(long)i) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (;;)
		pause();
}
