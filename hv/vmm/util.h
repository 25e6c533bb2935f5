/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the vperf-vmm sources. */
#ifndef VMM_UTIL_H
#define VMM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define ALIGN_DOWN(x, a)	((x) & ~((__typeof__(x))(a) - 1))
#define ALIGN_UP(x, a)		ALIGN_DOWN((x) + (__typeof__(x))(a) - 1, (a))
#define MIN(a, b)		((a) < (b) ? (a) : (b))
#define MAX(a, b)		((a) > (b) ? (a) : (b))

#define SZ_4K			0x1000ULL
#define SZ_2M			0x200000ULL
#define SZ_1M			0x100000ULL
#define SZ_1G			0x40000000ULL

#define __must_check		__attribute__((warn_unused_result))

/*
 * range_contains: true when [addr, addr + len) lies inside [base, base + size). Overflow-safe for
 * every input (guest-provided addr and len included); an empty range (len 0) is inside when addr is
 * within [base, base + size].
 */
static inline bool range_contains(uint64_t base, uint64_t size, uint64_t addr, uint64_t len)
{
	if (addr < base)
		return false;
	if (len > size)
		return false;
	return addr - base <= size - len;
}

/*
 * ranges_overlap: true when [a, a + alen) and [b, b + blen) share a byte (both non-empty, no wrap).
 */
static inline bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	if (alen == 0 || blen == 0)
		return false;
	return a < b + blen && b < a + alen;
}

/* Little-endian stores into byte buffers (ACPI tables, boot structures). */
static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

#endif /* VMM_UTIL_H */
