/*
 * workload - the bundled multi-threaded program that `make demo`, the tests
 * and the benchmarks profile: worker threads named with spaces ("my worker
 * N") that compute, contend for one mutex, and make system calls, so a
 * recording has user, library and kernel frames, on- and off-CPU.
 *
 *	workload [SECONDS] [THREADS]      (default 2 seconds, 3 threads)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static double deadline;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) static unsigned long fib(unsigned n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static void hold_lock(void)
{
	pthread_mutex_lock(&lock);
	spin(200000);
	pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void do_io(int fd_in, int fd_out)
{
	char buf[4096];
	for (int i = 0; i < 16; i++)
		if (read(fd_in, buf, sizeof(buf)) > 0 && write(fd_out, buf, sizeof(buf)) < 0)
			break;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	char name[16];
	long id = (long)arg;
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);

	snprintf(name, sizeof(name), "my worker %ld", id);
	prctl(PR_SET_NAME, name);
	while (now() < deadline) {
		switch (id % 3) {
		case 0: spin(300000); hold_lock(); break;
		case 1: sink += fib(22); hold_lock(); break;
		default: do_io(in, out); hold_lock(); break;
		}
	}
	close(in);
	close(out);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	int n = argc > 2 ? atoi(argv[2]) : 3;
	pthread_t t[64];

	if (n < 1 || n > 64 || secs <= 0) {
		fprintf(stderr, "usage: workload [SECONDS] [THREADS 1-64]\n");
		return 2;
	}
	deadline = now() + secs;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
