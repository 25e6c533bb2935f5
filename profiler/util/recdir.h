/* SPDX-License-Identifier: MIT */
/*
 * A recording's output directory, perf's habits (`vperf record`, `vperf vm record`): -o DIR
 * checked before anything runs; an existing DIR recording renamed to DIR.old (an older DIR.old
 * recording of the caller's removed); then DIR made, 0700.  What is not a vperf recording (nor
 * a link to one) is never renamed or removed: the command refuses and says so.
 */
#ifndef VPERF_CLI_RECDIR_H
#define VPERF_CLI_RECDIR_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

#define RECDIR_DEFAULT		"vperf.data"
/* `vperf vm record`: its raw recording, and what names the guest's frames (vm-run.sh --guest-files) */
#define RECDIR_RAW		".raw"
#define RECDIR_GUEST_FILES	"guest"
#define RECDIR_RAW_FILE		"vmm.vraw"	/* vperf-vmm's raw recording, in RECDIR_RAW */

/* Is path a directory with nothing in it? */
bool recdir_is_empty(const char *path);

/*
 * Is path a directory (not a link) that is a vperf recording: CTF metadata vperf wrote
 * (the CTF 1.8 comment first, vperf_version in it), or a .raw folder holding only vperf-vmm's raw
 * recording (vmm.vraw: its magic, or a prefix of it) and the guest's files folder, or empty?
 */
bool recdir_is_recording(const char *path);

/*
 * Check -o DIR before anything happens: a name of its own in a writable directory, short
 * enough for extra (bytes the command appends below it).  0 or a usage error's status.
 */
int recdir_check(const struct cli_usage *u, const char *dir, size_t extra);

/*
 * DIR -> DIR.old (an older DIR.old removed: a recording, everything in it the caller's, on one
 * file system), then DIR made, the caller's, mode 0700 whatever the umask.  A DIR or DIR.old
 * that is not a recording, or a link, is refused, as is a DIR.old with another user's file.
 * 0 or 1 after a message.
 */
int recdir_prepare(const char *cmd, const char *dir);

/* Bytes in dir's visible regular files (the CTF trace). */
uint64_t recdir_bytes(const char *dir);

#endif /* VPERF_CLI_RECDIR_H */
