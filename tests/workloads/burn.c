/* SPDX-License-Identifier: MIT */
/*
 * burn MS: use MS milliseconds of this thread's CPU time, then print the
 * thread CPU time actually used (stdout, so it never mixes with the counts
 * `vperf stat` writes to stderr).
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
	return 0;
}
