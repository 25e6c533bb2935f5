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

#define NEVER (1ull << 62)	/* sample period of a counter with overflow off */

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

int hv_pfm_encode(const char *name, struct perf_event_attr *attr)
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
	return ret == PFM_SUCCESS ? 0 : -VPERF_EINVAL;
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

static bool is_clock(const struct hv_counter *c)
{
	return c->kind == SRC_SW && (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock"));
}

static int open_perf(struct hv_vcpu *v, struct hv_counter *c, const char *name)
{
	struct vperf_hv *hv = v->hv;
	struct perf_event_attr attr;
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = v->tid };
	int fd, ret;

	ret = hv_pfm_encode(name, &attr);
	if (ret)
		return ret;

	if (attr.type == PERF_TYPE_SOFTWARE) {
		c->kind = SRC_SW;
		snprintf(c->name, sizeof(c->name), "%s", sw_name(attr.config));
		if (!hv_allowed(hv, "sw", c->name))
			return -VPERF_EPERM;
	} else if (attr.type == PERF_TYPE_HARDWARE || attr.type == PERF_TYPE_HW_CACHE ||
		   attr.type == PERF_TYPE_RAW || attr.type >= PERF_TYPE_MAX) {
		c->kind = SRC_HW;
		snprintf(c->name, sizeof(c->name), "%s", name);
		if (!hv_allowed(hv, "hw", name))
			return -VPERF_EPERM;
		/* Count what the guest does, never the host. */
		attr.exclude_host = 1;
		attr.exclude_guest = 0;
	} else {
		return -VPERF_EPERM;	/* tracepoints and the like: never */
	}
	if (!v->tid)
		return -VPERF_ESTATE;

	attr.size = sizeof(attr);
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr.sample_period = NEVER;
	attr.wakeup_events = 1;
	attr.inherit = 0;
	attr.disabled = 0;
	fd = (int)syscall(SYS_perf_event_open, &attr, v->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
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

		if (period < min || period >= NEVER)
			return -VPERF_EINVAL;
	}
	if (c->kind == SRC_HW || c->kind == SRC_SW) {
		uint64_t p = period ? period : NEVER;

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
	max = c->period > (NEVER - 1) >> HV_THROTTLE_MAX_SHIFT ? NEVER - 1 :
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
