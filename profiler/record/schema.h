/* SPDX-License-Identifier: MIT */
/*
 * The recording schema: every event class a vperf recording holds, written once.
 *
 * One list below (VPERF_SCHEMA_CLASSES) gives each class its name, the layers it may appear
 * on, and its fields in order with their types.  From it come the CTF writer's class table
 * (vperf_schema__init()), a C struct per class with a member per field, a typed emitter per
 * class, the reader's field numbers, and the table in docs/recording.md (vperf_schema__doc(),
 * checked by a test).  Every recorder writes through the emitters, so that no two write one
 * class differently, and the report reader reads the fields by these numbers.
 *
 *	struct vperf_schema sch;
 *
 *	vperf_schema__init(&sch, event_names, nr_events);
 *	cfg.classes = sch.classes;
 *	cfg.nr_classes = VPERF_EV_NR;
 *	cfg.env = (struct vperf_ctf_env[]){ VPERF_SCHEMA_ENV };	...
 *	err = vperf_ev__process_exit(stream, ts, &(struct vperf_ev_process_exit){
 *		.pid = 1, .tid = 1, .exit_code = 0 });
 *
 * A field a recorder does not know is written as 0 (or "", or an empty sequence): the
 * designated initializer leaves it so.  docs/recording.md says, per field, what 0 means there.
 *
 * Version: VPERF_SCHEMA_VERSION, in the metadata's environment as `schema_version` (an
 * integer).  A recording without it was made before the schema (vperf 0.1.0, "schema 0"); the
 * reader still reads those, through vperf_schema_v0[], for one release.
 */
#ifndef VPERF_RECORD_SCHEMA_H
#define VPERF_RECORD_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "ctf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VPERF_SCHEMA_VERSION	1
#define VPERF_SCHEMA_ENV	{ .key = "schema_version", .value = "1", .integer = true }

/* Layer masks. */
#define VPERF_L_HK	(1u << VPERF_CTF_HOST_KERNEL)
#define VPERF_L_VMM	(1u << VPERF_CTF_VMM)
#define VPERF_L_GK	(1u << VPERF_CTF_GUEST_KERNEL)
#define VPERF_L_GU	(1u << VPERF_CTF_GUEST_USER)
#define VPERF_L_HU	(1u << VPERF_CTF_HOST_USER)
#define VPERF_L_KERNEL	(VPERF_L_HK | VPERF_L_GK)
#define VPERF_L_ALL	(VPERF_L_HK | VPERF_L_VMM | VPERF_L_GK | VPERF_L_GU | VPERF_L_HU)

/*
 * The classes: X(id, name, layers, fields, what).  fields(F, c) lists
 * F(c, name, TYPE, flags, labels, what): TYPE a VPERF_CTF_TYPE_ suffix, flags 0 or HEX,
 * labels NOLABELS or LABELS(array of schema.c) (an enumeration), what a phrase for the docs.
 */
#define VPERF_SCHEMA_SCHED_SWITCH(F, c)							\
	F(c, prev_tid, U32, 0, NOLABELS, "the thread switched out")			\
	F(c, prev_comm, STRING, 0, NOLABELS, "its name then")				\
	F(c, prev_state, U64, HEX, NOLABELS, "its state (TASK_*; 0: runnable, preempted)") \
	F(c, next_tid, U32, 0, NOLABELS, "the thread switched in (0 the idle task)")	\
	F(c, next_comm, STRING, 0, NOLABELS, "its name then")
#define VPERF_SCHEMA_SCHED_WAKEUP(F, c)							\
	F(c, tid, U32, 0, NOLABELS, "the thread woken")				\
	F(c, target_cpu, U32, 0, NOLABELS, "the CPU it will run on")			\
	F(c, waker_tid, U32, 0, NOLABELS, "the thread that woke it (0: an interrupt, or unknown)")
#define VPERF_SCHEMA_IRQ_ENTRY(F, c)							\
	F(c, vector, U32, 0, NOLABELS, "the interrupt vector")			\
	F(c, kind, U8, 0, LABELS(vperf_schema_irq_kinds), "what the guest kernel says it is") \
	F(c, irq, S64, 0, NOLABELS, "the Linux irq number, -1 none")		\
	F(c, tid, U32, 0, NOLABELS, "the thread it interrupted (not its cause)")
