/* SPDX-License-Identifier: MIT */
/*
 * read-latency: what one counter read costs with libvperf, against the
 * same read done by hand and against PAPI.
 *
 * Every method is set up once, then the methods are interleaved in rounds
 * (round r starts with method r mod M, so no method always runs first or
 * last); each round times a batch of --reads reads of every method, and a
 * method's figure is the median of its rounds.  On a shared, noisy machine
 * the median of interleaved rounds, timed in thread CPU time, is what stays
 * stable; the min and max are printed too.
 *
 * Methods and the baseline each is compared with:
 *   raw_read          read(2) of a perf fd opened here with the attr
 *                     libvperf uses for task-clock on self (same kernel work)
 *   vperf_syscall     vperf_evset__read_one() on task-clock   / raw_read
 *   papi_read         PAPI_read() on perf::TASK-CLOCK
 *   clock_gettime     clock_gettime(CLOCK_THREAD_CPUTIME_ID), for scale
 *   bare_rdpmc        load pc->index from the perf mmap page + rdpmc
 *   vperf_rdpmc       vperf_evset__read_one() on instructions:u, when
 *                     libvperf reads it with rdpmc               / bare_rdpmc
 * and libvperf (vperf_syscall) / papi_read.
 *
 * Output: a table for a person, then exactly one line of JSON (the last
 * line; the only line with --json-only).  Rows that cannot be measured on
 * this host say "skipped: <reason>"; no figure is ever printed that was
 * not measured.  Exit 0 when the measurement ran (whether or not the goals
 * were met), 1 when a required method could not run, 2 on a bad option.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <vperf/vperf.h>

#ifdef VPERF_BENCH_HAVE_PAPI
#include <papi.h>
#endif

#define DEFAULT_ROUNDS	7
#define DEFAULT_READS	200000L
#define REASON_LEN	512

/* Goals, from the issue that asked for this benchmark. */
#define GOAL_SYSCALL_RATIO	1.10	/* vperf_syscall <= 1.10 x raw_read */
#define GOAL_RDPMC_RATIO	1.30	/* vperf_rdpmc <= 1.3 x bare_rdpmc */
#define GOAL_PAPI_RATIO		1.00	/* vperf_syscall < papi_read */

/* Keeps the compiler from dropping reads whose result is unused. */
static volatile uint64_t sink;

/* ---- methods --------------------------------------------------------- */

enum method_status {
	M_OK,		/* set up, measured */
	M_SKIPPED,	/* cannot run on this host: reason says why */
	M_ERROR,	/* set up, then a read failed: reason says how */
};

struct method {
	const char *name;	/* JSON key */
	const char *label;	/* table row */
	/* n reads; 0 or -errno (reason then says what failed). */
	int (*run)(struct method *m, long n);
	enum method_status status;
	char reason[REASON_LEN];
	double *ns;		/* ns per read, one per round */
	double median, min, max;
};

enum {
	M_RAW_READ,
	M_VPERF_SYSCALL,
	M_PAPI_READ,
	M_CLOCK_GETTIME,
	M_BARE_RDPMC,
	M_VPERF_RDPMC,
	M_NR,
};

/* State of the methods: one perf fd or event set each. */
static struct {
	int raw_fd;
	struct vperf_evset *vperf_tc;	/* task-clock */
	int vperf_tc_path;
	int papi_es;
	struct vperf_evset *vperf_hw;	/* instructions:u */
	int vperf_hw_path;
	int rdpmc_fd;
	void *rdpmc_page;
	size_t page_size;
} st = {
	.raw_fd = -1, .papi_es = -1, .rdpmc_fd = -1,
	.vperf_tc_path = -1, .vperf_hw_path = -1,
};

