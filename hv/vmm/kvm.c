// SPDX-License-Identifier: MIT
/*
 * The VM: /dev/kvm checks, KVM_CREATE_VM, in-kernel irqchip and PIT, guest RAM, the guest-physical
 * to host pointer helper, IRQ lines, and the stop request every part of the VMM uses to end the
 * run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"
#include "vm.h"

#define NESTED_HINT                                                                          \
	"to run guests on a host without hardware virtualization, run vperf-vmm inside the " \
	"nested "                                                                            \
	"test stack: tests/vm/run-nested.sh (see tests/vm/README.md)"

struct kvm_cap_req {
	long cap;
	const char *name;
	const char *why;
};

#define CAP(c, why) { c, #c, why }
static const struct kvm_cap_req required_caps[] = {
	CAP(KVM_CAP_USER_MEMORY, "guest RAM"),
	CAP(KVM_CAP_SET_TSS_ADDR, "x86 TSS area"),
	CAP(KVM_CAP_SET_IDENTITY_MAP_ADDR, "x86 identity map page"),
	CAP(KVM_CAP_IRQCHIP, "in-kernel PIC, IO-APIC and local APICs"),
	CAP(KVM_CAP_PIT2, "in-kernel PIT"),
	CAP(KVM_CAP_EXT_CPUID, "CPUID setup"),
	CAP(KVM_CAP_IMMEDIATE_EXIT, "stopping vCPUs"),
	CAP(KVM_CAP_SYNC_REGS, "vperf hypercall arguments"),
};
#undef CAP

static int check_kvm(struct vm *vm, const struct vm_config *cfg)
{
	unsigned int i;
	int ret, max;

	/*
	 * kvm_pvm (a software KVM backend for hosts without VT-x/AMD-V) passes every check below,
	 * but runs only guests built for PVM: a normal kernel spins in KVM_RUN forever without a
	 * single exit.
	 */
	if (access("/sys/module/kvm_pvm", F_OK) == 0) {
		pr_err("this host's /dev/kvm is the kvm_pvm software backend: it runs only "
		       "PVM-enabled guest kernels, not a normal x86-64 kernel; %s", NESTED_HINT);
		return -ENOTSUP;
	}

	ret = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (ret != KVM_API_VERSION) {
		pr_err("/dev/kvm speaks KVM API version %d, vperf-vmm needs %d; %s", ret,
		       KVM_API_VERSION, NESTED_HINT);
		return -ENOTSUP;
	}
	for (i = 0; i < ARRAY_SIZE(required_caps); i++) {
		ret = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, required_caps[i].cap);
		if (ret <= 0) {
			pr_err("this KVM lacks %s (needed for: %s): it cannot run a PC guest; %s",
			       required_caps[i].name, required_caps[i].why, NESTED_HINT);
			return -ENOTSUP;
		}
	}
	vm->sync_regs = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SYNC_REGS);
	if (!(vm->sync_regs & KVM_SYNC_X86_REGS)) {
		pr_err("this KVM's KVM_CAP_SYNC_REGS (0x%x) lacks KVM_SYNC_X86_REGS; %s",
		       vm->sync_regs, NESTED_HINT);
		return -ENOTSUP;
	}
	vm->tsc_deadline = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) > 0;
	if (!vm->tsc_deadline)
		pr_warn("KVM lacks KVM_CAP_TSC_DEADLINE_TIMER: the guest's local APIC timer must "
			"be calibrated without a PIT (ACPI hardware-reduced mode); boot may fail");

	max = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (max <= 0)
		max = ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	if (max <= 0)
		max = 4;	/* KVM API: assume 4 when neither capability is there */
	if (cfg->nr_vcpus > (unsigned int)max) {
		pr_err("--vcpus %u: this KVM supports at most %d vCPUs per VM", cfg->nr_vcpus, max);
		return -EINVAL;
	}

	ret = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret < (int)sizeof(struct kvm_run)) {
		pr_err("KVM_GET_VCPU_MMAP_SIZE returned %d: %s", ret,
		       ret < 0 ? strerror(errno) : "too small");
		return ret < 0 ? -errno : -EINVAL;
	}
	vm->run_size = (size_t)ret;
	return 0;
}