#define VPERF_SCHEMA_PROCESS_FORK(F, c)							\
	F(c, parent_pid, U32, 0, NOLABELS, "the parent's process")			\
	F(c, parent_tid, U32, 0, NOLABELS, "the forking thread")			\
	F(c, child_pid, U32, 0, NOLABELS, "the child's process (the parent's for a new thread)") \
	F(c, child_tid, U32, 0, NOLABELS, "the new thread")				\
	F(c, child_comm, STRING, 0, NOLABELS, "its name (\"\": its parent's)")
#define VPERF_SCHEMA_PROCESS_EXEC(F, c)							\
	F(c, pid, U32, 0, NOLABELS, "the process")					\
	F(c, tid, U32, 0, NOLABELS, "the thread that called exec")			\
	F(c, comm, STRING, 0, NOLABELS, "its name after exec")			\
	F(c, filename, STRING, 0, NOLABELS, "the program (\"\": not known to the recorder)")
#define VPERF_SCHEMA_PROCESS_EXIT(F, c)							\
	F(c, pid, U32, 0, NOLABELS, "the process")					\
	F(c, tid, U32, 0, NOLABELS, "the thread")					\
	F(c, exit_code, S64, 0, NOLABELS, "its exit code; INT64_MIN: not known")
#define VPERF_SCHEMA_SAMPLE(F, c)							\
	F(c, ip, U64, HEX, NOLABELS, "the sampled instruction")			\
	F(c, user, U8, 0, NOLABELS, "1: user code, taken through a guest kernel's ring")	\
	F(c, pid, U32, 0, NOLABELS, "the process")					\
	F(c, tid, U32, 0, NOLABELS, "the thread")					\
	F(c, counts, U64_SEQ, 0, NOLABELS, "the period, or the thread's counts (counts_are)") \
	F(c, counts_are, U8, 0, LABELS(vperf_schema_counts_are), "what counts holds")	\
	F(c, callchain, U64_SEQ, HEX, NOLABELS, "the stack, leaf first (empty: none)")	\
	F(c, sample_event, U32, 0, NOLABELS, "the event sampled (labelled with the events)")
#define VPERF_SCHEMA_MARKER(F, c)							\
	F(c, name, STRING, 0, NOLABELS, "the marker's name")				\
	F(c, value, U64, 0, NOLABELS, "its value")					\
	F(c, kind, U8, 0, LABELS(vperf_schema_marker_kinds), "a span's begin or end, an instant") \
	F(c, pid, U32, 0, NOLABELS, "the process that marked")			\
	F(c, tid, U32, 0, NOLABELS, "the thread")
#define VPERF_SCHEMA_VMM_EXIT(F, c)							\
	F(c, vcpu, U32, 0, NOLABELS, "the vCPU")					\
	F(c, reason, U32, 0, NOLABELS, "KVM_EXIT_* (linux/kvm.h)")			\
	F(c, reason_name, STRING, 0, NOLABELS, "its name, \"io\", \"mmio\"...")		\
	F(c, addr, U64, HEX, NOLABELS, "the port or the guest physical address")	\
	F(c, write, U8, 0, NOLABELS, "1: a write")					\
	F(c, duration_ns, U64, 0, NOLABELS, "from the exit to the VMM's return to KVM")
#define VPERF_SCHEMA_KVM_ENTRY(F, c)							\
	F(c, vcpu_id, U32, 0, NOLABELS, "the vCPU")					\
	F(c, rip, U64, HEX, NOLABELS, "the guest's instruction pointer")		\
	F(c, tid, U32, 0, NOLABELS, "the host thread of the vCPU")
#define VPERF_SCHEMA_KVM_EXIT(F, c)							\
	F(c, vcpu_id, U32, 0, NOLABELS, "the vCPU")					\
	F(c, exit_reason, U64, HEX, NOLABELS, "the hardware's exit reason (SVM or VMX)") \
	F(c, guest_rip, U64, HEX, NOLABELS, "the guest's instruction pointer")	\
	F(c, info1, U64, HEX, NOLABELS, "exit information 1 (exit qualification, EXITINFO1)") \
	F(c, info2, U64, HEX, NOLABELS, "exit information 2")			\
	F(c, tid, U32, 0, NOLABELS, "the host thread of the vCPU")
