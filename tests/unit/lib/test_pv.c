/* SPDX-License-Identifier: MIT */
/*
 * The pv backend (backend-pv.c) against an in-memory /dev/vperf
 * (fake_vperf.c, behind the vperf__pv_* seams): probing, automatic
 * selection, the seq protocol of the thread page, exact and page-only
 * reads, start/stop/reset baselines, THREAD_LIST rows for threads and
 * processes, lost threads, and sets that mix vperf:: events with ordinary
 * ones (counted through the perf backend, for real).  The fake device
 * returns fixed numbers: every count asserted is a known answer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "internal.h"
#include "fake_vperf.h"
#include <signal.h>

#include "vtest.h"

enum { VCPU = VPERF_THREAD_CTR_VCPU_CLOCK, STEAL = VPERF_THREAD_CTR_STEAL,
       EXITS = VPERF_THREAD_CTR_EXITS };

static int setup(void **state)
{
	unsetenv("VPERF_PV_DEVICE");
	fake_reset();
	return 0;
}

static struct vperf_evset *new_set(enum vperf_target target, pid_t pid, uint32_t flags,
				   const char *backend)
{
	struct vperf_evset_opts o = {
		.size = sizeof(o), .backend = backend, .target = target, .pid = pid,
		.flags = flags,
	};
	struct vperf_evset *es = NULL;

	assert_int_equal(vperf_evset__new(&o, &es), 0);
	return es;
}

static void add(struct vperf_evset *es, const char *name, int idx)
{
	int ret = vperf_evset__add(es, name);

	if (ret != idx)
		fail_msg("add %s: %d (%s)", name, ret, vperf_evset__strerror(es));
}

static void open_ok(struct vperf_evset *es)
{
	int ret = vperf_evset__open(es);

	if (ret)
		fail_msg("open: %d (%s)", ret, vperf_evset__strerror(es));
}

static void assert_count(const struct vperf_count *c, uint64_t value, uint64_t raw,
			 uint64_t enabled, uint64_t running, uint32_t flags)
{
	if (c->value != value || c->raw != raw || c->enabled != enabled ||
	    c->running != running || c->flags != flags)
		fail_msg("count {value %llu raw %llu enabled %llu running %llu flags %#x}, "
			 "expected {%llu %llu %llu %llu %#x}",
			 (unsigned long long)c->value, (unsigned long long)c->raw,
			 (unsigned long long)c->enabled, (unsigned long long)c->running, c->flags,
			 (unsigned long long)value, (unsigned long long)raw,
			 (unsigned long long)enabled, (unsigned long long)running, flags);
}

/* A self set on the three module counters, opened; its context in *ctx. */
static struct vperf_evset *open_self3(uint32_t flags, struct fake_ctx **ctx)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, flags, NULL);

	add(es, "vperf::vcpu-clock", 0);
	add(es, "vperf::steal", 1);
	add(es, "vperf::exits", 2);
	assert_string_equal(vperf_backend_name(es), "pv");
	open_ok(es);
	*ctx = fake_ctx_of(gettid());
	assert_non_null(*ctx);
	return es;
}

/* ---- probe ---- */

static void probe_without_device_says_load_the_module(void **state)
{
	char why[512] = "";

	fake.open_err = ENOENT;
	assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), -ENODEV);
	printf("why: %s\n", why);
	assert_true(vt_contains(why, "no /dev/vperf"));
	assert_true(vt_contains(why, "vperf_guest.ko is not loaded"));
	assert_string_equal(fake.path, "/dev/vperf");
}

static void probe_eacces_says_permission_denied(void **state)
{
	char why[512] = "";

	fake.open_err = EACCES;
	assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), -EACCES);
	printf("why: %s\n", why);
	assert_true(vt_contains(why, "no permission to open /dev/vperf"));
}

static void probe_no_vcpu_pages_says_module_has_none(void **state)
{
	char why[512] = "";

	fake.nr_pages = 0;
	assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), -ENODEV);
	printf("why: %s\n", why);
	assert_true(vt_contains(why, "reports no vCPU pages"));
	assert_true(vt_contains(why, "none of 2 CPUs"));
	assert_int_equal(fake.open_fds, 0);		/* closed again */
}

static void probe_other_device_is_not_a_vperf_device(void **state)
{
	char why[512] = "";

	fake.info_err = ENOTTY;
	assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), -ENODEV);
	printf("why: %s\n", why);
	assert_true(vt_contains(why, "/dev/vperf is not a vperf device"));
}

static void probe_usable_device_with_pages_is_available(void **state)
{
	char why[512] = "untouched";

	assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), 0);
	assert_int_equal(fake.infos, 1);
	assert_int_equal(fake.open_fds, 0);
}

static void probe_device_path_comes_from_vperf_pv_device(void **state)
{
	char why[512] = "";

	setenv("VPERF_PV_DEVICE", "/tmp/no-such-vperf", 1);
	fake.open_err = ENOENT;
	assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), -ENODEV);
	assert_string_equal(fake.path, "/tmp/no-such-vperf");
	assert_true(vt_contains(why, "no /tmp/no-such-vperf"));
	unsetenv("VPERF_PV_DEVICE");
}

/* ---- automatic selection and event names ---- */

static void auto_selection_picks_pv_for_vperf_events_when_usable(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);

	assert_string_equal(vperf_backend_name(es), "perf");
	add(es, "vperf::steal", 0);
	assert_string_equal(vperf_backend_name(es), "pv");
	assert_string_equal(vperf_evset__event_canon(es, 0), "vperf::steal");
	vperf_evset__delete(es);
}

static void auto_selection_keeps_perf_without_vperf_events(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);

	add(es, "task-clock", 0);
	add(es, "context-switches", 1);
	assert_string_equal(vperf_backend_name(es), "perf");
	assert_int_equal(fake.opens, 0);	/* the device was not even probed */
	vperf_evset__delete(es);
}

static void auto_selection_without_usable_pv_explains_why(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	const char *msg;

	fake.nr_pages = 0;
	assert_int_equal(vperf_evset__add(es, "vperf::steal"), -EOPNOTSUPP);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "'vperf::steal' needs the pv backend"));
	assert_true(vt_contains(msg, "no vCPU pages"));
	assert_string_equal(vperf_backend_name(es), "perf");
	assert_int_equal(vperf_evset__nr_events(es), 0);
	vperf_evset__delete(es);
}

static void explicit_perf_backend_refuses_vperf_events(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, "perf");
	const char *msg;

	assert_int_equal(vperf_evset__add(es, "vperf::exits"), -EOPNOTSUPP);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "created for the 'perf' backend"));
	vperf_evset__delete(es);
}

/* Any vperf:: form moves the set to pv, and the module is asked for exactly those events. */
static void virt_events_beyond_the_fixed_three_are_passed_as_an_event_list(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	const struct vperf_thread_start *st;
	struct fake_ctx *c;
	struct vperf_count cnt;

	add(es, "vperf::exits:io", 0);
	add(es, "vperf::kvm:halt_exits", 1);
	add(es, "vperf::host:context-switches", 2);
	add(es, "vperf::exits:io", 3);		/* twice: one counter serves both */
	assert_string_equal(vperf_backend_name(es), "pv");
	assert_string_equal(vperf_evset__event_canon(es, 1), "vperf::kvm:halt_exits");
	assert_int_equal(vperf_evset__open(es), 0);
	st = &fake.start_arg[0];
	assert_int_equal(st->size, sizeof(*st));
	assert_int_equal(st->nr_events, 3);
	c = fake_ctx_of(gettid());
	assert_non_null(c);
	assert_int_equal(c->nr_events, 3);
	assert_int_equal(c->events[0].source, VPERF_SRC_EXITS);
	assert_int_equal(c->events[0].arg, 2);
	assert_int_equal(c->events[1].source, VPERF_SRC_KVM_STAT);
	assert_string_equal(c->events[1].name, "halt_exits");
	assert_int_equal(c->events[2].source, VPERF_SRC_PERF);
	assert_string_equal(c->events[2].name, "context-switches");
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(c, 0, 7, 100, 100);
	fake_run(c, 1, 3, 100, 100);
	assert_int_equal(vperf_evset__read_one(es, 0, &cnt), 0);
	assert_int_equal(cnt.value, 7);
	assert_int_equal(vperf_evset__read_one(es, 3, &cnt), 0);
	assert_int_equal(cnt.value, 7);
	assert_int_equal(vperf_evset__read_one(es, 1, &cnt), 0);
	assert_int_equal(cnt.value, 3);
	vperf_evset__delete(es);
}

