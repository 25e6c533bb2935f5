// SPDX-License-Identifier: MIT
/* ACPI tables (see acpi.h). Layouts from the ACPI 6.5 specification, chapter 5. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "acpi.h"
#include "log.h"
#include "vm.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "ACPI tables are little-endian, like the host");

#define ACPI_OEM_ID		"VPERF "
#define ACPI_OEM_TABLE_ID	"VPERFVMM"
#define ACPI_CREATOR_ID		"VPRF"
#define ACPI_HYPERVISOR_ID	"VPERFVMM"

struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));

struct acpi_gas {			/* Generic Address Structure */
	uint8_t space_id;
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
} __attribute__((packed));

#define ACPI_GAS_SYSTEM_IO	1
#define ACPI_GAS_ACCESS_BYTE	1

struct acpi_rsdp {
	char signature[8];
	uint8_t checksum;		/* bytes 0..19 */
	char oem_id[6];
	uint8_t revision;
	uint32_t rsdt_address;
	uint32_t length;
	uint64_t xsdt_address;
	uint8_t extended_checksum;	/* all 36 bytes */
	uint8_t reserved[3];
} __attribute__((packed));

struct acpi_fadt {
	struct acpi_header h;
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
	uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk;
	uint32_t pm2_cnt_blk, pm_tmr_blk, gpe0_blk, gpe1_blk;
	uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;
	uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
	uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
	uint8_t duty_offset, duty_width, day_alrm, mon_alrm, century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk, x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk, x_pm_tmr_blk, x_gpe0_blk, x_gpe1_blk;
	struct acpi_gas sleep_control;
	struct acpi_gas sleep_status;
	uint64_t hypervisor_vendor_id;
} __attribute__((packed));

#define FADT_F_WBINVD		(1u << 0)
#define FADT_F_PWR_BUTTON	(1u << 4)	/* no fixed-feature power button */
#define FADT_F_SLP_BUTTON	(1u << 5)	/* no fixed-feature sleep button */
#define FADT_F_RESET_REG_SUP	(1u << 10)
#define FADT_F_HW_REDUCED_ACPI	(1u << 20)
#define FADT_BOOT_NO_VGA	(1u << 2)
#define FADT_BOOT_NO_CMOS_RTC	(1u << 5)

struct acpi_madt {
	struct acpi_header h;
	uint32_t lapic_addr;
	uint32_t flags;
} __attribute__((packed));

struct madt_lapic {
	uint8_t type, length, processor_uid, apic_id;
	uint32_t flags;
} __attribute__((packed));

struct madt_ioapic {
	uint8_t type, length, id, reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));

struct madt_iso {			/* interrupt source override */
	uint8_t type, length, bus, source;
	uint32_t gsi;
	uint16_t flags;
} __attribute__((packed));

struct madt_lapic_nmi {
	uint8_t type, length, processor_uid;
	uint16_t flags;
	uint8_t lint;
} __attribute__((packed));

#define MADT_LAPIC		0
#define MADT_IOAPIC		1
#define MADT_ISO		2
#define MADT_LAPIC_NMI		4
#define MADT_LAPIC_ENABLED	1
#define MPS_INTI_ACTIVE_HIGH	0x1
#define MPS_INTI_EDGE		0x4

_Static_assert(sizeof(struct acpi_header) == 36, "ACPI header");
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS");
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP");
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT revision 6");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT flags");
_Static_assert(offsetof(struct acpi_fadt, reset_reg) == 116, "FADT reset register");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT");
_Static_assert(offsetof(struct acpi_fadt, sleep_control) == 244, "FADT sleep control");
_Static_assert(sizeof(struct acpi_madt) == 44, "MADT");
_Static_assert(sizeof(struct madt_lapic) == 8, "MADT local APIC");
_Static_assert(sizeof(struct madt_ioapic) == 12, "MADT IO-APIC");
_Static_assert(sizeof(struct madt_iso) == 10, "MADT interrupt source override");
_Static_assert(sizeof(struct madt_lapic_nmi) == 6, "MADT local APIC NMI");

