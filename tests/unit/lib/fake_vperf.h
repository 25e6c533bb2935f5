/* SPDX-License-Identifier: MIT */
/*
 * An in-memory /dev/vperf for unit tests of libvperf's pv backend.
 *
 * Linked with -Wl,--wrap for the seams vperf__pv_open, vperf__pv_ioctl,
 * vperf__pv_mmap, vperf__pv_munmap and vperf__pv_close (sys.c), it plays
 * vperf_guest.ko as guest-lib/kmod/vperf_guest_uapi.h describes it: INFO,
 * THREAD_START (tid 0: the calling thread, with a page to map), THREAD_READ
 * (adds the calling thread's running slice to its page), THREAD_LIST (rows
 * of the file's contexts, `total` beyond the buffer, `lost`), THREAD_STOP.
 * A test makes threads "run" with fake_run(), which adds to a context's
 * sums under the page's seq protocol, and threads appear with
 * fake_thread(), as the module's inheritance would add them.
 */
#ifndef VPERF_TESTS_FAKE_VPERF_H
#define VPERF_TESTS_FAKE_VPERF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vperf_guest_uapi.h"

#define FAKE_MAX_CTX	128
#define FAKE_MAX_CALLS	16

struct fake_ctx {
	int fd;				/* the file it belongs to, -1: closed */
	pid_t pid, tid;
	uint32_t start_flags;		/* VPERF_THREAD_* it was started with */
	uint32_t row_flags;		/* VPERF_ROW_* */
	char comm[16];
	struct vperf_thread_counter ctr[VPERF_THREAD_MAX_COUNTERS];
	/* The current time slice: THREAD_READ adds it to ctr (once). */
	struct vperf_thread_counter slice[VPERF_THREAD_MAX_COUNTERS];
	/* THREAD_START VER2's event list (0: the fixed three) */
	uint32_t nr_events;
	struct vperf_thread_event events[VPERF_THREAD_MAX_COUNTERS];
	struct vperf_thread_page *page;	/* contexts started with tid 0 */
};

struct fake_vperf {
	/* What the device does; fake_reset() sets a working guest. */
	int open_err;			/* open fails with this errno */
	int info_err;			/* VPERF_IOC_INFO fails with this errno */
	uint32_t nr_cpus, nr_pages;
	uint32_t nr_counters;		/* THREAD_START's answer */
	uint32_t page_version;		/* THREAD_START's answer and the pages' */
	int start_err;			/* THREAD_START fails with this errno */
	bool start_ver2;		/* THREAD_START answers with the VER2 size (reset: yes) */
	int event_err, event_err_idx;	/* THREAD_START refuses event idx with this errno */
	/* THREAD_START refuses (EACCES) a PERF event whose name does not end in ":u", as the
	 * module does for a user without CAP_PERFMON at kernel.perf_event_paranoid >= 2 */
	bool kernel_paranoid;
	uint32_t slot_offset;		/* the page's slot[k] = k + this (doorbell slots) */
	bool host_events;		/* VPERF_IOC_EVENT_INFO answers (fake_vperf.c's list) */
	uint64_t lost;			/* THREAD_LIST's lost */
	bool doorbell;			/* the device has a doorbell page */
	/* what a doorbell load at 8 * k returns: the vCPU's counter k now */
	uint64_t doorbell_page[512] __attribute__((aligned(4096)));
	int doorbell_mmaps;
	/* On THREAD_LIST call number appear_at (1-based), appear_n threads of
	 * pid appear_pid get a context first, each with exits = 1. */
	int appear_at, appear_n;
	pid_t appear_pid;
	/* the sample ring of a VPERF_THREAD_SAMPLE context: header page + 16 pages */
	unsigned char ring[17 * 4096] __attribute__((aligned(4096)));
	int ring_mmaps;

	/* What the library did. */
	char path[256];			/* last path opened */
	int opens, closes, infos, starts, reads, lists, mmaps, munmaps;
	int open_fds;			/* opened and not closed */
	uint32_t list_cap[FAKE_MAX_CALLS];	/* nr_rows offered, per LIST */
	struct vperf_thread_start start_arg[FAKE_MAX_CALLS];	/* as passed in */

	int nr_ctx;
	struct fake_ctx ctx[FAKE_MAX_CTX];
};

extern struct fake_vperf fake;

/* A usable device: 2 CPUs, 2 pages, 3 counters, no contexts.  Frees pages. */
void fake_reset(void);

/* The live context of tid (on any file), or NULL. */
struct fake_ctx *fake_ctx_of(pid_t tid);

/* A context appears on fd's file for (pid, tid), as inheritance adds one. */
struct fake_ctx *fake_thread(int fd, pid_t pid, pid_t tid, const char *comm);

/*
 * The module took a sample of the calling thread: a record in the ring and,
 * with signal, the signal THREAD_START asked for (POLL_IN, si_fd its cookie).
 */
void fake_sample(uint64_t ip, bool signal);

/* The thread ran: add to counter k's sums (and its page, under seq). */
void fake_run(struct fake_ctx *c, int k, uint64_t value, uint64_t enabled, uint64_t running);

/* The thread exited: its row is final. */
void fake_exit(struct fake_ctx *c);

/* The fd of the last file opened. */
int fake_last_fd(void);

#endif /* VPERF_TESTS_FAKE_VPERF_H */
