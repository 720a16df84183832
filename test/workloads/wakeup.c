/*
 * wakeup SECONDS LOG: threads whose wakers are known in advance, for the
 * plugin's offwake mode (test/scripts/plugin-offwake.sh).
 *
 *  - fkholder takes a mutex, holds it 20 ms (asleep in hold_lock()) and
 *    releases it in release_lock(), then rests 5 ms;
 *  - fkwaiter, 10 ms after each time it got the mutex, waits for it again
 *    in wait_for_lock(): about 15 ms, woken by fkholder's release_lock();
 *    each wait is written to LOG as "START END" (CLOCK_MONOTONIC ns), the
 *    workload's own timing of it;
 *  - fkwriter writes a byte to a pipe every 10 ms in write_token();
 *    fkreader waits for each in read_token(), woken by write_token().
 *
 * Built with frame pointers; the functions named are never inlined.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int pipefd[2], logfd = -1;

static void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* (each a frame of its own: the caller of a libc function without frame
 * pointers is the frame a frame-pointer walk may skip) */
NOINLINE static void unlock_it(void)
{
	pthread_mutex_unlock(&lock);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void release_lock(void)
{
	unlock_it();
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void hold_lock(void)
{
	pthread_mutex_lock(&lock);
	nap(20);
	release_lock();
	__asm__ volatile("" ::: "memory");
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "fkholder");
	for (;;) {
		hold_lock();
		nap(5);
	}
	return NULL;
}

NOINLINE static void lock_it(void)
{
	pthread_mutex_lock(&lock);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void wait_for_lock(void)
{
	unsigned long long t0 = now_ns(), t1;
	char line[64];
	int n;

	lock_it();
	t1 = now_ns();
	pthread_mutex_unlock(&lock);
	n = snprintf(line, sizeof(line), "%llu %llu\n", t0, t1);
	if (write(logfd, line, (size_t)n) != n)
		exit(1);
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "fkwaiter");
	for (;;) {
		nap(10);
		wait_for_lock();
	}
	return NULL;
}

NOINLINE static void write_it(void)
{
	char c = 'x';

	if (write(pipefd[1], &c, 1) != 1)
		exit(1);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void write_token(void)
{
	write_it();
	__asm__ volatile("" ::: "memory");
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "fkwriter");
	for (;;) {
		nap(10);
		write_token();
	}
	return NULL;
}

NOINLINE static void read_it(void)
{
	char c;

	if (read(pipefd[0], &c, 1) != 1)
		exit(1);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void read_token(void)
{
	read_it();
	__asm__ volatile("" ::: "memory");
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "fkreader");
	for (;;)
		read_token();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	void *(*fn[4])(void *) = { holder, waiter, writer, reader };

	if (argc != 3) {
		fputs("usage: wakeup SECONDS LOG\n", stderr);
		return 2;
	}
	logfd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (logfd < 0 || pipe(pipefd) != 0)
		return 1;
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL) != 0)
			return 1;
	sleep((unsigned)atoi(argv[1]));
	_exit(0);
}
