/* SPDX-License-Identifier: MIT */
/*
 * guest-bench: what vperf_guest.ko costs inside a guest, and what its reads
 * cost; run by bench/guest/run.sh in a vperf-vmm guest.
 *
 *   guest-bench switch [--monitor [--event NAME]] [--bystander] [--trips N]
 *       two threads on CPU 0 hand a token back and forth through pipes
 *       (each trip is two context switches); prints "switch ns_per_trip X".
 *       --monitor gives both threads a pv context (a libvperf set counting
 *       NAME, default vperf::vcpu-clock, on itself: a guest-accounted
 *       context, no hypercall per switch; vperf::exits needs the host's
 *       count, a SNAPSHOT hypercall per switch); --bystander adds a monitored thread
 *       that sleeps, so that the module's probe has contexts to look the
 *       two up in.  run.sh interleaves four states: module not loaded,
 *       loaded with unmonitored threads, the same beside a monitored
 *       bystander, monitored.
 *   guest-bench reads [--reads N] [--rounds R]
 *       ns per operation, median of R interleaved rounds of N each, in this
 *       thread's CPU time: getppid(), a page read (pv set with
 *       VPERF_EVSET_PAGE_ONLY), an exact read (pv set, THREAD_READ + page;
 *       a thread may have one pv set, so these two run in two phases, each
 *       interleaved with getppid and the perf read),
 *       a read() of a guest perf task-clock event (perf backend set); and
 *       the VM exits one exact read costs: the thread's own vperf::exits
 *       (read exactly) around every block of reads give each method's exits;
 *       less the closing read's own, over the exact reads: 1 + background
 *       (the other blocks' exit rate shows what that is).
 * Prints "key value" lines for run.sh.  Exit 0 when it measured, 1 when a
 * method could not be set up (printed), 2 on bad usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vperf/vperf.h>

#define MAX_ROUNDS 31

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* A set counting name on the calling thread; NULL after a message. */
static struct vperf_evset *self_set(const char *backend, const char *name, uint32_t flags)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .backend = backend, .flags = flags };
	struct vperf_evset *es;

	if (vperf_evset__new(&o, &es) || vperf_evset__add(es, name) || vperf_evset__open(es) ||
	    vperf_evset__start(es)) {
		fprintf(stderr, "guest-bench: %s on %s: %s\n", name, backend,
			es ? vperf_evset__strerror(es) : "out of memory");
		vperf_evset__delete(es);
		return NULL;
	}
	return es;
}

/* ---- switch ---- */

#define WARMUP 100

static int ping[2], pong[2], by_ready[2], by_end[2];
static long trips = 20000;	/* timed trips, after WARMUP untimed ones */
static int monitor, bystander;
static const char *monitor_event = "vperf::vcpu-clock";

/*
 * --bystander: a monitored thread that only sleeps (on another CPU when
 * there is one), so that the module has a live context and its switch
 * probe looks both unmonitored threads up at every switch; without one it
 * returns at its first load.
 */
static void *bystander_run(void *arg)
{
	struct vperf_evset *es;
	char c;

	(void)arg;
	if (!(es = self_set("pv", "vperf::vcpu-clock", 0)))
		exit(1);
	/* ready; then asleep until the end (EOF) */
	if (write(by_ready[1], "r", 1) != 1 || read(by_end[0], &c, 1) < 0)
		exit(1);
	vperf_evset__delete(es);
	return NULL;
}

static void *ponger(void *arg)
{
	struct vperf_evset *es = NULL;
	char c;

	(void)arg;
	pin0();
	if (monitor && !(es = self_set("pv", monitor_event, 0)))
		exit(1);
	for (long i = 0; i < WARMUP + trips; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(1);
	}
	vperf_evset__delete(es);
	return NULL;
}

static int bench_switch(void)
{
	struct vperf_evset *es = NULL;
	pthread_t th, by;
	uint64_t t0, t1;
	char c = 'x';

	if (pipe(ping) || pipe(pong))
		return 1;
	if (bystander) {
		if (pipe(by_ready) || pipe(by_end))
			return 1;
		pthread_create(&by, NULL, bystander_run, NULL);
		if (read(by_ready[0], &c, 1) != 1)
			return 1;
	}
	pin0();
	if (monitor && !(es = self_set("pv", monitor_event, 0)))
		return 1;
	pthread_create(&th, NULL, ponger, NULL);
	for (int i = 0; i < WARMUP; i++)	/* warm up, and let the ponger start its context */
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	t0 = wall_ns();
	for (long i = 0; i < trips; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	t1 = wall_ns();
	pthread_join(th, NULL);
	if (bystander) {
		close(by_end[1]);	/* its read returns 0: it ends */
		pthread_join(by, NULL);
	}
	printf("switch ns_per_trip %.1f\n", (double)(t1 - t0) / (double)trips);
	printf("switch monitored %d bystander %d\n", monitor, bystander);
	vperf_evset__delete(es);
	return 0;
}

/* ---- reads ---- */

enum { M_GETPPID, M_PAGE, M_INLINE, M_EXACT, M_PERF, NR_METHODS };
static const char *const method_name[NR_METHODS] = { "getppid", "page_read", "page_inline", "exact_read",
						     "perf_read" };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * One phase: rounds of [getppid, the pv set's read, perf read] blocks,
 * interleaved; a thread may have one pv set, so the page and the exact
 * read each get their phase.  exact: the pv set counts vperf::exits and
 * brackets every block with a read, giving each block's exits.
 */
struct phase {
	double ns[NR_METHODS][2 * MAX_ROUNDS];
	int n[NR_METHODS];
	int64_t exits[NR_METHODS];	/* signed: see run_phase */
	double block_ns[NR_METHODS];
};

static volatile uint64_t bench_sink;

static int run_phase(struct phase *ph, struct vperf_evset *pv, int pv_method,
		     struct vperf_evset *perf, long reads, int rounds, const struct vperf_page_ref *ref)
{
	static const int order[4] = { M_GETPPID, -1, M_PERF, M_INLINE };
	const int nk = ref ? 4 : 3;	/* the inline page read: the page phase's */
	struct vperf_count c, e0, e1;
	uint64_t v, sum = 0;

	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < nk; k++) {
			int m = order[(r + k) % nk] < 0 ? pv_method : order[(r + k) % nk];
			uint64_t t0, t1;

			if (pv_method == M_EXACT && vperf_evset__read_one(pv, 0, &e0))
				return 1;
			t0 = cpu_ns();
			for (long i = 0; i < reads; i++) {
				if (m == M_GETPPID)
					(void)getppid();
				else if (m == M_INLINE)
					sum += vperf_page_read(ref, &v) ? 0 : v;
				else if (m == M_PERF)
					vperf_evset__read_one(perf, 0, &c);
				else
					vperf_evset__read_one(pv, 0, &c);
			}
			t1 = cpu_ns();
			if (pv_method == M_EXACT) {
				if (vperf_evset__read_one(pv, 0, &e1))
					return 1;
				/*
				 * The closing read's own exit is one of them.  The two
				 * bracketing reads may take different paths (doorbell, or
				 * THREAD_READ after a switch), which differ in whether a
				 * read's own exit is in its value: a block is exact to +-1.
				 */
				ph->exits[m] += (int64_t)(e1.value - e0.value) - 1;
				ph->block_ns[m] += (double)(t1 - t0);
			}
			ph->ns[m][ph->n[m]++] = (double)(t1 - t0) / (double)reads;
		}
	}
	bench_sink = sum;	/* the inline reads' values are used: the loads stay in the loop */
	return 0;
}