uint8_t acpi__checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum = (uint8_t)(sum + *p++);
	return sum;
}

/* ---- a bump allocator over the area ---- */

struct area {
	uint8_t *base;
	uint64_t gpa;
	size_t size, used;
	struct acpi_layout *layout;
};

static void *area_alloc(struct area *a, const char *sig, size_t len)
{
	size_t off = ALIGN_UP(a->used, (size_t)16);
	struct acpi_layout *l = a->layout;

	if (off > a->size || len > a->size - off || l->nr == ACPI_MAX_TABLES)
		return NULL;
	a->used = off + len;
	memcpy(l->tables[l->nr].sig, sig, 4);
	l->tables[l->nr].sig[4] = '\0';
	l->tables[l->nr].offset = off;
	l->tables[l->nr].len = len;
	l->nr++;
	memset(a->base + off, 0, len);
	return a->base + off;
}

static uint64_t area_gpa(const struct area *a, const void *p)
{
	return a->gpa + (uint64_t)((const uint8_t *)p - a->base);
}

static void header_init(struct acpi_header *h, const char *sig, size_t len, uint8_t revision)
{
	memcpy(h->signature, sig, 4);
	h->length = (uint32_t)len;
	h->revision = revision;
	memcpy(h->oem_id, ACPI_OEM_ID, 6);
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, ACPI_CREATOR_ID, 4);
	h->creator_revision = 1;
}

static void header_finish(struct acpi_header *h)
{
	h->checksum = 0;
	h->checksum = (uint8_t)-acpi__checksum((const uint8_t *)h, h->length);
}

/* ---- AML (ACPI Machine Language) for the DSDT ---- */

