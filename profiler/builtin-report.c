// SPDX-License-Identifier: MIT
/*
 * vperf report --header [-i DIR]: what a recording holds (layers, events per
 * type, losses per source, the clock mapping, the duration), from its
 * metadata alone (profiler/record/header.c).  The reports over the events
 * themselves are not written yet; the command says so rather than guess.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vperf/vperf.h>

#include "builtin.h"
#include "util/options.h"
#ifdef VPERF_HAVE_RECORD
#include "record/header.h"
#endif

enum { OPT_HELP = 'h', OPT_INPUT = 'i', OPT_HEADER = 0x100 };

static const char *const report_synopsis[] = {
	"vperf report --header [-i <dir>]",
	NULL,
};

static const struct cli_option report_options[] = {
	{ 0, "header", NULL, "print what the recording holds: layers, events per type, losses, clock mapping, "
			     "duration", OPT_HEADER },
	{ 'i', "input", "dir", "the recording (default vperf.data)", OPT_INPUT },
	{ 'h', "help", NULL, "show this help", OPT_HELP },
};

static const struct cli_usage report_usage = {
	.cmd = "report",
	.synopsis = report_synopsis,
	.summary = "Describe a recording made by `vperf record` or `vperf vm record` (a CTF trace\n"
		   " directory that `babeltrace2 DIR` also reads). --header is what this version offers.",
	.opts = report_options,
	.nr_opts = sizeof(report_options) / sizeof(report_options[0]),
	.permute = true,
};

int cmd_report(int argc, char **argv)
{
	const char *dir = "vperf.data";
	struct cli_parser p;
	bool header = false;
	int c, status = 0;

	if (cli_parser__init(&p, &report_usage, argc, argv))
		return cli_error("report", "out of memory");
	while ((c = cli_getopt(&p)) != CLI_OPT_END) {
		switch (c) {
		case OPT_HELP:
			cli_usage__print(&report_usage, stdout);
			goto out;
		case OPT_HEADER:
			header = true;
			break;
		case OPT_INPUT:
			dir = p.optarg;
			break;
		default:
			status = VPERF_EXIT_USAGE;
			goto out;
		}
	}
	if (p.optind < argc) {
		status = cli_usage_error(&report_usage, "unexpected argument '%s' (the recording is given with -i DIR)",
					 argv[p.optind]);
		goto out;
	}
	if (!*dir) {
		status = cli_usage_error(&report_usage, "-i needs a directory, not an empty name");
		goto out;
	}
	if (!header) {
		status = cli_usage_error(&report_usage,
			"only --header is available in this version (reports over the events are not written "
			"yet; `babeltrace2 %s` prints every event)", dir);
		goto out;
	}
#ifdef VPERF_HAVE_RECORD
	{
		char why[256] = "";
		int err = vperf_recording_header(dir, stdout, why, sizeof(why));

		if (err)
			status = cli_error("report", "%s: %s", dir, why[0] ? why : strerror(-err));
	}
#else
	status = cli_error("report", "this vperf was built without the recording library (libbabeltrace-ctf-dev "
			   "was missing): it cannot read %s", dir);
#endif
out:
	cli_parser__exit(&p);
	return status;
}
