// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the raw-recording-to-CTF converter (vperf_convert(), convert.c), on raw
 * recordings whose every byte is the input's, guest records included: nothing in them was
 * validated by libvperf-hv first, as in a damaged or forged file.
 *
 * Input: a raw recording (hv/include/vperf/rawrec.h) as it is, when it starts with its magic
 * "VPERFRAW"; otherwise two bytes of parameters, then the chunks that follow a header made
 * here (so that mutations spend themselves on the chunks):
 *   byte 0: bits 0-1 the vCPUs - 1; bit 2: give the converter a guest System.map (find_guest_
 *           ksyms()); bit 3: no VM name (the default "vm0");
 *   byte 1: tsc_khz = 20000 * byte (0: 1 kHz, the slowest clock there can be).
 * The raw file is a memfd, the trace is written to /dev/shm.
 *
 * Checked besides ASan and UBSan: a refusal is a negative errno with a reason; a conversion's
 * statistics add up (records by type, unmapped within them, vCPUs as the header says); and its
 * trace is well-formed (ctf-check.h: metadata, every packet of every stream file), babeltrace2
 * reads it to its end in time order, and holds exactly the events the statistics count (those
 * of class lost_events aside).
 *
 * With VPERF_FUZZ_KEEP=DIR in the environment each trace is kept as DIR/<n> (seeds for
 * fuzz-report: make-seeds.py).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vperf/abi.h>
#include <vperf/rawrec.h>

#include "convert.h"
#include "ctf-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/*
 * libtraceevent 1.7 leaks a few bytes parsing some formats it accepts (a field named
 * VIF_PR_FMT, for one: regress-libtraceevent-leaks-on-a-field-name in corpus-hostevents):
 * not vperf's, and not to stop the fuzzer on.  Only what libtraceevent allocates itself is let go.
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const layers[] = { "host_kernel", "vmm", "guest_kernel", "guest_user",
				      "host_user" };

static char work[64], trace[96], kallsyms[96], raw_path[64];
static int raw_fd = -1;
static const char *keep;
static unsigned int kept;

/* The guest kernel's map: "schedule" is what vperf_guest.ko's kernel text record names. */
static const char guest_map[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T schedule\n"
	"ffffffff81000180 t schedule_idle\n"
	"ffffffff81000200 T do_syscall_64\n"
	"ffffffff81000400 T _etext\n";

/* The work folder goes with the process (a crash leaves it: it holds what was being written). */
static void remove_work(void)
{
	fuzz_rm_trace(trace);
	unlink(kallsyms);
	rmdir(work);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f;

	(void)argc;
	(void)argv;
	snprintf(work, sizeof(work), "/dev/shm/vperf-fuzz-convert-%d", (int)getpid());
	if (mkdir(work, 0700) && errno != EEXIST)
		fuzz_fail("cannot make %s", work);
	snprintf(trace, sizeof(trace), "%s/trace", work);
	snprintf(kallsyms, sizeof(kallsyms), "%s/System.map", work);
	f = fopen(kallsyms, "w");
	if (!f || fputs(guest_map, f) < 0 || fclose(f))
		fuzz_fail("cannot write %s", kallsyms);
	raw_fd = memfd_create("vperf-fuzz-raw", MFD_CLOEXEC);
	if (raw_fd < 0)
		fuzz_fail("memfd_create");
	snprintf(raw_path, sizeof(raw_path), "/proc/self/fd/%d", raw_fd);
	keep = getenv("VPERF_FUZZ_KEEP");
	bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
	atexit(remove_work);
	return 0;
}

static void put_raw(const void *p, size_t n, off_t at)
{
	if (n && pwrite(raw_fd, p, n, at) != (ssize_t)n)
		fuzz_fail("writing the raw file");
}

static void check_stats(const struct vperf_convert_stats *st, unsigned int nr_vcpus)
{
	uint64_t by_type = 0;

	for (size_t i = 0; i < sizeof(st->guest_by_type) / sizeof(st->guest_by_type[0]); i++)
		by_type += st->guest_by_type[i];
	if (by_type != st->guest_records || st->guest_unmapped > st->guest_records ||
	    st->guest_by_type[0] || st->nr_vcpus != nr_vcpus ||
	    st->guest_refused_bytes < st->guest_refused_records ||
	    st->guest_module_syms > st->guest_ksyms || st->size != sizeof(*st))
		fuzz_fail("statistics that do not add up: %" PRIu64 " records, %" PRIu64 " by type, "
			  "%" PRIu64 " unmapped, %u vCPUs (header: %u)", st->guest_records, by_type,
			  st->guest_unmapped, st->nr_vcpus, nr_vcpus);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vperf_convert_opts opts = { .size = sizeof(opts), .vm_name = "vm1" };
	struct vperf_convert_stats st = { .size = sizeof(st) };
	unsigned int nr_vcpus;
	char why[512] = "";
	struct fuzz_bt2 bt;
	int err;

	if (ftruncate(raw_fd, 0))
		fuzz_fail("ftruncate");
	if (size >= 8 && !memcmp(data, VPERF_RAWREC_MAGIC, 8)) {
		const struct vperf_rawrec_header *h = (const void *)data;

		put_raw(data, size, 0);
		nr_vcpus = size >= sizeof(*h) ? h->nr_vcpus : 0;
	} else {
		struct vperf_rawrec_header h = {
			.size = sizeof(h), .version = VPERF_RAWREC_VERSION, .start_tsc = 1000000000,
			.start_realtime_ns = 1700000000ull * 1000000000ull, .start_monotonic_ns = 5,
		};

		if (size < 2)
			return 0;
		memcpy(h.magic, VPERF_RAWREC_MAGIC, 8);
		h.nr_vcpus = 1 + (data[0] & 3);
		h.tsc_khz = data[1] ? 20000ull * data[1] : 1;
		if (data[0] & 4)
			opts.guest_kallsyms = kallsyms;
		if (data[0] & 8)
			opts.vm_name = NULL;
		put_raw(&h, sizeof(h), 0);
		put_raw(data + 2, size - 2, sizeof(h));
		nr_vcpus = h.nr_vcpus;
	}
	opts.guest_vdso_note = "none: fuzzing";
	err = vperf_convert(raw_path, trace, &opts, &st, why, sizeof(why));
	if (err) {
		if (err >= 0 || !why[0] || strlen(why) >= sizeof(why))
			fuzz_fail("vperf_convert: %d without a reason", err);
		fuzz_rm_trace(trace);	/* a writer that failed half-way leaves its trace */
		return 0;
	}
	check_stats(&st, nr_vcpus);
	fuzz_check_trace_files(trace, layers, sizeof(layers) / sizeof(layers[0]));
	fuzz_bt2_read(trace, &bt);
	if (bt.events - bt.lost_events != st.events)
		fuzz_fail("babeltrace2 read %" PRIu64 " events (%" PRIu64 " lost_events), the converter "
			  "wrote %" PRIu64, bt.events, bt.lost_events, st.events);
	if (keep) {
		char to[4096];

		snprintf(to, sizeof(to), "%s/%u", keep, kept++);
		if (rename(trace, to))
			fuzz_fail("cannot keep %s as %s", trace, to);
		return 0;
	}
	fuzz_rm_trace(trace);
	return 0;
}
