/* SPDX-License-Identifier: MIT */
/*
 * vperf-kmod-thread MODE: the L2 tests of vperf_guest.ko's per-thread
 * counters (VPERF_IOC_THREAD_START/STOP, the read-only thread page).
 *   api      size handshake, EBUSY on a second START, mmap refusals (offset,
 *            size, PROT_WRITE, mprotect), STOP and ENOENT on a second STOP
 *   single   one thread burns 300 ms, three rounds: in at least two its
 *            vcpu-clock is within TOLERANCE (3%) of its
 *            CLOCK_THREAD_CPUTIME_ID, converted to host ns with the ratio
 *            of the two clocks over its slices (the page's host_ns and
 *            guest_ns); the uncorrected error is printed too
 *   migrate [MS]  the same while it moves between CPU 0 and CPU 1 every MS
 *            (default 20) ms of its CPU time
 *   split    two threads on CPUs 0 and 1 burn 300 and 100 ms at once, three
 *            rounds: each within TOLERANCE (3%) of its own thread CPU time
 *            in at least two; they exit without STOP
 *            while the file stays open (the module frees their contexts)
 *   sleep    a thread that sleeps 30 x 10 ms accrues ~0 vcpu-clock: under
 *            10% of the wall time, and at most the host time its slices
 *            lasted (+2%)
 *   read     a thread that never sleeps: THREAD_READ makes its page exact,
 *            3 x 100 ms, at least two within TOLERANCE (3%)
 *   inherit  START with VPERF_THREAD_INHERIT, 3 rounds of 8 threads
 *            (400 ms each) migrating between 2 vCPUs by affinity, each
 *            held (blocked) after its burn: each thread's live row within
 *            INHERIT_GOAL (2%, the issue's figure) of its CPU time, read at
 *            the same boundary, in 2 of 3 rounds (rounds with all within
 *            3% and 2% are counted); then a child process's row, and every
 *            thread's row marked exited
 *   attach   START for a process blocked on a pipe (as vperf stat does),
 *            its rows; the paranoid setting as uid 65534
 *   doorbell fresh reads with one doorbell load each, no system call
 *            (seccomp strict mode), against the final row
 *   exits    1000 port writes: exactly that many exits beyond the slices'
 *            own; a thread without I/O: only its slices' (0..5 extra)
 *   stress   16 threads start, map, run and end 21 contexts each, ending
 *            them by STOP, by closing their own file and by exiting
 *   steal    (run with a CPU hog beside the vCPU thread on the host: see
 *            steal.sh) a thread burns 300 ms of guest CPU time on CPU 0;
 *            the time its slices lost on the host, guest wall time in host
 *            ns less its vcpu-clock, must be at least 20% of the wall time
 *            (the hog took some) and its vperf::steal within 10% of it
 *   sample   START with VPERF_THREAD_SAMPLE (vcpu-clock, 4 ms): with a signal
 *            per sample, 400 ms: the signals carry POLL_IN and the cookie;
 *            then without (their delivery is kernel time that blurs the
 *            split): two functions burn in alternating slices of 3x and
 *            x, x 8..40 ms, until the thread's vcpu-clock (doorbell reads)
 *            advanced 3.2 s; the ring's user-mode IPs in each function's
 *            own section come out in the ratio of the vcpu-clock each ran
 *            (nominally 3:1) within 10%, the samples and the periods
 *            their values skip number the clock's periods within 10%
 *            (at least 400 user samples), nothing is lost, the records' vcpu-clock
 *            values grow, and the module's nmi_count grew
 *   conserve START with inheritance, VPERF_IOC_VCPU_TOTALS, then 4 threads,
 *            2 pinned on each vCPU, spin until one deadline 1 s away (about
 *            500 ms each); after they exited, the totals again: the rows'
 *            vcpu-clock sum plus the CPU time every other task ran (kernel
 *            threads, from /proc/.../schedstat) is within 0.5% of what the
 *            vCPUs' totals advanced, in 2 of 3 rounds; the rows alone are
 *            printed too
 *   private  an unprivileged thread's page publishes no raw vCPU base and
 *            its doorbell mmap is EACCES (they showed other users' counts
 *            between its slices); root keeps both
 *   plm      at kernel.perf_event_paranoid >= 2 an unprivileged user gets
 *            EACCES for events that may count kernel mode, not for user-only
 *            ones; root and paranoid 1 get past the module
 *   memory   ended contexts keep only their row (free memory), contexts are
 *            charged to the memory cgroup, max_user_kb caps one user
 *   evquota  one user holds at most max_user_events table entries
 *   forkrace stress: inheriting forks against the file's release and other
 *            claims; no context left, exits:io exact afterwards
 *   hold S   start a context, map it, sleep S seconds, exit without STOP
 *   churn MS FILE  START with inheritance, 4 threads migrating between the
 *            vCPUs burn MS ms each; FILE is created once they run, and the
 *            file stays open until FILE is removed (the kmod test's
 *            load/unload cycles try rmmod in between); every thread gets a
 *            row that counted
 * The page is read in user space with its seq protocol, no system call; it
 * holds the counts up to the thread's last switch-out, so a reader sleeps
 * 1 ms first.  Prints "kmod-thread: ..." lines and, per context, a
 * "kmod-thread: hc switches N budget B" line (SNAPSHOT hypercalls it may
 * cause: START, one per switch-in and switch-out, STOP).  Exit 0 when all
 * checks hold.
 */
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

static int fd;
static int fails;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void check(int ok, const char *mode, const char *what)
{
	pthread_mutex_lock(&out_lock);
	printf("kmod-thread: %s %s %s\n", mode, ok ? "ok" : "FAIL", what);
	if (!ok)
		fails++;
	pthread_mutex_unlock(&out_lock);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* User-mode read with the seq protocol. */
static void page_read(const struct vperf_thread_page *p, struct vperf_thread_page *out)
{
	uint32_t s1, s2;

	for (;;) {
		s1 = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue;
		memcpy(out, (const void *)p, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return;
	}
}

/*
 * Wait until the console has sent what was printed: the guest's serial
 * driver sends it from its interrupt handler, one VM exit per character,
 * and interrupt time inside a thread's slices is vcpu-clock that the
 * thread's own CPU time (interrupt time excluded) lacks.  Measurements
 * start quiet and print only once every thread has finished.
 */
static void quiesce(void)
{
	fflush(stdout);
	tcdrain(STDOUT_FILENO);	/* not a terminal: nothing to wait for */
	usleep(20000);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void unpin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* START and map: the page, or NULL after a FAIL line. */
static const struct vperf_thread_page *start(const char *mode)
{
	struct vperf_thread_start st;
	void *p;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	if (ioctl(fd, VPERF_IOC_THREAD_START, &st)) {
		check(0, mode, strerror(errno));
		return NULL;
	}
	/* quiet when fine: output during a measurement costs interrupt time (quiesce()) */
	if (!(st.size == sizeof(st) && st.nr_counters == VPERF_THREAD_NR_CTRS &&
	      st.page_size == 4096 && st.page_version == VPERF_THREAD_PAGE_VERSION))
		check(0, mode, "THREAD_START answers");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		check(0, mode, "mmap of the thread page");
		return NULL;
	}
	return p;
}

static void report_hc(const struct vperf_thread_page *pg, int stopped)
{
	struct vperf_thread_page v;

	page_read(pg, &v);
	pthread_mutex_lock(&out_lock);
	/*
	 * START, a switch-in and a switch-out per slice (STOP ends one); a
	 * context that ends at exit may still run a few unaccounted slices
	 * after this line (printing, munmap, exit): each costs a switch-in.
	 */
	printf("kmod-thread: hc switches %llu budget %llu\n", (unsigned long long)v.switches,
	       (unsigned long long)(1 + 2 * v.switches + (stopped ? 1 : 4)));
	pthread_mutex_unlock(&out_lock);
}

static uint64_t tick_ns = 20000000;

/* Burn `ms` of this thread's CPU time; on_tick runs every tick_ns of it. */
static void burn(uint64_t ms, void (*on_tick)(unsigned int n))
{
	uint64_t t0 = thread_ns(), next = tick_ns;
	unsigned int n = 0;

	for (;;) {
		uint64_t d = thread_ns() - t0;

		if (d >= ms * 1000000)
			break;
		if (on_tick && d >= next) {
			on_tick(++n);
			next += tick_ns;
		}
	}
}

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

/* A numeric parameter of vperf_guest.ko read with fmt (one %ld), -1 if unreadable. */
static long module_param_scan(const char *name, const char *fmt)
{
	char path[128];
	FILE *f;
	long n = -1;

	snprintf(path, sizeof(path), "/sys/module/vperf_guest/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, fmt, &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

static long module_param_value(const char *name)
{
	return module_param_scan(name, "%ld");
}

/*
 * Slices the module could not account since load (its lost_slices parameter's "unbased"): a
 * round prints how many it lost meanwhile, on any thread, so that a round short of its CPU time
 * says whether a whole slice went unaccounted.  -1 if unreadable.
 */
static long unbased_slices(void)
{
	return module_param_scan("lost_slices", "unbased %ld");
}

static void *burner_run(void *arg)
{
	struct burner *b = arg;
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v0, v1;
	uint64_t t0, t1, w0, w1, dv;
	long u0, u1;
	double ratio, raw;
	if (b->cpu >= 0)
		pin(b->cpu);
	pg = start(b->mode);
	if (!pg)
		return NULL;
	u0 = unbased_slices();
	usleep(1000);		/* v0 is then a slice boundary */
	page_read(pg, &v0);
	w0 = clock_ns(CLOCK_MONOTONIC);
	t0 = thread_ns();
	burn(b->ms, b->on_tick);
	t1 = thread_ns();
	w1 = clock_ns(CLOCK_MONOTONIC);
	usleep(1000);		/* a switch-out accounts the slice */
	page_read(pg, &v1);
	u1 = unbased_slices();
	dv = v1.counters[VPERF_THREAD_CTR_VCPU_CLOCK].value -
	     v0.counters[VPERF_THREAD_CTR_VCPU_CLOCK].value;
	/*
	 * The guest's clock (kvm-clock) and the host's need not tick at the
	 * same rate (in nested TCG they differ by several %): the module
	 * measures both over the thread's slices, and the thread's CPU time
	 * is compared in host nanoseconds.
	 */
	ratio = (double)(v1.host_ns - v0.host_ns) / (double)(v1.guest_ns - v0.guest_ns);
	raw = ((double)dv - (double)(t1 - t0)) / (double)(t1 - t0);
	b->err = ((double)dv - (double)(t1 - t0) * ratio) / ((double)(t1 - t0) * ratio);
	b->ok = b->err <= TOLERANCE && b->err >= -TOLERANCE;
	snprintf(b->what, sizeof(b->what),
		 "cpu %d: vcpu-clock %.3f ms thread-cputime %.3f ms error %+.2f%% (host/guest clock %.4f; "
		 "uncorrected %+.2f%%) steal %.3f ms exits %llu slices %llu wall %.3f ms "
		 "slices' guest time %.3f ms, guest scheduler's charge %.3f ms (early by %.3f ms); "
		 "slices the module lost meanwhile (any thread): %ld",
		 b->cpu, dv / 1e6, (t1 - t0) / 1e6, b->err * 100, ratio, raw * 100,
		 (v1.counters[VPERF_THREAD_CTR_STEAL].value -
		  v0.counters[VPERF_THREAD_CTR_STEAL].value) / 1e6,
		 (unsigned long long)(v1.counters[VPERF_THREAD_CTR_EXITS].value -
				      v0.counters[VPERF_THREAD_CTR_EXITS].value),
		 (unsigned long long)(v1.switches - v0.switches), (w1 - w0) / 1e6,
		 (v1.guest_ns - v0.guest_ns) / 1e6, (v1.sched_ns - v0.sched_ns) / 1e6,
		 ((double)(v1.sched_ns - v0.sched_ns) - (double)(v1.guest_ns - v0.guest_ns)) / 1e6,
		 u0 >= 0 && u1 >= u0 ? u1 - u0 : -1L);
	b->header_ok = v1.size == sizeof(v1) && v1.version == VPERF_THREAD_PAGE_VERSION &&
		       v1.nr == VPERF_THREAD_NR_CTRS;
	{
		/*
		 * The scheduler's charge over the slices from v0 to v1 covers the
		 * thread's CPU time from t0 to t1 (the same se.sum_exec_runtime)
		 * and the few steps around them: an early charge at the wake-up
		 * before v0 adds at most a few ms in nested TCG.
		 */
		double sched = (double)(v1.sched_ns - v0.sched_ns), cpu = (double)(t1 - t0);
		char w[160];

		snprintf(w, sizeof(w), "cpu %d: sched_ns %.3f ms covers the thread's CPU time %.3f ms (+0..10%%)",
			 b->cpu, sched / 1e6, cpu / 1e6);
		check(sched >= cpu - 1e4 && sched <= cpu * 1.10, b->mode, w);
	}
	if (b->stop) {
		check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, b->mode, "THREAD_STOP");
		report_hc(pg, 1);
	} else {
		report_hc(pg, 0);
	}
	munmap((void *)pg, 4096);
	return NULL;
}

static void migrate_tick(unsigned int n)
{
	pin(n & 1);
}

static int threads_param(void)
{
	return (int)module_param_value("threads");
}


/* THREAD_LIST into a buffer of cap rows; the number of rows written, -1 on error. */
static int list_rows(int f, struct vperf_thread_row *rows, unsigned int cap, struct vperf_thread_list *out)
{
	struct vperf_thread_list l;

	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.row_size = sizeof(*rows);
	l.nr_rows = cap;
	l.rows = (uintptr_t)rows;
	if (ioctl(f, VPERF_IOC_THREAD_LIST, &l))
		return -1;
	if (out)
		*out = l;
	return (int)l.nr_rows;
}

static const struct vperf_thread_row *find_row(const struct vperf_thread_row *rows, int n, pid_t tid)
{
	for (int i = 0; i < n; i++)
		if (rows[i].tid == tid)
			return &rows[i];
	return NULL;
}

/*
 * |vcpu-clock - cputime converted to host ns| within TOLERANCE; describes it
 * into what.  ratio: host ns per guest ns; 0: this row's own (fine for long
 * slices: each boundary's hypercall adds jitter to both clocks' sums).
 */
static int row_within_ratio_err(const struct vperf_thread_row *r, uint64_t cpu_ns, double ratio,
				char *what, size_t len, double *errp)
{
	double want, err;

	if (ratio <= 0)
		ratio = r->guest_ns ? (double)r->host_ns / (double)r->guest_ns : 1.0;
	want = (double)cpu_ns * ratio;

	err = want > 0 ? ((double)r->counters[VPERF_THREAD_CTR_VCPU_CLOCK].value - want) / want : 1;
	snprintf(what, len, "tid %d (%.15s, pid %d%s): vcpu-clock %.3f ms cputime %.3f ms error %+.2f%% "
		 "(host/guest %.4f) steal %.3f ms exits %llu slices %llu; scheduler charged %.3f ms, early by %.3f ms",
		 r->tid, r->comm, r->pid, r->flags & VPERF_ROW_EXITED ? ", exited" : "",
		 r->counters[VPERF_THREAD_CTR_VCPU_CLOCK].value / 1e6, cpu_ns / 1e6, err * 100, ratio,
		 r->counters[VPERF_THREAD_CTR_STEAL].value / 1e6,
		 (unsigned long long)r->counters[VPERF_THREAD_CTR_EXITS].value,
		 (unsigned long long)r->switches, r->sched_ns / 1e6,
		 ((double)r->sched_ns - (double)r->guest_ns) / 1e6);
	if (errp)
		*errp = err;
	return err <= TOLERANCE && err >= -TOLERANCE;
}

static int row_within_ratio(const struct vperf_thread_row *r, uint64_t cpu_ns, double ratio,
			    char *what, size_t len)
{
	return row_within_ratio_err(r, cpu_ns, ratio, what, len, NULL);
}

static int row_within(const struct vperf_thread_row *r, uint64_t cpu_ns, char *what, size_t len)
{
	return row_within_ratio(r, cpu_ns, 0, what, len);
}

/* host ns per guest ns over all the rows' slices: many short slices' jitter averages out */
static double rows_ratio(const struct vperf_thread_row *rows, int n)
{
	double h = 0, g = 0;

	for (int i = 0; i < n; i++) {
		h += (double)rows[i].host_ns;
		g += (double)rows[i].guest_ns;
	}
	return g > 0 ? h / g : 1.0;
}

/*
 * The hypercall budget of rows: a switch-in (base) and a switch-out or the
 * exit (account) per slice, plus START's base.
 */
static void report_rows_hc(const struct vperf_thread_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		printf("kmod-thread: hc switches %llu budget %llu\n",
		       (unsigned long long)rows[i].switches,
		       (unsigned long long)(2 * rows[i].switches + 2));
}

static void test_list_api(const char *m)
{
	struct vperf_thread_row rows[2];
	struct vperf_thread_list l;

	memset(&l, 0, sizeof(l));
	l.size = VPERF_THREAD_LIST_SIZE_VER0 - 8;
	check(ioctl(fd, VPERF_IOC_THREAD_LIST, &l) == -1 && errno == EINVAL, m,
	      "LIST size below VER0: EINVAL");
	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.row_size = 128;
	l.nr_rows = 1;
	l.rows = (uintptr_t)rows;
	check(ioctl(fd, VPERF_IOC_THREAD_LIST, &l) == -1 && errno == EINVAL, m,
	      "LIST row size below VER0: EINVAL");
	l.row_size = 65537;
	check(ioctl(fd, VPERF_IOC_THREAD_LIST, &l) == -1 && errno == EINVAL, m,
	      "LIST row size above 64 KiB: EINVAL");
	l.row_size = sizeof(rows[0]);
	l.rows = 8;	/* an address nobody maps */
	check(ioctl(fd, VPERF_IOC_THREAD_LIST, &l) == -1 && errno == EFAULT, m,
	      "LIST into a bad address: EFAULT");
	check(list_rows(fd, rows, 0, &l) == 0 && l.total >= 1, m,
	      "LIST with no room: 0 rows written, total says how many");
	check(list_rows(fd, rows, 2, &l) >= 1 && rows[l.nr_rows - 1].tid == gettid() &&
	      rows[l.nr_rows - 1].pid == getpid() && !(rows[l.nr_rows - 1].flags & VPERF_ROW_EXITED),
	      m, "LIST: this thread's row, pid and tid, live");
}

/* read: a thread that never sleeps reads an exact count through THREAD_READ. */
static void test_read(void)
{
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v0, v1;
	struct vperf_thread_row r;
	uint64_t t0, t1;
	char what[3][400];
	int ok[3];
	unsigned int i;

	pin(0);
	pg = start("read");
	if (!pg)
		return;
	quiesce();
	for (i = 0; i < 3; i++) {
		if (ioctl(fd, VPERF_IOC_THREAD_READ))
			check(0, "read", "THREAD_READ");
		page_read(pg, &v0);
		t0 = thread_ns();
		burn(100, NULL);
		t1 = thread_ns();
		if (ioctl(fd, VPERF_IOC_THREAD_READ))
			check(0, "read", "THREAD_READ");
		page_read(pg, &v1);
		memset(&r, 0, sizeof(r));
		r.tid = gettid();
		r.pid = getpid();
		r.switches = v1.switches - v0.switches;
		r.host_ns = v1.host_ns - v0.host_ns;
		r.guest_ns = v1.guest_ns - v0.guest_ns;
		for (unsigned int c = 0; c < VPERF_THREAD_NR_CTRS; c++)
			r.counters[c].value = v1.counters[c].value - v0.counters[c].value;
		snprintf(r.comm, sizeof(r.comm), "read");
		ok[i] = row_within(&r, t1 - t0, what[i], sizeof(what[i]));
	}
	/* two of three within TOLERANCE, as run_burners() does */
	for (i = 0; i < 3; i++)
		check(ok[0] + ok[1] + ok[2] >= 2, "read", what[i]);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "read", "THREAD_STOP");
	munmap((void *)pg, 4096);
	unpin();
}

/*
 * inherit: START with VPERF_THREAD_INHERIT, then 8 threads on 2 vCPUs,
 * moved between them by affinity every 20 ms of CPU time, burn 400 ms each,
 * and a child process burns 300 ms: every row within TOLERANCE of the
 * thread's own CPU time (a thread's whole CPU time at its end; the child's
 * from wait4's rusage), in host ns at the rows' overall clock ratio.
 */
#define NR_KIDS 8
static struct kid {
	pid_t tid;
	uint64_t cpu_ns;
	unsigned int ms;
} kids[NR_KIDS];

/* inherit: kids that burned wait, blocked, until released (kids_hold) */
static pthread_mutex_t kids_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kids_cond = PTHREAD_COND_INITIALIZER;
static int kids_hold, kids_done, kids_release;

static void *kid_run(void *arg)
{
	struct kid *k = arg;

	k->tid = gettid();
	pin((int)((k - kids) & 1));
	burn(k->ms, migrate_tick);
	k->cpu_ns = thread_ns();	/* all of it: the row has the thread's start too */
	pthread_mutex_lock(&kids_lock);
	kids_done++;
	pthread_cond_broadcast(&kids_cond);
	while (kids_hold && !kids_release)
		pthread_cond_wait(&kids_cond, &kids_lock);
	pthread_mutex_unlock(&kids_lock);
	return NULL;
}

/*
 * churn: monitored threads for the load/unload cycles.  The exit status says
 * whether every thread got an exited row with a count.
 */
static void test_churn(unsigned int ms, const char *ready)
{
	static struct vperf_thread_row rows[16];
	struct vperf_thread_start st;
	struct vperf_thread_list l;
	pthread_t th[4];
	char what[200];
	int i, n, fd_ready, counted = 0;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_INHERIT;
	if (ioctl(fd, VPERF_IOC_THREAD_START, &st)) {
		check(0, "churn", strerror(errno));
		return;
	}
	for (i = 0; i < 4; i++) {
		kids[i].ms = ms;
		pthread_create(&th[i], NULL, kid_run, &kids[i]);
	}
	fd_ready = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd_ready >= 0)
		close(fd_ready);
	/* the file stays open (and the module held) until the caller has tried rmmod and removed FILE */
	for (i = 0; i < 5000 && access(ready, F_OK) == 0; i++)
		usleep(1000);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* a joined thread may not have reached its exit probe yet */
	for (i = 0; i < 100 && threads_param() > 1; i++)
		usleep(10000);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "churn", "THREAD_STOP");
	n = list_rows(fd, rows, 16, &l);
	for (i = 0; i < n; i++)
		if (rows[i].tid != getpid() && (rows[i].flags & VPERF_ROW_EXITED) && rows[i].counters[0].value)
			counted++;
	snprintf(what, sizeof(what), "%d rows, %d exited threads with a count (want 5, 4)", n, counted);
	check(n == 5 && counted == 4, "churn", what);
	report_rows_hc(rows, n);	/* the thread-hc case sums every context's SNAPSHOTs */
}

