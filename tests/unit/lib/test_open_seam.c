/* SPDX-License-Identifier: MIT */
/*
 * vperf_evset__open() against a mocked syscall: the seam
 * vperf__perf_event_open() is replaced with -Wl,--wrap, so these tests see
 * the perf_event_attr the library builds, and can make the kernel refuse
 * (EACCES, ESRCH, EMFILE) on demand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "vtest.h"

int __wrap_vperf__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				  int group_fd, unsigned long flags);
int __real_vperf__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				  int group_fd, unsigned long flags);

#define MAX_CALLS 16

static struct {
	int calls;
	int fail_from;		/* calls numbered >= this (1-based) fail; 0: none */
	int fail_err;		/* as a positive errno */
	struct {
		struct perf_event_attr attr;
		pid_t pid;
		int cpu, group_fd;
		unsigned long flags;
		int ret;
	} call[MAX_CALLS];
} seam;

int __wrap_vperf__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
				  int group_fd, unsigned long flags)
{
	int n = seam.calls++, ret;

	if (seam.fail_from && seam.calls >= seam.fail_from) {
		/* both conventions: -errno returned, errno set */
		errno = seam.fail_err;
		ret = -seam.fail_err;
	} else {
		ret = __real_vperf__perf_event_open(attr, pid, cpu, group_fd, flags);
	}
	if (n < MAX_CALLS) {
		seam.call[n].attr = *attr;
		seam.call[n].pid = pid;
		seam.call[n].cpu = cpu;
		seam.call[n].group_fd = group_fd;
		seam.call[n].flags = flags;
		seam.call[n].ret = ret;
	}
	return ret;
}

static int reset_seam(void **state)
{
	memset(&seam, 0, sizeof(seam));
	return 0;
}

