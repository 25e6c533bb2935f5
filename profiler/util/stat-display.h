/* SPDX-License-Identifier: MIT */
/*
 * `vperf stat` output: perf-compatible text, CSV (-x SEP) and JSON (-j)
 * lines, and the derived metric of each event (CPUs utilized, rates).
 * No counting happens here: the caller hands over finished numbers, which
 * keeps this file testable on its own.  docs/vperf-stat.md describes the
 * formats; keep the two in step.
 */
#ifndef VPERF_CLI_STAT_DISPLAY_H
#define VPERF_CLI_STAT_DISPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum stat_format {
	STAT_FMT_TEXT,
	STAT_FMT_CSV,
	STAT_FMT_JSON,
};

struct stat_config {
	FILE *out;
	enum stat_format fmt;
	const char *sep;	/* CSV separator */
	bool show_noise;	/* -r: print the relative stddev */
};

/* Events whose values get special units or metrics. */
enum stat_event_kind {
	STAT_EV_OTHER,
	STAT_EV_TASK_CLOCK,
	STAT_EV_CPU_CLOCK,
	STAT_EV_CYCLES,
	STAT_EV_INSTRUCTIONS,
	STAT_EV_VCPU_CLOCK,	/* vperf::vcpu-clock: ns, shown in msec */
	STAT_EV_STEAL,		/* vperf::steal: ns, shown in msec */
};

/* From a name as given or as libpfm4 spells it ("perf::TASK-CLOCK:u"). */
enum stat_event_kind stat_event_kind(const char *name);

enum stat_state {
	STAT_COUNTED,
	STAT_NOT_SUPPORTED,	/* could not be opened (default set only) */
	STAT_NOT_COUNTED,	/* opened, never ran */
};

struct stat_line {
	const char *event;	/* the name to print */
	enum stat_event_kind kind;
	enum stat_state state;
	double value;		/* count; ns for the clocks (shown as msec) */
	double enabled;		/* ns */
	double running;		/* ns */
	double noise_pct;	/* with show_noise: relative stddev, % */
};

/* What a line's metric is computed against. */
struct stat_basis {
	double clock_ns;	/* task-clock (else cpu-clock) of the same
				 * thread or total, 0 if not measured */
	double cycles;		/* cycles of the same, 0 if not measured */
	double elapsed_ns;	/* wall time of the measurement */
};

/* Optional leading fields of a line. */
struct stat_prefix {
	bool interval;		/* -I: timestamp, ns since the start */
	uint64_t interval_ns;
	const char *comm;	/* --per-thread: "comm-tid", or NULL */
	int tid;
};

/*
 * The metric of line l: returns true and fills *val and unit (e.g.
 * "CPUs utilized", "K/sec", "GHz", "insn per cycle") if there is one.
 */
bool stat_metric(const struct stat_line *l, const struct stat_basis *b,
		 double *val, char *unit, size_t unit_len);

/* " Performance counter stats for <what> (N runs):" (text only). */
void stat_print_header(const struct stat_config *c, const char *what,
		       int runs);
/* "#           time             counts unit events" (text -I only). */
void stat_print_interval_header(const struct stat_config *c);
void stat_print_line(const struct stat_config *c, const struct stat_prefix *p,
		     const struct stat_line *l, const struct stat_basis *b);

struct stat_footer {
	double elapsed_ns;	/* mean */
	double elapsed_stddev_ns; /* stddev of the mean, with show_noise */
	double elapsed_noise_pct;
	bool rusage;		/* print user/sys (a command, one run) */
	double user_s, sys_s;
};

/* "seconds time elapsed", user, sys (text only). */
void stat_print_footer(const struct stat_config *c,
		       const struct stat_footer *f);

#endif /* VPERF_CLI_STAT_DISPLAY_H */
