/* SPDX-License-Identifier: MIT */
/*
 * A recording read back (reader.c, sink.c, resolve.c): its samples with their frames, maps,
 * threads and timeline events.
 * Part of vperf_report (report.h gathers them); 0 or a negative errno everywhere, and a
 * library function never prints.
 */
#ifndef VPERF_REPORT_SESSION_H
#define VPERF_REPORT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "containers.h"
#include "symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layers: the recording's packet context `layer`, named by vperf_schema_layer_names (schema.h). */

/* ---- a recording ------------------------------------------------------- */

/* A frame: an address in a process (or the kernel) and what it resolved to. */
struct vperf_report_frame {
	uint64_t ip;
	int32_t map;			/* the user mapping it is in, or -1 */
	bool kernel;
	bool guest;			/* a guest's frame: its mappings and kernel symbols */
	bool ret;			/* a caller's return address: looked up at ip - 1,
					 * inside the call (a call ending a function returns
					 * past it) */
	bool resolved;			/* looked up already */
	bool found;			/* a symbol holds it (else sym is VPERF_REPORT_UNKNOWN) */
	const char *sym;		/* VPERF_REPORT_UNKNOWN when no symbol holds it */
	const char *dso;		/* the file's base name, "[kernel.kallsyms]", "[kvm]"... */
};

struct vperf_report_map {
	uint64_t start, len, pgoff;
	uint32_t pid;
	bool guest;			/* file is a guest's path (vperf_report__guest_file()) */
	char *file;
	int32_t elf;			/* index in elfs, -1 until loaded (or not ELF) */
};

struct vperf_report_sample {
	uint64_t ts, period;		/* ts in ns on the recording's clock */
	uint32_t pid, tid, cpu;
	int32_t thread;			/* index in threads */
	uint8_t layer;
	uint32_t event;			/* index in events */
	uint32_t comm;			/* index in strings: the thread's name then */
	size_t frame, nr_frames;	/* frames[frame..+nr): leaf first (the ip, then callers) */
	size_t counts;			/* counts[counts..+nr_counts): the sampling NMI's */
	uint8_t nr_counts;		/* thread counts then (vm record), else 0 */
};

/*
 * A vm record sample of the sampling NMI (counts_are = thread_counts) carries the thread's vperf
 * counts as of the NMI, in this order (docs/abi.md 7.3): vperf::vcpu-clock, steal, exits.
 */
#define VPERF_REPORT_MAX_COUNTS	16
extern const char *const vperf_report_count_names[3];

/*
 * What a timeline needs besides samples (docs/report.md, section 4): scheduling, process life,
 * losses, markers and VMM exits, in time order.  thread and other are indices in threads (-1:
 * none); the other fields' meaning is per kind.
 */
enum vperf_report_ev_kind {
	VPERF_REPORT_EV_SWITCH_IN,	/* thread_switch in: thread now runs on cpu */
	VPERF_REPORT_EV_SWITCH_OUT,	/* thread_switch out; arg: preempted (1) or blocked */
	VPERF_REPORT_EV_SCHED_SWITCH,	/* sched_switch: thread (prev) out, other (next) in;
					 * arg: prev_state; arg2 and str: prev's and next's
					 * names then (indices in strings, UINT32_MAX: none) */
	VPERF_REPORT_EV_WAKEUP,		/* sched_wakeup: thread woken; arg: the waker's tid,
					 * arg2 target_cpu (UINT64_MAX: not recorded) */
	VPERF_REPORT_EV_FORK,		/* process_fork: thread (the child) made by other */
	VPERF_REPORT_EV_EXEC,		/* process_exec: str the new program */
	VPERF_REPORT_EV_EXIT,		/* process_exit: arg the exit code (as s64) */
	VPERF_REPORT_EV_LOST,		/* lost_events on cpu's stream: arg how many */
	VPERF_REPORT_EV_MARKER,		/* marker: str its name, arg value, arg2 kind (0 begin,
					 * 1 end, 2 instant) */
	VPERF_REPORT_EV_VMM_EXIT,	/* vmm_exit of vCPU cpu: arg duration_ns, arg2 reason,
					 * str reason_name, other an io exit's port (else -1) */
	VPERF_REPORT_EV_IRQ,		/* a guest's irq_entry on vCPU cpu: arg vector, arg2 kind
					 * (VPERF_REPORT_IRQ_*), other the irq number (-1: none) */
	VPERF_REPORT_EV_KVM_EXIT,	/* host kvm_exit: thread the vCPU thread, arg the hardware
					 * exit reason, arg2 the vCPU, other the guest thread on
					 * that vCPU then (its last guest sched_switch; -1: none
					 * yet), frame the guest RIP's */
	VPERF_REPORT_EV_KVM_ENTRY,	/* host kvm_entry: thread the vCPU thread, arg2 the vCPU */
	VPERF_REPORT_EV_FLUSH,		/* a TRACE_FLUSH of vCPU cpu: arg its number, arg2 0 the
					 * guest asked (guest layer), 1 the VMM handled it (vmm) */
	VPERF_REPORT_NR_EV_KINDS
};

extern const char *const vperf_report_ev_names[VPERF_REPORT_NR_EV_KINDS];

