// SPDX-License-Identifier: MIT
/*
 * The "pv" backend: the per-thread virtual counters of vperf_guest.ko,
 * through /dev/vperf (guest-lib/kmod/vperf_guest_uapi.h).
 *
 * The module keeps, per thread context, the sums of what its vCPU's
 * virtual counters advanced while the thread ran: vperf::vcpu-clock,
 * vperf::steal and vperf::exits (the catalog in virt-events.c maps each
 * name to its counter index).  Contexts belong to the file they were
 * started on; this backend opens the device once per set:
 *
 *   VPERF_TARGET_SELF     THREAD_START(tid 0) and the thread's page mapped
 *                         read-only.  A read in the opening thread first
 *                         makes the page exact with THREAD_READ (one ioctl,
 *                         one hypercall: VPERF_READ_PAGE_SYNC), then copies
 *                         it under the seq protocol; with
 *                         VPERF_EVSET_PAGE_ONLY, and in other threads, the
 *                         page alone (VPERF_READ_PAGE: no system call,
 *                         counts as of the last switch-out).
 *   VPERF_TARGET_THREAD   THREAD_START(tid); reads are THREAD_LIST.
 *   VPERF_TARGET_PROCESS  THREAD_START(tid, VPERF_THREAD_INHERIT) for each
 *                         thread the process has at open; the module adds a
 *                         context to every thread and process they create.
 *                         Reads are THREAD_LIST: the total is the sum of the
 *                         rows, live and exited; per-thread rows come from
 *                         the same list (pid, tid, comm), and the module's
 *                         `lost` (threads that got no context) is what
 *                         vperf_evset__threads_lost() reports.
 *
 * Start, stop and reset: the module counts from THREAD_START on and has no
 * enable switch, so the library keeps, per (pid, tid), the module's sums at
 * the last start or reset (base) and what earlier start..stop intervals
 * counted (acc); a count is acc + (now - base) while started, acc while
 * stopped.  Reset zeroes the values and leaves enabled and running times
 * running on, as perf's PERF_EVENT_IOC_RESET does.  Start, stop and reset
 * take exact boundaries (THREAD_READ first, for SELF, even with
 * VPERF_EVSET_PAGE_ONLY).  A set counts nothing until vperf_evset__start(),
 * as with perf; VPERF_EVSET_ENABLE_ON_EXEC counts from open (the module
 * cannot wait for an exec; the target's few instructions before its exec
 * are counted).
 * Rows outlive their threads until the file is closed, so every context
 * that existed at a start is in the list that start takes: a thread first
 * seen later was created while counting, and its base is 0.  Threads whose
 * tid was reused share one (pid, tid) key, as per-thread rows do; the
 * arithmetic is a sum, so that stays exact.
 *
 * Ordinary events in the set (task-clock, cycles, ...) are counted by a
 * "perf" set of the backend's own, with the same target and flags; reads,
 * start/stop/reset and per-thread rows (merged by pid and tid) go to both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "internal.h"
#include "vperf_guest_uapi.h"

#define PV_NR			VPERF_THREAD_MAX_COUNTERS
#define PV_LOCAL_ROWS		16	/* THREAD_LIST rows read into a stack buffer */
#define PV_LIST_TRIES		8	/* growing the buffer while threads appear */
#define PV_MAX_PAGE		(1u << 20)

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax()	__asm__ __volatile__("pause" ::: "memory")
#else
#define cpu_relax()	__asm__ __volatile__("" ::: "memory")
#endif

/* The library's start/stop/reset state of the contexts of one (pid, tid). */
struct pv_key {
	pid_t pid, tid;
	char comm[16];
	/* the module's sums at the last start or reset */
	struct vperf_thread_counter base[PV_NR];
	/* what earlier start..stop intervals counted */
	struct vperf_thread_counter acc[PV_NR];
	/* the module's sums in the last gather() */
	struct vperf_thread_counter cur[PV_NR];
};

#define PV_RING_PAGES	16	/* 1024 records */

/* What the sample signal handler drains (sample.c calls pv_drain). */
struct pv_ring {
	volatile struct vperf_sample_ring *hdr;
	const struct vperf_sample_record *recs;
	size_t len;			/* the mapping */
	uint32_t nr_records;		/* the header's, checked at open: the mapping is writable */
	uint64_t lost_seen;		/* hdr->lost already reported */
	const bool *counting;		/* samples outside start..stop are dropped */
};

struct pv_priv {
	int fd;				/* the device, -1: no vperf:: event */
	uint32_t nr_ctrs;		/* counters the module keeps per thread */
	pid_t pid;			/* the target's pid (getpid() for SELF) */
	int nr_roots;
	pid_t *roots;			/* tids THREAD_START was given */

	/* VPERF_TARGET_SELF: the opener's page */
	const volatile struct vperf_thread_page *page;
	size_t page_len;
	bool page_only;			/* VPERF_EVSET_PAGE_ONLY */
	const volatile uint64_t *doorbell;	/* the device's doorbell, or NULL */
	uint32_t db_used;		/* bit k: an event reads counter k */
	uint8_t db_slot[PV_NR];		/* counter k's doorbell slot (the page's slot[]) */

	/* the module's events: counter k of every context is events[k] */
	uint32_t nr_events;
	struct vperf_thread_event events[PV_NR];

	/* sampling on vperf::vcpu-clock (TARGET_SELF): the module's ring */
	int sample_idx;			/* the sampling event, -1: none */
	struct pv_ring *ring;

	/* start/stop/reset, see the top */
	bool counting;
	int nr_keys, cap_keys;
	struct pv_key *keys;
	/* base and acc summed over the keys, for reads */
	struct vperf_thread_counter tot_base[PV_NR];
	struct vperf_thread_counter tot_acc[PV_NR];

	/* the ordinary events, counted by a "perf" set (NULL: none) */
	struct vperf_evset *perf;
	int *perf_idx;			/* [e]: index in perf, -1: a vperf:: event */
	int *outer_idx;			/* [j]: index in es of perf's event j */
};

/* A THREAD_LIST answer, or the SELF page as one row. */
struct pv_snap {
	struct vperf_thread_row *rows;
	uint32_t nr;
	uint64_t lost;
	struct vperf_thread_row local[PV_LOCAL_ROWS];
};

static __thread pid_t cached_tid;

static pid_t my_tid(void)
{
	if (!cached_tid)
		cached_tid = gettid();
	return cached_tid;
}

/* ---- the thread page ---- */

/*
 * inline: page_read_one() is the hot path, with ops NULL.  vperf_page_read()
 * (vperf.h) is the same protocol for one value, inlined into applications.
 */
static inline int page_read(const volatile struct vperf_thread_page *pg, uint32_t first, uint32_t nr,
			    struct vperf_thread_counter *out, struct vperf_pv_page_ops *ops)
{
	unsigned int tries = 0;

