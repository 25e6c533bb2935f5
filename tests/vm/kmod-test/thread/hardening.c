// SPDX-License-Identifier: MIT
/* vperf-kmod-thread's cases: other users, kernel mode, memory, locking: private, plm, memory, evquota, forkrace. */
#include "kmod-thread.h"

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

void test_private(void)
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

void test_plm(void)
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

void test_memory(void)
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

void test_evquota(void)
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

void test_forkrace(void)
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
