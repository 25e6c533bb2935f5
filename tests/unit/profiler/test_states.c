// SPDX-License-Identifier: MIT
/*
 * vperf report --states with known answers (profiler/report/wait.c, docs/states.md): a VM
 * recording built here, whose every nanosecond has one answer.
 *
 * Guest threads A (tid 10) and B (tid 11); the vCPU threads H0 (host tid 100, vCPU 0) and H1
 * (101, vCPU 1); a host CPU hog (200).  Times in ns; the guest's first event is at 0.
 *   vCPU 0  0 A in (from the idle task); kvm_entry.  100 kvm_exit ioio, 110..130 the VMM's io
 *           exit (port 0x5700), 140 kvm_entry.  200 the host preempts H0 (hog runs), 260 H0 back.  300 A blocks
 *           (idle in).  310 kvm_exit hlt, 320 H0 sleeps, 480 woken, 490 back on its idle CPU,
 *           495 kvm_entry.  500 timer interrupt (vector 236), 505 A woken by it (waker 0), 520 A
 *           in.  600 A blocks; 700 B wakes it (waker 11); 720 A in; 900 A exits, 910 A out.
 *   vCPU 1  0 kvm_entry (in the guest to the end).  650 B in (its first event).  800 B blocks;
 *           850 a device interrupt (vector 33, irq 26), 851 a reschedule IPI, 852 B woken (waker
 *           0), 860 B in, running to the end, 1000.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "vtest.h"

enum { A, B, IDLE, H0, H1, HOG, HIDLE, NR_T };

static void ev(struct vperf_report *r, uint8_t kind, uint64_t ts, int32_t t, int32_t other,
	       uint32_t cpu, uint64_t arg, uint64_t arg2, uint8_t layer)
{
	r->tlevs[r->nr_tlevs++] = (struct vperf_report_tlev){
		.kind = kind, .ts = ts, .thread = t, .other = other, .cpu = cpu, .arg = arg,
		.arg2 = arg2, .str = UINT32_MAX, .layer = layer };
}

enum { HOST = 0, VMM = 1, GUEST = 2 };

static struct vperf_report *known_vm(void)
{
	struct vperf_report *r = calloc(1, sizeof(*r));
	static const char *const names[] = { "A", "B", "swapper/0", "vcpu0", "vcpu1", "hog",
					     "swapper", "io" };

	assert_non_null(r);
	r->dir = strdup("known");
	r->vm_name = strdup("vm0");
	r->threads = calloc(NR_T, sizeof(*r->threads));
	r->tlevs = calloc(64, sizeof(*r->tlevs));
	r->strings = calloc(8, sizeof(*r->strings));
	assert_true(r->dir && r->threads && r->tlevs && r->strings);
	for (size_t i = 0; i < 8; i++)
		r->strings[i] = strdup(names[i]);
	r->nr_strings = 8;
	r->threads[A] = (struct vperf_report_thread){ .tid = 10, .pid = 10, .comm = 0, .guest = true };
	r->threads[B] = (struct vperf_report_thread){ .tid = 11, .pid = 10, .comm = 1, .guest = true };
	r->threads[IDLE] = (struct vperf_report_thread){ .tid = 0, .comm = 2, .guest = true };
	r->threads[H0] = (struct vperf_report_thread){ .tid = 100, .pid = 99, .comm = 3 };
	r->threads[H1] = (struct vperf_report_thread){ .tid = 101, .pid = 99, .comm = 4 };
	r->threads[HOG] = (struct vperf_report_thread){ .tid = 200, .pid = 200, .comm = 5 };
	r->threads[HIDLE] = (struct vperf_report_thread){ .tid = 0, .comm = 6 };
	r->nr_threads = NR_T;
	r->first_ts = 0;
	r->last_ts = 1000;

	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 0, IDLE, A, 0, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_KVM_ENTRY, 0, H0, -1, 0, 0, 0, HOST);
	ev(r, VPERF_REPORT_EV_KVM_ENTRY, 0, H1, -1, 1, 0, 1, HOST);
	ev(r, VPERF_REPORT_EV_KVM_EXIT, 100, H0, -1, 0, 0x7b, 0, HOST);
	ev(r, VPERF_REPORT_EV_VMM_EXIT, 110, -1, 0x5700, 0, 20, 2, VMM);
	r->tlevs[r->nr_tlevs - 1].str = 7;
	ev(r, VPERF_REPORT_EV_KVM_ENTRY, 140, H0, -1, 0, 0, 0, HOST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 200, H0, HOG, 0, 0, 0, HOST);	/* runnable */
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 260, HOG, H0, 0, 0, 0, HOST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 300, A, IDLE, 0, 1, 0, GUEST);	/* blocked */
	ev(r, VPERF_REPORT_EV_KVM_EXIT, 310, H0, -1, 0, 0x78, 0, HOST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 320, H0, HIDLE, 0, 1, 0, HOST);	/* sleeps */
	ev(r, VPERF_REPORT_EV_WAKEUP, 480, H0, -1, 0, 0, 0, HOST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 490, HIDLE, H0, 0, 0, 0, HOST);
	ev(r, VPERF_REPORT_EV_KVM_ENTRY, 495, H0, -1, 0, 0, 0, HOST);
	ev(r, VPERF_REPORT_EV_IRQ, 500, -1, -1, 0, 236, VPERF_REPORT_IRQ_TIMER, GUEST);
	ev(r, VPERF_REPORT_EV_WAKEUP, 505, A, -1, 0, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 520, IDLE, A, 0, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 600, A, IDLE, 0, 1, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 650, IDLE, B, 1, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_WAKEUP, 700, A, -1, 1, 11, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 720, IDLE, A, 0, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 800, B, IDLE, 1, 1, 0, GUEST);
	ev(r, VPERF_REPORT_EV_IRQ, 850, -1, 26, 1, 33, VPERF_REPORT_IRQ_DEVICE, GUEST);
	ev(r, VPERF_REPORT_EV_IRQ, 851, -1, -1, 1, 253, VPERF_REPORT_IRQ_RESCHEDULE, GUEST);
	ev(r, VPERF_REPORT_EV_WAKEUP, 852, B, -1, 1, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 860, IDLE, B, 1, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_EXIT, 900, A, -1, 0, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 910, A, IDLE, 0, 0x80, 0, GUEST);
	return r;
}

