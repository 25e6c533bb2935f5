// SPDX-License-Identifier: MIT
/*
 * The timelines' pieces with known answers (profiler/report/states.c, profiler/export/chrome.c,
 * timeline.c): the SVG axis's ticks and labels, the merging of spans closer than a pixel, the
 * running slices of a recording built in memory (thread_switch pairs, a first switch out, an
 * exit, sched_switch pairs of a guest), and the chrome export's exact events for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "report.h"
#include "timeline.h"
#include "vtest.h"
#ifdef VT_CONVERT
#include "convert.h"
#include "rawrec_build.h"
#endif

/* ---- the axis ---- */

static void check_ticks(uint64_t span, double px, double min_px, uint64_t step, unsigned int nr,
			const char *unit, unsigned int decimals)
{
	struct vperf_timeline_ticks t;

	vperf_timeline_ticks(span, px, min_px, &t);
	assert_int_equal(t.step, step);
	assert_int_equal(t.nr, nr);
	assert_string_equal(t.unit, unit);
	assert_int_equal(t.decimals, decimals);
}

static void label_is(uint64_t span, double px, double min_px, uint64_t at, const char *want)
{
	struct vperf_timeline_ticks t;
	char buf[48];

	vperf_timeline_ticks(span, px, min_px, &t);
	vperf_timeline_label(&t, at, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void axis_ticks_are_1_2_5_steps_at_least_min_px_apart(void **state)
{
	(void)state;
	/* 10 s over 1000 px, labels 80 px apart: 0.8 s wanted, 1 s given, 0..10 s */
	check_ticks(10000000000ull, 1000, 80, 1000000000ull, 11, "s", 0);
	label_is(10000000000ull, 1000, 80, 5000000000ull, "5 s");
	/* 0.411 s over 1380 px, 90 apart: 26.8 ms wanted, 50 ms given; under 1 s: in ms */
	check_ticks(411000000ull, 1380, 90, 50000000ull, 9, "ms", 0);
	label_is(411000000ull, 1380, 90, 150000000ull, "150 ms");
	/* 2.5 s over 1000 px: 0.225 s wanted, 0.5 s given, one decimal */
	check_ticks(2500000000ull, 1000, 90, 500000000ull, 6, "s", 1);
	label_is(2500000000ull, 1000, 90, 500000000ull, "0.5 s");
	label_is(2500000000ull, 1000, 90, 2000000000ull, "2.0 s");
	/* 1.5 us: 150 ns wanted, 200 ns given, in us with one decimal */
	check_ticks(1500, 1000, 100, 200, 8, "us", 1);
	label_is(1500, 1000, 100, 1400, "1.4 us");
	/* 20 ms over 400 px, 90 apart: 4.5 ms wanted, 5 ms given */
	check_ticks(20000000ull, 400, 90, 5000000ull, 5, "ms", 0);
	/* nothing to span: one tick at 0 */
	check_ticks(0, 1000, 90, 1, 1, "ns", 0);
	label_is(0, 1000, 90, 0, "0 ns");
}

/* ---- spans ---- */

static void spans_closer_than_min_gap_merge_per_thread_only(void **state)
{
	struct vperf_timeline_span s[] = {
		{ 0, 10, 1 }, { 15, 20, 1 },	/* gap 5 < 10: one */
		{ 18, 19, 1 },			/* inside it */
		{ 30, 40, 1 },			/* gap 10: not below min_gap 10, apart... */
		{ 45, 50, 2 },			/* another thread's: never merged with 1's */
		{ 52, 60, 2 },			/* gap 2: merged with the one before */
		{ 100, 101, 1 },
	};
	size_t n = vperf_timeline_merge(s, 7, 10);

	(void)state;
	/* ...but 30 <= 20 + 10: merged.  A gap equal to min_gap merges */
	assert_int_equal(n, 3);
	assert_int_equal(s[0].start, 0);
	assert_int_equal(s[0].end, 40);
	assert_int_equal(s[0].who, 1);
	assert_int_equal(s[1].start, 45);
	assert_int_equal(s[1].end, 60);
	assert_int_equal(s[1].who, 2);
	assert_int_equal(s[2].start, 100);
	assert_int_equal(s[2].end, 101);
	/* min_gap 0: only overlapping or touching spans merge */
	{
		struct vperf_timeline_span t[] = { { 0, 10, 1 }, { 10, 20, 1 }, { 21, 30, 1 } };

		assert_int_equal(vperf_timeline_merge(t, 3, 0), 2);
		assert_int_equal(t[0].end, 20);
		assert_int_equal(t[1].start, 21);
	}
	assert_int_equal(vperf_timeline_merge(s, 0, 10), 0);
}

static void cpu_row_spans_of_threads_taking_turns_within_a_pixel_become_mixed(void **state)
{
	struct vperf_timeline_span s[] = {
		{ 0, 100, 1 },			/* a pixel (10) and more: its own */
		{ 102, 105, 2 },		/* 3 ns: under a pixel, and so... */
		{ 106, 108, 1 },		/* ...are these: one mixed span, 102-112 */
		{ 109, 112, 2 },
		{ 113, 200, 1 },		/* long: its own again */
		{ 300, 303, 2 },		/* short, but alone: its thread's */
		{ 305, 400, 1 },		/* long, 2 after a short one: its own */
	};
	size_t n;

	(void)state;
	n = vperf_timeline_merge_mixed(s, 7, 10);
	assert_int_equal(n, 5);
	assert_int_equal(s[0].end, 100);
	assert_int_equal(s[0].who, 1);
	assert_int_equal(s[1].start, 102);
	assert_int_equal(s[1].end, 112);
	assert_int_equal(s[1].who, VPERF_TIMELINE_MIXED);
	assert_int_equal(s[2].start, 113);
	assert_int_equal(s[2].who, 1);
	assert_int_equal(s[3].start, 300);
	assert_int_equal(s[3].who, 2);
	assert_int_equal(s[4].start, 305);
	assert_int_equal(s[4].end, 400);
	assert_int_equal(s[4].who, 1);
}

/* ---- a recording built here ---- */

/*
 * Host process "app" (pid 10): tid 10 runs from its exec (50) to its first switch out (100),
 * then 200-300 on CPU 1 (preempted), then from 400 to its exit at 450; tid 11 is forked at 120
 * and runs 150-180 on CPU 0.  One sample of tid 10 at 60 in hot_a.  A loss of 7 on CPU 1 at
 * 500.  The guest (VM "vm0"): tid 5 is switched in at 600 and out at 700 on vCPU 0 by
 * sched_switch (no thread_switch in the guest); tid 6's out at 600 has no in: left out; tid 6
 * switched in at 700 runs to the recording's end, 1000.
 */
enum { T10, T11, G5, G6, G0 };

static void tl(struct vperf_report *r, uint8_t kind, uint64_t ts, int32_t t, uint32_t cpu,
	       uint64_t arg, uint8_t layer)
{
	r->tlevs[r->nr_tlevs++] = (struct vperf_report_tlev){ .kind = kind, .ts = ts, .thread = t,
							      .other = -1, .cpu = cpu, .arg = arg,
							      .str = UINT32_MAX, .layer = layer };
}

static struct vperf_report *known_recording(bool vm)
{
	struct vperf_report *r = calloc(1, sizeof(*r));
	struct vperf_report_tlev *e;

	assert_non_null(r);
	r->dir = strdup("known");
	r->vm_name = vm ? strdup("vm0") : NULL;
	r->threads = calloc(5, sizeof(*r->threads));
	r->tlevs = calloc(32, sizeof(*r->tlevs));
	r->samples = calloc(1, sizeof(*r->samples));
	r->frames = calloc(1, sizeof(*r->frames));
	r->strings = calloc(4, sizeof(*r->strings));
	r->events = calloc(1, sizeof(*r->events));
	assert_true(r->threads && r->tlevs && r->samples && r->frames && r->strings && r->events);
	r->strings[0] = strdup("app");
	r->strings[1] = strdup("worker");
	r->strings[2] = strdup("gtask");
	r->strings[3] = strdup("say \"hi\"\n");
	r->nr_strings = 4;
	r->events[0] = strdup("cpu-clock");
	r->nr_events = 1;
	r->threads[T10] = (struct vperf_report_thread){ 10, 10, 0, false, true, 1 };
	r->threads[T11] = (struct vperf_report_thread){ 11, 10, 1, false, true, 0 };
	r->threads[G5] = (struct vperf_report_thread){ 5, 5, 2, true, false, 0 };
	r->threads[G6] = (struct vperf_report_thread){ 6, 6, 3, true, false, 0 };
	r->threads[G0] = (struct vperf_report_thread){ 0, 0, UINT32_MAX, true, false, 0 };
	r->nr_threads = 5;
	r->first_ts = 0;
	r->last_ts = 1000;
	r->nr_cpus = 2;
	tl(r, VPERF_REPORT_EV_EXEC, 50, T10, 0, 0, 0);
	r->tlevs[0].str = 0;
	tl(r, VPERF_REPORT_EV_SWITCH_OUT, 100, T10, 0, 0, 0);
	tl(r, VPERF_REPORT_EV_FORK, 120, T11, 0, 0, 0);
	r->tlevs[2].other = T10;
	tl(r, VPERF_REPORT_EV_SWITCH_IN, 150, T11, 0, 0, 0);
	tl(r, VPERF_REPORT_EV_SWITCH_OUT, 180, T11, 0, 0, 0);
	tl(r, VPERF_REPORT_EV_SWITCH_IN, 200, T10, 1, 0, 0);
	tl(r, VPERF_REPORT_EV_SWITCH_OUT, 300, T10, 1, 1, 0);
	tl(r, VPERF_REPORT_EV_SWITCH_IN, 400, T10, 1, 0, 0);
	tl(r, VPERF_REPORT_EV_EXIT, 450, T10, 1, (uint64_t)INT64_MIN, 0);
	tl(r, VPERF_REPORT_EV_LOST, 500, -1, 1, 7, 0);
	tl(r, VPERF_REPORT_EV_SCHED_SWITCH, 600, G6, 0, 0, 2);
	r->tlevs[r->nr_tlevs - 1].other = G5;
	tl(r, VPERF_REPORT_EV_SCHED_SWITCH, 700, G5, 0, 1, 2);
	r->tlevs[r->nr_tlevs - 1].other = G6;
	tl(r, VPERF_REPORT_EV_MARKER, 800, G5, 0, 42, 3);
	e = &r->tlevs[r->nr_tlevs - 1];
	e->str = 3;
	e->arg2 = 2;
	r->samples[0] = (struct vperf_report_sample){ .ts = 60, .period = 1000000, .pid = 10,
						      .tid = 10, .thread = T10, .layer = 4,
						      .nr_frames = 1 };
	r->frames[0] = (struct vperf_report_frame){ .ip = 0x401000, .map = -1, .resolved = true,
						    .found = true, .sym = "hot_a", .dso = "app" };
	r->nr_samples = 1;
	r->nr_frames = 1;
	return r;
}

static void running_slices_pair_switches_and_keep_only_seen_sched_pairs(void **state)
{
	struct vperf_report *r = known_recording(true);
	struct vperf_report_slice *s;
	size_t n;
	bool *shown;

	(void)state;
	assert_int_equal(vperf_report__running(r, &s, &n), 0);
	assert_int_equal(n, 6);
	/* sorted by thread, then start */
	assert_int_equal(s[0].thread, T10);
	assert_int_equal(s[0].start, 50);	/* its exec: before its first switch out */
	assert_int_equal(s[0].end, 100);
	assert_int_equal(s[0].cpu, 0);
	assert_int_equal(s[1].start, 200);
	assert_int_equal(s[1].end, 300);
	assert_int_equal(s[1].cpu, 1);
	assert_true(s[1].preempted);
	assert_int_equal(s[2].start, 400);
	assert_int_equal(s[2].end, 450);	/* its exit */
	assert_false(s[2].preempted);
	assert_int_equal(s[3].thread, T11);
	assert_int_equal(s[3].start, 150);
	assert_int_equal(s[3].end, 180);
	assert_int_equal(s[4].thread, G5);
	assert_int_equal(s[4].start, 600);
	assert_int_equal(s[4].end, 700);
	assert_int_equal(s[5].thread, G6);	/* its out at 600 without an in: left out */
	assert_int_equal(s[5].start, 700);
	assert_int_equal(s[5].end, 1000);	/* still running at the end */
	shown = vperf_report__shown(r, s, n, -1);
	assert_non_null(shown);
	assert_true(shown[T10] && shown[T11] && shown[G5] && shown[G6]);
	assert_false(shown[G0]);		/* the idle task */
	free(shown);
	free(s);
	vperf_report__delete(r);
}

/*
 * A VM recording keeps only the vCPU threads' host switches: vcpu (tid 100) leaves CPU 0 for
 * other (200) at 10 and comes back at 50 from third (300); other left at a time not recorded, so
 * its slice is left out rather than drawn to whenever it next shows up; vcpu's slice from 50
 * is kept.
 */
static void running_slices_leave_out_a_host_thread_whose_leaving_was_not_recorded(void **state)
{
	struct vperf_report r = { 0 };
	struct vperf_report_thread th[3] = {
		{ .tid = 100, .comm = UINT32_MAX }, { .tid = 200, .comm = UINT32_MAX },
		{ .tid = 300, .comm = UINT32_MAX },
	};
	struct vperf_report_tlev ev[3] = {
		{ .kind = VPERF_REPORT_EV_SCHED_SWITCH, .ts = 10, .thread = 0, .other = 1, .arg = 0,
		  .str = UINT32_MAX },
		{ .kind = VPERF_REPORT_EV_SCHED_SWITCH, .ts = 50, .thread = 2, .other = 0,
		  .str = UINT32_MAX },
		{ .kind = VPERF_REPORT_EV_SCHED_SWITCH, .ts = 80, .thread = 0, .other = 1,
		  .str = UINT32_MAX },
	};
	struct vperf_report_slice *s;
	size_t n;

	(void)state;
	r.threads = th;
	r.nr_threads = 3;
	r.tlevs = ev;
	r.nr_tlevs = 3;
	r.first_ts = 0;
	r.last_ts = 100;
	assert_int_equal(vperf_report__running(&r, &s, &n), 0);
	/* vcpu 50..80, other from 80 to the end; not other 10..? nor third ..50 */
	assert_int_equal(n, 2);
	assert_int_equal(s[0].thread, 0);
	assert_int_equal(s[0].start, 50);
	assert_int_equal(s[0].end, 80);
	assert_int_equal(s[1].thread, 1);
	assert_int_equal(s[1].start, 80);
	assert_int_equal(s[1].end, 100);
	free(s);
}

static char *export_chrome(struct vperf_report *r)
{
	char *buf = NULL, why[64];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(vperf_export_chrome(r, -1, f, why, sizeof(why)), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void chrome_known_events_with_exact_times_and_guest_tracks_apart(void **state)
{
	struct vperf_report *r = known_recording(true);
	char *j = export_chrome(r);

	(void)state;
	assert_true(!strncmp(j, "{\"displayTimeUnit\":\"ns\",", 24));
	assert_non_null(strstr(j, "\"traceEvents\":["));
	assert_true(!strcmp(j + strlen(j) - 4, "\n]}\n"));
	/* running: 50 ns is 0.050 us, exactly */
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"running\",\"cat\":\"sched\",\"pid\":10,"
			       "\"tid\":10,\"ts\":0.050,\"dur\":0.050,\"args\":{\"cpu\":0,"
			       "\"left\":\"blocked or exited\"}}"));
	assert_non_null(strstr(j, "\"tid\":10,\"ts\":0.200,\"dur\":0.100,\"args\":{\"cpu\":1,"
			       "\"left\":\"preempted\"}}"));
	assert_int_equal(count(j, "\"name\":\"running\""), 6);
	/* the same slices on the CPUs: host CPU 1 is CPUs' tid 2^22 + 1 */
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"app\",\"cat\":\"cpu\","
			       "\"pid\":4194304,\"tid\":4194305,\"ts\":0.200,\"dur\":0.100,"
			       "\"args\":{\"tid\":10}}"));
	/* the guest's tid 5: in the VM's process, its tid offset; its slice on vCPU 0 */
	assert_non_null(strstr(j, "\"name\":\"thread_name\",\"cat\":\"__metadata\",\"pid\":8388608,"
			       "\"tid\":8388613,\"ts\":0.000,\"args\":{\"name\":\"gtask (guest tid "
			       "5)\"}}"));
	assert_non_null(strstr(j, "\"args\":{\"name\":\"VM vm0: guest threads\"}"));
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"gtask\",\"cat\":\"cpu\","
			       "\"pid\":16777216,\"tid\":16777216,\"ts\":0.600,\"dur\":0.100"));
	/* names for every track: 2 CPUs, 1 vCPU, tids 10, 11, guest 5 and 6; not the idle task */
	assert_int_equal(count(j, "\"name\":\"thread_name\""), 7);
	/* guest tid 0 would be 2^23 + 0: only the guest process's own name and order are */
	assert_int_equal(count(j, "\"tid\":8388608,"), 2);
	/* the sample, fork, exec, exit, loss and the marker (its name escaped) */
	assert_non_null(strstr(j, "{\"ph\":\"i\",\"name\":\"hot_a\",\"cat\":\"sample\","
			       "\"pid\":10,\"tid\":10,\"ts\":0.060,\"s\":\"t\",\"args\":{"
			       "\"event\":\"cpu-clock\",\"dso\":\"app\",\"ip\":\"0x401000\","
			       "\"period\":1000000,\"cpu\":0,\"layer\":\"host_user\"}}"));
	assert_non_null(strstr(j, "\"name\":\"fork\",\"cat\":\"process\",\"pid\":10,\"tid\":11,"
			       "\"ts\":0.120,\"s\":\"t\",\"args\":{\"parent_tid\":10}}"));
	assert_non_null(strstr(j, "\"name\":\"exec\",\"cat\":\"process\",\"pid\":10,\"tid\":10,"
			       "\"ts\":0.050,\"s\":\"t\",\"args\":{\"filename\":\"app\"}}"));
	assert_non_null(strstr(j, "\"name\":\"exit\",\"cat\":\"process\",\"pid\":10,\"tid\":10,"
			       "\"ts\":0.450,\"s\":\"t\",\"args\":{}}"));	/* code unknown */
	assert_non_null(strstr(j, "{\"ph\":\"i\",\"name\":\"lost 7 events\",\"cat\":\"lost\","
			       "\"pid\":4194304,\"tid\":4194305,\"ts\":0.500,\"s\":\"g\","
			       "\"args\":{\"count\":7,\"cpu\":1,\"layer\":\"host_kernel\"}}"));
	/* the guest threads' states (docs/states.md): tid 6 runnable 600..700, tid 5 blocked from 700 */
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"runnable in the guest\",\"cat\":\"state\","
			       "\"pid\":8388608,\"tid\":8388614,\"ts\":0.600,\"dur\":0.100}"));
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"waiting: unknown\",\"cat\":\"state\","
			       "\"pid\":8388608,\"tid\":8388613,\"ts\":0.700,\"dur\":0.300}"));
	assert_int_equal(count(j, "\"cat\":\"state\""), 2);
	assert_non_null(strstr(j, "{\"ph\":\"i\",\"name\":\"say \\\"hi\\\"\\n\",\"cat\":"
			       "\"marker\",\"pid\":8388608,\"tid\":8388613,\"ts\":0.800,"
			       "\"s\":\"t\",\"args\":{\"value\":42}}"));
	free(j);
	vperf_report__delete(r);
}

