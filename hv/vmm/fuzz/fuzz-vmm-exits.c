// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vperf-vmm's exit dispatch (vcpu__dispatch_exit) fed port-I/O and MMIO exits
 * with arbitrary ports, sizes, directions, repeat counts, data and addresses, reaching every device
 * on the bus (the 8250 UART and the console behind it, CMOS, POST, i8042, port 0x92, ACPI PM, PCI
 * config, the vperf hypercall port with the guest's registers, the doorbell page), interleaved with
 * guest-memory writes (what the hypercalls point at), host console input and the other exit reasons.
 *
 * Input: a stream of operations (../../core/fuzz/fuzz-input.h), each an op byte (mod 6), a vCPU byte
 * (mod 2) and the op's fields:
 *   0 write RAM   pick gpa, u8 n, n bytes
 *   1 port I/O    u8 flags, pick port, [u8 size], [u32 count, pick data_offset], [4 x pick register],
 *                 up to 16 data bytes.  flags: bit 0 OUT, bits 1-2 size 1, 2, 4 or (3) a raw size
 *                 byte, bit 3 a string I/O of count (mod 4) + 1 elements, bit 4 a raw count and data
 *                 offset (what KVM never reports: must be refused, not followed), bit 5 set RBX,
 *                 RCX, RSI, RDI first (the hypercall port's arguments)
 *   2 MMIO        u8 flags (bit 0 write), pick gpa, u8 len, 8 data bytes
 *   3 other exit  u8 which: INTR, IRQ_WINDOW_OPEN, SYSTEM_EVENT, INTERNAL_ERROR, FAIL_ENTRY, HLT,
 *                 SHUTDOWN, or a raw reason; then u32 type/suberror/ndata
 *   4 console in  u8 n, n bytes (host input into the UART's receive FIFO)
 *   5 hypercall   u8 op, 4 x pick argument (an `out %eax` at the vperf port, the common case)
 * Checked besides ASan/UBSan: a read of a port or MMIO address without a device reads all ones and
 * is counted, a malformed exit stops the vCPU with a VMM error, the vperf port refuses and counts
 * every access but a single 32-bit OUT, the UART's and console's indexes stay in their buffers, and
 * no exit changes guest RAM outside the pages and ring tails the guest registered and the
 * descriptor a successful EVENT_INFO filled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-vmm.h"
#include "fuzz-input.h"
#include "hv-internal.h"

static const uint64_t gpas[] = {
	0, 8, 0x1000, 0x2000, 0x4000, 0x8000, FV_LOW_SIZE - 0x1000, FV_LOW_SIZE - 208,
	FV_LOW_SIZE - 80, FV_LOW_SIZE - 1, FV_LOW_SIZE, FV_HIGH_GPA, FV_HIGH_GPA + 0x1000,
	FV_HIGH_GPA + FV_HIGH_SIZE - 0x1000, FV_HIGH_GPA + FV_HIGH_SIZE - 208,
	FV_HIGH_GPA + FV_HIGH_SIZE, FV_HIGH_GPA - 1, VM_DOORBELL_ADDR, UINT64_MAX,
};

static const uint64_t ports[] = {
	0x3f8, 0x3f9, 0x3fa, 0x3fb, 0x3fc, 0x3fd, 0x3fe, 0x3ff, 0x3f7, 0x70, 0x71, 0x72, 0x80,
	0x64, 0x60, 0x92, 0x600, 0x601, 0x602, 0x603, 0x604, 0xcf8, 0xcfc, 0xcff, 0x5650, 0x5651,
	0x5652, 0x5653, 0x564f, 0x5654, 0x20, 0xffff,
};

static const uint64_t mmio[] = {
	VM_DOORBELL_ADDR, VM_DOORBELL_ADDR + 8, VM_DOORBELL_ADDR + 16, VM_DOORBELL_ADDR + 120,
	VM_DOORBELL_ADDR + 128, VM_DOORBELL_ADDR + 4088, VM_DOORBELL_ADDR + 4095,
	VM_DOORBELL_ADDR + 4096, VM_DOORBELL_ADDR - 8, VM_DOORBELL_ADDR - 1, VM_IOAPIC_ADDR,
	VM_LAPIC_ADDR, FV_LOW_SIZE, 0, UINT64_MAX,
};

static const uint64_t args[] = {
	0, 1, 2, 3, 16, 17, 255, 256, 0x1000, 0x2000, 0x3000, 0x4000, 0x1040, FV_LOW_SIZE - 0x1000,
	FV_LOW_SIZE - 208, FV_LOW_SIZE, FV_HIGH_GPA, FV_HIGH_GPA + FV_HIGH_SIZE - 0x1000,
	100000, 4096 + 64, 1024 + 64, UINT32_MAX, UINT64_MAX,
};

#define PICK(in, t) in_pick(in, t, sizeof(t) / sizeof(t[0]))

/* The port ranges with a device (platform.h, serial.h, pvport.h). */
static const struct { uint16_t base, len; } devices[] = {
	{ SERIAL_COM1_BASE, SERIAL_NR_REGS }, { 0x70, 2 }, { 0x80, 1 }, { 0x64, 1 }, { 0x92, 1 },
	{ 0x600, 4 }, { 0xcf8, 8 }, { VPERF_DEFAULT_PORT, 4 },
};

static int device_at(uint16_t port, unsigned int size)
{
	for (unsigned int i = 0; i < sizeof(devices) / sizeof(devices[0]); i++)
		if (port >= devices[i].base && port + size <= devices[i].base + devices[i].len)
			return (int)i;
	return -1;
}

static bool all_ones(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xff)
			return false;
	return true;
}

/* Guest RAM the device may write: the registered pages, the rings' tails (before or after). */
static void writable(const struct vm *vm, uint64_t (*r)[2], unsigned int *n)
{
	const struct vperf_hv *hv = vm->pv;

	for (int i = 0; i < hv->cfg.nr_vcpus; i++) {
		if (hv->vcpus[i].page) {
			r[*n][0] = hv->vcpus[i].page_gpa;
			r[(*n)++][1] = VPERF_PAGE_SIZE;
		}
		if (hv->vcpus[i].trace_len) {
			r[*n][0] = hv->vcpus[i].trace_gpa + offsetof(struct vperf_trace_ring, tail);
			r[(*n)++][1] = 8;
		}
	}
}

/* A successful EVENT_INFO wrote one descriptor at RCX: RAM the guest asked the device to write. */
static void event_info_writes(uint32_t op, int64_t ret, uint64_t gpa, uint64_t (*r)[2],
			      unsigned int *n)
{
	if (op == VPERF_HC_EVENT_INFO && ret >= 0) {
		r[*n][0] = gpa;
		r[(*n)++][1] = sizeof(struct vperf_event_desc);
	}
}

/*
 * Is run's port exit a hypercall (a 32-bit OUT of one item to the vperf port, its data inside
 * kvm_run)?  If so, the RAM its EVENT_INFO may have written is added to r.
 */
static bool hypercall_exit(const struct kvm_run *run, uint64_t (*r)[2], unsigned int *n)
{
	if (run->exit_reason != KVM_EXIT_IO || run->io.direction != KVM_EXIT_IO_OUT ||
	    run->io.port != VPERF_DEFAULT_PORT || run->io.size != 4 || run->io.count != 1 ||
	    run->io.data_offset < sizeof(*run) || run->io.data_offset > FV_RUN_SIZE - 4)
		return false;
	event_info_writes(get_le32((const uint8_t *)run + run->io.data_offset),
			  (int64_t)run->s.regs.regs.rax, run->s.regs.regs.rcx, r, n);
	return true;
}

static void check_ram(const struct vm *vm, const uint8_t *before, uint64_t (*r)[2], unsigned int n)
{
	uint8_t *copy;

	if (!memcmp(vm->ram, before, FV_RAM_SIZE))
		return;
	copy = malloc(FV_RAM_SIZE);
	if (!copy)
		abort();
	memcpy(copy, vm->ram, FV_RAM_SIZE);
	for (unsigned int i = 0; i < n; i++) {
		long off = fv_ram_offset(r[i][0], r[i][1]);

		if (off < 0)
			abort();	/* the device holds a page that is not RAM */
		memcpy(copy + off, before + off, r[i][1]);
	}
	if (!memcmp(copy, before, FV_RAM_SIZE)) {
		free(copy);
		return;
	}
	/* a write outside what the guest registered: say where, for whoever replays it */
	for (size_t i = 0; i < FV_RAM_SIZE; i++) {
		if (copy[i] == before[i])
			continue;
		fprintf(stderr, "fuzz-vmm-exits: RAM offset %#zx changed (%#x -> %#x) outside the %u "
			"regions the guest registered\n", i, before[i], copy[i], n);
		for (unsigned int k = 0; k < n; k++)
			fprintf(stderr, "fuzz-vmm-exits:   region %#llx + %llu\n",
				(unsigned long long)r[k][0], (unsigned long long)r[k][1]);
		break;
	}
	abort();
}

static void check_devices(const struct vm *vm)
{
	const struct serial8250 *s = &vm->uart;

	if (s->rx_count > SERIAL_RX_SIZE || s->rx_head >= SERIAL_RX_SIZE ||
	    vm->console.out_len >= CONSOLE_OUT_BUF || vm->console.line_len >= CONSOLE_LINE_MAX ||
	    (vm->stop_reason != VM_STOP_NONE) != vm__stopping((struct vm *)vm))
		abort();
}

static void port_io(struct vm *vm, struct vcpu *v, struct fuzz_in *in, uint64_t (*regions)[2],
		    unsigned int *nr)
{
	struct kvm_run *run = v->run;
	uint8_t flags = in_u8(in), buf[16];
	uint16_t port = (uint16_t)PICK(in, ports);
	uint8_t size = (flags >> 1 & 3) == 3 ? in_u8(in) : 1 << (flags >> 1 & 3);
	uint32_t count = flags & 8 ? (uint32_t)(in_u8(in) % 4) + 1 : 1;
	uint64_t off = FV_PIO_OFFSET, bad_before = v->stats.pv_bad_access;
	uint64_t unhandled = v->stats.io_unhandled, counted = stats__port_count(&v->stats, port,
										flags & 1);
	uint64_t untracked = v->stats.ports_untracked;
	bool malformed;
	int dev, ret;

	if (flags & 16) {
		count = in_u32(in);
		off = PICK(in, args);
	}
	if (flags & 32) {
		run->s.regs.regs.rbx = PICK(in, args);
		run->s.regs.regs.rcx = PICK(in, args);
		run->s.regs.regs.rsi = PICK(in, args);
		run->s.regs.regs.rdi = PICK(in, args);
	}
	in_bytes(in, buf, sizeof(buf));
	if (in->over)
		return;
	malformed = (size != 1 && size != 2 && size != 4) || !count || off < sizeof(*run) ||
		    off > FV_RUN_SIZE ||
		    (uint64_t)size * count > FV_RUN_SIZE - off;
	if (!malformed) {
		memset((uint8_t *)run + off, 0x5a, (size_t)size * count);
		if (flags & 1)
			memcpy((uint8_t *)run + off, buf, MIN((size_t)size * count, sizeof(buf)));
	}
	ret = fv_io(v, port, flags & 1, size, count, off);
	if (malformed) {
		if (ret >= 0 || !vm__stopping(vm))
			abort();
		return;
	}
	if (ret)
		abort();
	if (stats__port_count(&v->stats, port, flags & 1) + v->stats.ports_untracked !=
	    counted + untracked + count)
		abort();
	dev = device_at(port, size);
	if (dev < 0) {
		if (v->stats.io_unhandled != unhandled + count ||
		    (!(flags & 1) && !all_ones((uint8_t *)run + off, (size_t)size * count)))
			abort();
		return;
	}
	if (devices[dev].base == VPERF_DEFAULT_PORT) {
		bool call = hypercall_exit(run, regions, nr);

		if (v->stats.pv_bad_access != bad_before + (call ? 0 : count) ||
		    (!(flags & 1) && !all_ones((uint8_t *)run + off, (size_t)size * count)))
			abort();
	} else if (devices[dev].base == 0xcf8 || devices[dev].base == 0x80) {
		if (!(flags & 1) && !all_ones((uint8_t *)run + off, (size_t)size * count))
			abort();	/* no PCI devices, nothing at the POST port */
	}
}

static void mmio_exit(struct vm *vm, struct vcpu *v, struct fuzz_in *in)
{
	uint8_t flags = in_u8(in), data[8];
	uint64_t gpa = PICK(in, mmio);
	uint32_t len = in_u8(in);
	uint64_t bell = v->stats.pv_doorbell, ur = v->stats.mmio_unhandled_read;
	uint64_t uw = v->stats.mmio_unhandled_write;
	bool in_page = gpa >= VM_DOORBELL_ADDR && gpa - VM_DOORBELL_ADDR < VPERF_DOORBELL_SIZE;

	in_bytes(in, data, sizeof(data));
	if (in->over)
		return;
	if (fv_mmio(v, gpa, len, flags & 1, data))
		abort();
	if (in_page) {
		if (v->stats.pv_doorbell != bell + 1)
			abort();
		if (flags & 1 && memcmp(v->run->mmio.data, data, 8))
			abort();	/* a write is ignored: nothing comes back */
		return;
	}
	if (flags & 1 ? v->stats.mmio_unhandled_write != uw + 1 :
			v->stats.mmio_unhandled_read != ur + 1 ||
				!all_ones(v->run->mmio.data, MIN(len, 8u)))
		abort();
}

static void other_exit(struct vm *vm, struct vcpu *v, struct fuzz_in *in, uint64_t (*regions)[2],
		       unsigned int *nr)
{
	static const uint32_t reasons[] = {
		KVM_EXIT_INTR, KVM_EXIT_IRQ_WINDOW_OPEN, KVM_EXIT_SYSTEM_EVENT,
		KVM_EXIT_INTERNAL_ERROR, KVM_EXIT_FAIL_ENTRY, KVM_EXIT_HLT, KVM_EXIT_SHUTDOWN,
	};
	struct kvm_run *run = v->run;
	uint8_t which = in_u8(in);
	uint32_t reason = which < 7 * 32 ? reasons[which % 7] : in_u32(in), x = in_u32(in);
	int ret;

	if (in->over)
		return;
	run->exit_reason = reason;
	switch (reason) {
	case KVM_EXIT_SYSTEM_EVENT:
		run->system_event.type = x % 4;
		break;
	case KVM_EXIT_INTERNAL_ERROR:
		run->internal.suberror = x & 0xff;
		run->internal.ndata = x >> 8;
		break;
	case KVM_EXIT_FAIL_ENTRY:
		run->fail_entry.hardware_entry_failure_reason = x;
		break;
	}
	ret = vcpu__dispatch_exit(v);
	/* (a raw IO or MMIO reason replays the last such exit's fields: a hypercall again, whose
	 * EVENT_INFO may fill the descriptor its RCX names, as in port_io()) */
	hypercall_exit(run, regions, nr);
	if (reason != KVM_EXIT_IO && reason != KVM_EXIT_MMIO &&
	    (reason == KVM_EXIT_INTR || reason == KVM_EXIT_IRQ_WINDOW_OPEN) != (ret == 0))
		abort();
	if (ret < 0 && !vm__stopping(vm))
		abort();	/* a vCPU that stops says why */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = in_new(data, size);
	uint8_t *before = malloc(FV_RAM_SIZE);
	struct vm *vm = before ? fv_new() : NULL;

	while (vm && !in_empty(&in)) {
		uint8_t op = in_u8(&in) % 6;
		struct vcpu *v = &vm->vcpus[in_u8(&in) % FV_NR_VCPUS];
		uint64_t regions[2 * 2 * FV_NR_VCPUS + 1][2];
		unsigned int nr = 0;

		memcpy(before, vm->ram, FV_RAM_SIZE);
		writable(vm, regions, &nr);
		switch (op) {
		case 0: {
			uint64_t gpa = PICK(&in, gpas);
			uint8_t buf[255], n = in_u8(&in);

			if (in_bytes(&in, buf, n))
				fv_ram_write(vm, gpa, buf, n);
			continue;	/* the guest, not the VMM, changed RAM */
		}
		case 1:
			port_io(vm, v, &in, regions, &nr);
			break;
		case 2:
			mmio_exit(vm, v, &in);
			break;
		case 3:
			other_exit(vm, v, &in, regions, &nr);
			break;
		case 4: {
			uint8_t buf[255], n = in_u8(&in);

			if (in_bytes(&in, buf, n) && serial8250__receive(&vm->uart, buf, n) > n)
				abort();
			break;
		}
		case 5: {
			uint8_t hc = in_u8(&in);
			uint64_t a[4];
			int64_t ret;

			for (int i = 0; i < 4; i++)	/* in order: an initializer list has none */
				a[i] = PICK(&in, args);

			if (in.over)
				break;
			ret = fv_hypercall(v, hc % (VPERF_HC_NR_OPS + 1), a);
			if (ret < 0 && -ret > VPERF_ESTATE)
				abort();	/* an error code the ABI does not define */
			event_info_writes(hc % (VPERF_HC_NR_OPS + 1), ret, a[1], regions, &nr);
			break;
		}
		}
		writable(vm, regions, &nr);
		check_ram(vm, before, regions, nr);
		check_devices(vm);
	}
	if (vm)
		fv_delete(vm);
	free(before);
	return 0;
}
