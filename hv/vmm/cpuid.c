// SPDX-License-Identifier: MIT
/* CPUID for the guest's vCPUs (see cpuid.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <vperf/abi.h>

#include "cpuid.h"
#include "log.h"
#include "pvdev.h"
#include "vm.h"

#define CPUID_MAX_NENT		4096

#define CPUID_1_ECX_TSC_DEADLINE	(1u << 24)
#define CPUID_1_ECX_HYPERVISOR		(1u << 31)
#define CPUID_1_EDX_HTT			(1u << 28)
#define CPUID_80000001_ECX_CMP_LEGACY	(1u << 1)

int cpuid__init(struct vm *vm)
{
	uint32_t nent = 64;

	for (;;) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + nent * sizeof(c->entries[0]));

		if (!c)
			return -ENOMEM;
		c->nent = nent;
		if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			vm->supported_cpuid = c;
			return 0;
		}
		free(c);
		if (errno != E2BIG || nent >= CPUID_MAX_NENT) {
			int err = errno;

			pr_err("KVM_GET_SUPPORTED_CPUID: %s", strerror(err));
			return -err;
		}
		nent *= 2;
	}
}

struct kvm_cpuid_entry2 *cpuid__find(struct kvm_cpuid2 *cpuid, uint32_t function, uint32_t index)
{
	uint32_t i;

	for (i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		if (e->function != function)
			continue;
		if ((e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) && e->index != index)
			continue;
		return e;
	}
	return NULL;
}

static int set_leaf(struct kvm_cpuid2 *cpuid, uint32_t cap, uint32_t function, uint32_t eax,
		    uint32_t ebx, uint32_t ecx, uint32_t edx)
{
	struct kvm_cpuid_entry2 *e = cpuid__find(cpuid, function, 0);

	if (!e) {
		if (cpuid->nent >= cap)
			return -ENOSPC;
		e = &cpuid->entries[cpuid->nent++];
	}
	*e = (struct kvm_cpuid_entry2){
		.function = function, .eax = eax, .ebx = ebx, .ecx = ecx, .edx = edx,
	};
	return 0;
}

/*
 * Leaves 0xb and 0x1f: level 0 SMT (1 thread), level 1 core (1 core), then invalid levels; EDX
 * x2APIC ID.
 */
static void patch_ext_topology(struct kvm_cpuid_entry2 *e, uint32_t apic_id)
{
	e->eax = 0;
	if (e->index == 0) {
		e->ebx = 1;
		e->ecx = 1u << 8 | e->index;
	} else if (e->index == 1) {
		e->ebx = 1;
		e->ecx = 2u << 8 | e->index;
	} else {
		e->ebx = 0;
		e->ecx = e->index;
	}
	e->edx = apic_id;
}

int cpuid__patch(struct kvm_cpuid2 *cpuid, uint32_t cap, const struct cpuid_params *p)
{
	uint32_t i;
	bool doorbell;
	int err;

	for (i = 0; i < cpuid->nent; i++) {
		struct kvm_cpuid_entry2 *e = &cpuid->entries[i];

		switch (e->function) {
		case 1:
			/* EBX[31:24] initial APIC ID, EBX[23:16] logical processors per package. */
			e->ebx = (e->ebx & 0xffffu) | p->apic_id << 24 | 1u << 16;
			e->edx &= ~CPUID_1_EDX_HTT;
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
			if (p->tsc_deadline)
				e->ecx |= CPUID_1_ECX_TSC_DEADLINE;
			break;
		case 4:
			/*
			 * Deterministic cache parameters: one core per package, one thread per
			 * cache.
			 */
			e->eax &= 0x3fffu;
			break;
		case 0xb:
		case 0x1f:
			patch_ext_topology(e, p->apic_id);
			break;
		case 0x80000001:
			e->ecx &= ~CPUID_80000001_ECX_CMP_LEGACY;
			break;
		case 0x80000008:
			/* ECX: ApicIdSize[15:12] = 0 and NC[7:0] = 0: one core per package. */
			e->ecx &= ~0xf0ffu;
			break;
		case 0x8000001e:
			/* AMD extended APIC ID, compute unit (core) ID, node 0 of 1. */
			e->eax = p->apic_id;
			e->ebx = p->apic_id & 0xffu;
			e->ecx = 0;
			break;
		}
	}

	doorbell = p->vperf_features & VPERF_FEAT_DOORBELL;
	err = set_leaf(cpuid, cap, VPERF_CPUID_BASE, doorbell ? VPERF_CPUID_DOORBELL : VPERF_CPUID_INFO,
		       VPERF_CPUID_SIG_EBX, VPERF_CPUID_SIG_ECX, VPERF_CPUID_SIG_EDX);
	if (err)
		return err;
	err = set_leaf(cpuid, cap, VPERF_CPUID_INFO, VPERF_ABI_VERSION, p->vperf_features,
		       VPERF_DEFAULT_PORT, VPERF_DEFAULT_GSI);
	if (err || !doorbell)
		return err;
	return set_leaf(cpuid, cap, VPERF_CPUID_DOORBELL, (uint32_t)VM_DOORBELL_ADDR,
			(uint32_t)((uint64_t)VM_DOORBELL_ADDR >> 32), VPERF_DOORBELL_SIZE, 0);
}

int cpuid__setup_vcpu(struct vm *vm, struct vcpu *vcpu)
{
	const struct kvm_cpuid2 *sup = vm->supported_cpuid;
	uint32_t cap = sup->nent + CPUID_EXTRA_ENTRIES;
	struct cpuid_params p = {
		.apic_id = vcpu->id,
		.tsc_deadline = vm->tsc_deadline,
		.vperf_features = vmm_pv_features(vm),
	};
	struct kvm_cpuid2 *c;
	int err;

	c = calloc(1, sizeof(*c) + cap * sizeof(c->entries[0]));
	if (!c)
		return -ENOMEM;
	c->nent = sup->nent;
	memcpy(c->entries, sup->entries, sup->nent * sizeof(c->entries[0]));
	err = cpuid__patch(c, cap, &p);
	if (err) {
		pr_err("vcpu%u: building its CPUID leaves: %s", vcpu->id, strerror(-err));
		goto out;
	}
	if (ioctl(vcpu->fd, KVM_SET_CPUID2, c) < 0) {
		err = -errno;
		pr_err("vcpu%u: KVM_SET_CPUID2: %s", vcpu->id, strerror(-err));
	}
out:
	free(c);
	return err;
}
