// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a hostile guest's hypercalls against libvperf-hv.
 *
 * Input: one byte n, then n calls of 34 bytes (op, vcpu, RBX, RCX, RSI,
 * RDI little-endian; op VPERF_HC_NR_OPS + 2 is a doorbell load instead,
 * at offset RBX of RCX bytes), then the guest RAM image (event descriptors, ucall
 * blocks, pages and rings the calls point at).  After every call the
 * device must not have touched memory outside guest RAM (ASan), must
 * return a value the ABI allows, and after every exit it must stay sane.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fake-vm.h"

#define CALL_SIZE 34

static const char *const allow[] = { "sw:task-clock", "exits:*", "steal:*", "kvm:*" };

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vperf_hv_config cfg = {
		.size = sizeof(cfg), .nr_vcpus = 2, .gsi = 5,
		.allow = allow, .nr_allow = 4,
	};
	struct fake_vm vm = { 0 };
	struct vperf_hv *hv;
	size_t n, ram_off;

	if (size < 1)
		return 0;
	n = data[0];
	ram_off = 1 + n * CALL_SIZE;
	if (ram_off > size)
		return 0;
	vm.ram = calloc(1, FAKE_RAM_SIZE);
	if (!vm.ram)
		return 0;
	memcpy(vm.ram, data + ram_off,
	       size - ram_off < FAKE_RAM_SIZE ? size - ram_off : FAKE_RAM_SIZE);
	if (vperf_hv__new(&cfg, &fake_ops, &vm, &hv)) {
		free(vm.ram);
		return 0;
	}
	vperf_hv__vcpu_enter(hv, 0);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *c = data + 1 + i * CALL_SIZE;
		uint64_t args[4] = { le64(c + 2), le64(c + 10), le64(c + 18), le64(c + 26) };
		int vcpu = c[1] % 3 == 2 ? -1 : c[1] % 3;	/* includes a bad index */
		uint32_t op = c[0] % (VPERF_HC_NR_OPS + 3);
		int64_t ret;

		if (op == VPERF_HC_NR_OPS + 2) {
			uint64_t v;

			ret = vperf_hv__doorbell_read(hv, vcpu, args[0], (uint32_t)args[1], &v);
			if (ret != 0 && ret != -VPERF_EINVAL && ret != -VPERF_ESTATE)
				abort();
			if (ret == -VPERF_EINVAL && v != UINT64_MAX)
				abort();	/* a refused load reads all ones */
		} else {
			ret = vperf_hv__hypercall(hv, vcpu, op, args);
		}
		if (ret < 0 && -ret > VPERF_ESTATE)
			abort();	/* an error code the ABI does not define */
		if (vcpu >= 0) {
			vm.exits[vcpu]++;
			vperf_hv__vcpu_exit(hv, vcpu);
		}
	}
	vperf_hv__delete(hv);
	free(vm.ram);
	return 0;
}
