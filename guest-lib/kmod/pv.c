// SPDX-License-Identifier: GPL-2.0
/*
 * The paravirtual device: CPUID discovery, the per-vCPU pages and their
 * virtual counters, SNAPSHOT (docs/abi.md, 1, 2.2 and 2.3).
 *
 * The pages follow CPU hotplug: a dynamic AP state's callbacks run on the
 * CPU that comes or goes, in its bound hotplug thread, which is what a
 * per-vCPU hypercall needs; cpuhp_setup_state() runs the online callback on
 * every CPU already up and cpuhp_remove_state() the offline one on each.
 */
#include <linux/cpu.h>
#include <linux/ctype.h>
#include <linux/cpuhotplug.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/smp.h>
#include <asm/processor.h>
#include <asm/msr.h>
#include <linux/kvm_para.h>

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"

struct vperf_dev_info vperf_dev;
atomic_t vperf_nr_pages = ATOMIC_INIT(0);

static DEFINE_PER_CPU(struct vperf_vcpu_page *, vperf_page);
DEFINE_PER_CPU(u64, vperf_hc_made);

/*
 * The counter slots every vCPU counts (vperf_guest.h).  A COUNTERS_SET
 * restarts all of a vCPU's counters at 0, so each CPU keeps, per slot, what
 * the slot had counted before the last one (carry): a slot whose event
 * stays counts on without a jump, and no thread's base needs retaking.
 * Slots that count port-I/O exits (own_hc) also lose the module's own
 * hypercalls, made on this CPU since the last COUNTERS_SET.
 */
struct vperf_event_ent {
	struct vperf_event_desc desc;	/* source 0: a free entry */
	atomic_t users;			/* live contexts counting it; fixed events +1 */
	bool own_hc;
};

/*
 * Events (ids, what contexts hold) and the slots that count them: events
 * 0..2 are the fixed ones in slots 0..2; the others get a slot while one is
 * free.  When more are live than the 13 other slots hold, they take turns
 * (vperf_rotate_fn, every mux_ms): each context's counts of an event cover
 * only the time it was on a slot (running < enabled), and readers scale
 * them, as perf does with multiplexed events.
 */
static struct vperf_event_ent vperf_evtab[VPERF_MAX_EVENTS];
static u8 vperf_prog[VPERF_MAX_COUNTERS];	/* the event in each slot, VPERF_EV_NONE: none */
static u32 vperf_nr_prog;		/* slots programmed on the vCPUs */
static u32 vperf_rot_cursor;		/* rotation: where the next window starts */
static DEFINE_MUTEX(vperf_slots_lock);	/* claiming events and reprogramming */
static DEFINE_SPINLOCK(vperf_slots_spin);	/* the slots, for a CPU coming online */

static unsigned int mux_ms = 50;
module_param(mux_ms, uint, 0644);
MODULE_PARM_DESC(mux_ms, "when more events are live than the vCPUs count at once, each set of them "
		 "counts this long (ms) before the next takes its turn (default 50, at least 4)");

struct vperf_cpu_ctrs {
	u32 nr;				/* slots programmed here */
	u8 ev[VPERF_MAX_COUNTERS];	/* the event each slot counts here, VPERF_EV_NONE: none */
	u32 own_mask;			/* own_hc slots */
	bool reprogramming;		/* an NMI must not combine carry and page now */
	u64 hc_at_set;			/* vperf_hc_made after the last COUNTERS_SET */
	struct vperf_counter_value carry[VPERF_MAX_COUNTERS];
};

static DEFINE_PER_CPU(struct vperf_cpu_ctrs, vperf_cpu_ctrs);

/* This CPU's KVM steal-time record, as the kernel registered it (MSR_KVM_STEAL_TIME), or NULL. */
static DEFINE_PER_CPU(const struct kvm_steal_time *, vperf_steal_rec);

static void vperf_slots_trim_fn(struct work_struct *work);
static DECLARE_WORK(vperf_slots_trim_work, vperf_slots_trim_fn);
static void vperf_rotate_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(vperf_rotate_work, vperf_rotate_fn);

/* Indexed like enum vperf_thread_counter_index (vperf_guest_uapi.h). */
const struct vperf_counter_def vperf_counter_defs[VPERF_NR_COUNTERS] = {
	[VPERF_THREAD_CTR_VCPU_CLOCK] = {
		.name = "vperf::vcpu-clock", .source = VPERF_SRC_PERF, .event = "task-clock",
	},
	[VPERF_THREAD_CTR_STEAL] = {
		.name = "vperf::steal", .source = VPERF_SRC_STEAL, .event = "steal",
	},
	[VPERF_THREAD_CTR_EXITS] = {
		.name = "vperf::exits", .source = VPERF_SRC_EXITS, .arg = ~0ull, .event = "all",
	},
};

static_assert(VPERF_NR_COUNTERS == VPERF_THREAD_NR_CTRS);
static_assert(VPERF_NR_COUNTERS == VPERF_FIXED_SLOTS);
static_assert(VPERF_NR_COUNTERS <= VPERF_THREAD_MAX_COUNTERS);
static_assert(sizeof(struct vperf_thread_event) == sizeof(struct vperf_event_desc));
static_assert(VPERF_MAX_COUNTERS <= 32);	/* own_mask */

#define KVM_EXIT_IO_REASON	2	/* linux/kvm.h: a port write is one of these */

