// SPDX-License-Identifier: MIT
/*
 * vCPUs: creation (CPUID, local APIC LINT1 = NMI, sync regs), one thread per vCPU running the
 * KVM_RUN loop, exit handling and accounting, and the kick that makes a thread leave KVM_RUN when
 * the VM stops.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cpuid.h"
#include "log.h"
#include "pvdev.h"
#include "record.h"
#include "vm.h"

#define APIC_LVT1		0x360
#define APIC_DM_NMI		0x400
#define MMIO_REPORTS_MAX	16

static void kick_handler(int sig)
{
	(void)sig;	/* only there to interrupt KVM_RUN (EINTR) */
}

int vcpu__setup_signals(void)
{
	struct sigaction sa = { .sa_handler = kick_handler, .sa_flags = 0 };	/* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * LINT1 delivers NMIs, as PC firmware sets it (the MADT says so too); LINT0 stays masked: no 8259
 * in use.
 */
static int setup_lapic(struct vcpu *vcpu)
{
	struct kvm_lapic_state lapic;
	uint32_t v;

	if (ioctl(vcpu->fd, KVM_GET_LAPIC, &lapic) < 0)
		return -errno;
	memcpy(&v, &lapic.regs[APIC_LVT1], sizeof(v));
	v = (v & ~0x1c700u) | APIC_DM_NMI;	/* clear mask, trigger, delivery mode */
	memcpy(&lapic.regs[APIC_LVT1], &v, sizeof(v));
	if (ioctl(vcpu->fd, KVM_SET_LAPIC, &lapic) < 0)
		return -errno;
	return 0;
}

int vcpu__init(struct vm *vm, unsigned int id)
{
	struct vcpu *vcpu = &vm->vcpus[id];
	int err;

	memset(vcpu, 0, sizeof(*vcpu));
	vcpu->vm = vm;
	vcpu->id = id;
	vcpu->stats_fd = -1;
	vcpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)id);
	if (vcpu->fd < 0) {
		err = -errno;
		pr_err("KVM_CREATE_VCPU %u: %s", id, strerror(-err));
		return err;
	}
	vcpu->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		err = -errno;
		vcpu->run = NULL;
		pr_err("vcpu%u: mmap of kvm_run: %s", id, strerror(-err));
		goto err_fd;
	}
	err = cpuid__setup_vcpu(vm, vcpu);
	if (err)
		goto err_run;
	err = setup_lapic(vcpu);
	if (err) {
		pr_err("vcpu%u: local APIC setup: %s", id, strerror(-err));
		goto err_run;
	}
	/*
	 * KVM copies the GPRs into kvm_run at every exit: the vperf port reads arguments without an
	 * ioctl.
	 */
	vcpu->run->kvm_valid_regs = KVM_SYNC_X86_REGS;
	return 0;

err_run:
	munmap(vcpu->run, vm->run_size);
	vcpu->run = NULL;
err_fd:
	close(vcpu->fd);
	vcpu->fd = -1;
	return err;
}

void vcpu__exit(struct vcpu *vcpu)
{
	if (vcpu->run)
		munmap(vcpu->run, vcpu->vm->run_size);
	if (vcpu->fd >= 0)
		close(vcpu->fd);
	if (vcpu->stats_fd >= 0)
		close(vcpu->stats_fd);
	vcpu->run = NULL;
	vcpu->fd = -1;
	vcpu->stats_fd = -1;
}

/* The 8 bytes at guest-virtual gva, through the vCPU's own page tables (KVM_TRANSLATE). */
static bool read_gva(struct vcpu *vcpu, uint64_t gva, uint64_t *val)
{
	struct kvm_translation tr = { .linear_address = gva };
	const void *p;

	if (ioctl(vcpu->fd, KVM_TRANSLATE, &tr) < 0 || !tr.valid)
		return false;
	p = vm__gpa_to_hva(vcpu->vm, tr.physical_address, sizeof(*val));
	if (!p)
		return false;
	memcpy(val, p, sizeof(*val));
	return true;
}

/*
 * The coarse clock (the kernel's tick, a few ms): read on every exit, and a hang dump only needs
 * seconds; it costs no TSC read on the exit path.
 */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* KVM_MP_STATE_* (0 runnable, 3 halted, ...), -1 when KVM cannot say. */