static int setup_memory(struct vm *vm)
{
	uint64_t low = MIN(vm->cfg.mem_size, VM_PCI_HOLE_START);
	unsigned int i;
	void *p;

	p = mmap(NULL, vm->cfg.mem_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		int err = errno;

		pr_err("cannot map %llu MiB of guest memory: %s",
		       (unsigned long long)(vm->cfg.mem_size >> 20), strerror(err));
		return -err;
	}
	vm->ram = p;
	vm->ram_size = vm->cfg.mem_size;

	vm->mem[0] = (struct vm_mem_region){ .gpa = 0, .size = low, .hva = vm->ram };
	vm->nr_mem = 1;
	if (vm->cfg.mem_size > low) {
		/*
		 * RAM above 3 GiB continues at 4 GiB, past the hole for the APICs (no PCI devices
		 * here).
		 */
		vm->mem[1] = (struct vm_mem_region){
			.gpa = VM_PCI_HOLE_END,
			.size = vm->cfg.mem_size - low,
			.hva = vm->ram + low,
		};
		vm->nr_mem = 2;
	}
	for (i = 0; i < vm->nr_mem; i++) {
		struct kvm_userspace_memory_region r = {
			.slot = i,
			.guest_phys_addr = vm->mem[i].gpa,
			.memory_size = vm->mem[i].size,
			.userspace_addr = (uint64_t)(uintptr_t)vm->mem[i].hva,
		};

		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0) {
			int err = errno;

			pr_err("KVM_SET_USER_MEMORY_REGION slot %u (%llu MiB at 0x%llx): %s", i,
			       (unsigned long long)(r.memory_size >> 20),
			       (unsigned long long)r.guest_phys_addr, strerror(err));
			return -err;
		}
	}
	return 0;
}

int vm__init(struct vm *vm, const struct vm_config *cfg)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	uint64_t ident = VM_IDENTITY_MAP_ADDR;
	int err;

	memset(vm, 0, sizeof(*vm));
	vm->cfg = *cfg;
	vm->kvm_fd = -1;
	vm->vm_fd = -1;
	vm->stop_fd = -1;
	err = pthread_mutex_init(&vm->stop_lock, NULL);
	if (err)
		return -err;
	ioport_bus__init(&vm->iobus);

	vm->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->stop_fd < 0) {
		err = -errno;
		pr_err("eventfd: %s", strerror(-err));
		goto err_lock;
	}

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0) {
		err = -errno;
		if (err == -ENOENT)
			pr_err("no /dev/kvm: this host has no KVM (load kvm-intel or kvm-amd where "
			       "the CPU has VT-x/AMD-V); %s", NESTED_HINT);
		else if (err == -EACCES || err == -EPERM)
			pr_err("cannot open /dev/kvm: %s (run as root or join the group that owns "
			       "/dev/kvm)",
			       strerror(-err));
		else
			pr_err("cannot open /dev/kvm: %s", strerror(-err));
		goto err_stopfd;
	}
	err = check_kvm(vm, cfg);
	if (err)
		goto err_kvm;

	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		err = -errno;
		pr_err("KVM_CREATE_VM: %s", strerror(-err));
		goto err_kvm;
	}
	/*
	 * Intel needs both pages below 4 GiB outside RAM; AMD ignores them. Both before the first
	 * vCPU.
	 */
	if (ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &ident) < 0) {
		err = -errno;
		pr_err("KVM_SET_IDENTITY_MAP_ADDR: %s", strerror(-err));
		goto err_vm;
	}
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, (unsigned long)VM_TSS_ADDR) < 0) {
		err = -errno;
		pr_err("KVM_SET_TSS_ADDR: %s", strerror(-err));
		goto err_vm;
	}
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		err = -errno;
		pr_err("KVM_CREATE_IRQCHIP (in-kernel PIC, IO-APIC, local APICs): %s",
		       strerror(-err));
		goto err_vm;
	}
	if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0) {
		err = -errno;
		pr_err("KVM_CREATE_PIT2: %s", strerror(-err));
		goto err_vm;
	}
	err = setup_memory(vm);
	if (err)
		goto err_mem;
	return 0;

