// SPDX-License-Identifier: MIT
/*
 * vperf-vmm unit tests (cmocka): the pure parts of the VMM, without KVM: the guest-physical helper,
 * the port bus, the UART model, bzImage checks and initrd placement, ACPI tables, CPUID editing,
 * the vperf hypercall port against hostile input, platform ports and the exit accounting.
 *
 * Usage: test-vmm [--list | TEST]  (ctest runs each TEST on its own: unit.vmm_<name>)
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cmocka.h>

#include <vperf/abi.h>
#include <vperf/hv.h>
#include <vperf/rawrec.h>
#include <vperf/trace_rec.h>

#include "acpi.h"
#include "boot.h"
#include "confilter.h"
#include "cpuid.h"
#include "ioport.h"
#include "log.h"
#include "platform.h"
#include "pvdev.h"
#include "pvport.h"
#include "record.h"
#include "serial.h"
#include "stats.h"
#include "vm.h"
#include "vmm.h"

/*
 * ---- a VM without KVM: two RAM regions around the PCI hole, one vCPU with a kvm_run of its own
 * ----
 */

#define LOW_SIZE	(64ULL << 20)
#define HIGH_GPA	(4ULL << 30)
#define HIGH_SIZE	(1ULL << 20)

struct fake {
	struct vm vm;
	uint8_t *ram;
	struct kvm_run *run;
};

static struct fake *fake_new(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->ram = calloc(1, LOW_SIZE + HIGH_SIZE);
	f->run = calloc(1, 4096);
	assert_non_null(f->ram);
	assert_non_null(f->run);
	f->vm.kvm_fd = f->vm.vm_fd = f->vm.stop_fd = -1;
	pthread_mutex_init(&f->vm.stop_lock, NULL);
	f->vm.mem[0] = (struct vm_mem_region){ .gpa = 0, .size = LOW_SIZE, .hva = f->ram };
	f->vm.mem[1] = (struct vm_mem_region){ .gpa = HIGH_GPA,
					       .size = HIGH_SIZE,
					       .hva = f->ram + LOW_SIZE };
	f->vm.nr_mem = 2;
	f->vm.run_size = 4096;
	f->vm.nr_vcpus = 1;
	f->vm.cfg.nr_vcpus = 1;
	f->vm.vcpus[0] = (struct vcpu){ .vm = &f->vm, .id = 0, .fd = -1, .stats_fd = -1, .run = f->run };
	ioport_bus__init(&f->vm.iobus);
	assert_int_equal(vmm_pv_init(&f->vm), 0);
	return f;
}

static void fake_delete(struct fake *f)
{
	vmm_pv_exit(&f->vm);
	pthread_mutex_destroy(&f->vm.stop_lock);
	free(f->run);
	free(f->ram);
	free(f);
}

/* Run fn with stderr captured into buf (NUL-terminated). */
static void capture_stderr(void (*fn)(void *), void *arg, char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(tmp);
	assert_true(saved >= 0);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn(arg);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

/* ---- util, guest-physical addresses ---- */

static void vmm_range_contains(void **state)
{
	(void)state;
	assert_true(range_contains(0x1000, 0x1000, 0x1000, 0x1000));
	assert_true(range_contains(0x1000, 0x1000, 0x1fff, 1));
	assert_true(range_contains(0x1000, 0x1000, 0x2000, 0));
	assert_false(range_contains(0x1000, 0x1000, 0x1fff, 2));
	assert_false(range_contains(0x1000, 0x1000, 0xfff, 1));
	assert_false(range_contains(0x1000, 0x1000, 0x1000, 0x1001));
	/* a wrapping range must not look small */
	assert_false(range_contains(0, UINT64_MAX, UINT64_MAX, 2));
	assert_false(range_contains(0x1000, 0x1000, 0x1800, UINT64_MAX));
	assert_false(range_contains(0x1000, 0x1000, UINT64_MAX - 10, 20));
	assert_true(ranges_overlap(0, 10, 9, 1));
	assert_false(ranges_overlap(0, 10, 10, 1));
	assert_false(ranges_overlap(0, 0, 0, 1));
}

static void vmm_gpa_to_hva(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	assert_ptr_equal(vm__gpa_to_hva(&f->vm, 0, 1), f->ram);
	assert_ptr_equal(vm__gpa_to_hva(&f->vm, LOW_SIZE - 8, 8), f->ram + LOW_SIZE - 8);
	assert_null(vm__gpa_to_hva(&f->vm, LOW_SIZE - 8, 9));		/* runs past low RAM */
	assert_null(vm__gpa_to_hva(&f->vm, LOW_SIZE, 1));		/* the hole */
	assert_null(vm__gpa_to_hva(&f->vm, 0xfec00000, 4));		/* IO-APIC */
	assert_ptr_equal(vm__gpa_to_hva(&f->vm, HIGH_GPA, HIGH_SIZE), f->ram + LOW_SIZE);
	assert_null(vm__gpa_to_hva(&f->vm, HIGH_GPA - 1, 2)); /* straddles the hole's end */
	assert_null(vm__gpa_to_hva(&f->vm, HIGH_GPA + HIGH_SIZE, 1));
	assert_null(vm__gpa_to_hva(&f->vm, UINT64_MAX, 1));
	assert_null(vm__gpa_to_hva(&f->vm, 16, UINT64_MAX));		/* gpa + len wraps */
	assert_null(vm__gpa_to_hva(&f->vm, UINT64_MAX - 4095, 4096));
	assert_int_equal(vm__low_ram_end(&f->vm), LOW_SIZE);
	fake_delete(f);
}

/* ---- the port bus ---- */

static unsigned int io_calls;
static uint16_t io_last_offset;

static void io_probe(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		     unsigned int size)
{
	(void)vcpu;
	(void)opaque;
	io_calls++;
	io_last_offset = offset;
	if (!is_write)
		memset(data, 0x5a, size);
}

static void vmm_ioport_bus(void **state)
{
	struct ioport_bus bus;
	uint8_t data[4];
	unsigned int i;

	(void)state;
	ioport_bus__init(&bus);
	assert_int_equal(ioport_bus__register(&bus, 0x3f8, 8, io_probe, NULL, "a"), 0);
	assert_int_equal(ioport_bus__register(&bus, 0x3ff, 1, io_probe, NULL, "b"), -EEXIST);
	assert_int_equal(ioport_bus__register(&bus, 0x3f0, 9, io_probe, NULL, "c"), -EEXIST);
	assert_int_equal(ioport_bus__register(&bus, 0x3f0, 8, io_probe, NULL, "d"), 0);
	assert_int_equal(ioport_bus__register(&bus, 0xffff, 2, io_probe, NULL, "e"), -EINVAL);
	assert_int_equal(ioport_bus__register(&bus, 0x10, 0, io_probe, NULL, "f"), -EINVAL);
	assert_int_equal(ioport_bus__register(&bus, 0xffff, 1, io_probe, NULL, "g"), 0);

	io_calls = 0;
	assert_true(ioport_bus__access(&bus, NULL, 0x3fa, false, data, 1));
	assert_int_equal(io_calls, 1);
	assert_int_equal(io_last_offset, 2);
	assert_int_equal(data[0], 0x5a);
	/* a 4-byte access at the range's last port straddles its end: not handled, all-ones */
	assert_false(ioport_bus__access(&bus, NULL, 0x3fe, false, data, 4));
	assert_memory_equal(data, "\xff\xff\xff\xff", 4);
	assert_false(ioport_bus__access(&bus, NULL, 0x80, false, data, 2));
	assert_int_equal(io_calls, 1);
	/* the bus fills up */
	for (i = 0; bus.nr < IOPORT_MAX_RANGES; i++)
		assert_int_equal(
			ioport_bus__register(&bus, (uint16_t)(0x1000 + i), 1, io_probe, NULL, "x"),
			0);
	assert_int_equal(ioport_bus__register(&bus, 0x2000, 1, io_probe, NULL, "full"), -ENOSPC);
}

/* ---- the UART ---- */

struct uart_log {
	int level;
	unsigned int raises, lowers;
	char tx[64];
	size_t ntx;
	unsigned int idles;
};

static void ut_set_irq(void *ctx, unsigned int irq, int level)
{
	struct uart_log *l = ctx;

	assert_int_equal(irq, 4);
	assert_int_not_equal(level, l->level);	/* only edges reach the irqchip */
	l->level = level;
	if (level)
		l->raises++;
	else
		l->lowers++;
}

static void ut_tx(void *ctx, uint8_t byte)
{
	struct uart_log *l = ctx;

	if (l->ntx < sizeof(l->tx))
		l->tx[l->ntx++] = (char)byte;
}

static void ut_idle(void *ctx)
{
	((struct uart_log *)ctx)->idles++;
}

static const struct serial8250_ops ut_ops = { .set_irq = ut_set_irq,
					      .tx = ut_tx,
					      .tx_idle = ut_idle };

static void vmm_serial_registers(void **state)
{
	struct uart_log log = { 0 };
	struct serial8250 s;

	(void)state;
	assert_int_equal(serial8250__init(&s, 4, &ut_ops, &log), 0);
	serial8250__write(&s, UART_SCR, 0xa5);
	assert_int_equal(serial8250__read(&s, UART_SCR), 0xa5);
	/* divisor latch behind DLAB */
	serial8250__write(&s, UART_LCR, UART_LCR_DLAB | 0x03);
	serial8250__write(&s, UART_DLL, 0x01);
	serial8250__write(&s, UART_DLM, 0x00);
	assert_int_equal(serial8250__read(&s, UART_DLL), 0x01);
	assert_int_equal(serial8250__read(&s, UART_LCR), UART_LCR_DLAB | 0x03);
	serial8250__write(&s, UART_LCR, 0x03);
	assert_int_equal(log.ntx, 0);
	/* IER keeps 4 bits (Linux's probe writes 0x0f and 0x00 and reads them back) */
	serial8250__write(&s, UART_IER, 0xff);
	assert_int_equal(serial8250__read(&s, UART_IER), 0x0f);
	serial8250__write(&s, UART_IER, 0);
	assert_int_equal(serial8250__read(&s, UART_IER), 0);
	/* no interrupt pending, no FIFO: IIR 0x01; FIFO enabled: 0xc1 (16550A) */
	assert_int_equal(serial8250__read(&s, UART_IIR), 0x01);
	serial8250__write(&s, UART_FCR, UART_FCR_ENABLE_FIFO);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc1);
	/* transmitter always empty, nothing received */
	assert_int_equal(serial8250__read(&s, UART_LSR), UART_LSR_THRE | UART_LSR_TEMT);
	/*
	 * loopback: MCR outputs come back in MSR (Linux's autoconfig test: LOOP | OUT2 | RTS ->
	 * 0x90)
	 */
	serial8250__write(&s, UART_MCR, UART_MCR_LOOP | UART_MCR_OUT2 | UART_MCR_RTS);
	assert_int_equal(serial8250__read(&s, UART_MSR) & 0xf0, 0x90);
	serial8250__write(&s, UART_MCR, UART_MCR_LOOP | UART_MCR_DTR | UART_MCR_OUT1);
	assert_int_equal(serial8250__read(&s, UART_MSR) & 0xf0, UART_MSR_DSR | UART_MSR_RI);
	/* loopback: a transmitted byte is received, not sent */
	serial8250__write(&s, UART_TX, 'L');
	assert_int_equal(log.ntx, 0);
	assert_true(serial8250__read(&s, UART_LSR) & UART_LSR_DR);
	assert_int_equal(serial8250__read(&s, UART_RX), 'L');
	assert_false(serial8250__read(&s, UART_LSR) & UART_LSR_DR);
	serial8250__write(&s, UART_MCR, UART_MCR_DTR | UART_MCR_RTS | UART_MCR_OUT2);
	assert_int_equal(serial8250__read(&s, UART_MSR) & 0xf0,
			 0xb0); /* DCD DSR CTS: a live line */
	serial8250__write(&s, UART_TX, 'x');
	assert_int_equal(log.ntx, 1);
	assert_int_equal(log.tx[0], 'x');
	serial8250__exit(&s);
}

