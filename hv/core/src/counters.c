// SPDX-License-Identifier: MIT
/*
 * The host sources behind a vCPU's virtual counters:
 *   hw    a PMU event on the vCPU thread, counting guest mode only
 *   sw    a software event of the vCPU thread (task-clock, cpu-clock, ...)
 *   kvm   a KVM binary statistic of the vCPU
 *   exits the VMM's own count of the vCPU's exits (all, or one reason)
 *   steal the vCPU thread's run delay (schedstat): time it was runnable
 *         but the host ran something else
 * Every counter counts from the moment it was set.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>

#include "hv-internal.h"

#include <perfmon/pfmlib_perf_event.h>


static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_init_once(void)
{
	pfm_status = pfm_initialize();
}

int hv_pfm_ready(void)
{
	pthread_once(&pfm_once, pfm_init_once);
	return pfm_status == PFM_SUCCESS ? 0 : -VPERF_ENODEV;
}

int hv_pfm_encode(const char *name, struct perf_event_attr *attr, int *idx)
{
	pfm_perf_encode_arg_t arg;
	int ret = hv_pfm_ready();

	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret == PFM_ERR_NOTFOUND)
		return -VPERF_ENOENT;
	if (ret != PFM_SUCCESS)
		return -VPERF_EINVAL;
	if (idx)
		*idx = arg.idx;
	return 0;
}

/* perf's names of the software events, by config. */
static const char *sw_name(uint64_t config)
{
	static const char *const names[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
		"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
	};

	return config < sizeof(names) / sizeof(names[0]) ? names[config] : "unknown";
}