/* A set of only the fixed three sends no list: every module version counts those. */
static void fixed_virt_events_send_no_event_list(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);

	add(es, "vperf::exits", 0);
	add(es, "vperf::vcpu-clock", 1);
	assert_int_equal(vperf_evset__open(es), 0);
	assert_int_equal(fake.start_arg[0].nr_events, 0);
	vperf_evset__delete(es);
}

/* The host's refusal of one event names that event and the reason. */
static void refused_event_names_the_event_and_the_allowlist(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	int ret;

	add(es, "vperf::steal", 0);
	add(es, "vperf::kvm:io_exits", 1);
	fake.event_err = EPERM;
	fake.event_err_idx = 1;
	ret = vperf_evset__open(es);
	printf("open: %d: %s\n", ret, vperf_evset__strerror(es));
	assert_int_equal(ret, -EPERM);
	assert_int_equal(vperf_evset__error_event(es), 1);
	assert_true(vt_contains(vperf_evset__strerror(es), "'vperf::kvm:io_exits' is refused by the "
				"host's allowlist"));
	assert_int_equal(fake.open_fds, 0);
	vperf_evset__delete(es);
}

/* vcpu-clock and steal alone go as a list: the module can account them without hypercalls. */
static void clock_and_steal_alone_are_passed_as_a_list(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct fake_ctx *c;

	add(es, "vperf::steal", 0);
	add(es, "vperf::vcpu-clock", 1);
	assert_int_equal(vperf_evset__open(es), 0);
	assert_int_equal(fake.start_arg[0].nr_events, 2);
	c = fake_ctx_of(gettid());
	assert_non_null(c);
	assert_int_equal(c->events[0].source, VPERF_SRC_STEAL);
	assert_int_equal(c->events[1].source, VPERF_SRC_PERF);
	assert_string_equal(c->events[1].name, "task-clock");
	vperf_evset__delete(es);
}

/* Malformed vperf:: forms are usage errors that say what is expected. */
static void malformed_virt_forms_say_what_is_expected(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);

	assert_int_equal(vperf_evset__add(es, "vperf::exits:nosuchreason"), -ENOENT);
	assert_true(vt_contains(vperf_evset__strerror(es), "not a KVM exit reason"));
	assert_int_equal(vperf_evset__add(es, "vperf::exits:256"), -ENOENT);
	assert_int_equal(vperf_evset__add(es, "vperf::kvm:Halt Exits"), -EINVAL);
	assert_true(vt_contains(vperf_evset__strerror(es), "not a KVM statistic's name"));
	assert_int_equal(vperf_evset__add(es, "vperf::host:bogus"), -ENOENT);
	assert_true(vt_contains(vperf_evset__strerror(es), "context-switches"));
	assert_int_equal(vperf_evset__add(es, "vperf::hw:"), -EINVAL);
	assert_int_equal(vperf_evset__add(es, "vperf::exits:5"), 0);
	assert_string_equal(vperf_evset__event_canon(es, 0), "vperf::exits:hlt");
	vperf_evset__delete(es);
}

struct list_walk {
	int steal_usable, exits_io_usable;
	char exits_io_why[512];
	int halt_usable, hw_usable, sw_usable, exits_hlt_usable, dups;
	char hw_why[512], sw_why[512];
	int seen_exits;
};

static int list_fn(const struct vperf_event_info *ev, void *arg)
{
	struct list_walk *w = arg;

	if (!strcmp(ev->name, "vperf::exits") && w->seen_exits++)
		w->dups++;
	if (!strcmp(ev->name, "vperf::kvm:halt_exits"))
		w->halt_usable = ev->usable;
	if (!strcmp(ev->name, "vperf::exits:hlt"))
		w->exits_hlt_usable = ev->usable;
	if (!strcmp(ev->name, "vperf::hw:instructions")) {
		w->hw_usable = ev->usable;
		snprintf(w->hw_why, sizeof(w->hw_why), "%s", ev->why ? ev->why : "");
	}
	if (!strcmp(ev->name, "vperf::host:page-faults")) {
		w->sw_usable = ev->usable;
		snprintf(w->sw_why, sizeof(w->sw_why), "%s", ev->why ? ev->why : "");
	}

	if (!strcmp(ev->name, "vperf::steal"))
		w->steal_usable = ev->usable;
	if (!strcmp(ev->name, "vperf::exits:io")) {
		w->exits_io_usable = ev->usable;
		snprintf(w->exits_io_why, sizeof(w->exits_io_why), "%s", ev->why ? ev->why : "");
	}
	return 0;
}

/* What `vperf list` shows in a guest: the catalog usable, then the host's list with reasons. */
static void event_list_names_the_hosts_events_and_why_not(void **state)
{
	struct list_walk w = { .steal_usable = -2, .exits_io_usable = -2, .halt_usable = -2,
				.hw_usable = -2, .sw_usable = -2, .exits_hlt_usable = -2 };

	fake.host_events = true;
	assert_int_equal(vperf__virt_for_each(list_fn, &w, 1), 0);
	assert_int_equal(w.steal_usable, 1);
	assert_int_equal(w.exits_io_usable, 1);
	assert_int_equal(w.halt_usable, 1);
	assert_int_equal(w.hw_usable, 0);
	printf("instructions: %s\n", w.hw_why);
	assert_true(vt_contains(w.hw_why, "the host has no PMU"));
	assert_int_equal(w.sw_usable, 0);
	assert_true(vt_contains(w.sw_why, "allowlist"));
	assert_int_equal(w.exits_hlt_usable, 1);
	assert_int_equal(w.dups, 0);
}

/* ---- the thread page's seq protocol ---- */

static struct vperf_thread_page page __attribute__((aligned(4096)));

struct writer {
	int calls;
	int at_call, at_step;	/* when to write */
	uint32_t new_seq;
	uint64_t new_value;
	int keep_odd;		/* never finish: the page stays busy */
};

static void set_page(uint32_t seq, uint64_t v)
{
	page.seq = seq;
	for (int k = 0; k < 3; k++)
		page.counters[k] = (struct vperf_thread_counter){ v + k, 10 * v, 10 * v };
}

static void step(void *ctx, int s)
{
	struct writer *w = ctx;

	if (s == 0)
		w->calls++;
	if (w->keep_odd)
		return;
	if (w->calls == w->at_call && s == w->at_step)
		set_page(w->new_seq, w->new_value);
}

static void page_read_stable_page_takes_one_pass(void **state)
{
	struct vperf_thread_counter out[3];
	struct writer w = { 0 };
	struct vperf_pv_page_ops ops = { step, &w, 0 };

	set_page(4, 100);
	assert_int_equal(vperf__pv_page_read(&page, 0, 3, out, &ops), 0);
	assert_int_equal(ops.retries, 0);
	assert_int_equal(out[0].value, 100);
	assert_int_equal(out[2].value, 102);
	assert_int_equal(out[1].enabled, 1000);
	/* a window of the counters: counter 2 alone */
	assert_int_equal(vperf__pv_page_read(&page, 2, 1, out, &ops), 0);
	assert_int_equal(out[0].value, 102);
	assert_int_equal(vperf__pv_page_read(&page, VPERF_THREAD_MAX_COUNTERS, 1, out, NULL), -EINVAL);
}