/* Does the event count the exit of a hypercall (a port write)? */
static bool vperf_desc_counts_hc(const struct vperf_event_desc *d)
{
	switch (d->source) {
	case VPERF_SRC_EXITS:
		return d->arg == ~0ull || d->arg == KVM_EXIT_IO_REASON;
	case VPERF_SRC_KVM_STAT:
		return !strcmp(d->name, "exits") || !strcmp(d->name, "io_exits");
	default:
		return false;
	}
}
static enum cpuhp_state vperf_cpuhp_state;
static void vperf_slots_init(void);

/* ---- the overflow NMI's programming (sample.c decides when) ---- */

static u64 vperf_overflow_period;	/* armed on every vCPU, 0: disarmed */
static atomic_t vperf_arm_errors = ATOMIC_INIT(0);

/* On the CPU itself: its vcpu-clock's overflow NMI every period ns, 0: off. */
static void vperf_arm_this_cpu(u64 period)
{
	s64 ret;

	if (!this_cpu_read(vperf_page))
		return;
	ret = vperf_hc(VPERF_HC_OVERFLOW_SET, VPERF_THREAD_CTR_VCPU_CLOCK, period,
		       period ? VPERF_OVERFLOW_NMI : 0, 0);
	if (ret < 0)
		atomic_inc(&vperf_arm_errors);
}

static void vperf_arm_ipi(void *info)
{
	vperf_arm_this_cpu(*(u64 *)info);
}

/*
 * Every online vCPU's vcpu-clock overflow NMI at period ns (0: off), or
 * -EIO if one refused (then none).  Process context; the caller serializes.
 */
int vperf_overflow_arm(u64 period)
{
	u64 off = 0;

	atomic_set(&vperf_arm_errors, 0);
	cpus_read_lock();
	on_each_cpu(vperf_arm_ipi, &period, 1);
	if (period && atomic_read(&vperf_arm_errors))
		on_each_cpu(vperf_arm_ipi, &off, 1);
	cpus_read_unlock();
	if (period && atomic_read(&vperf_arm_errors)) {
		pr_err(VPERF_PR_PREFIX "OVERFLOW_SET %llu ns with NMIs refused on %d CPUs\n", period,
		       atomic_read(&vperf_arm_errors));
		WRITE_ONCE(vperf_overflow_period, 0);
		return -EIO;
	}
	WRITE_ONCE(vperf_overflow_period, period);	/* what a CPU coming online arms */
	return 0;
}

/* The period every online vCPU is armed at, 0: none (the last vperf_overflow_arm()'s). */
u64 vperf_overflow_armed(void)
{
	return READ_ONCE(vperf_overflow_period);
}

/*
 * Overflows the host throttled (docs/abi.md 2.4: each found the last one
 * not yet taken and doubled the period), over the online vCPUs, as their
 * pages last said.
 */
u64 vperf_overflow_throttled(void)
{
	unsigned int cpu;
	u64 sum = 0;

	cpus_read_lock();	/* the offline callback frees pages */
	for_each_online_cpu(cpu) {
		struct vperf_vcpu_page *page = READ_ONCE(per_cpu(vperf_page, cpu));

		if (page)
			sum += READ_ONCE(page->overflow_throttled);
	}
	cpus_read_unlock();
	return sum;
}

/*
 * NMI context: this vCPU's page if counter c's overflow bit is set there,
 * the bit cleared; else NULL (not ours).  No OVERFLOW_ACK (an exit): the bit
 * is the guest's to clear, and the host raises no NMI until it has.  The
 * host updated the page before it raised the NMI and cannot change it while
 * this vCPU runs the handler.
 */
const struct vperf_vcpu_page *vperf_overflow_take(unsigned int c)
{
	struct vperf_vcpu_page *page = this_cpu_read(vperf_page);
	const u64 bit = 1ull << c;

	if (!page || !(READ_ONCE(page->overflow_status) & bit))
		return NULL;
	WRITE_ONCE(page->overflow_status, page->overflow_status & ~bit);
	return page;
}

int vperf_pv_detect(void)
{
	unsigned int a, b, c, d;
	s64 ret;

	unsigned int max;

	cpuid(VPERF_CPUID_BASE, &a, &b, &c, &d);
	max = a;
	if (b != VPERF_CPUID_SIG_EBX || c != VPERF_CPUID_SIG_ECX ||
	    d != VPERF_CPUID_SIG_EDX || a < VPERF_CPUID_INFO) {
		pr_info(VPERF_PR_PREFIX "no vperf device (CPUID 0x%x has no VPERF-KVM-PV signature)\n",
			VPERF_CPUID_BASE);
		return -ENODEV;
	}
	cpuid(VPERF_CPUID_INFO, &a, &b, &c, &d);
	if (a != VPERF_ABI_VERSION) {
		pr_err(VPERF_PR_PREFIX "the device speaks ABI version %u, this module only %u\n",
		       a, VPERF_ABI_VERSION);
		return -ENODEV;
	}
	if (!c || c > 0xffff) {
		pr_err(VPERF_PR_PREFIX "CPUID 0x%x reports hypercall port 0x%x, not a 16-bit I/O port\n",
		       VPERF_CPUID_INFO, c);
		return -ENODEV;
	}
	vperf_dev.version = a;
	vperf_dev.features = b;
	vperf_dev.port = c;
	vperf_dev.gsi = d;
	vperf_dev.doorbell_gpa = 0;
	if ((vperf_dev.features & VPERF_FEAT_DOORBELL) && max >= VPERF_CPUID_DOORBELL) {
		u64 gpa;

		cpuid(VPERF_CPUID_DOORBELL, &a, &b, &c, &d);
		gpa = (u64)b << 32 | a;
		/* page aligned, one page, and not RAM (a load must exit to the VMM) */
		if (!gpa || gpa & ~PAGE_MASK || c < PAGE_SIZE || pfn_valid(PHYS_PFN(gpa))) {
			pr_warn(VPERF_PR_PREFIX "ignoring the doorbell at 0x%llx (%u bytes): not a page "
				"outside RAM\n", gpa, c);
			vperf_dev.features &= ~VPERF_FEAT_DOORBELL;
		} else {
			vperf_dev.doorbell_gpa = gpa;
		}
	} else {
		vperf_dev.features &= ~VPERF_FEAT_DOORBELL;
	}

	/* The port answers, and agrees with CPUID. */
	ret = vperf_hc(VPERF_HC_VERSION, 0, 0, 0, 0);
	if (ret < 0 || (u32)ret != vperf_dev.version) {
		pr_err(VPERF_PR_PREFIX "VERSION hypercall on port 0x%x returned %lld, CPUID says version %u\n",
		       vperf_dev.port, ret, vperf_dev.version);
		return -ENODEV;
	}
	pr_info(VPERF_PR_PREFIX "vperf ABI %u, features 0x%x, port 0x%x, GSI %u, doorbell 0x%llx\n",
		vperf_dev.version, vperf_dev.features, vperf_dev.port, vperf_dev.gsi,
		vperf_dev.doorbell_gpa);
	return 0;
}

