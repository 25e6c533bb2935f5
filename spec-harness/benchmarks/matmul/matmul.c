// SPDX-License-Identifier: MIT
/*
 * matmul: C = A * B for dense N x N doubles, blocked for the caches, then
 * checked against C * x = A * (B * x) for a generated vector x; prints the
 * trace, the Frobenius norm and the check's residual.
 */
#include <math.h>
#include <stdlib.h>

#include "specbench.h"

#define BS 48

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	double *A, *B, *C, *x, *y, *z, tr = 0, fro = 0, res = 0;
	uint64_t seed = 0x3a7;
	int n;

	if (sb_main_begin(argc, argv, "matmul", &a))
		return 2;
	n = (int)sb_pick(&a, 480, 820, 1800);
	A = malloc(sizeof(double) * (size_t)n * n);
	B = malloc(sizeof(double) * (size_t)n * n);
	C = calloc((size_t)n * n, sizeof(double));
	x = malloc(sizeof(double) * (size_t)n);
	y = calloc((size_t)n, sizeof(double));
	z = calloc((size_t)n, sizeof(double));
	for (size_t k = 0; k < (size_t)n * n; k++) {
		A[k] = (double)(sb_rand(&seed) % 2001) / 1000.0 - 1.0;
		B[k] = (double)(sb_rand(&seed) % 2001) / 1000.0 - 1.0;
	}
	for (int i = 0; i < n; i++)
		x[i] = (double)(sb_rand(&seed) % 1001) / 1000.0;
	for (int ii = 0; ii < n; ii += BS)
		for (int kk = 0; kk < n; kk += BS)
			for (int jj = 0; jj < n; jj += BS)
				for (int i = ii; i < ii + BS && i < n; i++)
					for (int k = kk; k < kk + BS && k < n; k++) {
						double aik = A[(size_t)i * n + k];

						for (int j = jj; j < jj + BS && j < n; j++)
							C[(size_t)i * n + j] += aik * B[(size_t)k * n + j];
					}
	for (int i = 0; i < n; i++)	/* y = B x, z = A y, compare with C x */
		for (int j = 0; j < n; j++)
			y[i] += B[(size_t)i * n + j] * x[j];
	for (int i = 0; i < n; i++) {
		double cx = 0;

		for (int j = 0; j < n; j++) {
			z[i] += A[(size_t)i * n + j] * y[j];
			cx += C[(size_t)i * n + j] * x[j];
		}
		res = fmax(res, fabs(cx - z[i]));
	}
	for (int i = 0; i < n; i++)
		tr += C[(size_t)i * n + i];
	for (size_t k = 0; k < (size_t)n * n; k++)
		fro += C[k] * C[k];
	fprintf(a.out, "n %d block %d\n", n, BS);
	fprintf(a.out, "trace %.10e frobenius %.10e\n", tr, sqrt(fro));
	fprintf(a.out, "check %s\n", res < 1e-6 * n ? "ok" : "FAILED");
	free(A); free(B); free(C); free(x); free(y); free(z);
	return sb_main_end(&a);
}
