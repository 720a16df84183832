/* pingpong N SECONDS: N pairs of threads passing a byte through pipes,
 * each pass a sleep and a wake-up: context switches at a high rate */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *side(void *arg)
{
	int *fd = arg;
	char c = 0;

	while (!stop) {
		if (fd[1] >= 0 && write(fd[1], &c, 1) != 1)
			break;
		if (read(fd[0], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 2, secs = argc > 2 ? atoi(argv[2]) : 3;
	pthread_t t[64];
	int fds[64][2];

	if (pairs < 1 || pairs > 16)
		return 2;
	for (int i = 0; i < pairs; i++) {
		int a[2], b[2];

		if (pipe(a) || pipe(b))
			return 1;
		fds[2 * i][0] = a[0], fds[2 * i][1] = b[1];
		fds[2 * i + 1][0] = b[0], fds[2 * i + 1][1] = a[1];
		pthread_create(&t[2 * i], NULL, side, fds[2 * i]);
		pthread_create(&t[2 * i + 1], NULL, side, fds[2 * i + 1]);
	}
	sleep(secs);
	stop = 1;
	_exit(0);
}
