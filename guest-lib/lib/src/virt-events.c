// SPDX-License-Identifier: MIT
/*
 * Virtualization events: what only the hypervisor knows about a vCPU,
 * counted through the vperf paravirtual device (docs/abi.md) and, in a
 * vperf guest, attributed to guest threads by vperf_guest.ko.  The names
 * are the same everywhere, so `vperf list` shows them on any host and
 * says why they cannot be counted where there is no device.
 *
 * Names: a short catalog (vperf::vcpu-clock, vperf::exits:io, ...) and four
 * forms that reach anything the host offers: vperf::exits:REASON,
 * vperf::kvm:STAT, vperf::host:SW and vperf::hw:NAME.  In a guest with the
 * device, `vperf list` asks the host what it offers (VPERF_IOC_EVENT_INFO)
 * and names each entry with the same forms.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "internal.h"
#include "vperf_guest_uapi.h"

#define KVM_EXIT_IO_REASON	2	/* linux/kvm.h KVM_EXIT_IO */
#define KVM_EXIT_MMIO_REASON	6	/* linux/kvm.h KVM_EXIT_MMIO */

static const struct vperf_virt_event virt_events[] = {
	{ "vperf::vcpu-clock", "Time the vCPU ran on the host (its host thread's task-clock), ns",
	  VPERF_SRC_PERF, 0, "task-clock" },
	{ "vperf::steal", "Time the vCPU was ready to run while the host ran something else, ns",
	  VPERF_SRC_STEAL, 0, "steal" },
	{ "vperf::exits", "VM exits the VMM handled (all reasons)",
	  VPERF_SRC_EXITS, UINT64_MAX, "" },
	{ "vperf::exits:io", "VM exits for port I/O",
	  VPERF_SRC_EXITS, KVM_EXIT_IO_REASON, "" },
	{ "vperf::exits:mmio", "VM exits for memory-mapped I/O",
	  VPERF_SRC_EXITS, KVM_EXIT_MMIO_REASON, "" },
	{ "vperf::kvm-exits", "All VM exits, including those KVM handled in the host kernel",
	  VPERF_SRC_KVM_STAT, 0, "exits" },
	{ "vperf::halt-exits", "VM exits for HLT (the vCPU went idle)",
	  VPERF_SRC_KVM_STAT, 0, "halt_exits" },
	{ "vperf::irq-injections", "Interrupts the host injected into the vCPU",
	  VPERF_SRC_KVM_STAT, 0, "irq_injections" },
};

#define NR_VIRT ((int)(sizeof(virt_events) / sizeof(virt_events[0])))

/* KVM's exit reasons (linux/kvm.h KVM_EXIT_*, a stable ABI), as vperf::exits:NAME. */
static const char *const exit_reasons[] = {
	[0] = "unknown", [1] = "exception", [2] = "io", [3] = "hypercall", [4] = "debug",
	[5] = "hlt", [6] = "mmio", [7] = "irq_window_open", [8] = "shutdown",
	[9] = "fail_entry", [10] = "intr", [11] = "set_tpr", [12] = "tpr_access",
	[16] = "nmi", [17] = "internal_error", [21] = "watchdog", [23] = "epr",
	[24] = "system_event", [26] = "ioapic_eoi", [27] = "hyperv", [29] = "x86_rdmsr",
	[30] = "x86_wrmsr", [31] = "dirty_ring_full", [32] = "ap_reset_hold",
	[33] = "x86_bus_lock", [34] = "xen", [37] = "notify",
};

#define NR_REASONS ((int)(sizeof(exit_reasons) / sizeof(exit_reasons[0])))

/* The host thread's software events the host may count for a vCPU (perf's names). */
static const char *const host_sw[] = {
	"task-clock", "cpu-clock", "context-switches", "cpu-migrations",
	"page-faults", "minor-faults", "major-faults",
};

#define NR_HOST_SW ((int)(sizeof(host_sw) / sizeof(host_sw[0])))

const struct vperf_virt_event *vperf__virt_event(const char *name)
{
	for (int i = 0; i < NR_VIRT; i++)
		if (!strcasecmp(virt_events[i].name, name))
			return &virt_events[i];
	return NULL;
}

static bool prefix(const char *name, const char *pfx, const char **rest)
{
	size_t n = strlen(pfx);

	if (strncasecmp(name, pfx, n))
		return false;
	*rest = name + n;
	return true;
}

