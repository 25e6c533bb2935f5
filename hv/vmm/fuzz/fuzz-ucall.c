// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: UCALL blocks (docs/abi.md 2.1), guest memory the host parses and prints, on the
 * whole path a guest takes: an `out %eax` at the vperf port (vcpu__dispatch_exit -> pvport ->
 * libvperf-hv's hc_ucall, which copies and validates the block) -> vperf-vmm's report (pv_report,
 * which formats the line and defuses control characters before it reaches a terminal).
 *
 * Input: a stream of operations (../../core/fuzz/fuzz-input.h), each an op byte (mod 3), a vCPU byte
 * (mod 2) and the op's fields:
 *   0 write RAM     pick gpa, u8 n, n bytes
 *   1 write a block pick gpa, pick cmd, pick nr_args, 8 x u64 args, u8 m, m % 129 message bytes
 *                   (the rest of msg zero: 128 leaves no terminator); written where it is RAM
 *   2 UCALL         pick gpa
 * Checked: the result (-EFAULT unless all 208 bytes are RAM, -EINVAL for a bad cmd or nr_args > 8,
 * else 0), that a refused block prints nothing and a good one exactly one line, byte for byte the
 * line the block asks for: "guest: " and the message cut at its first NUL or 127 bytes, with args
 * in hex (VALUES: then " [vcpuN thread switches: voluntary V nonvoluntary N]", the reporting
 * thread's host context switches), every byte outside printable ASCII as '?', one '\n'; that an ASSERT stops the VM as a
 * crash and nothing else stops it; and that guest RAM is not written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-vmm.h"
#include "fuzz-input.h"

#define PICK(in, t) in_pick(in, t, sizeof(t) / sizeof(t[0]))
#define UC_SIZE sizeof(struct vperf_ucall)

static const uint64_t gpas[] = {
	0, 0x1000, 0x1008, 0x2000 - UC_SIZE, FV_LOW_SIZE - UC_SIZE, FV_LOW_SIZE - UC_SIZE + 1,
	FV_LOW_SIZE - 1, FV_LOW_SIZE, FV_HIGH_GPA, FV_HIGH_GPA - 8, FV_HIGH_GPA + FV_HIGH_SIZE - UC_SIZE,
	FV_HIGH_GPA + FV_HIGH_SIZE - 100, VM_DOORBELL_ADDR, UINT64_MAX - UC_SIZE + 1, UINT64_MAX,
};

static const uint64_t cmds[] = {
	VPERF_UCALL_PRINT, VPERF_UCALL_ASSERT, VPERF_UCALL_VALUES, 0, 4, UINT32_MAX,
};

static const uint64_t nr_args[] = { 0, 1, 2, 7, 8, 9, UINT32_MAX };

/* The line a valid block must print (what docs/abi.md 2.1 and vperf-vmm promise). */
static size_t expected_line(const struct vperf_ucall *uc, unsigned int vcpu, char *out, size_t len)
{
	char args[8 * 20 + 1] = "";
	size_t off = 0;
	int n = 0;

	for (uint32_t i = 0; i < uc->nr_args; i++)
		off += (size_t)snprintf(args + off, sizeof(args) - off, " 0x%" PRIx64,
					(uint64_t)uc->args[i]);
	switch (uc->cmd) {
	case VPERF_UCALL_PRINT:
		n = snprintf(out, len, "guest: %.127s", uc->msg);
		break;
	case VPERF_UCALL_VALUES:
		n = snprintf(out, len, "guest: values: %.127s:%s", uc->msg, args);
		break;
	case VPERF_UCALL_ASSERT:
		n = snprintf(out, len, "guest: assertion failed on vcpu%u: %.127s%s%s", vcpu, uc->msg,
			     uc->nr_args ? ":" : "", args);
		break;
	}
	if (n < 0 || (size_t)n + 2 > len)
		abort();
	for (int i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] > 0x7e)
			out[i] = '?';
	out[n++] = '\n';
	return (size_t)n;
}

static void ucall(struct vm *vm, struct vcpu *v, uint64_t gpa, const uint8_t *before)
{
	long off = fv_ram_offset(gpa, UC_SIZE);
	bool stopping = vm__stopping(vm);
	struct vperf_ucall uc;
	char line[1024];
	size_t n = 0;
	int64_t want = 0, ret;

	if (off < 0) {
		want = -VPERF_EFAULT;
	} else {
		memcpy(&uc, vm->ram + off, sizeof(uc));
		if (uc.nr_args > 8 || uc.cmd < VPERF_UCALL_PRINT || uc.cmd > VPERF_UCALL_VALUES)
			want = -VPERF_EINVAL;
		else
			n = expected_line(&uc, v->id, line, sizeof(line));
	}
	fv_err_len = fv_err_writes = 0;
	ret = fv_hypercall(v, VPERF_HC_UCALL, (uint64_t[4]){ gpa, 0, 0, 0 });
	if (ret != want || memcmp(vm->ram, before, FV_RAM_SIZE))
		abort();
	if (want) {
		if (fv_err_len || vm__stopping(vm) != stopping)
			abort();	/* a refused block prints nothing, stops nothing */
		return;
	}
	/* one line, one write (lines from vCPU threads must not interleave) */
	if (uc.cmd == VPERF_UCALL_VALUES) {
		/* then vperf-vmm adds the reporting thread's own host context switches */
		unsigned int cpu;
		unsigned long long vol, nonvol;
		char tail[128];
		int used = -1;
		size_t rest;

		if (fv_err_writes != 1 || fv_err_len <= n || memcmp(fv_err, line, n - 1))
			abort();
		rest = fv_err_len - (n - 1);
		if (rest >= sizeof(tail))
			abort();
		memcpy(tail, fv_err + n - 1, rest);
		tail[rest] = '\0';
		if (sscanf(tail, " [vcpu%u thread switches: voluntary %llu nonvoluntary %llu]\n%n", &cpu, &vol,
			   &nonvol, &used) != 3 || used != (int)rest || cpu != v->id)
			abort();
	} else if (fv_err_writes != 1 || fv_err_len != n || memcmp(fv_err, line, n)) {
		abort();
	}
	if (uc.cmd == VPERF_UCALL_ASSERT) {
		if (!vm__stopping(vm) ||
		    (!stopping && (vm->stop_reason != VM_STOP_CRASH || vm->stop_status != VM_EXIT_CRASH)))
			abort();
	} else if (vm__stopping(vm) != stopping) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = in_new(data, size);
	uint8_t *before = malloc(FV_RAM_SIZE);
	struct vm *vm = before ? fv_new() : NULL;

	while (vm && !in_empty(&in)) {
		uint8_t op = in_u8(&in) % 3;
		struct vcpu *v = &vm->vcpus[in_u8(&in) % FV_NR_VCPUS];
		uint64_t gpa = PICK(&in, gpas);

		switch (op) {
		case 0: {
			uint8_t buf[255], n = in_u8(&in);

			if (in_bytes(&in, buf, n))
				fv_ram_write(vm, gpa, buf, n);
			break;
		}
		case 1: {
			struct vperf_ucall uc;
			uint8_t m;

			memset(&uc, 0, sizeof(uc));
			uc.cmd = (uint32_t)PICK(&in, cmds);
			uc.nr_args = (uint32_t)PICK(&in, nr_args);
			for (int i = 0; i < 8; i++)
				uc.args[i] = in_u64(&in);
			m = in_u8(&in) % (sizeof(uc.msg) + 1);
			if (in_bytes(&in, uc.msg, m))
				fv_ram_write(vm, gpa, &uc, sizeof(uc));
			break;
		}
		case 2:
			if (in.over)
				break;
			memcpy(before, vm->ram, FV_RAM_SIZE);
			ucall(vm, v, gpa, before);
			break;
		}
	}
	if (vm)
		fv_delete(vm);
	free(before);
	return 0;
}
