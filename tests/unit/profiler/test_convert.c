// SPDX-License-Identifier: MIT
/*
 * Raw recording -> CTF (profiler/record/convert.c), on raw files written here chunk by chunk,
 * read back by babeltrace2: guest times mapped through the vCPU's TSC offset onto the host TSC,
 * one order across layers, losses carried into the trace, and damaged files refused or cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vperf/abi.h>
#include <vperf/rawrec.h>

#include "bt2run.h"
#include "convert.h"
#include "header.h"
#include "rawrec_build.h"
#include "vtest.h"

static void convert_ok(struct tdir *t, struct vperf_convert_stats *st)
{
	char why[512] = "";

	st->size = sizeof(*st);
	if (vperf_convert(t->raw, t->trace, NULL, st, why, sizeof(why)))
		fail_msg("vperf_convert: %s", why);
}

/* The event names babeltrace2 printed, in its order, space-separated. */
static void names(const char *out, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *end = strstr(l, ": { ");	/* "[time] (+delta) HOST NAME: { ..." */

		if (!end)
			continue;
		const char *start = end;

		while (start > l && start[-1] != ' ')
			start--;
		if (o + (size_t)(end - start) + 2 >= len)
			break;
		memcpy(buf + o, start, (size_t)(end - start));
		o += (size_t)(end - start);
		buf[o++] = ' ';
		buf[o] = '\0';
	}
}

/*
 * Guest marker A, the VMM's exit, guest marker B: in the raw file the guest's records come in
 * one chunk after the exits, on the guest's clock (offset -0.2 s); after the conversion
 * babeltrace2 shows them on one clock in the true order, A < exit < B, and a marker written
 * before A but drained later (out of order in the ring) lands first.
 */
static void guest_times_map_through_the_tsc_offset_into_one_order(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = OFFSET0, .how = 1 };
	struct vperf_rawrec_exit x[2] = {
		{ .exit_tsc = START_TSC + 2000, .resume_tsc = START_TSC + 2600, .addr = 0x5650, .reason = 2,
		  .flags = VPERF_RAWREC_EXIT_WRITE },
		{ .exit_tsc = START_TSC + 4000, .resume_tsc = START_TSC + 4100, .addr = 0xfeb00008,
		  .reason = 6 },
	};
	unsigned char g[1024];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct bt_run r;
	char got[512];

	raw_open(t, 1);
	/* "clock" is a TSDL keyword: the converter must not make it an env key as it is */
	chunk(t, VPERF_RAWREC_META, 0, "vmm_pid=1\nnr_vcpus=1\nclock=x\n", 29);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	chunk(t, VPERF_RAWREC_EXITS, 0, x, sizeof(x));
	/* host TSC = guest TSC - OFFSET0: A at host +1000, B at host +3000, early at +500 */
	mark(g, &glen, "A", 1, START_TSC + 1000 + OFFSET0, 7);
	mark(g, &glen, "B", 2, START_TSC + 3000 + OFFSET0, 7);
	mark(g, &glen, "early", 0, START_TSC + 500 + OFFSET0, 8);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);

	convert_ok(t, &st);
	assert_int_equal(st.events, 5);
	assert_int_equal(st.guest_records, 3);
	assert_int_equal(st.guest_by_type[VPERF_TRACE_MARK], 3);
	assert_int_equal(st.vmm_exits, 2);
	assert_false(st.truncated);
	assert_int_equal(st.duration_ns, (4000 - 500) / 2);

	read_clean(t->base, t->trace, &r);
	names(r.out, got, sizeof(got));
	assert_string_equal(got, "marker marker vmm_exit marker vmm_exit ");
	/* the second exit record decodes as written: an MMIO read of the doorbell, 50 ns */
	assert_non_null(strstr(r.out, "reason = 6, reason_name_len = 4, reason_name = \"mmio\", "
				      "addr = 0xFEB00008, write = 0, duration_ns = 50"));
	assert_non_null(strstr(r.out, "name = \"early\""));
	assert_true(strstr(r.out, "name = \"early\"") < strstr(r.out, "name = \"A\""));
	assert_true(strstr(r.out, "name = \"A\"") < strstr(r.out, "vmm_exit"));
	assert_true(strstr(r.out, "vmm_exit") < strstr(r.out, "name = \"B\""));
	/* the exit's duration: 600 cycles at 2 GHz */
	assert_non_null(strstr(r.out, "duration_ns = 300"));
	assert_non_null(strstr(r.out, "reason = 2, reason_name_len = 2, reason_name = \"io\""));
	/* markers are guest user space, exits the VMM's */
	assert_non_null(strstr(r.out, "\"guest_user\""));
	assert_non_null(strstr(r.out, "\"vmm\""));
	bt_run_free(&r);

	/* what `vperf report --header` prints, from the metadata alone */
	{
		char *buf = NULL, why[256];
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		assert_non_null(m);
		assert_int_equal(vperf_recording_header(t->trace, m, why, sizeof(why)), 0);
		fclose(m);
		assert_non_null(strstr(buf, "# guest records: 3 (not mapped to the clock: 0)\n"));
		assert_non_null(strstr(buf, "#   marker               3\n"));
		assert_non_null(strstr(buf, "# vmm exits: 2\n"));
		assert_non_null(strstr(buf, "# duration: 0.000001750 s\n"));
		assert_non_null(strstr(buf, "# vm: vm0, 1 vCPUs"));
		free(buf);
		assert_int_equal(vperf_recording_header(t->base, stdout, why, sizeof(why)), -ENOENT);
		assert_non_null(strstr(why, "is "));
	}
}

