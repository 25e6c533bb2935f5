// SPDX-License-Identifier: MIT
/*
 * vperf-vmm: options, the kernel command line, and the exit status. Everything else is in vmm.c and
 * below.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vperf/abi.h>
#include <vperf/hv.h>

#include "log.h"
#include "pvdev.h"
#include "record.h"
#include "stats.h"
#include "vmm.h"

/*
 * console=ttyS0: the only console; panic=-1: a panicking kernel reboots at once (the VMM reports a
 * crash); reboot=acpi: reboot through the FADT reset register; quiet: each console byte costs VM
 * exits (the boot log alone is ~34,000 of them); pci=off: there is no PCI, and probing its config
 * space costs ~33,000 exits. Measured in L2 on the nested stack (README.md): 67,000 -> 530 exits,
 * L2 run 13.0 s -> 8.3 s. Other candidates (8250.nr_uarts=1, tsc=reliable, nokaslr) made no
 * measurable difference and are left out.
 */
#define DEFAULT_CMDLINE "console=ttyS0 panic=-1 reboot=acpi quiet pci=off"

#define CMDLINE_MAX	4096

struct options {
	struct vm_config cfg;
	unsigned int timeout_s;
	bool stats;
	const char *stats_json;
	struct record_config record;
	char cmdline[CMDLINE_MAX];
};

static void usage(FILE *f)
{
	char allow[512] = "";
	size_t len = 0, line = 0;
	int nr;
	const char *const *dfl = vperf_hv__default_allow(&nr);

	/* the default allowlist, in lines that fit the column */
	for (int i = 0; i < nr && len < sizeof(allow); i++) {
		bool wrap = line && line + 1 + strlen(dfl[i]) > 54;
		int n = snprintf(allow + len, sizeof(allow) - len, "%s%s", !i ? "" : wrap ?
				 ",\n                          " : ",", dfl[i]);

		line = wrap ? strlen(dfl[i]) : line + (size_t)n;
		len += n > 0 ? (size_t)n : 0;
	}
	fprintf(f,
		"usage: vperf-vmm --kernel BZIMAGE [options] [-- KERNEL_ARGS...]\n"
		"\n"
		"Boots a Linux bzImage (64-bit boot protocol) on KVM with an initramfs, N vCPUs,\n"
		"a 16550A serial console on stdin/stdout, ACPI (poweroff, reboot) and the vperf\n"
		"paravirtual port (CPUID 0x%x, I/O port 0x%x, ABI %d).\n"
		"\n"
		"options:\n"
		"  -k, --kernel FILE       bzImage to boot (required)\n"
		"  -i, --initrd FILE       initramfs (cpio, compressed or not)\n"
		"  -c, --cmdline STR       kernel command line, replacing the default:\n"
		"                          \"%s\"\n"
		"  -a, --append STR        add STR to the command line (like words after --)\n"
		"  -n, --vcpus N           vCPUs, 1..%d (default 1)\n"
		"  -m, --mem MIB           guest RAM in MiB, %d..%d (default %d); above 3072\n"
		"                          the rest is mapped at 4 GiB\n"
		"      --console-log FILE  also write the console output to FILE (made 0600)\n"
		"      --raw-console       the guest's console bytes as they are; by default control\n"
		"                          characters show as \\xNN and more than 256 KiB/s is left out\n"
		"      --no-input          do not read stdin (by default a terminal or pipe on\n"
		"                          stdin is the console input)\n"
		"  -t, --timeout SEC       stop the guest after SEC s (exit status 124); 0: never\n"
		"  -s, --stats             print the VMM's exit accounting on stderr at the end\n"
		"                          (one line per counter)\n"
		"      --stats-json FILE   write the same as JSON to FILE\n"
		"      --record FILE       record the run into FILE (the raw recording: this VMM's\n"
		"                          exits, the guest's version-2 trace rings, the vCPUs'\n"
		"                          TSC offsets, and the host kernel's kvm and sched events\n"
		"                          of the vCPU threads through tracefs); `vperf vm record`\n"
		"                          turns it into a CTF trace (docs/recording.md). An\n"
		"                          existing FILE is renamed to FILE.old; the new one is\n"
		"                          its user's alone (mode 0600)\n"
		"      --no-host-events    with --record: leave out the host kernel's events\n"
		"      --record-max MIB    with --record: the most the file may hold, %d..%d\n"
		"                          (default %d); the recording stops there, the guest\n"
		"                          runs on\n"
		"      --allow LIST        the events the guest may count with the vperf device:\n"
		"                          comma-separated SOURCE:GLOB patterns (fnmatch, any\n"
		"                          case) over the host's name for each event: hw:NAME\n"
		"                          (perf's generic events: cycles, LLC-loads, ...),\n"
		"                          raw:PMU::EVENT (a core PMU's events), rawmod:edge,\n"
		"                          rawmod:inv, rawmod:cmask (filters raw events may set),\n"
		"                          sw:NAME, kvm:STAT, exits:REASON|all, steal:steal;\n"
		"                          \"default\" is the default list; repeatable, the lists\n"
		"                          add up. Default:\n"
		"                          %s\n"
		"                          (docs/abi.md, \"Allowlist\"); e.g. default,raw:*\n"
		"  -d, --debug             debug messages (unhandled ports, boot layout, ...)\n"
		"  -q, --quiet             errors only\n"
		"  -h, --help              this help\n"
		"  -V, --version           version\n"
		"\n"
		"exit status:\n"
		"  N      the status the guest reported with the hypercall VPERF_HC_EXIT (0..255)\n"
		"  0      the guest powered off (ACPI S5) or rebooted without reporting a status\n"
		"  %d    a vCPU froze: found twice, 10 s apart, at a RIP where the guest maps\n"
		"         no code (the L2 freeze of QEMU TCG's emulated SVM: tests/vm/README.md)\n"
		"  %d    the guest crashed: triple fault, KVM internal error or failed entry, a\n"
		"         failed guest assertion (VPERF_UCALL_ASSERT), or \"Kernel panic - not\n"
		"         syncing\" on the console (panic=-1 reboots after it)\n"
		"  %d    --timeout expired\n"
		"  %d    vperf-vmm failed: bad options, unreadable or invalid kernel/initrd, KVM\n"
		"         missing or unable to run the guest (then run vperf-vmm nested:\n"
		"         tests/vm/run-nested.sh)\n"
		"  128+S  stopped by signal S (SIGINT, SIGTERM, SIGHUP), after a clean shutdown\n",
		VPERF_CPUID_BASE, VPERF_DEFAULT_PORT, VPERF_ABI_VERSION, DEFAULT_CMDLINE,
		VM_MAX_VCPUS, VM_MIN_MEM_MIB, VM_MAX_MEM_MIB, VM_DEFAULT_MEM_MIB, 1,
		RECORD_MAX_MAX_MIB, RECORD_DEFAULT_MAX_MIB, allow, VM_EXIT_FROZEN,
		VM_EXIT_CRASH,
		VM_EXIT_TIMEOUT, VM_EXIT_VMM_ERROR);
}

