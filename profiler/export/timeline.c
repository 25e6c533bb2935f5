// SPDX-License-Identifier: MIT
/*
 * A recording as one SVG (timeline.h): a title, a time axis with labelled ticks, one row per CPU
 * (what ran there, each thread in its colour) and per thread (running in its colour over a grey
 * "alive, not running" band, samples as ticks under it, fork/exec, exit and markers), losses
 * across the CPU rows, and a legend.  Spans closer than a pixel are merged and samples kept one
 * per pixel column, so a long recording stays a small file; a span under a pixel is drawn one
 * pixel wide.  On a CPU's row, threads taking turns faster than a pixel are one grey span.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export.h"
#include "states.h"
#include "timeline.h"

#define LEFT		200	/* row labels */
#define RIGHT		20
#define TOP		64	/* title and axis */
#define ROW_H		16
#define ROW_GAP		6
#define LEGEND_PAD	8	/* under the legend */
#define LABEL_MIN_PX	90	/* between two axis labels */

#define C_IDLE		"#e2e2e2"	/* alive, not running */
#define C_SAMPLE	"#222222"
#define C_PROC		"#1f5fbf"	/* fork, exec */
#define C_EXIT		"#000000"
#define C_LOST		"#d62020"
#define C_MARKER	"#e08a00"
#define C_MIXED		"#7a7a7a"	/* threads taking turns within a pixel */

/* A guest thread's states (docs/states.md) in a VM recording's rows; NULL: not drawn (running) */
static const char *const state_fill[VPERF_STATE_NR] = {
	[VPERF_STATE_KVM] = "#8c564b",		/* in the host for an exit: KVM */
	[VPERF_STATE_VMM] = "#e377c2",		/* ... the VMM */
	[VPERF_STATE_PREEMPTED] = "#d62728",	/* preempted on the host */
	[VPERF_STATE_HOST_SLEEP] = "#555555",	/* its vCPU sleeping in the host */
	[VPERF_STATE_RUNNABLE] = "#f2cc30",	/* runnable in the guest */
	[VPERF_STATE_WAIT_TIMER] = "#9ecae1",	/* waiting: timer */
	[VPERF_STATE_WAIT_DEVICE] = "#fdae6b",	/* waiting: device */
	[VPERF_STATE_WAIT_THREAD] = "#c5b0d5",	/* waiting: thread */
	[VPERF_STATE_WAIT_UNKNOWN] = "#cfcfcf",	/* waiting: unknown */
};

void vperf_timeline_ticks(uint64_t span, double px, double min_px,
			  struct vperf_timeline_ticks *t)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "s", 1000000000ull }, { "ms", 1000000ull }, { "us", 1000ull }, { "ns", 1 },
	};
	static const unsigned int mult[] = { 1, 2, 5 };
	double want = px > 0 ? (double)span * min_px / px : (double)span;
	uint64_t step = 1, pow10 = 1, u;
	size_t i;

	for (i = 0;; i++) {
		step = pow10 * mult[i % 3];
		if ((double)step >= want || step > UINT64_MAX / 100)
			break;
		if (i % 3 == 2)
			pow10 *= 10;
	}
	t->step = step;
	t->nr = (unsigned int)(span / step) + 1;
	for (i = 0; i < 3 && units[i].ns > span; i++)
		;
	t->unit = units[i].name;
	t->unit_ns = units[i].ns;
	t->decimals = 0;
	for (u = t->unit_ns; u > 1 && step % u; u /= 10)
		t->decimals++;
}

void vperf_timeline_label(const struct vperf_timeline_ticks *t, uint64_t offset, char *buf,
			  size_t len)
{
	uint64_t whole = offset / t->unit_ns, frac = offset % t->unit_ns, div = t->unit_ns;

	if (!t->decimals) {
		snprintf(buf, len, "%" PRIu64 " %s", whole, t->unit);
		return;
	}
	for (unsigned int d = 0; d < t->decimals; d++)
		div /= 10;
	snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 " %s", whole, (int)t->decimals, frac / div,
		 t->unit);
}

size_t vperf_timeline_merge(struct vperf_timeline_span *s, size_t n, uint64_t min_gap)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && s[out - 1].who == s[i].who && s[i].start <= s[out - 1].end + min_gap) {
			if (s[i].end > s[out - 1].end)
				s[out - 1].end = s[i].end;
			continue;
		}
		s[out++] = s[i];
	}
	return out;
}