/*
 * An exact offset that changes during the recording (a VMM's reset, a guest writing IA32_TSC)
 * holds from its host_tsc on: a record written after the change maps through the new offset,
 * one before it through the old.  Through the first offset alone B would land after the
 * second exit.
 */
static void a_changed_tsc_offset_maps_the_records_after_it(void **state)
{
	struct tdir *t = *state;
	const int64_t off1 = OFFSET0 + 1000000;
	struct vperf_rawrec_tsc o0 = { .host_tsc = START_TSC, .offset = OFFSET0, .how = 2 };
	struct vperf_rawrec_tsc o1 = { .host_tsc = START_TSC + 5000, .offset = off1, .how = 2 };
	struct vperf_rawrec_exit x[2] = {
		{ .exit_tsc = START_TSC + 2000, .resume_tsc = START_TSC + 2100, .addr = 0x5650,
		  .reason = 2, .flags = VPERF_RAWREC_EXIT_WRITE },
		{ .exit_tsc = START_TSC + 8000, .resume_tsc = START_TSC + 8100, .addr = 0x5650,
		  .reason = 2, .flags = VPERF_RAWREC_EXIT_WRITE },
	};
	unsigned char g[1024];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct bt_run r;
	char got[512];

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_META, 0, "vmm_pid=1\nnr_vcpus=1\n", 21);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &o0, sizeof(o0));
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &o1, sizeof(o1));
	chunk(t, VPERF_RAWREC_EXITS, 0, x, sizeof(x));
	mark(g, &glen, "A", 1, START_TSC + 1000 + OFFSET0, 7);	/* host +1000 */
	mark(g, &glen, "B", 2, START_TSC + 6000 + off1, 7);	/* host +6000, after the change */
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);

	convert_ok(t, &st);
	assert_int_equal(st.guest_records, 2);
	assert_int_equal(st.guest_unmapped, 0);
	read_clean(t->base, t->trace, &r);
	names(r.out, got, sizeof(got));
	assert_string_equal(got, "marker vmm_exit marker vmm_exit ");
	bt_run_free(&r);
}

/*
 * Without KVM's offset a vCPU's guest times map through its TRACE_FLUSH samples: the largest
 * guest_tsc - host_tsc of them.  A vCPU with neither keeps its records out and says so.
 */
