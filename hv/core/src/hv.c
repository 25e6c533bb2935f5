// SPDX-License-Identifier: MIT
/*
 * The vperf device: hypercall dispatch and validation, the per-vCPU
 * shared page, overflow interrupts.  See docs/abi.md for the contract
 * this file implements and hv.h for how a VMM drives it.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "hv-internal.h"

/*
 * Patterns over "source:name", name being the host's for the encoded event
 * (hv_perf_decide()); see docs/abi.md, "Allowlist".
 */
static const char *const default_allow[] = {
	"hw:*",				/* perf's generic PMU events (no raw:), guest mode only */
	"sw:task-clock", "sw:cpu-clock",	/* the vCPU thread's own time */
	"sw:context-switches", "sw:cpu-migrations",
	"kvm:*", "exits:*", "steal:*",
};

static __thread struct hv_vcpu *this_vcpu;

uint64_t hv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vperf_hv__signal(void)
{
	return SIGRTMIN + 5;
}

/*
 * A host counter overflowed: the kernel signals the vCPU thread itself
 * (F_OWNER_TID), which interrupts KVM_RUN; vperf_hv__vcpu_exit() then
 * injects.  The signal may come in the middle of any hypercall of that
 * thread, COUNTERS_SET included: the handler reads only armed_fd[] and ORs
 * into pending, both atomics.
 */
/*
 * From the signal handler: no more overflows of counter i (fd) until the exit
 * sets its period again.  ioctl() is async-signal-safe, and the fd is open:
 * only this thread closes it, after disarming the slot.
 */
static void mute(struct hv_vcpu *v, int i, int fd)
{
	static const uint64_t never = HV_NEVER_PERIOD;

	ioctl(fd, PERF_EVENT_IOC_PERIOD, &never);
	atomic_fetch_or(&v->muted, 1ull << i);
}

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	struct hv_vcpu *v = this_vcpu;

	if (!v || si->si_code != POLL_IN || si->si_fd < 0)
		return;
	for (int i = 0; i < VPERF_MAX_COUNTERS; i++)
		if (atomic_load_explicit(&v->armed_fd[i], memory_order_relaxed) == si->si_fd) {
			if (atomic_fetch_add_explicit(&v->signals[i], 1, memory_order_relaxed) + 1 ==
			    HV_SIGNAL_BURST)
				mute(v, i, si->si_fd);
			atomic_fetch_or(&v->pending, 1ull << i);
		}
}

/* Forget the signals counted since the last exit (counters changed, or they were taken). */
static void signals_clear(struct hv_vcpu *v, uint64_t bits)
{
	for (int i = 0; i < VPERF_MAX_COUNTERS; i++)
		if (bits & (1ull << i))
			atomic_store_explicit(&v->signals[i], 0, memory_order_relaxed);
	atomic_fetch_and(&v->muted, ~bits);
}

/*
 * The kernel sends SIGIO instead of the F_SETSIG signal when it cannot queue
 * one more real-time signal (RLIMIT_SIGPENDING: fcntl(2), F_SETSIG): a flood
 * of overflows, which a guest can ask for, would otherwise end the VMM
 * (SIGIO's default action).  Which counters overflowed is lost with the
 * signals: every armed counter of the thread's vCPU is taken to have, once
 * (its guest sees an overflow; throttling then slows the flood), and the loss
 * is counted.  A SIGIO for a thread that is no vCPU's goes to the handler the
 * VMM had, if any.
 */
static struct sigaction prev_sigio;
static bool sigio_installed;

static void on_sigio(int sig, siginfo_t *si, void *uc)
{
	struct hv_vcpu *v = this_vcpu;
	uint64_t armed = 0;

	if (!v) {
		if (prev_sigio.sa_flags & SA_SIGINFO)
			prev_sigio.sa_sigaction(sig, si, uc);
		else if (prev_sigio.sa_handler != SIG_DFL && prev_sigio.sa_handler != SIG_IGN)
			prev_sigio.sa_handler(sig);
		return;
	}
	for (int i = 0; i < VPERF_MAX_COUNTERS; i++) {
		int fd = atomic_load_explicit(&v->armed_fd[i], memory_order_relaxed);

		if (fd < 0)
			continue;
		armed |= 1ull << i;
		if (atomic_fetch_add_explicit(&v->signals[i], HV_SIGNAL_BURST,
					      memory_order_relaxed) < HV_SIGNAL_BURST)
			mute(v, i, fd);
	}
	atomic_fetch_or(&v->pending, armed);
	atomic_fetch_add_explicit(&v->nr_signal_overflows, 1, memory_order_relaxed);
}

