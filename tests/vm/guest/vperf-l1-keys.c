/* vperf-l1-keys: hold the L1 kernel's runtime-patched static keys raised, so that no L2 boot patches them.
 *
 * Why: L1 runs under QEMU TCG. Linux flips a static key by patching kernel text with int3 (text_poke_bp),
 * and multi-threaded TCG sometimes leaves a vCPU executing a stale translation of the patched site: both L1
 * CPUs then loop in exc_int3 forever (seen with gdb on QEMU's gdbstub: RIP in asm_exc_int3/exc_int3 and
 * __schedule, no console output, no watchdog). Every L2 boot used to flip such keys: creating and destroying a
 * KVM VM flips preempt_notifier_key (checked in __schedule), a vCPU's local APIC flips apic_sw_disabled, and
 * vperf-vmm's per-vCPU perf events flip perf_sched_events and perf_swevent_enabled[]. About one L2 boot in
 * ten froze L1. A static key is patched only when its count goes between 0 and 1: this program keeps each
 * count at 1 or more for L1's lifetime (a VM with an in-kernel irqchip and one vCPU that never runs, and
 * task-bound perf events on itself), so the tests' VMs and counters only move them between 1 and 2.
 *
 *   vperf-l1-keys    prints "vperf-l1-keys: holding ..." once everything is open, then sleeps until killed
 *
 * Exit status: 0 never (killed); 1 /dev/kvm or a KVM ioctl failed (printed). A perf event that cannot be
 * opened is reported and skipped (its key is then not held).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_sw(unsigned long long config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.disabled = 0;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(void)
{
	static const struct { unsigned long long config; const char *name; } sw[] = {
		{ PERF_COUNT_SW_TASK_CLOCK, "task-clock" },
		{ PERF_COUNT_SW_CPU_CLOCK, "cpu-clock" },
		{ PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches" },
		{ PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations" },
		{ PERF_COUNT_SW_PAGE_FAULTS, "page-faults" },
	};
	int kvm, vm, vcpu, held = 0;
	char events[200] = "";

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		fprintf(stderr, "vperf-l1-keys: /dev/kvm: %s\n", strerror(errno));
		return 1;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0 || ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0) {
		fprintf(stderr, "vperf-l1-keys: KVM_CREATE_VM/IRQCHIP: %s\n", strerror(errno));
		return 1;
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0) {
		fprintf(stderr, "vperf-l1-keys: KVM_CREATE_VCPU: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned int i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		if (open_sw(sw[i].config) < 0) {
			fprintf(stderr, "vperf-l1-keys: perf event %s: %s (its key is not held)\n", sw[i].name,
				strerror(errno));
			continue;
		}
		held++;
		snprintf(events + strlen(events), sizeof(events) - strlen(events), "%s%s", held > 1 ? "," : "",
			 sw[i].name);
	}
	printf("vperf-l1-keys: holding a VM with an irqchip and 1 vCPU, perf events %s\n", held ? events : "none");
	fflush(stdout);
	for (;;)
		pause();
}
