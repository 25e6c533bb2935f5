/* SPDX-License-Identifier: MIT */
/*
 * The CTF trace writer (profiler/record/ctf.c), read back by babeltrace2:
 * a known trace's exact text, every field type, lost events as
 * babeltrace2's discarded-events notices, refused input that leaves the
 * trace readable, and a writer killed with SIGKILL.
 *
 * babeltrace2 is found by CMake (VT_BABELTRACE2, "" if absent); without it
 * the tests that read traces back skip.  It runs with TZ=UTC0, so that
 * its times of day do not depend on the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bt2run.h"
#include "ctf.h"
#include "vtest.h"

#ifndef VT_BABELTRACE2
#define VT_BABELTRACE2 ""
#endif

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* babeltrace2's delta for a first event, "(+?.?????????)" without trigraphs. */
#define NODELTA "(+?.\?\?\?\?\?\?\?\?\?)"

struct tdir {
	char base[64];		/* mkdtemp(), removed by teardown */
	char trace[96];		/* base/trace, not created */
};

static int setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->base, sizeof(t->base), "/tmp/vperf-ctf-XXXXXX");
	if (!mkdtemp(t->base)) {
		free(t);
		return -1;
	}
	snprintf(t->trace, sizeof(t->trace), "%s/trace", t->base);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tdir *t = *state;
	int ret = vt_rmtree(t->base);

	free(t);
	return ret;
}

static void assert_text(const char *got, const char *want)
{
	if (strcmp(got, want))
		fail_msg("babeltrace2 printed:\n%s\nexpected:\n%s", got, want);
}

static struct vperf_ctf *new_writer(const char *dir, const struct vperf_ctf_config *cfg)
{
	struct vperf_ctf *ctf = NULL;
	char why[512];
	int ret;

	ret = vperf_ctf__new(dir, cfg, &ctf, why, sizeof(why));
	if (ret)
		fail_msg("vperf_ctf__new(%s): %d: %s", dir, ret, why);
	assert_non_null(ctf);
	return ctf;
}

static struct vperf_ctf_stream *stream(struct vperf_ctf *ctf, enum vperf_ctf_layer layer,
				       uint32_t cpu)
{
	struct vperf_ctf_stream *s = NULL;
	int ret = vperf_ctf__stream(ctf, layer, cpu, &s);

	if (ret)
		fail_msg("vperf_ctf__stream: %d: %s", ret, vperf_ctf__strerror(ctf));
	assert_non_null(s);
	return s;
}

#define EMIT(ctf, s, cls, ts, ...)							\
	do {										\
		struct vperf_ctf_value v_[] = { __VA_ARGS__ };				\
		int r_ = vperf_ctf__emit(s, cls, ts, v_, N(v_));			\
		if (r_)									\
			fail_msg("emit %s at %llu: %d: %s", #cls,			\
				 (unsigned long long)(ts), r_, vperf_ctf__strerror(ctf)); \
	} while (0)

static void flush(struct vperf_ctf *ctf)
{
	int ret = vperf_ctf__flush(ctf);

	if (ret)
		fail_msg("vperf_ctf__flush: %d: %s", ret, vperf_ctf__strerror(ctf));
}

/*
 * The classes these tests write with: the writer takes any table (vperf's recordings use
 * record/schema.h's).  This one, vperf 0.1.0's (schema_v0.h), has a class of each shape; it is
 * the one docs/recording.md section 7 prints.
 */
#include "schema_v0.h"
enum { TC_MARKER_BEGIN, TC_MARKER_END, TC_MARKER_INSTANT };

static const struct vperf_ctf_config host_cfg = {
	.size = sizeof(struct vperf_ctf_config),
	.hostname = "testhost",
	.classes = v0_classes,
	.nr_classes = V0_NR,
};

/* ---- known answers ---------------------------------------------------- */

#define HK0 "{ layer = ( \"host_kernel\" : container = 0 ), cpu_id = 0 }"
#define HK1 "{ layer = ( \"host_kernel\" : container = 0 ), cpu_id = 1 }"
#define VMM0 "{ layer = ( \"vmm\" : container = 1 ), cpu_id = 0 }"
#define GK0 "{ layer = ( \"guest_kernel\" : container = 2 ), cpu_id = 0 }"
#define GK1 "{ layer = ( \"guest_kernel\" : container = 2 ), cpu_id = 1 }"

/*
 * Events of every default class on streams of two layers (and one VMM
 * stream) on two CPUs, emitted stream by stream, in two flushes: babeltrace2
 * prints them in time order across streams, with these exact values, and
 * nothing on stderr.
 */
