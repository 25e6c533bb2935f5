/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The user-space interface of vperf_guest.ko: /dev/vperf and its ioctls.
 *
 * Every structure starts with a __u32 `size`, so that it can grow at its end
 * without a new ioctl number: the caller sets `size` to sizeof its own
 * structure (at least the VER0 size), the module fills min(size, its own
 * size) bytes and writes back in `size` how many bytes it filled.  The ioctl
 * is matched on its type and number only, never on the size bits.
 */
#ifndef VPERF_GUEST_UAPI_H
#define VPERF_GUEST_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define VPERF_DEV_NAME		"vperf"		/* /dev/vperf */
#define VPERF_IOC_MAGIC		'V'

/* VPERF_IOC_INFO: the device as the module sees it. */
struct vperf_info {
	__u32 size;		/* in: caller's sizeof; out: bytes filled */
	__u32 info_version;	/* VPERF_INFO_VERSION */
	__u32 abi_version;	/* the device's ABI version (CPUID) */
	__u32 features;		/* VPERF_FEAT_* (CPUID) */
	__u32 port;		/* hypercall I/O port (CPUID) */
	__u32 gsi;		/* interrupt GSI (CPUID) */
	__u32 nr_cpus;		/* online CPUs */
	__u32 nr_pages;		/* CPUs whose vperf_vcpu_page is registered */
	__s32 irq;		/* Linux IRQ of the ACPI device, -1: not bound */
	__u32 reserved0;
	__u64 irq_count;	/* device interrupts since load */
};

#define VPERF_INFO_VERSION	1
#define VPERF_INFO_SIZE_VER0	48	/* the first published size */

#define VPERF_IOC_INFO		_IOWR(VPERF_IOC_MAGIC, 0x00, struct vperf_info)

_Static_assert(sizeof(struct vperf_info) == VPERF_INFO_SIZE_VER0,
	       "struct vperf_info layout changed");
_Static_assert(__builtin_offsetof(struct vperf_info, size) == 0,
	       "size must be the first field");
_Static_assert(__builtin_offsetof(struct vperf_info, irq_count) == 40,
	       "irq_count offset");

/*
 * Per-thread virtual counters (perfctr-xen's scheme on the vperf device).
 *
 * A context makes the module add, at each context switch of a thread, what
 * its vCPU's virtual counters advanced while the thread ran.  Contexts
 * belong to the file they were started on; the file keeps a row for each
 * of them, also after the thread exits, until it is closed.
 *
 * VPERF_IOC_THREAD_START starts a context for the calling thread (tid 0)
 * or for another thread (tid > 0, a thread id in the caller's pid
 * namespace; allowed by the `paranoid` module parameter, see README).  With
 * VPERF_THREAD_INHERIT every thread and process the thread creates from
 * then on gets a context on the same file, with the same flags.
 *
 * The calling thread's own page maps read-only with mmap(NULL, 4096,
 * PROT_READ, MAP_SHARED, fd, 0) and reads without a system call under the
 * seq protocol: load seq (acquire), retry while odd, copy, load seq again,
 * retry if it changed.  The page holds the counts up to the thread's last
 * switch-out: VPERF_IOC_THREAD_READ adds the running slice first (one
 * hypercall) so that the page is exact when it returns.
 *
 * The doorbell (when VPERF_IOC_INFO's features have VPERF_FEAT_DOORBELL): mmap(NULL,
 * 4096, PROT_READ, MAP_SHARED, fd, VPERF_DOORBELL_PGOFF * 4096) by a thread
 * with a context maps the device's doorbell page; an 8-byte load at 8 * i
 * is one VM exit that returns its vCPU's counter i now: with the page's base
 * (see struct vperf_thread_page) a fresh count with no system call.  Raw
 * vCPU values show what other threads ran between this one's slices, so the
 * base and the doorbell are only for a context whose starter may see what
 * every thread does (the `paranoid` parameter 0 or less, or CAP_PERFMON or
 * CAP_SYS_ADMIN at THREAD_START; inherited contexts keep it): for others
 * base_valid stays 0 and the doorbell's mmap is EACCES.
 *
 * VPERF_IOC_THREAD_LIST copies the file's rows: counts as of each thread's
 * last switch-out, final once the thread exited (VPERF_ROW_EXITED).
 * VPERF_IOC_THREAD_STOP ends the calling thread's context; closing the file
 * ends them all; a mapping keeps the last values readable until munmap.
 */
