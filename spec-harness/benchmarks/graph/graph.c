// SPDX-License-Identifier: MIT
/*
 * graph: a generated sparse graph (a ring for connectivity plus random and
 * preferential edges, weights 1..100) in CSR form; BFS levels from vertex 0,
 * Dijkstra with a binary heap, connected components of a sparser subgraph
 * with union-find, and 10 PageRank iterations.
 */
#include <stdlib.h>
#include <string.h>

#include "specbench.h"

static int n, m;
static int *off, *adj, *wt;

static void build(uint64_t seed)
{
	int *src = malloc(sizeof(int) * (size_t)m), *dst = malloc(sizeof(int) * (size_t)m);
	int *w = malloc(sizeof(int) * (size_t)m), *deg = calloc((size_t)n + 1, sizeof(int));

	for (int e = 0; e < m; e++) {
		uint64_t r = sb_rand(&seed);
		int s = e < n ? e : (int)(r % (uint64_t)n);
		int d = e < n ? (e + 1) % n : (r >> 32) % 4 ? (int)((r >> 24) % (uint64_t)n) :
			(int)(((r >> 24) % 64) * ((r >> 30) % 64) % (uint64_t)n);

		src[e] = s;
		dst[e] = d;
		w[e] = 1 + (int)((r >> 50) % 100);
		deg[s + 1]++;
	}
	off = deg;
	for (int i = 0; i < n; i++)
		off[i + 1] += off[i];
	adj = malloc(sizeof(int) * (size_t)m);
	wt = malloc(sizeof(int) * (size_t)m);
	int *pos = malloc(sizeof(int) * (size_t)n);

	memcpy(pos, off, sizeof(int) * (size_t)n);
	for (int e = 0; e < m; e++) {
		adj[pos[src[e]]] = dst[e];
		wt[pos[src[e]]++] = w[e];
	}
	free(pos);
	free(src);
	free(dst);
	free(w);
}

static int find(int *p, int x)
{
	while (p[x] != x)
		x = p[x] = p[p[x]];
	return x;
}

struct heap { int n; int64_t *d; int *v; };

static void hpush(struct heap *h, int64_t d, int v)
{
	int i = h->n++;

	while (i && h->d[(i - 1) / 2] > d) {
		h->d[i] = h->d[(i - 1) / 2];
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->d[i] = d;
	h->v[i] = v;
}

static void hpop(struct heap *h, int64_t *d, int *v)
{
	int64_t ld = h->d[--h->n];
	int lv = h->v[h->n], i = 0;

	*d = h->d[0];
	*v = h->v[0];
	for (;;) {
		int c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->d[c + 1] < h->d[c])
			c++;
		if (h->d[c] >= ld)
			break;
		h->d[i] = h->d[c];
		h->v[i] = h->v[c];
		i = c;
	}
	h->d[i] = ld;
	h->v[i] = lv;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	int *lvl, *q, *par, qh = 0, qt = 0, maxl = 0, comps = 0;
	int64_t *dist, dsum = 0, dmax = 0;
	struct heap h;
	double *pr, *nx;
	long reached = 0;

	if (sb_main_begin(argc, argv, "graph", &a))
		return 2;
	n = (int)sb_pick(&a, 480000, 2400000, 4000000);
	m = n * 8;
	build(0x9a9a + (uint64_t)a.size);

	lvl = malloc(sizeof(int) * (size_t)n);
	q = malloc(sizeof(int) * (size_t)n);
	memset(lvl, 0xff, sizeof(int) * (size_t)n);
	lvl[0] = 0;
	q[qt++] = 0;
	while (qh < qt) {
		int u = q[qh++];

		for (int e = off[u]; e < off[u + 1]; e++)
			if (lvl[adj[e]] < 0) {
				lvl[adj[e]] = lvl[u] + 1;
				maxl = lvl[u] + 1 > maxl ? lvl[u] + 1 : maxl;
				q[qt++] = adj[e];
			}
	}
	fprintf(a.out, "vertices %d edges %d bfs reached %d depth %d\n", n, m, qt, maxl);

	dist = malloc(sizeof(int64_t) * (size_t)n);
	for (int i = 0; i < n; i++)
		dist[i] = INT64_MAX;
	h.n = 0;
	h.d = malloc(sizeof(int64_t) * (size_t)m + 8);
	h.v = malloc(sizeof(int) * (size_t)m + 8);
	dist[0] = 0;
	hpush(&h, 0, 0);
	while (h.n) {
		int64_t d;
		int u;

		hpop(&h, &d, &u);
		if (d > dist[u])
			continue;
		for (int e = off[u]; e < off[u + 1]; e++)
			if (d + wt[e] < dist[adj[e]]) {
				dist[adj[e]] = d + wt[e];
				hpush(&h, dist[adj[e]], adj[e]);
			}
	}
	for (int i = 0; i < n; i++)
		if (dist[i] != INT64_MAX) {
			reached++;
			dsum += dist[i];
			dmax = dist[i] > dmax ? dist[i] : dmax;
		}
	fprintf(a.out, "dijkstra reached %ld distance sum %lld max %lld\n", reached, (long long)dsum,
		(long long)dmax);

	par = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		par[i] = i;
	for (int u = 0; u < n; u++)	/* the subgraph of edges with weight <= 3 */
		for (int e = off[u]; e < off[u + 1]; e++)
			if (wt[e] <= 3) {
				int x = find(par, u), y = find(par, adj[e]);

				if (x != y)
					par[x < y ? y : x] = x < y ? x : y;
			}
	for (int i = 0; i < n; i++)
		comps += find(par, i) == i;
	fprintf(a.out, "components of the light subgraph %d\n", comps);

	pr = malloc(sizeof(double) * (size_t)n);
	nx = malloc(sizeof(double) * (size_t)n);
	for (int i = 0; i < n; i++)
		pr[i] = 1.0 / n;
	for (int it = 0; it < 10; it++) {
		double s = 0, top = 0;

		for (int i = 0; i < n; i++)
			nx[i] = 0.15 / n;
		for (int u = 0; u < n; u++) {
			double share = 0.85 * pr[u] / (off[u + 1] - off[u]);

			for (int e = off[u]; e < off[u + 1]; e++)
				nx[adj[e]] += share;
		}
		for (int i = 0; i < n; i++) {
			pr[i] = nx[i];
			s += nx[i];
			top = nx[i] > top ? nx[i] : top;
		}
		if (it == 9)
			fprintf(a.out, "pagerank sum %.10e max %.10e\n", s, top);
	}
	free(lvl); free(q); free(dist); free(h.d); free(h.v); free(par); free(pr); free(nx);
	free(off); free(adj); free(wt);
	return sb_main_end(&a);
}
