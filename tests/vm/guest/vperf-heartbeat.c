/* vperf-heartbeat: one beat per online CPU every PERIOD seconds, on a line of its own, to DEVICE.
 *
 * Why: under QEMU TCG with emulated SVM, an L1 CPU now and then stops for good (tests/vm/README.md, "Freezes":
 * L1's registers stored as L2's, or a CPU halted with its interrupts pending). The other CPU often goes on (it
 * even prints RCU stall reports), so a guest that still writes to its console is not a live guest. The runner
 * (run-nested.sh) watches these beats on a serial port of their own and calls the stack frozen when any CPU
 * misses them, long before a run's own timeout.
 *
 * Each CPU gets a thread bound to it (SCHED_FIFO priority 1 where allowed, so that a busy CPU still lets it
 * run at once; it wakes for microseconds every PERIOD). A thread whose CPU stops never writes again: that is
 * the signal. Lines:
 *   vperf-hb: start cpus=0,1 period=3
 *   vperf-hb: cpu=N seq=K
 * one write(2) per line, so lines of different CPUs never interleave on the tty.
 *
 *   vperf-heartbeat DEVICE [PERIOD]     (PERIOD: whole seconds, 1..60, default 3; runs until killed)
 *
 * Exit status: 2 bad arguments, 1 DEVICE cannot be opened or no CPU could be bound; never 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int out_fd;
static unsigned int period_s = 3;

static void beat_line(const char *line)
{
	size_t len = strlen(line), done = 0;

	while (done < len) {
		ssize_t n = write(out_fd, line + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;	/* a beat lost is a beat missed: the watcher says so */
		done += (size_t)n;
	}
}

static void *beat(void *arg)
{
	int cpu = (int)(long)arg;
	struct sched_param sp = { .sched_priority = 1 };
	struct timespec next;
	unsigned long long seq = 0;
	char line[64];

	/* best effort: without it a beat may wait behind the CPU's other threads, still within milliseconds */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		snprintf(line, sizeof(line), "vperf-hb: cpu=%d seq=%llu\n", cpu, ++seq);
		beat_line(line);
		next.tv_sec += period_s;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	cpu_set_t online;
	char start[512], *p = start, *end = start + sizeof(start);
	int bound = 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: vperf-heartbeat DEVICE [PERIOD]\n");
		return 2;
	}
	if (argc == 3) {
		char *e;
		unsigned long v = strtoul(argv[2], &e, 10);

		if (*e || v < 1 || v > 60) {
			fprintf(stderr, "vperf-heartbeat: PERIOD must be 1..60 seconds, not '%s'\n", argv[2]);
			return 2;
		}
		period_s = (unsigned int)v;
	}
	out_fd = open(argv[1], O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (out_fd < 0) {
		fprintf(stderr, "vperf-heartbeat: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (sched_getaffinity(0, sizeof(online), &online)) {
		fprintf(stderr, "vperf-heartbeat: sched_getaffinity: %s\n", strerror(errno));
		return 1;
	}
	p += snprintf(p, (size_t)(end - p), "vperf-hb: start cpus=");
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		pthread_attr_t attr;
		pthread_t t;
		cpu_set_t one;

		if (!CPU_ISSET(cpu, &online))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_attr_init(&attr))
			continue;
		/* bound before it runs: its first beat already comes from its CPU */
		if (!pthread_attr_setaffinity_np(&attr, sizeof(one), &one) &&
		    !pthread_create(&t, &attr, beat, (void *)(long)cpu)) {
			if (p < end - 8)
				p += snprintf(p, (size_t)(end - p), "%s%d", bound ? "," : "", cpu);
			bound++;
		} else {
			fprintf(stderr, "vperf-heartbeat: cannot start a thread on CPU %d\n", cpu);
		}
		pthread_attr_destroy(&attr);
	}
	if (!bound)
		return 1;
	snprintf(p, (size_t)(end - p), " period=%u\n", period_s);
	beat_line(start);
	for (;;)
		pause();
}
