/* SPDX-License-Identifier: MIT */
/*
 * Table-driven checks of vperf__encode(), libpfm4 validate_x86.c style:
 * every case carries its source line, every failing case is reported with
 * that line, and the test fails once at the end if any case failed.
 */
#ifndef VPERF_TESTS_ENCODE_TABLE_H
#define VPERF_TESTS_ENCODE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct encode_case {
	int line;
	const char *name;
	int ret;		/* expected return: 0, -ENOENT, -EINVAL */
	/* when ret == 0: */
	uint32_t type;
	uint64_t config;
	int excl_user, excl_kernel;
	const char *canon;	/* expected prefix of the canonical name, or NULL */
	/* when ret != 0: the message must contain this (case-insensitive) */
	const char *msg;
};

#define OK(n, t, c, eu, ek, can) \
	{ __LINE__, n, 0, t, c, eu, ek, can, NULL }
#define BAD(n, r, m) \
	{ __LINE__, n, r, 0, 0, 0, 0, NULL, m }

/* Run every case; returns the number of failing cases (each printed). */
int encode_table_run(const char *file, const struct encode_case *cases, size_t n);

#endif /* VPERF_TESTS_ENCODE_TABLE_H */
