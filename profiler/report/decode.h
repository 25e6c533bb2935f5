/* SPDX-License-Identifier: MIT */
/*
 * A recording's CTF trace decoded by libbabeltrace2 (source.ctf.fs -> filter.utils.muxer -> a
 * simple sink), its events handed to a callback in time order.  Internal to profiler/report.
 *
 * A recording is hostile input, and babeltrace2 2.0.4's CTF decoder (Debian 12) crashes, aborts
 * on an assertion, or allocates without bound on some damaged packets (tests/fuzz/README.md).  So
 * vperf_report_decode() first decodes the whole trace in a child process, bounded in memory,
 * and decodes it here only if that child reached the end: a recording that would crash the
 * decoder is refused with a reason, and nothing of it is read.
 */
#ifndef VPERF_REPORT_DECODE_H
#define VPERF_REPORT_DECODE_H

#include <stddef.h>

#include <babeltrace2/babeltrace.h>

/* One event message, borrowed for the call.  0 goes on; -errno stops the decoding with it. */
typedef int (*vperf_report_event_fn)(void *data, const bt_message *msg);

/*
 * Decode the CTF trace in dir (vetted in a child first) and give each event to fn.  0, fn's
 * -errno, or -EIO / -ENOMEM with a reason for a person in why.
 */
int vperf_report_decode(const char *dir, vperf_report_event_fn fn, void *data, char *why,
			size_t len) __attribute__((warn_unused_result));

/*
 * The child's memory bound for a trace of trace_bytes bytes: 1 GiB and 4 bytes per byte
 * (vperf report itself reads a 15 MiB recording within 300 MiB of address space).
 */
unsigned long long vperf_report_decode_mem_limit(unsigned long long trace_bytes);

#endif
