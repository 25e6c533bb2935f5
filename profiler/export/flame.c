// SPDX-License-Identifier: MIT
/*
 * A flame graph (export.h, docs/report.md section 3): one self-contained SVG of a sampled
 * event's stacks, as flamegraph.pl draws them.  The bottom bar is every sample ("all"); above
 * it each thread's name (the folded export's root frame), then the stacks from their outermost
 * frame up to the sampled function.  A frame's width is its samples (itself and what it called),
 * children sorted by name left to right, so the same recording gives the same picture.  Each
 * frame is a <g> holding a <title> (name, samples, share: a browser's tooltip), its <rect> and,
 * where it is wide enough, its name cut to fit.  Colours: warm hues from the name for user
 * code, orange-browns for the kernel, greys for "all" and the threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export.h"

#define FRAME_H		16.0
#define TOP		36.0	/* the title */
#define BOTTOM		24.0	/* the footnote */
#define SIDE		10.0
#define CHAR_W		7.0	/* 12 px monospace: what a label may take per character */

enum { K_ALL, K_COMM, K_USER, K_KERNEL };

struct node {
	char *name;
	uint64_t count;
	uint8_t kind;
	size_t child, next;	/* first child, next sibling: indices, 0 = none (0 is the root) */
};

struct tree {
	struct node *n;
	size_t nr, cap;
	unsigned int depth;	/* the deepest frame's, the root 0 */
};

/* The child of parent called name (of kind), made if new: its index, or 0 (no memory). */
static size_t child_of(struct tree *t, size_t parent, const char *name, uint8_t kind)
{
	size_t prev = 0, cur = t->n[parent].child;

	/* siblings are kept sorted by name, then kind */
	while (cur) {
		int c = strcmp(t->n[cur].name, name);

		if (!c)
			c = (int)t->n[cur].kind - (int)kind;
		if (!c)
			return cur;
		if (c > 0)
			break;
		prev = cur;
		cur = t->n[cur].next;
	}
	if (t->nr == t->cap) {
		size_t cap = 2 * t->cap;
		struct node *n = realloc(t->n, cap * sizeof(*n));

		if (!n)
			return 0;
		t->n = n;
		t->cap = cap;
	}
	t->n[t->nr] = (struct node){ .name = strdup(name), .kind = kind, .next = cur };
	if (!t->n[t->nr].name)
		return 0;
	if (prev)
		t->n[prev].next = t->nr;
	else
		t->n[parent].child = t->nr;
	return t->nr++;
}

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->n[i].name);
	free(t->n);
}

/* Add one distinct stack (a hist row's chain) of count samples. */
static int add_stack(struct tree *t, struct vperf_report *r, const char *comm,
		     const struct vperf_report_sample *s, uint64_t count)
{
	char name[512];
	size_t at = child_of(t, 0, comm, K_COMM);
	unsigned int depth = 1;

	if (!at)
		return -ENOMEM;
	t->n[0].count += count;
	t->n[at].count += count;
	for (size_t i = s->nr_frames; i-- > 0;) {
		const struct vperf_report_frame *f = vperf_report__frame(r, s->frame + i);

		at = child_of(t, at, vperf_report__frame_name(r, s->frame + i, name, sizeof(name)),
			      f->kernel ? K_KERNEL : K_USER);
		if (!at)
			return -ENOMEM;
		t->n[at].count += count;
		depth++;
	}
	if (depth > t->depth)
		t->depth = depth;
	return 0;
}

/* A stable colour per name: FNV-1a of it picks the hue within the kind's range. */
static void fill_of(const struct node *n, char *buf, size_t len)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *)n->name; *c; c++)
		h = (h ^ *c) * 16777619u;
	switch (n->kind) {
	case K_ALL:
		snprintf(buf, len, "#d0d0d0");
		break;
	case K_COMM:
		snprintf(buf, len, "#%02x%02x%02x", 0xb0 + (h & 0x1f), 0xb0 + (h & 0x1f),
			 0xb8 + (h & 0x1f));
		break;
	case K_KERNEL:
		snprintf(buf, len, "#%02x%02x%02x", 0xc8 + (h & 0x1f), 0x80 + ((h >> 5) & 0x3f),
			 0x30 + ((h >> 11) & 0x1f));
		break;
	default:
		snprintf(buf, len, "#%02x%02x%02x", 0xe0 + (h & 0x1f), 0x60 + ((h >> 5) & 0x7f),
			 0x30 + ((h >> 12) & 0x3f));
	}
}

