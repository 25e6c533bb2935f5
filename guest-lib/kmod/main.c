// SPDX-License-Identifier: GPL-2.0
/*
 * vperf_guest.ko: the guest side of the vperf paravirtual device.
 *
 * It finds the device (CPUID), registers one shared page per vCPU and sets
 * its virtual counters, offers /dev/vperf with an information ioctl and
 * per-thread counters (thread.c), and binds the ACPI device to count its
 * interrupts, samples on overflow NMIs, and traces the guest into per-vCPU
 * rings the host reads (trace.c, mark.c).  Without the device, it traces into the shared
 * memory of an ivshmem-plain device instead (shm.c).
 */
#include <linux/init.h>
#include <linux/moduleparam.h>
#include <linux/module.h>
#include <linux/sysfs.h>

#include "vperf_guest.h"

static int irq_count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&vperf_irq_count));
}

static const struct kernel_param_ops irq_count_ops = { .get = irq_count_get };
module_param_cb(irq_count, &irq_count_ops, NULL, 0444);
MODULE_PARM_DESC(irq_count, "device interrupts seen since load (read only)");

static int irq_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(vperf_irq));
}

static const struct kernel_param_ops irq_ops = { .get = irq_get };
module_param_cb(irq, &irq_ops, NULL, 0444);
MODULE_PARM_DESC(irq, "the Linux IRQ of the VPF0001 device, -1 if unbound (read only)");

static int nmi_count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&vperf_nmi_count));
}

static const struct kernel_param_ops nmi_count_ops = { .get = nmi_count_get };
module_param_cb(nmi_count, &nmi_count_ops, NULL, 0444);
MODULE_PARM_DESC(nmi_count, "sampling overflow NMIs handled since load (read only)");

static int throttled_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", vperf_overflow_throttled());
}

static const struct kernel_param_ops throttled_ops = { .get = throttled_get };
module_param_cb(overflow_throttled, &throttled_ops, NULL, 0444);
MODULE_PARM_DESC(overflow_throttled, "overflows the host throttled because the last one was not yet taken, "
		 "online vCPUs (read only)");

static int lost_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "unbased %ld elsewhere %ld snapshot_failures %ld\n",
			  atomic_long_read(&vperf_slices_unbased), atomic_long_read(&vperf_slices_elsewhere),
			  atomic_long_read(&vperf_snapshot_failures));
}

static const struct kernel_param_ops lost_ops = { .get = lost_get };
module_param_cb(lost_slices, &lost_ops, NULL, 0444);
MODULE_PARM_DESC(lost_slices, "time slices not accounted since load: no base, a base on another CPU, "
		 "failed switch snapshots (read only)");

static int hypercalls_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", vperf_hypercalls());
}

static const struct kernel_param_ops hypercalls_ops = { .get = hypercalls_get };
module_param_cb(hypercalls, &hypercalls_ops, NULL, 0444);
MODULE_PARM_DESC(hypercalls, "hypercalls (port writes, each an exit to the VMM) the module made since "
		 "load, all CPUs (read only)");

static int threads_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", vperf_threads_count());
}

static const struct kernel_param_ops threads_ops = { .get = threads_get };
module_param_cb(threads, &threads_ops, NULL, 0444);
MODULE_PARM_DESC(threads, "threads with a per-thread context now (read only)");

/*
 * No vperf device: a stock VMM.  With an ivshmem-plain device the module traces through it
 * (shm.c): /dev/vperf for markers and the trace sampler, the trace rings in the shared memory;
 * the counts need the device and are not offered.
 */
static int __init vperf_init_shm(void)
{
	int ret = vperf_shm_init();

	if (ret) {
		pr_err(VPERF_PR_PREFIX "no vperf device and no shared-memory channel (an "
		       "ivshmem-plain PCI device, 1af4:1110, docs/abi.md 8): nothing to do\n");
		return -ENODEV;
	}
	vperf_dev.shm = true;
	vperf_dev.features = VPERF_FEAT_TRACE | VPERF_FEAT_TRACE_V2 | VPERF_FEAT_TRACE_MMAP |
			     VPERF_FEAT_TRACE_KSYM;
	ret = vperf_dev_init();
	if (ret)
		goto exit_shm;
	ret = vperf_trace_init();
	if (ret)
		goto exit_dev;
	pr_info(VPERF_PR_PREFIX "no vperf device: tracing through shared memory only (no counts)\n");
	return 0;

exit_dev:
	vperf_dev_exit();
exit_shm:
	vperf_shm_exit();
	return ret;
}

static int __init vperf_init(void)
{
	int ret;

	ret = vperf_pv_detect();
	if (ret == -ENODEV)
		return vperf_init_shm();
	if (ret)
		return ret;
	ret = vperf_pages_init();
	if (ret)
		return ret;
	ret = vperf_threads_init();
	if (ret)
		goto exit_pages;
	ret = vperf_sampling_init(vperf_thread_overflow);
	if (ret)
		goto exit_threads;
	ret = vperf_dev_init();
	if (ret)
		goto exit_sampling;
	/* last: with trace=1 it starts tracing, and a failure there only leaves tracing off */
	ret = vperf_trace_init();
	if (ret)
		goto exit_dev;
	return 0;

exit_dev:
	vperf_dev_exit();
exit_sampling:
	vperf_sampling_exit();
exit_threads:
	vperf_threads_exit();
exit_pages:
	vperf_pages_exit();
	return ret;
}

static void __exit vperf_exit(void)
{
	vperf_trace_exit();
	vperf_dev_exit();
	if (vperf_dev.shm) {
		vperf_shm_exit();
		return;
	}
	vperf_sampling_exit();
	vperf_threads_exit();
	vperf_pages_exit();
}

module_init(vperf_init);
module_exit(vperf_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vperf: paravirtual performance counters, guest side");
