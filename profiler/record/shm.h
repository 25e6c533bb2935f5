/* SPDX-License-Identifier: MIT */
/*
 * The host's reader of the shared-memory channel (docs/abi.md 8, hv/include/vperf/shm.h): the
 * file behind a stock VMM's ivshmem-plain device, in which vperf_guest.ko writes its trace rings.
 *
 * The file is the guest's to write at any time, and its owner's (the VMM's user, not this one) to
 * truncate, so nothing of it is mapped: every read is a pread(2) into a private buffer, checked
 * there once, and a file that shrinks is an error, not a SIGBUS.  The layout is taken from a
 * checked copy of the header and kept until the guest lays the region out again (a new
 * generation); each ring is drained as libvperf-hv drains a ring in guest memory (docs/abi.md
 * 2.5): head read once, each record checked by vperf_trace_rec_check(), an invalid record ends
 * the drain and the bytes after it up to head are counted as refused; the host's tail is its own
 * and is written back into the ring's header.
 *
 * A library: it prints nothing; errors are -errno with a sentence in why.
 */
#ifndef VPERF_RECORD_SHM_H
#define VPERF_RECORD_SHM_H

#include <stddef.h>
#include <stdint.h>

struct vperf_shm;

/* Where a drain's valid records go: records[len] of guest CPU cpu, whole records in ring order. */
struct vperf_shm_sink {
	int (*records)(void *arg, uint32_t cpu, const void *records, size_t len);
	void *arg;
};

struct vperf_shm_ring_stats {
	uint32_t cpu;			/* the guest CPU writing the ring */
	uint64_t data_size;
	uint64_t bytes;			/* consumed: head - tail summed over drains */
	uint64_t records;		/* valid records delivered */
	uint64_t refused_bytes;		/* after an invalid record, up to head */
	uint64_t refused_drains;	/* drains that stopped at an invalid record */
	uint64_t bad_headers;		/* drains refused whole: head behind tail or too far ahead */
	uint64_t guest_lost;		/* the ring header's lost, as last read */
	uint64_t guest_lost_decreases;	/* times it went down (a hostile guest; never subtracted) */
};

struct vperf_shm_stats {
	uint64_t generation;		/* of the layout in use (0: none yet) */
	uint32_t state;			/* enum vperf_shm_state as last read */
	uint32_t nr_rings;
	uint64_t layouts;		/* layouts taken */
	uint64_t layouts_refused;	/* headers that failed vperf_shm_check_layout */
	uint32_t last_refusal;		/* its enum vperf_shm_bad */
	uint64_t tsc_khz;		/* the guest's, from the header */
};

/*
 * Open the file at path (a regular file of VPERF_SHM_MIN_SIZE..VPERF_SHM_MAX_SIZE bytes; a
 * symbolic link is not followed) for reading and for writing each ring's tail.  The guest need
 * not have laid it out yet.  0, or -errno with why.
 */
int vperf_shm__open(const char *path, struct vperf_shm **out, char *why, size_t why_len);

/*
 * Read the header; take its layout when it is new and passes the checks (a refused one is
 * counted and the last good one kept); drain every ring into sink.  0; -EIO with why when the
 * file cannot be read any more (it shrank: the VMM is gone or truncated it); or the sink's
 * -errno (its records are lost, and the drain goes on to the next poll).
 */
int vperf_shm__poll(struct vperf_shm *s, struct vperf_shm_sink sink, char *why, size_t why_len);

/* The region's and ring i's figures (i < stats.nr_rings): 0, -EINVAL for a bad i. */
void vperf_shm__stats(const struct vperf_shm *s, struct vperf_shm_stats *st);
int vperf_shm__ring_stats(const struct vperf_shm *s, uint32_t i, struct vperf_shm_ring_stats *st);

/* A sentence for enum vperf_shm_bad. */
const char *vperf_shm__bad_str(uint32_t bad);

void vperf_shm__close(struct vperf_shm *s);

#endif /* VPERF_RECORD_SHM_H */
