/* SPDX-License-Identifier: MIT */
/*
 * Reading a fuzzer's input as a stream of operations: each read takes the next bytes, little-endian,
 * and a read past the end returns 0 and marks the stream empty, so a target loops
 * `while (!in_empty(&in))` and a cut operation ends the input.  Shared by the targets of
 * hv/core/fuzz and hv/vmm/fuzz (README.md there lists each target's format).
 */
#ifndef VPERF_FUZZ_INPUT_H
#define VPERF_FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct fuzz_in {
	const uint8_t *p;
	size_t left;
	bool over;			/* a read went past the end */
};

static inline struct fuzz_in in_new(const uint8_t *data, size_t size)
{
	return (struct fuzz_in){ .p = data, .left = size, .over = false };
}

static inline bool in_empty(const struct fuzz_in *in)
{
	return in->over || !in->left;
}

/* Copies n bytes to out (zeroes past the end); returns false if the input ran out. */
static inline bool in_bytes(struct fuzz_in *in, void *out, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	memcpy(out, in->p, k);
	memset((uint8_t *)out + k, 0, n - k);
	in->p += k;
	in->left -= k;
	if (k < n)
		in->over = true;
	return k == n;
}

static inline uint64_t in_le(struct fuzz_in *in, unsigned int n)
{
	uint8_t b[8];
	uint64_t v = 0;

	in_bytes(in, b, n);
	for (unsigned int i = n; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static inline uint8_t in_u8(struct fuzz_in *in)
{
	return (uint8_t)in_le(in, 1);
}

static inline uint16_t in_u16(struct fuzz_in *in)
{
	return (uint16_t)in_le(in, 2);
}

static inline uint32_t in_u32(struct fuzz_in *in)
{
	return (uint32_t)in_le(in, 4);
}

static inline uint64_t in_u64(struct fuzz_in *in)
{
	return in_le(in, 8);
}

/*
 * A 64-bit value that is often interesting: a selector byte s, then for s < 0x80 the value
 * table[s % n] itself, for s < 0xc0 table[s % n] plus a signed delta (1 byte), else 8 raw bytes.
 * Mutating the selector moves between the boundaries a target cares about (RAM edges, aligned
 * addresses, sizes) while raw values still reach everything.
 */
static inline uint64_t in_pick(struct fuzz_in *in, const uint64_t *table, size_t n)
{
	uint8_t s = in_u8(in);

	if (s >= 0xc0 || !n)
		return in_u64(in);
	if (s < 0x80)
		return table[s % n];
	return table[s % n] + (uint64_t)(int64_t)(int8_t)in_u8(in);
}

#endif
