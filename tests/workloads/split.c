/* SPDX-License-Identifier: MIT */
/*
 * split [A_MS B_MS]: two threads burn A_MS and B_MS milliseconds of their
 * own CPU time (default 300 and 100: a 3:1 split), while the main thread
 * only waits.  Prints each worker's tid, the CPU time it used by its own
 * clock and the time it was on a CPU by perf's task-clock, on stdout:
 *	a <tid> <ms> <task-clock ms or ->
 *	b <tid> <ms> <task-clock ms or ->
 * The two differ by the time the kernel leaves out of a thread's own clock
 * but not out of its time on the CPU: steal time where the kernel accounts
 * it (CONFIG_PARAVIRT_TIME_ACCOUNTING), interrupts with
 * CONFIG_IRQ_TIME_ACCOUNTING.  '-' when perf_event_open is refused.
 */
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "burn.h"

struct worker {
	const char *name;
	unsigned int ms;
	pid_t tid;
	double used_ms;
	double task_clock_ms;	/* < 0: not counted */
};

/* perf's task-clock of the calling thread, counting from now; -1 if refused */
static int task_clock_open(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int fd = task_clock_open();
	uint64_t t0 = vt_thread_cpu_ns();
	uint64_t tc = 0;

	w->tid = gettid();
	vt_burn_ms(w->ms);
	w->used_ms = (double)(vt_thread_cpu_ns() - t0) / 1e6;
	w->task_clock_ms = -1;
	if (fd >= 0 && read(fd, &tc, sizeof(tc)) == sizeof(tc))
		w->task_clock_ms = (double)tc / 1e6;
	if (fd >= 0)
		close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[2] = { { "a", 300, 0, 0, 0 }, { "b", 100, 0, 0, 0 } };
	pthread_t t[2];

	if (argc == 3) {
		w[0].ms = (unsigned int)strtoul(argv[1], NULL, 10);
		w[1].ms = (unsigned int)strtoul(argv[2], NULL, 10);
	} else if (argc != 1) {
		fprintf(stderr, "usage: split [A_MS B_MS]\n");
		return 2;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, &w[i])) {
			fprintf(stderr, "split: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		printf("%s %d %.3f ", w[i].name, (int)w[i].tid, w[i].used_ms);
		if (w[i].task_clock_ms < 0)
			printf("-\n");
		else
			printf("%.3f\n", w[i].task_clock_ms);
	}
	return 0;
}
