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
 *            INHERIT_GOAL (2%, the figure) of its CPU time, read at
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
 *
 * Here: what every case uses (the checks, the clocks, the page, the
 * burners' threads) and main(), which runs a mode from the modes[] table.
 * The cases are in thread/ (a file per theme), kmod-thread.h there what they share.
 */
#include "thread/kmod-thread.h"

int fd;
int fails;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

void check(int ok, const char *mode, const char *what)
{
	pthread_mutex_lock(&out_lock);
	printf("kmod-thread: %s %s %s\n", mode, ok ? "ok" : "FAIL", what);
	if (!ok)
		fails++;
	pthread_mutex_unlock(&out_lock);
}

uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t thread_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* User-mode read with the seq protocol. */
void page_read(const struct vperf_thread_page *p, struct vperf_thread_page *out)
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
void quiesce(void)
{
	fflush(stdout);
	tcdrain(STDOUT_FILENO);	/* not a terminal: nothing to wait for */
	usleep(20000);
}

void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

void unpin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* START and map: the page, or NULL after a FAIL line. */
const struct vperf_thread_page *start(const char *mode)
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

void report_hc(const struct vperf_thread_page *pg, int stopped)
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

uint64_t tick_ns = 20000000;

/* Burn `ms` of this thread's CPU time; on_tick runs every tick_ns of it. */
void burn(uint64_t ms, void (*on_tick)(unsigned int n))
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

long module_param_value(const char *name)
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

void *burner_run(void *arg)
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

void migrate_tick(unsigned int n)
{
	pin(n & 1);
}

int threads_param(void)
{
	return (int)module_param_value("threads");
}

/* THREAD_LIST into a buffer of cap rows; the number of rows written, -1 on error. */
int list_rows(int f, struct vperf_thread_row *rows, unsigned int cap, struct vperf_thread_list *out)
{
	struct vperf_thread_list l = { 0 };

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

const struct vperf_thread_row *find_row(const struct vperf_thread_row *rows, int n, pid_t tid)
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
int row_within_ratio_err(const struct vperf_thread_row *r, uint64_t cpu_ns, double ratio,
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

int row_within_ratio(const struct vperf_thread_row *r, uint64_t cpu_ns, double ratio,
			    char *what, size_t len)
{
	return row_within_ratio_err(r, cpu_ns, ratio, what, len, NULL);
}

int row_within(const struct vperf_thread_row *r, uint64_t cpu_ns, char *what, size_t len)
{
	return row_within_ratio(r, cpu_ns, 0, what, len);
}

/* host ns per guest ns over all the rows' slices: many short slices' jitter averages out */
double rows_ratio(const struct vperf_thread_row *rows, int n)
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
void report_rows_hc(const struct vperf_thread_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		printf("kmod-thread: hc switches %llu budget %llu\n",
		       (unsigned long long)rows[i].switches,
		       (unsigned long long)(2 * rows[i].switches + 2));
}

/* ---- the cases ---- */

static void test_single(int argc, char **argv)
{
	struct burner b = { .mode = "single", .cpu = 0, .ms = 300, .stop = 1 };

	(void)argc;
	(void)argv;
	run_burners(&b, 1);
}

static void test_migrate(int argc, char **argv)
{
	struct burner b = { .mode = "migrate", .cpu = 0, .ms = 300, .on_tick = migrate_tick, .stop = 1 };

	if (argc > 2)
		tick_ns = strtoull(argv[2], NULL, 0) * 1000000;
	run_burners(&b, 1);
	unpin();
}

static void test_split(int argc, char **argv)
{
	struct burner b[2] = {
		{ .mode = "split", .cpu = 0, .ms = 300 },
		{ .mode = "split", .cpu = 1, .ms = 100 },
	};

	(void)argc;
	(void)argv;
	run_burners(b, 2);
	/* a joined thread may not have reached its exit probe yet: clear_child_tid comes first */
	for (int i = 0; i < 100 && threads_param() != 0; i++)
		usleep(10000);
	check(threads_param() == 0, "split", "exited threads' contexts freed while the file is open (threads = 0)");
}

static void test_sleep(int argc, char **argv)
{
	const struct vperf_thread_page *pg = start("sleep");
	struct vperf_thread_page v;
	uint64_t w0, w1, t0, t1;
	char what[200];
	int i;

	(void)argc;
	(void)argv;
	if (!pg)
		return;
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
}

/* Helpers for kmod-test/run.sh, not cases: their exit status is their own. */
static int mode_churn(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: vperf-kmod-thread churn MS READY-FILE\n");
		return 2;
	}
	test_churn((unsigned int)strtoul(argv[2], NULL, 0), argv[3]);
	return fails ? 1 : 0;	/* quiet when fine: 100 cycles */
}

static int mode_hold(int argc, char **argv)
{
	const struct vperf_thread_page *pg = start("hold");

	if (!pg)
		return 1;
	printf("kmod-thread: hold started, threads = %d\n", threads_param());
	sleep(argc > 2 ? atoi(argv[2]) : 2);
	report_hc(pg, 0);
	return 0;	/* exits with the context, the mapping and the file */
}

/*
 * One row per mode: a case (its checks print "kmod-thread: MODE ok|FAIL ...",
 * then "MODE PASSED|FAILED") or a helper with an exit status of its own.
 */
static const struct kmod_mode {
	const char *name, *args;
	void (*test)(void);
	void (*test_args)(int argc, char **argv);
	int (*helper)(int argc, char **argv);
} modes[] = {
	{ .name = "api", .args = "", .test = test_api },
	{ .name = "single", .args = "", .test_args = test_single },
	{ .name = "migrate", .args = " [MS]", .test_args = test_migrate },
	{ .name = "split", .args = "", .test_args = test_split },
	{ .name = "sleep", .args = "", .test_args = test_sleep },
	{ .name = "read", .args = "", .test = test_read },
	{ .name = "inherit", .args = "", .test = test_inherit },
	{ .name = "attach", .args = "", .test = test_attach },
	{ .name = "doorbell", .args = "", .test = test_doorbell },
	{ .name = "exits", .args = "", .test = test_exits },
	{ .name = "events", .args = "", .test = test_events },
	{ .name = "guest", .args = "", .test = test_guest },
	{ .name = "steal-guest", .args = "", .test = test_steal_guest },
	{ .name = "hostcs", .args = "", .test = test_hostcs },
	{ .name = "mux", .args = "", .test = test_mux },
	{ .name = "stress", .args = "", .test = test_stress },
	{ .name = "conserve", .args = "", .test = test_conserve },
	{ .name = "sample", .args = "", .test = test_sample },
	{ .name = "steal", .args = "", .test = test_steal },
	{ .name = "private", .args = "", .test = test_private },
	{ .name = "plm", .args = "", .test = test_plm },
	{ .name = "memory", .args = "", .test = test_memory },
	{ .name = "evquota", .args = "", .test = test_evquota },
	{ .name = "forkrace", .args = "", .test = test_forkrace },
	{ .name = "churn", .args = " MS READY-FILE", .helper = mode_churn },
	{ .name = "hold", .args = " [S]", .helper = mode_hold },
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "single";
	const struct kmod_mode *m = NULL;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(mode, modes[i].name))
			m = &modes[i];
	if (!m) {
		fprintf(stderr, "usage: vperf-kmod-thread MODE, one of:");
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			fprintf(stderr, " %s%s%s", i ? "| " : "", modes[i].name, modes[i].args);
		fprintf(stderr, "\n");
		return 2;
	}
	fd = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
	if (fd < 0) {
		printf("kmod-thread: FAIL open /dev/%s: %s\n", VPERF_DEV_NAME, strerror(errno));
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (m->helper)
		return m->helper(argc, argv);
	if (m->test)
		m->test();
	else
		m->test_args(argc, argv);
	printf("kmod-thread: %s %s\n", mode, fails ? "FAILED" : "PASSED");
	return fails ? 1 : 0;
}