struct aml {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

#define AML_ZERO		0x00
#define AML_NAME		0x08
#define AML_BYTE_PREFIX		0x0a
#define AML_DWORD_PREFIX	0x0c
#define AML_SCOPE		0x10
#define AML_BUFFER		0x11
#define AML_PACKAGE		0x12
#define AML_EXT_PREFIX		0x5b
#define AML_EXT_DEVICE		0x82
#define AML_ROOT_CHAR		'\\'

static void aml_bytes(struct aml *a, const void *src, size_t n)
{
	if (a->overflow || n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	memcpy(a->p + a->len, src, n);
	a->len += n;
}

static void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

static void aml_dword(struct aml *a, uint32_t v)
{
	uint8_t b[4];

	put_le32(b, v);
	aml_byte(a, AML_DWORD_PREFIX);
	aml_bytes(a, b, 4);
}

static void aml_nameseg(struct aml *a, const char *seg)
{
	aml_bytes(a, seg, 4);
}

/* A package starts after its opcode; aml_pkg_end() inserts the PkgLength, which counts itself. */
static size_t aml_pkg_begin(const struct aml *a)
{
	return a->len;
}

static void aml_pkg_end(struct aml *a, size_t start)
{
	size_t body = a->len - start, total;
	uint8_t enc[4];
	unsigned int n, i;

	if (a->overflow)
		return;
	if (body + 1 <= 0x3f) {
		n = 1;
		total = body + 1;
		enc[0] = (uint8_t)total;
	} else {
		for (n = 2; n <= 4; n++) {
			total = body + n;
			if (total < (1ULL << (4 + 8 * (n - 1))))
				break;
		}
		if (n > 4) {
			a->overflow = true;
			return;
		}
		enc[0] = (uint8_t)((n - 1) << 6 | (total & 0xf));
		for (i = 1; i < n; i++)
			enc[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	}
	if (n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	memmove(a->p + start + n, a->p + start, body);
	memcpy(a->p + start, enc, n);
	a->len += n;
}

/* EISA ID "PNP0501": three 5-bit letters and four hex digits, stored big-endian in a dword. */
static uint32_t eisa_id(const char *id)
{
	uint32_t v = (uint32_t)(id[0] - '@') << 26 | (uint32_t)(id[1] - '@') << 21 |
		     (uint32_t)(id[2] - '@') << 16;
	unsigned int i;

	for (i = 3; i < 7; i++) {
		char c = id[i];
		uint32_t d = (uint32_t)(c >= 'A' ? c - 'A' + 10 : c - '0');

		v |= d << (4 * (6 - i));
	}
	return __builtin_bswap32(v);
}

/* Device (NAME) { _HID hid, _UID 0, _CRS { IO (port, nports), IRQNoFlags (irq) } } */
static void dsdt_device(struct aml *a, const char *name, const char *hid, uint16_t port,
			uint8_t nports, uint8_t irq)
{
	const uint8_t port_lo = (uint8_t)port, port_hi = (uint8_t)(port >> 8);
	const uint16_t irq_mask = (uint16_t)(1u << irq);
	const uint8_t crs[] = {
		/* IO (Decode16, port, port, 1, nports) */
		0x47, 0x01, port_lo, port_hi, port_lo, port_hi, 0x01, nports,
		/* IRQNoFlags () {irq}: edge, active high, exclusive */
		0x22, (uint8_t)irq_mask, (uint8_t)(irq_mask >> 8),
		/* End tag */
		0x79, 0x00,
	};
	size_t dev, buf;

	aml_byte(a, AML_EXT_PREFIX);
	aml_byte(a, AML_EXT_DEVICE);
	dev = aml_pkg_begin(a);
	aml_nameseg(a, name);
	aml_byte(a, AML_NAME);
	aml_nameseg(a, "_HID");
	aml_dword(a, eisa_id(hid));
	aml_byte(a, AML_NAME);
	aml_nameseg(a, "_UID");
	aml_byte(a, AML_ZERO);
	aml_byte(a, AML_NAME);
	aml_nameseg(a, "_CRS");
	aml_byte(a, AML_BUFFER);
	buf = aml_pkg_begin(a);
	aml_byte(a, AML_BYTE_PREFIX);
	aml_byte(a, (uint8_t)sizeof(crs));
	aml_bytes(a, crs, sizeof(crs));
	aml_pkg_end(a, buf);
	aml_pkg_end(a, dev);
}

static void dsdt_body(struct aml *a, const struct acpi_config *cfg)
{
	size_t pkg, scope;

	/* Name (_S5, Package (4) { 5, 0, 0, 0 }): SLP_TYP 5 for poweroff */
	aml_byte(a, AML_NAME);
	aml_nameseg(a, "_S5_");
	aml_byte(a, AML_PACKAGE);
	pkg = aml_pkg_begin(a);
	aml_byte(a, 4);
	aml_byte(a, AML_BYTE_PREFIX);
	aml_byte(a, ACPI_SLP_TYP_S5);
	aml_byte(a, AML_ZERO);
	aml_byte(a, AML_ZERO);
	aml_byte(a, AML_ZERO);
	aml_pkg_end(a, pkg);

	/* Scope (\_SB) { COM1, and the vperf device when it has a port } */
	aml_byte(a, AML_SCOPE);
	scope = aml_pkg_begin(a);
	aml_byte(a, AML_ROOT_CHAR);
	aml_nameseg(a, "_SB_");
	dsdt_device(a, "COM1", "PNP0501", cfg->serial_port, 8, cfg->serial_irq);
	if (cfg->vperf_port)
		dsdt_device(a, "VPRF", ACPI_VPERF_HID, cfg->vperf_port, 4, cfg->vperf_irq);
	aml_pkg_end(a, scope);
}

/* ---- tables ---- */

static struct acpi_header *build_dsdt(struct area *ar, const struct acpi_config *cfg)
{
	uint8_t body[512];
	struct aml a = { .p = body, .cap = sizeof(body) };
	struct acpi_header *h;

	dsdt_body(&a, cfg);
	if (a.overflow)
		return NULL;
	h = area_alloc(ar, "DSDT", sizeof(*h) + a.len);
	if (!h)
		return NULL;
	header_init(h, "DSDT", sizeof(*h) + a.len, 2);	/* revision 2: 64-bit AML integers */
	memcpy(h + 1, body, a.len);
	header_finish(h);
	return h;
}

static void gas_port(struct acpi_gas *g, uint16_t port)
{
	*g = (struct acpi_gas){
		.space_id = ACPI_GAS_SYSTEM_IO, .bit_width = 8, .bit_offset = 0,
		.access_size = ACPI_GAS_ACCESS_BYTE, .address = port,
	};
}

static struct acpi_fadt *build_fadt(struct area *ar, uint64_t dsdt)
{
	struct acpi_fadt *f = area_alloc(ar, "FACP", sizeof(*f));

	if (!f)
		return NULL;
	header_init(&f->h, "FACP", sizeof(*f), 6);
	f->minor_version = 5;				/* ACPI 6.5 */
	f->dsdt = (uint32_t)dsdt;
	f->x_dsdt = dsdt;
	f->flags = FADT_F_WBINVD | FADT_F_PWR_BUTTON | FADT_F_SLP_BUTTON | FADT_F_RESET_REG_SUP |
		   FADT_F_HW_REDUCED_ACPI;
	/*
	 * No VGA to probe, no CMOS RTC (the guest takes wall-clock time from kvm-clock), no 8042
	 * (bit 1 clear).
	 */
	f->iapc_boot_arch = FADT_BOOT_NO_VGA | FADT_BOOT_NO_CMOS_RTC;
	gas_port(&f->reset_reg, ACPI_RESET_PORT);
	f->reset_value = ACPI_RESET_VALUE;
	gas_port(&f->sleep_control, ACPI_SLEEP_CTL_PORT);
	gas_port(&f->sleep_status, ACPI_SLEEP_STS_PORT);
	memcpy(&f->hypervisor_vendor_id, ACPI_HYPERVISOR_ID, 8);
	header_finish(&f->h);
	return f;
}

static struct acpi_madt *build_madt(struct area *ar, const struct acpi_config *cfg)
{
	size_t len = sizeof(struct acpi_madt) + cfg->nr_vcpus * sizeof(struct madt_lapic) +
		     sizeof(struct madt_ioapic) + sizeof(struct madt_iso) +
		     sizeof(struct madt_lapic_nmi);
	struct acpi_madt *m = area_alloc(ar, "APIC", len);
	uint8_t *p;
	unsigned int i;

	if (!m)
		return NULL;
	header_init(&m->h, "APIC", len, 5);
	m->lapic_addr = cfg->lapic_addr;
	m->flags = 0; /* no PC-AT 8259s to mask: hardware-reduced, the guest uses the IO-APIC */
	p = (uint8_t *)(m + 1);
	for (i = 0; i < cfg->nr_vcpus; i++) {
		struct madt_lapic e = {
			.type = MADT_LAPIC, .length = sizeof(e), .processor_uid = (uint8_t)i,
			.apic_id = (uint8_t)i, .flags = MADT_LAPIC_ENABLED,
		};

		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	{
		struct madt_ioapic e = {
			.type = MADT_IOAPIC, .length = sizeof(e), .id = cfg->ioapic_id,
			.address = cfg->ioapic_addr, .gsi_base = 0,
		};

		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	{
		/* KVM wires the PIT (ISA IRQ 0) to IO-APIC pin 2, as PC firmware describes it. */
		struct madt_iso e = {
			.type = MADT_ISO,
			.length = sizeof(e),
			.bus = 0,
			.source = 0,
			.gsi = 2,
			.flags = 0,
		};

		memcpy(p, &e, sizeof(e));
		p += sizeof(e);
	}
	{
		struct madt_lapic_nmi e = {
			.type = MADT_LAPIC_NMI,
			.length = sizeof(e),
			.processor_uid = 0xff, /* all */
			.flags = MPS_INTI_ACTIVE_HIGH | MPS_INTI_EDGE,
			.lint = 1,
		};

		memcpy(p, &e, sizeof(e));
	}
	header_finish(&m->h);
	return m;
}

int acpi__build(uint8_t *base, uint64_t gpa, size_t size, const struct acpi_config *cfg,
		struct acpi_layout *out)
{
	struct area ar = { .base = base, .gpa = gpa, .size = size, .layout = out };
	const size_t nr_entries = 2;
	struct acpi_header *xsdt, *rsdt, *dsdt;
	struct acpi_fadt *fadt;
	struct acpi_madt *madt;
	struct acpi_rsdp *rsdp;
	uint64_t fadt_gpa, madt_gpa;

	memset(out, 0, sizeof(*out));
	/*
	 * APIC IDs are 8 bits in the MADT, the COM1 IRQ descriptor covers ISA IRQs 0..15, and the
	 * tables must be below 4 GiB for the RSDT.
	 */
	if (cfg->nr_vcpus == 0 || cfg->nr_vcpus > 255 || cfg->serial_irq > 15 || cfg->vperf_irq > 15 ||
	    gpa + size > 0x100000000ULL)
		return -EINVAL;
	/*
	 * RSDP first: at the 16-byte aligned start of the area, inside the BIOS area the OS scans.
	 */
	rsdp = area_alloc(&ar, "RSDP", sizeof(*rsdp));
	xsdt = rsdp ? area_alloc(&ar, "XSDT", sizeof(*xsdt) + nr_entries * 8) : NULL;
	rsdt = xsdt ? area_alloc(&ar, "RSDT", sizeof(*rsdt) + nr_entries * 4) : NULL;
	dsdt = rsdt ? build_dsdt(&ar, cfg) : NULL;
	fadt = dsdt ? build_fadt(&ar, area_gpa(&ar, dsdt)) : NULL;
	madt = fadt ? build_madt(&ar, cfg) : NULL;
	if (!madt)
		return -ENOSPC;

	fadt_gpa = area_gpa(&ar, fadt);
	madt_gpa = area_gpa(&ar, madt);
	header_init(xsdt, "XSDT", sizeof(*xsdt) + nr_entries * 8, 1);
	put_le64((uint8_t *)(xsdt + 1), fadt_gpa);
	put_le64((uint8_t *)(xsdt + 1) + 8, madt_gpa);
	header_finish(xsdt);
	header_init(rsdt, "RSDT", sizeof(*rsdt) + nr_entries * 4, 1);
	put_le32((uint8_t *)(rsdt + 1), (uint32_t)fadt_gpa);
	put_le32((uint8_t *)(rsdt + 1) + 4, (uint32_t)madt_gpa);
	header_finish(rsdt);

	memcpy(rsdp->signature, "RSD PTR ", 8);
	memcpy(rsdp->oem_id, ACPI_OEM_ID, 6);
	rsdp->revision = 2;
	rsdp->rsdt_address = (uint32_t)area_gpa(&ar, rsdt);
	rsdp->length = sizeof(*rsdp);
	rsdp->xsdt_address = area_gpa(&ar, xsdt);
	rsdp->checksum = (uint8_t)-acpi__checksum((const uint8_t *)rsdp, 20);
	rsdp->extended_checksum = (uint8_t)-acpi__checksum((const uint8_t *)rsdp, sizeof(*rsdp));

	out->rsdp_gpa = area_gpa(&ar, rsdp);
	out->used = ar.used;
	return 0;
}

int acpi__setup(struct vm *vm, uint64_t *rsdp)
{
	struct acpi_config cfg = {
		.nr_vcpus = vm->cfg.nr_vcpus,
		.lapic_addr = VM_LAPIC_ADDR,
		.ioapic_addr = VM_IOAPIC_ADDR,
		.ioapic_id = 0,			/* KVM's in-kernel IO-APIC resets to ID 0 */
		.serial_port = SERIAL_COM1_BASE,
		.serial_irq = SERIAL_COM1_IRQ,
		.vperf_port = VPERF_DEFAULT_PORT,
		.vperf_irq = VPERF_DEFAULT_GSI,
	};
	struct acpi_layout layout;
	uint8_t *area = vm__gpa_to_hva(vm, ACPI_AREA_GPA, ACPI_AREA_SIZE);
	int err;

	if (!area)
		return -EFAULT;
	err = acpi__build(area, ACPI_AREA_GPA, ACPI_AREA_SIZE, &cfg, &layout);
	if (err) {
		pr_err("building the ACPI tables: %s", strerror(-err));
		return err;
	}
	*rsdp = layout.rsdp_gpa;
	return 0;
}
