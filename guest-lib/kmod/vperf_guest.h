/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vperf_guest.ko internals: the device found through CPUID, the hypercall,
 * the per-CPU shared pages, /dev/vperf and the ACPI device's interrupt.
 */
#ifndef VPERF_GUEST_H
#define VPERF_GUEST_H

#include <linux/atomic.h>
#include <linux/percpu.h>
#include <linux/types.h>

struct pt_regs;
struct page;
struct vm_area_struct;
struct vperf_thread_start;

#include <vperf/abi.h>

#define VPERF_PR_PREFIX	"vperf_guest: "

/* What CPUID leaves VPERF_CPUID_BASE and VPERF_CPUID_INFO report. */
struct vperf_dev_info {
	u32 version;
	u32 features;
	u16 port;
	u32 gsi;
	u64 doorbell_gpa;	/* 0: none */
	/*
	 * No vperf device: tracing through the shared-memory channel only (shm.c, docs/abi.md 8).
	 * features then holds the trace bits the channel carries, port is 0 and no hypercall is
	 * made (vperf_hc refuses).
	 */
	bool shm;
};

extern struct vperf_dev_info vperf_dev;
extern atomic_t vperf_nr_pages;
extern atomic_long_t vperf_irq_count;
extern int vperf_irq;

/*
 * Hypercalls this CPU made (vperf_hc below).  Each is one port-I/O exit,
 * which the host counts in the exit counters of the vCPU; vperf_snapshot()
 * takes them out of the counters that count them (own_hc slots), so that a
 * thread's counts never hold the module's own exits.
 */
DECLARE_PER_CPU(u64, vperf_hc_made);

/*
 * A hypercall: op in EAX, arguments in RBX, RCX, RSI, RDI, a 32-bit write
 * to the device's port; the result comes back in RAX (docs/abi.md, 2).  It
 * concerns the vCPU that runs it: callers that name per-vCPU state must not
 * migrate (preemption off, or a CPU-bound thread).  Interrupts are off
 * around it so that the exit and its count land on the same CPU.
 */
static inline s64 vperf_hc(u32 op, u64 a0, u64 a1, u64 a2, u64 a3)
{
	unsigned long flags;
	u64 rax = op;

	if (unlikely(!vperf_dev.port))
		return -VPERF_ENOSYS;	/* no device (the shared-memory channel): no port */
	local_irq_save(flags);
	asm volatile("outl %%eax, %%dx"
		     : "+a" (rax)
		     : "d" (vperf_dev.port), "b" (a0), "c" (a1), "S" (a2), "D" (a3)
		     : "memory");
	this_cpu_inc(vperf_hc_made);
	local_irq_restore(flags);
	return (s64)rax;
}

/*
 * The counter slots (pv.c): the events every vCPU counts, the same on all
 * of them, at most VPERF_MAX_COUNTERS.  Slots 0..2 are fixed (vcpu-clock,
 * steal, exits: what a context without an event list counts, what sampling
 * and VPERF_IOC_VCPU_TOTALS use); the others are taken by the contexts
 * that ask for other events and kept until a new event needs the slot.
 */
#define VPERF_FIXED_SLOTS	3
#define VPERF_SLOT_NONE		0xff
#define VPERF_MAX_EVENTS	64	/* distinct events of live contexts, on all vCPUs */
#define VPERF_EV_NONE		0xff

/*
 * The fixed slots' events, in index order (enum vperf_thread_counter_index):
 * name is what user space (the pv backend) calls it.
 */
struct vperf_counter_def {
	const char *name;	/* e.g. "vperf::vcpu-clock" */
	u32 source;		/* enum vperf_source */
	u64 arg;
	const char *event;	/* vperf_event_desc.name */
};

#define VPERF_NR_COUNTERS	VPERF_FIXED_SLOTS
extern const struct vperf_counter_def vperf_counter_defs[VPERF_NR_COUNTERS];

/* One SNAPSHOT of this CPU: values with the module's own exits taken out. */
struct vperf_snap {
	u32 nr;				/* slots programmed on this CPU */
	u8 ev[VPERF_MAX_COUNTERS];	/* the event each slot counted */
	u64 host_ns;
	struct vperf_counter_value v[VPERF_MAX_COUNTERS];
	u64 adj[VPERF_MAX_COUNTERS];	/* v[s].value - the page's raw value */
};

struct file;
struct vm_area_struct;
struct vperf_user;