/* The kernel is writing (seq odd) when the read starts: wait for it. */
static void page_read_retries_while_seq_is_odd(void **state)
{
	struct vperf_thread_counter out[3];
	struct writer w = { .at_call = 1, .at_step = 0, .new_seq = 6, .new_value = 200 };
	struct vperf_pv_page_ops ops = { step, &w, 0 };

	set_page(5, 100);	/* half-written */
	assert_int_equal(vperf__pv_page_read(&page, 0, 3, out, &ops), 0);
	assert_int_equal(ops.retries, 1);
	assert_int_equal(out[0].value, 200);
	assert_int_equal(out[2].running, 2000);
}

/* The kernel wrote between the copy and the second seq: the copy is thrown away. */
static void page_read_retries_when_seq_changes_mid_read(void **state)
{
	struct vperf_thread_counter out[3];
	struct writer w = { .at_call = 1, .at_step = 1, .new_seq = 6, .new_value = 300 };
	struct vperf_pv_page_ops ops = { step, &w, 0 };

	set_page(4, 100);
	assert_int_equal(vperf__pv_page_read(&page, 0, 3, out, &ops), 0);
	assert_int_equal(ops.retries, 1);
	assert_int_equal(out[0].value, 300);	/* never the stale 100 */
	assert_int_equal(out[1].value, 301);
}

static void page_read_gives_up_with_eagain_when_always_busy(void **state)
{
	struct vperf_thread_counter out[3];
	struct writer w = { .keep_odd = 1 };
	struct vperf_pv_page_ops ops = { step, &w, 0 };

	set_page(7, 100);
	assert_int_equal(vperf__pv_page_read(&page, 0, 3, out, &ops), -EAGAIN);
	assert_int_equal(ops.retries, VPERF_PV_PAGE_MAX_RETRIES);
	assert_int_equal(vperf__pv_page_read(&page, 0, VPERF_THREAD_MAX_COUNTERS + 1, out, NULL),
			 -EINVAL);
}

/* ---- VPERF_TARGET_SELF ---- */

/* The default read: THREAD_READ adds the running slice, then the page. */
/*
 * With a doorbell: page sum + (load - base) for the counters the set reads,
 * no THREAD_READ; without a base (base_valid 0) the ioctl instead.
 */
static void self_read_uses_the_doorbell_without_an_ioctl(void **state)
{
	struct vperf_count c;
	struct fake_ctx *ctx;
	struct vperf_evset *es;
	int reads;

	(void)state;
	fake.doorbell = true;
	es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	add(es, "vperf::vcpu-clock", 0);
	open_ok(es);
	ctx = fake_ctx_of(gettid());
	assert_non_null(ctx);
	assert_int_equal(fake.doorbell_mmaps, 1);
	assert_int_equal(vperf_evset__read_path(es, 0), VPERF_READ_DOORBELL);
	assert_string_equal(vperf_read_path_name(VPERF_READ_DOORBELL), "doorbell");
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, VCPU, 5000, 5000, 5000);	/* the slices so far */
	ctx->page->base[VCPU] = 1000;		/* the running slice started at 1000 */
	ctx->page->base_valid = 1;
	fake.doorbell_page[VCPU] = 1250;	/* the vCPU's counter now */
	reads = fake.reads;
	assert_int_equal(vperf_evset__read_one(es, 0, &c), 0);
	assert_int_equal(fake.reads, reads);		/* no ioctl */
	assert_int_equal(c.value, 5250);
	/* no base (a failed snapshot): THREAD_READ, which adds the fake's slice */
	ctx->page->base_valid = 0;
	ctx->slice[VCPU] = (struct vperf_thread_counter){ 300, 300, 300 };
	assert_int_equal(vperf_evset__read_one(es, 0, &c), 0);
	assert_int_equal(fake.reads, reads + 1);
	assert_int_equal(c.value, 5300);
	vperf_evset__delete(es);
	assert_int_equal(fake.munmaps, 2);		/* the page and the doorbell */
}

static void page_only_set_does_not_map_the_doorbell(void **state)
{
	struct vperf_evset *es;

	(void)state;
	fake.doorbell = true;
	es = new_set(VPERF_TARGET_SELF, 0, VPERF_EVSET_PAGE_ONLY, NULL);
	add(es, "vperf::vcpu-clock", 0);
	open_ok(es);
	assert_int_equal(fake.doorbell_mmaps, 0);
	assert_int_equal(vperf_evset__read_path(es, 0), VPERF_READ_PAGE);
	vperf_evset__delete(es);
}

static void self_read_syncs_the_page_and_is_exact(void **state)
{
	struct vperf_count c[3];
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(0, &ctx);
	int reads;

	assert_int_equal(fake.starts, 1);
	assert_int_equal(fake.start_arg[0].tid, 0);
	assert_int_equal(fake.start_arg[0].flags, 0);
	assert_int_equal(fake.mmaps, 1);
	for (int e = 0; e < 3; e++)
		assert_int_equal(vperf_evset__read_path(es, e), VPERF_READ_PAGE_SYNC);
	assert_string_equal(vperf_read_path_name(VPERF_READ_PAGE_SYNC), "page-sync");

	fake_run(ctx, VCPU, 100, 100, 100);	/* before start: not counted */
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, VCPU, 5000, 5000, 5000);
	fake_run(ctx, STEAL, 70, 5000, 5000);
	fake_run(ctx, EXITS, 12, 5000, 5000);
	ctx->slice[VCPU] = (struct vperf_thread_counter){ 250, 250, 250 };
	ctx->slice[EXITS] = (struct vperf_thread_counter){ 1, 250, 250 };
	reads = fake.reads;
	assert_int_equal(vperf_evset__read(es, c, 3), 0);
	assert_int_equal(fake.reads, reads + 1);	/* one ioctl for the whole set */
	assert_count(&c[0], 5250, 5250, 5250, 5250, 0);
	assert_count(&c[1], 70, 70, 5000, 5000, 0);
	assert_count(&c[2], 13, 13, 5250, 5250, 0);
	assert_int_equal(vperf_evset__read_one(es, 2, &c[2]), 0);
	assert_count(&c[2], 13, 13, 5250, 5250, 0);
	vperf_evset__delete(es);
}

/* VPERF_EVSET_PAGE_ONLY: no ioctl, the counts as of the last switch-out. */
static void self_page_only_read_makes_no_ioctl(void **state)
{
	struct vperf_count c[3];
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(VPERF_EVSET_PAGE_ONLY, &ctx);
	int reads;

	assert_int_equal(vperf_evset__read_path(es, 0), VPERF_READ_PAGE);
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, VCPU, 5000, 5000, 5000);
	ctx->slice[VCPU] = (struct vperf_thread_counter){ 250, 250, 250 };
	reads = fake.reads;
	assert_int_equal(vperf_evset__read(es, c, 3), 0);
	assert_int_equal(fake.reads, reads);
	assert_count(&c[0], 5000, 5000, 5000, 5000, 0);
	assert_count(&c[2], 0, 0, 0, 0, VPERF_COUNT_NOT_COUNTED);
	/* Stop is a boundary: exact, slice included. */
	assert_int_equal(vperf_evset__stop(es), 0);
	assert_int_equal(vperf_evset__read(es, c, 1), 0);
	assert_count(&c[0], 5250, 5250, 5250, 5250, 0);
	vperf_evset__delete(es);
}

/*
 * read_one() on a page-only set reads just its counter of the page; it
 * must give what the whole read gives, through start, stop, restart and
 * reset, with no ioctl.
 */
