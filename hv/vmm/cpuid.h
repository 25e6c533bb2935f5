/* SPDX-License-Identifier: MIT */
/*
 * The guest's CPUID: what KVM supports (KVM_GET_SUPPORTED_CPUID), with per-vCPU APIC IDs and a flat
 * topology (each vCPU its own package: one core, one thread), the hypervisor bit, TSC-deadline when
 * KVM emulates it, KVM's paravirtual leaves 0x40000000/0x40000001 (kvm-clock, steal time, ...)
 * kept, and the vperf leaves VPERF_CPUID_BASE and VPERF_CPUID_INFO added (hv/include/vperf/abi.h).
 */
#ifndef VMM_CPUID_H
#define VMM_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct vm;
struct vcpu;

struct cpuid_params {
	uint32_t apic_id;
	bool tsc_deadline; /* KVM_CAP_TSC_DEADLINE_TIMER: advertise it (KVM does not, by itself) */
	uint32_t vperf_features;	/* VPERF_FEAT_* for the info leaf */
};

#define CPUID_EXTRA_ENTRIES	3	/* room cpuid__patch() needs past the supported entries (vperf leaves) */

/* KVM_GET_SUPPORTED_CPUID into vm->supported_cpuid (the buffer grows while KVM says E2BIG). */
int cpuid__init(struct vm *vm) __must_check;
/* KVM_SET_CPUID2 for one vCPU. */
int cpuid__setup_vcpu(struct vm *vm, struct vcpu *vcpu) __must_check;
/*
 * Edit a CPUID table in place for one vCPU; `cap` is how many entries the buffer holds (at least
 * cpuid->nent + CPUID_EXTRA_ENTRIES). Returns 0 or -ENOSPC.
 */
int cpuid__patch(struct kvm_cpuid2 *cpuid, uint32_t cap, const struct cpuid_params *p) __must_check;
/* The entry for (function, index), or NULL. */
struct kvm_cpuid_entry2 *cpuid__find(struct kvm_cpuid2 *cpuid, uint32_t function, uint32_t index);

#endif /* VMM_CPUID_H */
