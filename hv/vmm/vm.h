/* SPDX-License-Identifier: MIT */
/*
 * struct vm: everything one guest needs (KVM handles, guest memory, vCPUs, devices, stop state,
 * accounting). There are no file statics: every function gets the VM (or a vCPU, which points to
 * its VM).
 *
 * Guest-physical layout (see also boot.h and acpi.h):
 *   [0, 3 GiB)            RAM (or less: --mem)
 *   [3 GiB, 4 GiB)        hole: vperf doorbell 0xfeb00000, IO-APIC 0xfec00000, local APIC 0xfee00000,
 *                         KVM's TSS, identity map
 *   [4 GiB, ...)          the rest of RAM when --mem is above 3 GiB
 */
#ifndef VMM_VM_H
#define VMM_VM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "console.h"
#include "ioport.h"
#include "serial.h"
#include "stats.h"
#include "util.h"

#define VM_MAX_VCPUS		16
#define VM_DEFAULT_MEM_MIB	256
#define VM_MIN_MEM_MIB		32
#define VM_MAX_MEM_MIB		(1024 * 1024)	/* 1 TiB */

#define VM_PCI_HOLE_START	(3ULL * SZ_1G)
#define VM_PCI_HOLE_END		(4ULL * SZ_1G)
#define VM_IOAPIC_ADDR		0xfec00000u
#define VM_LAPIC_ADDR		0xfee00000u
#define VM_DOORBELL_ADDR	0xfeb00000u	/* the vperf doorbell page (abi.h), MMIO */
#define VM_IDENTITY_MAP_ADDR	0xfeffc000u	/* one page, in the hole (Intel only) */
#define VM_TSS_ADDR		0xfeffd000u	/* three pages, in the hole (Intel only) */

#define VM_MAX_MEM_REGIONS	2

/* Exit statuses of vperf-vmm (also in --help and README.md). */
#define VM_EXIT_FROZEN		121	/* a vCPU stopped where the guest maps no code (vcpu__probe) */
#define VM_EXIT_CRASH		123
#define VM_EXIT_TIMEOUT		124
#define VM_EXIT_VMM_ERROR	125

struct vm_config {
	const char *kernel;
	const char *initrd;		/* NULL: none */
	const char *cmdline;		/* the whole kernel command line */
	const char *console_log;	/* NULL: none */
	unsigned int nr_vcpus;
	uint64_t mem_size;		/* bytes */
	bool console_input;		/* read stdin when it is a terminal or pipe */
	bool raw_console;		/* --raw-console: no filter, no rate limit (confilter.h) */
	/* --allow: the vperf device's patterns (owned: vmm_pv_allow_free()); NULL: its default */
	char **allow;
	unsigned int nr_allow;
};

enum vm_stop_reason {
	VM_STOP_NONE = 0,
	VM_STOP_POWEROFF,   /* ACPI S5 */
	VM_STOP_REBOOT,	    /* ACPI reset register, keyboard controller, port 0x92 */
	VM_STOP_GUEST_EXIT, /* VPERF_HC_EXIT */
	VM_STOP_CRASH,	    /* triple fault, KVM error, failed assertion, kernel panic */
	VM_STOP_TIMEOUT,
	VM_STOP_SIGNAL,
	VM_STOP_ERROR, /* the VMM failed */
	VM_STOP_FROZEN, /* a vCPU stopped where nothing is mapped (vcpu__probe) */
};

struct vm_mem_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;
};

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned int id;		/* also its APIC ID */
	int fd;
	struct kvm_run *run;		/* mmap of the vCPU fd, vm->run_size bytes */
	pthread_t thread;
	bool thread_started;
	int stats_fd;			/* KVM_GET_STATS_FD, opened by the vperf device, or -1 */
	struct vcpu_stats stats;	/* written by this vCPU's thread only */
	/* CLOCK_MONOTONIC_COARSE of the last exit KVM_RUN returned, 0: none (read by vcpu__probe) */
	_Atomic uint64_t last_exit_ns;
	uint32_t last_exit_reason;	/* and its reason (a timed-out guest's dump says them) */
	_Atomic bool probe;		/* vcpu__probe asks the thread where its guest is */
	uint64_t probe_rip;		/* the RIP of the last probe that found no code mapped */
	unsigned int probe_unmapped;	/* how many probes in a row found the vCPU there */
	_Atomic int tid;		/* the vCPU thread's tid, once it runs (0 before) */
};

struct vperf_hv;
struct recorder;

