// SPDX-License-Identifier: MIT
/*
 * db: an in-memory table of generated records with two indexes: a B-tree
 * on the 64-bit key (nodes split on insert, order 32) and an open-addressing
 * hash on the record's name.  The workload: bulk inserts, point lookups by
 * key and by name, range scans with aggregates, updates and deletes
 * (tombstones seen by every query).  Prints each query's answer.
 */
#include <stdlib.h>
#include <string.h>

#include "specbench.h"

#define T	16			/* minimum degree: nodes hold T-1..2T-1 keys */

struct rec { uint64_t key; int64_t amount; char name[12]; int alive; };

struct bnode {
	int n, leaf;
	uint64_t key[2 * T - 1];
	int32_t val[2 * T - 1];
	struct bnode *child[2 * T];
};

static struct rec *recs;
static int nrec;
static int32_t *htab;
static size_t hmask;
static long nsplit;

static struct bnode *bnew(int leaf)
{
	struct bnode *b = calloc(1, sizeof(*b));

	b->leaf = leaf;
	return b;
}

static void split(struct bnode *x, int i)
{
	struct bnode *y = x->child[i], *z = bnew(y->leaf);

	z->n = T - 1;
	memcpy(z->key, y->key + T, sizeof(uint64_t) * (T - 1));
	memcpy(z->val, y->val + T, sizeof(int32_t) * (T - 1));
	if (!y->leaf)
		memcpy(z->child, y->child + T, sizeof(struct bnode *) * T);
	y->n = T - 1;
	memmove(x->child + i + 2, x->child + i + 1, sizeof(struct bnode *) * (size_t)(x->n - i));
	x->child[i + 1] = z;
	memmove(x->key + i + 1, x->key + i, sizeof(uint64_t) * (size_t)(x->n - i));
	memmove(x->val + i + 1, x->val + i, sizeof(int32_t) * (size_t)(x->n - i));
	x->key[i] = y->key[T - 1];
	x->val[i] = y->val[T - 1];
	x->n++;
	nsplit++;
}

static struct bnode *binsert(struct bnode *root, uint64_t k, int32_t v)
{
	struct bnode *x;

	if (root->n == 2 * T - 1) {
		struct bnode *s = bnew(0);

		s->child[0] = root;
		split(s, 0);
		root = s;
	}
	x = root;
	for (;;) {
		int i = x->n - 1;

		if (x->leaf) {
			while (i >= 0 && k < x->key[i]) {
				x->key[i + 1] = x->key[i];
				x->val[i + 1] = x->val[i];
				i--;
			}
			x->key[i + 1] = k;
			x->val[i + 1] = v;
			x->n++;
			return root;
		}
		while (i >= 0 && k < x->key[i])
			i--;
		i++;
		if (x->child[i]->n == 2 * T - 1) {
			split(x, i);
			if (k > x->key[i])
				i++;
		}
		x = x->child[i];
	}
}