static void self_page_only_read_one_matches_the_whole_read(void **state)
{
	struct vperf_count all[3], one;
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(VPERF_EVSET_PAGE_ONLY, &ctx);
	int reads = fake.reads;

	fake_run(ctx, VCPU, 100, 100, 100);	/* before start: not counted */
	for (int step = 0; step < 5; step++) {
		switch (step) {
		case 0: assert_int_equal(vperf_evset__start(es), 0); break;
		case 1: break;
		case 2: assert_int_equal(vperf_evset__stop(es), 0); break;
		case 3: assert_int_equal(vperf_evset__start(es), 0); break;
		case 4: assert_int_equal(vperf_evset__reset(es), 0); break;
		}
		fake_run(ctx, VCPU, 1000 + step, 1000, 1000);
		fake_run(ctx, 1, 7 * step, 1000, 1000);
		reads = fake.reads;
		assert_int_equal(vperf_evset__read(es, all, 3), 0);
		for (int e = 0; e < 3; e++) {
			assert_int_equal(vperf_evset__read_one(es, e, &one), 0);
			assert_count(&one, all[e].value, all[e].raw, all[e].enabled, all[e].running,
				     all[e].flags);
		}
		assert_int_equal(fake.reads, reads);
	}
	assert_true(all[0].value > 0);		/* started, counted: not all zero */
	vperf_evset__delete(es);
}

/*
 * vperf_page_read() inlined in the caller gives the page's raw count of
 * the event's slot (what the library's page read starts from), follows the
 * page as slices are published, and gives up with -EAGAIN on a page whose
 * seq stays odd; no ioctl on the way.
 */
static void page_ref_inline_read_gives_the_pages_raw_count(void **state)
{
	struct vperf_page_ref ref[3] = { { .size = sizeof(ref[0]) }, { .size = sizeof(ref[0]) },
					  { .size = sizeof(ref[0]) } };
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(VPERF_EVSET_PAGE_ONLY, &ctx);
	int reads = fake.reads;
	uint64_t v;

	for (int e = 0; e < 3; e++)
		assert_int_equal(vperf_evset__page_ref(es, e, &ref[e]), 0);
	assert_ptr_equal(ref[0].page, ctx->page);
	fake_run(ctx, VCPU, 1234, 1000, 1000);
	fake_run(ctx, 1, 56, 1000, 1000);
	assert_int_equal(vperf_page_read(&ref[0], &v), 0);
	assert_int_equal(v, 1234);
	assert_int_equal(vperf_page_read(&ref[1], &v), 0);
	assert_int_equal(v, 56);
	assert_int_equal(vperf_page_read(&ref[2], &v), 0);
	assert_int_equal(v, 0);
	fake_run(ctx, VCPU, 1000, 1000, 1000);		/* the next slice */
	assert_int_equal(vperf_page_read(&ref[0], &v), 0);
	assert_int_equal(v, 2234);
	assert_int_equal(fake.reads, reads);
	ctx->page->seq |= 1;				/* a writer that never finishes */
	assert_int_equal(vperf_page_read(&ref[0], &v), -EAGAIN);
	assert_int_equal(v, 2234);			/* untouched */
	ctx->page->seq++;
	assert_int_equal(vperf_page_read(&ref[0], &v), 0);
	vperf_evset__delete(es);
}

/* Events without a page slot of the caller's: not supported, and said how. */
static void page_ref_needs_an_open_self_vperf_event(void **state)
{
	struct vperf_page_ref ref = { .size = sizeof(ref) };
	struct vperf_evset *es = new_set(VPERF_TARGET_THREAD, 4242, 0, NULL);

	add(es, "vperf::vcpu-clock", 0);
	assert_int_equal(vperf_evset__page_ref(es, 0, &ref), -EBADF);	/* not open */
	open_ok(es);
	assert_int_equal(vperf_evset__page_ref(es, 0, &ref), -EOPNOTSUPP);	/* another thread's */
	assert_int_equal(vperf_evset__page_ref(es, 1, &ref), -EINVAL);
	assert_int_equal(vperf_evset__page_ref(es, -1, &ref), -EINVAL);
	assert_int_equal(vperf_evset__page_ref(es, 0, NULL), -EINVAL);
	assert_int_equal(vperf_evset__page_ref(NULL, 0, &ref), -EINVAL);
	ref.size = sizeof(size_t);				/* older than any version */
	assert_int_equal(vperf_evset__page_ref(es, 0, &ref), -EINVAL);
	ref.size = sizeof(ref);
	vperf_evset__delete(es);

	es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	add(es, "vperf::steal", 0);
	add(es, "task-clock", 1);
	if (vperf_evset__open(es) == 0) {	/* perf may be unavailable here: the first half stands */
		struct { struct vperf_page_ref r; uint64_t tail; } big = { { .size = sizeof(big) }, 0 };

		assert_int_equal(vperf_evset__page_ref(es, 0, &big.r), 0);	/* a newer caller's */
		assert_int_equal(big.r.size, sizeof(struct vperf_page_ref));	/* what we filled */
		assert_int_equal(big.tail, 0);
		assert_int_equal(vperf_evset__page_ref(es, 0, &ref), 0);
		assert_int_equal(vperf_evset__page_ref(es, 1, &ref), -EOPNOTSUPP);	/* a perf event */
	} else {
		printf("perf unavailable: the mixed-set half is not run (%s)\n", vperf_evset__strerror(es));
	}
	vperf_evset__delete(es);
}

struct other_read {
	struct vperf_evset *es;
	struct vperf_count c;
	int ret;
};

static void *read_elsewhere(void *arg)
{
	struct other_read *o = arg;

	o->ret = vperf_evset__read_one(o->es, 0, &o->c);
	return NULL;
}

/* Only the opener can sync its page; another thread reads the page as it is. */
static void self_read_from_another_thread_reads_the_page(void **state)
{
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(0, &ctx);
	struct other_read o = { .es = es };
	pthread_t t;
	int reads;

	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, VCPU, 700, 700, 700);
	ctx->slice[VCPU] = (struct vperf_thread_counter){ 30, 30, 30 };
	reads = fake.reads;
	assert_int_equal(pthread_create(&t, NULL, read_elsewhere, &o), 0);
	pthread_join(t, NULL);
	assert_int_equal(o.ret, 0);
	assert_int_equal(fake.reads, reads);
	assert_count(&o.c, 700, 700, 700, 700, 0);
	vperf_evset__delete(es);
}

/* The module has no enable switch: the library's baselines make one. */
static void self_start_stop_reset_keep_library_baselines(void **state)
{
	struct vperf_count c;
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(0, &ctx);

	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 0, 0, 0, 0, VPERF_COUNT_NOT_COUNTED);	/* never started */
	fake_run(ctx, EXITS, 1000, 1000, 1000);
	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 0, 0, 0, 0, VPERF_COUNT_NOT_COUNTED);

	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, EXITS, 300, 400, 400);
	assert_int_equal(vperf_evset__stop(es), 0);
	fake_run(ctx, EXITS, 5000, 5000, 5000);			/* while stopped */
	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 300, 300, 400, 400, 0);

	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, EXITS, 20, 100, 100);
	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 320, 320, 500, 500, 0);
	/* start while started changes nothing */
	assert_int_equal(vperf_evset__start(es), 0);
	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 320, 320, 500, 500, 0);

	/* Reset zeroes the value; the times go on, as perf's IOC_RESET. */
	assert_int_equal(vperf_evset__reset(es), 0);
	fake_run(ctx, EXITS, 7, 50, 50);
	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 7, 7, 550, 550, 0);
	vperf_evset__delete(es);
}

/* vCPU counters that ran part of the time are scaled as perf's are. */
static void self_multiplexed_counter_is_scaled(void **state)
{
	struct vperf_count c;
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(0, &ctx);

	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, EXITS, 300, 2000, 1000);
	assert_int_equal(vperf_evset__read_one(es, 2, &c), 0);
	assert_count(&c, 600, 300, 2000, 1000, VPERF_COUNT_SCALED);
	vperf_evset__delete(es);
}

