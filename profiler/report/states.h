/* SPDX-License-Identifier: MIT */
/*
 * Where a guest thread's time went, and its waits (wait.c; docs/states.md).
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_STATES_H
#define VPERF_REPORT_STATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"
#include "slices.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- where a guest thread's time went (docs/states.md) ---------------- */

enum vperf_report_state {
	VPERF_STATE_GUEST,		/* on a vCPU that runs in the guest (user or kernel) */
	VPERF_STATE_KVM,		/* on a vCPU in the host for a VM exit, in KVM (detail: the
					 * hardware exit reason) */
	VPERF_STATE_VMM,		/* ... in the VMM, user space (detail: the exit's reason) */
	VPERF_STATE_PREEMPTED,		/* on a vCPU whose host thread is runnable, not running
					 * (detail: the host thread that took its CPU) */
	VPERF_STATE_HOST_SLEEP,		/* on a vCPU whose host thread sleeps in the host
					 * (detail: halted, or sleeping) */
	VPERF_STATE_RUNNABLE,		/* runnable in the guest, on no vCPU (detail: preempted
					 * in the guest, or woken, not yet run) */
	VPERF_STATE_WAIT_TIMER,		/* blocked until a timer interrupt woke it (detail: vector) */
	VPERF_STATE_WAIT_DEVICE,	/* ... a device's interrupt (detail: vector and irq) */
	VPERF_STATE_WAIT_THREAD,	/* ... another thread (detail: the waker, comm:tid) */
	VPERF_STATE_WAIT_UNKNOWN,	/* ... no waker recorded (detail: why not) */
	VPERF_STATE_NR
};

extern const char *const vperf_report_state_names[VPERF_STATE_NR];

#define VPERF_STATE_DETAIL	48

struct vperf_report_state_row {
	enum vperf_report_state state;
	char detail[VPERF_STATE_DETAIL];
	uint64_t ns, count;		/* time in it; the intervals (exits, waits, preemptions) */
};

/*
 * One guest thread's wall time from start (its fork, else the recording's start) to end (its
 * exit, else the recording's end), every ns in exactly one row; or, with vcpu >= 0, one
 * vCPU's over the recording (GUEST's detail then says whether a thread or the idle task ran).
 */
struct vperf_report_states {
	int32_t thread;			/* index in threads; -1 for a vCPU's table */
	int32_t vcpu;			/* the vCPU of a vCPU's table, else -1 */
	uint64_t start, end;
	struct vperf_report_state_row *rows;	/* most time first */
	size_t nr_rows;
	uint64_t samples_user, samples_kernel;	/* its samples by the sampled frame */
	bool forked, exited;		/* start is its fork, end its exit (else the guest's
					 * first traced event, the recording's end) */
};

/* One wait of a guest thread: blocked from start to woken, then runnable until end. */
struct vperf_report_wait {
	int32_t thread;
	uint32_t vcpu;			/* where it ran again */
	uint64_t start, woken, end;
	enum vperf_report_state cause;	/* a VPERF_STATE_WAIT_* */
	char detail[VPERF_STATE_DETAIL];
	int32_t waker;			/* the waking thread (WAIT_THREAD), else -1 */
};

/* A piece of a guest thread's life in one state (VPERF_ANALYSE_SPANS). */
struct vperf_report_span {
	uint64_t start, end;
	int32_t thread;
	uint32_t vcpu;			/* on it; UINT32_MAX: on no vCPU (runnable, waiting) */
	uint8_t state;			/* enum vperf_report_state */
};

/*
 * One VM exit (VPERF_ANALYSE_EXITS): from a vCPU's kvm_exit to its next kvm_entry, with where
 * that time went on the host, cut from the same segments as the vCPU's states (so the exits'
 * costs add up to its KVM, VMM, PREEMPTED and HOST_SLEEP time).
 */
struct vperf_report_exit {
	uint64_t ts, end;		/* the kvm_exit; the next kvm_entry (or the recording's end) */
	size_t tlev;			/* its kvm_exit in tlevs (frame: the guest RIP's) */
	int32_t thread;			/* the guest thread on the vCPU then (the one whose slice
					 * holds ts, as its states count it; else the last guest
					 * sched_switch's on that vCPU), -1: none known */
	uint32_t vcpu;
	uint64_t reason;		/* the hardware exit reason (vperf_report_exit_name) */
	uint64_t kvm_ns, vmm_ns;	/* its cost: in KVM, in the VMM (user space), */
	uint64_t preempted_ns, sleep_ns; /* runnable on the host, asleep there (a halt) */
};

#define VPERF_ANALYSE_SPANS	1u	/* also every guest thread's spans (timelines) */
#define VPERF_ANALYSE_EXITS	2u	/* also every VM exit with its cost (report --exits) */

struct vperf_report_analysis {
	struct vperf_report_states *threads;	/* one per guest thread with a sched_switch */
	size_t nr_threads;
	struct vperf_report_states *vcpus;	/* one per vCPU */
	size_t nr_vcpus;
	struct vperf_report_wait *waits;	/* every wait, by thread then start */
	size_t nr_waits;
	struct vperf_report_span *spans;	/* with VPERF_ANALYSE_SPANS: by thread, then start */
	size_t nr_spans;
	struct vperf_report_exit *exits;	/* with VPERF_ANALYSE_EXITS: by vCPU, then time */
	size_t nr_exits;
	bool host_events;		/* kvm_exit/kvm_entry of the vCPU threads were recorded */
	bool svm;			/* exit reasons are AMD SVM codes (else Intel VMX) */
};

/*
 * Analyse a VM recording's guest threads and vCPUs (docs/states.md: what each state is and
 * how it is found).  0, -ENOENT (no guest scheduling events: not a `vperf vm record`
 * recording of a guest with vperf_guest.ko tracing), or -ENOMEM.
 */
int vperf_report__analyse(const struct vperf_report *r, unsigned int flags,
			  struct vperf_report_analysis *a) __attribute__((warn_unused_result));
void vperf_report_analysis__exit(struct vperf_report_analysis *a);

/* A hardware exit reason's name ("npf", "io_instruction"), or NULL if unknown. */
const char *vperf_report_exit_name(uint64_t reason, bool svm);

/*
 * The wait of thread t that ended last before ts (its end <= ts), or NULL: what the thread
 * was waiting for before it ran to ts (the critical path's step back).
 */
const struct vperf_report_wait *vperf_report_analysis__wait_before(
	const struct vperf_report_analysis *a, int32_t t, uint64_t ts);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_STATES_H */
