/* SPDX-License-Identifier: MIT */
/*
 * `vperf kvm record`'s recorder: a raw recording (hv/include/vperf/rawrec.h) of a KVM VMM that
 * vperf did not start, taken from outside through what stock KVM and stock QEMU offer:
 *   - the host kernel's kvm and sched events of the VMM's vCPU threads (tracefs, x86-tsc clock:
 *     the host TSC), through the capture vperf-vmm uses (hv/vmm/tracefs.h);
 *   - the guest's trace records from the shared-memory channel's file (shm.h, docs/abi.md 8),
 *     when there is one;
 *   - each vCPU's TSC offset from KVM's debugfs, at the start and at the end, so that the
 *     guest's TSC maps to the host's exactly;
 *   - the host TSC's frequency, measured against CLOCK_MONOTONIC_RAW over the whole recording.
 * The file is the one vperf-vmm writes, so the converter (convert.h) and everything after it
 * reads it unchanged.  A library: nothing printed; notes through a callback.
 */
#ifndef VPERF_RECORD_KVMREC_H
#define VPERF_RECORD_KVMREC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum vperf_kvm_end {
	VPERF_KVM_END_STOPPED = 1,	/* *opts.stop was set (a signal) */
	VPERF_KVM_END_DURATION,		/* the duration asked for passed */
	VPERF_KVM_END_VMM_EXITED,	/* the VMM exited: the recording holds it up to then */
	VPERF_KVM_END_ERROR,		/* a write failed, or the file reached max_bytes */
};

struct vperf_kvm_rec_opts {
	size_t size;			/* sizeof(struct vperf_kvm_rec_opts) */
	pid_t pid;			/* the VMM */
	const char *raw_path;		/* created here (it must not exist), mode 0600 */
	const char *shm_path;		/* the channel's file, NULL: no guest records */
	bool host_events;		/* the host kernel's kvm and sched events */
	uint64_t duration_ns;		/* 0: until *stop or the VMM's exit */
	uint64_t max_bytes;		/* the most the file may hold, 0: 1 GiB */
	volatile sig_atomic_t *stop;	/* set from a signal handler to stop */
	const char *proc_root;		/* NULL: /proc (tests give another) */
	const char *debugfs_root;	/* NULL: /sys/kernel/debug */
	/* something a person should know, as it happens (a missing event, a late VMM) */
	void (*note)(void *arg, const char *msg);
	/* everything is set up and the recording runs (a command says so then, not before) */
	void (*started)(void *arg);
	void *note_arg;			/* both callbacks' */
};

struct vperf_kvm_rec_stats {
	size_t size;			/* sizeof(struct vperf_kvm_rec_stats) */
	pid_t pid;
	char comm[17];
	unsigned int nr_vcpus;
	unsigned int nr_vcpu_threads;	/* vCPUs whose thread the names gave */
	uint64_t tsc_khz;
	uint64_t raw_bytes;
	uint64_t duration_ns;
	uint64_t guest_records;		/* from the channel, valid */
	uint64_t guest_refused_bytes;	/* from the channel, refused */
	uint64_t guest_bad_headers;
	uint64_t guest_layouts_refused;
	bool host_events;		/* host_events_why says what is missing, if anything */
	char host_events_why[256];
	bool tsc_offsets;		/* every vCPU's offset was read */
	char tsc_why[256];
	enum vperf_kvm_end end;
	char end_why[256];
};

/*
 * Record until the end (enum vperf_kvm_end).  0 with the file finished (END chunk) whatever the
 * end was; or -errno with why when nothing could be recorded (not a KVM VMM, the file cannot be
 * created): then no file is left behind.
 */
int vperf_kvm__record(const struct vperf_kvm_rec_opts *opts, struct vperf_kvm_rec_stats *st,
		      char *why, size_t why_len);

#endif /* VPERF_RECORD_KVMREC_H */
