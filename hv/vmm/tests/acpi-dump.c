// SPDX-License-Identifier: MIT
/*
 * acpi-dump DIR [NR_VCPUS]: write the ACPI tables vperf-vmm gives a guest with NR_VCPUS vCPUs
 * (default 2) to DIR/<signature>.dat, one file per table (rsdp.dat, xsdt.dat, facp.dat, ...), for
 * `iasl -d` (acpi-iasl.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acpi.h"
#include "serial.h"
#include "vm.h"

int main(int argc, char **argv)
{
	static uint8_t area[ACPI_AREA_SIZE];
	struct acpi_config cfg = {
		.nr_vcpus = 2,
		.lapic_addr = VM_LAPIC_ADDR,
		.ioapic_addr = VM_IOAPIC_ADDR,
		.ioapic_id = 0,
		.serial_port = SERIAL_COM1_BASE,
		.serial_irq = SERIAL_COM1_IRQ,
	};
	struct acpi_layout l;
	unsigned int i;
	int err;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: acpi-dump DIR [NR_VCPUS]\n");
		return 2;
	}
	if (argc == 3)
		cfg.nr_vcpus = (unsigned int)strtoul(argv[2], NULL, 10);
	err = acpi__build(area, ACPI_AREA_GPA, sizeof(area), &cfg, &l);
	if (err) {
		fprintf(stderr, "acpi-dump: acpi__build: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < l.nr; i++) {
		char path[4096], name[5];
		unsigned int j;
		FILE *f;

		for (j = 0; j < 5; j++)
			name[j] = (char)(l.tables[i].sig[j] | (j < 4 ? 0x20 : 0)); /* lower case */
		snprintf(path, sizeof(path), "%s/%s.dat", argv[1], name);
		f = fopen(path, "wb");
		if (!f ||
		    fwrite(area + l.tables[i].offset, 1, l.tables[i].len, f) != l.tables[i].len ||
		    fclose(f)) {
			fprintf(stderr, "acpi-dump: writing %s: %s\n", path, strerror(errno));
			return 1;
		}
		printf("%s %zu bytes at 0x%llx\n", path, l.tables[i].len,
		       (unsigned long long)(ACPI_AREA_GPA + l.tables[i].offset));
	}
	return 0;
}