static void self_delete_unmaps_the_page_and_closes_the_device(void **state)
{
	struct fake_ctx *ctx;
	struct vperf_evset *es = open_self3(0, &ctx);

	assert_int_equal(fake.open_fds, 1);
	vperf_evset__delete(es);
	assert_int_equal(fake.munmaps, 1);
	assert_int_equal(fake.open_fds, 0);
	assert_null(fake_ctx_of(gettid()));	/* closing ended the context */
}

static void open_with_fewer_module_counters_names_the_event(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	const char *msg;

	add(es, "vperf::steal", 0);
	add(es, "vperf::exits", 1);
	fake.nr_counters = 2;
	assert_int_equal(vperf_evset__open(es), -EOPNOTSUPP);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "keeps 2 counters per thread"));
	assert_true(vt_contains(msg, "'vperf::exits'"));
	assert_int_equal(vperf_evset__error_event(es), 1);
	assert_int_equal(fake.open_fds, 0);
	vperf_evset__delete(es);
}

static void open_with_unknown_page_version_fails_cleanly(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	const char *msg;

	add(es, "vperf::steal", 0);
	fake.page_version = VPERF_THREAD_PAGE_VERSION + 1;
	assert_int_equal(vperf_evset__open(es), -EPROTO);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "do not match"));
	assert_int_equal(fake.open_fds, 0);
	vperf_evset__delete(es);
}

static void open_thread_already_counted_is_ebusy_and_says_so(void **state)
{
	struct fake_ctx *ctx;
	struct vperf_evset *first = open_self3(0, &ctx);
	struct vperf_evset *second = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	const char *msg;

	add(second, "vperf::steal", 0);
	assert_int_equal(vperf_evset__open(second), -EBUSY);
	msg = vperf_evset__strerror(second);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "already counted by vperf_guest.ko"));
	assert_int_equal(fake.open_fds, 1);	/* only the first set's */
	vperf_evset__delete(second);
	vperf_evset__delete(first);
}

static void no_sample(const struct vperf_sample *s, void *arg)
{
}

static void vperf_event_other_than_vcpu_clock_cannot_be_sampled(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct vperf_sample_opts so = { .size = sizeof(so), .period = 1000 };

	add(es, "vperf::exits", 0);
	so.fn = no_sample;
	assert_int_equal(vperf_evset__sample(es, 0, &so), -EOPNOTSUPP);
	assert_true(vt_contains(vperf_evset__strerror(es), "cannot be sampled"));
	vperf_evset__delete(es);
}

static void vcpu_clock_samples_only_with_a_period_of_100us(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct vperf_sample_opts so = { .size = sizeof(so), .freq = 1000, .fn = no_sample };

	add(es, "vperf::vcpu-clock", 0);
	add(es, "vperf::vcpu-clock", 1);
	assert_int_equal(vperf_evset__sample(es, 0, &so), -EINVAL);	/* no frequency mode */
	assert_true(vt_contains(vperf_evset__strerror(es), "period in ns of at least 100000"));
	so.freq = 0;
	so.period = 99999;
	assert_int_equal(vperf_evset__sample(es, 0, &so), -EINVAL);
	so.period = 100000;
	assert_int_equal(vperf_evset__sample(es, 0, &so), 0);
	assert_int_equal(vperf_evset__sample(es, 1, &so), -EINVAL);	/* one ring per thread */
	assert_true(vt_contains(vperf_evset__strerror(es), "one vperf:: event per set"));
	vperf_evset__delete(es);
}

static unsigned int got_samples, got_frames;

static void count_sample(const struct vperf_sample *s, void *arg)
{
	got_samples++;
	got_frames = s->nr_frames;
}

static void vcpu_clock_samples_reach_the_callback_once_started(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct vperf_sample_opts so = {
		.size = sizeof(so), .period = 2000000, .fn = count_sample, .max_frames = 8,
	};
	const struct vperf_thread_start *st = &fake.start_arg[0];

	got_samples = got_frames = 0;
	add(es, "vperf::vcpu-clock", 0);
	assert_int_equal(vperf_evset__sample(es, 0, &so), 0);
	open_ok(es);
	assert_string_equal(vperf_backend_name(es), "pv");
	/* THREAD_START asked the module to sample, with the library's signal and its file as cookie */
	assert_true(st->flags & VPERF_THREAD_SAMPLE);
	assert_int_equal(st->sample_counter, VPERF_THREAD_CTR_VCPU_CLOCK);
	assert_int_equal(st->sample_period, 2000000);
	assert_int_equal(st->sample_pages, 16);
	assert_int_equal(st->sample_signo, SIGRTMIN + 4);
	assert_int_equal(st->sample_cookie, fake_last_fd());
	assert_int_equal(fake.ring_mmaps, 1);
	/* before start: dropped, neither delivered nor lost */
	fake_sample(0x1000, true);
	assert_int_equal(got_samples, 0);
	assert_int_equal(vperf_evset__samples_lost(es), 0);
	assert_int_equal(vperf_evset__start(es), 0);
	fake_sample(0x1000, true);
	assert_int_equal(got_samples, 1);
	assert_true(got_frames >= 1);		/* unwound from the signal frame */
	/* two records, one signal: one sample, one lost (the perf backend's rule) */
	fake_sample(0x1000, false);
	fake_sample(0x1000, true);
	assert_int_equal(got_samples, 2);
	assert_int_equal(vperf_evset__samples_lost(es), 1);
	assert_int_equal(vperf_evset__stop(es), 0);
	vperf_evset__delete(es);
}

/* ---- VPERF_TARGET_THREAD ---- */

static void thread_target_reads_its_row_from_thread_list(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_THREAD, 4242, 0, NULL);
	struct fake_ctx *ctx;
	struct vperf_count c[2];
	const char *msg;

	add(es, "vperf::vcpu-clock", 0);
	add(es, "vperf::steal", 1);
	open_ok(es);
	assert_int_equal(fake.start_arg[0].tid, 4242);
	assert_int_equal(fake.start_arg[0].flags, 0);
	assert_int_equal(fake.mmaps, 0);
	assert_int_equal(vperf_evset__read_path(es, 0), VPERF_READ_SYSCALL);
	ctx = fake_ctx_of(4242);
	assert_non_null(ctx);
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, VCPU, 900, 900, 900);
	fake_run(ctx, STEAL, 40, 900, 900);
	ctx->slice[VCPU] = (struct vperf_thread_counter){ 5, 5, 5 };	/* not in the list */
	assert_int_equal(vperf_evset__read(es, c, 2), 0);
	assert_count(&c[0], 900, 900, 900, 900, 0);
	assert_count(&c[1], 40, 40, 900, 900, 0);
	assert_int_equal(fake.reads, 0);
	vperf_evset__delete(es);

	/* Refused by the module's paranoid setting: said so. */
	fake.start_err = EACCES;
	es = new_set(VPERF_TARGET_THREAD, 4243, 0, NULL);
	add(es, "vperf::steal", 0);
	assert_int_equal(vperf_evset__open(es), -EACCES);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "refuses to count thread 4243"));
	assert_true(vt_contains(msg, "paranoid"));
	vperf_evset__delete(es);
}

/* ---- VPERF_TARGET_PROCESS ---- */

static struct vperf_evset *open_process(uint32_t flags)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_PROCESS, getpid(), flags, NULL);

	add(es, "vperf::vcpu-clock", 0);
	add(es, "vperf::exits", 1);
	open_ok(es);
	return es;
}

