// SPDX-License-Identifier: MIT
/*
 * vperf vm run | record: run a command in a guest booted by vperf-vmm.
 * The options are checked here, so that a mistake gets the same clear
 * message as every vperf command, then the VM runner (tests/vm/vm-run.sh:
 * guest image, --add staging, direct or nested mode) does the rest.
 *
 * `vm run` hands this process over to the runner.  `vm record` runs it as a
 * child with --record (vperf-vmm's raw recording, brought back to this
 * host) and --guest-trace, then converts the raw recording into the CTF
 * recording (profiler/record/convert.h, docs/recording.md) and prints
 * what it holds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "builtin.h"
#include "raw-convert.h"
#include "util/options.h"
#include "util/recdir.h"

#ifdef VPERF_HAVE_RECORD
#include <vperf/abi.h>
#include "convert.h"
#include "ksyms.h"
#endif

#ifndef VPERF_VM_RUNNER
#define VPERF_VM_RUNNER "vm-run.sh"
#endif

#define RAW_SUBDIR	RECDIR_RAW
#define GUEST_FILES_SUBDIR	RECDIR_GUEST_FILES
#define DEFAULT_OUTPUT	RECDIR_DEFAULT

/* A vm command's parsed options: the runner's argument vector so far, and what the command uses itself. */
struct vm_args {
	char **argv;		/* the runner, its options; NULL-terminated by vm_args__command() */
	int n;
	int cmd;		/* first word of the guest command in the caller's argv */
	bool no_vperf;		/* --no-vperf: no vperf, vperf-demo or vperf_guest.ko in the guest */
	bool have_kernel, have_initrd;
	bool quiet;
	const char *runner;
	char self[PATH_MAX];	/* this executable, for --vperf */
	/* vm record's own */
	const char *output;
	const char *record_max;
	const char *kernel_map;
	bool no_host_events;
	bool raw_only;
	/* sampling the guest command (vperf record --into-host in the guest) */
	const char *event, *freq, *count;
	bool callchain;
	char *wrapped;		/* the guest command, wrapped (malloc'd) */
};

static int vcpus_arg(void *va, const char *arg, char *why, size_t len);
static int mem_arg(void *va, const char *arg, char *why, size_t len);
static int kernel_arg(void *va, const char *arg, char *why, size_t len);
static int initrd_arg(void *va, const char *arg, char *why, size_t len);
static int add_arg(void *va, const char *arg, char *why, size_t len);
static int timeout_arg(void *va, const char *arg, char *why, size_t len);
static int mode_arg(void *va, const char *arg, char *why, size_t len);
static int vmm_arg(void *va, const char *arg, char *why, size_t len);
static int quiet_arg(void *va, const char *arg, char *why, size_t len);
static int event_arg(void *member, const char *arg, char *why, size_t len);
static int freq_arg(void *member, const char *arg, char *why, size_t len);
static int count_arg(void *member, const char *arg, char *why, size_t len);
static int record_max_arg(void *member, const char *arg, char *why, size_t len);
static int kernel_map_arg(void *member, const char *arg, char *why, size_t len);

#define T struct vm_args
/* The options of every vm command that boots a guest (vm run's). */
#define VM_GUEST_OPTS \
	CLI_OPT_CB(T, 0, "vcpus", "n", vcpus_arg, "guest vCPUs, 1 to 16 (default 2)"), \
	CLI_OPT_CB(T, 0, "mem", "MiB", mem_arg, "guest memory, at least 64 (default 512)"), \
	CLI_OPT_CB(T, 0, "kernel", "file", kernel_arg, "guest kernel (bzImage) instead of the " \
		   "bundled image's"), \
	CLI_OPT_CB(T, 0, "initrd", "file", initrd_arg, "guest initramfs instead of the bundled " \
		   "image's"), \
	CLI_OPT_CB(T, 0, "add", "path[:guest-path]", add_arg, "put a file or directory into the " \
		   "guest (default /payload/NAME); programs bring their shared libraries"), \
	CLI_OPT_CB(T, 0, "timeout", "seconds", timeout_arg, "give up after this long (default " \
		   "600): exit status 124"), \
	CLI_OPT_CB(T, 0, "mode", "auto|direct|nested", mode_arg, "run vperf-vmm here (direct) or " \
		   "inside a QEMU TCG guest (nested); auto picks direct only with hardware " \
		   "virtualization"), \
	CLI_OPT_CB(T, 0, "vmm", "vperf|qemu", vmm_arg, "the guest's VMM: vperf-vmm (default), or " \
		   "Debian's QEMU with -accel kvm and an ivshmem-plain device that vperf_guest.ko " \
		   "traces into, recorded from outside as `vperf kvm record` does (nested only)"), \
	CLI_OPT_CB(T, 'q', "quiet", NULL, quiet_arg, "show only the guest's output"), \
	CLI_OPT_FLAG(T, 0, "no-vperf", no_vperf, "do not put this vperf, vperf-demo and " \
		     "vperf_guest.ko (loaded) into the guest")

