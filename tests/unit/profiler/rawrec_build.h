/* SPDX-License-Identifier: MIT */
/*
 * Raw recordings (hv/include/vperf/rawrec.h) written chunk by chunk in a unit test, as vperf-vmm
 * writes them, for the converter's tests and the timelines' (a VM recording made here).
 * Include after cmocka (vtest.h).
 */
#ifndef VT_RAWREC_BUILD_H
#define VT_RAWREC_BUILD_H

#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <vperf/abi.h>
#include <vperf/rawrec.h>

#include "bt2run.h"
#include "vtest.h"

#define KHZ		2000000ull	/* 2 GHz: 2 cycles per ns */
#define START_TSC	2000000000ull	/* 1 s */
#define OFFSET0		(-400000000ll)	/* guest TSC = host TSC + offset */

struct tdir {
	char base[64];
	char raw[96], trace[96];
	FILE *f;
};

/* A test's directory (cmocka setup and teardown): t->raw, the raw file; t->trace, the CTF. */
static inline int tdir_setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->base, sizeof(t->base), "/tmp/vperf-rawrec-XXXXXX");
	if (!mkdtemp(t->base))
		return -1;
	snprintf(t->raw, sizeof(t->raw), "%s/raw", t->base);
	snprintf(t->trace, sizeof(t->trace), "%s/trace", t->base);
	*state = t;
	return 0;
}

static inline int tdir_teardown(void **state)
{
	struct tdir *t = *state;
	int ret = vt_rmtree(t->base);

	free(t);
	return ret;
}

static inline void raw_open(struct tdir *t, unsigned int nr_vcpus)
{
	struct vperf_rawrec_header h = {
		.size = sizeof(h), .version = VPERF_RAWREC_VERSION, .tsc_khz = KHZ,
		.nr_vcpus = nr_vcpus, .start_tsc = START_TSC,
		.start_realtime_ns = 1700000000ull * 1000000000ull, .start_monotonic_ns = 5,
	};

	memcpy(h.magic, VPERF_RAWREC_MAGIC, 8);
	t->f = fopen(t->raw, "w");
	assert_non_null(t->f);
	assert_int_equal(fwrite(&h, sizeof(h), 1, t->f), 1);
}

static inline void chunk(struct tdir *t, uint32_t type, uint32_t cpu, const void *p, uint32_t size)
{
	struct vperf_rawrec_chunk c = { .type = type, .size = size, .cpu = cpu };
	static const char zero[8];

	assert_int_equal(fwrite(&c, sizeof(c), 1, t->f), 1);
	assert_int_equal(fwrite(p, 1, size, t->f), size);
	assert_int_equal(fwrite(zero, 1, (8 - size % 8) % 8, t->f), (8 - size % 8) % 8);
}

static inline void raw_close(struct tdir *t, bool end)
{
	struct vperf_rawrec_end e = { .host_tsc = START_TSC * 10 };

	if (end)
		chunk(t, VPERF_RAWREC_END, 0, &e, sizeof(e));
	assert_int_equal(fclose(t->f), 0);
}

/* A marker record at guest TSC tsc, appended to buf at *len. */
static inline void mark(unsigned char *buf, size_t *len, const char *name, uint64_t value,
			uint64_t tsc, uint32_t tid)
{
	struct vperf_trace_mark *m = (void *)(buf + *len);
	size_t n = strlen(name), size = (sizeof(*m) + n + 7) & ~(size_t)7;

	memset(m, 0, size);
	m->h.size = (uint16_t)size;
	m->h.type = VPERF_TRACE_MARK;
	m->h.tsc = tsc;
	m->h.pid = 100;
	m->h.tid = tid;
	m->value = value;
	m->kind = VPERF_TRACE_MARK_INSTANT;
	m->name_len = (uint32_t)n;
	memcpy(m->name, name, n);
	*len += size;
}

#endif /* VT_RAWREC_BUILD_H */
