/* SPDX-License-Identifier: MIT */
/*
 * hot3to1 [shared] [B_MS]: one thread spends CPU time in two functions, hot_a() three times as
 * long as hot_b() (default 600 and 200 ms), for `vperf report` to find by symbol
 * (tests/integration/report_tests.py).  With "shared", both spend it in one helper they call,
 * hot_shared(): the samples are all the helper's, and only its callers' Children tell 3:1.  Rounds of hot_a(3 * s) then hot_b(s), the slice s varying pseudo-randomly
 * between 2 and 10 ms so that a periodic sampler does not alias with the rounds (sample3to1.c
 * says why).  Each function spins in user space and reads its thread's CPU clock (a system call)
 * only every 2^16 iterations, so that nearly all of its time is its own symbol's, not the
 * kernel's.  Prints the CPU time each function measured for itself:
 *	hot_a <ms>
 *	hot_b <ms>
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "burn.h"

void hot_a(uint64_t ns);
void hot_b(uint64_t ns);
uint64_t hot_shared(uint64_t ns);

static volatile uint64_t sink;
static uint64_t a_ns, b_ns;
static int shared;

/* Spin until the thread used ns more CPU time; returns what it used. */
static inline __attribute__((always_inline)) uint64_t spin(uint64_t ns)
{
	uint64_t t0 = vt_thread_cpu_ns(), t;

	do {
		for (unsigned int i = 0; i < 65536; i++)
			sink += i;
		t = vt_thread_cpu_ns();
	} while (t - t0 < ns);
	return t - t0;
}

__attribute__((noinline)) uint64_t hot_shared(uint64_t ns)
{
	uint64_t used = spin(ns);

	__asm__ volatile("" ::: "memory");
	return used;
}

__attribute__((noinline)) void hot_a(uint64_t ns)
{
	a_ns += shared ? hot_shared(ns) : spin(ns);
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

__attribute__((noinline)) void hot_b(uint64_t ns)
{
	b_ns += shared ? hot_shared(ns) : spin(ns);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	uint64_t b_total, seed = 12345, done = 0;

	shared = argc > 1 && !strcmp(argv[1], "shared");
	argc -= shared;
	argv += shared;
	b_total = (argc > 1 ? strtoull(argv[1], NULL, 10) : 200) * 1000000ull;
	if (argc > 2 || !b_total) {
		fprintf(stderr, "usage: hot3to1 [shared] [B_MS]\n");
		return 2;
	}
	while (done < b_total) {
		uint64_t slice;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		slice = 2000000 + (seed >> 33) % 8000000;
		if (slice > b_total - done)
			slice = b_total - done;
		hot_a(3 * slice);
		hot_b(slice);
		done += slice;
	}
	printf("hot_a %.3f\nhot_b %.3f\n", a_ns / 1e6, b_ns / 1e6);
	return 0;
}
