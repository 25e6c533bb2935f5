/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strcasestr */
#endif
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "vtest.h"

int vt_skipped;

int vt_contains(const char *haystack, const char *needle)
{
	return haystack && needle && strcasestr(haystack, needle) != NULL;
}

int vt_host_has_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

int vt_main(int argc, char **argv, const char *group,
	    const struct CMUnitTest *tests, size_t n,
	    CMFixtureFunction setup, CMFixtureFunction teardown)
{
	struct CMUnitTest one[1];
	size_t i;
	int failed;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [--list | TEST]\n", argv[0]);
		return 2;
	}
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < n; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc == 2) {
		for (i = 0; i < n; i++)
			if (!strcmp(tests[i].name, argv[1]))
				break;
		if (i == n) {
			fprintf(stderr, "%s: no test named %s in group %s\n",
				argv[0], argv[1], group);
			return 1;
		}
		one[0] = tests[i];
		tests = one;
		n = 1;
	}
	failed = _cmocka_run_group_tests(group, tests, n, setup, teardown);
	if (failed)
		return 1;
	return vt_skipped ? 77 : 0;
}
