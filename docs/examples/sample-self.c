/* SPDX-License-Identifier: MIT */
/*
 * sample-self: sample this thread's cpu-clock every millisecond while it
 * works, count the samples in a callback, and print the function most
 * samples landed in (found with dladdr, so link with -rdynamic).
 * Exits 1 if anything fails or no sample arrives.
 *
 *	cc -rdynamic sample-self.c $(pkg-config --cflags --libs vperf) -o sample-self
 *
 * docs/user-guide.md walks through it; the test suite builds and runs it
 * (docs.example_sample_self_runs).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* dladdr */
#endif
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vperf/vperf.h>

#define MAX_IPS		8192
#define MAX_FUNCS	64

/*
 * Written by the callback, read by main once sampling has stopped.  The
 * callback runs in a signal handler in this thread, so it only stores
 * into memory set aside beforehand: no malloc, no stdio, no locks.
 */
static uint64_t ips[MAX_IPS];
static volatile sig_atomic_t nr_samples;

static void on_sample(const struct vperf_sample *s, void *arg)
{
	int n = nr_samples;

	if (n < MAX_IPS)
		ips[n] = s->ip;
	nr_samples = n + 1;
}

/* The work, in a function of its own so that samples can name it. */
unsigned long burn_cpu(unsigned long loops);

__attribute__((noinline)) unsigned long burn_cpu(unsigned long loops)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < loops; i++)
		x += i * i;
	return x;
}

struct func {
	const void *addr;
	const char *name;
	int samples;
};

/* The function with the most samples; NULL if none could be named. */
static const struct func *top_function(int n, struct func *f, int *nr)
{
	const struct func *top = NULL;

	*nr = 0;
	for (int i = 0; i < n; i++) {
		Dl_info info;
		int k;

		if (!dladdr((void *)(uintptr_t)ips[i], &info) ||
		    !info.dli_sname)
			continue;
		for (k = 0; k < *nr && f[k].addr != info.dli_saddr; k++)
			;
		if (k == *nr) {
			if (*nr == MAX_FUNCS)
				continue;
			f[k] = (struct func){ info.dli_saddr, info.dli_sname, 0 };
			(*nr)++;
		}
		f[k].samples++;
	}
	for (int k = 0; k < *nr; k++)
		if (!top || f[k].samples > top->samples)
			top = &f[k];
	return top;
}

int main(void)
{
	struct vperf_sample_opts so = {
		.size = sizeof(so),
		.period = 1000000,	/* cpu-clock counts ns: every 1 ms */
		.fn = on_sample,
	};
	static struct func funcs[MAX_FUNCS];
	const struct func *top;
	struct vperf_evset *es;
	int err, idx, n, nr_funcs;

	err = vperf_evset__new(NULL, &es);
	if (err) {
		fprintf(stderr, "sample-self: %s\n", strerror(-err));
		return 1;
	}
	idx = vperf_evset__add(es, "cpu-clock");
	if (idx < 0 || vperf_evset__sample(es, idx, &so) ||
	    vperf_evset__open(es) || vperf_evset__start(es))
		goto fail;

	burn_cpu(300000000);

	if (vperf_evset__stop(es))
		goto fail;

	n = nr_samples;
	printf("samples            %d (lost %llu)\n", n,
	       (unsigned long long)vperf_evset__samples_lost(es));
	if (n > MAX_IPS)
		n = MAX_IPS;
	top = top_function(n, funcs, &nr_funcs);
	if (top)
		printf("top function       %s (%d of %d samples)\n", top->name,
		       top->samples, n);
	else
		printf("top function       <none named>\n");
	vperf_evset__delete(es);

	if (n == 0) {
		fprintf(stderr, "sample-self: no samples arrived\n");
		return 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sample-self: writing the result failed\n");
		return 1;
	}
	return 0;

fail:
	fprintf(stderr, "sample-self: %s\n", vperf_evset__strerror(es));
	vperf_evset__delete(es);
	return 1;
}
