// SPDX-License-Identifier: MIT
/*
 * vperf vm run: run a command in a guest booted by vperf-vmm and exit with
 * its status.  The options are checked here, so that a mistake gets the
 * same clear message as every vperf command, then the VM runner
 * (tests/vm/vm-run.sh: guest image, --add staging, direct or nested mode)
 * takes over this process.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "util/options.h"

#ifndef VPERF_VM_RUNNER
#define VPERF_VM_RUNNER "vm-run.sh"
#endif

enum { OPT_VCPUS = 1, OPT_MEM, OPT_KERNEL, OPT_INITRD, OPT_ADD, OPT_TIMEOUT, OPT_MODE, OPT_QUIET,
       OPT_NO_VPERF, OPT_HELP };

static const char *const run_synopsis[] = {
	"vperf vm run [--vcpus N] [--mem MiB] [--kernel K --initrd I] [--add PATH[:GUEST_PATH]]... -- cmd [args]",
	NULL,
};

static const struct cli_option run_opts[] = {
	{ 0, "vcpus", "n", "guest vCPUs, 1 to 16 (default 2)", OPT_VCPUS },
	{ 0, "mem", "MiB", "guest memory, at least 64 (default 512)", OPT_MEM },
	{ 0, "kernel", "file", "guest kernel (bzImage) instead of the bundled image's", OPT_KERNEL },
	{ 0, "initrd", "file", "guest initramfs instead of the bundled image's", OPT_INITRD },
	{ 0, "add", "path[:guest-path]", "put a file or directory into the guest (default "
	  "/payload/NAME); programs bring their shared libraries", OPT_ADD },
	{ 0, "timeout", "seconds", "give up after this long (default 600): exit status 124",
	  OPT_TIMEOUT },
	{ 0, "mode", "auto|direct|nested", "run vperf-vmm here (direct) or inside a QEMU TCG guest "
	  "(nested); auto picks direct only with hardware virtualization", OPT_MODE },
	{ 'q', "quiet", NULL, "show only the guest's output", OPT_QUIET },
	{ 0, "no-vperf", NULL, "do not put this vperf, vperf-demo and vperf_guest.ko (loaded) into "
	  "the guest", OPT_NO_VPERF },
	{ 'h', "help", NULL, "show this help", OPT_HELP },
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

static bool number_in(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return !errno && *s && !*end && v >= lo && v <= hi;
}

static const char *runner_path(void)
{
	const char *env = getenv("VPERF_VM_RUNNER");

	return env && *env ? env : VPERF_VM_RUNNER;
}

static int cmd_vm_run(int argc, char **argv)
{
	struct cli_parser p;
	char **args;
	int n = 0, opt, ret = VPERF_EXIT_USAGE;
	const char *runner = runner_path();
	bool have_kernel = false, have_initrd = false, with_vperf = true;
	char self[PATH_MAX];

	if (cli_parser__init(&p, &run_usage, argc, argv))
		return cli_error("vm run", "out of memory");
	/* runner, the options (at most 2 words each), --vperf EXE, "--", the command, NULL */
	args = calloc((size_t)argc * 2 + 6, sizeof(*args));
	if (!args) {
		cli_parser__exit(&p);
		return cli_error("vm run", "out of memory");
	}
	args[n++] = (char *)runner;
	while ((opt = cli_getopt(&p)) != CLI_OPT_END) {
		const char *a = p.optarg;
		struct stat st;

		switch (opt) {
		case OPT_HELP:
			cli_usage__print(&run_usage, stdout);
			ret = 0;
			goto out;
		case OPT_VCPUS:
			if (!number_in(a, 1, 16)) {
				cli_usage_error(&run_usage, "--vcpus '%s': a number from 1 to 16", a);
				goto out;
			}
			args[n++] = "--vcpus";
			break;
		case OPT_MEM:
			if (!number_in(a, 64, 1024 * 1024)) {
				cli_usage_error(&run_usage, "--mem '%s': MiB, from 64", a);
				goto out;
			}
			args[n++] = "--mem";
			break;
		case OPT_KERNEL:
		case OPT_INITRD:
			if (stat(a, &st) || !S_ISREG(st.st_mode) || access(a, R_OK)) {
				cli_usage_error(&run_usage, "--%s '%s': %s", opt == OPT_KERNEL ? "kernel" :
						"initrd", a, errno ? strerror(errno) : "not a readable file");
				goto out;
			}
			have_kernel |= opt == OPT_KERNEL;
			have_initrd |= opt == OPT_INITRD;
			args[n++] = opt == OPT_KERNEL ? "--kernel" : "--initrd";
			break;
		case OPT_ADD: {
			char path[PATH_MAX];
			const char *colon = strchr(a, ':');
			size_t len = colon ? (size_t)(colon - a) : strlen(a);

			if (!len || len >= sizeof(path)) {
				cli_usage_error(&run_usage, "--add '%s': PATH[:GUEST_PATH]", a);
				goto out;
			}
			memcpy(path, a, len);
			path[len] = '\0';
			if (access(path, R_OK)) {
				cli_usage_error(&run_usage, "--add '%s': %s: %s", a, path, strerror(errno));
				goto out;
			}
			if (colon && colon[1] != '/') {
				cli_usage_error(&run_usage, "--add '%s': the guest path must be absolute", a);
				goto out;
			}
			args[n++] = "--add";
			break;
		}
		case OPT_TIMEOUT:
			if (!number_in(a, 1, 7 * 24 * 3600)) {
				cli_usage_error(&run_usage, "--timeout '%s': seconds, from 1", a);
				goto out;
			}
			args[n++] = "--timeout";
			break;
		case OPT_MODE:
			if (strcmp(a, "auto") && strcmp(a, "direct") && strcmp(a, "nested")) {
				cli_usage_error(&run_usage, "--mode '%s': auto, direct or nested", a);
				goto out;
			}
			args[n++] = "--mode";
			break;
		case OPT_QUIET:
			args[n++] = "--quiet";
			a = NULL;
			break;
		case OPT_NO_VPERF:
			with_vperf = false;
			a = NULL;
			break;
		default:
			goto out;	/* cli_getopt printed the problem */
		}
		if (a)
			args[n++] = (char *)a;
	}
	if (have_kernel != have_initrd) {
		cli_usage_error(&run_usage, "--kernel and --initrd go together (the bundled image's "
				"init runs the command)");
		goto out;
	}
	if (p.optind >= argc) {
		cli_usage_error(&run_usage, "no command to run in the guest");
		goto out;
	}
	if (with_vperf) {
		/* vperf in the guest: this executable (and the vperf-demo next to it) */
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (len < 0) {
			ret = cli_error("vm run", "cannot find this vperf's executable (/proc/self/exe): "
					"%s; --no-vperf runs without it", strerror(errno));
			goto out;
		}
		self[len] = '\0';
		args[n++] = "--vperf";
		args[n++] = self;
	}
	args[n++] = "--";
	for (int i = p.optind; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	if (fflush(stdout) == EOF) {
		ret = cli_error("vm run", "cannot write to stdout: %s", strerror(errno));
		goto out;
	}
	execv(runner, args);
	ret = cli_error("vm run", "cannot run the VM runner %s: %s (set VPERF_VM_RUNNER to "
			"tests/vm/vm-run.sh of a vperf source tree)", runner, strerror(errno));
out:
	free(args);
	cli_parser__exit(&p);
	return ret;
}

static const struct cmd_struct vm_cmds[] = {
	{ "run", cmd_vm_run, "Boot a guest with vperf-vmm and run a command in it" },
};

int cmd_vm(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub || !strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		FILE *out = sub ? stdout : stderr;

		fprintf(out, "usage: vperf vm <command> [<options>]\n\n");
		for (size_t i = 0; i < sizeof(vm_cmds) / sizeof(vm_cmds[0]); i++)
			fprintf(out, "   %-10s %s\n", vm_cmds[i].name, vm_cmds[i].help);
		fprintf(out, "\nSee 'vperf vm <command> --help'.\n");
		return sub ? 0 : VPERF_EXIT_USAGE;
	}
	for (size_t i = 0; i < sizeof(vm_cmds) / sizeof(vm_cmds[0]); i++)
		if (!strcmp(sub, vm_cmds[i].name))
			return vm_cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "vperf vm: '%s' is not a vm command (see 'vperf vm --help')\n", sub);
	return VPERF_EXIT_USAGE;
}
