// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace-ring consumer and the placement rules of pages and rings
 * (TRACE_REGISTER, TRACE_FLUSH, PAGE_REGISTER, SNAPSHOT) against a model of docs/abi.md 2.2 and
 * 2.5, with the guest rewriting its rings' headers in between.
 *
 * Guest RAM is two regions, [0, 32 KiB) (RAM at GPA 0, as in vperf-vmm, where a ring may start at
 * GPA 0 but a page may not: PAGE_REGISTER 0 unregisters) and [1 MiB, 1 MiB + 32 KiB), on 2 vCPUs.
 *
 * Input: a stream of operations (fuzz-input.h), each an op byte (mod 7), a vCPU byte (mod 3; 2 is
 * the bad index -1) and the op's fields:
 *   0 write RAM       u16 offset into the 64 KiB image, u8 n, n bytes
 *   1 TRACE_REGISTER  pick gpa, pick len
 *   2 TRACE_FLUSH     -
 *   3 PAGE_REGISTER   pick gpa
 *   4 produce         u16 n: the guest's producer sets head = tail + n in the vCPU's ring
 *   5 ring header     pick head, pick tail: written into the vCPU's ring as the guest likes
 *   6 SNAPSHOT        -
 *   7 append record   u8 type, u8 extra, u16 flip, 48 bytes of fields: a version-2 record of that
 *                     type (valid unless the fields say otherwise) written at head, wrapping, head
 *                     advanced, version set to 2; flip (if < size) flips one byte of it
 * (pick: fuzz-input.h's in_pick over the tables below.)  Every result must be the one the model predicts, and every call must leave guest RAM
 * as the ABI says: a flush writes only the ring's tail, a page registration only its page, a
 * refused call nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "fake-vm.h"
#include "hv-internal.h"
#include "fuzz-input.h"

#define R0_GPA		0ull
#define R1_GPA		FAKE_RAM_BASE
#define REGION		(FAKE_RAM_SIZE / 2)
#define NR_VCPUS	2
#define RING_HDR	sizeof(struct vperf_trace_ring)

static const uint64_t gpas[] = {
	R0_GPA, R0_GPA + 0x1000, R0_GPA + 0x2000, R0_GPA + 0x3000, R0_GPA + 0x4000,
	R0_GPA + REGION - 0x2000, R0_GPA + REGION - 0x1000, R0_GPA + REGION,
	R1_GPA, R1_GPA + 0x1000, R1_GPA + 0x2000, R1_GPA + 0x4000, R1_GPA + REGION - 0x1000,
	R1_GPA + REGION, R1_GPA - 0x1000, UINT64_MAX & ~0xfffull, 1ull << 63,
};

static const uint64_t lens[] = {
	RING_HDR + 1, RING_HDR + 64, RING_HDR + 256, RING_HDR + 1024, RING_HDR + 2048,
	RING_HDR + 4096, RING_HDR + 8192, RING_HDR + 16384, RING_HDR + REGION,
	RING_HDR + (8u << 20), RING_HDR + (16u << 20), 16u << 20, RING_HDR, 0, UINT64_MAX,
	RING_HDR + (1ull << 63),
};

static const uint64_t offsets[] = {
	0, 1, 63, 64, 256, 4095, 4096, 4097, 8192, 16384, 1ull << 32, 1ull << 63, UINT64_MAX,
};

/*
 * The fake VM's RAM: region 0 is ram[0, REGION), region 1 ram[REGION, 2 * REGION).  The offset of
 * guest-physical [gpa, gpa + len) in the image, or -1 if any of it is not RAM.
 */
static long ram_offset(uint64_t gpa, uint64_t len)
{
	if (!len || len > REGION)
		return -1;
	if (gpa <= REGION - len)
		return (long)gpa;
	if (gpa >= R1_GPA && gpa - R1_GPA <= REGION - len)
		return (long)(REGION + (gpa - R1_GPA));
	return -1;
}

static void *ram_at(void *vmm, uint64_t gpa, uint64_t len)
{
	long off = ram_offset(gpa, len);

	return off < 0 ? NULL : ((struct fake_vm *)vmm)->ram + off;
}

struct model {
	uint64_t page[NR_VCPUS];		/* GPA, 0: none */
	uint64_t ring[NR_VCPUS], ring_len[NR_VCPUS];	/* ring_len 0: none */
	uint64_t tail[NR_VCPUS];		/* the host's own tail */
	bool fresh[NR_VCPUS];			/* registered, not drained since */
};

/* What the device delivered to the VMM (ops.trace_records) in one flush. */
static uint64_t delivered_bytes, delivered_calls;

static void on_records(void *vmm, int vcpu, const void *recs, size_t len)
{
	const unsigned char *p = recs;

	(void)vmm;
	if (vcpu < 0 || vcpu >= NR_VCPUS || !len)
		abort();
	/* whole records, each one valid */
	for (size_t off = 0; off < len;) {
		size_t n = hv_trace_rec_check(p + off, len - off);

		if (!n)
			abort();
		off += n;
	}
	delivered_bytes += len;
	delivered_calls++;
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	/* both ranges are in RAM here: no wrap */
	return alen && blen && a < b + blen && b < a + alen;
}

static int64_t expect_page(const struct model *m, int v, uint64_t gpa)
{
	if (!gpa)
		return 0;
	if (gpa % VPERF_PAGE_SIZE)
		return -VPERF_EINVAL;
	if (ram_offset(gpa, VPERF_PAGE_SIZE) < 0)
		return -VPERF_EFAULT;
	for (int i = 0; i < NR_VCPUS; i++)
		if ((i != v && m->page[i] && overlap(gpa, VPERF_PAGE_SIZE, m->page[i], VPERF_PAGE_SIZE)) ||
		    overlap(gpa, VPERF_PAGE_SIZE, m->ring[i], m->ring_len[i]))
			return -VPERF_EBUSY;
	return 0;
}

static int64_t expect_ring(const struct model *m, int v, uint64_t gpa, uint64_t len)
{
	uint64_t data = len - RING_HDR;

	if (!gpa && !len)
		return 0;
	if (gpa % VPERF_PAGE_SIZE || len <= RING_HDR)
		return -VPERF_EINVAL;
	if (len > (16u << 20))
		return -VPERF_ENOSPC;
	if (data & (data - 1))
		return -VPERF_EINVAL;
	if (ram_offset(gpa, len) < 0)
		return -VPERF_EFAULT;
	for (int i = 0; i < NR_VCPUS; i++)
		if ((m->page[i] && overlap(gpa, len, m->page[i], VPERF_PAGE_SIZE)) ||
		    (i != v && overlap(gpa, len, m->ring[i], m->ring_len[i])))
			return -VPERF_EBUSY;
	return 0;
}

static int pick_vcpu(struct fuzz_in *in)
{
	int v = in_u8(in) % 3;

	return v == 2 ? -1 : v;
}

static struct vperf_trace_ring *ring_of(struct fake_vm *vm, const struct model *m, int v)
{
	if (v < 0 || !m->ring_len[v])
		return NULL;
	return ram_at(vm, m->ring[v], m->ring_len[v]);
}

/* Guest RAM is what it was but for [gpa, gpa + len) (len 0: all of it). */
static void check_ram(struct fake_vm *vm, const unsigned char *before, uint64_t gpa, uint64_t len)
{
	unsigned char *hole = len ? ram_at(vm, gpa, len) : NULL;
	size_t lo = hole ? (size_t)(hole - vm->ram) : FAKE_RAM_SIZE, hi = hole ? lo + len : lo;

	if (memcmp(vm->ram, before, lo) || memcmp(vm->ram + hi, before + hi, FAKE_RAM_SIZE - hi))
		abort();
}

static void check_page(struct fake_vm *vm, uint64_t gpa)
{
	const struct vperf_vcpu_page *pg = ram_at(vm, gpa, VPERF_PAGE_SIZE);

	if (!pg || pg->size != sizeof(*pg) || pg->version != VPERF_ABI_VERSION || pg->seq % 2 ||
	    pg->nr_counters || pg->overflow_status)
		abort();
}

/*
 * A guest producer: one record of the type the input picks, its variable
 * part sized by `extra`, fields from the input, written at head (wrapping).
 */
static void append_record(struct fuzz_in *in, struct vperf_trace_ring *r, uint64_t dsize)
{
	unsigned char rec[VPERF_TRACE_REC_MAX];
	struct vperf_trace_rec *h = (struct vperf_trace_rec *)rec;
	uint8_t type = in_u8(in) % (VPERF_TRACE_NR_TYPES + 1), extra = in_u8(in);
	uint16_t flip = in_u16(in);
	size_t size;

	memset(rec, 0, sizeof(rec));
	in_bytes(in, rec + sizeof(*h), 48);
	if (in->over || !r)
		return;
	switch (type) {
	case VPERF_TRACE_SCHED_SWITCH:
		size = sizeof(struct vperf_trace_switch);
		((struct vperf_trace_switch *)rec)->reserved = 0;
		break;
	case VPERF_TRACE_SCHED_WAKEUP:
		size = sizeof(struct vperf_trace_wakeup);
		((struct vperf_trace_wakeup *)rec)->reserved = 0;
		break;
	case VPERF_TRACE_FORK:
		size = sizeof(struct vperf_trace_fork);
		break;
	case VPERF_TRACE_EXEC:
		size = sizeof(struct vperf_trace_exec) + 8 * (1 + extra % 8);
		memset(rec + size - 8, 0, 8);
		break;
	case VPERF_TRACE_MMAP:		/* a user mapping, the kernel's text, a module's symbol */
		size = sizeof(struct vperf_trace_mmap) + 8 * (3 + extra % 8);
		memset(rec + size - 8, 0, 8);
		if (extra % 3 == 1) {
			memcpy(rec + sizeof(struct vperf_trace_mmap), VPERF_TRACE_MMAP_KERNEL "x", 18);
			h->pid = h->tid = 0;
			((struct vperf_trace_mmap *)rec)->len = 0;
			((struct vperf_trace_mmap *)rec)->pgoff = 0;
		} else if (extra % 3 == 2) {
			memcpy(rec + sizeof(struct vperf_trace_mmap), "[m]f", 4);
			h->pid = h->tid = 0;
			((struct vperf_trace_mmap *)rec)->start |= VPERF_TRACE_KSYM_MIN;
			((struct vperf_trace_mmap *)rec)->pgoff = 0;
		}
		break;
	case VPERF_TRACE_EXIT:
		size = sizeof(struct vperf_trace_exit);
		((struct vperf_trace_exit *)rec)->reserved = 0;
		break;
	case VPERF_TRACE_IRQ:
		size = sizeof(struct vperf_trace_irq);
		((struct vperf_trace_irq *)rec)->reserved = 0;
		((struct vperf_trace_irq *)rec)->kind %= VPERF_TRACE_IRQ_NR_KINDS;
		break;
	case VPERF_TRACE_SAMPLE: {
		struct vperf_trace_sample *s = (struct vperf_trace_sample *)rec;

		s->nr_counts = extra % 17;
		s->nr_callchain = (extra / 17) % 8;
		size = sizeof(*s) + 8 * (s->nr_counts + s->nr_callchain);
		h->flags = extra & 1;
		break;
	}
	case VPERF_TRACE_MARK: {
		struct vperf_trace_mark *mk = (struct vperf_trace_mark *)rec;

		mk->kind %= VPERF_TRACE_MARK_NR_KINDS;
		mk->name_len = 1 + extra % 8;
		size = (sizeof(*mk) + mk->name_len + 7) & ~7u;
		memset(rec + sizeof(*mk) + mk->name_len, 0, size - sizeof(*mk) - mk->name_len);
		break;
	}
	case VPERF_TRACE_LOST:
		size = sizeof(struct vperf_trace_lost);
		((struct vperf_trace_lost *)rec)->source = 1 + extra % 3;
		((struct vperf_trace_lost *)rec)->reserved = 0;
		break;
	default:		/* an unknown type, any size */
		size = 24 + 8 * (extra % 16);
		break;
	}
	h->size = (uint16_t)size;
	h->type = type;
	if (type != VPERF_TRACE_SAMPLE)
		h->flags = 0;
	if (flip < size)
		rec[flip] ^= 0xff;
	if (size > dsize)
		return;
	for (size_t i = 0; i < size; i++)
		((unsigned char *)(r + 1))[(r->head + i) & (dsize - 1)] = rec[i];
	r->head += size;
	r->version = VPERF_TRACE_RING_V2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vperf_hv_config cfg = { .size = sizeof(cfg), .nr_vcpus = NR_VCPUS, .gsi = 5 };
	struct vperf_hv_ops ops = fake_ops;
	struct fuzz_in in = in_new(data, size);
	struct fake_vm vm = { 0 };
	struct model m;
	unsigned char *before;
	struct vperf_hv *hv;

	memset(&m, 0, sizeof(m));
	ops.gpa_to_hva = ram_at;
	ops.trace_records = on_records;
	vm.ram = calloc(1, FAKE_RAM_SIZE);
	before = malloc(FAKE_RAM_SIZE);
	if (!vm.ram || !before || vperf_hv__new(&cfg, &ops, &vm, &hv))
		goto out;
	while (!in_empty(&in)) {
		uint8_t op = in_u8(&in) % 8;
		uint64_t args[4] = { 0, 0, 0, 0 };
		struct vperf_trace_ring *r;
		int64_t ret, want;
		int v = pick_vcpu(&in);

		switch (op) {
		case 0: {	/* the guest writes its memory */
			uint16_t off = in_u16(&in);
			uint8_t buf[255], n = in_u8(&in);

			in_bytes(&in, buf, n);
			if (in.over)
				break;
			off %= FAKE_RAM_SIZE;
			memcpy(vm.ram + off, buf, n < FAKE_RAM_SIZE - off ? n : FAKE_RAM_SIZE - off);
			break;
		}
		case 1:
			args[0] = in_pick(&in, gpas, sizeof(gpas) / sizeof(gpas[0]));
			args[1] = in_pick(&in, lens, sizeof(lens) / sizeof(lens[0]));
			if (in.over)
				break;
			want = v < 0 ? -VPERF_EINVAL : expect_ring(&m, v, args[0], args[1]);
			memcpy(before, vm.ram, FAKE_RAM_SIZE);
			ret = vperf_hv__hypercall(hv, v, VPERF_HC_TRACE_REGISTER, args);
			if (ret != want)
				abort();
			check_ram(&vm, before, 0, 0);	/* registering reads nothing, writes nothing */
			if (!ret) {
				m.ring[v] = args[0];
				m.ring_len[v] = args[1];
				m.fresh[v] = args[1] != 0;
			}
			break;
		case 2: {
			uint64_t head = 0, tail = 0, dsize = 0;

			if (in.over)
				break;
			r = ring_of(&vm, &m, v);
			if (v < 0) {
				want = -VPERF_EINVAL;
			} else if (!r) {
				want = -VPERF_ESTATE;
			} else {
				if (m.fresh[v])
					m.tail[v] = r->tail;
				m.fresh[v] = false;
				head = r->head;
				tail = m.tail[v];
				dsize = m.ring_len[v] - RING_HDR;
				want = head < tail || head - tail > dsize ? -VPERF_EINVAL :
									   (int64_t)(head - tail);
			}
			memcpy(before, vm.ram, FAKE_RAM_SIZE);
			delivered_bytes = delivered_calls = 0;
			ret = vperf_hv__hypercall(hv, v, VPERF_HC_TRACE_FLUSH, args);
			if (ret != want)
				abort();
			/* never more than was consumed; nothing from a refused flush */
			if (delivered_bytes > (ret > 0 ? (uint64_t)ret : 0))
				abort();
			if (ret >= 0) {
				m.tail[v] = head;
				/* consumed up to head: the tail, and nothing else, moved */
				if (r->tail != head || r->head != head || (uint64_t)ret > dsize)
					abort();
				check_ram(&vm, before, m.ring[v] + offsetof(struct vperf_trace_ring, tail),
					  sizeof(r->tail));
			} else {
				check_ram(&vm, before, 0, 0);
			}
			break;
		}
		case 3:
			args[0] = in_pick(&in, gpas, sizeof(gpas) / sizeof(gpas[0]));
			if (in.over)
				break;
			want = v < 0 ? -VPERF_EINVAL : expect_page(&m, v, args[0]);
			memcpy(before, vm.ram, FAKE_RAM_SIZE);
			ret = vperf_hv__hypercall(hv, v, VPERF_HC_PAGE_REGISTER, args);
			if (ret != want)
				abort();
			if (!ret && args[0]) {
				m.page[v] = args[0];
				check_page(&vm, args[0]);
				check_ram(&vm, before, args[0], VPERF_PAGE_SIZE);
			} else {
				if (!ret)
					m.page[v] = 0;
				check_ram(&vm, before, 0, 0);
			}
			break;
		case 4: {	/* the guest produces n bytes */
			uint16_t n = in_u16(&in);

			r = ring_of(&vm, &m, v);
			if (in.over || !r)
				break;
			r->head = r->tail + n;
			break;
		}
		case 5: {
			uint64_t head = in_pick(&in, offsets, sizeof(offsets) / sizeof(offsets[0]));
			uint64_t tail = in_pick(&in, offsets, sizeof(offsets) / sizeof(offsets[0]));

			r = ring_of(&vm, &m, v);
			if (in.over || !r)
				break;
			r->head = head;
			r->tail = tail;
			break;
		}
		case 7:
			r = ring_of(&vm, &m, v);
			append_record(&in, r, r ? m.ring_len[v] - RING_HDR : 0);
			break;
		case 6:
			if (in.over)
				break;
			want = v < 0 ? -VPERF_EINVAL : m.page[v] ? 0 : -VPERF_ESTATE;
			memcpy(before, vm.ram, FAKE_RAM_SIZE);
			ret = vperf_hv__hypercall(hv, v, VPERF_HC_SNAPSHOT, args);
			if (ret != want)
				abort();
			if (!ret) {
				check_page(&vm, m.page[v]);
				check_ram(&vm, before, m.page[v], VPERF_PAGE_SIZE);
			} else {
				check_ram(&vm, before, 0, 0);
			}
			break;
		}
		if (v >= 0)
			vperf_hv__vcpu_exit(hv, v);
	}
	vperf_hv__delete(hv);
out:
	free(before);
	free(vm.ram);
	return 0;
}