static int mp_state(struct vcpu *vcpu)
{
	struct kvm_mp_state mp;

	return ioctl(vcpu->fd, KVM_GET_MP_STATE, &mp) < 0 ? -1 : (int)mp.mp_state;
}

/*
 * Where a vCPU that timed out was, and whether it still ran: its registers, its pending events,
 * when KVM_RUN last returned an exit to us and which, and a pointer chase from RAX (the first
 * quadword of each node, as a list walk follows it: a node that leads back shows a loop).
 */
static void dump_stuck(struct vcpu *vcpu)
{
	uint64_t last = atomic_load_explicit(&vcpu->last_exit_ns, memory_order_relaxed);
	struct kvm_vcpu_events ev;
	struct kvm_regs r;
	struct kvm_sregs s;
	char chase[200];
	uint64_t p, next;
	size_t n = 0;
	int i;

	if (ioctl(vcpu->fd, KVM_GET_REGS, &r) < 0 || ioctl(vcpu->fd, KVM_GET_SREGS, &s) < 0)
		return;
	pr_err("vcpu%u: rip 0x%llx rsp 0x%llx rflags 0x%llx cr0 0x%llx cr3 0x%llx cr4 0x%llx efer "
	       "0x%llx cs 0x%x",
	       vcpu->id, r.rip, r.rsp, r.rflags, s.cr0, s.cr3, s.cr4, s.efer, s.cs.selector);
	pr_err("vcpu%u: rax 0x%llx rbx 0x%llx rcx 0x%llx rdx 0x%llx rsi 0x%llx rdi 0x%llx rbp 0x%llx "
	       "r8 0x%llx r9 0x%llx r10 0x%llx r11 0x%llx r12 0x%llx r13 0x%llx r14 0x%llx r15 0x%llx",
	       vcpu->id, r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.r8, r.r9, r.r10, r.r11,
	       r.r12, r.r13, r.r14, r.r15);
	if (ioctl(vcpu->fd, KVM_GET_VCPU_EVENTS, &ev) == 0)
		pr_err("vcpu%u: events: irq injected %u nr %u, nmi injected %u pending %u masked %u, "
		       "shadow %u; apic_base 0x%llx, %u interrupts pending in the bitmap",
		       vcpu->id, ev.interrupt.injected, ev.interrupt.nr, ev.nmi.injected,
		       ev.nmi.pending, ev.nmi.masked, ev.interrupt.shadow, s.apic_base,
		       (unsigned int)(s.interrupt_bitmap[0] || s.interrupt_bitmap[1] ||
				      s.interrupt_bitmap[2] || s.interrupt_bitmap[3]));
	pr_err("vcpu%u: %" PRIu64 " KVM_RUNs (%" PRIu64 " EINTR); the last exit to user space, %s, "
	       "%.3f s before this dump",
	       vcpu->id, vcpu->stats.runs, vcpu->stats.run_eintr,
	       last ? stats__exit_name(vcpu->last_exit_reason) : "none",
	       last ? (double)(coarse_ns() - last) / 1e9 : 0.0);
	chase[0] = '\0';
	for (p = r.rax, i = 0; i < 6 && n < sizeof(chase) - 24; i++) {
		if (!read_gva(vcpu, p, &next)) {
			n += (size_t)snprintf(chase + n, sizeof(chase) - n, " -> (unmapped)");
			break;
		}
		n += (size_t)snprintf(chase + n, sizeof(chase) - n, " -> 0x%" PRIx64, next);
		if (!next || next == p)
			break;
		p = next;
	}
	pr_err("vcpu%u: from rax 0x%llx%s", vcpu->id, r.rax, chase);
	/* the code around RIP (what loops or faults there), and whether the stack is mapped at all */
	for (n = 0, i = -2; i < 2; i++) {
		if (!read_gva(vcpu, (r.rip & ~7ull) + 8 * (uint64_t)(int64_t)i, &next)) {
			n += (size_t)snprintf(chase + n, sizeof(chase) - n, " (unmapped)");
			continue;
		}
		n += (size_t)snprintf(chase + n, sizeof(chase) - n, " %016" PRIx64, next);
	}
	pr_err("vcpu%u: code at 0x%llx (quadwords from 0x%llx, little-endian):%s; idt 0x%llx+%u "
	       "gdt 0x%llx+%u tr 0x%llx; mp_state %d",
	       vcpu->id, r.rip, (r.rip & ~7ull) - 16, chase, s.idt.base, s.idt.limit, s.gdt.base,
	       s.gdt.limit, s.tr.base, mp_state(vcpu));
	/* the top of the stack: return addresses among them give the call chain */
	for (n = 0, i = 0; i < 24; i++) {
		char line[40];

		if (!read_gva(vcpu, r.rsp + 8 * (uint64_t)i, &next))
			break;
		snprintf(line, sizeof(line), " %" PRIx64, next);
		if (n + strlen(line) >= sizeof(chase)) {
			pr_err("vcpu%u: stack%s", vcpu->id, chase);
			n = 0;
		}
		n += (size_t)snprintf(chase + n, sizeof(chase) - n, "%s", line);
	}
	if (n)
		pr_err("vcpu%u: stack%s", vcpu->id, chase);
}

