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

#include "rec_classes.h"

static int emit(struct vperf_ctf_stream *s, unsigned int cls, uint64_t ts,
		const struct vperf_ctf_value *v, size_t n)
{
	int err = vperf_ctf__emit(s, cls, ts, v, n);

	if (err)
		fprintf(stderr, "vt-hostile-rec: event %u at %llu: %d\n", cls,
			(unsigned long long)ts, err);
	return err;
}

static int sample(struct vperf_ctf_stream *s, uint64_t ts, uint32_t tid, uint64_t ip)
{
	uint64_t period = 1000, chain[2] = { ip, BASE + 0x10 };
	struct vperf_ctf_value v[5] = {
		VPERF_CTF_U64(ip), VPERF_CTF_U32(100), VPERF_CTF_U32(tid),
		VPERF_CTF_SEQ(&period, 1), VPERF_CTF_SEQ(chain, 2),
	};

	return emit(s, VPERF_CTF_EV_SAMPLE, ts, v, 5);
}

static int mmap_at(struct vperf_ctf_stream *s, uint64_t ts, uint64_t start, const char *file)
{
	struct vperf_ctf_value v[7] = {
		VPERF_CTF_U32(100), VPERF_CTF_U32(100), VPERF_CTF_U64(start),
		VPERF_CTF_U64(1ull << 30), VPERF_CTF_U64(0), VPERF_CTF_U32(5), VPERF_CTF_STR(file),
	};

	return emit(s, C_MMAP, ts, v, 7);
}

int main(int argc, char **argv)
{
	struct vperf_ctf_class_desc cls[NR_C];
	/* "HOSTILE" in the metadata's values is where the test puts control bytes */
	struct vperf_ctf_env env[] = { { "events", "cpu-clock", false },
				       { "callchains", "1", false },
				       { "recorder", "vperf record", false },
				       { "target", "HOSTILE target", false } };
	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .hostname = "HOSTILE-host",
					.env = env, .nr_env = 4, .classes = cls,
					.nr_classes = NR_C };
	struct vperf_ctf_stream *k, *u;
	struct vperf_ctf *ctf;
	uint64_t ts = 10;
	char why[256];
	int err = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: vt-hostile-rec DIR [FILE...]\n");
		return 2;
	}
	vt_rec_classes(cls);
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
	{
		struct vperf_ctf_value ex[3] = { VPERF_CTF_U32(100), VPERF_CTF_U32(100),
						 VPERF_CTF_STR(comm_osc) };
		struct vperf_ctf_value cm[3] = { VPERF_CTF_U32(100), VPERF_CTF_U32(101),
						 VPERF_CTF_STR(comm_bidi) };
		struct vperf_ctf_value sw[5] = { VPERF_CTF_U32(100), VPERF_CTF_STR(comm_osc),
						 VPERF_CTF_U64(1), VPERF_CTF_U32(102),
						 VPERF_CTF_STR(comm_sep) };
		struct vperf_ctf_value ks[4] = { VPERF_CTF_U64(0xffffffff81000000ull),
						 VPERF_CTF_U64(0x100), VPERF_CTF_STR(ksym_name),
						 VPERF_CTF_STR(ksym_mod) };

		err = err ? err : emit(k, VPERF_CTF_EV_PROCESS_EXEC, ts++, ex, 3);
		err = err ? err : mmap_at(k, ts++, BASE, hostile_file);
		for (int i = 2; i < argc; i++)
			err = err ? err : mmap_at(k, ts++, BASE + (uint64_t)(i - 1) * (1ull << 30),
						  argv[i]);
		err = err ? err : emit(k, C_COMM, ts++, cm, 3);
		err = err ? err : emit(k, VPERF_CTF_EV_SCHED_SWITCH, ts++, sw, 5);
		err = err ? err : sample(u, ts++, 100, BASE + 0x100);
		err = err ? err : sample(k, ts++, 101, 0xffffffff81000010ull);
		for (int i = 2; i < argc; i++)
			err = err ? err : sample(u, ts++, 102,
						 BASE + (uint64_t)(i - 1) * (1ull << 30) + 0x40);
		for (size_t i = 0; i < sizeof(marker_names) / sizeof(marker_names[0]); i++) {
			struct vperf_ctf_value mk[3] = { VPERF_CTF_STR(marker_names[i]),
							 VPERF_CTF_S64((int64_t)i),
							 VPERF_CTF_U8(2) };

			err = err ? err : emit(k, VPERF_CTF_EV_MARKER, ts++, mk, 3);
		}
		err = err ? err : emit(k, C_KSYM, ts, ks, 4);
	}
	if (!err && vperf_ctf__flush(ctf)) {
		fprintf(stderr, "vt-hostile-rec: %s\n", vperf_ctf__strerror(ctf));
		err = 1;
	}
	vperf_ctf__delete(ctf);
	return err ? 1 : 0;
}
