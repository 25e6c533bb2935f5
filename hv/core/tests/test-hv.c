// SPDX-License-Identifier: MIT
/*
 * libvperf-hv against a fake VMM: every hypercall's known answers and its
 * errors for hostile arguments (docs/abi.md, section 4).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/kvm.h>
#include <cmocka.h>

#include "../fuzz/fake-vm.h"
#include "hv-internal.h"

struct fixture {
	struct fake_vm vm;
	struct vperf_hv *hv;
};

static const char *allow_all[] = { "*" };

static int setup_ops(void **state, const struct vperf_hv_ops *ops, const char *const *allow,
		     int nr_allow, uint64_t min_irq)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct vperf_hv_config cfg = {
		.size = sizeof(cfg), .nr_vcpus = 2, .gsi = 5, .allow = allow,
		.nr_allow = nr_allow, .min_irq_interval_ns = min_irq,
	};

	assert_non_null(f);
	f->vm.ram = calloc(1, FAKE_RAM_SIZE);
	assert_non_null(f->vm.ram);
	assert_int_equal(vperf_hv__new(&cfg, ops, &f->vm, &f->hv), 0);
	assert_int_equal(vperf_hv__vcpu_enter(f->hv, 0), 0);
	*state = f;
	return 0;
}

static int setup_with(void **state, const char *const *allow, int nr_allow, uint64_t min_irq)
{
	return setup_ops(state, &fake_ops, allow, nr_allow, min_irq);
}

static int setup(void **state)
{
	return setup_with(state, allow_all, 1, 1);
}

static int setup_default_allow(void **state)
{
	return setup_with(state, NULL, 0, 1);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	vperf_hv__delete(f->hv);
	free(f->vm.ram);
	free(f);
	return 0;
}

static int64_t hc3(struct fixture *f, int vcpu, uint32_t op, uint64_t a0, uint64_t a1, uint64_t a2)
{
	uint64_t args[4] = { a0, a1, a2, 0 };

	return vperf_hv__hypercall(f->hv, vcpu, op, args);
}

static int64_t hc(struct fixture *f, int vcpu, uint32_t op, uint64_t a0, uint64_t a1)
{
	return hc3(f, vcpu, op, a0, a1, 0);
}

static void *gmem(struct fixture *f, uint64_t gpa)
{
	return f->vm.ram + (gpa - FAKE_RAM_BASE);
}

static void put_desc(struct fixture *f, uint64_t gpa, int i, uint32_t src, uint64_t arg, const char *name)
{
	struct vperf_event_desc *d = (struct vperf_event_desc *)gmem(f, gpa) + i;

	memset(d, 0, sizeof(*d));
	d->source = src;
	d->arg = arg;
	snprintf(d->name, sizeof(d->name), "%s", name);
}

#define PAGE_GPA	(FAKE_RAM_BASE + 0x4000)
#define DESC_GPA	FAKE_RAM_BASE

static const struct vperf_vcpu_page *page(struct fixture *f)
{
	return gmem(f, PAGE_GPA);
}

static void version_reports_abi_and_features(void **state)
{
	struct fixture *f = *state;
	int64_t r = hc(f, 0, VPERF_HC_VERSION, 0, 0);

	assert_int_equal(r & 0xffffffff, VPERF_ABI_VERSION);
	assert_true((r >> 32) & VPERF_FEAT_COUNTERS);
	assert_true((r >> 32) & VPERF_FEAT_EVENT_INFO);
	assert_int_equal(r >> 32, vperf_hv__features(f->hv));
}

static void unknown_op_and_bad_vcpu_are_errors(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(hc(f, 0, VPERF_HC_NR_OPS, 0, 0), -VPERF_ENOSYS);
	assert_int_equal(hc(f, 0, 0xffffffffu, 0, 0), -VPERF_ENOSYS);
	assert_int_equal(hc(f, 2, VPERF_HC_VERSION, 0, 0), -VPERF_EINVAL);
	assert_int_equal(hc(f, -1, VPERF_HC_VERSION, 0, 0), -VPERF_EINVAL);
	assert_int_equal(vperf_hv__hypercall_count(f->hv, 0, VPERF_HC_NR_OPS), 2);
}

static void exit_passes_status_and_refuses_over_255(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(hc(f, 0, VPERF_HC_EXIT, 256, 0), -VPERF_EINVAL);
	assert_false(f->vm.exited);
	assert_int_equal(hc(f, 1, VPERF_HC_EXIT, 7, 0), 0);
	assert_true(f->vm.exited);
	assert_int_equal(f->vm.exit_status, 7);
}

static void page_register_validates_and_writes_header(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), -VPERF_ESTATE);
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA + 8, 0), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, 0x1000, 0), -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, FAKE_RAM_BASE + FAKE_RAM_SIZE, 0),
			 -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, 0xfffffffffffff000ull, 0), -VPERF_EFAULT);
	memset(gmem(f, PAGE_GPA), 0xa5, 4096);
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(page(f)->size, sizeof(struct vperf_vcpu_page));
	assert_int_equal(page(f)->version, VPERF_ABI_VERSION);
	assert_int_equal(page(f)->seq % 2, 0);
	assert_int_equal(page(f)->nr_counters, 0);
	/* the rest of the page was cleared */
	assert_int_equal(((unsigned char *)gmem(f, PAGE_GPA))[4095], 0);
}

static void pages_and_rings_may_not_overlap(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 1, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), -VPERF_EBUSY);
	/* 12 KiB of data is not a power of two */
	assert_int_equal(hc(f, 1, VPERF_HC_TRACE_REGISTER, PAGE_GPA - 4096, 3 * 4096 + 64),
			 -VPERF_EINVAL);
	assert_int_equal(hc(f, 1, VPERF_HC_TRACE_REGISTER, PAGE_GPA - 4096, 2 * 4096 + 64),
			 -VPERF_EBUSY);
	/* re-registering one's own page elsewhere is a move, not an overlap */
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA + 4096, 0), 0);
	assert_int_equal(hc(f, 1, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, 0, 0), 0);
	assert_int_equal(hc(f, 1, VPERF_HC_PAGE_REGISTER, PAGE_GPA + 4096, 0), 0);
}

static void counters_set_validates_every_descriptor(void **state)
{
	struct fixture *f = *state;
	struct vperf_event_desc *d = gmem(f, DESC_GPA);

	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 17), -VPERF_ENOSPC);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, 0x10, 1), -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET,
			    FAKE_RAM_BASE + FAKE_RAM_SIZE - sizeof(*d), 2), -VPERF_EFAULT);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	put_desc(f, DESC_GPA, 1, 99, 0, "");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), -VPERF_EINVAL);
	put_desc(f, DESC_GPA, 1, VPERF_SRC_EXITS, 2, "");
	d[1].flags = 1;
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), -VPERF_EINVAL);
	put_desc(f, DESC_GPA, 1, VPERF_SRC_PERF, 0, "");
	memset(d[1].name, 'x', sizeof(d[1].name));	/* no terminating NUL */
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), -VPERF_EINVAL);
	put_desc(f, DESC_GPA, 1, VPERF_SRC_PERF, 0, "no-such-event-anywhere");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), -VPERF_ENOENT);
	put_desc(f, DESC_GPA, 1, VPERF_SRC_EXITS, 300, "");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), -VPERF_EINVAL);
	put_desc(f, DESC_GPA, 1, VPERF_SRC_KVM_STAT, 0, "exits");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), -VPERF_ENODEV);
}

