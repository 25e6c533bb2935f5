// SPDX-License-Identifier: MIT
/* PC platform ports (see platform.h). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "acpi.h"
#include "log.h"
#include "platform.h"
#include "vm.h"

static void ignore_io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write,
		      uint8_t *data, unsigned int size)
{
	if (!is_write)
		memset(data, 0xff, size);
}

static void acpi_pm_io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write,
		       uint8_t *data, unsigned int size)
{
	struct vm *vm = opaque;
	uint8_t v = data[0];

	if (!is_write) {
		memset(data, 0, size);
		/*
		 * Sleep status: always "woken", so a guest that asks for an unsupported state does
		 * not spin.
		 */
		if (offset == ACPI_SLEEP_STS_PORT - ACPI_PM_PORT)
			data[0] = ACPI_WAK_STS;
		return;
	}
	switch (offset) {
	case ACPI_SLEEP_CTL_PORT - ACPI_PM_PORT:
		if (!(v & ACPI_SLP_EN))
			break;
		if (((v & ACPI_SLP_TYP_MASK) >> ACPI_SLP_TYP_SHIFT) == ACPI_SLP_TYP_S5) {
			pr_debug("vcpu%u: ACPI S5: guest powered off", vcpu->id);
			vm__request_stop(vm, VM_STOP_POWEROFF, 0);
		} else {
			pr_debug("vcpu%u: ACPI sleep control 0x%02x: sleep state %u not supported, "
				 "ignored",
				 vcpu->id, v, (v & ACPI_SLP_TYP_MASK) >> ACPI_SLP_TYP_SHIFT);
		}
		break;
	case ACPI_RESET_PORT - ACPI_PM_PORT:
		if (v == ACPI_RESET_VALUE) {
			pr_debug("vcpu%u: ACPI reset register: guest rebooted", vcpu->id);
			vm__request_stop(vm, VM_STOP_REBOOT, 0);
		}
		break;
	}
}

static void i8042_io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		     unsigned int size)
{
	struct vm *vm = opaque;

	if (!is_write) {
		memset(data, 0, size);	/* status: output buffer empty, input buffer empty */
		return;
	}
	if (data[0] == 0xfe) {
		pr_debug("vcpu%u: keyboard controller reset: guest rebooted", vcpu->id);
		vm__request_stop(vm, VM_STOP_REBOOT, 0);
	}
}

static void port92_io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write,
		      uint8_t *data, unsigned int size)
{
	struct vm *vm = opaque;

	if (!is_write) {
		memset(data, 0, size);
		data[0] = 0x02;		/* A20 enabled */
		return;
	}
	if (data[0] & 0x01) {
		pr_debug("vcpu%u: port 0x92 fast reset: guest rebooted", vcpu->id);
		vm__request_stop(vm, VM_STOP_REBOOT, 0);
	}
}

static uint8_t bcd(int v)
{
	return (uint8_t)((v / 10) << 4 | (v % 10));
}

uint8_t platform__cmos_read(uint8_t index, int64_t now)
{
	time_t t = (time_t)now;
	struct tm tm;

	if (index <= 9 || index == 0x32) {
		if (!gmtime_r(&t, &tm))
			return 0;
		switch (index) {
		case 0x00: return bcd(tm.tm_sec);
		case 0x02: return bcd(tm.tm_min);
		case 0x04: return bcd(tm.tm_hour);
		case 0x06: return bcd(tm.tm_wday + 1);
		case 0x07: return bcd(tm.tm_mday);
		case 0x08: return bcd(tm.tm_mon + 1);
		case 0x09: return bcd(tm.tm_year % 100);
		case 0x32: return bcd(19 + tm.tm_year / 100);
		default: return 0;	/* alarms */
		}
	}
	switch (index) {
	case 0x0a:
		return 0x26; /* 32.768 kHz time base, 1024 Hz rate, no update in progress */
	case 0x0b: return 0x02;		/* 24-hour mode, BCD, no interrupts */
	case 0x0d: return 0x80;		/* RAM and time valid */
	default: return 0;
	}
}

static void cmos_io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		    unsigned int size)
{
	struct vm *vm = opaque;

	if (offset == 0) {
		if (is_write)
			vm->cmos_index = data[0] & 0x7f;	/* bit 7: NMI disable, ignored */
		else
			memset(data, 0xff, size);
		return;
	}
	if (!is_write) {
		memset(data, 0xff, size);
		data[0] = platform__cmos_read(vm->cmos_index, (int64_t)time(NULL));
	}
}

int platform__init(struct vm *vm)
{
	static const struct {
		uint16_t base;
		uint32_t len;
		ioport_handler_t fn;
		const char *name;
	} devs[] = {
		{ 0x70, 2, cmos_io, "cmos" },
		{ 0x80, 1, ignore_io, "post" },
		{ 0x64, 1, i8042_io, "i8042" },
		{ 0x92, 1, port92_io, "port92" },
		{ ACPI_PM_PORT, ACPI_PM_NR_PORTS, acpi_pm_io, "acpi-pm" },
		{ 0xcf8, 8, ignore_io, "pci-config" },
	};
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(devs); i++) {
		err = ioport_bus__register(&vm->iobus, devs[i].base, devs[i].len, devs[i].fn, vm,
					   devs[i].name);
		if (err) {
			pr_err("registering %s at port 0x%x: %s", devs[i].name, devs[i].base,
			       strerror(-err));
			return err;
		}
	}
	return 0;
}
