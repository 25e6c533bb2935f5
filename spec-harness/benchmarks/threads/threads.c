// SPDX-License-Identifier: MIT
/*
 * threads: k-means clustering of generated integer points by N worker
 * threads (default 8) meeting at barriers.  The points are cut into 64
 * fixed chunks handed out round robin; each chunk's partial sums are
 * reduced in chunk order by the main thread, so the result is the same
 * for any thread count and any scheduling.  Prints the final centroids'
 * checksum, the cluster sizes and the iterations run.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "specbench.h"

#define K	16
#define CHUNKS	64
#define DIM	4

static int npts, nthreads, iters;
static int32_t *pts;
static int64_t cent[K][DIM];
static int64_t part[CHUNKS][K][DIM + 1];	/* sums and counts per chunk */
static pthread_barrier_t bar;
static volatile int done;

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%d", id);
	sb_thread_begin(name);
	for (;;) {
		pthread_barrier_wait(&bar);	/* centroids ready, or done */
		if (done)
			break;
		for (int c = id; c < CHUNKS; c += nthreads) {
			int lo = (int)((int64_t)npts * c / CHUNKS), hi = (int)((int64_t)npts * (c + 1) / CHUNKS);

			memset(part[c], 0, sizeof(part[c]));
			for (int p = lo; p < hi; p++) {
				const int32_t *x = &pts[(size_t)p * DIM];
				int64_t best = INT64_MAX;
				int bk = 0;

				for (int k = 0; k < K; k++) {
					int64_t d = 0;

					for (int j = 0; j < DIM; j++)
						d += (x[j] - cent[k][j]) * (x[j] - cent[k][j]);
					if (d < best) {
						best = d;
						bk = k;
					}
				}
				for (int j = 0; j < DIM; j++)
					part[c][bk][j] += x[j];
				part[c][bk][DIM]++;
			}
		}
		pthread_barrier_wait(&bar);	/* partials ready */
	}
	sb_thread_end();
	return NULL;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 8 };
	uint64_t seed = 0x7ead5, h = 0;
	pthread_t *tid;
	int64_t sizes[K];
	int it, moved = 1;

	if (sb_main_begin(argc, argv, "threads", &a))
		return 2;
	nthreads = a.threads;
	npts = (int)sb_pick(&a, 400000, 2000000, 20000000);
	iters = 30;
	pts = malloc(sizeof(int32_t) * (size_t)npts * DIM);
	for (int p = 0; p < npts; p++) {	/* points around 16 generated centres */
		int c = (int)(sb_rand(&seed) % K);

		for (int j = 0; j < DIM; j++)
			pts[(size_t)p * DIM + j] = (int32_t)((c * 7919 * (j + 1)) % 20000) +
						   (int32_t)(sb_rand(&seed) % 3001) - 1500;
	}
	for (int k = 0; k < K; k++)
		for (int j = 0; j < DIM; j++)
			cent[k][j] = pts[(size_t)k * 97 * DIM + j];
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1);
	tid = malloc(sizeof(*tid) * (size_t)nthreads);
	for (int t = 0; t < nthreads; t++)
		pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t);
	for (it = 0; it < iters && moved; it++) {
		int64_t sum[K][DIM + 1] = { { 0 } };

		pthread_barrier_wait(&bar);
		pthread_barrier_wait(&bar);
		for (int c = 0; c < CHUNKS; c++)
			for (int k = 0; k < K; k++)
				for (int j = 0; j <= DIM; j++)
					sum[k][j] += part[c][k][j];
		moved = 0;
		for (int k = 0; k < K; k++) {
			sizes[k] = sum[k][DIM];
			if (!sum[k][DIM])
				continue;
			for (int j = 0; j < DIM; j++) {
				int64_t nc = sum[k][j] / sum[k][DIM];

				moved |= nc != cent[k][j];
				cent[k][j] = nc;
			}
		}
	}
	done = 1;
	pthread_barrier_wait(&bar);
	for (int t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	h = sb_hash(0, cent, sizeof(cent));
	fprintf(a.out, "points %d clusters %d iterations %d converged %s\n", npts, K, it,
		moved ? "no" : "yes");
	fprintf(a.out, "centroids hash %016llx\n", (unsigned long long)h);
	fprintf(a.out, "sizes");
	for (int k = 0; k < K; k++)
		fprintf(a.out, " %lld", (long long)sizes[k]);
	fprintf(a.out, "\n");
	free(pts);
	free(tid);
	pthread_barrier_destroy(&bar);
	return sb_main_end(&a);
}