static void ctf_known_trace_reads_back_exactly_without_warnings(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *hk0 = stream(ctf, VPERF_CTF_HOST_KERNEL, 0);
	struct vperf_ctf_stream *hk1 = stream(ctf, VPERF_CTF_HOST_KERNEL, 1);
	struct vperf_ctf_stream *vmm0 = stream(ctf, VPERF_CTF_VMM, 0);
	struct vperf_ctf_stream *gk0 = stream(ctf, VPERF_CTF_GUEST_KERNEL, 0);
	struct vperf_ctf_stream *gk1 = stream(ctf, VPERF_CTF_GUEST_KERNEL, 1);
	const uint64_t values[] = { 1000000, 2500000 };
	const uint64_t chain[] = { 0xffffffff81234567ull, 0xffffffff81000abcull, 0x401000 };
	struct bt_run r;

	EMIT(ctf, hk0, V0_SCHED_SWITCH, 1000, VPERF_CTF_U32(100),
	     VPERF_CTF_STR("qemu-vcpu0"), VPERF_CTF_U64(1), VPERF_CTF_U32(0),
	     VPERF_CTF_STR("swapper/0"));
	EMIT(ctf, hk0, V0_KVM_ENTRY, 4000, VPERF_CTF_U32(0),
	     VPERF_CTF_U64(0xffffffff81000000ull));
	EMIT(ctf, hk1, V0_SCHED_WAKEUP, 2000, VPERF_CTF_U32(100), VPERF_CTF_U32(0),
	     VPERF_CTF_U32(200));
	EMIT(ctf, hk1, V0_IRQ_ENTRY, 6000, VPERF_CTF_U32(236));
	EMIT(ctf, gk0, V0_SAMPLE, 3000, VPERF_CTF_U64(0xffffffff81234567ull),
	     VPERF_CTF_U32(1), VPERF_CTF_U32(1), VPERF_CTF_SEQ(values, 2), VPERF_CTF_SEQ(chain, 3));
	EMIT(ctf, gk1, V0_PROCESS_EXEC, 5000, VPERF_CTF_U32(321), VPERF_CTF_U32(321),
	     VPERF_CTF_STR("/usr/bin/stress"));
	flush(ctf);
	EMIT(ctf, gk1, V0_MARKER, 7000, VPERF_CTF_STR("phase1"), VPERF_CTF_S64(42),
	     VPERF_CTF_U8(TC_MARKER_BEGIN));
	EMIT(ctf, gk1, V0_PROCESS_EXIT, 9000, VPERF_CTF_U32(321), VPERF_CTF_U32(321),
	     VPERF_CTF_S64(-9));
	EMIT(ctf, hk0, V0_KVM_EXIT, 8000, VPERF_CTF_U32(0), VPERF_CTF_U32(30),
	     VPERF_CTF_U64(0xffffffff81000010ull));
	EMIT(ctf, vmm0, V0_VMM_EXIT, 8500, VPERF_CTF_U32(0), VPERF_CTF_U32(2),
	     VPERF_CTF_U64(0x5650), VPERF_CTF_U64(1500));
	EMIT(ctf, gk0, V0_PROCESS_FORK, 10000, VPERF_CTF_U32(1), VPERF_CTF_U32(1),
	     VPERF_CTF_U32(400), VPERF_CTF_U32(401));
	vperf_ctf__delete(ctf);		/* flushes the second batch */

	read_clean(t->base, t->trace, &r);
	assert_text(r.out,
"[00:00:00.000001000] " NODELTA " testhost sched_switch: " HK0 ", { prev_tid = 100, prev_comm_len = 10, prev_comm = \"qemu-vcpu0\", prev_state = 1, next_tid = 0, next_comm_len = 9, next_comm = \"swapper/0\" }\n"
"[00:00:00.000002000] (+0.000001000) testhost sched_wakeup: " HK1 ", { tid = 100, target_cpu = 0, waker_tid = 200 }\n"
"[00:00:00.000003000] (+0.000001000) testhost sample: " GK0 ", { ip = 0xFFFFFFFF81234567, pid = 1, tid = 1, values_len = 2, values = [ [0] = 1000000, [1] = 2500000 ], callchain_len = 3, callchain = [ [0] = 0xFFFFFFFF81234567, [1] = 0xFFFFFFFF81000ABC, [2] = 0x401000 ] }\n"
"[00:00:00.000004000] (+0.000001000) testhost kvm_entry: " HK0 ", { vcpu = 0, rip = 0xFFFFFFFF81000000 }\n"
"[00:00:00.000005000] (+0.000001000) testhost process_exec: " GK1 ", { pid = 321, tid = 321, filename_len = 15, filename = \"/usr/bin/stress\" }\n"
"[00:00:00.000006000] (+0.000001000) testhost irq_entry: " HK1 ", { vector = 236 }\n"
"[00:00:00.000007000] (+0.000001000) testhost marker: " GK1 ", { name_len = 6, name = \"phase1\", value = 42, kind = ( \"begin\" : container = 0 ) }\n"
"[00:00:00.000008000] (+0.000001000) testhost kvm_exit: " HK0 ", { vcpu = 0, reason = 30, rip = 0xFFFFFFFF81000010 }\n"
"[00:00:00.000008500] (+0.000000500) testhost vmm_exit: " VMM0 ", { vcpu = 0, reason = 2, port_or_addr = 0x5650, duration_ns = 1500 }\n"
"[00:00:00.000009000] (+0.000000500) testhost process_exit: " GK1 ", { pid = 321, tid = 321, exit_code = -9 }\n"
"[00:00:00.000010000] (+0.000001000) testhost process_fork: " GK0 ", { parent_pid = 1, parent_tid = 1, child_pid = 400, child_tid = 401 }\n");
	bt_run_free(&r);
}

/*
 * A table of the caller's own (not the default set) with every field type
 * at its limits: one code path serves any table.
 */
static void ctf_every_field_type_reads_back_at_its_limits(void **state)
{
	static const char *const modes[] = { "off", NULL, "on" };
	static const struct vperf_ctf_field_desc fields[] = {
		{ .name = "a8", .type = VPERF_CTF_TYPE_U8 },
		{ .name = "a16", .type = VPERF_CTF_TYPE_U16 },
		{ .name = "a32", .type = VPERF_CTF_TYPE_U32, .flags = VPERF_CTF_HEX },
		{ .name = "a64", .type = VPERF_CTF_TYPE_U64 },
		{ .name = "s", .type = VPERF_CTF_TYPE_S64 },
		{ .name = "text", .type = VPERF_CTF_TYPE_STRING },
		{ .name = "seq", .type = VPERF_CTF_TYPE_U64_SEQ },
		{ .name = "mode", .type = VPERF_CTF_TYPE_U16, .labels = modes, .nr_labels = 3 },
	};
	static const struct vperf_ctf_class_desc classes[] = {
		{ .name = "all_types", .fields = fields, .nr_fields = N(fields) },
		{ .name = "no_fields" },
	};
	struct vperf_ctf_config cfg = host_cfg;
	const struct tdir *t = *state;
	const uint64_t big[] = { UINT64_MAX, 0 };
	struct vperf_ctf *ctf;
	struct vperf_ctf_stream *s;
	struct bt_run r;

	cfg.classes = classes;
	cfg.nr_classes = N(classes);
	ctf = new_writer(t->trace, &cfg);
	s = stream(ctf, VPERF_CTF_GUEST_USER, 3);
	EMIT(ctf, s, 0, 1, VPERF_CTF_U8(255), VPERF_CTF_U16(65535), VPERF_CTF_U32(UINT32_MAX),
	     VPERF_CTF_U64(UINT64_MAX), VPERF_CTF_S64(INT64_MIN),
	     VPERF_CTF_STR("h\xc3\xa9llo \xe2\x86\x92 \xf0\x9f\x99\x82"),	/* "héllo → 🙂" */
	     VPERF_CTF_SEQ(big, 2), VPERF_CTF_U16(2));
	EMIT(ctf, s, 0, 2, VPERF_CTF_U8(0), VPERF_CTF_U16(0), VPERF_CTF_U32(0), VPERF_CTF_U64(0),
	     VPERF_CTF_S64(INT64_MAX), VPERF_CTF_STR(""), VPERF_CTF_SEQ(NULL, 0), VPERF_CTF_U16(1));
	assert_int_equal(vperf_ctf__emit(s, 1, 3, NULL, 0), 0);
	vperf_ctf__delete(ctf);

	read_clean(t->base, t->trace, &r);
#define GU3 "{ layer = ( \"guest_user\" : container = 3 ), cpu_id = 3 }"
	assert_text(r.out,
"[00:00:00.000000001] " NODELTA " testhost all_types: " GU3 ", { a8 = 255, a16 = 65535, a32 = 0xFFFFFFFF, a64 = 18446744073709551615, s = -9223372036854775808, text_len = 15, text = \"h\xc3\xa9llo \xe2\x86\x92 \xf0\x9f\x99\x82\", seq_len = 2, seq = [ [0] = 18446744073709551615, [1] = 0 ], mode = ( \"on\" : container = 2 ) }\n"
"[00:00:00.000000002] (+0.000000001) testhost all_types: " GU3 ", { a8 = 0, a16 = 0, a32 = 0x0, a64 = 0, s = 9223372036854775807, text_len = 0, text = \"\", seq_len = 0, seq = [ ], mode = ( <unknown> : container = 1 ) }\n"
"[00:00:00.000000003] (+0.000000001) testhost no_fields: " GU3 ", { }\n");
#undef GU3
	bt_run_free(&r);
}

/*
 * The clock's name, description and offset, and every environment key,
 * are in the metadata, and babeltrace2 applies the offset: 1700000000 s
 * + 5 ns + the event's 1000 ns is 22:13:20.000001005 UTC.
 */
