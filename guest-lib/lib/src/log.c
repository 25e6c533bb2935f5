// SPDX-License-Identifier: MIT
/* The library never prints on its own: messages go to the user's logger. */
#include <stdarg.h>
#include <stdatomic.h>

#include "internal.h"

static _Atomic(vperf_print_fn) vperf_printer;

void vperf_set_print(vperf_print_fn fn)
{
	atomic_store(&vperf_printer, fn);
}

void vperf__log(enum vperf_log_level level, const char *fmt, ...)
{
	vperf_print_fn fn = atomic_load(&vperf_printer);
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	fn(level, fmt, ap);
	va_end(ap);
}

const char *vperf_version(void)
{
#define VPERF_STR_(x) #x
#define VPERF_STR(x) VPERF_STR_(x)
	return VPERF_STR(VPERF_VERSION_MAJOR) "." VPERF_STR(VPERF_VERSION_MINOR)
		"." VPERF_STR(VPERF_VERSION_PATCH);
}
