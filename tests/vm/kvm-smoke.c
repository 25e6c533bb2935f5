/* kvm-smoke: prove /dev/kvm works (run inside L1 by tests/vm/kvm-smoke.sh).
 *
 * 1. Reports the KVM API version, a list of capabilities (KVM_CHECK_EXTENSION on /dev/kvm and on a VM fd),
 *    whether an in-kernel irqchip + PIT can be created, and KVM_GET_SUPPORTED_CPUID's KVM leaves
 *    (0x40000000 signature, 0x40000001 paravirtual features) and PMU-related leaves.
 * 2. Creates a VM with one vCPU and 64 KiB of memory, runs a real-mode guest that does N times
 *    `out dx, al` (port 0x510, AL = 0, 1, 2, ...) and then `hlt`, and checks that userspace saw exactly N
 *    KVM_EXIT_IO exits with the right port, size, direction and data, then one KVM_EXIT_HLT.
 * 3. Reads the vCPU's binary stats (KVM_GET_STATS_FD) and checks its io_exits counter against N.
 *
 * Usage: kvm-smoke [N]   (default N = 1000)
 * Prints "kvm-smoke: PASS ..." and exits 0, or "kvm-smoke: FAIL ..." and exits 1.
 *
 * Build: gcc -std=c11 -O2 -Wall -Wextra -static -o kvm-smoke kvm-smoke.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define GUEST_MEM_SIZE 0x10000u
#define GUEST_CODE_ADDR 0x1000u
#define SMOKE_PORT 0x510u

static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("kvm-smoke: FAIL ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
	failures++;
}

static void die(const char *what)
{
	printf("kvm-smoke: FAIL %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- capabilities ---------------------------------------------------------------------------------- */

struct cap {
	const char *name;
	long id;
};

#define CAP(x) { #x, x }
static const struct cap caps[] = {
	CAP(KVM_CAP_IRQCHIP),
	CAP(KVM_CAP_PIT2),
	CAP(KVM_CAP_BINARY_STATS_FD),
	CAP(KVM_CAP_USER_MEMORY),
	CAP(KVM_CAP_NR_VCPUS),
	CAP(KVM_CAP_MAX_VCPUS),
	CAP(KVM_CAP_MAX_VCPU_ID),
	CAP(KVM_CAP_EXT_CPUID),
	CAP(KVM_CAP_TSC_CONTROL),
	CAP(KVM_CAP_GET_TSC_KHZ),
	CAP(KVM_CAP_TSC_DEADLINE_TIMER),
	CAP(KVM_CAP_KVMCLOCK_CTRL),
	CAP(KVM_CAP_PMU_EVENT_FILTER),
#ifdef KVM_CAP_PMU_CAPABILITY
	CAP(KVM_CAP_PMU_CAPABILITY),
#endif
	CAP(KVM_CAP_X86_USER_SPACE_MSR),
	CAP(KVM_CAP_X86_MSR_FILTER),
	CAP(KVM_CAP_IOEVENTFD),
	CAP(KVM_CAP_IRQFD),
	CAP(KVM_CAP_IRQ_ROUTING),
	CAP(KVM_CAP_SIGNAL_MSI),
	CAP(KVM_CAP_SPLIT_IRQCHIP),
	CAP(KVM_CAP_X2APIC_API),
	CAP(KVM_CAP_IMMEDIATE_EXIT),
	CAP(KVM_CAP_X86_DISABLE_EXITS),
	CAP(KVM_CAP_EXIT_HYPERCALL),
	CAP(KVM_CAP_READONLY_MEM),
	CAP(KVM_CAP_SET_GUEST_DEBUG),
	CAP(KVM_CAP_NESTED_STATE),
	CAP(KVM_CAP_ENABLE_CAP),
	CAP(KVM_CAP_CHECK_EXTENSION_VM),
};