static void vmm_serial_interrupts(void **state)
{
	struct uart_log log = { 0 };
	struct serial8250 s;
	uint8_t in[SERIAL_RX_SIZE + 8];

	(void)state;
	assert_int_equal(serial8250__init(&s, 4, &ut_ops, &log), 0);
	serial8250__write(&s, UART_FCR, UART_FCR_ENABLE_FIFO);
	/*
	 * Enabling THRI while THR is empty raises the interrupt at once (Linux's THRE test needs
	 * it).
	 */
	serial8250__write(&s, UART_IER, UART_IER_THRI);
	assert_int_equal(log.level, 1);
	assert_int_equal(log.idles, 1);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc2);
	/* reading IIR acknowledged it */
	assert_int_equal(log.level, 0);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc1);
	/* again after IER off and on */
	serial8250__write(&s, UART_IER, 0);
	serial8250__write(&s, UART_IER, UART_IER_THRI);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc2);
	/* each byte: the line drops and rises again (an edge per byte, as the driver expects) */
	log.raises = log.lowers = 0;
	serial8250__write(&s, UART_TX, 'a');
	serial8250__write(&s, UART_TX, 'b');
	assert_int_equal(log.raises, 2);
	assert_int_equal(log.level, 1);
	assert_memory_equal(log.tx, "ab", 2);
	serial8250__write(&s, UART_IER, 0);
	assert_int_equal(log.level, 0);

	/*
	 * Receive: DR and the receive interrupt; the FIFO takes SERIAL_RX_SIZE bytes, the rest
	 * waits.
	 */
	memset(in, 'r', sizeof(in));
	serial8250__write(&s, UART_IER, UART_IER_RDI);
	assert_int_equal(log.level, 0);
	assert_int_equal(serial8250__receive(&s, in, sizeof(in)), SERIAL_RX_SIZE);
	assert_int_equal(log.level, 1);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc4);
	assert_int_equal(serial8250__receive(&s, in, 1), 0);
	while (serial8250__read(&s, UART_LSR) & UART_LSR_DR)
		assert_int_equal(serial8250__read(&s, UART_RX), 'r');
	assert_int_equal(log.level, 0);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc1);

	/* Overrun (loopback into a full FIFO) with the line-status interrupt. */
	serial8250__write(&s, UART_IER, UART_IER_RLSI);
	serial8250__write(&s, UART_MCR, UART_MCR_LOOP);
	for (size_t i = 0; i <= SERIAL_RX_SIZE; i++)
		serial8250__write(&s, UART_TX, 'o');
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc6);
	assert_true(serial8250__read(&s, UART_LSR) & UART_LSR_OE);
	assert_false(serial8250__read(&s, UART_LSR) & UART_LSR_OE);	/* cleared by the read */
	/* FCR clears the receive FIFO */
	serial8250__write(&s, UART_FCR, UART_FCR_ENABLE_FIFO | UART_FCR_CLEAR_RCVR);
	assert_false(serial8250__read(&s, UART_LSR) & UART_LSR_DR);
	/* modem status interrupt on a loopback change */
	serial8250__write(&s, UART_IER, UART_IER_MSI);
	serial8250__write(&s, UART_MCR, UART_MCR_LOOP | UART_MCR_RTS);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc0);
	assert_true(serial8250__read(&s, UART_MSR) & UART_MSR_DCTS);
	assert_int_equal(serial8250__read(&s, UART_IIR), 0xc1);
	serial8250__exit(&s);
}

/* ---- bzImage ---- */

#define IMG_SIZE	8192

static void make_image(uint8_t *img, uint16_t version, uint16_t xlf, uint8_t loadflags)
{
	memset(img, 0, IMG_SIZE);
	img[0x1f1] = 4;				/* setup_sects */
	put_le16(img + 0x1fe, 0xaa55);
	img[0x200] = 0xeb;
	img[0x201] = 0x6a;			/* header ends at 0x26c */
	put_le32(img + 0x202, 0x53726448);	/* "HdrS" */
	put_le16(img + 0x206, version);
	img[0x211] = loadflags;
	put_le32(img + 0x22c, 0x7fffffff);
	put_le32(img + 0x230, 0x200000);
	img[0x234] = 1;
	put_le16(img + 0x236, xlf);
	put_le32(img + 0x238, 2047);
	put_le64(img + 0x258, 0x1000000);
	put_le32(img + 0x260, 0x3f98000);
}

static void vmm_bzimage_parse(void **state)
{
	static uint8_t img[IMG_SIZE];
	struct bzimage_info info;
	char err[256];

	(void)state;
	make_image(img, 0x020f, 0x7f, 0x01);
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), 0);
	assert_int_equal(info.protocol, 0x020f);
	assert_int_equal(info.pm_offset, 5 * 512);
	assert_int_equal(info.pm_size, IMG_SIZE - 5 * 512);
	assert_int_equal(info.load_addr, 0x1000000);
	assert_int_equal(info.mem_needed, 0x3f98000);
	assert_int_equal(info.hdr_end, 0x26c);
	assert_int_equal(info.cmdline_size, 2047);

	/* setup_sects 0 means 4; an unaligned pref_address of a relocatable kernel is aligned up */
	img[0x1f1] = 0;
	put_le64(img + 0x258, 0x1100000);
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), 0);
	assert_int_equal(info.setup_sects, 4);
	assert_int_equal(info.load_addr, 0x1200000);

	make_image(img, 0x020f, 0x7f, 0x01);
	img[0x1fe] = 0;
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "0xaa55"));

	make_image(img, 0x020f, 0x7f, 0x01);
	img[0x202] = 'X';
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "HdrS"));

	make_image(img, 0x020b, 0x7f, 0x01);
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "2.11 is too old"));

	make_image(img, 0x020f, 0x7e, 0x01);
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "XLF_KERNEL_64"));

	make_image(img, 0x020f, 0x7f, 0x00);
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "zImage"));

	make_image(img, 0x020f, 0x7f, 0x01);
	assert_int_equal(bzimage__parse(img, 5 * 512, &info, err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "truncated"));
	assert_int_equal(bzimage__parse(img, 100, &info, err, sizeof(err)), -ENOEXEC);

	make_image(img, 0x020f, 0x7f, 0x01);
	img[0x201] = 0x10;		/* header too short for init_size */
	assert_int_equal(bzimage__parse(img, IMG_SIZE, &info, err, sizeof(err)), -ENOEXEC);
}

