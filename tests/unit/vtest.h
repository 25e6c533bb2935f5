/* SPDX-License-Identifier: MIT */
/*
 * A thin layer over cmocka shared by the unit tests.
 *
 * Each test executable holds a group of cmocka tests; CMake registers one
 * ctest per test (unit.<function name>), which runs `<exe> <name>`.  A test
 * that cannot run here calls vt_skip("reason"): it prints "SKIP: reason"
 * and the executable exits 77, which CTest reports as skipped.
 */
#ifndef VPERF_TESTS_VTEST_H
#define VPERF_TESTS_VTEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

extern int vt_skipped;

#define vt_skip(...)						\
	do {							\
		printf("SKIP: ");				\
		printf(__VA_ARGS__);				\
		printf("\n");					\
		fflush(stdout);					\
		vt_skipped = 1;					\
		skip();						\
	} while (0)

/*
 * Run the group: with no argument every test, with one the test of that
 * exact name (an unknown name fails: a typo in CMake must not pass).
 * Returns 0 pass, 1 fail, 77 skipped.  "--list" prints the names.
 */
int vt_main(int argc, char **argv, const char *group,
	    const struct CMUnitTest *tests, size_t n,
	    CMFixtureFunction setup, CMFixtureFunction teardown);

#define VT_MAIN(group, tests, setup, teardown)				\
	vt_main(argc, argv, group, tests, sizeof(tests) / sizeof((tests)[0]), \
		setup, teardown)

/* Case-insensitive substring search, for messages meant for people. */
int vt_contains(const char *haystack, const char *needle);

/* Does this host have a hardware PMU the kernel knows? */
int vt_host_has_pmu(void);

/*
 * The time this machine's own hypervisor stole from it (/proc/stat steal) as
 * a share of all its CPUs' time since vt_steal_mark(): 0..1, 0 when
 * unreadable.  A kernel with PARAVIRT_TIME_ACCOUNTING leaves stolen time out
 * of CLOCK_THREAD_CPUTIME_ID while perf's task-clock counts it, so a
 * known answer between the two allows for it.
 */
struct vt_steal {
	unsigned long long ticks;
	unsigned long long wall_ns;
};
void vt_steal_mark(struct vt_steal *m);
double vt_steal_share(const struct vt_steal *m);

#endif /* VPERF_TESTS_VTEST_H */
