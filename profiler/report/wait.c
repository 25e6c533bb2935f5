// SPDX-License-Identifier: MIT
/*
 * Where a guest thread's time went (report.h, docs/states.md).  Two passes over the recording's
 * events in time order:
 *
 * 1. Each vCPU's host side, from its thread's host events: kvm_exit .. kvm_entry is an exit in
 *    KVM, the VMM's vmm_exit records cut the part spent in user space out of it, and the host's
 *    sched_switch of the vCPU thread says when it was preempted (runnable) or slept.  The result
 *    is a list of segments per vCPU covering the recording.
 * 2. Each guest thread's side, from the guest's sched_switch and sched_wakeup: while it is on a
 *    vCPU its time is that vCPU's segments over its slice; while it is off, it is runnable
 *    (preempted in the guest, or woken and not yet run) or blocked, and a blocked wait is
 *    classed by its wakeup: a waker thread, or (waker 0: interrupt context) the interrupt that
 *    ran just before it on a vCPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "states.h"
#include "slices.h"

#define NONE		UINT64_MAX
#define IRQ_WINDOW_NS	2000000ull	/* an interrupt this close before a wakeup is its cause */
#define SVM_HLT		0x78
#define VMX_HLT		12
#define LAYER_HOST	0

const char *const vperf_report_state_names[VPERF_STATE_NR] = {
	[VPERF_STATE_GUEST] = "running in the guest",
	[VPERF_STATE_KVM] = "in the host for a VM exit: in KVM",
	[VPERF_STATE_VMM] = "in the host for a VM exit: in the VMM",
	[VPERF_STATE_PREEMPTED] = "preempted on the host",
	[VPERF_STATE_HOST_SLEEP] = "vCPU sleeping in the host",
	[VPERF_STATE_RUNNABLE] = "runnable in the guest",
	[VPERF_STATE_WAIT_TIMER] = "waiting: timer",
	[VPERF_STATE_WAIT_DEVICE] = "waiting: device",
	[VPERF_STATE_WAIT_THREAD] = "waiting: thread",
	[VPERF_STATE_WAIT_UNKNOWN] = "waiting: unknown",
};

/* ---- pass 1: each vCPU's host side ---- */

struct seg {
	uint64_t start, end;
	uint8_t state;
	bool first;			/* the start of its exit, preemption or sleep (counted) */
	char detail[VPERF_STATE_DETAIL];
};

struct segs {
	struct seg *s;
	size_t nr, cap;
};

struct vmm_iv {
	uint64_t start, end;
	uint32_t str;
	int32_t port;			/* an io exit's, else -1 */
};

struct hstate {
	uint8_t state, saved_state;
	char detail[VPERF_STATE_DETAIL], saved_detail[VPERF_STATE_DETAIL];
	uint64_t since, reason;
	bool first;			/* the current state began here (else it goes on after a
					 * preemption or sleep: not counted again) */
	bool off;			/* its host thread is off its CPU */
	bool woken;			/* woken while off: whoever ran until it got a CPU took it */
	struct vmm_iv *vmm;
	size_t nr_vmm, cap_vmm;
	struct segs base, segs;
};

static int push_seg(struct segs *l, uint64_t start, uint64_t end, uint8_t state, bool first,
		    const char *detail)
{
	struct seg *g;

	if (end <= start)
		return 0;
	if (vperf_report_grow(&l->s, &l->cap, l->nr, sizeof(*l->s)))
		return -ENOMEM;
	g = &l->s[l->nr++];
	g->start = start;
	g->end = end;
	g->state = state;
	g->first = first;
	snprintf(g->detail, sizeof(g->detail), "%s", detail);
	return 0;
}

static int hchange(struct hstate *h, uint64_t ts, uint8_t state, const char *detail)
{
	int err = 0;

	if (ts > h->since) {
		err = push_seg(&h->base, h->since, ts, h->state, h->first, h->detail);
		h->since = ts;
	}
	h->first = true;
	h->state = state;
	if (detail != h->detail)
		snprintf(h->detail, sizeof(h->detail), "%s", detail);
	return err;
}

static const char *comm_of(const struct vperf_report *r, int32_t t, char *buf, size_t len)
{
	if (t < 0)
		return "?";
	snprintf(buf, len, "%s:%" PRIu32,
		 r->threads[t].comm != UINT32_MAX ? r->strings[r->threads[t].comm] : "",
		 r->threads[t].tid);
	return buf;
}