static void vmm_initrd_placement(void **state)
{
	uint64_t addr;

	(void)state;
	/* as high as possible, page aligned */
	assert_int_equal(boot__place_initrd(0x1800, 0x5000000, 0x10000000, 0x7fffffff, &addr), 0);
	assert_int_equal(addr, 0x10000000 - 0x2000);
	/* below initrd_addr_max + 1 when that is lower than the end of RAM */
	assert_int_equal(boot__place_initrd(0x1000, 0x5000000, 0x80000000, 0x37ffffff, &addr), 0);
	assert_int_equal(addr, 0x38000000 - 0x1000);
	/* not over the kernel */
	assert_int_equal(boot__place_initrd(0x100000, 0x5000000, 0x5080000, 0x7fffffff, &addr),
			 -ENOSPC);
	assert_int_equal(boot__place_initrd(UINT64_MAX, 0x5000000, 0x10000000, 0x7fffffff, &addr),
			 -ENOSPC);
	assert_int_equal(boot__place_initrd(0, 0x5000000, 0x10000000, 0x7fffffff, &addr), 0);
}

/* ---- ACPI ---- */

static const uint8_t *table(const uint8_t *area, const struct acpi_layout *l, const char *sig,
			    size_t *len)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++) {
		if (!strcmp(l->tables[i].sig, sig)) {
			*len = l->tables[i].len;
			return area + l->tables[i].offset;
		}
	}
	fail_msg("no %s table", sig);
	return NULL;
}

static bool contains(const uint8_t *p, size_t len, const void *needle, size_t n)
{
	return memmem(p, len, needle, n) != NULL;
}

static void vmm_acpi_tables(void **state)
{
	static uint8_t area[ACPI_AREA_SIZE];
	struct acpi_config cfg = {
		.nr_vcpus = 4, .lapic_addr = 0xfee00000, .ioapic_addr = 0xfec00000, .ioapic_id = 0,
		.serial_port = 0x3f8, .serial_irq = 4,
	};
	static const uint8_t s5[] = { 0x08, '_',  'S',	'5',  '_',  0x12, 0x07,
				      0x04, 0x0a, 0x05, 0x00, 0x00, 0x00 };
	static const uint8_t pnp0501[] = { 0x0c, 0x41, 0xd0, 0x05, 0x01 };
	static const uint8_t io_irq[] = { 0x47, 0x01, 0xf8, 0x03, 0xf8, 0x03,
					  0x01, 0x08, 0x22, 0x10, 0x00, 0x79 };
	struct acpi_layout l;
	const uint8_t *rsdp, *xsdt, *fadt, *madt, *dsdt, *p;
	size_t len = 0, dlen = 0, mlen = 0;
	unsigned int i, lapics = 0, other = 0;

	(void)state;
	assert_int_equal(acpi__build(area, ACPI_AREA_GPA, sizeof(area), &cfg, &l), 0);
	assert_int_equal(l.rsdp_gpa, ACPI_AREA_GPA);
	assert_true(l.rsdp_gpa % 16 == 0);
	rsdp = table(area, &l, "RSDP", &len);
	assert_memory_equal(rsdp, "RSD PTR ", 8);
	assert_int_equal(acpi__checksum(rsdp, 20), 0);
	assert_int_equal(acpi__checksum(rsdp, 36), 0);
	assert_int_equal(rsdp[15], 2);
	/* every other table: its checksum, its length field */
	for (i = 1; i < l.nr; i++) {
		p = area + l.tables[i].offset;
		assert_int_equal(get_le32(p + 4), l.tables[i].len);
		assert_int_equal(acpi__checksum(p, l.tables[i].len), 0);
		assert_memory_equal(p, l.tables[i].sig, 4);
	}
	/* XSDT -> FADT, MADT; RSDP -> XSDT */
	xsdt = table(area, &l, "XSDT", &len);
	fadt = table(area, &l, "FACP", &len);
	madt = table(area, &l, "APIC", &mlen);
	dsdt = table(area, &l, "DSDT", &dlen);
	assert_int_equal(get_le64(rsdp + 24), ACPI_AREA_GPA + (uint64_t)(xsdt - area));
	assert_int_equal(get_le64(xsdt + 36), ACPI_AREA_GPA + (uint64_t)(fadt - area));
	assert_int_equal(get_le64(xsdt + 44), ACPI_AREA_GPA + (uint64_t)(madt - area));
	/*
	 * FADT: revision 6, hardware-reduced, reset register supported, X_DSDT, sleep and reset
	 * ports
	 */
	assert_int_equal(get_le32(fadt + 4), 276);
	assert_int_equal(fadt[8], 6);
	assert_true(get_le32(fadt + 112) & (1u << 20));
	assert_true(get_le32(fadt + 112) & (1u << 10));
	assert_int_equal(get_le64(fadt + 140), ACPI_AREA_GPA + (uint64_t)(dsdt - area));
	assert_int_equal(fadt[116], 1); /* reset register: system I/O */
	assert_int_equal(get_le64(fadt + 120), ACPI_RESET_PORT);
	assert_int_equal(fadt[128], ACPI_RESET_VALUE);
	assert_int_equal(fadt[244], 1);
	assert_int_equal(get_le64(fadt + 248), ACPI_SLEEP_CTL_PORT);
	assert_int_equal(get_le64(fadt + 260), ACPI_SLEEP_STS_PORT);
	/* DSDT: \_S5 = {5, 0, 0, 0} and COM1 (PNP0501, port 0x3f8, IRQ 4) */
	assert_true(contains(dsdt, dlen, s5, sizeof(s5)));
	assert_true(contains(dsdt, dlen, pnp0501, sizeof(pnp0501)));
	assert_true(contains(dsdt, dlen, io_irq, sizeof(io_irq)));
	/*
	 * MADT: one enabled local APIC per vCPU with APIC ID = index, IO-APIC, ISO 0 -> 2, NMI on
	 * LINT1
	 */
	assert_int_equal(get_le32(madt + 36), 0xfee00000);
	for (p = madt + 44; p < madt + mlen; p += p[1]) {
		assert_true(p[1] >= 2);
		switch (p[0]) {
		case 0:
			assert_int_equal(p[3], lapics);
			assert_int_equal(get_le32(p + 4), 1);
			lapics++;
			break;
		case 1:
			assert_int_equal(get_le32(p + 4), 0xfec00000);
			assert_int_equal(get_le32(p + 8), 0);
			other |= 1;
			break;
		case 2:
			assert_int_equal(p[3], 0);
			assert_int_equal(get_le32(p + 4), 2);
			other |= 2;
			break;
		case 4:
			assert_int_equal(p[2], 0xff);
			assert_int_equal(p[5], 1);
			other |= 4;
			break;
		default:
			fail_msg("unexpected MADT entry type %u", p[0]);
		}
	}
	assert_ptr_equal(p, madt + mlen);
	assert_int_equal(lapics, 4);
	assert_int_equal(other, 7);

	/* too small an area, too many vCPUs */
	assert_int_equal(acpi__build(area, ACPI_AREA_GPA, 200, &cfg, &l), -ENOSPC);
	cfg.nr_vcpus = 0;
	assert_int_equal(acpi__build(area, ACPI_AREA_GPA, sizeof(area), &cfg, &l), -EINVAL);
	cfg.nr_vcpus = 256;
	assert_int_equal(acpi__build(area, ACPI_AREA_GPA, sizeof(area), &cfg, &l), -EINVAL);
	cfg.nr_vcpus = 1;
	cfg.serial_irq = 16;
	assert_int_equal(acpi__build(area, ACPI_AREA_GPA, sizeof(area), &cfg, &l), -EINVAL);
}

/* ---- CPUID ---- */

