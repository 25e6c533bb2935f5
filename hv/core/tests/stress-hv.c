// SPDX-License-Identifier: MIT
/*
 * libvperf-hv's locking under load, built with ThreadSanitizer (ctest
 * tsan.hv_locking_stress): the threads of a VMM and a guest that does
 * everything at once.
 *
 *   - vCPUs 0 and 1 (the guest): register a trace ring, write markers into
 *     it, TRACE_FLUSH now and then, unregister it and reuse its memory at
 *     once (as a guest may: it is the guest's again), move between two rings;
 *     register, SNAPSHOT and unregister per-vCPU pages, competing for the
 *     same page slots;
 *   - a drainer (the VMM's recorder thread): drains both rings and reads
 *     their stats in a loop;
 *   - vCPU 2: COUNTERS_SET of 16 task-clock counters, STRESS_ARMED of them
 *     armed to overflow every 100 us of the thread's time, then of the same
 *     16 again (kept, restarted), then of 1, in a loop: the armed counters'
 *     overflow signals arrive during the next COUNTERS_SET (its ~50 system
 *     calls take longer than a period), in the middle of it.
 *
 * It fails on a ThreadSanitizer report (halt_on_error), on a write of the
 * host into a ring after its unregistration returned (a canary the guest
 * leaves there), and on an overflow bit OVERFLOW_ACK cannot clear (a bit
 * above the counters the vCPU has).
 *
 * Usage: stress-hv SECONDS
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vperf/hv.h>
#include <vperf/trace_rec.h>


#define RAM_BASE	0x100000ull
#define RAM_SIZE	(256u * 1024)
#define RING_DATA	8192u
#define RING_LEN	(RING_DATA + sizeof(struct vperf_trace_ring))
#define RING_GPA(v, s)	(RAM_BASE + ((v) * 2 + (s)) * 0x4000ull)	/* own slots, 16 KiB each */
#define PAGE_SLOTS	4
#define PAGE_GPA(k)	(RAM_BASE + 0x10000 + (k) * 0x1000ull)		/* shared by vCPUs 0, 1 */
#define CPAGE_GPA	(RAM_BASE + 0x18000)				/* vCPU 2's page */
#define DESC_GPA	(RAM_BASE + 0x19000)
#define CANARY		0x5a
/*
 * Counters armed of the 16 (100 us of the thread's time each): 4 are 40 000 signals a second,
 * enough to land in every COUNTERS_SET.  All 16 under ThreadSanitizer, which defers a signal
 * handler to its next safe point, filled the real-time signal queue and starved the thread.
 */
#define STRESS_ARMED	4

static unsigned char *ram;
static atomic_bool stop;
static atomic_int failed;
static _Atomic uint64_t records_delivered, drains, flushes, canary_checks, sets;

#define fail(...)                                                                       \
	do {                                                                            \
		fprintf(stderr, "stress-hv: FAIL: " __VA_ARGS__);                       \
		atomic_store(&failed, 1);                                               \
		atomic_store(&stop, true);                                              \
	} while (0)

static void *gpa_to_hva(void *vmm, uint64_t gpa, uint64_t len)
{
	(void)vmm;
	if (!len || gpa < RAM_BASE || len > RAM_SIZE || gpa - RAM_BASE > RAM_SIZE - len)
		return NULL;
	return ram + (gpa - RAM_BASE);
}

static int irq_raise(void *vmm, uint32_t gsi)
{
	(void)vmm;
	(void)gsi;
	return 0;
}

static uint64_t exit_count(void *vmm, int vcpu, uint32_t reason)
{
	(void)vmm;
	(void)vcpu;
	(void)reason;
	return 0;
}

static void guest_exit(void *vmm, int vcpu, uint32_t status)
{
	(void)vmm;
	(void)vcpu;
	(void)status;
}

/* Any thread, one drain of a vCPU at a time: only atomics here. */
static void trace_records(void *vmm, int vcpu, const void *records, size_t len)
{
	const unsigned char *p = records;
	size_t n = 0;

	(void)vmm;
	(void)vcpu;
	for (size_t off = 0; off < len; n++)
		off += ((const struct vperf_trace_rec *)(p + off))->size;
	atomic_fetch_add(&records_delivered, n);
}

static void trace_clock_sample(void *vmm, int vcpu, uint64_t guest_tsc)
{
	(void)vmm;
	(void)vcpu;
	(void)guest_tsc;
}

static const struct vperf_hv_ops ops = {
	.gpa_to_hva = gpa_to_hva,
	.irq_raise = irq_raise,
	.exit_count = exit_count,
	.guest_exit = guest_exit,
	.trace_records = trace_records,
	.trace_clock_sample = trace_clock_sample,
};

struct vcpu_arg {
	struct vperf_hv *hv;
	int idx;
};

static int64_t hc(struct vperf_hv *hv, int vcpu, uint32_t op, uint64_t a0, uint64_t a1,
		  uint64_t a2)
{
	uint64_t args[4] = { a0, a1, a2, 0 };

	return vperf_hv__hypercall(hv, vcpu, op, args);
}

