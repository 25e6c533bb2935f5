/* SPDX-License-Identifier: MIT */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strcasestr */
#endif
#include <string.h>
#include <strings.h>
#include <time.h>
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

static unsigned long long steal_ticks(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (f) {
		n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]);
		fclose(f);
	}
	return n == 8 ? v[7] : 0;
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

void vt_steal_mark(struct vt_steal *m)
{
	m->ticks = steal_ticks();
	m->wall_ns = mono_ns();
}

double vt_steal_share(const struct vt_steal *m)
{
	double wall = (double)(mono_ns() - m->wall_ns) / 1e9, stolen;
	long hz = sysconf(_SC_CLK_TCK), cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (wall <= 0 || hz <= 0 || cpus <= 0)
		return 0;
	stolen = (double)(steal_ticks() - m->ticks) / (double)hz;
	stolen /= wall * (double)cpus;
	return stolen < 0 ? 0 : stolen > 0.9 ? 0.9 : stolen;
}