struct vm {
	struct vm_config cfg;
	struct vperf_hv *pv;		/* the vperf device (pvdev.c) */
	struct recorder *rec;		/* --record (record.c), or NULL */
	int kvm_fd;
	int vm_fd;
	size_t run_size;		/* KVM_GET_VCPU_MMAP_SIZE */
	int sync_regs;			/* KVM_CAP_SYNC_REGS mask */
	bool tsc_deadline;		/* KVM_CAP_TSC_DEADLINE_TIMER */

	uint8_t *ram;			/* one mapping for all of guest RAM */
	uint64_t ram_size;
	unsigned int nr_mem;
	struct vm_mem_region mem[VM_MAX_MEM_REGIONS];

	struct kvm_cpuid2 *supported_cpuid;

	unsigned int nr_vcpus;
	struct vcpu vcpus[VM_MAX_VCPUS];

	struct ioport_bus iobus;
	struct serial8250 uart;
	struct console console;
	uint8_t cmos_index; /* platform.c; written by vCPU threads, a torn index is harmless */

	/*
	 * Stop: the first request wins; main waits on stop_fd (eventfd) and then kicks the vCPUs.
	 */
	pthread_mutex_t stop_lock;
	atomic_bool stopping;
	enum vm_stop_reason stop_reason;
	int stop_status;
	int stop_signal;
	int stop_fd;
	atomic_bool guest_ran;		/* some exit showed that the guest executes */
	struct timespec start_time;	/* when the vCPU threads started */
	atomic_bool panic_seen;		/* "Kernel panic - not syncing" on the console */
	struct timespec panic_time;

	/* Ports and MMIO addresses without a device are reported once each (--debug). */
	_Atomic uint64_t port_reported[65536 / 64];
	atomic_uint mmio_reports;
};

/* kvm.c */
int vm__init(struct vm *vm, const struct vm_config *cfg) __must_check;
void vm__exit(struct vm *vm);
/* Host pointer for guest-physical [gpa, gpa + len), or NULL if any byte is outside guest RAM. */
void *vm__gpa_to_hva(const struct vm *vm, uint64_t gpa, uint64_t len);
/* End of RAM below the PCI hole (where the boot code places things). */
uint64_t vm__low_ram_end(const struct vm *vm);
int vm__irq_line(struct vm *vm, unsigned int irq, int level);
/* Ask everything to stop; the first request sets the reason and status, later ones are ignored. */
void vm__request_stop(struct vm *vm, enum vm_stop_reason reason, int status);
static inline bool vm__stopping(struct vm *vm)
{
	return atomic_load_explicit(&vm->stopping, memory_order_acquire);
}
const char *vm__stop_reason_name(enum vm_stop_reason reason);
/* Called for each complete console line (panic detection). */
void vm__console_line(void *ctx, const char *line);

/* vcpu.c */
int vcpu__init(struct vm *vm, unsigned int id) __must_check;
void vcpu__exit(struct vcpu *vcpu);
int vcpu__start(struct vcpu *vcpu) __must_check;
/*
 * One exit, as KVM_RUN left it in vcpu->run: account it, handle it (port I/O and MMIO go to the
 * devices), then let the vperf device deliver overflows. Returns 0 to keep running, < 0 when this
 * vCPU stops (the stop reason is set). The vCPU thread calls it after every KVM_RUN; it needs no
 * /dev/kvm, so the fuzzers (hv/vmm/fuzz) call it on a kvm_run of their own.
 */
int vcpu__dispatch_exit(struct vcpu *vcpu);
/* Make the vCPU leave KVM_RUN and see vm->stopping (safe from any thread). */
void vcpu__kick(struct vcpu *vcpu);
/*
 * The main thread's periodic check (every VCPU_PROBE_S): a vCPU whose KVM_RUN has not returned an
 * exit for VCPU_PROBE_S is interrupted and reads its own registers; one found twice in a row at
 * the same RIP with no code mapped there cannot be running the guest (a real CPU would fault),
 * and stops the VM with VM_EXIT_FROZEN, its registers dumped.
 */
#define VCPU_PROBE_S 10
void vcpu__probe(struct vcpu *vcpu);
/* On the vCPU's thread: answer a pending probe (a no-op without one). */
void vcpu__answer_probe(struct vcpu *vcpu);
void vcpu__join(struct vcpu *vcpu);
/* Install the kick signal's handler (once per process, before any vCPU thread starts). */
int vcpu__setup_signals(void) __must_check;
#define VCPU_KICK_SIGNAL	SIGUSR1

#endif /* VMM_VM_H */
