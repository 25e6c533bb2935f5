// SPDX-License-Identifier: MIT
/* Messages on stderr (see log.h). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"

/* Process-wide verbosity, written once by main before any thread starts. */
static atomic_int log_level = VMM_LOG_INFO;

void vmm_log_set_level(int level)
{
	atomic_store(&log_level, level);
}

int vmm_log_get_level(void)
{
	return atomic_load(&log_level);
}

void vmm_log(int level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[VMM_LOG_ERR] = "vperf-vmm: error: ",
		[VMM_LOG_WARN] = "vperf-vmm: warning: ",
		[VMM_LOG_INFO] = "vperf-vmm: ",
		[VMM_LOG_DEBUG] = "vperf-vmm: debug: ",
	};
	char buf[1024];
	va_list ap;
	int n, m;

	if (level > atomic_load(&log_level) || level < VMM_LOG_ERR)
		return;
	n = snprintf(buf, sizeof(buf), "%s", prefix[level]);
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	/* One write per message: lines from vCPU threads do not interleave. */
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}
