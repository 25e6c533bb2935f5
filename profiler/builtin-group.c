// SPDX-License-Identifier: MIT
/*
 * The commands that group subcommands (vperf vm, vperf kvm): one dispatch for all of them.  Apart
 * from builtin-help.c, whose command table calls the groups.
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "util/options.h"

/* A command with subcommands (vm, kvm): "vperf GROUP SUB ..." to SUB's builtin, or its help. */
int builtin_dispatch(const char *group, const struct cmd_struct *cmds, size_t n, int argc,
		     char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;

	if (!sub || !strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		FILE *out = sub ? stdout : stderr;

		fprintf(out, "usage: vperf %s <command> [<options>]\n\n", group);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "   %-10s %s\n", cmds[i].name, cmds[i].help);
		fprintf(out, "\nSee 'vperf %s <command> --help'.\n", group);
		return sub ? 0 : VPERF_EXIT_USAGE;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(sub, cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "vperf %s: '%s' is not a %s command (see 'vperf %s --help')\n", group, sub,
		group, group);
	return VPERF_EXIT_USAGE;
}
