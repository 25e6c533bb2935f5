/* SPDX-License-Identifier: MIT */
/*
 * The local recorder's insides (local.h), shared by its files: local.c (events, rings, the
 * queue, the library's face), local-sched.c (the sched tracepoints), local-meta.c (what the
 * recording says beyond the rings: /proc's mappings, kernel symbols, the vDSO, the environment),
 * and local-base.c (what the other three use).  Calls go one way: local.c to the others, and
 * those to local-base.c.
 */
#ifndef VPERF_RECORD_LOCAL_INT_H
#define VPERF_RECORD_LOCAL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <linux/perf_event.h>

#include "ctf.h"
#include "local.h"
#include "ordered.h"
#include "perfdec.h"
#include "schema.h"

#define FLUSH_MS		250	/* write packets (what a killed recorder leaves) */
#define HOLD_NS			20000000ull	/* events younger than this wait a round: another
						 * CPU's ring may still hold older ones */
#define EXIT_CODE_UNKNOWN	INT64_MIN




struct ring {
	int cpu;
	int fd;				/* the event whose buffer it is */
	void *base;
	size_t len;
	struct vperf_perf_ring r;
};

enum pend_kind { P_SAMPLE, P_FORK, P_EXEC, P_EXIT, P_LOST, P_SWITCH, P_SCHED_SWITCH, P_SCHED_WAKEUP,
		 P_SCHED_WAKING, P_MMAP, P_COMM };

/* A decoded record waiting to be written in time order. */
struct pend {
	struct vperf_ordered_ev h;	/* its time, first */
	enum pend_kind kind;
	uint32_t cpu;
	uint8_t layer;
	uint32_t a, b, c, d;		/* pids and tids; a sample's event index in c */
	uint64_t ip, period;		/* a sample's; P_LOST: the count in period */
	uint64_t start, len, pgoff;	/* P_MMAP's mapping; its prot in c */
	char *name;			/* P_MMAP's file name, malloc'd */
	uint64_t *chain;		/* malloc'd */
	uint32_t nr_chain;
	char comm[VPERF_PERFDEC_COMM_LEN + 1];
	char comm2[VPERF_PERFDEC_COMM_LEN + 1];	/* sched_switch's next_comm */
	int64_t state;				/* sched_switch's prev_state */
};

/* The sched tracepoints, system-wide (where allowed), filtered to the recorded threads. */
enum { TP_SWITCH, TP_WAKEUP, TP_WAKING, NR_TP };
#define TP_INDEX(tp)	(VPERF_LOCAL_MAX_EVENTS + (tp))	/* their index in the decoder */

static const char *const tp_names[NR_TP] = { "sched_switch", "sched_wakeup", "sched_waking" };

/*
 * The waker: sched_waking runs in the waker's context, sched_wakeup may run in an IPI on the
 * wakee's CPU (a queued wakeup), so each wakee's last waking names it; a waking in an interrupt,
 * softirq or NMI (the tracepoint's common_flags, the kernel's TRACE_FLAG_*) has no waker task.
 */
#define TRACE_FLAG_HARDIRQ	0x08
#define TRACE_FLAG_SOFTIRQ	0x10
#define TRACE_FLAG_NMI		0x40
#define WAKER_SLOTS		1024

enum { F_PREV_COMM, F_PREV_PID, F_PREV_STATE, F_NEXT_COMM, F_NEXT_PID, NR_SWITCH_F };
enum { F_W_PID, F_W_TARGET_CPU, F_W_FLAGS, NR_WAKEUP_F };

struct sched_tp {
	bool on;			/* opened on every CPU */
	long id[NR_TP];
	struct vperf_tpfield sw[NR_SWITCH_F], wk[NR_TP][NR_WAKEUP_F];	/* wk: wakeup, waking */
	struct { pid_t wakee, waker; } wakers[WAKER_SLOTS];	/* each wakee's last waking */
	char why[512];			/* why not, when !on */
};

struct vperf_local {
	struct vperf_local_config cfg;	/* a copy; events[] may fall back */
	char why[512];			/* the last failure, for a person */
	struct vperf_local_stats st;
	uint64_t last_flush;
	char *dir;
	struct perf_event_attr attr[VPERF_LOCAL_MAX_EVENTS];
	int *fds;
	size_t nr_fds, cap_fds;
	struct ring *rings;
	size_t nr_rings;
	int *cpus;
	size_t nr_cpus;
	struct vperf_perfdec dec;
	bool guest;			/* in a vperf guest: guest_* layers */
	struct sched_tp sched;
	pid_t *tids;			/* the recorded threads so far (sorted): the sched filter */
	size_t nr_tids, cap_tids;
	bool user_only;			/* the kernel refused kernel samples */
	unsigned int pages_note;	/* said that the rings shrank */
	struct vperf_ctf *ctf;
	uint64_t *kips;			/* the kernel addresses samples hit: a hash set (0: empty) */
	size_t nr_kips, cap_kips;
	struct vperf_ordered pend;	/* struct pend, in time order */
	struct vperf_schema schema;
	uint64_t last_ts, first_ts;
	size_t page;
	/* figures */
	uint64_t events, samples, samples_by[VPERF_LOCAL_MAX_EVENTS], forks, execs, exits, switches;
	uint64_t switch_outs, sched_switches, sched_switch_outs, sched_wakeups, sched_other;
	uint64_t lost_ring, lost_samples, throttles, bad_records, bad_bytes, chain_trunc;
	uint64_t mmaps, comms, ksyms;
	char ksyms_why[160];		/* why no kernel symbols, when none */
	char vdso_note[160];		/* the vDSO image kept, or why none */
	char bad_why[160];
};

/* local-base.c */
int vperf__local_fail(struct vperf_local *rc, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void vperf__local_note(struct vperf_local *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t vperf__local_now_ns(clockid_t clk);
int vperf__local_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu);
int vperf__local_add_fd(struct vperf_local *rc, int fd);
struct pend *vperf__local_pend_new(struct vperf_local *rc);
uint8_t vperf__local_kernel_layer(const struct vperf_local *rc);
uint8_t vperf__local_user_layer(const struct vperf_local *rc);
bool vperf__local_tid_recorded(const struct vperf_local *rc, pid_t tid);
int vperf__local_tid_add(struct vperf_local *rc, pid_t tid);
int vperf__local_kip_add(struct vperf_local *rc, uint64_t ip);

/* local-sched.c */
void vperf__local_open_sched(struct vperf_local *rc);
void vperf__local_enable_sched(struct vperf_local *rc);
int vperf__local_take_sched(struct vperf_local *rc, const struct vperf_perfrec *r);

/* local-meta.c */
int vperf__local_synth_process(struct vperf_local *rc, const pid_t *tids, size_t nr_tids,
			       uint64_t ts);
int vperf__local_emit_kernel_symbols(struct vperf_local *rc);
void vperf__local_keep_vdso(struct vperf_local *rc, const char *dir);
int vperf__local_write_summary(struct vperf_local *rc, int status, bool have_status);
int vperf__local_make_writer(struct vperf_local *rc, const char *dir, struct vperf_schema *sch);

#endif /* VPERF_RECORD_LOCAL_INT_H */
