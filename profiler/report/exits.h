/* SPDX-License-Identifier: MIT */
/*
 * VM exits grouped by guest thread, guest code and reason, with what they cost (exits.c;
 * docs/states.md, "Exits").  Part of vperf_report (report.h gathers them); 0 or a negative
 * errno everywhere, and a library function never prints.
 */
#ifndef VPERF_REPORT_EXITS_H
#define VPERF_REPORT_EXITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "containers.h"
#include "session.h"
#include "states.h"

#ifdef __cplusplus
extern "C" {
#endif

enum vperf_exit_key {
	VPERF_EXIT_KEY_TID,		/* the guest thread on the vCPU ("thread" too) */
	VPERF_EXIT_KEY_COMM,		/* its name */
	VPERF_EXIT_KEY_SYMBOL,		/* the function at the guest RIP (guest kernel or user) */
	VPERF_EXIT_KEY_DSO,		/* its file, "[kernel.kallsyms]" */
	VPERF_EXIT_KEY_REASON,		/* the hardware exit reason's name */
	VPERF_EXIT_KEY_VCPU,
	VPERF_EXIT_NR_KEYS
};

extern const char *const vperf_exit_key_names[VPERF_EXIT_NR_KEYS];

#define VPERF_EXIT_DEFAULT_SORT	"thread,symbol,reason"
#define VPERF_EXIT_NO_THREAD	"[no guest thread]"	/* an exit's comm before any (boot) */

/*
 * A VM recording's exits: vperf_report__analyse() with VPERF_ANALYSE_EXITS, and -ENOENT (a
 * freed) when the recording has no host kvm_exit events of its vCPU threads to take them from.
 * 0, -ENOENT or -ENOMEM.
 */
int vperf_report__analyse_exits(const struct vperf_report *r, struct vperf_report_analysis *a)
	__attribute__((warn_unused_result));

/* What a person is told when that is -ENOENT, after "DIR": how such a recording is made. */
#define VPERF_EXIT_NEED	"has no host kvm_exit events of its vCPU threads: record the VM with " \
			"`vperf vm record` (without --no-host-events) or `vperf kvm record` " \
			"(docs/states.md, \"Exits\")"

/* Parse a --sort list for --exits: as vperf_report_keys_parse, -EINVAL with why. */
int vperf_exit_keys_parse(const char *list, enum vperf_exit_key *keys, size_t max, size_t *nr,
			  char *why, size_t why_len);

struct vperf_exit_row {
	const char *key[VPERF_EXIT_NR_KEYS];	/* per key of the table, in its order */
	uint64_t count;
	uint64_t ns, kvm_ns, vmm_ns, preempted_ns, sleep_ns;	/* total cost; its parts */
	uint64_t p99_ns, max_ns;	/* of one exit's cost (nearest rank) */
	int32_t thread;			/* the one guest thread of its exits, -1: several or none */
	double share;			/* ns over that thread's wall time (docs/states.md), -1:
					 * no one thread */
};

/* The exits' rows, most cost first. */
struct vperf_exit_table {
	enum vperf_exit_key keys[VPERF_EXIT_NR_KEYS];
	size_t nr_keys;
	struct vperf_exit_row *rows;
	size_t nr_rows;
	uint64_t count, ns;		/* over every exit */
	uint64_t no_thread;		/* exits before any guest sched_switch on their vCPU */
	struct vperf_report_strtab owned;	/* key strings made for rows */
};

/*
 * Group a's exits (vperf_report__analyse with VPERF_ANALYSE_EXITS) by keys; the symbols
 * resolve through r.  0 or -ENOMEM.
 */
int vperf_exit_table__build(struct vperf_report *r, const struct vperf_report_analysis *a,
			    const enum vperf_exit_key *keys, size_t nr_keys,
			    struct vperf_exit_table *t) __attribute__((warn_unused_result));
void vperf_exit_table__exit(struct vperf_exit_table *t);

#define VPERF_EXIT_COST_EVENT	"vperf::exit-cost"

/*
 * Make a's exits samples of r, so that every export of samples draws them (flame graphs, pprof,
 * folded stacks): one sample per exit of a new event VPERF_EXIT_COST_EVENT (returned in
 * *event, its bit set in r->cost_events), its period the exit's cost in ns, its stack the guest
 * function at its RIP under the exit's reason (leaf), its thread the guest thread (or, for none,
 * a thread named VPERF_EXIT_NO_THREAD).  0, -ENOMEM, or -E2BIG when r has 64 events already
 * (r->cost_events' bits); r is then as it was.
 */
int vperf_report__add_exit_samples(struct vperf_report *r, const struct vperf_report_analysis *a,
				   int *event) __attribute__((warn_unused_result));

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_EXITS_H */
