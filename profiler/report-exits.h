/* SPDX-License-Identifier: MIT */
/* vperf report --exits's printing (report-exits.c), for builtin-report.c. */
#ifndef VPERF_CLI_REPORT_EXITS_H
#define VPERF_CLI_REPORT_EXITS_H

#include <stddef.h>

#include "exits.h"

enum report_exits_format { REPORT_EXITS_TABLE, REPORT_EXITS_CSV, REPORT_EXITS_JSON };

struct report_exits_args {
	const char *dir;
	const char *sep;			/* REPORT_EXITS_CSV's separator */
	enum report_exits_format fmt;
	long tid, vcpu;				/* only this guest thread's, vCPU's; -1: all */
	enum vperf_exit_key keys[VPERF_EXIT_NR_KEYS];	/* --sort, parsed */
	size_t nr_keys;
};

/* Read a->dir and print its exits; the command's exit status (errors said on stderr). */
int report_exits(const struct report_exits_args *a);

#endif /* VPERF_CLI_REPORT_EXITS_H */
