/* SPDX-License-Identifier: MIT */
/*
 * vperf-vmm without /dev/kvm, for its fuzzers: a struct vm whose guest RAM is a heap buffer in two
 * regions around the PCI hole (as the real layout: RAM from GPA 0, the rest from 4 GiB), two vCPUs
 * whose kvm_run areas are heap buffers too, and the real devices (vmm__setup_devices(): UART,
 * console, platform ports, the vperf device and its port).  A fuzzer fills a vCPU's kvm_run the way
 * KVM does for an exit and calls vcpu__dispatch_exit(), the function the vCPU thread calls after
 * every KVM_RUN.  KVM's ioctls fail on the fd -1 (interrupt lines, NMIs, stats), as they may on a
 * real host; the device copes.
 */
#ifndef VMM_FAKE_VMM_H
#define VMM_FAKE_VMM_H

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "log.h"
#include "pvdev.h"
#include "vm.h"
#include "vmm.h"

#define FV_LOW_SIZE	(48u * 1024)		/* RAM [0, 48 KiB) */
#define FV_HIGH_GPA	VM_PCI_HOLE_END		/* and [4 GiB, 4 GiB + 16 KiB) */
#define FV_HIGH_SIZE	(16u * 1024)
#define FV_RAM_SIZE	(FV_LOW_SIZE + FV_HIGH_SIZE)
#define FV_NR_VCPUS	2
#define FV_RUN_SIZE	(3 * 4096)		/* KVM_GET_VCPU_MMAP_SIZE on x86 */
#define FV_PIO_OFFSET	4096			/* KVM_PIO_PAGE_OFFSET * PAGE_SIZE */

/* The offset of guest-physical [gpa, gpa + len) in the RAM image, or -1 if not all of it is RAM. */
static inline long fv_ram_offset(uint64_t gpa, uint64_t len)
{
	if (gpa < FV_LOW_SIZE && len <= FV_LOW_SIZE - gpa)
		return (long)gpa;
	if (gpa >= FV_HIGH_GPA && gpa - FV_HIGH_GPA < FV_HIGH_SIZE &&
	    len <= FV_HIGH_SIZE - (gpa - FV_HIGH_GPA))
		return (long)(FV_LOW_SIZE + (gpa - FV_HIGH_GPA));
	return -1;
}

static int fv_devnull = -1;

/*
 * The VMM prints the guest's ucall reports on stderr with write(2) (pvdev.c).  The fuzzers link
 * with -Wl,--wrap=write: while fv_capture is set, writes to stderr land in fv_err (the last
 * FV_ERR_SIZE bytes are kept, fv_err_len counts all, fv_err_writes the calls) instead of flooding
 * libFuzzer's output; everything else goes through.
 */
#define FV_ERR_SIZE	4096
static bool fv_capture;
static char fv_err[FV_ERR_SIZE];
static size_t fv_err_len, fv_err_writes;

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	if (!fv_capture || fd != STDERR_FILENO)
		return __real_write(fd, buf, n);
	for (size_t i = 0; i < n; i++)
		fv_err[(fv_err_len + i) % FV_ERR_SIZE] = ((const char *)buf)[i];
	fv_err_len += n;
	fv_err_writes++;
	return (ssize_t)n;
}

