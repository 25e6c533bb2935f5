/* vperf-keys: hold a guest kernel's runtime-patched static keys raised, so that the tests never patch them.
 *
 * Why: our guests run under QEMU TCG (L1 directly; L2 too, since QEMU emulates the SVM that runs it). Linux
 * flips a static key by patching kernel text with int3 (text_poke_bp), and multi-threaded TCG sometimes leaves
 * a vCPU executing a stale translation of the patched site: both CPUs then loop in exc_int3 forever (seen with
 * gdb on QEMU's gdbstub: RIP in asm_exc_int3/exc_int3 and __schedule, no console output, no watchdog).
 *  - In L1 every L2 boot flipped such keys: creating and destroying a KVM VM flips preempt_notifier_key
 *    (checked in __schedule), a vCPU's local APIC flips apic_sw_disabled, and vperf-vmm's per-vCPU perf events
 *    flip perf_sched_events and perf_swevent_enabled[]. About one L2 boot in ten froze L1.
 *  - In L2 every load and unload of vperf_guest.ko patches the tracepoints it hooks (sched_switch,
 *    sched_process_exit, sched_process_fork; with trace=1 also the sched wakeup, exec, irq and irq_vectors
 *    ones init.sh names): a tracepoint's static key flips when it gets its first probe, and
 *    its static call is repointed when it goes between one probe (called directly) and two (the iterator). CI
 *    runs froze in the middle of the kmod test's load/unload cycles, first with no other probe, then with one.
 *    vperf stat's perf events flip the perf keys as in L1.
 * A static key is patched only when its count goes between 0 and 1, a tracepoint's static call only when its
 * probes go between 1 and 2: this program keeps keys at 1 or more and the named tracepoints at 2 probes or more
 * for the guest's lifetime, so the tests never patch them. It holds
 *  - where /dev/kvm exists: a VM with an in-kernel irqchip and one vCPU that never runs;
 *  - task-bound software perf events on itself (task-clock, cpu-clock, context-switches, cpu-migrations,
 *    page-faults);
 *  - for each SUBSYSTEM:NAME argument two probes: a task-bound tracepoint perf event (its id from tracefs),
 *    which registers perf's probe for as long as it is open, and the event enabled in tracefs (ftrace's probe),
 *    with tracing_on 0 so that the probe returns at once without writing to the trace buffer.
 * init.sh starts it before the other CPUs come online (the kernels boot with maxcpus=1), so that raising the
 * keys patches text while one CPU runs.
 *
 *   vperf-keys [SUBSYSTEM:NAME]...   prints "vperf-keys: holding ..." once everything is open, then sleeps
 *
 * Exit status: 0 never (killed); 1 a KVM ioctl failed on an existing /dev/kvm, 2 bad arguments. A perf event
 * that cannot be opened is reported and skipped (its key is then not held).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int open_event(unsigned int type, unsigned long long config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The tracepoint's id from tracefs (or debugfs), or -errno. */
static long long tracepoint_id(const char *sys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], buf[32];
	int err = ENOENT;

	for (unsigned int i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		FILE *f;
		char *end;
		long long id;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], sys, name);
		f = fopen(path, "r");
		if (!f) {
			err = errno;
			continue;
		}
		if (!fgets(buf, sizeof(buf), f)) {
			fclose(f);
			return -EIO;
		}
		fclose(f);
		id = strtoll(buf, &end, 10);
		return end != buf && id >= 0 ? id : -EIO;
	}
	return -err;
}

/* Write s to ROOT/path under the first tracefs root that has it: 0 or -errno. */
static int tracefs_write(const char *path, const char *s)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int err = ENOENT;

	for (unsigned int i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char full[256];
		int fd;
		ssize_t n;

		snprintf(full, sizeof(full), "%s/%s", roots[i], path);
		fd = open(full, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			err = errno;
			continue;
		}
		n = write(fd, s, strlen(s));
		err = n == (ssize_t)strlen(s) ? 0 : errno;
		close(fd);
		return -err;
	}
	return -err;
}

static void add_name(char *list, size_t size, const char *name)
{
	size_t n = strlen(list);

	snprintf(list + n, size - n, "%s%s", n ? "," : "", name);
}

static int hold_vm(void)
{
	int kvm, vm;

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return 0;	/* not a KVM host: nothing to hold */
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0 || ioctl(vm, KVM_CREATE_IRQCHIP, 0) < 0) {
		fprintf(stderr, "vperf-keys: KVM_CREATE_VM/IRQCHIP: %s\n", strerror(errno));
		return -1;
	}
	if (ioctl(vm, KVM_CREATE_VCPU, 0) < 0) {
		fprintf(stderr, "vperf-keys: KVM_CREATE_VCPU: %s\n", strerror(errno));
		return -1;
	}
	return 1;
}

int main(int argc, char **argv)
{
	static const struct { unsigned long long config; const char *name; } sw[] = {
		{ PERF_COUNT_SW_TASK_CLOCK, "task-clock" },
		{ PERF_COUNT_SW_CPU_CLOCK, "cpu-clock" },
		{ PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches" },
		{ PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations" },
		{ PERF_COUNT_SW_PAGE_FAULTS, "page-faults" },
	};
	char events[1024] = "", probes[160];
	int vm;

	for (int i = 1; i < argc; i++) {
		if (!strchr(argv[i], ':') || strlen(argv[i]) > 120) {
			fprintf(stderr, "vperf-keys: '%s' is not SUBSYSTEM:NAME\nusage: vperf-keys [SUBSYSTEM:NAME]...\n",
				argv[i]);
			return 2;
		}
	}
	vm = hold_vm();
	if (vm < 0)
		return 1;
	for (unsigned int i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
		if (open_event(PERF_TYPE_SOFTWARE, sw[i].config) < 0) {
			fprintf(stderr, "vperf-keys: perf event %s: %s (its key is not held)\n", sw[i].name,
				strerror(errno));
			continue;
		}
		add_name(events, sizeof(events), sw[i].name);
	}
	for (int i = 1; i < argc; i++) {
		char sys[128];
		const char *name = strchr(argv[i], ':') + 1;
		long long id;

		snprintf(sys, sizeof(sys), "%.*s", (int)(name - 1 - argv[i]), argv[i]);
		id = tracepoint_id(sys, name);
		if (id < 0) {
			fprintf(stderr, "vperf-keys: tracepoint %s: no id in tracefs: %s (its key is not held)\n",
				argv[i], strerror((int)-id));
			continue;
		}
		if (open_event(PERF_TYPE_TRACEPOINT, (unsigned long long)id) < 0) {
			fprintf(stderr, "vperf-keys: tracepoint %s: %s (its key is not held)\n", argv[i], strerror(errno));
			continue;
		}
		/* the second probe: ftrace's, with the trace buffer off */
		if (tracefs_write("tracing_on", "0") == 0) {
			char path[160];
			int err;

			snprintf(path, sizeof(path), "events/%s/%s/enable", sys, name);
			err = tracefs_write(path, "1");
			if (err) {
				fprintf(stderr, "vperf-keys: tracepoint %s: enabling it in tracefs: %s (its static call "
					"is not held)\n", argv[i], strerror(-err));
				add_name(events, sizeof(events), argv[i]);
				continue;
			}
		}
		snprintf(probes, sizeof(probes), "%s(perf+ftrace)", argv[i]);
		add_name(events, sizeof(events), probes);
	}
	printf("vperf-keys: holding %sperf events %s\n", vm ? "a VM with an irqchip and 1 vCPU, " : "",
	       events[0] ? events : "none");
	fflush(stdout);
	for (;;)
		pause();
}
