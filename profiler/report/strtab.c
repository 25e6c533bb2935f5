// SPDX-License-Identifier: MIT
/*
 * A string-keyed hash table of indices (report.h): rows by their keys, chains by their frames;
 * and the growing arrays the reader and the analyses share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

void vperf_report_strtab__exit(struct vperf_report_strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->key[i]);
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof(*t));
}

int vperf_report_strtab__get(struct vperf_report_strtab *t, const char *key, size_t val,
			     size_t *out, bool *added)
{
	size_t i;

	if (2 * (t->nr + 1) > t->cap) {
		struct vperf_report_strtab n = { .cap = t->cap ? 2 * t->cap : 64 };

		n.key = calloc(n.cap, sizeof(*n.key));
		n.val = calloc(n.cap, sizeof(*n.val));
		if (!n.key || !n.val) {
			free(n.key);
			free(n.val);
			return -ENOMEM;
		}
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->key[j])
				continue;
			for (i = hash(t->key[j]) & (n.cap - 1); n.key[i]; i = (i + 1) & (n.cap - 1))
				;
			n.key[i] = t->key[j];
			n.val[i] = t->val[j];
		}
		n.nr = t->nr;
		free(t->key);
		free(t->val);
		*t = n;
	}
	for (i = hash(key) & (t->cap - 1); t->key[i]; i = (i + 1) & (t->cap - 1)) {
		if (!strcmp(t->key[i], key)) {
			*out = t->val[i];
			*added = false;
			return 0;
		}
	}
	t->key[i] = strdup(key);
	if (!t->key[i])
		return -ENOMEM;
	t->val[i] = val;
	t->nr++;
	*out = val;
	*added = true;
	return 0;
}

int vperf_report_grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **p = arr;
	size_t c;
	void *q;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	q = realloc(*p, c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}
