/* SPDX-License-Identifier: MIT */
/*
 * libvperf internals, shared by the library's files and its unit tests.
 * Nothing here is exported (see libvperf.map); unit tests link the static
 * archive to reach it.
 */
#ifndef VPERF_INTERNAL_H
#define VPERF_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include <vperf/vperf.h>

#define VPERF_ERRMSG_LEN	512
#define VPERF_NAME_LEN		256
#define VPERF_MAX_EVENTS	VPERF_EVSET_MAX_EVENTS

/* ---- logging (log.c) ---- */
void vperf__log(enum vperf_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pr_warn(...)	vperf__log(VPERF_LOG_WARN, __VA_ARGS__)
#define pr_info(...)	vperf__log(VPERF_LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	vperf__log(VPERF_LOG_DEBUG, __VA_ARGS__)

/* ---- counts (count.c) ---- */

/*
 * Fill c from a raw count and its enabled/running times: scaled when
 * multiplexed (running < enabled), NOT_COUNTED when running == 0.
 * Inline: it ends every read, including the page read of a few loads.
 */
static inline void vperf__count_set(struct vperf_count *c, uint64_t raw, uint64_t enabled,
				    uint64_t running)
{
	*c = (struct vperf_count){ .raw = raw, .enabled = enabled, .running = running };
	if (running == 0) {
		c->flags |= VPERF_COUNT_NOT_COUNTED;
		c->value = 0;
	} else if (running < enabled) {
		unsigned __int128 v = (unsigned __int128)raw * enabled / running;

		c->value = v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
		c->flags |= VPERF_COUNT_SCALED;
	} else {
		c->value = raw;
	}
}

/*
 * One user-mode read of a self-monitoring event through its perf mmap
 * page, following the protocol documented in linux/perf_event.h: retry
 * while pc->lock changes; if pc->index is set and cap_user_rdpmc,
 * add rdpmc(index - 1), sign-extended from pmc_width bits, to pc->offset;
 * advance enabled/running by the time elapsed since the kernel last
 * updated the page (cap_user_time).  rdpmc and now are seams for tests.
 * Returns 0, or -EAGAIN when the page cannot give a value (index == 0:
 * the event is not on a counter now; the caller then uses read(2)).
 */
typedef uint64_t (*vperf_rdpmc_fn)(uint32_t counter, void *ctx);
typedef uint64_t (*vperf_tsc_fn)(void *ctx);

struct vperf_mmap_read_ops {
	vperf_rdpmc_fn rdpmc;
	vperf_tsc_fn rdtsc;
	void *ctx;
	/* Number of lock retries taken, for tests and the bench. */
	unsigned int retries;
};

int vperf__mmap_read(const volatile struct perf_event_mmap_page *pc,
		     struct vperf_mmap_read_ops *ops, struct vperf_count *c);

/* ---- event names (events.c) ---- */

int vperf__pfm_init(void);

/*
 * Encode a libpfm4 / perf event name into attr (type, config, config1/2,
 * exclude_*).  canon receives libpfm4's canonical string.  On -ENOENT
 * or -EINVAL, err says why, with suggestions of close names.
 */
int vperf__encode(const char *name, struct perf_event_attr *attr,
		  char *canon, size_t canon_len, char *err, size_t err_len);

/*
 * Up to max names of events libpfm4 knows that are close to name
 * (edit distance, case-insensitive), best first, into out.
 * Returns how many.
 */
int vperf__suggest(const char *name, char out[][VPERF_NAME_LEN], int max);

/* Case-insensitive Levenshtein distance, capped at 255. */
int vperf__edit_distance(const char *a, const char *b);

/* Is this attr a hardware (PMU) event rather than a software one? */
bool vperf__attr_is_hw(const struct perf_event_attr *attr);

/* Map a libpfm4 error (PFM_ERR_*) to a negative errno. */
int vperf__pfm_errno(int pfm_err);

/* ---- virtualization events (virt-events.c) ---- */

/* A name vperf_evset__add() accepts, and how the pv backend asks for it. */
struct vperf_virt_event {
	const char *name;		/* "vperf::exits:io" */
	const char *desc;
	uint32_t source;		/* enum vperf_source (vperf/abi.h) */
	uint64_t arg;			/* vperf_event_desc.arg */
	const char *host_name;		/* vperf_event_desc.name */
};

/* How the pv backend asks vperf_guest.ko for an event (struct vperf_thread_event). */
struct vperf_pv_event {
	uint32_t source;		/* enum vperf_source */
	uint64_t arg;
	char host_name[64];
};

const struct vperf_virt_event *vperf__virt_event(const char *name);
/*
 * Any vperf:: name: the catalog's, or one of the forms vperf::exits:REASON
 * (a KVM exit reason's name or number), vperf::kvm:STAT (a KVM statistic
 * of the vCPU), vperf::host:SW (a software event of the vCPU's host
 * thread) and vperf::hw:NAME (a host PMU event, counted in guest mode).
 * 0 with *out and canon (the canonical name) filled, or -ENOENT/-EINVAL
 * with err saying why.
 */
int vperf__virt_parse(const char *name, struct vperf_pv_event *out, char *canon, size_t canon_len,
		      char *err, size_t err_len);
/* The vperf:: name of what the host offers (VPERF_IOC_EVENT_INFO), into buf. */
void vperf__virt_name(const struct vperf_pv_event *ev, char *buf, size_t len);
int vperf__virt_suggest(const char *name, char out[][VPERF_NAME_LEN], int max);
int vperf__virt_for_each(vperf_event_fn fn, void *arg, int probe);

/* ---- errors (error.c) ---- */

/*
 * Say, for a person, why perf_event_open(attr) failed with -err, for
 * event name: no PMU, paranoid setting (and its value), no such target...
 * sysfs_root and proc_root are seams for tests ("/" in real use).
 */
void vperf__open_strerror(int err, const char *name,
			  const struct perf_event_attr *attr, pid_t pid,
			  const char *root, char *buf, size_t len);

/* Does this host have a hardware PMU the kernel knows (sysfs cpu PMU)? */
bool vperf__host_has_pmu(const char *root);
/* kernel.perf_event_paranoid, or INT32_MIN if it cannot be read. */
int vperf__paranoid(const char *root);

/* ---- event sets (evset.c) ---- */

struct vperf_event {
	char name[VPERF_NAME_LEN];	/* as the user wrote it */
	char canon[VPERF_NAME_LEN];	/* libpfm4's canonical string */
	struct perf_event_attr attr;
	bool user_plm;			/* the user gave :u/:k-style modifiers */
	bool user_only_fallback;	/* paranoid made us drop kernel counting */
	int read_path;			/* enum vperf_read_path, at open */
	bool virt;			/* counted by vperf_guest.ko (pv) */
	struct vperf_pv_event pv;	/* if virt: what the module is asked for */
	int ctr;			/* if virt: its counter in the module's context */
	bool sampling;
	struct vperf_sample_opts sopts;
};

/* One row of per-thread counts (VPERF_EVSET_PER_THREAD). */
struct vperf_evset_row {
	pid_t pid, tid;
	bool root;			/* a thread the set was opened on */
	uint64_t reported;		/* bit per event: the kernel sent its count */
	char comm[16];			/* the thread's name, "" if unknown */
	struct vperf_count *reads;	/* what the kernel sent, nr_events */
	struct vperf_count *counts;	/* reads plus any share assigned by poll */
};

struct vperf_evset {
	const struct vperf_backend_ops *ops;
	bool auto_backend;		/* opts.backend was NULL: add() may move
					 * the set to "pv" for a vperf:: event */
	struct vperf_evset_opts opts;
	bool is_open;
	pid_t opener_tid;		/* who called open (TARGET_SELF) */

	int nr_events;
	int cap_events;
	struct vperf_event *events;

	/* per-thread rows, owned here, filled by the backend */
	int nr_rows, cap_rows;
	struct vperf_evset_row *rows;
	uint64_t threads_lost;

	uint64_t samples_lost;		/* updated from signal context */
	int err_event;			/* event of the last error, or -1 */
	void *priv;			/* backend state */
	char err[VPERF_ERRMSG_LEN];

	/*
	 * A set that counts part of another one's events (the pv backend
	 * hands a set's ordinary events to a "perf" set of its own): the
	 * set the user holds, and the index there of each event here.
	 * Samples are delivered under those indexes and counted lost there.
	 */
	struct vperf_evset *parent;
	const int *parent_idx;
};

/* Record why the last call failed; returns err (a negative errno). */
int vperf__evset_fail(struct vperf_evset *es, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Per-thread rows: the row of (pid, tid), added if there is none.  A tid
 * the kernel reuses within one run shares its predecessor's row.
 * NULL: out of memory.
 */
struct vperf_evset_row *vperf__evset_row(struct vperf_evset *es, pid_t pid,
					  pid_t tid, bool root);

/* ---- ring buffers (ring.c) ---- */

#define VPERF_RECORD_MAX 256	/* larger records that wrap are skipped */

typedef void (*vperf_record_fn)(const struct perf_event_header *h, void *arg);

/*
 * Call fn on every complete record between data_tail and data_head of a
 * perf ring (data_size: a power of two), copying a record that wraps
 * into a local buffer, then publish the new tail.  No allocation, no
 * locks: it also runs in signal handlers.
 */
void vperf__ring_drain(struct perf_event_mmap_page *pc, void *data, size_t data_size,
		       vperf_record_fn fn, void *arg);

/* ---- sampling delivery (sample.c) ---- */

/*
 * The generic half of sampling: a signal handler that maps the
 * signal's si_fd to (es, idx), asks the backend's drain callback how
 * many overflows are pending, captures the user callchain with libunwind
 * from the signal's ucontext, and calls the user's function.
 */
typedef unsigned int (*vperf_sample_drain_fn)(void *ring, uint64_t *time,
					      uint64_t *period,
					      uint64_t *lost);
int vperf__sample_register(int fd, struct vperf_evset *es, int idx,
			   void *ring, vperf_sample_drain_fn drain);
void vperf__sample_unregister(int fd);

/* ---- backends (backend.c) ---- */

struct vperf_backend_ops {
	const char *name;
	/* 0 if usable here, else -errno and why. */
	int (*probe)(char *why, size_t len);
	int (*open)(struct vperf_evset *es);
	void (*close)(struct vperf_evset *es);
	int (*ctl)(struct vperf_evset *es, int op);	/* VPERF_CTL_* */
	int (*read)(struct vperf_evset *es, int idx, struct vperf_count *c);
	int (*read_all)(struct vperf_evset *es, struct vperf_count *c,
			size_t n);
	/* Per-thread counts: drain what the kernel reported into rows. */
	int (*poll_threads)(struct vperf_evset *es);
	/* vperf_evset__page_ref(); NULL: -EOPNOTSUPP */
	int (*page_ref)(const struct vperf_evset *es, int idx, struct vperf_page_ref *ref);
};

enum { VPERF_CTL_START, VPERF_CTL_STOP, VPERF_CTL_RESET };

extern const struct vperf_backend_ops vperf_backend_perf;
extern const struct vperf_backend_ops vperf_backend_pv;

const struct vperf_backend_ops *vperf__backend_find(const char *name);

/* The thread ids of a process, from /proc/PID/task (-ESRCH: no such process). */
int vperf__list_threads(pid_t pid, pid_t **out, int *nr);

/* Seam: the syscall, replaced by unit tests with -Wl,--wrap. */
int vperf__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags);

/* ---- the pv backend (backend-pv.c) ---- */

/*
 * The device the pv backend uses: $VPERF_PV_DEVICE if set and not empty
 * (tests, a device node elsewhere; ignored in set-uid programs), else
 * /dev/vperf.
 */
const char *vperf__pv_device(void);

/*
 * Seams: the device's system calls (sys.c), replaced by unit tests with
 * -Wl,--wrap to fake /dev/vperf entirely.  All return 0 (or an fd) or a
 * negative errno.
 */
int vperf__pv_open(const char *path);	/* O_RDWR (else O_RDONLY) | O_CLOEXEC */
int vperf__pv_ioctl(int fd, unsigned long req, void *arg);
int vperf__pv_mmap(int fd, size_t len, void **addr);	/* PROT_READ, MAP_SHARED, 0 */
void vperf__pv_munmap(void *addr, size_t len);
/* The device's doorbell page (one page at VPERF_DOORBELL_PGOFF), read-only. */
int vperf__pv_mmap_doorbell(int fd, void **addr);
int vperf__pv_mmap_ring(int fd, size_t len, void **addr);	/* the sample ring, read-write */
int vperf__pv_mmap_mark(int fd, size_t len, void **addr);	/* a marker buffer, read-write */
void vperf__pv_close(int fd);

struct vperf_thread_page;
struct vperf_thread_counter;

/*
 * One consistent copy of counters[first..first+nr-1] of a thread page under its seq
 * protocol (vperf_guest_uapi.h): load seq (acquire), retry while odd, copy,
 * load seq again, retry if it changed.  ops may be NULL; with ops, step is
 * called after each load of seq (0: the first of an attempt, 1: the
 * second), so that a test can play the kernel writing in between, and
 * retries says how many attempts were thrown away.  -EAGAIN if the page
 * stayed busy for VPERF_PV_PAGE_MAX_RETRIES attempts.
 */
#define VPERF_PV_PAGE_MAX_RETRIES	VPERF_PAGE_READ_TRIES	/* one bound, vperf_page_read()'s too */

struct vperf_pv_page_ops {
	void (*step)(void *ctx, int step);
	void *ctx;
	unsigned int retries;
};

int vperf__pv_page_read(const volatile struct vperf_thread_page *pg, uint32_t first, uint32_t nr,
			struct vperf_thread_counter *out, struct vperf_pv_page_ops *ops);

#endif /* VPERF_INTERNAL_H */
