/* SPDX-License-Identifier: MIT */
/*
 * Signals while a command runs under vperf (`stat`, `record`): the signals vperf handles are
 * blocked except while it waits in ppoll() with cli_sigstate.orig_mask, so none is lost between
 * a check and the wait.  The handler notes the first signal in cli_got_signal and passes it on to
 * cli_fwd_pid when it was sent to vperf alone (a terminal signals the whole process group, the
 * command included: passing that on would give the command two).  SIGCHLD only wakes ppoll().
 */
#ifndef VPERF_CLI_SIGNALS_H
#define VPERF_CLI_SIGNALS_H

#include <signal.h>

#define CLI_MAX_SIGNALS	8

extern volatile sig_atomic_t cli_got_signal;	/* the first signal caught, or 0 */
extern volatile sig_atomic_t cli_fwd_pid;	/* the command to pass signals on to, or 0 */

struct cli_sigstate {
	sigset_t orig_mask;		/* the mask to wait with (ppoll) */
	struct sigaction orig[CLI_MAX_SIGNALS];
	int sigs[CLI_MAX_SIGNALS];
	int nr;
};

/* Catch sigs[0..nr) (at most CLI_MAX_SIGNALS), blocked outside ppoll(). */
void cli_signals_setup(struct cli_sigstate *s, const int *sigs, int nr);
/* Stop passing signals on, unblock, and put the old handlers back. */
void cli_signals_restore(struct cli_sigstate *s);

#endif /* VPERF_CLI_SIGNALS_H */
