/* SPDX-License-Identifier: MIT */
/*
 * The raw recording into the CTF recording, shared by the commands that record a VM: `vperf vm
 * record` (vperf-vmm's raw recording) and `vperf kvm record` (a running VMM's, record/kvmrec.h).
 */
#ifndef VPERF_CLI_RAW_CONVERT_H
#define VPERF_CLI_RAW_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#define RAW_NAME	"vmm.vraw"	/* DIR/raw/vmm.vraw */

struct cli_usage;

/* -o DIR (output, NULL: the default) into dir[len] ("rec/" is "rec"), checked by recdir_check()
 * for the raw file below it: 0 or a usage error's status. */
int rawconv_check(const struct cli_usage *u, const char *output, char *dir, size_t len);

/* recdir_prepare(), then DIR's raw subdirectory; raw gets the raw file's path.  0 or 1 after a
 * message naming cmd. */
int rawconv_prepare(const char *cmd, const char *dir, char *raw, size_t raw_len);

/* Convert dir's raw recording into dir and print the summary.  0, or 1 after a message.  Without
 * the CTF writer (no VPERF_HAVE_RECORD) it is not built. */
int rawconv_convert(const char *cmd, const char *dir, const char *raw, uint64_t raw_size);

#endif /* VPERF_CLI_RAW_CONVERT_H */