#define VPERF_SCHEMA_KVM_INJ_VIRQ(F, c)							\
	F(c, vector, U32, 0, NOLABELS, "the vector injected")			\
	F(c, soft, U8, 0, NOLABELS, "1: a software interrupt")			\
	F(c, reinjected, U8, 0, NOLABELS, "1: injected again")			\
	F(c, tid, U32, 0, NOLABELS, "the host thread of the vCPU")
#define VPERF_SCHEMA_GUEST_RING_INVALID(F, c)						\
	F(c, bytes, U64, 0, NOLABELS, "bytes of a guest ring refused so far")	\
	F(c, drains, U64, 0, NOLABELS, "drains that refused some")			\
	F(c, bad_headers, U64, 0, NOLABELS, "drains refused for a bad ring header")
#define VPERF_SCHEMA_MMAP(F, c)								\
	F(c, pid, U32, 0, NOLABELS, "the process (0: the kernel's)")		\
	F(c, tid, U32, 0, NOLABELS, "the thread that mapped it")			\
	F(c, start, U64, HEX, NOLABELS, "the mapping's first address")		\
	F(c, len, U64, HEX, NOLABELS, "its length")					\
	F(c, pgoff, U64, HEX, NOLABELS, "the file offset it maps")			\
	F(c, prot, U32, 0, NOLABELS, "PROT_* (0: not known; guest mappings are executable)") \
	F(c, filename, STRING, 0, NOLABELS, "the file, or [vdso], [heap]...")
#define VPERF_SCHEMA_COMM(F, c)								\
	F(c, pid, U32, 0, NOLABELS, "the process")					\
	F(c, tid, U32, 0, NOLABELS, "the thread")					\
	F(c, comm, STRING, 0, NOLABELS, "its new name")
#define VPERF_SCHEMA_KERNEL_SYMBOL(F, c)						\
	F(c, addr, U64, HEX, NOLABELS, "the symbol's address")			\
	F(c, size, U64, HEX, NOLABELS, "its size (0: up to the next)")		\
	F(c, name, STRING, 0, NOLABELS, "its name")					\
	F(c, module, STRING, 0, NOLABELS, "its module, [kernel.kallsyms] or [NAME]")
#define VPERF_SCHEMA_TRACE_FLUSH(F, c)							\
	F(c, vcpu, U32, 0, NOLABELS, "the vCPU")					\
	F(c, seq, U64, 0, NOLABELS, "the flush's number")				\
	F(c, side, U8, 0, LABELS(vperf_schema_flush_sides), "the guest asked, the VMM handled it")
#define VPERF_SCHEMA_THREAD_SWITCH(F, c)						\
	F(c, pid, U32, 0, NOLABELS, "the recorded thread's process")		\
	F(c, tid, U32, 0, NOLABELS, "the recorded thread")				\
	F(c, direction, U8, 0, LABELS(vperf_schema_switch_dirs), "in or out")		\
	F(c, preempted, U8, 0, NOLABELS, "1: switched out while runnable")
#define VPERF_SCHEMA_LOST_EVENTS(F, c)							\
	F(c, count, U64, 0, NOLABELS, "how many events of this stream were lost here")