/* CPUID leaf of the CPU we run on (<cpuid.h> is shadowed by this folder's cpuid.h). */
static void host_cpuid(unsigned int leaf, unsigned int *a, unsigned int *b, unsigned int *c,
		       unsigned int *d)
{
	*a = leaf;
	*c = 0;
	__asm__ volatile("cpuid" : "+a"(*a), "=b"(*b), "+c"(*c), "=d"(*d));
}

static bool host_is_amd(void)
{
	unsigned int a, b, c, d;

	host_cpuid(0, &a, &b, &c, &d);
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;	/* "AuthenticAMD" */
}

/* KVM cannot enter or run the guest at all: say why that is likely and what to do. */
static void cannot_run(struct vcpu *vcpu, const char *what)
{
	bool pvm = access("/sys/module/kvm_pvm", F_OK) == 0;

	pr_err("vcpu%u: %s before the guest executed anything: this /dev/kvm cannot run a normal "
	       "x86-64 guest%s; run vperf-vmm inside the nested test stack instead: "
	       "tests/vm/run-nested.sh (tests/vm/README.md)",
	       vcpu->id, what,
	       pvm ? " (the host's KVM is the kvm_pvm software backend, without VT-x/AMD-V)" : "");
	vm__request_stop(vcpu->vm, VM_STOP_ERROR, VM_EXIT_VMM_ERROR);
}

static void report_port(struct vcpu *vcpu, uint16_t port, bool is_write, unsigned int size)
{
	struct vm *vm = vcpu->vm;
	uint64_t bit = 1ULL << (port % 64);

	if (atomic_fetch_or(&vm->port_reported[port / 64], bit) & bit)
		return;
	pr_debug("vcpu%u: no device at port 0x%04x (%s, %u bytes): reads return all-ones, writes "
		 "are ignored (reported once)",
		 vcpu->id, port, is_write ? "out" : "in", size);
}

static int handle_io(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	size_t run_size = vcpu->vm->run_size;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;
	uint32_t size = run->io.size, count = run->io.count, i;
	uint16_t port = run->io.port;
	uint64_t off = run->io.data_offset;
	uint8_t *data;

	/*
	 * KVM fills these; check them anyway before touching memory through them. The data lies
	 * past struct kvm_run (KVM: one page in): an IN must not overwrite the exit's own fields,
	 * which the handlers read.
	 */
	if ((size != 1 && size != 2 && size != 4) || count == 0 || off < sizeof(*run) ||
	    off > run_size || (uint64_t)size * count > run_size - off) {
		pr_err("vcpu%u: malformed I/O exit (port 0x%x size %u count %u offset %" PRIu64 ")",
		       vcpu->id, port, size, count, off);
		return -EINVAL;
	}
	data = (uint8_t *)run + off;
	stats__count_port(&vcpu->stats, port, is_write, count);
	for (i = 0; i < count; i++) {
		if (!ioport_bus__access(&vcpu->vm->iobus, vcpu, port, is_write, data + i * size,
					size)) {
			vcpu->stats.io_unhandled++;
			report_port(vcpu, port, is_write, size);
		}
	}
	return 0;
}