	if (first > VPERF_THREAD_MAX_COUNTERS || nr > VPERF_THREAD_MAX_COUNTERS - first)
		return -EINVAL;
	if (ops)
		ops->retries = 0;
	for (;;) {
		uint32_t seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);

		if (ops && ops->step)
			ops->step(ops->ctx, 0);
		if (!(seq & 1)) {
			for (uint32_t i = 0; i < nr; i++) {
				out[i].value = pg->counters[first + i].value;
				out[i].enabled = pg->counters[first + i].enabled;
				out[i].running = pg->counters[first + i].running;
			}
			if (ops && ops->step)
				ops->step(ops->ctx, 1);
			/* The copies above happen before the second load. */
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == seq)
				return 0;
		}
		if (ops)
			ops->retries++;
		if (++tries >= VPERF_PV_PAGE_MAX_RETRIES)
			return -EAGAIN;
		cpu_relax();
	}
}

int vperf__pv_page_read(const volatile struct vperf_thread_page *pg, uint32_t first, uint32_t nr,
			struct vperf_thread_counter *out, struct vperf_pv_page_ops *ops)
{
	return page_read(pg, first, nr, out, ops);
}

/* ---- counter arithmetic ---- */

static void ctr_add(struct vperf_thread_counter *d, const struct vperf_thread_counter *a)
{
	d->value += a->value;
	d->enabled += a->enabled;
	d->running += a->running;
}

/* d += a - b, each field at least 0 (the module's sums never go back). */
static void ctr_add_delta(struct vperf_thread_counter *d, const struct vperf_thread_counter *a,
			  const struct vperf_thread_counter *b)
{
	d->value += a->value > b->value ? a->value - b->value : 0;
	d->enabled += a->enabled > b->enabled ? a->enabled - b->enabled : 0;
	d->running += a->running > b->running ? a->running - b->running : 0;
}

/* ---- the device ---- */

/* Open the device, or say why not: fd, or -errno with why set. */
static int open_device(const char *dev, char *why, size_t len)
{
	int fd = vperf__pv_open(dev);

	if (fd >= 0)
		return fd;
	switch (-fd) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		snprintf(why, len, "no %s: this is not a vperf guest, or vperf_guest.ko is not "
			 "loaded (load it with 'modprobe vperf_guest' or 'insmod vperf_guest.ko')",
			 dev);
		return -ENODEV;
	case EACCES:
	case EPERM:
		snprintf(why, len, "no permission to open %s (ask the administrator for access "
			 "to it, or run as root)", dev);
		return -EACCES;
	default:
		snprintf(why, len, "cannot open %s: %s", dev, strerror(-fd));
		return fd;
	}
}

/* VPERF_IOC_INFO, checked: 0, or -errno with why set. */
static int device_info(int fd, const char *dev, struct vperf_info *info, char *why, size_t len)
{
	int ret;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	ret = vperf__pv_ioctl(fd, VPERF_IOC_INFO, info);
	if (ret == -ENOTTY || ret == -EINVAL || ret == -ENOSYS) {
		snprintf(why, len, "%s is not a vperf device (VPERF_IOC_INFO: %s)", dev,
			 strerror(-ret));
		return -ENODEV;
	}
	if (ret) {
		snprintf(why, len, "cannot query %s (VPERF_IOC_INFO): %s", dev, strerror(-ret));
		return ret;
	}
	if (info->size < VPERF_INFO_SIZE_VER0 || info->size > sizeof(*info)) {
		snprintf(why, len, "%s answered VPERF_IOC_INFO with %u bytes (this libvperf "
			 "knows %zu): vperf_guest.ko and libvperf do not match", dev, info->size,
			 sizeof(*info));
		return -EPROTO;
	}
	if (!info->nr_pages) {
		snprintf(why, len, "vperf_guest.ko reports no vCPU pages (none of %u CPUs is "
			 "registered with the hypervisor: see the kernel log, dmesg | grep vperf)",
			 info->nr_cpus);
		return -ENODEV;
	}
	return 0;
}

static int pv_probe(char *why, size_t len)
{
	const char *dev = vperf__pv_device();
	struct vperf_info info;
	int fd, ret;

	fd = open_device(dev, why, len);
	if (fd < 0)
		return fd;
	ret = device_info(fd, dev, &info, why, len);
	vperf__pv_close(fd);
	return ret;
}

/* ---- open ---- */

static void pv_close(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;

	if (!p)
		return;
	/* The ordinary events first: they may sample into this set. */
	vperf_evset__delete(p->perf);
	if (p->ring) {
		vperf__sample_unregister(p->fd);
		if (p->ring->hdr)
			vperf__pv_munmap((void *)p->ring->hdr, p->ring->len);
		free(p->ring);
	}
	if (p->page)
		vperf__pv_munmap((void *)p->page, p->page_len);
	if (p->doorbell)
		vperf__pv_munmap((void *)p->doorbell, 4096);
	if (p->fd >= 0)
		vperf__pv_close(p->fd);	/* ends the file's contexts */
	free(p->roots);
	free(p->keys);
	free(p->perf_idx);
	free(p->outer_idx);
	free(p);
	es->priv = NULL;
}

/* Give the perf set's last error to es, under es's event indexes. */
static int perf_fail(struct vperf_evset *es, int ret)
{
	struct pv_priv *p = es->priv;
	int e = p->perf->err_event;

	vperf__evset_fail(es, ret, "%s", p->perf->err);
	es->err_event = e >= 0 && e < p->perf->nr_events ? p->outer_idx[e] : -1;
	return ret;
}

/* The ordinary events, in a "perf" set of their own. */
static int open_perf_part(struct vperf_evset *es, int nr_perf)
{
	struct pv_priv *p = es->priv;
	struct vperf_evset *ps;
	char why[VPERF_ERRMSG_LEN];
	int ret;

	ret = vperf_backend_perf.probe(why, sizeof(why));
	if (ret)
		return vperf__evset_fail(es, ret, "the ordinary events of this set need the perf "
					 "backend, which is not available here: %s", why);
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	ps->events = calloc(nr_perf, sizeof(*ps->events));
	if (!ps->events) {
		free(ps);
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	}
	ps->ops = &vperf_backend_perf;
	ps->opts = es->opts;
	ps->opts.flags &= ~VPERF_EVSET_PAGE_ONLY;
	ps->opener_tid = es->opener_tid;
	ps->err_event = -1;
	ps->parent = es;
	ps->parent_idx = p->outer_idx;
	for (int j = 0; j < nr_perf; j++)
		ps->events[j] = es->events[p->outer_idx[j]];
	ps->nr_events = ps->cap_events = nr_perf;
	p->perf = ps;

	ret = ps->ops->open(ps);
	if (ret) {
		perf_fail(es, ret);
		p->perf = NULL;
		vperf_evset__delete(ps);	/* not open: frees only */
		return ret;
	}
	ps->is_open = true;
	/* What opening decided: read paths, a user-only fallback. */
	for (int j = 0; j < nr_perf; j++)
		es->events[p->outer_idx[j]] = ps->events[j];
	return 0;
}

