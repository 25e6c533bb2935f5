// SPDX-License-Identifier: MIT
/*
 * vperf: count, sample and trace performance events across
 * virtualization layers.  main() dispatches to one builtin per command
 * and checks that what they wrote reached stdout.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <vperf/vperf.h>

#include "builtin.h"
#include "util/options.h"
#include "util/strutil.h"

#ifndef VPERF_CLI_VERSION
#define VPERF_CLI_VERSION "unknown"
#endif

static int print_version(void)
{
	const char *lib = vperf_version();

	printf("vperf version %s", VPERF_CLI_VERSION);
	if (lib && strcmp(lib, VPERF_CLI_VERSION))
		printf(" (libvperf %s)", lib);
	printf("\n");
	return 0;
}

/* perf's run_builtin(): a full disk or closed stdout is a failure too. */
static int check_stdout(int status)
{
	struct stat st;

	if (fstat(fileno(stdout), &st))
		return status;	/* stdout closed by the caller: say nothing */
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "vperf: write error on standard output: %s\n",
			strerror(errno ? errno : EIO));
		return status ? status : 1;
	}
	if (fclose(stdout)) {
		fprintf(stderr, "vperf: close failed on standard output: %s\n",
			strerror(errno));
		return status ? status : 1;
	}
	return status;
}

static int run(int argc, char **argv)
{
	const struct cmd_struct *cmd, *close;
	const char *name;

	if (argc < 2) {
		builtin_print_overview(stderr);
		return VPERF_EXIT_USAGE;
	}
	name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "-v"))
		return print_version();
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		builtin_print_overview(stdout);
		return 0;
	}
	if (name[0] == '-') {
		fprintf(stderr, "vperf: unknown option '%s'\n"
				"  (see 'vperf help')\n", name);
		return VPERF_EXIT_USAGE;
	}
	cmd = builtin_find(name);
	if (!cmd) {
		fprintf(stderr, "vperf: '%s' is not a vperf command.", name);
		close = builtin_closest(name);
		if (close)
			fprintf(stderr, " Did you mean '%s'?", close->name);
		fprintf(stderr, "\n  (see 'vperf help' for the commands)\n");
		return VPERF_EXIT_USAGE;
	}
	return cmd->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	int status = run(argc, argv);

	return check_stdout(status) & 0xff;
}