static void handle_mmio(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	uint32_t len = MIN(run->mmio.len, (uint32_t)sizeof(run->mmio.data));
	struct vm *vm = vcpu->vm;

	/*
	 * The one MMIO device in user space: the vperf doorbell. RAM and the APICs never exit here.
	 * It sees the access's own length (it serves 8-byte loads only), and fills at most the data.
	 */
	if (vmm_pv_doorbell(vcpu, run->mmio.phys_addr, run->mmio.len, run->mmio.is_write,
			    run->mmio.data)) {
		vcpu->stats.pv_doorbell++;
		return;
	}
	if (run->mmio.is_write) {
		vcpu->stats.mmio_unhandled_write++;
	} else {
		memset(run->mmio.data, 0xff, len);
		vcpu->stats.mmio_unhandled_read++;
	}
	if (atomic_fetch_add(&vm->mmio_reports, 1) < MMIO_REPORTS_MAX)
		pr_debug("vcpu%u: no device at MMIO 0x%llx (%s, %u bytes): reads return all-ones, "
			 "writes are ignored",
			 vcpu->id, run->mmio.phys_addr, run->mmio.is_write ? "write" : "read", len);
}

/* The first exit that shows the guest executing: note when (boot time analysis, --debug). */
static void mark_guest_ran(struct vcpu *vcpu)
{
	const struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;
	const char *name = stats__exit_name(run->exit_reason);
	struct timespec now;

	if (atomic_load(&vm->guest_ran) || atomic_exchange(&vm->guest_ran, true))
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pr_debug("vcpu%u: first exit to user space (%s, port 0x%x) %.3f s after start", vcpu->id,
		 name ? name : "?", run->exit_reason == KVM_EXIT_IO ? run->io.port : 0,
		 (double)(now.tv_sec - vm->start_time.tv_sec) +
			 (double)(now.tv_nsec - vm->start_time.tv_nsec) / 1e9);
}

/* Returns 0 to keep running, < 0 when this vCPU stops (the stop reason is set). */
static int handle_exit(struct vcpu *vcpu)
{
	struct kvm_run *run = vcpu->run;
	struct vm *vm = vcpu->vm;
	bool ran = atomic_load(&vm->guest_ran);

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		mark_guest_ran(vcpu);
		if (handle_io(vcpu) < 0) {
			vm__request_stop(vm, VM_STOP_ERROR, VM_EXIT_VMM_ERROR);
			return -EINVAL;
		}
		return 0;
	case KVM_EXIT_MMIO:
		mark_guest_ran(vcpu);
		handle_mmio(vcpu);
		return 0;
	case KVM_EXIT_INTR:
	case KVM_EXIT_IRQ_WINDOW_OPEN:
		return 0;
	case KVM_EXIT_SHUTDOWN:
		pr_err("vcpu%u: triple fault (KVM_EXIT_SHUTDOWN): the guest crashed", vcpu->id);
		/*
		 * On AMD SVM, KVM INITs the vCPU (a cleared VMCB) before it reports the shutdown:
		 * the registers below are then the reset state, not where the guest faulted.
		 */
		if (host_is_amd())
			pr_err("vcpu%u: AMD host: KVM reset this vCPU on the shutdown; its registers "
			       "show the reset vector, not the faulting context (tests/vm/README.md)",
			       vcpu->id);
		dump_stuck(vcpu);
		vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
		return -EFAULT;
	case KVM_EXIT_HLT:
		/*
		 * With the in-kernel local APIC, KVM handles HLT itself; an exit means something is
		 * badly off.
		 */
		pr_err("vcpu%u: unexpected KVM_EXIT_HLT", vcpu->id);
		vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
		return -EFAULT;
	case KVM_EXIT_FAIL_ENTRY: {
		char what[96];

		snprintf(what, sizeof(what),
			 "KVM_EXIT_FAIL_ENTRY (hardware entry failure reason 0x%llx)",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		if (!ran) {
			cannot_run(vcpu, what);
		} else {
			pr_err("vcpu%u: %s", vcpu->id, what);
			vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
		}
		return -EFAULT;
	}
	case KVM_EXIT_INTERNAL_ERROR: {
		char what[160];
		int n = snprintf(what, sizeof(what), "KVM_EXIT_INTERNAL_ERROR (suberror %u",
				 run->internal.suberror);
		uint32_t i;

		for (i = 0; i < MIN(run->internal.ndata, 4u) && n > 0 && (size_t)n < sizeof(what);
		     i++)
			n += snprintf(what + n, sizeof(what) - (size_t)n, " 0x%llx",
				      (unsigned long long)run->internal.data[i]);
		if (n > 0 && (size_t)n < sizeof(what))
			snprintf(what + n, sizeof(what) - (size_t)n, ")");
		if (!ran) {
			cannot_run(vcpu, what);
		} else {
			pr_err("vcpu%u: %s: KVM could not emulate what the guest did", vcpu->id,
			       what);
			dump_stuck(vcpu);
			vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
		}
		return -EFAULT;
	}
	case KVM_EXIT_SYSTEM_EVENT:
		mark_guest_ran(vcpu);
		switch (run->system_event.type) {
		case KVM_SYSTEM_EVENT_SHUTDOWN:
			vm__request_stop(vm, VM_STOP_POWEROFF, 0);
			break;
		case KVM_SYSTEM_EVENT_RESET:
			vm__request_stop(vm, VM_STOP_REBOOT, 0);
			break;
		default:
			pr_err("vcpu%u: system event %u (crash)", vcpu->id, run->system_event.type);
			vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
			break;
		}
		return -EINTR;
	default: {
		const char *name = stats__exit_name(run->exit_reason);

		pr_err("vcpu%u: unhandled KVM exit reason %u (%s)", vcpu->id, run->exit_reason,
		       name ? name : "unknown");
		dump_stuck(vcpu);
		vm__request_stop(vm, VM_STOP_CRASH, VM_EXIT_CRASH);
		return -EFAULT;
	}
	}
}

