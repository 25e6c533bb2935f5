/* SPDX-License-Identifier: MIT */
/*
 * libvperf: per-thread performance counters, one API on bare metal and in
 * guests.
 *
 * An event set (struct vperf_evset) is a list of events, named in libpfm4
 * syntax, counted on one target: the calling thread, another thread, or a
 * process and everything it creates after the set is opened.
 *
 *	struct vperf_evset *es;
 *	struct vperf_count c[2];
 *
 *	if (vperf_evset__new(NULL, &es) ||
 *	    vperf_evset__add(es, "task-clock") < 0 ||
 *	    vperf_evset__add(es, "context-switches") < 0 ||
 *	    vperf_evset__open(es) || vperf_evset__start(es))
 *		fprintf(stderr, "%s\n", vperf_evset__strerror(es));
 *	work();
 *	vperf_evset__read(es, c, 2);
 *	vperf_evset__delete(es);
 *
 * Conventions
 *   - Functions return 0 (or a non-negative index) on success and a negative
 *     errno on failure; vperf_evset__strerror() then says what failed and
 *     why, in words fit for a person.
 *   - The library never prints and never exits.  Install a logger with
 *     vperf_set_print() to see debug messages.
 *   - Structs passed in carry their size in their first member, so that
 *     newer headers and older libraries (and the reverse) agree.
 *
 * Thread safety
 *   - Different event sets may be used from different threads at once.
 *   - One event set must not be used from two threads at once, with one
 *     exception: vperf_evset__read() and vperf_evset__read_one() on an open
 *     set may run concurrently with each other.
 *   - A set whose target is VPERF_TARGET_SELF counts the thread that called
 *     vperf_evset__open(); the fast user-mode read path (rdpmc) works only
 *     in that thread, other threads transparently fall back to read(2).
 *     Likewise the pv backend brings the thread page up to date only in
 *     that thread; other threads read the page as of its last switch-out.
 *   - Sampling callbacks run in signal context in the sampled thread: they
 *     may only call async-signal-safe functions (no malloc, no stdio).
 */
#ifndef VPERF_VPERF_H
#define VPERF_VPERF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef VPERF_API
#define VPERF_API __attribute__((visibility("default")))
#endif

#define VPERF_VERSION_MAJOR 0
#define VPERF_VERSION_MINOR 1
#define VPERF_VERSION_PATCH 0

/* "0.1.0": the version of the library actually loaded. */
VPERF_API const char *vperf_version(void);

/* ---- logging -------------------------------------------------------- */

enum vperf_log_level {
	VPERF_LOG_WARN,
	VPERF_LOG_INFO,
	VPERF_LOG_DEBUG,
};

typedef int (*vperf_print_fn)(enum vperf_log_level level, const char *fmt,
			      va_list ap);

/* Install a logger (NULL: silent, the default).  Not thread safe. */
VPERF_API void vperf_set_print(vperf_print_fn fn);

/* ---- backends ------------------------------------------------------- */

/*
 * Backends:
 *   "pv"   the paravirtual device of a vperf guest (/dev/vperf, from
 *          vperf_guest.ko): the virtualization events (vperf::vcpu-clock,
 *          vperf::steal, vperf::exits) per guest thread; the set's other
 *          events are counted through "perf" on its behalf
 *   "perf" Linux perf_event_open(2): bare metal, or a guest with a vPMU
 * Automatic selection (opts.backend == NULL) gives a set "perf", and moves
 * it to "pv" when vperf_evset__add() takes a vperf:: event and "pv" is
 * usable here.  The environment variable VPERF_PV_DEVICE names another
 * device node for "pv" (tests; ignored in set-uid programs).
 * vperf_backend_available() says whether a backend can be used here and,
 * if not, why (into why, when why is not NULL).
 */
VPERF_API int vperf_backend_count(void);
/* The n-th backend's name, 0 <= n < vperf_backend_count(); else NULL. */
VPERF_API const char *vperf_backend_nth(int n);
/*
 * 0 if backend name can be used on this host; otherwise a negative errno
 * (-ENOENT: no such backend, -ENODEV: its device is missing or unusable,
 * -EACCES: no permission to use it, -ENOSYS: not supported by this kernel
 * or build) and why says why, NUL-terminated.
 */
VPERF_API int vperf_backend_available(const char *name, char *why,
				      size_t len);

/* ---- event sets ----------------------------------------------------- */

struct vperf_evset;

/* At most this many events in one set. */
#define VPERF_EVSET_MAX_EVENTS	64

