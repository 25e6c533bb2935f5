// SPDX-License-Identifier: MIT
/*
 * VPERF_HC_EVENT_INFO: the events the device offers, one per index, so
 * that a guest lists them (`vperf list`) instead of guessing names
 * (docs/abi.md 2.3, "Discovery").  The list is computed, never stored in
 * the guest's terms: sections in a fixed order, each counting its entries
 * from host facts (libpfm4's core PMUs, the vCPU's KVM stats, the VMM's
 * exit reasons), so an index needs no state but two caches of names that
 * do not change while the process runs.  Statuses say what COUNTERS_SET
 * would answer, decided without opening anything.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hv-internal.h"

#include <perfmon/pfmlib_perf_event.h>

/* perf's generic hardware events: offered even without a PMU (status ENODEV). */
static const char *const hw_generic[] = {
	"instructions", "cycles", "cache-references", "cache-misses",
	"branch-instructions", "branch-misses",
};

/* The software events of the vCPU thread worth counting (perf's names). */
static const char *const sw_events[] = {
	"task-clock", "cpu-clock", "context-switches", "cpu-migrations",
	"page-faults", "minor-faults", "major-faults",
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))
#define EXIT_REASONS 256	/* COUNTERS_SET takes EXITS reasons 0..255 */

/*
 * The events of the host's core PMUs, "pmu::event", built once per process
 * (the host's PMUs do not change): those COUNTERS_SET resolves as named
 * (hv_pfm_encode).  Events that need a unit mask the guest must spell out
 * are left out, and so are names too long for a descriptor.
 */
static pthread_once_t pmu_once = PTHREAD_ONCE_INIT;
static char (*pmu_names)[VPERF_EVENT_NAME_LEN];
static uint32_t nr_pmu_names;

/* Calls fn for each listable event of the present core PMUs; returns how many. */
static uint32_t pmu_walk(void (*fn)(const char *name, uint32_t i))
{
	char name[VPERF_EVENT_NAME_LEN + 1];
	struct perf_event_attr attr;
	uint32_t n = 0;

	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo;

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS || !pinfo.is_present ||
		    pinfo.type != PFM_PMU_TYPE_CORE)
			continue;
		for (int e = pinfo.first_event; e != -1; e = pfm_get_event_next(e)) {
			pfm_event_info_t einfo;
			int len;

			memset(&einfo, 0, sizeof(einfo));
			einfo.size = sizeof(einfo);
			if (pfm_get_event_info(e, PFM_OS_NONE, &einfo) != PFM_SUCCESS)
				continue;
			len = snprintf(name, sizeof(name), "%s::%s", pinfo.name, einfo.name);
			if (len < 0 || len >= VPERF_EVENT_NAME_LEN ||
			    hv_pfm_encode(name, &attr, NULL))
				continue;
			if (fn)
				fn(name, n);
			n++;
		}
	}
	return n;
}

static uint32_t pmu_room;

static void pmu_keep(const char *name, uint32_t i)
{
	if (i < pmu_room)
		memcpy(pmu_names[i], name, strlen(name));
}

static void pmu_names_build(void)
{
	uint32_t n;

	if (hv_pfm_ready())
		return;
	n = pmu_walk(NULL);
	if (!n)
		return;
	pmu_names = calloc(n, sizeof(*pmu_names));
	if (!pmu_names)
		return;
	/* the same walk again: libpfm4's tables are constant */
	pmu_room = n;
	nr_pmu_names = pmu_walk(pmu_keep) == n ? n : 0;
}

/* The vCPU's KVM stat names, read on first use (the stats fd's layout is fixed). */
static uint32_t kvm_names(struct hv_vcpu *v)
{
	struct vperf_hv *hv = v->hv;
	int fd;

	if (v->kvm_names)
		return v->nr_kvm_names;
	fd = hv->ops->stats_fd ? hv->ops->stats_fd(hv->vmm, v->idx) : -1;
	if (fd < 0 || hv_kvm_stat_names(fd, &v->kvm_names, &v->nr_kvm_names))
		return 0;	/* none now; a later call tries again */
	return v->nr_kvm_names;
}

/*
 * The index-th exit reason the VMM names: true with its *reason and *name;
 * false with *count, how many reasons it names.
 */
