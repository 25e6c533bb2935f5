// SPDX-License-Identifier: MIT
/*
 * vperf-record-marks: the guest side of the recording's known answers (tests/vm/record-test).
 *
 *   vperf-record-marks conserve THREADS TOTAL
 *	THREADS threads write TOTAL markers between them, named "c", value = thread << 32 | i
 *	(i counting from 0 in each thread), then flush; a marker that finds the thread's buffer
 *	full gets a flush (the module copies the buffer) and one more try, and only then counts
 *	lost; prints "conserve: written W lost L flushes F".
 *   vperf-record-marks stream THREADS SECONDS
 *	THREADS threads write markers named "s", value = thread << 32 | i (i from 0), 100 at a
 *	time with a 10 ms sleep between (under 10 000 a second each), for SECONDS: a run that the
 *	recorder's SIGKILL (record-test's kill case) interrupts; prints "stream: written W lost L".
 *   vperf-record-marks order N PORT
 *	N triples: marker "A" (value i), a one-byte port write to PORT (an exit the VMM records),
 *	marker "B" (value i); prints "order: triples N lost L".
 *
 * Exits 0 when every marker call succeeded or was counted lost (-ENOSPC), 1 otherwise, 2 usage.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/io.h>

#include <vperf/vperf.h>

struct worker {
	pthread_t t;
	unsigned int idx;
	uint64_t n, written, lost, flushes;
	int err;
};

static void *conserve(void *arg)
{
	struct worker *w = arg;

	for (uint64_t i = 0; i < w->n; i++) {
		int err = vperf_trace_mark("c", (uint64_t)w->idx << 32 | i, VPERF_MARK_INSTANT);

		if (err == -ENOSPC) {
			/* the thread's buffer is full: have the module copy it now, then once more */
			w->flushes++;
			err = vperf_trace_flush();
			if (!err)
				err = vperf_trace_mark("c", (uint64_t)w->idx << 32 | i, VPERF_MARK_INSTANT);
		}
		if (!err) {
			w->written++;
		} else if (err == -ENOSPC) {
			w->lost++;
		} else {
			w->err = err;
			return NULL;
		}
	}
	w->err = vperf_trace_flush();
	return NULL;
}

static double stream_end;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *stream(void *arg)
{
	struct worker *w = arg;
	uint64_t i = 0;

	while (mono_s() < stream_end) {
		for (int k = 0; k < 100; k++, i++) {
			int err = vperf_trace_mark("s", (uint64_t)w->idx << 32 | i, VPERF_MARK_INSTANT);

			if (err == -ENOSPC) {
				w->lost++;
			} else if (err) {
				w->err = err;
				return NULL;
			} else {
				w->written++;
			}
		}
		usleep(10000);
	}
	w->err = vperf_trace_flush();
	return NULL;
}

static int parse(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* nr threads running fn, total markers split between them; their counts summed into *sum: 0, or 1 (said why). */
static int run_workers(void *(*fn)(void *), unsigned int nr, uint64_t total, struct worker *sum)
{
	struct worker w[64];
	int ret = 0;

	*sum = (struct worker){ 0 };
	for (unsigned int i = 0; i < nr; i++) {
		w[i] = (struct worker){ .idx = i, .n = total / nr + (i < total % nr) };
		if (pthread_create(&w[i].t, NULL, fn, &w[i])) {
			fprintf(stderr, "vperf-record-marks: pthread_create failed\n");
			return 1;
		}
	}
	for (unsigned int i = 0; i < nr; i++) {
		pthread_join(w[i].t, NULL);
		if (w[i].err) {
			fprintf(stderr, "vperf-record-marks: thread %u: %s\n", i, strerror(-w[i].err));
			ret = 1;
		}
		sum->written += w[i].written;
		sum->lost += w[i].lost;
		sum->flushes += w[i].flushes;
	}
	return ret;
}

int main(int argc, char **argv)
{
	uint64_t a, b;

	if (argc == 4 && !strcmp(argv[1], "conserve") && !parse(argv[2], 1, 64, &a) &&
	    !parse(argv[3], 1, 100000000, &b)) {
		struct worker sum;
		int ret = run_workers(conserve, (unsigned int)a, b, &sum);

		printf("conserve: written %llu lost %llu flushes %llu\n", (unsigned long long)sum.written,
		       (unsigned long long)sum.lost, (unsigned long long)sum.flushes);
		return ret;
	}
	if (argc == 4 && !strcmp(argv[1], "stream") && !parse(argv[2], 1, 64, &a) &&
	    !parse(argv[3], 1, 3600, &b)) {
		struct worker sum;
		int ret;

		stream_end = mono_s() + (double)b;
		ret = run_workers(stream, (unsigned int)a, 0, &sum);
		printf("stream: written %llu lost %llu\n", (unsigned long long)sum.written,
		       (unsigned long long)sum.lost);
		return ret;
	}
	if (argc == 4 && !strcmp(argv[1], "order") && !parse(argv[2], 1, 10000000, &a) &&
	    !parse(argv[3], 1, 0xffff, &b)) {
		uint64_t lost = 0;

		if (ioperm((unsigned long)b, 1, 1)) {
			perror("vperf-record-marks: ioperm");
			return 1;
		}
		for (uint64_t i = 0; i < a; i++) {
			int e1 = vperf_trace_mark("A", i, VPERF_MARK_INSTANT);

			outb(0, (unsigned short)b);
			int e2 = vperf_trace_mark("B", i, VPERF_MARK_INSTANT);

			if ((e1 && e1 != -ENOSPC) || (e2 && e2 != -ENOSPC)) {
				fprintf(stderr, "vperf-record-marks: marker: %s\n", strerror(-(e1 ? e1 : e2)));
				return 1;
			}
			lost += (e1 == -ENOSPC) + (e2 == -ENOSPC);
		}
		vperf_trace_flush();
		printf("order: triples %llu lost %llu\n", (unsigned long long)a, (unsigned long long)lost);
		return 0;
	}
	fprintf(stderr, "usage: vperf-record-marks conserve THREADS(1..64) TOTAL | stream THREADS SECONDS | "
		"order N PORT\n");
	return 2;
}