/* Cut each vmm_exit out of the KVM (or, without host events, guest) segments it lies in. */
static int overlay(const struct vperf_report *r, struct hstate *h)
{
	size_t j = 0;

	for (size_t i = 0; i < h->base.nr; i++) {
		const struct seg *g = &h->base.s[i];
		uint64_t at = g->start;
		bool first = g->first;

		if (g->state != VPERF_STATE_KVM && g->state != VPERF_STATE_GUEST) {
			if (push_seg(&h->segs, g->start, g->end, g->state, g->first, g->detail))
				return -ENOMEM;
			continue;
		}
		while (j < h->nr_vmm && h->vmm[j].end <= g->start)
			j++;
		for (size_t k = j; k < h->nr_vmm && h->vmm[k].start < g->end; k++) {
			uint64_t a = h->vmm[k].start > at ? h->vmm[k].start : at;
			uint64_t b = h->vmm[k].end < g->end ? h->vmm[k].end : g->end;
			char why[VPERF_STATE_DETAIL];

			if (b <= a)
				continue;
			snprintf(why, sizeof(why), "%s",
				 h->vmm[k].str != UINT32_MAX ? r->strings[h->vmm[k].str] : "exit");
			if (h->vmm[k].port >= 0)	/* which device: the port */
				snprintf(why + strlen(why), sizeof(why) - strlen(why), " 0x%" PRIx32,
					 (uint32_t)h->vmm[k].port);
			if (push_seg(&h->segs, at, a, g->state, first, g->detail) ||
			    push_seg(&h->segs, a, b, VPERF_STATE_VMM, h->vmm[k].start >= g->start,
				     why))
				return -ENOMEM;
			first = first && a <= at;
			at = b;
		}
		if (push_seg(&h->segs, at, g->end, g->state, first && at == g->start, g->detail))
			return -ENOMEM;
	}
	return 0;
}

static int host_pass(const struct vperf_report *r, struct vperf_report_analysis *a,
		     struct hstate *hs, size_t nv, const int32_t *vcpu_of)
{
	char buf[VPERF_STATE_DETAIL];

	for (size_t v = 0; v < nv; v++) {
		hs[v].state = VPERF_STATE_GUEST;
		hs[v].since = r->first_ts;
		hs[v].first = true;
	}
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		struct hstate *h;
		int32_t v;
		int err = 0;

		switch (e->kind) {
		case VPERF_REPORT_EV_KVM_EXIT:
		case VPERF_REPORT_EV_KVM_ENTRY:
			v = e->thread >= 0 ? vcpu_of[e->thread] : -1;
			if (v < 0 || hs[v].off)
				break;
			if (e->kind == VPERF_REPORT_EV_KVM_ENTRY) {
				err = hchange(&hs[v], e->ts, VPERF_STATE_GUEST, "");
				break;
			}
			hs[v].reason = e->arg;
			{
				const char *n = vperf_report_exit_name(e->arg, a->svm);

				if (n)
					snprintf(buf, sizeof(buf), "%s", n);
				else
					snprintf(buf, sizeof(buf), "0x%" PRIx64, e->arg);
			}
			err = hchange(&hs[v], e->ts, VPERF_STATE_KVM, buf);
			break;
		case VPERF_REPORT_EV_SCHED_SWITCH:
			if (e->layer != LAYER_HOST)
				break;
			v = e->thread >= 0 ? vcpu_of[e->thread] : -1;
			if (v >= 0 && !hs[v].off) {
				h = &hs[v];
				h->saved_state = h->state;
				memcpy(h->saved_detail, h->detail, sizeof(h->detail));
				h->off = true;
				h->woken = false;
				if ((e->arg & 0xff) == 0)
					err = hchange(h, e->ts, VPERF_STATE_PREEMPTED,
						      comm_of(r, e->other, buf, sizeof(buf)));
				else
					err = hchange(h, e->ts, VPERF_STATE_HOST_SLEEP,
						      h->saved_state == VPERF_STATE_KVM &&
						      h->reason == (a->svm ? SVM_HLT : VMX_HLT)
						      ? "halted" : "sleeping");
			}
			v = e->other >= 0 ? vcpu_of[e->other] : -1;
			if (!err && v >= 0 && hs[v].off) {
				h = &hs[v];
				if (h->woken && e->thread >= 0 && r->threads[e->thread].tid)
					/* woken, it waited for whoever ran until now */
					snprintf(h->detail, sizeof(h->detail), "%s",
						 comm_of(r, e->thread, buf, sizeof(buf)));
				else if (h->woken)
					snprintf(h->detail, sizeof(h->detail),
						 "woken, its host CPU idle");
				h->off = false;
				err = hchange(h, e->ts, h->saved_state, h->saved_detail);
				h->first = false;	/* the exit (or guest run) goes on */
			}
			break;
		case VPERF_REPORT_EV_WAKEUP:
			if (e->layer != LAYER_HOST || e->thread < 0)
				break;
			v = vcpu_of[e->thread];
			if (v >= 0 && hs[v].off && hs[v].state == VPERF_STATE_HOST_SLEEP) {
				hs[v].woken = true;
				err = hchange(&hs[v], e->ts, VPERF_STATE_PREEMPTED,
					      "woken, waiting for a host CPU");
			}
			break;
		case VPERF_REPORT_EV_VMM_EXIT:
			if (e->cpu >= nv)
				break;
			h = &hs[e->cpu];
			if (vperf_report_grow(&h->vmm, &h->cap_vmm, h->nr_vmm, sizeof(*h->vmm)))
				return -ENOMEM;
			h->vmm[h->nr_vmm++] = (struct vmm_iv){ .start = e->ts, .end = e->ts + e->arg,
							       .str = e->str, .port = e->other };
			break;
		default:
			break;
		}
		if (err)
			return err;
	}
	for (size_t v = 0; v < nv; v++) {
		if (hchange(&hs[v], r->last_ts, hs[v].state, hs[v].detail) || overlay(r, &hs[v]))
			return -ENOMEM;
	}
	return 0;
}