static void ctf_clock_and_environment_are_in_the_metadata(void **state)
{
	static const struct vperf_ctf_env extra[] = {
		{ "run_id", "42", false }, { "tracer_major", "2", true }, { "delta", "-7", true },
	};
	const struct tdir *t = *state;
	struct vperf_ctf_config cfg = {
		.size = sizeof(cfg),
		.clock_name = "host_mono",
		.clock_description = "CLOCK_MONOTONIC of the host",
		.clock_offset_s = 1700000000,
		.clock_offset = 5,
		.hostname = "h1",
		.vm_name = "guest0",
		.layers = (1u << VPERF_CTF_NR_LAYERS) - 1,
		.clock_note = "guest TSC -> host monotonic via kvmclock",
		.env = extra,
		.nr_env = N(extra),
		.classes = v0_classes,
		.nr_classes = V0_NR,
	};
	static const char *const want[] = {
		"\ttracer_major = 2;\n", "\tdelta = -7;\n",
		"hostname = \"h1\";", "vperf_version = \"", "vm_name = \"guest0\";",
		"layers = \"host_kernel,vmm,guest_kernel,guest_user,host_user\";",
		"clock_note = \"guest TSC -> host monotonic via kvmclock\";", "run_id = \"42\";",
		"name = host_mono;", "description = \"CLOCK_MONOTONIC of the host\";",
		"freq = 1000000000;", "offset_s = 1700000000;", "offset = 5;",
		"map = clock.host_mono.value;", "layer;", "cpu_id;", "events_discarded;",
	};
	struct vperf_ctf *ctf = new_writer(t->trace, &cfg);
	struct vperf_ctf_stream *s = stream(ctf, VPERF_CTF_VMM, 0);
	char path[PATH_MAX];
	struct bt_run r;
	char *meta;

	EMIT(ctf, s, V0_IRQ_ENTRY, 1000, VPERF_CTF_U32(1));
	vperf_ctf__delete(ctf);
	snprintf(path, sizeof(path), "%s/metadata", t->trace);
	meta = slurp(path);
	for (size_t i = 0; i < N(want); i++)
		if (!strstr(meta, want[i]))
			fail_msg("metadata lacks %s:\n%s", want[i], meta);
	free(meta);
	read_clean(t->base, t->trace, &r);
	assert_text(r.out, "[22:13:20.000001005] " NODELTA " h1 irq_entry: " VMM0
			   ", { vector = 1 }\n");
	bt_run_free(&r);
}

/*
 * A recorder's summary comes at its end: keys added after creation reach the metadata at the
 * next flush, babeltrace2 still reads the trace cleanly, and a key already set (from the
 * config or added) is refused and keeps its value.
 */
static void ctf_env_added_at_the_end_reaches_the_metadata_and_never_changes(void **state)
{
	static const struct vperf_ctf_env extra[] = { { "run_id", "42", false } };
	const struct tdir *t = *state;
	struct vperf_ctf_config cfg = host_cfg;
	struct vperf_ctf *ctf;
	struct vperf_ctf_stream *s;
	char path[PATH_MAX];
	struct bt_run r;
	char *meta;

	cfg.env = extra;
	cfg.nr_env = 1;
	ctf = new_writer(t->trace, &cfg);
	s = stream(ctf, VPERF_CTF_HOST_USER, 0);
	EMIT(ctf, s, V0_IRQ_ENTRY, 1000, VPERF_CTF_U32(1));
	flush(ctf);
	assert_int_equal(vperf_ctf__add_env(ctf, "summary_events", "1"), 0);
	assert_int_equal(vperf_ctf__add_env(ctf, "run_id", "43"), -EEXIST);
	assert_int_equal(vperf_ctf__add_env(ctf, "hostname", "x"), -EEXIST);
	assert_int_equal(vperf_ctf__add_env(ctf, "bad key", "1"), -EINVAL);
	assert_int_equal(vperf_ctf__add_env(ctf, "quote", "a\"b"), -EINVAL);
	flush(ctf);
	assert_int_equal(vperf_ctf__add_env(ctf, "summary_events", "2"), -EEXIST);
	vperf_ctf__delete(ctf);
	snprintf(path, sizeof(path), "%s/metadata", t->trace);
	meta = slurp(path);
	if (!strstr(meta, "summary_events = \"1\";") || !strstr(meta, "run_id = \"42\";") ||
	    strstr(meta, "quote"))
		fail_msg("metadata env is not as set:\n%s", meta);
	free(meta);
	read_clean(t->base, t->trace, &r);
	assert_non_null(strstr(r.out, "host_user"));
	bt_run_free(&r);
}

/* ---- streams ---------------------------------------------------------- */

/*
 * One stream per (layer, CPU): the same pointer each time, a file named
 * after it; an unknown layer is refused; a trace with streams but no
 * events, and one without streams, read back empty without warnings.
 */
static void ctf_streams_are_one_per_layer_and_cpu_and_empty_traces_read(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *a = stream(ctf, VPERF_CTF_VMM, 7), *b, *c = (void *)1;
	char path[PATH_MAX];
	struct bt_run r;

	b = stream(ctf, VPERF_CTF_GUEST_USER, UINT32_MAX);
	assert_ptr_equal(stream(ctf, VPERF_CTF_VMM, 7), a);
	assert_ptr_not_equal(a, b);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_NR_LAYERS, 0, &c), -EINVAL);
	assert_null(c);
	assert_true(vt_contains(vperf_ctf__strerror(ctf), "unknown layer 5"));
	vperf_ctf__delete(ctf);
	vperf_ctf__delete(NULL);
	snprintf(path, sizeof(path), "%s/vmm_cpu7", t->trace);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/guest_user_cpu4294967295", t->trace);
	assert_int_equal(access(path, F_OK), 0);
	read_clean(t->base, t->trace, &r);
	assert_text(r.out, "");
	bt_run_free(&r);

	/* No stream at all. */
	snprintf(path, sizeof(path), "%s/empty", t->base);
	vperf_ctf__delete(new_writer(path, NULL));
	read_clean(t->base, path, &r);
	assert_text(r.out, "");
	bt_run_free(&r);
}

/* ---- lost events ------------------------------------------------------ */

/*
 * A loss between events and a loss after the stream's last event each
 * show as babeltrace2's "Tracer discarded <n> events" warning, with the
 * count, the time range and the stream's file, and as a lost_events event.
 */
