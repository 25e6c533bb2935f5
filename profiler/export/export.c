// SPDX-License-Identifier: MIT
/* The table of export formats (export.h). */
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
