// SPDX-License-Identifier: MIT
/*
 * When each thread ran (report.h): one pass over the recording's scheduling events in time
 * order, an open slice per thread, closed by its switch out or its exit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slices.h"
#include "states.h"

#define NONE	UINT64_MAX
#define MAX_CPUS	1024	/* CPUs whose runner is followed (sched_switch pairs) */

struct open {
	uint64_t since;			/* running since (NONE: not running) */
	uint64_t first;			/* the thread's first event (NONE: none yet) */
	uint32_t cpu;
	bool closed_once;		/* a slice of it ended already */
};

struct acc {
	struct vperf_report_slice *s;
	size_t nr, cap;
};

static int emit(struct acc *a, int32_t thread, uint32_t cpu, uint64_t start, uint64_t end,
		bool preempted)
{
	if (a->nr == a->cap) {
		size_t c = a->cap ? 2 * a->cap : 256;
		struct vperf_report_slice *n = realloc(a->s, c * sizeof(*n));

		if (!n)
			return -ENOMEM;
		a->s = n;
		a->cap = c;
	}
	a->s[a->nr++] = (struct vperf_report_slice){ .start = start,
						     .end = end < start ? start : end,
						     .thread = thread, .cpu = cpu,
						     .preempted = preempted };
	return 0;
}

static int by_thread(const void *a, const void *b)
{
	const struct vperf_report_slice *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Close thread t's open slice at ts (if it has one). */
static int close_at(struct acc *a, struct open *o, int32_t t, uint64_t ts, bool preempted)
{
	int err = 0;

	if (o[t].since != NONE)
		err = emit(a, t, o[t].cpu, o[t].since, ts, preempted);
	o[t].since = NONE;
	o[t].closed_once = true;
	return err;
}

int vperf_report__running(const struct vperf_report *r, struct vperf_report_slice **out,
			  size_t *nr)
{
	struct acc a = { 0 };
	int32_t cur[2][MAX_CPUS];	/* host, guest: who runs on each CPU, -1: none (8 KiB) */
	struct open *o;
	bool tswitch[2] = { false, false };	/* host, guest: thread_switch recorded */
	int err = 0;

	*out = NULL;
	*nr = 0;
	if (!r->nr_threads)
		return 0;
	o = malloc(r->nr_threads * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_threads; i++) {
		o[i] = (struct open){ .since = NONE, .first = NONE };
		if (r->threads[i].switches)
			tswitch[r->threads[i].guest] = true;
	}
	for (size_t g = 0; g < 2; g++)
		for (size_t c = 0; c < MAX_CPUS; c++)
			cur[g][c] = -1;
	for (size_t i = 0; i < r->nr_tlevs && !err; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		int32_t t = e->thread;
		bool by_sched;

		if (t < 0)
			continue;
		by_sched = !tswitch[r->threads[t].guest];
		switch (e->kind) {
		case VPERF_REPORT_EV_SWITCH_IN:
			err = close_at(&a, o, t, e->ts, false);	/* an in without an out */
			o[t].since = e->ts;
			o[t].cpu = e->cpu;
			break;
		case VPERF_REPORT_EV_SWITCH_OUT:
			if (o[t].since == NONE && !o[t].closed_once) {
				/* running since before its first switch: its exec */
				o[t].since = o[t].first != NONE ? o[t].first : r->first_ts;
				o[t].cpu = e->cpu;
			}
			err = close_at(&a, o, t, e->ts, e->arg);
			break;
		case VPERF_REPORT_EV_SCHED_SWITCH:
			if (!by_sched)
				break;
			/*
			 * The thread this CPU ran since its last recorded switch, if it is not
			 * the one leaving now, left at a time not recorded (a VM recording keeps
			 * only the vCPU threads' switches): its slice is left out.
			 */
			if (e->cpu < MAX_CPUS) {
				int32_t *c = &cur[r->threads[t].guest][e->cpu];

				if (*c >= 0 && *c != t && o[*c].since != NONE && o[*c].cpu == e->cpu)
					o[*c].since = NONE;
				*c = e->other >= 0 && r->threads[e->other].tid ? e->other : -1;
			}
			if (o[t].since != NONE && o[t].cpu == e->cpu)
				err = close_at(&a, o, t, e->ts, false);
			else
				o[t].since = NONE;	/* its in was not seen: left out */
			if (!err && e->other >= 0 && r->threads[e->other].tid) {
				o[e->other].since = e->ts;
				o[e->other].cpu = e->cpu;
			}
			break;
		case VPERF_REPORT_EV_EXIT:
			err = close_at(&a, o, t, e->ts, false);
			break;
		default:
			break;
		}
		if (o[t].first == NONE)
			o[t].first = e->ts;
	}
	for (size_t t = 0; t < r->nr_threads && !err; t++)
		err = close_at(&a, o, (int32_t)t, r->last_ts, false);
	free(o);
	if (err) {
		free(a.s);
		return err;
	}
	if (a.nr > 1)
		qsort(a.s, a.nr, sizeof(*a.s), by_thread);
	*out = a.s;
	*nr = a.nr;
	return 0;
}

bool *vperf_report__shown(const struct vperf_report *r, const struct vperf_report_slice *s,
			  size_t nr, int event)
{
	bool *used = calloc(r->nr_threads + 1, sizeof(*used));

	if (!used)
		return NULL;
	for (size_t i = 0; i < nr; i++)
		used[s[i].thread] = true;
	for (size_t i = 0; i < r->nr_samples; i++)
		used[r->samples[i].thread] |= event < 0 || r->samples[i].event == (uint32_t)event;
	for (size_t i = 0; i < r->nr_tlevs; i++)
		if (r->tlevs[i].thread >= 0 && r->tlevs[i].kind != VPERF_REPORT_EV_SCHED_SWITCH)
			used[r->tlevs[i].thread] = true;
	for (size_t i = 0; i < r->nr_threads; i++)
		used[i] &= r->threads[i].tid != 0;
	return used;
}

void vperf_report__lifetime(const struct vperf_report *r, int32_t thread, uint64_t *born,
			    uint64_t *died)
{
	*born = r->first_ts;
	*died = r->last_ts;
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];

		if (e->thread != thread)
			continue;
		if (e->kind == VPERF_REPORT_EV_FORK)
			*born = e->ts;
		else if (e->kind == VPERF_REPORT_EV_EXIT)
			*died = e->ts;
	}
}

const char *vperf_report__thread_name(const struct vperf_report *r, int32_t t, char *buf,
				      size_t len)
{
	const struct vperf_report_thread *th = &r->threads[t];

	if (th->comm != UINT32_MAX)
		return r->strings[th->comm];
	snprintf(buf, len, ":%" PRIu32, th->tid);
	return buf;
}
