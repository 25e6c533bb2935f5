// SPDX-License-Identifier: MIT
/* vperf-kmod-thread's cases: events and exits: hostcs, mux, doorbell, exits, events. */
#include "kmod-thread.h"

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

void test_hostcs(void)
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

void test_mux(void)
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
uint64_t doorbell_fresh(const volatile struct vperf_thread_page *pg, const volatile uint64_t *db,
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

void test_doorbell(void)
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

void test_exits(void)
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

void ev_set(struct vperf_thread_event *ev, uint32_t source, uint64_t arg, const char *name)
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
int start_events(const struct vperf_thread_event *ev, uint32_t n, int *bad,
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
uint64_t vcpu_total(int cpu, unsigned int slot)
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

void test_events(void)
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