static void process_total_sums_live_and_exited_rows(void **state)
{
	struct vperf_evset *es = open_process(0);
	struct fake_ctx *main_ctx = fake_ctx_of(getpid()), *a, *child;
	struct vperf_count c[2];
	int fd = fake_last_fd();

	assert_non_null(main_ctx);
	assert_int_equal(fake.start_arg[0].tid, getpid());
	assert_int_equal(fake.start_arg[0].flags, VPERF_THREAD_INHERIT);
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(main_ctx, VCPU, 1000, 1000, 1000);
	fake_run(main_ctx, EXITS, 10, 1000, 1000);
	a = fake_thread(fd, getpid(), 5001, "worker");
	fake_run(a, VCPU, 200, 200, 200);
	fake_run(a, EXITS, 3, 200, 200);
	child = fake_thread(fd, 6000, 6000, "child");		/* a child process */
	fake_run(child, VCPU, 30, 30, 30);
	fake_run(child, EXITS, 1, 30, 30);
	fake_exit(child);
	assert_int_equal(vperf_evset__read(es, c, 2), 0);
	assert_count(&c[0], 1230, 1230, 1230, 1230, 0);
	assert_count(&c[1], 14, 14, 1230, 1230, 0);
	vperf_evset__delete(es);
}

static void process_per_thread_rows_come_from_thread_list(void **state)
{
	struct vperf_evset *es = open_process(VPERF_EVSET_PER_THREAD);
	struct fake_ctx *main_ctx = fake_ctx_of(getpid()), *a;
	struct vperf_count c[2];
	int fd = fake_last_fd();
	pid_t pid, tid;

	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(main_ctx, EXITS, 10, 100, 100);
	a = fake_thread(fd, getpid(), 5001, "worker");
	fake_run(a, EXITS, 3, 50, 50);
	fake_exit(a);
	assert_int_equal(vperf_evset__poll_threads(es), 0);
	assert_int_equal(vperf_evset__nr_threads(es), 2);

	assert_int_equal(vperf_evset__read_thread(es, 0, &pid, &tid, c, 2), 0);
	assert_int_equal(pid, getpid());
	assert_int_equal(tid, getpid());
	assert_count(&c[1], 10, 10, 100, 100, 0);
	assert_count(&c[0], 0, 0, 0, 0, VPERF_COUNT_NOT_COUNTED);
	assert_string_equal(vperf_evset__thread_comm(es, 0), "fake");

	assert_int_equal(vperf_evset__read_thread(es, 1, &pid, &tid, c, 2), 0);
	assert_int_equal(pid, getpid());
	assert_int_equal(tid, 5001);
	assert_count(&c[1], 3, 3, 50, 50, 0);
	assert_string_equal(vperf_evset__thread_comm(es, 1), "worker");
	vperf_evset__delete(es);
}

/* More rows than the first buffer holds: THREAD_LIST again, bigger. */
static void thread_list_grows_its_buffer_when_total_exceeds_it(void **state)
{
	struct vperf_evset *es = open_process(0);
	struct vperf_count c[2];
	int fd = fake_last_fd();
	uint64_t want = 0;

	assert_int_equal(vperf_evset__start(es), 0);
	for (int i = 1; i <= 40; i++) {
		fake_run(fake_thread(fd, getpid(), 7000 + i, "t"), EXITS, (uint64_t)i, 10, 10);
		want += (uint64_t)i;
	}
	fake.lists = 0;
	assert_int_equal(vperf_evset__read(es, c, 2), 0);
	assert_int_equal(fake.lists, 2);
	assert_int_equal(fake.list_cap[0], 16);
	assert_true(fake.list_cap[1] >= 41);
	assert_count(&c[1], want, want, 400, 400, 0);
	vperf_evset__delete(es);
}

/* Threads keep appearing between two THREAD_LIST calls: again, until all fit. */
static void thread_list_retries_while_threads_appear(void **state)
{
	struct vperf_evset *es = open_process(VPERF_EVSET_PER_THREAD);
	struct vperf_count c[2];
	int fd = fake_last_fd();

	assert_int_equal(vperf_evset__start(es), 0);
	for (int i = 1; i <= 19; i++)
		fake_run(fake_thread(fd, getpid(), 7000 + i, "t"), EXITS, 1, 10, 10);
	fake.lists = 0;
	fake.appear_at = 2;		/* the second call finds 30 more */
	fake.appear_n = 30;
	fake.appear_pid = getpid();
	assert_int_equal(vperf_evset__read(es, c, 2), 0);
	assert_int_equal(fake.lists, 3);
	assert_int_equal(fake.list_cap[0], 16);
	assert_true(fake.list_cap[2] >= 50);
	assert_count(&c[1], 49, 49, 490, 490, 0);
	assert_int_equal(vperf_evset__poll_threads(es), 0);
	assert_int_equal(vperf_evset__nr_threads(es), 50);
	vperf_evset__delete(es);
}

static void lost_threads_are_reported_as_threads_lost(void **state)
{
	struct vperf_evset *es = open_process(VPERF_EVSET_PER_THREAD);
	struct vperf_count c[2];

	fake.lost = 3;
	assert_int_equal(vperf_evset__read(es, c, 2), 0);
	assert_int_equal(vperf_evset__threads_lost(es), 3);
	fake.lost = 5;
	assert_int_equal(vperf_evset__poll_threads(es), 0);
	assert_int_equal(vperf_evset__threads_lost(es), 5);
	vperf_evset__delete(es);
}

/* Two contexts of one reused tid: one row, their sum. */
static void reused_tid_rows_are_merged(void **state)
{
	struct vperf_evset *es = open_process(VPERF_EVSET_PER_THREAD);
	int fd = fake_last_fd();
	struct fake_ctx *old, *young;
	struct vperf_count c[2];
	pid_t tid;

	assert_int_equal(vperf_evset__start(es), 0);
	old = fake_thread(fd, getpid(), 5005, "old");
	fake_run(old, EXITS, 4, 10, 10);
	fake_exit(old);
	young = fake_thread(fd, getpid(), 5005, "young");
	fake_run(young, EXITS, 6, 10, 10);
	assert_int_equal(vperf_evset__poll_threads(es), 0);
	assert_int_equal(vperf_evset__nr_threads(es), 2);	/* main + 5005 */
	assert_int_equal(vperf_evset__read_thread(es, 1, NULL, &tid, c, 2), 0);
	assert_int_equal(tid, 5005);
	assert_count(&c[1], 10, 10, 20, 20, 0);
	vperf_evset__delete(es);
}

/* Per thread, each row has its own baseline: time while stopped never counts. */
static void per_thread_baselines_leave_out_the_stopped_time(void **state)
{
	struct vperf_evset *es = open_process(VPERF_EVSET_PER_THREAD);
	struct fake_ctx *main_ctx = fake_ctx_of(getpid()), *a, *b;
	int fd = fake_last_fd();
	struct vperf_count c[2], tot[2];
	pid_t tid;

	a = fake_thread(fd, getpid(), 5001, "a");
	fake_run(a, EXITS, 100, 100, 100);			/* before start */
	fake_run(main_ctx, EXITS, 100, 100, 100);
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(a, EXITS, 5, 10, 10);
	assert_int_equal(vperf_evset__stop(es), 0);
	b = fake_thread(fd, getpid(), 5002, "b");		/* born while stopped */
	fake_run(b, EXITS, 1000, 1000, 1000);
	fake_run(a, EXITS, 1000, 1000, 1000);
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(b, EXITS, 2, 10, 10);
	fake_thread(fd, getpid(), 5003, "c");			/* born while counting */
	fake_run(fake_ctx_of(5003), EXITS, 9, 10, 10);

	assert_int_equal(vperf_evset__read(es, tot, 2), 0);
	assert_count(&tot[1], 16, 16, 30, 30, 0);
	assert_int_equal(vperf_evset__poll_threads(es), 0);
	assert_int_equal(vperf_evset__nr_threads(es), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(vperf_evset__read_thread(es, i, NULL, &tid, c, 2), 0);
		if (tid == getpid())
			assert_count(&c[1], 0, 0, 0, 0, VPERF_COUNT_NOT_COUNTED);
		else if (tid == 5001)
			assert_count(&c[1], 5, 5, 10, 10, 0);
		else if (tid == 5002)
			assert_count(&c[1], 2, 2, 10, 10, 0);
		else if (tid == 5003)
			assert_count(&c[1], 9, 9, 10, 10, 0);
		else
			fail_msg("unexpected thread %d", (int)tid);
	}
	vperf_evset__delete(es);
}