/* ---- the exits (VPERF_ANALYSE_EXITS) ---- */

static int by_vcpu_time(const void *x, const void *y)
{
	const struct vperf_report_exit *a = x, *b = y;

	if (a->vcpu != b->vcpu)
		return a->vcpu < b->vcpu ? -1 : 1;
	return a->tlev < b->tlev ? -1 : a->tlev > b->tlev;	/* tlevs are in time order */
}

/*
 * Every kvm_exit of a vCPU thread, to its vCPU's next kvm_entry, and its cost: the host-side
 * segments of host_pass that lie in it, by state.  A segment is charged to the exit it starts
 * in, so the exits of a vCPU add up to its non-guest time.
 */
static int exits_pass(const struct vperf_report *r, struct vperf_report_analysis *a,
		      const struct hstate *hs, size_t nv, const int32_t *vcpu_of)
{
	size_t cap = 0, *open = calloc(nv + 1, sizeof(*open));

	if (!open)
		return -ENOMEM;
	for (size_t v = 0; v < nv; v++)
		open[v] = SIZE_MAX;
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		int32_t v;

		if (e->kind != VPERF_REPORT_EV_KVM_EXIT && e->kind != VPERF_REPORT_EV_KVM_ENTRY)
			continue;
		v = e->thread >= 0 ? vcpu_of[e->thread] : -1;
		if (v < 0)
			continue;
		if (open[v] != SIZE_MAX) {	/* the exit before ends here (an entry, or a new exit) */
			a->exits[open[v]].end = e->ts;
			open[v] = SIZE_MAX;
		}
		if (e->kind == VPERF_REPORT_EV_KVM_ENTRY)
			continue;
		if (vperf_report_grow(&a->exits, &cap, a->nr_exits, sizeof(*a->exits))) {
			free(open);
			return -ENOMEM;
		}
		open[v] = a->nr_exits;
		a->exits[a->nr_exits++] = (struct vperf_report_exit){
			.ts = e->ts, .end = r->last_ts, .tlev = i, .thread = e->other,
			.vcpu = (uint32_t)v, .reason = e->arg };
	}
	free(open);
	if (a->nr_exits > 1)
		qsort(a->exits, a->nr_exits, sizeof(*a->exits), by_vcpu_time);
	for (size_t i = 0, v = 0; v < nv; v++) {
		const struct segs *l = &hs[v].segs;

		while (i < a->nr_exits && a->exits[i].vcpu < v)
			i++;
		for (size_t j = 0; j < l->nr && i < a->nr_exits && a->exits[i].vcpu == v; j++) {
			const struct seg *g = &l->s[j];
			struct vperf_report_exit *x;
			uint64_t end, *part;

			if (g->state == VPERF_STATE_GUEST)
				continue;
			while (i + 1 < a->nr_exits && a->exits[i + 1].vcpu == v &&
			       a->exits[i + 1].ts <= g->start)
				i++;
			x = &a->exits[i];
			if (g->start < x->ts || g->start >= x->end)
				continue;	/* not in an exit: host events missing */
			end = g->end < x->end ? g->end : x->end;
			part = g->state == VPERF_STATE_KVM ? &x->kvm_ns :
			       g->state == VPERF_STATE_VMM ? &x->vmm_ns :
			       g->state == VPERF_STATE_PREEMPTED ? &x->preempted_ns :
			       g->state == VPERF_STATE_HOST_SLEEP ? &x->sleep_ns : NULL;
			if (part)	/* the host-side states; the guest's are no exit's */
				*part += end - g->start;
		}
	}
	return 0;
}

