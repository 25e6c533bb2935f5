// SPDX-License-Identifier: MIT
/* Loading and entering a Linux bzImage with the 64-bit boot protocol (see boot.h). */
#include <asm/bootparam.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acpi.h"
#include "boot.h"
#include "log.h"
#include "vm.h"

/*
 * Offsets in the image (the setup header starts at 0x1f1; boot.rst "THE REAL-MODE KERNEL HEADER").
 */
#define HDR_OFF			0x1f1
#define OFF_SETUP_SECTS		0x1f1
#define OFF_BOOT_FLAG		0x1fe
#define OFF_JUMP		0x200
#define OFF_HEADER		0x202
#define OFF_VERSION		0x206
#define OFF_LOADFLAGS		0x211
#define OFF_INITRD_ADDR_MAX	0x22c
#define OFF_KERNEL_ALIGNMENT	0x230
#define OFF_RELOCATABLE		0x234
#define OFF_XLOADFLAGS		0x236
#define OFF_CMDLINE_SIZE	0x238
#define OFF_PREF_ADDRESS	0x258
#define OFF_INIT_SIZE		0x260
#define HDR_MIN_END		0x264	/* through init_size */

#define BOOT_SIGNATURE		0xaa55
#define HDRS_MAGIC		0x53726448	/* "HdrS" */
#define LOADER_TYPE_UNDEFINED	0xff
#define STARTUP_64_OFFSET	0x200

#define MAX_KERNEL_FILE		(512ULL << 20)

#define E820_TYPE_RAM		1
#define E820_TYPE_RESERVED	2

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -ENOEXEC;
}

int bzimage__parse(const uint8_t *image, size_t size, struct bzimage_info *info, char *err,
		   size_t errlen)
{
	size_t hdr_end;

	memset(info, 0, sizeof(*info));
	if (size < 0x400)
		return fail(err, errlen, "file too small for a bzImage (%zu bytes)", size);
	if (get_le16(image + OFF_BOOT_FLAG) != BOOT_SIGNATURE)
		return fail(err, errlen,
			    "not a bzImage: no boot sector signature 0xaa55 at offset 0x1fe");
	if (get_le32(image + OFF_HEADER) != HDRS_MAGIC)
		return fail(err, errlen,
			    "not a Linux bzImage: no \"HdrS\" setup header magic at offset 0x202");
	info->protocol = get_le16(image + OFF_VERSION);
	if (info->protocol < BOOT_MIN_PROTOCOL)
		return fail(err, errlen,
			    "boot protocol %u.%02u is too old: vperf-vmm needs 2.%02u or later "
			    "(the 64-bit entry point and xloadflags)",
			    info->protocol >> 8, info->protocol & 0xff, BOOT_MIN_PROTOCOL & 0xff);
	/* The header runs to the end of the jump at 0x200: 0x202 + its 8-bit displacement. */
	hdr_end = OFF_HEADER + image[OFF_JUMP + 1];
	if (hdr_end < HDR_MIN_END)
		return fail(err, errlen, "setup header too short (ends at 0x%zx)", hdr_end);
	/* A header newer than this VMM knows: copy the part it knows. */
	if (hdr_end > HDR_OFF + sizeof(struct setup_header))
		hdr_end = HDR_OFF + sizeof(struct setup_header);
	info->hdr_end = hdr_end;

	info->setup_sects = image[OFF_SETUP_SECTS] ? image[OFF_SETUP_SECTS] : 4;
	info->loadflags = image[OFF_LOADFLAGS];
	info->xloadflags = get_le16(image + OFF_XLOADFLAGS);
	info->relocatable = image[OFF_RELOCATABLE];
	info->kernel_alignment = get_le32(image + OFF_KERNEL_ALIGNMENT);
	info->initrd_addr_max = get_le32(image + OFF_INITRD_ADDR_MAX);
	info->cmdline_size = get_le32(image + OFF_CMDLINE_SIZE);
	info->pref_address = get_le64(image + OFF_PREF_ADDRESS);
	info->init_size = get_le32(image + OFF_INIT_SIZE);

	if (!(info->loadflags & LOADED_HIGH))
		return fail(err, errlen,
			    "a zImage (loaded below 1 MiB) is not supported: use a bzImage");
	if (!(info->xloadflags & XLF_KERNEL_64))
		return fail(err, errlen,
			    "the kernel has no 64-bit entry point (xloadflags 0x%x lacks "
			    "XLF_KERNEL_64): vperf-vmm boots x86-64 kernels only",
			    info->xloadflags);

	info->pm_offset = ((size_t)info->setup_sects + 1) * 512;
	if (info->pm_offset >= size)
		return fail(err, errlen,
			    "truncated bzImage: %zu bytes, but the setup code alone is %zu bytes",
			    size, info->pm_offset);
	info->pm_size = size - info->pm_offset;

	info->load_addr = info->pref_address ? info->pref_address : BOOT_HIGH_START;
	if (info->relocatable && info->kernel_alignment &&
	    !(info->kernel_alignment & (info->kernel_alignment - 1)))
		info->load_addr = ALIGN_UP(info->load_addr, (uint64_t)info->kernel_alignment);
	if (info->load_addr < BOOT_HIGH_START)
		return fail(err, errlen, "the kernel wants to load at 0x%llx, below 1 MiB",
			    (unsigned long long)info->load_addr);
	info->mem_needed = MAX((uint64_t)info->init_size, (uint64_t)info->pm_size);
	return 0;
}

