// SPDX-License-Identifier: MIT
#include <math.h>

#include "stats.h"

void stats__update(struct stats *s, double v)
{
	double delta;

	s->n += 1;
	delta = v - s->mean;
	s->mean += delta / s->n;
	s->m2 += delta * (v - s->mean);
}

double stats__mean(const struct stats *s)
{
	return s->mean;
}

double stats__stddev_mean(const struct stats *s)
{
	if (s->n < 2)
		return 0.0;
	return sqrt(s->m2 / (s->n - 1) / s->n);
}

double stats__rel_stddev_pct(const struct stats *s)
{
	if (s->mean == 0.0)
		return 0.0;
	return 100.0 * stats__stddev_mean(s) / s->mean;
}