/* ---- rows ---- */

static int add_row(struct vperf_report_states *st, size_t *cap, uint8_t state, const char *detail,
		   uint64_t ns, uint64_t count)
{
	struct vperf_report_state_row *w;

	if (!ns && !count)
		return 0;
	for (size_t i = 0; i < st->nr_rows; i++) {
		w = &st->rows[i];
		if (w->state == state && !strncmp(w->detail, detail, sizeof(w->detail) - 1)) {
			w->ns += ns;
			w->count += count;
			return 0;
		}
	}
	if (vperf_report_grow(&st->rows, cap, st->nr_rows, sizeof(*st->rows)))
		return -ENOMEM;
	w = &st->rows[st->nr_rows++];
	memset(w, 0, sizeof(*w));
	w->state = state;
	snprintf(w->detail, sizeof(w->detail), "%s", detail);
	w->ns = ns;
	w->count = count;
	return 0;
}

static int by_time(const void *x, const void *y)
{
	const struct vperf_report_state_row *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->state != b->state)
		return a->state < b->state ? -1 : 1;
	return strcmp(a->detail, b->detail);
}

/* ---- pass 2: each guest thread ---- */

struct gstate {
	uint64_t since;			/* on a vCPU since (NONE: off) */
	uint64_t off_since;		/* off since (NONE: not off, or not seen yet) */
	uint64_t woken;
	uint32_t vcpu;
	bool blocked, exited, done;
	int32_t out;			/* its table in a->threads, -1: none */
	size_t cap_rows;
	struct vperf_report_wait w;	/* the wait under way */
};

struct irq_seen {
	uint64_t ts;
	uint64_t vector, kind;
	int32_t irq;
	bool valid;
};

struct tidmap {
	uint32_t tid;
	int32_t t;
};