static bool named_exit(const struct vperf_hv *hv, uint64_t index, uint32_t *reason,
		       const char **name, uint32_t *count)
{
	*count = 0;
	if (!hv->ops->exit_name)
		return false;
	for (uint32_t r = 0; r < EXIT_REASONS; r++) {
		const char *s = hv->ops->exit_name(hv->vmm, r);

		if (!s || !s[0])
			continue;
		if ((*count)++ == index) {
			*reason = r;
			*name = s;
			return true;
		}
	}
	return false;
}

/* What COUNTERS_SET answers for a PERF event, in its order of checks (open_perf). */
static int perf_status(const struct hv_vcpu *v, const char *name)
{
	struct hv_perf_event ev;
	int ret = hv_perf_decide(v->hv, name, &ev);

	if (ret)
		return -ret;		/* ENODEV without libpfm4, EPERM where refused */
	if (!v->tid)
		return VPERF_ESTATE;	/* no thread to attach to (never for a running vCPU) */
	if (ev.kind == SRC_HW && !v->hv->host_pmu)
		return VPERF_ENODEV;
	return 0;
}

static int allow_status(const struct hv_vcpu *v, const char *kind, const char *name)
{
	return hv_allowed(v->hv, kind, name) ? 0 : VPERF_EPERM;
}

static void set_desc(struct vperf_event_desc *d, uint32_t source, uint64_t arg, const char *name)
{
	size_t len = strnlen(name, VPERF_EVENT_NAME_LEN - 1);

	memset(d, 0, sizeof(*d));
	d->source = source;
	d->arg = arg;
	memcpy(d->name, name, len);
}

/*
 * Entry index of v's list into *d: its status (>= 0), or -VPERF_ENOENT
 * past the end.  Each section takes its entries off index in turn.
 */
static int event_at(struct hv_vcpu *v, uint64_t index, struct vperf_event_desc *d)
{
	struct vperf_hv *hv = v->hv;
	const char *name = NULL;
	char key[16];
	uint32_t n, reason;

	if (index < NR(hw_generic)) {
		set_desc(d, VPERF_SRC_PERF, 0, hw_generic[index]);
		return perf_status(v, d->name);
	}
	index -= NR(hw_generic);
	if (hv->host_pmu) {
		pthread_once(&pmu_once, pmu_names_build);
		if (index < nr_pmu_names) {
			set_desc(d, VPERF_SRC_PERF, 0, pmu_names[index]);
			return perf_status(v, d->name);
		}
		index -= nr_pmu_names;
	}
	if (index < NR(sw_events)) {
		set_desc(d, VPERF_SRC_PERF, 0, sw_events[index]);
		return perf_status(v, d->name);
	}
	index -= NR(sw_events);
	n = kvm_names(v);
	if (index < n) {
		set_desc(d, VPERF_SRC_KVM_STAT, 0, v->kvm_names[index]);
		return allow_status(v, "kvm", d->name);
	}
	index -= n;
	if (index == 0) {
		set_desc(d, VPERF_SRC_EXITS, UINT64_MAX, "all");
		return allow_status(v, "exits", "all");
	}
	index--;
	if (named_exit(hv, index, &reason, &name, &n)) {
		set_desc(d, VPERF_SRC_EXITS, reason, name);
		snprintf(key, sizeof(key), "%" PRIu32, reason);
		return allow_status(v, "exits", key);
	}
	index -= n;
	if (index == 0) {
		set_desc(d, VPERF_SRC_STEAL, 0, "steal");
		if (!hv_allowed(hv, "steal", "steal"))
			return VPERF_EPERM;
		return v->schedstat_fd < 0 ? VPERF_ENODEV : 0;	/* COUNTERS_SET reads it */
	}
	return -VPERF_ENOENT;
}

int64_t hv_event_info(struct hv_vcpu *v, uint64_t index, uint64_t gpa)
{
	struct vperf_hv *hv = v->hv;
	struct vperf_event_desc d;
	void *dst = hv->ops->gpa_to_hva(hv->vmm, gpa, sizeof(d));
	int ret;

	if (!dst)
		return -VPERF_EFAULT;
	ret = event_at(v, index, &d);
	if (ret < 0)
		return ret;
	/* one copy of a whole descriptor: the guest never sees a half-written one from us */
	memcpy(dst, &d, sizeof(d));
	return ret;
}