static int start_fail(struct vperf_evset *es, int err, pid_t tid, uint32_t flags)
{
	char who[48];

	if (tid)
		snprintf(who, sizeof(who), "thread %d", (int)tid);
	else
		snprintf(who, sizeof(who), "the calling thread");
	if (flags & VPERF_THREAD_SAMPLE) {
		if (err == -EOPNOTSUPP)
			return vperf__evset_fail(es, err, "vperf::vcpu-clock cannot be sampled here: "
						 "the vperf device has no overflow NMIs (feature bit "
						 "5; an older vperf-vmm?)");
		if (err == -EIO)
			return vperf__evset_fail(es, err, "the hypervisor refused to arm vcpu-clock "
						 "overflow NMIs (see the guest's kernel log)");
		if (err == -EBUSY)
			return vperf__evset_fail(es, err, "%s cannot sample: either it is already "
						 "counted by vperf_guest.ko, or other threads sample "
						 "with another period (the module samples every vCPU "
						 "at one period at a time)", who);
	}
	switch (-err) {
	case EBUSY:
		return vperf__evset_fail(es, err, "%s is already counted by vperf_guest.ko "
					 "(another pv event set has it, and the module allows "
					 "one per thread): delete that set first", who);
	case ESRCH:
		if (es->opts.target == VPERF_TARGET_PROCESS && tid == es->opts.pid)
			return vperf__evset_fail(es, err, "no process with id %d (it may have "
						 "exited)", (int)tid);
		return vperf__evset_fail(es, err, "no thread with id %d (it may have exited)",
					 (int)tid);
	case EACCES:
	case EPERM:
		return vperf__evset_fail(es, err, "vperf_guest.ko refuses to count %s: its "
					 "'paranoid' parameter (/sys/module/vperf_guest/"
					 "parameters/paranoid; 1: threads of your own user, 2: "
					 "only your own thread) forbids it; run as root (or "
					 "with CAP_PERFMON), or count the calling thread", who);
	case ENOSPC:
		return vperf__evset_fail(es, err, "cannot count %s: the file reached "
					 "vperf_guest.ko's limit of thread contexts (its "
					 "'max_threads' parameter)", who);
	case EDQUOT:
		return vperf__evset_fail(es, err, "cannot count %s: this user's open vperf files "
					 "hold all the guest memory vperf_guest.ko gives one user "
					 "(its 'max_user_kb' parameter)", who);
	case ENODEV:
		return vperf__evset_fail(es, err, "vperf_guest.ko has no vCPU counters for %s "
					 "(a program replaced this vCPU's counters?): reload "
					 "the module", who);
	case EINVAL:
	case ENOTTY:
		return vperf__evset_fail(es, err, "vperf_guest.ko rejected "
					 "VPERF_IOC_THREAD_START for %s (%s)%s: the module may "
					 "be older than this libvperf", who, strerror(-err),
					 flags & VPERF_THREAD_INHERIT ?
					 " with VPERF_THREAD_INHERIT" : "");
	default:
		return vperf__evset_fail(es, err, "cannot count %s with vperf_guest.ko "
					 "(VPERF_IOC_THREAD_START): %s", who, strerror(-err));
	}
}

/* The module's fixed counter (enum vperf_thread_counter_index) counting ev, or -1. */
static int fixed_counter(const struct vperf_pv_event *ev)
{
	if (ev->source == VPERF_SRC_PERF && !strcmp(ev->host_name, "task-clock"))
		return VPERF_THREAD_CTR_VCPU_CLOCK;
	if (ev->source == VPERF_SRC_STEAL)
		return VPERF_THREAD_CTR_STEAL;
	if (ev->source == VPERF_SRC_EXITS && ev->arg == UINT64_MAX)
		return VPERF_THREAD_CTR_EXITS;
	return -1;
}

/*
 * Each vperf:: event's counter in the module's contexts (ev->ctr).  A set
 * whose events are all among the module's three fixed counters, exits
 * among them, uses those (no event list: every module version has them,
 * and no vCPU is reprogrammed); any other set passes its list (each
 * distinct event once, THREAD_START VER2) and counter k is the list's
 * event k.
 */
static int build_events(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;
	bool fixed = true, guest = true;

	p->nr_events = 0;
	for (int e = 0; e < es->nr_events; e++) {
		int k = es->events[e].virt ? fixed_counter(&es->events[e].pv) : VPERF_THREAD_CTR_VCPU_CLOCK;

		fixed &= k >= 0;
		guest &= k == VPERF_THREAD_CTR_VCPU_CLOCK || k == VPERF_THREAD_CTR_STEAL;
	}
	/*
	 * vcpu-clock and steal alone go as a list: the module accounts such a
	 * context by itself, without a hypercall at its switches.
	 */
	if (fixed && !guest) {
		for (int e = 0; e < es->nr_events; e++)
			if (es->events[e].virt)
				es->events[e].ctr = fixed_counter(&es->events[e].pv);
		return 0;
	}
	for (int e = 0; e < es->nr_events; e++) {
		struct vperf_event *ev = &es->events[e];
		uint32_t k;

		if (!ev->virt)
			continue;
		for (k = 0; k < p->nr_events; k++) {
			const struct vperf_thread_event *t = &p->events[k];

			if (t->source == ev->pv.source && t->arg == ev->pv.arg &&
			    !strcmp(t->name, ev->pv.host_name))
				break;
		}
		if (k == p->nr_events) {
			if (k == PV_NR) {
				es->err_event = e;
				return vperf__evset_fail(es, -E2BIG, "'%s': vperf_guest.ko counts at "
							 "most %d distinct virtualization and host "
							 "events per set", ev->name, PV_NR);
			}
			memset(&p->events[k], 0, sizeof(p->events[k]));
			p->events[k].source = ev->pv.source;
			p->events[k].arg = ev->pv.arg;
			snprintf(p->events[k].name, sizeof(p->events[k].name), "%s",
				 ev->pv.host_name);
			p->nr_events++;
		}
		ev->ctr = (int)k;
	}
	return 0;
}

/* The set's event at counter k (for messages). */
static int event_at(const struct vperf_evset *es, int k)
{
	for (int e = 0; e < es->nr_events; e++)
		if (es->events[e].virt && es->events[e].ctr == k)
			return e;
	return -1;
}