static struct vperf_evset *new_set(const struct vperf_evset_opts *o,
				   const char *const *events, int n)
{
	struct vperf_evset *es = NULL;

	assert_int_equal(vperf_evset__new(o, &es), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(vperf_evset__add(es, events[i]), i);
	return es;
}

static void assert_seam_used(void)
{
	if (!seam.calls)
		fail_msg("vperf__perf_event_open() was never called through the seam: "
			 "the library must call it from another file than the one "
			 "defining it for -Wl,--wrap to see the call");
}

static void seam_self_attr_is_disabled_software_on_this_thread(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_set(NULL, ev, 1);

	assert_int_equal(vperf_evset__open(es), 0);
	assert_seam_used();
	assert_int_equal(seam.calls, 1);
	assert_true(seam.call[0].ret >= 0);
	assert_int_equal(seam.call[0].attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(seam.call[0].attr.config, PERF_COUNT_SW_TASK_CLOCK);
	assert_true(seam.call[0].attr.size >= PERF_ATTR_SIZE_VER0);
	assert_int_equal(seam.call[0].attr.disabled, 1);	/* counts from start() */
	assert_int_equal(seam.call[0].attr.enable_on_exec, 0);
	assert_int_equal(seam.call[0].attr.inherit, 0);	/* one thread */
	assert_int_equal(seam.call[0].pid, 0);			/* this thread */
	assert_int_equal(seam.call[0].cpu, -1);			/* any cpu */
	vperf_evset__delete(es);
	/* delete closed the fd */
	assert_int_equal(fcntl(seam.call[0].ret, F_GETFD), -1);
}

static void seam_modifiers_reach_the_attr(void **state)
{
	static const char *const ev[] = { "task-clock:u" };
	struct vperf_evset *es = new_set(NULL, ev, 1);

	assert_int_equal(vperf_evset__open(es), 0);
	assert_seam_used();
	assert_int_equal(seam.call[0].attr.exclude_kernel, 1);
	assert_int_equal(seam.call[0].attr.exclude_user, 0);
	vperf_evset__delete(es);
}

static void seam_process_enable_on_exec_sets_inherit_and_enable_on_exec(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset_opts o = { .size = sizeof(o), .target = VPERF_TARGET_PROCESS,
				      .pid = getpid(), .flags = VPERF_EVSET_ENABLE_ON_EXEC };
	struct vperf_evset *es = new_set(&o, ev, 1);

	seam.fail_from = 1;	/* look, don't open */
	seam.fail_err = EACCES;
	assert_true(vperf_evset__open(es) < 0);
	assert_seam_used();
	assert_int_equal(seam.call[0].pid, getpid());
	assert_int_equal(seam.call[0].attr.enable_on_exec, 1);
	assert_int_equal(seam.call[0].attr.disabled, 1);
	assert_int_equal(seam.call[0].attr.inherit, 1);	/* and its children */
	vperf_evset__delete(es);
}

static void seam_group_opens_members_under_the_leader(void **state)
{
	static const char *const ev[] = { "task-clock", "context-switches", "page-faults" };
	struct vperf_evset_opts o = { .size = sizeof(o), .flags = VPERF_EVSET_GROUP };
	struct vperf_evset *es = new_set(&o, ev, 3);

	assert_int_equal(vperf_evset__open(es), 0);
	assert_seam_used();
	assert_int_equal(seam.calls, 3);
	assert_int_equal(seam.call[0].group_fd, -1);
	assert_true(seam.call[0].ret >= 0);
	assert_int_equal(seam.call[1].group_fd, seam.call[0].ret);
	assert_int_equal(seam.call[2].group_fd, seam.call[0].ret);
	vperf_evset__delete(es);
}

static void seam_eacces_fails_open_naming_paranoid(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_set(NULL, ev, 1);
	const char *msg;
	int err;

	seam.fail_from = 1;
	seam.fail_err = EACCES;
	err = vperf_evset__open(es);
	msg = vperf_evset__strerror(es);
	printf("open: %d, message: %s\n", err, msg);
	assert_seam_used();
	assert_true(err == -EACCES || err == -EPERM);
	assert_true(vt_contains(msg, "perf_event_paranoid"));
	assert_true(vt_contains(msg, "task-clock"));
	vperf_evset__delete(es);
}

static void seam_esrch_fails_open_naming_the_pid(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset_opts o = { .size = sizeof(o), .target = VPERF_TARGET_THREAD,
				      .pid = getpid() };
	struct vperf_evset *es = new_set(&o, ev, 1);
	char pid[32];
	const char *msg;
	int err;

	seam.fail_from = 1;
	seam.fail_err = ESRCH;
	err = vperf_evset__open(es);
	msg = vperf_evset__strerror(es);
	printf("open: %d, message: %s\n", err, msg);
	assert_seam_used();
	assert_int_equal(err, -ESRCH);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_non_null(strstr(msg, pid));
	vperf_evset__delete(es);
}

/* The third of three events fails: the first two are closed again. */
static void seam_failure_half_way_closes_what_was_opened(void **state)
{
	static const char *const ev[] = { "task-clock", "context-switches", "page-faults" };
	struct vperf_evset *es = new_set(NULL, ev, 3);
	int err;

	seam.fail_from = 3;
	seam.fail_err = EMFILE;
	err = vperf_evset__open(es);
	printf("open: %d, message: %s\n", err, vperf_evset__strerror(es));
	assert_seam_used();
	assert_int_equal(seam.calls, 3);
	assert_true(err < 0);
	assert_true(seam.call[0].ret >= 0 && seam.call[1].ret >= 0);
	assert_int_equal(fcntl(seam.call[0].ret, F_GETFD), -1);
	assert_int_equal(fcntl(seam.call[1].ret, F_GETFD), -1);
	assert_int_equal(vperf_evset__read_path(es, 0), -EINVAL);	/* not open */
	/* and the set can be opened again once the kernel agrees */
	reset_seam(NULL);
	assert_int_equal(vperf_evset__open(es), 0);
	assert_int_equal(seam.calls, 3);
	vperf_evset__delete(es);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(seam_self_attr_is_disabled_software_on_this_thread, reset_seam),
		cmocka_unit_test_setup(seam_modifiers_reach_the_attr, reset_seam),
		cmocka_unit_test_setup(seam_process_enable_on_exec_sets_inherit_and_enable_on_exec,
				       reset_seam),
		cmocka_unit_test_setup(seam_group_opens_members_under_the_leader, reset_seam),
		cmocka_unit_test_setup(seam_eacces_fails_open_naming_paranoid, reset_seam),
		cmocka_unit_test_setup(seam_esrch_fails_open_naming_the_pid, reset_seam),
		cmocka_unit_test_setup(seam_failure_half_way_closes_what_was_opened, reset_seam),
	};

	return VT_MAIN("open_seam", tests, NULL, NULL);
}
