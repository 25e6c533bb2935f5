/* SPDX-License-Identifier: MIT */
/*
 * ACPI tables for the guest, in the reserved area 0xe0000-0xfffff: RSDP (where the OS scans for it,
 * and in boot_params.acpi_rsdp_addr), RSDT and XSDT, a revision 6 FADT in hardware-reduced mode (no
 * PM1 blocks, no SCI, no PIC or PIT: the guest uses the IO-APIC and the local APIC timer) whose
 * sleep control/status registers and reset register are I/O ports of this VMM, a DSDT with \_S5 (so
 * poweroff reaches the VMM) and the COM1 UART (PNP0501 with its port and IRQ, so the 8250 driver
 * gets an interrupt in this mode), and a MADT (one local APIC per vCPU, the IO-APIC, ISA IRQ0 ->
 * GSI 2, local APIC NMI on LINT1).
 */
#ifndef VMM_ACPI_H
#define VMM_ACPI_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct vm;

#define ACPI_AREA_GPA		0xe0000ULL
#define ACPI_AREA_SIZE		0x20000ULL

/* The VMM's ACPI registers (platform.c): sleep control, sleep status, reset. */
#define ACPI_PM_PORT		0x600
#define ACPI_PM_NR_PORTS	4
#define ACPI_SLEEP_CTL_PORT	(ACPI_PM_PORT + 0)
#define ACPI_SLEEP_STS_PORT	(ACPI_PM_PORT + 1)
#define ACPI_RESET_PORT		(ACPI_PM_PORT + 2)
#define ACPI_RESET_VALUE	0x0e
#define ACPI_SLP_TYP_S5		5	/* the value \_S5 gives */
#define ACPI_SLP_TYP_SHIFT	2	/* sleep control register: SLP_TYP in bits 4:2 */
#define ACPI_SLP_TYP_MASK	0x1c
#define ACPI_SLP_EN		0x20
#define ACPI_WAK_STS		0x80	/* sleep status register */

struct acpi_config {
	unsigned int nr_vcpus;		/* APIC IDs 0..nr_vcpus-1 */
	uint32_t lapic_addr;
	uint32_t ioapic_addr;
	uint8_t ioapic_id;
	uint16_t serial_port;		/* COM1 in the DSDT */
	uint8_t serial_irq;		/* 0..15 */
	uint16_t vperf_port;		/* the vperf device in the DSDT (_HID VPF0001) */
	uint8_t vperf_irq;		/* 0..15: its interrupt */
};

/*
 * The vperf device's ACPI hardware ID.  In hardware-reduced ACPI Linux
 * routes only the interrupts of devices the DSDT describes, so the guest
 * module binds to this ID and takes its IRQ from _CRS.
 */
#define ACPI_VPERF_HID		"VPF0001"

#define ACPI_MAX_TABLES		6

struct acpi_layout {
	uint64_t rsdp_gpa;
	size_t used;			/* bytes of the area used */
	unsigned int nr;
	struct {
		char sig[5];		/* "RSDP", "XSDT", "FACP", ... */
		size_t offset;		/* in the area */
		size_t len;
	} tables[ACPI_MAX_TABLES];
};

/*
 * Build all tables into area (area_gpa is where the guest sees it). Returns 0 or -ENOSPC / -EINVAL.
 */
int acpi__build(uint8_t *area, uint64_t area_gpa, size_t area_size, const struct acpi_config *cfg,
		struct acpi_layout *out) __must_check;
/* Build them in guest memory for vm; *rsdp gets the RSDP's address. */
int acpi__setup(struct vm *vm, uint64_t *rsdp) __must_check;
/* Sum of bytes mod 256 (0 for a table with a right checksum). */
uint8_t acpi__checksum(const uint8_t *p, size_t len);

#endif /* VMM_ACPI_H */