enum vperf_target {
	VPERF_TARGET_SELF = 0,	/* the thread calling vperf_evset__open() */
	VPERF_TARGET_THREAD,	/* one thread: opts.pid is its tid */
	VPERF_TARGET_PROCESS,	/* opts.pid's threads, plus the threads and
				 * child processes they create afterwards */
};

/* Open the events as one group: scheduled together, read in one call. */
#define VPERF_EVSET_GROUP		(1u << 0)
/* Counting starts when the target next calls execve() (for `stat -- cmd`). */
#define VPERF_EVSET_ENABLE_ON_EXEC	(1u << 1)
/* Keep per-thread counts for a VPERF_TARGET_PROCESS target. */
#define VPERF_EVSET_PER_THREAD		(1u << 2)
/*
 * pv backend, VPERF_TARGET_SELF only: read the vperf:: events from the
 * thread page alone (VPERF_READ_PAGE): no system call, no hypercall, and
 * counts as of the thread's last switch-out, so they lag by the current
 * time slice.  Without it a read in the opening thread first brings the
 * page up to date (VPERF_READ_PAGE_SYNC: one ioctl, one hypercall).  Other
 * events, and sets on other backends, are not affected.
 */
#define VPERF_EVSET_PAGE_ONLY		(1u << 3)

struct vperf_evset_opts {
	size_t size;		/* sizeof(struct vperf_evset_opts) */
	const char *backend;	/* "perf", "pv", or NULL: automatic (see
				 * "backends" above) */
	enum vperf_target target;
	pid_t pid;		/* tid or pid, see enum vperf_target */
	uint32_t flags;		/* VPERF_EVSET_* */
};

/*
 * Create an empty set.  opts may be NULL: the calling thread, automatic
 * backend, no flags.  On failure *out is NULL and nothing is allocated.
 */
VPERF_API int vperf_evset__new(const struct vperf_evset_opts *opts,
			       struct vperf_evset **out)
	__attribute__((warn_unused_result));

/* Close and free everything.  NULL is fine. */
VPERF_API void vperf_evset__delete(struct vperf_evset *es);

/*
 * Add an event by name, before open.  Names are libpfm4 event strings
 * ("instructions", "cycles:u", "perf::TASK-CLOCK",
 * "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS"), perf's generic names
 * ("task-clock", "context-switches", "page-faults"), and perf's :u / :k
 * modifiers, and the virtualization events "vperf::vcpu-clock",
 * "vperf::steal" and "vperf::exits" (pv backend; an automatic set moves to
 * it, see "backends").  Returns the event's index, or -ENOENT for an
 * unknown name (the error string then suggests close names), -EINVAL for a
 * bad modifier, -EBUSY if the set is already open, -EOPNOTSUPP for a
 * vperf:: event the pv backend cannot count here (the error string says
 * why: no /dev/vperf, or an event vperf_guest.ko does not count).
 */
VPERF_API int vperf_evset__add(struct vperf_evset *es, const char *name)
	__attribute__((warn_unused_result));

VPERF_API int vperf_evset__nr_events(const struct vperf_evset *es);
/* The name as given to vperf_evset__add(); NULL for a bad index. */
VPERF_API const char *vperf_evset__event_name(const struct vperf_evset *es,
					      int idx);
/* The canonical name the backend resolved it to (libpfm4 fstr). */
VPERF_API const char *vperf_evset__event_canon(const struct vperf_evset *es,
					       int idx);

/*
 * Open every event.  Counting starts with vperf_evset__start(), or at the
 * target's next execve() with VPERF_EVSET_ENABLE_ON_EXEC (the pv backend's
 * events: at open, as vperf_guest.ko cannot wait for an exec).  Errors:
 * -ENOENT / -EOPNOTSUPP an event this host cannot count (no PMU),
 * -EACCES / -EPERM refused by kernel.perf_event_paranoid (or by
 * vperf_guest.ko's paranoid parameter), -ESRCH no such target, -EBUSY
 * (pv) the thread is already counted by another pv set, -EPROTO (pv)
 * vperf_guest.ko and libvperf do not match; vperf_evset__strerror() says
 * which event and what to do.  On failure nothing stays open.
 */
VPERF_API int vperf_evset__open(struct vperf_evset *es)
	__attribute__((warn_unused_result));

/*
 * Start, stop (counts freeze, and are still read) and reset (values back
 * to zero; enabled and running times go on).  The pv backend's module has
 * no enable switch: it keeps per-thread baselines in the library, with the
 * same results.
 */