/* perf's names of the generic hardware events, by config (PERF_COUNT_HW_*). */
static const char *const hw_names[PERF_COUNT_HW_MAX] = {
	[PERF_COUNT_HW_CPU_CYCLES] = "cycles",
	[PERF_COUNT_HW_INSTRUCTIONS] = "instructions",
	[PERF_COUNT_HW_CACHE_REFERENCES] = "cache-references",
	[PERF_COUNT_HW_CACHE_MISSES] = "cache-misses",
	[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = "branch-instructions",
	[PERF_COUNT_HW_BRANCH_MISSES] = "branch-misses",
	[PERF_COUNT_HW_BUS_CYCLES] = "bus-cycles",
	[PERF_COUNT_HW_STALLED_CYCLES_FRONTEND] = "stalled-cycles-frontend",
	[PERF_COUNT_HW_STALLED_CYCLES_BACKEND] = "stalled-cycles-backend",
	[PERF_COUNT_HW_REF_CPU_CYCLES] = "ref-cycles",
};

/*
 * perf's name of a generic cache event ("L1-dcache-load-misses"): config is
 * cache | op << 8 | result << 16 and nothing else.  False if it is not one.
 */
static bool hw_cache_name(uint64_t config, char *buf, size_t len)
{
	static const char *const cache[PERF_COUNT_HW_CACHE_MAX] = {
		"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
	};
	static const char *const op[PERF_COUNT_HW_CACHE_OP_MAX][PERF_COUNT_HW_CACHE_RESULT_MAX] = {
		{ "loads", "load-misses" },
		{ "stores", "store-misses" },
		{ "prefetches", "prefetch-misses" },
	};
	uint64_t c = config & 0xff, o = (config >> 8) & 0xff, r = (config >> 16) & 0xff;

	if (config >> 24 || c >= PERF_COUNT_HW_CACHE_MAX || o >= PERF_COUNT_HW_CACHE_OP_MAX ||
	    r >= PERF_COUNT_HW_CACHE_RESULT_MAX)
		return false;
	snprintf(buf, len, "%s-%s", cache[c], op[o][r]);
	return true;
}

/*
 * The x86 event select register, as a raw config carries it (Intel SDM vol. 3B,
 * IA32_PERFEVTSELx; AMD APM vol. 2, PerfEvtSeln; libpfm4's pfm_intel_x86_reg_t
 * and pfm_amd64_reg_t say the same).
 */
#define X86_EVENT	0xffull			/* event select [7:0] */
#define X86_UMASK	0xff00ull		/* unit mask */
#define X86_EDGE	(1ull << 18)		/* edge detect */
#define X86_ANY		(1ull << 21)		/* Intel AnyThread: both SMT threads */
#define X86_INV		(1ull << 23)		/* invert the counter mask */
#define X86_CMASK	(0xffull << 24)		/* counter mask */
#define AMD_EVENT_HI	(0xfull << 32)		/* AMD: event select [11:8] */
#define AMD_GUEST_HOST	(3ull << 40)		/* AMD: GuestOnly (40), HostOnly (41) */

/* Does the host's CPU read raw configs AMD's way (event select bits in 32-35)? */
static bool host_is_amd(void)
{
	uint32_t a = 0, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	/* the vendor, EBX its first four bytes: "Auth"enticAMD, "Hygo"nGenuine */
	return b == 0x68747541 || b == 0x6f677948;
}

/* Keep the filter bits of config under mask if the operator allows "rawmod:what". */
static int raw_filter(const struct vperf_hv *hv, uint64_t config, uint64_t mask, const char *what,
		      uint64_t *keep)
{
	if (!(config & mask))
		return 0;
	if (!hv_allowed(hv, "rawmod", what))
		return -VPERF_EPERM;
	*keep |= mask;
	return 0;
}

/*
 * A raw event (PERF_TYPE_RAW, or a hybrid core PMU's dynamic type): the PMU
 * libpfm4 encoded it for decides its layout and its name.  Only a core PMU's
 * events and perf_raw's are x86 event selects of the vCPU thread; anything
 * else (uncore, IBS, RAPL) counts more than that: never.
 */
static int raw_decide(const struct vperf_hv *hv, int idx, struct perf_event_attr *attr,
		      char *name, size_t len)
{
	uint64_t config = attr->config, keep = X86_EVENT | X86_UMASK;
	pfm_event_info_t einfo;
	pfm_pmu_info_t pinfo;
	bool amd;
	int ret;

	memset(&einfo, 0, sizeof(einfo));
	einfo.size = sizeof(einfo);
	memset(&pinfo, 0, sizeof(pinfo));
	pinfo.size = sizeof(pinfo);
	if (pfm_get_event_info(idx, PFM_OS_NONE, &einfo) != PFM_SUCCESS ||
	    pfm_get_pmu_info(einfo.pmu, &pinfo) != PFM_SUCCESS)
		return -VPERF_EPERM;
	if (einfo.pmu == PFM_PMU_PERF_EVENT_RAW && attr->type == PERF_TYPE_RAW)
		amd = host_is_amd();
	else if (pinfo.type == PFM_PMU_TYPE_CORE)
		amd = !strncmp(pinfo.name, "amd64", 5);
	else
		return -VPERF_EPERM;
	if (amd)
		keep |= AMD_EVENT_HI;
	/* never: the SMT sibling's events (other VMs, the host), or host-only counting */
	if (config & (X86_ANY | AMD_GUEST_HOST))
		return -VPERF_EPERM;
	/* the counter-mask filters only where the operator allows each */
	ret = raw_filter(hv, config, X86_EDGE, "edge", &keep);
	if (!ret)
		ret = raw_filter(hv, config, X86_INV, "inv", &keep);
	if (!ret)
		ret = raw_filter(hv, config, X86_CMASK, "cmask", &keep);
	if (ret)
		return ret;
	/* the rest is not the guest's: privilege, interrupt, enable, pin control, TSX filters */
	attr->config = config & keep;
	if (einfo.pmu == PFM_PMU_PERF_EVENT_RAW)
		snprintf(name, len, "perf_raw::r%04" PRIx64, (uint64_t)attr->config);
	else
		snprintf(name, len, "%s::%s", pinfo.name, einfo.name);
	return 0;
}

int hv_perf_decide(const struct vperf_hv *hv, const char *text, struct hv_perf_event *ev)
{
	struct perf_event_attr enc;
	const char *src;
	int idx = -1, ret;

	memset(ev, 0, sizeof(*ev));
	ret = hv_pfm_encode(text, &enc, &idx);
	if (ret)
		return ret;
	/*
	 * What no modifier may ask for, whatever the event: a counter that pins
	 * or owns the host's PMU (pinned, exclusive), PEBS (precise_ip: the PMU
	 * writes into host memory), frequency mode, the extra registers (offcore
	 * response, load latency, frontend: config1, config2).
	 */
	if (enc.pinned || enc.exclusive || enc.precise_ip || enc.freq || enc.config1 || enc.config2)
		return -VPERF_EPERM;
	ev->kind = SRC_HW;
	switch (enc.type) {
	case PERF_TYPE_SOFTWARE:
		ev->kind = SRC_SW;
		src = "sw";
		snprintf(ev->name, sizeof(ev->name), "%s", sw_name(enc.config));
		break;
	case PERF_TYPE_HARDWARE:
		/* bits 32-63 would name a hybrid PMU: perf's generic events only */
		if (enc.config >= PERF_COUNT_HW_MAX || !hw_names[enc.config])
			return -VPERF_EPERM;
		src = "hw";
		snprintf(ev->name, sizeof(ev->name), "%s", hw_names[enc.config]);
		break;
	case PERF_TYPE_HW_CACHE:
		if (!hw_cache_name(enc.config, ev->name, sizeof(ev->name)))
			return -VPERF_EPERM;
		src = "hw";
		break;
	default:
		/* tracepoints, breakpoints: never; a dynamic type: a core PMU's event or nothing */
		if (enc.type != PERF_TYPE_RAW && enc.type < PERF_TYPE_MAX)
			return -VPERF_EPERM;
		src = "raw";
		ret = raw_decide(hv, idx, &enc, ev->name, sizeof(ev->name));
		if (ret)
			return ret;
		break;
	}
	if (!hv_allowed(hv, src, ev->name))
		return -VPERF_EPERM;
	/* A new attr from what was decided: nothing else the encoding carried reaches the host. */
	ev->attr.size = sizeof(ev->attr);
	ev->attr.type = enc.type;
	ev->attr.config = enc.config;
	ev->attr.exclude_user = enc.exclude_user;
	ev->attr.exclude_kernel = enc.exclude_kernel;
	ev->attr.exclude_hv = enc.exclude_hv;
	if (ev->kind == SRC_HW) {
		/* count what the guest does, never the host */
		ev->attr.exclude_host = 1;
		ev->attr.exclude_guest = 0;
	}
	return 0;
}

static bool is_clock(const struct hv_counter *c)
{
	return c->kind == SRC_SW && (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock"));
}

static int open_perf(struct hv_vcpu *v, struct hv_counter *c, const char *name)
{
	struct vperf_hv *hv = v->hv;
	struct hv_perf_event ev;
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = v->tid };
	int fd, ret;

	ret = hv_perf_decide(hv, name, &ev);
	if (ret)
		return ret;
	c->kind = ev.kind;
	snprintf(c->name, sizeof(c->name), "%s", ev.name);
	if (!v->tid)
		return -VPERF_ESTATE;

	ev.attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	ev.attr.sample_period = HV_NEVER_PERIOD;
	ev.attr.wakeup_events = 1;
	fd = (int)syscall(SYS_perf_event_open, &ev.attr, v->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (c->kind == SRC_HW && !hv->host_pmu)
			return -VPERF_ENODEV;
		return e == EACCES || e == EPERM ? -VPERF_EPERM :
		       e == ENOENT || e == EOPNOTSUPP || e == ENODEV ? -VPERF_ENODEV : -VPERF_EINVAL;
	}
	/* Overflows signal the vCPU thread, which injects (see hv.c). */
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, vperf_hv__signal()) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC)) {
		close(fd);
		return -VPERF_EINVAL;
	}
	c->fd = fd;
	return 0;
}

