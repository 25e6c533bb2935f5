// SPDX-License-Identifier: MIT
/*
 * Collapsed stacks (export.h): one line per distinct (command, stack), root first, frames
 * separated by ';', then a space and the number of samples, as flamegraph.pl's stackcollapse
 * scripts write them.  The command is the root frame, kernel frames end in "_[k]" (flamegraph.pl
 * colours them), and names are written as text (escape.h: a control character, a line break
 * included, as "\xNN") with each ';' as ':', so that every line parses.  Lines are most samples
 * first; the counts sum to the event's samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "export.h"

struct line {
	char *stack;
	uint64_t count;
};

/* Most samples first, then by the stack's text: the same recording gives the same file. */
static int by_count(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->stack, y->stack);
}

/* A name as text (escape.h: no line break is left), each ';' as ':'.  0 or -ENOMEM. */
static int put_name(FILE *out, const char *s)
{
	char *e = esc_text_dup(s);

	if (!e)
		return -ENOMEM;
	for (char *c = e; *c; c++)
		fputc(*c == ';' ? ':' : *c, out);
	free(e);
	return 0;
}

/* One chain's stack, root first: "comm;root;...;leaf" (malloc'd), or NULL. */
static char *stack_of(struct vperf_report *r, const char *comm, const struct vperf_report_sample *s)
{
	char *buf = NULL, name[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return NULL;
	err = put_name(f, comm);
	for (size_t i = s->nr_frames; !err && i-- > 0;) {
		const struct vperf_report_frame *fr = vperf_report__frame(r, s->frame + i);

		fputc(';', f);
		err = put_name(f, vperf_report__frame_name(r, s->frame + i, name, sizeof(name)));
		if (fr->kernel)
			fputs(VPERF_EXPORT_KERNEL_SUFFIX, f);
	}
	if (fclose(f) || err) {
		free(buf);
		return NULL;
	}
	return buf;
}

int vperf_export_folded(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len)
{
	static const enum vperf_report_key keys[] = { VPERF_REPORT_KEY_COMM };
	struct vperf_report_hist h;
	struct line *lines = NULL;
	size_t n = 0, cap = 0;
	int err = vperf_report_hist__build(r, event, keys, 1, VPERF_HIST_CHAINS, &h);

	if (err)
		goto out_msg;
	for (size_t i = 0; i < h.nr_rows; i++) {
		const struct vperf_report_row *row = &h.rows[i];

		cap += row->nr_chains;
	}
	lines = calloc(cap ? cap : 1, sizeof(*lines));
	if (!lines) {
		err = -ENOMEM;
		goto out_hist;
	}
	for (size_t i = 0; i < h.nr_rows; i++) {
		const struct vperf_report_row *row = &h.rows[i];

		for (size_t c = 0; c < row->nr_chains; c++, n++) {
			const struct vperf_report_sample *s = &r->samples[row->chains[c].sample];

			lines[n].stack = stack_of(r, row->key[0], s);
			/* a cost event's samples (report --exits) weigh their period, in ns */
			lines[n].count = vperf_report__cost_event(r, event) ?
					 row->chains[c].period : row->chains[c].samples;
			if (!lines[n].stack) {
				err = -ENOMEM;
				goto out_lines;
			}
		}
	}
	if (n > 1)
		qsort(lines, n, sizeof(*lines), by_count);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, lines[i].count);
out_lines:
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
out_hist:
	vperf_report_hist__exit(&h);
out_msg:
	if (err)
		snprintf(why, why_len, "out of memory");
	return err;
}
