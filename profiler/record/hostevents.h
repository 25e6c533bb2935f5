/* SPDX-License-Identifier: MIT */
/*
 * The host kernel's events of a raw recording, decoded (libtraceevent inside, not in this API).
 *
 * vperf-vmm copies tracefs ring-buffer pages verbatim into the raw recording (hv/vmm/tracefs.h):
 * the header_page text, each event's format text, the pages of each host CPU and, at the end,
 * each CPU's stats.  A reader takes those payloads in any order so long as the header comes
 * before the pages, checks them (a recording is a file: damaged input is an error with a message,
 * never a crash), and then hands every event to a callback as a plain struct, in time order.
 *
 *	struct vperf_hostev_reader *r;
 *	vperf_hostev_reader__new(&r);
 *	vperf_hostev_reader__add_header(r, text, len);		// TRACEFS_HEADER
 *	vperf_hostev_reader__add_format_chunk(r, payload, len);	// each TRACEFS_FORMAT
 *	vperf_hostev_reader__add_pages(r, cpu, payload, len);	// each TRACEFS_PAGES
 *	vperf_hostev_reader__add_stats(r, cpu, text, len);	// each TRACEFS_STATS
 *	vperf_hostev_reader__read(r, cb, ctx);
 *	vperf_hostev_reader__lost(r);
 *	vperf_hostev_reader__delete(r);
 *
 * Fields are found by name in the recording's own format files, so kernels whose events have
 * more, fewer or moved fields decode alike; a field this kernel's event lacks stays 0 and
 * vperf_hostev_reader__missing_fields() names it.
 */
#ifndef VPERF_RECORD_HOSTEVENTS_H
#define VPERF_RECORD_HOSTEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vperf_hostev_type {
	VPERF_HOSTEV_KVM_ENTRY,
	VPERF_HOSTEV_KVM_EXIT,
	VPERF_HOSTEV_KVM_INJ_VIRQ,
	VPERF_HOSTEV_SCHED_SWITCH,
	VPERF_HOSTEV_SCHED_WAKEUP,
	VPERF_HOSTEV_OTHER,		/* an event with another format, or none: other.id */
	VPERF_HOSTEV_LOST,		/* only with vperf_hostev_reader__report_lost(): lost.count */
	VPERF_HOSTEV_NR_TYPES
};

#define VPERF_HOSTEV_COMM_LEN	16

struct vperf_hostev {
	enum vperf_hostev_type type;
	uint32_t cpu;			/* host CPU */
	uint64_t tsc;			/* the trace clock's time stamp (x86-tsc: TSC cycles) */
	int32_t pid;			/* common_pid: the thread the event happened in */
	union {
		struct {
			uint32_t vcpu_id;
			uint64_t rip;
		} kvm_entry;
		struct {
			uint32_t vcpu_id;
			uint64_t exit_reason;	/* VMX basic exit reason, or SVM exit code */
			uint64_t guest_rip;
			uint32_t isa;		/* 1 VMX, 2 SVM (KVM_ISA_*) */
			uint64_t info1, info2;
		} kvm_exit;
		struct {
			uint32_t vector;
			uint8_t soft, reinjected;
		} kvm_inj_virq;
		struct {
			char prev_comm[VPERF_HOSTEV_COMM_LEN];	/* NUL-padded, maybe not terminated */
			int32_t prev_pid, prev_prio;
			int64_t prev_state;
			char next_comm[VPERF_HOSTEV_COMM_LEN];
			int32_t next_pid, next_prio;
		} sched_switch;
		struct {
			char comm[VPERF_HOSTEV_COMM_LEN];
			int32_t pid, prio, target_cpu;	/* pid: the wakee (common_pid: the waker) */
		} sched_wakeup;
		struct {
			uint32_t id;		/* common_type */
		} other;
		struct {
			uint64_t count;		/* events lost just before tsc; 0: some, how many unknown */
		} lost;
	};
};

