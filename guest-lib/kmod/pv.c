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
#include <linux/cpuhotplug.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <asm/nmi.h>
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

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"

struct vperf_dev_info vperf_dev;
atomic_t vperf_nr_pages = ATOMIC_INIT(0);

static DEFINE_PER_CPU(struct vperf_vcpu_page *, vperf_page);

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
static_assert(VPERF_NR_COUNTERS <= VPERF_THREAD_MAX_COUNTERS);
static enum cpuhp_state vperf_cpuhp_state;

/* ---- sampling: the overflow NMI ---- */

atomic_long_t vperf_nmi_count = ATOMIC_LONG_INIT(0);
static DEFINE_MUTEX(vperf_sample_lock);	/* arming and disarming */
static u64 vperf_sample_period;		/* armed period, 0: disarmed; under the lock */
static atomic_t vperf_samplers = ATOMIC_INIT(0);	/* live sampling contexts */
static atomic_t vperf_arm_errors = ATOMIC_INIT(0);
static bool vperf_nmi_registered;

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

/* Under vperf_sample_lock: every online CPU, or -EIO if one refused (then none). */
static int vperf_arm_all(u64 period)
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
		return -EIO;
	}
	vperf_sample_period = period;
	return 0;
}

int vperf_sampling_get(u64 period)
{
	int ret = 0;

	if (!vperf_nmi_registered)
		return -EOPNOTSUPP;	/* the device has no VPERF_FEAT_OVERFLOW_NMI */
	mutex_lock(&vperf_sample_lock);
	if (vperf_sample_period != period) {
		if (atomic_read(&vperf_samplers))
			ret = -EBUSY;	/* one period for all sampling contexts */
		else
			ret = vperf_arm_all(period);
	}
	if (!ret)
		atomic_inc(&vperf_samplers);
	mutex_unlock(&vperf_sample_lock);
	return ret;
}

static void vperf_disarm_work_fn(struct work_struct *work)
{
	mutex_lock(&vperf_sample_lock);
	if (!atomic_read(&vperf_samplers) && vperf_sample_period)
		vperf_arm_all(0);
	mutex_unlock(&vperf_sample_lock);
}

static DECLARE_WORK(vperf_disarm_work, vperf_disarm_work_fn);

