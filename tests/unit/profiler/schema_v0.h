/* SPDX-License-Identifier: MIT */
/*
 * The classes `vperf record` wrote before the recording schema (record/schema.h), "schema 0":
 * the CTF writer's default table of vperf 0.1.0 (commit 083a847) and the three classes `vperf
 * record` added to it.  Kept, as they were, for the test that a schema-0 recording still reads
 * as its schema-1 twin (test_report.c), for as long as the reader reads schema 0.
 */
#ifndef VT_SCHEMA_V0_H
#define VT_SCHEMA_V0_H

#include "ctf.h"

enum { V0_SCHED_SWITCH, V0_SCHED_WAKEUP, V0_IRQ_ENTRY, V0_PROCESS_FORK, V0_PROCESS_EXEC,
       V0_PROCESS_EXIT, V0_SAMPLE, V0_MARKER, V0_VMM_EXIT, V0_KVM_ENTRY, V0_KVM_EXIT,
       V0_MMAP, V0_COMM, V0_KSYM, V0_NR };

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

#define FIELD(n, t)	{ .name = n, .type = VPERF_CTF_TYPE_##t }
#define HEX_FIELD(n, t)	{ .name = n, .type = VPERF_CTF_TYPE_##t, .flags = VPERF_CTF_HEX }

static const char *const v0_marker_kinds[] = { "begin", "end", "instant" };

static const struct vperf_ctf_field_desc sched_switch_fields[] = {
	FIELD("prev_tid", U32),
	FIELD("prev_comm", STRING),
	FIELD("prev_state", U64),
	FIELD("next_tid", U32),
	FIELD("next_comm", STRING),
};
static const struct vperf_ctf_field_desc sched_wakeup_fields[] = {
	FIELD("tid", U32),
	FIELD("target_cpu", U32),
	FIELD("waker_tid", U32),
};
static const struct vperf_ctf_field_desc irq_entry_fields[] = {
	FIELD("vector", U32),
};
static const struct vperf_ctf_field_desc process_fork_fields[] = {
	FIELD("parent_pid", U32),
	FIELD("parent_tid", U32),
	FIELD("child_pid", U32),
	FIELD("child_tid", U32),
};
static const struct vperf_ctf_field_desc process_exec_fields[] = {
	FIELD("pid", U32),
	FIELD("tid", U32),
	FIELD("filename", STRING),
};
static const struct vperf_ctf_field_desc process_exit_fields[] = {
	FIELD("pid", U32),
	FIELD("tid", U32),
	FIELD("exit_code", S64),
};
static const struct vperf_ctf_field_desc sample_fields[] = {
	HEX_FIELD("ip", U64),
	FIELD("pid", U32),
	FIELD("tid", U32),
	FIELD("values", U64_SEQ),
	HEX_FIELD("callchain", U64_SEQ),
};
static const struct vperf_ctf_field_desc marker_fields[] = {
	FIELD("name", STRING),
	FIELD("value", S64),
	{ .name = "kind", .type = VPERF_CTF_TYPE_U8, .labels = v0_marker_kinds,
	  .nr_labels = 3 },
};
static const struct vperf_ctf_field_desc vmm_exit_fields[] = {
	FIELD("vcpu", U32),
	FIELD("reason", U32),
	HEX_FIELD("port_or_addr", U64),
	FIELD("duration_ns", U64),
};
static const struct vperf_ctf_field_desc kvm_entry_fields[] = {
	FIELD("vcpu", U32),
	HEX_FIELD("rip", U64),
};
static const struct vperf_ctf_field_desc kvm_exit_fields[] = {
	FIELD("vcpu", U32),
	FIELD("reason", U32),
	HEX_FIELD("rip", U64),
};

#define CLASS(n, f) { .name = n, .fields = f, .nr_fields = (sizeof(f) / sizeof((f)[0])) }
static const struct vperf_ctf_class_desc v0_classes[] = {
	[V0_SCHED_SWITCH] = CLASS("sched_switch", sched_switch_fields),
	[V0_SCHED_WAKEUP] = CLASS("sched_wakeup", sched_wakeup_fields),
	[V0_IRQ_ENTRY] = CLASS("irq_entry", irq_entry_fields),
	[V0_PROCESS_FORK] = CLASS("process_fork", process_fork_fields),
	[V0_PROCESS_EXEC] = CLASS("process_exec", process_exec_fields),
	[V0_PROCESS_EXIT] = CLASS("process_exit", process_exit_fields),
	[V0_SAMPLE] = CLASS("sample", sample_fields),
	[V0_MARKER] = CLASS("marker", marker_fields),
	[V0_VMM_EXIT] = CLASS("vmm_exit", vmm_exit_fields),
	[V0_KVM_ENTRY] = CLASS("kvm_entry", kvm_entry_fields),
	[V0_KVM_EXIT] = CLASS("kvm_exit", kvm_exit_fields),
	[V0_MMAP] = CLASS("mmap", vt_mmap_f),
	[V0_COMM] = CLASS("comm", vt_comm_f),
	[V0_KSYM] = CLASS("kernel_symbol", vt_ksym_f),
};


#undef CLASS
#undef HEX_FIELD
#undef FIELD

#endif