static void without_an_offset_samples_map_and_none_leaves_records_out(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc_sample s1 = { .guest_tsc = 5000, .host_tsc = START_TSC };
	struct vperf_rawrec_tsc_sample s2 = { .guest_tsc = 9000, .host_tsc = START_TSC + 3000 };
	const char *first;
	unsigned char g[256];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct bt_run r;

	raw_open(t, 2);
	chunk(t, VPERF_RAWREC_TSC_SAMPLE, 0, &s1, sizeof(s1));
	chunk(t, VPERF_RAWREC_TSC_SAMPLE, 0, &s2, sizeof(s2));
	mark(g, &glen, "m", 1, 10000, 1);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	chunk(t, VPERF_RAWREC_GUEST, 1, g, (uint32_t)glen);	/* vCPU 1: no mapping */
	raw_close(t, true);
	convert_ok(t, &st);
	assert_int_equal(st.guest_records, 2);
	assert_int_equal(st.guest_unmapped, 1);
	assert_int_equal(st.events, 5);		/* the marker, each TRACE_FLUSH's two sides */
	read_clean(t->base, t->trace, &r);
	assert_non_null(strstr(r.out, "name = \"m\""));
	/* offset = max(5000 - START_TSC, 9000 - (START_TSC + 3000)) = 6000 - START_TSC: the
	 * marker at guest 10000 is at host START_TSC + 4000, 2 us after the start, which
	 * babeltrace2 prints as the time of day 1700000000 s + 2 us (22:13:20 UTC) */
	assert_non_null(strstr(r.out, "[22:13:20.000002000] (+0.000000500) vm marker:"));
	/* each flush: the guest's side at its TSC through that offset (s1: 1000 cycles before the
	 * host's), the VMM's at the host TSC; s2 defines the offset: both sides at once */
	assert_true(!strncmp(r.out, "[22:13:19.999999500]", 20));	/* the first event */
	first = strstr(r.out, "vm trace_flush: { layer = ( \"guest_kernel\" : container = 2 ), "
			      "cpu_id = 0 }, { vcpu = 0, seq = 0, side = ( \"guest\" : container = 0 ) }");
	assert_non_null(first);
	assert_true(first < strchr(r.out, '\n'));
	assert_non_null(strstr(r.out, "[22:13:20.000000000] (+0.000000500) vm trace_flush: { layer = "
				      "( \"vmm\" : container = 1 ), cpu_id = 0 }, { vcpu = 0, seq = 0, "
				      "side = ( \"host\" : container = 1 ) }"));
	assert_non_null(strstr(r.out, "vcpu = 0, seq = 1, side = ( \"guest\""));
	assert_non_null(strstr(r.out, "vcpu = 0, seq = 1, side = ( \"host\""));
	assert_int_equal(st.duration_ns, 2500);
	bt_run_free(&r);
}

/*
 * Losses reach the trace as babeltrace2's discarded-events warnings: the guest ring's own
 * count, the guest's LOST records, and the VMM's dropped exits, each counted once; refused
 * guest bytes and ring headers the guest broke as guest_ring_invalid events.
 */