VPERF_API int vperf_evset__start(struct vperf_evset *es);
VPERF_API int vperf_evset__stop(struct vperf_evset *es);
VPERF_API int vperf_evset__reset(struct vperf_evset *es);

/* The backend the set uses ("perf", "pv"); the chosen one once created. */
VPERF_API const char *vperf_backend_name(const struct vperf_evset *es);

/* Why the last call on es failed, for a person.  Never NULL. */
VPERF_API const char *vperf_evset__strerror(const struct vperf_evset *es);
/*
 * The index of the event the last failed call was about (e.g. the event
 * vperf_evset__open() could not open), or -1 if it was about no one event.
 */
VPERF_API int vperf_evset__error_event(const struct vperf_evset *es);

/* ---- reading -------------------------------------------------------- */

/* The event never ran (time_running == 0): value means nothing. */
#define VPERF_COUNT_NOT_COUNTED	(1u << 0)
/* The event was multiplexed: value = raw * enabled / running. */
#define VPERF_COUNT_SCALED	(1u << 1)
/*
 * Only user space is counted although the name asked for more: the
 * kernel refused kernel counting (kernel.perf_event_paranoid), and the
 * library fell back as perf does.  perf shows such an event as "name:u".
 */
#define VPERF_COUNT_USER_ONLY	(1u << 2)

struct vperf_count {
	uint64_t value;		/* scaled estimate, equal to raw if not
				 * multiplexed */
	uint64_t raw;		/* what the counter actually counted */
	uint64_t enabled;	/* ns the event was enabled */
	uint64_t running;	/* ns the event was on a counter */
	uint32_t flags;		/* VPERF_COUNT_* */
	uint32_t reserved;
};

/*
 * Read the first n events (n <= vperf_evset__nr_events) into counts.
 * For a VPERF_TARGET_PROCESS target, the sum over all its threads.
 */
VPERF_API int vperf_evset__read(struct vperf_evset *es,
				struct vperf_count *counts, size_t n);
VPERF_API int vperf_evset__read_one(struct vperf_evset *es, int idx,
				    struct vperf_count *count);

enum vperf_read_path {
	VPERF_READ_SYSCALL,	/* a system call: read(2) on the event (perf);
				 * the VPERF_IOC_THREAD_LIST ioctl (pv, other
				 * threads and processes: counts as of each
				 * thread's last switch-out, no hypercall) */
	VPERF_READ_RDPMC,	/* user-mode rdpmc through the perf mmap page */
	VPERF_READ_PAGE,	/* pv: the thread page alone, no system call:
				 * counts as of the thread's last switch-out
				 * (VPERF_EVSET_PAGE_ONLY, or a read from
				 * another thread than the opener) */
	VPERF_READ_PAGE_SYNC,	/* pv: VPERF_IOC_THREAD_READ (one ioctl, one
				 * hypercall) makes the thread page exact,
				 * then the page: the default for
				 * VPERF_TARGET_SELF without a doorbell */
	VPERF_READ_DOORBELL,	/* pv: the thread page plus one load of the
				 * device's doorbell page per event (one VM
				 * exit each, no system call): exact; the
				 * default for VPERF_TARGET_SELF where the
				 * device has a doorbell */
};

/* How reads of event idx are done; decided at open.  -EINVAL if not open. */
VPERF_API int vperf_evset__read_path(const struct vperf_evset *es, int idx);
VPERF_API const char *vperf_read_path_name(int path);

/* ---- the inline page read (pv, VPERF_TARGET_SELF) --------------------- */

/*
 * The cheapest read there is: the caller loads a vperf:: event's counter
 * from the opening thread's page itself, with vperf_page_read() below,
 * inlined - no call into libvperf, no system call, no VM exit.  What it
 * gives is the page's raw count: the thread's count since the set was
 * opened, as of its last switch-out (VPERF_READ_PAGE's lag), untouched by
 * vperf_evset__start/stop/reset and not scaled.  Take differences of two
 * reads around the code to measure.  (bench/guest: a few loads against a
 * library read's calls and returns, ~10x fewer instructions under TCG.)
 *
 * vperf_evset__page_ref() fills ref for event idx of an open set (the
 * caller sets ref->size = sizeof(*ref) first): 0, or -EINVAL (no such
 * event, a bad size), -EBADF (not open), -EOPNOTSUPP (not a vperf::
 * event on the pv backend with a VPERF_TARGET_SELF target).  ref stays
 * valid until the set is deleted; a read from another thread than the
 * opener gives the opener's count.
 */
