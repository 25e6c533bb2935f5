// SPDX-License-Identifier: MIT
/*
 * The hash tables the reader and the analyses share (report.h): string-keyed indices (rows by
 * their keys, chains by their frames), indices found by a key their caller hashes and compares
 * (the reader's names, threads, address spaces, files), and the growing arrays.
 *
 * A recording chooses the keys (thread ids, names, paths), so the hash is keyed with a random
 * key per table (SipHash-1-3): no recording can be made whose keys all land in one slot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "containers.h"

#define ROTL(x, b)	(uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = ROTL(v[1], 13);
	v[1] ^= v[0];
	v[0] = ROTL(v[0], 32);
	v[2] += v[3];
	v[3] = ROTL(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = ROTL(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = ROTL(v[1], 17);
	v[1] ^= v[2];
	v[2] = ROTL(v[2], 32);
}

/* SipHash-1-3 of data under key (one compression round, three finalization rounds). */
static uint64_t sip13(const uint64_t key[2], const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t v[4] = { key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
			  key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull };
	uint64_t m, last = (uint64_t)len << 56;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		m = 0;
		for (int b = 0; b < 8; b++)
			m |= (uint64_t)p[i + b] << (8 * b);
		v[3] ^= m;
		sip_round(v);
		v[0] ^= m;
	}
	for (size_t b = 0; i + b < len; b++)
		last |= (uint64_t)p[i + b] << (8 * b);
	v[3] ^= last;
	sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* A random key for a table's hash (getrandom(2); the clock and an address if it fails). */
static void seed(uint64_t key[2])
{
	struct timespec ts;

	if (getrandom(key, 2 * sizeof(*key), GRND_NONBLOCK) == (ssize_t)(2 * sizeof(*key)))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)key;
	key[1] = (uint64_t)ts.tv_sec * 0xbf58476d1ce4e5b9ull ^ (uint64_t)(uintptr_t)&ts;
}

/* ---- string-keyed ---- */

static uint64_t str_hash(struct vperf_report_strtab *t, const char *s)
{
	if (!t->seeded) {
		seed(t->hkey);
		t->seeded = true;
	}
	return sip13(t->hkey, s, strlen(s));
}

void vperf_report_strtab__exit(struct vperf_report_strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->key[i]);
	free(t->key);
	free(t->val);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

int vperf_report_strtab__get(struct vperf_report_strtab *t, const char *key, size_t val,
			     size_t *out, bool *added)
{
	uint64_t h = str_hash(t, key);
	size_t i;

	if (2 * (t->nr + 1) > t->cap) {
		struct vperf_report_strtab n = { .cap = t->cap ? 2 * t->cap : 64, .seeded = true,
						 .hkey = { t->hkey[0], t->hkey[1] } };

		n.key = calloc(n.cap, sizeof(*n.key));
		n.val = calloc(n.cap, sizeof(*n.val));
		n.hash = calloc(n.cap, sizeof(*n.hash));
		if (!n.key || !n.val || !n.hash) {
			free(n.key);
			free(n.val);
			free(n.hash);
			return -ENOMEM;
		}
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->key[j])
				continue;
			for (i = t->hash[j] & (n.cap - 1); n.key[i]; i = (i + 1) & (n.cap - 1))
				;
			n.key[i] = t->key[j];
			n.val[i] = t->val[j];
			n.hash[i] = t->hash[j];
		}
		n.nr = t->nr;
		free(t->key);
		free(t->val);
		free(t->hash);
		*t = n;
	}
	for (i = h & (t->cap - 1); t->key[i]; i = (i + 1) & (t->cap - 1)) {
		if (t->hash[i] == h && !strcmp(t->key[i], key)) {
			*out = t->val[i];
			*added = false;
			return 0;
		}
	}
	t->key[i] = strdup(key);
	if (!t->key[i])
		return -ENOMEM;
	t->val[i] = val;
	t->hash[i] = h;
	t->nr++;
	*out = val;
	*added = true;
	return 0;
}

