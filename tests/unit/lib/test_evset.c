/* SPDX-License-Identifier: MIT */
/*
 * The public API on the real kernel (libperf tests/test-evsel.c style):
 * software events, whose true values are known (task-clock against the
 * thread's CLOCK_THREAD_CPUTIME_ID, context switches against sleeps), so
 * these run without a PMU.  Hardware-only tests skip with the reason.
 * Linked against the shared libvperf, so they also prove the exports.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vperf/vperf.h>

#include "vtest.h"
#include "burn.h"
#include "loop.h"

#define MS 1000000ull

static struct vperf_evset *new_self(const char *const *events, int n)
{
	struct vperf_evset *es = NULL;

	assert_int_equal(vperf_evset__new(NULL, &es), 0);
	assert_non_null(es);
	for (int i = 0; i < n; i++) {
		int idx = vperf_evset__add(es, events[i]);

		if (idx != i)
			fail_msg("add(\"%s\") = %d, expected index %d: %s", events[i], idx,
				 i, vperf_evset__strerror(es));
	}
	return es;
}

static void open_start(struct vperf_evset *es)
{
	int err = vperf_evset__open(es);

	if (err)
		fail_msg("open: %d: %s", err, vperf_evset__strerror(es));
	err = vperf_evset__start(es);
	if (err)
		fail_msg("start: %d: %s", err, vperf_evset__strerror(es));
}

static void assert_within(double got, double want, double frac, const char *what)
{
	double err = (got - want) / want;

	printf("%s: got %.3f, want %.3f (%+.2f%%, limit +-%.0f%%)\n", what, got, want,
	       err * 100, frac * 100);
	if (err > frac || err < -frac)
		fail_msg("%s: %.0f is not within %.0f%% of %.0f", what, got, frac * 100, want);
}

/*
 * A task-clock against the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, what vt_burn_ms()
 * burns by): task-clock also counts time stolen from this machine while the thread ran, the
 * thread's clock not (PARAVIRT_TIME_ACCOUNTING), so above it allow the share of the CPUs this
 * machine lost since st was marked (/proc/stat; tests/vm/README.md, "Steal on the machine").
 */
static void assert_cpu_within(double got, double want, double frac, const struct vt_steal *st,
			      const char *what)
{
	double stolen = vt_steal_share(st), err = (got - want) / want;
	double hi = frac + stolen / (1 - stolen);

	printf("%s: got %.0f, want %.0f (%+.2f%%); limit -%.0f%%..+%.1f%% (this machine lost %.1f%% "
	       "to steal meanwhile)\n", what, got, want, err * 100, frac * 100, hi * 100, stolen * 100);
	if (err < -frac || err > hi)
		fail_msg("%s: %.0f is not within -%.0f%%..+%.1f%% of %.0f", what, got, frac * 100,
			 hi * 100, want);
}

static void version_is_header_version(void **state)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", VPERF_VERSION_MAJOR, VPERF_VERSION_MINOR,
		 VPERF_VERSION_PATCH);
	assert_string_equal(vperf_version(), want);
}

static void evset_delete_null_is_safe(void **state)
{
	vperf_evset__delete(NULL);
}

static void evset_new_with_unknown_backend_fails_leaving_null(void **state)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .backend = "no-such-backend" };
	struct vperf_evset *es = (struct vperf_evset *)&o;	/* must be overwritten */
	int err = vperf_evset__new(&o, &es);

	assert_true(err < 0);
	assert_null(es);
}

/*
 * Structs carry their size: an older, smaller opts works; a newer, larger
 * one works if the part this library does not know is zero, and fails if
 * not (the library cannot honour what it cannot read); size 0 is an error.
 */
