/* SPDX-License-Identifier: MIT */
/* A recording's events read into a report (sink.c).  Internal to profiler/report. */
#ifndef VPERF_REPORT_SINK_H
#define VPERF_REPORT_SINK_H

#include <stddef.h>

struct vperf_report;

/*
 * Decode dir's trace (decode.h) and take its events into r: samples and their frames, maps,
 * threads, timeline events, kernel symbols, the environment and the clock.  0, or -errno with
 * why saying what (a recording of another schema, damaged, out of memory).
 */
int vperf__sink_read(struct vperf_report *r, const char *dir, char *why, size_t why_len);

#endif