/* ---- sample ---- */

extern char __start_vperf_hot3[], __stop_vperf_hot3[], __start_vperf_hot1[], __stop_vperf_hot1[];

static volatile uint64_t sink;

/*
 * hot3 and hot1 each run n iterations of a loop in user mode (no system
 * call: CLOCK_THREAD_CPUTIME_ID is one, and in some nested runs its cost
 * put three samples in four in the kernel).  Each lives in its own section,
 * so that a sampled IP tells which one ran; K only makes their code differ.
 */
#define HOT_FN(name, K)									\
	__attribute__((noinline, used, section("vperf_" #name)))			\
	static void name(uint64_t n)							\
	{										\
		for (uint64_t i = 0; i < n; i++)					\
			sink += i * (K);						\
	}
HOT_FN(hot3, 3)
HOT_FN(hot1, 5)

static volatile sig_atomic_t sample_sigs, sample_bad_sigs;

static void on_sample_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code == POLL_IN && si->si_fd == 4242)
		sample_sigs++;
	else
		sample_bad_sigs++;
}

#define SAMPLE_PERIOD 4000000	/* 4 ms: in nested TCG a sample (NMI, signal) costs ~0.5 ms, more under load */

struct sample_tally {
	unsigned long n3, n1, other, kernel, nonmono, novalues;
	uint64_t last_value;
	unsigned long missed;	/* periods between two records' values with no record of their own */
};

static void sample_drain(volatile struct vperf_sample_ring *hdr, const struct vperf_sample_record *recs,
			 struct sample_tally *t)
{
	uint64_t head = __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE), tail = hdr->tail;

	for (; tail < head; tail++) {
		const struct vperf_sample_record *r = &recs[tail % hdr->nr_records];
		const char *ip = (const char *)(uintptr_t)r->ip;

		if (!(r->flags & VPERF_SAMPLE_USER))
			t->kernel++;
		else if (ip >= __start_vperf_hot3 && ip < __stop_vperf_hot3)
			t->n3++;
		else if (ip >= __start_vperf_hot1 && ip < __stop_vperf_hot1)
			t->n1++;
		else
			t->other++;
		if (!(r->flags & VPERF_SAMPLE_VALUES))
			t->novalues++;
		else if (r->values[VPERF_THREAD_CTR_VCPU_CLOCK] < t->last_value)
			t->nonmono++;
		else {
			uint64_t v = r->values[VPERF_THREAD_CTR_VCPU_CLOCK], d = v - t->last_value;

			if (t->last_value && d >= SAMPLE_PERIOD + SAMPLE_PERIOD / 2)
				t->missed += (d + SAMPLE_PERIOD / 2) / SAMPLE_PERIOD - 1;
			t->last_value = v;
		}
	}
	__atomic_store_n(&hdr->tail, tail, __ATOMIC_RELEASE);
}

static long nmi_count_param(void)
{
	return module_param_value("nmi_count");
}

#define SAMPLE_CLOCK_NS 3200000000ull	/* 800 periods of the thread's vcpu-clock */
#define SAMPLE_SIG_CLOCK_NS 400000000ull	/* the signals' run: 100 periods */
#define SAMPLE_GUEST_CAP_NS 12000000000ull	/* at most 12 s of guest CPU time */

/*
 * The thread's vcpu-clock, fresh, through the doorbell (as doorbell_fresh():
 * a load the host answers, no guest kernel time, which would take samples
 * from the user IPs and not from the clock).
 */
static uint64_t sample_db_loads;	/* doorbell loads made: thread-doorbell-exits sums them */

static uint64_t sample_clock(const volatile struct vperf_thread_page *pg, const volatile uint64_t *db)
{
	for (;;) {
		uint32_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		uint64_t sum, base, v;

		if ((s1 & 1) || !pg->base_valid)
			continue;
		sum = pg->counters[VPERF_THREAD_CTR_VCPU_CLOCK].value;
		base = pg->base[VPERF_THREAD_CTR_VCPU_CLOCK];
		v = db[VPERF_THREAD_CTR_VCPU_CLOCK];
		sample_db_loads++;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == s1)
			return sum + (v - base);
	}
}

/* A sampling context of this thread on sfd, mapped: its ring, its page and the doorbell. */
struct sample_ctx {
	void *ring;
	volatile struct vperf_sample_ring *hdr;
	const struct vperf_sample_record *recs;
	const volatile struct vperf_thread_page *pg;
	const volatile uint64_t *db;
};

#define SAMPLE_PAGES 16

static int sample_open(int sfd, struct vperf_thread_start *st, struct sample_ctx *x)
{
	if (ioctl(sfd, VPERF_IOC_THREAD_START, st)) {
		check(0, "sample", strerror(errno));
		return -1;
	}
	x->ring = mmap(NULL, (1 + SAMPLE_PAGES) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, sfd,
		       VPERF_SAMPLE_PGOFF * 4096);
	x->pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, 0);
	x->db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, 4096);
	if (x->ring == MAP_FAILED || x->pg == MAP_FAILED || x->db == MAP_FAILED) {
		check(0, "sample", "mmap of the ring, the thread page and the doorbell");
		return -1;
	}
	x->hdr = x->ring;
	x->recs = (const struct vperf_sample_record *)((char *)x->ring + 4096);
	return 0;
}

static void sample_close(int sfd, struct sample_ctx *x)
{
	check(ioctl(sfd, VPERF_IOC_THREAD_STOP) == 0, "sample", "THREAD_STOP");
	munmap((void *)x->pg, 4096);
	munmap((void *)x->db, 4096);
	munmap(x->ring, (1 + SAMPLE_PAGES) * 4096);
}

/*
 * hot1 one slice, hot3 three times it: slices of 2..10 periods at a varying
 * phase, so that the periodic samples do not alias with a fixed split, and
 * long enough that a slice's count is its time over the period give or take
 * one (as tests/workloads/sample3to1.c explains).  The run lasts clock_ns of
 * the thread's vcpu-clock, the clock the samples follow: the guest's own CPU
 * time also has the time the host took from the vCPU (steal: a loaded CI
 * machine's 46% halved the samples of a run sized by guest time), and the
 * split the samples must show is each function's vcpu-clock (doorbell reads
 * around each).  The guest-time cap ends the run when the clock stalls.
 * ns[] and c[]: hot3's and hot1's guest CPU time and vcpu-clock; *clk the
 * clock the run took.
 */
static void sample_split(const struct sample_ctx *x, uint64_t clock_ns, struct sample_tally *t, uint64_t *ns,
			 uint64_t *c, uint64_t *clk)
{
	uint64_t done, seed, clk0, before, mid, after, t0, t1, t2, per_ms;
	int i = 0;

	/* the loop's speed, for slices in iterations */
	t0 = thread_ns();
	hot1(1000000);
	t1 = thread_ns();
	per_ms = 1000000ull * 1000000 / (t1 - t0 ? t1 - t0 : 1);
	clk0 = after = sample_clock(x->pg, x->db);
	for (done = 0, seed = 12345; done < SAMPLE_GUEST_CAP_NS; ) {
		uint64_t slice;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		slice = 2 * SAMPLE_PERIOD + (seed >> 33) % (8 * SAMPLE_PERIOD);	/* 2..10 periods */
		before = after;
		t0 = thread_ns();
		hot3(3 * slice / 1000000 * per_ms);
		mid = sample_clock(x->pg, x->db);
		t1 = thread_ns();
		hot1(slice / 1000000 * per_ms);
		after = sample_clock(x->pg, x->db);
		t2 = thread_ns();
		ns[0] += t1 - t0;
		ns[1] += t2 - t1;
		c[0] += mid - before;
		c[1] += after - mid;
		done += t2 - t0;
		if (++i % 8 == 0)
			sample_drain(x->hdr, x->recs, t);
		if (after - clk0 >= clock_ns)
			break;
	}
	usleep(10000);
	sample_drain(x->hdr, x->recs, t);
	*clk = sample_clock(x->pg, x->db) - clk0;
}

/*
 * Two contexts one after the other: one with a signal per sample (the
 * signals' fields, the ring's header and mmap errors), then the split,
 * without signals: their delivery (an irq_work interrupt, the handler) is
 * guest kernel time after each sample, which takes samples from the user
 * IPs (up to half of them in one nested run) and blurs the split.
 */
static void test_sample(void)
{
	struct vperf_thread_start st;
	struct sample_tally t = { 0 };
	struct sigaction sa;
	struct sample_ctx x;
	struct vperf_info info;
	char what[640];
	long nmi0, nmi1, thr0, thr1;
	uint64_t ns[2] = { 0 }, c[2] = { 0 }, clk;
	double ratio, want, expect;
	unsigned long total;
	int sfd;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, VPERF_IOC_INFO, &info) || !(info.features & VPERF_FEAT_OVERFLOW_NMI)) {
		check(0, "sample", "the device offers no overflow NMIs (VPERF_FEAT_OVERFLOW_NMI)");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sample_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 4, &sa, NULL);
	/* the ring maps read-write (the reader stores tail): a file open for writing */
	sfd = open("/dev/" VPERF_DEV_NAME, O_RDWR);
	if (sfd < 0) {
		check(0, "sample", "open /dev/vperf O_RDWR");
		return;
	}
	pin(0);
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_SAMPLE;
	st.sample_counter = VPERF_THREAD_CTR_VCPU_CLOCK;
	st.sample_pages = 3;	/* not a power of 2 */
	st.sample_period = SAMPLE_PERIOD;
	st.sample_signo = SIGRTMIN + 4;
	st.sample_cookie = 4242;
	check(ioctl(sfd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, "sample", "3 ring pages: EINVAL");
	st.sample_pages = SAMPLE_PAGES;
	st.sample_period = 1000;
	check(ioctl(sfd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, "sample",
	      "a period under 100 us: EINVAL");
	st.sample_period = SAMPLE_PERIOD;
	st.tid = getppid();
	check(ioctl(sfd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, "sample",
	      "sampling another thread: EINVAL");
	st.tid = 0;
	check(mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, VPERF_SAMPLE_PGOFF * 4096) == MAP_FAILED &&
	      errno == ENOENT, "sample", "a ring mapping before START: ENOENT");

	/* the signals */
	if (sample_open(sfd, &st, &x))
		goto out;
	check(mmap(NULL, 4096, PROT_READ, MAP_SHARED, sfd, VPERF_SAMPLE_PGOFF * 4096) == MAP_FAILED &&
	      errno == EINVAL, "sample", "a ring mapping of the wrong size: EINVAL");
	snprintf(what, sizeof(what), "ring header: size %u version %u record %u records %u period %llu",
		 x.hdr->size, x.hdr->version, x.hdr->record_size, x.hdr->nr_records,
		 (unsigned long long)x.hdr->period);
	check(x.hdr->size == sizeof(struct vperf_sample_ring) && x.hdr->version == VPERF_SAMPLE_RING_VERSION &&
	      x.hdr->record_size == sizeof(struct vperf_sample_record) && x.hdr->nr_records == SAMPLE_PAGES * 64 &&
	      x.hdr->period == SAMPLE_PERIOD, "sample", what);
	quiesce();
	sample_split(&x, SAMPLE_SIG_CLOCK_NS, &t, ns, c, &clk);
	total = t.n3 + t.n1 + t.other + t.kernel;
	snprintf(what, sizeof(what), "signals: %d with POLL_IN and the cookie, %d other, for %lu samples in %.1f ms "
		 "(lost %llu)", (int)sample_sigs, (int)sample_bad_sigs, total, clk / 1e6,
		 (unsigned long long)x.hdr->lost);
	check(sample_sigs > 0 && total > 0 && (unsigned long)sample_sigs <= total && !sample_bad_sigs &&
	      x.hdr->lost == 0, "sample", what);
	sample_close(sfd, &x);

	/* the split */
	st.sample_signo = 0;
	st.sample_cookie = 0;
	memset(&t, 0, sizeof(t));
	memset(ns, 0, sizeof(ns));
	memset(c, 0, sizeof(c));
	if (sample_open(sfd, &st, &x))
		goto out;
	nmi0 = nmi_count_param();
	thr0 = module_param_value("overflow_throttled");
	quiesce();
	sample_split(&x, SAMPLE_CLOCK_NS, &t, ns, c, &clk);
	nmi1 = nmi_count_param();
	thr1 = module_param_value("overflow_throttled");
	ratio = t.n1 ? (double)t.n3 / (double)t.n1 : 0;
	want = c[1] ? (double)c[0] / (double)c[1] : 0;	/* 3, the last checks' overshoot, steal's scatter */
	total = t.n3 + t.n1 + t.other + t.kernel;
	expect = (double)clk / SAMPLE_PERIOD;
	snprintf(what, sizeof(what),
		 "samples: hot3 %lu hot1 %lu (ratio %.3f; their vcpu-clock %.1f and %.1f ms: %.3f, within 10%%; "
		 "guest CPU time %.1f and %.1f ms), elsewhere %lu, in the kernel %lu: %lu in %.1f ms of vcpu-clock "
		 "(%.0f periods: with the %lu the values skip, within 10%%; %ld throttled), lost %llu; values "
		 "without %lu, backwards %lu; NMIs %ld",
		 t.n3, t.n1, ratio, c[0] / 1e6, c[1] / 1e6, want, ns[0] / 1e6, ns[1] / 1e6, t.other, t.kernel,
		 total, clk / 1e6, expect, t.missed, thr1 - thr0, (unsigned long long)x.hdr->lost, t.novalues,
		 t.nonmono, nmi1 - nmi0);
	/*
	 * Every period of the clock is a sample or a gap between two samples'
	 * values: the host's task-clock hrtimer folds the periods it overran
	 * into one overflow (the fresh clone's CI machine, stealing from L1:
	 * 692 samples for 809 periods, none throttled), the host's pacing
	 * doubles the period when the guest has not taken the last NMI (docs/
	 * abi.md 2.4: 0..5 times a run here, up to 218 periods skipped), and
	 * the values say so.  400 user samples keep the split meaningful.
	 */
	check(t.n3 + t.n1 >= 400 && ratio >= 0.9 * want && ratio <= 1.1 * want &&
	      total + t.missed >= 0.9 * expect && total + t.missed <= 1.1 * expect + 2 && x.hdr->lost == 0 && !t.nonmono && t.novalues * 10 < t.n3 + t.n1 &&
	      nmi1 - nmi0 >= (long)(t.n3 + t.n1), "sample", what);
	printf("kmod-thread: doorbell loads %llu\n", (unsigned long long)sample_db_loads);
	sample_close(sfd, &x);
out:
	close(sfd);
	unpin();
}

static void test_steal(void)
{
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v0, v1;
	uint64_t w0, w1, t0, t1;
	double ratio, wall, clk, steal, lost;
	char what[400], line[480];
	int i, good = 0;

	pin(0);
	pg = start("steal");
	if (!pg)
		return;
	quiesce();
	for (i = 0; i < 3; i++) {	/* three rounds, two must agree (as run_burners()) */
		usleep(1000);	/* v0 is a slice boundary */
		page_read(pg, &v0);
		w0 = clock_ns(CLOCK_MONOTONIC);
		t0 = thread_ns();
		burn(300, NULL);
		t1 = thread_ns();
		w1 = clock_ns(CLOCK_MONOTONIC);
		usleep(1000);
		page_read(pg, &v1);
		ratio = (double)(v1.host_ns - v0.host_ns) / (double)(v1.guest_ns - v0.guest_ns);
		wall = (double)(w1 - w0) * ratio;
		clk = (double)(v1.counters[VPERF_THREAD_CTR_VCPU_CLOCK].value -
			       v0.counters[VPERF_THREAD_CTR_VCPU_CLOCK].value);
		steal = (double)(v1.counters[VPERF_THREAD_CTR_STEAL].value -
				 v0.counters[VPERF_THREAD_CTR_STEAL].value);
		/* the slices' host time less what the vCPU thread ran: the thread's inflation */
		lost = (double)(v1.host_ns - v0.host_ns) - clk;
		snprintf(what, sizeof(what),
			 "round %d: thread-cputime %.1f ms, wall %.1f ms (host ns), slices %.1f ms, vcpu-clock %.1f ms: "
			 "inflation %.1f ms (%.0f%% of wall), steal %.1f ms, error %+.1f%% (host/guest %.4f)",
			 i + 1, (t1 - t0) / 1e6, wall / 1e6, (v1.host_ns - v0.host_ns) / 1e6, clk / 1e6,
			 lost / 1e6, 100 * lost / wall, steal / 1e6, lost > 0 ? 100 * (steal - lost) / lost : 0, ratio);
		good += lost >= 0.2 * wall && steal >= 0.9 * lost && steal <= 1.1 * lost;
		printf("kmod-thread: steal-round %s\n", what);
	}
	snprintf(line, sizeof(line), "%d of 3 rounds within 10%% (last %.400s)", good, what);
	check(good >= 2, "steal", line);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "steal", "THREAD_STOP");
	munmap((void *)pg, 4096);
	unpin();
}