static void evset_opts_size_versioning(void **state)
{
	struct {
		struct vperf_evset_opts o;
		uint64_t newer_field;
	} big;
	struct vperf_evset_opts old = { .size = offsetof(struct vperf_evset_opts, flags) };
	struct vperf_evset_opts zero = { .size = 0 };
	struct vperf_evset *es = NULL;

	assert_int_equal(vperf_evset__new(&old, &es), 0);
	vperf_evset__delete(es);

	memset(&big, 0, sizeof(big));
	big.o.size = sizeof(big);
	es = NULL;
	assert_int_equal(vperf_evset__new(&big.o, &es), 0);
	vperf_evset__delete(es);
	big.newer_field = 1;
	es = (struct vperf_evset *)&big;
	assert_true(vperf_evset__new(&big.o, &es) < 0);
	assert_null(es);

	es = (struct vperf_evset *)&big;
	assert_int_equal(vperf_evset__new(&zero, &es), -EINVAL);
	assert_null(es);
}

static void evset_read_more_than_added_is_einval(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_self(ev, 1);
	struct vperf_count c[2];

	open_start(es);
	assert_int_equal(vperf_evset__read(es, c, 2), -EINVAL);
	assert_int_equal(vperf_evset__read(es, c, 1), 0);
	assert_int_equal(vperf_evset__read_one(es, -1, c), -EINVAL);
	vperf_evset__delete(es);
}

static void evset_task_clock_self_within_10pct_of_thread_cputime(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_self(ev, 1);
	struct vperf_count c;
	struct vt_steal st;
	uint64_t t0, t1;

	vt_steal_mark(&st);
	open_start(es);
	t0 = vt_thread_cpu_ns();
	vt_burn_ms(50);
	t1 = vt_thread_cpu_ns();
	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(vperf_evset__read(es, &c, 1), 0);
	assert_false(c.flags & VPERF_COUNT_NOT_COUNTED);
	assert_false(c.flags & VPERF_COUNT_SCALED);	/* software: never multiplexed */
	assert_int_equal(c.value, c.raw);
	assert_true(c.enabled > 0 && c.running == c.enabled);
	assert_cpu_within((double)c.value, (double)(t1 - t0), 0.10, &st, "task-clock ns");
	vperf_evset__delete(es);
}

static void evset_software_event_read_path_is_syscall(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_self(ev, 1);
	const char *name;

	assert_int_equal(vperf_evset__read_path(es, 0), -EINVAL);	/* not open */
	open_start(es);
	/* no PMU counter behind a software event: read(2) */
	assert_int_equal(vperf_evset__read_path(es, 0), VPERF_READ_SYSCALL);
	assert_int_equal(vperf_evset__read_path(es, 1), -EINVAL);	/* bad index */
	name = vperf_read_path_name(VPERF_READ_SYSCALL);
	assert_non_null(name);
	assert_true(name[0] != 0);
	assert_non_null(vperf_read_path_name(VPERF_READ_RDPMC));
	assert_non_null(vperf_read_path_name(VPERF_READ_PAGE));
	assert_string_not_equal(vperf_read_path_name(VPERF_READ_SYSCALL),
				vperf_read_path_name(VPERF_READ_RDPMC));
	assert_string_equal(vperf_backend_name(es), "perf");
	vperf_evset__delete(es);
}

static void evset_unknown_event_is_enoent_and_named(void **state)
{
	struct vperf_evset *es = new_self(NULL, 0);
	const char *msg;

	assert_int_equal(vperf_evset__add(es, "no-such-event-xyz"), -ENOENT);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "no-such-event-xyz"));
	assert_int_equal(vperf_evset__nr_events(es), 0);
	vperf_evset__delete(es);
}

static void evset_misspelt_event_suggests_close_name(void **state)
{
	struct vperf_evset *es = new_self(NULL, 0);
	const char *msg;

	assert_int_equal(vperf_evset__add(es, "task-clok"), -ENOENT);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "task-clok"));
	assert_true(vt_contains(msg, "task-clock"));
	vperf_evset__delete(es);
}