static void skip(struct method *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void skip(struct method *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
	m->status = M_SKIPPED;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

/*
 * The attr libvperf opens for "task-clock" on VPERF_TARGET_SELF: a
 * software event on the calling thread (pid 0, any cpu), not in a group,
 * with the two times it needs to scale, and libpfm4's default exclude_hv
 * and exclude_guest.  Checked against libvperf with
 * strace -v -e trace=perf_event_open (bench/README.md).
 */
static void task_clock_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->disabled = 1;
	attr->exclude_hv = 1;
	attr->exclude_guest = 1;
}

/* The attr of "instructions:u", for the bare rdpmc loop. */
static void instructions_u_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_HARDWARE;
	attr->config = PERF_COUNT_HW_INSTRUCTIONS;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

/* Burn a little CPU so that task-clock has something to show. */
static void spin(void)
{
	uint64_t x = 0;

	for (int i = 0; i < 1000000; i++)
		x += (uint64_t)i * i;
	sink = x;
}

/* raw_read: read(2) of {value, enabled, running}. */

static int run_raw_read(struct method *m, long n)
{
	uint64_t buf[3];

	for (long i = 0; i < n; i++) {
		if (read(st.raw_fd, buf, sizeof(buf)) != sizeof(buf)) {
			int err = errno ? -errno : -EIO;

			snprintf(m->reason, sizeof(m->reason),
				 "read(2) of the perf fd failed: %s",
				 strerror(-err));
			return err;
		}
		sink = buf[0];
	}
	return 0;
}

static void setup_raw_read(struct method *m)
{
	struct perf_event_attr attr;
	uint64_t buf[3];
	int fd;

	task_clock_attr(&attr);
	fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		skip(m, "perf_event_open(task-clock) failed: %s",
		     strerror(-fd));
		return;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		skip(m, "PERF_EVENT_IOC_ENABLE failed: %s", strerror(errno));
		close(fd);
		return;
	}
	spin();
	if (read(fd, buf, sizeof(buf)) != sizeof(buf) || buf[0] == 0) {
		skip(m, "task-clock read back nothing after enable");
		close(fd);
		return;
	}
	st.raw_fd = fd;
}

/* vperf_syscall and vperf_rdpmc: vperf_evset__read_one(). */

static int vperf_read_n(struct method *m, struct vperf_evset *es, long n)
{
	struct vperf_count c;
	int err;

	for (long i = 0; i < n; i++) {
		err = vperf_evset__read_one(es, 0, &c);
		if (err < 0) {
			snprintf(m->reason, sizeof(m->reason),
				 "vperf_evset__read_one failed: %s",
				 vperf_evset__strerror(es));
			return err;
		}
		sink = c.value;
	}
	return 0;
}

static int run_vperf_syscall(struct method *m, long n)
{
	return vperf_read_n(m, st.vperf_tc, n);
}

static int run_vperf_rdpmc(struct method *m, long n)
{
	return vperf_read_n(m, st.vperf_hw, n);
}

/*
 * Open a one-event set on the calling thread and start it.  On failure,
 * *es is NULL and why says what failed.
 */
static int vperf_open_one(const char *event, struct vperf_evset **es,
			  char *why, size_t len)
{
	struct vperf_evset *s;
	int err;

	*es = NULL;
	err = vperf_evset__new(NULL, &s);
	if (err) {
		snprintf(why, len, "vperf_evset__new: %s", strerror(-err));
		return err;
	}
	err = vperf_evset__add(s, event);
	if (err >= 0)
		err = vperf_evset__open(s);
	if (err >= 0)
		err = vperf_evset__start(s);
	if (err < 0) {
		snprintf(why, len, "%s", vperf_evset__strerror(s));
		vperf_evset__delete(s);
		return err;
	}
	*es = s;
	return 0;
}

static void setup_vperf_syscall(struct method *m)
{
	struct vperf_count c;
	int err;

	err = vperf_open_one("task-clock", &st.vperf_tc, m->reason,
			     sizeof(m->reason));
	if (err) {
		m->status = M_SKIPPED;
		return;
	}
	st.vperf_tc_path = vperf_evset__read_path(st.vperf_tc, 0);
	spin();
	if (vperf_evset__read_one(st.vperf_tc, 0, &c) < 0 || c.value == 0) {
		skip(m, "libvperf read back nothing for task-clock: %s",
		     vperf_evset__strerror(st.vperf_tc));
		vperf_evset__delete(st.vperf_tc);
		st.vperf_tc = NULL;
	}
}

/* papi_read: PAPI_read() of one perf::TASK-CLOCK event. */

#ifdef VPERF_BENCH_HAVE_PAPI
static char papi_version[32] = "";

