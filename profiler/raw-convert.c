// SPDX-License-Identifier: MIT
/*
 * The raw recording into the CTF recording, for the commands that record a VM (vm record, kvm
 * record): the output directory with its raw subdirectory, the conversion (record/convert.h),
 * and the summary of what the recording holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "raw-convert.h"
#include "util/options.h"
#include "util/recdir.h"

#ifdef VPERF_HAVE_RECORD
#include <vperf/abi.h>
#include "convert.h"
#include "ksyms.h"
#endif

#define RAW_SUBDIR		RECDIR_RAW
#define GUEST_FILES_SUBDIR	RECDIR_GUEST_FILES

int rawconv_check(const struct cli_usage *u, const char *output, char *dir, size_t len)
{
	snprintf(dir, len, "%s", output ? output : RECDIR_DEFAULT);
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	return recdir_check(u, dir, sizeof("/" RAW_SUBDIR "/" RAW_NAME));
}

int rawconv_prepare(const char *cmd, const char *dir, char *raw, size_t raw_len)
{
	char sub[PATH_MAX + 8];

	if (snprintf(raw, raw_len, "%s/" RAW_SUBDIR "/" RAW_NAME, dir) >= (int)raw_len)
		return cli_error(cmd, "-o '%s': the path is too long", dir);
	if (recdir_prepare(cmd, dir))
		return 1;
	snprintf(sub, sizeof(sub), "%s/" RAW_SUBDIR, dir);
	if (mkdir(sub, 0755))
		return cli_error(cmd, "creating %s: %s", sub, strerror(errno));
	return 0;
}

#ifdef VPERF_HAVE_RECORD
static const char *const guest_type_names[] = {
	[VPERF_TRACE_SCHED_SWITCH] = "sched_switch",
	[VPERF_TRACE_SCHED_WAKEUP] = "sched_wakeup",
	[VPERF_TRACE_FORK] = "process_fork",
	[VPERF_TRACE_EXEC] = "process_exec",
	[VPERF_TRACE_EXIT] = "process_exit",
	[VPERF_TRACE_IRQ] = "irq_entry",
	[VPERF_TRACE_SAMPLE] = "sample",
	[VPERF_TRACE_MARK] = "marker",
	[VPERF_TRACE_LOST] = "lost",
	[VPERF_TRACE_MMAP] = "mmap",
};

int rawconv_convert(const char *cmd, const char *dir, const char *raw, uint64_t raw_size)
{
	struct vperf_convert_opts opts = { .size = sizeof(opts) };
	struct vperf_convert_stats st = { .size = sizeof(st) };
	char aside[PATH_MAX + 32], rawdir[PATH_MAX + 8], aside_raw[PATH_MAX + 48], why[512] = "";
	char kmap[PATH_MAX + 64], kmap_as[PATH_MAX + 64], vdso[PATH_MAX + 64], vdso_note[160];
	struct stat sb;
	char types[512] = "";
	const char *slash = strrchr(dir, '/');
	size_t o = 0;
	uint64_t lost;
	int err, back;

	/* the writer wants an empty directory: the raw recording waits beside it meanwhile */
	snprintf(rawdir, sizeof(rawdir), "%s/" RAW_SUBDIR, dir);
	if (slash)
		snprintf(aside, sizeof(aside), "%.*s/.%s.vraw-%ld", (int)(slash - dir), dir, slash + 1,
			 (long)getpid());
	else
		snprintf(aside, sizeof(aside), ".%s.vraw-%ld", dir, (long)getpid());
	snprintf(aside_raw, sizeof(aside_raw), "%s/" RAW_NAME, aside);
	if (rename(rawdir, aside))
		return cli_error(cmd, "moving %s aside for the conversion: %s", rawdir,
				 strerror(errno));
	/* the guest kernel's symbols, where the runner put them (--guest-files) */
	snprintf(kmap, sizeof(kmap), "%s/" GUEST_FILES_SUBDIR "/System.map", aside);
	snprintf(kmap_as, sizeof(kmap_as), "%s/" GUEST_FILES_SUBDIR "/System.map", rawdir);
	if (!access(kmap, R_OK)) {
		opts.guest_kallsyms = kmap;
		opts.guest_kallsyms_as = kmap_as;	/* where it is after the conversion */
	}
	/* the guest's vDSO image, where the reader looks for it (ksyms.h) */
	snprintf(vdso, sizeof(vdso), "%s/" GUEST_FILES_SUBDIR "/vdso.so", aside);
	if (!stat(vdso, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0)
		snprintf(vdso_note, sizeof(vdso_note), "%s (%lld bytes: L1's, the same kernel's)",
			 VPERF_VDSO_GUEST_FILE, (long long)sb.st_size);
	else
		snprintf(vdso_note, sizeof(vdso_note), "none: the runner keeps one only on the nested "
			 "stack with the bundled kernel, which L1 runs too");
	opts.guest_vdso_note = vdso_note;
	err = vperf_convert(aside_raw, dir, &opts, &st, why, sizeof(why));
	back = rename(aside, rawdir) ? errno : 0;
	if (back)
		cli_warn(cmd, "moving the raw recording back from %s to %s: %s", aside, rawdir,
			 strerror(back));
	if (err && !back) {
		/* the converter names the file where it was: name it where it is */
		char *at = strstr(why, aside_raw);
		size_t alen = strlen(aside_raw), rlen = strlen(raw);

		if (at && strlen(why) - alen + rlen < sizeof(why)) {
			memmove(at + rlen, at + alen, strlen(at + alen) + 1);
			memcpy(at, raw, rlen);
		}
	}
	if (err)
		return cli_error(cmd, "converting %s into the CTF recording %s failed: %s "
				 "(%s); the raw recording stays in %s", raw, dir,
				 why[0] ? why : "no reason given", strerror(-err),
				 back ? aside_raw : raw);

	for (size_t i = 1; i < sizeof(guest_type_names) / sizeof(guest_type_names[0]) &&
			   i < sizeof(st.guest_by_type) / sizeof(st.guest_by_type[0]); i++) {
		int w;

		if (!st.guest_by_type[i] || !guest_type_names[i])
			continue;
		w = snprintf(types + o, sizeof(types) - o, "%s%s %" PRIu64, o ? ", " : "",
			     guest_type_names[i], st.guest_by_type[i]);
		if (w < 0 || (size_t)w >= sizeof(types) - o)
			break;
		o += (size_t)w;
	}
	lost = st.lost_guest + st.lost_producer + st.lost_vmm + st.lost_host;
	fprintf(stderr, "[ vperf %s: %" PRIu64 " events over %.3f s, %u vCPUs: %" PRIu64
		" guest records%s%s%s, %" PRIu64 " VMM exits, %" PRIu64 " host kernel events ]\n", cmd,
		st.events, (double)st.duration_ns / 1e9, st.nr_vcpus, st.guest_records,
		types[0] ? " (" : "", types, types[0] ? ")" : "", st.vmm_exits, st.host_events);
	fprintf(stderr, "[ vperf %s: lost %" PRIu64 ": guest rings %" PRIu64 ", guest "
		"producers %" PRIu64 ", VMM exits %" PRIu64 ", host kernel %" PRIu64 "; refused guest "
		"bytes %" PRIu64 "%s ]\n", cmd, lost, st.lost_guest, st.lost_producer, st.lost_vmm,
		st.lost_host, st.lost_invalid_bytes, lost ? " (babeltrace2 warns where)" : "");
	if (st.guest_bad_headers)
		fprintf(stderr, "[ vperf %s: the guest broke a trace ring's header: %" PRIu64 " drains "
			"refused (its records since are lost; guest_ring_invalid events say which vCPU) ]\n", cmd,
			st.guest_bad_headers);
	if (st.guest_unmapped)
		fprintf(stderr, "[ vperf %s: %" PRIu64 " guest records left out: no clock "
			"mapping for their vCPU ]\n", cmd, st.guest_unmapped);
	if (st.truncated)
		fprintf(stderr, "[ vperf %s: the raw recording was cut short (its recorder did not "
			"finish it): converted up to its last whole chunk ]\n", cmd);
	if (st.host_events_missing)
		fprintf(stderr, "[ vperf %s: no host kernel events: the recording's metadata "
			"(host_events) says why ]\n", cmd);
	fprintf(stderr, "[ vperf %s: Captured and wrote %.3f MB %s (raw recording %.3f MB in "
		"%s) ]\n", cmd, (double)recdir_bytes(dir) / 1e6, dir, (double)raw_size / 1e6, raw);
	return 0;
}
#endif

