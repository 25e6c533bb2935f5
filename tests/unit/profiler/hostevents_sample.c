// SPDX-License-Identifier: MIT
/*
 * hostevents-sample FILE: capture the known-answer sample of tests/unit/profiler/data/hostevents/ (see
 * its README) with hv/vmm/tracefs.c, as a raw recording (hv/include/vperf/rawrec.h) holding only
 * the host kernel's chunks.  A thread named "vt-sleeper", on CPU 0, sleeps SLEEPS times 1 ms while
 * it is traced.  Root and tracefs needed; not a test, a tool to make a test's data again.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vperf/rawrec.h>

#include "record.h"
#include "tracefs.h"

#define SLEEPS	5

struct recorder {
	FILE *f;
};

int recorder__chunk(struct recorder *rec, uint32_t type, uint32_t cpu, uint32_t flags,
		    const void *payload, uint32_t size)
{
	static const uint8_t zero[8];
	struct vperf_rawrec_chunk c = { .type = type, .size = size, .cpu = cpu, .flags = flags };

	if (fwrite(&c, sizeof(c), 1, rec->f) != 1 || (size && fwrite(payload, size, 1, rec->f) != 1) ||
	    fwrite(zero, 1, (8 - size % 8) % 8, rec->f) != (8 - size % 8) % 8)
		return -EIO;
	return 0;
}

/* recorder__chunk() as the sink tracefs.c writes into. */
static int sink_chunk(void *arg, uint32_t type, uint32_t cpu, const void *data, uint32_t size)
{
	return recorder__chunk(arg, type, cpu, 0, data, size);
}
#define SINK(rec)	((struct hosttrace_sink){ sink_chunk, (rec) })

static atomic_int tid, go, done;

static void *sleeper(void *arg)
{
	struct timespec ms = { 0, 1000000 };
	cpu_set_t cpus;

	(void)arg;
	/* on CPU 0, which every machine has; the recorder runs where it likes */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	pthread_setname_np(pthread_self(), "vt-sleeper");
	atomic_store(&tid, gettid());
	while (!atomic_load(&go))
		sched_yield();
	for (int i = 0; i < SLEEPS; i++)
		nanosleep(&ms, NULL);
	atomic_store(&done, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct vperf_rawrec_header h = { .size = sizeof(h), .version = VPERF_RAWREC_VERSION,
					 .nr_vcpus = 1 };
	struct timespec t0, t1, poll = { 0, 2000000 };
	struct recorder rec;
	struct hosttrace *ht;
	pthread_t th;
	char why[512];
	bool missing;
	uint64_t c0, c1;
	pid_t t;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	rec.f = fopen(argv[1], "wb");
	if (!rec.f) {
		perror(argv[1]);
		return 1;
	}
	/* the TSC frequency, measured (the raw header wants one; no KVM here) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c0 = recorder__tsc();
	nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c1 = recorder__tsc();
	memcpy(h.magic, VPERF_RAWREC_MAGIC, sizeof(h.magic));
	h.tsc_khz = (c1 - c0) * 1000000ull / (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll +
							   (t1.tv_nsec - t0.tv_nsec));
	h.start_tsc = recorder__tsc();
	h.start_monotonic_ns = (uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &t1);
	h.start_realtime_ns = (uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec;
	if (fwrite(&h, sizeof(h), 1, rec.f) != 1)
		return 1;

	if (pthread_create(&th, NULL, sleeper, NULL))
		return 1;
	while (!(t = atomic_load(&tid)))
		sched_yield();
	err = hosttrace__start(&ht, &t, 1, 64, SINK(&rec), why, sizeof(why), &missing);
	if (err) {
		fprintf(stderr, "hosttrace__start: %s: %s\n", strerror(-err), why);
		return 1;
	}
	if (missing)
		fprintf(stderr, "missing: %s\n", why);
	atomic_store(&go, 1);
	while (!atomic_load(&done)) {
		nanosleep(&poll, NULL);
		err = hosttrace__poll(ht);
		if (err)
			fprintf(stderr, "poll: %s\n", strerror(-err));
	}
	pthread_join(th, NULL);
	err = hosttrace__stop(ht);
	hosttrace__delete(ht);
	if (err)
		fprintf(stderr, "stop: %s\n", strerror(-err));
	{
		struct vperf_rawrec_end end = { .host_tsc = recorder__tsc() };

		recorder__chunk(&rec, VPERF_RAWREC_END, 0, 0, &end, sizeof(end));
	}
	if (fclose(rec.f)) {
		perror(argv[1]);
		return 1;
	}
	printf("sleeper tid %d, %d sleeps of 1 ms, TSC %llu kHz\n", (int)t, SLEEPS,
	       (unsigned long long)h.tsc_khz);
	return err ? 1 : 0;
}