struct vperf_page_ref {
	size_t size;			/* in: sizeof(struct vperf_page_ref) */
	const volatile void *page;	/* the thread page, mapped read-only */
	uint32_t slot;			/* the counter's slot in it */
	uint32_t reserved;
};

VPERF_API int vperf_evset__page_ref(const struct vperf_evset *es, int idx,
				    struct vperf_page_ref *ref);

/* The thread page's layout as far as vperf_page_read() needs it (ABI 1:
 * struct vperf_thread_page in vperf_guest_uapi.h; libvperf asserts it). */
#define VPERF_PAGE_SEQ_OFFSET		8	/* u32, odd while written */
#define VPERF_PAGE_COUNTERS_OFFSET	48	/* counters[], value first */
#define VPERF_PAGE_COUNTER_SIZE		24
#define VPERF_PAGE_READ_TRIES		100000	/* then -EAGAIN: a writer on another vCPU
						 * may be preempted by the host */

/*
 * The counter of ref into *value: 0, or -EAGAIN when the kernel kept
 * writing the page (seq odd or changed) for VPERF_PAGE_READ_TRIES tries.
 */
static inline int vperf_page_read(const struct vperf_page_ref *ref, uint64_t *value)
{
	const volatile char *pg = (const volatile char *)ref->page;
	const volatile uint32_t *seqp = (const volatile uint32_t *)(pg + VPERF_PAGE_SEQ_OFFSET);
	const volatile uint64_t *v = (const volatile uint64_t *)(pg + VPERF_PAGE_COUNTERS_OFFSET +
								 (size_t)ref->slot * VPERF_PAGE_COUNTER_SIZE);

	for (unsigned int i = 0; i < VPERF_PAGE_READ_TRIES; i++) {
		uint32_t seq = __atomic_load_n(seqp, __ATOMIC_ACQUIRE);
		uint64_t val = *v;

		__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* the value before the second load */
		if (!(seq & 1) && __atomic_load_n(seqp, __ATOMIC_RELAXED) == seq) {
			*value = val;
			return 0;
		}
	}
	return -EAGAIN;
}

/* ---- per-thread counts (VPERF_EVSET_PER_THREAD) ---------------------- */

/*
 * A VPERF_TARGET_PROCESS set opened with VPERF_EVSET_PER_THREAD records
 * counts per thread: threads that existed at open, and threads created
 * afterwards once they have exited (the kernel reports an inherited
 * counter when its thread exits).  Call vperf_evset__poll_threads() from
 * time to time while the target runs (it drains the kernel's buffers; it
 * does not block), and once after it has exited.  Counts of a live
 * inherited thread are included in the thread that created it until it
 * exits.  Records the kernel dropped (buffer full) are counted, never
 * guessed: see vperf_evset__threads_lost().
 *
 * The pv backend's vperf:: events differ: vperf_guest.ko keeps a row per
 * thread, live or exited, so every thread has its own counts from its
 * first poll on (as of its last switch-out while it lives), and
 * vperf_evset__threads_lost() also counts the threads the module could not
 * follow (no context: out of memory or its limit).  Rows of the set's
 * other events and of its vperf:: events are merged by pid and tid; an
 * event one side has not reported for a thread reads
 * VPERF_COUNT_NOT_COUNTED there.
 */
VPERF_API int vperf_evset__poll_threads(struct vperf_evset *es);
VPERF_API int vperf_evset__nr_threads(const struct vperf_evset *es);
/* Thread i's pid, tid and its first n counts. */
VPERF_API int vperf_evset__read_thread(struct vperf_evset *es, int i,
				       pid_t *pid, pid_t *tid,
				       struct vperf_count *counts, size_t n);
VPERF_API uint64_t vperf_evset__threads_lost(const struct vperf_evset *es);
/*
 * Thread i's name (its comm: set by exec or prctl(PR_SET_NAME), as the
 * kernel reported it while the thread lived), or "" if never seen.
 */
VPERF_API const char *vperf_evset__thread_comm(const struct vperf_evset *es, int i);

/* ---- sampling ------------------------------------------------------- */

#define VPERF_MAX_CALLCHAIN 64

struct vperf_sample {
	size_t size;		/* sizeof(struct vperf_sample) */
	int event;		/* index of the event that overflowed */
	pid_t pid, tid;		/* the sampled (and current) thread */
	uint64_t ip;		/* user-mode instruction pointer */
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	uint64_t period;	/* events since the previous sample */
	uint32_t nr_frames;	/* callchain[0] == ip, then callers */
	uint32_t reserved;
	const uint64_t *callchain;
};