static void vmm_cpuid_patch(void **state)
{
	const uint32_t cap = 8;
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + cap * sizeof(c->entries[0]));
	struct cpuid_params p = { .apic_id = 3, .tsc_deadline = true, .vperf_features = 0x5 };
	struct kvm_cpuid_entry2 *e;

	(void)state;
	assert_non_null(c);
	c->entries[0] = (struct kvm_cpuid_entry2){ .function = 1,
						   .ebx = 0x00ff0800,
						   .edx = 1u << 28 };
	c->entries[1] = (struct kvm_cpuid_entry2){
		.function = 0xb, .index = 1, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .edx = 0
	};
	c->entries[2] = (struct kvm_cpuid_entry2){ .function = 0x40000000, .eax = 0x40000001,
						   .ebx = 0x4b4d564b };
	c->entries[3] = (struct kvm_cpuid_entry2){ .function = 0x40000001, .eax = 0x01007efb };
	c->nent = 4;
	assert_int_equal(cpuid__patch(c, cap, &p), 0);
	assert_int_equal(c->nent, 6);
	e = cpuid__find(c, 1, 0);
	assert_int_equal(e->ebx >> 24, 3);			/* APIC ID */
	assert_int_equal((e->ebx >> 16) & 0xff, 1);
	assert_int_equal(e->ebx & 0xffff, 0x0800);		/* CLFLUSH size kept */
	assert_true(e->ecx & (1u << 31));			/* hypervisor */
	assert_true(e->ecx & (1u << 24));			/* TSC deadline */
	assert_false(e->edx & (1u << 28));
	e = cpuid__find(c, 0xb, 1);
	assert_int_equal(e->edx, 3);
	assert_int_equal(e->ecx, 2u << 8 | 1);
	/* KVM's leaves are kept */
	assert_int_equal(cpuid__find(c, 0x40000001, 0)->eax, 0x01007efb);
	assert_int_equal(cpuid__find(c, 0x40000000, 0)->ebx, 0x4b4d564b);
	/* the vperf leaves */
	e = cpuid__find(c, VPERF_CPUID_BASE, 0);
	assert_non_null(e);
	assert_int_equal(e->eax, VPERF_CPUID_INFO);
	assert_int_equal(e->ebx, VPERF_CPUID_SIG_EBX);
	assert_int_equal(e->ecx, VPERF_CPUID_SIG_ECX);
	assert_int_equal(e->edx, VPERF_CPUID_SIG_EDX);
	assert_memory_equal(&e->ebx, "VPER", 4);
	e = cpuid__find(c, VPERF_CPUID_INFO, 0);
	assert_int_equal(e->eax, VPERF_ABI_VERSION);
	assert_int_equal(e->ebx, 0x5);
	assert_int_equal(e->ecx, VPERF_DEFAULT_PORT);
	assert_int_equal(e->edx, VPERF_DEFAULT_GSI);
	/* patching again replaces the vperf leaves instead of adding more */
	assert_int_equal(cpuid__patch(c, cap, &p), 0);
	assert_int_equal(c->nent, 6);
	/* no room */
	c->nent = 4;
	assert_int_equal(cpuid__patch(c, 5, &p), -ENOSPC);
	/* with the doorbell: the base leaf reaches its leaf, which holds the page's GPA and size */
	c->nent = 4;
	p.vperf_features = 0x5 | VPERF_FEAT_DOORBELL;
	assert_int_equal(cpuid__patch(c, cap, &p), 0);
	assert_int_equal(c->nent, 7);
	assert_int_equal(cpuid__find(c, VPERF_CPUID_BASE, 0)->eax, VPERF_CPUID_DOORBELL);
	e = cpuid__find(c, VPERF_CPUID_DOORBELL, 0);
	assert_non_null(e);
	assert_int_equal(e->eax, VM_DOORBELL_ADDR);
	assert_int_equal(e->ebx, 0);
	assert_int_equal(e->ecx, VPERF_DOORBELL_SIZE);
	free(c);
}

/* ---- the vperf port ---- */

static void vmm_pvport_version_exit(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	uint64_t a[4] = { 0 };

	(void)state;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_VERSION, a),
			 VPERF_ABI_VERSION | (int64_t)vmm_pv_features(&f->vm) << 32);
	assert_true(vmm_pv_features(&f->vm) & VPERF_FEAT_COUNTERS);
	/* device operations reach libvperf-hv: unregistering no page is fine, a bad page is not */
	assert_int_equal(pvport__hypercall(v, VPERF_HC_PAGE_REGISTER, a), 0);
	a[0] = 8;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_PAGE_REGISTER, a), -VPERF_EINVAL);
	a[0] = 0;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_NR_OPS, a), -VPERF_ENOSYS);
	assert_int_equal(pvport__hypercall(v, UINT32_MAX, a), -VPERF_ENOSYS);
	assert_int_equal(v->stats.pv_unknown_ops, 2);
	assert_int_equal(v->stats.pv_ops[VPERF_HC_PAGE_REGISTER], 2);
	/* exit status: 0..255 only */
	a[0] = 256;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_EXIT, a), -VPERF_EINVAL);
	a[0] = UINT64_MAX;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_EXIT, a), -VPERF_EINVAL);
	assert_false(vm__stopping(&f->vm));
	a[0] = 42;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_EXIT, a), 0);
	assert_true(vm__stopping(&f->vm));
	assert_int_equal(f->vm.stop_reason, VM_STOP_GUEST_EXIT);
	assert_int_equal(f->vm.stop_status, 42);
	/* the first stop request wins */
	a[0] = 7;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_EXIT, a), 0);
	assert_int_equal(f->vm.stop_status, 42);
	assert_int_equal(v->stats.pv_ops[VPERF_HC_EXIT], 4);
	fake_delete(f);
}

struct ucall_case {
	struct fake *f;
	uint64_t gpa;
	int64_t ret;
};

static void do_ucall(void *arg)
{
	struct ucall_case *c = arg;
	uint64_t a[4] = { c->gpa, 0, 0, 0 };

	c->ret = pvport__hypercall(&c->f->vm.vcpus[0], VPERF_HC_UCALL, a);
}

static void vmm_pvport_ucall(void **state)
{
	struct fake *f = fake_new();
	struct ucall_case c = { .f = f };
	struct vperf_ucall *uc = (struct vperf_ucall *)(f->ram + 0x10000);
	char err[1024];

	(void)state;
	/*
	 * PRINT: "guest: msg" on stderr; control characters defused; an unterminated msg is cut,
	 * not overread
	 */
	memset(uc, 0, sizeof(*uc));
	uc->cmd = VPERF_UCALL_PRINT;
	strcpy(uc->msg, "hello\x1b[2Jworld");
	c.gpa = 0x10000;
	capture_stderr(do_ucall, &c, err, sizeof(err));
	assert_int_equal(c.ret, 0);
	assert_string_equal(err, "guest: hello?[2Jworld\n");
	memset(uc->msg, 'A', sizeof(uc->msg));
	capture_stderr(do_ucall, &c, err, sizeof(err));
	assert_int_equal(c.ret, 0);
	assert_int_equal(strlen(err), strlen("guest: ") + sizeof(uc->msg) - 1 + 1);
	/* VALUES with arguments */
	memset(uc, 0, sizeof(*uc));
	uc->cmd = VPERF_UCALL_VALUES;
	uc->nr_args = 2;
	uc->args[0] = 1;
	uc->args[1] = 0xffffffffffffffffULL;
	strcpy(uc->msg, "v");
	capture_stderr(do_ucall, &c, err, sizeof(err));
	/* the values, then the reporting thread's own host context switches */
	assert_true(!strncmp(err, "guest: values: v: 0x1 0xffffffffffffffff [vcpu0 thread switches: voluntary ",
			     strlen("guest: values: v: 0x1 0xffffffffffffffff [vcpu0 thread switches: voluntary ")));
	assert_non_null(strstr(err, " nonvoluntary "));
	assert_string_equal(err + strlen(err) - 2, "]\n");
	/* bad nr_args, bad cmd: EINVAL and nothing printed */
	uc->nr_args = 9;
	capture_stderr(do_ucall, &c, err, sizeof(err));
	assert_int_equal(c.ret, -VPERF_EINVAL);
	assert_string_equal(err, "");
	uc->nr_args = 0;
	uc->cmd = 99;
	capture_stderr(do_ucall, &c, err, sizeof(err));
	assert_int_equal(c.ret, -VPERF_EINVAL);
	/* GPAs outside RAM, across its end, wrapping */
	c.gpa = LOW_SIZE - sizeof(*uc) + 1;
	do_ucall(&c);
	assert_int_equal(c.ret, -VPERF_EFAULT);
	c.gpa = LOW_SIZE;
	do_ucall(&c);
	assert_int_equal(c.ret, -VPERF_EFAULT);
	c.gpa = UINT64_MAX - 8;
	do_ucall(&c);
	assert_int_equal(c.ret, -VPERF_EFAULT);
	c.gpa = HIGH_GPA + HIGH_SIZE -
		sizeof(*uc); /* the last fitting spot above the hole is fine */
	memset(f->ram + LOW_SIZE + HIGH_SIZE - sizeof(*uc), 0, sizeof(*uc));
	do_ucall(&c);
	assert_int_equal(c.ret, -VPERF_EINVAL);		/* cmd 0 */
	assert_false(vm__stopping(&f->vm));
	/* ASSERT: printed, and the VM stops as a crash */
	memset(uc, 0, sizeof(*uc));
	uc->cmd = VPERF_UCALL_ASSERT;
	uc->nr_args = 1;
	uc->args[0] = 5;
	strcpy(uc->msg, "x == y");
	c.gpa = 0x10000;
	capture_stderr(do_ucall, &c, err, sizeof(err));
	assert_int_equal(c.ret, 0);
	assert_string_equal(err, "guest: assertion failed on vcpu0: x == y: 0x5\n");
	assert_int_equal(f->vm.stop_reason, VM_STOP_CRASH);
	assert_int_equal(f->vm.stop_status, VM_EXIT_CRASH);
	fake_delete(f);
}

