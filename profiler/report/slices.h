/* SPDX-License-Identifier: MIT */
/*
 * Who ran where, when: the running slices of a recording's threads (states.c).
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_SLICES_H
#define VPERF_REPORT_SLICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- states ------------------------------------------------------------ */

/* A thread on a CPU (a guest thread: on a vCPU) from start to end (ns). */
struct vperf_report_slice {
	uint64_t start, end;
	int32_t thread;			/* index in threads */
	uint32_t cpu;
	bool preempted;			/* it left the CPU runnable (thread_switch says) */
};

/*
 * When each thread ran (docs/report.md, section 4): from its thread_switch in/out pairs, or for a
 * machine (host, guest) whose recording has no thread_switch, from sched_switch pairs.  A
 * thread_switch out without an in before it starts at the thread's first event (its exec), and a
 * thread still running at its exit stops there (or at the recording's end); a sched_switch out
 * without its in is left out (the kernel missed the in).  Sorted by thread, then start.
 * *out is malloc'd (NULL when none).  0 or -ENOMEM.
 */
int vperf_report__running(const struct vperf_report *r, struct vperf_report_slice **out,
			  size_t *nr) __attribute__((warn_unused_result));

/*
 * Which threads a timeline shows: those with a running slice, a sample (of event, or any for
 * -1) or an event of their own (not the idle task, tid 0; not a fork's parent alone).  A
 * calloc'd array of nr_threads (+ 1) flags, or NULL: out of memory.
 */
bool *vperf_report__shown(const struct vperf_report *r, const struct vperf_report_slice *s,
			  size_t nr, int event);

/* Thread t's name: its comm, or ":tid" (in buf) when the recording never named it. */
const char *vperf_report__thread_name(const struct vperf_report *r, int32_t t, char *buf,
				      size_t len);

/* Where a thread lived: from its fork (else the recording's start) to its exit (else end). */
void vperf_report__lifetime(const struct vperf_report *r, int32_t thread, uint64_t *born,
			    uint64_t *died);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_SLICES_H */
