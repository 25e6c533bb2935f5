// SPDX-License-Identifier: MIT
/*
 * Sampling delivery: the kernel sends the overflow signal to the sampled
 * thread itself (F_OWNER_TID), so the signal frame holds exactly the
 * user-mode state that was interrupted.  The handler reads the
 * instruction pointer from it, unwinds the callchain with libunwind from
 * that frame, and calls the user's function, all in the sampled thread.
 *
 * Only async-signal-safe work happens here: fixed tables, no locks, no
 * allocation.  The backend's drain function reports how many overflows
 * the kernel recorded since the last signal; one signal delivers one
 * sample (with the state of that moment), so any other overflow pending
 * at that point is counted as lost, never attributed to a guessed place.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "internal.h"

#define MAX_SAMPLERS 256

struct sampler {
	int fd;				/* -1: free; written last on register */
	struct vperf_evset *es;		/* the set that opened it (may be a part) */
	int idx;
	void *ring;
	vperf_sample_drain_fn drain;
	pid_t pid, tid;
};

static struct sampler samplers[MAX_SAMPLERS];
static pthread_mutex_t samplers_lock = PTHREAD_MUTEX_INITIALIZER;
static bool samplers_ready;
static bool handler_installed[_NSIG];

static struct sampler *find(int fd)
{
	for (int i = 0; i < MAX_SAMPLERS; i++)
		if (__atomic_load_n(&samplers[i].fd, __ATOMIC_ACQUIRE) == fd)
			return &samplers[i];
	return NULL;
}

static void on_overflow(int sig, siginfo_t *si, void *uctx)
{
	int saved_errno = errno;
	ucontext_t *uc = uctx;
	uint64_t frames[VPERF_MAX_CALLCHAIN];
	struct vperf_sample s;
	struct vperf_event *ev;
	struct vperf_evset *owner;
	struct sampler *sp;
	uint64_t time, period, lost;
	unsigned int n;

	/* perf's fasync signals carry POLL_IN (overflow) or POLL_HUP (limit). */
	if (si->si_code != POLL_IN && si->si_code != POLL_HUP)
		goto out;
	sp = si->si_fd >= 0 ? find(si->si_fd) : NULL;
	if (!sp)
		goto out;
	ev = &sp->es->events[sp->idx];
	/* A part of a pv set reports under the set the user holds. */
	owner = sp->es->parent ? sp->es->parent : sp->es;

	n = sp->drain(sp->ring, &time, &period, &lost);
	if (n > 1)
		lost += n - 1;
	if (lost)
		__atomic_add_fetch(&owner->samples_lost, lost, __ATOMIC_RELAXED);
	if (!n)
		goto out;	/* an earlier signal already took this overflow */

	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.event = sp->es->parent ? sp->es->parent_idx[sp->idx] : sp->idx;
	s.pid = sp->pid;
	s.tid = sp->tid;
	s.ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	s.time = time;
	s.period = period;
	s.callchain = frames;
	if (ev->sopts.max_frames) {
		unw_cursor_t cursor;

		if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) == 0) {
			do {
				unw_word_t ip;

				if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip)
					break;
				frames[s.nr_frames++] = ip;
			} while (s.nr_frames < ev->sopts.max_frames && unw_step(&cursor) > 0);
		}
		if (!s.nr_frames)
			frames[s.nr_frames++] = s.ip;
	}
	ev->sopts.fn(&s, ev->sopts.arg);
out:
	errno = saved_errno;
}

static int install_handler(int signo)
{
	struct sigaction sa;

	if (handler_installed[signo])
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL))
		return -errno;
	handler_installed[signo] = true;
	return 0;
}

int vperf__sample_register(int fd, struct vperf_evset *es, int idx, void *ring,
			   vperf_sample_drain_fn drain)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&samplers_lock);
	if (!samplers_ready) {
		for (int i = 0; i < MAX_SAMPLERS; i++)
			samplers[i].fd = -1;
		/* Per-thread caches make libunwind safe to use in handlers. */
		unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
		samplers_ready = true;
	}
	ret = install_handler(es->events[idx].sopts.signo);
	if (ret)
		goto out;
	ret = -ENOSPC;
	for (int i = 0; i < MAX_SAMPLERS; i++) {
		struct sampler *sp = &samplers[i];

		if (sp->fd != -1)
			continue;
		sp->es = es;
		sp->idx = idx;
		sp->ring = ring;
		sp->drain = drain;
		sp->pid = getpid();
		sp->tid = es->opener_tid;
		__atomic_store_n(&sp->fd, fd, __ATOMIC_RELEASE);
		ret = 0;
		break;
	}
out:
	pthread_mutex_unlock(&samplers_lock);
	return ret;
}

void vperf__sample_unregister(int fd)
{
	pthread_mutex_lock(&samplers_lock);
	for (int i = 0; samplers_ready && i < MAX_SAMPLERS; i++)
		if (samplers[i].fd == fd)
			__atomic_store_n(&samplers[i].fd, -1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&samplers_lock);
}
