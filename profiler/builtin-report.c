// SPDX-License-Identifier: MIT
/*
 * vperf report [-i DIR] [--sort keys] [-g caller|callee] [--[no-]children] [--stdio | -x SEP | -j]
 * vperf report --header [-i DIR]
 * vperf report --states [-i DIR] [--tid T] [--vcpu N] [--stdio | -x SEP | -j]
 * vperf report --exits [-i DIR] [--sort keys] [--tid T] [--vcpu N] [--stdio | -x SEP | -j]
 * vperf report --flame -o FILE.svg [-i DIR]
 *
 * Which code is hot in a recording (docs/report.md): its samples grouped by the --sort keys,
 * each row's share of the event's period, most first, one table per sampled event, as perf
 * report --stdio prints them; CSV with -x, JSON with -j; with -g, each row's callchains.
 * --header says what the recording holds, from its metadata alone (profiler/record/header.c).
 * --states says where each guest thread's and vCPU's wall time went (docs/states.md).
 * --exits says which guest threads and code the VM exits came from and what they cost.
 * --flame draws the first sampled event's stacks as a flame graph (vperf export --to flame).
 * The reading and grouping are profiler/report/'s; this file parses and prints.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vperf/vperf.h>

#include "builtin.h"
#include "util/escape.h"
#include "util/options.h"
#include "util/recdir.h"
#ifdef VPERF_HAVE_RECORD
#include "record/header.h"
#endif
#ifdef VPERF_HAVE_REPORT
#include "report.h"
#include "report-exits.h"
#endif

#define NR_LONGEST	5	/* --states --tid: the longest waits shown */
#define CHAIN_DEPTH	6	/* and how far back each one's chain of wakers goes */

#define DEFAULT_SORT	"comm,dso,symbol"
#define CHAIN_MIN_PCT	0.5	/* -g: chains under this share of the event are summed up */

static const char *const report_synopsis[] = {
	"vperf report [-i <dir>] [--sort key[,key...]] [-g caller|callee] [--children|--no-children] "
	"[--stdio|-x <sep>|-j]",
	"vperf report --header [-i <dir>]",
	"vperf report --states [-i <dir>] [--tid <tid>] [--vcpu <n>] [--stdio|-x <sep>|-j]",
	"vperf report --exits [-i <dir>] [--sort key[,key...]] [--tid <tid>] [--vcpu <n>] "
	"[--stdio|-x <sep>|-j]",
	"vperf report --flame -o <file.svg> [-i <dir>]",
	NULL,
};

enum format { FMT_STDIO, FMT_CSV, FMT_JSON };

struct report_opts {
	const char *dir, *sort, *sep, *output, *guest_root;
	enum format fmt;
	bool header, graph, caller, states, exits, flame, children, no_children;
	long tid, vcpu;			/* -1: all */
};

static int graph_arg(void *o, const char *arg, char *why, size_t len);
static int stdio_arg(void *o, const char *arg, char *why, size_t len);
static int sep_arg(void *o, const char *arg, char *why, size_t len);
static int json_arg(void *o, const char *arg, char *why, size_t len);
static int tid_arg(void *member, const char *arg, char *why, size_t len);
static int vcpu_arg(void *member, const char *arg, char *why, size_t len);
static int root_arg(void *member, const char *arg, char *why, size_t len);