/* START refused event k: say why, naming it. */
static int event_fail(struct vperf_evset *es, int err, int k)
{
	int e = event_at(es, k);
	const char *name = e >= 0 ? es->events[e].name : "?";
	int ret;

	switch (-err) {
	case ENODEV:
		if (e >= 0 && !strncmp(es->events[e].canon, "vperf::hw:", 10))
			ret = vperf__evset_fail(es, err, "'%s' is a hardware event and the host has "
						"no PMU: nothing on this machine can count it (the "
						"vperf device's feature bit 3, host PMU, is clear)",
						name);
		else
			ret = vperf__evset_fail(es, err, "'%s' cannot be counted on this host (it "
						"has no such counter for this vCPU)", name);
		break;
	case EPERM:
		ret = vperf__evset_fail(es, err, "'%s' is refused by the host's allowlist (the "
					"events its operator lets guests count, docs/abi.md 2.3)",
					name);
		break;
	case ENOENT:
		ret = vperf__evset_fail(es, err, "the host does not know '%s' ('vperf list "
					"vperf::' in this guest shows what it offers)", name);
		break;
	case EACCES:
		ret = vperf__evset_fail(es, err, "'%s' may count the guest kernel, which "
					"vperf_guest.ko allows only with CAP_PERFMON (or "
					"CAP_SYS_ADMIN) while kernel.perf_event_paranoid is 2 or "
					"more, as perf does: count user mode only with the ':u' "
					"modifier, or run as root", name);
		break;
	case ENOSPC:
		ret = vperf__evset_fail(es, err, "'%s' cannot be counted now: vperf_guest.ko "
					"already follows 64 distinct events for the live contexts "
					"(the vCPUs count %d at once and take turns beyond)", name,
					VPERF_MAX_COUNTERS);
		break;
	case E2BIG:
		ret = vperf__evset_fail(es, err, "too many events for vperf_guest.ko: at most %d "
					"per thread", PV_NR);
		break;
	case EDQUOT:
		ret = vperf__evset_fail(es, err, "'%s' cannot be counted now: this user's "
					"contexts already hold as many distinct events as "
					"vperf_guest.ko gives one user (its 'max_user_events' "
					"parameter)", name);
		break;
	default:
		ret = vperf__evset_fail(es, err, "vperf_guest.ko refused '%s': %s", name,
					strerror(-err));
	}
	es->err_event = e;
	return ret;
}

/*
 * START refused module event k with EACCES: it may count the guest kernel
 * and this user may not (kernel.perf_event_paranoid >= 2, no CAP_PERFMON).
 * As perf does, count user mode only unless the user chose the privilege
 * levels: ":u" on the name the module passes to the host, the set's events
 * on counter k marked (their counts carry VPERF_COUNT_USER_ONLY).  True
 * when the list changed and START may be tried again.
 */
static bool user_only_retry(struct vperf_evset *es, int k)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_event *t;
	size_t n;

	if (k < 0 || (uint32_t)k >= p->nr_events)
		return false;
	t = &p->events[k];
	n = strlen(t->name);
	if (t->source != VPERF_SRC_PERF || n + 3 > sizeof(t->name))
		return false;
	for (int e = 0; e < es->nr_events; e++)
		if (es->events[e].virt && es->events[e].ctr == k &&
		    (es->events[e].user_plm || es->events[e].user_only_fallback))
			return false;
	memcpy(t->name + n, ":u", 3);
	for (int e = 0; e < es->nr_events; e++) {
		if (!es->events[e].virt || es->events[e].ctr != k)
			continue;
		es->events[e].user_only_fallback = true;
		pr_info("%s: counting user space only (kernel.perf_event_paranoid)\n",
			es->events[e].name);
	}
	return true;
}

/* VPERF_IOC_THREAD_START on tid (0: the calling thread), answer checked. */
static int start_context(struct vperf_evset *es, pid_t tid, uint32_t flags,
			 struct vperf_thread_start *st)
{
	struct pv_priv *p = es->priv;
	int ret, e;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->flags = flags;
	st->tid = tid;
	if (flags & VPERF_THREAD_SAMPLE) {
		const struct vperf_sample_opts *so = &es->events[p->sample_idx].sopts;

		st->sample_counter = (uint32_t)es->events[p->sample_idx].ctr;
		st->sample_pages = PV_RING_PAGES;
		st->sample_period = so->period;
		st->sample_signo = so->signo;
		st->sample_cookie = p->fd;	/* the signal's si_fd: sample.c finds the set by it */
	}
	st->nr_events = p->nr_events;
	st->events = (uint64_t)(uintptr_t)p->events;
	do {
		st->bad_event = -1;
		ret = vperf__pv_ioctl(p->fd, VPERF_IOC_THREAD_START, st);
	} while (ret == -EACCES && user_only_retry(es, st->bad_event));
	if (ret && st->bad_event >= 0 && st->bad_event <= PV_NR)
		return event_fail(es, ret, st->bad_event);
	if (ret)
		return start_fail(es, ret, tid, flags);
	if (st->size < VPERF_THREAD_START_SIZE_VER0 || st->size > sizeof(*st) ||
	    st->page_version != VPERF_THREAD_PAGE_VERSION ||
	    st->page_size < sizeof(struct vperf_thread_page) || st->page_size > PV_MAX_PAGE)
		return vperf__evset_fail(es, -EPROTO, "vperf_guest.ko answered "
					 "VPERF_IOC_THREAD_START with size %u, page version "
					 "%u, page size %u (this libvperf knows version %u): "
					 "the module and libvperf do not match", st->size,
					 st->page_version, st->page_size,
					 VPERF_THREAD_PAGE_VERSION);
	if (!p->nr_events) {
		/* the fixed counters: every module has them */
		e = -1;
		for (int k = 0; k < es->nr_events; k++)
			if (es->events[k].virt && (uint32_t)es->events[k].ctr >= st->nr_counters)
				e = k;
		if (e >= 0) {
			vperf__evset_fail(es, -EOPNOTSUPP, "this vperf_guest.ko keeps %u counters "
					  "per thread and '%s' is not among them: the module is "
					  "older than this libvperf", st->nr_counters,
					  es->events[e].name);
			es->err_event = e;
			return -EOPNOTSUPP;
		}
	} else if (st->size < VPERF_THREAD_START_SIZE_VER2 || st->nr_counters != p->nr_events) {
		e = event_at(es, 0);
		vperf__evset_fail(es, -EOPNOTSUPP, "this vperf_guest.ko does not take an event list "
				  "(it answered THREAD_START with size %u and %u counters for %u "
				  "events): it is older than this libvperf", st->size,
				  st->nr_counters, p->nr_events);
		es->err_event = e;
		return -EOPNOTSUPP;
	}
	if (!p->nr_ctrs || st->nr_counters < p->nr_ctrs)
		p->nr_ctrs = st->nr_counters < PV_NR ? st->nr_counters : PV_NR;
	return 0;
}

/*
 * Sample records since the last drain, in the sampled thread's signal
 * handler (async-signal-safe: loads and stores only).  One signal delivers
 * one sample (sample.c counts the others lost), with the state in its frame.
 */