static void evset_bad_modifier_is_einval(void **state)
{
	struct vperf_evset *es = new_self(NULL, 0);
	const char *msg;

	assert_int_equal(vperf_evset__add(es, "task-clock:zz"), -EINVAL);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "task-clock"));
	assert_int_equal(vperf_evset__nr_events(es), 0);
	vperf_evset__delete(es);
}

/* Virtualization events need the pv backend: outside a vperf guest, say so. */
static void evset_virt_event_outside_guest_is_eopnotsupp(void **state)
{
	struct vperf_evset *es;
	const char *msg;

	if (access("/dev/vperf", F_OK) == 0)
		vt_skip("/dev/vperf exists: this is a vperf guest, the pv backend is usable");
	es = new_self(NULL, 0);
	assert_int_equal(vperf_evset__add(es, "vperf::exits:io"), -EOPNOTSUPP);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "vperf::exits:io"));
	assert_true(vt_contains(msg, "/dev/vperf"));
	assert_int_equal(vperf_evset__nr_events(es), 0);
	vperf_evset__delete(es);
}

static void evset_misspelt_virt_event_suggests_close_name(void **state)
{
	struct vperf_evset *es = new_self(NULL, 0);
	const char *msg;

	assert_int_equal(vperf_evset__add(es, "vperf::exit:io"), -ENOENT);
	msg = vperf_evset__strerror(es);
	printf("message: %s\n", msg);
	assert_true(vt_contains(msg, "vperf::exit:io"));
	assert_true(vt_contains(msg, "vperf::exits:io"));
	vperf_evset__delete(es);
}

static void evset_names_and_canonical_names(void **state)
{
	static const char *const ev[] = { "task-clock", "cs" };
	struct vperf_evset *es = new_self(ev, 2);

	assert_int_equal(vperf_evset__nr_events(es), 2);
	assert_string_equal(vperf_evset__event_name(es, 0), "task-clock");
	assert_string_equal(vperf_evset__event_name(es, 1), "cs");
	assert_null(vperf_evset__event_name(es, 2));
	assert_null(vperf_evset__event_name(es, -1));
	printf("canon: %s, %s\n", vperf_evset__event_canon(es, 0),
	       vperf_evset__event_canon(es, 1));
	assert_true(vt_contains(vperf_evset__event_canon(es, 0), "TASK_CLOCK"));
	assert_true(vt_contains(vperf_evset__event_canon(es, 1), "CONTEXT_SWITCHES"));
	assert_null(vperf_evset__event_canon(es, 2));
	vperf_evset__delete(es);
}

static void evset_add_after_open_is_ebusy(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_self(ev, 1);

	open_start(es);
	assert_int_equal(vperf_evset__add(es, "context-switches"), -EBUSY);
	assert_int_equal(vperf_evset__nr_events(es), 1);
	vperf_evset__delete(es);
}

static void evset_instructions_open_fails_saying_no_pmu(void **state)
{
	static const char *const ev[] = { "instructions" };
	struct vperf_evset *es;
	const char *msg;
	int err;

	if (vt_host_has_pmu())
		vt_skip("this host has a PMU (/sys/bus/event_source/devices/cpu): "
			"instructions opens here; see evset_instructions_u_counts_known_loop");
	es = new_self(ev, 1);	/* the name is known: adding works */
	err = vperf_evset__open(es);
	msg = vperf_evset__strerror(es);
	printf("open: %d, message: %s\n", err, msg);
	assert_true(err == -ENOENT || err == -EOPNOTSUPP);
	assert_true(vt_contains(msg, "no hardware PMU"));
	assert_true(vt_contains(msg, "instructions"));
	/* nothing stays open: reading fails, the set can be deleted */
	assert_int_equal(vperf_evset__read_path(es, 0), -EINVAL);
	vperf_evset__delete(es);
}

