/* SPDX-License-Identifier: MIT */
/*
 * Known-answer CPU burners shared by the workloads and the unit tests:
 * they spin until the calling thread has used a given amount of its own
 * CPU time (CLOCK_THREAD_CPUTIME_ID), so the truth a counter is checked
 * against is the kernel's own per-thread clock, not wall time.
 */
#ifndef VPERF_TESTS_BURN_H
#define VPERF_TESTS_BURN_H

#include <stdint.h>
#include <time.h>

static inline uint64_t vt_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t vt_thread_cpu_ns(void)
{
	return vt_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Spin until this thread has used ns more nanoseconds of CPU time. */
static inline void vt_burn_ns(uint64_t ns)
{
	uint64_t end = vt_thread_cpu_ns() + ns;
	volatile uint64_t sink = 0;

	while (vt_thread_cpu_ns() < end)
		for (unsigned int i = 0; i < 2000; i++)
			sink += i;
}

static inline void vt_burn_ms(unsigned int ms)
{
	vt_burn_ns((uint64_t)ms * 1000000ull);
}

#endif /* VPERF_TESTS_BURN_H */