/* A whole decimal number in [min, max], or -1 with the reason printed. */
static int parse_uint(const char *opt, const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		goto bad;
	v = strtoul(s, &end, 10);
	if (errno || *end)
		goto bad;
	if (v < min || v > max) {
		pr_err("%s %s: out of range (%lu..%lu)", opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
bad:
	pr_err("%s: '%s' is not a whole number", opt, s);
	return -1;
}

static int append_cmdline(char *dst, const char *word)
{
	size_t len = strlen(dst), n = strlen(word);

	if (!n)
		return 0;
	if (len + (len ? 1 : 0) + n >= CMDLINE_MAX) {
		pr_err("kernel command line longer than %d bytes", CMDLINE_MAX - 1);
		return -1;
	}
	if (len)
		dst[len++] = ' ';
	memcpy(dst + len, word, n + 1);
	return 0;
}

enum {
	OPT_CONSOLE_LOG = 0x100, OPT_STATS_JSON, OPT_NO_INPUT, OPT_RAW_CONSOLE, OPT_RECORD, OPT_NO_HOST_EVENTS,
	OPT_ALLOW, OPT_RECORD_MAX,
};

/* 0: run; 1: done (help, version); -1: usage error (printed). */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "cmdline", required_argument, NULL, 'c' },
		{ "append", required_argument, NULL, 'a' },
		{ "vcpus", required_argument, NULL, 'n' },
		{ "mem", required_argument, NULL, 'm' },
		{ "console-log", required_argument, NULL, OPT_CONSOLE_LOG },
		{ "no-input", no_argument, NULL, OPT_NO_INPUT },
		{ "raw-console", no_argument, NULL, OPT_RAW_CONSOLE },
		{ "timeout", required_argument, NULL, 't' },
		{ "stats", no_argument, NULL, 's' },
		{ "stats-json", required_argument, NULL, OPT_STATS_JSON },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "no-host-events", no_argument, NULL, OPT_NO_HOST_EVENTS },
		{ "allow", required_argument, NULL, OPT_ALLOW },
		{ "record-max", required_argument, NULL, OPT_RECORD_MAX },
		{ "debug", no_argument, NULL, 'd' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *cmdline = DEFAULT_CMDLINE;
	char append[CMDLINE_MAX] = "";
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->cfg.nr_vcpus = 1;
	o->cfg.mem_size = (uint64_t)VM_DEFAULT_MEM_MIB << 20;
	o->cfg.console_input = true;
	o->record.host_events = true;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "k:i:c:a:n:m:t:sdqhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			o->cfg.kernel = optarg;
			break;
		case 'i':
			o->cfg.initrd = optarg;
			break;
		case 'c':
			cmdline = optarg;
			break;
		case 'a':
			if (append_cmdline(append, optarg))
				return -1;
			break;
		case 'n':
			if (parse_uint("--vcpus", optarg, 1, VM_MAX_VCPUS, &v))
				return -1;
			o->cfg.nr_vcpus = (unsigned int)v;
			break;
		case 'm':
			if (parse_uint("--mem", optarg, VM_MIN_MEM_MIB, VM_MAX_MEM_MIB, &v))
				return -1;
			o->cfg.mem_size = (uint64_t)v << 20;
			break;
		case OPT_CONSOLE_LOG:
			o->cfg.console_log = optarg;
			break;
		case OPT_NO_INPUT:
			o->cfg.console_input = false;
			break;
		case OPT_RAW_CONSOLE:
			o->cfg.raw_console = true;
			break;
		case 't':
			if (parse_uint("--timeout", optarg, 0, 1000000, &v))
				return -1;
			o->timeout_s = (unsigned int)v;
			break;
		case 's':
			o->stats = true;
			break;
		case OPT_STATS_JSON:
			o->stats_json = optarg;
			break;
		case OPT_RECORD:
			o->record.path = optarg;
			break;
		case OPT_NO_HOST_EVENTS:
			o->record.host_events = false;
			break;
		case OPT_RECORD_MAX:
			if (parse_uint("--record-max", optarg, 1, RECORD_MAX_MAX_MIB, &v))
				return -1;
			o->record.max_bytes = (uint64_t)v << 20;
			break;
		case OPT_ALLOW:
			if (vmm_pv_allow_add(&o->cfg, optarg))
				return -1;
			break;
		case 'd':
			vmm_log_set_level(VMM_LOG_DEBUG);
			break;
		case 'q':
			vmm_log_set_level(VMM_LOG_ERR);
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("vperf-vmm %s (vperf ABI %d)\n", VPERF_VMM_VERSION,
			       VPERF_ABI_VERSION);
			return 1;
		case '?':
		default:
			if (optopt && optopt < 0x100)
				pr_err("unknown option -%c or missing value (see --help)", optopt);
			else
				pr_err("unknown option '%s' or missing value (see --help)",
				       argv[optind - 1]);
			return -1;
		}
	}
	if (!o->cfg.kernel) {
		pr_err("no kernel: give one with --kernel BZIMAGE (see --help)");
		return -1;
	}
	if (!o->record.host_events && !o->record.path) {
		pr_err("--no-host-events goes with --record FILE (see --help)");
		return -1;
	}
	if (o->record.max_bytes && !o->record.path) {
		pr_err("--record-max goes with --record FILE (see --help)");
		return -1;
	}
	if (append_cmdline(o->cmdline, cmdline) || append_cmdline(o->cmdline, append))
		return -1;
	for (; optind < argc; optind++) {
		if (append_cmdline(o->cmdline, argv[optind]))
			return -1;
	}
	o->cfg.cmdline = o->cmdline;
	return 0;
}

