// SPDX-License-Identifier: MIT
/*
 * vperf-hctest: guest-side tests of the vperf device, run as root in a
 * vperf-vmm guest (statically linked into the L2 initramfs).  Each mode
 * prints what it measured, reports it to the host with a ucall, and exits
 * 0 (pass), 1 (fail) or 2 (usage); the host side checks what only it can
 * see (its exit accounting) from vperf-vmm's --stats-json.
 *
 *   count N        exactly N VPERF_HC_VERSION hypercalls (host: N counted)
 *   task-clock MS  a vCPU-thread task-clock counter against guest time
 *   hostile        hostile arguments get error codes; the device survives
 *   overflow HZ MS task-clock overflow interrupts at HZ for MS of busy guest
 *                  time arrive at that rate (needs vperf_irqcount.ko)
 *   sources N      N bare port writes seen by KVM's io_exits statistic and the
 *                  VMM's exit accounting (exactly N + 1: the snapshot is an
 *                  exit too), and a steal counter that reads
 *   bench N        round trips: PV hypercall, bare port-I/O exit, getppid()
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "pv.h"

#define BARE_PORT 0x5658	/* nothing there: the VMM's unknown-port path */

static int fails;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fails++;						\
			pv_print(pv, "FAIL %s:%d: " #cond, __FILE__, __LINE__);	\
			pv_print(pv, __VA_ARGS__);				\
		}								\
	} while (0)

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static long arg_num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		fprintf(stderr, "vperf-hctest: bad number '%s' (%ld..%ld)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

static int mode_count(struct pv *pv, long n)
{
	for (long i = 0; i < n; i++) {
		int64_t r = pv_hc(pv, VPERF_HC_VERSION, 0, 0, 0, 0);

		CHECK((r & 0xffffffff) == VPERF_ABI_VERSION, "VERSION returned %lld", (long long)r);
	}
	pv_print(pv, "count: made %ld VERSION hypercalls", n);
	return fails ? 1 : 0;
}

static int mode_task_clock(struct pv *pv, long ms)
{
	uint64_t page_gpa, desc_gpa, t0, t1;
	struct vperf_vcpu_page *pg = pv_alloc(4096, &page_gpa), a, b;
	struct vperf_event_desc *d = pv_alloc(4096, &desc_gpa);
	double host_ms, guest_ms, err;

	if (!pg || !d)
		return 1;
	pin(0);
	d->source = VPERF_SRC_PERF;
	snprintf(d->name, sizeof(d->name), "task-clock");
	CHECK(pv_hc(pv, VPERF_HC_PAGE_REGISTER, page_gpa, 0, 0, 0) == 0, "page register");
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, desc_gpa, 1, 0, 0) == 0, "counters set");
	CHECK(pv_hc(pv, VPERF_HC_SNAPSHOT, 0, 0, 0, 0) == 0, "snapshot");
	t0 = pv_now_ns();
	CHECK(pv_page_read(pg, &a) == 0, "page read");
	while (pv_now_ns() - t0 < (uint64_t)ms * 1000000)
		;	/* the vCPU runs the guest all along */
	CHECK(pv_hc(pv, VPERF_HC_SNAPSHOT, 0, 0, 0, 0) == 0, "snapshot");
	CHECK(pv_page_read(pg, &b) == 0, "page read");
	t1 = pv_now_ns();
	host_ms = (double)(b.counters[0].value - a.counters[0].value) / 1e6;
	guest_ms = (double)(t1 - t0) / 1e6;
	err = (host_ms - guest_ms) / guest_ms * 100;
	pv_print(pv, "task-clock: vCPU thread %.3f ms over %.3f ms of guest time (%+.2f%%), "
		 "page size %u version %u", host_ms, guest_ms, err, b.size, b.version);
	CHECK(b.size == sizeof(b) && b.version == VPERF_ABI_VERSION && b.nr_counters == 1,
	      "page header size %u version %u nr %u", b.size, b.version, b.nr_counters);
	CHECK(err > -5 && err < 5, "task-clock off by %.2f%% (limit 5%%)", err);
	pv_hc(pv, VPERF_HC_PAGE_REGISTER, 0, 0, 0, 0);
	return fails ? 1 : 0;
}