const char *vperf_report_strtab__intern(struct vperf_report_strtab *t, const char *key)
{
	uint64_t h;
	size_t idx;
	bool added;

	if (vperf_report_strtab__get(t, key, t->nr, &idx, &added))
		return NULL;
	h = str_hash(t, key);
	for (size_t i = h & (t->cap - 1); t->key[i]; i = (i + 1) & (t->cap - 1))
		if (t->hash[i] == h && !strcmp(t->key[i], key))
			return t->key[i];
	return NULL;	/* not reached: get() just kept it */
}

int vperf_report_parse_keys(const char *list, const char *const *names, size_t nr_names,
			    int alias, const char *whose, int *keys, size_t max, size_t *nr,
			    char *why, size_t why_len)
{
	const char *p = list;

	*nr = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int k = -1;

		for (size_t i = 0; i < nr_names; i++)
			if (strlen(names[i]) == len && !strncmp(p, names[i], len))
				k = (int)i;
		if (alias >= 0 && len == 6 && !strncmp(p, "thread", 6))
			k = alias;
		if (k < 0 || *nr == max) {
			size_t off;

			if (k >= 0) {
				snprintf(why, why_len, "too many sort keys ('%.*s')", (int)len, p);
				return -EINVAL;
			}
			off = (size_t)snprintf(why, why_len, "unknown sort key '%.*s'%s (the keys:",
					       (int)len, p, whose);
			for (size_t i = 0; i < nr_names && off < why_len; i++)
				off += (size_t)snprintf(why + off, why_len - off, "%s %s%s",
							i ? "," : "", names[i],
							(int)i == alias ? " or thread" : "");
			if (off < why_len)
				snprintf(why + off, why_len - off, ")");
			return -EINVAL;
		}
		keys[(*nr)++] = k;
		p += len;
		if (*p == ',')
			p++;
	}
	if (!*nr) {
		snprintf(why, why_len, "no sort key given");
		return -EINVAL;
	}
	return 0;
}

/* ---- indices by the caller's keys ---- */

uint64_t vperf_report_idx__hash(struct vperf_report_idx *t, const void *key, size_t len)
{
	if (!t->seeded) {
		seed(t->hkey);
		t->seeded = true;
	}
	return sip13(t->hkey, key, len);
}

int64_t vperf_report_idx__find(const struct vperf_report_idx *t, uint64_t hash,
			       bool (*same)(const void *ctx, size_t idx), const void *ctx)
{
	if (!t->cap)
		return -1;
	for (size_t i = hash & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		if (t->hash[i] == hash && same(ctx, t->slot[i] - 1))
			return (int64_t)t->slot[i] - 1;
	return -1;
}

int vperf_report_idx__add(struct vperf_report_idx *t, uint64_t hash, size_t idx)
{
	size_t i;

	if (idx >= UINT32_MAX)
		return -ENOMEM;		/* an index past what a slot holds: as good as no memory */
	if (2 * (t->nr + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		uint32_t *slot = calloc(cap, sizeof(*slot));
		uint64_t *h = calloc(cap, sizeof(*h));

		if (!slot || !h) {
			free(slot);
			free(h);
			return -ENOMEM;
		}
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->slot[j])
				continue;
			for (i = t->hash[j] & (cap - 1); slot[i]; i = (i + 1) & (cap - 1))
				;
			slot[i] = t->slot[j];
			h[i] = t->hash[j];
		}
		free(t->slot);
		free(t->hash);
		t->slot = slot;
		t->hash = h;
		t->cap = cap;
	}
	for (i = hash & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
		;
	t->slot[i] = (uint32_t)idx + 1;
	t->hash[i] = hash;
	t->nr++;
	return 0;
}

void vperf_report_idx__exit(struct vperf_report_idx *t)
{
	free(t->slot);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* ---- growing arrays ---- */

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
