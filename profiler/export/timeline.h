/* SPDX-License-Identifier: MIT */
/*
 * vperf timeline: a recording drawn as one self-contained SVG (docs/report.md, section 4): a time
 * axis, one row per CPU and per thread, running slices, samples, process events, losses and
 * markers, and a legend.  The pieces with known answers (the axis's ticks and their labels, the
 * merging of spans closer than a pixel) are here for the unit tests.  0 or a negative errno;
 * never prints but to out.
 */
#ifndef VPERF_TIMELINE_H
#define VPERF_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "session.h"
#include "slices.h"

#define VPERF_TIMELINE_MIN_WIDTH	400
#define VPERF_TIMELINE_MAX_WIDTH	20000
#define VPERF_TIMELINE_DEFAULT_WIDTH	1600

/* The axis: a tick every step ns from 0 (the recording's start) to the span, labelled in unit. */
struct vperf_timeline_ticks {
	uint64_t step;			/* 1, 2 or 5 times a power of ten, in ns */
	unsigned int nr;		/* ticks: 0, step, ... up to the span */
	const char *unit;		/* "s", "ms", "us", "ns" */
	uint64_t unit_ns;
	unsigned int decimals;		/* of a label in unit */
};

/*
 * The ticks for span ns drawn over px pixels with labels at least min_px apart: the smallest
 * step of 1, 2 or 5 x 10^k ns that is, in the largest unit not above the span (ns for 0).
 */
void vperf_timeline_ticks(uint64_t span, double px, double min_px,
			  struct vperf_timeline_ticks *t);

/* The label of the tick at offset ns: "2.5 s", "150 ms". */
void vperf_timeline_label(const struct vperf_timeline_ticks *t, uint64_t offset, char *buf,
			  size_t len);

struct vperf_timeline_span {
	uint64_t start, end;
	int32_t who;			/* a thread's index; spans of different ones never merge */
};

/*
 * Merge spans (sorted by start) that overlap or whose gap is below min_gap ns (a pixel's worth)
 * into one, in place, when they are of the same who.  Returns the spans left.
 */
size_t vperf_timeline_merge(struct vperf_timeline_span *s, size_t n, uint64_t min_gap);

/* who of a span that holds several threads' spans (merge_mixed) */
#define VPERF_TIMELINE_MIXED	(-1)

/*
 * For a CPU's row, after vperf_timeline_merge(): consecutive spans shorter than min_gap (a pixel)
 * and less than min_gap apart, of different threads, become one span whose who is
 * VPERF_TIMELINE_MIXED: threads taking turns faster than a pixel.  Spans of a pixel or more keep
 * their thread.  In place; returns the spans left.
 */
size_t vperf_timeline_merge_mixed(struct vperf_timeline_span *s, size_t n, uint64_t min_gap);

/*
 * Write r's timeline, width px wide, as SVG to out: the window from `from` to `to` ns after the
 * recording's first event (0, UINT64_MAX: all of it), the threads alive in it.  0, -ENOMEM, or
 * -ERANGE (from is past the recording's end; why says so).
 */
int vperf_timeline_svg(struct vperf_report *r, unsigned int width, uint64_t from, uint64_t to,
		       FILE *out, char *why, size_t why_len) __attribute__((warn_unused_result));

#endif /* VPERF_TIMELINE_H */
