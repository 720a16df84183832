/*
 * leafcall - a program built with frame pointers whose CPU time is in a
 * leaf it calls: test/scripts/oncpu-callerloss.sh checks what the plugin
 * says of the stacks' lost callers against it.
 *
 *	cc -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o leafcall leafcall.c
 *	leafcall copy|own ROUNDS
 *
 * copy: copier() calls libc's memcpy (built without frame pointers, as
 * Debian's libc is) 64 times a round: most samples are in memcpy, whose
 * caller copier() the frame-pointer walk loses.  own: the same rounds of
 * work in a function of the program (with its frame pointer): the walk
 * loses no caller, but for the few samples at a function's first or last
 * instructions.
 */
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static char a[1 << 16], b[1 << 16];
volatile unsigned long sink;

NOINLINE static void copier(void)
{
	for (int i = 0; i < 64; i++) {
		memcpy(a, b + (i & 7), sizeof(a) - 8);
		sink += (unsigned char)a[i];
	}
}

/* its state on the stack, so that the compiler gives it a frame (a leaf
 * with none keeps no frame pointer, whatever -fno-omit-frame-pointer says) */
NOINLINE static void adder(void)
{
	volatile unsigned long x[2] = { sink, 0 };

	for (int i = 0; i < 64 * 4096; i++)
		x[i & 1] = x[i & 1] * 6364136223846793005ul + (unsigned long)i;
	sink = x[0] + x[1];
}

int main(int argc, char **argv)
{
	long rounds;
	int own;

	if (argc != 3 || (strcmp(argv[1], "copy") && strcmp(argv[1], "own")))
		return 2;
	own = strcmp(argv[1], "own") == 0;
	rounds = atol(argv[2]);
	for (long i = 0; i < rounds; i++) {
		if (own)
			adder();
		else
			copier();
		sink += (unsigned long)i;
	}
	return 0;
}