/*
 * EVENT_INFO through the port's dispatch: the list ends in ENOENT, its EXITS entries are "all" and
 * one per reason the exit accounting names, in lowercase, and an entry is what COUNTERS_SET takes.
 */
static void vmm_pvport_event_info(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	const struct vperf_event_desc *d = (const void *)(f->ram + 0x2000);
	struct vperf_event_desc hlt = { 0 };
	uint64_t a[4] = { 0, 0x2000, 0, 0 }, named = 0, exits = 0;
	int64_t r;

	(void)state;
	vmm_pv_vcpu_enter(v);
	assert_true(vmm_pv_features(&f->vm) & VPERF_FEAT_EVENT_INFO);
	for (uint32_t reason = 0; reason < 256; reason++)
		named += stats__exit_name(reason) != NULL;
	for (a[0] = 0; (r = pvport__hypercall(v, VPERF_HC_EVENT_INFO, a)) != -VPERF_ENOENT; a[0]++) {
		assert_true(r >= 0 && a[0] < 100000);
		if (d->source != VPERF_SRC_EXITS)
			continue;
		exits++;
		if (d->arg == UINT64_MAX) {
			assert_string_equal(d->name, "all");
			continue;
		}
		assert_non_null(stats__exit_name((uint32_t)d->arg));
		assert_int_equal(strcasecmp(d->name, stats__exit_name((uint32_t)d->arg)), 0);
		for (const char *c = d->name; *c; c++)
			assert_false(*c >= 'A' && *c <= 'Z');
		if (d->arg == KVM_EXIT_HLT)
			hlt = *d;
	}
	assert_int_equal(exits, 1 + named);
	assert_string_equal(hlt.name, "hlt");
	assert_int_equal(v->stats.pv_ops[VPERF_HC_EVENT_INFO], a[0] + 1);
	assert_string_equal(stats__exit_short_name(KVM_EXIT_IRQ_WINDOW_OPEN), "irq_window_open");
	assert_null(stats__exit_short_name(STATS_EXIT_REASONS));
	/* the entry, handed back, counts the vCPU's HLT exits */
	memcpy(f->ram + 0x3000, &hlt, sizeof(hlt));
	a[0] = 0x3000;
	a[1] = 1;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_COUNTERS_SET, a), 0);
	/* outside RAM: refused, nothing written */
	a[0] = 0;
	a[1] = LOW_SIZE - 40;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_EVENT_INFO, a), -VPERF_EFAULT);
	fake_delete(f);
}

/*
 * --allow: the lists add up, "default" is the device's own list, a bad pattern changes nothing;
 * the device counts only what the list allows.
 */
static void vmm_pv_allowlist(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	struct vperf_event_desc *d = (void *)(f->ram + 0x3000);
	struct vm_config cfg = { 0 };
	uint64_t a[4] = { 0x3000, 1, 0, 0 };
	int nr;

	(void)state;
	vperf_hv__default_allow(&nr);
	assert_int_equal(vmm_pv_allow_add(&cfg, "default,raw:*"), 0);
	assert_int_equal(cfg.nr_allow, nr + 1);
	assert_string_equal(cfg.allow[0], "hw:*");
	assert_string_equal(cfg.allow[nr], "raw:*");
	assert_int_equal(vmm_pv_allow_add(&cfg, "rawmod:cmask,bogus:x"), -EINVAL);
	assert_int_equal(vmm_pv_allow_add(&cfg, "exits:2,"), -EINVAL);
	assert_int_equal(vmm_pv_allow_add(&cfg, "*"), -EINVAL);
	assert_int_equal(vmm_pv_allow_add(&cfg, "hw:"), -EINVAL);
	assert_int_equal(vmm_pv_allow_add(&cfg, "sw:a\tb"), -EINVAL);
	assert_int_equal(cfg.nr_allow, nr + 1);
	vmm_pv_allow_free(&cfg);
	assert_null(cfg.allow);
	for (int i = 0; i < VMM_MAX_ALLOW; i++)
		assert_int_equal(vmm_pv_allow_add(&cfg, "exits:1"), 0);
	assert_int_equal(vmm_pv_allow_add(&cfg, "exits:1"), -EINVAL);
	vmm_pv_allow_free(&cfg);

	/* the device with "exits:all,kvm:*": exits by reason and task-clock refused */
	vmm_pv_exit(&f->vm);
	assert_int_equal(vmm_pv_allow_add(&f->vm.cfg, "exits:all,kvm:*"), 0);
	assert_int_equal(vmm_pv_init(&f->vm), 0);
	vmm_pv_vcpu_enter(v);
	memset(d, 0, sizeof(*d));
	d->source = VPERF_SRC_EXITS;
	d->arg = UINT64_MAX;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_COUNTERS_SET, a), 0);
	d->arg = KVM_EXIT_HLT;
	assert_int_equal(pvport__hypercall(v, VPERF_HC_COUNTERS_SET, a), -VPERF_EPERM);
	d->source = VPERF_SRC_PERF;
	strcpy(d->name, "task-clock");
	assert_int_equal(pvport__hypercall(v, VPERF_HC_COUNTERS_SET, a), -VPERF_EPERM);
	vmm_pv_allow_free(&f->vm.cfg);
	fake_delete(f);
}

static void vmm_pvport_io(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	uint8_t data[4];

	(void)state;
	assert_int_equal(pvport__init(&f->vm), 0);
	/* a 32-bit OUT of VPERF_HC_VERSION: RAX gets the result through the sync-regs area */
	f->run->s.regs.regs.rax = 0xdead;
	put_le32(data, VPERF_HC_VERSION);
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT, true, data, 4));
	assert_int_equal(f->run->s.regs.regs.rax & 0xffffffff, VPERF_ABI_VERSION);
	assert_int_equal(f->run->s.regs.regs.rax >> 32, vmm_pv_features(&f->vm));
	assert_true(f->run->kvm_dirty_regs & KVM_SYNC_X86_REGS);
	/* arguments come from RBX */
	f->run->kvm_dirty_regs = 0;
	f->run->s.regs.regs.rbx = 300;
	put_le32(data, VPERF_HC_EXIT);
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT, true, data, 4));
	assert_int_equal((int64_t)f->run->s.regs.regs.rax, -VPERF_EINVAL);
	/* reads, narrow writes, writes at the other three ports: ignored, counted, RAX untouched */
	f->run->kvm_dirty_regs = 0;
	f->run->s.regs.regs.rax = 0x1234;
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT, false, data, 4));
	assert_memory_equal(data, "\xff\xff\xff\xff", 4);
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT, true, data, 1));
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT, true, data, 2));
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT + 2, true, data, 2));
	/* string I/O (rep outsl) would run the operation once per element: refused */
	f->run->exit_reason = KVM_EXIT_IO;
	f->run->io.count = 2;
	put_le32(data, VPERF_HC_VERSION);
	assert_true(ioport_bus__access(&f->vm.iobus, v, VPERF_DEFAULT_PORT, true, data, 4));
	assert_int_equal(v->stats.pv_bad_access, 5);
	assert_int_equal(f->run->s.regs.regs.rax, 0x1234);
	assert_int_equal(f->run->kvm_dirty_regs, 0);
	assert_string_equal(pvport__op_name(VPERF_HC_TRACE_FLUSH), "TRACE_FLUSH");
	assert_string_equal(pvport__op_name(VPERF_HC_EVENT_INFO), "EVENT_INFO");
	assert_null(pvport__op_name(VPERF_HC_NR_OPS));
	fake_delete(f);
}

/* ---- the exit dispatch (vcpu__dispatch_exit), on the fake's kvm_run ---- */