static void exits_counter_counts_exactly(void **state)
{
	struct fixture *f = *state;

	f->vm.exits[0] = 1000;		/* before COUNTERS_SET: not counted */
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	put_desc(f, DESC_GPA, 1, VPERF_SRC_EXITS, 2, "");
	put_desc(f, DESC_GPA, 2, VPERF_SRC_EXITS, 7, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 3), 0);
	f->vm.exits[0] += 42;
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->nr_counters, 3);
	assert_int_equal(page(f)->counters[0].value, 42);
	assert_int_equal(page(f)->counters[1].value, 42);	/* fake: every exit is IO */
	assert_int_equal(page(f)->counters[2].value, 0);
	assert_int_equal(page(f)->seq % 2, 0);
}

/*
 * COUNTERS_SET again: an event the vCPU counts already keeps its counter
 * (the same perf event, not reopened: reopening costs the host syscalls per
 * event, and vperf_guest.ko reprograms to take turns) but counts from 0
 * like a new one, wherever it lands in the new list; the others open.
 */
static void counters_set_keeps_unchanged_counters_but_restarts_them(void **state)
{
	struct fixture *f = *state;
	struct hv_vcpu *v = &f->hv->vcpus[0];
	int fd;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "task-clock");
	put_desc(f, DESC_GPA, 1, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), 0);
	fd = v->counters[0].fd;
	assert_true(fd >= 0);
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 1, 10, 0), 0);
	f->vm.exits[0] += 7;
	for (volatile int i = 0; i < 3000000; i++)	/* task-clock advances */
		;
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->counters[1].value, 7);
	assert_true(page(f)->counters[0].value > 0);
	/* the same two, swapped, and steal */
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	put_desc(f, DESC_GPA, 1, VPERF_SRC_STEAL, 0, "steal");
	put_desc(f, DESC_GPA, 2, VPERF_SRC_PERF, 0, "task-clock");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 3), 0);
	assert_int_equal(v->counters[2].fd, fd);		/* kept, not reopened */
	assert_int_equal(v->counters[0].period, 0);		/* overflow off, as a new counter's */
	assert_int_equal(page(f)->counters[0].value, 0);	/* from 0 again */
	assert_true(page(f)->counters[2].value < 1000000);	/* task-clock too: ns since this call */
	assert_true(page(f)->counters[2].enabled < 1000000);
	f->vm.exits[0] += 3;
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->counters[0].value, 3);
	/* a refused list changes nothing: the kept counter still counts from the last set */
	put_desc(f, DESC_GPA, 1, VPERF_SRC_PERF, 0, "no-such-event-anywhere");
	assert_true(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 3) < 0);
	f->vm.exits[0] += 2;
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->nr_counters, 3);
	assert_int_equal(page(f)->counters[0].value, 5);
	assert_int_equal(v->counters[2].fd, fd);
}

static void doorbell_loads_read_counters_now_and_refuse_the_rest(void **state)
{
	struct fixture *f = *state;
	uint64_t v = 0;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	put_desc(f, DESC_GPA, 1, VPERF_SRC_EXITS, 7, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), 0);
	f->vm.exits[0] += 5;
	/* the value now, with no SNAPSHOT and the page untouched */
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 0, 8, &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(page(f)->counters[0].value, 0);
	f->vm.exits[0] += 3;
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 0, 8, &v), 0);
	assert_int_equal(v, 8);
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 8, 8, &v), 0);
	assert_int_equal(v, 0);
	/* a slot without a counter, unaligned or short loads, past the slots, a bad vCPU */
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 16, 8, &v), -VPERF_ESTATE);
	assert_int_equal(v, 0);
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 4, 8, &v), -VPERF_EINVAL);
	assert_true(v == UINT64_MAX);
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 0, 4, &v), -VPERF_EINVAL);
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 8 * VPERF_MAX_COUNTERS, 8, &v),
			 -VPERF_EINVAL);
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 0, 4095, 8, &v), -VPERF_EINVAL);
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 2, 0, 8, &v), -VPERF_EINVAL);
	assert_int_equal(vperf_hv__doorbell_count(f->hv, 0), 8);
	/* vCPU 1 has no counters */
	assert_int_equal(vperf_hv__doorbell_read(f->hv, 1, 0, 8, &v), -VPERF_ESTATE);
	assert_int_equal(vperf_hv__doorbell_count(f->hv, 1), 1);
}

static double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void task_clock_counter_tracks_thread_cpu_time(void **state)
{
	struct fixture *f = *state;
	double t0, t1, v;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "task-clock");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < 50e6)
		;
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	t1 = thread_cpu_ns();
	v = (double)page(f)->counters[0].value;
	printf("task-clock %.3f ms, thread CPU %.3f ms\n", v / 1e6, (t1 - t0) / 1e6);
	assert_true(v > 0.95 * (t1 - t0) && v < 1.10 * (t1 - t0));
	/* a vCPU whose thread never ran the guest has no thread to count */
	assert_int_equal(hc(f, 1, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), -VPERF_ESTATE);
}

static void hardware_event_counts_only_with_a_pmu(void **state)
{
	struct fixture *f = *state;
	bool pmu = access("/sys/bus/event_source/devices/cpu", F_OK) == 0;
	int64_t r;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "instructions");
	r = hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1);
	printf("instructions: %s PMU, result %lld\n", pmu ? "with" : "no", (long long)r);
	assert_int_equal(r, pmu ? 0 : -VPERF_ENODEV);
	assert_int_equal(!!(vperf_hv__features(f->hv) & VPERF_FEAT_HW_EVENTS), pmu);
}

static void default_allowlist_refuses_host_events(void **state)
{
	struct fixture *f = *state;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "page-faults");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), -VPERF_EPERM);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "sched:sched_switch");
	assert_int_not_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "TASK-CLOCK");	/* perf's name decides */
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
}

static void operator_allowlist_restricts(void **state)
{
	static const char *allow[] = { "EXITS:All", "sw:task-clock" };	/* matched ignoring case */
	struct fixture *f;

	setup_with(state, allow, 2, 1);
	f = *state;
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, 2, "");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), -VPERF_EPERM);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_STEAL, 0, "");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), -VPERF_EPERM);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "cpu-clock");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), -VPERF_EPERM);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	teardown(state);
}