static int bench_reads(long reads, int rounds)
{
	struct vperf_evset *pv, *perf;
	struct phase ph;
	struct vperf_page_ref ref = { .size = sizeof(ref) };
	double bg_exits = 0, bg_ns = 0;

	memset(&ph, 0, sizeof(ph));
	pin0();
	perf = self_set("perf", "task-clock", 0);
	pv = self_set("pv", "vperf::vcpu-clock", VPERF_EVSET_PAGE_ONLY);
	if (!perf || !pv)
		return 1;
	printf("reads path_page %s\n", vperf_read_path_name(vperf_evset__read_path(pv, 0)));
	if (vperf_evset__page_ref(pv, 0, &ref)) {
		fprintf(stderr, "guest-bench: vperf_evset__page_ref: %s\n", vperf_evset__strerror(pv));
		return 1;
	}
	if (run_phase(&ph, pv, M_PAGE, perf, reads, rounds, &ref))
		return 1;
	vperf_evset__delete(pv);
	pv = self_set("pv", "vperf::exits", 0);
	if (!pv)
		return 1;
	printf("reads path_exact %s\n", vperf_read_path_name(vperf_evset__read_path(pv, 0)));
	printf("reads path_perf %s\n", vperf_read_path_name(vperf_evset__read_path(perf, 0)));
	if (run_phase(&ph, pv, M_EXACT, perf, reads, rounds, NULL))
		return 1;
	for (int m = 0; m < NR_METHODS; m++) {
		int n = ph.n[m];

		if (!n)
			continue;
		qsort(ph.ns[m], (size_t)n, sizeof(double), cmp_double);
		printf("reads %s_ns %.1f\n", method_name[m], ph.ns[m][n / 2]);
		printf("reads %s_min_ns %.1f\n", method_name[m], ph.ns[m][0]);
		printf("reads %s_max_ns %.1f\n", method_name[m], ph.ns[m][n - 1]);
		printf("reads %s_exits %lld\n", method_name[m], (long long)ph.exits[m]);
		if (m != M_EXACT) {
			bg_exits += (double)ph.exits[m];
			bg_ns += ph.block_ns[m];
		}
	}
	printf("reads exact_reads %llu\n", (unsigned long long)reads * (unsigned long long)rounds);
	/*
	 * All exits inside the exact blocks per exact read: each read makes one
	 * hypercall, so this is 1 plus the background (timer and the like) per
	 * read, an upper bound; the other blocks' rate shows that background.
	 */
	printf("reads exact_exits_per_read %.4f\n",
	       (double)ph.exits[M_EXACT] / ((double)reads * rounds));
	printf("reads background_exits_per_ms %.3f\n", bg_ns > 0 ? bg_exits / bg_ns * 1e6 : 0.0);
	vperf_evset__delete(pv);
	vperf_evset__delete(perf);
	return 0;
}

static long number(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "guest-bench: bad number '%s' (%ld..%ld)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long reads = 20000;
	int rounds = 7;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		goto usage;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--monitor"))
			monitor = 1;
		else if (!strcmp(argv[i], "--event") && i + 1 < argc)
			monitor_event = argv[++i];
		else if (!strcmp(argv[i], "--bystander"))
			bystander = 1;
		else if (!strcmp(argv[i], "--trips") && i + 1 < argc)
			trips = number(argv[++i], 200, 10000000);
		else if (!strcmp(argv[i], "--reads") && i + 1 < argc)
			reads = number(argv[++i], 1, 100000000);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (int)number(argv[++i], 1, MAX_ROUNDS);
		else
			goto usage;
	}
	if (!strcmp(argv[1], "switch"))
		return bench_switch();
	if (!strcmp(argv[1], "reads"))
		return bench_reads(reads, rounds);
usage:
	fprintf(stderr, "usage: guest-bench switch [--monitor] [--bystander] [--trips N]\n"
		"       guest-bench reads [--reads N] [--rounds R]\n");
	return 2;
}