static void vmm_dispatch_exits(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	struct kvm_run *run = f->run;
	uint8_t *data = (uint8_t *)run + sizeof(*run);	/* as far in as the fake's kvm_run allows */

	(void)state;
	assert_int_equal(platform__init(&f->vm), 0);
	assert_int_equal(pvport__init(&f->vm), 0);
	/* a string IN of 4 bytes from the POST port: all ones, counted once per element */
	run->exit_reason = KVM_EXIT_IO;
	run->io.direction = KVM_EXIT_IO_IN;
	run->io.size = 1;
	run->io.port = 0x80;
	run->io.count = 4;
	run->io.data_offset = sizeof(*run);
	memset(data, 0, 4);
	assert_int_equal(vcpu__dispatch_exit(v), 0);
	assert_memory_equal(data, "\xff\xff\xff\xff", 4);
	assert_int_equal(stats__port_count(&v->stats, 0x80, false), 4);
	assert_int_equal(v->stats.exits[KVM_EXIT_IO], 1);
	/*
	 * Data that overlaps struct kvm_run itself is refused before any handler runs: an IN there
	 * would overwrite the exit's own fields (the port) while the loop still reads them (found by
	 * fuzz-vmm-exits: a string IN at offset 0 moved its later elements to port 0xffff).
	 */
	run->io.port = VPERF_DEFAULT_PORT;
	run->io.size = 4;
	run->io.count = 1;
	run->io.data_offset = 0;
	assert_int_equal(vcpu__dispatch_exit(v), -EINVAL);
	assert_int_equal(run->io.port, VPERF_DEFAULT_PORT);
	assert_int_equal(run->exit_reason, KVM_EXIT_IO);
	assert_int_equal(v->stats.pv_bad_access, 0);
	assert_int_equal(f->vm.stop_reason, VM_STOP_ERROR);
	run->io.data_offset = sizeof(*run) - 1;
	assert_int_equal(vcpu__dispatch_exit(v), -EINVAL);
	run->io.data_offset = f->vm.run_size - 3;	/* 4 bytes past the mapping's end */
	assert_int_equal(vcpu__dispatch_exit(v), -EINVAL);
	/* the doorbell: a load of slot 0 without a counter reads 0; any other size all ones */
	run->exit_reason = KVM_EXIT_MMIO;
	run->mmio.phys_addr = VM_DOORBELL_ADDR;
	run->mmio.len = 8;
	run->mmio.is_write = 0;
	memset(run->mmio.data, 0x11, 8);
	assert_int_equal(vcpu__dispatch_exit(v), 0);
	assert_memory_equal(run->mmio.data, "\0\0\0\0\0\0\0\0", 8);
	/* a length beyond the data buffer (KVM never reports one) is not an 8-byte load either */
	run->mmio.len = 16;
	assert_int_equal(vcpu__dispatch_exit(v), 0);
	assert_memory_equal(run->mmio.data, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	assert_int_equal(v->stats.pv_doorbell, 2);
	/* MMIO without a device: all ones, counted */
	run->mmio.phys_addr = VM_DOORBELL_ADDR + VPERF_DOORBELL_SIZE;
	run->mmio.len = 4;
	memset(run->mmio.data, 0, 8);
	assert_int_equal(vcpu__dispatch_exit(v), 0);
	assert_memory_equal(run->mmio.data, "\xff\xff\xff\xff\0\0\0\0", 8);
	assert_int_equal(v->stats.mmio_unhandled_read, 1);
	assert_int_equal(v->stats.exits[KVM_EXIT_MMIO], 3);
	fake_delete(f);
}

/* ---- platform ports ---- */

static void vmm_platform_ports(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	uint8_t b;

	(void)state;
	assert_int_equal(platform__init(&f->vm), 0);
	/* sleep state other than S5, or SLP_EN clear: ignored; the status register says "woken" */
	b = ACPI_SLP_EN | 3 << ACPI_SLP_TYP_SHIFT;
	assert_true(ioport_bus__access(&f->vm.iobus, v, ACPI_SLEEP_CTL_PORT, true, &b, 1));
	b = ACPI_SLP_TYP_S5 << ACPI_SLP_TYP_SHIFT;
	assert_true(ioport_bus__access(&f->vm.iobus, v, ACPI_SLEEP_CTL_PORT, true, &b, 1));
	assert_true(ioport_bus__access(&f->vm.iobus, v, ACPI_SLEEP_STS_PORT, false, &b, 1));
	assert_int_equal(b, ACPI_WAK_STS);
	b = ACPI_RESET_VALUE + 1;
	assert_true(ioport_bus__access(&f->vm.iobus, v, ACPI_RESET_PORT, true, &b, 1));
	b = 0x01;
	assert_true(ioport_bus__access(&f->vm.iobus, v, 0x64, true, &b, 1));	/* not 0xfe */
	assert_true(ioport_bus__access(&f->vm.iobus, v, 0x64, false, &b, 1));
	assert_int_equal(b, 0);
	assert_false(vm__stopping(&f->vm));
	/* S5: poweroff */
	b = ACPI_SLP_EN | ACPI_SLP_TYP_S5 << ACPI_SLP_TYP_SHIFT;
	assert_true(ioport_bus__access(&f->vm.iobus, v, ACPI_SLEEP_CTL_PORT, true, &b, 1));
	assert_int_equal(f->vm.stop_reason, VM_STOP_POWEROFF);
	assert_int_equal(f->vm.stop_status, 0);
	fake_delete(f);

	f = fake_new();
	v = &f->vm.vcpus[0];
	assert_int_equal(platform__init(&f->vm), 0);
	b = ACPI_RESET_VALUE;
	assert_true(ioport_bus__access(&f->vm.iobus, v, ACPI_RESET_PORT, true, &b, 1));
	assert_int_equal(f->vm.stop_reason, VM_STOP_REBOOT);
	fake_delete(f);

	f = fake_new();
	v = &f->vm.vcpus[0];
	assert_int_equal(platform__init(&f->vm), 0);
	b = 0xfe;
	assert_true(ioport_bus__access(&f->vm.iobus, v, 0x64, true, &b, 1));
	assert_int_equal(f->vm.stop_reason, VM_STOP_REBOOT);
	/* PCI config space: nothing there */
	{
		uint8_t d[4] = { 0 };

		assert_true(ioport_bus__access(&f->vm.iobus, v, 0xcfc, false, d, 4));
		assert_memory_equal(d, "\xff\xff\xff\xff", 4);
	}
	fake_delete(f);

	/* CMOS: 2024-02-29 23:59:58 UTC, a Thursday, in BCD */
	assert_int_equal(platform__cmos_read(0x00, 1709251198), 0x58);
	assert_int_equal(platform__cmos_read(0x02, 1709251198), 0x59);
	assert_int_equal(platform__cmos_read(0x04, 1709251198), 0x23);
	assert_int_equal(platform__cmos_read(0x06, 1709251198), 0x05);
	assert_int_equal(platform__cmos_read(0x07, 1709251198), 0x29);
	assert_int_equal(platform__cmos_read(0x08, 1709251198), 0x02);
	assert_int_equal(platform__cmos_read(0x09, 1709251198), 0x24);
	assert_int_equal(platform__cmos_read(0x32, 1709251198), 0x20);
	assert_int_equal(platform__cmos_read(0x0a, 0), 0x26);
	assert_int_equal(platform__cmos_read(0x0d, 0), 0x80);
	assert_int_equal(platform__cmos_read(0x40, 0), 0);
}

/* ---- exit accounting ---- */

/* What the terminal sees of a guest's console bytes: a table of known answers. */
static void filter_str(struct confilter *f, const char *in, size_t len, char *out, size_t size)
{
	char one[CONFILTER_MAX_OUT];
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		size_t n = confilter__byte(f, (uint8_t)in[i], one);

		assert_true(o + n < size);
		memcpy(out + o, one, n);
		o += n;
	}
	o += confilter__end(f, out + o);
	out[o] = '\0';
}

