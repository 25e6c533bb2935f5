/* SPDX-License-Identifier: MIT */
/*
 * Events put in time order before they are written (libvperf_record): what perf calls ordered
 * events.  Recorders read their sources (perf rings, a raw recording's guest rings and host
 * events) each in its own order; a trace wants one order.  Each event is queued with its time,
 * and a flush delivers, oldest first, those up to a time: the live recorder flushes up to a
 * while ago as it goes, a converter everything at the end.
 *
 *	struct my_ev { struct vperf_ordered_ev h; int what; };
 *	struct vperf_ordered q;
 *
 *	vperf_ordered__init(&q, sizeof(struct my_ev));
 *	struct my_ev *e = vperf_ordered__queue(&q, ts);		(NULL: out of memory)
 *	e->what = 1;
 *	err = vperf_ordered__flush(&q, UINT64_MAX, write_one, ctx);
 *	vperf_ordered__exit(&q, NULL);
 *
 * Events of one time are delivered in the order they were queued.  An event queued after a
 * flush delivered a younger one (a source that was late) is delivered at the time of the last
 * event delivered, not before it, and counted (late): a trace's streams must not go back.
 * Not thread safe.
 */
#ifndef VPERF_RECORD_ORDERED_H
#define VPERF_RECORD_ORDERED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The first member of every event queued. */
struct vperf_ordered_ev {
	uint64_t ts;			/* ns on the trace's clock */
	uint64_t seq;			/* the order it was queued in */
};

struct vperf_ordered {
	size_t size;			/* bytes per event, its header included */
	unsigned char *ev;		/* the events waiting */
	size_t nr, cap;
	uint64_t seq;
	uint64_t last_ts;		/* of the last event delivered */
	uint64_t delivered;		/* events delivered so far */
	uint64_t late;			/* of them, late ones (above) */
};

/* size: of the caller's event struct, whose first member is a struct vperf_ordered_ev. */
void vperf_ordered__init(struct vperf_ordered *q, size_t size);

/*
 * A new event at ts: zeroed but for its header, valid until the next call on q.  NULL: out of
 * memory (nothing queued).
 */
void *vperf_ordered__queue(struct vperf_ordered *q, uint64_t ts);

/* Take back the event queued last (one a recorder began and then would not keep). */
void vperf_ordered__unqueue(struct vperf_ordered *q);

/* Events waiting, and the i-th of them in the order queued (before a flush: any order). */
size_t vperf_ordered__nr(const struct vperf_ordered *q);
void *vperf_ordered__at(const struct vperf_ordered *q, size_t i);

/*
 * Deliver the events up to upto (their ts <= upto), oldest first, to fn(arg, ev); then they
 * are no longer queued.  fn returning non-zero stops the flush with that value; the event it
 * was given is not queued any more either (the caller has seen it).  0, or fn's value.
 */
typedef int (*vperf_ordered_fn)(void *arg, void *ev);
int vperf_ordered__flush(struct vperf_ordered *q, uint64_t upto, vperf_ordered_fn fn, void *arg);

/* Free what waits (release(ev) first on each, unless NULL). */
void vperf_ordered__exit(struct vperf_ordered *q, void (*release)(void *ev));

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_ORDERED_H */
