/* SPDX-License-Identifier: MIT */
/*
 * A fake VMM for libvperf-hv's fuzzer and unit tests: guest RAM is a heap
 * buffer at a non-zero guest-physical base, so that GPA 0, addresses
 * below the base, past the end and wrapping ranges are all "outside".
 */
#ifndef VPERF_FAKE_VM_H
#define VPERF_FAKE_VM_H

#include <stdint.h>
#include <string.h>

#include <vperf/hv.h>

#define FAKE_RAM_BASE	0x100000ull
#define FAKE_RAM_SIZE	(64u * 1024)

struct fake_vm {
	unsigned char *ram;
	uint64_t irqs;
	uint64_t nmis[2];		/* per vCPU */
	uint64_t exits[2];		/* per vCPU, all reasons */
	int exited;
	uint32_t exit_status;
	uint64_t reports;
	/* version-2 trace records delivered (the first 64 KiB of them), and their total */
	unsigned char records[64 * 1024];
	size_t records_len;
	uint64_t records_total;
	uint64_t clock_samples;
	uint64_t last_guest_tsc;
};

static inline void *fake_gpa_to_hva(void *vmm, uint64_t gpa, uint64_t len)
{
	struct fake_vm *vm = vmm;

	if (!len || gpa < FAKE_RAM_BASE || len > FAKE_RAM_SIZE ||
	    gpa - FAKE_RAM_BASE > FAKE_RAM_SIZE - len)
		return NULL;
	return vm->ram + (gpa - FAKE_RAM_BASE);
}

static inline int fake_irq_raise(void *vmm, uint32_t gsi)
{
	((struct fake_vm *)vmm)->irqs++;
	return 0;
}

static inline int fake_nmi_raise(void *vmm, int vcpu)
{
	((struct fake_vm *)vmm)->nmis[vcpu & 1]++;
	return 0;
}

static inline uint64_t fake_exit_count(void *vmm, int vcpu, uint32_t reason)
{
	struct fake_vm *vm = vmm;

	return vcpu >= 0 && vcpu < 2 && (reason == UINT32_MAX || reason == 2) ? vm->exits[vcpu] : 0;
}

static inline int fake_stats_fd(void *vmm, int vcpu)
{
	return -1;
}

static inline void fake_guest_exit(void *vmm, int vcpu, uint32_t status)
{
	struct fake_vm *vm = vmm;

	vm->exited = 1;
	vm->exit_status = status;
}

static inline void fake_report(void *vmm, int vcpu, const struct vperf_ucall *uc)
{
	struct fake_vm *vm = vmm;

	/* The device must hand over a terminated message. */
	if (memchr(uc->msg, '\0', sizeof(uc->msg)))
		vm->reports++;
}

static inline void fake_trace_records(void *vmm, int vcpu, const void *recs, size_t len)
{
	struct fake_vm *vm = vmm;
	size_t room = sizeof(vm->records) - vm->records_len;

	(void)vcpu;
	memcpy(vm->records + vm->records_len, recs, len < room ? len : room);
	vm->records_len += len < room ? len : room;
	vm->records_total += len;
}

static inline void fake_trace_clock_sample(void *vmm, int vcpu, uint64_t guest_tsc)
{
	struct fake_vm *vm = vmm;

	(void)vcpu;
	vm->clock_samples++;
	vm->last_guest_tsc = guest_tsc;
}

/* A VMM that names a few KVM exit reasons (KVM_EXIT_IO, _HLT, _MMIO, _SHUTDOWN), lowercase. */
static inline const char *fake_exit_name(void *vmm, uint32_t reason)
{
	(void)vmm;
	switch (reason) {
	case 2:
		return "io";
	case 5:
		return "hlt";
	case 6:
		return "mmio";
	case 8:
		return "shutdown";
	default:
		return NULL;
	}
}

static const struct vperf_hv_ops fake_ops = {
	.gpa_to_hva = fake_gpa_to_hva,
	.irq_raise = fake_irq_raise,
	.exit_count = fake_exit_count,
	.stats_fd = fake_stats_fd,
	.guest_exit = fake_guest_exit,
	.report = fake_report,
	.nmi_raise = fake_nmi_raise,
	.trace_records = fake_trace_records,
	.trace_clock_sample = fake_trace_clock_sample,
	.exit_name = fake_exit_name,
};

#endif
