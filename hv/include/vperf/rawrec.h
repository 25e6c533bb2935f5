/* SPDX-License-Identifier: MIT */
/*
 * The raw recording: what vperf-vmm writes with --record FILE, and what
 * `vperf vm record` turns into the CTF recording (docs/recording.md,
 * "The raw recording").  It lives on the host only: it is not guest ABI.
 *
 * vperf-vmm is a static program with no libraries beyond libc, so it
 * writes what it sees as it sees it: the guest's trace records as it
 * drained and validated them (docs/abi.md 2.5), its own exit records, the
 * clock facts, and the host kernel's tracefs ring-buffer pages verbatim
 * (with the format files that decode them).  Decoding and sorting happen
 * later, on the host, in profiler/record.
 *
 * File: one struct vperf_rawrec_header, then chunks, each a struct
 * vperf_rawrec_chunk and `size` bytes of payload, padded with zeros to a
 * multiple of 8.  All integers are the writer's (x86: little-endian).  A
 * writer killed at any time leaves a prefix of whole chunks and maybe one
 * cut chunk: a reader uses every whole chunk and reports the cut one.  A
 * file that ends without a VPERF_RAWREC_END chunk was not finished.
 */
#ifndef VPERF_RAWREC_H
#define VPERF_RAWREC_H

#include <linux/types.h>

#define VPERF_RAWREC_MAGIC	"VPERFRAW"	/* 8 bytes, no NUL */
#define VPERF_RAWREC_VERSION	1

struct vperf_rawrec_header {
	char magic[8];
	__u32 size;			/* sizeof(struct vperf_rawrec_header) */
	__u32 version;			/* VPERF_RAWREC_VERSION */
	__u64 tsc_khz;			/* the vCPUs' TSC frequency (KVM_GET_TSC_KHZ) */
	__u32 nr_vcpus;
	__u32 flags;			/* 0 */
	__u64 start_tsc;		/* host TSC when recording started */
	__u64 start_realtime_ns;	/* CLOCK_REALTIME then */
	__u64 start_monotonic_ns;	/* CLOCK_MONOTONIC then */
	__u64 reserved[2];
};

struct vperf_rawrec_chunk {
	__u32 type;			/* enum vperf_rawrec_type */
	__u32 size;			/* payload bytes, not counting padding */
	__u32 cpu;			/* vCPU (guest, vmm chunks) or host CPU (tracefs) */
	__u32 flags;			/* 0 unless the type says */
};

#define VPERF_RAWREC_MAX_CHUNK	(16u << 20)	/* a reader refuses bigger ones */

enum vperf_rawrec_type {
	/* vCPU cpu's guest trace records (docs/abi.md 2.5), validated, in ring order. */
	VPERF_RAWREC_GUEST	  = 1,
	/* struct vperf_rawrec_guest_lost: what vCPU cpu's ring lost up to now. */
	VPERF_RAWREC_GUEST_LOST	  = 2,
	/* struct vperf_rawrec_exit[]: vCPU cpu's exits that reached the VMM, in order. */
	VPERF_RAWREC_EXITS	  = 3,
	/* struct vperf_rawrec_lost: exit records the VMM could not keep (cpu: vCPU). */
	VPERF_RAWREC_EXITS_LOST	  = 4,
	/* struct vperf_rawrec_tsc: vCPU cpu's TSC offset. */
	VPERF_RAWREC_TSC_OFFSET	  = 5,
	/* struct vperf_rawrec_tsc_sample: a TRACE_FLUSH's guest TSC and the host's (cpu: vCPU). */
	VPERF_RAWREC_TSC_SAMPLE	  = 6,
	/* tracefs events/header_page, verbatim text. */
	VPERF_RAWREC_TRACEFS_HEADER = 7,
	/* "system\0event\0" then events/<system>/<event>/format, verbatim text. */
	VPERF_RAWREC_TRACEFS_FORMAT = 8,
	/* Whole ring-buffer pages of host CPU cpu (per_cpu/cpu<cpu>/trace_pipe_raw). */
	VPERF_RAWREC_TRACEFS_PAGES = 9,
	/* Text: per_cpu/cpu<cpu>/stats at the end (overrun, dropped events). */
	VPERF_RAWREC_TRACEFS_STATS = 10,
	/* Text: "key=value\n" lines: what was recorded and how, and what was not and why. */
	VPERF_RAWREC_META	  = 11,
	/* struct vperf_rawrec_end: the writer finished. */
	VPERF_RAWREC_END	  = 12,
	VPERF_RAWREC_NR_TYPES
};

struct vperf_rawrec_guest_lost {
	__u64 host_tsc;			/* when the host saw it */
	__u64 invalid_bytes;		/* bytes the host discarded: invalid records (running total) */
	__u64 invalid_records;		/* drains that stopped at an invalid record (running total) */
	__u64 guest_lost;		/* the ring header's lost, as last read */
	/* Last: a reader takes the 32-byte form of older writers as 0 here. */
	__u64 bad_headers;		/* drains refused for an impossible head (running total) */
};

/* reason: KVM_EXIT_*; for KVM_EXIT_IO addr is the port, for KVM_EXIT_MMIO the GPA. */
struct vperf_rawrec_exit {
	__u64 exit_tsc;			/* host TSC when KVM_RUN returned */
	__u64 resume_tsc;		/* host TSC when the VMM called KVM_RUN again */
	__u64 addr;
	__u32 reason;
	__u32 flags;			/* VPERF_RAWREC_EXIT_WRITE: an I/O or MMIO write */
};
#define VPERF_RAWREC_EXIT_WRITE	(1u << 0)

struct vperf_rawrec_lost {
	__u64 host_tsc;
	__u64 count;			/* running total */
};

enum vperf_rawrec_tsc_how {
	VPERF_RAWREC_TSC_KVM_ATTR = 1,	/* KVM_VCPU_TSC_OFFSET: exact */
	VPERF_RAWREC_TSC_DEBUGFS  = 2,	/* KVM's debugfs vcpuN/tsc-offset (vperf kvm record): exact */
};

/* host TSC = guest TSC - offset, from host_tsc on (until the next one). */
struct vperf_rawrec_tsc {
	__u64 host_tsc;			/* when it was read */
	__s64 offset;
	__u32 how;			/* enum vperf_rawrec_tsc_how */
	__u32 reserved;
};

/* guest_tsc was read before host_tsc: guest_tsc - offset <= host_tsc. */
struct vperf_rawrec_tsc_sample {
	__u64 guest_tsc;
	__u64 host_tsc;
};

struct vperf_rawrec_end {
	__u64 host_tsc;
	__u64 monotonic_ns;
};

_Static_assert(sizeof(struct vperf_rawrec_header) == 72, "rawrec header layout");
_Static_assert(sizeof(struct vperf_rawrec_chunk) == 16, "rawrec chunk layout");
_Static_assert(sizeof(struct vperf_rawrec_guest_lost) == 40, "rawrec guest_lost layout");
_Static_assert(sizeof(struct vperf_rawrec_exit) == 32, "rawrec exit layout");
_Static_assert(sizeof(struct vperf_rawrec_lost) == 16, "rawrec lost layout");
_Static_assert(sizeof(struct vperf_rawrec_tsc) == 24, "rawrec tsc layout");
_Static_assert(sizeof(struct vperf_rawrec_tsc_sample) == 16, "rawrec tsc_sample layout");
_Static_assert(sizeof(struct vperf_rawrec_end) == 16, "rawrec end layout");

#endif /* VPERF_RAWREC_H */
