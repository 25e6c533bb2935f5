/* SPDX-License-Identifier: MIT */
/*
 * The vperf hypercall port (hv/include/vperf/abi.h): the guest writes the operation with a 32-bit
 * `out` to VPERF_DEFAULT_PORT; the arguments are in RBX, RCX, RSI, RDI and the result goes back in
 * RAX, both through KVM's sync-regs area (no extra ioctl per hypercall). Handled here:
 * VPERF_HC_VERSION, VPERF_HC_EXIT (the VMM exits with the guest's status), VPERF_HC_UCALL (test
 * reports: print, assert, values). Every other operation goes to vmm_pv_dispatch() (pvdev.c). Reads
 * of the port, writes of another width and string I/O (rep outs) are ignored and counted (RAX is
 * left alone).
 */
#ifndef VMM_PVPORT_H
#define VMM_PVPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <vperf/abi.h>

#include "util.h"

struct vm;
struct vcpu;

#define PVPORT_NR_PORTS 4 /* the 32-bit access at VPERF_DEFAULT_PORT spans 4 port addresses */

int pvport__init(struct vm *vm) __must_check;
/* One hypercall from vcpu; returns the value for RAX (a negative VPERF_E* code on failure). */
int64_t pvport__hypercall(struct vcpu *vcpu, uint32_t op, uint64_t args[4]);
/* The handler registered on the I/O bus (opaque: the vm). */
void pvport__io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		unsigned int size);
/*
 * "VERSION", "EXIT", ... or NULL for an unknown operation.  Inline, so that the exit statistics
 * (stats.c) name the operations without calling into the port's handler.
 */
static inline const char *pvport__op_name(uint32_t op)
{
	static const char *const op_names[] = {
		[VPERF_HC_VERSION] = "VERSION",
		[VPERF_HC_EXIT] = "EXIT",
		[VPERF_HC_UCALL] = "UCALL",
		[VPERF_HC_PAGE_REGISTER] = "PAGE_REGISTER",
		[VPERF_HC_COUNTERS_SET] = "COUNTERS_SET",
		[VPERF_HC_SNAPSHOT] = "SNAPSHOT",
		[VPERF_HC_OVERFLOW_SET] = "OVERFLOW_SET",
		[VPERF_HC_OVERFLOW_ACK] = "OVERFLOW_ACK",
		[VPERF_HC_TRACE_REGISTER] = "TRACE_REGISTER",
		[VPERF_HC_TRACE_FLUSH] = "TRACE_FLUSH",
		[VPERF_HC_EVENT_INFO] = "EVENT_INFO",
	};
	_Static_assert(sizeof(op_names) / sizeof(op_names[0]) == VPERF_HC_NR_OPS,
		       "a vperf operation without a name");

	return op < VPERF_HC_NR_OPS ? op_names[op] : NULL;
}

#endif /* VMM_PVPORT_H */