static void evset_instructions_u_counts_known_loop(void **state)
{
	static const char *const ev[] = { "instructions:u" };
	const unsigned long long n = 10000000;
	struct vperf_count c0, c1;
	struct vperf_evset *es;
	uint64_t got;

	if (!vt_host_has_pmu())
		vt_skip("no PMU on this host (/sys/bus/event_source/devices/cpu is absent)");
	es = new_self(ev, 1);
	open_start(es);
	assert_int_equal(vperf_evset__read(es, &c0, 1), 0);
	vt_loop(n);
	assert_int_equal(vperf_evset__read(es, &c1, 1), 0);
	got = c1.value - c0.value;
	printf("instructions:u over a %llu-instruction loop: %llu (read path %s)\n", 2 * n,
	       (unsigned long long)got,
	       vperf_read_path_name(vperf_evset__read_path(es, 0)));
	/* the loop, plus the few instructions of one read */
	assert_in_range(got, 2 * n, 2 * n + 20000);
	vperf_evset__delete(es);
}

static void evset_stop_freezes_count_and_reset_zeroes_it(void **state)
{
	static const char *const ev[] = { "task-clock" };
	struct vperf_evset *es = new_self(ev, 1);
	struct vperf_count a, b, z;

	open_start(es);
	vt_burn_ms(10);
	assert_int_equal(vperf_evset__stop(es), 0);
	assert_int_equal(vperf_evset__read_one(es, 0, &a), 0);
	assert_true(a.value >= 9 * MS);
	vt_burn_ms(10);
	assert_int_equal(vperf_evset__read_one(es, 0, &b), 0);
	assert_int_equal(a.value, b.value);
	assert_int_equal(vperf_evset__reset(es), 0);
	assert_int_equal(vperf_evset__read_one(es, 0, &z), 0);
	assert_int_equal(z.value, 0);
	/* and counting resumes */
	assert_int_equal(vperf_evset__start(es), 0);
	vt_burn_ms(10);
	assert_int_equal(vperf_evset__read_one(es, 0, &b), 0);
	assert_within((double)b.value, 10.0 * MS, 0.25, "task-clock after reset");
	vperf_evset__delete(es);
}

static void evset_read_all_matches_read_one_and_counts_sleeps(void **state)
{
	static const char *const ev[] = { "task-clock", "context-switches" };
	const struct timespec ms1 = { 0, 1000000 };
	struct vperf_evset *es = new_self(ev, 2);
	struct vperf_count all[2], one;

	open_start(es);
	for (int i = 0; i < 20; i++)
		nanosleep(&ms1, NULL);
	assert_int_equal(vperf_evset__stop(es), 0);
	assert_int_equal(vperf_evset__read(es, all, 2), 0);
	assert_int_equal(vperf_evset__read_one(es, 1, &one), 0);
	printf("context-switches over 20 sleeps: %llu\n", (unsigned long long)all[1].value);
	assert_int_equal(one.value, all[1].value);
	assert_in_range(all[1].value, 20, 20 + 10);
	assert_int_equal(vperf_evset__read_one(es, 2, &one), -EINVAL);
	vperf_evset__delete(es);
}

static void backends_perf_available_pv_explains_why_not(void **state)
{
	char why[256] = "";
	int n = vperf_backend_count(), have_pv = 0, have_perf = 0;

	assert_true(n >= 2);
	for (int i = 0; i < n; i++) {
		const char *name = vperf_backend_nth(i);

		assert_non_null(name);
		have_pv |= !strcmp(name, "pv");
		have_perf |= !strcmp(name, "perf");
	}
	assert_null(vperf_backend_nth(n));
	assert_true(have_pv && have_perf);
	assert_int_equal(vperf_backend_available("perf", why, sizeof(why)), 0);
	if (access("/dev/vperf", F_OK) == 0) {
		printf("/dev/vperf exists: pv is expected to be available\n");
		assert_int_equal(vperf_backend_available("pv", why, sizeof(why)), 0);
	} else {
		assert_true(vperf_backend_available("pv", why, sizeof(why)) < 0);
		printf("pv: %s\n", why);
		assert_true(why[0] != 0);
	}
	assert_true(vperf_backend_available("no-such-backend", NULL, 0) < 0);
}