static void report_caps(int kvm, int vm)
{
	int vm_ext = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_CHECK_EXTENSION_VM) > 0;

	for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		int sys = ioctl(kvm, KVM_CHECK_EXTENSION, caps[i].id);
		if (vm_ext) {
			int v = ioctl(vm, KVM_CHECK_EXTENSION, caps[i].id);
			printf("kvm-smoke: cap %-28s system=%d vm=%d\n", caps[i].name, sys, v);
		} else {
			printf("kvm-smoke: cap %-28s system=%d\n", caps[i].name, sys);
		}
	}
}

/* Can a VMM get the in-kernel LAPIC/IOAPIC/PIC and PIT it will want? (in a throw-away VM) */
static void probe_irqchip(int kvm)
{
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fail("KVM_CREATE_VM (irqchip probe): %s", strerror(errno));
		return;
	}
	int r = ioctl(vm, KVM_CREATE_IRQCHIP, 0);
	printf("kvm-smoke: probe KVM_CREATE_IRQCHIP %s\n", r == 0 ? "ok" : strerror(errno));
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	r = ioctl(vm, KVM_CREATE_PIT2, &pit);
	printf("kvm-smoke: probe KVM_CREATE_PIT2 %s\n", r == 0 ? "ok" : strerror(errno));
	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	printf("kvm-smoke: probe KVM_CREATE_VCPU with irqchip %s\n", vcpu >= 0 ? "ok" : strerror(errno));
	if (vcpu >= 0)
		close(vcpu);
	close(vm);
}

/* ---- CPUID ----------------------------------------------------------------------------------------- */

static struct kvm_cpuid2 *get_supported_cpuid(int kvm)
{
	for (unsigned n = 64; n <= 4096; n *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof *c + n * sizeof(struct kvm_cpuid_entry2));
		if (!c)
			die("calloc");
		c->nent = n;
		if (ioctl(kvm, KVM_GET_SUPPORTED_CPUID, c) == 0)
			return c;
		free(c);
		if (errno != E2BIG)
			break;
	}
	fail("KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
	return NULL;
}

static const struct kvm_cpuid_entry2 *leaf(const struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
	for (uint32_t i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn && c->entries[i].index == idx)
			return &c->entries[i];
	return NULL;
}

static void report_cpuid(int kvm)
{
	static const struct {
		int bit;
		const char *name;
	} pv[] = {
		{ 0, "CLOCKSOURCE" }, { 1, "NOP_IO_DELAY" }, { 2, "MMU_OP" }, { 3, "CLOCKSOURCE2" },
		{ 4, "ASYNC_PF" }, { 5, "STEAL_TIME" }, { 6, "PV_EOI" }, { 7, "PV_UNHALT" },
		{ 9, "PV_TLB_FLUSH" }, { 10, "ASYNC_PF_VMEXIT" }, { 11, "PV_SEND_IPI" }, { 12, "POLL_CONTROL" },
		{ 13, "PV_SCHED_YIELD" }, { 14, "ASYNC_PF_INT" }, { 15, "MSI_EXT_DEST_ID" },
		{ 16, "HC_MAP_GPA_RANGE" }, { 17, "MIGRATION_CONTROL" }, { 24, "CLOCKSOURCE_STABLE_BIT" },
	};
	struct kvm_cpuid2 *c = get_supported_cpuid(kvm);
	if (!c)
		return;
	printf("kvm-smoke: cpuid supported entries %u\n", c->nent);

	const struct kvm_cpuid_entry2 *e = leaf(c, 0x40000000, 0);
	if (e) {
		char sig[13];
		memcpy(sig, &e->ebx, 4);
		memcpy(sig + 4, &e->ecx, 4);
		memcpy(sig + 8, &e->edx, 4);
		sig[12] = 0;
		printf("kvm-smoke: cpuid 0x40000000 eax=0x%08x signature=\"%s\"\n", e->eax, sig);
	} else {
		fail("KVM_GET_SUPPORTED_CPUID has no leaf 0x40000000");
	}
	e = leaf(c, 0x40000001, 0);
	if (e) {
		printf("kvm-smoke: cpuid 0x40000001 eax=0x%08x ebx=0x%08x ecx=0x%08x edx=0x%08x features:",
		       e->eax, e->ebx, e->ecx, e->edx);
		uint32_t known = 0;
		for (size_t i = 0; i < sizeof pv / sizeof pv[0]; i++) {
			known |= 1u << pv[i].bit;
			if (e->eax & (1u << pv[i].bit))
				printf(" %s", pv[i].name);
		}
		if (e->eax & ~known)
			printf(" (unknown bits 0x%x)", e->eax & ~known);
		printf("\n");
	} else {
		fail("KVM_GET_SUPPORTED_CPUID has no leaf 0x40000001");
	}

	/* PMU visibility: Intel architectural perfmon leaf, AMD PerfCtrExtCore, AMD PerfMonV2 leaf. */
	e = leaf(c, 0xa, 0);
	printf("kvm-smoke: cpuid 0xa (arch perfmon) %s eax=0x%08x\n", e ? "present" : "absent", e ? e->eax : 0);
	e = leaf(c, 0x80000001, 0);
	if (e)
		printf("kvm-smoke: cpuid 0x80000001 ecx=0x%08x PerfCtrExtCore=%u SVM=%u\n", e->ecx,
		       (e->ecx >> 23) & 1, (e->ecx >> 2) & 1);
	e = leaf(c, 0x80000022, 0);
	printf("kvm-smoke: cpuid 0x80000022 (AMD PerfMonV2) %s\n", e ? "present" : "absent");
	free(c);
}

