// SPDX-License-Identifier: MIT
/*
 * The local recorder's helpers (local-int.h) that its other files use: clocks, perf_event_open,
 * descriptors, the recorded threads, the pending queue, layers, kernel addresses, messages.  It
 * calls none of them back: local.c uses local-sched.c and local-meta.c, and all three this.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "local-int.h"

#define KERNEL_START	0xffff800000000000ull	/* x86-64: kernel addresses from here */

uint64_t vperf__local_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vperf__local_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int vperf__local_add_fd(struct vperf_local *rc, int fd)
{
	if (rc->nr_fds == rc->cap_fds) {
		size_t cap = rc->cap_fds ? 2 * rc->cap_fds : 32;
		int *n = realloc(rc->fds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rc->fds = n;
		rc->cap_fds = cap;
	}
	rc->fds[rc->nr_fds++] = fd;
	return 0;
}

static bool tid_find(const struct vperf_local *rc, pid_t tid, size_t *at)
{
	size_t lo = 0, hi = rc->nr_tids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rc->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < rc->nr_tids && rc->tids[lo] == tid;
}

bool vperf__local_tid_recorded(const struct vperf_local *rc, pid_t tid)
{
	size_t at;

	return tid > 0 && tid_find(rc, tid, &at);
}

int vperf__local_tid_add(struct vperf_local *rc, pid_t tid)
{
	size_t at;

	if (tid_find(rc, tid, &at))
		return 0;
	if (rc->nr_tids == rc->cap_tids) {
		size_t cap = rc->cap_tids ? 2 * rc->cap_tids : 64;
		pid_t *n = realloc(rc->tids, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rc->tids = n;
		rc->cap_tids = cap;
	}
	memmove(&rc->tids[at + 1], &rc->tids[at], (rc->nr_tids - at) * sizeof(*rc->tids));
	rc->tids[at] = tid;
	rc->nr_tids++;
	return 0;
}

struct pend *vperf__local_pend_new(struct vperf_local *rc)
{
	return vperf_ordered__queue(&rc->pend, 0);
}

uint8_t vperf__local_kernel_layer(const struct vperf_local *rc)
{
	return rc->guest ? VPERF_CTF_GUEST_KERNEL : VPERF_CTF_HOST_KERNEL;
}

uint8_t vperf__local_user_layer(const struct vperf_local *rc)
{
	return rc->guest ? VPERF_CTF_GUEST_USER : VPERF_CTF_HOST_USER;
}

/* Remember a kernel address a sample hit (open addressing; 0 is never a kernel address). */
int vperf__local_kip_add(struct vperf_local *rc, uint64_t ip)
{
	size_t i;

	if (ip < KERNEL_START)
		return 0;
	if (2 * (rc->nr_kips + 1) > rc->cap_kips) {
		size_t cap = rc->cap_kips ? 2 * rc->cap_kips : 1024;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t j = 0; j < rc->cap_kips; j++) {
			if (!rc->kips[j])
				continue;
			for (i = (rc->kips[j] * 0x9e3779b97f4a7c15ull) & (cap - 1); n[i];
			     i = (i + 1) & (cap - 1))
				;
			n[i] = rc->kips[j];
		}
		free(rc->kips);
		rc->kips = n;
		rc->cap_kips = cap;
	}
	for (i = (ip * 0x9e3779b97f4a7c15ull) & (rc->cap_kips - 1); rc->kips[i];
	     i = (i + 1) & (rc->cap_kips - 1))
		if (rc->kips[i] == ip)
			return 0;
	rc->kips[i] = ip;
	rc->nr_kips++;
	return 0;
}

int vperf__local_fail(struct vperf_local *rc, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rc->why, sizeof(rc->why), fmt, ap);
	va_end(ap);
	return err;
}

void vperf__local_note(struct vperf_local *rc, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!rc->cfg.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rc->cfg.note(rc->cfg.note_arg, msg);
}
