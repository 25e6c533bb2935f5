/* SPDX-License-Identifier: MIT */
/* Small string helpers shared by the builtins. */
#ifndef VPERF_CLI_STRUTIL_H
#define VPERF_CLI_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Does name match pattern, ignoring case: as a substring, or as a shell
 * glob (fnmatch(3)) matching the whole name?
 */
bool str_match_pattern(const char *pattern, const char *name);

/* Case-insensitive Levenshtein distance between a and b. */
int str_edit_distance(const char *a, const char *b);

/*
 * A growable list of strings the list owns.
 */
struct strlist {
	char **v;
	size_t n, cap;
};

/* Append a copy of s (or of its first len bytes).  0 or -ENOMEM. */
int strlist__add(struct strlist *l, const char *s, size_t len);
void strlist__exit(struct strlist *l);

/*
 * Split s at sep into l, appending.  Empty fields are an error: returns
 * -EINVAL (nothing appended) for "a,,b", ",a", "a," or "".
 */
int strlist__split(struct strlist *l, const char *s, char sep);

/* Join argv with single spaces into buf (truncated with "..."). */
void str_join_argv(char *buf, size_t len, char *const *argv);

#endif /* VPERF_CLI_STRUTIL_H */