/* PAPI_strerror() is NULL before PAPI_library_init() has succeeded. */
static const char *papi_err(int ret)
{
	static char buf[64];
	const char *s = PAPI_strerror(ret);

	if (s)
		return s;
	switch (ret) {
	case PAPI_EINVAL:	s = "PAPI_EINVAL"; break;
	case PAPI_ENOMEM:	s = "PAPI_ENOMEM"; break;
	case PAPI_ESYS:		s = "PAPI_ESYS, a system call failed"; break;
	case PAPI_ECMP:		s = "PAPI_ECMP, no component supports it"; break;
	case PAPI_ENOEVNT:	s = "PAPI_ENOEVNT, no such event"; break;
	case PAPI_ENOCMP:	s = "PAPI_ENOCMP, no such component"; break;
	default:		s = "see papi.h"; break;
	}
	snprintf(buf, sizeof(buf), "PAPI error %d (%s)", ret, s);
	return buf;
}

static int run_papi_read(struct method *m, long n)
{
	long long v[1];
	int err;

	for (long i = 0; i < n; i++) {
		err = PAPI_read(st.papi_es, v);
		if (err != PAPI_OK) {
			snprintf(m->reason, sizeof(m->reason),
				 "PAPI_read failed: %s", papi_err(err));
			return -EIO;
		}
		sink = (uint64_t)v[0];
	}
	return 0;
}

static void setup_papi_read(struct method *m)
{
	int es = PAPI_NULL;
	long long v[1] = { 0 };
	int ret;

	ret = PAPI_library_init(PAPI_VER_CURRENT);
	if (ret != PAPI_VER_CURRENT) {
		skip(m, "PAPI_library_init failed: %s",
		     ret > 0 ? "header and library versions differ"
			     : papi_err(ret));
		return;
	}
	snprintf(papi_version, sizeof(papi_version), "%d.%d.%d.%d",
		 PAPI_VERSION_MAJOR(PAPI_VERSION),
		 PAPI_VERSION_MINOR(PAPI_VERSION),
		 PAPI_VERSION_REVISION(PAPI_VERSION),
		 PAPI_VERSION_INCREMENT(PAPI_VERSION));
	ret = PAPI_create_eventset(&es);
	if (ret != PAPI_OK) {
		skip(m, "PAPI_create_eventset failed: %s", papi_err(ret));
		goto out_shutdown;
	}
	ret = PAPI_add_named_event(es, "perf::TASK-CLOCK");
	if (ret != PAPI_OK) {
		skip(m, "PAPI_add_named_event(perf::TASK-CLOCK) failed: %s",
		     papi_err(ret));
		goto out_destroy;
	}
	ret = PAPI_start(es);
	if (ret != PAPI_OK) {
		skip(m, "PAPI_start failed: %s", papi_err(ret));
		goto out_cleanup;
	}
	spin();
	ret = PAPI_read(es, v);
	if (ret != PAPI_OK || v[0] <= 0) {
		skip(m, "PAPI_read read back nothing: %s",
		     ret != PAPI_OK ? papi_err(ret) : "count is 0");
		PAPI_stop(es, v);
		goto out_cleanup;
	}
	st.papi_es = es;
	return;

out_cleanup:
	PAPI_cleanup_eventset(es);
out_destroy:
	PAPI_destroy_eventset(&es);
out_shutdown:
	PAPI_shutdown();
}

static void teardown_papi(void)
{
	long long v[1];

	if (st.papi_es == -1)
		return;
	PAPI_stop(st.papi_es, v);
	PAPI_cleanup_eventset(st.papi_es);
	PAPI_destroy_eventset(&st.papi_es);
	PAPI_shutdown();
}
#else
static const char papi_version[] = "";

static int run_papi_read(struct method *m, long n)
{
	return -ENOSYS;
}

static void setup_papi_read(struct method *m)
{
	skip(m, "built without PAPI (pkg-config papi not found at configure time)");
}

static void teardown_papi(void)
{
}
#endif

/* clock_gettime: the thread's CPU time from the kernel, for scale. */

static int run_clock_gettime(struct method *m, long n)
{
	struct timespec ts;

	for (long i = 0; i < n; i++) {
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)) {
			int err = -errno;

			snprintf(m->reason, sizeof(m->reason),
				 "clock_gettime failed: %s", strerror(-err));
			return err;
		}
		sink = (uint64_t)ts.tv_nsec;
	}
	return 0;
}

static void setup_clock_gettime(struct method *m)
{
}