enum vperf_thread_counter_index {
	VPERF_THREAD_CTR_VCPU_CLOCK	= 0,	/* vperf::vcpu-clock: the vCPU
						 * thread's host CPU time, ns */
	VPERF_THREAD_CTR_STEAL		= 1,	/* vperf::steal: the vCPU's run
						 * delay on the host, ns */
	VPERF_THREAD_CTR_EXITS		= 2,	/* vperf::exits: the vCPU's exits
						 * to the VMM */
	VPERF_THREAD_NR_CTRS
};

#define VPERF_THREAD_MAX_COUNTERS	8
#define VPERF_DOORBELL_PGOFF		1	/* mmap offset, in pages, of the doorbell */
#define VPERF_THREAD_PAGE_VERSION	1

struct vperf_thread_counter {
	__u64 value;		/* sum over the thread's time slices */
	__u64 enabled;		/* the vCPU counter's enabled ns, same sums */
	__u64 running;		/* its running ns, same sums */
};

struct vperf_thread_page {
	__u32 size;		/* sizeof(struct vperf_thread_page) */
	__u32 version;		/* VPERF_THREAD_PAGE_VERSION */
	__u32 seq;		/* odd while the kernel writes */
	__u32 nr;		/* counters in use, <= VPERF_THREAD_MAX_COUNTERS */
	__u64 switches;		/* time slices accounted (switch-outs, READ, STOP, and the
				 * turns of multiplexed events while it ran) */
	__u64 host_ns;		/* the slices' duration by the host's clock
				 * (vCPU page host_time_ns deltas) */
	__u64 guest_ns;		/* the same by the guest's (local_clock()):
				 * host_ns / guest_ns is the clocks' ratio */
	__u64 sched_ns;		/* what the guest's scheduler charged the
				 * thread over the same slices (its
				 * se.sum_exec_runtime, the source of
				 * CLOCK_THREAD_CPUTIME_ID); 0: unknown */
	struct vperf_thread_counter counters[VPERF_THREAD_MAX_COUNTERS];
	/*
	 * The doorbell read (VPERF_DOORBELL_PGOFF): while base_valid is 1 the
	 * thread's running slice started when its vCPU's counter i was
	 * base[i], so counters[i].value + (doorbell load i - base[i]) is the
	 * count now, if seq did not change around the load (a switch, and so a
	 * migration, bumps it).  0: use VPERF_IOC_THREAD_READ (always, and
	 * base[] 0, for a context that may not see raw vCPU values).
	 */
	__u64 base[VPERF_THREAD_MAX_COUNTERS];
	__u32 base_valid;
	__u32 reserved2;
	/*
	 * Since 2026-11-26 (size >= VPERF_THREAD_PAGE_SIZE_VER1): the
	 * doorbell slot of counter i (the vCPU counter its value comes from:
	 * load 8 * slot[i]); before, slot i.
	 */
	__u8 slot[VPERF_THREAD_MAX_COUNTERS];
};

#define VPERF_THREAD_PAGE_SIZE_VER0	312
#define VPERF_THREAD_PAGE_SIZE_VER1	320

_Static_assert(sizeof(struct vperf_thread_counter) == 24,
	       "struct vperf_thread_counter layout changed");
_Static_assert(sizeof(struct vperf_thread_page) == VPERF_THREAD_PAGE_SIZE_VER1,
	       "struct vperf_thread_page layout changed");