void vperf_sampling_put(void)
{
	if (atomic_dec_and_test(&vperf_samplers))
		schedule_work(&vperf_disarm_work);
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

static int vperf_nmi(unsigned int type, struct pt_regs *regs)
{
	const u64 bit = 1ull << VPERF_THREAD_CTR_VCPU_CLOCK;
	struct vperf_vcpu_page *page = this_cpu_read(vperf_page);

	if (!page || !(READ_ONCE(page->overflow_status) & bit))
		return NMI_DONE;	/* not ours */
	/* No OVERFLOW_ACK (an exit): the bit is ours to clear; the host raises no NMI until we have. */
	WRITE_ONCE(page->overflow_status, page->overflow_status & ~bit);
	atomic_long_inc(&vperf_nmi_count);
	vperf_thread_overflow(regs, page);
	return NMI_HANDLED;
}

int vperf_sampling_init(void)
{
	int ret;

	if (!(vperf_dev.features & VPERF_FEAT_OVERFLOW_NMI)) {
		pr_info(VPERF_PR_PREFIX "the device has no overflow NMIs: no sampling\n");
		return 0;
	}
	ret = register_nmi_handler(NMI_LOCAL, vperf_nmi, 0, "vperf");
	if (ret) {
		pr_err(VPERF_PR_PREFIX "cannot register the NMI handler: %d\n", ret);
		return ret;
	}
	vperf_nmi_registered = true;
	return 0;
}

/* After the last context is gone (the files hold the module). */
void vperf_sampling_exit(void)
{
	flush_work(&vperf_disarm_work);
	mutex_lock(&vperf_sample_lock);
	if (vperf_sample_period)
		vperf_arm_all(0);
	mutex_unlock(&vperf_sample_lock);
	if (vperf_nmi_registered)
		unregister_nmi_handler(NMI_LOCAL, "vperf");	/* waits for running handlers */
	vperf_nmi_registered = false;
	vperf_sampling_sync();
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
		pr_err(VPERF_PR_PREFIX "no vperf device (CPUID 0x%x has no VPERF-KVM-PV signature)\n",
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

/* COUNTERS_SET for this CPU's vCPU: vperf_counter_defs, or none (clear). */
static int vperf_counters_set(unsigned int cpu, bool on)
{
	struct vperf_event_desc *desc;
	unsigned int i;
	s64 ret;

	if (!on) {
		ret = vperf_hc(VPERF_HC_COUNTERS_SET, 0, 0, 0, 0);
		return vperf_hc_errno(ret);
	}
	/* The host reads the array from guest-physical memory: not module data. */
	desc = kcalloc(VPERF_NR_COUNTERS, sizeof(*desc), GFP_KERNEL);
	if (!desc)
		return -ENOMEM;
	for (i = 0; i < VPERF_NR_COUNTERS; i++) {
		desc[i].source = vperf_counter_defs[i].source;
		desc[i].arg = vperf_counter_defs[i].arg;
		strscpy(desc[i].name, vperf_counter_defs[i].event, sizeof(desc[i].name));
	}
	ret = vperf_hc(VPERF_HC_COUNTERS_SET, virt_to_phys(desc), VPERF_NR_COUNTERS, 0, 0);
	kfree(desc);
	if (ret < 0)
		pr_err(VPERF_PR_PREFIX "CPU %u: COUNTERS_SET failed: %lld\n", cpu, ret);
	return vperf_hc_errno(ret);
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
	/* Published last: the sched_switch probe may use it from now on. */
	WRITE_ONCE(per_cpu(vperf_page, cpu), page);
	atomic_inc(&vperf_nr_pages);
	/* a CPU that comes online while contexts sample samples too (no lock: hotplug holds it off) */
	if (READ_ONCE(vperf_sample_period))
		vperf_arm_this_cpu(READ_ONCE(vperf_sample_period));
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
	cpuhp_remove_state(vperf_cpuhp_state);
}

/*
 * SNAPSHOT on this CPU's vCPU and copy up to max of its counters into vals
 * with the page's seq protocol; *nr gets how many, *host_ns the snapshot's
 * host time.  Preemption must be off.
 * Never sleeps: the sched_switch probe calls it.
 */
int vperf_snapshot(struct vperf_counter_value *vals, u32 max, u32 *nr, u64 *host_ns)
{
	struct vperf_vcpu_page *page = this_cpu_read(vperf_page);
	u32 seq, n = 0, i;
	s64 ret;

	if (!page)
		return -ENODEV;
	ret = vperf_hc(VPERF_HC_SNAPSHOT, 0, 0, 0, 0);
	if (ret < 0)
		return vperf_hc_errno(ret);
	do {
		seq = smp_load_acquire(&page->seq);
		if (seq & 1) {
			cpu_relax();
			continue;
		}
		n = min(READ_ONCE(page->nr_counters), max);
		*host_ns = READ_ONCE(page->host_time_ns);
		for (i = 0; i < n; i++) {
			vals[i].value = READ_ONCE(page->counters[i].value);
			vals[i].enabled = READ_ONCE(page->counters[i].enabled);
			vals[i].running = READ_ONCE(page->counters[i].running);
		}
		smp_rmb();
	} while ((seq & 1) || READ_ONCE(page->seq) != seq);
	*nr = n;
	return 0;
}

struct vperf_totals_arg {
	struct vperf_counter_value vals[VPERF_NR_COUNTERS];
	u32 nr;
	int ret;
};

static void vperf_totals_ipi(void *p)
{
	struct vperf_totals_arg *a = p;
	u64 host_ns;

	a->ret = vperf_snapshot(a->vals, VPERF_NR_COUNTERS, &a->nr, &host_ns);
}

/* VPERF_IOC_VCPU_TOTALS: one SNAPSHOT on every online CPU, by IPI. */
long vperf_ioctl_vcpu_totals(void __user *uarg)
{
	struct vperf_vcpu_totals *kt;
	struct vperf_totals_arg a;
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
	if (!kt)
		return -ENOMEM;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (kt->nr_cpus == VPERF_TOTALS_MAX_CPUS)
			break;
		memset(&a, 0, sizeof(a));
		if (smp_call_function_single(cpu, vperf_totals_ipi, &a, 1) || a.ret)
			continue;	/* no page there (yet) */
		kt->cpus[kt->nr_cpus].cpu = cpu;
		for (i = 0; i < a.nr && i < VPERF_THREAD_MAX_COUNTERS; i++)
			kt->cpus[kt->nr_cpus].value[i] = a.vals[i].value;
		kt->nr_cpus++;
	}
	cpus_read_unlock();
	kt->size = sizeof(*kt);
	kt->nr_counters = VPERF_NR_COUNTERS;
	if (copy_to_user(uarg, kt, sizeof(*kt)))
		ret = -EFAULT;
	kfree(kt);
	return ret;
}
