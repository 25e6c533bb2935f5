/* SPDX-License-Identifier: MIT */
/*
 * The user-mode read path, vperf__mmap_read(), against a mocked
 * struct perf_event_mmap_page whose rdpmc and rdtsc are ours: the
 * arithmetic and the lock-retry protocol of linux/perf_event.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "internal.h"
#include "vtest.h"

struct mock {
	struct perf_event_mmap_page *pc;
	uint64_t counter;		/* what rdpmc returns */
	unsigned int rdpmc_calls;
	uint32_t last_counter;		/* argument of the last rdpmc */
	/* concurrent update on the first rdpmc: new lock and offset */
	int bump_on_first;
	int64_t bumped_offset;
	uint64_t tsc;
	unsigned int rdtsc_calls;
};

static struct perf_event_mmap_page page __attribute__((aligned(4096)));
static struct mock m;

static uint64_t mock_rdpmc(uint32_t counter, void *ctx)
{
	struct mock *mk = ctx;

	mk->rdpmc_calls++;
	mk->last_counter = counter;
	if (mk->bump_on_first && mk->rdpmc_calls == 1) {
		/* The kernel rescheduled the event under us. */
		mk->pc->lock += 2;
		mk->pc->offset = mk->bumped_offset;
	}
	return mk->counter;
}

static uint64_t mock_rdtsc(void *ctx)
{
	struct mock *mk = ctx;

	mk->rdtsc_calls++;
	return mk->tsc;
}

/* A page for one event on hardware counter 0, not multiplexed. */
static int setup(void **state)
{
	memset(&page, 0, sizeof(page));
	memset(&m, 0, sizeof(m));
	m.pc = &page;
	page.lock = 4;
	page.index = 1;
	page.cap_user_rdpmc = 1;
	page.pmc_width = 48;
	page.offset = 1000;
	page.time_enabled = 5000;
	page.time_running = 5000;
	return 0;
}

static struct vperf_mmap_read_ops ops_for(struct mock *mk)
{
	struct vperf_mmap_read_ops ops = {
		.rdpmc = mock_rdpmc, .rdtsc = mock_rdtsc, .ctx = mk, .retries = 0,
	};
	return ops;
}

static void rdpmc_adds_counter_to_offset(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	m.counter = 234;
	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), 0);
	assert_int_equal(c.raw, 1234);
	assert_int_equal(c.value, 1234);
	assert_int_equal(c.enabled, 5000);
	assert_int_equal(c.running, 5000);
	assert_int_equal(c.flags, 0);
	assert_int_equal(m.rdpmc_calls, 1);
	assert_int_equal(m.last_counter, 0);	/* index - 1 */
	assert_int_equal(ops.retries, 0);
}

static void rdpmc_reads_counter_index_minus_one(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	page.index = 4;
	m.counter = 1;
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), 0);
	assert_int_equal(m.last_counter, 3);
	assert_int_equal(c.raw, 1001);
}

static void rdpmc_sign_extends_from_pmc_width(void **state)
{
	static const struct {
		int line;
		uint16_t width;
		uint64_t counter;
		int64_t offset;
		uint64_t raw;
	} cases[] = {
		{ __LINE__, 48, 0xFFFFFFFFFFFFull, 1000, 999 },		/* -1 */
		{ __LINE__, 48, 0xFFFFFFFFFFF6ull, 1000, 990 },		/* -10 */
		{ __LINE__, 48, 0x800000000000ull, 1ll << 48, 1ull << 47 },	/* -2^47 */
		{ __LINE__, 48, 0x7FFFFFFFFFFFull, 0, 0x7FFFFFFFFFFFull },	/* max positive */
		{ __LINE__, 48, 0xABCD000000000005ull, 10, 15 },	/* bits above width */
		{ __LINE__, 40, 0xFFFFFFFFFFull, 100, 99 },
		{ __LINE__, 64, 5, 10, 15 },
		{ __LINE__, 64, UINT64_MAX, 10, 9 },
	};
	int errors = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vperf_mmap_read_ops ops;
		struct vperf_count c;
		int ret;

		setup(NULL);
		page.pmc_width = cases[i].width;
		page.offset = cases[i].offset;
		m.counter = cases[i].counter;
		ops = ops_for(&m);
		ret = vperf__mmap_read(&page, &ops, &c);
		if (ret || c.raw != cases[i].raw) {
			print_error("%s:%d: width %u counter %#" PRIx64 " offset %" PRId64
				    ": ret %d raw %" PRIu64 " (%#" PRIx64 "), expected %"
				    PRIu64 "\n", __FILE__, cases[i].line, cases[i].width,
				    cases[i].counter, cases[i].offset, ret, c.raw, c.raw,
				    cases[i].raw);
			errors++;
		}
	}
	assert_int_equal(errors, 0);
}

