/* SPDX-License-Identifier: MIT */
/*
 * vperf stat's measurement (stat-run.c): the event sets opened on a command or a running
 * process or thread, the waiting, and the counts printed as they come and at the end.  The
 * builtin parses the options into struct stat_opts and calls these.
 */
#ifndef VPERF_CLI_STAT_RUN_H
#define VPERF_CLI_STAT_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <vperf/vperf.h>

#include "util/proc.h"
#include "util/signals.h"
#include "util/stat-display.h"
#include "util/stats.h"
#include "util/strutil.h"

#define NSEC_PER_SEC		1000000000ull
#define NSEC_PER_MSEC		1000000ull
#define THREAD_POLL_MS		100	/* --per-thread: drain the kernel's records */
#define TARGET_POLL_MS		100	/* -p/-t: is the target still alive? */

/* Exit statuses of a command that could not be run, as a shell's. */
#define EXIT_CANNOT_EXEC	126
#define EXIT_NOT_FOUND		127

struct stat_opts {
	struct strlist events;
	bool explicit_events;	/* -e given: every event must open */
	struct stat_id { pid_t id; const char *arg; } pid, tid;	/* -p, -t: 0, or as given */
	bool per_thread;
	const char *backend;	/* --backend, NULL: automatic */
	long repeat;		/* 0: no -r */
	long interval_ms;	/* 0: no -I */
	bool json;
	const char *csv_sep;	/* NULL: no -x */
	const char *output;	/* NULL: stderr */
	char **argv;		/* the command, NULL-terminated, or NULL */
};

/* One event as printed; its counts over the runs. */
struct counter {
	const char *name;
	char shown[272];	/* name, or "name:u" if only user space counted */
	bool user_only;		/* VPERF_COUNT_USER_ONLY seen */
	enum stat_event_kind kind;
	bool supported;		/* false: <not supported> (default set) */
	int idx;		/* index in this run's evset, -1 if none */
	struct stats value, enabled, running;
	int nr_counted;		/* runs in which it ran at all */
	struct vperf_count prev;	/* -I: totals at the last interval */
};

struct stat_ctx {
	struct stat_opts *o;
	struct stat_config cfg;
	struct counter *ctr;
	int nr_ctr;
	bool probed;
	char what[PATH_MAX];	/* for the header: "'ls -l'", "process id '1'" */
	char event_arg[PATH_MAX];	/* the events, comma separated */
	char fallback_comm[COMM_LEN];	/* name of exited threads */
	struct comm_cache comms;
	struct stats elapsed;	/* ns */
	int runs;
	bool interval_header;
};

/* One measurement: a run of the command, or a -p/-t session. */
struct run {
	struct vperf_evset *es;	/* NULL if no event could be opened */
	enum vperf_target target;
	pid_t pid;		/* the child, or the -p/-t target */
	int pidfd;		/* -p: readable when the process has exited */
	uint64_t t0, t1;	/* ns, CLOCK_MONOTONIC */
	uint64_t last_interval;	/* ns */
	int status;		/* wait status of the command */
	struct rusage ru;
};

/* With a command: the forwarded signals and SIGCHLD; with -p/-t: SIGINT and SIGTERM. */
void stat_signals_setup(struct cli_sigstate *s, bool command);
/* Print the totals (not only intervals): text output, or no -I. */
bool stat_totals_wanted(const struct stat_ctx *ctx);
/* One run of the command (forked, counted from its exec): 0 or the exit status to return. */
int stat_run_command(struct stat_ctx *ctx, struct run *r, const struct cli_sigstate *ss);
/* A -p/-t session until the target exits or a signal: 0 or the exit status to return. */
int stat_run_target(struct stat_ctx *ctx, struct run *r, const struct cli_sigstate *ss);
/* The counts over every run, and with rusage the last run's times. */
void stat_print_summary(struct stat_ctx *ctx, const struct run *last, bool rusage);

#endif /* VPERF_CLI_STAT_RUN_H */