struct draw {
	FILE *out;
	const struct tree *t;
	double scale;		/* px per sample */
	double height;
	const char *unit;	/* of a node's count: samples, or ns of a cost event's */
};

static void put_node(const struct draw *d, size_t i, double x, unsigned int depth)
{
	const struct node *n = &d->t->n[i];
	double w = (double)n->count * d->scale, y = d->height - BOTTOM - (depth + 1) * FRAME_H;
	char fill[16];

	if (w < 0.1)
		return;		/* too thin to see: its children are thinner */
	fill_of(n, fill, sizeof(fill));
	fputs("<g><title>", d->out);
	esc_xml(d->out, n->name, SIZE_MAX);
	fprintf(d->out, " (%" PRIu64 " %s, %.2f%%)</title>", n->count, d->unit,
		100.0 * (double)n->count / (double)d->t->n[0].count);
	fprintf(d->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
		"rx=\"2\"/>", x, y, w, FRAME_H - 1, fill);
	if (w >= 3 * CHAR_W + 6) {
		fprintf(d->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
		esc_xml(d->out, n->name, (size_t)((w - 6) / CHAR_W));
		fputs("</text>", d->out);
	}
	fputs("</g>\n", d->out);
	for (size_t c = n->child; c; c = d->t->n[c].next) {
		put_node(d, c, x, depth + 1);
		x += (double)d->t->n[c].count * d->scale;
	}
}

int vperf_export_flame(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len)
{
	static const enum vperf_report_key keys[] = { VPERF_REPORT_KEY_COMM };
	const unsigned int width = VPERF_FLAME_WIDTH;
	struct vperf_report_hist h;
	struct tree t = { 0 };
	/* a cost event's samples (report --exits) weigh their period: the width is time */
	bool cost = vperf_report__cost_event(r, event);
	struct draw d = { .out = out, .t = &t, .unit = cost ? "ns" : "samples" };
	int err = vperf_report_hist__build(r, event, keys, 1, VPERF_HIST_CHAINS, &h);

	if (err)
		goto out_msg;
	t.cap = 256;
	t.n = calloc(t.cap, sizeof(*t.n));
	if (!t.n || !(t.n[0].name = strdup("all"))) {
		err = -ENOMEM;
		goto out_tree;
	}
	t.nr = 1;
	for (size_t i = 0; !err && i < h.nr_rows; i++)
		for (size_t c = 0; !err && c < h.rows[i].nr_chains; c++)
			err = add_stack(&t, r, h.rows[i].key[0],
					&r->samples[h.rows[i].chains[c].sample],
					cost ? h.rows[i].chains[c].period :
					       h.rows[i].chains[c].samples);
	if (err)
		goto out_tree;
	d.height = TOP + BOTTOM + (t.depth + 1) * FRAME_H;
	d.scale = t.n[0].count ? (width - 2 * SIDE) / (double)t.n[0].count : 0;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%.0f\" "
		"viewBox=\"0 0 %u %.0f\" font-family=\"monospace\" font-size=\"12\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf6\"/>\n"
		"<text x=\"%u\" y=\"22\" text-anchor=\"middle\" font-size=\"16\">", width, d.height,
		width, d.height, width / 2);
	fputs("Flame graph: ", out);
	esc_xml(out, event >= 0 && (size_t)event < r->nr_events ? r->events[event] :
			 "samples", SIZE_MAX);
	fputs(" of ", out);
	esc_xml(out, r->dir, SIZE_MAX);
	fprintf(out, "</text>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\" fill=\"#555555\">"
		"%" PRIu64 " %s; width: %s of a function and what it called; bottom "
		"up: thread, then its stack; orange-brown: kernel</text>\n<g id=\"frames\">\n", SIDE,
		d.height - 8, t.n[0].count, d.unit, cost ? "the cost in ns" : "samples");
	if (t.n[0].count)
		put_node(&d, 0, SIDE, 0);
	fputs("</g>\n</svg>\n", out);
out_tree:
	tree_free(&t);
	vperf_report_hist__exit(&h);
out_msg:
	if (err)
		snprintf(why, why_len, "out of memory");
	return err;
}
