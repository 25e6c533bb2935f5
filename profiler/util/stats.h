/* SPDX-License-Identifier: MIT */
/* Running mean and variance (Welford), as perf's util/stat.c. */
#ifndef VPERF_CLI_STATS_H
#define VPERF_CLI_STATS_H

struct stats {
	double n, mean, m2;
};

void stats__update(struct stats *s, double v);
double stats__mean(const struct stats *s);
/* Standard deviation of the mean: sqrt(variance / n); 0 if n < 2. */
double stats__stddev_mean(const struct stats *s);
/* 100 * stddev_mean / mean (0 if the mean is 0): perf's "( +- x% )". */
double stats__rel_stddev_pct(const struct stats *s);

#endif /* VPERF_CLI_STATS_H */
