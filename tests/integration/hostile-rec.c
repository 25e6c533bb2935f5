// SPDX-License-Identifier: MIT
/*
 * vt-hostile-rec DIR [FILE...]: write a vperf recording whose every name is hostile, for
 * hostile_tests.py: thread names, an exec'd file, markers, a mapped file and kernel symbols made
 * of terminal escapes (an OSC 52 that would write the clipboard, CSI sequences), C1 controls,
 * bidirectional overrides, a line separator and the noncharacters U+FFFE and U+FFFF.  The CTF
 * writer refuses invalid UTF-8, so names hold "@BAD@" where the test puts five invalid bytes
 * into the stream files afterwards (the same length: the strings are counted).
 *
 * Process 100: thread 100 (named by an OSC 52 exec), 101 (its comm), 102 (a sched_switch's).
 * Each FILE is mapped into it at BASE + i * 1 GiB with one sample of thread 102 there, so that
 * the report opens it; one more mapping names a file with escapes in its path.  Samples are
 * cpu-clock, period 1000, with callchains.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctf.h"
#include "schema.h"

#define OSC52	"\x1b]52;c;SGFja2Vk\x07"	/* "Hacked" to the clipboard */
#define BASE	0x400000ull

static const char *const comm_osc = OSC52 "osc";
static const char *const comm_bidi = "bidi\xe2\x80\xae" "evil\xc2\x9b" "31m@BAD@";
static const char *const comm_sep = "line\xe2\x80\xa8" "sep\x7f\xef\xbf\xbe@BAD@";
static const char *const hostile_file = "/nonexistent/\x1b[31mred\x1b[0m\x07\xef\xbf\xbf.so";
static const char *const ksym_name = "kfunc\x1b[2J\xef\xbf\xbf@BAD@";
static const char *const ksym_mod = "[mod\x07]";
static const char *const marker_names[] = {
	"mark\x1b]8;;http://evil\x07link\x1b]8;;\x07", "begin\xc2\x85@BAD@", "tab\there\nnl",
};

/* CHECK(emitter call): 0, or -errno said on stderr. */
#define CHECK(call) ({									\
	int e_ = (call);								\
	if (e_)										\
		fprintf(stderr, "vt-hostile-rec: %s: %d\n", #call, e_);			\
	e_;										\
})

static int sample(struct vperf_ctf_stream *s, uint64_t ts, uint32_t tid, uint64_t ip)
{
	uint64_t period = 1000, chain[2] = { ip, BASE + 0x10 };

	return CHECK(vperf_ev__sample(s, ts, &(struct vperf_ev_sample){
		.ip = ip, .pid = 100, .tid = tid, .counts = &period, .nr_counts = 1,
		.counts_are = VPERF_COUNTS_ARE_PERIOD, .callchain = chain, .nr_callchain = 2 }));
}

static int mmap_at(struct vperf_ctf_stream *s, uint64_t ts, uint64_t start, const char *file)
{
	return CHECK(vperf_ev__mmap(s, ts, &(struct vperf_ev_mmap){
		.pid = 100, .tid = 100, .start = start, .len = 1ull << 30, .prot = 5,
		.filename = file }));
}

int main(int argc, char **argv)
{
	struct vperf_schema sch;
	/* "HOSTILE" in the metadata's values is where the test puts control bytes */
	struct vperf_ctf_env env[] = { VPERF_SCHEMA_ENV, { "events", "cpu-clock", false },
				       { "callchains", "1", false },
				       { "recorder", "vperf record", false },
				       { "target", "HOSTILE target", false } };
	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "HOSTILE-host",
					.env = env, .nr_env = 5, .classes = sch.classes,
					.nr_classes = VPERF_EV_NR };
	struct vperf_ctf_stream *k, *u;
	struct vperf_ctf *ctf;
	uint64_t ts = 10;
	char why[256];
	int err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: vt-hostile-rec DIR [FILE...]\n");
		return 2;
	}
	vperf_schema__init(&sch, NULL, 0);
	if (vperf_ctf__new(argv[1], &cfg, &ctf, why, sizeof(why))) {
		fprintf(stderr, "vt-hostile-rec: %s: %s\n", argv[1], why);
		return 1;
	}
	if (vperf_ctf__stream(ctf, VPERF_CTF_HOST_KERNEL, 0, &k) ||
	    vperf_ctf__stream(ctf, VPERF_CTF_HOST_USER, 0, &u)) {
		fprintf(stderr, "vt-hostile-rec: %s\n", vperf_ctf__strerror(ctf));
		vperf_ctf__delete(ctf);
		return 1;
	}
	err = CHECK(vperf_ev__process_exec(k, ts++, &(struct vperf_ev_process_exec){
		.pid = 100, .tid = 100, .comm = comm_osc }));
	err = err ? err : mmap_at(k, ts++, BASE, hostile_file);
	for (int i = 2; i < argc; i++)
		err = err ? err : mmap_at(k, ts++, BASE + (uint64_t)(i - 1) * (1ull << 30),
					  argv[i]);
	err = err ? err : CHECK(vperf_ev__comm(k, ts++, &(struct vperf_ev_comm){
		.pid = 100, .tid = 101, .comm = comm_bidi }));
	err = err ? err : CHECK(vperf_ev__sched_switch(k, ts++, &(struct vperf_ev_sched_switch){
		.prev_tid = 100, .prev_comm = comm_osc, .prev_state = 1, .next_tid = 102,
		.next_comm = comm_sep }));
	err = err ? err : sample(u, ts++, 100, BASE + 0x100);
	err = err ? err : sample(k, ts++, 101, 0xffffffff81000010ull);
	for (int i = 2; i < argc; i++)
		err = err ? err : sample(u, ts++, 102,
					 BASE + (uint64_t)(i - 1) * (1ull << 30) + 0x40);
	for (size_t i = 0; i < sizeof(marker_names) / sizeof(marker_names[0]); i++)
		err = err ? err : CHECK(vperf_ev__marker(k, ts++, &(struct vperf_ev_marker){
			.name = marker_names[i], .value = i, .kind = 2 }));
	err = err ? err : CHECK(vperf_ev__kernel_symbol(k, ts, &(struct vperf_ev_kernel_symbol){
		.addr = 0xffffffff81000000ull, .size = 0x100, .name = ksym_name,
		.module = ksym_mod }));
	if (!err && vperf_ctf__flush(ctf)) {
		fprintf(stderr, "vt-hostile-rec: %s\n", vperf_ctf__strerror(ctf));
		err = 1;
	}
	vperf_ctf__delete(ctf);
	return err ? 1 : 0;
}