/* A hypercall's result as 0 / -errno. */
int vperf_hc_errno(s64 ret)
{
	if (ret >= 0)
		return 0;
	switch (-ret) {
	case VPERF_EINVAL:	return -EINVAL;
	case VPERF_ENOSYS:	return -ENOSYS;
	case VPERF_EFAULT:	return -EFAULT;
	case VPERF_EPERM:	return -EPERM;
	case VPERF_ENOENT:	return -ENOENT;
	case VPERF_ENODEV:	return -ENODEV;
	case VPERF_EBUSY:	return -EBUSY;
	case VPERF_ENOSPC:	return -ENOSPC;
	case VPERF_ESTATE:	return -EPROTO;
	default:		return -EIO;
	}
}

/* PAGE_REGISTER for this CPU's vCPU; gpa 0 unregisters. */
static int vperf_page_register(unsigned int cpu, u64 gpa)
{
	s64 ret;

	/* Bound hotplug thread: we cannot migrate, but say so if we did. */
	if (WARN_ON_ONCE(raw_smp_processor_id() != cpu))
		return -EINVAL;
	ret = vperf_hc(VPERF_HC_PAGE_REGISTER, gpa, 0, 0, 0);
	if (ret < 0)
		pr_err(VPERF_PR_PREFIX "CPU %u: PAGE_REGISTER 0x%llx failed: %lld\n",
		       cpu, gpa, ret);
	return vperf_hc_errno(ret);
}

/* A slot without an event counts exits (all): the cheapest source, nobody reads it. */
static void vperf_placeholder(struct vperf_event_desc *d)
{
	memset(d, 0, sizeof(*d));
	d->source = VPERF_SRC_EXITS;
	d->arg = ~0ull;
}

/* The slots' descriptors, own_hc mask and events now; n slots.  Any context. */
static u32 vperf_slots_copy(struct vperf_event_desc *desc, u32 *own_mask, u8 *ev)
{
	unsigned long flags;
	u32 i, n;

	spin_lock_irqsave(&vperf_slots_spin, flags);
	n = vperf_nr_prog;
	*own_mask = 0;
	for (i = 0; i < n; i++) {
		ev[i] = vperf_prog[i];
		if (ev[i] == VPERF_EV_NONE) {
			vperf_placeholder(&desc[i]);
			continue;
		}
		desc[i] = vperf_evtab[ev[i]].desc;
		if (vperf_evtab[ev[i]].own_hc)
			*own_mask |= 1u << i;
	}
	spin_unlock_irqrestore(&vperf_slots_spin, flags);
	return n;
}

/*
 * COUNTERS_SET on this CPU's vCPU with desc[n] (guest-physical memory)
 * counting events ev[n], interrupts off.  A slot that counts the same event
 * as before goes on from its value in `before` (carry); the others start at
 * 0.  0 or -errno; on an error nothing changed.
 */
static int vperf_counters_program(const struct vperf_event_desc *desc, u32 n, u32 own_mask,
				  const u8 *ev, const struct vperf_snap *before)
{
	struct vperf_cpu_ctrs *c = this_cpu_ptr(&vperf_cpu_ctrs);
	s64 ret;
	u32 i;

	lockdep_assert_irqs_disabled();
	c->reprogramming = true;
	barrier();
	ret = vperf_hc(VPERF_HC_COUNTERS_SET, n ? virt_to_phys((void *)desc) : 0, n, 0, 0);
	if (ret < 0) {
		barrier();
		c->reprogramming = false;
		return vperf_hc_errno(ret);
	}
	for (i = 0; i < VPERF_MAX_COUNTERS; i++) {
		bool keep = before && i < n && i < before->nr && ev[i] != VPERF_EV_NONE &&
			    before->ev[i] == ev[i];

		c->carry[i] = keep ? before->v[i] : (struct vperf_counter_value){ 0 };
		c->ev[i] = i < n ? ev[i] : VPERF_EV_NONE;
	}
	c->nr = n;
	c->own_mask = own_mask;
	c->hc_at_set = __this_cpu_read(vperf_hc_made);	/* COUNTERS_SET's own exit is not in the counts */
	barrier();
	c->reprogramming = false;
	return 0;
}