static const char *const run_synopsis[] = {
	"vperf vm run [--vcpus N] [--mem MiB] [--kernel K --initrd I] [--add PATH[:GUEST_PATH]]... -- cmd [args]",
	NULL,
};

static const struct cli_option run_opts[] = {
	VM_GUEST_OPTS,
	CLI_OPT_HELP(),
};

static const struct cli_usage run_usage = {
	.cmd = "vm run",
	.synopsis = run_synopsis,
	.summary = "Boot a guest with vperf-vmm, run a command in it, exit with its status "
		   "(123 guest crash, 124 timeout, 125 VMM failure). The guest has this vperf and "
		   "vperf-demo in its PATH and vperf_guest.ko loaded, so vperf there counts "
		   "vperf:: events per thread.",
	.opts = run_opts,
	.nr_opts = (int)(sizeof(run_opts) / sizeof(run_opts[0])),
};

static const char *const record_synopsis[] = {
	"vperf vm record [vm run options] [-e ev] [-F hz | -c period] [-g] [-o DIR] [--no-host-events] [--raw-only] [--kernel-map FILE] -- cmd [args]",
	NULL,
};

static const struct cli_option record_opts[] = {
	VM_GUEST_OPTS,
	CLI_OPT_STR(T, 'o', "output", "dir", output, "the recording (default " DEFAULT_OUTPUT "; an "
		    "existing one is renamed to DIR.old first, and an existing DIR.old recording "
		    "removed)"),
	CLI_OPT_FLAG(T, 0, "no-host-events", no_host_events, "leave out the host kernel's kvm and "
		     "sched events"),
	CLI_OPT_FLAG(T, 0, "raw-only", raw_only, "keep only vperf-vmm's raw recording (DIR/"
		     RAW_SUBDIR "/" RAW_NAME "), do not convert it"),
	CLI_OPT_FN(T, 0, "record-max", "MiB", record_max, record_max_arg, "the most the raw "
		   "recording may hold (default 256)"),
	CLI_OPT_FN(T, 0, "kernel-map", "file", kernel_map, kernel_map_arg, "the System.map (or a "
		   "saved /proc/kallsyms) of --kernel's kernel: names the guest kernel's frames (the "
		   "bundled kernel's comes with it, nested)"),
	CLI_OPT_FN(T, 'e', "event", "ev", event, event_arg, "sample the guest command (and what it "
		   "starts) on this guest perf event (default cycles, or cpu-clock where the guest "
		   "has no PMU), through vperf_guest.ko's trace sampler: `vperf record --into-host` "
		   "wraps the command"),
	CLI_OPT_FN(T, 'F', "freq", "hz", freq, freq_arg, "that sampling at about hz samples per "
		   "second (default 1000 when -e, -c or -g asks for samples)"),
	CLI_OPT_FN(T, 'c', "count", "period", count, count_arg, "that sampling every period events "
		   "instead"),
	CLI_OPT_FLAG(T, 'g', "call-graph", callchain, "the samples' user callchains too"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage record_usage = {
	.cmd = "vm record",
	.synopsis = record_synopsis,
	.summary = "Boot a guest as `vperf vm run` does, record the run across layers (vperf-vmm's "
		   "exits, the guest kernel's and guest programs' trace records through "
		   "vperf_guest.ko, the host kernel's kvm and sched events of the vCPU threads) and "
		   "write it as a CTF trace into DIR (`babeltrace2 DIR` reads it). The exit status is "
		   "the command's; a guest that crashed (123) or timed out (124) is still recorded, and "
		   "so is a run stopped with Ctrl-C.",
	.opts = record_opts,
	.nr_opts = (int)(sizeof(record_opts) / sizeof(record_opts[0])),
};


static bool number_in(const char *s, long lo, long hi)
{
	long v;

	return !cli_parse_long(s, lo, hi, &v);
}

static const char *runner_path(void)
{
	const char *env = getenv("VPERF_VM_RUNNER");

	return env && *env ? env : VPERF_VM_RUNNER;
}

static void vm_args__exit(struct vm_args *va)
{
	free(va->argv);
	va->argv = NULL;
	free(va->wrapped);
	va->wrapped = NULL;
}

/* Is a (the argument of --name) a readable regular file?  Else why says why. */
static int readable_file(const char *name, const char *a, char *why, size_t len)
{
	struct stat st;

	errno = 0;
	if (!stat(a, &st) && S_ISREG(st.st_mode) && !access(a, R_OK))
		return 0;
	return snprintf(why, len, "--%s '%s': %s", name, a,
			errno ? strerror(errno) : "not a readable file");
}

/* Give the runner --name ARG. */
static int forward(struct vm_args *va, const char *name, const char *arg)
{
	va->argv[va->n++] = (char *)name;
	if (arg)
		va->argv[va->n++] = (char *)arg;
	return 0;
}

static int vcpus_arg(void *va, const char *a, char *why, size_t len)
{
	return !number_in(a, 1, 16) ? snprintf(why, len, "--vcpus '%s': a number from 1 to 16", a) :
	       forward(va, "--vcpus", a);
}

static int mem_arg(void *va, const char *a, char *why, size_t len)
{
	return !number_in(a, 64, 1024 * 1024) ? snprintf(why, len, "--mem '%s': MiB, from 64", a) :
	       forward(va, "--mem", a);
}

static int kernel_arg(void *va, const char *a, char *why, size_t len)
{
	((struct vm_args *)va)->have_kernel = true;
	if (readable_file("kernel", a, why, len))
		return 1;
	return forward(va, "--kernel", a);
}

static int initrd_arg(void *va, const char *a, char *why, size_t len)
{
	((struct vm_args *)va)->have_initrd = true;
	if (readable_file("initrd", a, why, len))
		return 1;
	return forward(va, "--initrd", a);
}

static int add_arg(void *va, const char *a, char *why, size_t len)
{
	char path[PATH_MAX];
	const char *colon = strchr(a, ':');
	size_t n = colon ? (size_t)(colon - a) : strlen(a);

	if (!n || n >= sizeof(path))
		return snprintf(why, len, "--add '%s': PATH[:GUEST_PATH]", a);
	memcpy(path, a, n);
	path[n] = '\0';
	if (access(path, R_OK))
		return snprintf(why, len, "--add '%s': %s: %s", a, path, strerror(errno));
	if (colon && colon[1] != '/')
		return snprintf(why, len, "--add '%s': the guest path must be absolute", a);
	return forward(va, "--add", a);
}

static int timeout_arg(void *va, const char *a, char *why, size_t len)
{
	return !number_in(a, 1, 7 * 24 * 3600) ?
	       snprintf(why, len, "--timeout '%s': seconds, from 1", a) : forward(va, "--timeout", a);
}

static int mode_arg(void *va, const char *a, char *why, size_t len)
{
	if (strcmp(a, "auto") && strcmp(a, "direct") && strcmp(a, "nested"))
		return snprintf(why, len, "--mode '%s': auto, direct or nested", a);
	return forward(va, "--mode", a);
}

static int vmm_arg(void *va, const char *a, char *why, size_t len)
{
	if (strcmp(a, "vperf") && strcmp(a, "qemu"))
		return snprintf(why, len, "--vmm '%s': vperf (vperf-vmm) or qemu", a);
	return forward(va, "--vmm", a);
}

static int quiet_arg(void *va, const char *a, char *why, size_t len)
{
	(void)a, (void)why, (void)len;
	((struct vm_args *)va)->quiet = true;
	return forward(va, "--quiet", NULL);
}

static int event_arg(void *member, const char *a, char *why, size_t len)
{
	/* it becomes a word of the guest's shell command line: event-name characters only */
	if (!*a || strlen(a) > 255 ||
	    strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:.=/+") !=
	    strlen(a))
		return snprintf(why, len, "-e '%s': one guest perf event name (letters, digits and _ "
				"- : . = / + only)", a);
	*(const char **)member = a;
	return 0;
}

/* A number in [lo, hi] kept as the text given (it goes into the guest's command line). */
static int number_arg(void *member, const char *a, long lo, long hi, const char *opt,
		      const char *range, char *why, size_t len)
{
	if (!number_in(a, lo, hi))
		return snprintf(why, len, "%s '%s': %s", opt, a, range);
	*(const char **)member = a;
	return 0;
}

static int freq_arg(void *member, const char *a, char *why, size_t len)
{
	return number_arg(member, a, 1, 100000, "-F", "1 to 100000 Hz", why, len);
}

static int count_arg(void *member, const char *a, char *why, size_t len)
{
	return number_arg(member, a, 1, LONG_MAX, "-c", "a period of 1 event or more", why, len);
}

static int record_max_arg(void *member, const char *a, char *why, size_t len)
{
	return number_arg(member, a, 1, 65536, "--record-max", "MiB, from 1 to 65536", why, len);
}

static int kernel_map_arg(void *member, const char *a, char *why, size_t len)
{
	if (readable_file("kernel-map", a, why, len))
		return 1;
	*(const char **)member = a;
	return 0;
}

/*
 * Parse u's options (vm run's, and vm record's own where u has them) into va and the runner's
 * arguments; the guest command must follow.  Returns -1 to go on, or the exit status to return
 * (0 after --help, VPERF_EXIT_USAGE or 1 after a message).
 */
static int vm_args__parse(struct vm_args *va, const struct cli_usage *u, int argc, char **argv)
{
	int first, ret;

	memset(va, 0, sizeof(*va));
	va->runner = runner_path();
	/* runner, options (at most 2 words each), --vperf EXE, the caller's (at most 12), "--", command, NULL */
	va->argv = calloc((size_t)argc * 2 + 20, sizeof(*va->argv));
	if (!va->argv)
		return cli_error(u->cmd, "out of memory");
	va->argv[va->n++] = (char *)va->runner;
	ret = cli_parse(u, argc, argv, va, NULL, &first);
	if (ret < 0 && va->have_kernel != va->have_initrd)
		ret = cli_usage_error(u, "--kernel and --initrd go together (the bundled image's "
				      "init runs the command)");
	if (ret < 0 && first >= argc)
		ret = cli_usage_error(u, "no command to run in the guest");
	if (ret < 0 && va->freq && va->count)
		ret = cli_usage_error(u, "-F and -c both given: sample by frequency or by period, "
				      "not both");
	if (ret < 0 && (va->event || va->freq || va->count || va->callchain) && va->no_vperf)
		ret = cli_usage_error(u, "-e/-F/-c/-g sample through vperf_guest.ko: not with "
				      "--no-vperf");
	va->cmd = first;
	if (ret < 0 && !va->no_vperf) {
		/* vperf in the guest: this executable (and the vperf-demo next to it) */
		ssize_t len = readlink("/proc/self/exe", va->self, sizeof(va->self) - 1);

		if (len < 0) {
			ret = cli_error(u->cmd, "cannot find this vperf's executable (/proc/self/exe): "
					"%s; --no-vperf runs without it", strerror(errno));
		} else {
			va->self[len] = '\0';
			va->argv[va->n++] = "--vperf";
			va->argv[va->n++] = va->self;
		}
	}
	if (ret >= 0)
		vm_args__exit(va);
	return ret;
}

/* The sampler's options and the start of its command into buf (NULL, 0: measure): snprintf's. */
static int wrap_head(const struct vm_args *va, char *buf, size_t len)
{
	return snprintf(buf, len, "vperf record --into-host -q%s%s %s %s%s -- sh -c '",
			va->event ? " -e " : "", va->event ? va->event : "",
			va->count ? "-c" : "-F",
			va->count ? va->count : va->freq ? va->freq : "1000",
			va->callchain ? " -g" : "");
}

/*
 * With -e/-F/-c/-g: the guest command as `vperf record --into-host ... -- sh -c 'COMMAND'`, the
 * command's words joined by spaces as the runner joins them (it is a line of the guest's shell
 * script), quoted for that shell.  NULL without them, or out of memory (*err then).
 */
static char *wrap_sampled(const struct vm_args *va, int argc, char **argv, bool *err)
{
	int head = wrap_head(va, NULL, 0);
	size_t len;
	char *w, *o;

	*err = false;
	if (!va->event && !va->freq && !va->count && !va->callchain)
		return NULL;
	if (head < 0) {
		*err = true;
		return NULL;
	}
	/* every piece printed: the options as given (-c, -F and -e of any length), the words with
	 * each ' as '\'' and a space between them, the closing ' and the NUL */
	len = (size_t)head + 2;
	for (int i = va->cmd; i < argc; i++)
		len += 4 * strlen(argv[i]) + 1;
	w = malloc(len);
	if (!w) {
		*err = true;
		return NULL;
	}
	o = w + wrap_head(va, w, len);
	for (int i = va->cmd; i < argc; i++) {
		if (i > va->cmd)
			*o++ = ' ';
		for (const char *c = argv[i]; *c; c++) {
			if (*c == '\'') {
				memcpy(o, "'\\''", 4);
				o += 4;
			} else {
				*o++ = *c;
			}
		}
	}
	*o++ = '\'';
	*o = '\0';
	return w;
}

/* "--", the guest command (wrapped for sampling if asked), and the terminating NULL. */
static int vm_args__command(struct vm_args *va, int argc, char **argv)
{
	bool err;

	va->argv[va->n++] = "--";
	va->wrapped = wrap_sampled(va, argc, argv, &err);
	if (err)
		return -ENOMEM;
	if (va->wrapped)
		va->argv[va->n++] = va->wrapped;
	else
		for (int i = va->cmd; i < argc; i++)
			va->argv[va->n++] = argv[i];
	va->argv[va->n] = NULL;
	return 0;
}

static int cmd_vm_run(int argc, char **argv)
{
	struct vm_args va;
	int ret = vm_args__parse(&va, &run_usage, argc, argv);

	if (ret >= 0)
		return ret;
	if (vm_args__command(&va, argc, argv)) {
		ret = cli_error("vm run", "out of memory");
		goto out;
	}
	if (fflush(stdout) == EOF) {
		ret = cli_error("vm run", "cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	execv(va.runner, va.argv);
	ret = cli_error("vm run", "cannot run the VM runner %s: %s (set VPERF_VM_RUNNER to "
			"tests/vm/vm-run.sh of a vperf source tree)", va.runner, strerror(errno));
out:
	vm_args__exit(&va);
	return ret;
}

/* ---- vm record ---------------------------------------------------------------------------- */

static volatile sig_atomic_t record_signal;	/* the first SIGINT/SIGTERM/SIGHUP */
static volatile pid_t record_child;

/* Ctrl-C and friends: the runner stops the guest and brings the recording back; we convert it. */
static void record_on_signal(int sig)
{
	pid_t child = record_child;

	if (!record_signal)
		record_signal = sig;
	if (child > 0)
		kill(child, SIGTERM);
}

static const char *run_ending(int status)
{
	switch (status) {
	case 122: return "L1 crashed (status 122): the recording ends there";
	case 123: return "the guest crashed (status 123): the recording ends at the crash";
	case 124: return "the guest timed out (status 124): the recording ends at the timeout";
	case 125: return "vperf-vmm or the nested stack failed (status 125)";
	case 126: return "the guest reported no status (126)";
	default:
		return status > 128 && status < 160 ? "vperf-vmm was stopped by a signal: the recording "
						       "ends there" : NULL;
	}
}

static int cmd_vm_record(int argc, char **argv)
{
	struct vm_args va;
	struct sigaction sa = { .sa_handler = record_on_signal }, old_sa[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	char raw[PATH_MAX], dirbuf[PATH_MAX], gfiles[PATH_MAX + 16];
	const char *dir, *ending;
	struct stat rst = { 0 };
	int ret = vm_args__parse(&va, &record_usage, argc, argv), status, wst;
	pid_t pid;

	if (ret >= 0)
		return ret;
	dir = dirbuf;
	ret = rawconv_check(&record_usage, va.output, dirbuf, sizeof(dirbuf));
	if (ret)
		goto out;
#ifndef VPERF_HAVE_RECORD
	if (!va.raw_only) {
		ret = cli_error("vm record", "this vperf was built without the CTF writer "
				"(libbabeltrace-ctf was missing: Debian package libbabeltrace-ctf-dev, "
				"scripts/install-deps.sh), so it cannot write the recording; install it and "
				"rebuild, or use --raw-only to keep vperf-vmm's raw recording");
		goto out;
	}
#endif
	if (access(va.runner, X_OK)) {
		ret = cli_error("vm record", "cannot run the VM runner %s: %s (set VPERF_VM_RUNNER to "
				"tests/vm/vm-run.sh of a vperf source tree)", va.runner,
				strerror(errno));
		goto out;
	}
	ret = rawconv_prepare("vm record", dir, raw, sizeof(raw));
	if (ret)
		goto out;
	va.argv[va.n++] = "--record";
	va.argv[va.n++] = raw;
	/* beside the raw recording: what `vperf report` needs to name the guest's frames */
	snprintf(gfiles, sizeof(gfiles), "%s/" RAW_SUBDIR "/" GUEST_FILES_SUBDIR, dir);
	va.argv[va.n++] = "--guest-files";
	va.argv[va.n++] = gfiles;
	if (!va.no_vperf)
		va.argv[va.n++] = "--guest-trace";
	else if (!va.quiet)
		cli_warn("vm record", "--no-vperf: no vperf_guest.ko in the guest, so no guest trace "
			 "records; the recording holds the VMM's and the host's view");
	if (va.no_host_events) {
		va.argv[va.n++] = "--vmm-arg";
		va.argv[va.n++] = "--no-host-events";
	}
	if (va.record_max) {
		va.argv[va.n++] = "--record-max";
		va.argv[va.n++] = (char *)va.record_max;
	}
	if (va.kernel_map) {
		va.argv[va.n++] = "--kernel-map";
		va.argv[va.n++] = (char *)va.kernel_map;
	}
	if (vm_args__command(&va, argc, argv)) {
		ret = cli_error("vm record", "out of memory");
		goto out;
	}

	if (fflush(stdout) == EOF) {
		ret = cli_error("vm record", "cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old_sa[i]);
	/*
	 * No guest outlives whatever started us (a script, a harness, ctest killed at its timeout):
	 * our parent's death is a SIGTERM, which stops the guest and still converts the recording.
	 */
	{
		pid_t parent = getppid();

		if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent)
			raise(SIGTERM);	/* it died before we asked */
	}
	pid = fork();
	if (pid < 0) {
		ret = cli_error("vm record", "fork: %s", strerror(errno));
		goto restore;
	}
	if (!pid) {
		/* the runner's own traps handle these (a stop that still brings the recording) */
		for (int i = 0; i < 3; i++)
			signal(sigs[i], SIG_DFL);
		execv(va.runner, va.argv);
		fprintf(stderr, "vperf vm record: cannot run the VM runner %s: %s\n", va.runner,
			strerror(errno));
		_exit(127);
	}
	record_child = pid;
	if (record_signal)
		kill(pid, SIGTERM);
	while (waitpid(pid, &wst, 0) < 0) {
		if (errno != EINTR) {
			ret = cli_error("vm record", "waiting for the VM runner: %s", strerror(errno));
			goto restore;
		}
	}
	record_child = 0;
	status = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);

	ending = run_ending(status);
	if (ending)
		fprintf(stderr, "[ vperf vm record: %s ]\n", ending);
	else
		fprintf(stderr, "[ vperf vm record: the guest command exited with status %d ]\n",
			status);
	if (stat(raw, &rst) || !rst.st_size) {
		int e = errno;

		cli_error("vm record", "no recording: the VM runner ended with status %d and %s %s "
			  "(see its messages above)", status, raw, !rst.st_size || e == ENOENT ?
			  "did not come back" : strerror(e));
		ret = record_signal ? 128 + record_signal : status ? status : 1;
		goto restore;
	}
	ret = status;
	if (va.raw_only) {
		fprintf(stderr, "[ vperf vm record: Captured and wrote %.3f MB %s (raw, not "
			"converted) ]\n", (double)rst.st_size / 1e6, raw);
	} else {
#ifdef VPERF_HAVE_RECORD
		if (rawconv_convert("vm record", dir, raw, (uint64_t)rst.st_size))
			ret = status ? status : 1;
#endif
	}
	if (record_signal)
		ret = 128 + record_signal;
restore:
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old_sa[i], NULL);
out:
	vm_args__exit(&va);
	return ret;
}

static const struct cmd_struct vm_cmds[] = {
	{ "run", cmd_vm_run, "Boot a guest with vperf-vmm and run a command in it" },
	{ "record", cmd_vm_record, "Record a command's run in a guest across layers into a CTF trace" },
};

int cmd_vm(int argc, char **argv)
{
	return builtin_dispatch("vm", vm_cmds, sizeof(vm_cmds) / sizeof(vm_cmds[0]), argc, argv);
}
