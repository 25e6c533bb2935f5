/* SPDX-License-Identifier: MIT */
/*
 * The vperf paravirtual device of vperf-vmm: libvperf-hv (hv/core) behind the hypercall port, given what only
 * the VMM knows through its ops table: guest memory, interrupt injection, the exit accounting of stats.c, each
 * vCPU's KVM binary stats, and how the VM stops.
 */
#ifndef VMM_PVDEV_H
#define VMM_PVDEV_H

#include <stdbool.h>
#include <stdint.h>

struct vm;
struct vcpu;

#define VMM_MAX_ALLOW	256	/* --allow patterns in all */

struct vm_config;

/*
 * --allow LIST: append LIST's comma-separated patterns to cfg's allowlist
 * ("default": the device's default list).  0, or -EINVAL / -ENOMEM with the
 * reason printed (cfg keeps what it had).
 */
int vmm_pv_allow_add(struct vm_config *cfg, const char *list) __attribute__((warn_unused_result));
void vmm_pv_allow_free(struct vm_config *cfg);

/* Create the device (before the vCPUs: their CPUID announces its features). */
int vmm_pv_init(struct vm *vm) __attribute__((warn_unused_result));
void vmm_pv_exit(struct vm *vm);
/* One hypercall of vcpu (args: RBX, RCX, RSI, RDI); returns the guest's RAX. */
int64_t vmm_pv_hypercall(struct vcpu *vcpu, uint32_t op, const uint64_t args[4]);
/*
 * An MMIO exit of vcpu: true if gpa is the doorbell page (VM_DOORBELL_ADDR; a load fills min(len, 8) bytes of
 * data), false if it is not the device's.
 */
bool vmm_pv_doorbell(struct vcpu *vcpu, uint64_t gpa, uint32_t len, bool is_write, uint8_t *data);
/* VPERF_FEAT_* bits the device offers (CPUID VPERF_CPUID_INFO EBX). */
uint32_t vmm_pv_features(struct vm *vm);
/* In the vCPU's thread: before its first KVM_RUN, and after each exit it handled. */
void vmm_pv_vcpu_enter(struct vcpu *vcpu);
void vmm_pv_vcpu_exit(struct vcpu *vcpu);

#endif /* VMM_PVDEV_H */
