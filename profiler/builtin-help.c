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
	{ 'h', "help", NULL, "show this help", 'h' },
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
	struct cli_parser p;
	char *sub_argv[3];
	int c, status = 0;

	if (cli_parser__init(&p, &help_usage, argc, argv))
		return cli_error("help", "out of memory");
	while ((c = cli_getopt(&p)) != CLI_OPT_END) {
		if (c == CLI_OPT_ERROR) {
			status = VPERF_EXIT_USAGE;
			goto out;
		}
		if (c == 'h') {
			cli_usage__print(&help_usage, stdout);
			goto out;
		}
	}
	if (p.optind >= argc) {
		builtin_print_overview(stdout);
		goto out;
	}
	if (argc - p.optind > 1) {
		status = cli_usage_error(&help_usage,
					 "too many arguments: '%s' (give one command)",
					 argv[p.optind + 1]);
		goto out;
	}
	cmd = builtin_find(argv[p.optind]);
	if (!cmd) {
		close = builtin_closest(argv[p.optind]);
		status = cli_usage_error(&help_usage,
			"'%s' is not a vperf command%s%s%s",
			argv[p.optind], close ? "; did you mean '" : "",
			close ? close->name : "", close ? "'?" : "");
		goto out;
	}
	/* `vperf help stat` is `vperf stat --help`. */
	sub_argv[0] = (char *)cmd->name;
	sub_argv[1] = (char *)"--help";
	sub_argv[2] = NULL;
	status = cmd->fn(2, sub_argv);
out:
	cli_parser__exit(&p);
	return status;
}
