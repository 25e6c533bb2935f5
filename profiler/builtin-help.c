// SPDX-License-Identifier: MIT
/*
 * vperf help [<command>]: the list of commands, or one command's options
 * (the same text as `vperf <command> --help`).  The table of commands is here, so that the
 * calls go one way: vperf.c to this file, this file to the builtins.
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "util/options.h"
#include "util/strutil.h"

static const char *const help_synopsis[] = {
	"vperf help [<command>]",
	NULL,
};

static const struct cli_option help_options[] = {
	CLI_OPT_HELP(),
};

static const struct cli_usage help_usage = {
	.cmd = "help",
	.synopsis = help_synopsis,
	.summary = "Show the vperf commands, or the options of one command.",
	.opts = help_options,
	.nr_opts = sizeof(help_options) / sizeof(help_options[0]),
};

/* The commands: what `vperf` runs, `vperf help` lists and `vperf help CMD` shows. */
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
	{ "kvm", cmd_kvm, "Record a KVM VMM that runs already, QEMU or any other, by its pid (kvm record)" },
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

int cmd_help(int argc, char **argv)
{
	const struct cmd_struct *cmd, *close;
	char *sub_argv[3];
	int first, status = cli_parse(&help_usage, argc, argv, NULL, NULL, &first);

	if (status >= 0)
		return status;
	if (first >= argc) {
		builtin_print_overview(stdout);
		return 0;
	}
	if (argc - first > 1)
		return cli_usage_error(&help_usage, "too many arguments: '%s' (give one command)",
				       argv[first + 1]);
	cmd = builtin_find(argv[first]);
	if (!cmd) {
		close = builtin_closest(argv[first]);
		return cli_usage_error(&help_usage, "'%s' is not a vperf command%s%s%s",
				       argv[first], close ? "; did you mean '" : "",
				       close ? close->name : "", close ? "'?" : "");
	}
	/* `vperf help stat` is `vperf stat --help`. */
	sub_argv[0] = (char *)cmd->name;
	sub_argv[1] = (char *)"--help";
	sub_argv[2] = NULL;
	return cmd->fn(2, sub_argv);
}
