// SPDX-License-Identifier: MIT
/*
 * Events put in time order (ordered.h): an array, sorted by (ts, seq) at each flush, its
 * delivered head moved out.
 */
#include <stdlib.h>
#include <string.h>

#include "ordered.h"

void vperf_ordered__init(struct vperf_ordered *q, size_t size)
{
	memset(q, 0, sizeof(*q));
	q->size = size < sizeof(struct vperf_ordered_ev) ? sizeof(struct vperf_ordered_ev) : size;
}

void *vperf_ordered__queue(struct vperf_ordered *q, uint64_t ts)
{
	struct vperf_ordered_ev *h;

	if (q->nr == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 4096;
		unsigned char *n = cap > SIZE_MAX / q->size ? NULL : realloc(q->ev, cap * q->size);

		if (!n)
			return NULL;
		q->ev = n;
		q->cap = cap;
	}
	h = (void *)(q->ev + q->nr++ * q->size);
	memset(h, 0, q->size);
	h->ts = ts;
	h->seq = q->seq++;
	return h;
}

void vperf_ordered__unqueue(struct vperf_ordered *q)
{
	if (q->nr)
		q->nr--;
}

size_t vperf_ordered__nr(const struct vperf_ordered *q)
{
	return q->nr;
}

void *vperf_ordered__at(const struct vperf_ordered *q, size_t i)
{
	return i < q->nr ? q->ev + i * q->size : NULL;
}

static int by_time(const void *a, const void *b)
{
	const struct vperf_ordered_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int vperf_ordered__flush(struct vperf_ordered *q, uint64_t upto, vperf_ordered_fn fn, void *arg)
{
	size_t i;
	int err = 0;

	if (q->nr)
		qsort(q->ev, q->nr, q->size, by_time);
	for (i = 0; i < q->nr; i++) {
		struct vperf_ordered_ev *h = (void *)(q->ev + i * q->size);

		if (h->ts > upto)
			break;
		if (q->delivered && h->ts < q->last_ts) {
			q->late++;
			h->ts = q->last_ts;
		}
		q->last_ts = h->ts;
		q->delivered++;
		err = fn(arg, h);
		if (err) {
			i++;
			break;
		}
	}
	if (i && i < q->nr)
		memmove(q->ev, q->ev + i * q->size, (q->nr - i) * q->size);
	q->nr -= i;
	return err;
}

void vperf_ordered__exit(struct vperf_ordered *q, void (*release)(void *ev))
{
	for (size_t i = 0; release && i < q->nr; i++)
		release(q->ev + i * q->size);
	free(q->ev);
	memset(q, 0, sizeof(*q));
}