/* COUNTERS_SET for this CPU's vCPU: the slot table, or none (clear). */
static int vperf_counters_set(unsigned int cpu, bool on)
{
	u8 ev[VPERF_MAX_COUNTERS];
	struct vperf_event_desc *desc;
	unsigned long flags;
	u32 n, own;
	int ret;

	if (!on) {
		local_irq_save(flags);
		ret = vperf_counters_program(NULL, 0, 0, NULL, NULL);
		local_irq_restore(flags);
		return ret;
	}
	/* The host reads the array from guest-physical memory: not module data. */
	desc = kcalloc(VPERF_MAX_COUNTERS, sizeof(*desc), GFP_KERNEL);
	if (!desc)
		return -ENOMEM;
	n = vperf_slots_copy(desc, &own, ev);
	local_irq_save(flags);
	ret = vperf_counters_program(desc, n, own, ev, NULL);
	local_irq_restore(flags);
	kfree(desc);
	if (ret)
		pr_err(VPERF_PR_PREFIX "CPU %u: COUNTERS_SET of %u counters failed: %d\n", cpu, n, ret);
	return ret;
}

/*
 * On the CPU itself (its hotplug callback): where the kernel keeps its
 * steal-time record, if it registered one.  An rdmsr of KVM's MSR is one
 * exit to KVM (not to the VMM), once per CPU coming online.
 */
static void vperf_steal_find(unsigned int cpu)
{
	u64 msr = 0;

	per_cpu(vperf_steal_rec, cpu) = NULL;
	if (rdmsrl_safe(MSR_KVM_STEAL_TIME, &msr) || !(msr & KVM_MSR_ENABLED))
		return;
	/* 64-byte aligned, in the kernel's per-CPU area: in the direct map */
	per_cpu(vperf_steal_rec, cpu) = phys_to_virt(msr & ~0x3fULL);
}

int vperf_steal_read(u64 *ns)
{
	const struct kvm_steal_time *st = this_cpu_read(vperf_steal_rec);
	u32 v;

	if (!st)
		return -ENODEV;
	do {
		v = READ_ONCE(st->version);
		virt_rmb();
		*ns = READ_ONCE(st->steal);
		virt_rmb();
	} while ((v & 1) || v != READ_ONCE(st->version));
	return 0;
}

bool vperf_steal_everywhere(void)
{
	unsigned int cpu;
	bool all = true;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		all &= per_cpu(vperf_steal_rec, cpu) != NULL;
	cpus_read_unlock();
	return all;
}

u64 vperf_hypercalls(void)
{
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu(vperf_hc_made, cpu));
	return sum;
}

static int vperf_cpu_online(unsigned int cpu)
{
	struct vperf_vcpu_page *page;
	int ret;

	page = (struct vperf_vcpu_page *)get_zeroed_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	ret = vperf_page_register(cpu, virt_to_phys(page));
	if (ret)
		goto free_page;
	/* On registration the host writes a first snapshot. */
	if (READ_ONCE(page->size) != sizeof(*page) ||
	    READ_ONCE(page->version) != VPERF_ABI_VERSION) {
		pr_err(VPERF_PR_PREFIX "CPU %u: the registered page holds size %u version %u, expected %zu and %u\n",
		       cpu, READ_ONCE(page->size), READ_ONCE(page->version),
		       sizeof(*page), VPERF_ABI_VERSION);
		ret = -EPROTO;
		goto unregister;
	}
	ret = vperf_counters_set(cpu, true);
	if (ret)
		goto unregister;
	vperf_steal_find(cpu);
	/* Published last: the sched_switch probe may use it from now on. */
	WRITE_ONCE(per_cpu(vperf_page, cpu), page);
	atomic_inc(&vperf_nr_pages);
	/* a CPU that comes online while contexts sample samples too (no lock: hotplug holds it off) */
	if (READ_ONCE(vperf_overflow_period))
		vperf_arm_this_cpu(READ_ONCE(vperf_overflow_period));
	return 0;

unregister:
	vperf_page_register(cpu, 0);
free_page:
	free_page((unsigned long)page);
	return ret;
}

static int vperf_cpu_offline(unsigned int cpu)
{
	struct vperf_vcpu_page *page = per_cpu(vperf_page, cpu);

	if (!page)
		return 0;
	/*
	 * Unpublish first: the sched_switch probe runs on this CPU with
	 * preemption off, so once this store is done it cannot see the page.
	 */
	WRITE_ONCE(per_cpu(vperf_page, cpu), NULL);
	per_cpu(vperf_steal_rec, cpu) = NULL;	/* the kernel stops updating it */
	vperf_counters_set(cpu, false);
	/*
	 * The host must stop writing before the page goes back to the
	 * allocator.  If it refuses (it cannot with a valid ABI v1 device),
	 * leak the page rather than hand out memory the host still writes.
	 */
	if (vperf_page_register(cpu, 0))
		pr_err(VPERF_PR_PREFIX "CPU %u: cannot unregister the page, leaking it\n", cpu);
	else
		free_page((unsigned long)page);
	atomic_dec(&vperf_nr_pages);
	return 0;
}

int vperf_pages_init(void)
{
	int ret;

	vperf_slots_init();
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "vperf/guest:online",
				vperf_cpu_online, vperf_cpu_offline);
	if (ret < 0) {
		pr_err(VPERF_PR_PREFIX "registering the per-CPU pages failed: %d\n", ret);
		return ret;
	}
	vperf_cpuhp_state = ret;
	pr_info(VPERF_PR_PREFIX "registered %d per-CPU pages\n", atomic_read(&vperf_nr_pages));
	return 0;
}

