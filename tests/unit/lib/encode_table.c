/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "encode_table.h"
#include "vtest.h"

int encode_table_run(const char *file, const struct encode_case *cases, size_t n)
{
	int errors = 0;

	for (size_t i = 0; i < n; i++) {
		const struct encode_case *c = &cases[i];
		struct perf_event_attr attr;
		char canon[VPERF_NAME_LEN * 4] = "";
		char err[VPERF_ERRMSG_LEN] = "";
		int ret;

		memset(&attr, 0, sizeof(attr));
		ret = vperf__encode(c->name, &attr, canon, sizeof(canon), err, sizeof(err));
		if (ret != c->ret) {
			print_error("%s:%d: \"%s\": returned %d, expected %d (err \"%s\")\n",
				    file, c->line, c->name, ret, c->ret, err);
			errors++;
			continue;
		}
		if (c->ret) {
			if (!vt_contains(err, c->msg)) {
				print_error("%s:%d: \"%s\": error message \"%s\" does not "
					    "contain \"%s\"\n", file, c->line, c->name, err, c->msg);
				errors++;
			}
			continue;
		}
		if (attr.type != c->type || attr.config != c->config ||
		    attr.exclude_user != (unsigned)c->excl_user ||
		    attr.exclude_kernel != (unsigned)c->excl_kernel) {
			print_error("%s:%d: \"%s\": type=%u config=%#" PRIx64
				    " exclude_user=%u exclude_kernel=%u, expected "
				    "type=%u config=%#" PRIx64 " exclude_user=%d "
				    "exclude_kernel=%d\n", file, c->line, c->name,
				    attr.type, (uint64_t)attr.config, attr.exclude_user,
				    attr.exclude_kernel, c->type, c->config,
				    c->excl_user, c->excl_kernel);
			errors++;
		}
		if (c->canon && strncasecmp(canon, c->canon, strlen(c->canon))) {
			print_error("%s:%d: \"%s\": canonical name \"%s\", expected it to "
				    "start with \"%s\"\n", file, c->line, c->name, canon,
				    c->canon);
			errors++;
		}
	}
	return errors;
}