/* bare_rdpmc and vperf_rdpmc. */

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

/*
 * The least a self-monitoring read can be: the counter index from the
 * mmap page (it changes when the kernel reschedules the event), then
 * rdpmc.  No lock retry, no offset, no width, no times: the floor that
 * libvperf's full read of the page is held to.
 */
static int run_bare_rdpmc(struct method *m, long n)
{
	const volatile struct perf_event_mmap_page *pc = st.rdpmc_page;

	for (long i = 0; i < n; i++) {
		uint32_t idx = pc->index;

		if (!idx) {
			snprintf(m->reason, sizeof(m->reason),
				 "the event left its counter (mmap page index 0)");
			return -EAGAIN;
		}
		sink = rdpmc(idx - 1);
	}
	return 0;
}

static void setup_bare_rdpmc(struct method *m, int hw_err)
{
	const volatile struct perf_event_mmap_page *pc;
	struct perf_event_attr attr;
	void *page;
	int fd;

	if (hw_err) {
		/* the host-level reason was already worked out */
		return;
	}
	instructions_u_attr(&attr);
	fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		skip(m, "perf_event_open(instructions:u) failed: %s",
		     strerror(-fd));
		return;
	}
	page = mmap(NULL, st.page_size, PROT_READ, MAP_SHARED, fd, 0);
	if (page == MAP_FAILED) {
		skip(m, "mmap of the perf page failed: %s", strerror(errno));
		close(fd);
		return;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		skip(m, "PERF_EVENT_IOC_ENABLE failed: %s", strerror(errno));
		goto out_unmap;
	}
	pc = page;
	if (!pc->cap_user_rdpmc) {
		skip(m, "the kernel does not allow rdpmc from user mode "
			"(cap_user_rdpmc is 0; see "
			"/sys/bus/event_source/devices/cpu/rdpmc)");
		goto out_unmap;
	}
	if (!pc->index) {
		skip(m, "the event is not on a counter (mmap page index 0)");
		goto out_unmap;
	}
	st.rdpmc_fd = fd;
	st.rdpmc_page = page;
	return;

out_unmap:
	munmap(page, st.page_size);
	close(fd);
}
#else
static int run_bare_rdpmc(struct method *m, long n)
{
	return -ENOSYS;
}

static void setup_bare_rdpmc(struct method *m, int hw_err)
{
	if (!hw_err)
		skip(m, "rdpmc is an x86 instruction");
}
#endif

static void setup_vperf_rdpmc(struct method *m, int hw_err)
{
	if (hw_err)
		return;
	if (vperf_open_one("instructions:u", &st.vperf_hw, m->reason,
			   sizeof(m->reason))) {
		m->status = M_SKIPPED;
		return;
	}
	st.vperf_hw_path = vperf_evset__read_path(st.vperf_hw, 0);
	if (st.vperf_hw_path != VPERF_READ_RDPMC) {
		skip(m, "libvperf reads instructions:u with the %s path, "
			"not rdpmc", vperf_read_path_name(st.vperf_hw_path));
		vperf_evset__delete(st.vperf_hw);
		st.vperf_hw = NULL;
	}
}

/* ---- host ------------------------------------------------------------ */

struct host {
	struct utsname uts;
	char cpu[128];
	bool in_vm;
	bool pmu_sysfs;		/* /sys/bus/event_source/devices/cpu* */
	int hw_err;		/* 0: a hardware event opens here */
	int paranoid;		/* INT_MIN: unknown */
};

static void host_probe(struct host *h)
{
	static const char *const pmus[] = { "cpu", "cpu_core", "cpu_atom" };
	struct perf_event_attr attr;
	char line[4096], path[128];	/* the flags line is long */
	struct stat sb;
	FILE *f;
	int fd;

	if (uname(&h->uts))
		memset(&h->uts, 0, sizeof(h->uts));

	snprintf(h->cpu, sizeof(h->cpu), "unknown");
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		bool model = false;

		while (fgets(line, sizeof(line), f)) {
			char *v = strchr(line, ':');

			if (!v)
				continue;
			if (!model && !strncmp(line, "model name", 10)) {
				v += strspn(v + 1, " \t") + 1;
				v[strcspn(v, "\n")] = '\0';
				snprintf(h->cpu, sizeof(h->cpu), "%s", v);
				model = true;
			} else if (!strncmp(line, "flags", 5)) {
				char *nl = strchr(v, '\n');

				if (nl)
					*nl = ' ';
				if (strstr(v, " hypervisor "))
					h->in_vm = true;
			}
		}
		fclose(f);
	}

	for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s",
			 pmus[i]);
		if (!stat(path, &sb))
			h->pmu_sysfs = true;
	}

	h->paranoid = INT_MIN;
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &h->paranoid) != 1)
			h->paranoid = INT_MIN;
		fclose(f);
	}

	instructions_u_attr(&attr);
	fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		h->hw_err = 0;
	} else {
		h->hw_err = fd;
	}
}