/* The guest's producer: a marker at head if it fits, published by a release store of head. */
static void produce(struct vperf_trace_ring *r, uint64_t value)
{
	unsigned char rec[VPERF_TRACE_REC_MAX];
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint32_t size = vperf_mark_rec_fill(rec, "stress", 6, value, VPERF_TRACE_MARK_INSTANT,
					    value);

	if (head - tail + size > RING_DATA)
		return;		/* full: the drainer is behind */
	vperf_ring_copy_in((unsigned char *)(r + 1), RING_DATA, head, rec, size);
	__atomic_store_n(&r->head, head + size, __ATOMIC_RELEASE);
}

/* vCPUs 0 and 1: rings and pages, registered and unregistered as fast as they go. */
static void *ring_vcpu(void *p)
{
	struct vcpu_arg *a = p;
	bool canary[2] = { false, false };
	unsigned int seed = (unsigned int)a->idx * 7919u + 1;
	uint64_t iter = 0;

	if (vperf_hv__vcpu_enter(a->hv, a->idx))
		fail("vcpu%d: enter\n", a->idx);
	while (!atomic_load(&stop)) {
		int s = (int)(iter & 1);
		uint64_t gpa = RING_GPA(a->idx, s);
		struct vperf_trace_ring *r = gpa_to_hva(NULL, gpa, RING_LEN);
		int64_t ret;

		/* the memory was ours since we unregistered it: nobody wrote into it */
		if (canary[s]) {
			for (size_t i = 0; i < sizeof(*r); i++) {
				if (((unsigned char *)r)[i] != CANARY) {
					fail("vcpu%d: the host wrote into ring %d's header "
					     "(byte %zu) after TRACE_REGISTER unregistered it\n",
					     a->idx, s, i);
					break;
				}
			}
			atomic_fetch_add(&canary_checks, 1);
		}
		memset(r, 0, sizeof(*r));
		r->size = sizeof(*r);
		r->version = VPERF_TRACE_RING_V2;
		r->data_size = RING_DATA;
		ret = hc(a->hv, a->idx, VPERF_HC_TRACE_REGISTER, gpa, RING_LEN, 0);
		if (ret) {
			fail("vcpu%d: TRACE_REGISTER %#" PRIx64 ": %" PRId64 "\n", a->idx, gpa, ret);
			break;
		}
		for (int k = 0; k < 64; k++) {
			produce(r, iter * 64 + (uint64_t)k);
			if (k % 16 == 15) {
				ret = hc(a->hv, a->idx, VPERF_HC_TRACE_FLUSH, 1000 + iter, 0, 0);
				if (ret < 0)
					fail("vcpu%d: TRACE_FLUSH: %" PRId64 "\n", a->idx, ret);
				atomic_fetch_add(&flushes, 1);
			}
		}
		/* a page in a slot the other vCPU may hold (EBUSY then), used, given back */
		ret = hc(a->hv, a->idx, VPERF_HC_PAGE_REGISTER, PAGE_GPA(rand_r(&seed) % PAGE_SLOTS),
			 0, 0);
		if (ret && ret != -VPERF_EBUSY)
			fail("vcpu%d: PAGE_REGISTER: %" PRId64 "\n", a->idx, ret);
		if (!ret) {
			if (hc(a->hv, a->idx, VPERF_HC_SNAPSHOT, 0, 0, 0))
				fail("vcpu%d: SNAPSHOT\n", a->idx);
			vperf_hv__vcpu_exit(a->hv, a->idx);
			if (hc(a->hv, a->idx, VPERF_HC_PAGE_REGISTER, 0, 0, 0))
				fail("vcpu%d: page unregistration\n", a->idx);
		}
		/* unregister, and reuse the memory at once */
		if (hc(a->hv, a->idx, VPERF_HC_TRACE_REGISTER, 0, 0, 0))
			fail("vcpu%d: ring unregistration\n", a->idx);
		memset(r, CANARY, sizeof(*r));
		canary[s] = true;
		iter++;
	}
	return NULL;
}

/* The VMM's recorder thread. */
static void *drainer(void *p)
{
	struct vperf_hv *hv = p;

	while (!atomic_load(&stop)) {
		for (int v = 0; v < 2; v++) {
			struct vperf_hv_trace_stats st = { .size = sizeof(st) };
			int64_t r = vperf_hv__trace_drain(hv, v);

			if (r < 0 && r != -VPERF_ESTATE && r != -VPERF_EINVAL)
				fail("drain of vcpu%d: %" PRId64 "\n", v, r);
			if (vperf_hv__trace_stats(hv, v, &st))
				fail("trace stats of vcpu%d\n", v);
			atomic_fetch_add(&drains, 1);
		}
	}
	return NULL;
}

static void burn_us(unsigned int us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < us * 1000L);
}