/* A KVM statistic's name: lower case, digits and '_', 1..63 characters. */
static bool stat_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= sizeof(((struct vperf_pv_event *)0)->host_name))
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int vperf__virt_parse(const char *name, struct vperf_pv_event *out, char *canon, size_t canon_len,
		      char *err, size_t err_len)
{
	const struct vperf_virt_event *v = vperf__virt_event(name);
	const char *rest;

	memset(out, 0, sizeof(*out));
	if (v) {
		out->source = v->source;
		out->arg = v->arg;
		snprintf(out->host_name, sizeof(out->host_name), "%s", v->host_name);
		snprintf(canon, canon_len, "%s", v->name);
		return 0;
	}
	if (prefix(name, "vperf::exits:", &rest)) {
		char *end;
		unsigned long r;

		for (int i = 0; i < NR_REASONS; i++) {
			if (exit_reasons[i] && !strcasecmp(rest, exit_reasons[i])) {
				out->source = VPERF_SRC_EXITS;
				out->arg = (uint64_t)i;
				snprintf(canon, canon_len, "vperf::exits:%s", exit_reasons[i]);
				return 0;
			}
		}
		r = strtoul(rest, &end, 10);
		if (*rest && isdigit((unsigned char)*rest) && !*end && r <= 255) {
			out->source = VPERF_SRC_EXITS;
			out->arg = r;
			if (r < (unsigned long)NR_REASONS && exit_reasons[r])
				snprintf(canon, canon_len, "vperf::exits:%s", exit_reasons[r]);
			else
				snprintf(canon, canon_len, "vperf::exits:%lu", r);
			return 0;
		}
		snprintf(err, err_len, "'%s': '%s' is not a KVM exit reason (a name such as io, "
			 "mmio, hlt, shutdown, or a number 0..255)", name, rest);
		return -ENOENT;
	}
	if (prefix(name, "vperf::kvm:", &rest)) {
		if (!stat_name_ok(rest)) {
			snprintf(err, err_len, "'%s': '%s' is not a KVM statistic's name (lower case, "
				 "digits and '_', such as halt_exits, io_exits, irq_injections)",
				 name, rest);
			return -EINVAL;
		}
		out->source = VPERF_SRC_KVM_STAT;
		snprintf(out->host_name, sizeof(out->host_name), "%s", rest);
		snprintf(canon, canon_len, "vperf::kvm:%s", rest);
		return 0;
	}
	if (prefix(name, "vperf::host:", &rest)) {
		for (int i = 0; i < NR_HOST_SW; i++) {
			if (!strcasecmp(rest, host_sw[i])) {
				out->source = VPERF_SRC_PERF;
				snprintf(out->host_name, sizeof(out->host_name), "%s", host_sw[i]);
				snprintf(canon, canon_len, "vperf::host:%s", host_sw[i]);
				return 0;
			}
		}
		snprintf(err, err_len, "'%s': the host counts these software events of a vCPU's "
			 "thread: task-clock, cpu-clock, context-switches, cpu-migrations, "
			 "page-faults, minor-faults, major-faults", name);
		return -ENOENT;
	}
	if (prefix(name, "vperf::hw:", &rest)) {
		if (!*rest || strlen(rest) >= sizeof(out->host_name) || strpbrk(rest, " \t,")) {
			snprintf(err, err_len, "'%s': a host PMU event's name (libpfm4's, as `vperf "
				 "list` on the host shows it; up to 63 characters) must follow "
				 "vperf::hw:", name);
			return -EINVAL;
		}
		out->source = VPERF_SRC_PERF;
		snprintf(out->host_name, sizeof(out->host_name), "%s", rest);
		snprintf(canon, canon_len, "vperf::hw:%s", rest);
		return 0;
	}
	snprintf(err, err_len, "unknown virtualization event '%s'", name);
	return -ENOENT;
}

static bool is_host_sw(const char *name)
{
	for (int i = 0; i < NR_HOST_SW; i++)
		if (!strcmp(name, host_sw[i]))
			return true;
	return false;
}

void vperf__virt_name(const struct vperf_pv_event *ev, char *buf, size_t len)
{
	switch (ev->source) {
	case VPERF_SRC_PERF:
		snprintf(buf, len, "vperf::%s:%s", is_host_sw(ev->host_name) ? "host" : "hw",
			 ev->host_name);
		break;
	case VPERF_SRC_KVM_STAT:
		snprintf(buf, len, "vperf::kvm:%s", ev->host_name);
		break;
	case VPERF_SRC_EXITS:
		if (ev->arg == UINT64_MAX)
			snprintf(buf, len, "vperf::exits");
		else if (ev->arg < (uint64_t)NR_REASONS && exit_reasons[ev->arg])
			snprintf(buf, len, "vperf::exits:%s", exit_reasons[ev->arg]);
		else
			snprintf(buf, len, "vperf::exits:%" PRIu64, ev->arg);
		break;
	case VPERF_SRC_STEAL:
		snprintf(buf, len, "vperf::steal");
		break;
	default:
		snprintf(buf, len, "vperf::?");
	}
}