/* ---- measuring --------------------------------------------------------- */

/*
 * Batches are timed in this thread's CPU time, user and kernel: the read
 * system calls are in it, the time other processes of a shared machine
 * hold the CPU is not (a wall clock counts it, and it then decides the
 * figures more than the reads do).
 */
#define BATCH_CLOCK		CLOCK_THREAD_CPUTIME_ID
#define BATCH_CLOCK_NAME	"CLOCK_THREAD_CPUTIME_ID"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(BATCH_CLOCK, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of v[0..n-1]; sorts v. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* m's median, min and max over the rounds; 0 or -ENOMEM. */
static int summarize(struct method *m, int rounds)
{
	double *s = malloc(sizeof(*s) * (size_t)rounds);

	if (!s)
		return -ENOMEM;
	memcpy(s, m->ns, sizeof(*s) * (size_t)rounds);
	m->median = median(s, rounds);
	m->min = s[0];
	m->max = s[rounds - 1];
	free(s);
	return 0;
}

static void measure(struct method *ms, int rounds, long reads)
{
	long warm = reads < 10000 ? reads : 10000;

	for (int k = 0; k < M_NR; k++)
		if (ms[k].status == M_OK && ms[k].run(&ms[k], warm))
			ms[k].status = M_ERROR;

	for (int r = 0; r < rounds; r++) {
		for (int j = 0; j < M_NR; j++) {
			struct method *m = &ms[(r + j) % M_NR];
			double t0, t1;

			if (m->status != M_OK)
				continue;
			t0 = now_ns();
			if (m->run(m, reads)) {
				m->status = M_ERROR;
				continue;
			}
			t1 = now_ns();
			m->ns[r] = (t1 - t0) / (double)reads;
		}
	}
	for (int k = 0; k < M_NR; k++) {
		if (ms[k].status == M_OK && summarize(&ms[k], rounds)) {
			snprintf(ms[k].reason, sizeof(ms[k].reason),
				 "out of memory");
			ms[k].status = M_ERROR;
		}
	}
}

/* ---- goals ------------------------------------------------------------- */

struct goal {
	const char *name;	/* JSON key */
	const char *label;
	int method, baseline;
	double limit;
	bool strict;		/* ratio < limit, not <= */
	/* filled in */
	bool measured;
	double ratio;		/* median / baseline's median: the goal's */
	double paired;		/* median over rounds of the round's ratio */
	bool met;
	char reason[REASON_LEN + 64];
};

static void goal_eval(struct goal *g, const struct method *ms, int rounds)
{
	const struct method *m = &ms[g->method], *b = &ms[g->baseline];
	double *r;

	if (m->status != M_OK || b->status != M_OK) {
		const struct method *why = m->status != M_OK ? m : b;

		snprintf(g->reason, sizeof(g->reason), "%s: %s", why->name,
			 why->reason);
		return;
	}
	g->measured = true;
	g->ratio = m->median / b->median;
	g->met = g->strict ? g->ratio < g->limit : g->ratio <= g->limit;

	/*
	 * Both ran in every round, next to each other: the ratio within a
	 * round cancels the load that came and went between rounds.  Shown
	 * to help read a noisy run; the goal is on the ratio of medians.
	 */
	g->paired = g->ratio;
	r = malloc(sizeof(*r) * (size_t)rounds);
	if (r) {
		for (int i = 0; i < rounds; i++)
			r[i] = m->ns[i] / b->ns[i];
		g->paired = median(r, rounds);
		free(r);
	}
}

static const char *goal_result(const struct goal *g)
{
	if (!g->measured)
		return "SKIP";
	return g->met ? "PASS" : "MISS";
}