/* A stats fd's header and descriptors (descs: h.num_desc of dsz bytes each, names terminated). */
struct kvm_stats {
	struct kvm_stats_header h;
	size_t dsz;
	char *descs;			/* malloc'd */
};

static int kvm_stats_read(int fd, struct kvm_stats *st)
{
	struct kvm_stats_header *h = &st->h;

	if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h))
		return -VPERF_ENODEV;
	if (!h->num_desc || h->num_desc > 4096 || !h->name_size || h->name_size > 4096)
		return -VPERF_ENODEV;
	st->dsz = sizeof(struct kvm_stats_desc) + h->name_size;
	st->descs = malloc(st->dsz * h->num_desc);
	if (!st->descs)
		return -VPERF_ENOSPC;
	if (pread(fd, st->descs, st->dsz * h->num_desc, h->desc_offset) !=
	    (ssize_t)(st->dsz * h->num_desc)) {
		free(st->descs);
		return -VPERF_ENODEV;
	}
	for (uint32_t i = 0; i < h->num_desc; i++)
		((struct kvm_stats_desc *)(st->descs + i * st->dsz))->name[h->name_size - 1] = '\0';
	return 0;
}

static const struct kvm_stats_desc *kvm_stats_desc(const struct kvm_stats *st, uint32_t i)
{
	return (const struct kvm_stats_desc *)(st->descs + i * st->dsz);
}