static int mode_hostile(struct pv *pv)
{
	uint64_t gpa, dgpa;
	void *buf = pv_alloc(4096, &gpa);
	struct vperf_event_desc *d = pv_alloc(4096, &dgpa);
	struct {
		const char *what;
		uint32_t op;
		uint64_t a0, a1;
		int64_t want;
	} cases[] = {
		{ "page outside RAM", VPERF_HC_PAGE_REGISTER, 1ull << 46, 0, -VPERF_EFAULT },
		{ "page at the top of the address space", VPERF_HC_PAGE_REGISTER,
		  0xfffffffffffff000ull, 0, -VPERF_EFAULT },
		{ "misaligned page", VPERF_HC_PAGE_REGISTER, gpa + 8, 0, -VPERF_EINVAL },
		{ "huge descriptor count", VPERF_HC_COUNTERS_SET, dgpa, 1ull << 40, -VPERF_ENOSPC },
		{ "descriptors outside RAM", VPERF_HC_COUNTERS_SET, 1ull << 46, 1, -VPERF_EFAULT },
		{ "unknown operation", 0x7fffffff, 0, 0, -VPERF_ENOSYS },
		{ "ucall outside RAM", VPERF_HC_UCALL, 1ull << 46, 0, -VPERF_EFAULT },
		{ "exit status 1000", VPERF_HC_EXIT, 1000, 0, -VPERF_EINVAL },
		{ "huge trace ring", VPERF_HC_TRACE_REGISTER, gpa, 1ull << 40, -VPERF_ENOSPC },
		{ "snapshot without a page", VPERF_HC_SNAPSHOT, 0, 0, -VPERF_ESTATE },
		{ "overflow on no counter", VPERF_HC_OVERFLOW_SET, 3, 1000000, -VPERF_EINVAL },
	};

	if (!buf || !d)
		return 1;
	pin(0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t r = pv_hc(pv, cases[i].op, cases[i].a0, cases[i].a1, 0, 0);

		CHECK(r == cases[i].want, "%s: got %lld, want %lld", cases[i].what, (long long)r,
		      (long long)cases[i].want);
	}
	/* Forbidden and unknown events. */
	d->source = VPERF_SRC_PERF;
	snprintf(d->name, sizeof(d->name), "page-faults");	/* host kernel activity */
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, dgpa, 1, 0, 0) == -VPERF_EPERM, "page-faults allowed");
	snprintf(d->name, sizeof(d->name), "no-such-event");
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, dgpa, 1, 0, 0) == -VPERF_ENOENT, "unknown event");
	memset(d->name, 'x', sizeof(d->name));
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, dgpa, 1, 0, 0) == -VPERF_EINVAL, "unterminated name");
	/* Overlapping pages: the same page for two vCPUs. */
	pin(0);
	CHECK(pv_hc(pv, VPERF_HC_PAGE_REGISTER, gpa, 0, 0, 0) == 0, "page register");
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		pin(1);
		CHECK(pv_hc(pv, VPERF_HC_PAGE_REGISTER, gpa, 0, 0, 0) == -VPERF_EBUSY,
		      "second vCPU got the same page");
		pin(0);
	}
	/* An ack storm: many exits, no interrupts, the device still answers. */
	d->source = VPERF_SRC_EXITS;
	d->arg = UINT64_MAX;
	d->name[0] = '\0';
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, dgpa, 1, 0, 0) == 0, "exits counter");
	for (int i = 0; i < 100000; i++)
		pv_hc(pv, VPERF_HC_OVERFLOW_ACK, 1, 0, 0, 0);
	CHECK(pv_hc(pv, VPERF_HC_OVERFLOW_ACK, ~0ull, 0, 0, 0) == -VPERF_EINVAL, "ack of no counter");
	CHECK(pv_hc(pv, VPERF_HC_PAGE_REGISTER, 0, 0, 0, 0) == 0, "page unregister");
	/* Still answering (not VERSION: the count case counts those exactly). */
	CHECK(pv_hc(pv, VPERF_HC_OVERFLOW_ACK, 0, 0, 0, 0) == 0, "device gone after the hostile calls");
	pv_print(pv, "hostile: %d checks failed", fails);
	return fails ? 1 : 0;
}

