/* SPDX-License-Identifier: MIT */
/* Just enough JSON output for one-object-per-line formats. */
#ifndef VPERF_CLI_JSON_H
#define VPERF_CLI_JSON_H

#include <stdio.h>

/*
 * Write s as a JSON string, quotes included: '"', '\\' and control
 * characters escaped, valid UTF-8 copied, each byte of invalid UTF-8
 * replaced by U+FFFD, so that the output always parses.
 */
void json_print_string(FILE *out, const char *s);

#endif /* VPERF_CLI_JSON_H */