_Static_assert(__builtin_offsetof(struct vperf_thread_page, slot) == VPERF_THREAD_PAGE_SIZE_VER0,
	       "slot offset");
_Static_assert(__builtin_offsetof(struct vperf_thread_page, base) == 240, "base offset");
_Static_assert(sizeof(struct vperf_thread_page) <= 4096, "thread page too big");
_Static_assert(__builtin_offsetof(struct vperf_thread_page, seq) == 8, "seq offset");
_Static_assert(__builtin_offsetof(struct vperf_thread_page, counters) == 48,
	       "counters offset");

/* VPERF_IOC_THREAD_START */
#define VPERF_THREAD_INHERIT	(1u << 0)	/* new threads and processes too */
#define VPERF_THREAD_SAMPLE	(1u << 1)	/* sampling: the sample_* fields */
#define VPERF_THREAD_FLAGS	(VPERF_THREAD_INHERIT | VPERF_THREAD_SAMPLE)

struct vperf_thread_start {
	__u32 size;		/* in: caller's sizeof; out: bytes filled */
	__u32 flags;		/* in: VPERF_THREAD_* */
	__s32 tid;		/* in: 0: the calling thread, else a thread id */
	__u32 nr_counters;	/* out: counters in the page and the rows */
	__u32 page_size;	/* out: bytes to map (one page) */
	__u32 page_version;	/* out: VPERF_THREAD_PAGE_VERSION */
	/* VER1: with VPERF_THREAD_SAMPLE (the calling thread only, tid 0) */
	__u32 sample_counter;	/* in: the counter to sample on: VPERF_THREAD_CTR_VCPU_CLOCK */
	__u32 sample_pages;	/* in: the ring's data pages: a power of 2, 1..64 */
	__u64 sample_period;	/* in: counter units between samples (vcpu-clock: ns,
				 * >= VPERF_SAMPLE_MIN_PERIOD) */
	__s32 sample_signo;	/* in: a signal to the thread per sample, 0: none */
	__s32 sample_cookie;	/* in: that signal's si_fd (libvperf: this file's fd) */
	/*
	 * VER2: the events the context counts, in counter order (0: the three
	 * of enum vperf_thread_counter_index).  Each as the host's
	 * COUNTERS_SET takes it (docs/abi.md 2.3); with VPERF_THREAD_SAMPLE,
	 * sample_counter must be the index of the vcpu-clock event (PERF
	 * "task-clock").  Inherited contexts count the same events.
	 */
	__u32 nr_events;	/* in: <= VPERF_THREAD_MAX_COUNTERS */
	__s32 bad_event;	/* out: the event an error is about, -1: none */
	__u64 events;		/* in: user address of struct vperf_thread_event[nr_events] */
};

/* One event of a context: the layout of the ABI's struct vperf_event_desc. */
struct vperf_thread_event {
	__u32 source;		/* enum vperf_source: 1 PERF, 2 KVM_STAT, 3 EXITS, 4 STEAL */
	__u32 flags;		/* 0 */
	__u64 arg;		/* EXITS: the KVM exit reason, ~0: all */
	char name[64];		/* NUL-terminated: a perf/libpfm4 name, a KVM statistic */
};

#define VPERF_THREAD_START_SIZE_VER0	24
#define VPERF_THREAD_START_SIZE_VER1	48
#define VPERF_THREAD_START_SIZE_VER2	64

_Static_assert(sizeof(struct vperf_thread_start) == VPERF_THREAD_START_SIZE_VER2,
	       "struct vperf_thread_start layout changed");
_Static_assert(sizeof(struct vperf_thread_event) == 80, "struct vperf_thread_event layout changed");

