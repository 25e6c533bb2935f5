/* SPDX-License-Identifier: MIT */
/*
 * The vperf paravirtual ABI, version 1: the one header shared by the
 * hypervisor (hv/) and the guest (guest-lib/, including the kernel module).
 * docs/abi.md is the prose specification; this header is its C form.
 * Every layout is fixed-size, little-endian, naturally aligned, and checked
 * by _Static_assert below; a second implementation needs only this file
 * and docs/abi.md.
 *
 * Discovery: CPUID leaf VPERF_CPUID_BASE returns the signature, the next
 * leaf the ABI version, features, hypercall port and interrupt line.
 *
 * Hypercalls: the guest writes the operation number (32 bits) to the
 * hypercall I/O port with `out %eax, %dx`; arguments are in RBX, RCX,
 * RSI, RDI; the result is in RAX on return: >= 0 success, < 0 a negative
 * VPERF_E* code.  Every other register is preserved.  The port exit is
 * the cheapest trap a userspace VMM on KVM sees, and KVM's sync-regs
 * area hands the VMM the argument registers without another ioctl.
 */
#ifndef VPERF_ABI_H
#define VPERF_ABI_H

#include <linux/types.h>

#define VPERF_ABI_VERSION	1

/* ---- discovery ---- */

#define VPERF_CPUID_BASE	0x40000100u
/* Base leaf: EAX = highest vperf leaf; EBX, ECX, EDX = "VPERF-KVM-PV". */
#define VPERF_CPUID_SIG_EBX	0x52455056u	/* "VPER" */
#define VPERF_CPUID_SIG_ECX	0x564b2d46u	/* "F-KV" */
#define VPERF_CPUID_SIG_EDX	0x56502d4du	/* "M-PV" */
/* Info leaf: EAX = ABI version, EBX = features, ECX = port, EDX = GSI. */
#define VPERF_CPUID_INFO	(VPERF_CPUID_BASE + 1)

#define VPERF_FEAT_COUNTERS	(1u << 0)	/* virtual counters */
#define VPERF_FEAT_OVERFLOW	(1u << 1)	/* overflow interrupts */
#define VPERF_FEAT_TRACE	(1u << 2)	/* trace rings */
#define VPERF_FEAT_HW_EVENTS	(1u << 3)	/* the host has a PMU */
#define VPERF_FEAT_DOORBELL	(1u << 4)	/* the counter doorbell page */
#define VPERF_FEAT_OVERFLOW_NMI	(1u << 5)	/* OVERFLOW_SET's VPERF_OVERFLOW_NMI */
#define VPERF_FEAT_TRACE_V2	(1u << 6)	/* version 2 rings are recorded (2.5) */
#define VPERF_FEAT_EVENT_INFO	(1u << 7)	/* VPERF_HC_EVENT_INFO: the host's event list */
#define VPERF_FEAT_TRACE_MMAP	(1u << 8)	/* the host records VPERF_TRACE_MMAP (2.5) */
#define VPERF_FEAT_TRACE_KSYM	(1u << 9)	/* ... and guest module symbols in them (2.5) */

/*
 * Doorbell leaf (present when the base leaf's EAX reaches it and the
 * feature bit is set): EAX = the doorbell page's GPA bits 31..0, EBX = bits
 * 63..32, ECX = its size in bytes.  The page is not RAM: an aligned 8-byte
 * load at offset 8 * n (n < VPERF_MAX_COUNTERS) exits to the VMM and returns
 * the current value of counter n of the vCPU that loads (what SNAPSHOT would
 * write into its page).  Any other access reads all ones; writes are
 * ignored.  The guest kernel may map it into user space: a fresh counter
 * value for one exit and no guest system call (docs/abi.md 2.6).
 */
#define VPERF_CPUID_DOORBELL	(VPERF_CPUID_BASE + 2)
#define VPERF_DOORBELL_SIZE	4096u

#define VPERF_DEFAULT_PORT	0x5650u		/* 16-bit I/O port ("VP") */
#define VPERF_DEFAULT_GSI	5u		/* ISA IRQ 5, edge */

/* ---- hypercall operations (the value written to the port) ---- */