static void vmm_console_filter_escapes_controls_and_keeps_text(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} cases[] = {
#define C(in, want) { in, sizeof(in) - 1, want }
		C("plain text\r\n\tand a tab\b", "plain text\r\n\tand a tab\b"),
		/* OSC 52: write the clipboard */
		C("\033]52;c;ZXZpbA==\007", "\\x1b]52;c;ZXZpbA==\\x07"),
		/* CSI: clear the screen, retitle */
		C("\033[2J\033]0;owned\033\\", "\\x1b[2J\\x1b]0;owned\\x1b\\"),
		C("\x7f\x01\x1f", "\\x7f\\x01\\x1f"),
		/* UTF-8 text passes: e-acute, the euro sign, an emoji */
		C("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
		/* C1 CSI as a code point (U+009B) and as a lone byte */
		C("\xc2\x9b" "2J", "\\xc2\\x9b2J"),
		C("\x9b" "2J", "\\x9b2J"),
		/* bidirectional override, line separator */
		C("a\xe2\x80\xae" "b\xe2\x80\xa8", "a\\xe2\\x80\\xaeb\\xe2\\x80\\xa8"),
		/* overlong, surrogate, past U+10FFFF, broken off, cut at the end */
		C("\xe0\x80\xaf", "\\xe0\\x80\\xaf"),
		C("\xed\xa0\x80", "\\xed\\xa0\\x80"),
		C("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"),
		C("\xe2\x82" "x", "\\xe2\\x82x"),
		C("ok\xf0\x9f\x98", "ok\\xf0\\x9f\\x98"),
		C("\xc0\xaf\xff", "\\xc0\\xaf\\xff"),
#undef C
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct confilter f;

		confilter__init(&f, 0);
		filter_str(&f, cases[i].in, cases[i].len, out, sizeof(out));
		if (strcmp(out, cases[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, out, cases[i].want);
	}
}

/* A flood: the burst goes out, the rest is left out and counted, and a note comes with what follows. */
static void vmm_console_filter_rate_leaves_a_flood_out_and_says_so(void **state)
{
	struct confilter f;
	char note[128];
	uint64_t t = 1000000000ull, sent = 0;

	(void)state;
	confilter__init(&f, t);
	for (int i = 0; i < 4096; i++)	/* 4 MiB of 1 KiB lines at one instant */
		if (confilter__admit(&f, 1024, t, note, sizeof(note)))
			sent += 1024;
	assert_int_equal(sent, CONFILTER_BURST);
	assert_int_equal(f.dropped_total, 4096ull * 1024 - CONFILTER_BURST);
	/* a second later a second's worth fits again, and the first line out says what was left out */
	t += 1000000000ull;
	assert_int_equal(confilter__admit(&f, 100, t, note, sizeof(note)), 1);
	assert_non_null(strstr(note, "3145728 bytes of guest console output left out"));
	assert_int_equal(confilter__admit(&f, 100, t, note, sizeof(note)), 1);
	assert_string_equal(note, "");
}

static void vmm_stats(void **state)
{
	struct fake *f = fake_new();
	struct vcpu_stats *st = &f->vm.vcpus[0].stats;
	char path[] = "/tmp/vmm-stats-XXXXXX", buf[4096];
	unsigned int i;
	FILE *in;
	size_t n;
	int fd;

	(void)state;
	stats__count_exit(st, KVM_EXIT_IO);
	stats__count_exit(st, KVM_EXIT_IO);
	stats__count_exit(st, 1000);
	assert_int_equal(st->exits[KVM_EXIT_IO], 2);
	assert_int_equal(st->exits_other, 1);
	assert_string_equal(stats__exit_name(KVM_EXIT_SHUTDOWN), "SHUTDOWN");
	assert_null(stats__exit_name(1000));
	/* ports: counted per port and direction; a full table counts the rest as untracked */
	stats__count_port(st, 0x3f8, true, 3);
	stats__count_port(st, 0x3f8, false, 1);
	stats__count_port(st, 0x3f8, true, 2);
	assert_int_equal(stats__port_count(st, 0x3f8, true), 5);
	assert_int_equal(stats__port_count(st, 0x3f8, false), 1);
	assert_int_equal(stats__port_count(st, 0x80, true), 0);
	for (i = 0; i < 300; i++)
		stats__count_port(st, (uint16_t)(0x1000 + i), true, 1);
	assert_int_equal(st->ports_untracked, 300 - (STATS_PORT_SLOTS - 2));
	assert_int_equal(stats__port_count(st, 0x3f8, true), 5);
	/* JSON */
	f->vm.stop_reason = VM_STOP_POWEROFF;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stats__write_json(&f->vm, 0, path), 0);
	in = fopen(path, "r");
	assert_non_null(in);
	n = fread(buf, 1, sizeof(buf) - 1, in);
	buf[n] = '\0';
	fclose(in);
	unlink(path);
	assert_non_null(strstr(buf, "\"stop\": \"poweroff\""));
	assert_non_null(strstr(buf, "\"status\": 0"));
	assert_non_null(strstr(buf, "\"IO\": 2"));
	assert_non_null(strstr(buf, "{\"port\": 1016, \"dir\": \"out\", \"count\": 5}"));
	assert_int_equal(stats__write_json(&f->vm, 0, "/nonexistent/dir/x.json"), -ENOENT);
	fake_delete(f);
}

/* ---- the raw recording (record.c) on the fake VM: no KVM, its TSC frequency from a seam ---- */

/*
 * The one KVM answer the recorder needs that a fake VM cannot give: vCPU 0's TSC frequency
 * (KVM_GET_TSC_KHZ on its fd, -1 here).  Everything else goes to the real ioctl (-Wl,--wrap=ioctl).
 */
int __real_ioctl(int fd, unsigned long req, ...);
static uint64_t probe_rip;	/* KVM_GET_REGS of the fake vCPU (fd -1) */
static bool probe_mapped;	/* KVM_TRANSLATE's answer for it */

static void answer_probe_cb(void *v)
{
	vcpu__answer_probe(v);
}

int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd == -1 && req == KVM_GET_TSC_KHZ)
		return 2000000;
	if (fd == -1 && req == KVM_GET_REGS) {	/* vcpu__answer_probe's registers */
		memset(arg, 0, sizeof(struct kvm_regs));
		((struct kvm_regs *)arg)->rip = probe_rip;
		return 0;
	}
	if (fd == -1 && req == KVM_TRANSLATE) {	/* and whether code is mapped there */
		struct kvm_translation *tr = arg;

		tr->valid = probe_mapped;
		tr->physical_address = 0x1000 + (tr->linear_address & 0xfff);
		return 0;
	}
	return __real_ioctl(fd, req, arg);
}

/*
 * A vCPU found twice in a row at the same RIP with no code mapped stops the VM as frozen (121);
 * once is not enough (a probe between a page's unmapping and the fault it takes), a mapped RIP
 * or another RIP starts the count again, and a vCPU nobody probed is left alone.
 */
static void vmm_probe_stops_a_vcpu_stuck_where_nothing_is_mapped(void **state)
{
	struct fake *f = fake_new();
	struct vcpu *v = &f->vm.vcpus[0];
	char err[4096];
	int i;

	(void)state;
	probe_rip = 0xffffffffc068620cull;
	probe_mapped = false;
	vcpu__answer_probe(v);	/* not asked */
	assert_int_equal(v->probe_unmapped, 0);
	for (i = 0; i < 3; i++) {	/* unmapped, mapped, unmapped: never two in a row */
		probe_mapped = i == 1;
		atomic_store(&v->probe, true);
		vcpu__answer_probe(v);
		assert_false(atomic_load(&v->probe));
		assert_int_equal(f->vm.stop_reason, VM_STOP_NONE);
	}
	probe_rip += 0x40;	/* unmapped again, at another RIP: a guest that moves */
	atomic_store(&v->probe, true);
	vcpu__answer_probe(v);
	assert_int_equal(f->vm.stop_reason, VM_STOP_NONE);
	assert_int_equal(v->probe_unmapped, 1);
	atomic_store(&v->probe, true);	/* and there once more: frozen */
	vmm_log_set_level(VMM_LOG_ERR);
	capture_stderr(answer_probe_cb, v, err, sizeof(err));
	vmm_log_set_level(VMM_LOG_NONE);
	assert_int_equal(f->vm.stop_reason, VM_STOP_FROZEN);
	assert_int_equal(f->vm.stop_status, VM_EXIT_FROZEN);
	assert_int_equal(vmm__exit_status(&f->vm), 121);
	assert_non_null(strstr(err, "0xffffffffc068624c"));
	assert_non_null(strstr(err, "where the guest maps no code"));
	fake_delete(f);
}

struct rec_dir {
	char path[64];
	char file[96];
};

static void rec_dir_new(struct rec_dir *d)
{
	snprintf(d->path, sizeof(d->path), "/tmp/vmm-record-XXXXXX");
	assert_non_null(mkdtemp(d->path));
	snprintf(d->file, sizeof(d->file), "%s/vmm.vraw", d->path);
}

static void rec_dir_delete(struct rec_dir *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	assert_int_equal(system(cmd), 0);
}

/* The chunks of a raw recording by type; every chunk whole (the file ends on a chunk boundary). */
struct rec_summary {
	uint64_t size;
	uint64_t chunks[VPERF_RAWREC_NR_TYPES];
	uint64_t records;		/* guest records in GUEST chunks */
	uint64_t last_guest_tsc;	/* of the last TSC_SAMPLE */
};

static void rec_read(const char *path, struct rec_summary *s)
{
	FILE *f = fopen(path, "r");
	struct vperf_rawrec_header h;
	unsigned char *buf = malloc(VPERF_RAWREC_MAX_CHUNK);
	struct vperf_rawrec_chunk c;

	assert_non_null(f);
	assert_non_null(buf);
	memset(s, 0, sizeof(*s));
	assert_int_equal(fread(&h, sizeof(h), 1, f), 1);
	assert_memory_equal(h.magic, VPERF_RAWREC_MAGIC, 8);
	s->size = sizeof(h);
	while (fread(&c, sizeof(c), 1, f) == 1) {
		uint32_t padded = (c.size + 7) & ~7u;

		assert_true(c.type < VPERF_RAWREC_NR_TYPES && c.size <= VPERF_RAWREC_MAX_CHUNK);
		assert_int_equal(fread(buf, 1, padded, f), padded);
		s->size += sizeof(c) + padded;
		s->chunks[c.type]++;
		if (c.type == VPERF_RAWREC_TSC_SAMPLE) {
			assert_int_equal(c.size, sizeof(struct vperf_rawrec_tsc_sample));
			s->last_guest_tsc = ((struct vperf_rawrec_tsc_sample *)buf)->guest_tsc;
		}
		for (uint32_t off = 0; c.type == VPERF_RAWREC_GUEST && off < c.size; s->records++)
			off += ((struct vperf_trace_rec *)(buf + off))->size;
	}
	assert_true(feof(f));
	fclose(f);
	free(buf);
}

