/* SPDX-License-Identifier: MIT */
/*
 * sample3to1: sampling with callchains, checked against a known CPU split.
 *
 *   sample3to1 [EVENT [PERIOD_NS [B_MS]]]   (defaults cpu-clock, 1000000, 100;
 *       in a guest with vperf_guest.ko, vperf::vcpu-clock samples through its
 *       overflow NMIs, where a sample costs 0.5..1 ms in nested TCG: 4 ms, 800)
 *
 * The process samples itself on EVENT (one sample per 1,000,000 ns of
 * its CPU time, callchains of up to 16 frames) while main() calls two busy
 * functions with a 3:1 CPU split: busy_a() 300 ms and busy_b() 100 ms in
 * total, interleaved in rounds (busy_a 3*s, then busy_b s) so that any
 * drift (frequency changes, a noisy neighbour) hits both alike.  The slice
 * s varies pseudo-randomly between 2 and 10 periods: with a fixed slice
 * that is a multiple of half the period, every round would put its slice
 * boundary at the same phase of the sampling clock and the periodic
 * samples would alias (a fixed 7.5/2.5 ms split measured 280:120, 2.33:1,
 * every time).  With a varying phase the rounding at each boundary
 * averages out; slices of several periods keep that rounding (at most one
 * sample per boundary) small against the samples a slice gets (slices
 * under a period made the counts nearly Poisson: +-8% for 800 samples in
 * a guest).  The sampling
 * callback runs in signal context: it only copies the callchain into a
 * preallocated static array.  Afterwards each sample is classified by the
 * busy function its callchain contains (IPs resolved with dladdr: the
 * binary is linked with -rdynamic, the busy functions are global and
 * noinline) and the test asserts:
 *   - a:b is within 10% of the ratio of the CPU times the two functions
 *     measured for themselves (3 but for vt_burn_ns's last check, which
 *     overshoots: under nested TCG the split came out 2.5..2.7),
 *   - the callchains of busy samples contain the busy function AND main,
 *   - enough samples arrived for the ratio to mean something: half of what
 *     the event's own count makes at one per period.
 * Exit status: 0 pass, 1 fail, 77 skip (with the reason printed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vperf/vperf.h>

#include "burn.h"

#define MAX_FRAMES	16
#define MAX_SAMPLES	8192

struct rec {
	uint32_t nr;
	uint64_t ip[MAX_FRAMES];
};

/* Written only by the signal handler (one thread), read after stop. */
static struct rec recs[MAX_SAMPLES];
static atomic_uint nr_recs;
static atomic_uint nr_overflow;

void busy_a(uint64_t ns);
void busy_b(uint64_t ns);

static void on_sample(const struct vperf_sample *s, void *arg)
{
	unsigned int i = atomic_fetch_add_explicit(&nr_recs, 1, memory_order_relaxed);
	uint32_t nr = s->nr_frames;

	if (i >= MAX_SAMPLES) {
		atomic_fetch_add_explicit(&nr_overflow, 1, memory_order_relaxed);
		return;
	}
	if (nr > MAX_FRAMES)
		nr = MAX_FRAMES;
	for (uint32_t f = 0; f < nr; f++)
		recs[i].ip[f] = s->callchain[f];
	recs[i].nr = nr;
}

/* CPU time each busy function really used: vt_burn_ns's last check overshoots (most under nested TCG). */
static uint64_t a_ns, b_ns;

