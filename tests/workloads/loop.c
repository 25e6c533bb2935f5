/* SPDX-License-Identifier: MIT */
/*
 * loop N: retire a known number of user-mode instructions: N iterations of
 * a two-instruction loop (dec; jnz), so 2*N plus process start-up and exit.
 * For hardware-event tests on hosts that have a PMU.
 */
#include <stdio.h>
#include <stdlib.h>

#include "loop.h"

int main(int argc, char **argv)
{
	char *end;
	unsigned long long n;

	if (argc != 2 || (n = strtoull(argv[1], &end, 10), *end) || n == 0) {
		fprintf(stderr, "usage: loop N\n");
		return 2;
	}
	vt_loop(n);
	printf("loop: %llu iterations, %llu instructions in the loop\n", n, 2 * n);
	return 0;
}
