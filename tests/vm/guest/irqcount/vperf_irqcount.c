// SPDX-License-Identifier: GPL-2.0
/*
 * vperf_irqcount: a test-only guest module that counts the vperf device's
 * interrupts, so that a user-space test in the guest can check that
 * overflow interrupts arrive at the configured rate.  The real guest
 * module (vperf_guest.ko) turns them into samples instead.
 *
 * It binds to the device the VMM's DSDT describes (_HID VPF0001): in
 * hardware-reduced ACPI only a described device gets its IRQ routed.
 */
#include <linux/acpi.h>
#include <linux/atomic.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/platform_device.h>

static atomic_long_t count;
static int irq = -1;

static int count_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&count));
}

static const struct kernel_param_ops count_ops = { .get = count_get };
module_param_cb(count, &count_ops, NULL, 0444);
MODULE_PARM_DESC(count, "interrupts seen since load");
module_param(irq, int, 0444);
MODULE_PARM_DESC(irq, "the Linux IRQ the device got (read only)");

static irqreturn_t on_irq(int nr, void *dev)
{
	atomic_long_inc(&count);
	return IRQ_HANDLED;
}

static int irqcount_probe(struct platform_device *pdev)
{
	int ret = platform_get_irq(pdev, 0);

	if (ret < 0)
		return ret;
	irq = ret;
	ret = devm_request_irq(&pdev->dev, irq, on_irq, 0, "vperf-irqcount", &count);
	if (ret)
		dev_err(&pdev->dev, "cannot get IRQ %d: %d\n", irq, ret);
	else
		dev_info(&pdev->dev, "counting IRQ %d\n", irq);
	return ret;
}

static const struct acpi_device_id irqcount_ids[] = {
	{ "VPF0001", 0 },
	{ }
};
MODULE_DEVICE_TABLE(acpi, irqcount_ids);

static struct platform_driver irqcount_driver = {
	.probe = irqcount_probe,
	.driver = {
		.name = "vperf-irqcount",
		.acpi_match_table = irqcount_ids,
	},
};
module_platform_driver(irqcount_driver);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vperf test: count the paravirtual device's interrupts");