enum vperf_hc_op {
	VPERF_HC_VERSION	= 0,	/* -> ABI version | features << 32 */
	VPERF_HC_EXIT		= 1,	/* RBX = status: the VMM exits with it */
	VPERF_HC_UCALL		= 2,	/* RBX = vperf_ucall GPA: test reports */
	VPERF_HC_PAGE_REGISTER	= 3,	/* RBX = GPA of this vCPU's page, 0: off */
	VPERF_HC_COUNTERS_SET	= 4,	/* RBX = GPA of vperf_event_desc[RCX] */
	VPERF_HC_SNAPSHOT	= 5,	/* refresh this vCPU's page now */
	VPERF_HC_OVERFLOW_SET	= 6,	/* RBX = counter, RCX = period, 0: off,
					 * RSI = VPERF_OVERFLOW_* flags */
	VPERF_HC_OVERFLOW_ACK	= 7,	/* RBX = bits of overflow_status to clear */
	VPERF_HC_TRACE_REGISTER	= 8,	/* RBX = GPA, RCX = bytes: trace ring */
	VPERF_HC_TRACE_FLUSH	= 9,	/* drain this vCPU's trace ring now */
	VPERF_HC_EVENT_INFO	= 10,	/* RBX = index, RCX = GPA of a vperf_event_desc
					 * the host fills: entry `index` of the events
					 * it offers (docs/abi.md 2.3, "Discovery") */
	VPERF_HC_NR_OPS
};

/*
 * OVERFLOW_SET flags.  VPERF_OVERFLOW_NMI (with VPERF_FEAT_OVERFLOW_NMI):
 * the counter's overflows raise an NMI on the vCPU whose counter it is,
 * not the device's interrupt line, so that the guest's handler runs on
 * that vCPU and sees the thread the overflow interrupted (sampling).  The
 * page's overflow_status has the counter's bit when the NMI arrives.
 */
#define VPERF_OVERFLOW_NMI	(1u << 0)
#define VPERF_OVERFLOW_FLAGS	VPERF_OVERFLOW_NMI

/* Error results (returned negated in RAX). */
enum vperf_err {
	VPERF_EINVAL	= 1,	/* bad argument */
	VPERF_ENOSYS	= 2,	/* unknown operation */
	VPERF_EFAULT	= 3,	/* GPA range outside guest memory */
	VPERF_EPERM	= 4,	/* event not allowed by the host's allowlist */
	VPERF_ENOENT	= 5,	/* unknown event name */
	VPERF_ENODEV	= 6,	/* event not countable on this host (no PMU) */
	VPERF_EBUSY	= 7,	/* resource in use (e.g. page overlaps another) */
	VPERF_ENOSPC	= 8,	/* too many counters, ring too large */
	VPERF_ESTATE	= 9,	/* operation out of order (no page registered) */
};

/* ---- per-vCPU shared page (guest memory, written by the host) ---- */

#define VPERF_MAX_COUNTERS	16
#define VPERF_PAGE_SIZE		4096u

struct vperf_counter_value {
	__u64 value;		/* count, since COUNTERS_SET */
	__u64 enabled;		/* ns enabled */
	__u64 running;		/* ns on a counter */
};

/*
 * The host writes `seq` odd, updates, then writes it even (release
 * order); a reader retries while seq is odd or changed.  The host updates
 * the page on VPERF_HC_SNAPSHOT and VPERF_HC_COUNTERS_SET, and before it
 * raises an overflow interrupt: never behind the guest's back otherwise,
 * so a page read costs the guest no exit and the host no work per exit.
 */
struct vperf_vcpu_page {
	__u32 size;			/* sizeof(struct vperf_vcpu_page) */
	__u32 version;			/* VPERF_ABI_VERSION */
	__u32 seq;
	__u32 nr_counters;
	__u64 overflow_status;		/* bit n: counter n overflowed */
	__u64 host_time_ns;		/* CLOCK_MONOTONIC of the last update */
	struct vperf_counter_value counters[VPERF_MAX_COUNTERS];
	__u64 overflow_throttled;	/* overflows that found the last one not yet
					 * taken: each doubled that counter's period
					 * (docs/abi.md 2.4, "Throttling") */
	__u64 reserved[7];
};

/* ---- counter configuration ---- */

