/* SPDX-License-Identifier: MIT */
/* libvperf-hv internals, shared by its files and its tests. */
#ifndef VPERF_HV_INTERNAL_H
#define VPERF_HV_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <linux/perf_event.h>

#include <vperf/hv.h>

#define HV_DEFAULT_MIN_IRQ_NS	100000ull	/* 10 kHz */
#define HV_MIN_SW_PERIOD_NS	100000ull	/* clock events: >= 100 us */
#define HV_MIN_HW_PERIOD	10000ull	/* PMU events: >= 10k events */
#define HV_NEVER_PERIOD		(1ull << 62)	/* sample period of a counter with overflow off */
#define HV_TRACE_MAX_BYTES	(16u << 20)
/*
 * Throttling (docs/abi.md 2.4): an overflow that finds the counter's last
 * one not yet taken by the guest doubles its period, up to 2^10 times the
 * guest's; HV_UNTHROTTLE_STREAK taken in a row shrink it by a quarter.
 * A host perf counter whose overflow signals come much faster than its
 * vCPU thread gets back to the VMM (HV_SIGNAL_BURST of them before the exit
 * that takes them, or the SIGIO of a full signal queue) is muted by the
 * signal handler itself (its period set out of reach: the thread may not
 * reach an exit while signals keep coming) and throttled at that exit the
 * same way, line counters too: a signal per period of the thread's own time
 * that costs more than the period would keep the vCPU out of the guest and
 * fill the host's queue of real-time signals, which is per user.  (Two
 * before an exit are common in a nested guest at 1000 Hz: an exit's own
 * handling there can take a period.)
 */
#define HV_SIGNAL_BURST		4
#define HV_THROTTLE_MAX_SHIFT	10
#define HV_UNTHROTTLE_STREAK	16

enum hv_src_kind { SRC_NONE, SRC_HW, SRC_SW, SRC_KVM, SRC_EXITS, SRC_STEAL };

struct hv_counter {
	enum hv_src_kind kind;
	char name[VPERF_EVENT_NAME_LEN];
	int fd;				/* SRC_HW / SRC_SW: perf event */
	uint32_t kvm_offset;		/* SRC_KVM: byte offset in the stats fd */
	uint32_t exit_reason;		/* SRC_EXITS: reason or UINT32_MAX */
	struct vperf_event_desc desc;	/* as the guest asked for it (copy) */
	uint64_t base;			/* raw value at COUNTERS_SET */
	uint64_t pbase[3];		/* SRC_HW/SW: value, enabled, running at COUNTERS_SET */
	uint64_t set_ns;		/* CLOCK_MONOTONIC at COUNTERS_SET */
	uint64_t period;		/* overflow period the guest set, 0: off */
	uint64_t eff_period;		/* the period in force: >= period when throttled */
	uint32_t taken_streak;		/* overflows in a row the guest had taken */
	uint64_t next;			/* SRC_KVM/EXITS/STEAL: next overflow at */
};

struct hv_vcpu {
	struct vperf_hv *hv;
	int idx;
	pid_t tid;
	int schedstat_fd;		/* /proc/thread-self/schedstat */
	struct vperf_vcpu_page *page;	/* in guest memory, or NULL */
	uint64_t page_gpa;
	uint64_t trace_gpa, trace_len;
	int nr_counters;
	struct hv_counter counters[VPERF_MAX_COUNTERS];
	uint64_t overflow_status;	/* the host's copy of the page field */
	_Atomic uint64_t pending;	/* overflow bits set by the signal handler */
	_Atomic uint64_t nr_signal_overflows;	/* SIGIOs: the RT signal queue was full */
	_Atomic uint32_t signals[VPERF_MAX_COUNTERS];	/* overflow signals since the last exit */
	_Atomic uint64_t muted;		/* bits the handler muted: the exit sets their period again */
	/*
	 * The signal handler's view of the counters: slot i's perf fd while its
	 * overflow is armed, else -1.  The handler reads nothing else, so a
	 * signal in the middle of COUNTERS_SET or OVERFLOW_SET (same thread)
	 * finds whole values: slots are disarmed before they change.
	 */
	_Atomic int armed_fd[VPERF_MAX_COUNTERS];
	uint64_t held;			/* overflows held back by the rate limit */
	uint64_t nr_throttled;		/* overflows that found the last one untaken */
	uint64_t last_irq_ns;
	uint64_t nr_irqs;		/* interrupts and NMIs raised */
	uint64_t nmi_bits;		/* counters whose overflows are NMIs */
	uint64_t trace_bytes;		/* bytes drained from the trace ring */
	/* trace.c: the ring consumer, under trace_lock */
	pthread_mutex_t trace_lock;
	uint64_t trace_tail;		/* our tail (the guest's copy is not trusted) */
	bool trace_fresh;		/* registered since the last drain (under lock) */
	uint64_t trace_records;		/* valid version-2 records delivered */
	uint64_t trace_invalid_bytes;	/* bytes discarded after an invalid record */
	uint64_t trace_invalid_drains;	/* drains that met one */
	uint64_t trace_bad_headers;	/* drains refused for an impossible head */
	uint64_t trace_guest_lost;	/* the header's lost, as last read */
	unsigned char trace_batch[64 * 1024] __attribute__((aligned(8)));
	uint64_t hc_count[VPERF_HC_NR_OPS + 1];	/* last: unknown ops */
	uint64_t doorbell_count;	/* doorbell loads */
	/* events.c: the stats fd's counter names, read at the first EVENT_INFO that needs them */
	char (*kvm_names)[VPERF_EVENT_NAME_LEN];
	uint32_t nr_kvm_names;
};