/*
 * libFuzzer's once-per-process hook, the same for every target here (each includes this header
 * once): silence the VMM's messages, console output to /dev/null.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	vmm_log_set_level(VMM_LOG_NONE);
	if (fv_devnull < 0)
		fv_devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return 0;
}

/* NULL if the VM cannot be built (out of memory).  Captures stderr until fv_delete(). */
static inline struct vm *fv_new(void)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	uint8_t *ram = calloc(1, FV_RAM_SIZE);
	unsigned int i;

	fv_capture = true;
	fv_err_len = fv_err_writes = 0;
	if (!vm || !ram)
		goto err;
	vm->kvm_fd = vm->vm_fd = vm->stop_fd = -1;
	pthread_mutex_init(&vm->stop_lock, NULL);
	vm->cfg.nr_vcpus = FV_NR_VCPUS;
	vm->cfg.mem_size = FV_RAM_SIZE;
	vm->ram = ram;
	vm->ram_size = FV_RAM_SIZE;
	vm->mem[0] = (struct vm_mem_region){ .gpa = 0, .size = FV_LOW_SIZE, .hva = ram };
	vm->mem[1] = (struct vm_mem_region){ .gpa = FV_HIGH_GPA, .size = FV_HIGH_SIZE,
					     .hva = ram + FV_LOW_SIZE };
	vm->nr_mem = 2;
	vm->run_size = FV_RUN_SIZE;
	ioport_bus__init(&vm->iobus);
	for (i = 0; i < FV_NR_VCPUS; i++) {
		struct kvm_run *run = calloc(1, FV_RUN_SIZE);

		if (!run)
			goto err_vcpus;
		vm->vcpus[i] = (struct vcpu){ .vm = vm, .id = i, .fd = -1, .stats_fd = -1, .run = run };
		vm->nr_vcpus = i + 1;
	}
	if (console__init(&vm->console, NULL, false, false, vm__console_line, vm))
		goto err_vcpus;
	vm->console.out_fd = fv_devnull;
	if (vmm__setup_devices(vm))
		goto err_console;
	for (i = 0; i < FV_NR_VCPUS; i++)
		vmm_pv_vcpu_enter(&vm->vcpus[i]);
	return vm;

err_console:
	console__exit(&vm->console);
err_vcpus:
	for (i = 0; i < vm->nr_vcpus; i++)
		free(vm->vcpus[i].run);
	pthread_mutex_destroy(&vm->stop_lock);
err:
	free(ram);
	free(vm);
	fv_capture = false;
	return NULL;
}

static inline void fv_delete(struct vm *vm)
{
	unsigned int i;

	vmm_pv_exit(vm);
	serial8250__exit(&vm->uart);
	console__exit(&vm->console);
	for (i = 0; i < vm->nr_vcpus; i++)
		free(vm->vcpus[i].run);
	pthread_mutex_destroy(&vm->stop_lock);
	free(vm->ram);
	free(vm);
	fv_capture = false;
}

/* A port-I/O exit as KVM reports it: count elements of size bytes at data_offset in kvm_run. */
static inline int fv_io(struct vcpu *v, uint16_t port, bool out, uint8_t size, uint32_t count,
			uint64_t data_offset)
{
	struct kvm_run *run = v->run;

	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = out ? KVM_EXIT_IO_OUT : KVM_EXIT_IO_IN;
	run->io.size = size;
	run->io.port = port;
	run->io.count = count;
	run->io.data_offset = data_offset;
	return vcpu__dispatch_exit(v);
}

/* The hypercall `out %eax, %dx` with RBX, RCX, RSI, RDI = args; returns RAX. */
static inline int64_t fv_hypercall(struct vcpu *v, uint32_t op, const uint64_t args[4])
{
	struct kvm_regs *regs = &v->run->s.regs.regs;

	regs->rbx = args[0];
	regs->rcx = args[1];
	regs->rsi = args[2];
	regs->rdi = args[3];
	regs->rax = 0x5a5a5a5a5a5a5a5aull;
	put_le32((uint8_t *)v->run + FV_PIO_OFFSET, op);
	fv_io(v, VPERF_DEFAULT_PORT, true, 4, 1, FV_PIO_OFFSET);
	return (int64_t)regs->rax;
}

/* An MMIO exit: len bytes at gpa, data (8 bytes) in kvm_run for a write, filled for a read. */
static inline int fv_mmio(struct vcpu *v, uint64_t gpa, uint32_t len, bool is_write,
			  const uint8_t data[8])
{
	struct kvm_run *run = v->run;

	run->exit_reason = KVM_EXIT_MMIO;
	run->mmio.phys_addr = gpa;
	run->mmio.len = len;
	run->mmio.is_write = is_write;
	memcpy(run->mmio.data, data, 8);
	return vcpu__dispatch_exit(v);
}

/* Copy len bytes to guest-physical gpa, the part that is RAM (the guest writes its memory). */
static inline void fv_ram_write(struct vm *vm, uint64_t gpa, const void *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		long off = fv_ram_offset(gpa + i, 1);

		if (off >= 0)
			vm->ram[off] = ((const uint8_t *)buf)[i];
	}
}

#endif
