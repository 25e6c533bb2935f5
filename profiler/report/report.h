/* SPDX-License-Identifier: MIT */
/*
 * vperf_report: a recording read back for reports (docs/report.md): its samples with each
 * frame's symbol, and the histograms `vperf report` prints and `vperf export` writes.
 *
 *	struct vperf_report *r;
 *	if (vperf_report__open(dir, &r, why, sizeof(why)))		// babeltrace2 reads dir
 *		fail(why);
 *	for (size_t i = 0; i < r->nr_samples; i++)
 *		for (each frame f of sample i)
 *			vperf_report__frame(r, f)->sym ...	// resolved once, cached
 *	vperf_report__delete(r);
 *
 * The recording is read with libbabeltrace2 (source.ctf.fs, filter.utils.muxer, and a sink of
 * ours that keeps what a report needs).  User-space frames resolve through the recording's
 * mmap events to the ELF symbols of the files they name (libelf), kernel frames through its
 * kernel_symbol events.  Analyses read the recording, and the executables and libraries it
 * names (as perf report does): a file rebuilt since the recording gives wrong names.
 *
 * 0 or a negative errno everywhere; a library function never prints.
 */
#ifndef VPERF_REPORT_H
#define VPERF_REPORT_H

/* Each object has its header; this one gathers them, for a user of all of them. */
#include "containers.h"
#include "exits.h"
#include "hist.h"
#include "session.h"
#include "slices.h"
#include "space.h"
#include "states.h"
#include "symbols.h"

#endif /* VPERF_REPORT_H */