int vcpu__dispatch_exit(struct vcpu *vcpu)
{
	int ret;

	stats__count_exit(&vcpu->stats, vcpu->run->exit_reason);
	vcpu->last_exit_reason = vcpu->run->exit_reason;
	atomic_store_explicit(&vcpu->last_exit_ns, coarse_ns(), memory_order_relaxed);
	ret = handle_exit(vcpu);
	if (ret < 0)
		return ret;
	vmm_pv_vcpu_exit(vcpu);
	return 0;
}

/* Whether this CPU runs as a guest itself (CPUID.1:ECX bit 31): vperf-vmm is then a nested VMM. */
static bool host_is_guest(void)
{
	unsigned int a, b, c, d;

	host_cpuid(1, &a, &b, &c, &d);
	return c & (1u << 31);
}

/*
 * vcpu__probe's question, answered on this vCPU's thread (KVM's vCPU ioctls belong to it): where
 * is the guest?  A RIP with code mapped is a guest that runs, however long it goes without an exit
 * to us (an idle guest halts in KVM).  The same RIP with nothing mapped on two probes in a row
 * cannot be: the first fetch there would fault.  Under QEMU TCG's emulated SVM that is the L2
 * freeze of tests/vm/README.md ("Known failure modes": L1's state stored as the guest's, RIP at
 * page offset 0x20c); it ends the run now rather than at --timeout.
 */