/*
 * Sampling (VPERF_THREAD_SAMPLE).  Every vCPU's counter overflows each
 * sample_period of its own count (one period for all sampling contexts:
 * a START with another period while one runs gets EBUSY) and raises an NMI
 * on that vCPU (VPERF_OVERFLOW_NMI); when the interrupted thread samples,
 * the module appends a record to its ring and sends it sample_signo with
 * si_code POLL_IN and si_fd sample_cookie.  A thread's samples are then
 * proportional to its count, as with a per-CPU clock filtered by thread.
 * A context created by inheritance counts but does not sample.
 *
 * The thread maps its ring with mmap(NULL, (1 + sample_pages) * 4096,
 * PROT_READ | PROT_WRITE, MAP_SHARED, fd, VPERF_SAMPLE_PGOFF * 4096): the
 * header page, then the records.  The module writes a record at
 * head % nr_records and then advances head (release); the reader reads the
 * records from its tail to head (acquire) and then stores tail.  A sample
 * that finds the ring full (head - tail == nr_records, or a tail that is
 * not between head - nr_records and head) is counted in lost.  Only tail is
 * the reader's to write.
 */
#define VPERF_SAMPLE_PGOFF		2	/* mmap offset, in pages, of the ring */
#define VPERF_SAMPLE_RING_VERSION	1
#define VPERF_SAMPLE_MIN_PERIOD		100000	/* ns: the host's floor for clocks */
#define VPERF_SAMPLE_MAX_PAGES		64

struct vperf_sample_ring {
	__u32 size;		/* sizeof(struct vperf_sample_ring) */
	__u32 version;		/* VPERF_SAMPLE_RING_VERSION */
	__u32 record_size;	/* sizeof(struct vperf_sample_record) */
	__u32 nr_records;	/* records the data pages hold */
	__u64 head;		/* module: records written */
	__u64 tail;		/* reader: records consumed */
	__u64 lost;		/* module: samples dropped (ring full) */
	__u64 period;		/* the sample period */
	__u64 reserved[2];
};

#define VPERF_SAMPLE_USER	(1u << 0)	/* ip is a user-mode address */
#define VPERF_SAMPLE_VALUES	(1u << 1)	/* values[] are valid */

struct vperf_sample_record {
	__u64 time;		/* guest CLOCK_MONOTONIC, ns */
	__u64 ip;		/* the interrupted instruction */
	__s32 pid, tid;		/* the interrupted thread (init's namespace) */
	__u32 cpu;		/* its CPU (vCPU) */
	__u32 flags;		/* VPERF_SAMPLE_* */
	__u64 values[4];	/* the thread's counts (as its page) at the sample */
};

_Static_assert(sizeof(struct vperf_sample_ring) == 64, "struct vperf_sample_ring layout changed");
_Static_assert(sizeof(struct vperf_sample_record) == 64, "struct vperf_sample_record layout changed");

/* VPERF_IOC_THREAD_LIST: one row per context the file has had. */
#define VPERF_ROW_EXITED	(1u << 0)	/* the thread exited: final */
#define VPERF_ROW_STOPPED	(1u << 1)	/* THREAD_STOP ended it: final */

struct vperf_thread_row {
	__s32 pid;		/* process id (caller's namespace), 0: unknown */
	__s32 tid;		/* thread id, same */
	__u32 flags;		/* VPERF_ROW_* */
	__u32 nr;		/* counters in use */
	char comm[16];		/* the thread's name (at exit, if it exited) */
	__u64 switches;		/* as in the thread page */
	__u64 host_ns;
	__u64 guest_ns;
	__u64 sched_ns;		/* as in the thread page */
	struct vperf_thread_counter counters[VPERF_THREAD_MAX_COUNTERS];
};

struct vperf_thread_list {
	__u32 size;		/* in: caller's sizeof; out: bytes filled */
	__u32 row_size;		/* in: caller's sizeof(row), <= 65536; out: bytes per row */
	__u32 nr_rows;		/* in: rows the buffer holds; out: rows written */
	__u32 total;		/* out: rows the file has (> nr_rows: call again) */
	__u64 lost;		/* out: threads that got no context (memory, limit) */
	__u64 rows;		/* in: user address of the row buffer */
};