static void ev_set(struct vperf_thread_event *ev, uint32_t source, uint64_t arg, const char *name);
static int start_events(const struct vperf_thread_event *ev, uint32_t n, int *bad,
			const struct vperf_thread_page **pg);
static uint64_t vcpu_total(int cpu, unsigned int slot);

/* A guest-accounted context on the calling thread: vcpu-clock (counter 0) and steal (1). */
static const struct vperf_thread_page *start_guest(const char *mode)
{
	struct vperf_thread_event ev[2];
	const struct vperf_thread_page *pg = NULL;
	char what[120];
	int bad, ret;

	ev_set(&ev[0], VPERF_SRC_PERF, 0, "task-clock");
	ev_set(&ev[1], VPERF_SRC_STEAL, 0, "steal");
	ret = start_events(ev, 2, &bad, &pg);
	if (ret) {
		snprintf(what, sizeof(what), "THREAD_START with vcpu-clock and steal: %s", strerror(-ret));
		check(0, mode, what);
		return NULL;
	}
	return pg;
}

/*
 * steal-guest (1 vCPU, a host CPU hog beside it: steal.sh): the same
 * thread's vcpu-clock and steal accounted by the guest alone (its clock and
 * KVM's steal-time record, no hypercall at switches) against what the host
 * says the vCPU ran and lost over the same rounds (VPERF_IOC_VCPU_TOTALS:
 * the vCPU thread's task-clock and schedstat run delay, read by the VMM):
 * the thread is all the vCPU runs, so steal within 10% and vcpu-clock
 * within 3% of the vCPU's, in 2 rounds of 3, with the loss >= 20% of wall.
 */
static void test_steal_guest(void)
{
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v0, v1;
	uint64_t c0, c1, s0, s1, w0, w1, h0, h1;
	double clk, steal, hclk, hsteal, wall;
	char what[400], line[480];
	int i, good = 0;

	pin(0);
	pg = start_guest("steal-guest");
	if (!pg)
		return;
	h0 = module_param_value("hypercalls");
	quiesce();
	for (i = 0; i < 3; i++) {
		usleep(1000);
		c0 = vcpu_total(0, VPERF_THREAD_CTR_VCPU_CLOCK);
		s0 = vcpu_total(0, VPERF_THREAD_CTR_STEAL);
		w0 = clock_ns(CLOCK_MONOTONIC);
		page_read(pg, &v0);
		burn(300, NULL);
		usleep(1000);	/* a switch-out: the page holds the burn */
		page_read(pg, &v1);
		w1 = clock_ns(CLOCK_MONOTONIC);
		c1 = vcpu_total(0, VPERF_THREAD_CTR_VCPU_CLOCK);
		s1 = vcpu_total(0, VPERF_THREAD_CTR_STEAL);
		clk = (double)(v1.counters[0].value - v0.counters[0].value);
		steal = (double)(v1.counters[1].value - v0.counters[1].value);
		hclk = (double)(c1 - c0);
		hsteal = (double)(s1 - s0);
		wall = (double)(w1 - w0);
		snprintf(what, sizeof(what), "round %d: guest-accounted vcpu-clock %.1f ms, steal %.1f ms; the host's "
			 "for the vCPU: vcpu-clock %.1f ms (%+.1f%%), steal %.1f ms (%+.1f%%); wall %.1f ms, %llu slices",
			 i + 1, clk / 1e6, steal / 1e6, hclk / 1e6, hclk > 0 ? 100 * (clk - hclk) / hclk : 0,
			 hsteal / 1e6, hsteal > 0 ? 100 * (steal - hsteal) / hsteal : 0, wall / 1e6,
			 (unsigned long long)(v1.switches - v0.switches));
		good += hsteal >= 0.2 * wall && steal >= 0.9 * hsteal && steal <= 1.1 * hsteal &&
			clk >= (1 - TOLERANCE) * hclk && clk <= (1 + TOLERANCE) * hclk;
		printf("kmod-thread: steal-guest-round %s\n", what);
	}
	h1 = module_param_value("hypercalls");
	snprintf(line, sizeof(line), "%d of 3 rounds within 10%% (steal) and 3%% (vcpu-clock), module hypercalls "
		 "%llu (the totals' only) (last %.300s)", good, (unsigned long long)(h1 - h0), what);
	check(good >= 2, "steal-guest", line);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "steal-guest", "THREAD_STOP");
	munmap((void *)pg, 4096);
	unpin();
}

/*
 * guest: guest-accounted contexts (vcpu-clock and steal only).  A thread
 * burning 300 ms: its vcpu-clock within 3% of its CPU time in 2 of 3
 * rounds; two such threads on CPU 0 ping-ponging 1000 trips through pipes
 * (2000 switches between monitored threads): the module makes no
 * hypercall at all (its `hypercalls` parameter), where contexts of the
 * fixed three (exits needs the host) make one per switch.
 */
static int pp_a[2], pp_b[2];
static int pp_guest;

static void *pp_partner(void *arg)
{
	const struct vperf_thread_page *pg;
	char c;

	(void)arg;
	pin(0);
	pg = pp_guest ? start_guest("guest") : start("guest");
	for (int i = 0; i < 1000 + 10; i++)
		if (read(pp_a[0], &c, 1) != 1 || write(pp_b[1], &c, 1) != 1)
			break;
	ioctl(fd, VPERF_IOC_THREAD_STOP);
	if (pg)
		munmap((void *)pg, 4096);
	return NULL;
}

/* 1000 timed trips between two monitored threads on CPU 0: module hypercalls made, ns per trip. */
static uint64_t ping_pong(int guest, double *ns_trip)
{
	const struct vperf_thread_page *pg;
	pthread_t th;
	uint64_t h0, h1, t0, t1;
	char c = 'x';

	pp_guest = guest;
	if (pipe(pp_a) || pipe(pp_b))
		return ~0ull;
	pin(0);
	pg = guest ? start_guest("guest") : start("guest");
	pthread_create(&th, NULL, pp_partner, NULL);
	for (int i = 0; i < 10; i++)	/* the partner's context starts meanwhile */
		if (write(pp_a[1], &c, 1) != 1 || read(pp_b[0], &c, 1) != 1)
			return ~0ull;
	h0 = module_param_value("hypercalls");
	t0 = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < 1000; i++)
		if (write(pp_a[1], &c, 1) != 1 || read(pp_b[0], &c, 1) != 1)
			return ~0ull;
	t1 = clock_ns(CLOCK_MONOTONIC);
	h1 = module_param_value("hypercalls");
	pthread_join(th, NULL);
	ioctl(fd, VPERF_IOC_THREAD_STOP);
	if (pg)
		munmap((void *)pg, 4096);
	close(pp_a[0]);
	close(pp_a[1]);
	close(pp_b[0]);
	close(pp_b[1]);
	*ns_trip = (double)(t1 - t0) / 1000;
	return h1 - h0;
}

static void test_guest(void)
{
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v0, v1;
	uint64_t t0, t1, hc_guest, hc_host;
	double err, ns_guest, ns_host;
	char what[300];
	int good = 0;

	pin(0);
	pg = start_guest("guest");
	if (!pg)
		return;
	quiesce();
	for (int i = 0; i < 3; i++) {
		usleep(1000);
		page_read(pg, &v0);
		t0 = thread_ns();
		burn(300, NULL);
		t1 = thread_ns();
		usleep(1000);
		page_read(pg, &v1);
		err = ((double)(v1.counters[0].value - v0.counters[0].value) - (double)(t1 - t0)) / (double)(t1 - t0);
		good += err >= -TOLERANCE && err <= TOLERANCE;
		printf("kmod-thread: guest-round %d: vcpu-clock %.3f ms thread-cputime %.3f ms error %+.2f%% steal "
		       "%.3f ms slices %llu base_valid %u\n", i + 1,
		       (v1.counters[0].value - v0.counters[0].value) / 1e6, (t1 - t0) / 1e6, 100 * err,
		       (v1.counters[1].value - v0.counters[1].value) / 1e6,
		       (unsigned long long)(v1.switches - v0.switches), v1.base_valid);
	}
	snprintf(what, sizeof(what), "%d of 3 rounds of 300 ms within 3%% of the thread's CPU time "
		 "(guest-accounted: no doorbell base, base_valid %u)", good, v1.base_valid);
	check(good >= 2 && !v1.base_valid, "guest", what);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "guest", "THREAD_STOP");
	munmap((void *)pg, 4096);

	hc_guest = ping_pong(1, &ns_guest);
	hc_host = ping_pong(0, &ns_host);
	snprintf(what, sizeof(what), "1000 trips between two monitored threads: %llu module hypercalls "
		 "guest-accounted (%.1f us per trip), %llu with the fixed three (%.1f us per trip)",
		 (unsigned long long)hc_guest, ns_guest / 1e3, (unsigned long long)hc_host, ns_host / 1e3);
	check(hc_guest == 0 && hc_host >= 2000 && hc_host <= 2000 + 100, "guest", what);
	unpin();
}

/*
 * hostcs (1 vCPU, a host CPU hog beside it: steal.sh): a thread counting
 * vperf::host:context-switches (the vCPU thread's host context switches,
 * over the thread's slices) burns 300 ms between two UCALL VALUES reports,
 * which this program makes itself (ioperm on the device's port; the
 * report's guest-physical address from /proc/self/pagemap).  vperf-vmm
 * prints with each report its vCPU thread's own switch counts
 * (/proc/thread-self/status): steal.sh compares the host's advance with
 * the thread's count, printed here per round.
 */
static struct vperf_ucall *hc_uc;
static uint64_t hc_uc_gpa;
static uint16_t hc_port;

static int ucall_setup(void)
{
	struct vperf_info info;
	uint64_t ent;
	int pm;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, VPERF_IOC_INFO, &info) || !info.port || ioperm(info.port, 4, 1))
		return -1;
	hc_port = (uint16_t)info.port;
	hc_uc = aligned_alloc(4096, 4096);
	if (!hc_uc || mlock(hc_uc, 4096))
		return -1;
	memset(hc_uc, 0, 4096);
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0)
		return -1;
	if (pread(pm, &ent, sizeof(ent), (off_t)((uintptr_t)hc_uc / 4096 * 8)) != (ssize_t)sizeof(ent)) {
		close(pm);
		return -1;
	}
	close(pm);
	if (!(ent >> 63) || !(ent & ((1ull << 55) - 1)))
		return -1;	/* not present, or no PFN (not root) */
	hc_uc_gpa = (ent & ((1ull << 55) - 1)) * 4096;
	return 0;
}

/* UCALL VALUES msg from user mode: one port write. */
static long ucall_values(const char *msg)
{
	uint64_t rax = VPERF_HC_UCALL;

	memset(hc_uc, 0, sizeof(*hc_uc));
	hc_uc->cmd = VPERF_UCALL_VALUES;
	snprintf(hc_uc->msg, sizeof(hc_uc->msg), "%s", msg);
	__asm__ __volatile__("outl %%eax, %%dx" : "+a"(rax) : "d"(hc_port), "b"(hc_uc_gpa), "c"(0ull),
			     "S"(0ull), "D"(0ull) : "memory");
	return (long)rax;
}

static void test_hostcs(void)
{
	struct vperf_thread_event ev[1];
	const struct vperf_thread_page *pg = NULL;
	struct vperf_thread_page v0, v1;
	uint64_t n[3];
	char msg[64];
	int bad, ret;
	long r1 = 0, r2 = 0;

	pin(0);
	if (ucall_setup()) {
		check(0, "hostcs", "a UCALL from user mode: ioperm, mlock and /proc/self/pagemap (root)");
		return;
	}
	ev_set(&ev[0], VPERF_SRC_PERF, 0, "context-switches");
	ret = start_events(ev, 1, &bad, &pg);
	if (ret) {
		check(0, "hostcs", strerror(-ret));
		return;
	}
	quiesce();
	for (int i = 0; i < 3; i++) {
		ioctl(fd, VPERF_IOC_THREAD_READ);
		page_read(pg, &v0);
		snprintf(msg, sizeof(msg), "hostcs-begin-%d", i + 1);
		r1 |= ucall_values(msg);
		burn(300, NULL);
		snprintf(msg, sizeof(msg), "hostcs-end-%d", i + 1);
		r2 |= ucall_values(msg);
		ioctl(fd, VPERF_IOC_THREAD_READ);
		page_read(pg, &v1);
		n[i] = v1.counters[0].value - v0.counters[0].value;
	}
	for (int i = 0; i < 3; i++)
		printf("kmod-thread: hostcs-round %d: thread %llu\n", i + 1, (unsigned long long)n[i]);
	snprintf(msg, sizeof(msg), "UCALL results %ld %ld", r1, r2);
	check(r1 == 0 && r2 == 0, "hostcs", msg);
	ioctl(fd, VPERF_IOC_THREAD_STOP);
	munmap((void *)pg, 4096);
	unpin();
}

/*
 * mux: more events live than the vCPUs count at once (3 fixed + 17 others:
 * 20 on 16 slots): the module rotates them every mux_ms, and a context's counts of
 * each cover only its turns (running < enabled).  Known answer: a thread
 * making 20000 port writes counts 7 events alone (no other context: every
 * event on a slot all the time), then again while two blocked threads hold
 * contexts of 11 more events; each count-type event's scaled count
 * (value * enabled / running) within 5% of the one counted alone, in 2 of 3
 * rounds, and the rotation visible (running < enabled).  A time-type event
 * varies by ~10% between runs in nested TCG (the vCPU thread's CPU time for
 * the same writes), so the multiplexed cpu-clock is held against the same
 * run's task-clock (event 0, on its fixed slot: never multiplexed) instead.
 */
#define MUX_WRITES	20000
#define MUX_M		7
#define MUX_H		11

static struct vperf_thread_event mux_m[MUX_M], mux_h[MUX_H];
static int mux_go[2];

static void *mux_holder(void *arg)
{
	const struct vperf_thread_event *ev = arg;
	int bad, ret;
	char c;

	ret = start_events(ev, ev == mux_h ? 7 : MUX_H - 7, &bad, NULL);
	if (ret)
		printf("kmod-thread: mux holder: THREAD_START %s (event %d)\n", strerror(-ret), bad);
	if (read(mux_go[0], &c, 1) < 0)	/* blocked, the context live, until the pipe closes */
		return NULL;
	if (!ret)
		ioctl(fd, VPERF_IOC_THREAD_STOP);
	return NULL;
}

/* The measured run: MUX_M events over MUX_WRITES port writes; counts (raw, enabled, running). */
static int mux_run(struct vperf_thread_counter *out)
{
	const struct vperf_thread_page *pg = NULL;
	struct vperf_thread_page v0, v1;
	int bad, ret;

	ret = start_events(mux_m, MUX_M, &bad, &pg);
	if (ret) {
		printf("kmod-thread: mux THREAD_START %s (event %d)\n", strerror(-ret), bad);
		return ret;
	}
	ioctl(fd, VPERF_IOC_THREAD_READ);
	page_read(pg, &v0);
	for (int i = 0; i < MUX_WRITES; i++)
		__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
	ioctl(fd, VPERF_IOC_THREAD_READ);
	page_read(pg, &v1);
	for (int i = 0; i < MUX_M; i++) {
		out[i].value = v1.counters[i].value - v0.counters[i].value;
		out[i].enabled = v1.counters[i].enabled - v0.counters[i].enabled;
		out[i].running = v1.counters[i].running - v0.counters[i].running;
	}
	ioctl(fd, VPERF_IOC_THREAD_STOP);
	munmap((void *)pg, 4096);
	return 0;
}

