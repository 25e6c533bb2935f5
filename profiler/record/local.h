/* SPDX-License-Identifier: MIT */
/*
 * The recorder of the machine vperf runs on (libvperf_record), what `vperf record` is built on:
 * perf record's design.  One event per (thread, CPU) with inherit, every event of a CPU writing
 * into one ring buffer (PERF_EVENT_IOC_SET_OUTPUT); the sched tracepoints system-wide, where
 * allowed, filtered to the recorded threads; the rings drained into the time-ordering queue
 * (ordered.h) and written in the recording schema (schema.h) by the CTF writer (ctf.h), whose
 * flushes leave a trace babeltrace2 reads whenever the recorder is killed.  Timestamps are
 * CLOCK_MONOTONIC (use_clockid).
 *
 *	struct vperf_local_config cfg = { .size = sizeof(cfg), .events = { "cycles" },
 *					  .nr_events = 1, .freq = 4000, .pages = 128,
 *					  .command = true, .target = "command: ./app" };
 *	err = vperf_local__new(&cfg, &child, 1, &l, why, sizeof(why));
 *	err = vperf_local__create(l, "vperf.data", why, sizeof(why));
 *	(start the command)
 *	while (running) { poll(vperf_local__fds(l)...); err = vperf_local__step(l); }
 *	err = vperf_local__finish(l, status, true);
 *	vperf_local__delete(l);
 *
 * Conventions: 0 or -errno; after a failure vperf_local__strerror() says what, for a person.
 * The library never prints: what a person should know (a fallback taken) goes to cfg.note.
 * Not thread safe.
 */
#ifndef VPERF_RECORD_LOCAL_H
#define VPERF_RECORD_LOCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VPERF_LOCAL_MAX_EVENTS	16
#define VPERF_LOCAL_MAX_STACK	127	/* kernel.perf_event_max_stack's default */

struct vperf_local_config {
	size_t size;			/* sizeof(struct vperf_local_config) */
	/* The events sampled, each on its own (libvperf's names, `vperf list`). */
	const char *events[VPERF_LOCAL_MAX_EVENTS];
	int nr_events;
	bool default_event;		/* events[0] is the default cycles: cpu-clock without a PMU */
	uint64_t freq, period;		/* about freq samples a second, or one every period */
	bool callchain;			/* up to VPERF_LOCAL_MAX_STACK frames */
	unsigned int pages;		/* data pages per CPU ring, a power of 2 */
	bool command;			/* the threads are a command that has not exec'd yet: the
					 * events start at its exec; else a running process, pid */
	pid_t pid;
	const char *target;		/* what is recorded, for the environment ("command: ...") */
	/* What a person should know, one line without a newline; NULL: nothing is said. */
	void (*note)(void *arg, const char *msg);
	void *note_arg;
};

/* The figures of a recording so far. */
struct vperf_local_stats {
	uint64_t events, samples, samples_by[VPERF_LOCAL_MAX_EVENTS];
	uint64_t forks, execs, exits, switches, mmaps, comms, ksyms;
	uint64_t lost_ring, lost_samples, throttles, late, bad_records;
	const char *bad_why;		/* the first record that could not be decoded */
	uint64_t first_ts, last_ts;	/* of the events written */
	size_t nr_cpus;
	bool sched;			/* the sched tracepoints are recorded */
	const char *sched_why;		/* why not */
	const char *const *event_names;	/* the events sampled (after any fallback) */
	int nr_events;
};

struct vperf_local;

/*
 * Open the events for the threads tids (and what they start) on every online CPU, with perf's
 * fallbacks (each said through cfg.note): cpu-clock for a default cycles without a PMU, user
 * space only where kernel samples are not allowed, smaller rings over
 * kernel.perf_event_mlock_kb.  Nothing is recorded yet.  On failure *out is NULL and why says
 * what (-EINVAL a bad event, -EACCES and others from perf_event_open, -ENOMEM).
 */
int vperf_local__new(const struct vperf_local_config *cfg, const pid_t *tids, size_t nr_tids,
		     struct vperf_local **out, char *why, size_t why_len)
	__attribute__((warn_unused_result));

/* Close everything; the recording (if any) keeps what was flushed.  NULL is fine. */
void vperf_local__delete(struct vperf_local *l);

const char *vperf_local__strerror(const struct vperf_local *l);

/*
 * Create the recording dir (vperf_ctf__new()'s rules) and start the sched tracepoints.  For a
 * running process (not cfg.command) its mappings and thread names are taken from /proc and its
 * events enabled; a command's start at its exec.  -errno with why.
 */
int vperf_local__create(struct vperf_local *l, const char *dir, char *why, size_t why_len)
	__attribute__((warn_unused_result));

/* The ring descriptors to poll for POLLIN (a ring past its watermark). */
size_t vperf_local__nr_fds(const struct vperf_local *l);
int vperf_local__fd(const struct vperf_local *l, size_t i);

/*
 * Drain the rings; write what is older than a while ago (another CPU's ring may still hold
 * older events); flush the writer every 250 ms.  0 or -errno (strerror says what).
 */
int vperf_local__step(struct vperf_local *l);

/*
 * Stop the events, drain and write everything, then the kernel symbols the samples hit, the
 * vDSO's image (dir/.vdso.so) and the summary (the command's exit status if have_status), and
 * flush.  0 or -errno.
 */
int vperf_local__finish(struct vperf_local *l, int status, bool have_status);

/* Stop the events (a recording cut short). */
void vperf_local__stop(struct vperf_local *l);

const struct vperf_local_stats *vperf_local__stats(struct vperf_local *l);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_LOCAL_H */
