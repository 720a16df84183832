/*
 * exechop.c - a process that execs one program after another, each time
 * from the same address: built twice from this file, static and at a
 * fixed address (-static -no-pie), with -DSYS=sys_a and -DSYS=sys_b, the
 * two programs have the same code at the same addresses under different
 * names.  `exechop-a CALLS COUNT A B` makes CALLS system calls, then execs
 * B with the programs swapped and COUNT - 1, and so on until COUNT is 0:
 *	./exechop-a 200 500 ./exechop-a ./exechop-b
 * A sample taken in the kernel during an exec names its user addresses in
 * whichever program perf maps there at that moment: the old one until the
 * new one's MMAP record, whatever the COMM record says
 * (test/scripts/plugin-exec.sh).
 */
#include <stdlib.h>
#include <stdio.h>
#include <sys/syscall.h>

#ifndef SYS
#define SYS sys_a
#endif

/* every system call from one instruction: the same user address */
__attribute__((noinline)) static long SYS(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv, char **envp)
{
	char count[24];
	long calls, left;

	if (argc != 5 || (calls = atol(argv[1])) < 0 || (left = atol(argv[2])) < 0) {
		fputs("usage: exechop CALLS COUNT SELF OTHER\n", stderr);
		return 2;
	}
	for (long i = 0; i < calls; i++)
		SYS(SYS_getppid, 0, 0, 0);
	if (left == 0)
		return 0;
	snprintf(count, sizeof(count), "%ld", left - 1);
	char *next[] = { argv[4], argv[1], count, argv[4], argv[3], NULL };
	SYS(SYS_execve, (long)argv[4], (long)next, (long)envp);
	perror(argv[4]);
	return 1;
}
