/* SPDX-License-Identifier: MIT */
/*
 * The command of `vperf stat -- cmd args`: forked first and held before
 * execvp() until the counters are open on it (perf's
 * evlist__prepare_workload / evlist__start_workload).
 */
#ifndef VPERF_CLI_WORKLOAD_H
#define VPERF_CLI_WORKLOAD_H

#include <signal.h>
#include <sys/types.h>

struct workload {
	pid_t pid;		/* the child, or 0 */
	int go_fd;		/* parent's end: a byte releases the child */
	int err_fd;		/* parent's end: exec's errno, or EOF once the
				 * exec succeeded (the child's end is CLOEXEC) */
};

/*
 * Fork the child.  It resets every caught signal to its default, sets its
 * signal mask to *child_mask, and waits.  Returns 0 or -errno.
 */
int workload__prepare(struct workload *w, char *const *argv,
		      const sigset_t *child_mask)
	__attribute__((warn_unused_result));

/*
 * Let the child exec.  Returns 0 once it has (counting starts there), or
 * -errno if execvp() failed; the child has then exited and been reaped.
 */
int workload__start(struct workload *w);

/* Make a prepared child exit without running anything, and reap it. */
void workload__cancel(struct workload *w);

/* A wait status as a shell reports it: the exit status, 128 + a signal, else 1. */
int workload__exit_status(int wait_status);

#endif /* VPERF_CLI_WORKLOAD_H */