typedef void (*vperf_sample_fn)(const struct vperf_sample *s, void *arg);

struct vperf_sample_opts {
	size_t size;		/* sizeof(struct vperf_sample_opts) */
	uint64_t period;	/* sample every period events, or */
	uint64_t freq;		/* about freq samples per second (if !period) */
	vperf_sample_fn fn;	/* run in the sampled thread, signal context */
	void *arg;
	uint32_t max_frames;	/* callchain depth, 0: none,
				 * at most VPERF_MAX_CALLCHAIN */
	int signo;		/* 0: SIGRTMIN + 4 */
};

/*
 * Sample on event idx's overflow, before open.  Only for a
 * VPERF_TARGET_SELF set: the callback runs in the thread that opened it
 * (each thread that wants samples opens its own set).  Samples arrive
 * between vperf_evset__start() and vperf_evset__stop().  Of the vperf::
 * events only vperf::vcpu-clock samples (pv backend: vperf_guest.ko's
 * overflow NMIs), with a period in ns of at least 100000 and no frequency
 * mode, one per set; the others are -EOPNOTSUPP.
 */
VPERF_API int vperf_evset__sample(struct vperf_evset *es, int idx,
				  const struct vperf_sample_opts *opts)
	__attribute__((warn_unused_result));

/* Samples the kernel took that the library could not deliver. */
VPERF_API uint64_t vperf_evset__samples_lost(const struct vperf_evset *es);

/* ---- trace markers -------------------------------------------------- */

/*
 * Markers put the application's own events into the guest's trace: the
 * per-vCPU rings vperf_guest.ko fills when tracing is on (its `trace`
 * parameter) and the host records next to the guest's scheduling and
 * interrupts (docs/abi.md 7.3).  A marker has a name (1..64 bytes of
 * UTF-8), a value, and a kind: the begin or the end of a span, or an
 * instant.  It is stamped with the guest's time stamp counter (rdtsc)
 * when it is made, and the kernel adds the CPU, process and thread.
 *
 *	vperf_trace_mark("parse", n, VPERF_MARK_BEGIN);
 *	parse(n);
 *	vperf_trace_mark("parse", n, VPERF_MARK_END);
 *
 * The first marker of a thread maps the thread's own marker buffer from
 * /dev/vperf (a few system calls); every later one is a few stores into
 * it: no system call, no VM exit.  vperf_guest.ko copies the buffer into
 * the trace when the thread is switched out, when it exits, and at
 * vperf_trace_flush().  The buffer holds $VPERF_MARK_KB KiB (a power of 2
 * from 4 to 1024; default 64, other values are ignored) of 48..104-byte
 * markers; a marker that finds it full is dropped and counted
 * (vperf_trace_marks_lost()), and the trace says how many were lost: never
 * silently.  The environment variable VPERF_PV_DEVICE names another device
 * node, as for the "pv" backend.
 *
 * Returns 0, or a negative errno:
 *   -EINVAL      a name that is NULL, empty, longer than 64 bytes or not
 *                UTF-8, or an unknown kind (no system call is made)
 *   -ENOSPC      the buffer is full: the marker is counted lost
 *   -ENODEV      no /dev/vperf (not a vperf guest, or vperf_guest.ko is not
 *                loaded), or a hypervisor without trace rings
 *   -ENODATA     tracing is off (vperf_guest.ko's parameter `trace` is 0)
 *   -EOPNOTSUPP  a vperf_guest.ko without markers, or not x86
 *   -EACCES, -ENOMEM, -EPROTO (module and library do not match), -EBUSY
 *                (the thread's buffer was mapped through another open of
 *                /dev/vperf, not libvperf's)
 * A thread whose first marker failed (other than -EINVAL) gets the same
 * error from every later one, without trying again.
 *
 * Markers are per thread and need no event set.  Not async-signal-safe: a
 * signal handler must not make markers in a thread that may be making one.
 * A child of fork() maps a buffer of its own at its first marker.
 */
enum vperf_mark_kind {
	VPERF_MARK_BEGIN = 0,	/* a span starts */
	VPERF_MARK_END = 1,	/* the span of the same name ends */
	VPERF_MARK_INSTANT = 2,	/* a point in time */
};

VPERF_API int vperf_trace_mark(const char *name, uint64_t value, enum vperf_mark_kind kind);

/*
 * Copy the calling thread's markers into the trace now (one system call):
 * 0 (also when the thread made none), or the error its first marker got,
 * or -ENODATA (tracing is off).
 */
