/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The shared-memory channel (docs/abi.md 8): how vperf_guest.ko lays out its per-vCPU trace
 * rings in memory a stock VMM shares with the host, QEMU's ivshmem-plain device (PCI 1af4:1110,
 * BAR2) backed by a file such as /dev/shm/vperf-NAME.  No exit is involved: the guest writes
 * records, the host reads the file.
 *
 * The region starts with struct vperf_shm_header; each ring is a struct vperf_trace_ring
 * (docs/abi.md 2.5) with version-2 records, at the offset its descriptor gives.  The guest owns
 * everything but each ring's tail, which the host writes.  The host checks the layout on a copy
 * (vperf_shm_check_layout), keeps that copy, and never takes an offset or a size from the region
 * again until the generation changes.
 *
 * Shared by vperf_guest.ko (writer), the host's reader (profiler/record/shm.c) and the unit tests.
 */
#ifndef VPERF_SHM_H
#define VPERF_SHM_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <linux/types.h>
#endif

#include <vperf/abi.h>

#define VPERF_SHM_MAGIC		0x4d48534652455056ull	/* "VPERFSHM", little-endian */
#define VPERF_SHM_VERSION	1
#define VPERF_SHM_MAX_RINGS	256			/* descriptors in the header */
#define VPERF_SHM_ALIGN		4096u			/* every ring's offset */
#define VPERF_SHM_MIN_DATA	4096ull			/* a ring's data area: 2^k bytes, ... */
#define VPERF_SHM_MAX_DATA	(16ull << 20)		/* ... from 4 KiB to 16 MiB */
#define VPERF_SHM_MIN_SIZE	(64ull << 10)		/* the region: 64 KiB ... */
#define VPERF_SHM_MAX_SIZE	(4ull << 30)		/* ... to 4 GiB */

/* header.state */
enum vperf_shm_state {
	VPERF_SHM_EMPTY   = 0,	/* no layout (yet, or being written) */
	VPERF_SHM_READY   = 1,	/* the layout is complete; rings are written */
	VPERF_SHM_STOPPED = 2,	/* the guest stopped tracing (module unloaded): nothing more comes */
};

struct vperf_shm_ring_desc {
	__u64 offset;		/* of the ring's struct vperf_trace_ring, VPERF_SHM_ALIGN-aligned */
	__u64 data_size;	/* bytes of data after the ring's 64-byte header, 2^k */
	__u32 cpu;		/* the guest CPU that writes it */
	__u32 reserved0;	/* 0 */
	__u64 reserved1;	/* 0 */
};

struct vperf_shm_header {
	__u64 magic;		/* VPERF_SHM_MAGIC */
	__u32 size;		/* sizeof(struct vperf_shm_header) */
	__u32 version;		/* VPERF_SHM_VERSION */
	__u64 total_size;	/* the region's bytes as the guest found them (BAR2's size) */
	__u32 state;		/* enum vperf_shm_state; READY is written last, with release order */
	__u32 nr_rings;		/* descriptors in use, 1..VPERF_SHM_MAX_RINGS */
	__u64 generation;	/* changes each time the guest lays the region out again */
	__u64 tsc_khz;		/* the guest's TSC frequency as its kernel measured it, 0: unknown */
	__u64 features;		/* VPERF_FEAT_TRACE_* bits of what the rings may hold (MMAP, KSYM) */
	__u64 reserved;		/* 0 */
	struct vperf_shm_ring_desc ring[VPERF_SHM_MAX_RINGS];
};

VPERF_ABI_CHECK(struct vperf_shm_ring_desc, 32);
VPERF_ABI_CHECK(struct vperf_shm_header, 64 + 32 * VPERF_SHM_MAX_RINGS);

/* The features a guest may announce in header.features. */
#define VPERF_SHM_FEATURES	(VPERF_FEAT_TRACE_MMAP | VPERF_FEAT_TRACE_KSYM)

