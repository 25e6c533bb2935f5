/* SPDX-License-Identifier: MIT */
/*
 * The host events reader's insides (hostevents.h), shared by hostevents.c (its checks of what
 * libtraceevent is given, the formats, pages and stats it keeps) and hostevents-read.c (the
 * pass over every CPU's pages in time order).  Calls go one way: none between them.
 */
#ifndef VPERF_RECORD_HOSTEVENTS_INT_H
#define VPERF_RECORD_HOSTEVENTS_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "hostevents.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)		((a) < (b) ? (a) : (b))
#define MAX(a, b)		((a) > (b) ? (a) : (b))

#define COMMIT_MASK		((1u << 27) - 1)
#define MISSED_EVENTS		(1u << 31)
#define MISSED_STORED		(1u << 30)
#define TYPE_PADDING		29
#define TYPE_TIME_EXTEND	30
#define TYPE_TIME_STAMP		31
#define MAX_CPU			(1u << 20)
#define PAGE_SLACK		16	/* zeros after the last page: kbuffer's look-ahead */
#define MAX_NAME		64

enum kind { NUM, STR };

/* The fields decoded, by name, into struct vperf_hostev. */
struct field_desc {
	enum vperf_hostev_type type;
	const char *name;
	size_t off;
	size_t size;
	enum kind kind;
};

#define M(t, m, k)                                                                      \
	{ VPERF_HOSTEV_##t, #m, offsetof(struct vperf_hostev, m),                        \
	  sizeof(((struct vperf_hostev *)0)->m), k }
#define F(t, s, m, k)                                                                   \
	{ VPERF_HOSTEV_##t, #m, offsetof(struct vperf_hostev, s.m),                      \
	  sizeof(((struct vperf_hostev *)0)->s.m), k }

static const struct field_desc fields[] = {
	F(KVM_ENTRY, kvm_entry, vcpu_id, NUM),
	F(KVM_ENTRY, kvm_entry, rip, NUM),
	F(KVM_EXIT, kvm_exit, vcpu_id, NUM),
	F(KVM_EXIT, kvm_exit, exit_reason, NUM),
	F(KVM_EXIT, kvm_exit, guest_rip, NUM),
	F(KVM_EXIT, kvm_exit, isa, NUM),
	F(KVM_EXIT, kvm_exit, info1, NUM),
	F(KVM_EXIT, kvm_exit, info2, NUM),
	F(KVM_INJ_VIRQ, kvm_inj_virq, vector, NUM),
	F(KVM_INJ_VIRQ, kvm_inj_virq, soft, NUM),
	F(KVM_INJ_VIRQ, kvm_inj_virq, reinjected, NUM),
	F(SCHED_SWITCH, sched_switch, prev_comm, STR),
	F(SCHED_SWITCH, sched_switch, prev_pid, NUM),
	F(SCHED_SWITCH, sched_switch, prev_prio, NUM),
	F(SCHED_SWITCH, sched_switch, prev_state, NUM),
	F(SCHED_SWITCH, sched_switch, next_comm, STR),
	F(SCHED_SWITCH, sched_switch, next_pid, NUM),
	F(SCHED_SWITCH, sched_switch, next_prio, NUM),
	F(SCHED_WAKEUP, sched_wakeup, comm, STR),
	F(SCHED_WAKEUP, sched_wakeup, pid, NUM),
	F(SCHED_WAKEUP, sched_wakeup, prio, NUM),
	F(SCHED_WAKEUP, sched_wakeup, target_cpu, NUM),
};
#define NR_FIELDS	ARRAY_SIZE(fields)

static const struct {
	const char *system, *name;
	enum vperf_hostev_type type;
} known[] = {
	{ "kvm", "kvm_entry", VPERF_HOSTEV_KVM_ENTRY },
	{ "kvm", "kvm_exit", VPERF_HOSTEV_KVM_EXIT },
	{ "kvm", "kvm_inj_virq", VPERF_HOSTEV_KVM_INJ_VIRQ },
	{ "sched", "sched_switch", VPERF_HOSTEV_SCHED_SWITCH },
	{ "sched", "sched_wakeup", VPERF_HOSTEV_SCHED_WAKEUP },
};

/* A field as this recording's format has it. */
struct field_at {
	int off, size;
	bool present;
	bool is_signed;
	bool dynamic, relative;		/* __data_loc / __rel_loc strings */
};

struct format {
	int id;
	enum vperf_hostev_type type;
	char system[MAX_NAME + 1], name[MAX_NAME + 1];
	struct field_at f[NR_FIELDS];	/* only those of this type are set */
	unsigned int need;		/* bytes an event of this format must have */
};

struct cpu_data {
	uint32_t cpu;
	uint8_t *pages;			/* nr_pages * page_size, then PAGE_SLACK zeros */
	size_t nr_pages, cap_pages;
	uint64_t events;		/* of the last pass */
	uint64_t lost_in_pages, lost_uncounted;
	bool has_stats;
	uint64_t overrun, commit_overrun, dropped, entries;
};

struct vperf_hostev_reader {
	struct tep_handle *tep;
	bool have_header;
	size_t page_size;		/* header_page: data offset + data size */
	unsigned int commit_size;	/* 8 (or 4: a 32-bit kernel) */
	unsigned int data_off;
	struct format *fmts;
	size_t nr_fmts;
	/* the common fields, from the first format (every format has the same) */
	bool have_common;
	struct field_at common_type, common_pid;
	struct cpu_data *cpus;
	size_t nr_cpus;
	bool report_lost;
	char missing[1024];
	char msg[512];
};

static inline int fail(struct vperf_hostev_reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int fail(struct vperf_hostev_reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return err;
}

static inline uint64_t get_le(const uint8_t *p, unsigned int size)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

#endif /* VPERF_RECORD_HOSTEVENTS_INT_H */