static void overflow_raises_at_the_period_and_acks_clear(void **state)
{
	struct fixture *f = *state;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 1, 3), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 0, 3), 0);
	for (int i = 1; i <= 10; i++) {
		f->vm.exits[0]++;
		vperf_hv__vcpu_exit(f->hv, 0);
		if (i < 9 && page(f)->overflow_status)	/* the guest's handler, but not the last time */
			assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_ACK, 1, 0), 0);
	}
	assert_int_equal(f->vm.irqs, 3);		/* at 3, 6 and 9 exits */
	assert_int_equal(vperf_hv__irq_count(f->hv, 0), 3);
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 0);
	assert_int_equal(page(f)->overflow_status, 1);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_ACK, 2, 0), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_ACK, 1, 0), 0);
	assert_int_equal(page(f)->overflow_status, 0);
	/* an ack storm raises nothing */
	for (int i = 0; i < 1000; i++)
		assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_ACK, 1, 0), 0);
	assert_int_equal(f->vm.irqs, 3);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 0, 0), 0);
	for (int i = 0; i < 10; i++) {
		f->vm.exits[0]++;
		vperf_hv__vcpu_exit(f->hv, 0);
	}
	assert_int_equal(f->vm.irqs, 3);
}

static void overflow_nmi_goes_to_its_vcpu_not_the_line(void **state)
{
	struct fixture *f = *state;

	assert_true(vperf_hv__features(f->hv) & VPERF_FEAT_OVERFLOW_NMI);
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	put_desc(f, DESC_GPA, 1, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), 0);
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, 3, 2), -VPERF_EINVAL);	/* unknown flag */
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, 3, VPERF_OVERFLOW_NMI), 0);
	for (int i = 0; i < 9; i++) {
		f->vm.exits[0]++;
		vperf_hv__vcpu_exit(f->hv, 0);
	}
	/* one NMI until the guest clears the bit in its page: a second would find it clear */
	assert_int_equal(f->vm.nmis[0], 1);
	assert_int_equal(f->vm.nmis[1], 0);
	assert_int_equal(f->vm.irqs, 0);
	assert_int_equal(page(f)->overflow_status, 1);	/* set before the NMI */
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->overflow_status, 1);	/* a page update keeps it */
	/* the overflow at 6 found the bit set: the period doubled (throttled), the next is at 12 */
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 1);
	for (int k = 0; k < 2; k++) {
		((struct vperf_vcpu_page *)gmem(f, PAGE_GPA))->overflow_status &= ~1ull;	/* the guest handler */
		for (int i = 0; i < 6; i++) {
			f->vm.exits[0]++;
			vperf_hv__vcpu_exit(f->hv, 0);
		}
	}
	assert_int_equal(f->vm.nmis[0], 3);		/* at 12 and 18 */
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 1);
	/* the other counter keeps the device's line */
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 0, 0), 0);
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 1, 3, 0), 0);
	for (int i = 0; i < 3; i++) {
		f->vm.exits[0]++;
		vperf_hv__vcpu_exit(f->hv, 0);
	}
	assert_int_equal(f->vm.nmis[0], 3);	/* counter 0 disarmed */
	assert_int_equal(f->vm.irqs, 1);
	/* disarming a line counter keeps its bit for the guest to read and ack */
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 1, 0), 0);
	assert_int_equal(page(f)->overflow_status & 2, 2);
}

static void overflow_rate_is_limited_not_lost(void **state)
{
	struct fixture *f;
	uint64_t before;

	setup_with(state, allow_all, 1, 50 * 1000 * 1000);	/* 50 ms apart */
	f = *state;
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 0, 1), 0);
	for (int i = 0; i < 100; i++) {
		f->vm.exits[0]++;
		vperf_hv__vcpu_exit(f->hv, 0);
	}
	assert_int_equal(f->vm.irqs, 1);
	before = f->vm.irqs;
	usleep(60 * 1000);
	vperf_hv__vcpu_exit(f->hv, 0);		/* the held-back overflow now */
	assert_int_equal(f->vm.irqs, before + 1);
	teardown(state);
}

static void exit_n(struct fixture *f, int n, bool take)
{
	for (int i = 0; i < n; i++) {
		f->vm.exits[0]++;
		vperf_hv__vcpu_exit(f->hv, 0);
		if (take)	/* the guest's NMI handler */
			((struct vperf_vcpu_page *)gmem(f, PAGE_GPA))->overflow_status &= ~1ull;
	}
}

/* Counter 0: all exits of vCPU 0, its page registered, an overflow NMI every period exits. */
static void arm_exits_nmi(struct fixture *f, uint64_t period)
{
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, period, VPERF_OVERFLOW_NMI), 0);
}

/* Throttling (docs/abi.md 2.4) on a polled counter, where the overflows fall at known exits. */
static void untaken_overflows_double_the_period_taken_ones_shrink_it(void **state)
{
	struct fixture *f = *state;
	const struct hv_counter *c = &f->hv->vcpus[0].counters[0];

	arm_exits_nmi(f, 4);
	/* the guest never takes its NMI: overflows at 4 (raised), 8, 16, 32 and 64 (throttled) */
	exit_n(f, 100, false);
	assert_int_equal(f->vm.nmis[0], 1);
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 4);
	assert_int_equal(c->eff_period, 64);
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->overflow_throttled, 4);
	/* now it takes each: 16 in a row (at 128, 192, ... 1088) shrink the period by a quarter */
	((struct vperf_vcpu_page *)gmem(f, PAGE_GPA))->overflow_status &= ~1ull;
	exit_n(f, 1087 - 100, true);
	assert_int_equal(f->vm.nmis[0], 1 + 15);
	exit_n(f, 1, true);
	assert_int_equal(f->vm.nmis[0], 1 + 16);
	assert_int_equal(c->eff_period, 48);
	exit_n(f, 1135 - 1088, true);
	assert_int_equal(f->vm.nmis[0], 17);
	exit_n(f, 1, true);				/* 1136 = 1088 + 48 */
	assert_int_equal(f->vm.nmis[0], 18);
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 4);
	/* a guest that takes them all comes back to its own period, and stays there */
	exit_n(f, 100000, true);
	assert_int_equal(c->eff_period, 4);
	/* OVERFLOW_SET starts afresh */
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, 5, VPERF_OVERFLOW_NMI), 0);
	assert_int_equal(c->eff_period, 5);
}

/* A guest that never takes its NMIs gets overflows at most every 2^10 periods. */
static void never_taken_overflows_are_capped_at_1024_periods(void **state)
{
	struct fixture *f = *state;

	arm_exits_nmi(f, 4);
	/* overflows at 4, 8, 16, ... 4096, then every 4096: 8192, 12288, 16384 (5000 unthrottled) */
	exit_n(f, 20000, false);
	assert_int_equal(f->vm.nmis[0], 1);
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 13);
	assert_int_equal(f->hv->vcpus[0].counters[0].eff_period, 4096);
	/* a line counter is not paced: its overflows pulse the line, acked or not */
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, 4, 0), 0);
	exit_n(f, 24, false);				/* at 4, 8, ... 24 */
	assert_int_equal(f->vm.irqs, 6);
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 13);
	assert_int_equal(f->hv->vcpus[0].counters[0].eff_period, 4);
}

/*
 * The livelock throttling exists for: a task-clock overflow every 100 us of
 * the vCPU thread's time, which the guest never takes (under TCG an
 * overflow round costs more than 100 us).  The real perf event's period
 * must grow: 200 ms of CPU would be ~2000 signals unthrottled.
 */