/* ---- output ------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *status_name(enum method_status s)
{
	switch (s) {
	case M_OK:	return "ok";
	case M_SKIPPED:	return "skipped";
	default:	return "error";
	}
}

static const char *path_name(int path)
{
	return path < 0 ? "none" : vperf_read_path_name(path);
}

static void print_table(const struct method *ms, const struct goal *gs,
			int nr_goals, const struct host *h, int rounds,
			long reads)
{
	printf("read-latency: median of %d rounds x %ld reads per method, "
	       "methods interleaved, timed in thread CPU time\n", rounds,
	       reads);
	printf("host: Linux %s %s, %s%s, hardware PMU: %s, "
	       "perf_event_paranoid %d\n",
	       h->uts.release, h->uts.machine, h->cpu,
	       h->in_vm ? " (virtual machine)" : "",
	       !h->hw_err ? "yes" : h->pmu_sysfs ? "yes, but events do not open"
						 : "no", h->paranoid);
	printf("libvperf %s, backend %s, task-clock read path %s\n\n",
	       vperf_version(),
	       st.vperf_tc ? vperf_backend_name(st.vperf_tc) : "none",
	       path_name(st.vperf_tc_path));

	printf("%-44s %9s %9s %9s\n", "method", "ns/read", "min", "max");
	for (int k = 0; k < M_NR; k++) {
		const struct method *m = &ms[k];

		if (m->status == M_OK)
			printf("%-44s %9.1f %9.1f %9.1f\n", m->label,
			       m->median, m->min, m->max);
		else
			printf("%-44s %s: %s\n", m->label,
			       m->status == M_SKIPPED ? "skipped" : "error",
			       m->reason);
	}

	printf("\n%-44s %9s %9s %9s  %s\n", "goal", "ratio", "limit",
	       "paired", "result");
	for (int i = 0; i < nr_goals; i++) {
		const struct goal *g = &gs[i];

		if (g->measured)
			printf("%-44s %8.3fx %8.2fx %8.3fx  %s\n", g->label,
			       g->ratio, g->limit, g->paired, goal_result(g));
		else
			printf("%-44s %9s %8.2fx %9s  SKIP (%s)\n", g->label,
			       "-", g->limit, "-", g->reason);
	}
	printf("\n");
}

static void print_json(const struct method *ms, const struct goal *gs,
		       int nr_goals, const struct host *h, int rounds,
		       long reads)
{
	FILE *f = stdout;

	fprintf(f, "{\"bench\":\"read-latency\",\"rounds\":%d,"
		"\"reads_per_round\":%ld,\"statistic\":\"median\","
		"\"clock\":\"%s\",", rounds, reads, BATCH_CLOCK_NAME);

	fputs("\"host\":{\"kernel\":", f);
	json_str(f, h->uts.release);
	fputs(",\"machine\":", f);
	json_str(f, h->uts.machine);
	fputs(",\"cpu\":", f);
	json_str(f, h->cpu);
	fprintf(f, ",\"virtual_machine\":%s,\"pmu_in_sysfs\":%s,"
		"\"hardware_event_opens\":%s,\"hardware_pmu\":%s,",
		h->in_vm ? "true" : "false", h->pmu_sysfs ? "true" : "false",
		h->hw_err ? "false" : "true",
		h->pmu_sysfs || !h->hw_err ? "true" : "false");
	if (h->paranoid == INT_MIN)
		fputs("\"perf_event_paranoid\":null,", f);
	else
		fprintf(f, "\"perf_event_paranoid\":%d,", h->paranoid);
	fputs("\"vperf_version\":", f);
	json_str(f, vperf_version());
	fputs(",\"vperf_backend\":", f);
	json_str(f, st.vperf_tc ? vperf_backend_name(st.vperf_tc) : "none");
	fputs(",\"vperf_task_clock_read_path\":", f);
	json_str(f, path_name(st.vperf_tc_path));
	fputs(",\"papi_version\":", f);
	if (papi_version[0])
		json_str(f, papi_version);
	else
		fputs("null", f);
	fputs("},", f);

	fputs("\"methods\":{", f);
	for (int k = 0; k < M_NR; k++) {
		const struct method *m = &ms[k];

		fprintf(f, "%s", k ? "," : "");
		json_str(f, m->name);
		fputs(":{\"label\":", f);
		json_str(f, m->label);
		fprintf(f, ",\"status\":\"%s\"", status_name(m->status));
		if (m->status == M_OK) {
			fprintf(f, ",\"ns_per_read\":%.2f,\"min\":%.2f,"
				"\"max\":%.2f", m->median, m->min, m->max);
		} else {
			fputs(",\"ns_per_read\":null,\"reason\":", f);
			json_str(f, m->reason);
		}
		fputs("}", f);
	}
	fputs("},", f);

	fputs("\"goals\":{", f);
	for (int i = 0; i < nr_goals; i++) {
		const struct goal *g = &gs[i];

		fprintf(f, "%s", i ? "," : "");
		json_str(f, g->name);
		fputs(":{\"method\":", f);
		json_str(f, ms[g->method].name);
		fputs(",\"baseline\":", f);
		json_str(f, ms[g->baseline].name);
		fprintf(f, ",\"limit\":%.2f,\"strict\":%s,", g->limit,
			g->strict ? "true" : "false");
		if (g->measured)
			fprintf(f, "\"ratio\":%.4f,\"paired_ratio\":%.4f,"
				"\"met\":%s,", g->ratio, g->paired,
				g->met ? "true" : "false");
		else
			fputs("\"ratio\":null,\"paired_ratio\":null,"
			      "\"met\":null,", f);
		fprintf(f, "\"result\":\"%s\"", goal_result(g));
		if (!g->measured) {
			fputs(",\"reason\":", f);
			json_str(f, g->reason);
		}
		fputs("}", f);
	}
	fputs("}}\n", f);
}

/* ---- main -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: read-latency [--rounds N] [--reads N] [--json-only]\n"
"\n"
"Measures the cost of one counter read: libvperf's vperf_evset__read_one\n"
"against read(2) on the same perf fd, PAPI_read, clock_gettime and, where\n"
"the host has a PMU that allows it, rdpmc.  Prints a table, then one line\n"
"of JSON.\n"
"\n"
"  --rounds N    rounds, each timing every method once (default %d)\n"
"  --reads N     reads per method per round (default %ld)\n"
"  --json-only   print only the JSON line\n"
"  --help        print this and exit\n",
		DEFAULT_ROUNDS, DEFAULT_READS);
}

static int bad_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Say what is wrong with the command line; exit status 2. */
static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "read-latency: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	usage(stderr);
	return 2;
}