/* Build, run and tear down the VM o describes: the exit status. */
static int run(const struct options *o)
{
	static struct vm vm;	/* large (per-port bitmaps, per-vCPU counters): not on the stack */
	int status, err;

	pr_debug("%u vCPU(s), %llu MiB, kernel %s, initrd %s, command line \"%s\"", o->cfg.nr_vcpus,
		 (unsigned long long)(o->cfg.mem_size >> 20), o->cfg.kernel,
		 o->cfg.initrd ? o->cfg.initrd : "none", o->cfg.cmdline);
	err = vmm__block_signals();
	if (err) {
		pr_err("blocking signals: %s", strerror(-err));
		return VM_EXIT_VMM_ERROR;
	}
	if (vmm__setup(&vm, &o->cfg))
		return VM_EXIT_VMM_ERROR;
	if (o->record.path && recorder__new(&vm, &o->record, &vm.rec)) {
		vmm__teardown(&vm);
		return VM_EXIT_VMM_ERROR;
	}
	err = vmm__run(&vm, o->timeout_s);
	status = err ? VM_EXIT_VMM_ERROR : vmm__exit_status(&vm);
	pr_debug("guest stopped: %s, exit status %d", vm__stop_reason_name(vm.stop_reason), status);

	if (vm.console.out_errno) {
		pr_err("writing the guest console to stdout: %s", strerror(vm.console.out_errno));
		if (!status)
			status = VM_EXIT_VMM_ERROR;
	}
	if (vm.console.log_errno) {
		pr_err("writing the console log %s: %s", o->cfg.console_log,
		       strerror(vm.console.log_errno));
		if (!status)
			status = VM_EXIT_VMM_ERROR;
	}
	if (o->stats)
		stats__print(&vm, stderr);
	if (o->stats_json) {
		err = stats__write_json(&vm, status, o->stats_json);
		if (err) {
			pr_err("writing %s: %s", o->stats_json, strerror(-err));
			if (!status)
				status = VM_EXIT_VMM_ERROR;
		}
	}
	recorder__delete(vm.rec);
	vm.rec = NULL;
	vmm__teardown(&vm);
	return status;
}

int main(int argc, char **argv)
{
	struct options o;
	int status, err;

	err = parse_options(argc, argv, &o);
	if (err > 0)
		status = fflush(stdout) == 0 && !ferror(stdout) ? 0 : VM_EXIT_VMM_ERROR;
	else if (err)
		status = VM_EXIT_VMM_ERROR;
	else
		status = run(&o);
	vmm_pv_allow_free(&o.cfg);
	return status;
}
