// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the doorbell page (docs/abi.md 2.6) as the guest reaches it, through vperf-vmm's
 * MMIO exit dispatch (vcpu__dispatch_exit -> handle_mmio -> vmm_pv_doorbell ->
 * vperf_hv__doorbell_read), with known answers: the counters the guest sets count the VMM's own
 * exits (source EXITS), so the fuzzer knows every value a load must return.
 *
 * Input: a stream of operations (../../core/fuzz/fuzz-input.h), each an op byte (mod 5), a vCPU byte
 * (mod 2) and the op's fields:
 *   0 COUNTERS_SET   pick gpa, u8 n (mod 18), n x u8 descriptor choice (mod 12): exits of all
 *                    reasons, of IO, MMIO, INTR, of reason 200 (beyond the VMM's table: counts 0),
 *                    reason 256 (refused), steal, perf task-clock, perf instructions, a KVM stat
 *                    (no stats fd here), an unknown source, non-zero flags; the descriptors are
 *                    written at gpa (the part that is RAM) and COUNTERS_SET goes through the port
 *   1 doorbell       u8 flags (bit 0 write), pick offset, pick len, 8 data bytes: an MMIO exit at
 *                    the doorbell page's GPA + offset
 *   2 PAGE_REGISTER  pick gpa
 *   3 SNAPSHOT       -
 *   4 other exit     u8 which: an OUT to port 0x80, an INTR exit, an MMIO read outside the page
 * Checked: COUNTERS_SET's result (exact where the host cannot matter), every served load's value
 * (exit counts since COUNTERS_SET; 0 for a slot without a counter), all ones for every other load
 * (unaligned, another size, past the slots), writes ignored, every access counted once, the page
 * written only by PAGE_REGISTER and SNAPSHOT (and then with the same values a load returns), guest
 * RAM never touched by a load.
 */
#include <stdlib.h>
#include <string.h>

#include <vperf/hv.h>

#include "fake-vmm.h"
#include "fuzz-input.h"

#define PICK(in, t) in_pick(in, t, sizeof(t) / sizeof(t[0]))
#define ALL UINT32_MAX

static const uint64_t gpas[] = {
	0x1000, 0x2000, 0x3000, 0x8000, FV_LOW_SIZE - 0x1000, FV_LOW_SIZE - 80, FV_LOW_SIZE,
	FV_HIGH_GPA, FV_HIGH_GPA + FV_HIGH_SIZE - 0x1000, FV_HIGH_GPA + FV_HIGH_SIZE - 160,
	FV_HIGH_GPA - 80, 0, UINT64_MAX - 79,
};

static const uint64_t offsets[] = {
	0, 8, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 1, 4, 7,
	4088, 4095, 4096, UINT64_MAX - 7,
};

static const uint64_t lens[] = { 8, 8, 8, 4, 2, 1, 0, 3, 16, 255 };

enum kind { K_NONE, K_EXITS, K_UNKNOWN };

struct slot {
	enum kind kind;
	uint32_t reason;		/* K_EXITS: a KVM exit reason or ALL */
	uint64_t base;
};

struct model {
	uint64_t exits[STATS_EXIT_REASONS];	/* what this vCPU dispatched */
	int nr;
	struct slot slot[VPERF_MAX_COUNTERS];
	uint64_t page;				/* GPA, 0: none */
};

/* What the VMM counts for reason (its table ends at STATS_EXIT_REASONS: later reasons count 0). */
static uint64_t count_of(const struct model *m, uint32_t reason)
{
	uint64_t n = 0;

	if (reason != ALL)
		return reason < STATS_EXIT_REASONS ? m->exits[reason] : 0;
	for (unsigned int r = 0; r < STATS_EXIT_REASONS; r++)
		n += m->exits[r];
	return n;
}

/* The value counter i must read now; false if the host decides (perf, steal). */
static bool expected(const struct model *m, int i, uint64_t *value)
{
	if (i >= m->nr) {
		*value = 0;
		return true;
	}
	if (m->slot[i].kind != K_EXITS)
		return false;
	*value = count_of(m, m->slot[i].reason) - m->slot[i].base;
	return true;
}

/* Descriptor choices: what the guest asks for, and what the device must answer (1: host decides). */
static int make_desc(uint8_t choice, struct vperf_event_desc *d, struct slot *s)
{
	memset(d, 0, sizeof(*d));
	memset(s, 0, sizeof(*s));
	d->source = VPERF_SRC_EXITS;
	s->kind = K_EXITS;
	switch (choice % 12) {
	case 0: d->arg = UINT64_MAX; s->reason = ALL; return 0;
	case 1: d->arg = KVM_EXIT_IO; s->reason = KVM_EXIT_IO; return 0;
	case 2: d->arg = KVM_EXIT_MMIO; s->reason = KVM_EXIT_MMIO; return 0;
	case 3: d->arg = KVM_EXIT_INTR; s->reason = KVM_EXIT_INTR; return 0;
	case 4: d->arg = 200; s->reason = 200; return 0;
	case 5: d->arg = 256; return -VPERF_EINVAL;
	case 6: d->source = VPERF_SRC_STEAL; strcpy(d->name, "steal"); break;
	case 7: d->source = VPERF_SRC_PERF; strcpy(d->name, "task-clock"); break;
	case 8: d->source = VPERF_SRC_PERF; strcpy(d->name, "instructions"); break;
	case 9: d->source = VPERF_SRC_KVM_STAT; strcpy(d->name, "exits"); break;
	case 10: d->source = 0; return -VPERF_EINVAL;
	default: d->flags = 1; return -VPERF_EINVAL;
	}
	s->kind = K_UNKNOWN;
	return 1;
}

static bool valid_error(int64_t ret)
{
	return ret < 0 && -ret <= VPERF_ESTATE;
}

/* One exit of reason on v, as the model counts it. */
static void counted(struct model *m, uint32_t reason)
{
	if (reason < STATS_EXIT_REASONS)
		m->exits[reason]++;
}

/* The first min(len, 8) bytes of an MMIO load's data are all ones. */
static bool all_ones(const uint8_t *data, uint64_t len)
{
	for (unsigned int i = 0; i < MIN(len, 8u); i++)
		if (data[i] != 0xff)
			return false;
	return true;
}

static void check_page(struct vm *vm, const struct model *m);

static void counters_set(struct vm *vm, struct vcpu *v, struct model *m, struct fuzz_in *in)
{
	uint64_t gpa = PICK(in, gpas);
	uint8_t n = in_u8(in) % 18;
	struct vperf_event_desc d[17];
	struct slot s[17];
	int64_t want = 0, ret;
	bool unknown = false, decided = false;

	for (int i = 0; i < n; i++) {
		int r = make_desc(in_u8(in), &d[i], &s[i]);

		if (decided)
			continue;
		if (r == 1) {
			unknown = true;
		} else if (r < 0) {
			want = r;
			decided = true;
		}
	}
	if (in->over)
		return;
	if (n > VPERF_MAX_COUNTERS)
		want = -VPERF_ENOSPC, unknown = false;
	else if (n && fv_ram_offset(gpa, n * sizeof(d[0])) < 0)
		want = -VPERF_EFAULT, unknown = false;
	fv_ram_write(vm, gpa, d, n * sizeof(d[0]));
	counted(m, KVM_EXIT_IO);
	ret = fv_hypercall(v, VPERF_HC_COUNTERS_SET, (uint64_t[4]){ gpa, n, 0, 0 });
	if (unknown ? (ret && !valid_error(ret)) || (want && !ret) : ret != want)
		abort();
	if (ret)
		return;		/* a failed call changes no counter */
	m->nr = n;
	for (int i = 0; i < n; i++) {
		m->slot[i] = s[i];
		m->slot[i].base = count_of(m, s[i].reason);
	}
	if (m->page)
		check_page(vm, m);	/* written with the fresh counters */
}

static void doorbell(struct vm *vm, struct vcpu *v, struct model *m, const uint8_t *before,
		     struct fuzz_in *in)
{
	uint8_t flags = in_u8(in), data[8];
	uint64_t off = PICK(in, offsets), len = PICK(in, lens), value;
	uint64_t bell = v->stats.pv_doorbell, count = vperf_hv__doorbell_count(vm->pv, (int)v->id);
	bool write = flags & 1;

	in_bytes(in, data, sizeof(data));
	if (in->over)
		return;
	len = (uint32_t)len;
	counted(m, KVM_EXIT_MMIO);
	if (fv_mmio(v, VM_DOORBELL_ADDR + off, (uint32_t)len, write, data))
		abort();
	if (memcmp(vm->ram, before, FV_RAM_SIZE))
		abort();	/* the page itself is not touched, nor any RAM */
	if (off >= VPERF_DOORBELL_SIZE) {	/* not the doorbell: no device there */
		if (v->stats.pv_doorbell != bell || (!write && !all_ones(v->run->mmio.data, len)))
			abort();
		return;
	}
	if (v->stats.pv_doorbell != bell + 1 ||
	    vperf_hv__doorbell_count(vm->pv, (int)v->id) != count + 1)
		abort();	/* every access counts, once */
	if (write) {
		if (memcmp(v->run->mmio.data, data, 8))
			abort();	/* ignored: nothing comes back */
		return;
	}
	if (len == 8 && off % 8 == 0 && off < 8 * VPERF_MAX_COUNTERS) {
		if (expected(m, (int)(off / 8), &value) && get_le64(v->run->mmio.data) != value)
			abort();
		return;
	}
	if (!all_ones(v->run->mmio.data, len))
		abort();	/* any other load reads all ones */
}

static void check_page(struct vm *vm, const struct model *m)
{
	long off = fv_ram_offset(m->page, VPERF_PAGE_SIZE);
	const struct vperf_vcpu_page *pg = (const void *)(vm->ram + off);
	uint64_t value;

	if (off < 0 || pg->size != sizeof(*pg) || pg->version != VPERF_ABI_VERSION || pg->seq % 2 ||
	    pg->nr_counters != (uint32_t)m->nr)
		abort();
	for (int i = 0; i < VPERF_MAX_COUNTERS; i++)
		if (expected(m, i, &value) && pg->counters[i].value != value)
			abort();	/* the page and the doorbell agree */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = in_new(data, size);
	uint8_t *before = malloc(FV_RAM_SIZE);
	struct vm *vm = before ? fv_new() : NULL;
	struct model *models = calloc(FV_NR_VCPUS, sizeof(*models));

	while (vm && models && !in_empty(&in)) {
		uint8_t op = in_u8(&in) % 5;
		unsigned int id = in_u8(&in) % FV_NR_VCPUS;
		struct vcpu *v = &vm->vcpus[id];
		struct model *m = &models[id];
		int64_t ret;

		memcpy(before, vm->ram, FV_RAM_SIZE);
		switch (op) {
		case 0:
			counters_set(vm, v, m, &in);
			break;
		case 1:
			doorbell(vm, v, m, before, &in);
			break;
		case 2: {
			uint64_t gpa = PICK(&in, gpas);

			if (in.over)
				break;
			counted(m, KVM_EXIT_IO);
			ret = fv_hypercall(v, VPERF_HC_PAGE_REGISTER, (uint64_t[4]){ gpa, 0, 0, 0 });
			if (!valid_error(ret) && ret)
				abort();
			if (!ret)
				m->page = gpa;
			if (ret == 0 && gpa)
				check_page(vm, m);
			break;
		}
		case 3:
			if (in.over)
				break;
			counted(m, KVM_EXIT_IO);
			ret = fv_hypercall(v, VPERF_HC_SNAPSHOT, (uint64_t[4]){ 0, 0, 0, 0 });
			if (ret != (m->page ? 0 : -VPERF_ESTATE))
				abort();
			if (!ret)
				check_page(vm, m);
			break;
		case 4: {
			uint8_t which = in_u8(&in) % 3, b = 0;

			if (in.over)
				break;
			if (which == 0) {
				counted(m, KVM_EXIT_IO);
				((uint8_t *)v->run)[FV_PIO_OFFSET] = b;
				fv_io(v, 0x80, true, 1, 1, FV_PIO_OFFSET);
			} else if (which == 1) {
				counted(m, KVM_EXIT_INTR);
				v->run->exit_reason = KVM_EXIT_INTR;
				vcpu__dispatch_exit(v);
			} else {
				counted(m, KVM_EXIT_MMIO);
				fv_mmio(v, VM_IOAPIC_ADDR - 8, 8, false, (uint8_t[8]){ 0 });
			}
			break;
		}
		}
		/* the model counts what the VMM counts */
		if (memcmp(m->exits, v->stats.exits, sizeof(m->exits)))
			abort();
	}
	if (vm)
		fv_delete(vm);
	free(models);
	free(before);
	return 0;
}
