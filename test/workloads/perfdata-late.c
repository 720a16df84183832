/*
 * perfdata-late.c - makes a perf.data file whose exec COMM record perf
 * script hands over late, as perf record writes one now and then (a CPU's
 * buffer drained after a round in which perf already handed over later
 * times: perf's "N out of order events").  `perfdata-late FILE NAME`
 * moves the first COMM record at exec naming NAME past half of the
 * PERF_RECORD_FINISHED_ROUND records after it, in place; it exits 1 when
 * there is no such COMM, or fewer than 4 rounds after it, 2 on errors.
 * The samples of the thread between the COMM's time and its new place
 * are named, by perf, after the program before the exec
 * (test/scripts/plugin-order.sh).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMM 3
#define FINISHED_ROUND 68
#define MISC_EXEC (1 << 13)

static uint16_t size_at(const unsigned char *p)
{
	return (uint16_t)(p[6] | p[7] << 8);
}

int main(int argc, char **argv)
{
	FILE *f;
	unsigned char *buf;
	long len;
	uint64_t off, size, at, end, comm = 0, to = 0;
	unsigned rounds = 0, seen = 0;

	if (argc != 3 || !(f = fopen(argv[1], "r+b"))) {
		fputs("usage: perfdata-late FILE NAME\n", stderr);
		return 2;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 104 || !(buf = malloc((size_t)len)) ||
	    fseek(f, 0, SEEK_SET) != 0 || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fputs("perfdata-late: cannot read the file\n", stderr);
		return 2;
	}
	memcpy(&off, buf + 40, 8);
	memcpy(&size, buf + 48, 8);
	if (memcmp(buf, "PERFILE2", 8) != 0 || off > (uint64_t)len || size > (uint64_t)len - off) {
		fputs("perfdata-late: not a whole perf.data file\n", stderr);
		return 2;
	}
	end = off + size;
	/* the COMM, then the rounds after it */
	for (at = off; at + 8 <= end && size_at(buf + at) >= 8; at += size_at(buf + at)) {
		uint32_t type;
		uint16_t misc = (uint16_t)(buf[at + 4] | buf[at + 5] << 8);

		memcpy(&type, buf + at, 4);
		if (!comm && type == COMM && (misc & MISC_EXEC) && size_at(buf + at) > 16 &&
		    strncmp((const char *)buf + at + 16, argv[2], 16) == 0)
			comm = at;
		else if (comm && type == FINISHED_ROUND)
			rounds++;
	}
	if (!comm || rounds < 4) {
		fprintf(stderr, "perfdata-late: %s\n", comm ? "too few rounds after the COMM"
							       : "no COMM at exec of that name");
		return 1;
	}
	for (at = comm; !to; at += size_at(buf + at)) {
		uint32_t type;

		memcpy(&type, buf + at, 4);
		if (type == FINISHED_ROUND && ++seen == rounds / 2)
			to = at + size_at(buf + at);
	}
	{
		/* [comm, to) becomes the rest, then the COMM */
		uint16_t n = size_at(buf + comm);
		unsigned char rec[65536];

		memcpy(rec, buf + comm, n);
		memmove(buf + comm, buf + comm + n, to - comm - n);
		memcpy(buf + to - n, rec, n);
	}
	if (fseek(f, 0, SEEK_SET) != 0 || fwrite(buf, 1, (size_t)len, f) != (size_t)len ||
	    fclose(f) != 0) {
		fputs("perfdata-late: cannot write the file\n", stderr);
		return 2;
	}
	printf("moved past %u of %u rounds\n", seen, rounds);
	return 0;
}
