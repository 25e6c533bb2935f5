// SPDX-License-Identifier: MIT
/*
 * The vperf hypercall port (see pvport.h). Everything the guest hands over here is hostile input.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "log.h"
#include "pvdev.h"
#include "pvport.h"
#include "vm.h"


int64_t pvport__hypercall(struct vcpu *vcpu, uint32_t op, uint64_t args[4])
{
	if (op < VPERF_HC_NR_OPS)
		vcpu->stats.pv_ops[op]++;
	else
		vcpu->stats.pv_unknown_ops++;
	return vmm_pv_hypercall(vcpu, op, args);
}

void pvport__io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		unsigned int size)
{
	struct kvm_regs *regs = &vcpu->run->s.regs.regs;
	uint64_t args[4];

	/*
	 * One hypercall is one 32-bit OUT at the port; string I/O (rep outs) would repeat it:
	 * refused too.
	 */
	if (!is_write || offset != 0 || size != 4 ||
	    (vcpu->run->exit_reason == KVM_EXIT_IO && vcpu->run->io.count != 1)) {
		vcpu->stats.pv_bad_access++;
		if (!is_write)
			memset(data, 0xff, size);
		return;
	}
	args[0] = regs->rbx;
	args[1] = regs->rcx;
	args[2] = regs->rsi;
	args[3] = regs->rdi;
	regs->rax = (uint64_t)pvport__hypercall(vcpu, get_le32(data), args);
	/*
	 * KVM loads the edited registers on the next KVM_RUN, then completes the OUT (RIP past it).
	 */
	vcpu->run->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
}

int pvport__init(struct vm *vm)
{
	int err = ioport_bus__register(&vm->iobus, VPERF_DEFAULT_PORT, PVPORT_NR_PORTS, pvport__io,
				       vm, "vperf");

	if (err)
		pr_err("registering the vperf port 0x%x: %s", VPERF_DEFAULT_PORT, strerror(-err));
	return err;
}
