/* SPDX-License-Identifier: MIT */
/*
 * The host kernel's events for --record (record.c): kvm and sched events of the vCPU threads,
 * captured through tracefs with the x86-tsc trace clock, copied verbatim into the raw recording
 * (VPERF_RAWREC_TRACEFS_* chunks) and decoded later, on the host, by profiler/record.
 */
#ifndef VMM_TRACEFS_H
#define VMM_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct hosttrace;
struct recorder;

/*
 * Set up a private tracefs instance for the vCPU threads tids[nr_tids] with buffer_kb per CPU,
 * write the formats into rec and start tracing.  0 (with *missing true if some events are not in
 * this kernel, why saying which), or -errno with why saying what is missing (not root, no
 * tracefs, no x86-tsc clock); nothing is left behind then.
 */
int hosttrace__start(struct hosttrace **out, const pid_t *tids, size_t nr_tids, unsigned int buffer_kb,
		     struct recorder *rec, char *why, size_t why_len, bool *missing);
/* Copy the pages available now into rec; never blocks. */
int hosttrace__poll(struct hosttrace *ht);
/* Stop, copy the rest and the per-CPU stats, remove the instance. */
int hosttrace__stop(struct hosttrace *ht);
void hosttrace__delete(struct hosttrace *ht);

#endif /* VMM_TRACEFS_H */