/* No counter's overflow reaches pending any more (a signal on its way finds no slot). */
static void disarm_all(struct hv_vcpu *v)
{
	for (int i = 0; i < VPERF_MAX_COUNTERS; i++)
		atomic_store_explicit(&v->armed_fd[i], -1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

/* The overflow bits of v's counters: anything above is stale. */
static uint64_t counter_bits(const struct hv_vcpu *v)
{
	return v->nr_counters >= 64 ? ~0ull : (1ull << v->nr_counters) - 1;
}

const char *const *vperf_hv__default_allow(int *nr)
{
	*nr = (int)(sizeof(default_allow) / sizeof(default_allow[0]));
	return default_allow;
}

int vperf_hv__allow_check(const char *pattern)
{
	static const char *const sources[] = {
		"hw", "raw", "rawmod", "sw", "kvm", "exits", "steal",
	};
	const char *colon = strchr(pattern, ':');
	size_t len = strlen(pattern), n;
	bool known = false;

	if (!colon || !colon[1] || len >= 128)
		return -EINVAL;
	n = (size_t)(colon - pattern);
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		known |= strlen(sources[i]) == n && !strncasecmp(pattern, sources[i], n);
	if (!known)
		return -EINVAL;
	for (const char *c = pattern; *c; c++)
		if (*c <= ' ' || *c > '~' || *c == ',')
			return -EINVAL;
	return 0;
}

bool hv_allowed(const struct vperf_hv *hv, const char *src, const char *name)
{
	char key[16 + VPERF_EVENT_NAME_LEN];

	snprintf(key, sizeof(key), "%s:%s", src, name);
	for (int i = 0; i < hv->nr_allow; i++)
		if (fnmatch(hv->allow[i], key, FNM_CASEFOLD) == 0)
			return true;
	return false;
}

int vperf_hv__new(const struct vperf_hv_config *cfg, const struct vperf_hv_ops *ops,
		  void *vmm, struct vperf_hv **out)
{
	const char *const *allow;
	struct vperf_hv *hv;
	struct sigaction sa;
	int ret = -ENOMEM;

	*out = NULL;
	if (!cfg || !ops || !ops->gpa_to_hva || !ops->irq_raise || !ops->exit_count ||
	    !ops->guest_exit || cfg->size < sizeof(*cfg) || cfg->nr_vcpus <= 0 ||
	    cfg->nr_vcpus > 1024 || cfg->nr_allow < 0)
		return -EINVAL;

	hv = calloc(1, sizeof(*hv));
	if (!hv)
		return -ENOMEM;
	hv->ops = ops;
	hv->vmm = vmm;
	hv->cfg = *cfg;
	if (!hv->cfg.min_irq_interval_ns)
		hv->cfg.min_irq_interval_ns = HV_DEFAULT_MIN_IRQ_NS;
	hv->host_pmu = access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
		       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
	pthread_mutex_init(&hv->lock, NULL);

	allow = cfg->allow ? cfg->allow : default_allow;
	hv->nr_allow = cfg->allow ? cfg->nr_allow :
				    (int)(sizeof(default_allow) / sizeof(default_allow[0]));
	hv->allow = calloc(hv->nr_allow ? hv->nr_allow : 1, sizeof(*hv->allow));
	if (!hv->allow)
		goto out_free;
	for (int i = 0; i < hv->nr_allow; i++) {
		hv->allow[i] = strdup(allow[i]);
		if (!hv->allow[i])
			goto out_free;
	}
	hv->cfg.allow = NULL;

	hv->vcpus = calloc(cfg->nr_vcpus, sizeof(*hv->vcpus));
	if (!hv->vcpus)
		goto out_free;
	for (int i = 0; i < cfg->nr_vcpus; i++) {
		hv->vcpus[i].hv = hv;
		hv->vcpus[i].idx = i;
		hv->vcpus[i].schedstat_fd = -1;
		disarm_all(&hv->vcpus[i]);
		pthread_mutex_init(&hv->vcpus[i].trace_lock, NULL);
		for (int k = 0; k < VPERF_MAX_COUNTERS; k++)
			hv->vcpus[i].counters[k].fd = -1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_overflow;
	sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART: KVM_RUN must return */
	sigemptyset(&sa.sa_mask);
	if (sigaction(vperf_hv__signal(), &sa, NULL)) {
		ret = -errno;
		goto out_free;
	}
	sa.sa_sigaction = on_sigio;
	if (!sigio_installed) {
		if (sigaction(SIGIO, &sa, &prev_sigio)) {
			ret = -errno;
			goto out_free;
		}
		sigio_installed = true;	/* once per process: a second device must not chain to us */
	}
	*out = hv;
	return 0;

out_free:
	vperf_hv__delete(hv);
	return ret;
}

static void counters_clear(struct hv_vcpu *v)
{
	disarm_all(v);
	for (int i = 0; i < v->nr_counters; i++)
		hv_counter_close(&v->counters[i]);
	v->nr_counters = 0;
	v->overflow_status = 0;
	v->nmi_bits = 0;
	v->held = 0;
	atomic_store(&v->pending, 0);
	signals_clear(v, ~0ull);
}

void vperf_hv__delete(struct vperf_hv *hv)
{
	if (!hv)
		return;
	for (int i = 0; hv->vcpus && i < hv->cfg.nr_vcpus; i++) {
		counters_clear(&hv->vcpus[i]);
		pthread_mutex_destroy(&hv->vcpus[i].trace_lock);
		free(hv->vcpus[i].kvm_names);
		if (hv->vcpus[i].schedstat_fd >= 0)
			close(hv->vcpus[i].schedstat_fd);
	}
	for (int i = 0; hv->allow && i < hv->nr_allow; i++)
		free(hv->allow[i]);
	free(hv->allow);
	free(hv->vcpus);
	pthread_mutex_destroy(&hv->lock);
	free(hv);
}

uint32_t vperf_hv__features(const struct vperf_hv *hv)
{
	return VPERF_FEAT_COUNTERS | VPERF_FEAT_OVERFLOW | VPERF_FEAT_TRACE | VPERF_FEAT_EVENT_INFO |
	       (hv->host_pmu ? VPERF_FEAT_HW_EVENTS : 0) |
	       (hv->cfg.doorbell_gpa ? VPERF_FEAT_DOORBELL : 0) |
	       (hv->ops->nmi_raise ? VPERF_FEAT_OVERFLOW_NMI : 0) |
	       (hv->ops->trace_records ?
		VPERF_FEAT_TRACE_V2 | VPERF_FEAT_TRACE_MMAP | VPERF_FEAT_TRACE_KSYM : 0);
}

int vperf_hv__vcpu_enter(struct vperf_hv *hv, int vcpu)
{
	struct hv_vcpu *v;
	sigset_t set;

	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return -EINVAL;
	v = &hv->vcpus[vcpu];
	v->tid = gettid();
	this_vcpu = v;
	if (v->schedstat_fd < 0)
		v->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	sigemptyset(&set);
	sigaddset(&set, vperf_hv__signal());
	return -pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* Write the vCPU's counters into its shared page (seq odd, data, seq even). */
static void page_update(struct hv_vcpu *v)
{
	struct vperf_vcpu_page *pg = v->page;
	volatile uint32_t *seq;
	uint32_t s;

	if (!pg)
		return;
	seq = &pg->seq;
	s = *seq | 1;		/* whatever the guest scribbled, go odd */
	__atomic_store_n(seq, s, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	pg->size = sizeof(*pg);
	pg->version = VPERF_ABI_VERSION;
	pg->nr_counters = (uint32_t)v->nr_counters;
	/* the NMI counters' bits are the guest's to clear in the page (see vperf_hv__vcpu_exit) */
	pg->overflow_status = v->overflow_status | (pg->overflow_status & v->nmi_bits);
	pg->host_time_ns = hv_now_ns();
	pg->overflow_throttled = v->nr_throttled;
	for (int i = 0; i < VPERF_MAX_COUNTERS; i++) {
		struct vperf_counter_value val = { 0, 0, 0 };

		if (i < v->nr_counters)
			hv_counter_read(v, &v->counters[i], &val);
		pg->counters[i] = val;
	}
	__atomic_store_n(seq, s + 1, __ATOMIC_RELEASE);
}

void vperf_hv__vcpu_exit(struct vperf_hv *hv, int vcpu)
{
	struct hv_vcpu *v = &hv->vcpus[vcpu];
	uint64_t bits, occurred, repeated, muted, fresh, now;
	bool raised;

	if (!v->nr_counters)
		return;
	occurred = atomic_exchange(&v->pending, 0) & counter_bits(v);
	repeated = 0;
	for (int i = 0; i < v->nr_counters; i++)
		if ((occurred & (1ull << i)) &&
		    atomic_exchange_explicit(&v->signals[i], 0, memory_order_relaxed) >=
		    HV_SIGNAL_BURST)
			repeated |= 1ull << i;
	muted = atomic_exchange(&v->muted, 0) & counter_bits(v);
	hv_counters_poll_overflow(v, &occurred);
	if (occurred & (v->nmi_bits | repeated)) {
		/*
		 * NMI counters: the guest has taken the last overflow once it cleared
		 * the bit in its page (no page: never).  Line counters are paced only
		 * by their signals' rate: their overflows raise the line whether acked
		 * or not (docs/abi.md 2.4).  HV_SIGNAL_BURST signals of one counter
		 * before this exit (repeated) were not taken either way.
		 */
		uint64_t untaken = (v->page ? __atomic_load_n(&v->page->overflow_status,
							      __ATOMIC_RELAXED) : ~0ull) & v->nmi_bits;

		untaken |= repeated;
		for (int i = 0; i < v->nr_counters; i++)
			if ((occurred & (v->nmi_bits | repeated) & (1ull << i)) &&
			    hv_counter_pace(&v->counters[i], !(untaken & (1ull << i))))
				v->nr_throttled++;
	}
	for (int i = 0; i < v->nr_counters; i++)	/* the handler's mute ends: the period in force */
		if (muted & (1ull << i))
			hv_counter_unmute(&v->counters[i]);
	bits = occurred | v->held;
	v->held = 0;
	if (!bits)
		return;
	now = hv_now_ns();
	if (v->last_irq_ns && now - v->last_irq_ns < hv->cfg.min_irq_interval_ns) {
		/* Too soon: keep the bits, raise at a later exit. */
		v->held = bits;
		return;
	}
	/*
	 * The device's line for the counters that use it (their bits wait for
	 * OVERFLOW_ACK); an NMI for the others, whose bits live in the page: the
	 * guest's handler clears its bit there, with no exit, and until it has,
	 * a later overflow raises nothing (a second NMI would find no bit).
	 */
	v->overflow_status |= bits & ~v->nmi_bits;
	page_update(v);
	raised = false;
	if ((bits & v->nmi_bits) && v->page) {
		fresh = bits & v->nmi_bits & ~__atomic_load_n(&v->page->overflow_status, __ATOMIC_RELAXED);
		if (fresh) {
			__atomic_or_fetch(&v->page->overflow_status, fresh, __ATOMIC_RELEASE);
			raised = hv->ops->nmi_raise(hv->vmm, vcpu) == 0;
		}
	}
	if ((bits & ~v->nmi_bits) && hv->ops->irq_raise(hv->vmm, hv->cfg.gsi) == 0)
		raised = true;
	if (raised) {
		v->last_irq_ns = now;
		v->nr_irqs++;
	}
}

/* ---- hypercalls ---- */

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

/* Does [gpa, gpa + len) overlap a page or ring any vCPU registered? */
static bool overlaps_registered(struct vperf_hv *hv, uint64_t gpa, uint64_t len,
				const struct hv_vcpu *skip_page, const struct hv_vcpu *skip_ring)
{
	for (int i = 0; i < hv->cfg.nr_vcpus; i++) {
		const struct hv_vcpu *o = &hv->vcpus[i];

		if (o != skip_page && o->page &&
		    ranges_overlap(gpa, len, o->page_gpa, VPERF_PAGE_SIZE))
			return true;
		if (o != skip_ring && o->trace_len &&
		    ranges_overlap(gpa, len, o->trace_gpa, o->trace_len))
			return true;
	}
	return false;
}

static int64_t hc_page_register(struct hv_vcpu *v, uint64_t gpa)
{
	struct vperf_hv *hv = v->hv;
	void *hva;
	int64_t ret = 0;

	if (!gpa) {
		pthread_mutex_lock(&hv->lock);
		v->page = NULL;
		v->page_gpa = 0;
		pthread_mutex_unlock(&hv->lock);
		return 0;
	}
	if (gpa & (VPERF_PAGE_SIZE - 1))
		return -VPERF_EINVAL;
	hva = hv->ops->gpa_to_hva(hv->vmm, gpa, VPERF_PAGE_SIZE);
	if (!hva)
		return -VPERF_EFAULT;
	pthread_mutex_lock(&hv->lock);
	if (overlaps_registered(hv, gpa, VPERF_PAGE_SIZE, v, NULL)) {
		ret = -VPERF_EBUSY;
	} else {
		v->page = hva;
		v->page_gpa = gpa;
		memset(hva, 0, VPERF_PAGE_SIZE);
		page_update(v);
	}
	pthread_mutex_unlock(&hv->lock);
	return ret;
}

/* Does counter c count what d asks for (COUNTERS_SET may keep it open)? */
static bool counter_is(const struct hv_counter *c, const struct vperf_event_desc *d)
{
	if (c->kind == SRC_NONE || c->desc.source != d->source || c->desc.flags != d->flags)
		return false;
	if (d->source == VPERF_SRC_EXITS)
		return c->desc.arg == d->arg;
	return !strncmp(c->desc.name, d->name, sizeof(d->name));
}

static int64_t hc_counters_set(struct hv_vcpu *v, uint64_t gpa, uint64_t n)
{
	struct vperf_hv *hv = v->hv;
	struct vperf_event_desc descs[VPERF_MAX_COUNTERS];
	struct hv_counter fresh[VPERF_MAX_COUNTERS];
	int from[VPERF_MAX_COUNTERS];	/* the old counter a new one keeps, -1: opened */
	bool kept[VPERF_MAX_COUNTERS] = { false };
	const void *src;
	int ret = 0;

	if (n > VPERF_MAX_COUNTERS)
		return -VPERF_ENOSPC;
	if (n) {
		src = hv->ops->gpa_to_hva(hv->vmm, gpa, n * sizeof(descs[0]));
		if (!src)
			return -VPERF_EFAULT;
		/* One copy, then only the copy: the guest may change its memory. */
		memcpy(descs, src, n * sizeof(descs[0]));
	}
	for (uint64_t i = 0; i < VPERF_MAX_COUNTERS; i++) {
		fresh[i].fd = -1;
		from[i] = -1;
	}
	/*
	 * An event the vCPU counts already keeps its counter (rebased: it
	 * counts from now, as a new one would); the others are opened.
	 * Nothing changes until every one of them is ready.
	 */
	for (uint64_t i = 0; i < n; i++) {
		for (int j = 0; j < v->nr_counters && descs[i].flags == 0 &&
				memchr(descs[i].name, '\0', sizeof(descs[i].name)); j++) {
			if (!kept[j] && counter_is(&v->counters[j], &descs[i])) {
				kept[j] = true;
				from[i] = j;
				break;
			}
		}
		ret = from[i] >= 0 ? hv_counter_rebase(v, &v->counters[from[i]], &fresh[i]) :
				     hv_counter_open(v, &fresh[i], &descs[i]);
		if (ret) {
			for (uint64_t k = 0; k <= i; k++)
				if (from[k] < 0)
					hv_counter_close(&fresh[k]);
			return ret;
		}
	}
	/* from here on the old counters change: their overflows no longer count */
	disarm_all(v);
	for (int j = 0; j < v->nr_counters; j++) {
		if (kept[j])
			continue;
		hv_counter_close(&v->counters[j]);
	}
	for (uint64_t i = 0; i < n; i++) {
		if (from[i] < 0)
			continue;
		hv_counter_restart(v, &v->counters[from[i]], &fresh[i]);
		fresh[i] = v->counters[from[i]];	/* the open counter moves to slot i */
	}
	v->overflow_status = 0;
	v->nmi_bits = 0;
	v->held = 0;
	atomic_store(&v->pending, 0);
	signals_clear(v, ~0ull);
	memcpy(v->counters, fresh, sizeof(fresh));
	v->nr_counters = (int)n;
	page_update(v);
	return 0;
}

static int64_t hc_overflow_set(struct hv_vcpu *v, uint64_t idx, uint64_t period, uint64_t flags)
{
	struct hv_counter *c;
	int ret, was;

	if (idx >= (uint64_t)v->nr_counters || (flags & ~(uint64_t)VPERF_OVERFLOW_FLAGS))
		return -VPERF_EINVAL;
	if ((flags & VPERF_OVERFLOW_NMI) && !v->hv->ops->nmi_raise)
		return -VPERF_EINVAL;
	c = &v->counters[idx];
	/* disarmed while its period changes; a refused change leaves it as it was */
	was = atomic_exchange(&v->armed_fd[idx], -1);
	atomic_signal_fence(memory_order_seq_cst);
	ret = hv_counter_set_period(v, c, period);
	if (ret) {
		atomic_store(&v->armed_fd[idx], was);
		return ret;
	}
	/* into or out of NMI mode: a fresh bit (a stale one would hold back the next NMI) */
	if ((flags & VPERF_OVERFLOW_NMI) || (v->nmi_bits & (1ull << idx))) {
		v->overflow_status &= ~(1ull << idx);
		if (v->page)
			__atomic_and_fetch(&v->page->overflow_status, ~(1ull << idx), __ATOMIC_RELAXED);
	}
	if (period && (flags & VPERF_OVERFLOW_NMI))
		v->nmi_bits |= 1ull << idx;
	else
		v->nmi_bits &= ~(1ull << idx);
	atomic_fetch_and(&v->pending, ~(1ull << idx));
	signals_clear(v, 1ull << idx);
	v->held &= ~(1ull << idx);
	/* perf counters overflow by signal; the polled sources (kvm, exits, steal) have no fd */
	if (period && c->fd >= 0)
		atomic_store(&v->armed_fd[idx], c->fd);
	return 0;
}

static int64_t hc_overflow_ack(struct hv_vcpu *v, uint64_t bits)
{
	if (bits & ~counter_bits(v))
		return -VPERF_EINVAL;
	v->overflow_status &= ~bits;
	if (v->page)
		__atomic_and_fetch(&v->page->overflow_status, ~bits, __ATOMIC_RELAXED);
	return 0;
}

static int64_t hc_ucall(struct hv_vcpu *v, uint64_t gpa)
{
	struct vperf_hv *hv = v->hv;
	struct vperf_ucall uc;
	const void *src = hv->ops->gpa_to_hva(hv->vmm, gpa, sizeof(uc));

	if (!src)
		return -VPERF_EFAULT;
	memcpy(&uc, src, sizeof(uc));
	uc.msg[sizeof(uc.msg) - 1] = '\0';
	if (uc.nr_args > 8 || uc.cmd < VPERF_UCALL_PRINT || uc.cmd > VPERF_UCALL_VALUES)
		return -VPERF_EINVAL;
	if (hv->ops->report)
		hv->ops->report(hv->vmm, v->idx, &uc);
	return 0;
}

/*
 * Ring registration takes the vCPU's trace_lock before the device's lock (the
 * drain's order): a drain of the old ring, from the VMM's thread, has ended
 * before the ring changes, and none starts on it after.  Once the guest's
 * TRACE_REGISTER returns, the host no longer touches the old ring's memory
 * (the drain writes its tail there), which is the guest's again.
 */
static int64_t hc_trace_register(struct hv_vcpu *v, uint64_t gpa, uint64_t len)
{
	struct vperf_hv *hv = v->hv;
	int64_t ret = 0;

	if (gpa || len) {
		if ((gpa & (VPERF_PAGE_SIZE - 1)) || len <= sizeof(struct vperf_trace_ring))
			return -VPERF_EINVAL;
		if (len > HV_TRACE_MAX_BYTES)
			return -VPERF_ENOSPC;
		/* The data area must be a power of two. */
		if ((len - sizeof(struct vperf_trace_ring)) &
		    (len - sizeof(struct vperf_trace_ring) - 1))
			return -VPERF_EINVAL;
		if (!hv->ops->gpa_to_hva(hv->vmm, gpa, len))
			return -VPERF_EFAULT;
	}
	pthread_mutex_lock(&v->trace_lock);
	pthread_mutex_lock(&hv->lock);
	if (!gpa && !len) {
		v->trace_gpa = v->trace_len = 0;
	} else if (overlaps_registered(hv, gpa, len, NULL, v)) {
		ret = -VPERF_EBUSY;
	} else {
		v->trace_gpa = gpa;
		v->trace_len = len;
		v->trace_fresh = true;
	}
	pthread_mutex_unlock(&hv->lock);
	pthread_mutex_unlock(&v->trace_lock);
	return ret;
}

/* Version 2 rings pass the guest's TSC in RBX (0: none): a clock sample for the VMM. */
static int64_t hc_trace_flush(struct hv_vcpu *v, uint64_t guest_tsc)
{
	struct vperf_hv *hv = v->hv;

	if (guest_tsc && v->trace_len && hv->ops->trace_clock_sample)
		hv->ops->trace_clock_sample(hv->vmm, v->idx, guest_tsc);
	return hv_trace_drain(v);
}

int64_t vperf_hv__hypercall(struct vperf_hv *hv, int vcpu, uint32_t op, const uint64_t args[4])
{
	struct hv_vcpu *v;

	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return -VPERF_EINVAL;
	v = &hv->vcpus[vcpu];
	v->hc_count[op < VPERF_HC_NR_OPS ? op : VPERF_HC_NR_OPS]++;

	switch (op) {
	case VPERF_HC_VERSION:
		return VPERF_ABI_VERSION | (int64_t)vperf_hv__features(hv) << 32;
	case VPERF_HC_EXIT:
		if (args[0] > 255)
			return -VPERF_EINVAL;
		hv->ops->guest_exit(hv->vmm, vcpu, (uint32_t)args[0]);
		return 0;
	case VPERF_HC_UCALL:
		return hc_ucall(v, args[0]);
	case VPERF_HC_PAGE_REGISTER:
		return hc_page_register(v, args[0]);
	case VPERF_HC_COUNTERS_SET:
		return hc_counters_set(v, args[0], args[1]);
	case VPERF_HC_SNAPSHOT:
		if (!v->page)
			return -VPERF_ESTATE;
		page_update(v);
		return 0;
	case VPERF_HC_OVERFLOW_SET:
		return hc_overflow_set(v, args[0], args[1], args[2]);
	case VPERF_HC_OVERFLOW_ACK:
		return hc_overflow_ack(v, args[0]);
	case VPERF_HC_TRACE_REGISTER:
		return hc_trace_register(v, args[0], args[1]);
	case VPERF_HC_TRACE_FLUSH:
		return hc_trace_flush(v, args[0]);
	case VPERF_HC_EVENT_INFO:
		return hv_event_info(v, args[0], args[1]);
	default:
		return -VPERF_ENOSYS;
	}
}

uint64_t vperf_hv__hypercall_count(const struct vperf_hv *hv, int vcpu, uint32_t op)
{
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return 0;
	return hv->vcpus[vcpu].hc_count[op < VPERF_HC_NR_OPS ? op : VPERF_HC_NR_OPS];
}

int vperf_hv__doorbell_read(struct vperf_hv *hv, int vcpu, uint64_t offset, uint32_t len,
			    uint64_t *value)
{
	struct vperf_counter_value val = { 0, 0, 0 };
	struct hv_vcpu *v;
	uint64_t idx;

	*value = ~0ull;
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return -VPERF_EINVAL;
	v = &hv->vcpus[vcpu];
	v->doorbell_count++;
	if (len != 8 || offset % 8 || offset >= 8 * (uint64_t)VPERF_MAX_COUNTERS)
		return -VPERF_EINVAL;
	idx = offset / 8;
	*value = 0;
	if ((int)idx >= v->nr_counters)
		return -VPERF_ESTATE;
	/* the vCPU's own thread, like SNAPSHOT: its counters are not shared */
	if (hv_counter_read(v, &v->counters[idx], &val))
		return -VPERF_ESTATE;
	*value = val.value;
	return 0;
}

uint64_t vperf_hv__doorbell_count(const struct vperf_hv *hv, int vcpu)
{
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return 0;
	return hv->vcpus[vcpu].doorbell_count;
}

uint64_t vperf_hv__irq_count(const struct vperf_hv *hv, int vcpu)
{
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return 0;
	return hv->vcpus[vcpu].nr_irqs;
}

uint64_t vperf_hv__throttle_count(const struct vperf_hv *hv, int vcpu)
{
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return 0;
	return hv->vcpus[vcpu].nr_throttled;
}

uint64_t vperf_hv__signal_overflow_count(const struct vperf_hv *hv, int vcpu)
{
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return 0;
	return atomic_load(&hv->vcpus[vcpu].nr_signal_overflows);
}
