/* SPDX-License-Identifier: MIT */
/*
 * What a recording holds, from its metadata alone (`vperf report --header`): the environment a
 * conversion wrote (docs/recording.md, section 9) and the stream files.
 */
#ifndef VPERF_RECORD_HEADER_H
#define VPERF_RECORD_HEADER_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Print dir's header to out, one "# key: value" line each (perf report --header's habit).
 * 0, or -errno with why: -ENOENT no dir/metadata, -EINVAL a metadata file that is not a vperf
 * recording's (no env block), -EIO writing out.
 */
int vperf_recording_header(const char *dir, FILE *out, char *why, size_t why_len)
	__attribute__((warn_unused_result));

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_HEADER_H */