static void task_clock_overflows_the_guest_cannot_take_are_throttled(void **state)
{
	struct fixture *f = *state;
	const struct hv_counter *c = &f->hv->vcpus[0].counters[0];
	uint64_t overflows;
	volatile uint64_t sink = 0;
	double t0;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "task-clock");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, 100000, VPERF_OVERFLOW_NMI), 0);
	t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < 200e6) {
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
		vperf_hv__vcpu_exit(f->hv, 0);
	}
	overflows = f->vm.nmis[0] + vperf_hv__throttle_count(f->hv, 0);
	print_message("task-clock 100 us, never taken, 200 ms of CPU: %" PRIu64 " overflows, "
		      "period now %" PRIu64 " ns\n", overflows, c->eff_period);
	assert_int_equal(f->vm.nmis[0], 1);
	assert_true(overflows >= 5);		/* 100, 200, 400, 800, 1600 us: the perf path works */
	assert_true(overflows <= 20);		/* 11 to reach the cap of 102.4 ms, then ~1 */
	assert_true(c->eff_period >= 100000ull << 8);
}

/*
 * A flood of overflow signals fills the host's queue of real-time signals, and the kernel sends
 * the vCPU thread SIGIO instead (fcntl(2), F_SETSIG), whose default action ends the VMM: seen in
 * tsan.hv_locking_stress (2 of 5 runs died "I/O possible").  The device takes it as an overflow
 * of each armed counter, once, counts it, and throttles those counters (their signals came faster
 * than the thread's exits: with the fix but no throttle, the stress test spun for good).
 */
static void sigio_of_a_full_signal_queue_is_an_overflow_not_the_vmms_end(void **state)
{
	struct fixture *f = *state;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "task-clock");
	put_desc(f, DESC_GPA, 1, VPERF_SRC_PERF, 0, "task-clock");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 2), 0);
	/* counter 0 armed far away (100 s of CPU: its own signal never comes), 1 not at all */
	assert_int_equal(hc3(f, 0, VPERF_HC_OVERFLOW_SET, 0, 100000000000ull, VPERF_OVERFLOW_NMI),
			 0);
	vperf_hv__vcpu_exit(f->hv, 0);
	assert_int_equal(f->vm.nmis[0], 0);
	assert_int_equal(raise(SIGIO), 0);	/* as the kernel sends it: to this, the vCPU thread */
	assert_int_equal(vperf_hv__signal_overflow_count(f->hv, 0), 1);
	vperf_hv__vcpu_exit(f->hv, 0);
	assert_int_equal(f->vm.nmis[0], 1);
	assert_int_equal(page(f)->overflow_status, 1);	/* counter 0's overflow, not counter 1's */
	/* and signals that came faster than the exits slow down: the period doubled */
	assert_int_equal(vperf_hv__throttle_count(f->hv, 0), 1);
	assert_int_equal(f->hv->vcpus[0].counters[0].eff_period, 2 * 100000000000ull);
	assert_int_equal(f->hv->vcpus[0].counters[1].eff_period, 0);
}

static void clock_overflow_period_has_a_floor(void **state)
{
	struct fixture *f = *state;

	put_desc(f, DESC_GPA, 0, VPERF_SRC_PERF, 0, "task-clock");
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 0, 1000), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_OVERFLOW_SET, 0, 1000000), 0);
}

static void ucall_is_copied_and_terminated(void **state)
{
	struct fixture *f = *state;
	struct vperf_ucall *uc = gmem(f, FAKE_RAM_BASE + 0x100);

	memset(uc, 'A', sizeof(*uc));
	uc->cmd = VPERF_UCALL_PRINT;
	uc->nr_args = 0;
	assert_int_equal(hc(f, 0, VPERF_HC_UCALL, FAKE_RAM_BASE + 0x100, 0), 0);
	assert_int_equal(f->vm.reports, 1);
	uc->nr_args = 9;
	assert_int_equal(hc(f, 0, VPERF_HC_UCALL, FAKE_RAM_BASE + 0x100, 0), -VPERF_EINVAL);
	uc->nr_args = 0;
	uc->cmd = 0;
	assert_int_equal(hc(f, 0, VPERF_HC_UCALL, FAKE_RAM_BASE + 0x100, 0), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_UCALL, FAKE_RAM_BASE + FAKE_RAM_SIZE - 8, 0),
			 -VPERF_EFAULT);
	assert_int_equal(f->vm.reports, 1);
}

static void trace_ring_register_and_flush(void **state)
{
	struct fixture *f = *state;
	uint64_t gpa = FAKE_RAM_BASE + 0x8000;
	struct vperf_trace_ring *r = gmem(f, gpa);

	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 0, 0), -VPERF_ESTATE);
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_REGISTER, gpa + 64, 4096 + 64), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_REGISTER, gpa, 3000 + 64), -VPERF_EINVAL);
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_REGISTER, gpa, (32u << 20) + 64), -VPERF_ENOSPC);
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_REGISTER, gpa, 4096 + 64), 0);
	r->head = 100;
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 0, 0), 100);
	assert_int_equal(r->tail, 100);
	r->head = 50;				/* behind the tail: refused */
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 0, 0), -VPERF_EINVAL);
	r->head = 100 + 4097;			/* more than the ring ahead */
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 0, 0), -VPERF_EINVAL);
	assert_int_equal(r->tail, 100);
}

/* Write len bytes at free-running offset pos of a ring with data_size bytes (wrapping). */
static void ring_put(struct vperf_trace_ring *r, uint64_t data_size, uint64_t pos, const void *p,
		     size_t len)
{
	for (size_t i = 0; i < len; i++)
		((unsigned char *)(r + 1))[(pos + i) & (data_size - 1)] = ((const unsigned char *)p)[i];
}

static size_t mark_rec(void *buf, const char *name, uint64_t value, uint64_t tsc)
{
	struct vperf_trace_mark *m = buf;
	size_t n = strlen(name), size = (sizeof(*m) + n + 7) & ~(size_t)7;

	memset(buf, 0, size);
	m->h.size = (uint16_t)size;
	m->h.type = VPERF_TRACE_MARK;
	m->h.tsc = tsc;
	m->h.pid = m->h.tid = 42;
	m->value = value;
	m->kind = VPERF_TRACE_MARK_INSTANT;
	m->name_len = (uint32_t)n;
	memcpy(m->name, name, n);
	return size;
}

/*
 * Version 2: every valid record reaches the VMM whole, in order, also when
 * it wraps around the end of the data area; an invalid one ends the drain
 * there, the rest up to head is discarded and counted, and the next drain
 * goes on with what the guest writes next.  A header whose head is
 * impossible gets its drains refused and counted, until the guest puts it
 * right.
 */