/* What one host CPU's data held (vperf_hostev_reader__cpu_stats). */
struct vperf_hostev_cpu_stats {
	uint32_t size;			/* sizeof(struct vperf_hostev_cpu_stats) */
	uint32_t cpu;
	uint64_t pages, events;		/* events: all decoded, OTHER included */
	uint64_t lost_in_pages;		/* lost events the pages counted (ring buffer overwrites) */
	uint64_t lost_pages_uncounted;	/* pages that said events were lost without saying how many */
	bool has_stats;			/* a TRACEFS_STATS chunk came: the next four are from it */
	uint64_t overrun;		/* events overwritten before they were read */
	uint64_t commit_overrun;	/* events lost to nested writes that ran off a page */
	uint64_t dropped;		/* events dropped (a full buffer without overwrite) */
	uint64_t entries;		/* events still in the buffer after the last read */
	uint64_t lost;			/* what this CPU counts toward vperf_hostev_reader__lost() */
};

struct vperf_hostev_reader;

/* Returns 0, or -errno (-ENOMEM, or a libtraceevent that cannot start). */
int vperf_hostev_reader__new(struct vperf_hostev_reader **out) __attribute__((warn_unused_result));
void vperf_hostev_reader__delete(struct vperf_hostev_reader *r);

/*
 * Each returns 0 or -errno (-EINVAL for input that is not what tracefs writes, -EEXIST for a
 * format given twice, -ENOMEM), with a message in vperf_hostev_reader__strerror().  Nothing is
 * kept from a call that failed; the reader stays usable.  Data is copied.
 */
int vperf_hostev_reader__add_header(struct vperf_hostev_reader *r, const char *text, size_t len);
int vperf_hostev_reader__add_format(struct vperf_hostev_reader *r, const char *system,
				    const char *name, const char *text, size_t len);
/* A TRACEFS_FORMAT payload: "system\0event\0" then the format text. */
int vperf_hostev_reader__add_format_chunk(struct vperf_hostev_reader *r, const void *payload,
					  size_t len);
/* Whole pages of the header's page size (after add_header); each page's structure is checked. */
int vperf_hostev_reader__add_pages(struct vperf_hostev_reader *r, uint32_t cpu, const void *data,
				   size_t len);
/* The text of per_cpu/cpu<N>/stats; a second one for a CPU replaces the first. */
int vperf_hostev_reader__add_stats(struct vperf_hostev_reader *r, uint32_t cpu, const char *text,
				   size_t len);

/* Also hand VPERF_HOSTEV_LOST events to the callback, where the pages say events were lost. */
void vperf_hostev_reader__report_lost(struct vperf_hostev_reader *r, bool on);

/*
 * Every event of every CPU, in time order (each CPU's events in their own order; CPUs merged by
 * time stamp, ties to the lower CPU).  cb returning non-zero stops the pass and is returned;
 * otherwise 0, or -errno with a message (an event shorter than its format says, for instance).
 * May be called again: each pass starts from the beginning.
 */
typedef int (*vperf_hostev_cb)(const struct vperf_hostev *ev, void *ctx);
int vperf_hostev_reader__read(struct vperf_hostev_reader *r, vperf_hostev_cb cb, void *ctx);

/*
 * Events lost on all CPUs: for each CPU, the larger of what its pages counted and its stats'
 * overrun (the same events, counted twice over), plus commit overrun, dropped and events left
 * unread.  Without a stats chunk, what the pages counted.  Pages that said "lost, count unknown"
 * add nothing here; vperf_hostev_reader__cpu_stats() counts them.
 */
uint64_t vperf_hostev_reader__lost(const struct vperf_hostev_reader *r);
/* Number of CPUs with pages or stats, and each one's figures (index < that number). */
unsigned int vperf_hostev_reader__nr_cpus(const struct vperf_hostev_reader *r);
int vperf_hostev_reader__cpu_stats(const struct vperf_hostev_reader *r, unsigned int index,
				   struct vperf_hostev_cpu_stats *st);

/* Fields the formats lack, "kvm:kvm_exit.isa kvm:kvm_entry.rip", or "" (after the formats). */
const char *vperf_hostev_reader__missing_fields(struct vperf_hostev_reader *r);
/* The last error, for a person. */
const char *vperf_hostev_reader__strerror(const struct vperf_hostev_reader *r);

#endif /* VPERF_RECORD_HOSTEVENTS_H */