/* A single value that counts (histograms are not counters). */
static bool kvm_stat_is_counter(const struct kvm_stats_desc *d)
{
	uint32_t type = d->flags & KVM_STATS_TYPE_MASK;

	return d->size == 1 && (type == KVM_STATS_TYPE_CUMULATIVE ||
				type == KVM_STATS_TYPE_INSTANT || type == KVM_STATS_TYPE_PEAK);
}

int hv_kvm_stat_offset(int fd, const char *name, uint32_t *offset)
{
	struct kvm_stats st;
	int ret = kvm_stats_read(fd, &st);

	if (ret)
		return ret;
	ret = -VPERF_ENOENT;
	for (uint32_t i = 0; i < st.h.num_desc; i++) {
		const struct kvm_stats_desc *d = kvm_stats_desc(&st, i);

		if (strcmp(d->name, name))
			continue;
		if (kvm_stat_is_counter(d)) {
			*offset = st.h.data_offset + d->offset;
			ret = 0;
		} else {
			ret = -VPERF_EINVAL;
		}
		break;
	}
	free(st.descs);
	return ret;
}

int hv_kvm_stat_names(int fd, char (**names)[VPERF_EVENT_NAME_LEN], uint32_t *nr)
{
	struct kvm_stats st;
	int ret = kvm_stats_read(fd, &st);

	if (ret)
		return ret;
	*nr = 0;
	*names = calloc(st.h.num_desc, sizeof(**names));
	if (!*names) {
		free(st.descs);
		return -VPERF_ENOSPC;
	}
	for (uint32_t i = 0; i < st.h.num_desc; i++) {
		const struct kvm_stats_desc *d = kvm_stats_desc(&st, i);

		/* a name that does not fit a descriptor could not be asked for */
		if (kvm_stat_is_counter(d) && d->name[0] && strlen(d->name) < VPERF_EVENT_NAME_LEN)
			memcpy((*names)[(*nr)++], d->name, strlen(d->name));
	}
	free(st.descs);
	return 0;
}