/* A guest interrupt's kind (the recording's irq_entry `kind`, docs/recording.md section 9). */
enum { VPERF_REPORT_IRQ_OTHER, VPERF_REPORT_IRQ_TIMER, VPERF_REPORT_IRQ_RESCHEDULE,
       VPERF_REPORT_IRQ_CALL_FUNCTION, VPERF_REPORT_IRQ_DEVICE };

struct vperf_report_tlev {
	uint64_t ts;
	uint64_t arg, arg2;
	int32_t thread, other;
	uint32_t cpu;
	uint32_t str;			/* index in strings, or UINT32_MAX */
	uint8_t kind, layer;
	size_t frame;			/* kvm_exit: the guest RIP's frame in frames (resolved in
					 * the guest thread's address space), else SIZE_MAX */
};

/*
 * A thread the recording names.  Guest threads (guest_kernel, guest_user layers) are apart
 * from the host's: tid 1 of a guest is not the host's tid 1.
 */
struct vperf_report_thread {
	uint32_t tid, pid;		/* pid: 0 if the recording never said */
	uint32_t comm;			/* index in strings: its last name, UINT32_MAX: none */
	bool guest;
	bool switches;			/* it has thread_switch events (its every switch) */
	uint64_t nr_samples;
};

struct vperf_report {
	char *dir;
	struct vperf_report_sample *samples;
	size_t nr_samples;
	struct vperf_report_frame *frames;
	size_t nr_frames;
	uint64_t *counts;		/* the samples' thread counts (vperf_report_sample) */
	size_t nr_counts;
	struct vperf_report_map *maps;
	size_t nr_maps;
	struct vperf_report_elf *elfs;
	size_t nr_elfs, cap_elfs;
	struct vperf_report_idx *elf_idx;	/* elfs by path (resolve.c) */
	struct vperf_report_sym *ksyms;	/* sorted; names and modules owned */
	size_t nr_ksyms;
	struct vperf_report_sym *gksyms;	/* the guest kernel's, likewise */
	size_t nr_gksyms;
	char *guest_root;		/* a guest's files under this host directory, or NULL */
	char **guest_files;		/* pairs: a guest path, the host file or directory it is */
	size_t nr_guest_files;
	char **strings;			/* interned comms */
	size_t nr_strings;
	char **events;			/* the sampled events' names (the sample_event labels) */
	size_t nr_events;
	uint64_t cost_events;		/* bit e: event e's samples weigh their period, a cost in
					 * ns (vperf_report__add_exit_samples), not one each */
	char *event_list;		/* the env's `events` */
	bool callchains;		/* the recording has callchains (env `callchains`) */
	bool have_ksyms;		/* kernel_symbol events were recorded */
	bool have_gksyms;		/* the guest kernel's too */
	char *ksyms_note;		/* the env's `kernel_symbols` */
	char *gksyms_note;		/* the env's `guest_kernel_symbols` (vm record) */
	uint64_t lost;			/* lost_events counts, and babeltrace2's discarded events */
	uint64_t nr_mmap_events, nr_unmapped;	/* user frames in no mapping */
	struct vperf_report_tlev *tlevs;	/* the timeline's events, in time order */
	size_t nr_tlevs;
	struct vperf_report_thread *threads;
	size_t nr_threads;
	uint64_t first_ts, last_ts;	/* the first and last event of any kind (ns) */
	char *vm_name;			/* the env's vm_name: a `vperf vm record` recording */
	uint64_t vmm_pid;		/* the env's vmm_pid (0: none) */
	char *hostname;			/* the env's hostname, NULL if none */
	int64_t clock_offset_s;		/* the clock's origin: ts 0 is this many s */
	uint64_t clock_offset_ns;	/* plus this many ns after it */
	bool clock_absolute;		/* that origin is the Unix epoch */
	bool clock_read;		/* the three above were read (an event had a clock) */
	uint32_t nr_cpus;		/* 1 + the highest cpu_id of a host stream */
	void *priv;
};

/*
 * Read the recording in dir.  Errors, with why for a person: -ENOENT (no such directory),
 * -ENOTDIR, -EINVAL (not a vperf recording: no CTF metadata, or not vperf's), -EIO
 * (babeltrace2 could not read it: its message), -ENOMEM.
 */
int vperf_report__open(const char *dir, struct vperf_report **out, char *why, size_t why_len)
	__attribute__((warn_unused_result));
void vperf_report__delete(struct vperf_report *r);

/*
 * The guest's files (a `vperf vm record` recording): by default where its files list
 * (DIR/.raw/guest/files, written at record time) says each came from; after this, under root,
 * a directory holding the guest's file system (perf kvm's --guestmount).  0 or -ENOMEM.
 */
int vperf_report__set_guest_root(struct vperf_report *r, const char *root);
/* Where the guest's file path is on this host (into buf), or NULL when nothing says. */
const char *vperf_report__guest_file(const struct vperf_report *r, const char *path, char *buf,
				     size_t len);

/* Frame i resolved (symbol and DSO looked up on first use, then cached). */
const struct vperf_report_frame *vperf_report__frame(struct vperf_report *r, size_t i);

/* The index of event name in r->events, or -1. */
int vperf_report__event(const struct vperf_report *r, const char *name);

/* Whether event's samples weigh their period, a cost in ns (r->cost_events), not one each. */
bool vperf_report__cost_event(const struct vperf_report *r, int event);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_REPORT_SESSION_H */