static void trace_v2_records_are_delivered_whole_and_invalid_ones_cost_only_the_rest(void **state)
{
	struct fixture *f = *state;
	uint64_t gpa = FAKE_RAM_BASE + 0x8000, dsize = 1024, pos = 0;
	struct vperf_trace_ring *r = gmem(f, gpa);
	struct vperf_hv_trace_stats st = { .size = sizeof(st) };
	unsigned char rec[VPERF_TRACE_REC_MAX];
	uint64_t want_bytes = 0;
	size_t n;

	assert_true(vperf_hv__features(f->hv) & VPERF_FEAT_TRACE_V2);
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_REGISTER, gpa, dsize + 64), 0);
	r->version = VPERF_TRACE_RING_V2;
	/* 20 markers of 48 bytes each: 960 bytes, then a flush; then 20 more, wrapping */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 20; i++) {
			n = mark_rec(rec, "phase", (uint64_t)(round * 20 + i), 1000 + round * 20 + i);
			ring_put(r, dsize, pos, rec, n);
			pos += n;
			want_bytes += n;
		}
		r->head = pos;
		assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 777, 0), 20 * 48);
		assert_int_equal(r->tail, pos);
	}
	assert_int_equal(f->vm.records_total, want_bytes);
	assert_int_equal(f->vm.clock_samples, 2);
	assert_int_equal(f->vm.last_guest_tsc, 777);
	for (size_t off = 0, i = 0; off < f->vm.records_len; i++) {
		const struct vperf_trace_mark *m = (const void *)(f->vm.records + off);

		assert_int_equal(m->h.type, VPERF_TRACE_MARK);
		assert_int_equal(m->value, i);
		assert_int_equal(m->h.tsc, 1000 + i);
		assert_memory_equal(m->name, "phase", 5);
		off += m->h.size;
	}

	/* a valid marker, an unknown type, another valid marker: only the first arrives */
	n = mark_rec(rec, "a", 1, 1);
	ring_put(r, dsize, pos, rec, n);
	pos += n;
	n = mark_rec(rec, "b", 2, 2);
	((struct vperf_trace_rec *)rec)->type = 99;
	ring_put(r, dsize, pos, rec, n);
	pos += n;
	n = mark_rec(rec, "c", 3, 3);
	ring_put(r, dsize, pos, rec, n);
	pos += n;
	r->head = pos;
	f->vm.records_total = 0;
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 0, 0), 3 * 48);
	assert_int_equal(f->vm.records_total, 48);
	assert_int_equal(vperf_hv__trace_stats(f->hv, 0, &st), 0);
	assert_int_equal(st.invalid_bytes, 2 * 48);
	assert_int_equal(st.invalid_drains, 1);
	assert_int_equal(st.records, 41);

	/* the guest scribbles its tail: the host keeps its own */
	r->tail = 0;
	n = mark_rec(rec, "d", 4, 4);
	ring_put(r, dsize, pos, rec, n);
	pos += n;
	r->head = pos;
	f->vm.records_total = 0;
	assert_int_equal(vperf_hv__trace_drain(f->hv, 0), 48);
	assert_int_equal(f->vm.records_total, 48);
	assert_int_equal(r->tail, pos);

	/* a size that runs past head, a size below the header: discarded, counted */
	n = mark_rec(rec, "e", 5, 5);
	((struct vperf_trace_rec *)rec)->size = 56;
	ring_put(r, dsize, pos, rec, n);
	pos += n;
	r->head = pos;
	f->vm.records_total = 0;
	assert_int_equal(vperf_hv__trace_drain(f->hv, 0), 48);
	assert_int_equal(f->vm.records_total, 0);
	assert_int_equal(vperf_hv__trace_stats(f->hv, 0, &st), 0);
	assert_int_equal(st.invalid_bytes, 3 * 48);
	assert_int_equal(st.bytes, want_bytes + 5 * 48);
	assert_int_equal(st.bad_headers, 0);

	/* the guest scribbles its whole header: every drain is refused and counted, nothing is read */
	memset(r, 0xa5, sizeof(*r));
	f->vm.records_total = 0;
	assert_int_equal(hc(f, 0, VPERF_HC_TRACE_FLUSH, 0, 0), -VPERF_EINVAL);
	assert_int_equal(vperf_hv__trace_drain(f->hv, 0), -VPERF_EINVAL);
	assert_int_equal(f->vm.records_total, 0);
	assert_int_equal(vperf_hv__trace_stats(f->hv, 0, &st), 0);
	assert_int_equal(st.bad_headers, 2);
	assert_int_equal(st.bytes, want_bytes + 5 * 48);
	/* a head behind our tail too; one the guest puts back where it was goes on from there */
	r->head = pos - 8;
	assert_int_equal(vperf_hv__trace_drain(f->hv, 0), -VPERF_EINVAL);
	r->head = pos;
	r->version = VPERF_TRACE_RING_V2;
	n = mark_rec(rec, "f", 6, 6);
	ring_put(r, dsize, pos, rec, n);
	pos += n;
	r->head = pos;
	assert_int_equal(vperf_hv__trace_drain(f->hv, 0), 48);
	assert_int_equal(f->vm.records_total, 48);
	assert_int_equal(vperf_hv__trace_stats(f->hv, 0, &st), 0);
	assert_int_equal(st.bad_headers, 3);
}

/* The validator's known answers, one rule at a time. */
static void trace_record_check_enforces_each_rule(void **state)
{
	unsigned char b[VPERF_TRACE_REC_MAX];
	struct vperf_trace_mark *m = (void *)b;
	struct vperf_trace_sample *s = (void *)b;
	struct vperf_trace_exec *e = (void *)b;
	size_t n;

	(void)state;
	n = mark_rec(b, "ok", 0, 0);
	assert_int_equal(hv_trace_rec_check(b, n), n);
	assert_int_equal(hv_trace_rec_check(b, n - 1), 0);		/* past what is there */
	m->h.flags = 1;
	assert_int_equal(hv_trace_rec_check(b, n), 0);			/* flags on a marker */
	n = mark_rec(b, "ok", 0, 0);
	m->name[3] = 'x';						/* padding not zero */
	assert_int_equal(hv_trace_rec_check(b, n), 0);
	n = mark_rec(b, "\xc3\x28", 0, 0);				/* not UTF-8 */
	assert_int_equal(hv_trace_rec_check(b, n), 0);
	n = mark_rec(b, "caf\xc3\xa9", 0, 0);				/* UTF-8 */
	assert_int_equal(hv_trace_rec_check(b, n), n);
	m->kind = VPERF_TRACE_MARK_NR_KINDS;
	assert_int_equal(hv_trace_rec_check(b, n), 0);
	n = mark_rec(b, "ab", 0, 0);
	m->name[1] = '\0';						/* a NUL inside the name */
	assert_int_equal(hv_trace_rec_check(b, n), 0);

	memset(b, 0, sizeof(b));
	s->h.type = VPERF_TRACE_SAMPLE;
	s->h.flags = VPERF_TRACE_SAMPLE_USER;
	s->nr_counts = 3;
	s->nr_callchain = 2;
	s->h.size = sizeof(*s) + 5 * 8;
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), s->h.size);
	s->h.size += 8;							/* counts disagree */
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), 0);
	s->nr_callchain = VPERF_TRACE_MAX_CALLCHAIN + 1;
	s->h.size = (uint16_t)(sizeof(*s) + 8 * (3 + s->nr_callchain));
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), 0);

	memset(b, 0, sizeof(b));
	e->h.type = VPERF_TRACE_EXEC;
	e->h.size = sizeof(*e) + 8;
	memcpy(e->filename, "/bin/ls", 8);
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), sizeof(*e) + 8);
	memcpy(e->filename, "/bin/lsX", 8);				/* no NUL */
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), 0);

	memset(b, 0, sizeof(b));
	((struct vperf_trace_rec *)b)->type = VPERF_TRACE_SCHED_SWITCH;
	((struct vperf_trace_rec *)b)->size = sizeof(struct vperf_trace_switch);
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), sizeof(struct vperf_trace_switch));
	((struct vperf_trace_switch *)b)->reserved = 1;
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), 0);
	((struct vperf_trace_switch *)b)->reserved = 0;
	((struct vperf_trace_rec *)b)->size = 2000;			/* over the maximum */
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), 0);
	((struct vperf_trace_rec *)b)->size = 20;			/* under the header */
	assert_int_equal(hv_trace_rec_check(b, sizeof(b)), 0);
}

