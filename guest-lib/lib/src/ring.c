// SPDX-License-Identifier: MIT
/* Reading the kernel's perf ring buffers (the data pages after the mmap page). */
#include <string.h>

#include "internal.h"

void vperf__ring_drain(struct perf_event_mmap_page *pc, void *data, size_t data_size,
		       vperf_record_fn fn, void *arg)
{
	unsigned char *d = data;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pc->data_tail;
	union {
		struct perf_event_header h;
		unsigned char b[VPERF_RECORD_MAX];
	} tmp;

	/* A head that ran more than a buffer ahead means the kernel lost track. */
	if (head - tail > data_size)
		tail = head - data_size;
	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t off = tail & (data_size - 1);
		const struct perf_event_header *h = (const void *)(d + off);
		uint16_t size;

		if (off + sizeof(*h) > data_size) {
			size_t first = data_size - off;

			memcpy(tmp.b, d + off, first);
			memcpy(tmp.b + first, d, sizeof(*h) - first);
			h = &tmp.h;
		}
		size = h->size;
		if (size < sizeof(*h) || tail + size > head)
			break;	/* corrupt or not yet complete: never loop on it */
		if (off + size > data_size) {
			size_t first = data_size - off;

			if (size <= sizeof(tmp.b)) {
				memcpy(tmp.b, d + off, first);
				memcpy(tmp.b + first, d, size - first);
				fn(&tmp.h, arg);
			}
		} else {
			fn(h, arg);
		}
		tail += size;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
}