static void test_mux(void)
{
	static const char *const measured_stats[] = { "io_exits", "exits", "host_state_reload" };
	struct vperf_thread_counter ref[MUX_M], mux[MUX_M];
	struct vperf_event_query q;
	char what[900], line[1000];
	int nh = 0, good = 0, rotated = 0;

	pin(0);
	if (ioperm(0x80, 1, 1)) {
		check(0, "mux", "ioperm");
		return;
	}
	/* the measured thread's: port writes and what follows them, and the vCPU thread's cpu-clock */
	ev_set(&mux_m[0], VPERF_SRC_EXITS, 2, "");
	for (int i = 0; i < 3; i++)
		ev_set(&mux_m[1 + i], VPERF_SRC_KVM_STAT, 0, measured_stats[i]);
	ev_set(&mux_m[4], VPERF_SRC_PERF, 0, "cpu-clock");
	ev_set(&mux_m[5], VPERF_SRC_PERF, 0, "task-clock");	/* fixed: the time reference */
	ev_set(&mux_m[6], VPERF_SRC_EXITS, 6, "");
	/* the holders': 11 other KVM statistics the host offers */
	for (uint32_t n = 0; n < 1000 && nh < MUX_H; n++) {
		int dup = 0;

		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.index = n;
		if (ioctl(fd, VPERF_IOC_EVENT_INFO, &q))
			break;
		if (q.status || q.event.source != VPERF_SRC_KVM_STAT)
			continue;
		for (int i = 0; i < MUX_M; i++)
			dup |= mux_m[i].source == VPERF_SRC_KVM_STAT && !strcmp(mux_m[i].name, q.event.name);
		if (!dup && strcmp(q.event.name, "halt_exits"))
			ev_set(&mux_h[nh++], VPERF_SRC_KVM_STAT, 0, q.event.name);
	}
	if (nh < MUX_H) {
		check(0, "mux", "the host offers fewer than 11 more KVM statistics");
		return;
	}
	quiesce();
	what[0] = '\0';
	for (int r = 0; r < 3; r++) {
		pthread_t th[2];
		int ok = 1, off = 0;

		if (mux_run(ref))
			break;
		if (pipe(mux_go))
			break;
		pthread_create(&th[0], NULL, mux_holder, mux_h);
		pthread_create(&th[1], NULL, mux_holder, mux_h + 7);
		usleep(100000);	/* both contexts live: 20 events */
		if (mux_run(mux))
			break;
		close(mux_go[1]);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
		close(mux_go[0]);
		off = snprintf(what, sizeof(what), "round %d:", r + 1);
		for (int i = 0; i < MUX_M && off < (int)sizeof(what) - 100; i++) {
			double scaled = mux[i].running ? (double)mux[i].value * mux[i].enabled / mux[i].running : 0;
			/* cpu-clock against this run's task-clock; counts against the run alone */
			double want = i == 4 ? (double)mux[5].value : (double)ref[i].value;
			double err = want ? (scaled - want) / want : 0;

			/* task-clock (5) is the reference: fixed, never multiplexed; time varies between runs */
			if (i != 5 && want >= 1000 && (err > 0.05 || err < -0.05))
				ok = 0;
			if (i == 5 && mux[i].running != mux[i].enabled)
				ok = 0;
			rotated |= mux[i].running < mux[i].enabled;
			off += snprintf(what + off, sizeof(what) - off, " %s%s%llu: %s %llu, shared %.0f (%llu x %.3f, %+.1f%%);",
					mux_m[i].source == VPERF_SRC_EXITS ? "exits:" : "", mux_m[i].name,
					(unsigned long long)mux_m[i].arg, i == 4 ? "its task-clock" : "alone",
					(unsigned long long)want, scaled,
					(unsigned long long)mux[i].value,
					mux[i].running ? (double)mux[i].enabled / mux[i].running : 0, 100 * err);
		}
		good += ok;
		printf("kmod-thread: mux-round %s\n", what);
	}
	snprintf(line, sizeof(line), "%d of 3 rounds with every event within 5%% (counts: of the run alone; "
		 "cpu-clock: of its task-clock), "
		 "rotated %d (last %.700s)", good, rotated, what);
	check(good >= 2 && rotated, "mux", line);
	unpin();
}

static uint64_t conserve_deadline;	/* CLOCK_MONOTONIC ns */

/*
 * Pinned for good (a move by affinity runs the migration thread, which no
 * context counts), burning until one deadline for all: both vCPUs stay busy
 * with monitored threads until the same moment, then the kids exit.
 */
static void *conserve_kid(void *arg)
{
	struct kid *k = arg;

	pin((int)((k - kids) & 1));
	while (clock_ns(CLOCK_MONOTONIC) < conserve_deadline)
		;
	return NULL;
}

/* A task's CPU time in guest ns (/proc/.../schedstat: sum_exec_runtime). */
struct task_time {
	int tid;
	uint64_t ns;
};

#define MAX_TASKS 1024

/* Every task of every other process (kernel threads included): how many, into tt. */
static int others_read(struct task_time *tt, int max)
{
	char path[64];
	struct dirent *p, *t;
	DIR *pd = opendir("/proc"), *td;
	int n = 0;

	if (!pd)
		return 0;
	while ((p = readdir(pd)) && n < max) {
		int pid = atoi(p->d_name);

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		td = opendir(path);
		if (!td)
			continue;
		while ((t = readdir(td)) && n < max) {
			unsigned long long ns;
			FILE *f;
			int tid = atoi(t->d_name);

			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fscanf(f, "%llu", &ns) == 1)
				tt[n++] = (struct task_time){ tid, ns };
			fclose(f);
		}
		closedir(td);
	}
	closedir(pd);
	return n;
}

/* The CPU time the tasks of b ran since a (a task new in b: all of its time). */
static double others_delta(const struct task_time *a, int na, const struct task_time *b, int nb)
{
	double sum = 0;

	for (int i = 0; i < nb; i++) {
		uint64_t before = 0;

		for (int j = 0; j < na; j++)
			if (a[j].tid == b[i].tid)
				before = a[j].ns;
		sum += b[i].ns >= before ? (double)(b[i].ns - before) : 0;
	}
	return sum;
}

/*
 * The issue's goal, 0.5%, for the rows plus what every other task ran (the
 * guest's own sum_exec_runtime of kernel threads and other processes):
 * vperf counts no kernel thread, and in nested TCG they take 0.3..1% of the
 * vCPUs (rcu_preempt most; kworkers, ksoftirqd, migration).  What is left is
 * idle (the host's halt polling, interrupts taken while idle): measured
 * -0.07..-0.17%.  The rows alone are printed too (-0.36..-1.06%).
 */
#define CONSERVE_TOLERANCE 0.005

/* One round: 1 when the rows and other tasks' time make the totals within CONSERVE_TOLERANCE; what says how. */
static int conserve_round(char *what, size_t size)
{
	static struct vperf_vcpu_totals t0, t1;
	static struct vperf_thread_row rows[16];
	static struct task_time o0[MAX_TASKS], o1[MAX_TASKS];
	int no0, no1;
	double others;
	struct vperf_thread_start st;
	struct vperf_thread_list l;
	pthread_t th[4];
	double rows_ns = 0, tot_ns = 0, err, all;
	int i, j, n, ok;
	/* a file of its own: its rows are this round's only */
	int f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_INHERIT;
	t0.size = t1.size = sizeof(t0);
	quiesce();
	no0 = others_read(o0, MAX_TASKS);
	if (ioctl(f, VPERF_IOC_THREAD_START, &st) || ioctl(f, VPERF_IOC_VCPU_TOTALS, &t0)) {
		snprintf(what, size, "START or VCPU_TOTALS: %s", strerror(errno));
		close(f);
		return 0;
	}
	conserve_deadline = clock_ns(CLOCK_MONOTONIC) + 1000000000ull;	/* ~500 ms each */
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, conserve_kid, &kids[i]);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* their exit probes; busy, not asleep: this thread's row counts the wait, an idle vCPU nobody's */
	for (uint64_t end = clock_ns(CLOCK_MONOTONIC) + 100000000; threads_param() > 1 &&
	     clock_ns(CLOCK_MONOTONIC) < end;)
		sched_yield();
	if (ioctl(f, VPERF_IOC_VCPU_TOTALS, &t1) || ioctl(f, VPERF_IOC_THREAD_STOP)) {
		snprintf(what, size, "VCPU_TOTALS or STOP: %s", strerror(errno));
		close(f);
		return 0;
	}
	no1 = others_read(o1, MAX_TASKS);
	others = others_delta(o0, no0, o1, no1);
	n = list_rows(f, rows, 16, &l);
	for (i = 0; i < n; i++)
		rows_ns += (double)rows[i].counters[VPERF_THREAD_CTR_VCPU_CLOCK].value;
	for (i = 0; i < (int)t1.nr_cpus; i++)
		for (j = 0; j < (int)t0.nr_cpus; j++)
			if (t0.cpus[j].cpu == t1.cpus[i].cpu)
				tot_ns += (double)(t1.cpus[i].value[VPERF_THREAD_CTR_VCPU_CLOCK] -
						   t0.cpus[j].value[VPERF_THREAD_CTR_VCPU_CLOCK]);
	err = tot_ns > 0 ? (rows_ns - tot_ns) / tot_ns : 1;
	all = tot_ns > 0 ? (rows_ns + others - tot_ns) / tot_ns : 1;
	snprintf(what, size, "%d rows: vcpu-clock %.3f ms; %u vCPUs' totals advanced %.3f ms: %+.3f%%; "
		 "other tasks ran %.3f ms (guest clock): rows + others %+.3f%%",
		 n, rows_ns / 1e6, t1.nr_cpus, tot_ns / 1e6, err * 100, others / 1e6, all * 100);
	ok = n == 5 && t0.nr_cpus == 2 && t1.nr_cpus == 2 && all <= CONSERVE_TOLERANCE &&
	     all >= -CONSERVE_TOLERANCE;
	close(f);
	return ok;
}

/* Three rounds, two within CONSERVE_TOLERANCE (as run_burners()). */
static void test_conserve(void)
{
	static struct vperf_vcpu_totals t;
	char what[900], line[700], rounds[3][300];
	int good = 0, i, status = -1;
	pid_t child;

	/* the totals are system-wide: a short struct is EINVAL, nobody's at paranoid 1 EACCES */
	t.size = VPERF_VCPU_TOTALS_SIZE_VER0 - 8;
	check(ioctl(fd, VPERF_IOC_VCPU_TOTALS, &t) == -1 && errno == EINVAL, "conserve",
	      "VCPU_TOTALS with a short struct: EINVAL");
	child = fork();
	if (child == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		t.size = sizeof(t);
		_exit(ioctl(fd, VPERF_IOC_VCPU_TOTALS, &t) == -1 && errno == EACCES ? 0 : 1);
	}
	waitpid(child, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "conserve",
	      "VCPU_TOTALS as uid 65534 at paranoid 1: EACCES");

	/*
	 * Nothing printed until the rounds are done: the console's bytes leave
	 * through the UART's interrupt, one port write (one exit) each, on
	 * whatever vCPU takes it, for tens of ms after printf() returns; when
	 * that is an idle vCPU, that time is in the totals and in no row.
	 */
	line[0] = 0;
	fflush(stdout);
	usleep(200000);
	for (i = 0; i < 3; i++) {
		good += conserve_round(rounds[i], sizeof(rounds[i]));
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%.200s", i ? "; " : "",
			 rounds[i]);
	}
	for (i = 0; i < 3; i++)
		printf("kmod-thread: conserve-round %d %s\n", i + 1, rounds[i]);
	snprintf(what, sizeof(what), "%d of 3 rounds with rows + other tasks within %.1f%% of the totals: ", good,
		 CONSERVE_TOLERANCE * 100);
	check(good >= 2, "conserve", strncat(what, line, sizeof(what) - strlen(what) - 1));
}

/*
 * One inherit round: 8 kids (400 ms each, migrating every tick) under the
 * inheriting context; 1 when every kid's row is within TOLERANCE of its CPU
 * time, *goal when within the issue's 2% as well; tids the kids' tids,
 * kid_goal[i] 1 when kid i's row is within the 2%.
 */
#define INHERIT_ROUNDS	3
#define INHERIT_GOAL	0.02

static int inherit_round(int round, pid_t *tids, int *goal, int *kid_goal)
{
	static struct vperf_thread_row rows[64];
	struct vperf_thread_list l;
	pthread_t th[NR_KIDS];
	char what[400];
	double ratio, worst = 0;
	int n, i, ok = 1;

	quiesce();
	kids_hold = 1;
	kids_done = kids_release = 0;
	for (i = 0; i < NR_KIDS; i++) {
		kids[i].ms = 400;
		pthread_create(&th[i], NULL, kid_run, &kids[i]);
	}
	/*
	 * One length for all, so that the 8 share both vCPUs to the end: a
	 * thread left alone moves onto an idle vCPU at every tick, where the
	 * guest's scheduler charges it the vCPU's wake-up latency (docs/abi.md 7).
	 *
	 * Each kid's row against its CLOCK_THREAD_CPUTIME_ID at one boundary:
	 * while it is blocked, its row is exact as of its last switch-out and
	 * so is its CPU clock, read here through pthread_getcpuclockid().  (After
	 * its exit the row also has the exit path past the thread's last
	 * clock_gettime(): +3% for a 100 ms thread in nested TCG.)
	 */
	pthread_mutex_lock(&kids_lock);
	while (kids_done < NR_KIDS)
		pthread_cond_wait(&kids_cond, &kids_lock);
	pthread_mutex_unlock(&kids_lock);
	usleep(5000);		/* the last one to report is switched out too */
	for (i = 0; i < NR_KIDS; i++) {
		clockid_t cid;

		if (pthread_getcpuclockid(th[i], &cid) == 0)
			kids[i].cpu_ns = clock_ns(cid);
		else
			ok = 0;
	}
	n = list_rows(fd, rows, 64, &l);
	ratio = rows_ratio(rows, n);
	for (i = 0; i < NR_KIDS; i++) {
		const struct vperf_thread_row *r = find_row(rows, n, kids[i].tid);
		double err;

		tids[i] = kids[i].tid;
		if (!r || (r->flags & VPERF_ROW_EXITED) || r->pid != getpid()) {
			printf("kmod-thread: inherit-round %d thread %d has no live row of pid %d\n", round,
			       kids[i].tid, getpid());
			ok = 0;
			continue;
		}
		ok &= row_within_ratio_err(r, kids[i].cpu_ns, ratio, what, sizeof(what), &err);
		if (err < 0)
			err = -err;
		kid_goal[i] = err <= INHERIT_GOAL;
		if (err > worst)
			worst = err;
		printf("kmod-thread: inherit-round %d %s\n", round, what);
	}
	pthread_mutex_lock(&kids_lock);
	kids_release = 1;
	pthread_cond_broadcast(&kids_cond);
	pthread_mutex_unlock(&kids_lock);
	for (i = 0; i < NR_KIDS; i++)
		pthread_join(th[i], NULL);
	kids_hold = 0;
	*goal = ok && worst <= INHERIT_GOAL;
	printf("kmod-thread: inherit-round %d worst error %.2f%%: %s\n", round, worst * 100,
	       ok ? (*goal ? "within 2%" : "within 3%") : "not within 3%");
	return ok;
}

static void test_inherit(void)
{
	static struct vperf_thread_row rows[64];
	static pid_t tids[INHERIT_ROUNDS][NR_KIDS];
	struct vperf_thread_start st;
	struct vperf_thread_list l;
	int n, i, j, status, good = 0, goal = 0, kid_goal[NR_KIDS], kid_good[NR_KIDS] = { 0 }, slots = 0;
	uint64_t child_cpu = 0;
	double ratio;
	pid_t child;
	char what[400];

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_INHERIT;
	if (ioctl(fd, VPERF_IOC_THREAD_START, &st)) {
		check(0, "inherit", strerror(errno));
		return;
	}
	for (i = 0; i < INHERIT_ROUNDS; i++) {
		int g;

		memset(kid_goal, 0, sizeof(kid_goal));
		good += inherit_round(i + 1, tids[i], &g, kid_goal);
		goal += g;
		for (j = 0; j < NR_KIDS; j++)
			kid_good[j] += kid_goal[j];
	}
	/* the issue's 2%, for each of the 8 threads in 2 of 3 rounds (one round in a few has an outlier) */
	for (j = 0; j < NR_KIDS; j++)
		slots += kid_good[j] >= 2;
	snprintf(what, sizeof(what), "%d of %d threads within %.0f%% in 2 of %d rounds; %d rounds with all within 3%%, "
		 "%d with all within 2%%", slots, NR_KIDS, INHERIT_GOAL * 100, INHERIT_ROUNDS, good, goal);
	check(slots == NR_KIDS, "inherit", what);
	child = fork();
	if (child == 0) {
		/* long enough that its exit path after the exit probe (files, signals: ~3 ms in
		 * nested TCG), which rusage has and the row not, stays under 1% */
		burn(300, NULL);
		_exit(0);
	}
	{
		struct rusage ru;

		if (wait4(child, &status, 0, &ru) == child)
			child_cpu = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	}
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "inherit", "THREAD_STOP of the parent");
	n = list_rows(fd, rows, 64, &l);
	snprintf(what, sizeof(what), "LIST: %d rows of %u, %llu lost (want %d, 0)", n, l.total,
		 (unsigned long long)l.lost, INHERIT_ROUNDS * NR_KIDS + 2);
	check(n == INHERIT_ROUNDS * NR_KIDS + 2 && l.total == (unsigned int)n && l.lost == 0, "inherit", what);
	ratio = rows_ratio(rows, n);
	for (i = 0, j = 0; i < INHERIT_ROUNDS * NR_KIDS; i++) {
		const struct vperf_thread_row *r = find_row(rows, n, tids[i / NR_KIDS][i % NR_KIDS]);

		j += r && (r->flags & VPERF_ROW_EXITED) && r->pid == getpid();
	}
	snprintf(what, sizeof(what), "%d of %d threads have a row after their exit, marked exited, in pid %d", j,
		 INHERIT_ROUNDS * NR_KIDS, getpid());
	check(j == INHERIT_ROUNDS * NR_KIDS, "inherit", what);
	{
		const struct vperf_thread_row *r = find_row(rows, n, child);

		check(r && row_within_ratio(r, child_cpu, ratio, what, sizeof(what)) && r->pid == child &&
		      (r->flags & VPERF_ROW_EXITED), "inherit", r ? what : "the child process has no row");
	}
	report_rows_hc(rows, n);
}

/*
 * attach: START for another process (blocked on a pipe until then) with
 * inheritance, as `vperf stat -- cmd` does; then the permission checks of
 * the paranoid setting, as an unprivileged user.
 */
