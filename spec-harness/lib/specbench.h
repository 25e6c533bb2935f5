/* SPDX-License-Identifier: MIT */
/*
 * specbench: what every spec-harness benchmark shares: the command line
 * (NAME --size test|train|ref [--threads N] [--out FILE]), the result
 * stream, its own elapsed time, and per-thread reports for the harness:
 *
 *   SPEC_THREAD_LOG=FILE   each thread appends, at its end, one line
 *       thread tid=<tid> comm=<name> cpu_ns=<its CPU time> samples=<n> lost=<n>
 *     and main, last:
 *       bench elapsed_ns=<main's begin to end> threads=<n>
 *   SPEC_SAMPLE_PERIOD_NS=P   each thread samples itself with libvperf on
 *       $SPEC_SAMPLE_EVENT (default vperf::vcpu-clock) every P events, with
 *       $SPEC_SAMPLE_FRAMES callchain frames (default 0); a sample only counts.
 *       If sampling cannot be set up the benchmark exits 3: never silently
 *       unsampled.
 */
#ifndef SPECBENCH_H
#define SPECBENCH_H

#include <stdint.h>
#include <stdio.h>

enum sb_size { SB_TEST, SB_TRAIN, SB_REF };

struct sb_args {
	enum sb_size size;
	int threads;		/* in: the default; out: as asked */
	FILE *out;		/* the result stream */
};

/* Parse argv, open the output, start the clock, sb_thread_begin("main").
 * Returns 0, or -EINVAL after printing what is wrong (exit 2). */
int sb_main_begin(int argc, char **argv, const char *name, struct sb_args *a);
/* sb_thread_end() for main, the bench line, close the output: the exit status. */
int sb_main_end(struct sb_args *a);

void sb_thread_begin(const char *name);
void sb_thread_end(void);

/* Size-scaled parameter: v[size]. */
static inline long sb_pick(const struct sb_args *a, long test, long train, long ref)
{
	return a->size == SB_TEST ? test : a->size == SB_TRAIN ? train : ref;
}

/* Deterministic generator (splitmix64). */
static inline uint64_t sb_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* FNV-1a over bytes, chainable. */
static inline uint64_t sb_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	if (!h)
		h = 0xcbf29ce484222325ull;
	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

#endif