/* ---- binary stats ---------------------------------------------------------------------------------- */

/* Reads the named u64 counters of a stats fd into out[] (UINT64_MAX when absent). Returns 0 or -1. */
static int read_stats(int fd, const char *const *names, uint64_t *out, size_t n)
{
	struct kvm_stats_header h;
	for (size_t i = 0; i < n; i++)
		out[i] = UINT64_MAX;
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
		return -1;
	size_t dsz = sizeof(struct kvm_stats_desc) + h.name_size;
	char *descs = malloc((size_t)h.num_desc * dsz);
	if (!descs)
		return -1;
	if (pread(fd, descs, (size_t)h.num_desc * dsz, h.desc_offset) != (ssize_t)(h.num_desc * dsz)) {
		free(descs);
		return -1;
	}
	for (uint32_t d = 0; d < h.num_desc; d++) {
		const struct kvm_stats_desc *sd = (const void *)(descs + d * dsz);
		for (size_t i = 0; i < n; i++) {
			if (strncmp(sd->name, names[i], h.name_size) == 0 && sd->size >= 1) {
				uint64_t v;
				if (pread(fd, &v, sizeof v, h.data_offset + sd->offset) == (ssize_t)sizeof v)
					out[i] = v;
			}
		}
	}
	free(descs);
	return 0;
}

/* ---- the smoke guest ------------------------------------------------------------------------------- */