static int start_tid(int f, pid_t tid, uint32_t flags)
{
	struct vperf_thread_start st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = flags;
	st.tid = tid;
	return ioctl(f, VPERF_IOC_THREAD_START, &st) ? -errno : 0;
}

static void *attach_kid(void *arg)
{
	uint64_t *ns = arg;

	/* 300 ms: its exit path (after the last CPU-time read, before the exit probe) took up to ~6 ms once */
	burn(300, NULL);
	*ns = thread_ns();	/* all of it: the thread started after START */
	return NULL;
}

static int set_paranoid(int v)
{
	FILE *f = fopen("/sys/module/vperf_guest/parameters/paranoid", "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", v);
	return fclose(f);
}

static void test_attach(void)
{
	static struct vperf_thread_row rows[8];
	int go[2], res[2], n, status, ret, ret2;
	uint64_t ns[2] = { 0, 0 };
	struct vperf_thread_list l;
	char what[400], c = 0;
	pid_t child, a, b;

	if (pipe(go) || pipe(res))
		return;
	child = fork();
	if (child == 0) {
		pthread_t th;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		pthread_create(&th, NULL, attach_kid, &ns[1]);
		burn(300, NULL);
		pthread_join(th, NULL);
		if (write(res[1], ns, sizeof(ns)) != sizeof(ns))
			_exit(1);
		_exit(0);
	}
	ret = start_tid(fd, child, VPERF_THREAD_INHERIT);
	ret2 = start_tid(fd, child, 0);
	quiesce();
	if (write(go[1], &c, 1) != 1 || read(res[0], ns, sizeof(ns)) != sizeof(ns))
		check(0, "attach", "the child did not report");
	{
		struct rusage ru;
		uint64_t total = 0;

		/* The main thread's share is the process's CPU time from rusage, which has its
		 * exit path up to the exit probe (closing its memory map: up to ~11 ms of nested
		 * TCG once, which a time read before _exit missed), less the thread's own. */
		if (wait4(child, &status, 0, &ru) == child)
			total = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
				(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
		ns[0] = total > ns[1] ? total - ns[1] : 0;
	}
	check(ret == 0, "attach", "START for another process");
	check(ret2 == -EBUSY, "attach", "second START for it: EBUSY");
	n = list_rows(fd, rows, 8, &l);
	check(n == 2, "attach", "two rows: the process and its thread");
	for (int i = 0; i < n; i++) {
		uint64_t want = rows[i].tid == child ? ns[0] : ns[1];

		check(rows[i].pid == child &&
		      row_within_ratio(&rows[i], want, rows_ratio(rows, n), what, sizeof(what)),
		      "attach", what);
	}
	report_rows_hc(rows, n);

	/* Permissions: nobody's process a attaches to nobody's b, and to root's self. */
	if (pipe(res))
		return;
	a = fork();
	if (a == 0) {
		int r[5], f;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		/* what a process started by that user is (a set-id change clears it) */
		prctl(PR_SET_DUMPABLE, 1);
		b = fork();
		if (b == 0) {
			pause();
			_exit(0);
		}
		f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
		r[0] = f < 0 ? -errno : 0;
		r[1] = start_tid(f, getppid(), 0);		/* root's process: EACCES */
		r[2] = start_tid(f, b, 0);			/* own user's: allowed at 1 */
		if (!r[2])
			r[2] = list_rows(f, rows, 8, NULL) == 1 ? 0 : -EINVAL;
		/* the parent switches paranoid to 2 between these two */
		if (write(res[1], r, 3 * sizeof(int)) < 0 || read(go[0], &c, 1) != 1)
			_exit(1);
		r[3] = start_tid(open("/dev/" VPERF_DEV_NAME, O_RDONLY), b, 0);	/* paranoid 2: EACCES */
		r[4] = start_tid(f, 0, 0);			/* itself: always */
		kill(b, SIGKILL);
		if (write(res[1], r + 3, 2 * sizeof(int)) < 0)
			_exit(1);
		/* b's context (a switch-in and its exit) and this one's (START, exit) */
		printf("kmod-thread: hc switches 0 budget 6\n");
		fflush(stdout);
		_exit(0);
	}
	{
		int r[5] = { 1, 1, 1, 1, 1 };

		if (read(res[0], r, 3 * sizeof(int)) != 3 * sizeof(int))
			check(0, "attach", "the unprivileged process did not report");
		check(set_paranoid(2) == 0, "attach", "paranoid = 2");
		if (write(go[1], &c, 1) != 1 || read(res[0], r + 3, 2 * sizeof(int)) != 2 * sizeof(int))
			check(0, "attach", "the unprivileged process did not report twice");
		waitpid(a, &status, 0);
		set_paranoid(1);
		snprintf(what, sizeof(what), "as uid 65534: open %d, root's thread %d, own user's %d, "
			 "own user's at paranoid 2 %d, itself %d (want 0 -%d 0 -%d 0)",
			 r[0], r[1], r[2], r[3], r[4], EACCES, EACCES);
		check(!r[0] && r[1] == -EACCES && !r[2] && r[3] == -EACCES && !r[4], "attach", what);
	}
}

/*
 * doorbell: a process attached by its parent (blocked on a pipe until then)
 * maps its page and the doorbell, enters seccomp strict mode (any system
 * call but read, write, exit and sigreturn kills it), and makes fresh
 * vcpu-clock reads with one doorbell load each: page sum + (load - base),
 * retried when seq moved.  The parent checks that it exited by itself (so
 * no other system call was made), that the values grow and the last is at
 * most the final row; then it puts the doorbell between THREAD_READs
 * itself (doorbell_sandwich), and prints the loads made for run.sh to
 * compare with vperf-vmm's doorbell count.
 */
#define DB_READS 200

struct db_result {
	uint64_t value[DB_READS];
	uint64_t loads, retries, no_base;
};

static void doorbell_child(int go, int res)
{
	static struct db_result r;
	const volatile struct vperf_thread_page *pg;
	const volatile uint64_t *db;
	char c;

	if (read(go, &c, 1) != 1)
		syscall(SYS_exit, 3);
	pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	if (pg == MAP_FAILED || db == MAP_FAILED)
		syscall(SYS_exit, 4);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
		syscall(SYS_exit, 5);
	for (int i = 0; i < DB_READS; i++) {
		for (volatile int k = 0; k < 20000; k++)
			;
		for (;;) {
			uint32_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE), s2;
			uint64_t sum, base, v;

			if (s1 & 1)
				continue;
			if (!pg->base_valid) {
				r.no_base++;
				continue;	/* a switch-in brings one */
			}
			sum = pg->counters[VPERF_THREAD_CTR_VCPU_CLOCK].value;
			base = pg->base[VPERF_THREAD_CTR_VCPU_CLOCK];
			v = db[VPERF_THREAD_CTR_VCPU_CLOCK];
			r.loads++;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			s2 = __atomic_load_n(&pg->seq, __ATOMIC_RELAXED);
			if (s1 != s2) {
				r.retries++;
				continue;
			}
			r.value[i] = sum + (v - base);
			break;
		}
	}
	if (write(res, &r, sizeof(r)) != (ssize_t)sizeof(r))
		syscall(SYS_exit, 6);
	syscall(SYS_exit, 0);	/* exit_group is not allowed in strict mode */
}

/* One fresh read through the doorbell (protocol as in doorbell_child). */
static uint64_t doorbell_fresh(const volatile struct vperf_thread_page *pg, const volatile uint64_t *db,
			       uint64_t *loads)
{
	for (;;) {
		uint32_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		uint64_t sum, base, v;

		if ((s1 & 1) || !pg->base_valid)
			continue;
		sum = pg->counters[0].value;
		base = pg->base[0];
		v = db[0];
		(*loads)++;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == s1)
			return sum + (v - base);
	}
}

/*
 * The doorbell against THREAD_READ in this thread: doorbell, READ + page,
 * doorbell, 50 times: each exact page value lies between its two fresh
 * reads (a sanity bound: at most 5 ms apart, an ioctl in nested TCG).
 */
static void doorbell_sandwich(uint64_t *loads)
{
	const volatile struct vperf_thread_page *pg;
	const volatile uint64_t *db;
	struct vperf_thread_page v;
	uint64_t worst = 0;
	int bad = 0, i;
	char what[200];

	pin(0);
	pg = start("doorbell");
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	if (!pg || db == MAP_FAILED) {
		check(0, "doorbell", "mapping the doorbell in the parent");
		return;
	}
	for (i = 0; i < 50; i++) {
		uint64_t d1 = doorbell_fresh(pg, db, loads), d2;

		if (ioctl(fd, VPERF_IOC_THREAD_READ))
			bad++;
		page_read((const struct vperf_thread_page *)pg, &v);
		d2 = doorbell_fresh(pg, db, loads);
		if (!(d1 <= v.counters[0].value && v.counters[0].value <= d2))
			bad++;
		if (d2 - d1 > worst)
			worst = d2 - d1;
	}
	snprintf(what, sizeof(what), "50 exact page reads each between two fresh doorbell reads "
		 "(%d out of order; widest pair %.3f ms)", bad, worst / 1e6);
	check(!bad && worst < 5000000, "doorbell", what);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "doorbell", "THREAD_STOP");
	report_hc((const struct vperf_thread_page *)pg, 1);	/* START, the READs, its switches */
	munmap((void *)db, 4096);
	munmap((void *)pg, 4096);
	unpin();
}

