// SPDX-License-Identifier: MIT
/*
 * kvm-rec: `vperf kvm record --raw-only` as a static program of its own, for L1 of the nested
 * stack (vm-run.sh --vmm qemu), where the vperf CLI and its libraries are not: the same recorder
 * (profiler/record/kvmrec.h), linked with libc alone, writing the raw recording that `vperf vm
 * record` converts on the host.
 *
 * Usage: kvm-rec --pid PID --out FILE [--shm FILE] [--max MiB] [--no-host-events]
 * It records until the VMM exits or SIGTERM/SIGINT.  Exit 0 with the file finished; 1 when
 * nothing could be recorded (said on stderr); 2 bad arguments.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvmrec.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void note(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "kvm-rec: %s\n", msg);
}

static void started(void *arg)
{
	(void)arg;
	fprintf(stderr, "kvm-rec: recording\n");
}

int main(int argc, char **argv)
{
	struct vperf_kvm_rec_opts o = { .size = sizeof(o), .host_events = true, .stop = &stop,
					.note = note, .started = started };
	struct vperf_kvm_rec_stats st = { .size = sizeof(st) };
	struct sigaction sa = { .sa_handler = on_signal };
	char why[512] = "";

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-host-events")) {
			o.host_events = false;
			continue;
		}
		if (!v)
			goto usage;
		if (!strcmp(a, "--pid"))
			o.pid = atoi(v);
		else if (!strcmp(a, "--out"))
			o.raw_path = v;
		else if (!strcmp(a, "--shm"))
			o.shm_path = v;
		else if (!strcmp(a, "--max"))
			o.max_bytes = strtoull(v, NULL, 10) << 20;
		else
			goto usage;
		i++;
	}
	if (o.pid <= 0 || !o.raw_path)
		goto usage;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (vperf_kvm__record(&o, &st, why, sizeof(why))) {
		fprintf(stderr, "kvm-rec: %s\n", why);
		return 1;
	}
	fprintf(stderr, "kvm-rec: pid %d (%s), %u vCPUs (%u threads named), %.3f s, %llu bytes; "
		"ended: %s; shared memory: %llu guest records, %llu bytes refused, %llu layouts "
		"refused%s%s\n", (int)st.pid, st.comm, st.nr_vcpus, st.nr_vcpu_threads,
		(double)st.duration_ns / 1e9, (unsigned long long)st.raw_bytes, st.end_why,
		(unsigned long long)st.guest_records, (unsigned long long)st.guest_refused_bytes,
		(unsigned long long)st.guest_layouts_refused, st.tsc_offsets ? "" : "; no TSC "
		"offsets: ", st.tsc_offsets ? "" : st.tsc_why);
	return st.end == VPERF_KVM_END_ERROR;
usage:
	fprintf(stderr, "usage: kvm-rec --pid PID --out FILE [--shm FILE] [--max MiB] "
		"[--no-host-events]\n");
	return 2;
}