/* ---- EVENT_INFO: the host's event list (docs/abi.md 2.3, "Discovery") ---- */

#define INFO_GPA	(FAKE_RAM_BASE + 0x2000)

struct entry {
	struct vperf_event_desc d;
	int64_t status;
};

/* EVENT_INFO of vcpu from index 0 until -VPERF_ENOENT: the entries (free them), *n of them. */
static struct entry *walk(struct fixture *f, int vcpu, uint64_t *n)
{
	struct entry *e = NULL;
	int64_t r;

	for (*n = 0;; (*n)++) {
		r = hc(f, vcpu, VPERF_HC_EVENT_INFO, *n, INFO_GPA);
		if (r == -VPERF_ENOENT)
			return e;
		assert_true(r >= 0);
		assert_true(*n < 100000);
		e = realloc(e, (*n + 1) * sizeof(*e));
		assert_non_null(e);
		memcpy(&e[*n].d, gmem(f, INFO_GPA), sizeof(e[*n].d));
		e[*n].status = r;
		assert_int_equal(e[*n].d.flags, 0);
		assert_non_null(memchr(e[*n].d.name, '\0', sizeof(e[*n].d.name)));
	}
}

/* The index of the entry of source src named name, or -1. */
static long find(const struct entry *e, uint64_t n, uint32_t src, const char *name)
{
	for (uint64_t i = 0; i < n; i++)
		if (e[i].d.source == src && !strcmp(e[i].d.name, name))
			return (long)i;
	return -1;
}

static const char *const generic_hw[] = {
	"instructions", "cycles", "cache-references", "cache-misses",
	"branch-instructions", "branch-misses",
};
static const char *const sw_names[] = {
	"task-clock", "cpu-clock", "context-switches", "cpu-migrations",
	"page-faults", "minor-faults", "major-faults",
};

static bool is_sw(const struct vperf_event_desc *d)
{
	for (size_t i = 0; i < sizeof(sw_names) / sizeof(sw_names[0]); i++)
		if (d->source == VPERF_SRC_PERF && !strcmp(d->name, sw_names[i]))
			return true;
	return false;
}

/*
 * Without a PMU: the generic hardware events first (ENODEV), the software
 * events, the exits ("all", then the reasons the fake VMM names, in
 * order) and steal last; nothing else, and no counter changed.
 */
static void event_info_lists_every_source_in_order_and_hw_is_enodev_without_pmu(void **state)
{
	static const struct { uint64_t arg; const char *name; } exits[] = {
		{ UINT64_MAX, "all" }, { 2, "io" }, { 5, "hlt" }, { 6, "mmio" }, { 8, "shutdown" },
	};
	struct fixture *f = *state;
	struct entry *e;
	uint64_t n, i = 0;

	f->hv->host_pmu = false;	/* whatever this host has */
	put_desc(f, DESC_GPA, 0, VPERF_SRC_EXITS, UINT64_MAX, "");
	assert_int_equal(hc(f, 0, VPERF_HC_PAGE_REGISTER, PAGE_GPA, 0), 0);
	assert_int_equal(hc(f, 0, VPERF_HC_COUNTERS_SET, DESC_GPA, 1), 0);
	e = walk(f, 0, &n);
	assert_int_equal(n, 6 + 7 + 5 + 1);
	for (size_t k = 0; k < 6; k++, i++) {
		assert_int_equal(e[i].d.source, VPERF_SRC_PERF);
		assert_string_equal(e[i].d.name, generic_hw[k]);
		assert_int_equal(e[i].status, VPERF_ENODEV);
	}
	for (size_t k = 0; k < 7; k++, i++) {
		assert_int_equal(e[i].d.source, VPERF_SRC_PERF);
		assert_string_equal(e[i].d.name, sw_names[k]);
		assert_int_equal(e[i].status, 0);
	}
	for (size_t k = 0; k < 5; k++, i++) {
		assert_int_equal(e[i].d.source, VPERF_SRC_EXITS);
		assert_true(e[i].d.arg == exits[k].arg);
		assert_string_equal(e[i].d.name, exits[k].name);
		assert_int_equal(e[i].status, 0);
	}
	assert_int_equal(e[i].d.source, VPERF_SRC_STEAL);
	assert_string_equal(e[i].d.name, "steal");
	assert_int_equal(e[i].status, 0);
	/* the same list again; the counter set before it untouched */
	free(e);
	e = walk(f, 0, &i);
	assert_int_equal(i, n);
	assert_int_equal(find(e, n, VPERF_SRC_PERF, "task-clock"), 6);
	f->vm.exits[0] += 3;
	assert_int_equal(hc(f, 0, VPERF_HC_SNAPSHOT, 0, 0), 0);
	assert_int_equal(page(f)->nr_counters, 1);
	assert_int_equal(page(f)->counters[0].value, 3);
	assert_int_equal(vperf_hv__hypercall_count(f->hv, 0, VPERF_HC_EVENT_INFO), 2 * (n + 1));
	free(e);
}

/* An allowlist without sw:* and with one exit reason: those entries say EPERM, the rest 0. */
static void event_info_status_is_eperm_where_the_allowlist_refuses(void **state)
{
	static const char *allow[] = { "hw:*", "kvm:*", "exits:all", "exits:5", "steal:*" };
	struct fixture *f;
	struct entry *e;
	uint64_t n;

	setup_with(state, allow, 5, 1);
	f = *state;
	e = walk(f, 0, &n);
	for (uint64_t i = 0; i < n; i++) {
		if (is_sw(&e[i].d))
			assert_int_equal(e[i].status, VPERF_EPERM);
	}
	assert_int_equal(e[find(e, n, VPERF_SRC_PERF, "task-clock")].status, VPERF_EPERM);
	assert_int_equal(e[find(e, n, VPERF_SRC_STEAL, "steal")].status, 0);
	assert_int_equal(e[find(e, n, VPERF_SRC_EXITS, "all")].status, 0);
	assert_int_equal(e[find(e, n, VPERF_SRC_EXITS, "hlt")].status, 0);
	assert_int_equal(e[find(e, n, VPERF_SRC_EXITS, "io")].status, VPERF_EPERM);
	free(e);
	teardown(state);
}

/*
 * A fake KVM stats fd (memfd): two counters, a histogram and a counter
 * whose name does not fit a descriptor, which are not listed.
 */
static int kvm_stats_memfd = -1;

static int memfd_stats_fd(void *vmm, int vcpu)
{
	(void)vmm;
	return vcpu == 0 ? kvm_stats_memfd : -1;
}

