// SPDX-License-Identifier: MIT
/* Why a call failed (why.h). */
#include <stdarg.h>
#include <stdio.h>

#include "why.h"

int vperf_why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}
