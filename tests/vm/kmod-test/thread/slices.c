// SPDX-License-Identifier: MIT
/* vperf-kmod-thread's cases: contexts and their slices: read, churn, conserve, inherit, attach, stress, the burners. */
#include "kmod-thread.h"

void test_list_api(const char *m)
{
	struct vperf_thread_row rows[2];
	struct vperf_thread_list l = { 0 };

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
void test_read(void)
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
void test_churn(unsigned int ms, const char *ready)
{
	static struct vperf_thread_row rows[16];
	struct vperf_thread_start st;
	struct vperf_thread_list l = { 0 };
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
 * The goal, 0.5%, for the rows plus what every other task ran (the
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
	struct vperf_thread_list l = { 0 };
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
void test_conserve(void)
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
 * time, *goal when within the 2% as well; tids the kids' tids,
 * kid_goal[i] 1 when kid i's row is within the 2%.
 */
#define INHERIT_ROUNDS	3
#define INHERIT_GOAL	0.02

static int inherit_round(int round, pid_t *tids, int *goal, int *kid_goal)
{
	static struct vperf_thread_row rows[64];
	struct vperf_thread_list l = { 0 };
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

void test_inherit(void)
{
	static struct vperf_thread_row rows[64];
	static pid_t tids[INHERIT_ROUNDS][NR_KIDS];
	struct vperf_thread_start st;
	struct vperf_thread_list l = { 0 };
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
	/* the 2%, for each of the 8 threads in 2 of 3 rounds (one round in a few has an outlier) */
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
int start_tid(int f, pid_t tid, uint32_t flags)
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

void test_attach(void)
{
	static struct vperf_thread_row rows[8];
	int go[2], res[2], n, status, ret, ret2;
	uint64_t ns[2] = { 0, 0 };
	struct vperf_thread_list l = { 0 };
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

void test_stress(void)
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
void run_burners(struct burner *b, int n)
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
