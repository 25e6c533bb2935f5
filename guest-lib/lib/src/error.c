// SPDX-License-Identifier: MIT
/*
 * Why perf_event_open() failed, in words for a person: the library's
 * callers (the CLI, applications) print these strings as they are.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static void path_join(char *buf, size_t len, const char *root, const char *p)
{
	if (!root || !strcmp(root, "/"))
		root = "";
	snprintf(buf, len, "%s%s", root, p);
}

bool vperf__host_has_pmu(const char *root)
{
	char p[PATH_MAX];

	/* The core PMU is "cpu" on x86 (Intel and AMD) and on most others. */
	path_join(p, sizeof(p), root, "/sys/bus/event_source/devices/cpu");
	if (access(p, F_OK) == 0)
		return true;
	path_join(p, sizeof(p), root, "/sys/bus/event_source/devices/cpu_core");
	return access(p, F_OK) == 0;
}

int vperf__paranoid(const char *root)
{
	char p[PATH_MAX];
	FILE *f;
	int v;

	path_join(p, sizeof(p), root, "/proc/sys/kernel/perf_event_paranoid");
	f = fopen(p, "re");
	if (!f)
		return INT32_MIN;
	if (fscanf(f, "%d", &v) != 1)
		v = INT32_MIN;
	fclose(f);
	return v;
}

static const char *paranoid_meaning(int level)
{
	if (level <= -1)
		return "no restrictions";
	if (level == 0)
		return "no raw tracepoint access for unprivileged users";
	if (level == 1)
		return "unprivileged users may count user and kernel space of their own processes";
	if (level == 2)
		return "unprivileged users may count only user space of their own processes";
	return "unprivileged users may not use perf events at all";
}

void vperf__open_strerror(int err, const char *name,
			  const struct perf_event_attr *attr, pid_t pid,
			  const char *root, char *buf, size_t len)
{
	bool hw = attr && vperf__attr_is_hw(attr);
	int e = err < 0 ? -err : err;

	switch (e) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (hw && !vperf__host_has_pmu(root)) {
			snprintf(buf, len,
				 "no hardware PMU on this host: event '%s' needs one "
				 "(the kernel lists no cpu PMU in /sys/bus/event_source/devices, "
				 "as in virtual machines without a vPMU); use a software event "
				 "such as task-clock, cpu-clock, context-switches or page-faults, "
				 "or run on a host with a PMU", name);
			return;
		}
		if (attr && attr->sample_period && e == EOPNOTSUPP) {
			snprintf(buf, len, "event '%s' cannot be sampled on this host "
				 "(the kernel refused overflow interrupts for it): count it instead, "
				 "or sample on cpu-clock", name);
			return;
		}
		snprintf(buf, len, "event '%s' is not supported by this host's kernel or PMU (%s)",
			 name, strerror(e));
		return;
	case EACCES:
	case EPERM: {
		int level = vperf__paranoid(root);

		if (level == INT32_MIN) {
			snprintf(buf, len, "permission denied opening event '%s' (%s); "
				 "kernel.perf_event_paranoid could not be read", name, strerror(e));
			return;
		}
		snprintf(buf, len,
			 "permission denied opening event '%s': kernel.perf_event_paranoid is %d "
			 "(%s); %srun with CAP_PERFMON, or lower the setting as root: "
			 "sysctl kernel.perf_event_paranoid=%d",
			 name, level, paranoid_meaning(level),
			 level == 2 ? "count user space only with the ':u' modifier, " : "",
			 level >= 3 ? 2 : level == 2 ? 1 : -1);
		return;
	}
	case ESRCH:
		snprintf(buf, len, "no process or thread with id %d (it may have exited)", (int)pid);
		return;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len, "too many open files opening event '%s': raise the limit "
			 "(ulimit -n) or count fewer events or threads", name);
		return;
	case EBUSY:
		snprintf(buf, len, "event '%s': the PMU is busy (another tool or the NMI "
			 "watchdog holds the counters it needs)", name);
		return;
	case EINVAL:
		snprintf(buf, len, "the kernel rejected event '%s' as invalid (a modifier, "
			 "umask or option this kernel or PMU does not support)", name);
		return;
	default:
		snprintf(buf, len, "cannot open event '%s': %s", name, strerror(e));
		return;
	}
}