#define VPERF_THREAD_ROW_SIZE_VER0	256
#define VPERF_THREAD_LIST_SIZE_VER0	32

_Static_assert(sizeof(struct vperf_thread_row) == VPERF_THREAD_ROW_SIZE_VER0,
	       "struct vperf_thread_row layout changed");
_Static_assert(__builtin_offsetof(struct vperf_thread_row, counters) == 64,
	       "row counters offset");
_Static_assert(sizeof(struct vperf_thread_list) == VPERF_THREAD_LIST_SIZE_VER0,
	       "struct vperf_thread_list layout changed");

/*
 * Errors: EINVAL bad size or flags, a malformed event; EBUSY the thread already has a context
 * (on any file); ESRCH no such thread, or one that is exiting; EACCES the paranoid setting forbids
 * it; ENODEV no vCPU counters here; ENOENT no context of the calling thread on this file (READ,
 * STOP, mmap); ENOSPC the file had max_threads contexts; EDQUOT the file's user holds its share of
 * memory already (module parameter max_user_kb: the pages, rings, rows and marker buffers of all
 * its files).  For an event (bad_event says which): EACCES an event that may count guest kernel
 * mode (a PERF event other than the host's software ones, task-clock, cpu-clock,
 * context-switches, cpu-migrations, page-faults, minor-faults and major-faults, unless its
 * libpfm4 modifiers make it user mode only, such as ":u") while kernel.perf_event_paranoid is 2
 * or more and the caller has neither CAP_PERFMON nor CAP_SYS_ADMIN (perf's rule); E2BIG more
 * than VPERF_THREAD_MAX_COUNTERS; ENOSPC the module follows 64 distinct events for the live
 * contexts already (the vCPUs count 16 at once, and take turns beyond: counts then have running
 * < enabled, to be scaled); EDQUOT the file's user's contexts hold their share of them already
 * (max_user_events); the host's refusals as in docs/abi.md 2.3: ENOENT an unknown name, ENODEV
 * not countable on this host (a hardware event without a host PMU), EPERM the host's allowlist
 * refuses it.
 */
#define VPERF_IOC_THREAD_START	_IOWR(VPERF_IOC_MAGIC, 0x01, struct vperf_thread_start)
#define VPERF_IOC_THREAD_STOP	_IO(VPERF_IOC_MAGIC, 0x02)
#define VPERF_IOC_THREAD_READ	_IO(VPERF_IOC_MAGIC, 0x03)
#define VPERF_IOC_THREAD_LIST	_IOWR(VPERF_IOC_MAGIC, 0x04, struct vperf_thread_list)

/*
 * VPERF_IOC_VCPU_TOTALS: every online vCPU's counters now (one SNAPSHOT on
 * each), the totals that per-thread counts divide up: with every thread
 * that ran monitored, the rows' sums over an interval equal the totals'
 * advance (tests check this conservation).  Up to 64 CPUs.  System-wide
 * data: the `paranoid` parameter must be 0 or less, or the caller has
 * CAP_PERFMON (else EACCES).
 */
#define VPERF_TOTALS_MAX_CPUS	64

struct vperf_vcpu_total {
	__s32 cpu;
	__u32 reserved;
	__u64 value[VPERF_THREAD_MAX_COUNTERS];	/* counter i since the module set it */
};

struct vperf_vcpu_totals {
	__u32 size;		/* in: caller's sizeof (at least VER0); out: bytes filled */
	__u32 nr_cpus;		/* out: entries filled */
	__u32 nr_counters;	/* out: counters per entry */
	__u32 reserved;
	struct vperf_vcpu_total cpus[VPERF_TOTALS_MAX_CPUS];
};

#define VPERF_VCPU_TOTALS_SIZE_VER0	(16 + 72 * VPERF_TOTALS_MAX_CPUS)
#define VPERF_IOC_VCPU_TOTALS	_IOWR(VPERF_IOC_MAGIC, 0x05, struct vperf_vcpu_totals)