static void ctf_lost_events_show_as_discarded_with_their_count(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *hk0 = stream(ctf, VPERF_CTF_HOST_KERNEL, 0);
	struct vperf_ctf_stream *gk1 = stream(ctf, VPERF_CTF_GUEST_KERNEL, 1);
	char want[PATH_MAX + 128];
	struct bt_run r;

	EMIT(ctf, hk0, V0_IRQ_ENTRY, 1000, VPERF_CTF_U32(1));
	EMIT(ctf, hk0, V0_IRQ_ENTRY, 2000, VPERF_CTF_U32(2));
	assert_int_equal(vperf_ctf__lost(hk0, 2500, 7), 0);
	EMIT(ctf, gk1, V0_IRQ_ENTRY, 2600, VPERF_CTF_U32(9));
	EMIT(ctf, hk0, V0_IRQ_ENTRY, 3000, VPERF_CTF_U32(3));
	assert_int_equal(vperf_ctf__lost(hk0, 3100, 0), 0);	/* nothing */
	flush(ctf);
	assert_int_equal(vperf_ctf__lost(hk0, 4000, 3), 0);	/* nothing after it */
	vperf_ctf__delete(ctf);

	run_babeltrace2(t->base, t->trace, &r);
	assert_int_equal(r.status, 0);
	assert_text(r.out,
"[00:00:00.000001000] " NODELTA " testhost irq_entry: " HK0 ", { vector = 1 }\n"
"[00:00:00.000002000] (+0.000001000) testhost irq_entry: " HK0 ", { vector = 2 }\n"
"[00:00:00.000002500] (+0.000000500) testhost lost_events: " HK0 ", { count = 7 }\n"
"[00:00:00.000002600] (+0.000000100) testhost irq_entry: " GK1 ", { vector = 9 }\n"
"[00:00:00.000003000] (+0.000000400) testhost irq_entry: " HK0 ", { vector = 3 }\n"
"[00:00:00.000004000] (+0.000001000) testhost lost_events: " HK0 ", { count = 3 }\n");
	printf("babeltrace2's stderr:\n%s", r.err);
	assert_int_equal(count_lines(r.err), 2);
	assert_true(vt_contains(r.err, "WARNING: Tracer discarded 7 events between "
				       "[00:00:00.000002000] and [00:00:00.000003000] in trace "
				       "\"testhost\""));
	assert_true(vt_contains(r.err, "WARNING: Tracer discarded 3 events between "
				       "[00:00:00.000003000] and [00:00:00.000004000] in trace "
				       "\"testhost\""));
	snprintf(want, sizeof(want), "within stream \"%s/host_kernel_cpu0\"", t->trace);
	assert_true(vt_contains(r.err, want));
	bt_run_free(&r);
}

/*
 * A loss before a stream's first event is counted too: babeltrace2 counts
 * from a previous packet, and the writer's leading empty packet is one.
 */
static void ctf_loss_before_first_event_shows_with_its_count(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *s = stream(ctf, VPERF_CTF_GUEST_KERNEL, 1);
	struct bt_run r;

	assert_int_equal(vperf_ctf__lost(s, 1500, 5), 0);
	EMIT(ctf, s, V0_IRQ_ENTRY, 2500, VPERF_CTF_U32(1));
	vperf_ctf__delete(ctf);

	run_babeltrace2(t->base, t->trace, &r);
	assert_int_equal(r.status, 0);
	assert_text(r.out,
"[00:00:00.000001500] " NODELTA " testhost lost_events: " GK1 ", { count = 5 }\n"
"[00:00:00.000002500] (+0.000001000) testhost irq_entry: " GK1 ", { vector = 1 }\n");
	printf("babeltrace2's stderr:\n%s", r.err);
	assert_int_equal(count_lines(r.err), 1);
	assert_true(vt_contains(r.err, "WARNING: Tracer discarded 5 events between "
				       "[00:00:00.000001500] and [00:00:00.000002500]"));
	bt_run_free(&r);
}

/* ---- refused input ---------------------------------------------------- */

#define REFUSED(want_err, want_msg, call)						\
	do {										\
		int r_ = (call);							\
		if (r_ != (want_err) || !vt_contains(vperf_ctf__strerror(ctf), want_msg)) \
			fail_msg("%s: %d \"%s\", expected %d \"%s\"", #call, r_,	\
				 vperf_ctf__strerror(ctf), want_err, want_msg);		\
	} while (0)

/*
 * Wrong field counts and types, an unknown class, NULL strings and
 * sequences, invalid UTF-8, a 1 MiB string without NUL, integers out of
 * range: each is refused with its errno and a message, and the trace
 * written before and after reads back with just the good events.
 */