/* A forked child that waits for a byte on a pipe, then runs fn. */
struct child {
	pid_t pid;
	int go;		/* write end: one byte starts the child */
	int back;	/* read end: what the child reports */
};

static void child_start(struct child *c, void (*fn)(int back_fd))
{
	int go[2], back[2];

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(back), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		char b;

		close(go[1]);
		close(back[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(3);
		fn(back[1]);
		_exit(0);
	}
	close(go[0]);
	close(back[1]);
	c->go = go[1];
	c->back = back[0];
}

static void child_go_and_wait(struct child *c)
{
	int status;

	assert_int_equal(write(c->go, "g", 1), 1);
	close(c->go);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void burn_100ms(int back_fd)
{
	vt_burn_ms(100);
}

static void evset_process_target_counts_child_within_10pct(void **state)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .target = VPERF_TARGET_PROCESS };
	struct vperf_evset *es = NULL;
	struct vperf_count c;
	struct vt_steal st;
	struct child ch;
	int err;

	vt_steal_mark(&st);
	child_start(&ch, burn_100ms);
	o.pid = ch.pid;
	assert_int_equal(vperf_evset__new(&o, &es), 0);
	assert_int_equal(vperf_evset__add(es, "task-clock"), 0);
	err = vperf_evset__open(es);
	if (err) {
		kill(ch.pid, SIGKILL);
		waitpid(ch.pid, NULL, 0);
		fail_msg("open on pid %d: %d: %s", (int)ch.pid, err, vperf_evset__strerror(es));
	}
	assert_int_equal(vperf_evset__start(es), 0);
	child_go_and_wait(&ch);
	assert_int_equal(vperf_evset__read(es, &c, 1), 0);
	assert_cpu_within((double)c.value, 100.0 * MS, 0.10, &st, "child task-clock ns");
	close(ch.back);
	vperf_evset__delete(es);
}

static void exec_burn_100ms(int back_fd)
{
	/* 50 ms before exec, not counted; 100 ms after exec, counted */
	vt_burn_ms(50);
	execl(VT_BURN_PATH, "burn", "100", (char *)NULL);
	_exit(127);
}

static void evset_enable_on_exec_counts_only_after_exec(void **state)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .target = VPERF_TARGET_PROCESS,
				      .flags = VPERF_EVSET_ENABLE_ON_EXEC };
	struct vperf_evset *es = NULL;
	struct vperf_count c;
	struct child ch;
	int err;

	child_start(&ch, exec_burn_100ms);
	o.pid = ch.pid;
	assert_int_equal(vperf_evset__new(&o, &es), 0);
	assert_int_equal(vperf_evset__add(es, "task-clock"), 0);
	err = vperf_evset__open(es);
	if (err) {
		kill(ch.pid, SIGKILL);
		waitpid(ch.pid, NULL, 0);
		fail_msg("open on pid %d: %d: %s", (int)ch.pid, err, vperf_evset__strerror(es));
	}
	/* no start: the exec starts counting */
	child_go_and_wait(&ch);
	assert_int_equal(vperf_evset__read(es, &c, 1), 0);
	assert_within((double)c.value, 100.0 * MS, 0.10, "task-clock from exec on, ns");
	close(ch.back);
	vperf_evset__delete(es);
}

