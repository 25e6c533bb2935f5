/* SPDX-License-Identifier: MIT */
/*
 * count-self: count this thread's task-clock and context switches around a
 * piece of work, and print them.  Exits 1 if anything fails.
 *
 *	cc count-self.c $(pkg-config --cflags --libs vperf) -o count-self
 *
 * docs/user-guide.md walks through it; the test suite builds and runs it
 * (docs.example_count_self_runs).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <vperf/vperf.h>

enum { TASK_CLOCK, CONTEXT_SWITCHES, NR_EVENTS };

static const char *const events[NR_EVENTS] = {
	[TASK_CLOCK] = "task-clock",
	[CONTEXT_SWITCHES] = "context-switches",
};

/* The work: some CPU time, and five short sleeps that switch context. */
static unsigned long work(void)
{
	const struct timespec ms = { .tv_sec = 0, .tv_nsec = 1000000 };
	volatile unsigned long x = 0;

	for (int i = 0; i < 5; i++) {
		for (unsigned long j = 0; j < 10000000; j++)
			x += j;
		nanosleep(&ms, NULL);
	}
	return x;
}

static void print_count(const char *name, const struct vperf_count *c,
			const char *unit)
{
	if (c->flags & VPERF_COUNT_NOT_COUNTED) {
		/* never on a counter: there is no value to show */
		printf("%-18s %16s\n", name, "<not counted>");
		return;
	}
	printf("%-18s %16llu%s", name, (unsigned long long)c->value, unit);
	if (c->flags & VPERF_COUNT_SCALED)
		/* multiplexed: value is an estimate from raw */
		printf("  (scaled from %llu, on a counter %.1f%% of the time)",
		       (unsigned long long)c->raw,
		       100.0 * (double)c->running / (double)c->enabled);
	printf("\n");
}

int main(void)
{
	struct vperf_count c[NR_EVENTS];
	struct vperf_evset *es;
	int err;

	/* NULL options: count the calling thread, backend chosen for us. */
	err = vperf_evset__new(NULL, &es);
	if (err) {
		fprintf(stderr, "count-self: %s\n", strerror(-err));
		return 1;
	}
	for (int i = 0; i < NR_EVENTS; i++)
		if (vperf_evset__add(es, events[i]) < 0)
			goto fail;
	if (vperf_evset__open(es) || vperf_evset__start(es))
		goto fail;

	work();

	if (vperf_evset__stop(es) || vperf_evset__read(es, c, NR_EVENTS))
		goto fail;

	printf("backend            %16s\n", vperf_backend_name(es));
	printf("read path          %16s\n",
	       vperf_read_path_name(vperf_evset__read_path(es, TASK_CLOCK)));
	print_count(events[TASK_CLOCK], &c[TASK_CLOCK], " ns");
	print_count(events[CONTEXT_SWITCHES], &c[CONTEXT_SWITCHES], "");

	if ((c[TASK_CLOCK].flags & VPERF_COUNT_NOT_COUNTED) ||
	    c[TASK_CLOCK].value == 0) {
		fprintf(stderr, "count-self: task-clock counted nothing\n");
		vperf_evset__delete(es);
		return 1;
	}
	vperf_evset__delete(es);

	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "count-self: writing the counts failed\n");
		return 1;
	}
	return 0;

fail:
	/* says which event and what to do, e.g. about perf_event_paranoid */
	fprintf(stderr, "count-self: %s\n", vperf_evset__strerror(es));
	vperf_evset__delete(es);
	return 1;
}