static void ctf_bad_values_are_refused_and_the_trace_stays_readable(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *s = stream(ctf, VPERF_CTF_HOST_KERNEL, 0);
	const size_t mib = 1 << 20;
	char *huge = malloc(mib);
	uint64_t one = 1;
	struct bt_run r;

	assert_non_null(huge);
	memset(huge, 'a', mib);		/* no NUL anywhere */
	EMIT(ctf, s, V0_IRQ_ENTRY, 1000, VPERF_CTF_U32(1));
	flush(ctf);
	{
		struct vperf_ctf_value two[] = { VPERF_CTF_U32(1), VPERF_CTF_U32(2) };
		struct vperf_ctf_value wrong[] = { VPERF_CTF_STR("x"), VPERF_CTF_U32(2),
						   VPERF_CTF_U32(3) };
		struct vperf_ctf_value zero[3] = { { 0 } };
		struct vperf_ctf_value sw[] = { VPERF_CTF_U32(1), VPERF_CTF_STR(NULL),
						VPERF_CTF_U64(0), VPERF_CTF_U32(2),
						VPERF_CTF_STR("b") };
		struct vperf_ctf_value u8[] = { VPERF_CTF_STR("m"), VPERF_CTF_S64(0),
						VPERF_CTF_U8(300) };
		struct vperf_ctf_value seq[] = { VPERF_CTF_U64(1), VPERF_CTF_U32(1),
						 VPERF_CTF_U32(1), VPERF_CTF_SEQ(NULL, 2),
						 VPERF_CTF_SEQ(NULL, 0) };
		struct vperf_ctf_value irq[] = { VPERF_CTF_U32(1) };

		REFUSED(-EINVAL, "sched_wakeup takes 3 values: 2 given",
			vperf_ctf__emit(s, V0_SCHED_WAKEUP, 2000, two, 2));
		REFUSED(-EINVAL, "sched_wakeup takes 3 values: 3 given at NULL",
			vperf_ctf__emit(s, V0_SCHED_WAKEUP, 2000, NULL, 3));
		REFUSED(-EINVAL, "sched_wakeup.tid is a u32 field: value 0 is a string",
			vperf_ctf__emit(s, V0_SCHED_WAKEUP, 2000, wrong, 3));
		REFUSED(-EINVAL, "sched_wakeup.tid is a u32 field: value 0 is a no type",
			vperf_ctf__emit(s, V0_SCHED_WAKEUP, 2000, zero, 3));
		REFUSED(-EINVAL, "unknown event class id 99: the trace has 14 classes",
			vperf_ctf__emit(s, 99, 2000, irq, 1));
		/* lost_events is the writer's: not for emit */
		REFUSED(-EINVAL, "unknown event class id 14",
			vperf_ctf__emit(s, V0_NR, 2000, irq, 1));
		REFUSED(-EINVAL, "sched_switch.prev_comm: the string is NULL",
			vperf_ctf__emit(s, V0_SCHED_SWITCH, 2000, sw, N(sw)));
		sw[1] = VPERF_CTF_STR("ok\xff\xfe");
		REFUSED(-EILSEQ, "sched_switch.prev_comm: the string is not UTF-8 (byte 2)",
			vperf_ctf__emit(s, V0_SCHED_SWITCH, 2000, sw, N(sw)));
		sw[1] = VPERF_CTF_STR("cut\xe2\x86");	/* a sequence cut short */
		REFUSED(-EILSEQ, "not UTF-8 (byte 3)",
			vperf_ctf__emit(s, V0_SCHED_SWITCH, 2000, sw, N(sw)));
		sw[1] = VPERF_CTF_STR("\xc0\xaf");	/* overlong '/' */
		REFUSED(-EILSEQ, "not UTF-8 (byte 0)",
			vperf_ctf__emit(s, V0_SCHED_SWITCH, 2000, sw, N(sw)));
		sw[1] = VPERF_CTF_STR(huge);
		REFUSED(-E2BIG, "sched_switch.prev_comm: the string is longer than 4096 bytes",
			vperf_ctf__emit(s, V0_SCHED_SWITCH, 2000, sw, N(sw)));
		REFUSED(-ERANGE, "marker.kind: 300 does not fit a u8",
			vperf_ctf__emit(s, V0_MARKER, 2000, u8, N(u8)));
		u8[2] = VPERF_CTF_U8(3);
		REFUSED(-ERANGE, "marker.kind: 3 has no label (0 to 2)",
			vperf_ctf__emit(s, V0_MARKER, 2000, u8, N(u8)));
		irq[0] = VPERF_CTF_U32(1ull << 32);
		REFUSED(-ERANGE, "irq_entry.vector: 4294967296 does not fit a u32",
			vperf_ctf__emit(s, V0_IRQ_ENTRY, 2000, irq, 1));
		REFUSED(-EINVAL, "sample.values: 2 elements at NULL",
			vperf_ctf__emit(s, V0_SAMPLE, 2000, seq, N(seq)));
		seq[3] = VPERF_CTF_SEQ(&one, VPERF_CTF_MAX_SEQ + 1);	/* not read */
		REFUSED(-E2BIG, "sample.values: 65537 elements, more than 65536",
			vperf_ctf__emit(s, V0_SAMPLE, 2000, seq, N(seq)));
		assert_int_equal(vperf_ctf__emit(NULL, 0, 2000, irq, 1), -EINVAL);
		assert_int_equal(vperf_ctf__lost(NULL, 2000, 1), -EINVAL);

		/* A string of exactly the limit passes. */
		huge[VPERF_CTF_MAX_STRING] = 0;
		sw[1] = VPERF_CTF_STR(huge);
		assert_int_equal(vperf_ctf__emit(s, V0_SCHED_SWITCH, 2000, sw, N(sw)), 0);
	}
	EMIT(ctf, s, V0_IRQ_ENTRY, 3000, VPERF_CTF_U32(3));
	vperf_ctf__delete(ctf);
	free(huge);

	read_clean(t->base, t->trace, &r);
	assert_int_equal(count_lines(r.out), 3);
	assert_true(vt_contains(r.out, "[00:00:00.000001000] " NODELTA " testhost irq_entry: " HK0
				       ", { vector = 1 }\n[00:00:00.000002000] (+0.000001000) testhost "
				       "sched_switch: " HK0 ", { prev_tid = 1, prev_comm_len = 4096, "
				       "prev_comm = \"aaaa"));
	assert_true(vt_contains(r.out, "aaaa\", prev_state = 0, next_tid = 2, next_comm_len = 1, "
				       "next_comm = \"b\" }\n"
				       "[00:00:00.000003000] (+0.000001000) testhost irq_entry: " HK0
				       ", { vector = 3 }\n"));
	bt_run_free(&r);
}

/*
 * Time order: a stream's events may not go back (equal times are fine);
 * different streams may come in any order until a flush, which sorts
 * them; after it nothing older than its newest event is taken; nor a time
 * beyond INT64_MAX ns.  The refused events leave the trace readable.
 */
static void ctf_timestamps_going_back_are_refused(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *a = stream(ctf, VPERF_CTF_HOST_KERNEL, 0);
	struct vperf_ctf_stream *b = stream(ctf, VPERF_CTF_HOST_KERNEL, 1);
	struct vperf_ctf_value v[] = { VPERF_CTF_U32(0) };
	struct bt_run r;

	EMIT(ctf, a, V0_IRQ_ENTRY, 2000, VPERF_CTF_U32(1));
	EMIT(ctf, a, V0_IRQ_ENTRY, 2000, VPERF_CTF_U32(2));
	REFUSED(-EINVAL, "timestamp 1999 ns on stream host_kernel cpu 0 is older than its "
			 "previous event (2000 ns)",
		vperf_ctf__emit(a, V0_IRQ_ENTRY, 1999, v, 1));
	REFUSED(-EINVAL, "is older than its previous event", vperf_ctf__lost(a, 1999, 1));
	EMIT(ctf, b, V0_IRQ_ENTRY, 1500, VPERF_CTF_U32(3));
	flush(ctf);
	REFUSED(-EINVAL, "timestamp 1800 ns is older than the newest event already flushed "
			 "(2000 ns)",
		vperf_ctf__emit(b, V0_IRQ_ENTRY, 1800, v, 1));
	REFUSED(-EINVAL, "timestamp 9223372036854775808 ns is beyond the clock's range",
		vperf_ctf__emit(b, V0_IRQ_ENTRY, (uint64_t)INT64_MAX + 1, v, 1));
	EMIT(ctf, b, V0_IRQ_ENTRY, 2000, VPERF_CTF_U32(4));
	vperf_ctf__delete(ctf);

	read_clean(t->base, t->trace, &r);
	assert_text(r.out,
"[00:00:00.000001500] " NODELTA " testhost irq_entry: " HK1 ", { vector = 3 }\n"
"[00:00:00.000002000] (+0.000000500) testhost irq_entry: " HK0 ", { vector = 1 }\n"
"[00:00:00.000002000] (+0.000000000) testhost irq_entry: " HK0 ", { vector = 2 }\n"
"[00:00:00.000002000] (+0.000000000) testhost irq_entry: " HK1 ", { vector = 4 }\n");
	bt_run_free(&r);
}

/* ---- refused writers -------------------------------------------------- */

/* An existing non-empty directory is refused and left as it was. */
static void ctf_existing_nonempty_directory_is_refused_untouched(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg), *again = (void *)1;
	struct vperf_ctf_stream *s = stream(ctf, VPERF_CTF_HOST_KERNEL, 0);
	char why[512], path[PATH_MAX];
	struct bt_run r1, r2;

	EMIT(ctf, s, V0_IRQ_ENTRY, 1000, VPERF_CTF_U32(1));
	vperf_ctf__delete(ctf);
	read_clean(t->base, t->trace, &r1);

	assert_int_equal(vperf_ctf__new(t->trace, NULL, &again, why, sizeof(why)), -EEXIST);
	assert_null(again);
	assert_true(vt_contains(why, "exists and is not empty"));
	read_clean(t->base, t->trace, &r2);
	assert_text(r2.out, r1.out);
	bt_run_free(&r1);
	bt_run_free(&r2);

	snprintf(path, sizeof(path), "%s/metadata", t->trace);
	assert_int_equal(vperf_ctf__new(path, NULL, &again, why, sizeof(why)), -ENOTDIR);
	assert_true(vt_contains(why, "exists and is not a directory"));
	snprintf(path, sizeof(path), "%s/no/trace", t->base);
	assert_int_equal(vperf_ctf__new(path, NULL, &again, why, sizeof(why)), -ENOENT);
	assert_true(vt_contains(why, "cannot create the trace directory"));
	assert_int_equal(vperf_ctf__new(NULL, NULL, &again, why, sizeof(why)), -EINVAL);

	/* An existing empty directory is fine. */
	snprintf(path, sizeof(path), "%s/empty", t->base);
	assert_int_equal(mkdir(path, 0755), 0);
	vperf_ctf__delete(new_writer(path, NULL));
}