VPERF_API int vperf_trace_flush(void);

/* Markers the calling thread dropped because its buffer was full. */
VPERF_API uint64_t vperf_trace_marks_lost(void);

/*
 * In a vperf guest, sample process pid (0: the caller) and every thread and
 * process it creates from now on, on event (a perf event's name, as for
 * vperf_event__perf_attr(); cpu-clock where the guest has no PMU), every
 * period events, or about period times a second with VPERF_TRACE_SAMPLE_FREQ,
 * with the user callchain with VPERF_TRACE_SAMPLE_CALLCHAIN.  The samples go
 * into the guest's trace rings (vperf_guest.ko loaded with trace=1), which
 * the host records (`vperf vm record -F/-c/-g` runs `vperf record
 * --into-host`, which calls this).  Kernel mode is sampled too unless the
 * event's name says user mode only (":u"), or the caller may not sample it
 * (kernel.perf_event_paranoid 2 or more without CAP_PERFMON): then, as perf
 * does, user mode only.  Returns a file descriptor: sampling lasts
 * until it is closed; or -errno with why: -ENODEV no /dev/vperf, -ENODATA
 * tracing is off, -ESRCH no such process, -EACCES the module's paranoid
 * setting, -EOPNOTSUPP a module without the sampler, -ENOENT an unknown
 * event or one the guest kernel cannot sample, -EINVAL bad arguments.
 */
#define VPERF_TRACE_SAMPLE_FREQ		(1u << 0)
#define VPERF_TRACE_SAMPLE_CALLCHAIN	(1u << 1)

VPERF_API int vperf_trace_sample_task(pid_t pid, const char *event, uint64_t period,
				      unsigned int flags, char *why, size_t why_len);

/* ---- perf events for tools ----------------------------------------- */

struct perf_event_attr;

/*
 * For a tool that opens perf events itself (vperf record: sampling other
 * processes through per-CPU ring buffers, which an event set does not do).
 * Encode the event name, in the syntax vperf_evset__add() takes for the
 * "perf" backend (libpfm4 names with modifiers, the kernel's software
 * events; not vperf:: events), into *attr: the type, config and exclusions,
 * with everything else zero.  attr_size is the caller's
 * sizeof(struct perf_event_attr); attr->size is set to the bytes filled
 * (the smaller of the caller's and the library's).  Returns 0, or -errno
 * with a message for a person in err: -ENOENT an unknown name (with
 * suggestions), -EINVAL an empty or malformed name or attr_size smaller
 * than the first perf_event_attr, others from libpfm4.
 */
VPERF_API int vperf_event__perf_attr(const char *name, struct perf_event_attr *attr,
				     size_t attr_size, char *err, size_t err_len);

/*
 * Why perf_event_open(2) of event name with attr, for pid, failed with
 * -err, in words for a person: no PMU on this host, perf_event_paranoid
 * and what to do about it, no such process, too many files...
 */
VPERF_API void vperf_event__open_strerror(int err, const char *name,
					  const struct perf_event_attr *attr, pid_t pid,
					  char *buf, size_t len);

/* ---- event lists ---------------------------------------------------- */

enum vperf_event_kind {
	VPERF_EVENT_HARDWARE,	/* a PMU event */
	VPERF_EVENT_SOFTWARE,	/* a kernel software event */
	VPERF_EVENT_VIRT,	/* a virtualization event (pv backend) */
};

struct vperf_event_info {
	size_t size;		/* sizeof(struct vperf_event_info) */
	const char *pmu;	/* "perf", "amd64_fam19h_zen4", "vperf", ... */
	const char *name;	/* as vperf_evset__add() accepts it */
	const char *desc;
	enum vperf_event_kind kind;
	int usable;		/* 1: it opens on this host now, 0: not,
				 * -1: not probed */
	const char *why;	/* if !usable: why not */
	const char *umasks;	/* the event needs one of these unit masks
				 * ("A, B, C"): add it as name:A; else NULL */
};

typedef int (*vperf_event_fn)(const struct vperf_event_info *ev, void *arg);

/*
 * Call fn for every event of every PMU libpfm4 detects here, the kernel's
 * software events, and the virtualization events of the pv backend.
 * A non-zero return from fn stops the walk and is returned.  With probe,
 * each event is opened briefly to fill in usable/why.
 */
VPERF_API int vperf_events__for_each(vperf_event_fn fn, void *arg, int probe);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_VPERF_H */