static long irq_count(void)
{
	FILE *f = fopen("/sys/module/vperf_irqcount/parameters/count", "r");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static int mode_overflow(struct pv *pv, long hz, long ms)
{
	uint64_t desc_gpa, page_gpa, t0, t1;
	struct vperf_event_desc *d = pv_alloc(4096, &desc_gpa);
	struct vperf_vcpu_page *pg = pv_alloc(4096, &page_gpa), snap0, snap;
	long before, after;
	double want, err, wall_rate;

	if (!d || !pg)
		return 1;
	before = irq_count();
	if (before < 0) {
		pv_print(pv, "overflow: vperf_irqcount.ko is not loaded");
		return 1;
	}
	pin(0);
	d->source = VPERF_SRC_PERF;
	snprintf(d->name, sizeof(d->name), "task-clock");
	CHECK(pv_hc(pv, VPERF_HC_PAGE_REGISTER, page_gpa, 0, 0, 0) == 0, "page register");
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, desc_gpa, 1, 0, 0) == 0, "counters set");
	CHECK(pv_hc(pv, VPERF_HC_OVERFLOW_SET, 0, 1000000000 / hz, 0, 0) == 0, "overflow set");
	CHECK(pv_hc(pv, VPERF_HC_SNAPSHOT, 0, 0, 0, 0) == 0, "snapshot");
	CHECK(pv_page_read(pg, &snap0) == 0, "page read");
	t0 = pv_now_ns();
	while (pv_now_ns() - t0 < (uint64_t)ms * 1000000)
		;
	t1 = pv_now_ns();
	CHECK(pv_hc(pv, VPERF_HC_OVERFLOW_SET, 0, 0, 0, 0) == 0, "overflow off");
	after = irq_count();
	CHECK(pv_hc(pv, VPERF_HC_SNAPSHOT, 0, 0, 0, 0) == 0, "snapshot");
	CHECK(pv_page_read(pg, &snap) == 0 && (snap.overflow_status & 1), "overflow_status bit");
	CHECK(pv_hc(pv, VPERF_HC_OVERFLOW_ACK, 1, 0, 0, 0) == 0, "ack");
	/*
	 * The configured rate is one interrupt per period of the counter: the
	 * vCPU thread's CPU time, which is guest time only while the host runs
	 * the vCPU all along (steal makes it less).
	 */
	want = (double)(snap.counters[0].value - snap0.counters[0].value) * (double)hz / 1e9;
	err = ((double)(after - before) - want) / want * 100;
	wall_rate = (double)(after - before) / ((double)(t1 - t0) / 1e9);
	pv_print(pv, "overflow: %ld interrupts over %.3f s of vCPU time at %ld Hz: want %.1f (%+.1f%%); "
		 "%.0f per second of guest time", after - before,
		 (double)(snap.counters[0].value - snap0.counters[0].value) / 1e9, hz, want, err,
		 wall_rate);
	CHECK(err > -20 && err < 20, "interrupt rate off by %.1f%% (limit 20%%)", err);
	pv_hc(pv, VPERF_HC_COUNTERS_SET, 0, 0, 0, 0);
	pv_hc(pv, VPERF_HC_PAGE_REGISTER, 0, 0, 0, 0);
	return fails ? 1 : 0;
}

static int mode_sources(struct pv *pv, long n)
{
	uint64_t desc_gpa, page_gpa;
	struct vperf_event_desc *d = pv_alloc(4096, &desc_gpa);
	struct vperf_vcpu_page *pg = pv_alloc(4096, &page_gpa), a, b;
	uint64_t kvm, vmm, steal;

	if (!d || !pg)
		return 1;
	pin(0);
	d[0].source = VPERF_SRC_KVM_STAT;
	snprintf(d[0].name, sizeof(d[0].name), "io_exits");
	d[1].source = VPERF_SRC_EXITS;
	d[1].arg = 2;			/* KVM_EXIT_IO */
	d[2].source = VPERF_SRC_STEAL;
	CHECK(pv_hc(pv, VPERF_HC_PAGE_REGISTER, page_gpa, 0, 0, 0) == 0, "page register");
	CHECK(pv_hc(pv, VPERF_HC_COUNTERS_SET, desc_gpa, 3, 0, 0) == 0, "counters set");
	CHECK(pv_hc(pv, VPERF_HC_SNAPSHOT, 0, 0, 0, 0) == 0, "snapshot");
	CHECK(pv_page_read(pg, &a) == 0, "page read");
	for (long i = 0; i < n; i++)
		outl(0, BARE_PORT);
	CHECK(pv_hc(pv, VPERF_HC_SNAPSHOT, 0, 0, 0, 0) == 0, "snapshot");
	CHECK(pv_page_read(pg, &b) == 0, "page read");
	kvm = b.counters[0].value - a.counters[0].value;
	vmm = b.counters[1].value - a.counters[1].value;
	steal = b.counters[2].value - a.counters[2].value;
	pv_print(pv, "sources: %ld port writes: KVM io_exits +%llu, VMM IO exits +%llu, steal +%llu ns",
		 n, (unsigned long long)kvm, (unsigned long long)vmm, (unsigned long long)steal);
	CHECK(kvm == (uint64_t)n + 1, "KVM io_exits +%llu, want %ld", (unsigned long long)kvm, n + 1);
	CHECK(vmm == (uint64_t)n + 1, "VMM IO exits +%llu, want %ld", (unsigned long long)vmm, n + 1);
	CHECK(b.counters[2].enabled > a.counters[2].enabled, "steal counter does not advance");
	pv_hc(pv, VPERF_HC_COUNTERS_SET, 0, 0, 0, 0);
	pv_hc(pv, VPERF_HC_PAGE_REGISTER, 0, 0, 0, 0);
	return fails ? 1 : 0;
}