size_t vperf_timeline_merge_mixed(struct vperf_timeline_span *s, size_t n, uint64_t min_gap)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		struct vperf_timeline_span *c = out ? &s[out - 1] : NULL;
		bool short_i = s[i].end - s[i].start < min_gap;

		/* a short span joins a mixed run or another short span; long ones stay apart */
		if (c && s[i].start <= c->end + min_gap && short_i &&
		    (c->who == VPERF_TIMELINE_MIXED || c->end - c->start < min_gap)) {
			if (c->who != s[i].who)
				c->who = VPERF_TIMELINE_MIXED;
			if (s[i].end > c->end)
				c->end = s[i].end;
			continue;
		}
		s[out++] = s[i];
	}
	return out;
}

/* ---- drawing ---- */

struct row {
	bool cpu;			/* a CPU's row, else a thread's */
	bool vcpu;			/* a CPU of the guest (apart, in a VM recording) */
	uint32_t n;			/* the CPU, or the thread's index */
};

struct draw {
	struct vperf_report *r;
	FILE *out;
	uint64_t t0, span;
	double plot_w, ns_per_px;
	bool vm;
	struct vperf_report_slice *s;
	size_t nr_s;
	struct vperf_timeline_span *tmp;	/* nr_s spans, for a row */
	struct vperf_report_analysis an;	/* a VM recording's guest states (an.spans), or none */
	bool states;
	struct vperf_timeline_span *stmp;	/* an.nr_spans spans, for a row */
};

static double x_of(const struct draw *d, uint64_t ts)
{
	if (ts < d->t0)
		ts = d->t0;
	if (ts > d->t0 + d->span)
		ts = d->t0 + d->span;
	return LEFT + (double)(ts - d->t0) / d->ns_per_px;
}

/* Whether ts is in the window drawn. */
static bool in_view(const struct draw *d, uint64_t ts)
{
	return ts >= d->t0 && ts <= d->t0 + d->span;
}

/* Thread i's colour: hues a golden angle apart. */
static void colour(int32_t i, char *buf, size_t len)
{
	double h = fmod((double)i * 137.508, 360.0) / 60.0, c = 0.55, x, m = 0.28;
	double rgb[3] = { 0, 0, 0 };
	int sector = (int)h;

	x = c * (1 - fabs(fmod(h, 2.0) - 1));
	switch (sector) {
	case 0: rgb[0] = c; rgb[1] = x; break;
	case 1: rgb[0] = x; rgb[1] = c; break;
	case 2: rgb[1] = c; rgb[2] = x; break;
	case 3: rgb[1] = x; rgb[2] = c; break;
	case 4: rgb[0] = x; rgb[2] = c; break;
	default: rgb[0] = c; rgb[2] = x; break;
	}
	snprintf(buf, len, "#%02x%02x%02x", (unsigned int)lround((rgb[0] + m) * 255),
		 (unsigned int)lround((rgb[1] + m) * 255),
		 (unsigned int)lround((rgb[2] + m) * 255));
}

static bool apart(const struct draw *d, int32_t t)
{
	return d->vm && d->r->threads[t].guest;
}

static void rect(const struct draw *d, uint64_t a, uint64_t b, double y, double h,
		 const char *fill)
{
	double x = x_of(d, a), w = x_of(d, b) - x;

	if (b < d->t0 || a > d->t0 + d->span)	/* outside the window */
		return;

	fprintf(d->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
		"fill=\"%s\"/>\n", x, y, w < 1 ? 1 : w, h, fill);
}