static void losses_become_discarded_events(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = 0, .how = 1 };
	struct vperf_rawrec_guest_lost gl1 = { .host_tsc = START_TSC + 100, .guest_lost = 5 };
	struct vperf_rawrec_guest_lost gl2 = { .host_tsc = START_TSC + 200, .guest_lost = 7,
					       .invalid_bytes = 96, .invalid_records = 1 };
	/* an older writer's 32-byte chunk (no bad_headers), then a header the guest broke twice */
	struct vperf_rawrec_guest_lost gl3 = { .host_tsc = START_TSC + 250, .guest_lost = 7,
					       .invalid_bytes = 96, .invalid_records = 1, .bad_headers = 2 };
	struct vperf_rawrec_lost xl = { .host_tsc = START_TSC + 300, .count = 3 };
	struct vperf_trace_lost lr = { .h = { .size = sizeof(lr), .type = VPERF_TRACE_LOST,
					      .tsc = START_TSC + 50 }, .count = 11,
				       .source = VPERF_TRACE_LOST_USER };
	unsigned char g[256];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct bt_run r;

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	mark(g, &glen, "m", 1, START_TSC + 10, 1);
	memcpy(g + glen, &lr, sizeof(lr));
	glen += sizeof(lr);
	mark(g, &glen, "n", 2, START_TSC + 400, 1);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	chunk(t, VPERF_RAWREC_GUEST_LOST, 0, &gl1, sizeof(gl1));
	chunk(t, VPERF_RAWREC_GUEST_LOST, 0, &gl2, offsetof(struct vperf_rawrec_guest_lost, bad_headers));
	chunk(t, VPERF_RAWREC_GUEST_LOST, 0, &gl3, sizeof(gl3));
	chunk(t, VPERF_RAWREC_EXITS_LOST, 0, &xl, sizeof(xl));
	raw_close(t, true);
	convert_ok(t, &st);
	assert_int_equal(st.lost_guest, 7);
	assert_int_equal(st.lost_producer, 11);
	assert_int_equal(st.lost_vmm, 3);
	assert_int_equal(st.lost_invalid_bytes, 96);
	assert_int_equal(st.guest_bad_headers, 2);
	run_babeltrace2(t->base, t->trace, &r);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "guest_ring_invalid"));
	assert_non_null(strstr(r.out, "bytes = 96, drains = 1, bad_headers = 0"));
	assert_non_null(strstr(r.out, "bytes = 0, drains = 0, bad_headers = 2"));
	assert_non_null(strstr(r.err, "discarded"));
	bt_run_free(&r);
}

/* A VMM killed mid-chunk: every whole chunk converts, the cut one is reported. */
static void a_cut_raw_file_converts_up_to_its_last_whole_chunk(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = 0, .how = 1 };
	unsigned char g[256];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct stat sb;
	struct bt_run r;

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	mark(g, &glen, "kept", 1, START_TSC + 10, 1);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	mark(g, &glen, "cut", 2, START_TSC + 20, 1);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, false);
	assert_int_equal(stat(t->raw, &sb), 0);
	assert_int_equal(truncate(t->raw, sb.st_size - 20), 0);
	convert_ok(t, &st);
	assert_true(st.truncated);
	assert_int_equal(st.guest_records, 1);
	read_clean(t->base, t->trace, &r);
	assert_non_null(strstr(r.out, "\"kept\""));
	assert_null(strstr(r.out, "\"cut\""));
	bt_run_free(&r);
}

/*
 * The raw file is not trusted to hold only the records vperf-vmm validated: the converter checks
 * each one again with the guest ABI's own rule (vperf_trace_rec_check()).  A sample whose counts
 * and callchain run past its size, a record of a type no guest writes and a marker whose name is
 * not UTF-8 are refused, each with the rest of its chunk (the host's rule for a ring), counted
 * and said in the metadata; the valid records around them convert.
 */