static int by_tid(const void *x, const void *y)
{
	const struct tidmap *a = x, *b = y;

	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void classify(const struct vperf_report *r, const struct vperf_report_tlev *e,
		     const struct irq_seen *last, size_t nv, const struct tidmap *map, size_t nr_map,
		     struct vperf_report_wait *w)
{
	const struct irq_seen *q = NULL;
	char buf[VPERF_STATE_DETAIL];

	w->waker = -1;
	if (e->arg) {
		struct tidmap key = { .tid = (uint32_t)e->arg }, *m;

		m = bsearch(&key, map, nr_map, sizeof(*map), by_tid);
		w->cause = VPERF_STATE_WAIT_THREAD;
		if (m) {
			w->waker = m->t;
			snprintf(w->detail, sizeof(w->detail), "%s",
				 comm_of(r, m->t, buf, sizeof(buf)));
		} else {
			snprintf(w->detail, sizeof(w->detail), ":%" PRIu64, e->arg);
		}
		return;
	}
	/* interrupt context: the last interrupt (not an IPI) on its vCPU, else on any vCPU */
	if (e->cpu < nv && last[e->cpu].valid && e->ts - last[e->cpu].ts <= IRQ_WINDOW_NS)
		q = &last[e->cpu];
	for (size_t v = 0; !q && v < nv; v++)
		if (last[v].valid && e->ts - last[v].ts <= IRQ_WINDOW_NS &&
		    (!q || last[v].ts > q->ts))
			q = &last[v];
	if (!q) {
		w->cause = VPERF_STATE_WAIT_UNKNOWN;
		snprintf(w->detail, sizeof(w->detail), "interrupt context, no interrupt seen");
		return;
	}
	switch (q->kind) {
	case VPERF_REPORT_IRQ_TIMER:
		w->cause = VPERF_STATE_WAIT_TIMER;
		snprintf(w->detail, sizeof(w->detail), "vector %" PRIu64, q->vector);
		break;
	case VPERF_REPORT_IRQ_DEVICE:
		w->cause = VPERF_STATE_WAIT_DEVICE;
		if (q->irq >= 0)
			snprintf(w->detail, sizeof(w->detail), "vector %" PRIu64 ", irq %" PRId32,
				 q->vector, q->irq);
		else
			snprintf(w->detail, sizeof(w->detail), "vector %" PRIu64, q->vector);
		break;
	default:
		w->cause = VPERF_STATE_WAIT_UNKNOWN;
		snprintf(w->detail, sizeof(w->detail), "interrupt, vector %" PRIu64, q->vector);
		break;
	}
}

struct ctx {
	const struct vperf_report *r;
	struct vperf_report_analysis *a;
	struct hstate *hs;
	size_t nv;
	struct gstate *g;
	size_t cap_threads, cap_waits;
	struct segs *busy;		/* per vCPU: when a guest thread was on it */
	uint64_t t0;			/* the guest's first traced event: its threads' view starts */
	bool want_spans;
	size_t cap_spans;
};

/* Thread t was in state on vcpu from a to b: a span, if they are wanted. */
static int span(struct ctx *c, int32_t t, uint8_t state, uint32_t vcpu, uint64_t a, uint64_t b)
{
	struct vperf_report_analysis *an = c->a;

	if (!c->want_spans || b <= a)
		return 0;
	if (vperf_report_grow(&an->spans, &c->cap_spans, an->nr_spans, sizeof(*an->spans)))
		return -ENOMEM;
	an->spans[an->nr_spans++] = (struct vperf_report_span){ .start = a, .end = b, .thread = t,
								.vcpu = vcpu, .state = state };
	return 0;
}

/* A row and its span. */
static int add_iv(struct ctx *c, int32_t t, uint8_t state, const char *detail, uint64_t a,
		  uint64_t b, uint64_t count)
{
	if (add_row(&c->a->threads[c->g[t].out], &c->g[t].cap_rows, state, detail,
		    b > a ? b - a : 0, count))
		return -ENOMEM;
	return span(c, t, state, UINT32_MAX, a, b);
}

static struct vperf_report_states *table(struct ctx *c, int32_t t)
{
	return &c->a->threads[c->g[t].out];
}

/*
 * The exits of vcpu that begin in [a, b) are thread t's: the thread whose slice holds an exit is
 * the one it is charged to, as its time is in the thread's rows (the sink's guess, the last guest
 * sched_switch on the vCPU, stands where no slice holds it: the idle task, before the first).
 */
static void own_exits(struct ctx *c, int32_t t, uint32_t vcpu, uint64_t a, uint64_t b)
{
	struct vperf_report_exit *x = c->a->exits;
	size_t lo = 0, hi = c->a->nr_exits;

	while (lo < hi) {	/* the first exit of vcpu at or after a */
		size_t mid = lo + (hi - lo) / 2;

		if (x[mid].vcpu < vcpu || (x[mid].vcpu == vcpu && x[mid].ts < a))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->a->nr_exits && x[lo].vcpu == vcpu && x[lo].ts < b; lo++)
		x[lo].thread = t;
}

/* The vCPU's segments over [a, b) into thread t's rows: a piece counts where its segment begins. */
static int add_slice(struct ctx *c, int32_t t, uint32_t vcpu, uint64_t a, uint64_t b)
{
	const struct segs *l = &c->hs[vcpu].segs;
	struct vperf_report_states *st = &c->a->threads[c->g[t].out];
	size_t lo = 0, hi = l->nr;

	own_exits(c, t, vcpu, a, b);

	while (lo < hi) {	/* the first segment ending after a */
		size_t mid = lo + (hi - lo) / 2;

		if (l->s[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < l->nr && l->s[i].start < b; i++) {
		const struct seg *g = &l->s[i];
		uint64_t x = g->start > a ? g->start : a, y = g->end < b ? g->end : b;

		if (add_row(st, &c->g[t].cap_rows, g->state, g->detail, y - x,
			    g->first && g->start >= a) ||
		    span(c, t, g->state, vcpu, x, y))
			return -ENOMEM;
	}
	return 0;
}

static int run_slice(struct ctx *c, int32_t t, uint64_t a, uint64_t b)
{
	struct gstate *g = &c->g[t];

	if (b <= a)
		return 0;
	if (g->vcpu >= c->nv)	/* a vCPU past those followed (a recording's cpu id >= 1024) */
		return add_iv(c, t, VPERF_STATE_GUEST, "", a, b, 1);
	if (push_seg(&c->busy[g->vcpu], a, b, VPERF_STATE_GUEST, true, ""))
		return -ENOMEM;
	return add_slice(c, t, g->vcpu, a, b);
}

/* The time off a vCPU from off_since to ts: a wait (blocked) and its runnable tail. */
static int off_until(struct ctx *c, int32_t t, uint64_t ts, bool running_again, uint32_t vcpu)
{
	struct gstate *g = &c->g[t];
	int err;

	if (g->off_since == NONE || ts < g->off_since)
		return 0;
	if (!g->blocked)
		return add_iv(c, t, VPERF_STATE_RUNNABLE, "preempted in the guest", g->off_since, ts,
			      1);
	if (g->woken == NONE) {
		g->w.cause = VPERF_STATE_WAIT_UNKNOWN;
		snprintf(g->w.detail, sizeof(g->w.detail), "%s",
			 running_again ? "no wakeup recorded" : "still blocked at the end");
		g->w.waker = -1;
		g->woken = ts;
	}
	err = add_iv(c, t, g->w.cause, g->w.detail, g->off_since, g->woken, 1);
	if (!err)
		err = add_iv(c, t, VPERF_STATE_RUNNABLE, "woken, waiting for a vCPU", g->woken, ts, 0);
	if (err)
		return err;
	if (vperf_report_grow(&c->a->waits, &c->cap_waits, c->a->nr_waits, sizeof(*c->a->waits)))
		return -ENOMEM;
	g->w.thread = t;
	g->w.vcpu = vcpu;
	g->w.start = g->off_since;
	g->w.woken = g->woken;
	g->w.end = ts;
	c->a->waits[c->a->nr_waits++] = g->w;
	return 0;
}

static int first_seen(struct ctx *c, int32_t t, uint64_t ts, bool first_is_in)
{
	struct gstate *g = &c->g[t];
	struct vperf_report_states *st;
	uint64_t born, died;

	if (g->out >= 0)	/* it has its table: seen before */
		return 0;
	if (vperf_report_grow(&c->a->threads, &c->cap_threads, c->a->nr_threads,
			      sizeof(*c->a->threads)))
		return -ENOMEM;
	g->out = (int32_t)c->a->nr_threads++;
	st = table(c, t);
	memset(st, 0, sizeof(*st));
	st->thread = t;
	st->vcpu = -1;
	vperf_report__lifetime(c->r, t, &born, &died);
	st->forked = born != c->r->first_ts;
	st->exited = died != c->r->last_ts;
	if (!st->forked)	/* not forked in the recording: seen from the guest's t0 */
		born = c->t0;
	st->start = born < ts ? born : ts;
	st->end = died;
	if (first_is_in && born != c->t0)	/* from its fork to its first run */
		return add_iv(c, t, VPERF_STATE_RUNNABLE, "new, not yet run", st->start, ts, 0);
	if (first_is_in)	/* off a vCPU, nobody said why */
		return add_iv(c, t, VPERF_STATE_WAIT_UNKNOWN, "before its first event", st->start,
			      ts, 0);
	g->since = st->start;	/* it ran since before its first switch */
	return 0;
}

static bool guest_thread(const struct vperf_report *r, int32_t t)
{
	return t >= 0 && r->threads[t].guest && r->threads[t].tid;
}

static int guest_pass(struct ctx *c, const struct tidmap *map, size_t nr_map)
{
	const struct vperf_report *r = c->r;
	struct irq_seen *last = calloc(c->nv ? c->nv : 1, sizeof(*last));
	int err = 0;

	if (!last)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_tlevs && !err; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		int32_t t = e->thread, n = e->other;
		struct gstate *g;

		switch (e->kind) {
		case VPERF_REPORT_EV_IRQ:
			if (e->cpu < c->nv && e->arg2 != VPERF_REPORT_IRQ_RESCHEDULE &&
			    e->arg2 != VPERF_REPORT_IRQ_CALL_FUNCTION)
				last[e->cpu] = (struct irq_seen){ .ts = e->ts, .vector = e->arg,
								  .kind = e->arg2, .irq = e->other,
								  .valid = true };
			break;
		case VPERF_REPORT_EV_SCHED_SWITCH:
			if (e->layer == LAYER_HOST || t == n)
				break;
			if (guest_thread(r, t) && !c->g[t].done) {
				g = &c->g[t];
				err = first_seen(c, t, e->ts, false);
				if (!err && g->since != NONE) {
					g->vcpu = e->cpu;	/* a first switch: out of this vCPU */
					err = run_slice(c, t, g->since, e->ts);
				} else if (!err) {
					/*
					 * Out again, its switch in lost (lost_events): its time off
					 * ends here, the first it is seen on a vCPU again, or it
					 * would be in no row.
					 */
					err = off_until(c, t, e->ts, true, e->cpu);
				}
				g->since = NONE;
				if (g->exited) {
					g->done = true;
					table(c, t)->end = e->ts;
				} else {
					g->off_since = e->ts;
					g->blocked = (e->arg & 0xff) != 0;
					g->woken = NONE;
				}
			}
			if (!err && guest_thread(r, n) && !c->g[n].done) {
				g = &c->g[n];
				err = first_seen(c, n, e->ts, true);
				if (!err && g->since != NONE)
					/*
					 * In again, its switch out lost: its slice ends here, on
					 * the vCPU it began on (as vperf_report__running() does).
					 */
					err = run_slice(c, n, g->since, e->ts);
				else if (!err)
					err = off_until(c, n, e->ts, true, e->cpu);
				g->off_since = NONE;
				g->since = e->ts;
				g->vcpu = e->cpu;
			}
			break;
		case VPERF_REPORT_EV_WAKEUP:
			if (e->layer == LAYER_HOST || !guest_thread(r, t))
				break;
			g = &c->g[t];
			if (g->off_since != NONE && g->blocked && g->woken == NONE) {
				g->woken = e->ts;
				classify(r, e, last, c->nv, map, nr_map, &g->w);
			}
			break;
		case VPERF_REPORT_EV_EXIT:
			if (guest_thread(r, t))
				c->g[t].exited = true;
			break;
		default:
			break;
		}
	}
	/* the end: what each thread was doing then */
	for (size_t t = 0; t < r->nr_threads && !err; t++) {
		struct gstate *g = &c->g[t];

		if (g->out < 0 || g->done)
			continue;
		if (g->since != NONE)
			err = run_slice(c, (int32_t)t, g->since, r->last_ts);
		else
			err = off_until(c, (int32_t)t, r->last_ts, false, g->vcpu);
		table(c, (int32_t)t)->end = r->last_ts;
	}
	free(last);
	return err;
}

/* A vCPU's segments, its GUEST ones split into a thread's and the idle task's. */
static int vcpu_table(struct ctx *c, size_t v, struct vperf_report_states *st)
{
	const struct segs *l = &c->hs[v].segs, *b = &c->busy[v];
	size_t cap = 0, j = 0;
	int err = 0;

	memset(st, 0, sizeof(*st));
	st->thread = -1;
	st->vcpu = (int32_t)v;
	st->start = c->t0;
	st->end = c->r->last_ts;
	for (size_t i = 0; i < l->nr && !err; i++) {
		struct seg piece = l->s[i];
		const struct seg *g = &piece;
		uint64_t busy = 0;

		if (piece.end <= c->t0)
			continue;
		if (piece.start < c->t0) {
			piece.start = c->t0;
			piece.first = false;
		}
		if (g->state != VPERF_STATE_GUEST) {
			err = add_row(st, &cap, g->state, g->detail, g->end - g->start, g->first);
			continue;
		}
		while (j < b->nr && b->s[j].end <= g->start)
			j++;
		for (size_t k = j; k < b->nr && b->s[k].start < g->end; k++) {
			uint64_t x = b->s[k].start > g->start ? b->s[k].start : g->start;
			uint64_t y = b->s[k].end < g->end ? b->s[k].end : g->end;

			if (y > x)
				busy += y - x;
		}
		if (busy > g->end - g->start)	/* slices overlap only where events were lost */
			busy = g->end - g->start;
		err = add_row(st, &cap, VPERF_STATE_GUEST, "a thread", busy, 0);
		if (!err)
			err = add_row(st, &cap, VPERF_STATE_GUEST, "the idle task",
				      g->end - g->start - busy, 0);
	}
	if (!err && st->nr_rows)
		qsort(st->rows, st->nr_rows, sizeof(*st->rows), by_time);
	return err;
}

static int by_wait(const void *x, const void *y)
{
	const struct vperf_report_wait *a = x, *b = y;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

static int by_span(const void *x, const void *y)
{
	const struct vperf_report_span *a = x, *b = y;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

int vperf_report__analyse(const struct vperf_report *r, unsigned int flags,
			  struct vperf_report_analysis *a)
{
	struct ctx c = { .r = r, .a = a, .want_spans = flags & VPERF_ANALYSE_SPANS };
	struct tidmap *map = NULL;
	int32_t *vcpu_of = NULL;
	size_t nr_map = 0;
	bool guest_switches = false, have_t0 = false;
	int err = -ENOMEM;

	memset(a, 0, sizeof(*a));
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		uint32_t v = e->cpu;

		if ((e->layer == 2 || e->layer == 3) && !have_t0) {
			c.t0 = e->ts;	/* the guest's layers: guest_kernel, guest_user */
			have_t0 = true;
		}
		if (e->kind == VPERF_REPORT_EV_SCHED_SWITCH && e->layer != LAYER_HOST)
			guest_switches = true;
		else if (e->kind == VPERF_REPORT_EV_KVM_EXIT || e->kind == VPERF_REPORT_EV_KVM_ENTRY)
			v = (uint32_t)e->arg2;
		else if (e->kind != VPERF_REPORT_EV_IRQ && e->kind != VPERF_REPORT_EV_VMM_EXIT)
			continue;
		if (v < 1024 && v + 1 > c.nv)
			c.nv = v + 1;
		if (e->kind == VPERF_REPORT_EV_KVM_EXIT) {
			a->host_events = true;
			a->svm |= e->arg >= 0x60;
		}
	}
	/* exits need only the host's events (a guest without vperf_guest.ko: no threads) */
	if (!guest_switches && !((flags & VPERF_ANALYSE_EXITS) && a->host_events))
		return -ENOENT;
	vcpu_of = malloc((r->nr_threads + 1) * sizeof(*vcpu_of));
	map = malloc((r->nr_threads + 1) * sizeof(*map));
	c.g = calloc(r->nr_threads + 1, sizeof(*c.g));
	c.hs = calloc(c.nv + 1, sizeof(*c.hs));
	c.busy = calloc(c.nv + 1, sizeof(*c.busy));
	if (!vcpu_of || !map || !c.g || !c.hs || !c.busy)
		goto out;
	for (size_t t = 0; t < r->nr_threads; t++) {
		vcpu_of[t] = -1;
		c.g[t] = (struct gstate){ .since = NONE, .off_since = NONE, .woken = NONE,
					  .out = -1 };
		if (guest_thread(r, (int32_t)t))
			map[nr_map++] = (struct tidmap){ .tid = r->threads[t].tid, .t = (int32_t)t };
	}
	qsort(map, nr_map, sizeof(*map), by_tid);
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];

		if ((e->kind == VPERF_REPORT_EV_KVM_EXIT || e->kind == VPERF_REPORT_EV_KVM_ENTRY) &&
		    e->thread >= 0 && e->arg2 < c.nv)
			vcpu_of[e->thread] = (int32_t)e->arg2;
	}
	err = host_pass(r, a, c.hs, c.nv, vcpu_of);
	if (!err && (flags & VPERF_ANALYSE_EXITS))
		err = exits_pass(r, a, c.hs, c.nv, vcpu_of);
	if (!err)
		err = guest_pass(&c, map, nr_map);
	for (size_t i = 0; i < a->nr_threads && !err; i++) {
		struct vperf_report_states *st = &a->threads[i];

		for (size_t s = 0; s < r->nr_samples; s++) {
			const struct vperf_report_sample *sm = &r->samples[s];

			if (sm->thread != st->thread || !sm->nr_frames)
				continue;
			if (r->frames[sm->frame].kernel)
				st->samples_kernel++;
			else
				st->samples_user++;
		}
		if (st->nr_rows)
			qsort(st->rows, st->nr_rows, sizeof(*st->rows), by_time);
	}
	if (!err) {
		a->vcpus = calloc(c.nv + 1, sizeof(*a->vcpus));
		if (!a->vcpus)
			err = -ENOMEM;
	}
	for (size_t v = 0; v < c.nv && !err; v++) {
		err = vcpu_table(&c, v, &a->vcpus[v]);
		a->nr_vcpus = v + 1;
	}
	if (!err && a->nr_waits)
		qsort(a->waits, a->nr_waits, sizeof(*a->waits), by_wait);
	if (!err && a->nr_spans)
		qsort(a->spans, a->nr_spans, sizeof(*a->spans), by_span);
	for (size_t i = 1; !err && i < a->nr_threads; i++) {	/* by tid (few: insertion) */
		struct vperf_report_states x = a->threads[i];
		size_t j = i;

		for (; j && r->threads[a->threads[j - 1].thread].tid > r->threads[x.thread].tid; j--)
			a->threads[j] = a->threads[j - 1];
		a->threads[j] = x;
	}
out:
	for (size_t v = 0; c.hs && v < c.nv; v++) {
		free(c.hs[v].vmm);
		free(c.hs[v].base.s);
		free(c.hs[v].segs.s);
		free(c.busy[v].s);
	}
	free(c.hs);
	free(c.busy);
	free(c.g);
	free(map);
	free(vcpu_of);
	if (err)
		vperf_report_analysis__exit(a);
	return err;
}

void vperf_report_analysis__exit(struct vperf_report_analysis *a)
{
	for (size_t i = 0; i < a->nr_threads; i++)
		free(a->threads[i].rows);
	for (size_t i = 0; i < a->nr_vcpus; i++)
		free(a->vcpus[i].rows);
	free(a->threads);
	free(a->vcpus);
	free(a->waits);
	free(a->spans);
	free(a->exits);
	memset(a, 0, sizeof(*a));
}

const struct vperf_report_wait *vperf_report_analysis__wait_before(
	const struct vperf_report_analysis *a, int32_t t, uint64_t ts)
{
	const struct vperf_report_wait *best = NULL;

	for (size_t i = 0; i < a->nr_waits; i++) {
		const struct vperf_report_wait *w = &a->waits[i];

		if (w->thread == t && w->end <= ts && (!best || w->end > best->end))
			best = w;
	}
	return best;
}
