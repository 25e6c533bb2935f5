// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vperf record's perf ring reader and record decoder (perfdec.c), and the
 * tracepoint format parser, on arbitrary bytes.  The input's first byte picks the ring's size
 * (the data wraps around its end there); the rest is the ring's data, read as records from a tail
 * the second byte places, each decoded against three registered events (samples with and without
 * callchains, a tracepoint with raw data).  The same bytes are then a tracefs format text, and
 * the fields it gives read a raw record.  Any read outside the input is a crash (ASan).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "perfdec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ST (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	    PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t bounce[65536];
	struct vperf_perfdec d = { 0 };
	struct vperf_perf_ring ring;
	struct vperf_tpfield f[3] = { { .name = "prev_pid" }, { .name = "prev_comm" },
				      { .name = "common_flags" } };
	uint8_t *area;
	uint64_t ring_size;
	const void *rec;
	size_t len;
	char why[160], comm[17];
	long id;
	uint64_t v;

	if (size < 2)
		return 0;
	ring_size = 64ull << (data[0] % 8);	/* 64 .. 8192 bytes */
	area = calloc(1, ring_size);
	if (!area)
		return 0;
	memcpy(area, data + 2, size - 2 < ring_size ? size - 2 : ring_size);
	vperf_perfdec__add(&d, 1, ST, 0);
	vperf_perfdec__add(&d, 2, ST | PERF_SAMPLE_CALLCHAIN, 1);
	vperf_perfdec__add(&d, 3, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_RAW, 2);
	ring = (struct vperf_perf_ring){ .data = area, .size = ring_size, .bounce = bounce,
					 .bounce_len = sizeof(bounce) };
	ring.tail = (uint64_t)data[1] * 8;
	ring.head = ring.tail + (size - 2 < ring_size ? size - 2 : ring_size);
	while (vperf_perf_ring__next(&ring, &rec, &len) > 0) {
		struct vperf_perfrec r;

		if (vperf_perfdec__parse(&d, rec, len, &r, why, sizeof(why)) == 0 &&
		    r.kind == VPERF_PERFREC_SAMPLE) {
			volatile uint64_t sink = 0;

			for (uint32_t i = 0; i < r.sample.nr_chain; i++) {
				memcpy(&v, &r.sample.chain[i], sizeof(v));
				sink += v;
			}
			for (uint32_t i = 0; i < r.sample.raw_size; i++)
				sink += r.sample.raw[i];
			(void)sink;
		}
	}
	vperf_perfdec__exit(&d);
	if (vperf_tpfmt_parse((const char *)data, size, &id, f, 3, why, sizeof(why)) == 0) {
		vperf_tp_u64(data, (uint32_t)size, &f[0], &v);
		vperf_tp_u64(data, (uint32_t)size, &f[2], &v);
		vperf_tp_str(data, (uint32_t)size, &f[1], comm, sizeof(comm));
	}
	free(area);
	return 0;
}