static void rdpmc_retries_when_lock_changes(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	m.counter = 7;
	m.bump_on_first = 1;
	m.bumped_offset = 5000;
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), 0);
	/* the second, consistent snapshot: new offset + counter */
	assert_int_equal(c.raw, 5007);
	assert_int_equal(c.value, 5007);
	assert_int_equal(ops.retries, 1);
	assert_int_equal(m.rdpmc_calls, 2);
}

static void rdpmc_index_zero_is_eagain(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	page.index = 0;
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), -EAGAIN);
	assert_int_equal(m.rdpmc_calls, 0);	/* rdpmc(-1) would fault */
}

static void rdpmc_without_cap_user_rdpmc_is_eagain(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	page.cap_user_rdpmc = 0;
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), -EAGAIN);
	assert_int_equal(m.rdpmc_calls, 0);	/* rdpmc would fault */
}

/*
 * cap_user_time: enabled and running advance by
 *   delta = time_offset + quot * time_mult + ((rem * time_mult) >> time_shift)
 * with quot = tsc >> time_shift, rem = tsc & ((1 << time_shift) - 1), all
 * modulo 2^64.  The constants make tsc * time_mult overflow 64 bits, so
 * computing (tsc * time_mult) >> time_shift directly gives a wrong delta;
 * time_offset was computed (python3) so that the right delta is 3000.
 * The event is multiplexed (enabled != running) so the page's times matter.
 */
static void rdpmc_cap_user_time_advances_enabled_and_running(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	page.cap_user_time = 1;
	page.time_enabled = 2000;
	page.time_running = 1000;
	page.time_shift = 27;
	page.time_mult = 0x8000123;
	page.time_offset = 0xfedcba6f1357a79aull;
	m.tsc = 0x0123456789abcdefull;
	page.offset = 100;
	m.counter = 300;
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), 0);
	assert_true(m.rdtsc_calls >= 1);
	assert_int_equal(c.enabled, 2000 + 3000);
	assert_int_equal(c.running, 1000 + 3000);
	assert_int_equal(c.raw, 400);
	/* scaled: 400 * 5000 / 4000 */
	assert_int_equal(c.value, 500);
	assert_true(c.flags & VPERF_COUNT_SCALED);
}

/* Without cap_user_time the page's own times are used, tsc is not read. */
static void rdpmc_without_cap_user_time_uses_page_times(void **state)
{
	struct vperf_mmap_read_ops ops = ops_for(&m);
	struct vperf_count c;

	page.time_enabled = 2000;
	page.time_running = 1000;
	page.offset = 100;
	m.counter = 300;
	assert_int_equal(vperf__mmap_read(&page, &ops, &c), 0);
	assert_int_equal(m.rdtsc_calls, 0);
	assert_int_equal(c.enabled, 2000);
	assert_int_equal(c.running, 1000);
	assert_int_equal(c.raw, 400);
	assert_int_equal(c.value, 800);
	assert_true(c.flags & VPERF_COUNT_SCALED);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(rdpmc_adds_counter_to_offset, setup),
		cmocka_unit_test_setup(rdpmc_reads_counter_index_minus_one, setup),
		cmocka_unit_test_setup(rdpmc_sign_extends_from_pmc_width, setup),
		cmocka_unit_test_setup(rdpmc_retries_when_lock_changes, setup),
		cmocka_unit_test_setup(rdpmc_index_zero_is_eagain, setup),
		cmocka_unit_test_setup(rdpmc_without_cap_user_rdpmc_is_eagain, setup),
		cmocka_unit_test_setup(rdpmc_cap_user_time_advances_enabled_and_running, setup),
		cmocka_unit_test_setup(rdpmc_without_cap_user_time_uses_page_times, setup),
	};

	return VT_MAIN("mmap_read", tests, NULL, NULL);
}