void vcpu__answer_probe(struct vcpu *vcpu)
{
	struct kvm_regs r;
	uint64_t code;

	if (!atomic_exchange(&vcpu->probe, false))
		return;
	if (ioctl(vcpu->fd, KVM_GET_REGS, &r) < 0)
		return;
	if (read_gva(vcpu, r.rip & ~7ull, &code)) {
		vcpu->probe_unmapped = 0;
		return;
	}
	if (vcpu->probe_unmapped && vcpu->probe_rip == r.rip) {
		vcpu->probe_unmapped++;
	} else {
		vcpu->probe_rip = r.rip;
		vcpu->probe_unmapped = 1;
	}
	pr_debug("vcpu%u: probe: rip 0x%llx has no code mapped (%u in a row)", vcpu->id, r.rip,
		 vcpu->probe_unmapped);
	if (vcpu->probe_unmapped < 2)
		return;
	if (host_is_guest())
		pr_err("vcpu%u: nested stack froze (emulated SVM): L2 vCPU %u stays at rip 0x%llx, "
		       "where the guest maps no code, on %u probes %d s apart (L1's state stored as "
		       "the guest's: tests/vm/README.md, \"Known failure modes\"); stopping it",
		       vcpu->id, vcpu->id, r.rip, vcpu->probe_unmapped, VCPU_PROBE_S);
	else
		pr_err("vcpu%u: frozen: the vCPU stays at rip 0x%llx, where the guest maps no code, on "
		       "%u probes %d s apart: no guest can run there (a fault in the hypervisor "
		       "below); stopping it",
		       vcpu->id, r.rip, vcpu->probe_unmapped, VCPU_PROBE_S);
	dump_stuck(vcpu);
	vm__request_stop(vcpu->vm, VM_STOP_FROZEN, VM_EXIT_FROZEN);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *vcpu = arg;
	struct vm *vm = vcpu->vm;
	char name[16];
	sigset_t set;

	/*
	 * Everything else stays blocked (main's mask); the kick must get through to interrupt
	 * KVM_RUN.
	 */
	sigemptyset(&set);
	sigaddset(&set, VCPU_KICK_SIGNAL);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	snprintf(name, sizeof(name), "vcpu%u", vcpu->id);
	pthread_setname_np(pthread_self(), name);
	atomic_store(&vcpu->tid, (int)gettid());
	/* Host counters attach to this thread; their overflow signal interrupts KVM_RUN. */
	vmm_pv_vcpu_enter(vcpu);

	while (!vm__stopping(vm)) {
		vcpu->stats.runs++;
		recorder__exit_end(vcpu);	/* --record: the last exit's handling ends here */
		if (ioctl(vcpu->fd, KVM_RUN, 0) < 0) {
			int err = errno;

			if (err == EINTR || err == EAGAIN) {
				vcpu->stats.run_eintr++;
				vmm_pv_vcpu_exit(vcpu);	/* an overflow may have signalled */
				vcpu__answer_probe(vcpu);
				continue;
			}
			if (!atomic_load(&vm->guest_ran)) {
				char what[96];

				snprintf(what, sizeof(what), "KVM_RUN failed (%s)", strerror(err));
				cannot_run(vcpu, what);
			} else {
				pr_err("vcpu%u: KVM_RUN: %s", vcpu->id, strerror(err));
				vm__request_stop(vm, VM_STOP_ERROR, VM_EXIT_VMM_ERROR);
			}
			break;
		}
		recorder__exit_begin(vcpu);
		if (vcpu__dispatch_exit(vcpu) < 0)
			break;
		if (atomic_load_explicit(&vcpu->probe, memory_order_relaxed))
			vcpu__answer_probe(vcpu);	/* the kick came outside KVM_RUN */
	}
	/* Where a guest that timed out was stuck (a hang, a freeze, a lost wakeup) */
	if (vm->stop_reason == VM_STOP_TIMEOUT)
		dump_stuck(vcpu);
	return NULL;
}

int vcpu__start(struct vcpu *vcpu)
{
	int err = pthread_create(&vcpu->thread, NULL, vcpu_thread, vcpu);

	if (err) {
		pr_err("vcpu%u: thread: %s", vcpu->id, strerror(err));
		return -err;
	}
	vcpu->thread_started = true;
	return 0;
}

void vcpu__kick(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	/*
	 * immediate_exit covers the window before KVM_RUN; the signal interrupts a running KVM_RUN.
	 */
	__atomic_store_n(&vcpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
}

void vcpu__probe(struct vcpu *vcpu)
{
	const struct timespec *t0 = &vcpu->vm->start_time;
	uint64_t now = coarse_ns(), last = atomic_load_explicit(&vcpu->last_exit_ns, memory_order_relaxed);

	if (!last)	/* none yet: since the start (a guest may freeze at its first entry) */
		last = (uint64_t)t0->tv_sec * 1000000000ull + (uint64_t)t0->tv_nsec;
	if (!vcpu->thread_started || now < last || now - last < (uint64_t)VCPU_PROBE_S * 1000000000ull)
		return;
	atomic_store(&vcpu->probe, true);
	/* no immediate_exit (that is for stopping): a kick outside KVM_RUN waits for the next exit */
	pthread_kill(vcpu->thread, VCPU_KICK_SIGNAL);
}

void vcpu__join(struct vcpu *vcpu)
{
	if (!vcpu->thread_started)
		return;
	pthread_join(vcpu->thread, NULL);
	vcpu->thread_started = false;
}