/* pv.c */
int vperf_pv_detect(void);
int vperf_hc_errno(s64 ret);
int vperf_pages_init(void);
void vperf_pages_exit(void);
int vperf_snapshot(struct vperf_snap *snap);	/* interrupts or preemption off */
void vperf_snap_page(const struct vperf_vcpu_page *vp, struct vperf_snap *snap);	/* NMI */
/*
 * events (ids) for user u's contexts: claim (process context, may reprogram
 * every vCPU; -EDQUOT past max_user_events), hold more users (any context),
 * release
 */
int vperf_events_get(struct vperf_user *u, const struct vperf_event_desc *ev, u32 n, u8 *ids,
		     u32 *bad);
void vperf_events_hold(struct vperf_user *u, const u8 *ids, u32 n);
void vperf_events_put(struct vperf_user *u, const u8 *ids, u32 n);
/*
 * May the event count what the guest kernel executes?  True for a PERF
 * event (hardware, raw, a PMU's) unless its libpfm4 modifiers make it user
 * mode only (a privilege-level modifier and no k); false for the
 * virtualization events (exits, KVM statistics, steal) and the host's
 * software events of the vCPU thread by their exact names.
 */
bool vperf_desc_counts_kernel(const struct vperf_event_desc *d);
long vperf_ioctl_event_info(void __user *uarg);
/*
 * The guest's own view of this CPU's steal (KVM's steal-time record, which
 * the host updates whenever the vCPU thread is scheduled back in): 0 with
 * *ns the vCPU's steal so far, or -ENODEV where the kernel did not enable
 * the record.  Any context; no exit.
 */
int vperf_steal_read(u64 *ns);
bool vperf_steal_everywhere(void);	/* every online CPU has the record */
u64 vperf_hypercalls(void);		/* hypercalls made, all CPUs */
/* the overflow NMI's programming (sample.c arms through these) */
int vperf_overflow_arm(u64 period);	/* every online vCPU, 0: off; 0 or -EIO */
u64 vperf_overflow_armed(void);		/* the period armed, 0: none */
const struct vperf_vcpu_page *vperf_overflow_take(unsigned int c);	/* NMI: ours? bit cleared */
u64 vperf_overflow_throttled(void);
long vperf_ioctl_vcpu_totals(void __user *uarg);
bool vperf_may_see_all(void);		/* system-wide data: paranoid <= 0 or CAP_PERFMON */

/* thread.c */
int vperf_threads_init(void);
void vperf_threads_exit(void);
int vperf_threads_count(void);
void vperf_thread_overflow(struct pt_regs *regs, const struct vperf_vcpu_page *vp);	/* NMI */
void vperf_thread_rebase(const struct vperf_snap *before, const struct vperf_snap *after);	/* IPI */
int vperf_thread_open(struct file *file);
void vperf_thread_release(struct file *file);
long vperf_ioctl_thread_start(struct file *file, void __user *uarg);
long vperf_ioctl_thread_stop(struct file *file);
long vperf_ioctl_thread_read(struct file *file);
long vperf_ioctl_thread_list(struct file *file, void __user *uarg);
int vperf_thread_mmap(struct file *file, struct vm_area_struct *vma);

/*
 * trace.c: the per-vCPU trace rings (docs/abi.md 2.5 version 2, 7.3).
 * Counters per CPU, summed by the trace_stats parameter; updated with
 * this_cpu ops, which nesting writers (interrupts, NMIs) cannot tear.
 */
enum vperf_trace_counter {
	VPERF_TC_BYTES,			/* record bytes written into rings */
	VPERF_TC_FLUSHED,		/* bytes TRACE_FLUSH said the host consumed */
	VPERF_TC_CONSUMED,		/* tails of unregistered rings */
	VPERF_TC_RING_HEAD,		/* heads of unregistered rings */
	VPERF_TC_RING_LOST,		/* lost counts of unregistered rings */
	VPERF_TC_FLUSHES,
	VPERF_TC_FLUSH_ERRORS,
	VPERF_TC_WATERMARKS,		/* flushes asked for by a half-full ring */
	VPERF_TC_IRQ_NOVECTOR,		/* device interrupts whose vector was unknown */
	VPERF_TC_MARK_USER_LOST,	/* marker records the threads could not write */
	VPERF_TC_MARK_INVALID,		/* marker records refused */
	VPERF_TC_MARK_ORPHANED,		/* marker records no ring could take (tracing off) */
	VPERF_TC_WATCH_OUT,		/* trace_watch's thread: switched out */
	VPERF_TC_WATCH_IN,		/* switched in */
	VPERF_TC_WATCH_WOKEN,		/* woken */
	VPERF_TC_WATCH_MARKS,		/* its marker records copied */
	VPERF_TC_NR
};