/* The mode bits of base/rel (lstat), or -1. */
static int mode_of(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	return lstat(path, &st) ? -1 : (int)(st.st_mode & 07777);
}

/*
 * Under umask 0 the trace is still private (as perf.data is): its directory 0700, the metadata
 * and the stream files 0600.  A link planted where the writer makes its metadata temporary file
 * is replaced, not written through, and one at a new stream's name refuses that stream: the
 * link's target is untouched.
 */
static void ctf_trace_is_private_and_its_files_are_never_links(void **state)
{
	const struct tdir *t = *state;
	mode_t mask = umask(0);
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *s = stream(ctf, VPERF_CTF_HOST_KERNEL, 0), *s2 = (void *)1;
	char victim[PATH_MAX], link[PATH_MAX], *text;
	struct bt_run r;
	FILE *f;

	umask(mask);
	EMIT(ctf, s, V0_IRQ_ENTRY, 1000, VPERF_CTF_U32(1));
	flush(ctf);
	assert_int_equal(mode_of(t->trace, "."), 0700);
	assert_int_equal(mode_of(t->trace, "metadata"), 0600);
	assert_int_equal(mode_of(t->trace, "host_kernel_cpu0"), 0600);

	snprintf(victim, sizeof(victim), "%s/victim", t->base);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("precious\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(link, sizeof(link), "%s/.metadata.tmp", t->trace);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(vperf_ctf__add_env(ctf, "planted", "1"), 0);
	flush(ctf);	/* writes the changed metadata */
	text = slurp(victim);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(mode_of(t->trace, "metadata"), 0600);
	text = slurp(link);	/* the temporary file was renamed over metadata: nothing there */
	assert_string_equal(text, "");
	free(text);

	snprintf(link, sizeof(link), "%s/host_kernel_cpu1", t->trace);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(vperf_ctf__stream(ctf, VPERF_CTF_HOST_KERNEL, 1, &s2), -EEXIST);
	assert_null(s2);
	assert_int_equal(unlink(link), 0);
	vperf_ctf__delete(ctf);
	text = slurp(victim);
	assert_string_equal(text, "precious\n");
	free(text);
	read_clean(t->base, t->trace, &r);
	assert_true(vt_contains(r.out, "irq_entry"));
	bt_run_free(&r);
}

/*
 * An existing empty directory is used only if it is the caller's and nobody else may write to
 * it (a name in it could be made a link meanwhile), and never through a link.
 */
static void ctf_existing_directory_must_be_private_and_the_callers(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *again = (void *)1;
	char why[512], link[PATH_MAX];

	assert_int_equal(mkdir(t->trace, 0700), 0);
	assert_int_equal(chmod(t->trace, 0770), 0);
	assert_int_equal(vperf_ctf__new(t->trace, NULL, &again, why, sizeof(why)), -EPERM);
	assert_null(again);
	assert_true(vt_contains(why, "may be written by other users (mode 0770)"));
	assert_int_equal(chmod(t->trace, 01777), 0);
	assert_int_equal(vperf_ctf__new(t->trace, NULL, &again, why, sizeof(why)), -EPERM);
	assert_int_equal(mode_of(t->trace, "."), 01777);	/* left as it was */
	assert_int_equal(chmod(t->trace, 0755), 0);

	snprintf(link, sizeof(link), "%s/link", t->base);
	assert_int_equal(symlink(t->trace, link), 0);
	assert_int_equal(vperf_ctf__new(link, NULL, &again, why, sizeof(why)), -ENOTDIR);
	assert_true(vt_contains(why, "is a link"));

	if (geteuid()) {
		vperf_ctf__delete(new_writer(t->trace, NULL));
		vt_skip("another user's directory: needs root to make one");
	}
	assert_int_equal(chown(t->trace, 12345, 12345), 0);
	assert_int_equal(vperf_ctf__new(t->trace, NULL, &again, why, sizeof(why)), -EPERM);
	assert_true(vt_contains(why, "belongs to uid 12345"));
	assert_int_equal(mode_of(t->trace, "metadata"), -1);	/* nothing written */
	assert_int_equal(chown(t->trace, geteuid(), getegid()), 0);
	vperf_ctf__delete(new_writer(t->trace, NULL));
}

/*
 * Bad configs are refused with -EINVAL (-E2BIG for unknown fields set by a
 * newer caller), say why, and leave no directory behind.
 */
static void ctf_bad_configs_are_refused_and_leave_nothing(void **state)
{
	static const struct vperf_ctf_field_desc ok[] = {
		{ .name = "x", .type = VPERF_CTF_TYPE_U32 },
	};
	static const struct vperf_ctf_field_desc underscore[] = {
		{ .name = "_x", .type = VPERF_CTF_TYPE_U32 },
	};
	static const struct vperf_ctf_field_desc twice[] = {
		{ .name = "x", .type = VPERF_CTF_TYPE_U32 },
		{ .name = "x", .type = VPERF_CTF_TYPE_U64 },
	};
	static const struct vperf_ctf_field_desc len_clash[] = {
		{ .name = "cc_len", .type = VPERF_CTF_TYPE_U32 },
		{ .name = "cc", .type = VPERF_CTF_TYPE_U64_SEQ },
	};
	static const struct vperf_ctf_field_desc no_type[] = {
		{ .name = "x" },
	};
	static const char *const lab[] = { "a", "b" };
	static const struct vperf_ctf_field_desc bad_labels[] = {
		{ .name = "x", .type = VPERF_CTF_TYPE_U64, .labels = lab, .nr_labels = 2 },
	};
	static const char *const quoted[] = { "a\"b" };
	static const struct vperf_ctf_field_desc bad_label_text[] = {
		{ .name = "x", .type = VPERF_CTF_TYPE_U8, .labels = quoted, .nr_labels = 1 },
	};
	static const struct vperf_ctf_class_desc c_space[] = { { "bad name", ok, 1 } };
	static const struct vperf_ctf_class_desc c_keyword[] = { { "event", ok, 1 } };
	static const struct vperf_ctf_class_desc c_under[] = { { "c", underscore, 1 } };
	static const struct vperf_ctf_class_desc c_twice[] = { { "c", twice, 2 } };
	static const struct vperf_ctf_class_desc c_len[] = { { "c", len_clash, 2 } };
	static const struct vperf_ctf_class_desc c_notype[] = { { "c", no_type, 1 } };
	static const struct vperf_ctf_class_desc c_labels[] = { { "c", bad_labels, 1 } };
	static const struct vperf_ctf_class_desc c_labtext[] = { { "c", bad_label_text, 1 } };
	static const struct vperf_ctf_class_desc c_lost[] = { { "lost_events", ok, 1 } };
	static const struct vperf_ctf_class_desc c_dup[] = { { "c", ok, 1 }, { "c", ok, 1 } };
	static const struct vperf_ctf_class_desc c_nofields[] = { { "c", NULL, 1 } };
	static const struct vperf_ctf_env env_key[] = { { "bad-key", "v", false } };
	static const struct vperf_ctf_env env_quote[] = { { "k", "say \"hi\"", false } };
	static const struct vperf_ctf_env env_builtin[] = { { "hostname", "h", false } };
	static const struct vperf_ctf_env env_twice[] = { { "k", "1", false }, { "k", "2", false } };
	static const struct vperf_ctf_env env_notint[] = { { "k", "2b", true } };
	const struct {
		int line;
		struct vperf_ctf_config cfg;
		int err;
		const char *why;
	} cases[] = {
#define C(cls) .classes = cls, .nr_classes = N(cls)
		{ __LINE__, { C(c_space) }, -EINVAL,
		  "event class name \"bad name\" is not an identifier" },
		{ __LINE__, { C(c_keyword) }, -EINVAL,
		  "event class name \"event\" is not an identifier" },
		{ __LINE__, { C(c_under) }, -EINVAL,
		  "field name \"_x\" is not an identifier (or starts with '_'" },
		{ __LINE__, { C(c_twice) }, -EINVAL, "event class c: two fields named x" },
		{ __LINE__, { C(c_len) }, -EINVAL,
		  "field cc_len has the name of cc's length field" },
		{ __LINE__, { C(c_notype) }, -EINVAL, "field x has no known type (0)" },
		{ __LINE__, { C(c_labels) }, -EINVAL, "labels need a u8, u16 or u32 field" },
		{ __LINE__, { C(c_labtext) }, -EINVAL, "label 0 is empty or not printable ASCII" },
		{ __LINE__, { C(c_lost) }, -EINVAL,
		  "event class name lost_events is the writer's own" },
		{ __LINE__, { C(c_dup) }, -EINVAL, "two event classes named c" },
		{ __LINE__, { C(c_nofields) }, -EINVAL,
		  "event class c: 1 fields but no field table" },
#undef C
		{ __LINE__, { .env = env_key, .nr_env = 1 }, -EINVAL,
		  "environment key \"bad-key\" is not an identifier" },
		{ __LINE__, { .env = env_quote, .nr_env = 1 }, -EINVAL,
		  "environment value of k is NULL or not printable ASCII" },
		{ __LINE__, { .env = env_builtin, .nr_env = 1 }, -EINVAL,
		  "environment key hostname given twice" },
		{ __LINE__, { .env = env_twice, .nr_env = 2 }, -EINVAL,
		  "environment key k given twice" },
		{ __LINE__, { .env = env_notint, .nr_env = 1 }, -EINVAL,
		  "environment value of k, \"2b\", is not a decimal integer" },
		{ __LINE__, { .env = NULL, .nr_env = 1 }, -EINVAL,
		  "1 environment entries but no table" },
		{ __LINE__, { .hostname = "tab\there" }, -EINVAL, "environment value of hostname" },
		{ __LINE__, { .layers = 1u << 7 }, -EINVAL, "layers 0x80: unknown layer bits" },
		{ __LINE__, { .clock_name = "event" }, -EINVAL,
		  "clock name \"event\" is not an identifier" },
		{ __LINE__, { .clock_description = "a\\b" }, -EINVAL,
		  "clock description is not printable ASCII" },
		{ __LINE__, { .clock_offset_s = -1 }, -EINVAL, "negative clock offset" },
	};
	const struct tdir *t = *state;
	struct {
		struct vperf_ctf_config cfg;
		uint64_t newer_field;
	} newer = { .cfg = { .size = sizeof(newer) }, .newer_field = 1 };
	struct vperf_ctf_config cfg;
	struct vperf_ctf *ctf = (void *)1;
	char why[512];
	int ret;

	for (size_t i = 0; i < N(cases); i++) {
		cfg = cases[i].cfg;
		cfg.size = sizeof(cfg);
		ret = vperf_ctf__new(t->trace, &cfg, &ctf, why, sizeof(why));
		if (ret != cases[i].err || !vt_contains(why, cases[i].why))
			fail_msg("case at line %d: %d \"%s\", expected %d \"%s\"", cases[i].line, ret,
				 why, cases[i].err, cases[i].why);
		assert_null(ctf);
		if (access(t->trace, F_OK) == 0)
			fail_msg("case at line %d left %s behind", cases[i].line, t->trace);
	}
	assert_int_equal(vperf_ctf__new(t->trace, &newer.cfg, &ctf, why, sizeof(why)), -E2BIG);
	assert_true(vt_contains(why, "has fields this library"));
	newer.newer_field = 0;		/* a zero tail is fine */
	vperf_ctf__delete(new_writer(t->trace, &newer.cfg));
	cfg = (struct vperf_ctf_config){ .size = 0 };
	assert_int_equal(vperf_ctf__new(t->base, &cfg, &ctf, why, sizeof(why)), -EINVAL);
	assert_true(vt_contains(why, "vperf_ctf_config.size is 0"));
}

/* ---- a killed writer -------------------------------------------------- */

#define KILL_FLUSHED	1000

/*
 * A child writes KILL_FLUSHED events in flushes of 100, then keeps
 * emitting without a flush and is killed with SIGKILL: babeltrace2 reads
 * exactly the flushed events, exit 0, no warnings.
 */
static void ctf_sigkill_leaves_every_flushed_event_readable(void **state)
{
	const struct tdir *t = *state;
	int go[2], status;
	struct bt_run r;
	char line[256];
	char c;
	pid_t pid;

	assert_int_equal(pipe(go), 0);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct vperf_ctf *ctf;
		struct vperf_ctf_stream *s[2];
		struct vperf_ctf_value v[1];
		uint64_t i;

		close(go[0]);
		if (vperf_ctf__new(t->trace, &host_cfg, &ctf, NULL, 0) ||
		    vperf_ctf__stream(ctf, VPERF_CTF_HOST_KERNEL, 0, &s[0]) ||
		    vperf_ctf__stream(ctf, VPERF_CTF_GUEST_KERNEL, 0, &s[1]))
			_exit(1);
		for (i = 0; i < KILL_FLUSHED; i++) {
			v[0] = VPERF_CTF_U32(i);
			if (vperf_ctf__emit(s[i % 2], V0_IRQ_ENTRY, 1000 * (i + 1), v, 1) ||
			    (i % 100 == 99 && vperf_ctf__flush(ctf)))
				_exit(2);
		}
		/* The first 8 of these open new streams' files. */
		for (;; i++) {
			struct vperf_ctf_stream *n;

			if (vperf_ctf__stream(ctf, VPERF_CTF_VMM, (uint32_t)i % 8, &n))
				_exit(3);
			v[0] = VPERF_CTF_U32(i);
			if (vperf_ctf__emit(n, V0_IRQ_ENTRY, 1000 * (i + 1), v, 1))
				_exit(4);
			if (i == KILL_FLUSHED + 20000 && write(go[1], "k", 1) != 1)
				_exit(5);
		}
	}
	close(go[1]);
	if (read(go[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		fail_msg("the writer died before it was killed: status %#x", status);
	}
	close(go[0]);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	read_clean(t->base, t->trace, &r);
	assert_int_equal(count_lines(r.out), KILL_FLUSHED);
	assert_true(vt_contains(r.out, "[00:00:00.000001000] " NODELTA " testhost irq_entry: "
				       HK0 ", { vector = 0 }\n"));
	snprintf(line, sizeof(line), "[00:00:00.%09d] (+0.000001000) testhost irq_entry: " GK0
		 ", { vector = %d }\n", KILL_FLUSHED * 1000, KILL_FLUSHED - 1);
	assert_true(strlen(r.out) > strlen(line));
	assert_string_equal(r.out + strlen(r.out) - strlen(line), line);
	bt_run_free(&r);
}

#define KILL_ROUNDS	20

/*
 * A child creates a writer, says so, then flushes every 500 events,
 * without end, and reports each flush done; it is killed with SIGKILL 1 to
 * 39 ms after it said so, mostly in the middle of a flush.  Every time
 * babeltrace2 reads the trace with exit 0 and no warnings, with at least
 * every event of the last flush reported done.
 */
static void ctf_sigkill_during_flushes_never_leaves_a_broken_trace(void **state)
{
	const struct tdir *t = *state;
	char dir[PATH_MAX];

	for (int round = 0; round < KILL_ROUNDS; round++) {
		uint64_t done = 0, n;
		int report[2], status;
		struct bt_run r;
		pid_t pid;

		snprintf(dir, sizeof(dir), "%s/kill%d", t->base, round);
		assert_int_equal(pipe(report), 0);
		fflush(stdout);
		pid = fork();
		assert_true(pid >= 0);
		if (!pid) {
			const uint64_t chain[16] = { 0 };
			struct vperf_ctf_stream *s[4];
			struct vperf_ctf *ctf;

			close(report[0]);
			if (vperf_ctf__new(dir, &host_cfg, &ctf, NULL, 0))
				_exit(1);
			for (uint32_t i = 0; i < 4; i++)
				if (vperf_ctf__stream(ctf, VPERF_CTF_GUEST_KERNEL, i, &s[i]))
					_exit(2);
			if (write(report[1], &done, sizeof(done)) != sizeof(done))
				_exit(5);
			for (uint64_t i = 1;; i++) {
				struct vperf_ctf_value v[] = {
					VPERF_CTF_U64(i), VPERF_CTF_U32(1), VPERF_CTF_U32(1),
					VPERF_CTF_SEQ(chain, 2), VPERF_CTF_SEQ(chain, 16),
				};

				if (vperf_ctf__emit(s[i % 4], V0_SAMPLE, i, v, N(v)))
					_exit(3);
				if (i % 500 == 0 && (vperf_ctf__flush(ctf) ||
						     write(report[1], &i, sizeof(i)) != sizeof(i)))
					_exit(4);
			}
		}
		close(report[1]);
		if (read(report[0], &n, sizeof(n)) != sizeof(n)) {
			waitpid(pid, &status, 0);
			fail_msg("round %d: the writer failed to start: status %#x", round, status);
		}
		usleep(1000 + (useconds_t)round * 1931 % 38000);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status))
			fail_msg("round %d: the writer exited with %#x before it was killed", round,
				 status);
		while (read(report[0], &n, sizeof(n)) == sizeof(n))
			done = n;
		close(report[0]);

		run_babeltrace2(t->base, dir, &r);
		if (r.status != 0 || r.err[0] || count_lines(r.out) < done)
			fail_msg("round %d: killed after %llu events flushed: babeltrace2 exit %d, "
				 "%zu events, stderr:\n%s", round, (unsigned long long)done, r.status,
				 count_lines(r.out), r.err);
		printf("round %2d: killed after %6llu events flushed, %6zu read back\n", round,
		       (unsigned long long)done, count_lines(r.out));
		bt_run_free(&r);
	}
}

