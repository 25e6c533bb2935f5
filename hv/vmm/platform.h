/* SPDX-License-Identifier: MIT */
/*
 * The small PC platform devices on the port-I/O bus:
 *   0x0070-0x0071  CMOS/RTC: index + data; BCD time from the host clock, status registers, else 0
 *   0x0080         POST / io_delay port: ignored
 *   0x0064         i8042 status/command: reads 0 (idle), command 0xfe (pulse reset) reboots
 *   0x0092         system control port A: bit 0 (fast reset) reboots; reads A20 enabled
 *   0x0600-0x0603  ACPI (FADT): sleep control (SLP_EN with SLP_TYP 5 = S5: poweroff), sleep status,
 *                  reset register (ACPI_RESET_VALUE: reboot)
 *   0x0cf8-0x0cff  PCI configuration mechanism 1: no PCI devices, reads all-ones, writes ignored
 * The in-kernel irqchip and PIT handle 0x20-0x21, 0x40-0x43, 0x61, 0xa0-0xa1 and 0x4d0-0x4d1.
 */
#ifndef VMM_PLATFORM_H
#define VMM_PLATFORM_H

#include <stdint.h>

#include "util.h"

struct vm;

int platform__init(struct vm *vm) __must_check;
/* CMOS register value for index (exposed for the unit tests). */
uint8_t platform__cmos_read(uint8_t index, int64_t now);

#endif /* VMM_PLATFORM_H */