static int32_t bfind(const struct bnode *x, uint64_t k)
{
	while (x) {
		int lo = 0, hi = x->n;

		while (lo < hi) {
			int mid = (lo + hi) / 2;

			if (x->key[mid] < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < x->n && x->key[lo] == k)
			return x->val[lo];
		x = x->leaf ? NULL : x->child[lo];
	}
	return -1;
}

/* sum and count of live amounts with lo <= key < hi, in key order */
static void brange(const struct bnode *x, uint64_t lo, uint64_t hi, int64_t *sum, long *cnt,
		   uint64_t *order)
{
	for (int i = 0; i <= x->n; i++) {
		if (!x->leaf && (i == 0 || x->key[i - 1] < hi) && (i == x->n || x->key[i] >= lo))
			brange(x->child[i], lo, hi, sum, cnt, order);
		if (i < x->n && x->key[i] >= lo && x->key[i] < hi && recs[x->val[i]].alive) {
			*sum += recs[x->val[i]].amount;
			(*cnt)++;
			*order = (*order * 31 + x->key[i]) & 0xffffffffffffull;
		}
	}
}

static int bheight(const struct bnode *x)
{
	int h = 1;

	while (!x->leaf) {
		x = x->child[0];
		h++;
	}
	return h;
}

static void bfree(struct bnode *x)
{
	if (!x->leaf)
		for (int i = 0; i <= x->n; i++)
			bfree(x->child[i]);
	free(x);
}

static size_t hname(const char *s)
{
	return (size_t)sb_hash(0, s, strlen(s));
}

static void hput(int32_t r)
{
	size_t i = hname(recs[r].name) & hmask;

	while (htab[i] >= 0)
		i = (i + 1) & hmask;
	htab[i] = r;
}

static int32_t hget(const char *name)
{
	for (size_t i = hname(name) & hmask; htab[i] >= 0; i = (i + 1) & hmask)
		if (!strcmp(recs[htab[i]].name, name) && recs[htab[i]].alive)
			return htab[i];
	return -1;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	uint64_t seed = 0xdb, order = 0;
	struct bnode *root = bnew(1);
	long found = 0, byname = 0, cnt = 0, upd = 0, del = 0;
	int64_t sum = 0, total = 0;
	int nq;

	if (sb_main_begin(argc, argv, "db", &a))
		return 2;
	nrec = (int)sb_pick(&a, 600000, 3000000, 12000000);
	nq = (int)sb_pick(&a, 600000, 3000000, 12000000);
	recs = calloc((size_t)nrec, sizeof(*recs));
	for (hmask = 1; hmask < (size_t)nrec * 2; hmask <<= 1)
		;
	htab = malloc(sizeof(*htab) * hmask);
	memset(htab, 0xff, sizeof(*htab) * hmask);
	hmask--;
	for (int i = 0; i < nrec; i++) {
		struct rec *r = &recs[i];

		r->key = sb_rand(&seed) >> 20;	/* 44-bit keys: duplicates are rare; lookups see the first */
		r->amount = (int64_t)(sb_rand(&seed) % 100000) - 20000;
		snprintf(r->name, sizeof(r->name), "n%09d", (int)(sb_rand(&seed) % 1000000000));
		r->alive = 1;
		root = binsert(root, r->key, i);
		hput(i);
	}
	for (int q = 0; q < nq; q++) {
		uint64_t r = sb_rand(&seed);
		int32_t i = (int32_t)(r % (uint64_t)nrec), f;

		switch ((r >> 40) % 8) {
		case 0: case 1: case 2:		/* point lookup by key */
			f = bfind(root, recs[i].key);
			if (f >= 0 && recs[f].alive)
				found++;
			break;
		case 3: case 4:			/* lookup by name */
			if (hget(recs[i].name) >= 0)
				byname++;
			break;
		case 5:				/* update */
			recs[i].amount += (int64_t)((r >> 8) % 1000);
			upd++;
			break;
		case 6:				/* delete */
			if (recs[i].alive) {
				recs[i].alive = 0;
				del++;
			}
			break;
		default:			/* range scan over ~1/4096 of the key space */
			if (q % 16 == 0) {
				uint64_t lo = (r & 0xfffffffffffull);

				brange(root, lo, lo + (1ull << 32), &sum, &cnt, &order);
			}
			break;
		}
	}
	for (int i = 0; i < nrec; i++)
		if (recs[i].alive)
			total += recs[i].amount;
	fprintf(a.out, "records %d btree height %d splits %ld\n", nrec, bheight(root), nsplit);
	fprintf(a.out, "queries %d: found by key %ld, by name %ld, updates %ld, deletes %ld\n", nq,
		found, byname, upd, del);
	fprintf(a.out, "range scans: rows %ld sum %lld order %llu\n", cnt, (long long)sum,
		(unsigned long long)order);
	fprintf(a.out, "live total %lld\n", (long long)total);
	bfree(root);
	free(recs);
	free(htab);
	return sb_main_end(&a);
}