enum vperf_source {
	VPERF_SRC_PERF		= 1,	/* host perf_event on the vCPU thread */
	VPERF_SRC_KVM_STAT	= 2,	/* a KVM binary statistic of the vCPU */
	VPERF_SRC_EXITS		= 3,	/* the VMM's exits of this vCPU */
	VPERF_SRC_STEAL		= 4,	/* vCPU thread run delay (schedstat) */
};

#define VPERF_EVENT_NAME_LEN	64

/* One virtual counter, as the guest asks for it (guest memory, read once). */
struct vperf_event_desc {
	__u32 source;			/* enum vperf_source */
	__u32 flags;			/* must be 0 in v1 */
	__u64 arg;			/* VPERF_SRC_EXITS: exit reason, ~0: all */
	char name[VPERF_EVENT_NAME_LEN];	/* NUL-terminated: libpfm4 event
						 * name (PERF) or stat name */
};

/* ---- guest-to-host test reports (like the KVM selftests' ucall) ---- */

enum vperf_ucall_cmd {
	VPERF_UCALL_PRINT	= 1,	/* print msg on the VMM's stderr */
	VPERF_UCALL_ASSERT	= 2,	/* a guest assertion failed: msg, args */
	VPERF_UCALL_VALUES	= 3,	/* report args[] for the host to check */
};

struct vperf_ucall {
	__u32 cmd;			/* enum vperf_ucall_cmd */
	__u32 nr_args;			/* <= 8 */
	__u64 args[8];
	char msg[128];			/* NUL-terminated */
};

/* ---- trace rings (docs/abi.md 2.5) ---- */

#define VPERF_TRACE_RING_V1	1	/* flow control only: no record format */
#define VPERF_TRACE_RING_V2	2	/* struct vperf_trace_rec records */

struct vperf_trace_ring {
	__u32 size;			/* sizeof(struct vperf_trace_ring) */
	__u32 version;			/* VPERF_TRACE_RING_V*, guest-written */
	__u64 data_size;		/* bytes of data after this header, 2^n */
	__u64 head;			/* written by the guest */
	__u64 tail;			/* written by the host */
	__u64 lost;			/* records the guest could not write */
	__u64 reserved[3];
};

/*
 * Version 2 records: a byte stream in the ring's data area (a record may
 * wrap from its end to its start).  Every record starts with this header;
 * size is the whole record's, a multiple of 8, from 24 to
 * VPERF_TRACE_REC_MAX.  tsc is the guest's time stamp counter when the event
 * happened (docs/abi.md 2.5 maps it to the host's).  pid/tid: the guest task
 * the event belongs to (0 for none: an idle vCPU, an interrupt).
 */
#define VPERF_TRACE_REC_MAX	1024u

struct vperf_trace_rec {
	__u16 size;
	__u16 type;			/* enum vperf_trace_type */
	__u16 cpu;			/* the guest CPU (vCPU) it was written on */
	__u16 flags;			/* 0; bits are defined per type */
	__u64 tsc;
	__u32 pid;
	__u32 tid;
};

enum vperf_trace_type {
	VPERF_TRACE_SCHED_SWITCH = 1,	/* vperf_trace_switch; pid/tid = prev */
	VPERF_TRACE_SCHED_WAKEUP = 2,	/* vperf_trace_wakeup; pid/tid = the waker */
	VPERF_TRACE_FORK	 = 3,	/* vperf_trace_fork; pid/tid = the parent */
	VPERF_TRACE_EXEC	 = 4,	/* vperf_trace_exec; pid/tid = the task */
	VPERF_TRACE_EXIT	 = 5,	/* vperf_trace_exit; pid/tid = the task */
	VPERF_TRACE_IRQ		 = 6,	/* vperf_trace_irq; pid/tid = interrupted */
	VPERF_TRACE_SAMPLE	 = 7,	/* vperf_trace_sample */
	VPERF_TRACE_MARK	 = 8,	/* vperf_trace_mark: a user-space marker */
	VPERF_TRACE_LOST	 = 9,	/* vperf_trace_lost: a producer's losses */
	VPERF_TRACE_MMAP	 = 10,	/* vperf_trace_mmap: executable mapping (FEAT_TRACE_MMAP) */
	VPERF_TRACE_NR_TYPES
};

