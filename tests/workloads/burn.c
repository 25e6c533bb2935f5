/* SPDX-License-Identifier: MIT */
/*
 * burn MS: use MS milliseconds of this thread's CPU time, then print the
 * thread CPU time the loop actually used and the whole process's CPU time
 * so far, exec and the loader included (stdout, so it never mixes with the
 * counts `vperf stat` writes to stderr).  A task-clock counted from exec is
 * checked against the second: on a loaded host the start of a 20 ms run
 * alone has been seen to take 8 ms.
 */
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

int main(int argc, char **argv)
{
	char *end;
	unsigned long ms;
	uint64_t t0;

	if (argc != 2 || (ms = strtoul(argv[1], &end, 10), *end) || ms > 600000) {
		fprintf(stderr, "usage: burn MS\n");
		return 2;
	}
	t0 = vt_thread_cpu_ns();
	vt_burn_ms((unsigned int)ms);
	printf("burn: %.3f ms thread cpu\n", (double)(vt_thread_cpu_ns() - t0) / 1e6);
	printf("burn: %.3f ms process cpu\n", (double)vt_clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6);
	return 0;
}
