/* SPDX-License-Identifier: MIT */
/*
 * Errors turned into words: vperf__open_strerror() against fake sysfs and
 * procfs roots built in a mkdtemp() directory, vperf__host_has_pmu(),
 * vperf__paranoid(), and vperf__pfm_errno().
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

#include "internal.h"
#include "vtest.h"

struct root {
	char dir[PATH_MAX];
};

/* mkdir -p root/rel */
static void mkdirs(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(path, 0755) && errno != EEXIST)
				fail_msg("mkdir %s: %s", path, strerror(errno));
			*p = '/';
		}
	if (mkdir(path, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

static void write_file(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
		fail_msg("create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

static int rm_rf(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

/*
 * A root like a host without a PMU: sysfs has only the software PMUs;
 * with pmu, also the cpu PMU.  paranoid: the sysctl's file content, or
 * NULL for no file.
 */
static int make_root(void **state, int pmu, const char *paranoid)
{
	struct root *r = calloc(1, sizeof(*r));

	if (!r)
		return -1;
	snprintf(r->dir, sizeof(r->dir), "/tmp/vperf-root-XXXXXX");
	if (!mkdtemp(r->dir)) {
		free(r);
		return -1;
	}
	mkdirs(r->dir, "sys/bus/event_source/devices/software");
	mkdirs(r->dir, "sys/bus/event_source/devices/tracepoint");
	write_file(r->dir, "sys/bus/event_source/devices/software/type", "1\n");
	if (pmu) {
		mkdirs(r->dir, "sys/bus/event_source/devices/cpu");
		write_file(r->dir, "sys/bus/event_source/devices/cpu/type", "4\n");
	}
	mkdirs(r->dir, "proc/sys/kernel");
	if (paranoid)
		write_file(r->dir, "proc/sys/kernel/perf_event_paranoid", paranoid);
	*state = r;
	return 0;
}

static int root_nopmu_paranoid3(void **state) { return make_root(state, 0, "3\n"); }
static int root_pmu_paranoid2(void **state) { return make_root(state, 1, "2\n"); }
static int root_nopmu_noparanoid(void **state) { return make_root(state, 0, NULL); }

static int root_remove(void **state)
{
	struct root *r = *state;

	if (r) {
		rm_rf(r->dir);
		free(r);
	}
	return 0;
}

/* Does text contain the number n as a whole number (not inside 13 or 2.3)? */
static int has_number(const char *text, long n)
{
	for (const char *p = text; *p; p++) {
		char *end;
		long v;

		if (!(*p >= '0' && *p <= '9') || (p > text && (p[-1] >= '0' && p[-1] <= '9')))
			continue;
		v = strtol(p, &end, 10);
		if (v == n && !(*end >= '0' && *end <= '9'))
			return 1;
	}
	return 0;
}

static struct perf_event_attr hw_attr(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	return a;
}

static struct perf_event_attr sw_attr(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	return a;
}

static void host_has_pmu_reads_sysfs_cpu(void **state)
{
	struct root *nopmu = NULL, *pmu = NULL;

	assert_int_equal(make_root((void **)&nopmu, 0, "2\n"), 0);
	assert_int_equal(make_root((void **)&pmu, 1, "2\n"), 0);
	assert_false(vperf__host_has_pmu(nopmu->dir));
	assert_true(vperf__host_has_pmu(pmu->dir));
	/* and on this host, what sysfs says */
	assert_int_equal(vperf__host_has_pmu("/"), vt_host_has_pmu());
	root_remove((void **)&nopmu);
	root_remove((void **)&pmu);
}

static void paranoid_reads_proc_sysctl(void **state)
{
	struct root *r = *state;
	struct root *none = NULL;

	assert_int_equal(vperf__paranoid(r->dir), 3);
	write_file(r->dir, "proc/sys/kernel/perf_event_paranoid", "-1\n");
	assert_int_equal(vperf__paranoid(r->dir), -1);
	assert_int_equal(make_root((void **)&none, 0, NULL), 0);
	assert_int_equal(vperf__paranoid(none->dir), INT32_MIN);
	root_remove((void **)&none);
}

static void strerror_enoent_hw_without_pmu_suggests_software_event(void **state)
{
	struct root *r = *state;
	struct perf_event_attr a = hw_attr();
	char buf[VPERF_ERRMSG_LEN] = "";

	vperf__open_strerror(-ENOENT, "instructions", &a, 0, r->dir, buf, sizeof(buf));
	printf("message: %s\n", buf);
	assert_true(vt_contains(buf, "no hardware PMU"));
	assert_true(vt_contains(buf, "task-clock"));
	assert_true(vt_contains(buf, "instructions"));
}

/* With a cpu PMU present, ENOENT is not blamed on a missing PMU. */
static void strerror_enoent_hw_with_pmu_does_not_blame_pmu(void **state)
{
	struct root *r = *state;
	struct perf_event_attr a = hw_attr();
	char buf[VPERF_ERRMSG_LEN] = "";

	vperf__open_strerror(-ENOENT, "instructions", &a, 0, r->dir, buf, sizeof(buf));
	printf("message: %s\n", buf);
	assert_false(vt_contains(buf, "no hardware PMU"));
	assert_true(vt_contains(buf, "instructions"));
}

static void strerror_eacces_names_paranoid_and_value(void **state)
{
	struct root *r = *state;
	struct perf_event_attr a = sw_attr();
	char buf[VPERF_ERRMSG_LEN] = "";

	vperf__open_strerror(-EACCES, "task-clock", &a, 1, r->dir, buf, sizeof(buf));
	printf("message: %s\n", buf);
	assert_true(vt_contains(buf, "kernel.perf_event_paranoid"));
	assert_true(has_number(buf, 3));
	assert_true(vt_contains(buf, "task-clock"));

	buf[0] = 0;
	vperf__open_strerror(-EPERM, "task-clock", &a, 1, r->dir, buf, sizeof(buf));
	printf("message: %s\n", buf);
	assert_true(vt_contains(buf, "perf_event_paranoid"));
}

/* The sysctl cannot be read: still a message, and no made-up value. */
static void strerror_eacces_without_sysctl_still_explains(void **state)
{
	struct root *r = *state;
	struct perf_event_attr a = sw_attr();
	char buf[VPERF_ERRMSG_LEN] = "";

	vperf__open_strerror(-EACCES, "task-clock", &a, 1, r->dir, buf, sizeof(buf));
	printf("message: %s\n", buf);
	assert_true(vt_contains(buf, "perf_event_paranoid"));
	assert_null(strstr(buf, "-2147483648"));
}

static void strerror_esrch_names_the_pid(void **state)
{
	struct root *r = *state;
	struct perf_event_attr a = sw_attr();
	char buf[VPERF_ERRMSG_LEN] = "";

	vperf__open_strerror(-ESRCH, "task-clock", &a, 424242, r->dir, buf, sizeof(buf));
	printf("message: %s\n", buf);
	assert_true(has_number(buf, 424242));
}

/* Any errno gives a non-empty, terminated message that fits the buffer. */
static void strerror_always_terminates_within_len(void **state)
{
	struct root *r = *state;
	struct perf_event_attr a = hw_attr();
	static const int errs[] = { -ENOENT, -EACCES, -EPERM, -ESRCH, -EOPNOTSUPP,
				    -EINVAL, -EMFILE, -EBUSY, -E2BIG, -ENODEV };

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		char buf[24];

		memset(buf, 'x', sizeof(buf));
		vperf__open_strerror(errs[i], "a-rather-long-event-name-here", &a, 4242,
				     r->dir, buf, 16);
		assert_true(memchr(buf, 0, 16) != NULL);
		assert_true(buf[0] != 0);
		assert_int_equal(buf[16], 'x');		/* nothing past len */
	}
}

static void pfm_errno_maps_libpfm_errors(void **state)
{
	static const struct { int line; int pfm; int err; } cases[] = {
		{ __LINE__, PFM_SUCCESS, 0 },
		{ __LINE__, PFM_ERR_NOTFOUND, -ENOENT },
		{ __LINE__, PFM_ERR_ATTR, -EINVAL },
		{ __LINE__, PFM_ERR_ATTR_VAL, -EINVAL },
		{ __LINE__, PFM_ERR_UMASK, -EINVAL },
		{ __LINE__, PFM_ERR_INVAL, -EINVAL },
		{ __LINE__, PFM_ERR_NOMEM, -ENOMEM },
		{ __LINE__, PFM_ERR_NOTSUPP, -EOPNOTSUPP },
	};
	int errors = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int e = vperf__pfm_errno(cases[i].pfm);

		if (e != cases[i].err) {
			print_error("%s:%d: pfm_errno(%d) = %d, expected %d\n", __FILE__,
				    cases[i].line, cases[i].pfm, e, cases[i].err);
			errors++;
		}
	}
	/* every libpfm4 error is some negative errno, never a bare -1 */
	for (int pfm = PFM_ERR_NOTSUPP; pfm >= PFM_ERR_TOOSMALL; pfm--) {
		int e = vperf__pfm_errno(pfm);

		if (e >= 0 || e == -1 || e < -4095) {
			print_error("%s:%d: pfm_errno(%d) = %d, not a negative errno\n",
				    __FILE__, __LINE__, pfm, e);
			errors++;
		}
	}
	assert_int_equal(errors, 0);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_has_pmu_reads_sysfs_cpu),
		cmocka_unit_test_setup_teardown(paranoid_reads_proc_sysctl,
						root_nopmu_paranoid3, root_remove),
		cmocka_unit_test_setup_teardown(strerror_enoent_hw_without_pmu_suggests_software_event,
						root_nopmu_paranoid3, root_remove),
		cmocka_unit_test_setup_teardown(strerror_enoent_hw_with_pmu_does_not_blame_pmu,
						root_pmu_paranoid2, root_remove),
		cmocka_unit_test_setup_teardown(strerror_eacces_names_paranoid_and_value,
						root_nopmu_paranoid3, root_remove),
		cmocka_unit_test_setup_teardown(strerror_eacces_without_sysctl_still_explains,
						root_nopmu_noparanoid, root_remove),
		cmocka_unit_test_setup_teardown(strerror_esrch_names_the_pid,
						root_nopmu_paranoid3, root_remove),
		cmocka_unit_test_setup_teardown(strerror_always_terminates_within_len,
						root_nopmu_paranoid3, root_remove),
		cmocka_unit_test(pfm_errno_maps_libpfm_errors),
	};

	return VT_MAIN("strerror", tests, NULL, NULL);
}