/* The guest: a ring of 4 KiB at RING_GPA, registered on vCPU 0. */
#define RING_GPA	0x40000
#define RING_DATA	4096u

static void guest_ring_register(struct fake *f)
{
	struct vperf_trace_ring *r = (void *)(f->ram + RING_GPA);
	uint64_t a[4] = { RING_GPA, RING_DATA + sizeof(*r), 0, 0 };

	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->version = VPERF_TRACE_RING_V2;
	r->data_size = RING_DATA;
	assert_int_equal(pvport__hypercall(&f->vm.vcpus[0], VPERF_HC_TRACE_REGISTER, a), 0);
}

/* One marker into the ring, then TRACE_FLUSH passing guest_tsc. */
static void guest_mark_and_flush(struct fake *f, uint64_t guest_tsc)
{
	struct vperf_trace_ring *r = (void *)(f->ram + RING_GPA);
	unsigned char rec[VPERF_TRACE_REC_MAX];
	uint32_t n = vperf_mark_rec_fill(rec, "loop", 4, guest_tsc, VPERF_TRACE_MARK_INSTANT,
					 guest_tsc);
	uint64_t a[4] = { guest_tsc, 0, 0, 0 };

	vperf_ring_copy_in((unsigned char *)(r + 1), RING_DATA, r->head, rec, n);
	r->head += n;
	assert_true(pvport__hypercall(&f->vm.vcpus[0], VPERF_HC_TRACE_FLUSH, a) >= 0);
}

/*
 * A guest looping on TRACE_FLUSH: its records go into the file, but its clock samples only one
 * per drain of the recorder (here: the last one, at the stop), the tightest of them.
 */
static void vmm_record_one_clock_sample_per_drain(void **state)
{
	struct fake *f = fake_new();
	struct record_config cfg = { .host_events = false };
	struct rec_summary s;
	struct rec_dir d;

	(void)state;
	rec_dir_new(&d);
	cfg.path = d.file;
	assert_int_equal(recorder__new(&f->vm, &cfg, &f->vm.rec), 0);
	vmm_pv_vcpu_enter(&f->vm.vcpus[0]);
	guest_ring_register(f);
	/* guest TSCs 2^40 apart: the largest guest - host is the last flush's */
	for (uint64_t i = 1; i <= 5000; i++)
		guest_mark_and_flush(f, i << 40);
	recorder__stop(f->vm.rec);
	recorder__delete(f->vm.rec);
	f->vm.rec = NULL;
	rec_read(d.file, &s);
	print_message("%" PRIu64 " bytes: %" PRIu64 " guest chunks (%" PRIu64 " records), %" PRIu64
		      " clock samples\n", s.size, s.chunks[VPERF_RAWREC_GUEST], s.records,
		      s.chunks[VPERF_RAWREC_TSC_SAMPLE]);
	assert_int_equal(s.records, 5000);
	assert_int_equal(s.chunks[VPERF_RAWREC_TSC_SAMPLE], 1);
	assert_true(s.last_guest_tsc == 5000ull << 40);
	assert_int_equal(s.chunks[VPERF_RAWREC_END], 1);
	rec_dir_delete(&d);
	fake_delete(f);
}

/* However fast the guest writes and flushes, the file stops at --record-max, on a whole chunk. */
static void vmm_record_max_bounds_a_flushing_guest(void **state)
{
	struct fake *f = fake_new();
	struct record_config cfg = { .host_events = false, .max_bytes = 64 * 1024 };
	struct rec_summary s;
	struct rec_dir d;

	(void)state;
	rec_dir_new(&d);
	cfg.path = d.file;
	assert_int_equal(recorder__new(&f->vm, &cfg, &f->vm.rec), 0);
	vmm_pv_vcpu_enter(&f->vm.vcpus[0]);
	guest_ring_register(f);
	for (uint64_t i = 1; i <= 20000; i++)
		guest_mark_and_flush(f, i);
	recorder__stop(f->vm.rec);
	recorder__delete(f->vm.rec);
	f->vm.rec = NULL;
	rec_read(d.file, &s);
	print_message("--record-max 64 KiB, 20000 flushes of a marker: %" PRIu64 " bytes, %" PRIu64
		      " records\n", s.size, s.records);
	assert_true(s.size <= 64 * 1024);
	assert_true(s.size > 60 * 1024);		/* it recorded up to there */
	assert_true(s.records > 500 && s.records < 20000);
	assert_int_equal(s.chunks[VPERF_RAWREC_END], 0);	/* cut: the reader says so */
	rec_dir_delete(&d);
	fake_delete(f);
}

/*
 * The file is new and its user's alone: mode 0600 whatever the umask; a file already there
 * becomes FILE.old; a symbolic link, even a dangling one, or a directory there is refused and
 * nothing is written through it.
 */
static void vmm_record_file_is_created_new_and_private(void **state)
{
	struct fake *f = fake_new();
	struct record_config cfg = { .host_events = false };
	char target[128], old[128], buf[16] = "";
	struct stat st;
	struct rec_dir d;
	struct recorder *rec;
	mode_t umask_was = umask(0);
	FILE *fp;

	(void)state;
	rec_dir_new(&d);
	cfg.path = d.file;
	assert_int_equal(recorder__new(&f->vm, &cfg, &rec), 0);
	recorder__delete(rec);
	assert_int_equal(lstat(d.file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* again: the first one is kept as .old */
	assert_int_equal(truncate(d.file, 3), 0);
	assert_int_equal(recorder__new(&f->vm, &cfg, &rec), 0);
	recorder__delete(rec);
	snprintf(old, sizeof(old), "%s.old", d.file);
	assert_int_equal(lstat(old, &st), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(lstat(d.file, &st), 0);
	assert_true(st.st_size > 3);
	/* a symbolic link to a file: refused, the file untouched */
	snprintf(target, sizeof(target), "%s/target", d.path);
	fp = fopen(target, "w");
	assert_non_null(fp);
	fputs("mine", fp);
	fclose(fp);
	assert_int_equal(unlink(d.file), 0);
	assert_int_equal(symlink(target, d.file), 0);
	assert_int_equal(recorder__new(&f->vm, &cfg, &rec), -EEXIST);
	fp = fopen(target, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "mine");
	assert_int_equal(lstat(d.file, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* a dangling one: nothing created where it points */
	assert_int_equal(unlink(target), 0);
	assert_int_equal(recorder__new(&f->vm, &cfg, &rec), -EEXIST);
	assert_int_equal(lstat(target, &st), -1);
	/* a directory */
	assert_int_equal(unlink(d.file), 0);
	assert_int_equal(mkdir(d.file, 0700), 0);
	assert_int_equal(recorder__new(&f->vm, &cfg, &rec), -EEXIST);
	umask(umask_was);
	rec_dir_delete(&d);
	fake_delete(f);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(vmm_range_contains),
		cmocka_unit_test(vmm_gpa_to_hva),
		cmocka_unit_test(vmm_ioport_bus),
		cmocka_unit_test(vmm_serial_registers),
		cmocka_unit_test(vmm_serial_interrupts),
		cmocka_unit_test(vmm_bzimage_parse),
		cmocka_unit_test(vmm_initrd_placement),
		cmocka_unit_test(vmm_acpi_tables),
		cmocka_unit_test(vmm_cpuid_patch),
		cmocka_unit_test(vmm_pvport_version_exit),
		cmocka_unit_test(vmm_pvport_ucall),
		cmocka_unit_test(vmm_pvport_event_info),
		cmocka_unit_test(vmm_pv_allowlist),
		cmocka_unit_test(vmm_pvport_io),
		cmocka_unit_test(vmm_dispatch_exits),
		cmocka_unit_test(vmm_platform_ports),
		cmocka_unit_test(vmm_stats),
		cmocka_unit_test(vmm_probe_stops_a_vcpu_stuck_where_nothing_is_mapped),
		cmocka_unit_test(vmm_console_filter_escapes_controls_and_keeps_text),
		cmocka_unit_test(vmm_console_filter_rate_leaves_a_flood_out_and_says_so),
		cmocka_unit_test(vmm_record_one_clock_sample_per_drain),
		cmocka_unit_test(vmm_record_max_bounds_a_flushing_guest),
		cmocka_unit_test(vmm_record_file_is_created_new_and_private),
	};
	size_t i, n = sizeof(tests) / sizeof(tests[0]);

	vmm_log_set_level(VMM_LOG_NONE);
	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < n; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc == 2) {
		for (i = 0; i < n; i++) {
			if (!strcmp(tests[i].name, argv[1]))
				return _cmocka_run_group_tests("vmm", &tests[i], 1, NULL, NULL) ? 1
												: 0;
		}
		fprintf(stderr, "%s: no test named %s\n", argv[0], argv[1]);
		return 2;
	}
	return cmocka_run_group_tests_name("vmm", tests, NULL, NULL) ? 1 : 0;
}