static int make_kvm_stats_fd(void)
{
	enum { NAME = 80, NDESC = 4, DESC = sizeof(struct kvm_stats_desc) + NAME };
	static const struct { const char *name; uint32_t type; uint16_t size; } st[NDESC] = {
		{ "exits", KVM_STATS_TYPE_CUMULATIVE, 1 },
		{ "halt_wait_hist", KVM_STATS_TYPE_LINEAR_HIST, 8 },
		{ "a_statistic_whose_name_is_longer_than_a_vperf_event_descriptor_holds", 0, 1 },
		{ "max_mmu_page_hash_collisions", KVM_STATS_TYPE_PEAK, 1 },
	};
	unsigned char buf[24 + NAME + NDESC * DESC + 12 * 8];
	struct kvm_stats_header h = {
		.name_size = NAME, .num_desc = NDESC, .id_offset = 24, .desc_offset = 24 + NAME,
		.data_offset = 24 + NAME + NDESC * DESC,
	};
	uint32_t off = 0;
	int fd = memfd_create("kvm-stats", MFD_CLOEXEC);

	assert_true(fd >= 0);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	for (int i = 0; i < NDESC; i++) {
		struct kvm_stats_desc *d = (void *)(buf + h.desc_offset + i * DESC);

		d->flags = st[i].type;
		d->size = st[i].size;
		d->offset = off;
		snprintf(d->name, NAME, "%s", st[i].name);
		off += 8u * st[i].size;
	}
	for (int i = 0; i < 12; i++)
		memcpy(buf + h.data_offset + 8 * i, &(uint64_t){ 1000u + (unsigned)i }, 8);
	assert_int_equal(write(fd, buf, sizeof(buf)), sizeof(buf));
	return fd;
}

/*
 * Known answer: the list says what COUNTERS_SET does.  Every entry with
 * status 0 (hardware aside: perf may still refuse a PMU event) counts when
 * set alone, every other status is COUNTERS_SET's error; on a vCPU whose
 * thread never ran too.  The KVM stats are the counters of the stats fd,
 * in its order.
 */
static void event_info_entries_are_what_counters_set_accepts(void **state)
{
	static const char *some[] = { "hw:*", "kvm:exits", "exits:all", "exits:5", "steal:*" };
	static struct vperf_hv_ops ops;
	struct fixture *f;
	struct entry *e;
	uint64_t n, accepted = 0, refused = 0;
	long k;

	kvm_stats_memfd = make_kvm_stats_fd();
	ops = fake_ops;
	ops.stats_fd = memfd_stats_fd;
	for (int round = 0; round < 2; round++) {
		setup_ops(state, &ops, round ? some : allow_all, round ? 5 : 1, 1);
		f = *state;
		for (int vcpu = 0; vcpu < 2; vcpu++) {
			e = walk(f, vcpu, &n);
			k = find(e, n, VPERF_SRC_KVM_STAT, "exits");
			if (vcpu == 0) {
				assert_true(k > 0);
				assert_string_equal(e[k + 1].d.name, "max_mmu_page_hash_collisions");
				assert_int_equal(e[k + 2].d.source, VPERF_SRC_EXITS);
				assert_int_equal(e[k - 1].d.source, VPERF_SRC_PERF);
			} else {
				assert_int_equal(k, -1);	/* vCPU 1 has no stats fd */
			}
			for (uint64_t i = 0; i < n; i++) {
				bool hw = e[i].d.source == VPERF_SRC_PERF && !is_sw(&e[i].d);
				int64_t r;

				if (hw && e[i].status == 0)
					continue;
				memcpy(gmem(f, DESC_GPA), &e[i].d, sizeof(e[i].d));
				r = hc(f, vcpu, VPERF_HC_COUNTERS_SET, DESC_GPA, 1);
				if (r != -e[i].status)
					print_error("vcpu%d %u:%s status %" PRId64 ", COUNTERS_SET %" PRId64
						    "\n", vcpu, e[i].d.source, e[i].d.name, e[i].status, r);
				assert_int_equal(r, -e[i].status);
				accepted += r == 0;
				refused += e[i].status == VPERF_EPERM;
			}
			free(e);
		}
		teardown(state);
	}
	print_message("%" PRIu64 " entries accepted by COUNTERS_SET, %" PRIu64 " refused (EPERM)\n",
		      accepted, refused);
	/*
	 * All allowed: vCPU 0 7 sw, 2 kvm, 5 exits, steal; vCPU 1 (no thread, no
	 * stats fd, no schedstat) the 5 exits.  Some: vCPU 0 kvm exits, exits all
	 * and 5, steal, refusing 7 sw, a kvm stat and 3 exits; vCPU 1 2 exits,
	 * refusing the 7 sw (the allowlist before the thread) and 3 exits.
	 */
	assert_int_equal(accepted, 15 + 5 + 4 + 2);
	assert_int_equal(refused, 11 + 10);
	close(kvm_stats_memfd);
	kvm_stats_memfd = -1;
}

/* A GPA not all in RAM is EFAULT before anything else; past the end is ENOENT; nothing written. */
static void event_info_checks_the_gpa_first_and_writes_only_a_whole_padded_entry(void **state)
{
	struct fixture *f = *state;
	unsigned char *p = gmem(f, INFO_GPA), before[sizeof(struct vperf_event_desc)];
	const struct vperf_event_desc *d = (const void *)p;
	uint64_t n;
	size_t len;

	free(walk(f, 0, &n));
	memset(p, 0xa5, sizeof(before));
	memcpy(before, p, sizeof(before));
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, 0, 0), -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, 0, FAKE_RAM_BASE + FAKE_RAM_SIZE - 79),
			 -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, 0, FAKE_RAM_BASE - 1), -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, 0, UINT64_MAX - 40), -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, UINT64_MAX, UINT64_MAX), -VPERF_EFAULT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, n, INFO_GPA), -VPERF_ENOENT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, n + 1, INFO_GPA), -VPERF_ENOENT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, UINT64_MAX, INFO_GPA), -VPERF_ENOENT);
	assert_int_equal(hc(f, 0, VPERF_HC_EVENT_INFO, 1ull << 63, INFO_GPA), -VPERF_ENOENT);
	assert_memory_equal(p, before, sizeof(before));
	/* the last byte of RAM is fine */
	assert_true(hc(f, 0, VPERF_HC_EVENT_INFO, n - 1, FAKE_RAM_BASE + FAKE_RAM_SIZE - 80) >= 0);
	/* an entry overwrites all 80 bytes: the name NUL-padded to the end */
	assert_true(hc(f, 0, VPERF_HC_EVENT_INFO, 0, INFO_GPA) >= 0);
	assert_string_equal(d->name, "instructions");
	assert_int_equal(d->flags, 0);
	assert_int_equal(d->arg, 0);
	len = strlen(d->name);
	for (size_t i = len; i < sizeof(d->name); i++)
		assert_int_equal(d->name[i], 0);
	/* ...and the last entry's, 'steal', over a longer name */
	assert_true(hc(f, 0, VPERF_HC_EVENT_INFO, n - 1, INFO_GPA) >= 0);
	assert_string_equal(d->name, "steal");
	for (size_t i = 5; i < sizeof(d->name); i++)
		assert_int_equal(d->name[i], 0);
	/* the other vCPU's list has the same length (no stats fd here) */
	assert_int_equal(hc(f, 1, VPERF_HC_EVENT_INFO, n, INFO_GPA), -VPERF_ENOENT);
	assert_true(hc(f, 1, VPERF_HC_EVENT_INFO, n - 1, INFO_GPA) >= 0);
}

