// SPDX-License-Identifier: MIT
/*
 * The time-ordering queue (profiler/record/ordered.h) with known answers: what a flush
 * delivers, in which order, what it keeps, and what a late event becomes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ordered.h"
#include "vtest.h"

struct tev {
	struct vperf_ordered_ev h;
	int id;
};

struct got {
	int id[64];
	uint64_t ts[64];
	size_t n;
	int stop_at;			/* id whose delivery returns -EIO (0: none) */
};

static int take(void *arg, void *ev)
{
	struct got *g = arg;
	struct tev *e = ev;

	g->id[g->n] = e->id;
	g->ts[g->n++] = e->h.ts;
	return e->id == g->stop_at ? -5 : 0;
}

static void put(struct vperf_ordered *q, uint64_t ts, int id)
{
	struct tev *e = vperf_ordered__queue(q, ts);

	assert_non_null(e);
	assert_int_equal(e->id, 0);	/* zeroed */
	e->id = id;
}

/* Oldest first; events of one time in the order queued; younger than upto kept for later. */
static void ordered_flush_delivers_up_to_a_time_oldest_first_ties_as_queued(void **state)
{
	struct vperf_ordered q;
	struct got g = { .n = 0 };
	static const int want1[] = { 4, 2, 5, 1 }, want2[] = { 3, 6 };

	(void)state;
	vperf_ordered__init(&q, sizeof(struct tev));
	put(&q, 30, 1);
	put(&q, 20, 2);
	put(&q, 50, 3);
	put(&q, 10, 4);
	put(&q, 20, 5);
	put(&q, 90, 6);
	assert_int_equal(vperf_ordered__flush(&q, 30, take, &g), 0);
	assert_int_equal(g.n, 4);
	assert_memory_equal(g.id, want1, sizeof(want1));
	assert_int_equal(vperf_ordered__nr(&q), 2);
	g.n = 0;
	assert_int_equal(vperf_ordered__flush(&q, UINT64_MAX, take, &g), 0);
	assert_int_equal(g.n, 2);
	assert_memory_equal(g.id, want2, sizeof(want2));
	assert_int_equal(vperf_ordered__nr(&q), 0);
	assert_int_equal(q.late, 0);
	assert_int_equal(q.delivered, 6);
	vperf_ordered__exit(&q, NULL);
}

/* An event queued after a younger one was delivered comes at that one's time, counted late. */
static void ordered_late_event_is_delivered_at_the_last_time_and_counted(void **state)
{
	struct vperf_ordered q;
	struct got g = { .n = 0 };

	(void)state;
	vperf_ordered__init(&q, sizeof(struct tev));
	put(&q, 100, 1);
	assert_int_equal(vperf_ordered__flush(&q, 100, take, &g), 0);
	put(&q, 40, 2);		/* a source that was behind */
	put(&q, 120, 3);
	assert_int_equal(vperf_ordered__flush(&q, UINT64_MAX, take, &g), 0);
	assert_int_equal(g.n, 3);
	assert_int_equal(g.id[1], 2);
	assert_int_equal(g.ts[1], 100);
	assert_int_equal(g.ts[2], 120);
	assert_int_equal(q.late, 1);
	vperf_ordered__exit(&q, NULL);
}

static int released;
static void release(void *ev)
{
	(void)ev;
	released++;
}

/* The callback's error stops the flush; the event it failed on is gone, the rest wait. */
static void ordered_callback_error_stops_the_flush_and_keeps_the_rest(void **state)
{
	struct vperf_ordered q;
	struct got g = { .n = 0, .stop_at = 2 };

	(void)state;
	vperf_ordered__init(&q, sizeof(struct tev));
	for (int i = 1; i <= 4; i++)
		put(&q, (uint64_t)i * 10, i);
	put(&q, 1000, 99);
	vperf_ordered__unqueue(&q);	/* taken back: never delivered */
	assert_int_equal(vperf_ordered__flush(&q, UINT64_MAX, take, &g), -5);
	assert_int_equal(g.n, 2);
	assert_int_equal(vperf_ordered__nr(&q), 2);
	assert_int_equal(((struct tev *)vperf_ordered__at(&q, 0))->id, 3);
	assert_null(vperf_ordered__at(&q, 2));
	released = 0;
	vperf_ordered__exit(&q, release);
	assert_int_equal(released, 2);
	assert_int_equal(vperf_ordered__flush(&q, UINT64_MAX, take, &g), 0);	/* empty */
}

static int take_sorted(void *arg, void *ev)
{
	uint64_t *last = arg;
	struct tev *e = ev;

	if (e->h.ts < *last)
		fail_msg("event %d at %llu after one at %llu", e->id, (unsigned long long)e->h.ts,
			 (unsigned long long)*last);
	*last = e->h.ts;
	return 0;
}

/* Many events out of order: delivered sorted, every one. */
static void ordered_many_events_come_out_sorted(void **state)
{
	struct vperf_ordered q;
	uint64_t last = 0;
	size_t n = 0;

	(void)state;
	vperf_ordered__init(&q, sizeof(struct tev));
	for (int i = 100000; i > 0; i--)
		put(&q, (uint64_t)i * 7 % 100003, i);
	for (size_t i = 0; i < vperf_ordered__nr(&q); i++) {
		struct tev *e = vperf_ordered__at(&q, i);

		assert_true(e->h.seq == i);
	}
	assert_int_equal(vperf_ordered__flush(&q, UINT64_MAX, take_sorted, &last), 0);
	n = (size_t)q.delivered;
	assert_int_equal(n, 100000);
	assert_int_equal(q.late, 0);
	vperf_ordered__exit(&q, NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordered_flush_delivers_up_to_a_time_oldest_first_ties_as_queued),
		cmocka_unit_test(ordered_late_event_is_delivered_at_the_last_time_and_counted),
		cmocka_unit_test(ordered_callback_error_stops_the_flush_and_keeps_the_rest),
		cmocka_unit_test(ordered_many_events_come_out_sorted),
	};

	return VT_MAIN("ordered", tests, NULL, NULL);
}