/* Raw value of a non-perf source now. */
static int raw_read(struct hv_vcpu *v, struct hv_counter *c, uint64_t *val)
{
	struct vperf_hv *hv = v->hv;

	switch (c->kind) {
	case SRC_KVM: {
		int fd = hv->ops->stats_fd ? hv->ops->stats_fd(hv->vmm, v->idx) : -1;

		if (fd < 0 || pread(fd, val, sizeof(*val), c->kvm_offset) != (ssize_t)sizeof(*val))
			return -VPERF_ENODEV;
		return 0;
	}
	case SRC_EXITS:
		*val = hv->ops->exit_count(hv->vmm, v->idx, c->exit_reason);
		return 0;
	case SRC_STEAL: {
		char buf[128];
		unsigned long long run, delay;
		ssize_t n;

		if (v->schedstat_fd < 0)
			return -VPERF_ENODEV;
		n = pread(v->schedstat_fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			return -VPERF_ENODEV;
		buf[n] = '\0';
		if (sscanf(buf, "%llu %llu", &run, &delay) != 2)
			return -VPERF_ENODEV;
		*val = delay;
		return 0;
	}
	default:
		return -VPERF_EINVAL;
	}
}

int hv_counter_open(struct hv_vcpu *v, struct hv_counter *c, const struct vperf_event_desc *d)
{
	struct vperf_hv *hv = v->hv;
	char name[VPERF_EVENT_NAME_LEN];
	char key[24];
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (d->flags || !memchr(d->name, '\0', sizeof(d->name)))
		return -VPERF_EINVAL;
	c->desc = *d;
	memcpy(name, d->name, sizeof(name));

	switch (d->source) {
	case VPERF_SRC_PERF:
		if (!name[0])
			return -VPERF_EINVAL;
		ret = open_perf(v, c, name);
		if (ret)
			return ret;
		break;
	case VPERF_SRC_KVM_STAT: {
		int fd = hv->ops->stats_fd ? hv->ops->stats_fd(hv->vmm, v->idx) : -1;

		if (!name[0])
			return -VPERF_EINVAL;
		if (!hv_allowed(hv, "kvm", name))
			return -VPERF_EPERM;
		if (fd < 0)
			return -VPERF_ENODEV;
		ret = hv_kvm_stat_offset(fd, name, &c->kvm_offset);
		if (ret)
			return ret;
		c->kind = SRC_KVM;
		break;
	}
	case VPERF_SRC_EXITS:
		if (d->arg != UINT64_MAX && d->arg > 255)
			return -VPERF_EINVAL;
		c->exit_reason = d->arg == UINT64_MAX ? UINT32_MAX : (uint32_t)d->arg;
		if (c->exit_reason == UINT32_MAX)
			snprintf(key, sizeof(key), "all");
		else
			snprintf(key, sizeof(key), "%" PRIu32, c->exit_reason);
		if (!hv_allowed(hv, "exits", key))
			return -VPERF_EPERM;
		c->kind = SRC_EXITS;
		break;
	case VPERF_SRC_STEAL:
		if (!hv_allowed(hv, "steal", "steal"))
			return -VPERF_EPERM;
		c->kind = SRC_STEAL;
		break;
	default:
		return -VPERF_EINVAL;
	}
	if (c->kind != SRC_HW && c->kind != SRC_SW) {
		snprintf(c->name, sizeof(c->name), "%s", name);
		ret = raw_read(v, c, &c->base);
		if (ret)
			return ret;
	}
	c->set_ns = hv_now_ns();
	return 0;
}

void hv_counter_close(struct hv_counter *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->kind = SRC_NONE;
	c->period = c->eff_period = 0;
}

int hv_counter_rebase(struct hv_vcpu *v, const struct hv_counter *c, struct hv_counter *next)
{
	*next = *c;
	next->set_ns = hv_now_ns();
	if (c->kind == SRC_HW || c->kind == SRC_SW) {
		uint64_t buf[3];

		if (read(c->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -VPERF_ENODEV;
		memcpy(next->pbase, buf, sizeof(buf));
		return 0;
	}
	return raw_read(v, next, &next->base);
}

void hv_counter_restart(struct hv_vcpu *v, struct hv_counter *c, const struct hv_counter *next)
{
	if (c->period)
		hv_counter_set_period(v, c, 0);	/* off, as a new counter; cannot fail for 0 */
	c->base = next->base;
	memcpy(c->pbase, next->pbase, sizeof(c->pbase));
	c->set_ns = next->set_ns;
	c->period = c->eff_period = 0;
	c->taken_streak = 0;
	c->next = 0;
}

int hv_counter_read(struct hv_vcpu *v, struct hv_counter *c, struct vperf_counter_value *out)
{
	uint64_t raw;
	int ret;

	if (c->kind == SRC_HW || c->kind == SRC_SW) {
		uint64_t buf[3];

		if (read(c->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return -VPERF_ENODEV;
		out->value = buf[0] >= c->pbase[0] ? buf[0] - c->pbase[0] : 0;
		out->enabled = buf[1] >= c->pbase[1] ? buf[1] - c->pbase[1] : 0;
		out->running = buf[2] >= c->pbase[2] ? buf[2] - c->pbase[2] : 0;
		return 0;
	}
	ret = raw_read(v, c, &raw);
	if (ret)
		return ret;
	out->value = raw >= c->base ? raw - c->base : 0;
	out->enabled = out->running = hv_now_ns() - c->set_ns;
	return 0;
}

int hv_counter_set_period(struct hv_vcpu *v, struct hv_counter *c, uint64_t period)
{
	uint64_t now;

	if (period) {
		uint64_t min = c->kind == SRC_HW ? HV_MIN_HW_PERIOD :
			       is_clock(c) || c->kind == SRC_STEAL ? HV_MIN_SW_PERIOD_NS : 1;

		if (period < min || period >= HV_NEVER_PERIOD)
			return -VPERF_EINVAL;
	}
	if (c->kind == SRC_HW || c->kind == SRC_SW) {
		uint64_t p = period ? period : HV_NEVER_PERIOD;

		if (ioctl(c->fd, PERF_EVENT_IOC_PERIOD, &p))
			return -VPERF_EINVAL;
	} else if (period) {
		int ret = raw_read(v, c, &now);

		if (ret)
			return ret;
		c->next = now + period;
	}
	c->period = c->eff_period = period;
	c->taken_streak = 0;
	return 0;
}

bool hv_counter_pace(struct hv_counter *c, bool taken)
{
	uint64_t max, eff = c->eff_period;

	if (!c->period)
		return false;
	max = c->period > (HV_NEVER_PERIOD - 1) >> HV_THROTTLE_MAX_SHIFT ? HV_NEVER_PERIOD - 1 :
	      c->period << HV_THROTTLE_MAX_SHIFT;
	if (!taken) {
		/*
		 * The guest has not taken the last one: it is not getting to run
		 * between overflows (an overflow round costs more than the period:
		 * a nested vCPU under TCG), or it ignores them.  Signals at that
		 * rate would keep its vCPU out of the guest for good.
		 */
		c->taken_streak = 0;
		eff = eff > max / 2 ? max : eff * 2;
	} else if (eff > c->period && ++c->taken_streak >= HV_UNTHROTTLE_STREAK) {
		c->taken_streak = 0;
		eff -= eff / 4;
		if (eff < c->period)
			eff = c->period;
	}
	if (eff != c->eff_period) {
		if (c->kind == SRC_HW || c->kind == SRC_SW) {
			/* restarts the countdown from now, at the new period */
			if (ioctl(c->fd, PERF_EVENT_IOC_PERIOD, &eff) == 0)
				c->eff_period = eff;
		} else {
			c->next = c->next - c->eff_period + eff;	/* poll set it one period on */
			c->eff_period = eff;
		}
	}
	return !taken;
}

void hv_counter_unmute(struct hv_counter *c)
{
	uint64_t p = c->eff_period ? c->eff_period : HV_NEVER_PERIOD;

	if (c->fd >= 0)
		ioctl(c->fd, PERF_EVENT_IOC_PERIOD, &p);
}

void hv_counters_poll_overflow(struct hv_vcpu *v, uint64_t *bits)
{
	for (int i = 0; i < v->nr_counters; i++) {
		struct hv_counter *c = &v->counters[i];
		uint64_t now;

		if (!c->period || c->kind == SRC_HW || c->kind == SRC_SW)
			continue;
		if (raw_read(v, c, &now) || now < c->next)
			continue;
		*bits |= 1ull << i;
		c->next = now + c->eff_period;
	}
}
