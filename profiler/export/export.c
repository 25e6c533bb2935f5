// SPDX-License-Identifier: MIT
/* The table of export formats (export.h). */
#include <stdint.h>
#include <string.h>

#include "export.h"

const struct vperf_export_format vperf_export_formats[] = {
	{ "folded", "collapsed stacks, one \"comm;root;...;leaf count\" line per distinct stack "
	  "(flamegraph.pl, speedscope)", vperf_export_folded, NULL, false },
#ifdef VPERF_EXPORT_PPROF
	{ "pprof", "a gzipped pprof profile: values samples and the event's period (go tool pprof)",
	  vperf_export_pprof, NULL, false },
#endif
	{ "flame", "a flame graph of the stacks: one self-contained SVG, a frame's width its samples "
	  "(a browser; vperf report --flame writes the same)", vperf_export_flame, NULL, false },
	{ "chrome", "a timeline in the Trace Event Format's JSON: each thread's running slices, "
	  "per-CPU slices, samples, process events, losses (Perfetto's UI, chrome://tracing)",
	  vperf_export_chrome, NULL, true },
#ifdef VPERF_EXPORT_CTF
	{ "ctf", "a directory of LTTng kernel traces, host/ and guest/: scheduling, process and KVM "
	  "events with lttng-modules' names (Trace Compass, babeltrace2)", NULL, vperf_export_lttng,
	  true },
#endif
};

const size_t vperf_export_nr_formats = sizeof(vperf_export_formats) /
				       sizeof(vperf_export_formats[0]);

const struct vperf_export_format *vperf_export_find(const char *name)
{
	for (size_t i = 0; i < vperf_export_nr_formats; i++)
		if (!strcmp(vperf_export_formats[i].name, name))
			return &vperf_export_formats[i];
	return NULL;
}

void vperf_export_xml(FILE *out, const char *s, size_t max)
{
	size_t n = strlen(s);
	bool cut = n > max;

	if (cut) {
		n = max >= 2 ? max - 2 : 0;
		/* not inside a character: back over UTF-8 continuation bytes */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			/* control characters but the tab are not XML text */
			if ((unsigned char)s[i] >= 0x20 || s[i] == '\t')
				fputc(s[i], out);
		}
	}
	if (cut)
		fputs("..", out);
}
