/* vperf-rtspin CPU SECONDS: take CPU away from every task for SECONDS (SCHED_FIFO 50, bound to it, spinning).
 *
 * A stand-in for an L1 CPU that stops, for run-nested.sh's freeze detection test (tests/vm/runner-test.sh):
 * with /proc/sys/kernel/sched_rt_runtime_us at -1 nothing of lower priority runs on CPU, so vperf-heartbeat's
 * thread there (SCHED_FIFO 1) misses its beats, while the other CPUs, the console and interrupts go on, as they
 * do when QEMU's emulated SVM leaves one CPU stuck. Exit status: 0 after SECONDS, 1 when it cannot bind or
 * raise itself, 2 bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct timespec now, end;
	cpu_set_t one;
	char *e1, *e2;
	long cpu, secs;

	if (argc != 3) {
		fprintf(stderr, "usage: vperf-rtspin CPU SECONDS\n");
		return 2;
	}
	cpu = strtol(argv[1], &e1, 10);
	secs = strtol(argv[2], &e2, 10);
	if (*e1 || *e2 || cpu < 0 || cpu >= CPU_SETSIZE || secs < 1) {
		fprintf(stderr, "vperf-rtspin: bad CPU '%s' or SECONDS '%s'\n", argv[1], argv[2]);
		return 2;
	}
	CPU_ZERO(&one);
	CPU_SET((int)cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) || sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "vperf-rtspin: cannot bind to CPU %ld at SCHED_FIFO 50: %s\n", cpu, strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	return 0;
}
