/* SPDX-License-Identifier: MIT */
/*
 * vperf__encode() with libpfm4 forced to Intel Skylake (LIBPFM_FORCE_PMU=skl),
 * whatever the host: Intel encodings checked on any machine.  Its own
 * process: the variable is read when libpfm4 initialises.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "encode_table.h"
#include "vtest.h"

#define PERF_TYPE_RAW_ 4	/* PERF_TYPE_RAW, spelled as measured */

static const struct encode_case skl[] = {
	/*  name                              type config   eu ek canon */
	OK("INST_RETIRED:ANY_P",              4, 0xc0,      0, 0, "skl::INST_RETIRED:ANY_P"),
	OK("INST_RETIRED:ANY_P:u",            4, 0xc0,      0, 1, "skl::INST_RETIRED:ANY_P"),
	OK("INST_RETIRED:ANY_P:k",            4, 0xc0,      1, 0, "skl::INST_RETIRED:ANY_P"),
	OK("inst_retired:any_p",              4, 0xc0,      0, 0, "skl::INST_RETIRED:ANY_P"),
	OK("skl::INST_RETIRED:ANY_P",         4, 0xc0,      0, 0, "skl::INST_RETIRED:ANY_P"),
	OK("INST_RETIRED",                    4, 0xc0,      0, 0, "skl::INST_RETIRED:ANY_P"),
	OK("INST_RETIRED:ANY_P:c=1",          4, 0x10000c0, 0, 0, "skl::INST_RETIRED:ANY_P"),
	OK("INST_RETIRED:ANY_P:c=1:i",        4, 0x18000c0, 0, 0, "skl::INST_RETIRED:ANY_P"),
	OK("UOPS_ISSUED:ANY",                 4, 0x10e,     0, 0, "skl::UOPS_ISSUED:ANY"),
	OK("BR_MISP_RETIRED:ALL_BRANCHES",    4, 0xc5,      0, 0, "skl::BR_MISP_RETIRED:ALL_BRANCHES"),
};

static const struct encode_case skl_bad[] = {
	/*  name                              errno    the message must contain */
	BAD("INST_RETIRED:BOGUS",             -EINVAL, "INST_RETIRED"),
	BAD("INST_RETIRED:ANY_P:c=999",       -EINVAL, "INST_RETIRED"),
	BAD("NOT_AN_EVENT_XYZ",               -ENOENT, "NOT_AN_EVENT_XYZ"),
	/* an AMD name does not exist on Skylake */
	BAD("RETIRED_INSTRUCTIONS",           -ENOENT, "RETIRED_INSTRUCTIONS"),
	BAD("amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", -ENOENT, "RETIRED_INSTRUCTIONS"),
};

static void encode_skl_inst_retired_is_raw_0xc0(void **state)
{
	assert_int_equal(encode_table_run(__FILE__, skl, sizeof(skl) / sizeof(skl[0])), 0);
}

static void encode_skl_bad_names_fail_naming_the_event(void **state)
{
	assert_int_equal(encode_table_run(__FILE__, skl_bad,
					  sizeof(skl_bad) / sizeof(skl_bad[0])), 0);
}

static void encode_skl_raw_events_are_hw(void **state)
{
	struct perf_event_attr attr = { 0 };
	char canon[VPERF_NAME_LEN * 4], err[VPERF_ERRMSG_LEN] = "";

	assert_int_equal(vperf__encode("INST_RETIRED:ANY_P", &attr, canon, sizeof(canon),
				       err, sizeof(err)), 0);
	assert_int_equal(attr.type, PERF_TYPE_RAW_);
	assert_true(vperf__attr_is_hw(&attr));
}

static int setup(void **state)
{
	return vperf__pfm_init() ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(encode_skl_inst_retired_is_raw_0xc0),
		cmocka_unit_test(encode_skl_bad_names_fail_naming_the_event),
		cmocka_unit_test(encode_skl_raw_events_are_hw),
	};

	/* Before anything initialises libpfm4. */
	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	return VT_MAIN("encode_skl", tests, setup, NULL);
}