int vperf__virt_suggest(const char *name, char out[][VPERF_NAME_LEN], int max)
{
	int n = 0;

	for (int d = 0; d <= 3 && n < max; d++)
		for (int i = 0; i < NR_VIRT && n < max; i++)
			if (vperf__edit_distance(name, virt_events[i].name) == d)
				snprintf(out[n++], VPERF_NAME_LEN, "%s", virt_events[i].name);
	return n;
}

/* What the host says it offers, one entry per call; -ENOENT at the end. */
static int host_entry(int fd, uint32_t index, struct vperf_pv_event *ev, int *status)
{
	struct vperf_event_query q = { .size = sizeof(q), .index = index };
	int ret = vperf__pv_ioctl(fd, VPERF_IOC_EVENT_INFO, &q);

	if (ret)
		return ret;
	memset(ev, 0, sizeof(*ev));
	ev->source = q.event.source;
	ev->arg = q.event.arg;
	q.event.name[sizeof(q.event.name) - 1] = '\0';
	snprintf(ev->host_name, sizeof(ev->host_name), "%s", q.event.name);
	*status = q.status;
	return 0;
}

static const char *status_why(int status)
{
	switch (-status) {
	case 0:
		return NULL;
	case ENODEV:
		return "the host has no PMU (hardware events count nowhere here)";
	case EPERM:
		return "refused by the host's allowlist (its event patterns, docs/abi.md 2.3)";
	default:
		return "the host refuses it";
	}
}

static const char *host_desc(const struct vperf_pv_event *ev)
{
	switch (ev->source) {
	case VPERF_SRC_PERF:
		return is_host_sw(ev->host_name) ? "The vCPU's host thread's software event" :
		       "Host PMU event, counted while the vCPU runs guest code";
	case VPERF_SRC_KVM_STAT:
		return "KVM statistic of the vCPU";
	case VPERF_SRC_EXITS:
		return "VM exits the VMM handled, by KVM exit reason";
	case VPERF_SRC_STEAL:
		return "Time the vCPU was ready to run while the host ran something else, ns";
	default:
		return "";
	}
}

/* The host's list, where the device and module answer VPERF_IOC_EVENT_INFO; 1: none here. */
static int host_for_each(vperf_event_fn fn, void *arg)
{
	const char *dev = vperf__pv_device();
	struct vperf_pv_event ev;
	char name[VPERF_NAME_LEN];
	int fd, status, ret = 0;
	uint32_t i;

	fd = vperf__pv_open(dev);
	if (fd < 0)
		return 1;
	for (i = 0; i < 1u << 20; i++) {
		struct vperf_event_info info = { .size = sizeof(info), .pmu = "vperf",
						 .kind = VPERF_EVENT_VIRT };

		ret = host_entry(fd, i, &ev, &status);
		if (ret)
			break;
		vperf__virt_name(&ev, name, sizeof(name));
		if (vperf__virt_event(name))
			continue;	/* shown by the catalog */
		info.name = name;
		info.desc = host_desc(&ev);
		info.usable = status == 0;
		info.why = status_why(status);
		ret = fn(&info, arg);
		if (ret)
			break;
	}
	close(fd);
	if (ret == -ENOENT)
		return i ? 0 : 1;	/* the end; or a device without the list */
	if (ret == -EOPNOTSUPP || ret == -ENOTTY || ret == -EINVAL)
		return 1;
	return ret;
}

int vperf__virt_for_each(vperf_event_fn fn, void *arg, int probe)
{
	char why[VPERF_ERRMSG_LEN];
	int usable = -1, ret;

	if (probe)
		usable = vperf_backend_available("pv", why, sizeof(why)) == 0;
	for (int i = 0; i < NR_VIRT; i++) {
		struct vperf_event_info info = {
			.size = sizeof(info),
			.pmu = "vperf",
			.name = virt_events[i].name,
			.desc = virt_events[i].desc,
			.kind = VPERF_EVENT_VIRT,
			.usable = usable,
			.why = usable == 0 ? why : NULL,
		};

		ret = fn(&info, arg);
		if (ret)
			return ret;
	}
	if (usable != 1)
		return 0;
	/* everything else the host offers, under the names vperf_evset__add() takes */
	ret = host_for_each(fn, arg);
	return ret > 0 ? 0 : ret;
}