static int by_start(const void *a, const void *b)
{
	const struct vperf_timeline_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The row's running spans, merged, each in its thread's colour. */
static void put_spans(struct draw *d, const struct row *row, double y)
{
	uint64_t gap = (uint64_t)d->ns_per_px;
	size_t n = 0;
	char fill[16];

	for (size_t i = 0; i < d->nr_s; i++) {
		const struct vperf_report_slice *s = &d->s[i];

		if (row->cpu ? s->cpu != row->n || apart(d, s->thread) != row->vcpu :
		    s->thread != (int32_t)row->n)
			continue;
		d->tmp[n++] = (struct vperf_timeline_span){ s->start, s->end, s->thread };
	}
	if (row->cpu)
		if (n > 1)
			qsort(d->tmp, n, sizeof(*d->tmp), by_start);
	n = vperf_timeline_merge(d->tmp, n, gap);
	if (row->cpu)
		n = vperf_timeline_merge_mixed(d->tmp, n, gap);
	for (size_t i = 0; i < n; i++) {
		if (d->tmp[i].who == VPERF_TIMELINE_MIXED)
			snprintf(fill, sizeof(fill), C_MIXED);
		else
			colour(d->tmp[i].who, fill, sizeof(fill));
		rect(d, d->tmp[i].start, d->tmp[i].end, y, ROW_H, fill);
	}
}

/* t's first span in d->an.spans (sorted by thread), or nr_spans */
static size_t first_span(const struct draw *d, int32_t t)
{
	size_t lo = 0, hi = d->an.nr_spans;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->an.spans[mid].thread < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A guest thread's states off a vCPU (waits, runnable) over its row, each in its colour; per
 * state, spans closer than a pixel merge (a wait is long against a pixel, or it is a blur of
 * short ones, and the running colour drawn over it shows the turns).
 */
static void put_waits(struct draw *d, int32_t t, double y)
{
	uint64_t gap = (uint64_t)d->ns_per_px;
	size_t lo = first_span(d, t), n;

	for (int st = VPERF_STATE_RUNNABLE; st < VPERF_STATE_NR; st++) {
		n = 0;
		for (size_t i = lo; i < d->an.nr_spans && d->an.spans[i].thread == t; i++)
			if (d->an.spans[i].state == st)
				d->stmp[n++] = (struct vperf_timeline_span){ d->an.spans[i].start,
									     d->an.spans[i].end, st };
		n = vperf_timeline_merge(d->stmp, n, gap);
		for (size_t i = 0; i < n; i++)
			rect(d, d->stmp[i].start, d->stmp[i].end, y, ROW_H, state_fill[st]);
	}
}

#define HOST_H	(ROW_H / 2)	/* the host side's band: the row's lower half */

/*
 * Its host side while on a vCPU (exits in KVM and in the VMM, host preemption, host sleep), as
 * the share of each pixel column's time: bars from the row's bottom, HOST_H px for a whole
 * column, stacked by state; columns of equal height merge.  An exit far shorter than a pixel
 * draws nothing rather than a pixel it does not fill.
 */
static int put_host_side(struct draw *d, int32_t t, double y)
{
	enum { FIRST = VPERF_STATE_KVM, NR = VPERF_STATE_HOST_SLEEP - VPERF_STATE_KVM + 1 };
	size_t ncol = (size_t)ceil(d->plot_w) + 1, lo = first_span(d, t);
	double *acc = calloc(ncol * NR, sizeof(*acc));
	int *off = calloc(ncol, sizeof(*off));

	if (!acc || !off) {
		free(acc);
		free(off);
		return -ENOMEM;
	}
	for (size_t i = lo; i < d->an.nr_spans && d->an.spans[i].thread == t; i++) {
		const struct vperf_report_span *s = &d->an.spans[i];
		double a = x_of(d, s->start) - LEFT, b = x_of(d, s->end) - LEFT;

		if (s->state < FIRST || s->state >= FIRST + NR)
			continue;
		for (size_t c = a > 0 ? (size_t)a : 0; c < ncol && (double)c < b; c++) {
			double x0 = a > (double)c ? a : (double)c;
			double x1 = b < (double)c + 1 ? b : (double)c + 1;

			if (x1 > x0)
				acc[c * NR + (s->state - FIRST)] += x1 - x0;
		}
	}
	for (int st = 0; st < NR; st++) {
		size_t c = 0;

		while (c < ncol) {
			int h = (int)lround(acc[c * NR + st] * HOST_H), o = off[c];
			size_t e = c + 1;

			if (h > HOST_H - o)
				h = HOST_H - o;
			while (e < ncol && (int)lround(acc[e * NR + st] * HOST_H) == h && off[e] == o)
				e++;
			if (h > 0)
				fprintf(d->out, "<rect x=\"%d\" y=\"%.1f\" width=\"%zu\" height=\"%d\" "
					"fill=\"%s\"/>\n", LEFT + (int)c, y + ROW_H - o - h, e - c, h,
					state_fill[FIRST + st]);
			for (size_t k = c; k < e; k++)
				off[k] += h > 0 ? h : 0;
			c = e;
		}
	}
	free(acc);
	free(off);
	return 0;
}

/* A thread's samples: one tick per pixel column, as one path. */
static void put_samples(struct draw *d, int32_t t, double y)
{
	long last = -1;
	bool any = false;

	for (size_t i = 0; i < d->r->nr_samples; i++) {
		const struct vperf_report_sample *s = &d->r->samples[i];
		long col;

		if (s->thread != t || !in_view(d, s->ts))
			continue;
		col = lround(x_of(d, s->ts));
		if (col == last)
			continue;
		fprintf(d->out, "%s M%ld %.1fv5", any ? "" : "<path stroke=\"" C_SAMPLE
			"\" stroke-width=\"1\" d=\"", col, y + ROW_H + 0.5);
		any = true;
		last = col;
	}
	if (any)
		fputs("\"/>\n", d->out);
}

/* fork/exec (a triangle over the row), exit (a bar), markers (a diamond), losses (red). */
static void put_marks(struct draw *d, const struct row *row, double y)
{
	for (size_t i = 0; i < d->r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &d->r->tlevs[i];
		double x = x_of(d, e->ts);

		if (!in_view(d, e->ts))
			continue;
		if (row->cpu) {
			bool g = d->vm && (e->layer == 2 || e->layer == 3);

			if (e->kind == VPERF_REPORT_EV_LOST && e->cpu == row->n && g == row->vcpu)
				fprintf(d->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"2\" "
					"height=\"%d\" fill=\"" C_LOST "\"><title>lost %" PRIu64
					" events</title></rect>\n", x - 1, y - 2, ROW_H + 4,
					e->arg);
			continue;
		}
		if (e->thread != (int32_t)row->n)
			continue;
		switch (e->kind) {
		case VPERF_REPORT_EV_FORK:
		case VPERF_REPORT_EV_EXEC:
			fprintf(d->out, "<path d=\"M%.2f %.1fl-4 -5h8z\" fill=\"" C_PROC "\">"
				"<title>%s</title></path>\n", x, y, vperf_report_ev_names[e->kind]);
			break;
		case VPERF_REPORT_EV_EXIT:
			fprintf(d->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"2\" height=\"%d\" "
				"fill=\"" C_EXIT "\"><title>exit</title></rect>\n", x - 1, y - 2,
				ROW_H + 4);
			break;
		case VPERF_REPORT_EV_MARKER:
			fprintf(d->out, "<path d=\"M%.2f %.1fl4 4l-4 4l-4 -4z\" fill=\"" C_MARKER
				"\"><title>", x, y + ROW_H / 2 - 4);
			esc_xml(d->out, e->str != UINT32_MAX ? d->r->strings[e->str] :
					 "marker", SIZE_MAX);
			fputs("</title></path>\n", d->out);
			break;
		default:
			break;
		}
	}
}

static int put_row(struct draw *d, const struct row *row, double y)
{
	char label[160], buf[32];
	int err = 0;

	if (row->cpu) {
		snprintf(label, sizeof(label), "%s %" PRIu32, row->vcpu ? "vCPU" : "CPU", row->n);
		rect(d, d->t0, d->t0 + d->span, y, ROW_H, "#f4f4f4");
	} else {
		const struct vperf_report_thread *th = &d->r->threads[row->n];
		uint64_t born, died;

		snprintf(label, sizeof(label), "%s%s %" PRIu32,
			 apart(d, (int32_t)row->n) ? "guest " : "",
			 vperf_report__thread_name(d->r, (int32_t)row->n, buf, sizeof(buf)),
			 th->tid);
		vperf_report__lifetime(d->r, (int32_t)row->n, &born, &died);
		rect(d, born, died, y, ROW_H, C_IDLE);
	}
	fprintf(d->out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 8, y + ROW_H - 4);
	esc_xml(d->out, label, SIZE_MAX);
	fputs("</text>\n", d->out);
	if (!row->cpu && d->states && apart(d, (int32_t)row->n))
		put_waits(d, (int32_t)row->n, y);
	put_spans(d, row, y);
	if (!row->cpu && d->states && apart(d, (int32_t)row->n))
		err = put_host_side(d, (int32_t)row->n, y);
	if (!row->cpu)
		put_samples(d, (int32_t)row->n, y);
	put_marks(d, row, y);
	return err;
}

static void put_axis(struct draw *d, double bottom)
{
	struct vperf_timeline_ticks t;
	char label[48];

	vperf_timeline_ticks(d->span, d->plot_w, LABEL_MIN_PX, &t);
	fprintf(d->out, "<g class=\"axis\" stroke=\"#999999\" stroke-width=\"1\">\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>\n", LEFT, TOP - 6,
		LEFT + d->plot_w, TOP - 6);
	for (unsigned int i = 0; i < t.nr; i++) {
		double x = x_of(d, d->t0 + (uint64_t)i * t.step);

		fprintf(d->out, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.1f\" "
			"stroke-dasharray=\"%s\"/>\n", x, TOP - 12, x, bottom, i ? "2,4" : "none");
	}
	fputs("</g>\n<g class=\"axis-labels\" text-anchor=\"middle\">\n", d->out);
	for (unsigned int i = 0; i < t.nr; i++) {
		vperf_timeline_label(&t, (uint64_t)i * t.step, label, sizeof(label));
		fprintf(d->out, "<text x=\"%.2f\" y=\"%d\">%s</text>\n",
			x_of(d, d->t0 + (uint64_t)i * t.step), TOP - 16, label);
	}
	fputs("</g>\n", d->out);
}

/* The legend from y on, wrapped to the picture's width; its lines (with draw false: only those). */
static unsigned int put_legend(struct draw *d, double y, bool draw)
{
	static const struct { const char *shape, *fill, *text; } items[] = {
		{ "rect", NULL, "running (in the thread's colour)" },
		{ "rect", C_IDLE, "alive, not running" },
		{ "rect", C_MIXED, "threads taking turns within a pixel" },
		{ "tick", C_SAMPLE, "sample" },
		{ "tri", C_PROC, "fork, exec" },
		{ "bar", C_EXIT, "exit" },
		{ "diamond", C_MARKER, "marker" },
		{ "bar", C_LOST, "lost events" },
	};
	size_t nr_items = sizeof(items) / sizeof(items[0]);
	double x = 8, right = LEFT + d->plot_w + RIGHT - 8;
	unsigned int lines = 1;
	char fill[16];

	if (draw)
		fprintf(d->out, "<g id=\"legend\" class=\"legend\">\n");
	for (size_t i = 0; i < nr_items + (d->states ? VPERF_STATE_NR : 0); i++) {
		bool st = i >= nr_items;	/* a state's line: its name as --states gives it */
		const char *f = st ? state_fill[i - nr_items] : items[i].fill;
		const char *shape = st ? "rect" : items[i].shape;
		const char *text = items[st ? 0 : i].text;
		char name[96];
		double w;

		if (st && !f)
			continue;	/* running: the thread's colour */
		if (st) {
			snprintf(name, sizeof(name), "%s%s", vperf_report_state_names[i - nr_items],
				 i - nr_items <= VPERF_STATE_HOST_SLEEP ? " (lower half)" : "");
			text = name;
		}
		w = 24 + 7.0 * (double)strlen(text);	/* about 7 px a letter */

		if (x > 8 && x + w > right) {
			x = 8;
			y += 20;
			lines++;
		}
		if (!draw) {
			x += w + 18;
			continue;
		}

		if (!f) {
			colour(0, fill, sizeof(fill));
			f = fill;
		}
		if (!strcmp(shape, "rect"))
			fprintf(d->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"12\" "
				"fill=\"%s\"/>\n", x, y, f);
		else if (!strcmp(shape, "tick"))
			fprintf(d->out, "<path d=\"M%.1f %.1fv10\" stroke=\"%s\"/>\n", x + 9, y + 1,
				f);
		else if (!strcmp(shape, "tri"))
			fprintf(d->out, "<path d=\"M%.1f %.1fl-5 -7h10z\" fill=\"%s\"/>\n", x + 9,
				y + 10, f);
		else if (!strcmp(shape, "diamond"))
			fprintf(d->out, "<path d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"%s\"/>\n",
				x + 9, y + 1, f);
		else
			fprintf(d->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"14\" "
				"fill=\"%s\"/>\n", x + 8, y - 1, f);
		fprintf(d->out, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 24, y + 11,
			text);
		x += w + 18;
	}
	if (draw)
		fputs("</g>\n", d->out);
	return lines;
}

int vperf_timeline_svg(struct vperf_report *r, unsigned int width, uint64_t from, uint64_t to,
		       FILE *out, char *why, size_t why_len)
{
	struct draw d = { .r = r, .out = out, .vm = r->vm_name != NULL };
	uint32_t nr_cpus = 0, nr_vcpus = 0;
	struct row *rows = NULL;
	size_t nr_rows = 0;
	bool *shown = NULL;
	double height;
	int err;

	err = vperf_report__running(r, &d.s, &d.nr_s);
	if (err)
		goto out_msg;
	err = -ENOMEM;
	shown = vperf_report__shown(r, d.s, d.nr_s, -1);
	d.tmp = malloc((d.nr_s + 1) * sizeof(*d.tmp));
	if (!shown || !d.tmp)
		goto out_free;
	for (size_t i = 0; i < d.nr_s; i++) {
		uint32_t *n = apart(&d, d.s[i].thread) ? &nr_vcpus : &nr_cpus;

		if (d.s[i].cpu + 1 > *n)
			*n = d.s[i].cpu + 1;
	}
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];
		uint32_t *n = d.vm && (e->layer == 2 || e->layer == 3) ? &nr_vcpus : &nr_cpus;

		if (e->kind == VPERF_REPORT_EV_LOST && e->cpu < 65536 && e->cpu + 1 > *n)
			*n = e->cpu + 1;
	}
	rows = calloc((size_t)nr_cpus + nr_vcpus + r->nr_threads + 1, sizeof(*rows));
	if (!rows)
		goto out_free;
	if (d.vm) {	/* a VM recording with guest scheduling: its threads' states too */
		int e = vperf_report__analyse(r, VPERF_ANALYSE_SPANS, &d.an);

		if (e == -ENOMEM)
			goto out_free;
		d.states = !e;
		d.stmp = malloc((d.an.nr_spans + 1) * sizeof(*d.stmp));
		if (!d.stmp)
			goto out_free;
	}
	for (uint32_t i = 0; i < nr_cpus; i++)
		rows[nr_rows++] = (struct row){ .cpu = true, .n = i };
	for (uint32_t i = 0; i < nr_vcpus; i++)
		rows[nr_rows++] = (struct row){ .cpu = true, .vcpu = true, .n = i };
	d.t0 = r->first_ts;
	d.span = r->last_ts > r->first_ts ? r->last_ts - r->first_ts : 1;
	if (from >= d.span) {
		err = -ERANGE;
		snprintf(why, why_len, "the window starts at %.6f s, after the recording's end "
			 "(%.6f s)", (double)from / 1e9, (double)d.span / 1e9);
		goto out_free;
	}
	if (to < d.span)
		d.span = to;
	d.span -= from;
	d.t0 += from;
	if (!d.span)
		d.span = 1;
	for (int pass = 0; pass < 2; pass++)	/* the host's threads, then the guest's */
		for (size_t i = 0; i < r->nr_threads; i++) {
			uint64_t born, died;

			if (!shown[i] || apart(&d, (int32_t)i) != pass)
				continue;
			vperf_report__lifetime(r, (int32_t)i, &born, &died);
			if (died >= d.t0 && born <= d.t0 + d.span)	/* alive in the window */
				rows[nr_rows++] = (struct row){ .n = (uint32_t)i };
		}
	d.plot_w = (double)width - LEFT - RIGHT;
	d.ns_per_px = (double)d.span / d.plot_w;
	height = TOP + (double)nr_rows * (ROW_H + ROW_GAP) + 14 + 20.0 * put_legend(&d, 0, false) +
		 LEGEND_PAD;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		"height=\"%.0f\" viewBox=\"0 0 %u %.0f\" font-family=\"sans-serif\" "
		"font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
		"<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">vperf timeline: ",
		width, height, width, height);
	esc_xml(out, r->dir, SIZE_MAX);
	if (d.t0 != r->first_ts || d.t0 + d.span < r->last_ts)
		fprintf(out, " (%.3f s to %.3f s of %.3f s, %zu rows)</text>\n",
			(double)(d.t0 - r->first_ts) / 1e9,
			(double)(d.t0 + d.span - r->first_ts) / 1e9,
			(double)(r->last_ts - r->first_ts) / 1e9, nr_rows);
	else
		fprintf(out, " (%.3f s, %zu rows)</text>\n", (double)d.span / 1e9, nr_rows);
	put_axis(&d, TOP + (double)nr_rows * (ROW_H + ROW_GAP));
	for (size_t i = 0; i < nr_rows; i++)
		if (put_row(&d, &rows[i], TOP + (double)i * (ROW_H + ROW_GAP)))
			goto out_free;	/* err is -ENOMEM */
	put_legend(&d, TOP + (double)nr_rows * (ROW_H + ROW_GAP) + 14, true);
	fputs("</svg>\n", out);
	err = 0;
out_free:
	if (d.states)
		vperf_report_analysis__exit(&d.an);
	free(d.stmp);
	free(rows);
	free(shown);
	free(d.tmp);
	free(d.s);
out_msg:
	if (err == -ENOMEM)
		snprintf(why, why_len, "out of memory");
	return err;
}
