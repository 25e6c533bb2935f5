/* SPDX-License-Identifier: MIT */
/*
 * Multiplex scaling, vperf__count_set(): value = raw * enabled / running,
 * computed without overflowing 64 bits, SCALED only when running < enabled,
 * NOT_COUNTED when the event never ran.
 */
#include <inttypes.h>
#include <string.h>

#include "internal.h"
#include "vtest.h"

struct scale_case {
	int line;
	uint64_t raw, enabled, running;
	uint64_t value;
	uint32_t flags;		/* exactly these VPERF_COUNT_* */
};

#define S VPERF_COUNT_SCALED
#define NC VPERF_COUNT_NOT_COUNTED

static const struct scale_case cases[] = {
	/* running == enabled: the raw count, unscaled */
	{ __LINE__, 0, 1000, 1000, 0, 0 },
	{ __LINE__, 12345, 1000, 1000, 12345, 0 },
	{ __LINE__, UINT64_MAX, 7, 7, UINT64_MAX, 0 },
	/* multiplexed */
	{ __LINE__, 10, 3, 2, 15, S },
	{ __LINE__, 1000, 400, 100, 4000, S },
	{ __LINE__, 1000000, 2000000000, 1000000000, 2000000, S },
	/* raw * enabled overflows 64 bits; the result does not */
	{ __LINE__, 1ull << 62, 3, 2, 3ull << 61, S },
	{ __LINE__, 1ull << 40, 3ull << 40, 1ull << 40, 3ull << 40, S },
	{ __LINE__, 6000000000000000000ull, 1500000000000ull, 1000000000000ull,
	  9000000000000000000ull, S },
};

static void count_set_scales_multiplexed_counts(void **state)
{
	int errors = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct scale_case *t = &cases[i];
		struct vperf_count c;

		memset(&c, 0xa5, sizeof(c));
		vperf__count_set(&c, t->raw, t->enabled, t->running);
		if (c.value != t->value || c.flags != t->flags || c.raw != t->raw ||
		    c.enabled != t->enabled || c.running != t->running) {
			print_error("%s:%d: count_set(raw=%" PRIu64 ", enabled=%" PRIu64
				    ", running=%" PRIu64 ") -> value=%" PRIu64
				    " flags=%#x raw=%" PRIu64 " enabled=%" PRIu64
				    " running=%" PRIu64 ", expected value=%" PRIu64
				    " flags=%#x\n", __FILE__, t->line, t->raw, t->enabled,
				    t->running, c.value, c.flags, c.raw, c.enabled,
				    c.running, t->value, t->flags);
			errors++;
		}
	}
	assert_int_equal(errors, 0);
}

static void count_set_running_zero_is_not_counted(void **state)
{
	static const struct { int line; uint64_t raw, enabled; } nc[] = {
		{ __LINE__, 0, 0 },
		{ __LINE__, 0, 1000 },
		{ __LINE__, 5, 1000 },	/* a stale raw value means nothing either */
	};

	for (size_t i = 0; i < sizeof(nc) / sizeof(nc[0]); i++) {
		struct vperf_count c;

		memset(&c, 0xa5, sizeof(c));
		vperf__count_set(&c, nc[i].raw, nc[i].enabled, 0);
		if (!(c.flags & VPERF_COUNT_NOT_COUNTED))
			fail_msg("%s:%d: running == 0 (enabled %" PRIu64 ") but flags %#x "
				 "lack NOT_COUNTED", __FILE__, nc[i].line, nc[i].enabled,
				 c.flags);
		assert_int_equal(c.running, 0);
		assert_int_equal(c.enabled, nc[i].enabled);
	}
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(count_set_scales_multiplexed_counts),
		cmocka_unit_test(count_set_running_zero_is_not_counted),
	};

	return VT_MAIN("count", tests, NULL, NULL);
}