void vperf_pages_exit(void)
{
	flush_work(&vperf_slots_trim_work);	/* no context is left: nothing schedules it again */
	cancel_delayed_work_sync(&vperf_rotate_work);
	cpuhp_remove_state(vperf_cpuhp_state);
}

/* The page's counters into snap, with this CPU's carry and own-exit correction. */
static void vperf_snap_fill(const struct vperf_vcpu_page *page, struct vperf_snap *snap)
{
	const struct vperf_cpu_ctrs *c = this_cpu_ptr(&vperf_cpu_ctrs);
	u64 own = __this_cpu_read(vperf_hc_made) - c->hc_at_set;
	u32 seq, n = 0, i;

	do {
		seq = smp_load_acquire(&page->seq);
		if (seq & 1) {
			cpu_relax();
			continue;
		}
		n = min3(READ_ONCE(page->nr_counters), c->nr, (u32)VPERF_MAX_COUNTERS);
		snap->host_ns = READ_ONCE(page->host_time_ns);
		for (i = 0; i < n; i++) {
			snap->v[i].value = READ_ONCE(page->counters[i].value);
			snap->v[i].enabled = READ_ONCE(page->counters[i].enabled);
			snap->v[i].running = READ_ONCE(page->counters[i].running);
		}
		smp_rmb();
	} while ((seq & 1) || READ_ONCE(page->seq) != seq);
	memcpy(snap->ev, c->ev, sizeof(snap->ev));
	for (i = 0; i < n; i++) {
		snap->adj[i] = c->carry[i].value - ((c->own_mask & (1u << i)) ? own : 0);
		snap->v[i].value += snap->adj[i];	/* modulo 2^64: only differences count */
		snap->v[i].enabled += c->carry[i].enabled;
		snap->v[i].running += c->carry[i].running;
	}
	snap->nr = n;
}

/*
 * SNAPSHOT on this CPU's vCPU and read its counters into snap: the values
 * each slot counted since the module set it, without the module's own
 * hypercall exits.  Interrupts are off inside (a reprogramming IPI must not
 * come between the hypercall and the read).  Never sleeps: the
 * sched_switch probe calls it.
 */
int vperf_snapshot(struct vperf_snap *snap)
{
	struct vperf_vcpu_page *page;
	unsigned long flags;
	s64 ret;

	local_irq_save(flags);
	page = this_cpu_read(vperf_page);
	if (!page) {
		local_irq_restore(flags);
		return -ENODEV;
	}
	ret = vperf_hc(VPERF_HC_SNAPSHOT, 0, 0, 0, 0);
	if (ret >= 0)
		vperf_snap_fill(page, snap);
	local_irq_restore(flags);
	return ret < 0 ? vperf_hc_errno(ret) : 0;
}

/*
 * NMI: the page as the host last wrote it (before raising the NMI), no
 * hypercall.  snap->nr is 0 when the NMI hit a reprogramming.
 */
void vperf_snap_page(const struct vperf_vcpu_page *vp, struct vperf_snap *snap)
{
	if (READ_ONCE(this_cpu_ptr(&vperf_cpu_ctrs)->reprogramming)) {
		snap->nr = 0;
		return;
	}
	vperf_snap_fill(vp, snap);
}

/* ---- claiming slots ---- */

struct vperf_reprog_arg {
	const struct vperf_event_desc *desc;
	u32 n, own_mask;
	u8 ev[VPERF_MAX_COUNTERS];
	atomic_t failed;
	int err;
};

static void vperf_reprogram_ipi(void *p)
{
	struct vperf_reprog_arg *a = p;
	struct vperf_snap before, after;
	bool have;
	int ret;

	if (!this_cpu_read(vperf_page))
		return;		/* not online yet: its online callback programs the table */
	have = !vperf_snapshot(&before);
	ret = vperf_counters_program(a->desc, a->n, a->own_mask, a->ev, have ? &before : NULL);
	if (ret) {
		if (atomic_inc_return(&a->failed) == 1)
			a->err = ret;
		return;
	}
	if (READ_ONCE(vperf_overflow_period))
		vperf_arm_this_cpu(READ_ONCE(vperf_overflow_period));	/* COUNTERS_SET disarmed it */
	/* the running thread's slice ends with the old slots and goes on with the new (refreshed page) */
	vperf_snap_fill(this_cpu_read(vperf_page), &after);
	vperf_thread_rebase(have ? &before : NULL, &after);
}

/* Under vperf_slots_lock: every online vCPU counts the slots as they are now. */
static int vperf_reprogram(struct vperf_event_desc *desc)
{
	struct vperf_reprog_arg a = { .desc = desc };

	a.n = vperf_slots_copy(desc, &a.own_mask, a.ev);
	atomic_set(&a.failed, 0);
	cpus_read_lock();
	on_each_cpu(vperf_reprogram_ipi, &a, 1);
	cpus_read_unlock();
	return atomic_read(&a.failed) ? a.err : 0;
}

static bool vperf_desc_same(const struct vperf_event_desc *a, const struct vperf_event_desc *b)
{
	if (a->source != b->source)
		return false;
	if (a->source == VPERF_SRC_EXITS)
		return a->arg == b->arg;
	return !strncmp(a->name, b->name, sizeof(a->name));
}