struct vperf_hv {
	const struct vperf_hv_ops *ops;
	void *vmm;
	struct vperf_hv_config cfg;
	char **allow;			/* owned copies of the patterns */
	int nr_allow;
	bool host_pmu;
	pthread_mutex_t lock;		/* pages and rings of all vCPUs */
	struct hv_vcpu *vcpus;
};

/* counters.c */
int hv_counter_open(struct hv_vcpu *v, struct hv_counter *c,
		    const struct vperf_event_desc *d);
void hv_counter_close(struct hv_counter *c);
/*
 * Where c, already open, would count from now on: its bases (into *next,
 * c unchanged), or -VPERF_E*.  hv_counter_restart() then makes them c's,
 * with overflow off: a counter COUNTERS_SET keeps counts from 0 like a new
 * one, without reopening it (reopening costs the host syscalls per event).
 */
int hv_counter_rebase(struct hv_vcpu *v, const struct hv_counter *c, struct hv_counter *next);
void hv_counter_restart(struct hv_vcpu *v, struct hv_counter *c, const struct hv_counter *next);
/* Current count since COUNTERS_SET, with enabled/running ns. */
int hv_counter_read(struct hv_vcpu *v, struct hv_counter *c, struct vperf_counter_value *out);
int hv_counter_set_period(struct hv_vcpu *v, struct hv_counter *c, uint64_t period);
/* Polled sources: set bits in *bits for those past their next overflow. */
void hv_counters_poll_overflow(struct hv_vcpu *v, uint64_t *bits);
/*
 * c overflowed; taken: the guest had taken its previous overflow.  Adjusts
 * the period in force (throttling, see HV_THROTTLE_MAX_SHIFT); returns
 * true if this overflow was throttled.
 */
bool hv_counter_pace(struct hv_counter *c, bool taken);
/* The period in force set on the perf event again (after the signal handler muted it). */
void hv_counter_unmute(struct hv_counter *c);
uint64_t hv_now_ns(void);

/* Is "src:name" allowed by the device's allowlist? */
bool hv_allowed(const struct vperf_hv *hv, const char *src, const char *name);

/* events.c: VPERF_HC_EVENT_INFO, entry index into the descriptor at gpa. */
int64_t hv_event_info(struct hv_vcpu *v, uint64_t index, uint64_t gpa);

/* trace.c */
/*
 * The size of the valid version-2 record at buf (avail bytes readable
 * there), or 0 if it is not one (docs/abi.md 2.5).
 */
size_t hv_trace_rec_check(const void *buf, size_t avail);
/* Drain v's ring: bytes consumed, or -VPERF_E*. */
int64_t hv_trace_drain(struct hv_vcpu *v);

/* KVM binary stats: the byte offset of a named u64 stat in the stats fd. */
int hv_kvm_stat_offset(int stats_fd, const char *name, uint32_t *offset);
/*
 * The names of the stats fd's counters (what hv_kvm_stat_offset accepts), in
 * the fd's order, NUL-padded: *names is calloc'd (the caller frees it).
 */
int hv_kvm_stat_names(int stats_fd, char (**names)[VPERF_EVENT_NAME_LEN], uint32_t *nr);
/* libpfm4 initialized (once): 0, or -VPERF_ENODEV. */
int hv_pfm_ready(void);
/*
 * A PERF event's name as libpfm4 encodes it (user and kernel levels) into
 * *attr, and libpfm4's event index into *idx (NULL: not wanted): 0, or
 * -VPERF_ENODEV (no libpfm4), -VPERF_ENOENT (no such event), -VPERF_EINVAL
 * (not encodable: a unit mask missing, ...).  Nothing decided yet.
 */
int hv_pfm_encode(const char *name, struct perf_event_attr *attr, int *idx);

/* A PERF event as COUNTERS_SET would open it. */
struct hv_perf_event {
	enum hv_src_kind kind;		/* SRC_HW or SRC_SW */
	/*
	 * The allowlist's name for it, from the encoding, never the guest's
	 * text: "cycles", "L1-dcache-load-misses" (hw), "task-clock" (sw),
	 * "skl::INST_RETIRED", "perf_raw::r00c0" (raw: libpfm4's PMU and event)
	 */
	char name[VPERF_EVENT_NAME_LEN];
	struct perf_event_attr attr;	/* what the host opens, before its own fields */
};
/*
 * Decide on a PERF event by its encoded attr (docs/abi.md, "Allowlist"):
 * 0 with *ev, or hv_pfm_encode()'s errors, or -VPERF_EPERM: refused, for a
 * modifier no guest gets (pinned, exclusive, precise, freq, extra registers,
 * Intel's AnyThread, AMD's host/guest-only bits), a raw filter (edge, inv,
 * cmask) the operator did not allow, a PMU other than a core one, or an
 * event the allowlist does not name.  Raw configs keep only the event select
 * and unit mask (and the filters allowed).  Opens nothing.
 */
int hv_perf_decide(const struct vperf_hv *hv, const char *text, struct hv_perf_event *ev);

#endif /* VPERF_HV_INTERNAL_H */