static void chrome_without_a_vm_keeps_a_guests_own_ids(void **state)
{
	struct vperf_report *r = known_recording(false);	/* vperf record in a guest */
	char *j = export_chrome(r);

	(void)state;
	assert_null(strstr(j, "8388608"));
	assert_null(strstr(j, "16777216"));
	assert_non_null(strstr(j, "\"pid\":5,\"tid\":5,\"ts\":0.000,\"args\":{\"name\":"
			       "\"gtask\"}"));
	free(j);
	vperf_report__delete(r);
}

/* r's timeline, 1000 px wide, of the window from..to: the SVG (malloc'd), or NULL with the error. */
static char *svg_of(struct vperf_report *r, uint64_t from, uint64_t to, int *err, char *why,
		    size_t why_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*err = vperf_timeline_svg(r, 1000, from, to, f, why, why_len);
	assert_int_equal(fclose(f), 0);
	if (*err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *svg_all(struct vperf_report *r)
{
	char why[64];
	int err;
	char *buf = svg_of(r, 0, UINT64_MAX, &err, why, sizeof(why));

	assert_int_equal(err, 0);
	return buf;
}

static void svg_has_a_row_per_cpu_and_thread_and_a_legend(void **state)
{
	struct vperf_report *r = known_recording(true);
	char *buf = svg_all(r);

	(void)state;
	assert_non_null(strstr(buf, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(buf, "width=\"1000\""));
	assert_non_null(strstr(buf, ">CPU 0</text>"));
	assert_non_null(strstr(buf, ">CPU 1</text>"));
	assert_non_null(strstr(buf, ">vCPU 0</text>"));
	assert_non_null(strstr(buf, ">app 10</text>"));
	assert_non_null(strstr(buf, ">guest gtask 5</text>"));
	/* escaped, the line feed as U+FFFD (docs/report.md, section 5) */
	assert_non_null(strstr(buf, "<title>say &quot;hi&quot;\xef\xbf\xbd</title>"));
	assert_non_null(strstr(buf, "<g id=\"legend\""));
	/* 1000 px - 220 of margins for 1 us: 200 ns a tick ("0.2 us"), 6 ticks */
	assert_non_null(strstr(buf, ">0.2 us</text>"));
	assert_non_null(strstr(buf, ">1.0 us</text>"));
	assert_true(!strcmp(buf + strlen(buf) - 7, "</svg>\n"));
	free(buf);
	vperf_report__delete(r);
}

/*
 * The guest's threads in a VM recording are drawn in their states (docs/states.md): tid 6, out at
 * 600 runnable (prev_state 0) and in at 700, is "runnable in the guest" from 600 to 700; tid 5,
 * blocked at 700 with no wakeup, "waiting: unknown" to the end (1000).  The host's recording has
 * none of it.
 */
static void svg_of_a_vm_recording_draws_guest_threads_states(void **state)
{
	struct vperf_report *r = known_recording(true);
	char *buf = svg_all(r);

	(void)state;
	assert_non_null(strstr(buf, ">runnable in the guest</text>"));
	assert_non_null(strstr(buf, ">waiting: timer</text>"));
	/* 780 px for 1000 ns: 600..700 is x 668 (200 + 600 * 0.78), 78 px wide, runnable's colour */
	assert_non_null(strstr(buf, "<rect x=\"668.00\""));
	assert_non_null(strstr(buf, "width=\"78.00\" height=\"16.0\" fill=\"#f2cc30\""));
	/* 700..1000: 234 px of waiting: unknown */
	assert_non_null(strstr(buf, "x=\"746.00\""));
	assert_non_null(strstr(buf, "width=\"234.00\" height=\"16.0\" fill=\"#cfcfcf\""));
	free(buf);
	vperf_report__delete(r);

	r = known_recording(false);	/* no VM: no states */
	buf = svg_all(r);
	assert_null(strstr(buf, "runnable in the guest"));
	free(buf);
	vperf_report__delete(r);
}

/* --time: a window draws the threads alive in it; one past the end is -ERANGE, said why. */
static void svg_window_keeps_the_threads_alive_in_it(void **state)
{
	struct vperf_report *r = known_recording(true);
	char why[128] = "";
	int err;
	/* 500..1000 ns: tid 10 exited at 450, tid 11 and the guest's threads live on */
	char *buf = svg_of(r, 500, UINT64_MAX, &err, why, sizeof(why));

	(void)state;
	assert_int_equal(err, 0);
	assert_null(strstr(buf, ">app 10</text>"));
	assert_non_null(strstr(buf, ">worker 11</text>"));
	assert_non_null(strstr(buf, ">guest gtask 5</text>"));
	/* 780 px for 500 ns: tid 6 runnable 600..700 is x 356 (200 + 100 * 1.56), 156 px wide */
	assert_non_null(strstr(buf, "<rect x=\"356.00\""));
	assert_non_null(strstr(buf, "width=\"156.00\" height=\"16.0\" fill=\"#f2cc30\""));
	free(buf);
	assert_null(svg_of(r, 2000, UINT64_MAX, &err, why, sizeof(why)));
	assert_int_equal(err, -ERANGE);
	assert_non_null(strstr(why, "after the recording's end"));
	vperf_report__delete(r);
}

#ifdef VT_CONVERT
/* A guest sched_switch record on vCPU 0 at guest TSC tsc, appended to buf at *len. */
static void guest_switch(unsigned char *buf, size_t *len, uint64_t tsc, uint32_t prev,
			 const char *prev_comm, uint32_t next, const char *next_comm)
{
	struct vperf_trace_switch *r = (void *)(buf + *len);

	memset(r, 0, sizeof(*r));
	r->h.size = sizeof(*r);
	r->h.type = VPERF_TRACE_SCHED_SWITCH;
	r->h.tsc = tsc;
	r->h.pid = prev;
	r->h.tid = prev;
	r->next_pid = next;
	r->next_tid = next;
	r->prev_state = 1;
	strncpy(r->prev_comm, prev_comm, sizeof(r->prev_comm) - 1);
	strncpy(r->next_comm, next_comm, sizeof(r->next_comm) - 1);
	*len += sizeof(*r);
}

/* A sampling NMI's sample of tid with its 3 thread counts (no callchain), appended to buf. */
static void guest_sample(unsigned char *buf, size_t *len, uint64_t tsc, uint32_t tid,
			 uint64_t ip, const uint64_t counts[3])
{
	struct vperf_trace_sample *r = (void *)(buf + *len);

	memset(r, 0, sizeof(*r) + 3 * sizeof(uint64_t));
	r->h.size = sizeof(*r) + 3 * sizeof(uint64_t);
	r->h.type = VPERF_TRACE_SAMPLE;
	r->h.tsc = tsc;
	r->h.pid = tid;
	r->h.tid = tid;
	r->h.flags = 1;		/* a user ip */
	r->ip = ip;
	r->nr_counts = 3;
	memcpy(r->data, counts, 3 * sizeof(uint64_t));
	*len += r->h.size;
}

/*
 * A `vperf vm record` recording made here with the converter (test_convert.c's raw files): the
 * guest's tid 7 "gtask" switched in from idle at host TSC +1000 and out at +3000 (2 GHz: 500 and
 * 1500 ns after the start), a marker "A" of it at +2000, a sample of its sampling NMI at +2400
 * with its counts (vcpu-clock 5000, steal 40, exits 3), the VMM's port I/O exit from +2200 to
 * +2800.  Read back with the reader, the chrome export has the guest thread apart, its slice from
 * sched_switch, the marker on its track, a counter track per count and the exit on vCPU 0, at the
 * nanosecond.
 */
static void converted_vm_recording_in_chrome_keeps_tracks_apart(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = OFFSET0, .how = 1 };
	struct vperf_rawrec_exit x = { .exit_tsc = START_TSC + 2200, .resume_tsc = START_TSC + 2800,
				       .addr = 0x5650, .reason = 2 };
	struct vperf_convert_stats st = { .size = sizeof(st) };
	static const uint64_t nmi_counts[3] = { 5000, 40, 3 };
	struct vperf_report *r;
	unsigned char g[1024];
	size_t glen = 0;
	char why[512] = "", *j;

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_META, 0, "vmm_pid=1\nnr_vcpus=1\n", 21);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	chunk(t, VPERF_RAWREC_EXITS, 0, &x, sizeof(x));
	guest_switch(g, &glen, START_TSC + 1000 + OFFSET0, 0, "swapper/0", 7, "gtask");
	mark(g, &glen, "A", 1, START_TSC + 2000 + OFFSET0, 7);
	guest_sample(g, &glen, START_TSC + 2400 + OFFSET0, 7, 0x401000, nmi_counts);
	guest_switch(g, &glen, START_TSC + 3000 + OFFSET0, 7, "gtask", 0, "swapper/0");
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);
	if (vperf_convert(t->raw, t->trace, NULL, &st, why, sizeof(why)))
		fail_msg("vperf_convert: %s", why);
	if (vperf_report__open(t->trace, &r, why, sizeof(why)))
		fail_msg("vperf_report__open: %s", why);
	assert_string_equal(r->vm_name, "vm0");
	j = export_chrome(r);
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"running\",\"cat\":\"sched\","
			       "\"pid\":8388608,\"tid\":8388615,\"ts\":1000000.500,\"dur\":1.000,"
			       "\"args\":{\"cpu\":0,"));
	assert_int_equal(count(j, "\"name\":\"running\""), 1);	/* not the idle task */
	assert_non_null(strstr(j, "\"pid\":8388608,\"tid\":8388615,\"ts\":0.000,\"args\":"
			       "{\"name\":\"gtask (guest tid 7)\"}}"));
	assert_non_null(strstr(j, "{\"ph\":\"i\",\"name\":\"A\",\"cat\":\"marker\","
			       "\"pid\":8388608,\"tid\":8388615,\"ts\":1000001.000,\"s\":\"t\","
			       "\"args\":{\"value\":1}}"));
	assert_non_null(strstr(j, "{\"ph\":\"X\",\"name\":\"io\",\"cat\":\"vmm_exit\","
			       "\"pid\":16777216,\"tid\":16777216,\"ts\":1000001.100,"
			       "\"dur\":0.300,\"args\":{\"reason\":2}}"));
	assert_non_null(strstr(j, "\"args\":{\"name\":\"VM vm0: vCPUs\"}"));
	/* the NMI's counts: a track each, the counts themselves, not a sum of periods */
	assert_non_null(strstr(j, "{\"ph\":\"C\",\"name\":\"vperf::vcpu-clock, tid 7\","
			       "\"cat\":\"counter\",\"pid\":8388608,\"tid\":8388615,"
			       "\"ts\":1000001.200,\"args\":{\"count\":5000}}"));
	assert_non_null(strstr(j, "\"name\":\"vperf::steal, tid 7\""));
	assert_non_null(strstr(j, "\"ts\":1000001.200,\"args\":{\"count\":40}}"));
	assert_non_null(strstr(j, "\"name\":\"vperf::exits, tid 7\""));
	assert_int_equal(count(j, "\"ph\":\"C\""), 3);
	free(j);
	vperf_report__delete(r);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(axis_ticks_are_1_2_5_steps_at_least_min_px_apart),
		cmocka_unit_test(spans_closer_than_min_gap_merge_per_thread_only),
		cmocka_unit_test(cpu_row_spans_of_threads_taking_turns_within_a_pixel_become_mixed),
		cmocka_unit_test(running_slices_pair_switches_and_keep_only_seen_sched_pairs),
		cmocka_unit_test(running_slices_leave_out_a_host_thread_whose_leaving_was_not_recorded),
		cmocka_unit_test(chrome_known_events_with_exact_times_and_guest_tracks_apart),
		cmocka_unit_test(chrome_without_a_vm_keeps_a_guests_own_ids),
		cmocka_unit_test(svg_has_a_row_per_cpu_and_thread_and_a_legend),
		cmocka_unit_test(svg_of_a_vm_recording_draws_guest_threads_states),
		cmocka_unit_test(svg_window_keeps_the_threads_alive_in_it),
#ifdef VT_CONVERT
		/* one line: tests/unit/CMakeLists.txt finds each entry's name on its line */
		cmocka_unit_test_setup_teardown(converted_vm_recording_in_chrome_keeps_tracks_apart,
						tdir_setup, tdir_teardown),
#endif
	};

	return vt_main(argc, argv, "timeline", tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
