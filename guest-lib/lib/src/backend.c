// SPDX-License-Identifier: MIT
/*
 * The backend table.  A backend that cannot run here says why through its
 * probe; it never fails the library.  Automatic selection is in evset.c:
 * "perf", or "pv" for a set with vperf:: events where "pv" is usable.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const struct vperf_backend_ops *const backends[] = {
	&vperf_backend_pv,
	&vperf_backend_perf,
};

#define NR_BACKENDS ((int)(sizeof(backends) / sizeof(backends[0])))

int vperf_backend_count(void)
{
	return NR_BACKENDS;
}

const char *vperf_backend_nth(int n)
{
	return n >= 0 && n < NR_BACKENDS ? backends[n]->name : NULL;
}

const struct vperf_backend_ops *vperf__backend_find(const char *name)
{
	for (int i = 0; i < NR_BACKENDS; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

int vperf_backend_available(const char *name, char *why, size_t len)
{
	const struct vperf_backend_ops *b = name ? vperf__backend_find(name) : NULL;
	char tmp[VPERF_ERRMSG_LEN];

	if (!why) {
		why = tmp;
		len = sizeof(tmp);
	}
	if (len)
		why[0] = '\0';
	if (!b) {
		snprintf(why, len, "no backend named '%s' (backends: pv, perf)",
			 name ? name : "(null)");
		return -ENOENT;
	}
	return b->probe(why, len);
}
