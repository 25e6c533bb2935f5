// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vperf and the ACPI device (_HID VPF0001) that carries the device's
 * interrupt: in hardware-reduced ACPI only a device the DSDT describes gets
 * its IRQ routed (docs/abi.md, 3).
 */
#include <linux/acpi.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/platform_device.h>
#include <linux/uaccess.h>

#include "vperf_guest.h"
#include "vperf_guest_uapi.h"

atomic_long_t vperf_irq_count = ATOMIC_LONG_INIT(0);
int vperf_irq = -1;

static long vperf_ioctl_info(struct vperf_info __user *uinfo)
{
	struct vperf_info info;
	u32 usize;

	if (get_user(usize, &uinfo->size))
		return -EFAULT;
	if (usize < VPERF_INFO_SIZE_VER0)
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	info.size = min_t(u32, usize, sizeof(info));
	info.info_version = VPERF_INFO_VERSION;
	info.abi_version = vperf_dev.version;
	info.features = vperf_dev.features;
	info.port = vperf_dev.port;
	info.gsi = vperf_dev.gsi;
	info.nr_cpus = num_online_cpus();
	info.nr_pages = atomic_read(&vperf_nr_pages);
	info.irq = READ_ONCE(vperf_irq);
	info.irq_count = atomic_long_read(&vperf_irq_count);
	if (copy_to_user(uinfo, &info, info.size))
		return -EFAULT;
	return 0;
}

static long vperf_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	/* Matched without the size bits: the structures grow at their end. */
	if (_IOC_TYPE(cmd) != VPERF_IOC_MAGIC)
		return -ENOTTY;
	/* the shared-memory channel carries traces only: counts need the device */
	if (vperf_dev.shm && _IOC_NR(cmd) != _IOC_NR(VPERF_IOC_INFO) &&
	    _IOC_NR(cmd) != _IOC_NR(VPERF_IOC_MARK_FLUSH) &&
	    _IOC_NR(cmd) != _IOC_NR(VPERF_IOC_TRACE_SAMPLE))
		return -ENODEV;
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(VPERF_IOC_INFO):
		return vperf_ioctl_info(uarg);
	case _IOC_NR(VPERF_IOC_EVENT_INFO):
		return vperf_ioctl_event_info(uarg);
	case _IOC_NR(VPERF_IOC_THREAD_START):
		return vperf_ioctl_thread_start(file, uarg);
	case _IOC_NR(VPERF_IOC_THREAD_STOP):
		return vperf_ioctl_thread_stop(file);
	case _IOC_NR(VPERF_IOC_THREAD_READ):
		return vperf_ioctl_thread_read(file);
	case _IOC_NR(VPERF_IOC_THREAD_LIST):
		return vperf_ioctl_thread_list(file, uarg);
	case _IOC_NR(VPERF_IOC_VCPU_TOTALS):
		return vperf_ioctl_vcpu_totals(uarg);
	case _IOC_NR(VPERF_IOC_MARK_FLUSH):
		return vperf_ioctl_mark_flush();
	case _IOC_NR(VPERF_IOC_TRACE_SAMPLE):
		return vperf_ioctl_trace_sample(file, uarg);
	default:
		return -ENOTTY;
	}
}

static int vperf_open(struct inode *inode, struct file *file)
{
	return vperf_thread_open(file);
}

static int vperf_release(struct inode *inode, struct file *file)
{
	vperf_trace_sample_release(file);
	vperf_marks_release(file);	/* no mapping is left: each held the file */
	vperf_thread_release(file);
	return 0;
}

static int vperf_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vperf_dev.shm && vma->vm_pgoff != VPERF_MARK_PGOFF)
		return -ENODEV;		/* only the marker buffer without the device */
	return vperf_thread_mmap(file, vma);
}

static const struct file_operations vperf_fops = {
	.owner		= THIS_MODULE,
	.open		= vperf_open,
	.release	= vperf_release,
	.mmap		= vperf_mmap,
	.unlocked_ioctl	= vperf_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/*
 * Anyone may open /dev/vperf by default: a thread counting itself (and what
 * it creates) is harmless, and monitoring others is the paranoid setting's
 * business (thread.c).  dev_mode narrows it, e.g. 0660 with a group.
 */
static ushort dev_mode = 0666;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "the mode of /dev/vperf (default 0666)");

static struct miscdevice vperf_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= VPERF_DEV_NAME,
	.fops	= &vperf_fops,
};

/* ---- the ACPI device and its interrupt ---- */

static irqreturn_t vperf_on_irq(int irq, void *data)
{
	atomic_long_inc(&vperf_irq_count);
	return IRQ_HANDLED;
}

static int vperf_acpi_probe(struct platform_device *pdev)
{
	int irq, ret;

	irq = platform_get_irq(pdev, 0);
	if (irq < 0)
		return irq;
	ret = devm_request_irq(&pdev->dev, irq, vperf_on_irq, 0, "vperf", &vperf_irq_count);
	if (ret) {
		dev_err(&pdev->dev, "cannot get IRQ %d: %d\n", irq, ret);
		return ret;
	}
	WRITE_ONCE(vperf_irq, irq);
	dev_info(&pdev->dev, "IRQ %d (GSI %u)\n", irq, vperf_dev.gsi);
	return 0;
}

static int vperf_acpi_remove(struct platform_device *pdev)
{
	/* devm frees the IRQ after this returns: the handler only counts. */
	WRITE_ONCE(vperf_irq, -1);
	return 0;
}

static const struct acpi_device_id vperf_acpi_ids[] = {
	{ "VPF0001", 0 },
	{ }
};
MODULE_DEVICE_TABLE(acpi, vperf_acpi_ids);

static struct platform_driver vperf_acpi_driver = {
	.probe	= vperf_acpi_probe,
	.remove	= vperf_acpi_remove,
	.driver	= {
		.name			= "vperf",
		.acpi_match_table	= vperf_acpi_ids,
	},
};

int vperf_dev_init(void)
{
	int ret;

	vperf_miscdev.mode = dev_mode & 0666;
	ret = misc_register(&vperf_miscdev);
	if (ret) {
		pr_err(VPERF_PR_PREFIX "cannot register /dev/%s: %d\n", VPERF_DEV_NAME, ret);
		return ret;
	}
	ret = platform_driver_register(&vperf_acpi_driver);
	if (ret) {
		pr_err(VPERF_PR_PREFIX "cannot register the VPF0001 driver: %d\n", ret);
		goto deregister_misc;
	}
	return 0;

deregister_misc:
	misc_deregister(&vperf_miscdev);
	return ret;
}

void vperf_dev_exit(void)
{
	platform_driver_unregister(&vperf_acpi_driver);
	misc_deregister(&vperf_miscdev);
}
