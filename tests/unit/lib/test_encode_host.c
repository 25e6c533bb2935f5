/* SPDX-License-Identifier: MIT */
/*
 * vperf__encode() on the host's own PMU list (LIBPFM_FORCE_PMU unset):
 * perf's generic names and libpfm4's perf:: names, which encode the same on
 * every x86 host, with or without a PMU.  The Intel and AMD model-specific
 * encodings are in test_encode_skl.c and test_encode_zen3.c, each in its
 * own process because libpfm4 reads LIBPFM_FORCE_PMU only when initialised.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "encode_table.h"
#include "vtest.h"

static const struct encode_case generic[] = {
	/*  name                  type config eu ek canon */
	OK("instructions",        0, 1, 0, 0, "perf::PERF_COUNT_HW_INSTRUCTIONS"),
	OK("instructions:u",      0, 1, 0, 1, "perf::PERF_COUNT_HW_INSTRUCTIONS"),
	OK("instructions:k",      0, 1, 1, 0, "perf::PERF_COUNT_HW_INSTRUCTIONS"),
	OK("cycles",              0, 0, 0, 0, "perf::PERF_COUNT_HW_CPU_CYCLES"),
	OK("cycles:u",            0, 0, 0, 1, "perf::PERF_COUNT_HW_CPU_CYCLES"),
	OK("cycles:k",            0, 0, 1, 0, "perf::PERF_COUNT_HW_CPU_CYCLES"),
	OK("cycles:u:k",          0, 0, 0, 0, "perf::PERF_COUNT_HW_CPU_CYCLES"),
	OK("branch-misses",       0, 5, 0, 0, "perf::PERF_COUNT_HW_BRANCH_MISSES"),
	OK("task-clock",          1, 1, 0, 0, "perf::PERF_COUNT_SW_TASK_CLOCK"),
	OK("task-clock:u",        1, 1, 0, 1, "perf::PERF_COUNT_SW_TASK_CLOCK"),
	OK("Task-Clock",          1, 1, 0, 0, "perf::PERF_COUNT_SW_TASK_CLOCK"),
	OK("perf::TASK-CLOCK",    1, 1, 0, 0, "perf::PERF_COUNT_SW_TASK_CLOCK"),
	OK("cpu-clock",           1, 0, 0, 0, "perf::PERF_COUNT_SW_CPU_CLOCK"),
	OK("page-faults",         1, 2, 0, 0, "perf::PERF_COUNT_SW_PAGE_FAULTS"),
	OK("context-switches",    1, 3, 0, 0, "perf::PERF_COUNT_SW_CONTEXT_SWITCHES"),
	OK("cs",                  1, 3, 0, 0, "perf::PERF_COUNT_SW_CONTEXT_SWITCHES"),
	OK("cpu-migrations",      1, 4, 0, 0, "perf::PERF_COUNT_SW_CPU_MIGRATIONS"),
	OK("perf::instructions:u", 0, 1, 0, 1, "perf::PERF_COUNT_HW_INSTRUCTIONS"),
};

static const struct encode_case bad[] = {
	/*  name                  errno    the message must contain */
	BAD("no-such-event-xyz",  -ENOENT, "no-such-event-xyz"),
	BAD("instrctions",        -ENOENT, "instrctions"),
	BAD("instrctions",        -ENOENT, "instructions"),	/* suggested */
	BAD("task-clok",          -ENOENT, "task-clock"),	/* suggested */
	BAD("cycles:zz",          -EINVAL, "cycles"),
	BAD("cycles:u=2",         -EINVAL, "cycles"),
	BAD("task-clock:bogus=1", -EINVAL, "task-clock"),
	BAD("instructions:u:zz",  -EINVAL, "instructions"),
};

static void encode_host_generic_names_to_attr(void **state)
{
	assert_int_equal(encode_table_run(__FILE__, generic,
					  sizeof(generic) / sizeof(generic[0])), 0);
}

static void encode_host_bad_names_fail_naming_the_event(void **state)
{
	assert_int_equal(encode_table_run(__FILE__, bad, sizeof(bad) / sizeof(bad[0])), 0);
}

/* A failed encode leaves no partial state behind: the next one works. */
static void encode_host_works_after_a_failure(void **state)
{
	struct perf_event_attr attr = { 0 };
	char canon[VPERF_NAME_LEN * 4], err[VPERF_ERRMSG_LEN];

	assert_int_equal(vperf__encode("no-such-event-xyz", &attr, canon, sizeof(canon),
				       err, sizeof(err)), -ENOENT);
	memset(&attr, 0, sizeof(attr));
	assert_int_equal(vperf__encode("task-clock", &attr, canon, sizeof(canon),
				       err, sizeof(err)), 0);
	assert_int_equal(attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(attr.config, PERF_COUNT_SW_TASK_CLOCK);
}

/* Hardware vs software classification of encoded attrs. */
static void encode_host_attr_is_hw_classifies(void **state)
{
	static const struct {
		int line;
		const char *name;
		bool hw;
	} cases[] = {
		{ __LINE__, "instructions", true },
		{ __LINE__, "cycles:u", true },
		{ __LINE__, "task-clock", false },
		{ __LINE__, "context-switches", false },
		{ __LINE__, "cpu-clock", false },
	};
	int errors = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perf_event_attr attr = { 0 };
		char canon[VPERF_NAME_LEN * 4], err[VPERF_ERRMSG_LEN] = "";
		int ret = vperf__encode(cases[i].name, &attr, canon, sizeof(canon),
					err, sizeof(err));

		if (ret) {
			print_error("%s:%d: \"%s\": encode failed %d: %s\n", __FILE__,
				    cases[i].line, cases[i].name, ret, err);
			errors++;
		} else if (vperf__attr_is_hw(&attr) != cases[i].hw) {
			print_error("%s:%d: \"%s\": vperf__attr_is_hw says %d, expected %d\n",
				    __FILE__, cases[i].line, cases[i].name,
				    !cases[i].hw, cases[i].hw);
			errors++;
		}
	}
	assert_int_equal(errors, 0);
}

static int setup(void **state)
{
	return vperf__pfm_init() ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_host_generic_names_to_attr),
		cmocka_unit_test(encode_host_bad_names_fail_naming_the_event),
		cmocka_unit_test(encode_host_works_after_a_failure),
		cmocka_unit_test(encode_host_attr_is_hw_classifies),
	};

	unsetenv("LIBPFM_FORCE_PMU");
	return VT_MAIN("encode_host", tests, setup, NULL);
}