/* A descriptor the host could take: the module's own checks (the host checks again). */
static int vperf_desc_check(const struct vperf_event_desc *d)
{
	if (d->flags || !memchr(d->name, '\0', sizeof(d->name)))
		return -EINVAL;
	switch (d->source) {
	case VPERF_SRC_PERF:
	case VPERF_SRC_KVM_STAT:
		return d->name[0] ? 0 : -EINVAL;
	case VPERF_SRC_EXITS:
		return d->arg == ~0ull || d->arg <= 255 ? 0 : -EINVAL;
	case VPERF_SRC_STEAL:
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * The host's software events of the vCPU thread (docs/abi.md 2.3), by the
 * exact names it lists: they count the vCPU thread's time, switches and
 * faults on the host, never what the guest kernel executes.
 */
static const char *const vperf_host_sw[] = {
	"task-clock", "cpu-clock", "context-switches", "cpu-migrations", "page-faults",
	"minor-faults", "major-faults",
};

bool vperf_desc_counts_kernel(const struct vperf_event_desc *d)
{
	bool plm = false, kernel = false;
	const char *p, *tok, *end, *eq;
	size_t len, nlen;
	u32 i;

	if (d->source != VPERF_SRC_PERF || !memchr(d->name, '\0', sizeof(d->name)))
		return false;	/* not a guest-mode count; a malformed name is EINVAL later */
	for (i = 0; i < ARRAY_SIZE(vperf_host_sw); i++)
		if (!strcmp(d->name, vperf_host_sw[i]))
			return false;
	/* [pmu::]event[:modifier[=value]]...: the modifiers as libpfm4 reads them (any case) */
	p = strstr(d->name, "::");
	p = strchr(p ? p + 2 : d->name, ':');
	while (p) {
		tok = p + 1;
		end = strchrnul(tok, ':');
		len = end - tok;
		eq = memchr(tok, '=', len);
		nlen = eq ? eq - tok : len;
		if (!len)
			return true;	/* "::" again: nothing to read with confidence */
		if (nlen == 1 && (tolower(*tok) == 'u' || tolower(*tok) == 'h')) {
			plm = true;
		} else if (nlen == 1 && tolower(*tok) == 'k') {
			plm = true;
			/* k=0, k=n, k=f: no kernel mode; any other value, or none, counts it */
			if (!eq || len != 3 || !strchr("0nNfF", eq[1]))
				kernel = true;
		}
		p = *end ? end : NULL;
	}
	/* no privilege-level modifier: libpfm4's default counts user and kernel mode */
	return kernel || !plm;
}

static bool vperf_slots_assign(bool advance);

/* Under vperf_slots_lock: is event e on a slot of the vCPUs? */
static bool vperf_on_slot(u32 e)
{
	u32 s;

	for (s = 0; s < vperf_nr_prog; s++)
		if (vperf_prog[s] == e)
			return true;
	return false;
}

/* Under vperf_slots_lock: live events beyond the fixed ones. */
static u32 vperf_events_live(u8 *ids)
{
	u32 e, n = 0;

	for (e = VPERF_FIXED_SLOTS; e < VPERF_MAX_EVENTS; e++)
		if (vperf_evtab[e].desc.source && atomic_read(&vperf_evtab[e].users))
			ids[n++] = e;
	return n;
}

/* Under vperf_slots_lock: the entry counting d, or -1. */
static int vperf_event_find(const struct vperf_event_desc *d)
{
	u32 e;

	for (e = 0; e < VPERF_MAX_EVENTS; e++)
		if (vperf_evtab[e].desc.source && vperf_desc_same(&vperf_evtab[e].desc, d))
			return e;
	return -1;
}

/*
 * Under vperf_slots_lock: the event counting d, or a new one, which takes
 * a free slot or (all taken) one from an event that then waits for its
 * turn; reprogramming every vCPU validates it with the host.
 */
static int vperf_event_claim(const struct vperf_event_desc *d, struct vperf_event_desc *scratch)
{
	unsigned long flags;
	u32 e, s, free = VPERF_MAX_EVENTS, old_nr;
	u8 old_ev;
	int ret;

	for (e = 0; e < VPERF_MAX_EVENTS; e++) {
		if (vperf_evtab[e].desc.source && vperf_desc_same(&vperf_evtab[e].desc, d)) {
			/*
			 * An event nobody counted any more may have lost its slot
			 * to a newer one before the trim came: live again, it gets
			 * one back (or its turns).
			 */
			if (atomic_inc_return(&vperf_evtab[e].users) == 1 && !vperf_on_slot(e) &&
			    vperf_slots_assign(false))
				mod_delayed_work(system_wq, &vperf_rotate_work,
						 msecs_to_jiffies(max(mux_ms, 4u)));
			return e;
		}
		if (free == VPERF_MAX_EVENTS && !vperf_evtab[e].desc.source)
			free = e;
	}
	if (free == VPERF_MAX_EVENTS)
		return -ENOSPC;
	e = free;
	for (s = VPERF_FIXED_SLOTS; s < vperf_nr_prog; s++)
		if (vperf_prog[s] == VPERF_EV_NONE ||
		    !atomic_read(&vperf_evtab[vperf_prog[s]].users))
			break;
	if (s == VPERF_MAX_COUNTERS) {	/* all taken: the new one takes a turn at once */
		static u32 victim;

		s = VPERF_FIXED_SLOTS + victim++ % (VPERF_MAX_COUNTERS - VPERF_FIXED_SLOTS);
	}
	old_ev = s < vperf_nr_prog ? vperf_prog[s] : VPERF_EV_NONE;
	old_nr = vperf_nr_prog;
	spin_lock_irqsave(&vperf_slots_spin, flags);
	vperf_evtab[e].desc = *d;
	memset(vperf_evtab[e].desc.name, 0, sizeof(d->name));
	if (d->source != VPERF_SRC_EXITS)
		strscpy(vperf_evtab[e].desc.name, d->name, sizeof(d->name));
	vperf_evtab[e].own_hc = vperf_desc_counts_hc(d);
	atomic_set(&vperf_evtab[e].users, 0);
	vperf_prog[s] = e;
	if (s >= vperf_nr_prog)
		vperf_nr_prog = s + 1;
	spin_unlock_irqrestore(&vperf_slots_spin, flags);

	ret = vperf_reprogram(scratch);
	if (ret) {
		/* the host refused it (the same on every vCPU): the slots as they were */
		spin_lock_irqsave(&vperf_slots_spin, flags);
		memset(&vperf_evtab[e].desc, 0, sizeof(vperf_evtab[e].desc));
		vperf_prog[s] = old_ev;
		vperf_nr_prog = old_nr;
		spin_unlock_irqrestore(&vperf_slots_spin, flags);
		vperf_reprogram(scratch);
		return ret;
	}
	atomic_set(&vperf_evtab[e].users, 1);
	if (old_ev != VPERF_EV_NONE && atomic_read(&vperf_evtab[old_ev].users))
		mod_delayed_work(system_wq, &vperf_rotate_work, msecs_to_jiffies(max(mux_ms, 4u)));
	return e;
}

int vperf_events_get(struct vperf_user *u, const struct vperf_event_desc *ev, u32 n, u8 *slots,
		     u32 *bad)
{
	struct vperf_event_desc *scratch;
	u32 i;
	int ret = 0;

	for (i = 0; i < n; i++) {
		ret = vperf_desc_check(&ev[i]);
		if (ret) {
			*bad = i;
			return ret;
		}
	}
	/* COUNTERS_SET's array: guest-physical memory, allocated here (not in an IPI) */
	scratch = kcalloc(VPERF_MAX_COUNTERS, sizeof(*scratch), GFP_KERNEL);
	if (!scratch)
		return -ENOMEM;
	mutex_lock(&vperf_slots_lock);
	for (i = 0; i < n; i++) {
		/* one user holds at most max_user_events entries: the others need theirs */
		if (vperf_user_event_ok(u, vperf_event_find(&ev[i])))
			ret = vperf_event_claim(&ev[i], scratch);
		else
			ret = -EDQUOT;
		if (ret < 0) {
			*bad = i;
			vperf_events_put(u, slots, i);
			break;
		}
		slots[i] = ret;
		vperf_user_event_ref(u, ret);
		ret = 0;
	}
	mutex_unlock(&vperf_slots_lock);
	kfree(scratch);
	return ret;
}

/*
 * Under vperf_slots_lock: the live events onto the slots (all of them, or
 * with more than the 13 rotating slots hold, the window at the cursor, which
 * `advance` moves on) and every vCPU reprogrammed.  True while events take
 * turns.
 */
static bool vperf_slots_assign(bool advance)
{
	const u32 nrot = VPERF_MAX_COUNTERS - VPERF_FIXED_SLOTS;
	struct vperf_event_desc *scratch;
	u8 ids[VPERF_MAX_EVENTS];
	unsigned long flags;
	u32 n, i;

	n = vperf_events_live(ids);
	spin_lock_irqsave(&vperf_slots_spin, flags);
	if (n > nrot && advance)
		vperf_rot_cursor = (vperf_rot_cursor + nrot) % n;
	for (i = 0; i < nrot; i++)
		vperf_prog[VPERF_FIXED_SLOTS + i] = i < n ? ids[(n > nrot ? vperf_rot_cursor + i : i) % n] :
							    VPERF_EV_NONE;
	vperf_nr_prog = VPERF_FIXED_SLOTS + min(n, nrot);
	spin_unlock_irqrestore(&vperf_slots_spin, flags);
	scratch = kcalloc(VPERF_MAX_COUNTERS, sizeof(*scratch), GFP_KERNEL);
	/* without memory they stay as they were: that costs turns, not counts */
	if (scratch && vperf_reprogram(scratch))
		pr_warn_ratelimited(VPERF_PR_PREFIX "reprogramming the vCPUs' counters failed\n");
	kfree(scratch);
	return n > nrot;
}

/* More live events than slots: the next window takes its turn, again in mux_ms while that lasts. */
static void vperf_rotate_fn(struct work_struct *work)
{
	mutex_lock(&vperf_slots_lock);
	if (vperf_slots_assign(true))
		mod_delayed_work(system_wq, &vperf_rotate_work, msecs_to_jiffies(max(mux_ms, 4u)));
	mutex_unlock(&vperf_slots_lock);
}

/*
 * Any context: more users of events already claimed (an inherited context).
 * The caller must hold a reference on each for the duration (the parent's
 * live context, under vperf_threads_lock): an event at 0 users may be
 * trimmed and its entry reused by another event at any time.
 */
void vperf_events_hold(struct vperf_user *u, const u8 *ev, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		atomic_inc(&vperf_evtab[ev[i]].users);
		vperf_user_event_ref(u, ev[i]);
	}
}

/*
 * Events nobody counts any more leave the vCPUs (a work item: reprogramming
 * sleeps), because every counter costs the host a read at each page update
 * (at every switch of a monitored thread, at every overflow).
 */
static void vperf_slots_trim_fn(struct work_struct *work)
{
	unsigned long flags;
	bool freed = false;
	u32 e;

	mutex_lock(&vperf_slots_lock);
	spin_lock_irqsave(&vperf_slots_spin, flags);
	for (e = VPERF_FIXED_SLOTS; e < VPERF_MAX_EVENTS; e++) {
		if (!vperf_evtab[e].desc.source || atomic_read(&vperf_evtab[e].users))
			continue;
		memset(&vperf_evtab[e].desc, 0, sizeof(vperf_evtab[e].desc));
		freed = true;
	}
	spin_unlock_irqrestore(&vperf_slots_spin, flags);
	if (freed && vperf_slots_assign(false))
		mod_delayed_work(system_wq, &vperf_rotate_work, msecs_to_jiffies(max(mux_ms, 4u)));
	mutex_unlock(&vperf_slots_lock);
}

/* Any context: the last user of an event has the vCPUs trimmed (vperf_slots_trim_fn). */
void vperf_events_put(struct vperf_user *u, const u8 *ev, u32 n)
{
	bool idle = false;
	u32 i;

	for (i = 0; i < n; i++) {
		int left;

		vperf_user_event_unref(u, ev[i]);
		left = atomic_dec_return(&vperf_evtab[ev[i]].users);

		WARN_ON_ONCE(left < 0);
		idle |= !left && ev[i] >= VPERF_FIXED_SLOTS;
	}
	if (idle)
		schedule_work(&vperf_slots_trim_work);
}

static void vperf_slots_init(void)
{
	u32 i;

	for (i = 0; i < VPERF_FIXED_SLOTS; i++) {
		struct vperf_event_desc *d = &vperf_evtab[i].desc;

		memset(d, 0, sizeof(*d));
		d->source = vperf_counter_defs[i].source;
		d->arg = vperf_counter_defs[i].arg;
		strscpy(d->name, vperf_counter_defs[i].event, sizeof(d->name));
		vperf_evtab[i].own_hc = vperf_desc_counts_hc(d);
		atomic_set(&vperf_evtab[i].users, 1);	/* never taken away */
		vperf_prog[i] = i;
	}
	for (; i < VPERF_MAX_COUNTERS; i++)
		vperf_prog[i] = VPERF_EV_NONE;
	vperf_nr_prog = VPERF_FIXED_SLOTS;
}

/* VPERF_IOC_EVENT_INFO: the host's event list, one entry per call. */
long vperf_ioctl_event_info(void __user *uarg)
{
	struct vperf_event_query q;
	struct vperf_event_desc *d;
	u32 usize;
	s64 ret;

	if (!(vperf_dev.features & VPERF_FEAT_EVENT_INFO))
		return -EOPNOTSUPP;
	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < VPERF_EVENT_QUERY_SIZE_VER0)
		return -EINVAL;
	ret = copy_struct_from_user(&q, sizeof(q), uarg, usize);
	if (ret)
		return ret;
	d = kzalloc(sizeof(*d), GFP_KERNEL);	/* the host writes guest-physical memory */
	if (!d)
		return -ENOMEM;
	preempt_disable();
	ret = vperf_hc(VPERF_HC_EVENT_INFO, q.index, virt_to_phys(d), 0, 0);
	preempt_enable();
	if (ret == -VPERF_ENOENT || ret < 0) {
		kfree(d);
		return ret == -VPERF_ENOENT ? -ENOENT : vperf_hc_errno(ret);
	}
	memcpy(&q.event, d, sizeof(q.event));
	kfree(d);
	q.event.name[sizeof(q.event.name) - 1] = '\0';	/* the host's string, terminated here */
	q.status = ret == 0 ? 0 : ret == VPERF_ENODEV ? -ENODEV : ret == VPERF_EPERM ? -EPERM :
		   ret == VPERF_ENOENT ? -ENOENT : -EINVAL;
	q.size = min_t(u32, usize, sizeof(q));
	if (copy_to_user(uarg, &q, q.size))
		return -EFAULT;
	return 0;
}

