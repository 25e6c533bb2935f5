// SPDX-License-Identifier: MIT
/*
 * vperf export [-i DIR] --to FORMAT -o FILE [-e EVENT]
 *
 * A recording's samples for other tools (docs/report.md): collapsed stacks for flame graphs,
 * pprof profiles, and a timeline for trace viewers (chrome: the Trace Event Format).  The
 * formats are profiler/export/'s table; this file parses, opens FILE and checks that everything
 * reached it.  FILE is written beside itself and renamed into place (util/outfile.c), so that a
 * failed export leaves no half file.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/recdir.h"
#ifdef VPERF_HAVE_REPORT
#include "export.h"
#include "report.h"
#endif

struct export_opts {
	const char *dir, *to, *output, *event;
	bool exits;
};


static const char *const export_synopsis[] = {
	"vperf export [-i <dir>] --to folded|flame|pprof|chrome -o <file> [-e <event>]",
	"vperf export [-i <dir>] --to folded|flame|pprof --exits -o <file>",
	"vperf export [-i <dir>] --to ctf -o <dir>",
	NULL,
};

#define T struct export_opts
static const struct cli_option export_options[] = {
	CLI_OPT_STR(T, 'i', "input", "dir", dir, "the recording (default " RECDIR_DEFAULT ")"),
	CLI_OPT_STR(T, 0, "to", "format", to, "folded: collapsed stacks, \"comm;root;...;leaf "
		    "count\" per line, for flamegraph.pl and speedscope; flame: a flame graph, one "
		    "self-contained SVG; pprof: a gzipped profile.proto for `go tool pprof`, values "
		    "samples and the event's period; chrome: a timeline in the Trace Event Format's "
		    "JSON (threads' running slices, CPUs, samples, counters, forks, exits, losses) "
		    "for Perfetto's UI and chrome://tracing; ctf: a directory of LTTng kernel traces "
		    "(host/, guest/ for a VM recording) of the scheduling, process and KVM events, "
		    "for Trace Compass and babeltrace2"),
	CLI_OPT_STR(T, 'o', "output", "file", output, "where to write (- for stdout; ctf: a new or "
		    "empty directory)"),
	CLI_OPT_STR(T, 'e', "event", "event", event, "which sampled event (default: the "
		    "recording's first; chrome: all)"),
	CLI_OPT_FLAG(T, 0, "exits", exits, "folded, flame, pprof: the VM exits' cost instead of "
		     "samples (a VM recording with the host's kvm_exit events): stacks of guest "
		     "thread, the guest function at the exit's RIP, the exit reason; values in ns "
		     "(docs/states.md, \"Exits\")"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage export_usage = {
	.cmd = "export",
	.synopsis = export_synopsis,
	.summary = "Write a recording's samples, with their resolved callchains, in another "
		   "tool's format: collapsed stacks (folded) or a pprof profile; or the whole "
		   "recording as a timeline (chrome) or as LTTng kernel traces (ctf). Record with "
		   "`vperf record -g` for whole stacks; without, each stack is the sampled function "
		   "alone.",
	.opts = export_options,
	.nr_opts = sizeof(export_options) / sizeof(export_options[0]),
	.permute = true,
};

static int parse_opts(struct export_opts *o, int argc, char **argv)
{
	int status, first;

	memset(o, 0, sizeof(*o));
	o->dir = RECDIR_DEFAULT;
	status = cli_parse(&export_usage, argc, argv, o, NULL, &first);
	if (status >= 0)
		return status;
	if (first < argc)
		return cli_usage_error(&export_usage, "unexpected argument '%s' (the recording is "
				       "given with -i DIR)", argv[first]);
	if (!*o->dir)
		return cli_usage_error(&export_usage, "-i needs a directory, not an empty name");
	if (!o->to)
		return cli_usage_error(&export_usage, "--to is missing: folded, flame, pprof, "
				       "chrome or ctf");
	if (!o->output || !*o->output)
		return cli_usage_error(&export_usage, "-o FILE is missing (- for stdout)");
	if (o->exits && o->event)
		return cli_usage_error(&export_usage, "--exits or -e, not both (--exits exports the "
				       "exits' cost)");
	if (o->exits && strcmp(o->to, "folded") && strcmp(o->to, "flame") && strcmp(o->to, "pprof"))
		return cli_usage_error(&export_usage, "--exits goes with --to folded, flame or pprof, "
				       "not %s", o->to);
	return -1;
}

#ifdef VPERF_HAVE_REPORT
/* A format that is a directory: -o names it; it must not exist, or be empty. */
static int export_dir(const char *cmd, const struct export_opts *o,
		      const struct vperf_export_format *fmt)
{
	struct vperf_report *r = NULL;
	char why[512] = "";
	struct stat st;
	int err;

	if (!strcmp(o->output, "-"))
		return cli_usage_error(&export_usage, "--to %s writes a directory: -o DIR, not -",
				       fmt->name);
	if (!stat(o->output, &st) && !recdir_is_empty(o->output))
		return cli_error(cmd, "%s exists and is not an empty directory: the export "
				 "would mix with it", o->output);
	if (o->event)
		return cli_usage_error(&export_usage, "--to %s writes events, not samples: no -e",
				       fmt->name);
	err = vperf_report__open(o->dir, &r, why, sizeof(why));
	if (err)
		return cli_error(cmd, "%s: %s", o->dir, why);
	err = fmt->write_dir(r, o->output, why, sizeof(why));
	vperf_report__delete(r);
	if (err)
		return cli_error(cmd, "writing %s: %s", o->output, why);
	return 0;
}