__attribute__((noinline)) void busy_a(uint64_t ns)
{
	uint64_t t0 = vt_thread_cpu_ns();

	vt_burn_ns(ns);
	a_ns += vt_thread_cpu_ns() - t0;
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

__attribute__((noinline)) void busy_b(uint64_t ns)
{
	uint64_t t0 = vt_thread_cpu_ns();

	vt_burn_ns(ns);
	b_ns += vt_thread_cpu_ns() - t0;
	__asm__ volatile("" ::: "memory");
}

/* Which of the functions (busy_a, busy_b, main) contain ip. */
static void *func_of(uint64_t ip)
{
	Dl_info info;

	if (!ip || !dladdr((void *)(uintptr_t)ip, &info) || !info.dli_saddr)
		return NULL;
	return info.dli_saddr;
}

int main(int argc, char **argv)
{
	const char *event = argc > 1 ? argv[1] : "cpu-clock";
	const uint64_t PERIOD_NS = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000000;
	const uint64_t B_TOTAL_NS = (argc > 3 ? strtoull(argv[3], NULL, 0) : 100) * 1000000;	/* busy_a: 3x */
	struct vperf_sample_opts so = {
		.size = sizeof(so),
		.period = 0,
		.fn = on_sample,
		.max_frames = MAX_FRAMES,
	};
	struct vperf_evset *es = NULL;
	unsigned int n, na = 0, nb = 0, nboth = 0, nother = 0, a_main = 0, b_main = 0;
	unsigned int empty = 0, rounds = 0;
	uint64_t t0, used, counted;
	struct vperf_count cnt;
	double ratio, want;
	int idx, err, ok = 1;

	so.period = PERIOD_NS;
	if (!PERIOD_NS || !B_TOTAL_NS) {
		printf("usage: sample3to1 [EVENT [PERIOD_NS [B_MS]]]\n");
		return 2;
	}
	err = vperf_evset__new(NULL, &es);
	if (err) {
		printf("FAIL: vperf_evset__new: %d\n", err);
		return 1;
	}
	idx = vperf_evset__add(es, event);
	if (idx < 0) {
		printf("FAIL: add %s: %s\n", event, vperf_evset__strerror(es));
		return 1;
	}
	err = vperf_evset__sample(es, idx, &so);
	if (err) {
		printf("FAIL: vperf_evset__sample: %d: %s\n", err, vperf_evset__strerror(es));
		return 1;
	}
	err = vperf_evset__open(es);
	if (err) {
		printf("FAIL: open: %d: %s\n", err, vperf_evset__strerror(es));
		return 1;
	}
	t0 = vt_thread_cpu_ns();
	if ((err = vperf_evset__start(es))) {
		printf("FAIL: start: %d: %s\n", err, vperf_evset__strerror(es));
		return 1;
	}
	for (uint64_t b_done = 0, seed = 12345; b_done < B_TOTAL_NS; ) {
		uint64_t slice;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		slice = 2 * PERIOD_NS + (seed >> 33) % (8 * PERIOD_NS);
		if (slice > B_TOTAL_NS - b_done)
			slice = B_TOTAL_NS - b_done;
		busy_a(3 * slice);
		busy_b(slice);
		b_done += slice;
		rounds++;
	}
	if ((err = vperf_evset__stop(es))) {
		printf("FAIL: stop: %d: %s\n", err, vperf_evset__strerror(es));
		return 1;
	}
	used = vt_thread_cpu_ns() - t0;
	/*
	 * The samples follow the event's own count, which is not the thread's
	 * CPU time everywhere: in a guest, vperf::vcpu-clock leaves out what the
	 * host took (steal), which the guest's CPU time has.
	 */
	memset(&cnt, 0, sizeof(cnt));
	err = vperf_evset__read_one(es, idx, &cnt);
	if (err) {
		printf("FAIL: read %s: %d: %s\n", event, err, vperf_evset__strerror(es));
		return 1;
	}
	counted = cnt.value;

	n = atomic_load(&nr_recs);
	if (n > MAX_SAMPLES)
		n = MAX_SAMPLES;
	for (unsigned int i = 0; i < n; i++) {
		int in_a = 0, in_b = 0, in_main = 0;

		if (!recs[i].nr)
			empty++;
		for (uint32_t f = 0; f < recs[i].nr; f++) {
			void *fn = func_of(recs[i].ip[f]);

			in_a |= fn == (void *)busy_a;
			in_b |= fn == (void *)busy_b;
			in_main |= fn == (void *)main;
		}
		if (in_a && in_b)
			nboth++;
		else if (in_a)
			na++, a_main += in_main;
		else if (in_b)
			nb++, b_main += in_main;
		else
			nother++;
	}

	printf("sample3to1: %s (backend %s)\n", event, vperf_backend_name(es));
	printf("sample3to1: %.1f ms cpu sampled in %u rounds, %u samples (expected about %.0f: %s counted "
	       "%llu), lost %llu, overflowed %u\n", (double)used / 1e6, rounds, n, (double)counted / PERIOD_NS,
	       event, (unsigned long long)counted,
	       (unsigned long long)vperf_evset__samples_lost(es), atomic_load(&nr_overflow));
	printf("sample3to1: busy_a %u (with main %u), busy_b %u (with main %u), both %u, "
	       "neither %u, empty callchain %u\n", na, a_main, nb, b_main, nboth, nother, empty);
	if (n)
		for (uint32_t f = 0; f < recs[n / 2].nr; f++) {
			Dl_info info;
			uint64_t ip = recs[n / 2].ip[f];

			if (dladdr((void *)(uintptr_t)ip, &info) && info.dli_sname)
				printf("  sample %u frame %u: %#llx %s\n", n / 2, f,
				       (unsigned long long)ip, info.dli_sname);
			else
				printf("  sample %u frame %u: %#llx ?\n", n / 2, f,
				       (unsigned long long)ip);
		}
	vperf_evset__delete(es);

	/* Enough samples for a 10% ratio check: at least half the expected. */
	if (n < counted / PERIOD_NS / 2) {
		printf("FAIL: %u samples for %llu counted at one per %llu\n", n,
		       (unsigned long long)counted, (unsigned long long)PERIOD_NS);
		return 1;
	}
	if (!nb) {
		printf("FAIL: no sample has busy_b in its callchain\n");
		return 1;
	}
	ratio = (double)na / nb;
	want = (double)a_ns / (double)b_ns;
	printf("sample3to1: ratio busy_a:busy_b = %.3f (their CPU times %.1f and %.1f ms: %.3f, nominally 3; "
	       "want within 10%% of it)\n", ratio, a_ns / 1e6, b_ns / 1e6, want);
	if (ratio < 0.9 * want || ratio > 1.1 * want) {
		printf("FAIL: ratio %.3f outside [%.3f, %.3f]\n", ratio, 0.9 * want, 1.1 * want);
		ok = 0;
	}
	/* Nearly every sample was taken in a busy function... */
	if (nother + nboth > n / 10) {
		printf("FAIL: %u of %u samples are in neither (or both) busy functions\n",
		       nother + nboth, n);
		ok = 0;
	}
	/* ...and its callchain reaches back to main. */
	if (a_main < na * 9 / 10 || b_main < nb * 9 / 10) {
		printf("FAIL: callchains without main: busy_a %u of %u, busy_b %u of %u\n",
		       na - a_main, na, nb - b_main, nb);
		ok = 0;
	}
	if (ok)
		printf("PASS\n");
	return ok ? 0 : 1;
}