static unsigned int pv_drain(void *arg, uint64_t *time, uint64_t *period, uint64_t *lost)
{
	struct pv_ring *r = arg;
	volatile struct vperf_sample_ring *h = __atomic_load_n(&r->hdr, __ATOMIC_ACQUIRE);
	uint64_t head, tail, l;
	unsigned int n = 0;

	*lost = 0;
	if (!h)
		return 0;	/* a sample before the ring is mapped (open_ring) */
	head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	tail = h->tail;
	if (tail > head || head - tail > r->nr_records)
		tail = head > r->nr_records ? head - r->nr_records : 0;	/* we scribbled: resync */
	for (; tail < head; tail++, n++)
		*time = r->recs[tail % r->nr_records].time;
	__atomic_store_n(&h->tail, tail, __ATOMIC_RELEASE);
	*period = h->period;
	l = h->lost;
	*lost = l - r->lost_seen;
	r->lost_seen = l;
	if (!__atomic_load_n(r->counting, __ATOMIC_RELAXED)) {
		*lost = 0;	/* outside start..stop: not wanted, not lost */
		return 0;
	}
	return n;
}

/*
 * Sampling, before THREAD_START: the signal handler is in place before the
 * module can send the first sample signal (its default action would kill).
 */
static int prepare_ring(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;
	struct pv_ring *r;
	int ret;

	r = calloc(1, sizeof(*r));
	if (!r)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	r->counting = &p->counting;
	p->ring = r;
	ret = vperf__sample_register(p->fd, es, p->sample_idx, r, pv_drain);
	if (ret)
		return vperf__evset_fail(es, ret, "cannot install the sample signal handler: %s",
					 strerror(-ret));
	return 0;
}

/* After THREAD_START: the ring mapped and checked, then handed to the handler. */
static int open_ring(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;
	struct pv_ring *r = p->ring;
	const volatile struct vperf_sample_ring *h;
	size_t len = (1 + PV_RING_PAGES) * 4096;
	void *m;
	int ret;

	ret = vperf__pv_mmap_ring(p->fd, len, &m);
	if (ret)
		return vperf__evset_fail(es, ret, "cannot map the sample ring of vperf_guest.ko: %s%s",
					 strerror(-ret), ret == -EACCES ? " (it maps read-write: "
					 "/dev/vperf must be writable for you)" : "");
	h = m;
	if (h->version != VPERF_SAMPLE_RING_VERSION ||
	    h->record_size != sizeof(struct vperf_sample_record) || !h->nr_records ||
	    h->nr_records > PV_RING_PAGES * 4096 / sizeof(struct vperf_sample_record)) {
		unsigned int version = h->version, rsize = h->record_size;

		vperf__pv_munmap(m, len);
		return vperf__evset_fail(es, -EPROTO, "the sample ring of vperf_guest.ko has version "
					 "%u, records of %u bytes (this libvperf knows version %u): "
					 "the module and libvperf do not match",
					 version, rsize, VPERF_SAMPLE_RING_VERSION);
	}
	r->recs = (const struct vperf_sample_record *)((char *)m + 4096);
	r->nr_records = h->nr_records;
	r->len = len;
	__atomic_store_n(&r->hdr, (volatile struct vperf_sample_ring *)m, __ATOMIC_RELEASE);
	return 0;
}

/* TARGET_SELF: the context of the calling thread and its page. */
static int open_self(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_start st;
	const volatile struct vperf_thread_page *pg;
	size_t need;
	void *m;
	int ret;

	if (p->sample_idx >= 0) {
		ret = prepare_ring(es);
		if (ret)
			return ret;
	}
	ret = start_context(es, 0, p->sample_idx >= 0 ? VPERF_THREAD_SAMPLE : 0, &st);
	if (ret)
		return ret;
	if (p->sample_idx >= 0) {
		ret = open_ring(es);
		if (ret)
			return ret;
	}
	ret = vperf__pv_mmap(p->fd, st.page_size, &m);
	if (ret)
		return vperf__evset_fail(es, ret, "cannot map the thread page of "
					 "vperf_guest.ko: %s", strerror(-ret));
	p->page = pg = m;
	p->page_len = st.page_size;
	need = __builtin_offsetof(struct vperf_thread_page, counters) +
	       p->nr_ctrs * sizeof(struct vperf_thread_counter);
	if (pg->version != VPERF_THREAD_PAGE_VERSION || pg->size < need ||
	    pg->size > st.page_size || pg->nr < p->nr_ctrs)
		return vperf__evset_fail(es, -EPROTO, "the thread page of vperf_guest.ko has "
					 "version %u, size %u, %u counters (this libvperf needs "
					 "version %u, %u counters): the module and libvperf do not "
					 "match", pg->version, pg->size, pg->nr,
					 VPERF_THREAD_PAGE_VERSION, p->nr_ctrs);
	/*
	 * The doorbell, where the device has one and the page publishes the
	 * slice's base (its size covers base_valid): exact reads without a
	 * system call.  Without it, THREAD_READ.
	 */
	if (!p->page_only &&
	    pg->size >= VPERF_THREAD_PAGE_SIZE_VER1 &&
	    vperf__pv_mmap_doorbell(p->fd, &m) == 0) {
		p->doorbell = m;
		for (uint32_t k = 0; k < p->nr_ctrs; k++)
			p->db_slot[k] = pg->slot[k] < VPERF_MAX_COUNTERS ? pg->slot[k] : 0;
	}
	p->roots = malloc(sizeof(*p->roots));
	if (!p->roots)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	p->roots[0] = es->opener_tid;
	p->nr_roots = 1;
	return 0;
}

/*
 * The opener's counts now, from its page and one doorbell load per counter
 * in use: sum + (load - base), with seq unchanged around the loads (no
 * switch, and so no migration, in between).  -EAGAIN: no base now (the
 * caller uses THREAD_READ) or the page stayed busy.
 */
static int doorbell_read(struct pv_priv *p, struct vperf_thread_counter *out)
{
	const volatile struct vperf_thread_page *pg = p->page;

	for (int tries = 0; tries < 1000; tries++) {
		uint32_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		uint64_t load[PV_NR];

		if (s1 & 1) {
			cpu_relax();
			continue;
		}
		if (!pg->base_valid)
			return -EAGAIN;
		for (uint32_t k = 0; k < p->nr_ctrs; k++) {
			out[k].value = pg->counters[k].value;
			out[k].enabled = pg->counters[k].enabled;
			out[k].running = pg->counters[k].running;
			if (p->db_used & 1u << k)
				load[k] = p->doorbell[p->db_slot[k]];	/* one VM exit */
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) != s1)
			continue;
		for (uint32_t k = 0; k < p->nr_ctrs; k++)
			if (p->db_used & 1u << k)
				out[k].value += load[k] - pg->base[k];
		return 0;
	}
	return -EAGAIN;
}