/* ---- sets with ordinary events too ---- */

static void burn_ms(int ms)
{
	struct timespec t0, t;
	volatile uint64_t x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) <
		 ms * 1000000LL);
}

static void skip_without_perf(struct vperf_evset *es, int ret)
{
	if (ret == -EACCES || ret == -EPERM || ret == -ENOENT || ret == -ENOSYS)
		vt_skip("perf_event_open cannot count task-clock here: %s",
			vperf_evset__strerror(es));
}

/* `-e task-clock,vperf::steal` in a guest: task-clock through perf, steal through pv. */
static void mixed_set_counts_ordinary_events_through_perf(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct fake_ctx *ctx;
	struct vperf_count c[3];
	int ret;

	add(es, "vperf::steal", 0);
	add(es, "task-clock", 1);
	add(es, "vperf::exits", 2);
	assert_string_equal(vperf_backend_name(es), "pv");
	ret = vperf_evset__open(es);
	skip_without_perf(es, ret);
	assert_int_equal(ret, 0);
	assert_int_equal(vperf_evset__read_path(es, 0), VPERF_READ_PAGE_SYNC);
	assert_int_equal(vperf_evset__read_path(es, 1), VPERF_READ_SYSCALL);
	assert_string_equal(vperf_evset__event_name(es, 1), "task-clock");
	ctx = fake_ctx_of(gettid());
	assert_int_equal(vperf_evset__start(es), 0);
	burn_ms(20);
	fake_run(ctx, STEAL, 77, 1000, 1000);
	fake_run(ctx, EXITS, 5, 1000, 1000);
	assert_int_equal(vperf_evset__stop(es), 0);
	assert_int_equal(vperf_evset__read(es, c, 3), 0);
	assert_count(&c[0], 77, 77, 1000, 1000, 0);
	assert_count(&c[2], 5, 5, 1000, 1000, 0);
	printf("task-clock %llu ns\n", (unsigned long long)c[1].value);
	assert_true(c[1].value >= 15000000 && c[1].value < 2000000000);
	assert_int_equal(vperf_evset__read_one(es, 1, &c[1]), 0);
	assert_true(c[1].value >= 15000000);
	/* The ordinary event alone needs no device call; the whole set one. */
	fake.reads = 0;
	assert_int_equal(vperf_evset__read_one(es, 1, &c[1]), 0);
	assert_int_equal(fake.reads, 0);
	assert_int_equal(vperf_evset__read(es, c, 3), 0);
	assert_int_equal(fake.reads, 1);
	vperf_evset__delete(es);
	assert_int_equal(fake.open_fds, 0);
}

static void process_target_without_process_is_esrch(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_PROCESS, 999999999, 0, NULL);

	add(es, "vperf::steal", 0);
	add(es, "task-clock", 1);
	assert_int_equal(vperf_evset__open(es), -ESRCH);
	printf("message: %s\n", vperf_evset__strerror(es));
	assert_true(vt_contains(vperf_evset__strerror(es), "no process with id 999999999"));
	assert_int_equal(fake.open_fds, 0);
	vperf_evset__delete(es);
}

/*
 * In a guest without a PMU, a hardware event goes to the host's PMU through
 * the module; a host without one refuses it, and the error names the event
 * under the set's own index and the missing PMU.
 */
static void hw_event_without_guest_pmu_goes_to_the_host_and_names_its_missing_pmu(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	int ret;

	if (vt_host_has_pmu())
		vt_skip("this machine has a PMU: instructions would be the guest perf's");
	add(es, "vperf::steal", 0);
	add(es, "task-clock", 1);
	add(es, "instructions", 2);
	assert_string_equal(vperf_evset__event_canon(es, 2), "vperf::hw:instructions");
	fake.event_err = ENODEV;
	fake.event_err_idx = 1;		/* the module's list: steal, instructions */
	ret = vperf_evset__open(es);
	printf("open: %d: %s\n", ret, vperf_evset__strerror(es));
	assert_int_equal(ret, -ENODEV);
	assert_int_equal(vperf_evset__error_event(es), 2);
	assert_true(vt_contains(vperf_evset__strerror(es), "'instructions' is a hardware event and "
				"the host has no PMU"));
	assert_int_equal(fake.open_fds, 0);
	assert_null(fake_ctx_of(gettid()));
	vperf_evset__delete(es);
}

/*
 * A hardware event through the module, for a user who may not count the
 * guest kernel (the module's EACCES at kernel.perf_event_paranoid >= 2):
 * as perf does, the set counts user mode only (":u" on the name the module
 * passes to the host) and its counts say so; a name that chose its
 * privilege levels (":k") is not changed, and the error says why and how.
 */
static void hw_event_refused_kernel_mode_counts_user_mode_only_as_perf_does(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct vperf_count c[2];
	struct fake_ctx *ctx;
	int ret;

	fake.kernel_paranoid = true;
	add(es, "vperf::steal", 0);
	add(es, "vperf::hw:branch-misses", 1);
	ret = vperf_evset__open(es);
	printf("open: %d: %s\n", ret, ret ? vperf_evset__strerror(es) : "");
	assert_int_equal(ret, 0);
	assert_int_equal(fake.starts, 2);	/* refused once, then user mode only */
	ctx = fake_ctx_of(gettid());
	assert_non_null(ctx);
	assert_int_equal(ctx->nr_events, 2);
	assert_string_equal(ctx->events[1].name, "branch-misses:u");
	assert_string_equal(ctx->events[0].name, "steal");
	assert_int_equal(vperf_evset__start(es), 0);
	fake_run(ctx, 1, 77, 100, 100);
	assert_int_equal(vperf_evset__read(es, c, 2), 0);
	assert_int_equal(c[1].value, 77);
	assert_true(c[1].flags & VPERF_COUNT_USER_ONLY);
	assert_false(c[0].flags & VPERF_COUNT_USER_ONLY);
	vperf_evset__delete(es);

	es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	add(es, "vperf::hw:branch-misses:k", 0);
	ret = vperf_evset__open(es);
	printf("open: %d: %s\n", ret, vperf_evset__strerror(es));
	assert_int_equal(ret, -EACCES);
	assert_int_equal(vperf_evset__error_event(es), 0);
	assert_true(vt_contains(vperf_evset__strerror(es), "'vperf::hw:branch-misses:k' may count the "
				"guest kernel"));
	assert_true(vt_contains(vperf_evset__strerror(es), "kernel.perf_event_paranoid"));
	assert_true(vt_contains(vperf_evset__strerror(es), "':u'"));
	assert_null(fake_ctx_of(gettid()));
	vperf_evset__delete(es);
}

/* The module's per-user limits (EDQUOT): memory for the context, or the event table, each said. */
static void per_user_limits_are_named(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	int ret;

	fake.start_err = EDQUOT;
	add(es, "vperf::steal", 0);
	ret = vperf_evset__open(es);
	printf("open: %d: %s\n", ret, vperf_evset__strerror(es));
	assert_int_equal(ret, -EDQUOT);
	assert_true(vt_contains(vperf_evset__strerror(es), "max_user_kb"));
	vperf_evset__delete(es);

	fake.start_err = 0;
	fake.event_err = EDQUOT;
	fake.event_err_idx = 1;
	es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	add(es, "vperf::steal", 0);
	add(es, "vperf::exits:io", 1);
	ret = vperf_evset__open(es);
	printf("open: %d: %s\n", ret, vperf_evset__strerror(es));
	assert_int_equal(ret, -EDQUOT);
	assert_int_equal(vperf_evset__error_event(es), 1);
	assert_true(vt_contains(vperf_evset__strerror(es), "'vperf::exits:io' cannot be counted now"));
	assert_true(vt_contains(vperf_evset__strerror(es), "max_user_events"));
	vperf_evset__delete(es);
}

