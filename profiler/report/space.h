/* SPDX-License-Identifier: MIT */
/*
 * A process's address space: which mapping holds each address (space.c).
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_SPACE_H
#define VPERF_REPORT_SPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- an address space -------------------------------------------------- */

struct vperf_report_amap_node;

/*
 * Which mapping of a process holds an address (the reader's, space.c): mappings added in time
 * order, each covering what older ones had where it lies.  Zeroed: empty; rng (any value, best
 * a random one) seeds the tree's shape.
 */
struct vperf_report_amap {
	struct vperf_report_amap_node *root;
	uint64_t rng;
};

/* Map [start, start + len) to map from now on: 0 or -ENOMEM (then a is as it was). */
int vperf_report_amap__add(struct vperf_report_amap *a, uint64_t start, uint64_t len,
			   int32_t map) __attribute__((warn_unused_result));
/* The mapping holding addr, or -1. */
int32_t vperf_report_amap__find(const struct vperf_report_amap *a, uint64_t addr);
/* Make to (emptied first) a copy of from: 0 or -ENOMEM (then to is empty). */
int vperf_report_amap__copy(struct vperf_report_amap *to, const struct vperf_report_amap *from)
	__attribute__((warn_unused_result));
void vperf_report_amap__exit(struct vperf_report_amap *a);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_SPACE_H */