/* ---- throughput ------------------------------------------------------- */

#define RATE_EVENTS	100000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * RATE_EVENTS samples (2 values, an 8-deep callchain) on 4 streams,
 * flushed every 10000, all read back.  Prints the writer's rate, a
 * figure, not a verdict.
 */
static void ctf_many_samples_all_read_back_and_rate_is_printed(void **state)
{
	const struct tdir *t = *state;
	struct vperf_ctf *ctf = new_writer(t->trace, &host_cfg);
	struct vperf_ctf_stream *s[4];
	uint64_t values[2], chain[8];
	double t0, t1;
	struct bt_run r;
	char path[PATH_MAX];
	struct stat st;
	off_t bytes = 0;

	for (int i = 0; i < 4; i++)
		s[i] = stream(ctf, VPERF_CTF_GUEST_KERNEL, (uint32_t)i);
	t0 = now();
	for (uint64_t i = 0; i < RATE_EVENTS; i++) {
		values[0] = i * 1000;
		values[1] = i * 7;
		for (int k = 0; k < 8; k++)
			chain[k] = 0xffffffff81000000ull + i + (uint64_t)k * 0x100;
		EMIT(ctf, s[i % 4], V0_SAMPLE, 1000 + i * 100, VPERF_CTF_U64(chain[0]),
		     VPERF_CTF_U32(1000 + (uint32_t)(i % 4)), VPERF_CTF_U32(1000 + (uint32_t)(i % 4)),
		     VPERF_CTF_SEQ(values, 2), VPERF_CTF_SEQ(chain, 8));
		if (i % 10000 == 9999)
			flush(ctf);
	}
	flush(ctf);
	t1 = now();
	vperf_ctf__delete(ctf);
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/guest_kernel_cpu%d", t->trace, i);
		assert_int_equal(stat(path, &st), 0);
		bytes += st.st_size;
	}
	printf("ctf writer: %d sample events in %.3f s: %.0f events/s (emit + flush), "
	       "%.1f bytes/event on disk\n", RATE_EVENTS, t1 - t0, RATE_EVENTS / (t1 - t0),
	       (double)bytes / RATE_EVENTS);

	read_clean(t->base, t->trace, &r);
	assert_int_equal(count_lines(r.out), RATE_EVENTS);
	bt_run_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ctf_known_trace_reads_back_exactly_without_warnings,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_every_field_type_reads_back_at_its_limits,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_clock_and_environment_are_in_the_metadata,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_env_added_at_the_end_reaches_the_metadata_and_never_changes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_streams_are_one_per_layer_and_cpu_and_empty_traces_read,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_lost_events_show_as_discarded_with_their_count,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_loss_before_first_event_shows_with_its_count,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_bad_values_are_refused_and_the_trace_stays_readable,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_timestamps_going_back_are_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_existing_nonempty_directory_is_refused_untouched,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_trace_is_private_and_its_files_are_never_links,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_existing_directory_must_be_private_and_the_callers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_bad_configs_are_refused_and_leave_nothing,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_sigkill_leaves_every_flushed_event_readable,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_sigkill_during_flushes_never_leaves_a_broken_trace,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ctf_many_samples_all_read_back_and_rate_is_printed,
						setup, teardown),
	};

	return VT_MAIN("ctf", tests, NULL, NULL);
}
