// SPDX-License-Identifier: MIT
/*
 * vperf help [<command>]: the list of commands, or one command's options
 * (the same text as `vperf <command> --help`).
 */
#include <string.h>

#include "builtin.h"
#include "util/options.h"

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