/* TARGET_THREAD and TARGET_PROCESS: contexts on each root thread. */
static int open_others(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_start st;
	uint32_t flags = 0;
	int ret, n = 0;

	if (es->opts.target == VPERF_TARGET_PROCESS) {
		flags = VPERF_THREAD_INHERIT;
		ret = vperf__list_threads(es->opts.pid, &p->roots, &p->nr_roots);
		if (ret)
			return vperf__evset_fail(es, ret, ret == -ESRCH ?
						 "no process with id %d (it may have exited)" :
						 "cannot list the threads of process %d",
						 (int)es->opts.pid);
	} else {
		p->roots = malloc(sizeof(*p->roots));
		if (!p->roots)
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
		p->roots[0] = es->opts.pid;
		p->nr_roots = 1;
	}
	for (int r = 0; r < p->nr_roots; r++) {
		ret = start_context(es, p->roots[r], flags, &st);
		/* A thread other than the leader exited since we listed it: fine. */
		if (ret == -ESRCH && flags && p->roots[r] != es->opts.pid)
			continue;
		if (ret)
			return ret;
		p->roots[n++] = p->roots[r];
	}
	p->nr_roots = n;
	return 0;
}

/* Split the events between the module and a perf set; -errno if one cannot be. */
static int split_events(struct vperf_evset *es, int *nr_pv, int *nr_perf)
{
	struct pv_priv *p = es->priv;

	p->perf_idx = malloc(es->nr_events * sizeof(*p->perf_idx));
	p->outer_idx = malloc(es->nr_events * sizeof(*p->outer_idx));
	if (!p->perf_idx || !p->outer_idx)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	*nr_pv = *nr_perf = 0;
	for (int e = 0; e < es->nr_events; e++) {
		struct vperf_event *ev = &es->events[e];

		if (!ev->virt) {
			p->outer_idx[*nr_perf] = e;
			p->perf_idx[e] = (*nr_perf)++;
			continue;
		}
		p->perf_idx[e] = -1;
		(*nr_pv)++;
		if (ev->sampling)
			p->sample_idx = e;	/* vperf_evset__sample() checked it */
	}
	return 0;
}

static int add_root_rows(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;

	for (int r = 0; r < p->nr_roots; r++)
		if (!vperf__evset_row(es, p->pid, p->roots[r], true))
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
	return 0;
}

static int pv_open(struct vperf_evset *es)
{
	const char *dev = vperf__pv_device();
	char why[VPERF_ERRMSG_LEN];
	struct pv_priv *p;
	int ret, nr_pv = 0, nr_perf = 0;

	p = calloc(1, sizeof(*p));
	if (!p)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	p->fd = -1;
	p->sample_idx = -1;
	es->priv = p;
	p->pid = es->opts.target == VPERF_TARGET_SELF ? getpid() : es->opts.pid;
	p->page_only = es->opts.flags & VPERF_EVSET_PAGE_ONLY;
	/* Counting starts at start(), or now for enable-on-exec (see the top). */
	p->counting = es->opts.flags & VPERF_EVSET_ENABLE_ON_EXEC;

	ret = split_events(es, &nr_pv, &nr_perf);
	if (!ret)
		ret = build_events(es);
	if (ret)
		goto out_close;
	if (nr_pv) {
		p->fd = open_device(dev, why, sizeof(why));
		if (p->fd < 0) {
			ret = vperf__evset_fail(es, p->fd, "%s", why);
			goto out_close;
		}
		if (es->opts.target == VPERF_TARGET_SELF)
			ret = open_self(es);
		else
			ret = open_others(es);
		if (ret)
			goto out_close;
		for (int e = 0; e < es->nr_events; e++) {
			if (!es->events[e].virt)
				continue;
			if (es->opts.target != VPERF_TARGET_SELF)
				es->events[e].read_path = VPERF_READ_SYSCALL;
			else if (p->page_only)
				es->events[e].read_path = VPERF_READ_PAGE;
			else if (p->doorbell)
				es->events[e].read_path = VPERF_READ_DOORBELL;
			else
				es->events[e].read_path = VPERF_READ_PAGE_SYNC;
			p->db_used |= 1u << es->events[e].ctr;
		}
		if (es->opts.flags & VPERF_EVSET_PER_THREAD) {
			ret = add_root_rows(es);
			if (ret)
				goto out_close;
		}
	}
	if (nr_perf) {
		ret = open_perf_part(es, nr_perf);
		if (ret)
			goto out_close;
	}
	return 0;

out_close:
	pv_close(es);
	return ret;
}

/* ---- snapshots ---- */

static void snap_release(struct pv_snap *s)
{
	if (s->rows != s->local)
		free(s->rows);
	s->rows = NULL;
}

/* The opener's page as one row; exact (THREAD_READ first) if sync. */
static int snap_self(struct vperf_evset *es, struct pv_snap *s, bool sync)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_row *r = &s->local[0];
	int ret;

	s->rows = s->local;
	s->nr = 0;
	s->lost = 0;
	memset(r, 0, sizeof(*r));
	if (sync && p->doorbell && my_tid() == es->opener_tid && doorbell_read(p, r->counters) == 0)
		goto done;
	if (sync && my_tid() == es->opener_tid) {
		ret = vperf__pv_ioctl(p->fd, VPERF_IOC_THREAD_READ, NULL);
		/* ENOENT: not the opener after all (a forked child): the page. */
		if (ret && ret != -ENOENT)
			return vperf__evset_fail(es, ret, "cannot bring the thread page up to date "
						 "(VPERF_IOC_THREAD_READ): %s", strerror(-ret));
	}
	ret = vperf__pv_page_read(p->page, 0, p->nr_ctrs, r->counters, NULL);
	if (ret)
		return vperf__evset_fail(es, ret, "the thread page of thread %d stayed busy: "
					 "vperf_guest.ko kept writing it", (int)es->opener_tid);
done:
	r->pid = p->pid;
	r->tid = es->opener_tid;
	r->nr = p->nr_ctrs;
	s->nr = 1;
	return 0;
}

/* Every row of the file (VPERF_IOC_THREAD_LIST), growing the buffer as needed. */
static int snap_list(struct vperf_evset *es, struct pv_snap *s)
{
	struct pv_priv *p = es->priv;
	uint32_t cap = PV_LOCAL_ROWS;

	s->rows = s->local;
	s->nr = 0;
	s->lost = 0;
	for (int tries = 0;; tries++) {
		struct vperf_thread_list l = {
			.size = sizeof(l),
			.row_size = sizeof(*s->rows),
			.nr_rows = cap,
			.rows = (uint64_t)(uintptr_t)s->rows,
		};
		struct vperf_thread_row *n;
		int ret = vperf__pv_ioctl(p->fd, VPERF_IOC_THREAD_LIST, &l);

		if (ret)
			return vperf__evset_fail(es, ret, "cannot read the threads' counts from "
						 "vperf_guest.ko (VPERF_IOC_THREAD_LIST): %s",
						 strerror(-ret));
		if (l.size < VPERF_THREAD_LIST_SIZE_VER0 || l.size > sizeof(l) ||
		    l.nr_rows > cap || l.row_size < VPERF_THREAD_ROW_SIZE_VER0 ||
		    l.row_size > sizeof(*s->rows))
			return vperf__evset_fail(es, -EPROTO, "vperf_guest.ko answered "
						 "VPERF_IOC_THREAD_LIST with size %u, %u "
						 "rows of %u bytes for a buffer of %u rows "
						 "of %zu: the module and libvperf do not "
						 "match", l.size, l.nr_rows, l.row_size, cap,
						 sizeof(*s->rows));
		if (l.total <= l.nr_rows) {
			s->nr = l.nr_rows;
			s->lost = l.lost;
			return 0;
		}
		if (tries == PV_LIST_TRIES)
			return vperf__evset_fail(es, -EAGAIN, "the target's threads kept "
						 "appearing faster than their counts could "
						 "be read (%u rows, then %u)", cap, l.total);
		/* More rows than room: again, with room for some newcomers. */
		cap = l.total + l.total / 4 + PV_LOCAL_ROWS;
		n = malloc((size_t)cap * sizeof(*n));
		if (!n)
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
		snap_release(s);
		s->rows = n;
	}
}