static int run_guest(int kvm, int vm, unsigned n)
{
	uint8_t *mem = mmap(NULL, GUEST_MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory");

	/* 16-bit real mode code at 0x1000:
	 *   mov dx, SMOKE_PORT ; mov cx, n ; mov al, 0
	 * l: out dx, al ; inc al ; loop l
	 *   hlt
	 */
	const uint8_t code[] = {
		0xba, SMOKE_PORT & 0xff, SMOKE_PORT >> 8, /* mov dx, imm16 */
		0xb9, n & 0xff, (n >> 8) & 0xff,         /* mov cx, imm16 */
		0xb0, 0x00,                               /* mov al, 0 */
		0xee,                                     /* l: out dx, al */
		0xfe, 0xc0,                               /* inc al */
		0xe2, 0xfb,                               /* loop l (-5) */
		0xf4,                                     /* hlt */
	};
	memcpy(mem + GUEST_CODE_ADDR, code, sizeof code);

	struct kvm_userspace_memory_region region = {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = GUEST_MEM_SIZE,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");

	int vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	if (vcpu < 0)
		die("KVM_CREATE_VCPU");
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size < (int)sizeof(struct kvm_run))
		die("KVM_GET_VCPU_MMAP_SIZE");
	struct kvm_run *run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run");

	struct kvm_sregs sregs;
	if (ioctl(vcpu, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) < 0)
		die("KVM_SET_SREGS");
	struct kvm_regs regs = { .rip = GUEST_CODE_ADDR, .rflags = 0x2 };
	if (ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_REGS");

	unsigned io_exits = 0, other_exits = 0, runs = 0;
	int halted = 0;
	double t0 = now_s();
	while (!halted) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0) {
			if (errno == EINTR)
				continue;
			die("KVM_RUN");
		}
		runs++;
		switch (run->exit_reason) {
		case KVM_EXIT_IO: {
			const uint8_t *data = (const uint8_t *)run + run->io.data_offset;
			if (run->io.direction != KVM_EXIT_IO_OUT || run->io.port != SMOKE_PORT || run->io.size != 1 ||
			    run->io.count != 1) {
				fail("unexpected I/O exit: dir=%u port=0x%x size=%u count=%u", run->io.direction,
				     run->io.port, run->io.size, run->io.count);
				return 1;
			}
			if (*data != (uint8_t)io_exits) {
				fail("I/O exit %u carried 0x%02x, expected 0x%02x", io_exits, *data, (uint8_t)io_exits);
				return 1;
			}
			io_exits++;
			if (io_exits > n) {
				fail("more I/O exits than the guest's %u outs", n);
				return 1;
			}
			break;
		}
		case KVM_EXIT_HLT:
			halted = 1;
			break;
		default:
			other_exits++;
			fail("unexpected exit reason %u (hardware_exit_reason 0x%llx)", run->exit_reason,
			     (unsigned long long)run->hw.hardware_exit_reason);
			return 1;
		}
	}
	double t1 = now_s();

	printf("kvm-smoke: guest ran: %u KVM_RUN calls, %u KVM_EXIT_IO (expected %u), 1 KVM_EXIT_HLT, %u other\n",
	       runs, io_exits, n, other_exits);
	printf("kvm-smoke: time %.3f ms, %.2f us per exit round trip\n", (t1 - t0) * 1e3,
	       (t1 - t0) * 1e6 / (double)runs);
	if (io_exits != n)
		fail("saw %u I/O exits, expected %u", io_exits, n);

	if (ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD) > 0) {
		static const char *const names[] = { "exits", "io_exits", "halt_exits", "insn_emulation",
						     "signal_exits" };
		uint64_t v[5];
		int sfd = ioctl(vcpu, KVM_GET_STATS_FD, 0);
		if (sfd < 0 || read_stats(sfd, names, v, 5) < 0) {
			fail("vCPU binary stats: %s", strerror(errno));
		} else {
			printf("kvm-smoke: vcpu stats");
			for (int i = 0; i < 5; i++)
				if (v[i] != UINT64_MAX)
					printf(" %s=%" PRIu64, names[i], v[i]);
			printf("\n");
			if (v[1] != n)
				fail("vCPU stat io_exits=%" PRIu64 ", expected %u", v[1], n);
		}
		if (sfd >= 0)
			close(sfd);
	}
	munmap(run, (size_t)run_size);
	close(vcpu);
	munmap(mem, GUEST_MEM_SIZE);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = 1000;
	if (argc > 1) {
		char *end;
		n = strtoul(argv[1], &end, 0);
		if (*end || n < 1 || n > 65535) {
			fprintf(stderr, "usage: kvm-smoke [N]   (1 <= N <= 65535 port writes; default 1000)\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("open /dev/kvm (is kvm-amd / kvm-intel loaded?)");
	int api = ioctl(kvm, KVM_GET_API_VERSION, 0);
	printf("kvm-smoke: KVM_GET_API_VERSION %d\n", api);
	if (api != KVM_API_VERSION) {
		fail("API version %d, expected %d", api, KVM_API_VERSION);
		return 1;
	}
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");

	report_caps(kvm, vm);
	probe_irqchip(kvm);
	report_cpuid(kvm);
	run_guest(kvm, vm, (unsigned)n);

	close(vm);
	close(kvm);
	if (failures) {
		printf("kvm-smoke: FAIL (%d failures)\n", failures);
		return 1;
	}
	printf("kvm-smoke: PASS %lu port writes -> %lu KVM_EXIT_IO + 1 KVM_EXIT_HLT\n", n, n);
	return 0;
}
