/* SPDX-License-Identifier: MIT */
/*
 * The classes a test recording adds to the CTF writer's defaults, as `vperf record` writes them
 * (mmap, comm, kernel_symbol), for tests that write recordings by hand: test_report.c and
 * tests/integration/hostile-rec.c. One copy, so that the tests and the reader agree.
 */
#ifndef VT_REC_CLASSES_H
#define VT_REC_CLASSES_H

#include <string.h>

#include "ctf.h"

enum { C_MMAP = VPERF_CTF_NR_DEFAULT_CLASSES, C_COMM, C_KSYM, NR_C };

static const struct vperf_ctf_field_desc vt_mmap_f[] = {
	{ .name = "pid", .type = VPERF_CTF_TYPE_U32 },
	{ .name = "tid", .type = VPERF_CTF_TYPE_U32 },
	{ .name = "start", .type = VPERF_CTF_TYPE_U64 },
	{ .name = "len", .type = VPERF_CTF_TYPE_U64 },
	{ .name = "pgoff", .type = VPERF_CTF_TYPE_U64 },
	{ .name = "prot", .type = VPERF_CTF_TYPE_U32 },
	{ .name = "filename", .type = VPERF_CTF_TYPE_STRING },
};
static const struct vperf_ctf_field_desc vt_comm_f[] = {
	{ .name = "pid", .type = VPERF_CTF_TYPE_U32 },
	{ .name = "tid", .type = VPERF_CTF_TYPE_U32 },
	{ .name = "comm", .type = VPERF_CTF_TYPE_STRING },
};
static const struct vperf_ctf_field_desc vt_ksym_f[] = {
	{ .name = "addr", .type = VPERF_CTF_TYPE_U64 },
	{ .name = "size", .type = VPERF_CTF_TYPE_U64 },
	{ .name = "name", .type = VPERF_CTF_TYPE_STRING },
	{ .name = "module", .type = VPERF_CTF_TYPE_STRING },
};

/* cls[]: the writer's default classes, then mmap, comm and kernel_symbol. */
static inline void vt_rec_classes(struct vperf_ctf_class_desc cls[NR_C])
{
	memcpy(cls, vperf_ctf_default_classes, sizeof(vperf_ctf_default_classes));
	cls[C_MMAP] = (struct vperf_ctf_class_desc){ "mmap", vt_mmap_f, 7 };
	cls[C_COMM] = (struct vperf_ctf_class_desc){ "comm", vt_comm_f, 3 };
	cls[C_KSYM] = (struct vperf_ctf_class_desc){ "kernel_symbol", vt_ksym_f, 4 };
}

#endif
