// SPDX-License-Identifier: MIT
/*
 * A process's address space for the reader (report.h): which mapping holds an address now.  A
 * treap of the pieces of mappings still seen, by start, none overlapping: a new mapping cuts
 * what older ones had where it lies (as mmap replaces them), so that a lookup is one descent
 * however many mappings a recording makes.  Priorities come from the space's own generator,
 * seeded at random by its owner: no recording can choose an order that makes the tree a list.
 */
#include <errno.h>
#include <stdlib.h>

#include "space.h"
#include "containers.h"

struct vperf_report_amap_node {
	uint64_t start, end;		/* [start, end) */
	int32_t map;
	uint32_t prio;
	struct vperf_report_amap_node *l, *r;
};

typedef struct vperf_report_amap_node node;

static uint32_t next_prio(struct vperf_report_amap *a)
{
	uint64_t z = (a->rng += 0x9e3779b97f4a7c15ull);		/* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static void set(struct vperf_report_amap *a, node *n, uint64_t start, uint64_t end, int32_t map)
{
	*n = (node){ .start = start, .end = end, .map = map, .prio = next_prio(a) };
}

/* t as the pieces starting before key (*lo) and the others (*hi). */
static void split(node *t, uint64_t key, node **lo, node **hi)
{
	if (!t) {
		*lo = *hi = NULL;
	} else if (t->start < key) {
		split(t->r, key, &t->r, hi);
		*lo = t;
	} else {
		split(t->l, key, lo, &t->l);
		*hi = t;
	}
}

/* lo and hi (every piece of lo before every piece of hi) as one treap. */
static node *merge(node *lo, node *hi)
{
	if (!lo || !hi)
		return lo ? lo : hi;
	if (lo->prio > hi->prio) {
		lo->r = merge(lo->r, hi);
		return lo;
	}
	hi->l = merge(lo, hi->l);
	return hi;
}

static node *last_of(node *t)
{
	while (t && t->r)
		t = t->r;
	return t;
}

static void free_all(node *t)
{
	while (t) {		/* down the right spine, the left subtrees recursively */
		node *r = t->r;

		free_all(t->l);
		free(t);
		t = r;
	}
}

int vperf_report_amap__add(struct vperf_report_amap *a, uint64_t start, uint64_t len,
			   int32_t map)
{
	uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	node *n, *spare, *lo, *mid, *hi, *last, *rest = NULL;

	if (end <= start)
		return 0;	/* covers nothing */
	n = malloc(sizeof(*n));
	spare = malloc(sizeof(*spare));	/* what is left of an older mapping past end */
	if (!n || !spare) {
		free(n);
		free(spare);
		return -ENOMEM;
	}
	set(a, n, start, end, map);
	split(a->root, start, &lo, &hi);
	/* the piece before start may run into the new one, or past it */
	last = last_of(lo);
	if (last && last->end > start) {
		if (last->end > end) {
			set(a, spare, end, last->end, last->map);
			rest = spare;
			spare = NULL;
		}
		last->end = start;
	}
	/* the pieces starting within it go; the last of them may run past its end */
	split(hi, end, &mid, &hi);
	last = last_of(mid);
	if (last && last->end > end) {
		set(a, spare, end, last->end, last->map);
		rest = spare;
		spare = NULL;
	}
	free_all(mid);
	free(spare);
	a->root = merge(merge(lo, n), merge(rest, hi));
	return 0;
}

int32_t vperf_report_amap__find(const struct vperf_report_amap *a, uint64_t addr)
{
	const node *t = a->root, *best = NULL;

	while (t) {		/* the last piece starting at or before addr */
		if (t->start <= addr) {
			best = t;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best && addr < best->end ? best->map : -1;
}

static node *clone(const node *t, int *err)
{
	node *c;

	if (!t || *err)
		return NULL;
	c = malloc(sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	*c = *t;
	c->l = clone(t->l, err);
	c->r = clone(t->r, err);
	return c;
}

int vperf_report_amap__copy(struct vperf_report_amap *to, const struct vperf_report_amap *from)
{
	int err = 0;

	free_all(to->root);
	to->root = clone(from->root, &err);
	if (err) {
		free_all(to->root);
		to->root = NULL;
	}
	return err;
}

void vperf_report_amap__exit(struct vperf_report_amap *a)
{
	free_all(a->root);
	a->root = NULL;
}
