/* SPDX-License-Identifier: MIT */
/*
 * The host kernel's events for --record (record.c): kvm and sched events of the vCPU threads,
 * captured through tracefs with the x86-tsc trace clock, copied verbatim into the raw recording
 * (VPERF_RAWREC_TRACEFS_* chunks) and decoded later, on the host, by profiler/record/hostevents.c.
 *
 * Plain file I/O on tracefs (vperf-vmm is static: no libtracefs).  One private instance,
 * instances/vperf-<pid>, so the host's own tracing is left alone.  docs/recording.md, "Host kernel
 * events", says what is captured, the filters, the clock, the last page and the losses.
 *
 * What goes into the recording, in this order:
 *   META            "host_trace_*=..." lines: clock, instance, page size, buffer, CPUs, events
 *                   enabled, events missing, stale instances removed
 *   TRACEFS_HEADER  the instance's events/header_page (the ring-buffer page layout and size)
 *   TRACEFS_FORMAT  "system\0event\0" + events/<system>/<event>/format, one per enabled event
 *   TRACEFS_PAGES   cpu = host CPU; payload: one or more whole ring-buffer pages of that CPU, each
 *                   exactly the page size header_page gives (flags 0).  A page is one read of
 *                   trace_pipe_raw: its header's commit field says how much of it holds events;
 *                   the rest is zeros.  Pages of one CPU are in the order the kernel gave them.
 *   TRACEFS_STATS   cpu = host CPU; the text of per_cpu/cpu<N>/stats after the last page
 *
 * Not thread safe: one thread at a time (record.c: the recorder thread polls; the stop comes after
 * that thread was joined).
 */
#ifndef VMM_TRACEFS_H
#define VMM_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct hosttrace;

/*
 * Where the chunks go (vperf-vmm: its raw recording, record.c): chunk(arg, type, cpu, data, size)
 * writes one VPERF_RAWREC_* chunk, 0 or -errno.  A callback, so that this file needs nothing of
 * the recorder's.
 */
struct hosttrace_sink {
	int (*chunk)(void *arg, uint32_t type, uint32_t cpu, const void *data, uint32_t size);
	void *arg;
};

/* Which threads an event is kept for (the filter written to the event's filter file). */
enum hosttrace_filter {
	HOSTTRACE_FILTER_COMMON_PID,	/* common_pid is one of the tids (kvm events) */
	HOSTTRACE_FILTER_SWITCH,	/* prev_pid or next_pid is one of the tids (sched_switch) */
	HOSTTRACE_FILTER_PID,		/* pid is one of the tids (sched_wakeup: the wakee) */
};

struct hosttrace_event {
	const char *system;
	const char *name;
	enum hosttrace_filter filter;
};

/* kvm:kvm_entry, kvm:kvm_exit, kvm:kvm_inj_virq, sched:sched_switch, sched:sched_wakeup */
extern const struct hosttrace_event hosttrace_default_events[];
extern const size_t hosttrace_nr_default_events;

/*
 * Set up a private tracefs instance (instances/vperf-<pid>) for the threads tids[nr_tids]: trace
 * clock x86-tsc, buffer_kb per CPU, the default events with their filters; write the META,
 * TRACEFS_HEADER and TRACEFS_FORMAT chunks into sink and start tracing.
 *
 * Returns 0, with *missing true (and why saying which) when some events are not in this kernel
 * while others are: those others are recorded.  Or -errno with why saying what is missing for a
 * person (not root, no tracefs mounted, no x86-tsc trace clock, none of the events); nothing is
 * left behind then (the instance is removed).  An instance vperf-<pid> whose pid does not exist
 * (left by a killed vperf-vmm) is removed first, and the META chunk says so.
 */
int hosttrace__start(struct hosttrace **out, const pid_t *tids, size_t nr_tids,
		     unsigned int buffer_kb, struct hosttrace_sink sink, char *why, size_t why_len,
		     bool *missing) __must_check;

/* The same with a table of events of one's own (the tests use it to ask for a missing one). */
int hosttrace__start_events(struct hosttrace **out, const pid_t *tids, size_t nr_tids,
			    unsigned int buffer_kb, const struct hosttrace_event *events,
			    size_t nr_events, struct hosttrace_sink sink, char *why, size_t why_len,
			    bool *missing) __must_check;

/*
 * Copy the whole pages each CPU has now into TRACEFS_PAGES chunks (splice from trace_pipe_raw,
 * non-blocking: a page the kernel is still writing stays there).  Never blocks; meant to be called
 * every RECORD_PERIOD_MS from the recorder thread.  0 or the first -errno (a chunk that could
 * not be written); the next call tries again.
 */
int hosttrace__poll(struct hosttrace *ht);

/*
 * Stop tracing, copy every page left including the last partial one of each CPU, write each
 * CPU's stats (TRACEFS_STATS) and remove the instance.  Safe after a failed poll; a second call
 * does nothing.  0 or the first -errno (the instance is removed even then, if it can be).
 */
int hosttrace__stop(struct hosttrace *ht);

/* Free.  Without a stop first: stop tracing, remove the instance, copy nothing.  NULL: no-op. */
void hosttrace__delete(struct hosttrace *ht);

/* The instance's directory, e.g. /sys/kernel/tracing/instances/vperf-123 (tests, messages). */
const char *hosttrace__instance(const struct hosttrace *ht);

#endif /* VMM_TRACEFS_H */
