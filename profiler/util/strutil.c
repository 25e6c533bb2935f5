// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

bool str_match_pattern(const char *pattern, const char *name)
{
	if (!pattern || !*pattern)
		return true;
	if (strcasestr(name, pattern))
		return true;
	return fnmatch(pattern, name, FNM_CASEFOLD) == 0;
}

int str_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int *row, d;

	if (la > 256 || lb > 256)
		return 256;
	row = malloc((lb + 1) * sizeof(*row));
	if (!row)
		return 256;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = tolower((unsigned char)a[i - 1]) !=
				   tolower((unsigned char)b[j - 1]);
			int best = diag + cost;

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	d = row[lb];
	free(row);
	return d;
}

int strlist__add(struct strlist *l, const char *s, size_t len)
{
	char *copy;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	copy = strndup(s, len);
	if (!copy)
		return -ENOMEM;
	l->v[l->n++] = copy;
	return 0;
}

void strlist__exit(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int strlist__split(struct strlist *l, const char *s, char sep)
{
	size_t first = l->n;
	const char *p = s;

	for (;;) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int err;

		if (!len)
			goto undo;
		err = strlist__add(l, p, len);
		if (err) {
			while (l->n > first)
				free(l->v[--l->n]);
			return err;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
undo:
	while (l->n > first)
		free(l->v[--l->n]);
	return -EINVAL;
}

void str_join_argv(char *buf, size_t len, char *const *argv)
{
	size_t n = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (; *argv; argv++) {
		size_t w = strlen(*argv) + (n ? 1 : 0);

		if (n + w + 1 > len) {
			if (len > 4)
				strcpy(buf + (n + 4 < len ? n : len - 4), "...");
			return;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "",
				      *argv);
	}
}
