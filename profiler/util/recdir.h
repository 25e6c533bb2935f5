/* SPDX-License-Identifier: MIT */
/*
 * A recording's output directory, perf's habits (`vperf record`, `vperf vm record`): -o DIR
 * checked before anything runs; an existing DIR renamed to DIR.old (an older DIR.old recording
 * removed); then DIR made.
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

/* Is path a directory with nothing in it? */
bool recdir_is_empty(const char *path);

/* Is path (a directory) a vperf recording: a CTF metadata file or a raw recording in it, or empty? */
bool recdir_is_recording(const char *path);

/*
 * Check -o DIR before anything happens: a name of its own in a writable directory, short
 * enough for extra (bytes the command appends below it).  0 or a usage error's status.
 */
int recdir_check(const struct cli_usage *u, const char *dir, size_t extra);

/* DIR -> DIR.old (replacing an older DIR.old recording), then mkdir DIR.  0 or 1 after a message. */
int recdir_prepare(const char *cmd, const char *dir);

/* Bytes in dir's visible regular files (the CTF trace). */
uint64_t recdir_bytes(const char *dir);

#endif /* VPERF_CLI_RECDIR_H */
