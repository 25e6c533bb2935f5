/* SPDX-License-Identifier: MIT */
/*
 * Booting Linux with the 64-bit boot protocol (Documentation/arch/x86/boot.rst): the bzImage's
 * protected-mode part at its preferred address, the zero page (struct boot_params) with the image's
 * setup header, command line, initramfs and e820 map, identity-mapped page tables and a GDT; the
 * BSP starts in long mode at startup_64.
 *
 * Low guest memory used by the boot code (all in the first 1 MiB):
 *   0x00500          GDT
 *   0x07000          boot_params (zero page); the initial stack grows down below it
 *   0x09000          PML4; 0x0a000 PDPT; 0x0b000-0x0efff 4 page directories (2 MiB pages, 0-4 GiB)
 *   0x20000          kernel command line
 *   0x9fc00-0xfffff  reserved in e820 (EBDA, ACPI tables at 0xe0000)
 */
#ifndef VMM_BOOT_H
#define VMM_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct vm;
struct vcpu;

#define BOOT_GDT_GPA		0x500ULL
#define BOOT_PARAMS_GPA		0x7000ULL
#define BOOT_STACK_GPA		0x7000ULL
#define BOOT_PML4_GPA		0x9000ULL
#define BOOT_PDPT_GPA		0xa000ULL
#define BOOT_PD_GPA		0xb000ULL	/* 4 pages */
#define BOOT_CMDLINE_GPA	0x20000ULL
#define BOOT_CMDLINE_MAX	0x10000ULL	/* bytes reserved for it, NUL included */
#define BOOT_EBDA_START		0x9fc00ULL
#define BOOT_BIOS_START		0xe0000ULL
#define BOOT_HIGH_START		0x100000ULL

#define BOOT_SEL_CODE		0x10		/* __BOOT_CS */
#define BOOT_SEL_DATA		0x18		/* __BOOT_DS */
#define BOOT_SEL_TSS		0x20

#define BOOT_MIN_PROTOCOL	0x020c		/* 2.12: xloadflags, XLF_KERNEL_64 */

/* What bzimage__parse() learns from an image; nothing in it points into the image. */
struct bzimage_info {
	uint16_t protocol;		/* e.g. 0x020f */
	uint8_t setup_sects;		/* 0 already replaced by 4 */
	uint8_t loadflags;
	uint16_t xloadflags;
	uint8_t relocatable;
	uint32_t kernel_alignment;
	uint64_t pref_address;
	uint32_t init_size;
	uint32_t initrd_addr_max;
	uint32_t cmdline_size;
	size_t pm_offset;		/* file offset of the protected-mode part */
	size_t pm_size;
	size_t hdr_end;			/* the setup header is image[0x1f1, hdr_end) */
	uint64_t load_addr;		/* where vperf-vmm puts the protected-mode part */
	uint64_t mem_needed; /* bytes from load_addr the kernel needs (init_size or more) */
};

/*
 * The files, read and checked before the VM exists (so a bad kernel or initrd is reported on any
 * host), and the layout planned for them in guest RAM.
 */
struct boot_image {
	uint8_t *kernel;		/* the whole bzImage file */
	size_t kernel_size;
	struct bzimage_info info;
	int initrd_fd;			/* -1: no initrd */
	uint64_t initrd_size;
	uint64_t kernel_end;		/* load_addr + mem_needed */
	uint64_t initrd_addr;
};

/* Where boot__load_linux() put things. */
struct boot_info {
	uint64_t entry;			/* RIP: load_addr + 0x200 (startup_64) */
	uint64_t boot_params;		/* RSI */
	uint64_t kernel_start, kernel_end;
	uint64_t initrd_start, initrd_size;
	size_t cmdline_len;
	struct bzimage_info image;
};

/*
 * Check a bzImage in memory. Returns 0, or -ENOEXEC with the reason (for a person) in err.
 */
int bzimage__parse(const uint8_t *image, size_t size, struct bzimage_info *info, char *err,
		   size_t errlen) __must_check;
/*
 * Choose the initramfs address: page-aligned, as high as possible below min(initrd_addr_max + 1,
 * ram_end), not below kernel_end. Returns 0 and *addr, or -ENOSPC.
 */
int boot__place_initrd(uint64_t size, uint64_t kernel_end, uint64_t ram_end,
		       uint32_t initrd_addr_max, uint64_t *addr) __must_check;
/* Read and check the kernel, open the initrd, plan where they go below ram_end (end of low RAM). */
int boot__prepare(const char *kernel, const char *initrd, uint64_t ram_end, struct boot_image *img)
	__must_check;
void boot__release(struct boot_image *img);
/*
 * Load kernel, initramfs and command line; build boot_params (with rsdp as acpi_rsdp_addr), page
 * tables, GDT.
 */
int boot__load_linux(struct vm *vm, const struct boot_image *img, uint64_t rsdp,
		     struct boot_info *bi) __must_check;
/* Long-mode registers of the boot vCPU. */
int boot__setup_bsp(struct vcpu *vcpu, const struct boot_info *bi) __must_check;

#endif /* VMM_BOOT_H */
