// SPDX-License-Identifier: MIT
/*
 * vperf kvm record: record a KVM VMM that is already running (QEMU, libvirt's, Firecracker, Cloud
 * Hypervisor, vperf-vmm), by its pid, from outside: the recorder is record/kvmrec.h, the
 * conversion into the CTF recording raw-convert.h's, as `vperf vm record` converts.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "raw-convert.h"
#include "util/options.h"
#include "util/recdir.h"
#include "kvmrec.h"
#include "kvmvmm.h"

struct kvm_args {
	int pid;
	const char *output;
	const char *shm;
	uint64_t duration_ns;
	long record_max;	/* MiB */
	bool no_host_events;
	bool raw_only;
	bool quiet;
};

static int duration_arg(void *member, const char *a, char *why, size_t len)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(a, &end);
	if (errno || end == a || *end || !isfinite(s) || s <= 0 || s > 1e6) {
		snprintf(why, len, "--duration '%s': a duration in seconds, more than 0 and at "
			 "most 1000000 (1.5: one and a half)", a);
		return -EINVAL;
	}
	*(uint64_t *)member = (uint64_t)(s * 1e9);
	return 0;
}

#define T struct kvm_args
static const struct cli_option record_opts[] = {
	CLI_OPT_INT(T, 'p', "pid", "pid", pid, 1, INT_MAX, "a process id",
		    "the VMM to record: a process holding a KVM VM (QEMU, Firecracker, ...)"),
	CLI_OPT_STR(T, 'o', "output", "dir", output, "write the recording into DIR (default "
		    RECDIR_DEFAULT "; an existing one is renamed DIR.old, as perf does)"),
	CLI_OPT_STR(T, 0, "shm", "file", shm, "read the guest's trace records from FILE, the file "
		    "behind the VM's ivshmem-plain device (docs/abi.md 8; e.g. /dev/shm/vperf-NAME)"),
	CLI_OPT_FN(T, 0, "duration", "s", duration_ns, duration_arg, "stop after S seconds "
		   "(default: at Ctrl-C or when the VMM exits)"),
	CLI_OPT_INT(T, 0, "record-max", "MiB", record_max, 1, 65536, "MiB, from 1 to 65536",
		    "the most the raw recording may hold (default 1024); it ends there"),
	CLI_OPT_FLAG(T, 0, "no-host-events", no_host_events, "leave out the host kernel's kvm and "
		     "sched events (they need root and tracefs)"),
	CLI_OPT_FLAG(T, 0, "raw-only", raw_only, "keep only the raw recording (DIR/" RECDIR_RAW
		     "/" RAW_NAME "), do not convert it"),
	CLI_OPT_FLAG(T, 'q', "quiet", quiet, "print no notes while recording"),
	CLI_OPT_HELP(),
};
#undef T

static const char *const record_synopsis[] = {
	"vperf kvm record -p PID [-o DIR] [--shm FILE] [--duration S] [--no-host-events] [--raw-only]",
	NULL,
};

static const struct cli_usage record_usage = {
	.cmd = "kvm record",
	.synopsis = record_synopsis,
	.summary = "Record a running KVM VMM by its pid, with no help from it: the host kernel's kvm "
		   "and sched events of its vCPU threads, each vCPU's TSC offset (KVM's debugfs), "
		   "and, with --shm, the guest kernel's and programs' trace records that "
		   "vperf_guest.ko writes into the VM's ivshmem-plain memory. It writes the recording "
		   "`vperf vm record` writes, so report, timeline and export read it. Stops at Ctrl-C, "
		   "after --duration, or when the VMM exits; the recording says which. Needs root "
		   "(tracefs, debugfs, another user's process).",
	.opts = record_opts,
	.nr_opts = (int)(sizeof(record_opts) / sizeof(record_opts[0])),
};

static volatile sig_atomic_t kvm_stop;

static void on_signal(int sig)
{
	(void)sig;
	kvm_stop = 1;
}

static void on_note(void *arg, const char *msg)
{
	const struct kvm_args *ka = arg;

	if (!ka->quiet)
		cli_warn("kvm record", "%s", msg);
}

static void on_started(void *arg)
{
	const struct kvm_args *ka = arg;

	if (!ka->quiet)
		fprintf(stderr, "[ vperf kvm record: recording pid %d%s until %s ]\n", ka->pid,
			ka->shm ? " and its guest's shared memory" : "", ka->duration_ns ?
			"the duration passes, Ctrl-C or the VMM's exit" : "Ctrl-C or the VMM's exit");
}