/* Why a layout was refused (vperf_shm_check_layout), for messages and counts. */
enum vperf_shm_bad {
	VPERF_SHM_OK = 0,
	VPERF_SHM_BAD_MAGIC,		/* not a vperf region (or not laid out yet) */
	VPERF_SHM_BAD_VERSION,		/* a version or header size this host does not know */
	VPERF_SHM_BAD_SIZE,		/* total_size is not the region's size */
	VPERF_SHM_BAD_STATE,		/* a state that is none of enum vperf_shm_state */
	VPERF_SHM_BAD_NR_RINGS,		/* 0 or more than VPERF_SHM_MAX_RINGS */
	VPERF_SHM_BAD_RESERVED,		/* a reserved field or an unknown feature bit is set */
	VPERF_SHM_BAD_RING,		/* a ring not aligned, too small or big, or past the end */
	VPERF_SHM_BAD_OVERLAP,		/* two rings, or a ring and the header, share bytes */
	VPERF_SHM_BAD_CPU,		/* two rings of one CPU */
	VPERF_SHM_NR_BAD
};

static inline bool vperf_shm_pow2(__u64 x)
{
	return x && !(x & (x - 1));
}

/* The bytes ring descriptor d takes: its header and its data. */
static inline __u64 vperf_shm_ring_len(const struct vperf_shm_ring_desc *d)
{
	return (__u64)sizeof(struct vperf_trace_ring) + d->data_size;
}

/*
 * Check a copy of a region's header against the region's real size (the host: the file's size;
 * the guest: BAR2's).  Pure: it reads only *h.  A header in state EMPTY is checked as far as its
 * magic, version and size (a guest is still writing the rest).
 */
static inline enum vperf_shm_bad vperf_shm_check_layout(const struct vperf_shm_header *h,
							__u64 region_size)
{
	__u32 i, j;

	if (h->magic != VPERF_SHM_MAGIC)
		return VPERF_SHM_BAD_MAGIC;
	if (h->version != VPERF_SHM_VERSION || h->size != sizeof(*h))
		return VPERF_SHM_BAD_VERSION;
	if (h->total_size != region_size || region_size < VPERF_SHM_MIN_SIZE ||
	    region_size > VPERF_SHM_MAX_SIZE)
		return VPERF_SHM_BAD_SIZE;
	if (h->state > VPERF_SHM_STOPPED)
		return VPERF_SHM_BAD_STATE;
	if (h->state == VPERF_SHM_EMPTY)
		return VPERF_SHM_OK;
	if (!h->nr_rings || h->nr_rings > VPERF_SHM_MAX_RINGS)
		return VPERF_SHM_BAD_NR_RINGS;
	if (h->reserved || (h->features & ~(__u64)VPERF_SHM_FEATURES))
		return VPERF_SHM_BAD_RESERVED;
	for (i = 0; i < VPERF_SHM_MAX_RINGS; i++) {
		const struct vperf_shm_ring_desc *d = &h->ring[i];

		if (i >= h->nr_rings) {
			if (d->offset || d->data_size || d->cpu || d->reserved0 || d->reserved1)
				return VPERF_SHM_BAD_RESERVED;
			continue;
		}
		if (d->reserved0 || d->reserved1)
			return VPERF_SHM_BAD_RESERVED;
		if (d->offset % VPERF_SHM_ALIGN || !vperf_shm_pow2(d->data_size) ||
		    d->data_size < VPERF_SHM_MIN_DATA || d->data_size > VPERF_SHM_MAX_DATA ||
		    d->offset > region_size || vperf_shm_ring_len(d) > region_size - d->offset)
			return VPERF_SHM_BAD_RING;
		if (d->offset < sizeof(*h))
			return VPERF_SHM_BAD_OVERLAP;
	}
	for (i = 0; i < h->nr_rings; i++)
		for (j = i + 1; j < h->nr_rings; j++) {
			const struct vperf_shm_ring_desc *a = &h->ring[i], *b = &h->ring[j];

			if (a->cpu == b->cpu)
				return VPERF_SHM_BAD_CPU;
			if (a->offset < b->offset + vperf_shm_ring_len(b) &&
			    b->offset < a->offset + vperf_shm_ring_len(a))
				return VPERF_SHM_BAD_OVERLAP;
		}
	return VPERF_SHM_OK;
}

#endif /* VPERF_SHM_H */
