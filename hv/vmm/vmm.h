/* SPDX-License-Identifier: MIT */
/*
 * The life of one guest: build the VM (memory, irqchip, devices, ACPI tables, kernel, vCPUs), run
 * it until the guest powers off, reboots, reports an exit status or crashes (or the timeout or a
 * signal ends it), then stop every thread and tear it all down. main.c only parses options and
 * turns the outcome into an exit status.
 */
#ifndef VMM_VMM_H
#define VMM_VMM_H

#include "util.h"
#include "vm.h"

/*
 * Block the signals that stop the guest (SIGINT, SIGTERM, SIGHUP) and the vCPU kick signal in the
 * calling thread, before any other thread exists (they inherit the mask); vmm__run() receives the
 * stop signals through a signalfd. Call it first, so that a signal during setup is held until the
 * VM can stop cleanly.
 */
int vmm__block_signals(void) __must_check;
/*
 * Build everything; on failure nothing is left to tear down. Returns 0 or -errno (the reason is
 * printed).
 */
int vmm__setup(struct vm *vm, const struct vm_config *cfg) __must_check;
/*
 * Run the guest until it stops; timeout_s 0 means no timeout. SIGINT, SIGTERM and SIGHUP stop it
 * cleanly (vmm__block_signals() first). Returns 0 once every vCPU thread has stopped, or -errno if
 * the threads could not start.
 */
int vmm__run(struct vm *vm, unsigned int timeout_s) __must_check;
void vmm__teardown(struct vm *vm);
/*
 * The devices on vm's port-I/O bus: the UART (its interrupt and console wiring), the platform ports,
 * the vperf device and its port. Part of vmm__setup(); on its own for the fuzzers, which build a VM
 * without KVM (the console must be initialized first). Undo with vmm_pv_exit() and
 * serial8250__exit().
 */
int vmm__setup_devices(struct vm *vm) __must_check;
/* The exit status for how the VM stopped (see --help). */
int vmm__exit_status(struct vm *vm);

#endif /* VMM_VMM_H */