struct burner {
	unsigned int ms;
	pid_t tid;
	uint64_t cpu_ns;	/* its own CLOCK_THREAD_CPUTIME_ID over the burn */
	uint64_t wall_ns;	/* CLOCK_MONOTONIC over the burn: it never blocks, so it ran at most this */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *burner(void *arg)
{
	struct burner *b = arg;
	uint64_t c0, w0;

	b->tid = gettid();
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w0 = clock_ns(CLOCK_MONOTONIC);
	vt_burn_ms(b->ms);
	b->wall_ns = clock_ns(CLOCK_MONOTONIC) - w0;
	b->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	return NULL;
}

/* Two threads, created after open, burn 90 and 30 ms; report what each measured of itself. */
static void split_90_30(int back_fd)
{
	struct burner b[2] = { { .ms = 90 }, { .ms = 30 } };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, burner, &b[i]))
			_exit(4);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (write(back_fd, b, sizeof(b)) != sizeof(b))
		_exit(5);
}

/*
 * A thread's task-clock against what the thread measured of itself: at least its CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and at most the wall time of its burn (it never blocks; task-clock also
 * counts time this machine's hypervisor stole while the thread ran, which its CPU time leaves out),
 * each within 2% for clock granularity and the counter's start and stop.
 */
static void assert_between_own_clocks(uint64_t got, const struct burner *b, const char *what)
{
	double lo = 0.98 * (double)b->cpu_ns, hi = 1.02 * (double)b->wall_ns;

	printf("%s: task-clock %.3f ms; the thread's own CPU time %.3f ms, wall %.3f ms\n", what,
	       (double)got / MS, (double)b->cpu_ns / MS, (double)b->wall_ns / MS);
	if ((double)got < lo || (double)got > hi)
		fail_msg("%s: task-clock %.3f ms is outside [%.3f, %.3f] ms (98%% of its CPU time, 102%% "
			 "of its wall time)", what, (double)got / MS, lo / MS, hi / MS);
}

static void evset_per_thread_counts_two_threads_3to1(void **state)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .target = VPERF_TARGET_PROCESS,
				      .flags = VPERF_EVSET_PER_THREAD };
	struct vperf_evset *es = NULL;
	struct vperf_count total, c;
	uint64_t a = 0, b = 0, sum = 0;
	struct burner self[2];
	struct child ch;
	int err, n;

	child_start(&ch, split_90_30);
	o.pid = ch.pid;
	assert_int_equal(vperf_evset__new(&o, &es), 0);
	assert_int_equal(vperf_evset__add(es, "task-clock"), 0);
	err = vperf_evset__open(es);
	if (err) {
		kill(ch.pid, SIGKILL);
		waitpid(ch.pid, NULL, 0);
		fail_msg("open on pid %d: %d: %s", (int)ch.pid, err, vperf_evset__strerror(es));
	}
	assert_int_equal(vperf_evset__start(es), 0);
	child_go_and_wait(&ch);
	assert_int_equal(read(ch.back, self, sizeof(self)), (ssize_t)sizeof(self));
	close(ch.back);
	assert_true(vperf_evset__poll_threads(es) >= 0);
	n = vperf_evset__nr_threads(es);
	printf("%d threads, %llu records lost\n", n,
	       (unsigned long long)vperf_evset__threads_lost(es));
	assert_true(n >= 3);	/* the main thread and the two workers */
	for (int i = 0; i < n; i++) {
		pid_t pid = 0, tid = 0;

		assert_int_equal(vperf_evset__read_thread(es, i, &pid, &tid, &c, 1), 0);
		printf("  pid %d tid %d task-clock %.3f ms\n", (int)pid, (int)tid,
		       (double)c.value / MS);
		assert_int_equal(pid, ch.pid);
		if (tid == self[0].tid)
			a = c.value;
		if (tid == self[1].tid)
			b = c.value;
		sum += c.value;
	}
	assert_int_equal(vperf_evset__threads_lost(es), 0);
	assert_true(a && b);
	/* the 3:1 split, each side held to what its thread measured of itself */
	assert_between_own_clocks(a, &self[0], "thread a (90 ms)");
	assert_between_own_clocks(b, &self[1], "thread b (30 ms)");
	/* the process total is the sum over its threads */
	assert_int_equal(vperf_evset__read(es, &total, 1), 0);
	assert_within((double)total.value, (double)sum, 0.02, "process total vs sum of threads");
	vperf_evset__delete(es);
}

