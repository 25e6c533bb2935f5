/* SPDX-License-Identifier: MIT */
/*
 * An output file written whole or not at all (`vperf export -o`, `vperf timeline -o`): written
 * to FILE.tmp-PID beside it (a new file, mode 0600 whatever the umask, never through a link: an
 * existing FILE.tmp-PID is an error) and renamed over FILE once complete and flushed; a
 * failure unlinks it.  "-" is stdout.
 */
#ifndef VPERF_CLI_OUTFILE_H
#define VPERF_CLI_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

struct outfile {
	const char *cmd, *path;
	FILE *f;
	bool to_stdout;
	char tmp[PATH_MAX];
};

/* Open path for cmd: 0, or 1 after a one-line message ("cannot write FILE: why"). */
int outfile_open(struct outfile *o, const char *cmd, const char *path);

/*
 * Finish: with status 0, check that everything reached the file and put it in place; else (or
 * if that fails) remove it.  Returns status, or 1 after a message.
 */
int outfile_close(struct outfile *o, int status);

#endif /* VPERF_CLI_OUTFILE_H */