/* The EXITS entries are "all" and the reasons the VMM names; without its callback only "all". */
static void event_info_lists_exit_reasons_only_with_the_vmms_names(void **state)
{
	static struct vperf_hv_ops ops;
	struct fixture *f = *state;
	struct entry *e;
	uint64_t n, exits = 0;

	e = walk(f, 0, &n);
	assert_int_equal(e[find(e, n, VPERF_SRC_EXITS, "shutdown")].d.arg, 8);
	assert_int_equal(e[find(e, n, VPERF_SRC_EXITS, "mmio")].d.arg, 6);
	free(e);
	teardown(state);

	ops = fake_ops;
	ops.exit_name = NULL;
	setup_ops(state, &ops, allow_all, 1, 1);
	f = *state;
	e = walk(f, 0, &n);
	for (uint64_t i = 0; i < n; i++)
		exits += e[i].d.source == VPERF_SRC_EXITS;
	assert_int_equal(exits, 1);
	assert_true(e[find(e, n, VPERF_SRC_EXITS, "all")].d.arg == UINT64_MAX);
	assert_int_equal(e[n - 1].d.source, VPERF_SRC_STEAL);
	free(e);
}

/*
 * With a PMU the core PMU's events (libpfm4's, "pmu::event") follow the
 * generic ones, before the software events; the allowlist decides their
 * status like any hardware event's.  What libpfm4 knows depends on the
 * CPU: the count is printed, the shape checked.
 */
static void event_info_with_a_pmu_lists_core_pmu_events_after_the_generic_ones(void **state)
{
	static const char *allow[] = { "hw:instructions", "sw:*", "exits:*", "steal:*" };
	struct fixture *f = *state;
	struct entry *e;
	uint64_t n, nr_pmu;
	double t0, t1;

	f->hv->host_pmu = true;		/* whatever this host has */
	t0 = thread_cpu_ns();
	e = walk(f, 0, &n);
	t1 = thread_cpu_ns();
	nr_pmu = (uint64_t)find(e, n, VPERF_SRC_PERF, "task-clock") - 6;
	print_message("%" PRIu64 " entries (%" PRIu64 " of core PMUs) walked in %.3f ms, the first "
		      "time, %s\n", n, nr_pmu, (t1 - t0) / 1e6, nr_pmu ? e[6].d.name : "-");
	for (uint64_t i = 0; i < 6; i++) {
		assert_string_equal(e[i].d.name, generic_hw[i]);
		assert_int_equal(e[i].status, 0);
	}
	for (uint64_t i = 6; i < 6 + nr_pmu; i++) {
		assert_int_equal(e[i].d.source, VPERF_SRC_PERF);
		assert_non_null(strstr(e[i].d.name, "::"));
		assert_int_equal(e[i].status, 0);
	}
	free(e);
	t0 = thread_cpu_ns();
	free(walk(f, 0, &n));
	t1 = thread_cpu_ns();
	print_message("again: %.3f us per entry\n", (t1 - t0) / 1e3 / (double)n);
	teardown(state);

	setup_with(state, allow, 4, 1);
	f = *state;
	f->hv->host_pmu = true;
	e = walk(f, 0, &n);
	assert_int_equal(e[0].status, 0);		/* hw:instructions */
	for (uint64_t i = 1; i < 6 + nr_pmu; i++)
		assert_int_equal(e[i].status, VPERF_EPERM);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(version_reports_abi_and_features, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_op_and_bad_vcpu_are_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(exit_passes_status_and_refuses_over_255, setup, teardown),
		cmocka_unit_test_setup_teardown(page_register_validates_and_writes_header, setup, teardown),
		cmocka_unit_test_setup_teardown(pages_and_rings_may_not_overlap, setup, teardown),
		cmocka_unit_test_setup_teardown(counters_set_validates_every_descriptor, setup, teardown),
		cmocka_unit_test_setup_teardown(exits_counter_counts_exactly, setup, teardown),
		cmocka_unit_test_setup_teardown(counters_set_keeps_unchanged_counters_but_restarts_them, setup,
						teardown),
		cmocka_unit_test_setup_teardown(doorbell_loads_read_counters_now_and_refuse_the_rest, setup,
						teardown),
		cmocka_unit_test_setup_teardown(task_clock_counter_tracks_thread_cpu_time, setup, teardown),
		cmocka_unit_test_setup_teardown(hardware_event_counts_only_with_a_pmu, setup, teardown),
		cmocka_unit_test_setup_teardown(default_allowlist_refuses_host_events, setup_default_allow,
						teardown),
		cmocka_unit_test(operator_allowlist_restricts),
		cmocka_unit_test_setup_teardown(overflow_raises_at_the_period_and_acks_clear, setup, teardown),
		cmocka_unit_test_setup_teardown(overflow_nmi_goes_to_its_vcpu_not_the_line, setup, teardown),
		cmocka_unit_test(overflow_rate_is_limited_not_lost),
		cmocka_unit_test_setup_teardown(untaken_overflows_double_the_period_taken_ones_shrink_it,
						setup, teardown),
		cmocka_unit_test_setup_teardown(never_taken_overflows_are_capped_at_1024_periods, setup,
						teardown),
		cmocka_unit_test_setup_teardown(task_clock_overflows_the_guest_cannot_take_are_throttled,
						setup, teardown),
		cmocka_unit_test_setup_teardown(sigio_of_a_full_signal_queue_is_an_overflow_not_the_vmms_end,
						setup, teardown),
		cmocka_unit_test_setup_teardown(clock_overflow_period_has_a_floor, setup, teardown),
		cmocka_unit_test_setup_teardown(ucall_is_copied_and_terminated, setup, teardown),
		cmocka_unit_test_setup_teardown(trace_ring_register_and_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(
			trace_v2_records_are_delivered_whole_and_invalid_ones_cost_only_the_rest, setup,
			teardown),
		cmocka_unit_test(trace_record_check_enforces_each_rule),
		cmocka_unit_test_setup_teardown(
			event_info_lists_every_source_in_order_and_hw_is_enodev_without_pmu, setup,
			teardown),
		cmocka_unit_test(event_info_status_is_eperm_where_the_allowlist_refuses),
		cmocka_unit_test(event_info_entries_are_what_counters_set_accepts),
		cmocka_unit_test_setup_teardown(
			event_info_checks_the_gpa_first_and_writes_only_a_whole_padded_entry, setup,
			teardown),
		cmocka_unit_test_setup_teardown(event_info_lists_exit_reasons_only_with_the_vmms_names,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			event_info_with_a_pmu_lists_core_pmu_events_after_the_generic_ones, setup,
			teardown),
	};

	return cmocka_run_group_tests_name("libvperf-hv", tests, NULL, NULL);
}
