// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the host's reader of the shared-memory channel (shm.c, docs/abi.md 8) on a
 * region a hostile guest wrote, and rewrote between the host's polls.
 *
 * Input: the region's first bytes (REGION bytes, zeros after the input's end), then patches until
 * the input ends, each u16 offset (little-endian, into the region), u8 n, n bytes; the region gets
 * them one by one and the reader polls after each, and once more at the end.  A patch whose
 * offset has bit 15 set truncates the file to that offset's low bits times 8 first (a VMM's user
 * shrinking it) and ends the input.
 *
 * Checked besides ASan and UBSan: every poll returns 0 or -EIO with a reason; every record the
 * sink gets passes vperf_trace_rec_check() on its own, has the size it says, and was delivered
 * for a CPU that has a ring; the records counted per ring add up to no more than the sink got
 * (a CPU's figures carry over a new layout; one the new layout has not is dropped).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vperf/shm.h>
#include <vperf/trace_rec.h>

#include "shm.h"

#define REGION	(64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];
static int fd = -1;
static uint64_t delivered;

static void remove_region(void)
{
	unlink(path);
}

static void die(const char *what)
{
	fprintf(stderr, "fuzz-shm: %s\n", what);
	abort();
}

static int sink(void *arg, uint32_t cpu, const void *recs, size_t len)
{
	const unsigned char *p = recs;
	struct vperf_shm *s = arg;
	struct vperf_shm_stats st;
	uint32_t i;

	vperf_shm__stats(s, &st);
	for (i = 0; i < st.nr_rings; i++) {
		struct vperf_shm_ring_stats rs;

		if (vperf_shm__ring_stats(s, i, &rs) == 0 && rs.cpu == cpu)
			break;
	}
	if (i == st.nr_rings)
		die("records for a CPU without a ring");
	for (size_t off = 0; off < len;) {
		uint16_t rsize;
		unsigned char copy[VPERF_TRACE_REC_MAX];

		if (len - off < sizeof(struct vperf_trace_rec))
			die("a cut record");
		memcpy(&rsize, p + off, sizeof(rsize));
		if (rsize > len - off || rsize > sizeof(copy))
			die("a record past the batch");
		/* a copy of its own size, so that ASan sees a check reading past it */
		memcpy(copy, p + off, rsize);
		if (vperf_trace_rec_check(copy, rsize) != rsize)
			die("an invalid record delivered");
		off += rsize;
		delivered++;
	}
	return 0;
}

static void poll_once(struct vperf_shm *s)
{
	char why[256] = "";
	int err = vperf_shm__poll(s, (struct vperf_shm_sink){ sink, s }, why, sizeof(why));

	if (err && (err != -EIO || !why[0]))
		die("a poll failed without -EIO and a reason");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t first = size < REGION ? size : REGION, pos = first;
	struct vperf_shm *s;
	struct vperf_shm_stats st;
	uint64_t counted = 0;
	static unsigned char zero[REGION];
	char why[256];

	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/vperf-fuzz-shm-%d", (int)getpid());
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			die("cannot create the region file");
		atexit(remove_region);
	}
	/* a fresh region: the input's bytes, zeros after them */
	if (ftruncate(fd, 0) || ftruncate(fd, REGION) || pwrite(fd, zero, REGION, 0) != REGION ||
	    pwrite(fd, data, first, 0) != (ssize_t)first)
		die("cannot write the region");
	delivered = 0;
	if (vperf_shm__open(path, &s, why, sizeof(why)))
		die(why);
	poll_once(s);
	while (pos + 3 <= size) {
		uint16_t off = (uint16_t)(data[pos] | data[pos + 1] << 8);
		uint8_t n = data[pos + 2];

		pos += 3;
		if (off & 0x8000) {
			if (ftruncate(fd, (off_t)(off & 0x7fff) * 8))
				die("cannot truncate");
			poll_once(s);
			break;
		}
		if (n > size - pos)
			n = (uint8_t)(size - pos);
		if (off + n > REGION)
			n = (uint8_t)(REGION - off);
		if (pwrite(fd, data + pos, n, off) != n)
			die("cannot patch the region");
		pos += n;
		poll_once(s);
	}
	poll_once(s);
	vperf_shm__stats(s, &st);
	for (uint32_t i = 0; i < st.nr_rings; i++) {
		struct vperf_shm_ring_stats rs;

		if (vperf_shm__ring_stats(s, i, &rs))
			die("a ring's figures not there");
		counted += rs.records;
	}
	/* per-CPU figures carry over layouts, so a CPU gone from the last layout is not summed */
	if (counted > delivered)
		die("more records counted than delivered");
	if (vperf_shm__ring_stats(s, st.nr_rings, &(struct vperf_shm_ring_stats){ 0 }) != -EINVAL)
		die("a ring past the last one has figures");
	vperf_shm__close(s);
	return 0;
}
