/* SPDX-License-Identifier: MIT */
/*
 * vperf_export: a recording's samples in other tools' formats (docs/report.md), one file per
 * format behind one table, as `vperf export --to NAME` finds them:
 *   folded  collapsed stacks, "comm;root;...;leaf count" per line: flamegraph.pl, speedscope,
 *           inferno
 *   pprof   a gzipped profile.proto Profile: `go tool pprof`, pprof's web UI, speedscope
 *   chrome  the Trace Event Format's JSON: a timeline of threads, CPUs, samples and events for
 *           Perfetto's UI, chrome://tracing, speedscope
 *   flame   a flame graph: one self-contained SVG of the stacks (flamegraph.pl's picture)
 *   ctf     a directory of LTTng kernel traces (host/, guest/): the kernel events, for Trace
 *           Compass and babeltrace2
 * One sampled event per export (chrome: every event's, or the one asked for).  Writers return
 * 0 or a negative errno (with why); they never print but to out, and leave checking out's
 * write errors to the caller.
 */
#ifndef VPERF_EXPORT_H
#define VPERF_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"
#include "session.h"
#include "slices.h"

struct vperf_export_format {
	const char *name;		/* --to NAME */
	const char *what;		/* for --help */
	int (*write)(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len);
	/* or: a format that is a directory (the -o), created (or empty) */
	int (*write_dir)(struct vperf_report *r, const char *dir, char *why, size_t why_len);
	bool timeline;			/* event may be -1 (all), and a recording without
					 * samples is fine: not only samples are written */
};

extern const struct vperf_export_format vperf_export_formats[];
extern const size_t vperf_export_nr_formats;

/* The format called name, or NULL. */
const struct vperf_export_format *vperf_export_find(const char *name);

int vperf_export_folded(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len);
int vperf_export_pprof(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len);
int vperf_export_chrome(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len);
int vperf_export_lttng(struct vperf_report *r, const char *dir, char *why, size_t why_len);
int vperf_export_flame(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len);

/* The flame graph's width in px (its height follows from the deepest stack). */
#define VPERF_FLAME_WIDTH		1200

/* The ctf export's prio fields: vperf records no priorities (an LTTng prio is -100..39). */
#define VPERF_LTTNG_NO_PRIO		((int64_t)INT32_MIN)

/*
 * The chrome export's ids for tracks that are not a host process's threads (its pids and tids
 * stay below PID_MAX_LIMIT, 2^22): the host's CPUs; in a `vperf vm record` recording, the
 * guest's threads (one process named after the VM, tids offset) and its vCPUs.
 */
#define VPERF_CHROME_CPUS_PID		(1u << 22)
#define VPERF_CHROME_GUEST_PID		(1u << 23)
#define VPERF_CHROME_VCPUS_PID		(1u << 24)

/* The stack of folded's lines: frame names from root to leaf, each kernel one ending "_[k]". */
#define VPERF_EXPORT_KERNEL_SUFFIX	"_[k]"

#endif /* VPERF_EXPORT_H */
