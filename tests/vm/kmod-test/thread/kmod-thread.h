/* SPDX-License-Identifier: MIT */
/* What vperf-kmod-thread's cases share: the device, the checks, the clocks, the page (vperf-kmod-thread.c). */
#ifndef KMOD_THREAD_H
#define KMOD_THREAD_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <sys/io.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/seccomp.h>
#include <sys/resource.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <vperf/abi.h>	/* VPERF_FEAT_* */
#include "vperf_guest_uapi.h"

/*
 * The goal is 2%; in nested TCG single measurements scatter up to about
 * +-2.4% around a median near +0.5% (console interrupts are kept out by
 * quiesce(); what is left is each boundary's hypercall, ~0.3 ms there, and
 * the clocks' jitter), so the L2 tests allow 3%.  Every error is printed.
 */
#define TOLERANCE	0.03

struct burner {
	const char *mode;
	int cpu;		/* -1: any */
	uint64_t ms;
	void (*on_tick)(unsigned int n);
	int stop;		/* STOP at the end, else just exit */
	double err;
	int ok;
	int header_ok;
	char what[512];		/* printed after every burner finished */
};
#define EXITS_N 1000

extern int fails;
extern int fd;
extern uint64_t tick_ns;

void burn(uint64_t ms, void (*on_tick)(unsigned int n));
void *burner_run(void *arg);
void check(int ok, const char *mode, const char *what);
uint64_t clock_ns(clockid_t id);
uint64_t doorbell_fresh(const volatile struct vperf_thread_page *pg, const volatile uint64_t *db,
			       uint64_t *loads);
void ev_set(struct vperf_thread_event *ev, uint32_t source, uint64_t arg, const char *name);
const struct vperf_thread_row *find_row(const struct vperf_thread_row *rows, int n, pid_t tid);
int list_rows(int f, struct vperf_thread_row *rows, unsigned int cap, struct vperf_thread_list *out);
void migrate_tick(unsigned int n);
long module_param_value(const char *name);
void page_read(const struct vperf_thread_page *p, struct vperf_thread_page *out);
void pin(int cpu);
void quiesce(void);
void report_hc(const struct vperf_thread_page *pg, int stopped);
void report_rows_hc(const struct vperf_thread_row *rows, int n);
int row_within(const struct vperf_thread_row *r, uint64_t cpu_ns, char *what, size_t len);
int row_within_ratio(const struct vperf_thread_row *r, uint64_t cpu_ns, double ratio,
			    char *what, size_t len);
int row_within_ratio_err(const struct vperf_thread_row *r, uint64_t cpu_ns, double ratio,
				char *what, size_t len, double *errp);
double rows_ratio(const struct vperf_thread_row *rows, int n);
void run_burners(struct burner *b, int n);
const struct vperf_thread_page *start(const char *mode);
int start_events(const struct vperf_thread_event *ev, uint32_t n, int *bad,
			const struct vperf_thread_page **pg);
int start_tid(int f, pid_t tid, uint32_t flags);
void test_api(void);
void test_attach(void);
void test_churn(unsigned int ms, const char *ready);
void test_conserve(void);
void test_doorbell(void);
void test_events(void);
void test_evquota(void);
void test_exits(void);
void test_forkrace(void);
void test_guest(void);
void test_hostcs(void);
void test_inherit(void);
void test_list_api(const char *m);
void test_memory(void);
void test_mux(void);
void test_plm(void);
void test_private(void);
void test_read(void);
void test_sample(void);
void test_steal(void);
void test_steal_guest(void);
void test_stress(void);
uint64_t thread_ns(void);
int threads_param(void);
void unpin(void);
uint64_t vcpu_total(int cpu, unsigned int slot);

#endif