struct vperf_totals_arg {
	struct vperf_snap snap;
	int ret;
};

static void vperf_totals_ipi(void *p)
{
	struct vperf_totals_arg *a = p;

	a->ret = vperf_snapshot(&a->snap);
}

/* VPERF_IOC_VCPU_TOTALS: one SNAPSHOT on every online CPU, by IPI. */
long vperf_ioctl_vcpu_totals(void __user *uarg)
{
	struct vperf_vcpu_totals *kt;
	struct vperf_totals_arg *a;
	unsigned int cpu;
	u32 usize, i;
	long ret = 0;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < VPERF_VCPU_TOTALS_SIZE_VER0)
		return -EINVAL;
	if (!vperf_may_see_all())
		return -EACCES;		/* system-wide, as perf's cpu-wide events */
	kt = kzalloc(sizeof(*kt), GFP_KERNEL);
	a = kmalloc(sizeof(*a), GFP_KERNEL);
	if (!kt || !a) {
		ret = -ENOMEM;
		goto out;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (kt->nr_cpus == VPERF_TOTALS_MAX_CPUS)
			break;
		memset(a, 0, sizeof(*a));
		if (smp_call_function_single(cpu, vperf_totals_ipi, a, 1) || a->ret)
			continue;	/* no page there (yet) */
		kt->cpus[kt->nr_cpus].cpu = cpu;
		for (i = 0; i < a->snap.nr && i < VPERF_THREAD_MAX_COUNTERS; i++)
			kt->cpus[kt->nr_cpus].value[i] = a->snap.v[i].value;
		kt->nr_cpus++;
	}
	cpus_read_unlock();
	kt->size = sizeof(*kt);
	kt->nr_counters = VPERF_NR_COUNTERS;	/* the fixed slots; others come and go */
	if (copy_to_user(uarg, kt, sizeof(*kt)))
		ret = -EFAULT;
out:
	kfree(a);
	kfree(kt);
	return ret;
}