/* --exits: the recording's exits as samples of their cost (report/exits.h); 0 or the status. */
static int exit_samples(const char *cmd, struct vperf_report *r, const char *dir, int *event)
{
	struct vperf_report_analysis a;
	int err = vperf_report__analyse_exits(r, &a);

	if (err == -ENOENT)
		return cli_error(cmd, "--exits: %s " VPERF_EXIT_NEED, dir);
	if (!err) {
		err = vperf_report__add_exit_samples(r, &a, event);
		vperf_report_analysis__exit(&a);
	}
	if (err == -E2BIG)
		return cli_error(cmd, "--exits: %s has 64 sampled events already, the most an export "
				 "takes with the exits' cost beside them", dir);
	return err ? cli_error(cmd, "%s: out of memory", dir) : 0;
}

/* The export o asks for; errors are command cmd's (export, or report for --flame). */
static int export(const char *cmd, const struct export_opts *o)
{
	const struct vperf_export_format *fmt = vperf_export_find(o->to);
	char why[512] = "", names[256] = "";
	struct vperf_report *r = NULL;
	struct outfile out;
	int event, err, status;

	for (size_t i = 0, off = 0; i < vperf_export_nr_formats && off < sizeof(names); i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "",
					vperf_export_formats[i].name);
	if (!fmt)
		return cli_usage_error(&export_usage, "--to %s: not a format this vperf writes "
				       "(%s)", o->to, names);
	if (fmt->write_dir)
		return export_dir(cmd, o, fmt);
	status = outfile_open(&out, cmd, o->output);
	if (status)
		return status;
	event = fmt->timeline ? -1 : 0;	/* a timeline: every event's samples */
	err = vperf_report__open(o->dir, &r, why, sizeof(why));
	if (err) {
		status = cli_error(cmd, "%s: %s", o->dir, why);
		goto out_file;
	}
	if (o->event) {
		event = vperf_report__event(r, o->event);
		if (event < 0) {
			status = cli_error(cmd, "-e %s: %s has no samples of that event (it "
					   "has: %s)", o->event, o->dir,
					   r->event_list ? r->event_list : "");
			goto out_file;
		}
	} else if (o->exits) {
		status = exit_samples(cmd, r, o->dir, &event);
		if (status)
			goto out_file;
	} else if (!r->nr_events && !fmt->timeline) {
		status = cli_error(cmd, "%s has no samples", o->dir);
		goto out_file;
	}
	err = fmt->write(r, event, out.f, why, sizeof(why));
	if (err)
		status = cli_error(cmd, "writing %s: %s", o->output, why);
out_file:
	vperf_report__delete(r);
	return outfile_close(&out, status);
}

int export_recording(const char *cmd, const char *dir, const char *to, const char *output,
		     const char *event, bool exits)
{
	struct export_opts o = { .dir = dir, .to = to, .output = output, .event = event,
				 .exits = exits };

	return export(cmd, &o);
}
#endif

int cmd_export(int argc, char **argv)
{
	struct export_opts o;
	int status = parse_opts(&o, argc, argv);

	if (status >= 0)
		return status;
#ifdef VPERF_HAVE_REPORT
	return export("export", &o);
#else
	return cli_error("export", "this vperf was built without libbabeltrace2 or libelf "
			 "(Debian libbabeltrace2-dev, libelf-dev: scripts/install-deps.sh): it "
			 "cannot read %s", o.dir);
#endif
}
