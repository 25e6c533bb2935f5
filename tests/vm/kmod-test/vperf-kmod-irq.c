/* SPDX-License-Identifier: MIT */
/*
 * vperf-kmod-irq [HZ [MS]]: vperf_guest.ko counts the device's interrupts.
 * Pinned to CPU 0, whose page vperf_guest.ko registered (this program
 * registers none: COUNTERS_SET needs a page on the vCPU, so a success here
 * also shows the module's page is in place), it sets a task-clock counter
 * to overflow at HZ (default 1000) for MS ms (default 300) of busy time
 * and checks that /sys/module/vperf_guest/parameters/irq_count advanced.
 * Prints "kmod-irq: ..." lines; exit 0 when it did.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "../guest/pv.h"

static long irq_count(void)
{
	FILE *f = fopen("/sys/module/vperf_guest/parameters/irq_count", "r");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	long hz = argc > 1 ? atol(argv[1]) : 1000, ms = argc > 2 ? atol(argv[2]) : 300;
	struct vperf_event_desc *d;
	long before, after;
	uint64_t gpa, t0;
	int64_t r1, r2, r3;
	cpu_set_t set;
	struct pv pv;

	if (hz < 1 || hz > 10000 || ms < 1)
		return 2;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || pv_open(&pv))
		return 1;
	d = pv_alloc(4096, &gpa);
	if (!d)
		return 1;
	d->source = VPERF_SRC_PERF;
	snprintf(d->name, sizeof(d->name), "task-clock");
	before = irq_count();
	r1 = pv_hc(&pv, VPERF_HC_COUNTERS_SET, gpa, 1, 0, 0);
	r2 = pv_hc(&pv, VPERF_HC_OVERFLOW_SET, 0, 1000000000 / hz, 0, 0);
	t0 = pv_now_ns();
	while (pv_now_ns() - t0 < (uint64_t)ms * 1000000)
		;
	pv_hc(&pv, VPERF_HC_OVERFLOW_SET, 0, 0, 0, 0);
	after = irq_count();
	r3 = pv_hc(&pv, VPERF_HC_COUNTERS_SET, 0, 0, 0, 0);
	printf("kmod-irq: counters_set %lld overflow_set %lld clear %lld; irq_count %ld -> %ld: "
	       "%ld interrupts in %ld ms at %ld Hz\n", (long long)r1, (long long)r2, (long long)r3,
	       before, after, after - before, ms, hz);
	if (before < 0 || r1 || r2 || r3 || after <= before) {
		printf("kmod-irq: FAILED\n");
		return 1;
	}
	printf("kmod-irq: PASSED\n");
	return 0;
}
