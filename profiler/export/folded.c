// SPDX-License-Identifier: MIT
/*
 * Collapsed stacks (export.h): one line per distinct (command, stack), root first, frames
 * separated by ';', then a space and the number of samples, as flamegraph.pl's stackcollapse
 * scripts write them.  The command is the root frame, kernel frames end in "_[k]" (flamegraph.pl
 * colours them), and a ';' or a line break in a name becomes ':' or ' ' so that every line
 * parses.  The counts sum to the event's samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "export.h"

static void put_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

int vperf_export_folded(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len)
{
	static const enum vperf_report_key keys[] = { VPERF_REPORT_KEY_COMM };
	struct vperf_report_hist h;
	char buf[512];
	int err = vperf_report_hist__build(r, event, keys, 1, true, &h);

	if (err) {
		snprintf(why, why_len, "out of memory");
		return err;
	}
	for (size_t i = 0; i < h.nr_rows; i++) {
		const struct vperf_report_row *row = &h.rows[i];

		for (size_t c = 0; c < row->nr_chains; c++) {
			const struct vperf_report_sample *s = &r->samples[row->chains[c].sample];

			put_name(out, row->key[0]);
			for (size_t f = s->nr_frames; f-- > 0;) {
				const struct vperf_report_frame *fr = vperf_report__frame(r, s->frame + f);

				fputc(';', out);
				put_name(out, vperf_report__frame_name(r, s->frame + f, buf, sizeof(buf)));
				if (fr->kernel)
					fputs(VPERF_EXPORT_KERNEL_SUFFIX, out);
			}
			fprintf(out, " %" PRIu64 "\n", row->chains[c].samples);
		}
	}
	vperf_report_hist__exit(&h);
	return 0;
}