static uint64_t tsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median over rounds of the mean ns per call, the methods interleaved. */
static int mode_bench(struct pv *pv, long n)
{
	enum { HC, PIO, SYSCALL, NR };
	static const char *const names[NR] = { "pv-hypercall", "port-io-exit", "getppid" };
	enum { ROUNDS = 7 };
	uint64_t ns[NR][ROUNDS];
	double med[NR];

	pin(0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int m = 0; m < NR; m++) {
			uint64_t t0 = pv_now_ns();

			for (long i = 0; i < n; i++) {
				if (m == HC)
					pv_hc(pv, VPERF_HC_VERSION, 0, 0, 0, 0);
				else if (m == PIO)
					outl(0, BARE_PORT);
				else
					syscall(SYS_getppid);
			}
			ns[m][r] = (pv_now_ns() - t0) / (uint64_t)n;
		}
	}
	for (int m = 0; m < NR; m++) {
		qsort(ns[m], ROUNDS, sizeof(ns[m][0]), cmp_u64);
		med[m] = (double)ns[m][ROUNDS / 2];
	}
	printf("%-14s %12s %10s\n", "method", "ns/call", "ratio");
	for (int m = 0; m < NR; m++)
		printf("%-14s %12.0f %9.2fx\n", names[m], med[m], med[m] / med[PIO]);
	printf("goal: pv-hypercall <= 1.2x port-io-exit: %s (%.3fx)\n",
	       med[HC] <= 1.2 * med[PIO] ? "PASS" : "MISS", med[HC] / med[PIO]);
	printf("{\"bench\":\"hypercall\",\"calls_per_round\":%ld,\"rounds\":%d,"
	       "\"pv_hypercall_ns\":%.0f,\"port_io_exit_ns\":%.0f,\"getppid_ns\":%.0f,"
	       "\"hypercall_vs_port_io\":%.3f,\"getppid_vs_port_io\":%.3f,\"goal_met\":%s,"
	       "\"tsc_sample\":%llu}\n",
	       n, ROUNDS, med[HC], med[PIO], med[SYSCALL], med[HC] / med[PIO],
	       med[SYSCALL] / med[PIO], med[HC] <= 1.2 * med[PIO] ? "true" : "false",
	       (unsigned long long)tsc());
	pv_print(pv, "bench: hypercall %.0f ns, port I/O %.0f ns, getppid %.0f ns (%.3fx)",
		 med[HC], med[PIO], med[SYSCALL], med[HC] / med[PIO]);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: vperf-hctest count N | task-clock MS | hostile | overflow HZ MS | "
		"sources N | bench N\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct pv pv_dev, *pv = &pv_dev;

	if (argc < 2)
		return usage();
	if (pv_open(pv))
		return 1;
	if (!strcmp(argv[1], "count") && argc == 3)
		return mode_count(pv, arg_num(argv[2], 0, 100000000));
	if (!strcmp(argv[1], "task-clock") && argc == 3)
		return mode_task_clock(pv, arg_num(argv[2], 1, 60000));
	if (!strcmp(argv[1], "hostile") && argc == 2)
		return mode_hostile(pv);
	if (!strcmp(argv[1], "overflow") && argc == 4)
		return mode_overflow(pv, arg_num(argv[2], 1, 10000), arg_num(argv[3], 1, 60000));
	if (!strcmp(argv[1], "sources") && argc == 3)
		return mode_sources(pv, arg_num(argv[2], 1, 10000000));
	if (!strcmp(argv[1], "bench") && argc == 3)
		return mode_bench(pv, arg_num(argv[2], 1, 10000000));
	return usage();
}
