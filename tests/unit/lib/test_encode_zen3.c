/* SPDX-License-Identifier: MIT */
/*
 * vperf__encode() with libpfm4 forced to AMD Zen 3
 * (LIBPFM_FORCE_PMU=amd64_fam19h_zen3), whatever the host.  Its own process:
 * the variable is read when libpfm4 initialises.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "encode_table.h"
#include "vtest.h"

#define Z3 "amd64_fam19h_zen3::"

static const struct encode_case zen3[] = {
	/*  name                              type config eu ek canon */
	OK("RETIRED_INSTRUCTIONS",            4, 0xc0,    0, 0, Z3 "RETIRED_INSTRUCTIONS"),
	OK("RETIRED_INSTRUCTIONS:u",          4, 0xc0,    0, 1, Z3 "RETIRED_INSTRUCTIONS"),
	OK("RETIRED_INSTRUCTIONS:k",          4, 0xc0,    1, 0, Z3 "RETIRED_INSTRUCTIONS"),
	OK(Z3 "RETIRED_INSTRUCTIONS",         4, 0xc0,    0, 0, Z3 "RETIRED_INSTRUCTIONS"),
	OK("CYCLES_NOT_IN_HALT",              4, 0x76,    0, 0, Z3 "CYCLES_NOT_IN_HALT"),
	OK("RETIRED_BRANCH_INSTRUCTIONS",     4, 0xc2,    0, 0, Z3 "RETIRED_BRANCH_INSTRUCTIONS"),
};

static const struct encode_case zen3_bad[] = {
	/*  name                              errno    the message must contain */
	BAD("RETIRED_INSTRUCTIONS:zz",        -EINVAL, "RETIRED_INSTRUCTIONS"),
	BAD("NOPE_NOT_AN_EVENT",              -ENOENT, "NOPE_NOT_AN_EVENT"),
	/* an Intel name does not exist on Zen 3 */
	BAD("INST_RETIRED:ANY_P",             -ENOENT, "INST_RETIRED"),
	BAD("skl::INST_RETIRED:ANY_P",        -ENOENT, "INST_RETIRED"),
};

static void encode_zen3_retired_instructions_is_raw_0xc0(void **state)
{
	assert_int_equal(encode_table_run(__FILE__, zen3, sizeof(zen3) / sizeof(zen3[0])), 0);
}

static void encode_zen3_bad_names_fail_naming_the_event(void **state)
{
	assert_int_equal(encode_table_run(__FILE__, zen3_bad,
					  sizeof(zen3_bad) / sizeof(zen3_bad[0])), 0);
}

static int setup(void **state)
{
	return vperf__pfm_init() ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_zen3_retired_instructions_is_raw_0xc0),
		cmocka_unit_test(encode_zen3_bad_names_fail_naming_the_event),
	};

	/* Before anything initialises libpfm4. */
	setenv("LIBPFM_FORCE_PMU", "amd64_fam19h_zen3", 1);
	return VT_MAIN("encode_zen3", tests, setup, NULL);
}
