// SPDX-License-Identifier: MIT
/* Count arithmetic: multiplex scaling and the user-mode (rdpmc) read. */
#include <errno.h>
#include <string.h>

#include "internal.h"

/*
 * The self-monitoring protocol of linux/perf_event.h: the kernel bumps
 * pc->lock around every update of the page, so a snapshot taken between
 * two equal reads of lock (with compiler barriers) is consistent.
 */
#define barrier() __asm__ __volatile__("" ::: "memory")

int vperf__mmap_read(const volatile struct perf_event_mmap_page *pc,
		     struct vperf_mmap_read_ops *ops, struct vperf_count *c)
{
	uint64_t count, enabled, running, offset, cyc = 0, delta = 0;
	uint32_t seq, idx, width, shift = 0, mult = 0;
	uint64_t time_offset = 0;

	ops->retries = 0;
	for (;;) {
		seq = pc->lock;
		barrier();
		enabled = pc->time_enabled;
		running = pc->time_running;
		if (pc->cap_user_time) {
			cyc = ops->rdtsc ? ops->rdtsc(ops->ctx) : 0;
			shift = pc->time_shift;
			mult = pc->time_mult;
			time_offset = pc->time_offset;
		}
		idx = pc->index;
		offset = pc->offset;
		width = pc->pmc_width;
		count = offset;
		if (pc->cap_user_rdpmc && idx) {
			uint64_t pmc = ops->rdpmc(idx - 1, ops->ctx);

			if (width > 0 && width < 64) {
				pmc <<= 64 - width;
				pmc = (uint64_t)((int64_t)pmc >> (64 - width));
			}
			count += pmc;
		}
		barrier();
		if (pc->lock == seq)
			break;
		ops->retries++;
		if (ops->retries > 1000)
			return -EAGAIN;
	}

	if (!pc->cap_user_rdpmc || !idx)
		return -EAGAIN;

	if (pc->cap_user_time) {
		uint64_t quot = cyc >> shift;
		uint64_t rem = cyc & (((uint64_t)1 << shift) - 1);

		delta = time_offset + quot * mult + ((rem * mult) >> shift);
	}
	enabled += delta;
	/* The event is on a counter now (idx != 0), so it is running. */
	running += delta;

	vperf__count_set(c, count, enabled, running);
	return 0;
}