static void invalid_guest_records_are_refused_and_counted(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = 0, .how = 1 };
	struct vperf_trace_sample s = { .h = { .size = sizeof(s), .type = VPERF_TRACE_SAMPLE,
					       .tsc = START_TSC + 20, .pid = 1, .tid = 1 },
					.ip = 0x401000, .nr_counts = 3, .nr_callchain = 5 };
	struct vperf_trace_rec unknown = { .size = sizeof(unknown), .type = 99, .tsc = START_TSC + 30 };
	unsigned char g[256], g2[256], g3[256], g4[256];
	size_t glen = 0, g2len = 0, g3len = 0, g4len = 0, mlen;
	struct vperf_convert_stats st;
	char *buf = NULL, why[256];
	size_t len = 0;
	struct bt_run r;
	FILE *m;

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	/* A, then the sample that claims 64 bytes it does not have, then B (refused with it) */
	mark(g, &glen, "A", 1, START_TSC + 10, 1);
	memcpy(g + glen, &s, sizeof(s));
	glen += sizeof(s);
	mark(g, &glen, "B", 2, START_TSC + 40, 1);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	memcpy(g2, &unknown, sizeof(unknown));
	g2len = sizeof(unknown);
	chunk(t, VPERF_RAWREC_GUEST, 0, g2, (uint32_t)g2len);
	mark(g3, &g3len, "\xff", 3, START_TSC + 50, 1);	/* not UTF-8 */
	chunk(t, VPERF_RAWREC_GUEST, 0, g3, (uint32_t)g3len);
	mark(g4, &g4len, "C", 4, START_TSC + 60, 1);
	chunk(t, VPERF_RAWREC_GUEST, 0, g4, (uint32_t)g4len);
	raw_close(t, true);

	convert_ok(t, &st);
	mlen = g4len;	/* one marker record */
	assert_int_equal(st.events, 2);
	assert_int_equal(st.guest_records, 2);
	assert_int_equal(st.guest_by_type[VPERF_TRACE_MARK], 2);
	assert_int_equal(st.guest_by_type[VPERF_TRACE_SAMPLE], 0);
	assert_int_equal(st.guest_refused_records, 3);
	assert_int_equal(st.guest_refused_bytes, sizeof(s) + mlen + sizeof(unknown) + mlen);
	read_clean(t->base, t->trace, &r);
	assert_null(strstr(r.out, " sample: "));
	assert_non_null(strstr(r.out, "name = \"A\""));
	assert_null(strstr(r.out, "name = \"B\""));
	assert_non_null(strstr(r.out, "name = \"C\""));
	bt_run_free(&r);

	m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(vperf_recording_header(t->trace, m, why, sizeof(why)), 0);
	fclose(m);
	assert_non_null(strstr(buf, "# guest records: 2 (not mapped to the clock: 0)\n"));
	assert_non_null(strstr(buf, "# guest records refused as invalid: 3 (160 bytes"));
	assert_null(strstr(buf, "refused_records"));
	free(buf);
}

/* An MMAP record of vCPU 0 at host time ns: start, len, pid (0: the kernel's), filename. */
static void mmap_rec(unsigned char *buf, size_t *len, uint64_t tsc, uint64_t start, uint64_t mlen,
		     uint32_t pid, const char *filename)
{
	struct vperf_trace_mmap *m = (void *)(buf + *len);
	size_t n = strlen(filename) + 1, size = (sizeof(*m) + n + 7) & ~(size_t)7;

	memset(m, 0, size);
	m->h.size = (uint16_t)size;
	m->h.type = VPERF_TRACE_MMAP;
	m->h.tsc = tsc;
	m->h.pid = pid;
	m->h.tid = pid;
	m->start = start;
	m->len = mlen;
	memcpy(m->filename, filename, n);
	*len += size;
}

/*
 * The statistics' events are the events the trace holds: the guest's records of where its kernel
 * text and its modules' symbols are are read, not written (the symbols they place are), so they
 * are not counted.
 */
static void events_counted_are_the_events_in_the_trace(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = 0, .how = 1 };
	unsigned char g[512];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct bt_run r;

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	mmap_rec(g, &glen, START_TSC + 10, 0xffffffff81000100ull, 0, 0, "[kernel.kallsyms]schedule");
	mmap_rec(g, &glen, START_TSC + 20, 0xffffffffc0001000ull, 0x80, 0, "[kvm]vcpu_run");
	mmap_rec(g, &glen, START_TSC + 30, 0x400000, 0x1000, 7, "/bin/x");
	mark(g, &glen, "m", 1, START_TSC + 40, 7);
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);
	convert_ok(t, &st);
	assert_int_equal(st.guest_records, 4);
	read_clean(t->base, t->trace, &r);
	assert_int_equal(count_lines(r.out), 2);	/* the user mmap and the marker */
	assert_int_equal(st.events, 2);
	bt_run_free(&r);
}

/*
 * The trace's clock counts ns from its origin (the recording's start, as the time of day) in a
 * signed 64-bit number: babeltrace2 refuses a stream with a time past that, and the CTF writer
 * one past 2^63 ns.  A raw file's times are not trusted to fit (a bogus TSC offset, a guest TSC
 * that wraps): events beyond are left out and counted, and the rest of the trace reads.
 */
