/* SPDX-License-Identifier: MIT */
/*
 * vperf-vmm --record FILE: the raw recording (hv/include/vperf/rawrec.h).
 *
 * One recorder per VM.  The vCPU threads append their exit records to a
 * buffer of their own (no lock, no system call per exit); a recorder thread
 * wakes every RECORD_PERIOD_MS, drains the guest's trace rings through
 * libvperf-hv, moves the exit records and the host kernel's events
 * (tracefs.c) into the file, and at the stop writes the rest and an END
 * chunk.  Chunks are written whole with one write(2) each, so a killed VMM
 * leaves whole chunks behind.
 */
#ifndef VMM_RECORD_H
#define VMM_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define RECORD_PERIOD_MS	10
#define RECORD_DEFAULT_MAX_MIB	256	/* --record-max's default */
#define RECORD_MAX_MAX_MIB	65536

struct vm;
struct vcpu;
struct recorder;

struct record_config {
	const char *path;		/* the raw recording to create */
	bool host_events;		/* also record the host kernel's events (tracefs.c) */
	/*
	 * The most the file may hold, header included (0: RECORD_DEFAULT_MAX_MIB): a chunk
	 * that would go past it ends the recording there, as a write error does.
	 */
	uint64_t max_bytes;
};

/*
 * Create the file and write its header; the thread starts with recorder__start().  The file is
 * created as perf creates perf.data: a regular file already at path is renamed to path.old,
 * anything else there (a symbolic link, a directory) is refused, and the new one is made with
 * O_EXCL | O_NOFOLLOW, mode 0600: it holds the guest's and the host's events, for its user only.
 */
int recorder__new(struct vm *vm, const struct record_config *cfg, struct recorder **out) __must_check;
/* After the vCPU threads exist (their tids go into the metadata and the tracefs filters). */
int recorder__start(struct recorder *rec) __must_check;
/* After the vCPU threads stopped: drain everything, write END, close. */
void recorder__stop(struct recorder *rec);
void recorder__delete(struct recorder *rec);

/*
 * Append one chunk (type from enum vperf_rawrec_type) to the file, whole:
 * safe from any thread.  Returns 0 or -errno (the recorder then stops
 * recording and says why once; the VM runs on).
 */
int recorder__chunk(struct recorder *rec, uint32_t type, uint32_t cpu, uint32_t flags,
		    const void *payload, uint32_t size);

/*
 * pvdev.c's libvperf-hv ops: a drain's valid guest records, a TRACE_FLUSH's clock sample.  The
 * samples are kept, not written: each drain of the recorder writes at most one per vCPU (of those
 * since the last, the tightest bound: largest guest - host TSC), so that a guest looping on
 * TRACE_FLUSH does not write into the file at its own pace.
 */
void recorder__guest_records(struct recorder *rec, unsigned int vcpu, const void *records, size_t len);
void recorder__clock_sample(struct recorder *rec, unsigned int vcpu, uint64_t guest_tsc);

/* Current host TSC (what every host time in the recording is). */
static inline uint64_t recorder__tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * The vCPU thread's hooks: exit_begin right after KVM_RUN returned,
 * exit_end right before the next KVM_RUN.  No-ops without a recorder.
 */
void recorder__exit_begin(struct vcpu *vcpu);
void recorder__exit_end(struct vcpu *vcpu);

#endif /* VMM_RECORD_H */