/* COUNTERS_SET n task-clock counters on vCPU 2, armed (every 100 us) if arm. */
static void set_counters(struct vperf_hv *hv, int n, bool arm)
{
	struct vperf_event_desc *d = gpa_to_hva(NULL, DESC_GPA, sizeof(*d) * VPERF_MAX_COUNTERS);
	int64_t r;

	memset(d, 0, sizeof(*d) * VPERF_MAX_COUNTERS);
	for (int i = 0; i < n; i++) {
		d[i].source = VPERF_SRC_PERF;
		strcpy(d[i].name, "task-clock");
	}
	r = hc(hv, 2, VPERF_HC_COUNTERS_SET, DESC_GPA, (uint64_t)n, 0);
	if (r) {
		fail("vcpu2: COUNTERS_SET %d: %" PRId64 "\n", n, r);
		return;
	}
	atomic_fetch_add(&sets, 1);
	for (int i = 0; arm && i < n && i < STRESS_ARMED; i++) {
		r = hc(hv, 2, VPERF_HC_OVERFLOW_SET, (uint64_t)i, 100000, 0);
		if (r)
			fail("vcpu2: OVERFLOW_SET %d: %" PRId64 "\n", i, r);
	}
}

/* Every overflow bit the page shows is one the guest can acknowledge. */
static void check_acks(struct vperf_hv *hv, int n)
{
	const struct vperf_vcpu_page *pg = gpa_to_hva(NULL, CPAGE_GPA, VPERF_PAGE_SIZE);
	uint64_t valid = n >= 64 ? ~0ull : (1ull << n) - 1;
	uint64_t st;
	int64_t r;

	vperf_hv__vcpu_exit(hv, 2);
	st = __atomic_load_n(&pg->overflow_status, __ATOMIC_RELAXED);
	if (st & ~valid) {
		fail("vcpu2: overflow_status %#" PRIx64 " with %d counters: OVERFLOW_ACK cannot "
		     "clear %#" PRIx64 "\n", st, n, st & ~valid);
	}
	r = hc(hv, 2, VPERF_HC_OVERFLOW_ACK, st & valid, 0, 0);
	if (r)
		fail("vcpu2: OVERFLOW_ACK %#" PRIx64 ": %" PRId64 "\n", st & valid, r);
}

/* vCPU 2: counters replaced under a rain of overflow signals. */
static void *counter_vcpu(void *p)
{
	struct vperf_hv *hv = p;

	if (vperf_hv__vcpu_enter(hv, 2))
		fail("vcpu2: enter\n");
	if (hc(hv, 2, VPERF_HC_PAGE_REGISTER, CPAGE_GPA, 0, 0))
		fail("vcpu2: PAGE_REGISTER\n");
	while (!atomic_load(&stop)) {
		set_counters(hv, VPERF_MAX_COUNTERS, true);
		burn_us(300);
		check_acks(hv, VPERF_MAX_COUNTERS);
		set_counters(hv, VPERF_MAX_COUNTERS, true);
		check_acks(hv, VPERF_MAX_COUNTERS);
		burn_us(300);
		set_counters(hv, 1, false);
		check_acks(hv, 1);
		burn_us(100);
		check_acks(hv, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct vperf_hv_config cfg = {
		.size = sizeof(cfg), .nr_vcpus = 3, .gsi = 5, .allow = (const char *const[]){ "*" },
		.nr_allow = 1, .min_irq_interval_ns = 1,
	};
	struct vcpu_arg args[2];
	pthread_t th[4];
	struct timespec start, now, pause = { 0, 10 * 1000 * 1000 };
	double secs = argc == 2 ? atof(argv[1]) : 5;
	struct vperf_hv *hv;
	uint64_t irqs;

	ram = aligned_alloc(4096, RAM_SIZE);
	if (!ram || vperf_hv__new(&cfg, &ops, NULL, &hv)) {
		fprintf(stderr, "stress-hv: setup failed\n");
		return 1;
	}
	memset(ram, 0, RAM_SIZE);
	for (int i = 0; i < 2; i++) {
		args[i] = (struct vcpu_arg){ hv, i };
		pthread_create(&th[i], NULL, ring_vcpu, &args[i]);
	}
	pthread_create(&th[2], NULL, drainer, hv);
	pthread_create(&th[3], NULL, counter_vcpu, hv);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!atomic_load(&stop) &&
		 (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < secs);
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("stress-hv: %.1f s: %" PRIu64 " drains, %" PRIu64 " flushes, %" PRIu64
	       " records delivered, %" PRIu64 " canaries intact, %" PRIu64 " COUNTERS_SETs, %"
	       PRIu64 " overflow interrupts\n", secs, atomic_load(&drains), atomic_load(&flushes),
	       atomic_load(&records_delivered), atomic_load(&canary_checks), atomic_load(&sets),
	       vperf_hv__irq_count(hv, 2));
	irqs = vperf_hv__irq_count(hv, 2);
	vperf_hv__delete(hv);
	free(ram);
	if (atomic_load(&failed))
		return 1;
	if (!atomic_load(&records_delivered) || !atomic_load(&sets) ||
	    !atomic_load(&canary_checks) || !irqs) {
		fprintf(stderr, "stress-hv: FAIL: a part of the test did not run\n");
		return 1;
	}
	return 0;
}
