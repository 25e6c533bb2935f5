// SPDX-License-Identifier: MIT
/*
 * stencil: 2-D heat diffusion by Jacobi sweeps (5-point stencil) on an
 * N x N grid with fixed hot and cold edges and a few generated sources;
 * prints the grid's sum, its maximum and the last sweep's change.
 */
#include <math.h>
#include <stdlib.h>

#include "specbench.h"

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	double *u, *v, sum = 0, max = 0, delta = 0;
	uint64_t seed = 0x57e;
	int n, sweeps;

	if (sb_main_begin(argc, argv, "stencil", &a))
		return 2;
	n = (int)sb_pick(&a, 256, 512, 1536);
	sweeps = (int)sb_pick(&a, 750, 940, 1040);
	u = calloc((size_t)n * n, sizeof(double));
	v = calloc((size_t)n * n, sizeof(double));
	for (int i = 0; i < n; i++) {
		u[i] = v[i] = 100.0;				/* hot top edge */
		u[(size_t)(n - 1) * n + i] = v[(size_t)(n - 1) * n + i] = -20.0;
	}
	for (int s = 0; s < 16; s++) {
		size_t at = (size_t)(1 + sb_rand(&seed) % (uint64_t)(n - 2)) * n +
			    1 + sb_rand(&seed) % (uint64_t)(n - 2);

		u[at] = v[at] = 500.0;
	}
	for (int it = 0; it < sweeps; it++) {
		delta = 0;
		for (int i = 1; i < n - 1; i++)
			for (int j = 1; j < n - 1; j++) {
				size_t k = (size_t)i * n + j;
				double nv = 0.25 * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n]);

				delta += fabs(nv - u[k]);
				v[k] = nv;
			}
		double *t = u;

		u = v;
		v = t;
	}
	for (size_t k = 0; k < (size_t)n * n; k++) {
		sum += u[k];
		max = u[k] > max ? u[k] : max;
	}
	fprintf(a.out, "grid %d x %d sweeps %d\n", n, n, sweeps);
	fprintf(a.out, "sum %.10e max %.10e last change %.10e\n", sum, max, delta);
	free(u);
	free(v);
	return sb_main_end(&a);
}