static void events_beyond_the_trace_clock_are_left_out_and_counted(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = 0, .how = 1 };
	unsigned char g[256];
	size_t glen = 0;
	struct vperf_convert_stats st;
	struct bt_run r;
	char got[64];

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	mark(g, &glen, "kept", 1, START_TSC + 10, 1);
	/* 2^63 - 10^18 ns: below 2^63, but not with the clock's origin, 1.7 * 10^18 ns */
	mark(g, &glen, "late", 2, (uint64_t)(INT64_MAX - 1000000000000000000ll) * 2, 1);
	mark(g, &glen, "wrapped", 3, UINT64_MAX - 100, 1);	/* a guest TSC about to wrap */
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);
	convert_ok(t, &st);
	assert_int_equal(st.guest_records, 3);
	assert_int_equal(st.out_of_range, 2);
	assert_int_equal(st.events, 1);
	read_clean(t->base, t->trace, &r);
	names(r.out, got, sizeof(got));
	assert_string_equal(got, "marker ");
	bt_run_free(&r);
}

/*
 * Not a raw recording, a file that is not there: errors that say so.  A guest record whose size
 * runs past its chunk is refused alone (invalid_guest_records_are_refused_and_counted).
 */
static void damaged_raw_files_are_refused_with_a_reason(void **state)
{
	struct tdir *t = *state;
	struct vperf_rawrec_tsc off = { .host_tsc = START_TSC, .offset = 0, .how = 1 };
	struct vperf_convert_stats st = { .size = sizeof(st) };
	unsigned char g[256];
	size_t glen = 0;
	char why[256] = "";
	FILE *f;

	f = fopen(t->raw, "w");
	assert_non_null(f);
	fputs("this is not a recording, but it is long enough to hold a header: 0123456789", f);
	fclose(f);
	assert_int_equal(vperf_convert(t->raw, t->trace, NULL, &st, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a vperf raw recording"));
	assert_int_equal(access(t->trace, F_OK), -1);

	raw_open(t, 1);
	chunk(t, VPERF_RAWREC_TSC_OFFSET, 0, &off, sizeof(off));
	mark(g, &glen, "x", 1, START_TSC, 1);
	((struct vperf_trace_rec *)g)->size = 200;	/* past its chunk */
	chunk(t, VPERF_RAWREC_GUEST, 0, g, (uint32_t)glen);
	raw_close(t, true);
	/* a guest record is refused, not the file: counted, and the rest converts */
	assert_int_equal(vperf_convert(t->raw, t->trace, NULL, &st, why, sizeof(why)), 0);
	assert_int_equal(st.guest_records, 0);
	assert_int_equal(st.guest_refused_records, 1);
	assert_int_equal(st.guest_refused_bytes, glen);

	assert_int_equal(vperf_convert("/nonexistent/raw", t->trace, NULL, &st, why, sizeof(why)),
			 -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/raw"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(guest_times_map_through_the_tsc_offset_into_one_order,
						tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(a_changed_tsc_offset_maps_the_records_after_it, tdir_setup,
						tdir_teardown),
		cmocka_unit_test_setup_teardown(without_an_offset_samples_map_and_none_leaves_records_out,
						tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(losses_become_discarded_events, tdir_setup,
						tdir_teardown),
		cmocka_unit_test_setup_teardown(a_cut_raw_file_converts_up_to_its_last_whole_chunk,
						tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(damaged_raw_files_are_refused_with_a_reason,
						tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(invalid_guest_records_are_refused_and_counted,
						tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(events_counted_are_the_events_in_the_trace,
						tdir_setup, tdir_teardown),
		cmocka_unit_test_setup_teardown(events_beyond_the_trace_clock_are_left_out_and_counted,
						tdir_setup, tdir_teardown),
	};

	return VT_MAIN("convert", tests, NULL, NULL);
}