static void free_vm(struct vperf_report *r)
{
	for (size_t i = 0; i < r->nr_strings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->threads);
	free(r->tlevs);
	free(r->dir);
	free(r->vm_name);
	free(r);
}

static const struct vperf_report_state_row *row(const struct vperf_report_states *st,
						enum vperf_report_state state, const char *detail)
{
	for (size_t i = 0; i < st->nr_rows; i++)
		if (st->rows[i].state == state && !strcmp(st->rows[i].detail, detail))
			return &st->rows[i];
	return NULL;
}

static void row_is(const struct vperf_report_states *st, enum vperf_report_state state,
		   const char *detail, uint64_t ns, uint64_t count)
{
	const struct vperf_report_state_row *w = row(st, state, detail);

	if (!w)
		fail_msg("no row '%s' (%s)", vperf_report_state_names[state], detail);
	assert_int_equal(w->ns, ns);
	assert_int_equal(w->count, count);
}

static uint64_t sum(const struct vperf_report_states *st)
{
	uint64_t n = 0;

	for (size_t i = 0; i < st->nr_rows; i++)
		n += st->rows[i].ns;
	return n;
}

static void thread_time_splits_into_exits_preemption_and_waits_by_their_cause(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;
	const struct vperf_report_states *st;

	(void)state;
	assert_int_equal(vperf_report__analyse(r, 0, &a), 0);
	assert_true(a.host_events);
	assert_true(a.svm);
	assert_int_equal(a.nr_threads, 2);
	st = &a.threads[0];	/* by tid: A */
	assert_int_equal(st->thread, A);
	assert_int_equal(st->start, 0);
	assert_int_equal(st->end, 910);
	assert_true(st->exited);
	assert_false(st->forked);
	row_is(st, VPERF_STATE_GUEST, "", 100 + 60 + 40 + 80 + 190, 2);
	row_is(st, VPERF_STATE_KVM, "ioio", 20, 1);
	row_is(st, VPERF_STATE_VMM, "io 0x5700", 20, 1);
	row_is(st, VPERF_STATE_PREEMPTED, "hog:200", 60, 1);
	row_is(st, VPERF_STATE_WAIT_TIMER, "vector 236", 205, 1);
	row_is(st, VPERF_STATE_WAIT_THREAD, "B:11", 100, 1);
	row_is(st, VPERF_STATE_RUNNABLE, "woken, waiting for a vCPU", 15 + 20, 0);
	assert_int_equal(st->nr_rows, 7);
	assert_int_equal(sum(st), 910);
	/* most time first */
	assert_int_equal(st->rows[0].state, VPERF_STATE_GUEST);
	assert_int_equal(st->rows[1].state, VPERF_STATE_WAIT_TIMER);

	st = &a.threads[1];	/* B */
	assert_int_equal(st->thread, B);
	assert_int_equal(st->end, 1000);
	assert_false(st->exited);
	row_is(st, VPERF_STATE_WAIT_UNKNOWN, "before its first event", 650, 0);
	row_is(st, VPERF_STATE_GUEST, "", 150 + 140, 0);
	/* the IPI between the device's interrupt and the wakeup is not the cause */
	row_is(st, VPERF_STATE_WAIT_DEVICE, "vector 33, irq 26", 52, 1);
	row_is(st, VPERF_STATE_RUNNABLE, "woken, waiting for a vCPU", 8, 0);
	assert_int_equal(sum(st), 1000);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

static void vcpu_time_splits_into_thread_idle_halted_and_host_states(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;
	const struct vperf_report_states *st;

	(void)state;
	assert_int_equal(vperf_report__analyse(r, 0, &a), 0);
	assert_int_equal(a.nr_vcpus, 2);
	st = &a.vcpus[0];
	assert_int_equal(st->vcpu, 0);
	row_is(st, VPERF_STATE_GUEST, "a thread", 100 + 60 + 40 + 80 + 190, 0);
	row_is(st, VPERF_STATE_GUEST, "the idle task", 10 + 235, 0);
	row_is(st, VPERF_STATE_KVM, "ioio", 20, 1);
	row_is(st, VPERF_STATE_VMM, "io 0x5700", 20, 1);
	row_is(st, VPERF_STATE_PREEMPTED, "hog:200", 60, 1);
	/* one hlt exit, before and after its sleep: counted once */
	row_is(st, VPERF_STATE_KVM, "hlt", 10 + 5, 1);
	row_is(st, VPERF_STATE_HOST_SLEEP, "halted", 160, 1);
	row_is(st, VPERF_STATE_PREEMPTED, "woken, its host CPU idle", 10, 1);
	assert_int_equal(sum(st), 1000);
	st = &a.vcpus[1];
	row_is(st, VPERF_STATE_GUEST, "a thread", 150 + 140, 0);
	row_is(st, VPERF_STATE_GUEST, "the idle task", 1000 - 290, 0);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

static void waits_name_their_wakers_and_chain_back(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;
	const struct vperf_report_wait *w;

	(void)state;
	assert_int_equal(vperf_report__analyse(r, 0, &a), 0);
	assert_int_equal(a.nr_waits, 3);
	/* by thread, then start: A's timer wait, A's wait for B, B's device wait */
	w = &a.waits[0];
	assert_int_equal(w->thread, A);
	assert_int_equal(w->start, 300);
	assert_int_equal(w->woken, 505);
	assert_int_equal(w->end, 520);
	assert_int_equal(w->cause, VPERF_STATE_WAIT_TIMER);
	assert_int_equal(w->waker, -1);
	w = &a.waits[1];
	assert_int_equal(w->cause, VPERF_STATE_WAIT_THREAD);
	assert_int_equal(w->waker, B);
	assert_int_equal(w->vcpu, 0);
	/* what B waited for before it woke A at 700: nothing (it first ran at 650) */
	assert_null(vperf_report_analysis__wait_before(&a, B, 700));
	/* and A, before 720: the timer */
	assert_ptr_equal(vperf_report_analysis__wait_before(&a, A, 719), &a.waits[0]);
	assert_int_equal(a.waits[2].thread, B);
	assert_int_equal(a.waits[2].cause, VPERF_STATE_WAIT_DEVICE);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

static void spans_tile_each_thread_and_sum_to_its_rows(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;
	uint64_t by_state[VPERF_STATE_NR] = { 0 }, end = 0;
	size_t n = 0;

	(void)state;
	assert_int_equal(vperf_report__analyse(r, VPERF_ANALYSE_SPANS, &a), 0);
	for (size_t i = 0; i < a.nr_spans; i++) {
		const struct vperf_report_span *s = &a.spans[i];

		if (s->thread != A)
			continue;
		/* A's spans: in order, each beginning where the last ended, from 0 to its exit */
		assert_int_equal(s->start, end);
		assert_true(s->end > s->start);
		end = s->end;
		by_state[s->state] += s->end - s->start;
		assert_int_equal(s->vcpu, s->state <= VPERF_STATE_HOST_SLEEP ? 0 : UINT32_MAX);
		n++;
	}
	assert_int_equal(end, 910);
	assert_int_equal(by_state[VPERF_STATE_GUEST], 470);
	assert_int_equal(by_state[VPERF_STATE_PREEMPTED], 60);
	assert_int_equal(by_state[VPERF_STATE_WAIT_TIMER], 205);
	assert_int_equal(by_state[VPERF_STATE_RUNNABLE], 35);
	/* 0-100 guest, 100-110 kvm, 110-130 vmm, 130-140 kvm, 140-200 guest, 200-260 preempted,
	 * 260-300 guest, 300-505 timer, 505-520 runnable, 520-600 guest, 600-700 thread,
	 * 700-720 runnable, 720-910 guest */
	assert_int_equal(n, 13);
	vperf_report_analysis__exit(&a);
	/* not asked for: none */
	assert_int_equal(vperf_report__analyse(r, 0, &a), 0);
	assert_null(a.spans);
	assert_int_equal(a.nr_spans, 0);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

static void without_host_events_exits_are_the_vmms_and_nothing_is_preempted(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < r->nr_tlevs; i++)	/* drop the host's events */
		if (r->tlevs[i].layer != HOST)
			r->tlevs[n++] = r->tlevs[i];
	r->nr_tlevs = n;
	assert_int_equal(vperf_report__analyse(r, 0, &a), 0);
	assert_false(a.host_events);
	row_is(&a.threads[0], VPERF_STATE_VMM, "io 0x5700", 20, 1);
	/* one guest segment cut by the exit: its first piece counts, not the rest */
	row_is(&a.threads[0], VPERF_STATE_GUEST, "", 300 - 20 + 80 + 190, 1);
	assert_null(row(&a.threads[0], VPERF_STATE_PREEMPTED, "hog:200"));
	assert_int_equal(sum(&a.threads[0]), 910);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

/*
 * Guest scheduling events lost in between (a ring overrun: lost_events), on a recording of its
 * own, without host events.  0 A in on vCPU 0.  100 A blocks, B in.  Then A's switch in and B's
 * switch out are lost: 400 A blocks again, B in, both on vCPU 1; to the end, 1000.  A's wait
 * from 100 (no wakeup recorded) ends where it is seen on a vCPU again, at 400; B's slice from
 * 100 ends at its next switch in, on vCPU 0 where it began.  Before, each lost 100..400.
 */
static void every_ns_is_in_one_row_when_a_switch_in_or_out_was_lost(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;
	const struct vperf_report_states *st;
	uint64_t end[2] = { 0, 0 };

	(void)state;
	r->nr_tlevs = 0;
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 0, IDLE, A, 0, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 100, A, B, 0, 1, 0, GUEST);	/* blocked */
	ev(r, VPERF_REPORT_EV_LOST, 200, -1, -1, 0, 2, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 400, A, B, 1, 1, 0, GUEST);	/* blocked again */
	assert_int_equal(vperf_report__analyse(r, VPERF_ANALYSE_SPANS, &a), 0);
	assert_int_equal(a.nr_threads, 2);
	st = &a.threads[0];
	assert_int_equal(st->thread, A);
	assert_int_equal(st->start, 0);
	assert_int_equal(st->end, 1000);
	row_is(st, VPERF_STATE_GUEST, "", 100, 1);
	row_is(st, VPERF_STATE_WAIT_UNKNOWN, "no wakeup recorded", 300, 1);
	row_is(st, VPERF_STATE_WAIT_UNKNOWN, "still blocked at the end", 600, 1);
	assert_int_equal(st->nr_rows, 3);
	assert_int_equal(sum(st), 1000);
	st = &a.threads[1];
	assert_int_equal(st->thread, B);
	row_is(st, VPERF_STATE_WAIT_UNKNOWN, "before its first event", 100, 0);
	row_is(st, VPERF_STATE_GUEST, "", 300 + 600, 0);
	assert_int_equal(st->nr_rows, 2);
	assert_int_equal(sum(st), 1000);
	/* the waits: A's two, the first ended by its switch out on vCPU 1 */
	assert_int_equal(a.nr_waits, 2);
	assert_int_equal(a.waits[0].start, 100);
	assert_int_equal(a.waits[0].end, 400);
	assert_int_equal(a.waits[0].vcpu, 1);
	/* and the spans tile both threads from 0 to the end, B's first slice on vCPU 0 */
	for (size_t i = 0; i < a.nr_spans; i++) {
		const struct vperf_report_span *s = &a.spans[i];

		assert_true(s->thread == A || s->thread == B);
		assert_int_equal(s->start, end[s->thread]);
		end[s->thread] = s->end;
		if (s->thread == B && s->start == 100)
			assert_int_equal(s->vcpu, 0);
	}
	assert_int_equal(end[A], 1000);
	assert_int_equal(end[B], 1000);
	assert_int_equal(a.vcpus[0].start, 0);
	row_is(&a.vcpus[0], VPERF_STATE_GUEST, "a thread", 400, 0);
	row_is(&a.vcpus[1], VPERF_STATE_GUEST, "a thread", 600, 0);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

/*
 * A recording's cpu id past the 1024 vCPUs the analysis follows (a hostile or damaged one): the
 * slice run there is still the thread's guest time, with no host side.  On vCPU 2000: 0 A in,
 * 300 A preempted by B, 600 B preempted by A; to the end, 1000.  Before, both lost their slices.
 */
static void a_slice_on_a_vcpu_past_those_followed_is_still_guest_time(void **state)
{
	struct vperf_report *r = known_vm();
	struct vperf_report_analysis a;

	(void)state;
	r->nr_tlevs = 0;
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 0, IDLE, A, 2000, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 300, A, B, 2000, 0, 0, GUEST);
	ev(r, VPERF_REPORT_EV_SCHED_SWITCH, 600, B, A, 2000, 0, 0, GUEST);
	assert_int_equal(vperf_report__analyse(r, 0, &a), 0);
	assert_int_equal(a.nr_threads, 2);
	assert_int_equal(a.threads[0].thread, A);
	row_is(&a.threads[0], VPERF_STATE_GUEST, "", 300 + 400, 2);
	assert_int_equal(sum(&a.threads[0]), 1000);
	assert_int_equal(a.threads[1].thread, B);
	row_is(&a.threads[1], VPERF_STATE_GUEST, "", 300, 1);
	assert_int_equal(sum(&a.threads[1]), 1000);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

/* The known VM with its host layer's events only (no guest scheduling, no VMM exits). */
static struct vperf_report *host_only_vm(void)
{
	struct vperf_report *r = known_vm();
	size_t n = 0;

	for (size_t i = 0; i < r->nr_tlevs; i++)
		if (r->tlevs[i].layer == HOST) {
			r->tlevs[n] = r->tlevs[i];
			r->tlevs[n++].frame = SIZE_MAX;
		}
	r->nr_tlevs = n;
	return r;
}

static void a_recording_without_guest_scheduling_is_enoent(void **state)
{
	struct vperf_report *r = host_only_vm();
	struct vperf_report_analysis a;

	(void)state;
	assert_int_equal(vperf_report__analyse(r, 0, &a), -ENOENT);
	free_vm(r);
}

static void exit_reasons_are_named_for_svm_and_vmx(void **state)
{
	(void)state;
	assert_string_equal(vperf_report_exit_name(0x400, true), "npf");
	assert_string_equal(vperf_report_exit_name(0x7b, true), "ioio");
	assert_string_equal(vperf_report_exit_name(0x78, true), "hlt");
	assert_string_equal(vperf_report_exit_name(0x4e, true), "exception");
	assert_string_equal(vperf_report_exit_name(48, false), "ept_violation");
	assert_string_equal(vperf_report_exit_name(30, false), "io_instruction");
	assert_null(vperf_report_exit_name(0x999, true));
	assert_null(vperf_report_exit_name(5, false));
	assert_null(vperf_report_exit_name(1000, false));
}

/*
 * --exits: each kvm_exit to its vCPU's next kvm_entry, its cost cut from the same segments as
 * the states (exit 100 ioio: KVM 100..110 and 130..140, the VMM 110..130; exit 310 hlt: KVM
 * 310..320 and 490..495, asleep 320..480, woken and waiting 480..490), charged to the guest
 * thread on the vCPU then (the sink's `other`): A at 100, the idle task at 310.  The host's
 * preemption at 200..260 is in no exit (the vCPU was in the guest).
 */
static void exits_cost_their_time_to_the_next_entry_by_where_it_went(void **state)
{
	struct vperf_report *r = known_vm();
	enum vperf_exit_key keys[2] = { VPERF_EXIT_KEY_TID, VPERF_EXIT_KEY_REASON };
	struct vperf_report_analysis a;
	struct vperf_exit_table t;
	const struct vperf_report_exit *x;

	(void)state;
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		r->tlevs[i].frame = SIZE_MAX;
		if (r->tlevs[i].kind == VPERF_REPORT_EV_KVM_EXIT)
			r->tlevs[i].other = r->tlevs[i].ts == 100 ? A : IDLE;
	}
	assert_int_equal(vperf_report__analyse(r, VPERF_ANALYSE_EXITS, &a), 0);
	assert_int_equal(a.nr_exits, 2);
	x = &a.exits[0];
	assert_int_equal(x->ts, 100);
	assert_int_equal(x->end, 140);
	assert_int_equal(x->thread, A);
	assert_int_equal(x->vcpu, 0);
	assert_int_equal(x->reason, 0x7b);
	assert_int_equal(x->kvm_ns, 20);
	assert_int_equal(x->vmm_ns, 20);
	assert_int_equal(x->preempted_ns + x->sleep_ns, 0);
	x = &a.exits[1];
	assert_int_equal(x->ts, 310);
	assert_int_equal(x->end, 495);
	assert_int_equal(x->thread, IDLE);
	assert_int_equal(x->kvm_ns, 15);
	assert_int_equal(x->sleep_ns, 160);
	assert_int_equal(x->preempted_ns, 10);
	assert_int_equal(x->vmm_ns, 0);

	assert_int_equal(vperf_exit_table__build(r, &a, keys, 2, &t), 0);
	assert_int_equal(t.count, 2);
	assert_int_equal(t.ns, 40 + 185);
	assert_int_equal(t.nr_rows, 2);
	assert_string_equal(t.rows[0].key[0], "0");	/* most cost first */
	assert_string_equal(t.rows[0].key[1], "hlt");
	assert_int_equal(t.rows[0].ns, 185);
	assert_true(t.rows[0].share < 0);		/* the idle task has no wall time */
	assert_string_equal(t.rows[1].key[0], "10");
	assert_string_equal(t.rows[1].key[1], "ioio");
	assert_int_equal(t.rows[1].count, 1);
	assert_int_equal(t.rows[1].ns, 40);
	assert_int_equal(t.rows[1].p99_ns, 40);
	assert_int_equal(t.rows[1].thread, A);
	assert_true(t.rows[1].share > 40.0 / 910 - 1e-9 && t.rows[1].share < 40.0 / 910 + 1e-9);
	vperf_exit_table__exit(&t);
	{	/* a recording with 64 events has no bit left for the cost event: said, r as it was */
		size_t nf = r->nr_frames, ns = r->nr_samples;
		int ev = -1;

		r->nr_events = 64;
		assert_int_equal(vperf_report__add_exit_samples(r, &a, &ev), -E2BIG);
		assert_int_equal(ev, -1);
		assert_int_equal(r->nr_frames, nf);
		assert_int_equal(r->nr_samples, ns);
		assert_int_equal(r->cost_events, 0);
		r->nr_events = 0;
	}
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

/* A row's p99 is the nearest rank (the 99th of 100 costs 1..100), its mean the plain one. */
static void an_exit_rows_p99_is_the_nearest_rank(void **state)
{
	struct vperf_report r = { 0 };
	struct vperf_report_tlev tl = { .frame = SIZE_MAX };
	struct vperf_report_exit xs[100];
	struct vperf_report_analysis a = { .exits = xs, .nr_exits = 100, .svm = true };
	enum vperf_exit_key keys[1] = { VPERF_EXIT_KEY_REASON };
	struct vperf_exit_table t;
	char why[128];
	size_t nr;

	(void)state;
	r.tlevs = &tl;
	r.nr_tlevs = 1;
	for (int i = 0; i < 100; i++)	/* in no particular order */
		xs[i] = (struct vperf_report_exit){ .thread = -1, .reason = 0x7b,
						    .kvm_ns = (uint64_t)((i * 37) % 100 + 1) };
	assert_int_equal(vperf_exit_table__build(&r, &a, keys, 1, &t), 0);
	assert_int_equal(t.nr_rows, 1);
	assert_int_equal(t.rows[0].count, 100);
	assert_int_equal(t.rows[0].ns, 5050);
	assert_int_equal(t.rows[0].p99_ns, 99);
	assert_int_equal(t.rows[0].max_ns, 100);
	assert_int_equal(t.no_thread, 100);
	assert_string_equal(t.rows[0].key[0], "ioio");
	vperf_exit_table__exit(&t);
	assert_int_equal(vperf_exit_keys_parse("thread,symbol,reason", keys, 1, &nr, why,
					       sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "too many"));
	assert_int_equal(vperf_exit_keys_parse("pid", keys, 1, &nr, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "'pid'"));
}

/* Exits need only the host's events: a guest without vperf_guest.ko has no threads. */
static void exits_are_analysed_without_guest_scheduling(void **state)
{
	struct vperf_report *r = host_only_vm();
	struct vperf_report_analysis a;

	(void)state;
	assert_int_equal(vperf_report__analyse(r, VPERF_ANALYSE_EXITS, &a), 0);
	assert_int_equal(a.nr_threads, 0);
	assert_int_equal(a.nr_exits, 2);
	assert_int_equal(a.exits[0].thread, -1);
	assert_int_equal(a.exits[0].kvm_ns + a.exits[0].vmm_ns, 40);
	vperf_report_analysis__exit(&a);
	free_vm(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(thread_time_splits_into_exits_preemption_and_waits_by_their_cause),
		cmocka_unit_test(vcpu_time_splits_into_thread_idle_halted_and_host_states),
		cmocka_unit_test(waits_name_their_wakers_and_chain_back),
		cmocka_unit_test(spans_tile_each_thread_and_sum_to_its_rows),
		cmocka_unit_test(without_host_events_exits_are_the_vmms_and_nothing_is_preempted),
		cmocka_unit_test(every_ns_is_in_one_row_when_a_switch_in_or_out_was_lost),
		cmocka_unit_test(a_slice_on_a_vcpu_past_those_followed_is_still_guest_time),
		cmocka_unit_test(a_recording_without_guest_scheduling_is_enoent),
		cmocka_unit_test(exit_reasons_are_named_for_svm_and_vmx),
		cmocka_unit_test(exits_cost_their_time_to_the_next_entry_by_where_it_went),
		cmocka_unit_test(an_exit_rows_p99_is_the_nearest_rank),
		cmocka_unit_test(exits_are_analysed_without_guest_scheduling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