static bool parse_count(const char *s, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds",	required_argument, NULL, 'r' },
		{ "reads",	required_argument, NULL, 'n' },
		{ "json-only",	no_argument,	   NULL, 'j' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct method ms[M_NR] = {
		[M_RAW_READ] = { "raw_read",
			"read(2) on a perf fd, task-clock",
			run_raw_read, .status = M_OK },
		[M_VPERF_SYSCALL] = { "vperf_syscall",
			"libvperf read_one, task-clock",
			run_vperf_syscall, .status = M_OK },
		[M_PAPI_READ] = { "papi_read",
			"PAPI_read, perf::TASK-CLOCK",
			run_papi_read, .status = M_OK },
		[M_CLOCK_GETTIME] = { "clock_gettime",
			"clock_gettime(CLOCK_THREAD_CPUTIME_ID)",
			run_clock_gettime, .status = M_OK },
		[M_BARE_RDPMC] = { "bare_rdpmc",
			"bare rdpmc loop, instructions:u",
			run_bare_rdpmc, .status = M_OK },
		[M_VPERF_RDPMC] = { "vperf_rdpmc",
			"libvperf read_one, instructions:u (rdpmc)",
			run_vperf_rdpmc, .status = M_OK },
	};
	struct goal gs[] = {
		{ .name = "vperf_syscall_vs_raw_read",
		  .label = "libvperf syscall path <= 1.10x raw read(2)",
		  .method = M_VPERF_SYSCALL, .baseline = M_RAW_READ,
		  .limit = GOAL_SYSCALL_RATIO },
		{ .name = "vperf_rdpmc_vs_bare_rdpmc",
		  .label = "libvperf rdpmc path <= 1.3x bare rdpmc",
		  .method = M_VPERF_RDPMC, .baseline = M_BARE_RDPMC,
		  .limit = GOAL_RDPMC_RATIO },
		{ .name = "vperf_vs_papi_read",
		  .label = "libvperf faster than PAPI_read",
		  .method = M_VPERF_SYSCALL, .baseline = M_PAPI_READ,
		  .limit = GOAL_PAPI_RATIO, .strict = true },
	};
	int nr_goals = (int)(sizeof(gs) / sizeof(gs[0]));
	long rounds = DEFAULT_ROUNDS, reads = DEFAULT_READS;
	bool json_only = false;
	struct host h = { 0 };
	int opt, ret = 0;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (!parse_count(optarg, 1000000, &rounds))
				return bad_usage("--rounds wants a whole number "
						 "from 1 to 1000000, not '%s'",
						 optarg);
			break;
		case 'n':
			if (!parse_count(optarg, 1000000000, &reads))
				return bad_usage("--reads wants a whole number "
						 "from 1 to 1000000000, not '%s'",
						 optarg);
			break;
		case 'j':
			json_only = true;
			break;
		case 'h':
			usage(stdout);
			if (fflush(stdout) || ferror(stdout)) {
				fprintf(stderr, "read-latency: writing to "
					"stdout failed: %s\n", strerror(errno));
				return 1;
			}
			return 0;
		case ':':
			return bad_usage("option '%s' needs a value",
					 argv[optind - 1]);
		default:
			return bad_usage("unknown or ambiguous option '%s'",
					 argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);

	st.page_size = (size_t)sysconf(_SC_PAGESIZE);
	host_probe(&h);

	for (int k = 0; k < M_NR; k++) {
		ms[k].ns = calloc((size_t)rounds, sizeof(double));
		if (!ms[k].ns) {
			fprintf(stderr, "read-latency: out of memory\n");
			return 1;
		}
	}

	setup_raw_read(&ms[M_RAW_READ]);
	setup_vperf_syscall(&ms[M_VPERF_SYSCALL]);
	setup_papi_read(&ms[M_PAPI_READ]);
	setup_clock_gettime(&ms[M_CLOCK_GETTIME]);
	if (h.hw_err) {
		const char *why = !h.pmu_sysfs ? "no hardware PMU on this host"
					       : "a hardware event does not open here";

		skip(&ms[M_BARE_RDPMC], "%s (perf_event_open(instructions:u): %s)",
		     why, strerror(-h.hw_err));
		skip(&ms[M_VPERF_RDPMC], "%s (perf_event_open(instructions:u): %s)",
		     why, strerror(-h.hw_err));
	}
	setup_bare_rdpmc(&ms[M_BARE_RDPMC], h.hw_err);
	setup_vperf_rdpmc(&ms[M_VPERF_RDPMC], h.hw_err);

	/* PAPI says why it failed; say it too, even with --json-only. */
	if (ms[M_PAPI_READ].status != M_OK)
		fprintf(stderr, "read-latency: PAPI row skipped: %s\n",
			ms[M_PAPI_READ].reason);

	measure(ms, (int)rounds, reads);
	for (int i = 0; i < nr_goals; i++)
		goal_eval(&gs[i], ms, (int)rounds);

	if (!json_only)
		print_table(ms, gs, nr_goals, &h, (int)rounds, reads);
	print_json(ms, gs, nr_goals, &h, (int)rounds, reads);

	if (ms[M_RAW_READ].status != M_OK || ms[M_VPERF_SYSCALL].status != M_OK) {
		fprintf(stderr, "read-latency: the syscall-path comparison "
			"could not be measured: %s\n",
			ms[M_RAW_READ].status != M_OK ? ms[M_RAW_READ].reason
						      : ms[M_VPERF_SYSCALL].reason);
		ret = 1;
	}

	teardown_papi();
	vperf_evset__delete(st.vperf_tc);
	vperf_evset__delete(st.vperf_hw);
	if (st.rdpmc_page)
		munmap(st.rdpmc_page, st.page_size);
	if (st.rdpmc_fd >= 0)
		close(st.rdpmc_fd);
	if (st.raw_fd >= 0)
		close(st.raw_fd);
	for (int k = 0; k < M_NR; k++)
		free(ms[k].ns);

	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "read-latency: writing to stdout failed: %s\n",
			strerror(errno));
		return 1;
	}
	return ret;
}