int boot__place_initrd(uint64_t size, uint64_t kernel_end, uint64_t ram_end,
		       uint32_t initrd_addr_max, uint64_t *addr)
{
	uint64_t top = MIN((uint64_t)initrd_addr_max + 1, ram_end);
	uint64_t start;

	if (size > top)
		return -ENOSPC;
	start = ALIGN_DOWN(top - size, SZ_4K);
	if (start < kernel_end)
		return -ENOSPC;
	*addr = start;
	return 0;
}

/* Read all of fd's size bytes to dst. */
static int read_full(int fd, void *dst, size_t size)
{
	uint8_t *p = dst;

	while (size) {
		ssize_t n = read(fd, p, size);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* the file shrank */
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/* Open a regular file and return its size. */
static int open_regular(const char *path, const char *what, uint64_t *size)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open %s %s: %s", what, path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		pr_err("cannot stat %s %s: %s", what, path, strerror(-err));
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		pr_err("%s %s is not a regular file", what, path);
		close(fd);
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

static int read_kernel(const char *path, uint64_t ram_end, struct boot_image *img)
{
	struct bzimage_info *info = &img->info;
	uint64_t size;
	char why[256];
	int fd, err;

	fd = open_regular(path, "kernel", &size);
	if (fd < 0)
		return fd;
	if (size > MAX_KERNEL_FILE) {
		pr_err("kernel %s: %llu MiB is too large for a bzImage", path,
		       (unsigned long long)(size >> 20));
		err = -EFBIG;
		goto out;
	}
	img->kernel = malloc(size ? size : 1);
	if (!img->kernel) {
		err = -ENOMEM;
		goto out;
	}
	img->kernel_size = size;
	err = read_full(fd, img->kernel, size);
	if (err) {
		pr_err("reading kernel %s: %s", path, strerror(-err));
		goto out;
	}
	err = bzimage__parse(img->kernel, size, info, why, sizeof(why));
	if (err) {
		pr_err("kernel %s: %s", path, why);
		goto out;
	}
	img->kernel_end = info->load_addr + info->mem_needed;
	if (img->kernel_end > ram_end) {
		pr_err("kernel %s needs %llu MiB from its load address %llu MiB (init_size), but "
		       "guest RAM ends at %llu MiB: use --mem %llu or more",
		       path, (unsigned long long)(info->mem_needed >> 20),
		       (unsigned long long)(info->load_addr >> 20),
		       (unsigned long long)(ram_end >> 20),
		       (unsigned long long)((img->kernel_end >> 20) + 32));
		err = -ENOMEM;
	}
out:
	close(fd);
	return err;
}

static int open_initrd(const char *path, uint64_t ram_end, struct boot_image *img)
{
	uint64_t kernel_end = ALIGN_UP(img->kernel_end, SZ_2M);
	uint64_t top = MIN((uint64_t)img->info.initrd_addr_max + 1, ram_end);
	int fd;

	fd = open_regular(path, "initrd", &img->initrd_size);
	if (fd < 0)
		return fd;
	if (boot__place_initrd(img->initrd_size, kernel_end, ram_end, img->info.initrd_addr_max,
			       &img->initrd_addr)) {
		pr_err("initrd %s (%llu MiB) does not fit in guest memory: the kernel uses up to "
		       "%llu MiB and the initrd must end below %llu MiB (%s), leaving %llu MiB; "
		       "use --mem %llu or more",
		       path, (unsigned long long)(img->initrd_size >> 20),
		       (unsigned long long)(kernel_end >> 20), (unsigned long long)(top >> 20),
		       top == ram_end ? "end of RAM" : "the kernel's initrd_addr_max",
		       (unsigned long long)(top > kernel_end ? (top - kernel_end) >> 20 : 0),
		       (unsigned long long)((kernel_end + img->initrd_size) / SZ_1M + 32));
		close(fd);
		return -ENOMEM;
	}
	img->initrd_fd = fd;
	return 0;
}

int boot__prepare(const char *kernel, const char *initrd, uint64_t ram_end, struct boot_image *img)
{
	int err;

	memset(img, 0, sizeof(*img));
	img->initrd_fd = -1;
	err = read_kernel(kernel, ram_end, img);
	if (!err && initrd)
		err = open_initrd(initrd, ram_end, img);
	if (err)
		boot__release(img);
	return err;
}

void boot__release(struct boot_image *img)
{
	free(img->kernel);
	img->kernel = NULL;
	if (img->initrd_fd >= 0)
		close(img->initrd_fd);
	img->initrd_fd = -1;
}

static void add_e820(struct boot_params *bp, uint64_t addr, uint64_t size, uint32_t type)
{
	if (bp->e820_entries >= E820_MAX_ENTRIES_ZEROPAGE || !size)
		return;
	bp->e820_table[bp->e820_entries++] =
		(struct boot_e820_entry){ .addr = addr, .size = size, .type = type };
}

static void setup_e820(struct vm *vm, struct boot_params *bp)
{
	unsigned int i;

	add_e820(bp, 0, BOOT_EBDA_START, E820_TYPE_RAM);
	add_e820(bp, BOOT_EBDA_START, 0xa0000 - BOOT_EBDA_START, E820_TYPE_RESERVED);
	/* 0xe0000-0xfffff: the ACPI tables (RSDP where the OS scans for it) */
	add_e820(bp, BOOT_BIOS_START, BOOT_HIGH_START - BOOT_BIOS_START, E820_TYPE_RESERVED);
	add_e820(bp, BOOT_HIGH_START, vm->mem[0].size - BOOT_HIGH_START, E820_TYPE_RAM);
	for (i = 1; i < vm->nr_mem; i++)
		add_e820(bp, vm->mem[i].gpa, vm->mem[i].size, E820_TYPE_RAM);
}

/* Identity map of the first 4 GiB with 2 MiB pages: PML4[0] -> PDPT[0..3] -> 4 page directories. */
static int setup_page_tables(struct vm *vm)
{
	uint64_t *pml4 = vm__gpa_to_hva(vm, BOOT_PML4_GPA, SZ_4K);
	uint64_t *pdpt = vm__gpa_to_hva(vm, BOOT_PDPT_GPA, SZ_4K);
	uint64_t *pd = vm__gpa_to_hva(vm, BOOT_PD_GPA, 4 * SZ_4K);
	unsigned int i;

	if (!pml4 || !pdpt || !pd)
		return -EFAULT;
	memset(pml4, 0, SZ_4K);
	memset(pdpt, 0, SZ_4K);
	pml4[0] = BOOT_PDPT_GPA | 0x3;				/* present, writable */
	for (i = 0; i < 4; i++)
		pdpt[i] = (BOOT_PD_GPA + i * SZ_4K) | 0x3;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = (uint64_t)i * SZ_2M | 0x83;		/* present, writable, 2 MiB page */
	return 0;
}

static int setup_gdt(struct vm *vm)
{
	static const uint64_t gdt[] = {
		0,
		0,
		0x00af9b000000ffffULL, /* 0x10: 64-bit code, DPL 0 */
		0x00cf93000000ffffULL, /* 0x18: flat data */
		0x00008b0000000067ULL, /* 0x20: 64-bit busy TSS, base 0, limit 0x67 (for VMX) */
		0,
	};
	void *dst = vm__gpa_to_hva(vm, BOOT_GDT_GPA, sizeof(gdt));

	if (!dst)
		return -EFAULT;
	memcpy(dst, gdt, sizeof(gdt));
	return 0;
}

int boot__load_linux(struct vm *vm, const struct boot_image *img, uint64_t rsdp,
		     struct boot_info *bi)
{
	const struct bzimage_info *info = &img->info;
	const char *cmdline = vm->cfg.cmdline ? vm->cfg.cmdline : "";
	struct boot_params *bp;
	void *dst;
	int err;

	memset(bi, 0, sizeof(*bi));
	bi->image = *info;
	bi->kernel_start = info->load_addr;
	bi->kernel_end = img->kernel_end;
	bi->entry = info->load_addr + STARTUP_64_OFFSET;

	/*
	 * boot__prepare() checked the layout against this RAM size; the helper checks every range
	 * again.
	 */
	dst = vm__gpa_to_hva(vm, info->load_addr, info->pm_size);
	if (!dst)
		return -EFAULT;
	memcpy(dst, img->kernel + info->pm_offset, info->pm_size);

	bi->cmdline_len = strlen(cmdline);
	if (bi->cmdline_len > info->cmdline_size || bi->cmdline_len >= BOOT_CMDLINE_MAX) {
		pr_err("kernel command line is %zu bytes; this kernel takes at most %u",
		       bi->cmdline_len, info->cmdline_size);
		return -E2BIG;
	}
	dst = vm__gpa_to_hva(vm, BOOT_CMDLINE_GPA, bi->cmdline_len + 1);
	if (!dst)
		return -EFAULT;
	memcpy(dst, cmdline, bi->cmdline_len + 1);

	if (img->initrd_fd >= 0) {
		dst = vm__gpa_to_hva(vm, img->initrd_addr, img->initrd_size);
		if (!dst)
			return -EFAULT;
		err = read_full(img->initrd_fd, dst, img->initrd_size);
		if (err) {
			pr_err("reading initrd %s: %s", vm->cfg.initrd, strerror(-err));
			return err;
		}
		bi->initrd_start = img->initrd_addr;
		bi->initrd_size = img->initrd_size;
	}

	bp = vm__gpa_to_hva(vm, BOOT_PARAMS_GPA, sizeof(*bp));
	if (!bp)
		return -EFAULT;
	memset(bp, 0, sizeof(*bp));
	memcpy((uint8_t *)bp + HDR_OFF, img->kernel + HDR_OFF, info->hdr_end - HDR_OFF);
	bp->hdr.type_of_loader = LOADER_TYPE_UNDEFINED;
	bp->hdr.loadflags |= CAN_USE_HEAP;
	bp->hdr.heap_end_ptr = 0xfe00;
	bp->hdr.vid_mode = 0xffff;	/* "normal" */
	bp->hdr.cmd_line_ptr = (uint32_t)BOOT_CMDLINE_GPA;
	bp->ext_cmd_line_ptr = 0;
	bp->hdr.ramdisk_image = (uint32_t)bi->initrd_start;
	bp->hdr.ramdisk_size = (uint32_t)bi->initrd_size;
	bp->ext_ramdisk_image = (uint32_t)(bi->initrd_start >> 32);
	bp->ext_ramdisk_size = (uint32_t)(bi->initrd_size >> 32);
	bp->hdr.code32_start = (uint32_t)info->load_addr;
	bp->acpi_rsdp_addr = rsdp;
	setup_e820(vm, bp);
	bi->boot_params = BOOT_PARAMS_GPA;

	err = setup_page_tables(vm);
	if (!err)
		err = setup_gdt(vm);
	pr_debug("kernel: protocol %u.%02u at 0x%llx-0x%llx (init_size %u MiB), entry 0x%llx; "
		 "initrd at 0x%llx (%llu bytes); command line %zu bytes",
		 info->protocol >> 8, info->protocol & 0xff, (unsigned long long)bi->kernel_start,
		 (unsigned long long)bi->kernel_end, info->init_size >> 20,
		 (unsigned long long)bi->entry, (unsigned long long)bi->initrd_start,
		 (unsigned long long)bi->initrd_size, bi->cmdline_len);
	return err;
}

static void set_seg(struct kvm_segment *s, uint16_t sel, uint8_t type, bool code64)
{
	*s = (struct kvm_segment){
		.base = 0,
		.limit = 0xffffffff,
		.selector = sel,
		.type = type,
		.present = 1,
		.dpl = 0,
		.db = code64 ? 0 : 1,
		.s = 1,
		.l = code64 ? 1 : 0,
		.g = 1,
	};
}

int boot__setup_bsp(struct vcpu *vcpu, const struct boot_info *bi)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int err;

	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0)
		goto fail;
	set_seg(&sregs.cs, BOOT_SEL_CODE, 0xb, true);
	set_seg(&sregs.ds, BOOT_SEL_DATA, 0x3, false);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.tr = (struct kvm_segment){
		.base = 0, .limit = 0x67, .selector = BOOT_SEL_TSS, .type = 0xb, .present = 1,
	};
	sregs.ldt = (struct kvm_segment){ .type = 0x2, .unusable = 1 };
	sregs.gdt.base = BOOT_GDT_GPA;
	sregs.gdt.limit = 6 * 8 - 1;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;
	sregs.cr3 = BOOT_PML4_GPA;
	sregs.cr4 = 0x20;				/* PAE */
	sregs.cr0 = 0x80000031;				/* PG | NE | ET | PE */
	sregs.efer = 0x500;				/* LMA | LME */
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0)
		goto fail;

	memset(&regs, 0, sizeof(regs));
	regs.rflags = 0x2;				/* reserved bit; interrupts off */
	regs.rip = bi->entry;
	regs.rsi = bi->boot_params;
	regs.rsp = BOOT_STACK_GPA;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		goto fail;
	return 0;
fail:
	err = errno;
	pr_err("vcpu%u: setting the boot registers: %s", vcpu->id, strerror(err));
	return -err;
}