#define VPERF_SCHEMA_CLASSES(X)								\
	X(SCHED_SWITCH, sched_switch, VPERF_L_KERNEL, VPERF_SCHEMA_SCHED_SWITCH,	\
	  "a CPU switched threads (the kernel's sched_switch)")			\
	X(SCHED_WAKEUP, sched_wakeup, VPERF_L_KERNEL, VPERF_SCHEMA_SCHED_WAKEUP,	\
	  "a thread was woken")							\
	X(IRQ_ENTRY, irq_entry, VPERF_L_KERNEL, VPERF_SCHEMA_IRQ_ENTRY,		\
	  "an interrupt began")							\
	X(PROCESS_FORK, process_fork, VPERF_L_KERNEL, VPERF_SCHEMA_PROCESS_FORK,	\
	  "a thread or a process was made")						\
	X(PROCESS_EXEC, process_exec, VPERF_L_KERNEL, VPERF_SCHEMA_PROCESS_EXEC,	\
	  "a process began a new program")						\
	X(PROCESS_EXIT, process_exit, VPERF_L_KERNEL, VPERF_SCHEMA_PROCESS_EXIT,	\
	  "a thread ended")								\
	X(SAMPLE, sample, VPERF_L_ALL & ~VPERF_L_VMM, VPERF_SCHEMA_SAMPLE,		\
	  "a sample: where a thread was when its event's period ran out")		\
	X(MARKER, marker, VPERF_L_ALL, VPERF_SCHEMA_MARKER,				\
	  "a program's marker (vperf_mark())")					\
	X(VMM_EXIT, vmm_exit, VPERF_L_VMM, VPERF_SCHEMA_VMM_EXIT,			\
	  "an exit the VMM handled")							\
	X(KVM_ENTRY, kvm_entry, VPERF_L_HK, VPERF_SCHEMA_KVM_ENTRY,			\
	  "KVM entered a vCPU (the host's kvm_entry)")				\
	X(KVM_EXIT, kvm_exit, VPERF_L_HK, VPERF_SCHEMA_KVM_EXIT,			\
	  "a vCPU exited to KVM (the host's kvm_exit)")				\
	X(KVM_INJ_VIRQ, kvm_inj_virq, VPERF_L_HK, VPERF_SCHEMA_KVM_INJ_VIRQ,		\
	  "KVM injected an interrupt")						\
	X(GUEST_RING_INVALID, guest_ring_invalid, VPERF_L_GK,			\
	  VPERF_SCHEMA_GUEST_RING_INVALID, "a guest ring held bytes the VMM refused")	\
	X(MMAP, mmap, VPERF_L_ALL & ~VPERF_L_VMM, VPERF_SCHEMA_MMAP,			\
	  "an executable mapping")							\
	X(COMM, comm, VPERF_L_ALL & ~VPERF_L_VMM, VPERF_SCHEMA_COMM, "a thread was named")	\
	X(KERNEL_SYMBOL, kernel_symbol, VPERF_L_KERNEL, VPERF_SCHEMA_KERNEL_SYMBOL,	\
	  "a kernel code symbol samples hit, written at the end")			\
	X(TRACE_FLUSH, trace_flush, VPERF_L_GK | VPERF_L_VMM, VPERF_SCHEMA_TRACE_FLUSH, \
	  "a guest's ring flush, on either side")					\
	X(THREAD_SWITCH, thread_switch, VPERF_L_KERNEL, VPERF_SCHEMA_THREAD_SWITCH,	\
	  "a recorded thread switched in or out (perf's context switch records)")

/* The class ids: the index into vperf_schema.classes, what vperf_ctf__emit() takes. */
enum vperf_ev {
#define VPERF_SCHEMA_ID(id, name, layers, fields, what) VPERF_EV_##id,
	VPERF_SCHEMA_CLASSES(VPERF_SCHEMA_ID)
#undef VPERF_SCHEMA_ID
	VPERF_EV_NR,
	/* the class the writer adds to every trace (vperf_ctf__lost()): not emitted here */
	VPERF_EV_LOST_EVENTS = VPERF_EV_NR,
};