static void test_doorbell(void)
{
	static struct vperf_thread_row rows[4];
	static struct db_result r;
	int go[2], res[2], status, n, ok = 1, ret;
	char c = 0, what[300];
	uint64_t last;
	pid_t child;

	if (pipe(go) || pipe(res))
		return;
	child = fork();
	if (child == 0)
		doorbell_child(go[0], res[1]);
	ret = start_tid(fd, child, 0);
	check(ret == 0, "doorbell", "START for the child");
	if (write(go[1], &c, 1) != 1 || read(res[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		check(0, "doorbell", "no results from the child");
	waitpid(child, &status, 0);
	snprintf(what, sizeof(what), "the child ran in seccomp strict mode and exited by itself (%s %d)",
		 WIFEXITED(status) ? "status" : "signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "doorbell", what);
	{
		int flat = 0;

		/* never backwards; equal now and then: the host's clock is clamped per tick in L1 */
		for (int i = 1; i < DB_READS; i++) {
			if (r.value[i] < r.value[i - 1])
				ok = 0;
			flat += r.value[i] == r.value[i - 1];
		}
		snprintf(what, sizeof(what), "fresh vcpu-clock values never go back and grow overall "
			 "(%d of %d steps flat)", flat, DB_READS - 1);
		check(ok && r.value[0] > 0 && r.value[DB_READS - 1] > r.value[0] && flat < DB_READS / 4,
		      "doorbell", what);
	}
	n = list_rows(fd, rows, 4, NULL);
	last = r.value[DB_READS - 1];
	snprintf(what, sizeof(what), "%d fresh reads, the last %.3f ms, the final row %.3f ms; "
		 "%llu loads, %llu retries, %llu waits for a base", DB_READS, last / 1e6,
		 n == 1 ? rows[0].counters[0].value / 1e6 : 0.0, (unsigned long long)r.loads,
		 (unsigned long long)r.retries, (unsigned long long)r.no_base);
	check(n == 1 && last <= rows[0].counters[0].value, "doorbell", what);
	doorbell_sandwich(&r.loads);
	printf("kmod-thread: doorbell loads %llu\n", (unsigned long long)r.loads);
	report_rows_hc(rows, n > 0 ? n : 0);
}

/*
 * exits: a thread that makes N port writes (ioperm, port 0x80: no device
 * there, each write is one exit to vperf-vmm) sees N more vperf::exits, and
 * none for the module's own hypercalls (each slice's SNAPSHOT is an exit the
 * module takes out); a thread on the other vCPU that burns the same time
 * without I/O sees none.  The page is read after THREAD_READ (exact).
 */
#define EXITS_N 1000

struct exits_run {
	int io;
	uint64_t exits, slices;
	int ok;
	const struct vperf_thread_page *pg;	/* reported after both finished */
};

static void *exits_thread(void *arg)
{
	struct exits_run *e = arg;
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v0, v1;

	pin(e->io ? 0 : 1);
	pg = start("exits");
	if (!pg)
		return NULL;
	e->pg = pg;
	if (e->io && ioperm(0x80, 1, 1))
		return NULL;	/* ok stays 0: the check fails */
	if (ioctl(fd, VPERF_IOC_THREAD_READ))
		return NULL;
	page_read(pg, &v0);
	for (int i = 0; i < EXITS_N; i++) {
		if (e->io)
			__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
		else
			for (volatile int k = 0; k < 2000; k++)
				;
	}
	if (ioctl(fd, VPERF_IOC_THREAD_READ))
		return NULL;
	page_read(pg, &v1);
	e->exits = v1.counters[VPERF_THREAD_CTR_EXITS].value - v0.counters[VPERF_THREAD_CTR_EXITS].value;
	e->slices = v1.switches - v0.switches;
	e->ok = 1;
	ioctl(fd, VPERF_IOC_THREAD_STOP);
	/* no output here: the console's interrupts would land in the other thread's slices */
	e->pg = pg;
	return NULL;
}

static void test_exits(void)
{
	struct exits_run e[2] = { { .io = 1 }, { .io = 0 } };
	pthread_t th[2];
	char what[300];
	long extra;

	quiesce();
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, exits_thread, &e[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		if (!e[i].pg)
			continue;
		report_hc(e[i].pg, 1);
		munmap((void *)e[i].pg, 4096);
	}
	extra = (long)e[0].exits - EXITS_N;
	snprintf(what, sizeof(what), "%d port writes: %llu exits over %llu slices (%+ld beyond the writes; "
		 "the module's own SNAPSHOT exits are not the thread's)",
		 EXITS_N, (unsigned long long)e[0].exits, (unsigned long long)e[0].slices, extra);
	check(e[0].ok && extra >= 0 && extra <= 5, "exits", what);
	extra = (long)e[1].exits;
	snprintf(what, sizeof(what), "no I/O on the other vCPU: %llu exits over %llu slices",
		 (unsigned long long)e[1].exits, (unsigned long long)e[1].slices);
	check(e[1].ok && extra >= 0 && extra <= 5, "exits", what);
}

/*
 * events: contexts that name their events (THREAD_START VER2), each
 * counting only what it asked for on vCPU counter slots the module
 * programs on every vCPU.  Known answers: a thread's vperf::exits:io and
 * KVM io_exits are exactly its N port writes, and 0 for a thread without
 * I/O beside it (the module's own hypercalls are nobody's); a doorbell
 * read through the page's slot map is exact; a sleeping thread's halts are
 * the idle task's (0 in its slices) while its vCPU's halt_exits grow by at
 * least its sleeps; the errors name the event (bad_event).
 */
#define EV_EXITS_IO	0
#define EV_KVM_IO	1
#define EV_EXITS_ALL	2
#define EV_KVM_HALT	3
#define EV_HOST_CS	4
#define EV_N		5

static void ev_set(struct vperf_thread_event *ev, uint32_t source, uint64_t arg, const char *name)
{
	memset(ev, 0, sizeof(*ev));
	ev->source = source;
	ev->arg = arg;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
}

static void ev_list(struct vperf_thread_event *ev)
{
	ev_set(&ev[EV_EXITS_IO], VPERF_SRC_EXITS, 2, "");
	ev_set(&ev[EV_KVM_IO], VPERF_SRC_KVM_STAT, 0, "io_exits");
	ev_set(&ev[EV_EXITS_ALL], VPERF_SRC_EXITS, ~0ull, "");
	ev_set(&ev[EV_KVM_HALT], VPERF_SRC_KVM_STAT, 0, "halt_exits");
	ev_set(&ev[EV_HOST_CS], VPERF_SRC_PERF, 0, "context-switches");
}

/* START with an event list; -errno, with *bad the event the module named. */
static int start_events(const struct vperf_thread_event *ev, uint32_t n, int *bad,
			const struct vperf_thread_page **pg)
{
	struct vperf_thread_start st;
	void *p;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.nr_events = n;
	st.events = (uint64_t)(uintptr_t)ev;
	st.bad_event = -1;
	if (ioctl(fd, VPERF_IOC_THREAD_START, &st)) {
		*bad = st.bad_event;
		return -errno;
	}
	*bad = -1;
	if (st.nr_counters != n)
		return -EPROTO;
	if (!pg)
		return 0;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*pg = p;
	return 0;
}

struct ev_run {
	int io, sleeps;
	int ok;
	struct vperf_thread_page v0, v1;
	uint64_t db_before, db_after, page_after;	/* doorbell reads of exits:io around 100 writes */
	uint64_t halt_total0, halt_total1;		/* the vCPU's halt_exits (VCPU_TOTALS) */
	int cpu;
	const struct vperf_thread_page *pg;
};

/* The vCPU's total of slot `slot` now (VPERF_IOC_VCPU_TOTALS), or ~0. */
static uint64_t vcpu_total(int cpu, unsigned int slot)
{
	static struct vperf_vcpu_totals t;

	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	if (slot >= VPERF_THREAD_MAX_COUNTERS || ioctl(fd, VPERF_IOC_VCPU_TOTALS, &t))
		return ~0ull;
	for (uint32_t i = 0; i < t.nr_cpus; i++)
		if (t.cpus[i].cpu == cpu)
			return t.cpus[i].value[slot];
	return ~0ull;
}

static uint64_t ev_db_loads;	/* doorbell loads made: thread-doorbell-exits sums them */

/* counters[i] now through the doorbell (one exit), or ~0 if the page had no base. */
static uint64_t doorbell_count(const struct vperf_thread_page *pg, const volatile uint64_t *db, int i)
{
	for (int tries = 0; tries < 100; tries++) {
		uint32_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);
		uint64_t v, load, base;

		if (s1 & 1 || !pg->base_valid)
			continue;
		v = pg->counters[i].value;
		base = pg->base[i];
		load = db[pg->slot[i]];
		ev_db_loads++;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == s1)
			return v + load - base;
	}
	return ~0ull;
}

static void *ev_thread(void *arg)
{
	struct ev_run *r = arg;
	struct vperf_thread_event ev[EV_N];
	const struct vperf_thread_page *pg = NULL;
	const volatile uint64_t *db = NULL;
	void *m;
	int bad;

	pin(r->cpu);
	ev_list(ev);
	if (start_events(ev, EV_N, &bad, &pg))
		return NULL;
	if (r->io && ioperm(0x80, 1, 1))
		return NULL;
	if (ioctl(fd, VPERF_IOC_THREAD_READ))
		return NULL;
	page_read(pg, &r->v0);
	if (r->sleeps)
		r->halt_total0 = vcpu_total(r->cpu, pg->slot[EV_KVM_HALT]);
	for (int i = 0; i < EXITS_N; i++) {
		if (r->io)
			__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
		else if (!r->sleeps)
			for (volatile int k = 0; k < 2000; k++)
				;
	}
	for (int i = 0; i < r->sleeps; i++)
		usleep(2000);
	if (ioctl(fd, VPERF_IOC_THREAD_READ))
		return NULL;
	page_read(pg, &r->v1);
	if (r->sleeps)
		r->halt_total1 = vcpu_total(r->cpu, pg->slot[EV_KVM_HALT]);
	if (r->io) {
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, VPERF_DOORBELL_PGOFF * 4096);
		if (m != MAP_FAILED) {
			db = m;
			r->db_before = doorbell_count(pg, db, EV_EXITS_IO);
			for (int i = 0; i < 100; i++)
				__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
			r->db_after = doorbell_count(pg, db, EV_EXITS_IO);
			if (!ioctl(fd, VPERF_IOC_THREAD_READ))
				r->page_after = pg->counters[EV_EXITS_IO].value;
			munmap(m, 4096);
		}
	}
	r->ok = 1;
	ioctl(fd, VPERF_IOC_THREAD_STOP);
	r->pg = pg;	/* reported and unmapped after the measurements */
	return NULL;
}

static uint64_t ev_delta(const struct ev_run *r, int i)
{
	return r->v1.counters[i].value - r->v0.counters[i].value;
}

static void test_events(void)
{
	struct ev_run r[3] = { { .io = 1, .cpu = 0 }, { .io = 0, .cpu = 1 }, { .sleeps = 50, .cpu = 1 } };
	struct vperf_thread_event ev[VPERF_THREAD_MAX_COUNTERS + 1];
	struct vperf_event_query q;
	struct vperf_info info;
	pthread_t th[2];
	char what[400];
	int ret, bad, n, hw_status = 1, halt_status = 1;

	/*
	 * Quiet first: a console byte the serial driver writes from an
	 * interrupt is a port write charged to whichever thread it interrupts.
	 */
	quiesce();
	usleep(200000);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, ev_thread, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_create(&th[0], NULL, ev_thread, &r[2]);
	pthread_join(th[0], NULL);
	printf("kmod-thread: doorbell loads %llu\n", (unsigned long long)ev_db_loads);
	for (int i = 0; i < 3; i++) {
		if (!r[i].pg)
			continue;
		report_hc(r[i].pg, 1);
		munmap((void *)r[i].pg, 4096);
	}

	/* what the host offers: halt_exits countable, hardware events not (no PMU here) */
	for (n = 0; n < 100000; n++) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.index = n;
		if (ioctl(fd, VPERF_IOC_EVENT_INFO, &q))
			break;
		if (q.event.source == VPERF_SRC_KVM_STAT && !strcmp(q.event.name, "halt_exits"))
			halt_status = q.status;
		if (q.event.source == VPERF_SRC_PERF && !strcmp(q.event.name, "instructions"))
			hw_status = q.status;
	}
	snprintf(what, sizeof(what), "EVENT_INFO: %d entries, end %s, kvm:halt_exits status %d, "
		 "instructions status %d", n, strerror(errno), halt_status, hw_status);
	check(n > 10 && errno == ENOENT && halt_status == 0 && hw_status != 1, "events", what);


	snprintf(what, sizeof(what), "%d port writes: exits:io %llu, kvm io_exits %llu, exits %llu, "
		 "host context switches %llu over %llu slices", EXITS_N,
		 (unsigned long long)ev_delta(&r[0], EV_EXITS_IO), (unsigned long long)ev_delta(&r[0], EV_KVM_IO),
		 (unsigned long long)ev_delta(&r[0], EV_EXITS_ALL), (unsigned long long)ev_delta(&r[0], EV_HOST_CS),
		 (unsigned long long)(r[0].v1.switches - r[0].v0.switches));
	check(r[0].ok && ev_delta(&r[0], EV_EXITS_IO) == EXITS_N && ev_delta(&r[0], EV_KVM_IO) == EXITS_N &&
	      ev_delta(&r[0], EV_EXITS_ALL) >= EXITS_N && ev_delta(&r[0], EV_EXITS_ALL) <= EXITS_N + 5,
	      "events", what);
	snprintf(what, sizeof(what), "no I/O beside it on the other vCPU: exits:io %llu, kvm io_exits %llu",
		 (unsigned long long)ev_delta(&r[1], EV_EXITS_IO), (unsigned long long)ev_delta(&r[1], EV_KVM_IO));
	check(r[1].ok && ev_delta(&r[1], EV_EXITS_IO) == 0 && ev_delta(&r[1], EV_KVM_IO) == 0, "events", what);
	snprintf(what, sizeof(what), "doorbell reads of exits:io around 100 writes: %llu -> %llu (+%lld), "
		 "page after THREAD_READ %llu", (unsigned long long)r[0].db_before,
		 (unsigned long long)r[0].db_after, (long long)(r[0].db_after - r[0].db_before),
		 (unsigned long long)r[0].page_after);
	check(r[0].db_after - r[0].db_before == 100 && r[0].page_after == r[0].db_after, "events", what);
	snprintf(what, sizeof(what), "%d sleeps: the thread's halt_exits %llu (the idle task halts), its "
		 "vCPU's %llu", r[2].sleeps, (unsigned long long)ev_delta(&r[2], EV_KVM_HALT),
		 (unsigned long long)(r[2].halt_total1 - r[2].halt_total0));
	check(r[2].ok && ev_delta(&r[2], EV_KVM_HALT) <= 2 && r[2].halt_total0 != ~0ull &&
	      r[2].halt_total1 - r[2].halt_total0 >= (uint64_t)r[2].sleeps, "events", what);

	/* errors, each naming its event */
	ev_list(ev);
	ev_set(&ev[2], VPERF_SRC_PERF, 0, "instructions");
	ret = start_events(ev, 3, &bad, NULL);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (ioctl(fd, VPERF_IOC_INFO, &info) == 0 && (info.features & VPERF_FEAT_HW_EVENTS)) {
		/* a host with a PMU: the same list counts guest-mode instructions per thread */
		snprintf(what, sizeof(what), "instructions with a host PMU: THREAD_START %s", strerror(-ret));
		check(ret == 0, "events", what);
		if (!ret)
			ioctl(fd, VPERF_IOC_THREAD_STOP);
	} else {
		printf("kmod-thread: events SKIP hardware counts: the host has no PMU (feature bit 3 clear); "
		       "with one, this START of instructions would succeed and count the thread's guest-mode "
		       "instructions\n");
		snprintf(what, sizeof(what), "a hardware event without a host PMU: %s, bad_event %d",
			 strerror(-ret), bad);
		check(ret == -ENODEV && bad == 2, "events", what);
	}
	ev_list(ev);
	ev_set(&ev[1], VPERF_SRC_PERF, 0, "page-faults");
	ret = start_events(ev, 2, &bad, NULL);
	snprintf(what, sizeof(what), "an event the default allowlist refuses: %s, bad_event %d", strerror(-ret), bad);
	check(ret == -EPERM && bad == 1, "events", what);
	ev_set(&ev[0], VPERF_SRC_KVM_STAT, 0, "no_such_stat");
	ret = start_events(ev, 1, &bad, NULL);
	snprintf(what, sizeof(what), "an unknown KVM statistic: %s, bad_event %d", strerror(-ret), bad);
	check(ret == -ENOENT && bad == 0, "events", what);
	ev_list(ev);
	ev[3].flags = 1;
	ret = start_events(ev, 4, &bad, NULL);
	snprintf(what, sizeof(what), "flags set: %s, bad_event %d", strerror(-ret), bad);
	check(ret == -EINVAL && bad == 3, "events", what);
	ev_list(ev);
	memset(ev[0].name, 'x', sizeof(ev[0].name));
	ev[0].source = VPERF_SRC_KVM_STAT;
	ret = start_events(ev, 1, &bad, NULL);
	check(ret == -EINVAL && bad == 0, "events", "a name without its NUL: EINVAL");
	for (int i = 0; i <= VPERF_THREAD_MAX_COUNTERS; i++)
		ev_set(&ev[i], VPERF_SRC_EXITS, (uint64_t)i, "");
	ret = start_events(ev, VPERF_THREAD_MAX_COUNTERS + 1, &bad, NULL);
	snprintf(what, sizeof(what), "%d events: %s", VPERF_THREAD_MAX_COUNTERS + 1, strerror(-ret));
	check(ret == -E2BIG, "events", what);
	ret = start_events(ev, 1, &bad, NULL);
	check(ret == 0, "events", "a list of one exit reason starts");
	if (!ret)
		ioctl(fd, VPERF_IOC_THREAD_STOP);
	/*
	 * The SNAPSHOTs beyond the contexts' slices: each new event reprograms
	 * both vCPUs (one SNAPSHOT each, to carry the counts on), a refused one
	 * twice (the old table again), and the last user of a slot has the
	 * module trim it (once more): 4 + 1 (A and B, then the trim) + 4 + 1 (C)
	 * + 2 + 2 + 1 (instructions refused) + 1 + 2 + 1 (page-faults) + 2
	 * (no_such_stat) + 1 + 1 (the last START) = 24 reprograms, and 2
	 * VCPU_TOTALS on each vCPU.
	 */
	printf("kmod-thread: hc switches 0 budget %d\n", 24 * 2 + 2 * 2);
}

static void test_api(void)
{
	const char *m = "api";
	struct { struct vperf_thread_start st; uint32_t tail[2]; } big;
	const struct vperf_thread_page *pg;
	struct vperf_thread_start st;
	int rw, ret;
	void *p;

	memset(&st, 0, sizeof(st));
	st.size = VPERF_THREAD_START_SIZE_VER0 - 4;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, m,
	      "size below VER0: EINVAL");
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = 2;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, m,
	      "unknown flags: EINVAL");
	st.flags = 0;
	st.tid = -1;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, m,
	      "negative tid: EINVAL");
	st.tid = 0x3fffffff;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == ESRCH, m,
	      "no such tid: ESRCH");
	st.tid = 0;
	check(ioctl(fd, VPERF_IOC_THREAD_READ) == -1 && errno == ENOENT, m,
	      "READ without a context: ENOENT");
	memset(&big, 0, sizeof(big));
	big.st.size = sizeof(big);
	big.tail[1] = 1;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &big) == -1 && errno == E2BIG, m,
	      "larger struct with a nonzero tail: E2BIG");
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == -1 && errno == ENOENT, m,
	      "STOP without a context: ENOENT");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == ENOENT, m, "mmap without a context: ENOENT");

	memset(&big, 0, sizeof(big));
	big.st.size = sizeof(big);
	ret = ioctl(fd, VPERF_IOC_THREAD_START, &big);
	check(ret == 0 && big.st.size == sizeof(big.st), m,
	      "larger struct with a zero tail: accepted, our size back");
	check(threads_param() == 1, m, "parameter threads = 1");
	st.flags = 0;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EBUSY, m,
	      "second START: EBUSY");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, VPERF_SAMPLE_PGOFF * 4096);
	check(p == MAP_FAILED && errno == ENOENT, m, "the sample ring of a context that does not sample: ENOENT");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 12288);
	check(p == MAP_FAILED && errno == EINVAL, m, "mmap offset 12288: EINVAL");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 4096);
	check(p == MAP_FAILED && errno == EPERM, m, "writable doorbell mapping: EPERM");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	check(p != MAP_FAILED, m, "doorbell mapping (offset 4096) with a context");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == EINVAL, m, "mmap of 2 pages: EINVAL");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == EACCES, m,
	      "PROT_WRITE MAP_SHARED on an O_RDONLY fd: EACCES");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	check(p == MAP_FAILED && errno == EPERM, m, "PROT_WRITE MAP_PRIVATE: EPERM");
	rw = open("/dev/" VPERF_DEV_NAME, O_RDWR);
	if (rw >= 0) {
		/* another file: no context there for this thread */
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rw, 0);
		check(p == MAP_FAILED && errno == ENOENT, m, "mmap on another file: ENOENT");
		check(ioctl(rw, VPERF_IOC_THREAD_START, &st) == -1 && errno == EBUSY, m,
		      "START on another file: EBUSY (one context per thread)");
		close(rw);
	}
	pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	check(pg != MAP_FAILED, m, "mmap PROT_READ MAP_SHARED offset 0");
	if (pg == MAP_FAILED)
		return;
	check(mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE) == -1 && errno == EACCES, m,
	      "mprotect PROT_WRITE: EACCES");
	check(pg->size == sizeof(*pg) && pg->version == VPERF_THREAD_PAGE_VERSION &&
	      pg->nr == VPERF_THREAD_NR_CTRS && !(pg->seq & 1), m, "page header");
	test_list_api(m);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, m, "STOP");
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == -1 && errno == ENOENT, m, "second STOP: ENOENT");
	check(pg->switches >= 1 && pg->counters[0].value > 0, m,
	      "the page stays readable after STOP, with the last slice");
	report_hc(pg, 1);
	munmap((void *)pg, 4096);
	check(threads_param() == 0, m, "parameter threads = 0 after STOP");
}

/*
 * stress: threads that start, map, run and sleep a little, then end their
 * context in turn by STOP, by closing their own file, or by exiting.
 */
static unsigned long long stress_switches, stress_budget;

/* Account one stress context for the thread-hc check; slack: slices after the read. */
static void stress_count(const void *p, unsigned int slack)
{
	struct vperf_thread_page v;

	page_read(p, &v);
	__atomic_add_fetch(&stress_switches, v.switches, __ATOMIC_RELAXED);
	__atomic_add_fetch(&stress_budget, 1 + 2 * v.switches + slack, __ATOMIC_RELAXED);
}

static void *stress_run(void *arg)
{
	unsigned int i, way = (unsigned int)(uintptr_t)arg;
	struct vperf_thread_start st;
	uint64_t t0;
	void *p;
	int f;

	for (i = 0; i <= 20; i++) {
		int last = i == 20;

		f = !last && (way + i) % 3 == 1 ? open("/dev/" VPERF_DEV_NAME, O_RDONLY) : fd;
		if (f < 0)
			return (void *)1;
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		if (ioctl(f, VPERF_IOC_THREAD_START, &st))
			return (void *)1;
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
		if (p == MAP_FAILED)
			return (void *)1;
		t0 = thread_ns();
		while (thread_ns() - t0 < 200000)
			;
		usleep(100);
		if (last) {
			stress_count(p, 4);
			return NULL;	/* ends at exit, the mapping with it */
		}
		if (f != fd) {
			close(f);	/* the mapping holds the file: munmap releases it */
			stress_count(p, 4);
		} else {
			if (ioctl(f, VPERF_IOC_THREAD_STOP))
				return (void *)1;
			stress_count(p, 1);
		}
		munmap(p, 4096);
	}
	return NULL;
}

static void test_stress(void)
{
	pthread_t th[16];
	unsigned int i, bad = 0;
	void *r;
	char what[100];

	for (i = 0; i < 16; i++)
		pthread_create(&th[i], NULL, stress_run, (void *)(uintptr_t)i);
	for (i = 0; i < 16; i++) {
		pthread_join(th[i], &r);
		bad += r != NULL;
	}
	for (i = 0; i < 100 && threads_param() != 0; i++)	/* exit probes still to come */
		usleep(10000);
	snprintf(what, sizeof(what), "16 threads x 21 contexts: %u threads failed, threads = %d after",
		 bad, threads_param());
	check(!bad && threads_param() == 0, "stress", what);
	printf("kmod-thread: hc switches %llu budget %llu\n", stress_switches, stress_budget);
}

/*
 * Three rounds; each burner passes when at least two of its three errors
 * are within TOLERANCE.  One measurement in a few (about one kmod run in
 * three had one) lands 3..6% off in nested TCG while the rounds around it
 * agree within 1%: two of three keeps a known answer from failing on one
 * such outlier and still fails a bias that shows in two rounds.
 */
#define ROUNDS 3
static void run_burners(struct burner *b, int n)
{
	double errs[2][ROUNDS];
	char what[2][400], line[600];
	int header_ok[2] = { 1, 1 }, within[2] = { 0, 0 };
	pthread_t th[2];
	int i, r;

	for (r = 0; r < ROUNDS; r++) {
		quiesce();
		for (i = 0; i < n; i++)
			pthread_create(&th[i], NULL, burner_run, &b[i]);
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		for (i = 0; i < n; i++) {
			errs[i][r] = b[i].err;
			within[i] += b[i].ok;
			header_ok[i] &= b[i].header_ok;
			if (r == 0)
				snprintf(what[i], sizeof(what[i]), "%s", b[i].what);
			printf("kmod-thread: %s-round %d %s\n", b[i].mode, r + 1, b[i].what);
		}
	}
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "cpu %d: %d of %d rounds within %.0f%%: errors %+.2f%% %+.2f%% %+.2f%%; "
			 "round 1: %.400s", b[i].cpu, within[i], ROUNDS, TOLERANCE * 100, errs[i][0] * 100,
			 errs[i][1] * 100, errs[i][2] * 100, strchr(what[i], ':') ? strchr(what[i], ':') + 2 : what[i]);
		check(within[i] >= 2, b[i].mode, line);
		check(header_ok[i], b[i].mode, "page header");
	}
}

/* ---- the hardening cases: other users, kernel mode, memory, locking ---- */

/* A forked child becomes user and group 65534 (nobody), without capabilities; exits 2 if it cannot. */
static void become_nobody(void)
{
	if (setgid(65534) || setuid(65534))
		_exit(2);
}

static int write_param(const char *name, long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/vperf_guest/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%ld\n", v) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

/* kernel.perf_event_paranoid, or -100 if unreadable */
static int perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = -100;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

static int set_perf_paranoid(int v)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "w");

	if (!f)
		return -errno;
	fprintf(f, "%d\n", v);
	return fclose(f) ? -errno : 0;
}

/* The module's `users` line for uid: "kb K events E" into *kb and *events; -1 if there is none. */
static int user_usage(unsigned int uid, long *kb, long *events)
{
	FILE *f = fopen("/sys/module/vperf_guest/parameters/users", "r");
	unsigned int u;
	long k, e;
	int ret = -1;

	if (!f)
		return -2;
	while (fscanf(f, "uid %u kb %ld events %ld\n", &u, &k, &e) == 3)
		if (u == uid) {
			*kb = k;
			*events = e;
			ret = 0;
		}
	fclose(f);
	return ret;
}