#define T struct report_opts
static const struct cli_option report_options[] = {
	CLI_OPT_STR(T, 'i', "input", "dir", dir, "the recording (default " RECDIR_DEFAULT ")"),
	CLI_OPT_STR(T, 's', "sort", "keys", sort, "group samples by these, comma-separated: "
		    "symbol, dso, thread (or tid), pid, comm, layer (default " DEFAULT_SORT "); "
		    "with --exits: thread (or tid), comm, symbol, dso, reason, vcpu (default "
		    "thread,symbol,reason)"),
	CLI_OPT_CB(T, 'g', "call-graph", "order", graph_arg, "print each row's callchains, caller "
		   "(root first) or callee (the sampled function first); the recording needs "
		   "`vperf record -g`"),
	CLI_OPT_FLAG(T, 0, "children", children, "with --sort by symbol: a row for every function on a "
		     "sample's stack, Children (what it and everything it called cost) beside Self "
		     "(what it cost itself), most Children first, as perf report shows them (the "
		     "default when the recording has callchains)"),
	CLI_OPT_FLAG(T, 0, "no-children", no_children, "rows of the sampled functions only, most "
		     "Self first (the default without callchains)"),
	CLI_OPT_CB(T, 0, "stdio", NULL, stdio_arg, "a table for people (the default)"),
	CLI_OPT_CB(T, 'x', "field-separator", "sep", sep_arg, "CSV: a header line, then one line "
		   "per row, fields separated by sep"),
	CLI_OPT_CB(T, 'j', "json", NULL, json_arg, "one JSON object: every event's rows (and -g's "
		   "chains)"),
	CLI_OPT_FLAG(T, 0, "header", header, "print what the recording holds: layers, events per "
		     "type, losses, clock mapping, duration"),
	CLI_OPT_FLAG(T, 0, "states", states, "a `vperf vm record` recording: where each guest "
		     "thread's wall time went (running, in a VM exit, preempted on the host, "
		     "runnable, waiting for a timer, a device or a thread) and each vCPU's "
		     "(docs/states.md)"),
	CLI_OPT_FLAG(T, 0, "exits", exits, "a VM recording with the host's kvm_exit events (`vperf "
		     "vm record`, `vperf kvm record`): every VM exit by the guest thread on its "
		     "vCPU, the guest function at its RIP and its reason, with count, cost (exit to "
		     "next entry: in KVM, the VMM, preempted, asleep), mean, p99 and share of the "
		     "thread's wall time (docs/states.md, \"Exits\")"),
	CLI_OPT_FN(T, 0, "tid", "tid", tid, tid_arg, "--states: only this guest thread, with its "
		   "longest waits and the chain of wakeups behind each; --exits: its exits only"),
	CLI_OPT_FN(T, 0, "vcpu", "n", vcpu, vcpu_arg, "--states: only vCPU n's table; --exits: "
		   "its exits only"),
	CLI_OPT_FLAG(T, 0, "flame", flame, "draw the first sampled event's stacks as a flame graph, "
		     "one self-contained SVG (as `vperf export --to flame`), or with --exits the "
		     "exits' cost (guest thread, function, reason); needs -o"),
	CLI_OPT_STR(T, 'o', "output", "file", output, "--flame: the SVG to write (- for stdout)"),
	CLI_OPT_FN(T, 0, "guest-root", "dir", guest_root, root_arg, "a `vperf vm record` "
		   "recording: find the guest's files under dir (a copy of its file system) "
		   "instead of where the recording's list says they came from"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage report_usage = {
	.cmd = "report",
	.synopsis = report_synopsis,
	.summary = "Which code is hot in a recording made by `vperf record` (a CTF trace "
		   "directory that `babeltrace2 DIR` also reads): its samples grouped by symbol, "
		   "shared object, thread, command or layer, each row's share of the sampled event "
		   "(Overhead), most first; symbols from the executables and libraries the "
		   "recording mapped, kernel symbols from the recording. `vperf export` writes the "
		   "same samples for flame graphs and pprof.",
	.opts = report_options,
	.nr_opts = sizeof(report_options) / sizeof(report_options[0]),
	.permute = true,
};


static int parse_num(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int graph_arg(void *base, const char *arg, char *why, size_t len)
{
	struct report_opts *o = base;

	if (strcmp(arg, "caller") && strcmp(arg, "callee"))
		return snprintf(why, len, "-g '%s': caller or callee", arg);
	o->graph = true;
	o->caller = !strcmp(arg, "caller");
	return 0;
}

static int stdio_arg(void *base, const char *arg, char *why, size_t len)
{
	(void)arg, (void)why, (void)len;
	((struct report_opts *)base)->fmt = FMT_STDIO;
	return 0;
}

static int sep_arg(void *base, const char *arg, char *why, size_t len)
{
	struct report_opts *o = base;

	if (!*arg || strpbrk(arg, "\"\n"))
		return snprintf(why, len, "-x '%s': a separator of one or more characters, without "
				"'\"' or a newline", arg);
	o->sep = arg;
	o->fmt = FMT_CSV;
	return 0;
}

static int json_arg(void *base, const char *arg, char *why, size_t len)
{
	(void)arg, (void)why, (void)len;
	((struct report_opts *)base)->fmt = FMT_JSON;
	return 0;
}

static int tid_arg(void *member, const char *arg, char *why, size_t len)
{
	return parse_num(arg, 0x3fffffff, member) ?
	       snprintf(why, len, "--tid '%s': a thread id", arg) : 0;
}

static int vcpu_arg(void *member, const char *arg, char *why, size_t len)
{
	return parse_num(arg, 1023, member) ?
	       snprintf(why, len, "--vcpu '%s': a vCPU number (0..1023)", arg) : 0;
}

static int root_arg(void *member, const char *arg, char *why, size_t len)
{
	struct stat st;
	int e = stat(arg, &st) ? errno : 0;

	if (e || !S_ISDIR(st.st_mode))
		return snprintf(why, len, "--guest-root '%s': %s", arg,
				e ? strerror(e) : "not a directory");
	*(const char **)member = arg;
	return 0;
}

/* The options, checked together: -1 to go on, else the exit status. */
static int parse_opts(struct report_opts *o, int argc, char **argv)
{
	int first, status;

	memset(o, 0, sizeof(*o));
	o->dir = RECDIR_DEFAULT;
	o->sort = NULL;			/* DEFAULT_SORT, or VPERF_EXIT_DEFAULT_SORT with --exits */
	o->tid = o->vcpu = -1;
	status = cli_parse(&report_usage, argc, argv, o, NULL, &first);
	if (status >= 0)
		return status;
	status = -1;
	if (first < argc)
		return cli_usage_error(&report_usage, "unexpected argument '%s' (the recording is "
				       "given with -i DIR)", argv[first]);
	if (!*o->dir)
		return cli_usage_error(&report_usage, "-i needs a directory, not an empty name");
	if (o->graph && o->fmt == FMT_CSV)
		status = cli_usage_error(&report_usage, "-g prints with --stdio or -j, not -x");
	else if (o->children && o->no_children)
		status = cli_usage_error(&report_usage, "--children or --no-children, not both");
	else if ((o->children || o->no_children) && (o->states || o->exits || o->flame || o->header))
		status = cli_usage_error(&report_usage, "--children and --no-children go with the "
					 "sample tables");
	else if ((o->tid >= 0 || o->vcpu >= 0) && !o->states && !o->exits)
		status = cli_usage_error(&report_usage, "--tid and --vcpu go with --states or "
					 "--exits");
	else if (o->tid >= 0 && o->vcpu >= 0 && o->states)
		status = cli_usage_error(&report_usage, "--states: --tid or --vcpu, not both");
	else if (o->states && (o->graph || o->header || o->sort || o->exits))
		status = cli_usage_error(&report_usage, "--states takes neither -g, --sort, "
					 "--exits nor --header");
	else if (o->exits && (o->graph || o->header))
		status = cli_usage_error(&report_usage, "--exits takes neither -g nor --header");
	else if (o->output && !o->flame)
		status = cli_usage_error(&report_usage, "-o goes with --flame (the tables are "
					 "printed)");
	else if (o->flame && (!o->output || !*o->output))
		status = cli_usage_error(&report_usage, "--flame needs -o FILE.svg (- for stdout)");
	else if (o->flame && (o->states || o->header || o->graph || o->fmt != FMT_STDIO ||
			      o->sort || o->tid >= 0 || o->vcpu >= 0))
		status = cli_usage_error(&report_usage, "--flame takes only -i and -o (and --exits)");
	return status;
}

static int report_header(const struct report_opts *o)
{
#ifdef VPERF_HAVE_RECORD
	char why[256] = "";
	int err = vperf_recording_header(o->dir, stdout, why, sizeof(why));

	if (err)
		return cli_error("report", "%s: %s", o->dir, why[0] ? why : strerror(-err));
	return 0;
#else
	return cli_error("report", "this vperf was built without the recording library "
			 "(libbabeltrace-ctf-dev was missing): it cannot read %s", o->dir);
#endif
}

#ifdef VPERF_HAVE_REPORT

static const char *const key_titles[VPERF_REPORT_NR_KEYS] = {
	"Symbol", "Shared Object", "Tid", "Pid", "Command", "Layer",
};

/* A row's text for key k: an unknown symbol names its DSO unless the DSO has a column. */
static const char *cell(const struct vperf_report_hist *h, const struct vperf_report_row *row,
			size_t k, char *buf, size_t len)
{
	bool dso_col = false;

	for (size_t i = 0; i < h->nr_keys; i++)
		dso_col |= h->keys[i] == VPERF_REPORT_KEY_DSO;
	if (h->keys[k] == VPERF_REPORT_KEY_SYMBOL && !strcmp(row->key[k], VPERF_REPORT_UNKNOWN) &&
	    !dso_col) {
		snprintf(buf, len, VPERF_REPORT_UNKNOWN_IN, row->dso);
		return buf;
	}
	return row->key[k];
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_chain(struct vperf_report *r, const struct vperf_report_chain *c, bool caller,
			uint64_t total, int indent, FILE *out)
{
	const struct vperf_report_sample *s = &r->samples[c->sample];
	char buf[512];

	fprintf(out, "%*s---%.2f%% (%" PRIu64 " sample%s)\n", indent, "", pct(c->period, total),
		c->samples, c->samples == 1 ? "" : "s");
	for (size_t i = 0; i < s->nr_frames; i++) {
		size_t f = s->frame + (caller ? s->nr_frames - 1 - i : i);

		fprintf(out, "%*s", indent + 3, "");
		esc_text(out, vperf_report__frame_name(r, f, buf, sizeof(buf)));
		fputc('\n', out);
	}
}

static void print_stdio(struct vperf_report *r, const struct vperf_report_hist *h,
			const struct report_opts *o, FILE *out)
{
	int width[VPERF_REPORT_NR_KEYS];
	char buf[600];

	fprintf(out, "# Samples: %" PRIu64 " of event '", h->samples);
	esc_text(out, r->events[h->event]);
	fputs("'\n", out);
	fprintf(out, "# Event count (approx.): %" PRIu64 "\n", h->period);
	fprintf(out, "# Unresolved: %" PRIu64 " samples (%.2f%%) in no known symbol, shown as %s "
		"with their shared object\n", h->unresolved, pct(h->unresolved, h->samples),
		VPERF_REPORT_UNKNOWN);
	fprintf(out, "#\n");
	for (size_t k = 0; k < h->nr_keys; k++) {
		width[k] = (int)strlen(key_titles[h->keys[k]]);
		for (size_t i = 0; i < h->nr_rows; i++) {
			int w = (int)esc_text_len(cell(h, &h->rows[i], k, buf, sizeof(buf))) +
				(h->keys[k] == VPERF_REPORT_KEY_SYMBOL ? 4 : 0);

			if (w > width[k])
				width[k] = w;
		}
		if (width[k] > 60)
			width[k] = 60;
	}
	fprintf(out, h->children ? "# Children      Self  Samples" : "# Overhead  Samples");
	for (size_t k = 0; k < h->nr_keys; k++)
		fprintf(out, "  %-*s", k + 1 < h->nr_keys ? width[k] : 0, key_titles[h->keys[k]]);
	fprintf(out, h->children ? "\n# ........  ........  ......." : "\n# ........  .......");
	for (size_t k = 0; k < h->nr_keys; k++) {
		int w = k + 1 < h->nr_keys ? width[k] : (int)strlen(key_titles[h->keys[k]]);

		fprintf(out, "  ");
		for (int i = 0; i < w; i++)
			fputc('.', out);
	}
	fprintf(out, "\n#\n");
	for (size_t i = 0; i < h->nr_rows; i++) {
		const struct vperf_report_row *row = &h->rows[i];
		uint64_t shown = 0, rest = 0;

		if (h->children)
			fprintf(out, "  %7.2f%%  %7.2f%%  %7" PRIu64, pct(row->children_period, h->period),
				pct(row->period, h->period), row->samples);
		else
			fprintf(out, "  %7.2f%%  %7" PRIu64, pct(row->period, h->period), row->samples);
		for (size_t k = 0; k < h->nr_keys; k++) {
			const char *t = cell(h, row, k, buf, sizeof(buf));
			int w = k + 1 < h->nr_keys ? width[k] : 0;

			if (h->keys[k] == VPERF_REPORT_KEY_SYMBOL) {
				fprintf(out, "  %s ", row->kernel ? "[k]" : "[.]");
				esc_text_pad(out, t, w ? w - 4 : 0);
			} else {
				fputs("  ", out);
				esc_text_pad(out, t, w);
			}
		}
		fputc('\n', out);
		if (!o->graph)
			continue;
		for (size_t c = 0; c < row->nr_chains; c++) {
			if (pct(row->chains[c].period, h->period) < CHAIN_MIN_PCT) {
				rest += row->chains[c].samples;
				continue;
			}
			print_chain(r, &row->chains[c], o->caller, h->period, 12, out);
			shown++;
		}
		if (rest)
			fprintf(out, "%12s---%" PRIu64 " more sample%s in chains under %.1f%% "
				"each\n", "", rest, rest == 1 ? "" : "s", CHAIN_MIN_PCT);
		fputc('\n', out);
	}
}

static void print_csv(struct vperf_report *r, const struct vperf_report_hist *h, const char *sep,
		      bool first, FILE *out)
{
	char buf[600];

	if (first) {
		fprintf(out, "event%soverhead%ssamples%speriod", sep, sep, sep);
		if (h->children)
			fprintf(out, "%schildren%schildren_period", sep, sep);
		for (size_t k = 0; k < h->nr_keys; k++)
			fprintf(out, "%s%s", sep, vperf_report_key_names[h->keys[k]]);
		fputc('\n', out);
	}
	for (size_t i = 0; i < h->nr_rows; i++) {
		const struct vperf_report_row *row = &h->rows[i];

		esc_csv(out, r->events[h->event], sep);
		fprintf(out, "%s%.2f%s%" PRIu64 "%s%" PRIu64, sep, pct(row->period, h->period), sep,
			row->samples, sep, row->period);
		if (h->children)
			fprintf(out, "%s%.2f%s%" PRIu64, sep, pct(row->children_period, h->period), sep,
				row->children_period);
		for (size_t k = 0; k < h->nr_keys; k++) {
			fputs(sep, out);
			esc_csv(out, cell(h, row, k, buf, sizeof(buf)), sep);
		}
		fputc('\n', out);
	}
}

static void print_json(struct vperf_report *r, const struct vperf_report_hist *h,
		       const struct report_opts *o, FILE *out)
{
	char buf[600];

	fprintf(out, "{\"event\":");
	esc_json(out, r->events[h->event]);
	fprintf(out, ",\"samples\":%" PRIu64 ",\"period\":%" PRIu64 ",\"unresolved\":%" PRIu64
		",\"sort\":[", h->samples, h->period, h->unresolved);
	for (size_t k = 0; k < h->nr_keys; k++)
		fprintf(out, "%s\"%s\"", k ? "," : "", vperf_report_key_names[h->keys[k]]);
	fprintf(out, "],\"rows\":[");
	for (size_t i = 0; i < h->nr_rows; i++) {
		const struct vperf_report_row *row = &h->rows[i];

		fprintf(out, "%s{\"overhead\":%.4f,\"samples\":%" PRIu64 ",\"period\":%" PRIu64
			",\"kernel\":%s", i ? "," : "", pct(row->period, h->period), row->samples,
			row->period, row->kernel ? "true" : "false");
		if (h->children)
			fprintf(out, ",\"children\":%.4f,\"children_period\":%" PRIu64,
				pct(row->children_period, h->period), row->children_period);
		for (size_t k = 0; k < h->nr_keys; k++) {
			fprintf(out, ",\"%s\":", vperf_report_key_names[h->keys[k]]);
			esc_json(out, cell(h, row, k, buf, sizeof(buf)));
		}
		if (o->graph) {
			fprintf(out, ",\"callchains\":[");
			for (size_t c = 0; c < row->nr_chains; c++) {
				const struct vperf_report_chain *ch = &row->chains[c];
				const struct vperf_report_sample *s = &r->samples[ch->sample];

				fprintf(out, "%s{\"overhead\":%.4f,\"samples\":%" PRIu64
					",\"frames\":[", c ? "," : "", pct(ch->period, h->period),
					ch->samples);
				for (size_t f = 0; f < s->nr_frames; f++) {
					size_t at = o->caller ? s->nr_frames - 1 - f : f;
					const char *n = vperf_report__frame_name(r, s->frame + at,
										 buf, sizeof(buf));

					if (f)
						fputc(',', out);
					esc_json(out, n);
				}
				fprintf(out, "]}");
			}
			fputc(']', out);
		}
		fputc('}', out);
	}
	fprintf(out, "]}");
}

static bool has_guest_kernel_samples(const struct vperf_report *r)
{
	for (size_t i = 0; i < r->nr_samples; i++)
		if (r->samples[i].layer == 2)	/* guest_kernel */
			return true;
	return false;
}

/* Whether a sample has callers: the recording took callchains (an env that says so, or not). */
static bool has_chains(const struct vperf_report *r)
{
	if (r->callchains)
		return true;
	for (size_t i = 0; i < r->nr_samples; i++)
		if (r->samples[i].nr_frames > 1)
			return true;
	return false;
}

static bool has_symbol_key(const enum vperf_report_key *keys, size_t nr)
{
	for (size_t k = 0; k < nr; k++)
		if (keys[k] == VPERF_REPORT_KEY_SYMBOL)
			return true;
	return false;
}

static int report(const struct report_opts *o)
{
	const char *sort = o->sort ? o->sort : DEFAULT_SORT;
	enum vperf_report_key keys[16];
	struct vperf_report *r;
	size_t nr_keys;
	char why[512];
	bool children;
	int err, status = 0;

	if (vperf_report_keys_parse(sort, keys, 16, &nr_keys, why, sizeof(why)))
		return cli_usage_error(&report_usage, "--sort %s: %s", sort, why);
	err = vperf_report__open(o->dir, &r, why, sizeof(why));
	if (err)
		return cli_error("report", "%s: %s", o->dir, why);
	if (o->guest_root && vperf_report__set_guest_root(r, o->guest_root)) {
		vperf_report__delete(r);
		return cli_error("report", "out of memory");
	}
	if (r->nr_samples && !r->nr_mmap_events && r->nr_unmapped)
		cli_warn("report", "%s has no mmap events (recorded by an older vperf or vperf_guest.ko): "
			 "user-space frames are [unknown]", o->dir);
	if (r->vm_name && !r->have_gksyms && has_guest_kernel_samples(r))
		cli_warn("report", "%s: the guest kernel's frames are [unknown]: %s", o->dir,
			 r->gksyms_note ? r->gksyms_note : "the recording has none of its symbols");
	/* perf's default: Children where there are callchains to count them from */
	children = o->children || (!o->no_children && has_chains(r));
	if (o->graph && !r->callchains)
		cli_warn("report", "-g: %s has no callchains (record with `vperf record -g`): each "
			 "chain is its sample's own frame", o->dir);
	if (o->fmt == FMT_STDIO) {
		fputs("# vperf report of ", stdout);
		esc_text(stdout, o->dir);
		printf(": %zu samples, lost %" PRIu64 " events%s\n#\n", r->nr_samples, r->lost,
		       r->have_ksyms || r->have_gksyms ? "" : "; no kernel symbols recorded");
	}
	if (o->fmt == FMT_JSON) {
		printf("{\"recording\":");
		esc_json(stdout, o->dir);
		printf(",\"samples\":%zu,\"lost\":%" PRIu64 ",\"events\":[", r->nr_samples,
		       r->lost);
	}
	if (!r->nr_samples && o->fmt == FMT_STDIO)
		printf("# no samples\n");
	for (size_t e = 0; e < r->nr_events; e++) {
		struct vperf_report_hist h;

		err = vperf_report_hist__build(r, (int)e, keys, nr_keys,
					       (o->graph ? VPERF_HIST_CHAINS : 0) |
					       (children ? VPERF_HIST_CHILDREN : 0), &h);
		if (err) {
			status = cli_error("report", "%s: out of memory", o->dir);
			break;
		}
		if (o->fmt == FMT_STDIO) {
			if (e)
				printf("\n");
			print_stdio(r, &h, o, stdout);
		} else if (o->fmt == FMT_CSV) {
			print_csv(r, &h, o->sep, !e, stdout);
		} else {
			if (e)
				putchar(',');
			print_json(r, &h, o, stdout);
		}
		vperf_report_hist__exit(&h);
	}
	if (o->fmt == FMT_CSV && !r->nr_events) {
		printf("event%soverhead%ssamples%speriod", o->sep, o->sep, o->sep);
		if (children && has_symbol_key(keys, nr_keys))
			printf("%schildren%schildren_period", o->sep, o->sep);
		for (size_t k = 0; k < nr_keys; k++)
			printf("%s%s", o->sep, vperf_report_key_names[keys[k]]);
		putchar('\n');
	}
	if (o->fmt == FMT_JSON)
		printf("]}\n");
	vperf_report__delete(r);
	return status;
}

/* ---- --flame ----------------------------------------------------------- */

static int report_flame(const struct report_opts *o)
{
	/* the first sampled event's, as `vperf export --to flame` without -e; or the exits' */
	return export_recording("report", o->dir, "flame", o->output, NULL, o->exits);
}

/* ---- --states ---------------------------------------------------------- */

static const char *row_label(const struct vperf_report_state_row *w, char *buf, size_t len)
{
	if (w->detail[0])
		snprintf(buf, len, "%s (%s)", vperf_report_state_names[w->state], w->detail);
	else
		snprintf(buf, len, "%s", vperf_report_state_names[w->state]);
	return buf;
}

static const char *table_name(const struct vperf_report *r, const struct vperf_report_states *st,
			      char *buf, size_t len)
{
	char nb[64];

	if (st->vcpu >= 0)
		snprintf(buf, len, "vCPU %" PRId32, st->vcpu);
	else
		snprintf(buf, len, "%s", vperf_report__thread_name(r, st->thread, nb, sizeof(nb)));
	return buf;
}

static bool states_shown(const struct report_opts *o, const struct vperf_report *r,
			 const struct vperf_report_states *st)
{
	if (st->vcpu >= 0)
		return o->tid < 0 && (o->vcpu < 0 || o->vcpu == st->vcpu);
	return o->vcpu < 0 && (o->tid < 0 || (uint32_t)o->tid == r->threads[st->thread].tid);
}

static void print_states_stdio(const struct vperf_report *r, const struct vperf_report_states *st,
			       FILE *out)
{
	uint64_t wall = st->end - st->start;
	char buf[160];

	if (st->vcpu >= 0) {
		fprintf(out, "# vCPU %" PRId32 ": %.3f ms, from the guest's first traced event to "
			"the recording's end\n", st->vcpu, (double)wall / 1e6);
	} else {
		fputs("# thread ", out);
		esc_text(out, table_name(r, st, buf, sizeof(buf)));
		fprintf(out, ", tid %" PRIu32 ": %.3f ms, +%.6f s .. +%.6f s (from %s to "
			"%s); samples: %" PRIu64 " user, %" PRIu64 " kernel\n",
			r->threads[st->thread].tid,
			(double)wall / 1e6, (double)(st->start - r->first_ts) / 1e9,
			(double)(st->end - r->first_ts) / 1e9,
			st->forked ? "its fork" : "the guest's first traced event",
			st->exited ? "its exit" : "the recording's end",
			st->samples_user, st->samples_kernel);
	}
	fprintf(out, "#   %12s  %7s  %8s  %s\n", "Time (ms)", "%", "Count", "State (detail)");
	for (size_t i = 0; i < st->nr_rows; i++) {
		const struct vperf_report_state_row *w = &st->rows[i];

		fprintf(out, "    %12.3f  %6.2f%%  %8" PRIu64 "  ", (double)w->ns / 1e6,
			pct(w->ns, wall), w->count);
		esc_text(out, row_label(w, buf, sizeof(buf)));
		fputc('\n', out);
	}
	fputc('\n', out);
}

static int by_length(const void *x, const void *y)
{
	const struct vperf_report_wait *a = *(const struct vperf_report_wait *const *)x;
	const struct vperf_report_wait *b = *(const struct vperf_report_wait *const *)y;
	uint64_t la = a->woken - a->start, lb = b->woken - b->start;

	return la > lb ? -1 : la < lb;
}

/* --tid: the thread's longest waits, each with the waits of the wakers behind it. */
static int print_waits(const struct vperf_report *r, const struct vperf_report_analysis *a,
		       int32_t t, FILE *out)
{
	const struct vperf_report_wait **w;
	size_t n = 0;
	char nb[64];

	w = malloc((a->nr_waits + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < a->nr_waits; i++)
		if (a->waits[i].thread == t)
			w[n++] = &a->waits[i];
	qsort(w, n, sizeof(*w), by_length);
	fprintf(out, "# its %zu longest waits of %zu, each with the chain of wakeups behind it "
		"(a waker's own wait before it woke this one, and so on)\n",
		n < NR_LONGEST ? n : (size_t)NR_LONGEST, n);
	for (size_t i = 0; i < n && i < NR_LONGEST; i++) {
		const struct vperf_report_wait *x = w[i];

		for (int d = 0; x && d < CHAIN_DEPTH; d++) {
			fprintf(out, "    %*s%s %.3f ms blocked from +%.6f s, %s (", 2 * d, "",
				d ? "<- its waker" : "", (double)(x->woken - x->start) / 1e6,
				(double)(x->start - r->first_ts) / 1e9,
				vperf_report_state_names[x->cause]);
			esc_text(out, x->detail);
			fprintf(out, "), then %.3f ms runnable until it ran on vCPU %" PRIu32 "\n",
				(double)(x->end - x->woken) / 1e6, x->vcpu);
			if (x->cause != VPERF_STATE_WAIT_THREAD || x->waker < 0)
				break;
			x = vperf_report_analysis__wait_before(a, x->waker, x->woken);
			if (x) {
				fprintf(out, "    %*s(", 2 * d + 2, "");
				esc_text(out, vperf_report__thread_name(r, x->thread, nb,
									sizeof(nb)));
				fputs(" had waited:)\n", out);
			}
		}
	}
	if (!n)
		fprintf(out, "    (none: it never blocked)\n");
	fputc('\n', out);
	free(w);
	return 0;
}

static void print_states_csv(const struct vperf_report *r, const struct vperf_report_states *st,
			     const char *sep, FILE *out)
{
	char nb[64];

	for (size_t i = 0; i < st->nr_rows; i++) {
		const struct vperf_report_state_row *w = &st->rows[i];

		fputs(st->vcpu >= 0 ? "vcpu" : "thread", out);
		if (st->vcpu >= 0)
			fprintf(out, "%s%" PRId32 "%s", sep, st->vcpu, sep);
		else
			fprintf(out, "%s%" PRIu32 "%s", sep, r->threads[st->thread].tid, sep);
		esc_csv(out, st->vcpu >= 0 ? "" : vperf_report__thread_name(r, st->thread, nb,
									sizeof(nb)), sep);
		fputs(sep, out);
		esc_csv(out, vperf_report_state_names[w->state], sep);
		fputs(sep, out);
		esc_csv(out, w->detail, sep);
		fprintf(out, "%s%" PRIu64 "%s%.4f%s%" PRIu64 "%s%" PRIu64 "\n", sep, w->ns, sep,
			pct(w->ns, st->end - st->start), sep, w->count, sep, st->end - st->start);
	}
}

static void print_states_json(const struct vperf_report *r, const struct vperf_report_states *st,
			      const struct vperf_report_analysis *a, bool waits, FILE *out)
{
	char nb[64];
	bool first = true;

	if (st->vcpu >= 0)
		fprintf(out, "{\"vcpu\":%" PRId32, st->vcpu);
	else {
		fprintf(out, "{\"tid\":%" PRIu32 ",\"comm\":", r->threads[st->thread].tid);
		esc_json(out, vperf_report__thread_name(r, st->thread, nb, sizeof(nb)));
		fprintf(out, ",\"samples_user\":%" PRIu64 ",\"samples_kernel\":%" PRIu64,
			st->samples_user, st->samples_kernel);
	}
	fprintf(out, ",\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64 ",\"rows\":[",
		st->start - r->first_ts, st->end - r->first_ts);
	for (size_t i = 0; i < st->nr_rows; i++) {
		const struct vperf_report_state_row *w = &st->rows[i];

		fprintf(out, "%s{\"state\":", i ? "," : "");
		esc_json(out, vperf_report_state_names[w->state]);
		fprintf(out, ",\"detail\":");
		esc_json(out, w->detail);
		fprintf(out, ",\"ns\":%" PRIu64 ",\"percent\":%.4f,\"count\":%" PRIu64 "}", w->ns,
			pct(w->ns, st->end - st->start), w->count);
	}
	fputc(']', out);
	if (waits) {
		fprintf(out, ",\"waits\":[");
		for (size_t i = 0; i < a->nr_waits; i++) {
			const struct vperf_report_wait *w = &a->waits[i];

			if (w->thread != st->thread)
				continue;
			fprintf(out, "%s{\"start_ns\":%" PRIu64 ",\"woken_ns\":%" PRIu64
				",\"end_ns\":%" PRIu64 ",\"cause\":", first ? "" : ",",
				w->start - r->first_ts, w->woken - r->first_ts,
				w->end - r->first_ts);
			esc_json(out, vperf_report_state_names[w->cause]);
			fprintf(out, ",\"detail\":");
			esc_json(out, w->detail);
			fprintf(out, ",\"waker_tid\":%" PRId64 "}",
				w->waker >= 0 ? (int64_t)r->threads[w->waker].tid : -1);
			first = false;
		}
		fputc(']', out);
	}
	fputc('}', out);
}

static int report_states(const struct report_opts *o)
{
	struct vperf_report_analysis a;
	struct vperf_report *r;
	size_t shown = 0;
	char why[512];
	int err, status = 0;

	err = vperf_report__open(o->dir, &r, why, sizeof(why));
	if (err)
		return cli_error("report", "%s: %s", o->dir, why);
	err = vperf_report__analyse(r, 0, &a);
	if (err == -ENOENT) {
		status = cli_error("report", "--states: %s has no guest scheduling events: it takes "
				   "a `vperf vm record` recording of a guest tracing with "
				   "vperf_guest.ko (docs/states.md)", o->dir);
		goto out;
	}
	if (err) {
		status = cli_error("report", "%s: out of memory", o->dir);
		goto out;
	}
	for (size_t i = 0; i < a.nr_threads; i++)
		shown += states_shown(o, r, &a.threads[i]);
	for (size_t i = 0; i < a.nr_vcpus; i++)
		shown += states_shown(o, r, &a.vcpus[i]);
	if (!shown) {
		status = o->tid >= 0 ? cli_error("report", "--tid %ld: no guest thread of that tid "
						 "was scheduled in %s", o->tid, o->dir)
				     : cli_error("report", "--vcpu %ld: %s has %zu vCPU%s", o->vcpu,
						 o->dir, a.nr_vcpus, a.nr_vcpus == 1 ? "" : "s");
		goto done;
	}
	if (!a.host_events)
		cli_warn("report", "%s has no host kvm_exit/kvm_entry events of the vCPU threads: "
			 "exits are the VMM's only, and nothing is known of the host's "
			 "preemptions", o->dir);
	if (o->fmt == FMT_STDIO) {
		fputs("# vperf report --states of ", stdout);
		esc_text(stdout, o->dir);
		printf(": where each guest thread's and vCPU's wall "
		       "time went (docs/states.md)\n# host side: %s\n#\n",
		       a.host_events ? (a.svm ? "the vCPU threads' kvm_exit/kvm_entry (AMD SVM "
						"exit codes) and host scheduling"
					      : "the vCPU threads' kvm_exit/kvm_entry (Intel VMX "
						"exit codes) and host scheduling")
				     : "the VMM's exits only");
	} else if (o->fmt == FMT_CSV) {
		printf("table%sid%scomm%sstate%sdetail%sns%spercent%scount%swall_ns\n", o->sep,
		       o->sep, o->sep, o->sep, o->sep, o->sep, o->sep, o->sep);
	} else {
		printf("{\"recording\":");
		esc_json(stdout, o->dir);
		printf(",\"host_events\":%s,\"threads\":[", a.host_events ? "true" : "false");
	}
	shown = 0;
	for (size_t i = 0; i < a.nr_threads; i++) {
		const struct vperf_report_states *st = &a.threads[i];

		if (!states_shown(o, r, st))
			continue;
		if (o->fmt == FMT_STDIO) {
			print_states_stdio(r, st, stdout);
			if (o->tid >= 0 && print_waits(r, &a, st->thread, stdout)) {
				status = cli_error("report", "out of memory");
				goto done;
			}
		} else if (o->fmt == FMT_CSV) {
			print_states_csv(r, st, o->sep, stdout);
		} else {
			if (shown++)
				putchar(',');
			print_states_json(r, st, &a, o->tid >= 0, stdout);
		}
	}
	if (o->fmt == FMT_JSON) {
		printf("],\"vcpus\":[");
		shown = 0;
	}
	for (size_t i = 0; i < a.nr_vcpus; i++) {
		const struct vperf_report_states *st = &a.vcpus[i];

		if (!states_shown(o, r, st))
			continue;
		if (o->fmt == FMT_STDIO)
			print_states_stdio(r, st, stdout);
		else if (o->fmt == FMT_CSV)
			print_states_csv(r, st, o->sep, stdout);
		else {
			if (shown++)
				putchar(',');
			print_states_json(r, st, &a, false, stdout);
		}
	}
	if (o->fmt == FMT_JSON)
		printf("]}\n");
done:
	vperf_report_analysis__exit(&a);
out:
	vperf_report__delete(r);
	return status;
}
/* ---- --exits (report-exits.c prints) ---------------------------------- */

static int report_exits_of(const struct report_opts *o)
{
	const char *sort = o->sort ? o->sort : VPERF_EXIT_DEFAULT_SORT;
	struct report_exits_args a = { .dir = o->dir, .sep = o->sep, .tid = o->tid,
				       .vcpu = o->vcpu,
				       .fmt = o->fmt == FMT_CSV ? REPORT_EXITS_CSV :
					      o->fmt == FMT_JSON ? REPORT_EXITS_JSON :
					      REPORT_EXITS_TABLE };
	char why[256];

	if (vperf_exit_keys_parse(sort, a.keys, VPERF_EXIT_NR_KEYS, &a.nr_keys, why, sizeof(why)))
		return cli_usage_error(&report_usage, "--sort %s: %s", sort, why);
	return report_exits(&a);
}
#endif /* VPERF_HAVE_REPORT */

int cmd_report(int argc, char **argv)
{
	struct report_opts o;
	int status = parse_opts(&o, argc, argv);

	if (status >= 0)
		return status;
	if (o.header)
		return report_header(&o);
#ifdef VPERF_HAVE_REPORT
	if (o.states)
		return report_states(&o);
	if (o.exits && !o.flame)
		return report_exits_of(&o);
	if (o.flame)
		return report_flame(&o);
	return report(&o);
#else
	return cli_error("report", "this vperf was built without libbabeltrace2 or libelf "
			 "(Debian libbabeltrace2-dev, libelf-dev: scripts/install-deps.sh), so it "
			 "cannot read %s's samples; --header works", o.dir);
#endif
}