static void on_sample(const struct vperf_sample *s, void *arg)
{
}

static void evset_sample_rejects_bad_arguments(void **state)
{
	static const char *const ev[] = { "cpu-clock" };
	struct vperf_sample_opts so = { .size = sizeof(so), .period = MS, .fn = on_sample,
					.max_frames = 8 };
	struct vperf_sample_opts bad;
	struct vperf_evset_opts po = { .size = sizeof(po), .target = VPERF_TARGET_PROCESS,
				       .pid = getpid() };
	struct vperf_evset *es = new_self(ev, 1), *pes = NULL;

	assert_int_equal(vperf_evset__sample(es, 0, NULL), -EINVAL);
	assert_int_equal(vperf_evset__sample(es, 1, &so), -EINVAL);	/* no event 1 */
	assert_int_equal(vperf_evset__sample(es, -1, &so), -EINVAL);
	bad = so;
	bad.max_frames = VPERF_MAX_CALLCHAIN + 1;
	assert_int_equal(vperf_evset__sample(es, 0, &bad), -EINVAL);
	bad = so;
	bad.fn = NULL;
	assert_int_equal(vperf_evset__sample(es, 0, &bad), -EINVAL);
	bad = so;
	bad.period = 0;
	bad.freq = 0;
	assert_int_equal(vperf_evset__sample(es, 0, &bad), -EINVAL);
	/* the good one, then too late once open */
	assert_int_equal(vperf_evset__sample(es, 0, &so), 0);
	open_start(es);
	assert_int_equal(vperf_evset__stop(es), 0);
	assert_int_equal(vperf_evset__sample(es, 0, &so), -EBUSY);
	vperf_evset__delete(es);

	/* only a VPERF_TARGET_SELF set samples */
	assert_int_equal(vperf_evset__new(&po, &pes), 0);
	assert_int_equal(vperf_evset__add(pes, "cpu-clock"), 0);
	assert_true(vperf_evset__sample(pes, 0, &so) < 0);
	vperf_evset__delete(pes);
}

struct walk {
	int calls;
	int task_clock_usable;
	int hw_seen, hw_unusable_says_pmu;
	int virt_seen, virt_unusable_with_why;
	char task_clock_name[128];
	int stop_after;
};

static int walk_fn(const struct vperf_event_info *ev, void *arg)
{
	struct walk *w = arg;

	w->calls++;
	if (w->stop_after && w->calls == w->stop_after)
		return 42;
	if (!ev->name)
		return -1000;
	if (ev->kind == VPERF_EVENT_SOFTWARE &&
	    (!strcasecmp(ev->name, "task-clock") || vt_contains(ev->name, "TASK_CLOCK") ||
	     vt_contains(ev->name, "TASK-CLOCK"))) {
		w->task_clock_usable = ev->usable;
		snprintf(w->task_clock_name, sizeof(w->task_clock_name), "%s", ev->name);
	}
	if (ev->kind == VPERF_EVENT_HARDWARE) {
		w->hw_seen++;
		if (!ev->usable && vt_contains(ev->why, "PMU"))
			w->hw_unusable_says_pmu++;
	}
	if (ev->kind == VPERF_EVENT_VIRT)
		w->virt_seen++;
	return 0;
}

static void events_for_each_lists_task_clock_usable(void **state)
{
	struct walk w = { 0 };
	struct vperf_evset *es;

	assert_int_equal(vperf_events__for_each(walk_fn, &w, 1), 0);
	printf("%d events, %d hardware (%d unusable for want of a PMU), %d virtualization; "
	       "task-clock as \"%s\"\n", w.calls, w.hw_seen, w.hw_unusable_says_pmu,
	       w.virt_seen, w.task_clock_name);
	assert_true(w.task_clock_name[0] != 0);
	assert_true(w.task_clock_usable);
	if (!vt_host_has_pmu())
		assert_true(w.hw_unusable_says_pmu == w.hw_seen);
	/* a listed name is one vperf_evset__add() accepts */
	es = new_self(NULL, 0);
	assert_int_equal(vperf_evset__add(es, w.task_clock_name), 0);
	vperf_evset__delete(es);
}

