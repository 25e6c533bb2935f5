// SPDX-License-Identifier: MIT
/*
 * vperf timeline [-i DIR] [-o FILE.svg] [--width PX]
 *
 * A recording drawn as one SVG (docs/report.md, section 4): a row per CPU and per thread, when
 * each ran, its samples, forks, execs, exits, losses and markers; and on stdout a summary, each
 * thread's running time.  The drawing is profiler/export/timeline.c's; this file parses, prints
 * the summary and puts the file in place.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "util/escape.h"
#include "util/options.h"
#include "util/outfile.h"
#include "util/recdir.h"
#ifdef VPERF_HAVE_REPORT
#include "timeline.h"
#else
#define VPERF_TIMELINE_MIN_WIDTH	400
#define VPERF_TIMELINE_MAX_WIDTH	20000
#define VPERF_TIMELINE_DEFAULT_WIDTH	1600
#endif

#define DEFAULT_OUTPUT	"timeline.svg"
#define STR(x)		#x
#define XSTR(x)		STR(x)

struct timeline_opts {
	const char *dir, *output;
	unsigned int width;
	struct window { uint64_t from, to; } time;	/* --time, in ns from the first event */
};

static int window_arg(void *member, const char *arg, char *why, size_t len);

static const char *const timeline_synopsis[] = {
	"vperf timeline [-i <dir>] [-o <file.svg>] [--width <px>]",
	NULL,
};

