/* SPDX-License-Identifier: MIT */
/*
 * libvperf-hv: the vperf paravirtual device, independent of any VMM.
 *
 * A VMM creates one struct vperf_hv per VM, gives it an ops table for what
 * only the VMM knows (guest memory, interrupt injection, its own exit
 * accounting, the vCPU threads), and forwards the vperf port's hypercalls
 * to vperf_hv__hypercall() from the vCPU thread that made them.
 *
 * Everything the guest passes (GPAs, lengths, indexes, event names) is
 * untrusted: it is validated here and never makes the VMM touch memory
 * outside guest RAM, count another process or the host kernel, or use an
 * event the operator did not allow.
 *
 * Threads: vperf_hv__hypercall(), __vcpu_enter() and __vcpu_exit() for
 * vCPU n run only in vCPU n's thread; the rest of the state is behind
 * the device's lock, and each vCPU's trace ring behind a lock of its own,
 * held by a drain from start to end and by TRACE_REGISTER (which so waits
 * for a running drain of the old ring).  The overflow signal interrupts
 * the vCPU's own thread anywhere; its handler touches atomics only.
 */
#ifndef VPERF_HV_H
#define VPERF_HV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vperf/abi.h>

struct vperf_hv;

struct vperf_hv_ops {
	/*
	 * A host pointer to guest-physical [gpa, gpa + len), or NULL if any
	 * of it is outside guest RAM.  len > 0.
	 */
	void *(*gpa_to_hva)(void *vmm, uint64_t gpa, uint64_t len);
	/* Raise the device's interrupt (an edge on gsi). */
	int (*irq_raise)(void *vmm, uint32_t gsi);
	/*
	 * The VMM's own exit count of vcpu for a KVM exit reason, or for
	 * all reasons with reason == UINT32_MAX.
	 */
	uint64_t (*exit_count)(void *vmm, int vcpu, uint32_t reason);
	/* The vCPU's KVM_GET_STATS_FD, or -1 (not owned by the device). */
	int (*stats_fd)(void *vmm, int vcpu);
	/* VPERF_HC_EXIT: the guest asks the VMM to end with status. */
	void (*guest_exit)(void *vmm, int vcpu, uint32_t status);
	/* Print a guest report (VPERF_UCALL_*); NULL: discard. */
	void (*report)(void *vmm, int vcpu, const struct vperf_ucall *uc);
	/*
	 * Queue an NMI on vcpu; called from that vCPU's thread, between
	 * KVM_RUNs.  NULL: the device offers no VPERF_OVERFLOW_NMI.
	 */
	int (*nmi_raise)(void *vmm, int vcpu);
	/*
	 * Valid version-2 trace records of vcpu's ring (docs/abi.md 2.5),
	 * len bytes, whole records in ring order, validated on a private
	 * copy; called from whichever thread drains (vperf_hv__trace_drain(),
	 * or the vCPU's TRACE_FLUSH), one drain of a vCPU at a time.  NULL:
	 * records are consumed unread, and the device does not offer
	 * VPERF_FEAT_TRACE_V2.
	 */
	void (*trace_records)(void *vmm, int vcpu, const void *records, size_t len);
	/*
	 * A TRACE_FLUSH of vcpu passed the guest's TSC (read just before the
	 * call); the VMM reads its own now (the fallback clock mapping).
	 * Called in the vCPU's thread.  NULL: ignored.
	 */
	void (*trace_clock_sample)(void *vmm, int vcpu, uint64_t guest_tsc);
	/*
	 * A short lowercase name ("io", "hlt", "mmio") for a KVM exit reason
	 * (0..255) that exit_count counts on its own, NULL for the others
	 * (copied at once).  VPERF_HC_EVENT_INFO lists an EXITS event for
	 * each named reason, from the vCPU's thread.  NULL: only "all".
	 */
	const char *(*exit_name)(void *vmm, uint32_t reason);
};

struct vperf_hv_config {
	size_t size;			/* sizeof(struct vperf_hv_config) */
	int nr_vcpus;
	uint32_t gsi;			/* the device's interrupt */
	/*
	 * Events the guest may use, as "source:name" patterns with fnmatch
	 * globs over the host's name for each event, decided on what libpfm4
	 * encodes, never on the guest's text ("hw:*", "raw:skl::INST_RETIRED",
	 * "rawmod:cmask", "sw:task-clock", "kvm:exits", "exits:*", "steal:*");
	 * NULL: the default list (docs/abi.md, "Allowlist").
	 */
	const char *const *allow;
	int nr_allow;
	/* Fewest ns between two overflow interrupts of one vCPU. */
	uint64_t min_irq_interval_ns;	/* 0: 100000 (10 kHz) */
	/*
	 * Where the VMM serves the doorbell page (VPERF_CPUID_DOORBELL), 0:
	 * nowhere.  The VMM routes loads there to vperf_hv__doorbell_read().
	 */
	uint64_t doorbell_gpa;
};