/*
 * vperf.h: the walk covers "the virtualization events of the pv backend";
 * they are listed everywhere, usable only in a vperf guest, and say why not.
 */
static int virt_fn(const struct vperf_event_info *ev, void *arg)
{
	struct walk *w = arg;

	if (ev->kind != VPERF_EVENT_VIRT)
		return 0;
	w->virt_seen++;
	if (!ev->usable && ev->why && ev->why[0])
		w->virt_unusable_with_why++;
	if (w->virt_seen == 1)
		printf("first virtualization event: %s (%s): usable %d, why: %s\n", ev->name,
		       ev->pmu ? ev->pmu : "?", ev->usable, ev->why ? ev->why : "(null)");
	return 0;
}

static void events_for_each_lists_virtualization_events(void **state)
{
	struct walk w = { 0 };
	int in_guest = access("/dev/vperf", F_OK) == 0;

	assert_int_equal(vperf_events__for_each(virt_fn, &w, 1), 0);
	printf("%d virtualization events, %d unusable with a reason (/dev/vperf %s)\n",
	       w.virt_seen, w.virt_unusable_with_why, in_guest ? "present" : "absent");
	assert_true(w.virt_seen > 0);
	if (!in_guest)
		assert_int_equal(w.virt_unusable_with_why, w.virt_seen);
}

static void events_for_each_stops_on_nonzero(void **state)
{
	struct walk w = { .stop_after = 3 };

	assert_int_equal(vperf_events__for_each(walk_fn, &w, 0), 42);
	assert_int_equal(w.calls, 3);
}

int main(int argc, char **argv)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(version_is_header_version),
		cmocka_unit_test(evset_delete_null_is_safe),
		cmocka_unit_test(evset_new_with_unknown_backend_fails_leaving_null),
		cmocka_unit_test(evset_opts_size_versioning),
		cmocka_unit_test(evset_read_more_than_added_is_einval),
		cmocka_unit_test(evset_task_clock_self_within_10pct_of_thread_cputime),
		cmocka_unit_test(evset_software_event_read_path_is_syscall),
		cmocka_unit_test(evset_unknown_event_is_enoent_and_named),
		cmocka_unit_test(evset_misspelt_event_suggests_close_name),
		cmocka_unit_test(evset_bad_modifier_is_einval),
		cmocka_unit_test(evset_virt_event_outside_guest_is_eopnotsupp),
		cmocka_unit_test(evset_misspelt_virt_event_suggests_close_name),
		cmocka_unit_test(evset_names_and_canonical_names),
		cmocka_unit_test(evset_add_after_open_is_ebusy),
		cmocka_unit_test(evset_instructions_open_fails_saying_no_pmu),
		cmocka_unit_test(evset_instructions_u_counts_known_loop),
		cmocka_unit_test(evset_stop_freezes_count_and_reset_zeroes_it),
		cmocka_unit_test(evset_read_all_matches_read_one_and_counts_sleeps),
		cmocka_unit_test(backends_perf_available_pv_explains_why_not),
		cmocka_unit_test(evset_process_target_counts_child_within_10pct),
		cmocka_unit_test(evset_enable_on_exec_counts_only_after_exec),
		cmocka_unit_test(evset_per_thread_counts_two_threads_3to1),
		cmocka_unit_test(evset_sample_rejects_bad_arguments),
		cmocka_unit_test(events_for_each_lists_task_clock_usable),
		cmocka_unit_test(events_for_each_lists_virtualization_events),
		cmocka_unit_test(events_for_each_stops_on_nonzero),
	};

	return VT_MAIN("evset", tests, NULL, NULL);
}