struct vperf_trace_stats {
	u64 produced[VPERF_TRACE_NR_TYPES];	/* records written, per type */
	u64 lost[VPERF_TRACE_NR_TYPES];		/* records dropped: the ring was full */
	u64 irq_kind[VPERF_TRACE_IRQ_NR_KINDS];	/* IRQ records per kind */
	u64 c[VPERF_TC_NR];
};

DECLARE_PER_CPU(struct vperf_trace_stats, vperf_trace_stats);

int vperf_trace_init(void);
void vperf_trace_exit(void);
bool vperf_trace_enabled(void);
bool vperf_trace_watched(pid_t tid);
/* Preemption off: a whole record into this CPU's ring; 0, -ENOSPC (full), -ENODEV (no ring). */
int vperf_trace_write(const void *rec, u32 size, bool count_lost);
s64 vperf_trace_flush(void);	/* preemption off, not in NMI: this CPU's ring */
void vperf_trace_sample(struct pt_regs *regs, const u64 *counts, u32 nr);	/* NMI */
long vperf_ioctl_trace_sample(struct file *file, const void __user *uarg);
int vperf_may_monitor(struct task_struct *task);
bool vperf_may_count_kernel(void);	/* perf_allow_kernel(): CAP_PERFMON or paranoid < 2 */
void vperf_trace_sample_release(struct file *file);

/* sample.c: overflow NMIs and sample rings */
struct vperf_sampler;
typedef void (*vperf_overflow_fn)(struct pt_regs *regs, const struct vperf_vcpu_page *vp);
int vperf_sampling_init(vperf_overflow_fn fn);	/* fn: the NMI's user (thread.c) */
void vperf_sampling_exit(void);
int vperf_sampling_get(u64 period);	/* process context: arms, or -EBUSY/-EOPNOTSUPP/-EIO */
void vperf_sampling_put(void);		/* any context: disarms (deferred) after the last */
extern atomic_long_t vperf_nmi_count;
int vperf_sampler_check(const struct vperf_thread_start *ks, u32 usize);	/* 0 or -EINVAL */
size_t vperf_sampler_bytes(u32 data_pages);
int vperf_sampler_new(const struct vperf_thread_start *ks, struct vperf_sampler **out);
void vperf_sampler_free(struct vperf_sampler *s);	/* NULL: nothing */
u32 vperf_sampler_get_pages(const struct vperf_sampler *s, struct page **pages);
int vperf_sampler_map(struct vm_area_struct *vma, struct page **pages, u32 n);
void vperf_sampler_write(struct vperf_sampler *s, struct pt_regs *regs, const u64 *values, u32 nr);	/* NMI */

/* mark.c: user-space markers */
struct task_struct;
int vperf_marks_count(void);
void vperf_mark_switch_out(struct task_struct *prev);
void vperf_mark_task_exit(struct task_struct *task);
void vperf_marks_release(struct file *file);
long vperf_ioctl_mark_flush(void);
int vperf_mark_mmap(struct file *file, struct vm_area_struct *vma);

/* user.c: per-user limits (max_user_kb, max_user_events) */
struct vperf_user *vperf_user_get(void);	/* current's real uid; process context */
void vperf_user_hold(struct vperf_user *u);
void vperf_user_put(struct vperf_user *u);	/* any context; NULL: nothing */
int vperf_user_charge(struct vperf_user *u, size_t bytes);	/* 0 or -EDQUOT; any context */
void vperf_user_uncharge(struct vperf_user *u, size_t bytes);
/* under vperf_slots_lock: may u take a reference on event e (-1: a new one)? */
bool vperf_user_event_ok(const struct vperf_user *u, int e);
void vperf_user_event_ref(struct vperf_user *u, u8 e);	/* any context */
void vperf_user_event_unref(struct vperf_user *u, u8 e);
struct vperf_user *vperf_file_user(struct file *file);	/* thread.c: whose file it is */

/* dev.c */
int vperf_dev_init(void);
void vperf_dev_exit(void);

extern atomic_long_t vperf_slices_unbased, vperf_slices_elsewhere, vperf_snapshot_failures;

/* The shared-memory channel (shm.c). */
int vperf_shm_init(void);
void vperf_shm_exit(void);
bool vperf_shm_present(void);
u64 vperf_shm_layout(u64 want);
struct vperf_trace_ring *vperf_shm_ring(unsigned int cpu);
void vperf_shm_stop(void);

#endif /* VPERF_GUEST_H */
