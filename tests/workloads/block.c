/* SPDX-License-Identifier: MIT */
/*
 * block N: block N times (nanosleep of 1 ms each), so the process makes at
 * least N voluntary context switches.  Prints the kernel's own count of
 * this process's voluntary and involuntary switches (getrusage) on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
	const struct timespec ms1 = { .tv_sec = 0, .tv_nsec = 1000000 };
	struct rusage ru;
	char *end;
	unsigned long n;

	if (argc != 2 || (n = strtoul(argv[1], &end, 10), *end) || n > 100000) {
		fprintf(stderr, "usage: block N\n");
		return 2;
	}
	for (unsigned long i = 0; i < n; i++) {
		struct timespec req = ms1;

		while (nanosleep(&req, &req))
			;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("block: %lu sleeps, nvcsw %ld nivcsw %ld\n", n, ru.ru_nvcsw, ru.ru_nivcsw);
	return 0;
}