/* Field numbers, per class: VPERF_F_<class>_<field>, in the class's order. */
#define VPERF_SCHEMA_FNUM(c, n, t, fl, lab, what) VPERF_F_##c##_##n,
#define VPERF_SCHEMA_FENUM(id, name, layers, fields, what)				\
	enum { fields(VPERF_SCHEMA_FNUM, name) VPERF_F_##name##__NR };
VPERF_SCHEMA_CLASSES(VPERF_SCHEMA_FENUM)
enum { VPERF_SCHEMA_LOST_EVENTS(VPERF_SCHEMA_FNUM, lost_events) VPERF_F_lost_events__NR };
#undef VPERF_SCHEMA_FENUM

#define VPERF_SCHEMA_MAX_FIELDS	8	/* the most fields a class has */

/* One struct per class, a member per field; a sequence's length is nr_<field>. */
#define VPERF_SCHEMA_M_U8(n)		uint8_t n;
#define VPERF_SCHEMA_M_U16(n)		uint16_t n;
#define VPERF_SCHEMA_M_U32(n)		uint32_t n;
#define VPERF_SCHEMA_M_U64(n)		uint64_t n;
#define VPERF_SCHEMA_M_S64(n)		int64_t n;
#define VPERF_SCHEMA_M_STRING(n)	const char *n;
#define VPERF_SCHEMA_M_U64_SEQ(n)	const uint64_t *n; size_t nr_##n;
#define VPERF_SCHEMA_MEMBER(c, n, t, fl, lab, what) VPERF_SCHEMA_M_##t(n)
#define VPERF_SCHEMA_STRUCT(id, name, layers, fields, what)				\
	struct vperf_ev_##name { fields(VPERF_SCHEMA_MEMBER, name) };			\
	int vperf_ev__##name(struct vperf_ctf_stream *s, uint64_t ts,			\
			     const struct vperf_ev_##name *e);
VPERF_SCHEMA_CLASSES(VPERF_SCHEMA_STRUCT)
#undef VPERF_SCHEMA_STRUCT

/*
 * vperf_ev__<class>(stream, ts, e): emit one event of that class; as vperf_ctf__emit(),
 * and -EINVAL if the stream's layer is not one the class may appear on.  A NULL string is
 * written as "", a NULL sequence as an empty one.
 */

/* The layers' names, as in every packet's context: "host_kernel", "vmm", ... */
extern const char *const vperf_schema_layer_names[VPERF_CTF_NR_LAYERS];

/* The label sets (the enumerations' names, values from 0). */
/* other timer reschedule call_function device */
extern const char *const vperf_schema_irq_kinds[5];
extern const char *const vperf_schema_counts_are[2];	/* thread_counts period */
extern const char *const vperf_schema_marker_kinds[3];	/* begin end instant */
extern const char *const vperf_schema_flush_sides[2];	/* guest host */
extern const char *const vperf_schema_switch_dirs[2];	/* in out */

enum { VPERF_COUNTS_ARE_THREAD_COUNTS, VPERF_COUNTS_ARE_PERIOD };

/* What the table says of a class. */
struct vperf_schema_class {
	const char *name;
	uint32_t layers;			/* 1u << each enum vperf_ctf_layer */
	const char *what;
	const char *const *field_what;		/* per field, for the docs */
};
/* Indexed by enum vperf_ev, VPERF_EV_LOST_EVENTS included. */
extern const struct vperf_schema_class vperf_schema_class[VPERF_EV_NR + 1];
/* The fields, as the CTF writer takes them (lost_events' too). */
extern const struct vperf_ctf_class_desc vperf_schema_desc[VPERF_EV_NR + 1];

/*
 * A writer's class table: vperf_schema_desc with the sample's event field labelled with the
 * recording's events (nr_events of them, NULL or 0: a plain number).  The names must live as
 * long as the writer.
 */
struct vperf_schema {
	struct vperf_ctf_class_desc classes[VPERF_EV_NR];
	struct vperf_ctf_field_desc sample_fields[VPERF_F_sample__NR];
};
void vperf_schema__init(struct vperf_schema *s, const char *const *event_names, size_t nr_events);

/*
 * The schema as the Markdown table of docs/recording.md (class, layers, fields with their types
 * and meaning), into buf; the length it needs (as snprintf).
 */
size_t vperf_schema__doc(char *buf, size_t len);

/*
 * Reading a recording of schema 0 (before schema_version): a field that had another name then,
 * or was not there, with the value it reads as.  The reader looks a schema-0 field up by
 * old_name (NULL: by its name); one not there reads as dflt (integers; "" and empty sequences).
 */
struct vperf_schema_v0 {
	uint16_t ev;				/* enum vperf_ev */
	uint16_t field;				/* VPERF_F_* */
	const char *old_name;
	int64_t dflt;
};
extern const struct vperf_schema_v0 vperf_schema_v0[];
extern const size_t vperf_schema_nr_v0;

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_SCHEMA_H */