static int has_feature(uint32_t bit)
{
	struct vperf_info info;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	return ioctl(fd, VPERF_IOC_INFO, &info) == 0 && (info.features & bit);
}

/*
 * private: what a thread's page and doorbell show of other users.  A
 * process of uid 65534 (paranoid 1: it may not see what every thread does)
 * and root's thread share CPU 0; root makes 1000 port writes while the
 * unprivileged thread is switched out between two of its slices.  Its page
 * publishes no base (base_valid 0, base[] all 0: the raw vCPU values there,
 * and a doorbell load, showed the vCPU's exits between its slices, root's
 * writes among them) and mapping the doorbell is EACCES; root's own context
 * (it may see all) keeps the base and the doorbell.
 */
struct private_result {
	int start, db_err;
	uint32_t valid0, valid1;
	int base_any;
	long long between;	/* the vCPU's exits outside its slices, as base[] showed them */
};

static void private_child(int ready, int go, int res)
{
	static struct private_result r;
	const struct vperf_thread_page *pg = MAP_FAILED;
	struct vperf_thread_page v0, v1;
	void *db;
	char c = 0;
	int f;

	become_nobody();
	pin(0);
	f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
	r.start = f < 0 ? -errno : start_tid(f, 0, 0);
	if (!r.start)
		pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
	if (pg == MAP_FAILED) {
		r.start = r.start ? r.start : -errno;
		if (write(res, &r, sizeof(r)) < 0)
			_exit(3);
		_exit(0);
	}
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, VPERF_DOORBELL_PGOFF * 4096);
	r.db_err = db == MAP_FAILED ? -errno : 0;
	ioctl(f, VPERF_IOC_THREAD_READ);	/* the slice's base: now */
	page_read(pg, &v0);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)	/* switched out while root writes */
		_exit(3);
	page_read(pg, &v1);	/* the base of the slice that began at the wakeup */
	r.valid0 = v0.base_valid;
	r.valid1 = v1.base_valid;
	for (int i = 0; i < VPERF_THREAD_MAX_COUNTERS; i++)
		r.base_any |= v0.base[i] || v1.base[i];
	r.between = (long long)(v1.base[VPERF_THREAD_CTR_EXITS] - v0.base[VPERF_THREAD_CTR_EXITS]) -
		    (long long)(v1.counters[VPERF_THREAD_CTR_EXITS].value -
				v0.counters[VPERF_THREAD_CTR_EXITS].value);
	if (write(res, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(3);
	report_hc(pg, 0);
	_exit(0);
}

static void test_private(void)
{
	int ready[2], go[2], res[2], status, db_ok;
	struct private_result r = { .start = 1 };
	const struct vperf_thread_page *pg;
	struct vperf_thread_page v;
	char c = 0, what[500];
	pid_t child;
	void *db;

	if (pipe(ready) || pipe(go) || pipe(res))
		return;
	pin(0);
	if (ioperm(0x80, 1, 1)) {
		check(0, "private", "ioperm");
		return;
	}
	child = fork();
	if (child == 0)
		private_child(ready[1], go[0], res[1]);
	if (read(ready[0], &c, 1) == 1) {
		/* the child is switched out (blocked, or preempted by this thread on its CPU) */
		for (int i = 0; i < EXITS_N; i++)
			__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
	}
	if (write(go[1], &c, 1) != 1 || read(res[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		check(0, "private", "the unprivileged process did not report");
	waitpid(child, &status, 0);
	snprintf(what, sizeof(what), "as uid 65534 (paranoid 1): START %d; base_valid %u then %u, base[] %s, "
		 "doorbell mmap %s; what base[] showed of the vCPU's exits between its two slices, root's %d "
		 "port writes among them: %lld", r.start, r.valid0, r.valid1, r.base_any ? "published" : "all 0",
		 r.db_err ? strerror(-r.db_err) : "mapped", EXITS_N, r.between);
	check(!r.start && !r.valid0 && !r.valid1 && !r.base_any &&
	      (r.db_err == -EACCES || (r.db_err == -ENODEV && !has_feature(VPERF_FEAT_DOORBELL))), "private", what);

	/* root may see all: its page has the base, its doorbell maps */
	pg = start("private");
	if (!pg)
		return;
	ioctl(fd, VPERF_IOC_THREAD_READ);
	page_read(pg, &v);
	db = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, VPERF_DOORBELL_PGOFF * 4096);
	db_ok = db != MAP_FAILED || !has_feature(VPERF_FEAT_DOORBELL);
	snprintf(what, sizeof(what), "as root: base_valid %u, doorbell mmap %s", v.base_valid,
		 db != MAP_FAILED ? "mapped" : strerror(errno));
	check(v.base_valid == 1 && db_ok, "private", what);
	if (db != MAP_FAILED)
		munmap(db, 4096);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "private", "THREAD_STOP");
	report_hc(pg, 1);
	munmap((void *)pg, 4096);
	unpin();
}

/*
 * plm: events that may count the guest kernel follow perf's rule
 * (perf_allow_kernel()): at kernel.perf_event_paranoid >= 2, a user
 * without CAP_PERFMON or CAP_SYS_ADMIN gets EACCES, naming the event, for
 * a hardware event that counts kernel mode (branch-misses:k, branch-misses
 * with no modifier, which counts both, a raw r01c2, instructions:u:K), and
 * gets past the module with user-only ones (branch-misses:u, a raw event
 * with :u, branch-misses:u:k=0: the host answers, ENODEV without a PMU)
 * and with the host's software events of its vCPU thread; root gets past
 * the module with every one; at paranoid 1 the unprivileged user does too.
 */
static const char *const plm_names[] = {
	"branch-misses:k", "branch-misses", "r01c2", "instructions:u:K",	/* may count the kernel */
	"branch-misses:u", "perf_raw::r01c2:u", "branch-misses:u:k=0",		/* user mode only */
	"context-switches",							/* the vCPU thread's */
};
#define PLM_KERNEL	4
#define PLM_N		((int)(sizeof(plm_names) / sizeof(plm_names[0])))

/* Each event after exits:io on file f: -errno (0: started, then stopped), bad[] the event named. */
static void plm_try(int f, int n, int *ret, int *bad)
{
	struct vperf_thread_event ev[2];
	struct vperf_thread_start st;

	for (int i = 0; i < n; i++) {
		ev_set(&ev[0], VPERF_SRC_EXITS, 2, "");
		ev_set(&ev[1], VPERF_SRC_PERF, 0, plm_names[i]);
		memset(&st, 0, sizeof(st));
		st.size = sizeof(st);
		st.nr_events = 2;
		st.events = (uint64_t)(uintptr_t)ev;
		st.bad_event = -1;
		ret[i] = ioctl(f, VPERF_IOC_THREAD_START, &st) ? -errno : 0;
		bad[i] = st.bad_event;
		if (!ret[i])
			ioctl(f, VPERF_IOC_THREAD_STOP);
	}
}

/* As uid 65534 in a child: the results of plm_try over the first n names. */
static void plm_unprivileged(int n, int *ret, int *bad)
{
	int res[2], status;
	pid_t child;

	for (int i = 0; i < n; i++)
		ret[i] = 1;
	if (pipe(res))
		return;
	child = fork();
	if (child == 0) {
		int r[2 * PLM_N], f;

		become_nobody();
		f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
		if (f < 0)
			_exit(3);
		plm_try(f, n, r, r + PLM_N);
		if (write(res[1], r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(3);
		_exit(0);
	}
	{
		int r[2 * PLM_N];

		if (read(res[0], r, sizeof(r)) == (ssize_t)sizeof(r)) {
			memcpy(ret, r, n * sizeof(int));
			memcpy(bad, r + PLM_N, n * sizeof(int));
		}
	}
	waitpid(child, &status, 0);
	close(res[0]);
	close(res[1]);
}

static void plm_describe(char *what, size_t len, const char *who, int n, const int *ret, const int *bad)
{
	int off = snprintf(what, len, "%s:", who);

	for (int i = 0; i < n && off < (int)len - 80; i++)
		off += snprintf(what + off, len - off, " %s %s%s", plm_names[i],
				ret[i] > 0 ? "no answer" : ret[i] ? strerror(-ret[i]) : "started",
				ret[i] == -EACCES ? (bad[i] == 1 ? " (named)" : " (not named)") : "");
}

static void test_plm(void)
{
	int ret[PLM_N], bad[PLM_N], level = perf_paranoid(), attempts = 0, ok;
	char what[900];

	if (level < 2 && set_perf_paranoid(2)) {
		check(0, "plm", "setting kernel.perf_event_paranoid to 2");
		return;
	}
	printf("kmod-thread: plm kernel.perf_event_paranoid %d (the test runs at %d)\n", level,
	       level < 2 ? 2 : level);
	plm_unprivileged(PLM_N, ret, bad);
	attempts += PLM_N;
	ok = 1;
	for (int i = 0; i < PLM_N; i++)
		ok &= i < PLM_KERNEL ? ret[i] == -EACCES && bad[i] == 1 : ret[i] <= 0 && ret[i] != -EACCES;
	ok &= ret[PLM_N - 1] == 0;	/* the vCPU thread's software event counts */
	plm_describe(what, sizeof(what), "as uid 65534 at paranoid >= 2 (want EACCES for the first 4)", PLM_N,
		     ret, bad);
	check(ok, "plm", what);

	plm_try(fd, PLM_N, ret, bad);
	attempts += PLM_N;
	ok = 1;
	for (int i = 0; i < PLM_N; i++)
		ok &= ret[i] != -EACCES;
	plm_describe(what, sizeof(what), "as root (no EACCES)", PLM_N, ret, bad);
	check(ok, "plm", what);

	if (set_perf_paranoid(1)) {
		check(0, "plm", "setting kernel.perf_event_paranoid to 1");
	} else {
		plm_unprivileged(PLM_KERNEL, ret, bad);
		attempts += PLM_KERNEL;
		ok = 1;
		for (int i = 0; i < PLM_KERNEL; i++)
			ok &= ret[i] <= 0 && ret[i] != -EACCES;
		plm_describe(what, sizeof(what), "as uid 65534 at paranoid 1 (no EACCES)", PLM_KERNEL, ret, bad);
		check(ok, "plm", what);
	}
	set_perf_paranoid(level);
	check(perf_paranoid() == level, "plm", "kernel.perf_event_paranoid restored");
	/*
	 * SNAPSHOTs: per attempt at most a claim of exits:io (a reprogram: one
	 * per vCPU), the hardware event's claim refused by the host (two), a
	 * START and a STOP, and two trims.
	 */
	printf("kmod-thread: hc switches 0 budget %d\n", attempts * (5 * 2 + 2));
}

/* ---- memory ---- */

static long meminfo_kb(const char *key)
{
	char line[200];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* START on f for the calling thread, sampling with a ring of `pages` pages (a period nobody reaches). */
static int start_sampling(int f, unsigned int pages)
{
	struct vperf_thread_start st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_SAMPLE;
	st.sample_counter = VPERF_THREAD_CTR_VCPU_CLOCK;
	st.sample_pages = pages;
	st.sample_period = 10000000000ull;	/* 10 s of vcpu-clock */
	return ioctl(f, VPERF_IOC_THREAD_START, &st) ? -errno : 0;
}

#define MEM_PLAIN	1000
#define MEM_SAMPLING	40
#define MEM_RING	64	/* data pages: the largest ring */

/*
 * (1) Contexts started and ended on one open file keep only their row: the
 * guest's free memory drops by far less than the pages and rings they had
 * (1000 plain contexts of a 4 KiB page, 40 sampling ones of a 260 KiB ring
 * more: 14.5 MiB if kept until the file closes).
 */
static void memory_finished(void)
{
	static struct vperf_thread_row rows[MEM_PLAIN + MEM_SAMPLING + 8];
	unsigned long long sw = 0, budget = 0;
	long m0, m1, kb = -1, events = -1;
	int f, n, bad = 0, have;
	char what[400];

	f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
	if (f < 0) {
		check(0, "memory", "open");
		return;
	}
	usleep(300000);
	m0 = meminfo_kb("MemFree");
	for (int i = 0; i < MEM_PLAIN + MEM_SAMPLING; i++) {
		if (i < MEM_PLAIN ? start_tid(f, 0, 0) : start_sampling(f, MEM_RING))
			bad++;
		else if (ioctl(f, VPERF_IOC_THREAD_STOP))
			bad++;
	}
	usleep(500000);	/* a context's memory goes an RCU grace period after its end */
	m1 = meminfo_kb("MemFree");
	have = user_usage(0, &kb, &events) == 0;
	n = list_rows(f, rows, sizeof(rows) / sizeof(rows[0]), NULL);
	for (int i = 0; i < n; i++) {
		sw += rows[i].switches;
		budget += 2 * rows[i].switches + 2;
	}
	snprintf(what, sizeof(what), "%d contexts (%d sampling with %d-page rings) started and stopped on one "
		 "open file (%d failed), %d rows kept: free memory %ld -> %ld KiB (%+ld; kept pages and rings "
		 "would be about %d KiB); the module's users line for uid 0: %s%ld KiB",
		 MEM_PLAIN + MEM_SAMPLING, MEM_SAMPLING, MEM_RING, bad, n, m0, m1, m1 - m0,
		 MEM_PLAIN * 4 + MEM_SAMPLING * (MEM_RING + 1) * 4, have ? "" : "none, ", kb);
	check(!bad && n == MEM_PLAIN + MEM_SAMPLING && m0 > 0 && m0 - m1 < 4096 && have &&
	      kb < (MEM_PLAIN + MEM_SAMPLING) / 2, "memory", what);
	close(f);
	printf("kmod-thread: hc switches %llu budget %llu\n", sw, budget);
}

/*
 * (2) Charged to the memory cgroup: a process in a cgroup of its own holds
 * 16 live sampling contexts (a 264 KiB ring and page each: 4.1 MiB); its
 * memory.current grows by at least 3 MiB while they live and shrinks by as
 * much when they end (the charges come and go in per-CPU batches of 256 KiB).
 */
#define CG_ROOT		"/tmp/vperf-cg"
#define CG		CG_ROOT "/kmod"
#define CG_THREADS	16

static pthread_barrier_t cg_bar;
static int cg_fd, cg_started;
static pthread_mutex_t cg_lock = PTHREAD_MUTEX_INITIALIZER;

static long cg_current(void)
{
	FILE *f = fopen(CG "/memory.current", "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void *cg_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&cg_bar);	/* all created */
	pthread_barrier_wait(&cg_bar);	/* start */
	if (!start_sampling(cg_fd, MEM_RING)) {
		pthread_mutex_lock(&cg_lock);
		cg_started++;
		pthread_mutex_unlock(&cg_lock);
	}
	pthread_barrier_wait(&cg_bar);	/* all started */
	pthread_barrier_wait(&cg_bar);	/* stop */
	ioctl(cg_fd, VPERF_IOC_THREAD_STOP);
	pthread_barrier_wait(&cg_bar);	/* all stopped */
	pthread_barrier_wait(&cg_bar);	/* measured: exit */
	return NULL;
}

static int write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(s, f);
	return fclose(f) ? -errno : 0;
}

static void memory_cgroup(void)
{
	long r[4] = { -1, -1, -1, -1 };
	int res[2], status;
	char what[400];
	pid_t child;

	mkdir(CG_ROOT, 0755);
	if (mount("none", CG_ROOT, "cgroup2", 0, NULL) && errno != EBUSY) {
		check(0, "memory", "mounting cgroup2");
		return;
	}
	write_file(CG_ROOT "/cgroup.subtree_control", "+memory");
	mkdir(CG, 0755);
	if (pipe(res))
		return;
	child = fork();
	if (child == 0) {
		pthread_t th[CG_THREADS];

		if (write_file(CG "/cgroup.procs", "0"))
			_exit(3);
		cg_fd = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
		pthread_barrier_init(&cg_bar, NULL, CG_THREADS + 1);
		for (int i = 0; i < CG_THREADS; i++)
			pthread_create(&th[i], NULL, cg_thread, NULL);
		pthread_barrier_wait(&cg_bar);
		usleep(200000);
		r[0] = cg_current();
		pthread_barrier_wait(&cg_bar);
		pthread_barrier_wait(&cg_bar);
		r[1] = cg_current();
		pthread_barrier_wait(&cg_bar);
		pthread_barrier_wait(&cg_bar);
		usleep(500000);	/* the rings go a grace period after STOP */
		r[2] = cg_current();
		r[3] = cg_started;
		pthread_barrier_wait(&cg_bar);
		for (int i = 0; i < CG_THREADS; i++)
			pthread_join(th[i], NULL);
		if (write(res[1], r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(3);
		/* each context: START, STOP, and a few slices (two barriers between them) */
		printf("kmod-thread: hc switches 0 budget %d\n", CG_THREADS * 16);
		_exit(0);
	}
	if (read(res[0], r, sizeof(r)) != (ssize_t)sizeof(r))
		check(0, "memory", "the process in the cgroup did not report");
	waitpid(child, &status, 0);
	rmdir(CG);
	umount2(CG_ROOT, MNT_DETACH);
	snprintf(what, sizeof(what), "memory cgroup: %ld sampling contexts live: memory.current %ld -> %ld KiB "
		 "(%+ld), after their STOP %ld KiB (%+ld); their pages and rings are %d KiB",
		 r[3], r[0] / 1024, r[1] / 1024, (r[1] - r[0]) / 1024, r[2] / 1024, (r[2] - r[1]) / 1024,
		 CG_THREADS * (MEM_RING + 2) * 4);
	check(r[3] == CG_THREADS && r[0] > 0 && r[1] - r[0] >= 3 << 20 && r[1] - r[2] >= 3 << 20, "memory",
	      what);
}

/*
 * (3) One user's files hold at most max_user_kb: at 1024 KiB, uid 65534's
 * threads get three sampling contexts (265 KiB each) and EDQUOT for the
 * fourth; root, another user, starts one while they hold theirs.
 */
struct quota_kid {
	int f, ret, bad;
	int (*start)(struct quota_kid *k);
	const struct vperf_thread_event *ev;
	sem_t started, release;
	pthread_t th;
};

static void *quota_run(void *arg)
{
	struct quota_kid *k = arg;

	k->ret = k->start(k);
	sem_post(&k->started);
	sem_wait(&k->release);
	if (!k->ret)
		ioctl(k->f, VPERF_IOC_THREAD_STOP);
	return NULL;
}

/*
 * As uid 65534: a child whose n threads START one after the other (setup
 * fills kids[]: the file, how to start) and hold their contexts; their
 * results come back in ret[] and bad[], and the contexts stay live until
 * nobody_end().
 */
#define QUOTA_KIDS 8

struct nobody {
	pid_t pid;
	int go;		/* the write end the child waits on */
};

static void nobody_start(struct nobody *nb, void (*setup)(struct quota_kid *kids, int n), int n, int *ret,
			 int *bad)
{
	int res[2], go[2], r[2 * QUOTA_KIDS];

	nb->pid = -1;
	for (int i = 0; i < n; i++)
		ret[i] = bad[i] = 1;
	if (n > QUOTA_KIDS || pipe(res) || pipe(go))
		return;
	nb->pid = fork();
	if (nb->pid == 0) {
		struct quota_kid kids[QUOTA_KIDS];
		char c;

		close(go[1]);	/* else its own copy keeps the EOF it waits for from coming */
		close(res[0]);
		become_nobody();
		setup(kids, n);
		for (int i = 0; i < n; i++) {
			sem_init(&kids[i].started, 0, 0);
			sem_init(&kids[i].release, 0, 0);
			pthread_create(&kids[i].th, NULL, quota_run, &kids[i]);
			sem_wait(&kids[i].started);
			r[i] = kids[i].ret;
			r[QUOTA_KIDS + i] = kids[i].bad;
		}
		if (write(res[1], r, sizeof(r)) != (ssize_t)sizeof(r) || read(go[0], &c, 1) < 0)
			_exit(3);
		for (int i = 0; i < n; i++)
			sem_post(&kids[i].release);
		for (int i = 0; i < n; i++)
			pthread_join(kids[i].th, NULL);
		_exit(0);
	}
	close(go[0]);
	nb->go = go[1];
	if (read(res[0], r, sizeof(r)) == (ssize_t)sizeof(r)) {
		memcpy(ret, r, n * sizeof(int));
		memcpy(bad, r + QUOTA_KIDS, n * sizeof(int));
	}
	close(res[0]);
	close(res[1]);
}

static void nobody_end(struct nobody *nb)
{
	int status;

	if (nb->pid < 0)
		return;
	close(nb->go);	/* EOF: the contexts end, the child exits */
	waitpid(nb->pid, &status, 0);
}

static int quota_start_sampling(struct quota_kid *k)
{
	return start_sampling(k->f, MEM_RING);
}

static void memory_quota_setup(struct quota_kid *kids, int n)
{
	int f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);

	for (int i = 0; i < n; i++)
		kids[i] = (struct quota_kid){ .f = f, .start = quota_start_sampling };
}

static int count_ok(const int *ret, int n, int *first_err)
{
	int ok = 0;

	*first_err = 0;
	for (int i = 0; i < n; i++) {
		if (!ret[i])
			ok++;
		else if (!*first_err)
			*first_err = ret[i];
	}
	return ok;
}

static void memory_quota(void)
{
	long old = module_param_value("max_user_kb");
	int ret[QUOTA_KIDS], bad[QUOTA_KIDS], ok, err, set, mine;
	struct nobody nb;
	char what[400];

	set = write_param("max_user_kb", 1024);
	nobody_start(&nb, memory_quota_setup, QUOTA_KIDS, ret, bad);
	ok = count_ok(ret, QUOTA_KIDS, &err);
	mine = start_sampling(fd, MEM_RING);
	if (!mine)
		ioctl(fd, VPERF_IOC_THREAD_STOP);
	nobody_end(&nb);
	if (old >= 0)
		write_param("max_user_kb", old);
	snprintf(what, sizeof(what), "max_user_kb 1024 (set: %s): uid 65534's threads started %d of %d sampling "
		 "contexts of 265 KiB, then %s; root's meanwhile: %s", set ? strerror(-set) : "ok", ok, QUOTA_KIDS,
		 err ? strerror(-err) : "none refused", mine ? strerror(-mine) : "started");
	check(!set && ok == 3 && err == -EDQUOT && !mine, "memory", what);
	printf("kmod-thread: hc switches 0 budget %d\n", (QUOTA_KIDS + 1) * 12);
}

static void test_memory(void)
{
	memory_finished();
	memory_cgroup();
	memory_quota();
}

/*
 * evquota: one user cannot take the whole event table.  uid 65534's 8
 * threads each START 8 distinct exit reasons (the table has 61 entries
 * beyond the 3 fixed events): 4 of them get theirs (max_user_events, 32),
 * the others EDQUOT naming their first event; root's 8 new ones then start.
 */
static struct vperf_thread_event evq_ev[QUOTA_KIDS + 1][8];

static int quota_start_events(struct quota_kid *k)
{
	struct vperf_thread_start st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.nr_events = 8;
	st.events = (uint64_t)(uintptr_t)k->ev;
	st.bad_event = -1;
	k->ret = ioctl(k->f, VPERF_IOC_THREAD_START, &st) ? -errno : 0;
	k->bad = st.bad_event;
	return k->ret;
}

static void evquota_setup(struct quota_kid *kids, int n)
{
	int f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);

	for (int i = 0; i < n; i++)
		kids[i] = (struct quota_kid){ .f = f, .start = quota_start_events, .ev = evq_ev[i] };
}

static void test_evquota(void)
{
	long max = module_param_value("max_user_events");
	int ret[QUOTA_KIDS], bad[QUOTA_KIDS], ok, err, mine, first_bad = -1;
	struct quota_kid me;
	struct nobody nb;
	char what[400];
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC), ms;

	for (int k = 0; k <= QUOTA_KIDS; k++)
		for (int i = 0; i < 8; i++)
			ev_set(&evq_ev[k][i], VPERF_SRC_EXITS, k < QUOTA_KIDS ? 100 + 8 * k + i : 200 + i, "");
	nobody_start(&nb, evquota_setup, QUOTA_KIDS, ret, bad);
	ok = count_ok(ret, QUOTA_KIDS, &err);
	for (int i = 0; i < QUOTA_KIDS; i++)
		if (ret[i] && first_bad < 0)
			first_bad = bad[i];
	/* while uid 65534's contexts hold their events */
	me = (struct quota_kid){ .f = fd, .ev = evq_ev[QUOTA_KIDS] };
	mine = quota_start_events(&me);
	if (!mine)
		ioctl(fd, VPERF_IOC_THREAD_STOP);
	nobody_end(&nb);
	snprintf(what, sizeof(what), "max_user_events %ld: uid 65534's threads started %d of %d contexts of 8 "
		 "distinct events, then %s (event %d); root's 8 new events meanwhile: %s (event %d)", max, ok,
		 QUOTA_KIDS, err ? strerror(-err) : "none refused", first_bad, mine ? strerror(-mine) : "started",
		 me.bad);
	check(max == 32 && ok == 4 && err == -EDQUOT && first_bad == 0 && !mine, "evquota", what);
	/*
	 * Each new event reprograms both vCPUs (a SNAPSHOT each), a trim after
	 * each context's end at most once more, and with more than 13 events
	 * live they take turns every 50 ms (mux_ms): a reprogram per turn.
	 */
	ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1000000;
	printf("kmod-thread: hc switches 0 budget %llu\n",
	       (unsigned long long)(2 * (2 * 8 * (QUOTA_KIDS + 1) + QUOTA_KIDS + 1 + ms / 40 + 4) +
				    (QUOTA_KIDS + 1) * 8));
}

/*
 * forkrace: a stress case for the fork probe's event references, which it
 * must take while the parent's context is live (under the lock that ends
 * contexts): otherwise a reference taken on an event whose last user just
 * left can land on a table entry already freed and given to another event.
 * 30 rounds: a process starts an inherited context counting 3 events of
 * its own and forks children that exit at once, while the file's last
 * other holder (a child on the other vCPU) exits after a few ms and so
 * releases the file, ending the context mid-fork; a second process claims
 * and drops other events all along, taking freed entries at once.  Then
 * no context is left, and a fresh context counts exactly the 1000 port
 * writes it makes as exits:io (a lost reference would have freed a live
 * event); the kernel log's warnings (a reference count below 0) are the
 * dmesg case's.
 */
#define FR_ROUNDS	30
#define FR_FORKS	40

/* START with an event list on file f; -errno, with *bad the event the module named. */
static int start_events_fd(int f, const struct vperf_thread_event *ev, uint32_t n, int *bad)
{
	struct vperf_thread_start st;

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.nr_events = n;
	st.events = (uint64_t)(uintptr_t)ev;
	st.bad_event = -1;
	if (ioctl(f, VPERF_IOC_THREAD_START, &st)) {
		*bad = st.bad_event;
		return -errno;
	}
	*bad = -1;
	return 0;
}

/* One round in the racing process (CPU 0): 0, or what failed. */
static int forkrace_round(int r)
{
	struct vperf_thread_event ev[3];
	struct vperf_thread_start st;
	pid_t holder;
	int f;

	f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
	if (f < 0)
		return 1;
	ev_set(&ev[0], VPERF_SRC_EXITS, 2, "");
	ev_set(&ev[1], VPERF_SRC_EXITS, 20 + r % 10, "");
	ev_set(&ev[2], VPERF_SRC_EXITS, 40 + r % 10, "");
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_INHERIT;
	st.nr_events = 3;
	st.events = (uint64_t)(uintptr_t)ev;
	if (ioctl(f, VPERF_IOC_THREAD_START, &st))
		return 2;
	holder = fork();	/* it gets a context too, and holds the file until it exits */
	if (holder == 0) {
		pin(1);
		usleep(1000 + (r % 7) * 1000);
		_exit(0);
	}
	close(f);
	for (int i = 0; i < FR_FORKS; i++) {
		pid_t c = fork();

		if (c == 0)
			_exit(0);
		if (c > 0)
			waitpid(c, NULL, 0);
	}
	waitpid(holder, NULL, 0);
	return 0;
}

static void test_forkrace(void)
{
	const struct vperf_thread_page *pg = NULL;
	struct vperf_thread_page v0 = { 0 }, v1 = { 0 };
	struct vperf_thread_event ev;
	int go[2], res[2], status, bad, ret;
	long churned = -1;
	pid_t racer, churner;
	char what[300];

	if (pipe(go) || pipe(res))
		return;
	churner = fork();
	if (churner == 0) {
		int f = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
		long n = 0;
		char c;

		pin(1);
		fcntl(go[0], F_SETFL, O_NONBLOCK);
		while (read(go[0], &c, 1) < 0) {
			ev_set(&ev, VPERF_SRC_EXITS, 60 + n % 20, "");
			if (!start_events_fd(f, &ev, 1, &bad))
				ioctl(f, VPERF_IOC_THREAD_STOP);
			n++;
			usleep(200);
		}
		if (write(res[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
			_exit(3);
		_exit(0);
	}
	racer = fork();
	if (racer == 0) {
		pin(0);
		for (int r = 0; r < FR_ROUNDS; r++)
			if ((ret = forkrace_round(r)))
				_exit(ret);
		_exit(0);
	}
	waitpid(racer, &status, 0);
	snprintf(what, sizeof(what), "the racing process ran its %d rounds (%s %d)", FR_ROUNDS,
		 WIFEXITED(status) ? "status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forkrace", what);
	if (write(go[1], "q", 1) != 1 || read(res[0], &churned, sizeof(churned)) != (ssize_t)sizeof(churned))
		check(0, "forkrace", "the churning process did not report");
	waitpid(churner, &status, 0);
	for (int i = 0; i < 100 && threads_param() != 0; i++)
		usleep(10000);
	snprintf(what, sizeof(what), "%d rounds of %d forks against the file's release, beside %ld claims of "
		 "other events: contexts left %d", FR_ROUNDS, FR_FORKS, churned, threads_param());
	check(threads_param() == 0, "forkrace", what);

	/* the table is sound: exits:io counts exactly this thread's port writes (the console quiet first) */
	quiesce();
	usleep(200000);
	pin(0);
	ev_set(&ev, VPERF_SRC_EXITS, 2, "");
	ret = ioperm(0x80, 1, 1) ? -errno : start_events(&ev, 1, &bad, &pg);
	if (!ret) {
		ioctl(fd, VPERF_IOC_THREAD_READ);
		page_read(pg, &v0);
		for (int i = 0; i < EXITS_N; i++)
			__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
		ioctl(fd, VPERF_IOC_THREAD_READ);
		page_read(pg, &v1);
		ioctl(fd, VPERF_IOC_THREAD_STOP);
		report_hc(pg, 1);
	}
	snprintf(what, sizeof(what), "then a context's exits:io over %d port writes: %s%llu", EXITS_N,
		 ret ? strerror(-ret) : "", ret ? 0ull : (unsigned long long)(v1.counters[0].value - v0.counters[0].value));
	check(!ret && v1.counters[0].value - v0.counters[0].value == EXITS_N, "forkrace", what);
	unpin();
	/*
	 * SNAPSHOTs: each round's contexts (the parent's, the holder's, up to 40
	 * children's: a START or switch-in, an exit, a few slices between: 8),
	 * its 3 claims and a trim (a reprogram each: one per vCPU); the
	 * churner's claim, START, STOP and trim per iteration.
	 */
	printf("kmod-thread: hc switches 0 budget %ld\n",
	       (long)FR_ROUNDS * ((FR_FORKS + 2) * 8 + 4 * 2) + (churned > 0 ? churned : 0) * 6 + 10);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "single";

	fd = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
	if (fd < 0) {
		printf("kmod-thread: FAIL open /dev/%s: %s\n", VPERF_DEV_NAME, strerror(errno));
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "api")) {
		test_api();
	} else if (!strcmp(mode, "single")) {
		struct burner b = { .mode = "single", .cpu = 0, .ms = 300, .stop = 1 };

		run_burners(&b, 1);
	} else if (!strcmp(mode, "migrate")) {
		struct burner b = { .mode = "migrate", .cpu = 0, .ms = 300,
				    .on_tick = migrate_tick, .stop = 1 };

		if (argc > 2)
			tick_ns = strtoull(argv[2], NULL, 0) * 1000000;

		run_burners(&b, 1);
		unpin();
	} else if (!strcmp(mode, "split")) {
		struct burner b[2] = {
			{ .mode = "split", .cpu = 0, .ms = 300 },
			{ .mode = "split", .cpu = 1, .ms = 100 },
		};

		run_burners(b, 2);
		/* a joined thread may not have reached its exit probe yet: clear_child_tid comes first */
		for (int i = 0; i < 100 && threads_param() != 0; i++)
			usleep(10000);
		check(threads_param() == 0, "split",
		      "exited threads' contexts freed while the file is open (threads = 0)");
	} else if (!strcmp(mode, "sleep")) {
		const struct vperf_thread_page *pg = start("sleep");
		struct vperf_thread_page v;
		uint64_t w0, w1, t0, t1;
		char what[200];
		int i;

		if (!pg)
			return 1;
		w0 = clock_ns(CLOCK_MONOTONIC);
		t0 = thread_ns();
		for (i = 0; i < 30; i++)
			usleep(10000);
		t1 = thread_ns();
		w1 = clock_ns(CLOCK_MONOTONIC);
		usleep(1000);
		page_read(pg, &v);
		snprintf(what, sizeof(what),
			 "vcpu-clock %.3f ms thread-cputime %.3f ms in %.1f ms wall, %llu slices "
			 "lasting %.3f ms host, %.3f ms guest",
			 v.counters[0].value / 1e6, (t1 - t0) / 1e6, (w1 - w0) / 1e6,
			 (unsigned long long)v.switches, v.host_ns / 1e6, v.guest_ns / 1e6);
		/*
		 * ~0: under 10% of the wall time, and no more than the host
		 * time its slices lasted (+2%): each wakeup costs the thread
		 * some CPU time of its own, much of it in nested TCG.
		 */
		check(v.counters[0].value < 0.10 * (w1 - w0) &&
		      v.counters[0].value <= (1 + TOLERANCE) * v.host_ns && v.switches >= 30,
		      "sleep", what);
		check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, "sleep", "THREAD_STOP");
		report_hc(pg, 1);
	} else if (!strcmp(mode, "read")) {
		test_read();
	} else if (!strcmp(mode, "inherit")) {
		test_inherit();
	} else if (!strcmp(mode, "attach")) {
		test_attach();
	} else if (!strcmp(mode, "doorbell")) {
		test_doorbell();
	} else if (!strcmp(mode, "exits")) {
		test_exits();
	} else if (!strcmp(mode, "events")) {
		test_events();
	} else if (!strcmp(mode, "guest")) {
		test_guest();
	} else if (!strcmp(mode, "steal-guest")) {
		test_steal_guest();
	} else if (!strcmp(mode, "hostcs")) {
		test_hostcs();
	} else if (!strcmp(mode, "mux")) {
		test_mux();
	} else if (!strcmp(mode, "stress")) {
		test_stress();
	} else if (!strcmp(mode, "conserve")) {
		test_conserve();
	} else if (!strcmp(mode, "sample")) {
		test_sample();
	} else if (!strcmp(mode, "steal")) {
		test_steal();
	} else if (!strcmp(mode, "private")) {
		test_private();
	} else if (!strcmp(mode, "plm")) {
		test_plm();
	} else if (!strcmp(mode, "memory")) {
		test_memory();
	} else if (!strcmp(mode, "evquota")) {
		test_evquota();
	} else if (!strcmp(mode, "forkrace")) {
		test_forkrace();
	} else if (!strcmp(mode, "churn")) {
		if (argc < 4) {
			fprintf(stderr, "usage: vperf-kmod-thread churn MS READY-FILE\n");
			return 2;
		}
		test_churn((unsigned int)strtoul(argv[2], NULL, 0), argv[3]);
		/* quiet when fine: 100 cycles */
		return fails ? 1 : 0;
	} else if (!strcmp(mode, "hold")) {
		const struct vperf_thread_page *pg = start("hold");

		if (!pg)
			return 1;
		printf("kmod-thread: hold started, threads = %d\n", threads_param());
		sleep(argc > 2 ? atoi(argv[2]) : 2);
		report_hc(pg, 0);
		return 0;	/* exits with the context, the mapping and the file */
	} else {
		fprintf(stderr, "usage: vperf-kmod-thread api|single|migrate [MS]|split|sleep|read|inherit|attach|doorbell|exits|events|guest|steal-guest|hostcs|mux|stress|conserve|sample|steal|private|plm|memory|evquota|forkrace|hold [S]|churn MS FILE\n");
		return 2;
	}
	printf("kmod-thread: %s %s\n", mode, fails ? "FAILED" : "PASSED");
	return fails ? 1 : 0;
}