static int snap_take(struct vperf_evset *es, struct pv_snap *s, bool sync)
{
	if (es->opts.target == VPERF_TARGET_SELF)
		return snap_self(es, s, sync);
	return snap_list(es, s);
}

/* Row r's counter k, 0 where the row has fewer counters. */
static const struct vperf_thread_counter *row_ctr(const struct vperf_thread_row *r, uint32_t k)
{
	static const struct vperf_thread_counter zero;

	return k < r->nr && k < PV_NR ? &r->counters[k] : &zero;
}

/* ---- start/stop/reset state ---- */

static struct pv_key *key_get(struct pv_priv *p, pid_t pid, pid_t tid)
{
	struct pv_key *k;

	for (int i = 0; i < p->nr_keys; i++)
		if (p->keys[i].tid == tid && p->keys[i].pid == pid)
			return &p->keys[i];
	if (p->nr_keys == p->cap_keys) {
		int cap = p->cap_keys ? 2 * p->cap_keys : 16;

		k = realloc(p->keys, cap * sizeof(*k));
		if (!k)
			return NULL;
		p->keys = k;
		p->cap_keys = cap;
	}
	k = &p->keys[p->nr_keys++];
	memset(k, 0, sizeof(*k));
	k->pid = pid;
	k->tid = tid;
	return k;
}

/* Each key's current sums (cur) from a snapshot; new keys start at 0. */
static int gather(struct vperf_evset *es, const struct pv_snap *s)
{
	struct pv_priv *p = es->priv;

	for (int i = 0; i < p->nr_keys; i++)
		memset(p->keys[i].cur, 0, sizeof(p->keys[i].cur));
	for (uint32_t i = 0; i < s->nr; i++) {
		const struct vperf_thread_row *r = &s->rows[i];
		struct pv_key *k = key_get(p, r->pid, r->tid);

		if (!k)
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
		for (uint32_t c = 0; c < p->nr_ctrs; c++)
			ctr_add(&k->cur[c], row_ctr(r, c));
		if (r->comm[0]) {
			memcpy(k->comm, r->comm, sizeof(k->comm));
			k->comm[sizeof(k->comm) - 1] = '\0';
		}
	}
	return 0;
}

/* What key k counted: acc, plus cur - base while counting. */
static void key_counted(const struct pv_priv *p, const struct pv_key *k,
			struct vperf_thread_counter *out)
{
	for (uint32_t c = 0; c < p->nr_ctrs; c++) {
		out[c] = k->acc[c];
		if (p->counting)
			ctr_add_delta(&out[c], &k->cur[c], &k->base[c]);
	}
}

static int pv_ctl_counters(struct vperf_evset *es, int op)
{
	struct pv_priv *p = es->priv;
	struct pv_snap s;
	int ret;

	/* Boundaries are exact where they can be: THREAD_READ for SELF. */
	ret = snap_take(es, &s, true);
	if (!ret)
		ret = gather(es, &s);
	snap_release(&s);
	if (ret)
		return ret;
	for (int i = 0; i < p->nr_keys; i++) {
		struct pv_key *k = &p->keys[i];

		for (uint32_t c = 0; c < p->nr_ctrs; c++) {
			if (op == VPERF_CTL_START && !p->counting) {
				k->base[c] = k->cur[c];
			} else if (op == VPERF_CTL_STOP && p->counting) {
				ctr_add_delta(&k->acc[c], &k->cur[c], &k->base[c]);
			} else if (op == VPERF_CTL_RESET) {
				/* The value only, as perf's IOC_RESET: times go on. */
				k->acc[c].value = 0;
				k->base[c].value = k->cur[c].value;
			}
		}
	}
	if (op != VPERF_CTL_RESET)
		p->counting = op == VPERF_CTL_START;
	memset(p->tot_base, 0, sizeof(p->tot_base));
	memset(p->tot_acc, 0, sizeof(p->tot_acc));
	for (int i = 0; i < p->nr_keys; i++) {
		for (uint32_t c = 0; c < p->nr_ctrs; c++) {
			ctr_add(&p->tot_base[c], &p->keys[i].base[c]);
			ctr_add(&p->tot_acc[c], &p->keys[i].acc[c]);
		}
	}
	return 0;
}

static int pv_ctl(struct vperf_evset *es, int op)
{
	struct pv_priv *p = es->priv;
	int ret = 0;

	if (p->fd >= 0)
		ret = pv_ctl_counters(es, op);
	if (!ret && p->perf) {
		ret = p->perf->ops->ctl(p->perf, op);
		if (ret)
			perf_fail(es, ret);
	}
	return ret;
}

/* ---- reads ---- */

/*
 * The counts of the whole target from a snapshot: acc plus (sum - base)
 * while counting, over the totals of every key (a key seen first now has
 * base 0).  Reads run concurrently with each other: nothing here writes
 * to the set but the lost count.
 */
static int read_totals(struct vperf_evset *es, struct vperf_thread_counter *out)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_counter sum[PV_NR];
	struct pv_snap s;
	int ret;

	ret = snap_take(es, &s, !p->page_only);
	if (ret) {
		snap_release(&s);
		return ret;
	}
	memset(sum, 0, sizeof(sum));
	for (uint32_t i = 0; i < s.nr; i++)
		for (uint32_t c = 0; c < p->nr_ctrs; c++)
			ctr_add(&sum[c], row_ctr(&s.rows[i], c));
	for (uint32_t c = 0; c < p->nr_ctrs; c++) {
		out[c] = p->tot_acc[c];
		if (p->counting)
			ctr_add_delta(&out[c], &sum[c], &p->tot_base[c]);
	}
	if (es->opts.target != VPERF_TARGET_SELF)
		__atomic_store_n(&es->threads_lost,
				 (p->perf ? p->perf->threads_lost : 0) + s.lost, __ATOMIC_RELAXED);
	snap_release(&s);
	return 0;
}

static void set_count(struct vperf_count *c, const struct vperf_thread_counter *v)
{
	vperf__count_set(c, v->value, v->enabled, v->running);
}

