/* SPDX-License-Identifier: MIT */
/*
 * Histograms of samples by key, with their chains (hist.c).
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_HIST_H
#define VPERF_REPORT_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "containers.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- histograms -------------------------------------------------------- */

enum vperf_report_key {
	VPERF_REPORT_KEY_SYMBOL,
	VPERF_REPORT_KEY_DSO,
	VPERF_REPORT_KEY_TID,
	VPERF_REPORT_KEY_PID,
	VPERF_REPORT_KEY_COMM,
	VPERF_REPORT_KEY_LAYER,
	VPERF_REPORT_NR_KEYS
};

extern const char *const vperf_report_key_names[VPERF_REPORT_NR_KEYS];

/*
 * Parse a --sort list ("comm,dso,symbol"; "thread" is tid): 0 with keys[0..*nr), or -EINVAL
 * with why naming the key not known.
 */
int vperf_report_keys_parse(const char *list, enum vperf_report_key *keys, size_t max,
			    size_t *nr, char *why, size_t why_len);

struct vperf_report_chain {
	uint64_t samples, period;
	size_t sample;			/* one sample with this chain (its frames) */
};

struct vperf_report_row {
	const char *key[VPERF_REPORT_NR_KEYS];	/* per key of the histogram, in its order */
	bool kernel;			/* the symbol is a kernel one ([k]) */
	const char *dso;		/* the DSO of its symbol (rows never mix DSOs) */
	uint64_t samples, period;	/* its own: the samples whose function it is (Self) */
	uint64_t children_samples;	/* its own and those of every function it called */
	uint64_t children_period;	/* (Children; without VPERF_HIST_CHILDREN, its own) */
	struct vperf_report_chain *chains;	/* -g: distinct callchains, most period first */
	size_t nr_chains;
};

/* One event's histogram: rows sorted by period (overhead), most first. */
struct vperf_report_hist {
	int event;
	enum vperf_report_key keys[VPERF_REPORT_NR_KEYS];
	size_t nr_keys;
	struct vperf_report_row *rows;
	size_t nr_rows;
	uint64_t samples, period;
	uint64_t unresolved;		/* samples whose own frame has no symbol */
	bool children;			/* rows of callers too, sorted by children_period */
	struct vperf_report_strtab owned;	/* key strings made for rows (tids) */
};

#define VPERF_HIST_CHAINS	1u	/* each row's distinct callchains too */
#define VPERF_HIST_CHILDREN	2u	/* where rows are by symbol: a row for every function on
					 * a sample's stack, with what it and its callees cost
					 * (perf report's Children), most of that first */

/* Build event's histogram over keys (flags: VPERF_HIST_*).  0 or -ENOMEM. */
int vperf_report_hist__build(struct vperf_report *r, int event, const enum vperf_report_key *keys,
			     size_t nr_keys, unsigned int flags, struct vperf_report_hist *h)
	__attribute__((warn_unused_result));
void vperf_report_hist__exit(struct vperf_report_hist *h);

/*
 * A frame's name for stacks (folded, pprof, -g): the symbol, or "[unknown] in dso" so that
 * unknown frames of different files stay apart (no parentheses: pprof would take them for a
 * parameter list and drop them).  buf holds it when it has to be made.
 */
const char *vperf_report__frame_name(struct vperf_report *r, size_t frame, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_HIST_H */