static void mixed_per_thread_rows_are_merged_by_tid(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_PROCESS, getpid(), VPERF_EVSET_PER_THREAD,
					 NULL);
	struct fake_ctx *main_ctx, *a;
	struct vperf_count c[2];
	pid_t tid;
	int ret, fd;

	add(es, "task-clock", 0);
	add(es, "vperf::exits", 1);
	ret = vperf_evset__open(es);
	skip_without_perf(es, ret);
	assert_int_equal(ret, 0);
	fd = fake_last_fd();
	main_ctx = fake_ctx_of(getpid());
	assert_int_equal(vperf_evset__start(es), 0);
	burn_ms(10);
	fake_run(main_ctx, EXITS, 8, 100, 100);
	a = fake_thread(fd, getpid(), 5001, "pv-only");		/* perf has no row yet */
	fake_run(a, EXITS, 2, 100, 100);
	assert_int_equal(vperf_evset__poll_threads(es), 0);
	assert_int_equal(vperf_evset__nr_threads(es), 2);

	assert_int_equal(vperf_evset__read_thread(es, 0, NULL, &tid, c, 2), 0);
	assert_int_equal(tid, getpid());
	assert_true(c[0].value >= 5000000);				/* task-clock, perf */
	assert_count(&c[1], 8, 8, 100, 100, 0);				/* exits, pv */

	assert_int_equal(vperf_evset__read_thread(es, 1, NULL, &tid, c, 2), 0);
	assert_int_equal(tid, 5001);
	assert_true(c[0].flags & VPERF_COUNT_NOT_COUNTED);
	assert_count(&c[1], 2, 2, 100, 100, 0);
	vperf_evset__delete(es);
}

static volatile int samples_seen, sample_event;

static void on_sample(const struct vperf_sample *s, void *arg)
{
	sample_event = s->event;
	samples_seen++;
}

/* Samples of the perf half arrive under the index the user gave the event. */
static void mixed_set_samples_under_the_users_index(void **state)
{
	struct vperf_evset *es = new_set(VPERF_TARGET_SELF, 0, 0, NULL);
	struct vperf_sample_opts so = {
		.size = sizeof(so), .period = 1000000, .fn = on_sample,
	};
	int ret;

	add(es, "vperf::steal", 0);
	add(es, "cpu-clock", 1);
	assert_int_equal(vperf_evset__sample(es, 1, &so), 0);
	ret = vperf_evset__open(es);
	skip_without_perf(es, ret);
	assert_int_equal(ret, 0);
	samples_seen = 0;
	sample_event = -1;
	assert_int_equal(vperf_evset__start(es), 0);
	for (int i = 0; i < 200 && !samples_seen; i++)
		burn_ms(5);
	assert_int_equal(vperf_evset__stop(es), 0);
	printf("%d samples\n", samples_seen);
	assert_true(samples_seen > 0);
	assert_int_equal(sample_event, 1);
	vperf_evset__delete(es);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(probe_without_device_says_load_the_module, setup),
		cmocka_unit_test_setup(probe_eacces_says_permission_denied, setup),
		cmocka_unit_test_setup(probe_no_vcpu_pages_says_module_has_none, setup),
		cmocka_unit_test_setup(probe_other_device_is_not_a_vperf_device, setup),
		cmocka_unit_test_setup(probe_usable_device_with_pages_is_available, setup),
		cmocka_unit_test_setup(probe_device_path_comes_from_vperf_pv_device, setup),
		cmocka_unit_test_setup(auto_selection_picks_pv_for_vperf_events_when_usable, setup),
		cmocka_unit_test_setup(auto_selection_keeps_perf_without_vperf_events, setup),
		cmocka_unit_test_setup(auto_selection_without_usable_pv_explains_why, setup),
		cmocka_unit_test_setup(explicit_perf_backend_refuses_vperf_events, setup),
		cmocka_unit_test_setup(virt_events_beyond_the_fixed_three_are_passed_as_an_event_list, setup),
		cmocka_unit_test_setup(fixed_virt_events_send_no_event_list, setup),
		cmocka_unit_test_setup(clock_and_steal_alone_are_passed_as_a_list, setup),
		cmocka_unit_test_setup(refused_event_names_the_event_and_the_allowlist, setup),
		cmocka_unit_test_setup(malformed_virt_forms_say_what_is_expected, setup),
		cmocka_unit_test_setup(event_list_names_the_hosts_events_and_why_not, setup),
		cmocka_unit_test_setup(page_read_stable_page_takes_one_pass, setup),
		cmocka_unit_test_setup(page_read_retries_while_seq_is_odd, setup),
		cmocka_unit_test_setup(page_read_retries_when_seq_changes_mid_read, setup),
		cmocka_unit_test_setup(page_read_gives_up_with_eagain_when_always_busy, setup),
		cmocka_unit_test_setup(self_read_syncs_the_page_and_is_exact, setup),
		cmocka_unit_test_setup(self_read_uses_the_doorbell_without_an_ioctl, setup),
		cmocka_unit_test_setup(page_only_set_does_not_map_the_doorbell, setup),
		cmocka_unit_test_setup(self_page_only_read_makes_no_ioctl, setup),
		cmocka_unit_test_setup(self_page_only_read_one_matches_the_whole_read, setup),
		cmocka_unit_test_setup(page_ref_inline_read_gives_the_pages_raw_count, setup),
		cmocka_unit_test_setup(page_ref_needs_an_open_self_vperf_event, setup),
		cmocka_unit_test_setup(self_read_from_another_thread_reads_the_page, setup),
		cmocka_unit_test_setup(self_start_stop_reset_keep_library_baselines, setup),
		cmocka_unit_test_setup(self_multiplexed_counter_is_scaled, setup),
		cmocka_unit_test_setup(self_delete_unmaps_the_page_and_closes_the_device, setup),
		cmocka_unit_test_setup(open_with_fewer_module_counters_names_the_event, setup),
		cmocka_unit_test_setup(open_with_unknown_page_version_fails_cleanly, setup),
		cmocka_unit_test_setup(open_thread_already_counted_is_ebusy_and_says_so, setup),
		cmocka_unit_test_setup(vperf_event_other_than_vcpu_clock_cannot_be_sampled, setup),
		cmocka_unit_test_setup(vcpu_clock_samples_only_with_a_period_of_100us, setup),
		cmocka_unit_test_setup(vcpu_clock_samples_reach_the_callback_once_started, setup),
		cmocka_unit_test_setup(thread_target_reads_its_row_from_thread_list, setup),
		cmocka_unit_test_setup(process_total_sums_live_and_exited_rows, setup),
		cmocka_unit_test_setup(process_per_thread_rows_come_from_thread_list, setup),
		cmocka_unit_test_setup(thread_list_grows_its_buffer_when_total_exceeds_it, setup),
		cmocka_unit_test_setup(thread_list_retries_while_threads_appear, setup),
		cmocka_unit_test_setup(lost_threads_are_reported_as_threads_lost, setup),
		cmocka_unit_test_setup(reused_tid_rows_are_merged, setup),
		cmocka_unit_test_setup(per_thread_baselines_leave_out_the_stopped_time, setup),
		cmocka_unit_test_setup(mixed_set_counts_ordinary_events_through_perf, setup),
		cmocka_unit_test_setup(process_target_without_process_is_esrch, setup),
		cmocka_unit_test_setup(hw_event_without_guest_pmu_goes_to_the_host_and_names_its_missing_pmu, setup),
		cmocka_unit_test_setup(hw_event_refused_kernel_mode_counts_user_mode_only_as_perf_does, setup),
		cmocka_unit_test_setup(per_user_limits_are_named, setup),
		cmocka_unit_test_setup(mixed_per_thread_rows_are_merged_by_tid, setup),
		cmocka_unit_test_setup(mixed_set_samples_under_the_users_index, setup),
	};

	return VT_MAIN("pv", tests, NULL, NULL);
}