err_mem:
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	vm->ram = NULL;
err_vm:
	close(vm->vm_fd);
	vm->vm_fd = -1;
err_kvm:
	close(vm->kvm_fd);
	vm->kvm_fd = -1;
err_stopfd:
	close(vm->stop_fd);
	vm->stop_fd = -1;
err_lock:
	pthread_mutex_destroy(&vm->stop_lock);
	return err;
}

void vm__exit(struct vm *vm)
{
	free(vm->supported_cpuid);
	vm->supported_cpuid = NULL;
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->ram)
		munmap(vm->ram, vm->ram_size);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	if (vm->stop_fd >= 0)
		close(vm->stop_fd);
	vm->vm_fd = vm->kvm_fd = vm->stop_fd = -1;
	vm->ram = NULL;
	pthread_mutex_destroy(&vm->stop_lock);
}

void *vm__gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < vm->nr_mem; i++) {
		const struct vm_mem_region *r = &vm->mem[i];

		if (range_contains(r->gpa, r->size, gpa, len))
			return r->hva + (gpa - r->gpa);
	}
	return NULL;
}

uint64_t vm__low_ram_end(const struct vm *vm)
{
	return vm->nr_mem ? vm->mem[0].gpa + vm->mem[0].size : 0;
}

int vm__irq_line(struct vm *vm, unsigned int irq, int level)
{
	struct kvm_irq_level l = { .irq = irq, .level = (uint32_t)level };

	if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &l) < 0)
		return -errno;
	return 0;
}

void vm__request_stop(struct vm *vm, enum vm_stop_reason reason, int status)
{
	uint64_t one = 1;

	pthread_mutex_lock(&vm->stop_lock);
	if (!vm->stop_reason) {
		vm->stop_reason = reason;
		vm->stop_status = status;
		atomic_store_explicit(&vm->stopping, true, memory_order_release);
		if (vm->stop_fd >= 0 && write(vm->stop_fd, &one, sizeof(one)) < 0)
			pr_debug("stop eventfd: %s", strerror(errno));
	}
	pthread_mutex_unlock(&vm->stop_lock);
}

const char *vm__stop_reason_name(enum vm_stop_reason reason)
{
	static const char *const names[] = {
		[VM_STOP_NONE] = "none",
		[VM_STOP_POWEROFF] = "poweroff",
		[VM_STOP_REBOOT] = "reboot",
		[VM_STOP_GUEST_EXIT] = "guest-exit",
		[VM_STOP_CRASH] = "crash",
		[VM_STOP_TIMEOUT] = "timeout",
		[VM_STOP_SIGNAL] = "signal",
		[VM_STOP_ERROR] = "vmm-error",
		[VM_STOP_FROZEN] = "frozen",
	};

	if ((unsigned int)reason < ARRAY_SIZE(names) && names[reason])
		return names[reason];
	return "unknown";
}

void vm__console_line(void *ctx, const char *line)
{
	struct vm *vm = ctx;

	/*
	 * Lines arrive one at a time (under the console lock): write the time, then publish the
	 * flag.
	 */
	if (strstr(line, "Kernel panic - not syncing") && !atomic_load(&vm->panic_seen)) {
		clock_gettime(CLOCK_MONOTONIC, &vm->panic_time);
		atomic_store(&vm->panic_seen, true);
		pr_debug("kernel panic seen on the console");
	}
}