/* The allowlist a device uses without cfg->allow (docs/abi.md, "Allowlist"): *nr patterns. */
const char *const *vperf_hv__default_allow(int *nr);
/*
 * Is pattern an allowlist entry for an operator to give: "SOURCE:GLOB", SOURCE
 * one of hw, raw, rawmod, sw, kvm, exits, steal (any case), GLOB non-empty,
 * printable ASCII without spaces or commas, the whole under 128 bytes?
 * 0 or -EINVAL.  (vperf_hv__new() takes any pattern.)
 */
int vperf_hv__allow_check(const char *pattern);

/* Creates the device.  ops and vmm must outlive it. */
int vperf_hv__new(const struct vperf_hv_config *cfg, const struct vperf_hv_ops *ops,
		  void *vmm, struct vperf_hv **out) __attribute__((warn_unused_result));
void vperf_hv__delete(struct vperf_hv *hv);

/* The features the device offers (VPERF_FEAT_*), for the CPUID leaf. */
uint32_t vperf_hv__features(const struct vperf_hv *hv);

/*
 * vCPU n's thread starts running the guest: the device learns its tid
 * (host counters attach to it) and routes overflow signals to it.
 */
int vperf_hv__vcpu_enter(struct vperf_hv *hv, int vcpu);

/*
 * After every exit of vCPU n (in its thread, before it re-enters): deliver
 * pending overflows and refresh the vCPU's shared page.  Cheap when the
 * guest registered no page.
 */
void vperf_hv__vcpu_exit(struct vperf_hv *hv, int vcpu);

/*
 * One hypercall of vCPU n: op and args[0..3] = RBX, RCX, RSI, RDI.
 * Returns the value for RAX: >= 0, or -VPERF_E*.
 */
int64_t vperf_hv__hypercall(struct vperf_hv *hv, int vcpu, uint32_t op,
			    const uint64_t args[4]);

/*
 * A load of len bytes at offset of the doorbell page by vCPU n: *value is
 * what the guest reads.  0, or -VPERF_EINVAL (not an aligned 8-byte load of
 * a counter slot: *value is all ones) or -VPERF_ESTATE (no counter there:
 * *value is 0).  Every call is counted.
 */
int vperf_hv__doorbell_read(struct vperf_hv *hv, int vcpu, uint64_t offset, uint32_t len,
			    uint64_t *value);
/* Doorbell loads vCPU n made (valid or not). */
uint64_t vperf_hv__doorbell_count(const struct vperf_hv *hv, int vcpu);

/* Per-op counts of the hypercalls vCPU n made (accepted or not). */
uint64_t vperf_hv__hypercall_count(const struct vperf_hv *hv, int vcpu, uint32_t op);
/* Overflow interrupts injected into vCPU n. */
uint64_t vperf_hv__irq_count(const struct vperf_hv *hv, int vcpu);
/* Overflows of vCPU n that found the last one untaken (each doubled a period). */
uint64_t vperf_hv__throttle_count(const struct vperf_hv *hv, int vcpu);
/*
 * Times vCPU n's thread got SIGIO for its overflow signals: the host's queue of real-time
 * signals was full, which overflows were lost is not known (each armed counter is taken to have
 * overflowed once).
 */
uint64_t vperf_hv__signal_overflow_count(const struct vperf_hv *hv, int vcpu);

/*
 * Drain vCPU n's trace ring now (from any thread): the valid records go to
 * ops->trace_records, the rest up to the guest's head is discarded and
 * counted.  Returns the bytes consumed, or -VPERF_ESTATE (no ring),
 * -VPERF_EFAULT, -VPERF_EINVAL (the guest's head is impossible: nothing is
 * consumed).
 */
int64_t vperf_hv__trace_drain(struct vperf_hv *hv, int vcpu);

struct vperf_hv_trace_stats {
	size_t size;			/* sizeof(struct vperf_hv_trace_stats) */
	uint64_t bytes;			/* consumed */
	uint64_t records;		/* valid records delivered */
	uint64_t invalid_bytes;		/* discarded after an invalid record */
	uint64_t invalid_drains;	/* drains that met an invalid record */
	uint64_t guest_lost;		/* the ring header's lost, as last read */
	bool registered;		/* the vCPU has a ring now */
	uint64_t bad_headers;		/* drains refused: the header's head impossible
					 * (behind our tail, or more than the ring ahead) */
};
/* Running totals of vCPU n's ring.  0 or -EINVAL. */
int vperf_hv__trace_stats(struct vperf_hv *hv, int vcpu, struct vperf_hv_trace_stats *st);

/* The signal the device uses for host counter overflows (SIGRTMIN + 5). */
int vperf_hv__signal(void);

#endif /* VPERF_HV_H */
