// SPDX-License-Identifier: MIT
/*
 * nbody: N bodies under softened gravity, integrated with leapfrog
 * (kick-drift-kick); prints the total energy and momentum before and after.
 */
#include <math.h>
#include <stdlib.h>

#include "specbench.h"

struct body { double x, y, z, vx, vy, vz, ax, ay, az, m; };

#define EPS2 1e-4

static void accel(struct body *b, int n)
{
	for (int i = 0; i < n; i++)
		b[i].ax = b[i].ay = b[i].az = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++) {
			double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;
			double r2 = dx * dx + dy * dy + dz * dz + EPS2, inv = 1.0 / (r2 * sqrt(r2));

			b[i].ax += dx * inv * b[j].m;
			b[i].ay += dy * inv * b[j].m;
			b[i].az += dz * inv * b[j].m;
			b[j].ax -= dx * inv * b[i].m;
			b[j].ay -= dy * inv * b[i].m;
			b[j].az -= dz * inv * b[i].m;
		}
}

static double energy(const struct body *b, int n, double *p)
{
	double e = 0, px = 0, py = 0, pz = 0;

	for (int i = 0; i < n; i++) {
		e += 0.5 * b[i].m * (b[i].vx * b[i].vx + b[i].vy * b[i].vy + b[i].vz * b[i].vz);
		px += b[i].m * b[i].vx;
		py += b[i].m * b[i].vy;
		pz += b[i].m * b[i].vz;
		for (int j = i + 1; j < n; j++) {
			double dx = b[j].x - b[i].x, dy = b[j].y - b[i].y, dz = b[j].z - b[i].z;

			e -= b[i].m * b[j].m / sqrt(dx * dx + dy * dy + dz * dz + EPS2);
		}
	}
	*p = sqrt(px * px + py * py + pz * pz);
	return e;
}

int main(int argc, char **argv)
{
	struct sb_args a = { .threads = 1 };
	uint64_t seed = 0xb0d1e5;
	double dt = 1e-3, e0, e1, p0, p1;
	struct body *b;
	int n, steps;

	if (sb_main_begin(argc, argv, "nbody", &a))
		return 2;
	n = (int)sb_pick(&a, 256, 512, 1024);
	steps = (int)sb_pick(&a, 300, 375, 940);
	b = calloc((size_t)n, sizeof(*b));
	for (int i = 0; i < n; i++) {
		b[i].x = (double)(sb_rand(&seed) % 20001) / 10000.0 - 1.0;
		b[i].y = (double)(sb_rand(&seed) % 20001) / 10000.0 - 1.0;
		b[i].z = (double)(sb_rand(&seed) % 20001) / 10000.0 - 1.0;
		b[i].vx = -b[i].y * 0.3;
		b[i].vy = b[i].x * 0.3;
		b[i].m = (1.0 + (double)(sb_rand(&seed) % 100) / 100.0) / n;
	}
	e0 = energy(b, n, &p0);
	accel(b, n);
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < n; i++) {
			b[i].vx += 0.5 * dt * b[i].ax;
			b[i].vy += 0.5 * dt * b[i].ay;
			b[i].vz += 0.5 * dt * b[i].az;
			b[i].x += dt * b[i].vx;
			b[i].y += dt * b[i].vy;
			b[i].z += dt * b[i].vz;
		}
		accel(b, n);
		for (int i = 0; i < n; i++) {
			b[i].vx += 0.5 * dt * b[i].ax;
			b[i].vy += 0.5 * dt * b[i].ay;
			b[i].vz += 0.5 * dt * b[i].az;
		}
	}
	e1 = energy(b, n, &p1);
	fprintf(a.out, "bodies %d steps %d\n", n, steps);
	fprintf(a.out, "energy before %.10e after %.10e\n", e0, e1);
	fprintf(a.out, "momentum before %.10e after %.10e\n", p0, p1);
	fprintf(a.out, "body0 %.10e %.10e %.10e\n", b[0].x, b[0].y, b[0].z);
	free(b);
	return sb_main_end(&a);
}