#define VPERF_TRACE_COMM_LEN	16

struct vperf_trace_switch {
	struct vperf_trace_rec h;
	__u32 next_pid;
	__u32 next_tid;
	__u32 prev_state;		/* the kernel's TASK_* bits, 0: runnable */
	__u32 reserved;			/* 0 */
	char prev_comm[VPERF_TRACE_COMM_LEN];	/* NUL-padded */
	char next_comm[VPERF_TRACE_COMM_LEN];
};

struct vperf_trace_wakeup {
	struct vperf_trace_rec h;
	__u32 wakee_pid;
	__u32 wakee_tid;
	__u32 target_cpu;
	__u32 reserved;			/* 0 */
};

struct vperf_trace_fork {
	struct vperf_trace_rec h;
	__u32 child_pid;
	__u32 child_tid;
	char comm[VPERF_TRACE_COMM_LEN];
};

/* filename: NUL-terminated, the rest of the record (size - 40 bytes). */
struct vperf_trace_exec {
	struct vperf_trace_rec h;
	char comm[VPERF_TRACE_COMM_LEN];
	char filename[];
};

struct vperf_trace_exit {
	struct vperf_trace_rec h;
	__s32 exit_code;
	__u32 reserved;			/* 0 */
};

/*
 * An interrupt entry: vector is the x86 vector; kind what the guest kernel
 * says the vector is for (it learns its vectors when it loads).
 */
enum vperf_trace_irq_kind {
	VPERF_TRACE_IRQ_OTHER	 = 0,
	VPERF_TRACE_IRQ_TIMER	 = 1,	/* the local APIC timer */
	VPERF_TRACE_IRQ_RESCHED	 = 2,	/* reschedule IPI */
	VPERF_TRACE_IRQ_CALLFUNC = 3,	/* function-call IPI (single or many) */
	VPERF_TRACE_IRQ_DEVICE	 = 4,	/* a device interrupt: irq is its number */
	VPERF_TRACE_IRQ_NR_KINDS
};

struct vperf_trace_irq {
	struct vperf_trace_rec h;
	__u32 vector;
	__u32 kind;			/* enum vperf_trace_irq_kind */
	__u32 irq;			/* the guest's IRQ number, ~0: none */
	__u32 reserved;			/* 0 */
};

/*
 * A sample: counts[nr_counts] then callchain[nr_callchain] follow.  h.flags
 * bit 0 (VPERF_TRACE_SAMPLE_USER): ip is a user-mode address; bit 1
 * (VPERF_TRACE_SAMPLE_PERIOD): a guest perf event's sample (the module's
 * trace sampler), counts[0] its period (events since the thread's previous
 * sample), not the thread's vperf counts.
 */
#define VPERF_TRACE_SAMPLE_USER		(1u << 0)
#define VPERF_TRACE_SAMPLE_PERIOD	(1u << 1)
#define VPERF_TRACE_SAMPLE_FLAGS	(VPERF_TRACE_SAMPLE_USER | VPERF_TRACE_SAMPLE_PERIOD)
#define VPERF_TRACE_MAX_CALLCHAIN	64

struct vperf_trace_sample {
	struct vperf_trace_rec h;
	__u64 ip;
	__u32 nr_counts;		/* <= VPERF_MAX_COUNTERS */
	__u32 nr_callchain;		/* <= VPERF_TRACE_MAX_CALLCHAIN */
	__u64 data[];			/* counts, then the callchain */
};

enum vperf_trace_mark_kind {
	VPERF_TRACE_MARK_BEGIN	 = 0,
	VPERF_TRACE_MARK_END	 = 1,
	VPERF_TRACE_MARK_INSTANT = 2,
	VPERF_TRACE_MARK_NR_KINDS
};

#define VPERF_TRACE_MARK_NAME_LEN	64

/* name: UTF-8, name_len bytes (1..64, no NUL), the record padded to 8. */
struct vperf_trace_mark {
	struct vperf_trace_rec h;
	__u64 value;
	__u32 kind;			/* enum vperf_trace_mark_kind */
	__u32 name_len;
	char name[];
};

