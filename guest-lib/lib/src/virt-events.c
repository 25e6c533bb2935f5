// SPDX-License-Identifier: MIT
/*
 * Virtualization events: what only the hypervisor knows about a vCPU,
 * counted through the vperf paravirtual device (docs/abi.md) and, in a
 * vperf guest, attributed to guest threads by vperf_guest.ko.  The names
 * are the same everywhere, so `vperf list` shows them on any host and
 * says why they cannot be counted where there is no device.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <vperf/abi.h>

#include "internal.h"
#include "vperf_guest_uapi.h"

#define KVM_EXIT_IO_REASON	2	/* linux/kvm.h KVM_EXIT_IO */
#define KVM_EXIT_MMIO_REASON	6	/* linux/kvm.h KVM_EXIT_MMIO */

static const struct vperf_virt_event virt_events[] = {
	{ "vperf::vcpu-clock", "Time the vCPU ran on the host (its host thread's task-clock), ns",
	  VPERF_SRC_PERF, 0, "task-clock", VPERF_THREAD_CTR_VCPU_CLOCK },
	{ "vperf::steal", "Time the vCPU was ready to run while the host ran something else, ns",
	  VPERF_SRC_STEAL, 0, "steal", VPERF_THREAD_CTR_STEAL },
	{ "vperf::exits", "VM exits the VMM handled (all reasons)",
	  VPERF_SRC_EXITS, UINT64_MAX, "", VPERF_THREAD_CTR_EXITS },
	{ "vperf::exits:io", "VM exits for port I/O",
	  VPERF_SRC_EXITS, KVM_EXIT_IO_REASON, "", -1 },
	{ "vperf::exits:mmio", "VM exits for memory-mapped I/O",
	  VPERF_SRC_EXITS, KVM_EXIT_MMIO_REASON, "", -1 },
	{ "vperf::kvm-exits", "All VM exits, including those KVM handled in the host kernel",
	  VPERF_SRC_KVM_STAT, 0, "exits", -1 },
	{ "vperf::halt-exits", "VM exits for HLT (the vCPU went idle)",
	  VPERF_SRC_KVM_STAT, 0, "halt_exits", -1 },
	{ "vperf::irq-injections", "Interrupts the host injected into the vCPU",
	  VPERF_SRC_KVM_STAT, 0, "irq_injections", -1 },
};

#define NR_VIRT ((int)(sizeof(virt_events) / sizeof(virt_events[0])))

const struct vperf_virt_event *vperf__virt_event(const char *name)
{
	for (int i = 0; i < NR_VIRT; i++)
		if (!strcasecmp(virt_events[i].name, name))
			return &virt_events[i];
	return NULL;
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

void vperf__virt_thread_names(char *buf, size_t len)
{
	size_t off = 0;
	int n = 0, total = 0;

	for (int i = 0; i < NR_VIRT; i++)
		total += virt_events[i].thread_ctr >= 0;
	if (len)
		buf[0] = '\0';
	for (int c = 0; c < VPERF_THREAD_NR_CTRS; c++) {
		for (int i = 0; i < NR_VIRT; i++) {
			int w;

			if (virt_events[i].thread_ctr != c)
				continue;
			n++;
			w = snprintf(buf + off, len - off, "%s%s",
				     n == 1 ? "" : n == total ? " and " : ", ",
				     virt_events[i].name);
			if (w < 0 || (size_t)w >= len - off)
				return;
			off += (size_t)w;
		}
	}
}

int vperf__virt_for_each(vperf_event_fn fn, void *arg, int probe)
{
	char why[VPERF_ERRMSG_LEN], not_counted[VPERF_ERRMSG_LEN], names[VPERF_ERRMSG_LEN / 2];
	int usable = -1;

	if (probe)
		usable = vperf_backend_available("pv", why, sizeof(why)) == 0;
	vperf__virt_thread_names(names, sizeof(names));
	snprintf(not_counted, sizeof(not_counted),
		 "not counted by vperf_guest.ko: it counts %s per thread", names);
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
		int ret;

		/* The device is there, but the module keeps no counter for it. */
		if (usable == 1 && virt_events[i].thread_ctr < 0) {
			info.usable = 0;
			info.why = not_counted;
		}
		ret = fn(&info, arg);
		if (ret)
			return ret;
	}
	return 0;
}
