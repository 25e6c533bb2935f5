// SPDX-License-Identifier: MIT
/* Signals while a command runs under vperf (signals.h). */
#include <errno.h>
#include <string.h>

#include "signals.h"

volatile sig_atomic_t cli_got_signal;
volatile sig_atomic_t cli_fwd_pid;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;

	(void)uc;
	if (sig == SIGCHLD)
		return;		/* only to wake ppoll() */
	if (!cli_got_signal)
		cli_got_signal = sig;
	if (cli_fwd_pid > 0 && si && si->si_code != SI_KERNEL)
		kill((pid_t)cli_fwd_pid, sig);
	errno = saved_errno;
}

void cli_signals_setup(struct cli_sigstate *s, const int *sigs, int nr)
{
	struct sigaction sa;
	sigset_t block;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	s->nr = nr < CLI_MAX_SIGNALS ? nr : CLI_MAX_SIGNALS;
	for (int i = 0; i < s->nr; i++) {
		s->sigs[i] = sigs[i];
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &s->orig_mask);
	for (int i = 0; i < s->nr; i++)
		sigaction(s->sigs[i], &sa, &s->orig[i]);
}

void cli_signals_restore(struct cli_sigstate *s)
{
	cli_fwd_pid = 0;
	/* Unblock first: a pending SIGINT then only sets cli_got_signal. */
	sigprocmask(SIG_SETMASK, &s->orig_mask, NULL);
	for (int i = 0; i < s->nr; i++)
		sigaction(s->sigs[i], &s->orig[i], NULL);
}