/* A producer that dropped records says so (its own buffers, not the ring). */
enum vperf_trace_lost_source {
	VPERF_TRACE_LOST_USER	 = 1,	/* a thread's marker buffer was full */
	VPERF_TRACE_LOST_NMI	 = 2,	/* an NMI found the ring busy */
	VPERF_TRACE_LOST_INVALID = 3,	/* records the guest kernel refused */
};

struct vperf_trace_lost {
	struct vperf_trace_rec h;
	__u64 count;
	__u32 source;			/* enum vperf_trace_lost_source */
	__u32 reserved;			/* 0 */
};

/*
 * An executable file mapping made (or changed) by a user task, pid/tid: the
 * task; len > 0, start + len within 2^64, pgoff its offset in the file in
 * bytes.  Or, with pid = tid = 0, where the guest kernel's text is: filename
 * "[kernel.kallsyms]" then a symbol's name, start that symbol's address now,
 * len and pgoff 0 (a kernel loaded at a random base tells its offset so).
 * Or, with pid = tid = 0 and a host with VPERF_FEAT_TRACE_KSYM, a guest
 * module's code symbol: filename "[MODULE]SYMBOL" (MODULE 1..55 of
 * [A-Za-z0-9_-], not "kernel.kallsyms"; SYMBOL not empty), start its address,
 * len > 0 its size (start + len within 2^64, start at or above
 * VPERF_TRACE_KSYM_MIN), pgoff 0.
 * filename: NUL-terminated, the rest of the record (size - 48 bytes).  Only
 * written to a host with VPERF_FEAT_TRACE_MMAP.
 */
#define VPERF_TRACE_MMAP_KERNEL	"[kernel.kallsyms]"
#define VPERF_TRACE_KSYM_MIN	0xffff800000000000ull	/* x86-64 kernel addresses */
#define VPERF_TRACE_KSYM_MOD_MAX	55u		/* a module name's bytes (MODULE_NAME_LEN - 1) */

struct vperf_trace_mmap {
	struct vperf_trace_rec h;
	__u64 start;
	__u64 len;
	__u64 pgoff;
	char filename[];
};

/* ---- layout checks: changing any of these is a new ABI version ---- */

#define VPERF_ABI_CHECK(type, size_)						\
	_Static_assert(sizeof(type) == (size_), #type " layout changed")

VPERF_ABI_CHECK(struct vperf_counter_value, 24);
VPERF_ABI_CHECK(struct vperf_vcpu_page, 32 + 24 * VPERF_MAX_COUNTERS + 64);
_Static_assert(sizeof(struct vperf_vcpu_page) <= VPERF_PAGE_SIZE, "page too big");
_Static_assert(__builtin_offsetof(struct vperf_vcpu_page, seq) == 8, "seq offset");
_Static_assert(__builtin_offsetof(struct vperf_vcpu_page, overflow_status) == 16,
	       "overflow_status offset");
_Static_assert(__builtin_offsetof(struct vperf_vcpu_page, counters) == 32,
	       "counters offset");
VPERF_ABI_CHECK(struct vperf_event_desc, 16 + VPERF_EVENT_NAME_LEN);
VPERF_ABI_CHECK(struct vperf_ucall, 8 + 64 + 128);
VPERF_ABI_CHECK(struct vperf_trace_ring, 64);
VPERF_ABI_CHECK(struct vperf_trace_rec, 24);
VPERF_ABI_CHECK(struct vperf_trace_switch, 24 + 16 + 32);
VPERF_ABI_CHECK(struct vperf_trace_wakeup, 24 + 16);
VPERF_ABI_CHECK(struct vperf_trace_fork, 24 + 8 + 16);
VPERF_ABI_CHECK(struct vperf_trace_exec, 24 + 16);
VPERF_ABI_CHECK(struct vperf_trace_exit, 24 + 8);
VPERF_ABI_CHECK(struct vperf_trace_irq, 24 + 16);
VPERF_ABI_CHECK(struct vperf_trace_sample, 24 + 16);
VPERF_ABI_CHECK(struct vperf_trace_mark, 24 + 16);
VPERF_ABI_CHECK(struct vperf_trace_lost, 24 + 16);
VPERF_ABI_CHECK(struct vperf_trace_mmap, 24 + 24);

#endif /* VPERF_ABI_H */
