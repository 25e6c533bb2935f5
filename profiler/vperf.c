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

static const struct cmd_struct commands[] = {
	{ "help", cmd_help, "Show the commands, or one command's options" },
	{ "list", cmd_list, "List the events this host knows and can count" },
	{ "stat", cmd_stat, "Count events while a command or a process runs" },
	{ "record", cmd_record, "Sample a command or a process into a CTF recording" },
	{ "report", cmd_report, "Which code is hot in a recording, by symbol, object, thread (report)" },
	{ "export", cmd_export,
	  "Write a recording for flame graphs (folded), pprof, or trace viewers (chrome)" },
	{ "timeline", cmd_timeline,
	  "Draw a recording as an SVG: when each thread ran, on which CPU" },
	{ "vm", cmd_vm, "Run a command in a guest booted by vperf-vmm, or record it (vm run, vm record)" },
};

const struct cmd_struct *builtin_commands(size_t *nr)
{
	*nr = sizeof(commands) / sizeof(commands[0]);
	return commands;
}

const struct cmd_struct *builtin_find(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

const struct cmd_struct *builtin_closest(const char *name)
{
	const struct cmd_struct *best = NULL;
	int best_d = 3;		/* at most two edits away */

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		int d = str_edit_distance(name, commands[i].name);

		if (d < best_d) {
			best_d = d;
			best = &commands[i];
		}
	}
	return best;
}

void builtin_print_overview(FILE *out)
{
	fprintf(out,
		"\n usage: vperf [--version] [--help] <command> [<args>]\n"
		"\n The vperf commands are:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "   %-10s %s\n", commands[i].name,
			commands[i].help);
	fprintf(out, "\n See 'vperf help <command>' or 'vperf <command> --help'"
		     " for a command's options.\n\n");
}

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