_Static_assert(sizeof(struct vperf_vcpu_totals) == VPERF_VCPU_TOTALS_SIZE_VER0,
	       "struct vperf_vcpu_totals layout changed");

/*
 * Trace markers (docs/abi.md 7.3): a thread's own buffer of user-space
 * records, which the module copies into the vCPU trace rings (ABI 2.5,
 * version 2) while tracing is on (module parameter `trace`).
 *
 * mmap(NULL, (1 + pages) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
 * VPERF_MARK_PGOFF * 4096), pages a power of 2 from 1 to
 * VPERF_MARK_MAX_PAGES, gives the calling thread its marker buffer: a
 * header page (struct vperf_mark_buf) and the data pages.  No context is
 * needed; one buffer per thread, on the file that first mapped it (another
 * file: EBUSY; another size: EINVAL), not inherited by fork.  Tracing off:
 * ENODATA; a device without trace rings: ENODEV; the file's user holds its
 * share already (module parameter max_user_kb): EDQUOT; all buffers hold
 * max_mark_kb: ENOMEM.
 *
 * The thread writes whole struct vperf_trace_mark records (abi.h, type
 * VPERF_TRACE_MARK, tsc from rdtsc, flags 0) at head % data_size (a record
 * may wrap from the end of the data to its start), then stores head + size
 * with release order.  It reads tail (acquire) for the free space; a
 * record that does not fit is counted in lost (a running count).  The
 * module copies every complete record up to head into the ring of the vCPU
 * it runs on when the thread is switched out (up to
 * VPERF_MARK_SWITCH_BUDGET bytes each time), when it exits, when the
 * buffer's file is released, and at VPERF_IOC_MARK_FLUSH.  It validates
 * each record (a bad size, type, flags, kind, name_len, padding or UTF-8
 * name is refused and counted in `invalid`; a size that cannot be
 * followed drops everything up to head as one refused record), writes
 * the record's cpu, pid and tid itself, and reports lost and invalid
 * records in VPERF_TRACE_LOST records (source USER and INVALID).  Only
 * head and lost are the thread's to write.
 */
#define VPERF_MARK_PGOFF		3	/* mmap offset, in pages, of the marker buffer */
#define VPERF_MARK_BUF_VERSION		1
#define VPERF_MARK_MAX_PAGES		256	/* data pages: 1 MiB */
#define VPERF_MARK_SWITCH_BUDGET	16384	/* bytes copied at one switch-out */

struct vperf_mark_buf {
	__u32 size;		/* module: sizeof(struct vperf_mark_buf) */
	__u32 version;		/* module: VPERF_MARK_BUF_VERSION */
	__u64 data_size;	/* module: bytes of data (the pages after this one), 2^n */
	__u64 head;		/* thread: bytes written (free-running) */
	__u64 tail;		/* module: bytes consumed */
	__u64 lost;		/* thread: records it could not write (buffer full) */
	__u64 copied;		/* module: records copied into the trace */
	__u64 invalid;		/* module: records refused */
	__u64 reserved;
};

#define VPERF_MARK_BUF_SIZE_VER0	64

_Static_assert(sizeof(struct vperf_mark_buf) == VPERF_MARK_BUF_SIZE_VER0,
	       "struct vperf_mark_buf layout changed");
_Static_assert(__builtin_offsetof(struct vperf_mark_buf, head) == 16, "mark head offset");

/*
 * VPERF_IOC_MARK_FLUSH: copy the calling thread's marker buffer into the
 * trace now (0; ENOENT: the thread has no buffer; ENODATA: tracing is off).
 */
#define VPERF_IOC_MARK_FLUSH	_IO(VPERF_IOC_MAGIC, 0x06)

