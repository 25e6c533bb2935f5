/* SPDX-License-Identifier: MIT */
/*
 * split [A_MS B_MS]: two threads burn A_MS and B_MS milliseconds of their
 * own CPU time (default 300 and 100: a 3:1 split), while the main thread
 * only waits.  Prints each worker's tid and the CPU time it used on stdout:
 *	a <tid> <ms>
 *	b <tid> <ms>
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "burn.h"

struct worker {
	const char *name;
	unsigned int ms;
	pid_t tid;
	double used_ms;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t t0 = vt_thread_cpu_ns();

	w->tid = gettid();
	vt_burn_ms(w->ms);
	w->used_ms = (double)(vt_thread_cpu_ns() - t0) / 1e6;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[2] = { { "a", 300, 0, 0 }, { "b", 100, 0, 0 } };
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
	for (int i = 0; i < 2; i++)
		printf("%s %d %.3f\n", w[i].name, (int)w[i].tid, w[i].used_ms);
	return 0;
}