static const char *const end_names[] = {
	[VPERF_KVM_END_STOPPED] = "stopped",
	[VPERF_KVM_END_DURATION] = "duration",
	[VPERF_KVM_END_VMM_EXITED] = "VMM exited",
	[VPERF_KVM_END_ERROR] = "error",
};

static int cmd_kvm_record(int argc, char **argv)
{
	struct kvm_args ka = { 0 };
	struct vperf_kvm_rec_opts o = { .size = sizeof(o) };
	struct vperf_kvm_rec_stats st = { .size = sizeof(st) };
	struct sigaction sa = { .sa_handler = on_signal }, old_sa[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char raw[PATH_MAX], dirbuf[PATH_MAX], why[512] = "";
	const char *dir;
	struct stat rst;
	int operands, ret = cli_parse(&record_usage, argc, argv, &ka, NULL, &operands), err;

	if (ret >= 0)
		return ret;
	if (operands < argc)
		return cli_usage_error(&record_usage, "'%s': kvm record takes no command (it "
				       "records a VMM that runs already: -p PID)", argv[operands]);
	if (!ka.pid)
		return cli_usage_error(&record_usage, "which VMM? -p PID is needed (the pid of "
				       "qemu-system-x86_64 or another KVM VMM)");
	dir = dirbuf;
	ret = rawconv_check(&record_usage, ka.output, dirbuf, sizeof(dirbuf));
	if (ret)
		return ret;
#ifndef VPERF_HAVE_RECORD
	if (!ka.raw_only)
		return cli_error("kvm record", "this vperf was built without the CTF writer "
				 "(libbabeltrace-ctf was missing: Debian package "
				 "libbabeltrace-ctf-dev, scripts/install-deps.sh), so it cannot write "
				 "the recording; install it and rebuild, or use --raw-only");
#endif
	/* is it a VMM at all? say so before an older recording is moved aside */
	{
		struct vperf_kvm_vmm vmm;

		if (vperf_kvm__find(ka.pid, NULL, &vmm, why, sizeof(why)))
			return cli_error("kvm record", "%s", why);
		vperf_kvm__free(&vmm);
	}
	if (rawconv_prepare("kvm record", dir, raw, sizeof(raw)))
		return 1;
	o.pid = ka.pid;
	o.raw_path = raw;
	o.shm_path = ka.shm;
	o.host_events = !ka.no_host_events;
	o.duration_ns = ka.duration_ns;
	o.max_bytes = (uint64_t)ka.record_max << 20;
	o.stop = &kvm_stop;
	o.note = on_note;
	o.started = on_started;
	o.note_arg = &ka;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old_sa[i]);
	err = vperf_kvm__record(&o, &st, why, sizeof(why));
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old_sa[i], NULL);
	if (err) {
		/* nothing was recorded: the directory made for it goes (it is empty) */
		char sub[PATH_MAX + 8];

		snprintf(sub, sizeof(sub), "%s/" RECDIR_RAW, dir);
		rmdir(sub);
		rmdir(dir);
		return cli_error("kvm record", "%s", why);
	}
	fprintf(stderr, "[ vperf kvm record: pid %d (%s), %u vCPUs (%u threads named), %.3f s; "
		"ended: %s (%s) ]\n", (int)st.pid, st.comm, st.nr_vcpus, st.nr_vcpu_threads,
		(double)st.duration_ns / 1e9, end_names[st.end], st.end_why);
	if (ka.shm)
		fprintf(stderr, "[ vperf kvm record: shared memory: %llu guest records, %llu bytes "
			"refused, %llu ring headers refused, %llu layouts refused ]\n",
			(unsigned long long)st.guest_records,
			(unsigned long long)st.guest_refused_bytes,
			(unsigned long long)st.guest_bad_headers,
			(unsigned long long)st.guest_layouts_refused);
	if (stat(raw, &rst))
		return cli_error("kvm record", "%s: %s", raw, strerror(errno));
	ret = st.end == VPERF_KVM_END_ERROR ? 1 : 0;
	if (ka.raw_only) {
		fprintf(stderr, "[ vperf kvm record: Captured and wrote %.3f MB %s (raw, not "
			"converted) ]\n", (double)rst.st_size / 1e6, raw);
		return ret;
	}
#ifdef VPERF_HAVE_RECORD
	if (rawconv_convert("kvm record", dir, raw, (uint64_t)rst.st_size))
		return 1;
#endif
	return ret;
}

static const struct cmd_struct kvm_cmds[] = {
	{ "record", cmd_kvm_record, "Record a running KVM VMM by its pid into a CTF trace" },
};

int cmd_kvm(int argc, char **argv)
{
	return builtin_dispatch("kvm", kvm_cmds, sizeof(kvm_cmds) / sizeof(kvm_cmds[0]), argc, argv);
}