/*
 * VPERF_IOC_TRACE_SAMPLE: sample task pid (0: the caller) and every thread
 * and process it creates from now on, on a guest perf event (type and
 * config as perf_event_attr's: a software clock where the guest has no
 * PMU), into the trace rings (docs/abi.md 2.5: SAMPLE records flagged
 * VPERF_TRACE_SAMPLE_PERIOD, one count, the period; the user callchain with
 * VPERF_TRACE_SAMPLER_CALLCHAIN).  `vperf record --into-host` uses it under
 * `vperf vm record -F/-c/-g`.  Sampling ends when this file is closed.
 * Kernel mode is sampled too unless VPERF_TRACE_SAMPLER_USER is given, and
 * that takes what perf_event_open() asks for it (perf_allow_kernel()):
 * CAP_PERFMON or CAP_SYS_ADMIN, or kernel.perf_event_paranoid below 2.
 * Errors: ENODATA tracing is off (trace=0), ESRCH no such task, EACCES the
 * paranoid setting forbids that task, or kernel mode is not the caller's
 * to sample (ask for VPERF_TRACE_SAMPLER_USER), EBUSY this file samples already,
 * EINVAL bad flags, a period or frequency of 0, or a frequency above 100 kHz;
 * others from perf_event_create_kernel_counter().
 */
#define VPERF_TRACE_SAMPLER_FREQ	(1u << 0)	/* period is a frequency, Hz */
#define VPERF_TRACE_SAMPLER_CALLCHAIN	(1u << 1)	/* the user callchain too */
#define VPERF_TRACE_SAMPLER_USER	(1u << 2)	/* user mode only (exclude_kernel) */
#define VPERF_TRACE_SAMPLER_FLAGS	\
	(VPERF_TRACE_SAMPLER_FREQ | VPERF_TRACE_SAMPLER_CALLCHAIN | VPERF_TRACE_SAMPLER_USER)
#define VPERF_TRACE_SAMPLER_MAX_FREQ	100000

struct vperf_trace_sampler {
	__u32 size;		/* sizeof(struct vperf_trace_sampler) */
	__u32 flags;		/* VPERF_TRACE_SAMPLER_* */
	__s32 pid;		/* the task, 0: the caller */
	__u32 type;		/* perf_event_attr.type */
	__u64 config;		/* perf_event_attr.config */
	__u64 period;		/* events between samples, or Hz with _FREQ */
};

#define VPERF_TRACE_SAMPLER_SIZE_VER0	32

_Static_assert(sizeof(struct vperf_trace_sampler) == VPERF_TRACE_SAMPLER_SIZE_VER0,
	       "struct vperf_trace_sampler layout changed");

#define VPERF_IOC_TRACE_SAMPLE	_IOW(VPERF_IOC_MAGIC, 0x07, struct vperf_trace_sampler)

/*
 * VPERF_IOC_EVENT_INFO: entry `index` of the events the host offers
 * (the ABI's EVENT_INFO hypercall, docs/abi.md 2.3 "Discovery"): the event
 * as THREAD_START's events take it, and whether it can count here: status
 * 0, or -ENODEV (not on this host: no PMU), -EPERM (the host's allowlist
 * refuses it), -EINVAL (anything else the host said).  ENOENT past the last
 * entry; EOPNOTSUPP a device without VPERF_FEAT_EVENT_INFO.
 */
struct vperf_event_query {
	__u32 size;		/* in: caller's sizeof; out: bytes filled */
	__u32 index;		/* in */
	__s32 status;		/* out */
	__u32 reserved;
	struct vperf_thread_event event;	/* out */
};

#define VPERF_EVENT_QUERY_SIZE_VER0	96

_Static_assert(sizeof(struct vperf_event_query) == VPERF_EVENT_QUERY_SIZE_VER0,
	       "struct vperf_event_query layout changed");

#define VPERF_IOC_EVENT_INFO	_IOWR(VPERF_IOC_MAGIC, 0x08, struct vperf_event_query)

#endif /* VPERF_GUEST_UAPI_H */
