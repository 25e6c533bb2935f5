/* SPDX-License-Identifier: MIT */
/* A loop with a known instruction count: exactly 2*n instructions retire. */
#ifndef VPERF_TESTS_LOOP_H
#define VPERF_TESTS_LOOP_H

static inline void vt_loop(unsigned long long n)
{
#if defined(__x86_64__)
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b\n" : "+r"(n) : : "cc");
#else
#error "vt_loop: known-count loop written for x86_64 only"
#endif
}

#endif /* VPERF_TESTS_LOOP_H */