#define T struct timeline_opts
static const struct cli_option timeline_options[] = {
	CLI_OPT_STR(T, 'i', "input", "dir", dir, "the recording (default " RECDIR_DEFAULT ")"),
	CLI_OPT_STR(T, 'o', "output", "file", output, "the SVG to write (default " DEFAULT_OUTPUT
		    "; - for stdout, the summary then goes to stderr)"),
	CLI_OPT_INT(T, 'w', "width", "px", width, VPERF_TIMELINE_MIN_WIDTH, VPERF_TIMELINE_MAX_WIDTH,
		    "a number of pixels from " XSTR(VPERF_TIMELINE_MIN_WIDTH) " to "
		    XSTR(VPERF_TIMELINE_MAX_WIDTH), "the picture's width in pixels, "
		    XSTR(VPERF_TIMELINE_MIN_WIDTH) " to " XSTR(VPERF_TIMELINE_MAX_WIDTH)
		    " (default " XSTR(VPERF_TIMELINE_DEFAULT_WIDTH) ")"),
	CLI_OPT_FN(T, 0, "time", "start,end", time, window_arg, "draw only this window, in seconds "
		   "from the recording's first event (either may be left out: '9.3,' is from 9.3 s "
		   "to the end); the threads alive in it"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage timeline_usage = {
	.cmd = "timeline",
	.synopsis = timeline_synopsis,
	.summary = "Draw a recording as one SVG: a time axis, a row per CPU (who ran there) and "
		   "per thread (when it ran, its samples, fork, exec, exit, markers), losses, a "
		   "legend; and print each thread's running time. Spans closer than a pixel are "
		   "merged, so a long recording stays a small file. `vperf export --to chrome` "
		   "gives the same for trace viewers.",
	.opts = timeline_options,
	.nr_opts = sizeof(timeline_options) / sizeof(timeline_options[0]),
	.permute = true,
};

/* "START,END" in seconds, either part empty: 0, or -EINVAL. */
static int parse_window(const char *arg, uint64_t *from, uint64_t *to)
{
	const char *comma = strchr(arg, ',');
	double v[2] = { 0, -1 };
	char *end;

	if (!comma || strchr(comma + 1, ','))
		return -EINVAL;
	for (int i = 0; i < 2; i++) {
		const char *p = i ? comma + 1 : arg;

		if (p == (i ? arg + strlen(arg) : comma))
			continue;	/* left out */
		errno = 0;
		v[i] = strtod(p, &end);
		if (errno || end == p || end != (i ? arg + strlen(arg) : comma) || !(v[i] >= 0) ||
		    v[i] > 1e9)
			return -EINVAL;
	}
	if (v[1] >= 0 && v[1] <= v[0])
		return -EINVAL;
	*from = (uint64_t)(v[0] * 1e9 + 0.5);
	*to = v[1] < 0 ? UINT64_MAX : (uint64_t)(v[1] * 1e9 + 0.5);
	return 0;
}

static int window_arg(void *member, const char *arg, char *why, size_t len)
{
	struct window *w = member;

	if (parse_window(arg, &w->from, &w->to))
		return snprintf(why, len, "--time '%s': START,END in seconds from the first event, "
				"START before END (either may be left out)", arg);
	return 0;
}

static int parse_opts(struct timeline_opts *o, int argc, char **argv)
{
	int status, first;

	o->dir = RECDIR_DEFAULT;
	o->output = DEFAULT_OUTPUT;
	o->width = VPERF_TIMELINE_DEFAULT_WIDTH;
	o->time.from = 0;
	o->time.to = UINT64_MAX;
	status = cli_parse(&timeline_usage, argc, argv, o, NULL, &first);
	if (status >= 0)
		return status;
	if (first < argc)
		return cli_usage_error(&timeline_usage, "unexpected argument '%s' (the recording "
				       "is given with -i DIR)", argv[first]);
	if (!*o->dir)
		return cli_usage_error(&timeline_usage, "-i needs a directory, not an empty name");
	if (!*o->output)
		return cli_usage_error(&timeline_usage, "-o needs a file name (- for stdout)");
	return -1;
}

#ifdef VPERF_HAVE_REPORT
/* Each shown thread's running time and its share of the recording, most first. */
struct line {
	int32_t thread;
	uint64_t ns, slices;
};

static int by_ns(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->thread - y->thread;
}

static int summary(struct vperf_report *r, FILE *f)
{
	struct vperf_report_slice *s;
	struct line *lines;
	size_t nr, n = 0;
	uint64_t span = r->last_ts > r->first_ts ? r->last_ts - r->first_ts : 0;
	bool *shown;

	if (vperf_report__running(r, &s, &nr))
		return -1;
	shown = vperf_report__shown(r, s, nr, -1);
	lines = calloc(r->nr_threads + 1, sizeof(*lines));
	if (!shown || !lines) {
		free(shown);
		free(lines);
		free(s);
		return -1;
	}
	for (size_t i = 0; i < r->nr_threads; i++)
		if (shown[i])
			lines[n++].thread = (int32_t)i;
	for (size_t i = 0; i < nr; i++)
		for (size_t l = 0; l < n; l++)
			if (lines[l].thread == s[i].thread) {
				lines[l].ns += s[i].end - s[i].start;
				lines[l].slices++;
				break;
			}
	qsort(lines, n, sizeof(*lines), by_ns);
	fputs("# ", f);
	esc_text(f, r->dir);
	fprintf(f, ": %.3f s from the first event to the last, %" PRIu32 " CPUs, %zu threads%s",
		(double)span / 1e9, r->nr_cpus, n, r->vm_name ? ", VM " : "");
	esc_text(f, r->vm_name ? r->vm_name : "");
	fputc('\n', f);
	fprintf(f, "# %12s %7s %8s %8s  %s\n", "running ms", "%", "slices", "tid", "command");
	for (size_t l = 0; l < n; l++) {
		const struct vperf_report_thread *th = &r->threads[lines[l].thread];
		char buf[32];

		fprintf(f, "  %12.3f %6.2f%% %8" PRIu64 " %8" PRIu32 "  %s",
			(double)lines[l].ns / 1e6,
			span ? 100.0 * (double)lines[l].ns / (double)span : 0.0, lines[l].slices,
			th->tid, th->guest && r->vm_name ? "guest " : "");
		esc_text(f, vperf_report__thread_name(r, lines[l].thread, buf, sizeof(buf)));
		fputc('\n', f);
	}
	free(lines);
	free(shown);
	free(s);
	return 0;
}

static int timeline(const struct timeline_opts *o)
{
	struct vperf_report *r = NULL;
	struct outfile out;
	char why[512] = "";
	FILE *info;
	struct stat st;
	int err, status;

	status = outfile_open(&out, "timeline", o->output);
	if (status)
		return status;
	info = out.to_stdout ? stderr : stdout;
	err = vperf_report__open(o->dir, &r, why, sizeof(why));
	if (err) {
		status = cli_error("timeline", "%s: %s", o->dir, why);
		goto out_file;
	}
	if (!r->nr_tlevs && !r->nr_samples) {
		status = cli_error("timeline", "%s: nothing to draw (no samples, switches or "
				   "process events)", o->dir);
		goto out_file;
	}
	err = vperf_timeline_svg(r, o->width, o->time.from, o->time.to, out.f, why, sizeof(why));
	if (err == -ERANGE) {
		status = cli_error("timeline", "--time: %s", why);
		goto out_file;
	}
	if (err) {
		status = cli_error("timeline", "writing %s: %s", o->output, why);
		goto out_file;
	}
	if (summary(r, info))
		status = cli_error("timeline", "out of memory");
out_file:
	vperf_report__delete(r);
	status = outfile_close(&out, status);
	if (!status && !out.to_stdout && !stat(o->output, &st)) {
		fputs("# wrote ", info);
		esc_text(info, o->output);
		fprintf(info, ": %lld bytes, %u px wide\n", (long long)st.st_size, o->width);
	}
	return status;
}
#endif

int cmd_timeline(int argc, char **argv)
{
	struct timeline_opts o;
	int status = parse_opts(&o, argc, argv);

	if (status >= 0)
		return status;
#ifdef VPERF_HAVE_REPORT
	return timeline(&o);
#else
	return cli_error("timeline", "this vperf was built without libbabeltrace2 or libelf "
			 "(Debian libbabeltrace2-dev, libelf-dev: scripts/install-deps.sh): it "
			 "cannot read %s", o.dir);
#endif
}
