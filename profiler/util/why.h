/* SPDX-License-Identifier: MIT */
/*
 * Why a call failed, for a person: the profiler's libraries return -errno and leave the reason
 * in a buffer the caller gave (why, len), which the builtin prints.
 */
#ifndef VPERF_UTIL_WHY_H
#define VPERF_UTIL_WHY_H

#include <stddef.h>

/* Format the reason into why (if why and len), and return err: return vperf_why(...). */
int vperf_why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif /* VPERF_UTIL_WHY_H */
