/* SPDX-License-Identifier: MIT */
/*
 * The report's containers: growing arrays, a string-keyed table, a hash table of indices.
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_CONTAINERS_H
#define VPERF_REPORT_CONTAINERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- growing arrays -------------------------------------------------------- */

/*
 * Make *arr (an array of *cap elements of size bytes, realloc'd; NULL with *cap 0 to begin)
 * hold at least n + 1, doubling from 64.  0 or -ENOMEM (then *arr is as it was).
 */
int vperf_report_grow(void *arr, size_t *cap, size_t n, size_t size)
	__attribute__((warn_unused_result));

/* ---- a string-keyed table of indices ------------------------------------- */

struct vperf_report_strtab {
	char **key;
	size_t *val;
	uint64_t *hash;			/* each key's, under hkey */
	size_t cap, nr;
	uint64_t hkey[2];		/* the hash's key: random (a recording chooses the keys) */
	bool seeded;
};

/*
 * The index kept for key, or val, kept for it from now on, if key was not there (*added says
 * which).  0 or -ENOMEM.  Zeroed: empty.
 */
int vperf_report_strtab__get(struct vperf_report_strtab *t, const char *key, size_t val,
			     size_t *out, bool *added) __attribute__((warn_unused_result));
void vperf_report_strtab__exit(struct vperf_report_strtab *t);
/* The table's own copy of key, kept (its value its order) if it was not there; NULL: -ENOMEM. */
const char *vperf_report_strtab__intern(struct vperf_report_strtab *t, const char *key);

/*
 * Parse a --sort list ("comm,dso,symbol") over names[0..nr_names) into keys[0..*nr) (at most
 * max), "thread" standing for key alias (-1: none).  0, or -EINVAL with why naming the key
 * not known (whose: whose keys, after its name, e.g. " for --exits"; and the keys there are)
 * or saying there are too many or none.
 */
int vperf_report_parse_keys(const char *list, const char *const *names, size_t nr_names,
			    int alias, const char *whose, int *keys, size_t max, size_t *nr,
			    char *why, size_t why_len) __attribute__((warn_unused_result));

/* ---- a hash table of indices, by keys their owner hashes and compares --- */

/*
 * Indices into an array the caller keeps (its names, threads, address spaces), found by a key
 * the caller hashes with vperf_report_idx__hash() and compares with same().  At most
 * UINT32_MAX - 1 indices.  Zeroed: empty.
 */
struct vperf_report_idx {
	uint32_t *slot;			/* an index + 1; 0: empty */
	uint64_t *hash;			/* its key's hash */
	size_t cap, nr;
	uint64_t hkey[2];		/* the hash's key: random (a recording chooses the keys) */
	bool seeded;
};

/* The hash of the len bytes at key, for t. */
uint64_t vperf_report_idx__hash(struct vperf_report_idx *t, const void *key, size_t len);
/* The index whose key hashes to hash and same(ctx, index) says is the key; -1 if none. */
int64_t vperf_report_idx__find(const struct vperf_report_idx *t, uint64_t hash,
			       bool (*same)(const void *ctx, size_t idx), const void *ctx);
/* Add idx, whose key hashes to hash and is not there yet: 0 or -ENOMEM. */
int vperf_report_idx__add(struct vperf_report_idx *t, uint64_t hash, size_t idx)
	__attribute__((warn_unused_result));
void vperf_report_idx__exit(struct vperf_report_idx *t);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_CONTAINERS_H */
