// SPDX-License-Identifier: MIT
/*
 * vperf_trace_sample_task(): a guest perf event sampling a task into the
 * trace rings, through vperf_guest.ko's trace sampler (VPERF_IOC_TRACE_SAMPLE).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "vperf_guest_uapi.h"

int vperf_trace_sample_task(pid_t pid, const char *event, uint64_t period, unsigned int flags,
			    char *why, size_t why_len)
{
	struct vperf_trace_sampler req = { .size = sizeof(req) };
	struct perf_event_attr attr;
	char canon[VPERF_NAME_LEN], dummy[1];
	const char *dev = vperf__pv_device();
	int fd, ret;

	if (!why) {
		why = dummy;
		why_len = sizeof(dummy);
	}
	if (flags & ~(unsigned int)(VPERF_TRACE_SAMPLE_FREQ | VPERF_TRACE_SAMPLE_CALLCHAIN)) {
		snprintf(why, why_len, "unknown flags 0x%x", flags);
		return -EINVAL;
	}
	if (!period || ((flags & VPERF_TRACE_SAMPLE_FREQ) && period > VPERF_TRACE_SAMPLER_MAX_FREQ)) {
		snprintf(why, why_len, "a %s of %llu: want %s", flags & VPERF_TRACE_SAMPLE_FREQ ?
			 "frequency" : "period", (unsigned long long)period,
			 flags & VPERF_TRACE_SAMPLE_FREQ ? "1 to 100000 Hz" : "1 or more events");
		return -EINVAL;
	}
	ret = vperf__encode(event, &attr, canon, sizeof(canon), why, why_len);
	if (ret)
		return ret;
	req.flags = (flags & VPERF_TRACE_SAMPLE_FREQ ? VPERF_TRACE_SAMPLER_FREQ : 0) |
		    (flags & VPERF_TRACE_SAMPLE_CALLCHAIN ? VPERF_TRACE_SAMPLER_CALLCHAIN : 0) |
		    (attr.exclude_kernel ? VPERF_TRACE_SAMPLER_USER : 0);	/* "cpu-clock:u" */
	req.pid = pid;
	req.type = attr.type;
	req.config = attr.config;
	req.period = period;

	fd = vperf__pv_open(dev);
	if (fd < 0) {
		snprintf(why, why_len, "%s: %s (not a vperf guest, or vperf_guest.ko is not loaded)",
			 dev, strerror(-fd));
		return fd == -ENOENT ? -ENODEV : fd;
	}
	ret = vperf__pv_ioctl(fd, VPERF_IOC_TRACE_SAMPLE, &req);
	if (ret == -EACCES && !(req.flags & VPERF_TRACE_SAMPLER_USER)) {
		/*
		 * Kernel mode is not this user's to sample (perf_event_paranoid
		 * >= 2, no CAP_PERFMON): user mode only, as perf falls back to;
		 * a module that says EINVAL to that was refusing the task.
		 */
		req.flags |= VPERF_TRACE_SAMPLER_USER;
		ret = vperf__pv_ioctl(fd, VPERF_IOC_TRACE_SAMPLE, &req);
		if (ret == -EINVAL)
			ret = -EACCES;
	}
	if (!ret)
		return fd;
	vperf__pv_close(fd);
	switch (-ret) {
	case ENOTTY:
		snprintf(why, why_len, "this vperf_guest.ko has no trace sampler (older than this "
			 "libvperf)");
		return -EOPNOTSUPP;
	case ENODATA:
		snprintf(why, why_len, "tracing is off in vperf_guest.ko (its parameter trace is 0; "
			 "vperf vm record loads it with trace=1)");
		break;
	case ESRCH:
		snprintf(why, why_len, "no process %d", (int)pid);
		break;
	case EACCES:
	case EPERM:
		snprintf(why, why_len, "vperf_guest.ko's paranoid setting does not let this user "
			 "sample process %d (its 'paranoid' parameter for another user's process; "
			 "kernel.perf_event_paranoid and CAP_PERFMON for kernel mode)", (int)pid);
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(why, why_len, "the guest kernel cannot sample on '%s' (%s): no hardware "
			 "PMU in this guest? cpu-clock can always be sampled", event, strerror(-ret));
		break;
	default:
		snprintf(why, why_len, "starting the trace sampler: %s", strerror(-ret));
		break;
	}
	return ret;
}