static int pv_read_all(struct vperf_evset *es, struct vperf_count *c, size_t n)
{
	struct pv_priv *p = es->priv;
	int nr_perf = 0, ret;
	bool pv = false;

	for (size_t e = 0; e < n; e++) {
		if (p->perf_idx[e] < 0)
			pv = true;
		else
			nr_perf = p->perf_idx[e] + 1;
	}
	if (nr_perf) {
		struct vperf_count tmp[VPERF_MAX_EVENTS];

		ret = p->perf->ops->read_all(p->perf, tmp, (size_t)nr_perf);
		if (ret)
			return perf_fail(es, ret);
		for (int j = 0; j < nr_perf; j++)
			c[p->outer_idx[j]] = tmp[j];
	}
	if (pv) {
		struct vperf_thread_counter tot[PV_NR];

		ret = read_totals(es, tot);
		if (ret)
			return ret;
		for (size_t e = 0; e < n; e++)
			if (p->perf_idx[e] < 0)
				set_count(&c[e], &tot[es->events[e].ctr]);
	}
	return 0;
}

/*
 * A page read of one counter of the opener's page: what read_totals() gives
 * for a SELF page-only set, without copying the whole row.  This is the
 * read that is meant to cost a few loads (bench/guest: "page_read").
 */
static int page_read_one(struct vperf_evset *es, uint32_t k, struct vperf_count *c)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_counter cur = { 0, 0, 0 }, out;
	int ret;

	if (k >= PV_NR)
		return -EINVAL;
	if (k < p->nr_ctrs) {
		ret = page_read(p->page, k, 1, &cur, NULL);
		if (ret)
			return vperf__evset_fail(es, ret, "the thread page of thread %d stayed busy: "
						 "vperf_guest.ko kept writing it", (int)es->opener_tid);
	}
	out = p->tot_acc[k];
	if (p->counting)
		ctr_add_delta(&out, &cur, &p->tot_base[k]);
	set_count(c, &out);
	return 0;
}

/* vperf_page_read() (vperf.h) inlines this layout into applications. */
_Static_assert(offsetof(struct vperf_thread_page, seq) == VPERF_PAGE_SEQ_OFFSET, "page seq offset");
_Static_assert(offsetof(struct vperf_thread_page, counters) == VPERF_PAGE_COUNTERS_OFFSET, "page counters offset");
_Static_assert(sizeof(struct vperf_thread_counter) == VPERF_PAGE_COUNTER_SIZE, "page counter size");
_Static_assert(offsetof(struct vperf_thread_counter, value) == 0, "page counter value offset");

static int pv_page_ref(const struct vperf_evset *es, int e, struct vperf_page_ref *ref)
{
	const struct pv_priv *p = es->priv;
	int k;

	if (es->opts.target != VPERF_TARGET_SELF || !p->page || p->perf_idx[e] >= 0 || !es->events[e].virt)
		return -EOPNOTSUPP;
	k = es->events[e].ctr;
	if (k < 0 || (uint32_t)k >= p->nr_ctrs)
		return -EOPNOTSUPP;	/* a count the module does not keep per thread */
	ref->page = p->page;
	ref->slot = (uint32_t)k;
	return 0;
}

static int pv_read(struct vperf_evset *es, int e, struct vperf_count *c)
{
	struct pv_priv *p = es->priv;
	struct vperf_thread_counter tot[PV_NR];
	int ret;

	if (p->perf_idx[e] >= 0) {
		ret = p->perf->ops->read(p->perf, p->perf_idx[e], c);
		return ret ? perf_fail(es, ret) : 0;
	}
	if (p->page_only && es->opts.target == VPERF_TARGET_SELF)
		return page_read_one(es, (uint32_t)es->events[e].ctr, c);
	ret = read_totals(es, tot);
	if (ret)
		return ret;
	set_count(c, &tot[es->events[e].ctr]);
	return 0;
}

/* ---- per-thread rows ---- */

static bool is_root(const struct pv_priv *p, pid_t tid)
{
	for (int r = 0; r < p->nr_roots; r++)
		if (p->roots[r] == tid)
			return true;
	return false;
}

static int pv_poll_threads(struct vperf_evset *es)
{
	struct pv_priv *p = es->priv;
	struct pv_snap s;
	int ret, err = 0;

	if (p->perf) {
		err = p->perf->ops->poll_threads(p->perf);
		if (err)
			perf_fail(es, err);
	}
	if (p->fd >= 0) {
		ret = snap_take(es, &s, false);
		if (!ret)
			ret = gather(es, &s);
		if (!ret)
			es->threads_lost = (p->perf ? p->perf->threads_lost : 0) + s.lost;
		snap_release(&s);
		if (ret)
			return ret;
	} else if (p->perf) {
		es->threads_lost = p->perf->threads_lost;
	}

	/* Rebuilt from both sides each time. */
	for (int i = 0; i < es->nr_rows; i++)
		es->rows[i].reported = 0;
	for (int i = 0; p->perf && i < p->perf->nr_rows; i++) {
		const struct vperf_evset_row *pr = &p->perf->rows[i];
		struct vperf_evset_row *row = vperf__evset_row(es, pr->pid, pr->tid, pr->root);

		if (!row)
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
		for (int j = 0; j < p->perf->nr_events; j++) {
			row->counts[p->outer_idx[j]] = pr->counts[j];
			row->reads[p->outer_idx[j]] = pr->counts[j];
			row->reported |= 1ull << p->outer_idx[j];
		}
		if (!row->comm[0])
			memcpy(row->comm, pr->comm, sizeof(row->comm));
	}
	for (int i = 0; i < p->nr_keys; i++) {
		const struct pv_key *k = &p->keys[i];
		struct vperf_evset_row *row = vperf__evset_row(es, k->pid, k->tid,
							       is_root(p, k->tid));
		struct vperf_thread_counter v[PV_NR];

		if (!row)
			return vperf__evset_fail(es, -ENOMEM, "out of memory");
		key_counted(p, k, v);
		for (int e = 0; e < es->nr_events; e++) {
			if (!es->events[e].virt)
				continue;
			set_count(&row->counts[e], &v[es->events[e].ctr]);
			row->reads[e] = row->counts[e];
			row->reported |= 1ull << e;
		}
		/* The module's name outlives the thread, as perf's COMM record does. */
		if (k->comm[0])
			memcpy(row->comm, k->comm, sizeof(row->comm));
	}
	/* What a side has not reported for a thread is not counted there. */
	for (int i = 0; i < es->nr_rows; i++)
		for (int e = 0; e < es->nr_events; e++)
			if (!(es->rows[i].reported & (1ull << e)))
				vperf__count_set(&es->rows[i].counts[e], 0, 0, 0);
	return err;
}

const struct vperf_backend_ops vperf_backend_pv = {
	.name = "pv",
	.probe = pv_probe,
	.open = pv_open,
	.close = pv_close,
	.ctl = pv_ctl,
	.read = pv_read,
	.read_all = pv_read_all,
	.poll_threads = pv_poll_threads,
	.page_ref = pv_page_ref,
};
