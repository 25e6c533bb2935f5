// SPDX-License-Identifier: MIT
/*
 * The host kernel's events: captured by vperf-vmm's tracefs.c on this machine and decoded by
 * profiler/record/hostevents.c (libtraceevent), on a stored sample with known answers, on pages
 * built here (kvm events of two kernels' formats, losses, two CPUs), and on damaged input that
 * must give errors, never a crash or a hang.
 *
 * The capture tests need root and tracefs; without them they skip and say why.  A small
 * in-memory recorder__chunk() stands in for vperf-vmm's record.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>

#include <vperf/rawrec.h>

#include "hostevents.h"
#include "record.h"
#include "tracefs.h"
#include "vtest.h"

#ifndef VT_HOSTEVENTS_DATA
#error "VT_HOSTEVENTS_DATA: the folder of the stored sample"
#endif

/* ---- an in-memory recorder ---- */

struct chunk {
	uint32_t type, cpu, flags, size;
	uint8_t *data;
};

struct recorder {
	struct chunk *c;
	size_t n, cap;
	int fail_after;			/* >= 0: chunks after this many fail with -ENOSPC */
};

int recorder__chunk(struct recorder *rec, uint32_t type, uint32_t cpu, uint32_t flags,
		    const void *payload, uint32_t size)
{
	struct chunk *c;

	if (!rec)
		return 0;
	if (rec->fail_after >= 0 && rec->n >= (size_t)rec->fail_after)
		return -ENOSPC;
	if (rec->n == rec->cap) {
		size_t cap = rec->cap ? rec->cap * 2 : 64;

		c = realloc(rec->c, cap * sizeof(*c));
		assert_non_null(c);
		rec->c = c;
		rec->cap = cap;
	}
	c = &rec->c[rec->n++];
	*c = (struct chunk){ .type = type, .cpu = cpu, .flags = flags, .size = size };
	c->data = malloc(size + 1);
	assert_non_null(c->data);
	memcpy(c->data, payload, size);
	c->data[size] = '\0';
	return 0;
}

/* recorder__chunk() as the sink tracefs.c writes into. */
static int sink_chunk(void *arg, uint32_t type, uint32_t cpu, const void *data, uint32_t size)
{
	return recorder__chunk(arg, type, cpu, 0, data, size);
}
#define SINK(rec)	((struct hosttrace_sink){ sink_chunk, (rec) })

static void rec_init(struct recorder *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->fail_after = -1;
}

static void rec_free(struct recorder *rec)
{
	for (size_t i = 0; i < rec->n; i++)
		free(rec->c[i].data);
	free(rec->c);
	memset(rec, 0, sizeof(*rec));
}

static size_t rec_count(const struct recorder *rec, uint32_t type)
{
	size_t n = 0;

	for (size_t i = 0; i < rec->n; i++)
		n += rec->c[i].type == type;
	return n;
}

/* The concatenated META chunks. */
static const char *rec_meta(const struct recorder *rec, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < rec->n; i++)
		if (rec->c[i].type == VPERF_RAWREC_META)
			n += (size_t)snprintf(buf + n, len - n, "%s", (char *)rec->c[i].data);
	return buf;
}

/* Feed the TRACEFS_* chunks to a reader; the first error. */
static int feed(struct vperf_hostev_reader *r, const struct chunk *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int err = 0;

		switch (c[i].type) {
		case VPERF_RAWREC_TRACEFS_HEADER:
			err = vperf_hostev_reader__add_header(r, (const char *)c[i].data, c[i].size);
			break;
		case VPERF_RAWREC_TRACEFS_FORMAT:
			err = vperf_hostev_reader__add_format_chunk(r, c[i].data, c[i].size);
			break;
		case VPERF_RAWREC_TRACEFS_PAGES:
			err = vperf_hostev_reader__add_pages(r, c[i].cpu, c[i].data, c[i].size);
			break;
		case VPERF_RAWREC_TRACEFS_STATS:
			err = vperf_hostev_reader__add_stats(r, c[i].cpu, (const char *)c[i].data,
							     c[i].size);
			break;
		}
		if (err)
			return err;
	}
	return 0;
}

/* ---- what a pass saw ---- */

#define MAX_CPUS	1024

struct seen {
	pid_t tid;
	uint64_t tsc_min, tsc_max;	/* bounds every event must be in (0: none) */
	size_t events, by_type[VPERF_HOSTEV_NR_TYPES];
	size_t switch_out, switch_out_sleeping, switch_in, wakeups;
	uint64_t last_tsc[MAX_CPUS], last_any;
	size_t backwards, out_of_bounds, out_of_order;
	struct vperf_hostev first, first_switch_out, first_wakeup, last;
	uint64_t lost;
};

static int see(const struct vperf_hostev *ev, void *ctx)
{
	struct seen *s = ctx;

	if (!s->events)
		s->first = *ev;
	s->last = *ev;
	s->events++;
	s->by_type[ev->type]++;
	if (ev->cpu < MAX_CPUS) {
		s->backwards += ev->tsc < s->last_tsc[ev->cpu];
		s->last_tsc[ev->cpu] = ev->tsc;
	}
	s->out_of_order += ev->tsc < s->last_any;
	s->last_any = ev->tsc;
	if (s->tsc_min && (ev->tsc < s->tsc_min || ev->tsc > s->tsc_max))
		s->out_of_bounds++;
	if (ev->type == VPERF_HOSTEV_SCHED_SWITCH && ev->sched_switch.prev_pid == s->tid) {
		if (!s->switch_out)
			s->first_switch_out = *ev;
		s->switch_out++;
		s->switch_out_sleeping += ev->sched_switch.prev_state == 1;	/* TASK_INTERRUPTIBLE */
	}
	if (ev->type == VPERF_HOSTEV_SCHED_SWITCH && ev->sched_switch.next_pid == s->tid)
		s->switch_in++;
	if (ev->type == VPERF_HOSTEV_SCHED_WAKEUP && ev->sched_wakeup.pid == s->tid) {
		if (!s->wakeups)
			s->first_wakeup = *ev;
		s->wakeups++;
	}
	if (ev->type == VPERF_HOSTEV_LOST)
		s->lost += ev->lost.count;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- capture on this machine ---- */

struct sleeper {
	pthread_t th;
	atomic_int tid, go, done;
	int sleeps;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ms = { 0, 1000000 };

	pthread_setname_np(pthread_self(), "vt-sleeper");
	atomic_store(&s->tid, gettid());
	while (!atomic_load(&s->go))
		sched_yield();
	for (int i = 0; i < s->sleeps; i++)
		nanosleep(&ms, NULL);
	atomic_store(&s->done, 1);
	return NULL;
}

static void sleeper_start(struct sleeper *s, int sleeps)
{
	memset(s, 0, sizeof(*s));
	s->sleeps = sleeps;
	assert_int_equal(pthread_create(&s->th, NULL, sleeper_main, s), 0);
	while (!atomic_load(&s->tid))
		sched_yield();
}

/* Skip unless this process can trace: root and a tracefs mount. */
static void need_tracefs(void)
{
	if (geteuid() != 0)
		vt_skip("host kernel events need root (this test runs as uid %d)", (int)geteuid());
	if (access("/sys/kernel/tracing/instances", W_OK) &&
	    access("/sys/kernel/debug/tracing/instances", W_OK))
		vt_skip("no tracefs mounted (mount -t tracefs nodev /sys/kernel/tracing)");
}

static bool instance_exists(pid_t pid)
{
	char a[128], b[128];

	snprintf(a, sizeof(a), "/sys/kernel/tracing/instances/vperf-%d", (int)pid);
	snprintf(b, sizeof(b), "/sys/kernel/debug/tracing/instances/vperf-%d", (int)pid);
	return !access(a, F_OK) || !access(b, F_OK);
}

static void hostevents_sched_switch_counts_a_sleeping_thread(void **state)
{
	enum { SLEEPS = 50 };
	struct timespec period = { 0, RECORD_PERIOD_MS * 1000000L };
	struct vperf_hostev_reader *r;
	struct recorder rec;
	struct sleeper sl;
	struct hosttrace *ht;
	struct seen *s;
	char why[512], meta[4096];
	bool missing;
	uint64_t t0, t1, pages_bytes = 0;
	size_t polls = 0;
	pid_t tid;
	double d0, d1;
	int err;

	(void)state;
	need_tracefs();
	s = calloc(1, sizeof(*s));
	assert_non_null(s);
	rec_init(&rec);
	sleeper_start(&sl, SLEEPS);
	tid = atomic_load(&sl.tid);

	t0 = recorder__tsc();
	err = hosttrace__start(&ht, &tid, 1, 1024, SINK(&rec), why, sizeof(why), &missing);
	if (err == -EACCES || err == -EPERM || err == -ENOENT || err == -ENOTSUP) {
		atomic_store(&sl.go, 1);
		pthread_join(sl.th, NULL);
		rec_free(&rec);
		free(s);
		vt_skip("%s", why);
	}
	assert_int_equal(err, 0);
	if (missing)
		printf("# some events are missing here: %s\n", why);
	assert_true(instance_exists(getpid()));
	atomic_store(&sl.go, 1);
	while (!atomic_load(&sl.done)) {
		nanosleep(&period, NULL);
		assert_int_equal(hosttrace__poll(ht), 0);
		polls++;
	}
	pthread_join(sl.th, NULL);
	assert_int_equal(hosttrace__stop(ht), 0);
	assert_int_equal(hosttrace__stop(ht), 0);	/* a second stop does nothing */
	hosttrace__delete(ht);
	t1 = recorder__tsc();
	assert_false(instance_exists(getpid()));

	rec_meta(&rec, meta, sizeof(meta));
	assert_true(vt_contains(meta, "host_trace_clock=x86-tsc\n"));
	assert_int_equal(rec_count(&rec, VPERF_RAWREC_TRACEFS_HEADER), 1);
	assert_true(rec_count(&rec, VPERF_RAWREC_TRACEFS_FORMAT) >= 2);
	assert_true(rec_count(&rec, VPERF_RAWREC_TRACEFS_STATS) >= 1);
	for (size_t i = 0; i < rec.n; i++)
		if (rec.c[i].type == VPERF_RAWREC_TRACEFS_PAGES)
			pages_bytes += rec.c[i].size;

	assert_int_equal(vperf_hostev_reader__new(&r), 0);
	err = feed(r, rec.c, rec.n);
	if (err)
		fail_msg("feed: %s", vperf_hostev_reader__strerror(r));
	s->tid = tid;
	s->tsc_min = t0;
	s->tsc_max = t1;
	d0 = now_s();
	err = vperf_hostev_reader__read(r, see, s);
	d1 = now_s();
	if (err)
		fail_msg("read: %s", vperf_hostev_reader__strerror(r));
	printf("# %zu polls, %llu bytes of pages, %zu events (%zu switches out of the sleeper, "
	       "%zu of them sleeping, %zu in, %zu wakeups), lost %llu, decoded in %.3f ms "
	       "(%.0f ns/event)\n", polls, (unsigned long long)pages_bytes, s->events, s->switch_out,
	       s->switch_out_sleeping, s->switch_in, s->wakeups,
	       (unsigned long long)vperf_hostev_reader__lost(r), (d1 - d0) * 1e3,
	       s->events ? (d1 - d0) * 1e9 / (double)s->events : 0.0);
	assert_true(s->switch_out >= SLEEPS);
	assert_true(s->switch_out_sleeping >= SLEEPS);
	assert_true(s->wakeups >= SLEEPS);
	assert_int_equal(s->backwards, 0);
	assert_int_equal(s->out_of_order, 0);
	assert_int_equal(s->out_of_bounds, 0);
	assert_string_equal(s->first_switch_out.sched_switch.prev_comm, "vt-sleeper");
	assert_int_equal(s->first_switch_out.pid, tid);		/* it switches itself out */
	assert_int_equal(vperf_hostev_reader__lost(r), 0);
	vperf_hostev_reader__delete(r);
	rec_free(&rec);
	free(s);
}

/* Two threads passing a byte back and forth through pipes: many switches, fast. */
struct pingpong {
	pthread_t th[2];
	int a[2], b[2];
	atomic_int tid[2], stop;
};

static void *pingpong_main(void *arg)
{
	struct pingpong *pp = arg;
	int k = atomic_load(&pp->tid[0]) ? 1 : 0;
	char c = 0;

	atomic_store(&pp->tid[k], gettid());
	while (!atomic_load(&pp->stop)) {
		if (k == 0 && (write(pp->a[1], &c, 1) != 1 || read(pp->b[0], &c, 1) != 1))
			break;
		if (k == 1 && (read(pp->a[0], &c, 1) != 1 || write(pp->b[1], &c, 1) != 1))
			break;
	}
	return NULL;
}

/*
 * A buffer far too small for the load and nobody reading it: the kernel overwrites pages, the
 * pages read afterwards say how many events went (the kernel's own page format, sign-extended
 * flags and all), and the stats' overrun says the same number.
 */
static void hosttrace_overrun_is_counted_in_pages_and_stats_alike(void **state)
{
	struct pingpong *pp;
	struct timespec run = { 0, 100000000 };
	struct vperf_hostev_reader *r;
	struct recorder rec;
	struct hosttrace *ht;
	struct seen *s;
	uint64_t in_pages = 0, overrun = 0, uncounted = 0;
	char why[512];
	bool missing;
	pid_t tids[2];

	(void)state;
	need_tracefs();
	pp = calloc(1, sizeof(*pp));
	s = calloc(1, sizeof(*s));
	assert_non_null(pp);
	assert_non_null(s);
	assert_int_equal(pipe(pp->a), 0);
	assert_int_equal(pipe(pp->b), 0);
	assert_int_equal(pthread_create(&pp->th[0], NULL, pingpong_main, pp), 0);
	while (!atomic_load(&pp->tid[0]))
		sched_yield();
	assert_int_equal(pthread_create(&pp->th[1], NULL, pingpong_main, pp), 0);
	while (!atomic_load(&pp->tid[1]))
		sched_yield();
	tids[0] = atomic_load(&pp->tid[0]);
	tids[1] = atomic_load(&pp->tid[1]);
	rec_init(&rec);
	assert_int_equal(hosttrace__start(&ht, tids, 2, 16, SINK(&rec), why, sizeof(why), &missing), 0);
	nanosleep(&run, NULL);
	assert_int_equal(hosttrace__stop(ht), 0);
	hosttrace__delete(ht);
	atomic_store(&pp->stop, 1);
	close(pp->a[1]);
	close(pp->b[1]);
	pthread_join(pp->th[0], NULL);
	pthread_join(pp->th[1], NULL);
	close(pp->a[0]);
	close(pp->b[0]);

	assert_int_equal(vperf_hostev_reader__new(&r), 0);
	if (feed(r, rec.c, rec.n))
		fail_msg("feed: %s", vperf_hostev_reader__strerror(r));
	vperf_hostev_reader__report_lost(r, true);
	if (vperf_hostev_reader__read(r, see, s))
		fail_msg("read: %s", vperf_hostev_reader__strerror(r));
	for (unsigned int i = 0; i < vperf_hostev_reader__nr_cpus(r); i++) {
		struct vperf_hostev_cpu_stats st = { .size = sizeof(st) };

		assert_int_equal(vperf_hostev_reader__cpu_stats(r, i, &st), 0);
		assert_true(st.has_stats);
		in_pages += st.lost_in_pages;
		overrun += st.overrun;
		uncounted += st.lost_pages_uncounted;
	}
	printf("# 16 KiB per CPU, 100 ms of ping-pong: %zu events kept, %llu lost by the pages, "
	       "%llu overrun in the stats, %llu handed out as LOST\n", s->events,
	       (unsigned long long)in_pages, (unsigned long long)overrun,
	       (unsigned long long)s->lost);
	assert_true(overrun > 0);
	/* a page too full to hold the count says "some lost" only: then the stats know more */
	if (uncounted)
		assert_true(in_pages < overrun);
	else
		assert_int_equal(in_pages, overrun);
	assert_int_equal(s->lost, in_pages);
	assert_int_equal(vperf_hostev_reader__lost(r), overrun);
	assert_int_equal(s->backwards, 0);
	vperf_hostev_reader__delete(r);
	rec_free(&rec);
	free(pp);
	free(s);
}

/* A stale instance of a dead vperf-vmm goes; ours goes at the stop, and at a delete without one. */
static void hosttrace_removes_a_stale_instance_and_its_own(void **state)
{
	struct recorder rec;
	struct hosttrace *ht;
	char why[512], meta[4096], stale[160], want[64];
	const char *root = "/sys/kernel/tracing";
	bool missing;
	pid_t dead, me = getpid();
	int status;

	(void)state;
	need_tracefs();
	if (access("/sys/kernel/tracing/instances", W_OK))
		root = "/sys/kernel/debug/tracing";
	fflush(stdout);
	dead = fork();
	assert_true(dead >= 0);
	if (!dead)
		_exit(0);
	assert_int_equal(waitpid(dead, &status, 0), dead);
	snprintf(stale, sizeof(stale), "%s/instances/vperf-%d", root, (int)dead);
	assert_int_equal(mkdir(stale, 0700), 0);

	rec_init(&rec);
	assert_int_equal(hosttrace__start(&ht, &me, 1, 64, SINK(&rec), why, sizeof(why), &missing), 0);
	assert_int_not_equal(access(stale, F_OK), 0);
	snprintf(want, sizeof(want), "host_trace_stale_removed=vperf-%d\n", (int)dead);
	assert_true(vt_contains(rec_meta(&rec, meta, sizeof(meta)), want));
	assert_true(instance_exists(me));
	hosttrace__delete(ht);				/* no stop: the instance goes all the same */
	assert_false(instance_exists(me));
	assert_int_equal(rec_count(&rec, VPERF_RAWREC_TRACEFS_STATS), 0);
	rec_free(&rec);
}

static void hosttrace_missing_event_records_the_others_and_says_which(void **state)
{
	static const struct hosttrace_event events[] = {
		{ "sched", "sched_switch", HOSTTRACE_FILTER_SWITCH },
		{ "vperf_none", "no_such_event", HOSTTRACE_FILTER_COMMON_PID },
	};
	struct recorder rec;
	struct hosttrace *ht;
	char why[512], meta[4096];
	bool missing = false;
	pid_t me = getpid();

	(void)state;
	need_tracefs();
	rec_init(&rec);
	assert_int_equal(hosttrace__start_events(&ht, &me, 1, 64, events, 2, SINK(&rec), why, sizeof(why),
						 &missing), 0);
	assert_true(missing);
	assert_true(vt_contains(why, "vperf_none:no_such_event not in this kernel"));
	assert_int_equal(rec_count(&rec, VPERF_RAWREC_TRACEFS_FORMAT), 1);
	assert_true(vt_contains(rec_meta(&rec, meta, sizeof(meta)),
				"host_trace_missing=vperf_none:no_such_event\n"));
	assert_int_equal(hosttrace__stop(ht), 0);
	hosttrace__delete(ht);
	assert_false(instance_exists(me));
	rec_free(&rec);

	/* none of them: an error, and nothing left */
	rec_init(&rec);
	assert_int_equal(hosttrace__start_events(&ht, &me, 1, 64, events + 1, 1, SINK(&rec), why,
						 sizeof(why), &missing), -ENOENT);
	assert_null(ht);
	assert_true(vt_contains(why, "none of the host kernel events"));
	assert_int_equal(rec.n, 0);
	assert_false(instance_exists(me));
	rec_free(&rec);
}

/* A recording that cannot take the formats: an error, and the instance is gone. */
static void hosttrace_failed_start_leaves_nothing_behind(void **state)
{
	struct recorder rec;
	struct hosttrace *ht;
	char why[512];
	bool missing;
	pid_t me = getpid(), zero = 0;

	(void)state;
	need_tracefs();
	rec_init(&rec);
	rec.fail_after = 1;
	assert_int_equal(hosttrace__start(&ht, &me, 1, 64, SINK(&rec), why, sizeof(why), &missing), -ENOSPC);
	assert_null(ht);
	assert_true(vt_contains(why, "writing the host event formats"));
	assert_false(instance_exists(me));
	rec_free(&rec);
	assert_int_equal(hosttrace__start(&ht, &zero, 1, 64, (struct hosttrace_sink){ 0 }, why,
					  sizeof(why), &missing),
			 -EINVAL);
	assert_int_equal(hosttrace__start(&ht, &me, 0, 64, (struct hosttrace_sink){ 0 }, why,
					  sizeof(why), &missing), -EINVAL);
	hosttrace__delete(NULL);
}

/* Not root: an error that says so, and nothing created.  As root, a child drops to nobody. */
static bool start_refused(void)
{
	struct hosttrace *ht;
	struct recorder rec;
	char why[512];
	bool missing;
	pid_t me = getpid();
	int err;

	rec_init(&rec);
	err = hosttrace__start(&ht, &me, 1, 64, SINK(&rec), why, sizeof(why), &missing);
	rec_free(&rec);
	printf("# as uid %d: %d (%s): %s\n", (int)geteuid(), err, strerror(-err), why);
	fflush(stdout);
	return err < 0 && !ht && (vt_contains(why, "root") || vt_contains(why, "no tracefs")) &&
	       !instance_exists(me);
}

static void hosttrace_without_root_says_why_and_leaves_nothing(void **state)
{
	pid_t child;
	int status;

	(void)state;
	if (geteuid() != 0) {
		assert_true(start_refused());
		return;
	}
	fflush(stdout);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		_exit(start_refused() ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(instance_exists(child));
}

/* ---- the stored sample (data/hostevents/README) ---- */

struct raw {
	uint8_t *buf;
	size_t len;
	struct chunk c[256];
	size_t n;
};

static void load_raw(struct raw *raw, const char *name)
{
	char path[512];
	struct stat st;
	size_t off;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", VT_HOSTEVENTS_DATA, name);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	raw->len = (size_t)st.st_size;
	raw->buf = malloc(raw->len);
	assert_non_null(raw->buf);
	assert_int_equal(read(fd, raw->buf, raw->len), (ssize_t)raw->len);
	close(fd);
	assert_true(raw->len >= sizeof(struct vperf_rawrec_header));
	assert_memory_equal(raw->buf, VPERF_RAWREC_MAGIC, 8);
	raw->n = 0;
	off = sizeof(struct vperf_rawrec_header);
	while (off + sizeof(struct vperf_rawrec_chunk) <= raw->len) {
		struct vperf_rawrec_chunk ch;

		memcpy(&ch, raw->buf + off, sizeof(ch));
		off += sizeof(ch);
		assert_true(ch.size <= raw->len - off);
		assert_true(raw->n < 256);
		raw->c[raw->n++] = (struct chunk){ .type = ch.type, .cpu = ch.cpu, .flags = ch.flags,
						   .size = ch.size, .data = raw->buf + off };
		off += (ch.size + 7u) & ~7u;
	}
	assert_int_equal(off, raw->len);
}

/*
 * The known answers of sample.raw, read off it once and checked by hand against what the
 * sleeper did (5 sleeps of 1 ms): see data/hostevents/README.
 */
#define SAMPLE_TID		30056
#define SAMPLE_EVENTS		16
#define SAMPLE_SWITCH		11
#define SAMPLE_WAKEUP		5
#define SAMPLE_FIRST_TSC	54656247428952ull
#define SAMPLE_FIRST_CPU	0
#define SAMPLE_OUT_TSC		54656247428952ull
#define SAMPLE_OUT_NEXT_PID	0
#define SAMPLE_OUT_NEXT_COMM	"swapper/0"
#define SAMPLE_OUT_PRIO		120
#define SAMPLE_WAKE_TSC		54656250158276ull
#define SAMPLE_WAKE_TARGET	0
#define SAMPLE_LAST_TSC		54656261615124ull

static void hostevents_stored_sample_decodes_to_known_values(void **state)
{
	struct vperf_hostev_reader *r;
	struct raw *raw = calloc(1, sizeof(*raw));
	struct seen *s = calloc(1, sizeof(*s));
	struct vperf_hostev_cpu_stats st;

	(void)state;
	assert_non_null(raw);
	assert_non_null(s);
	load_raw(raw, "sample.raw");
	assert_int_equal(vperf_hostev_reader__new(&r), 0);
	if (feed(r, raw->c, raw->n))
		fail_msg("feed: %s", vperf_hostev_reader__strerror(r));
	s->tid = SAMPLE_TID;
	assert_int_equal(vperf_hostev_reader__read(r, see, s), 0);
	printf("# %zu events: %zu switches (%zu out of the sleeper, %zu in), %zu wakeups (%zu of it); "
	       "first on cpu %u at %llu, last at %llu\n", s->events,
	       s->by_type[VPERF_HOSTEV_SCHED_SWITCH], s->switch_out, s->switch_in,
	       s->by_type[VPERF_HOSTEV_SCHED_WAKEUP], s->wakeups, s->first.cpu,
	       (unsigned long long)s->first.tsc, (unsigned long long)s->last.tsc);
	assert_int_equal(s->events, SAMPLE_EVENTS);
	assert_int_equal(s->by_type[VPERF_HOSTEV_SCHED_SWITCH], SAMPLE_SWITCH);
	assert_int_equal(s->by_type[VPERF_HOSTEV_SCHED_WAKEUP], SAMPLE_WAKEUP);
	assert_int_equal(s->by_type[VPERF_HOSTEV_OTHER], 0);
	assert_int_equal(s->switch_out, 6);		/* 5 sleeps, then its exit */
	assert_int_equal(s->switch_out_sleeping, 5);
	assert_int_equal(s->switch_in, 5);
	assert_int_equal(s->wakeups, 5);
	assert_int_equal(s->backwards, 0);
	assert_int_equal(s->out_of_order, 0);
	assert_int_equal(s->first.tsc, SAMPLE_FIRST_TSC);
	assert_int_equal(s->first.cpu, SAMPLE_FIRST_CPU);
	assert_int_equal(s->last.tsc, SAMPLE_LAST_TSC);
	/* the first time the sleeper went to sleep */
	assert_int_equal(s->first_switch_out.tsc, SAMPLE_OUT_TSC);
	assert_string_equal(s->first_switch_out.sched_switch.prev_comm, "vt-sleeper");
	assert_int_equal(s->first_switch_out.sched_switch.prev_prio, SAMPLE_OUT_PRIO);
	assert_int_equal(s->first_switch_out.sched_switch.prev_state, 1);
	assert_int_equal(s->first_switch_out.sched_switch.next_pid, SAMPLE_OUT_NEXT_PID);
	assert_string_equal(s->first_switch_out.sched_switch.next_comm, SAMPLE_OUT_NEXT_COMM);
	assert_int_equal(s->first_switch_out.pid, SAMPLE_TID);
	/* and the first time it was woken */
	assert_int_equal(s->first_wakeup.tsc, SAMPLE_WAKE_TSC);
	assert_int_equal(s->first_wakeup.pid, 0);		/* woken from the idle task's timer */
	assert_string_equal(s->first_wakeup.sched_wakeup.comm, "vt-sleeper");
	assert_int_equal(s->first_wakeup.sched_wakeup.prio, SAMPLE_OUT_PRIO);
	assert_int_equal(s->first_wakeup.sched_wakeup.target_cpu, SAMPLE_WAKE_TARGET);
	/* this kernel's formats have every field we decode */
	assert_string_equal(vperf_hostev_reader__missing_fields(r), "");
	assert_int_equal(vperf_hostev_reader__lost(r), 0);
	assert_true(vperf_hostev_reader__nr_cpus(r) >= 1);
	st.size = sizeof(st);
	assert_int_equal(vperf_hostev_reader__cpu_stats(r, 0, &st), 0);
	assert_true(st.has_stats);
	assert_int_equal(st.lost, 0);
	/* a second pass gives the same */
	{
		struct seen *again = calloc(1, sizeof(*again));

		assert_non_null(again);
		again->tid = SAMPLE_TID;
		assert_int_equal(vperf_hostev_reader__read(r, see, again), 0);
		assert_int_equal(again->events, s->events);
		assert_int_equal(again->last.tsc, s->last.tsc);
		free(again);
	}
	vperf_hostev_reader__delete(r);
	free(raw->buf);
	free(raw);
	free(s);
}

/* ---- pages built here ---- */

#define PAGE		4096u
#define DATA		16u

/* A ring-buffer page as the kernel writes one (64-bit: 8-byte commit word). */
struct pgw {
	uint8_t pg[PAGE];
	size_t o;			/* bytes of events so far */
	uint64_t ts;			/* of the last event */
};

static void put(uint8_t *p, uint64_t v, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void pg_begin(struct pgw *w, uint64_t ts)
{
	memset(w, 0, sizeof(*w));
	put(w->pg, ts, 8);
	w->ts = ts;
}

/* One event at ts (deltas under 2^27 cycles); len rounded up to 4. */
static void pg_event(struct pgw *w, uint64_t ts, const void *data, size_t len)
{
	uint32_t delta = (uint32_t)(ts - w->ts), len4 = (uint32_t)((len + 3) & ~3ul);
	uint8_t *e = w->pg + DATA + w->o;

	assert_true(ts - w->ts < (1u << 27));
	if (len4 <= 28 * 4) {
		put(e, (uint64_t)delta << 5 | len4 / 4, 4);
		memcpy(e + 4, data, len);
		w->o += 4 + len4;
	} else {
		put(e, (uint64_t)delta << 5, 4);
		put(e + 4, len4 + 4, 4);
		memcpy(e + 8, data, len);
		w->o += 8 + len4;
	}
	w->ts = ts;
}

/* Lost events: the kernel adds its flags to a signed long as ints: bit 31 comes sign-extended. */
static void pg_end(struct pgw *w, bool lost, uint64_t count)
{
	uint64_t commit = w->o;

	if (lost) {
		commit |= 0xffffffff80000000ull;
		if (count) {
			commit |= 1ull << 30;
			put(w->pg + DATA + w->o, count, 8);
		}
	}
	put(w->pg + 8, commit, 8);
}

/* The header_page of a 64-bit kernel with 4 KiB pages. */
static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON									\
	"format:\n"								\
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"	\
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"	\
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* Linux 6.1's kvm_entry: vcpu_id and rip. */
static const char kvm_entry_61[] =
	"name: kvm_entry\nID: 70\n" COMMON
	"\tfield:unsigned int vcpu_id;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long rip;\toffset:16;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"vcpu %u, rip 0x%lx\", REC->vcpu_id, REC->rip\n";
/* An older kvm_entry: vcpu_id only. */
static const char kvm_entry_old[] =
	"name: kvm_entry\nID: 70\n" COMMON
	"\tfield:unsigned int vcpu_id;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"vcpu %u\", REC->vcpu_id\n";
/* Linux 6.1's kvm_exit (vcpu_id last, after intr_info and error_code). */
static const char kvm_exit_61[] =
	"name: kvm_exit\nID: 71\n" COMMON
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 intr_info;\toffset:48;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 error_code;\toffset:52;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned int vcpu_id;\toffset:56;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"vcpu %u reason %u rip 0x%lx info1 0x%016llx info2 0x%016llx\", REC->vcpu_id, "
	"REC->exit_reason, REC->guest_rip, REC->info1, REC->info2\n";
/* An older kvm_exit: no vcpu_id. */
static const char kvm_exit_old[] =
	"name: kvm_exit\nID: 71\n" COMMON
	"\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long guest_rip;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u32 isa;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 info1;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 info2;\toffset:40;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"reason %u rip 0x%lx info %llx %llx\", REC->exit_reason, REC->guest_rip, "
	"REC->info1, REC->info2\n";
static const char kvm_inj_virq[] =
	"name: kvm_inj_virq\nID: 72\n" COMMON
	"\tfield:unsigned int vector;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:bool soft;\toffset:12;\tsize:1;\tsigned:0;\n"
	"\tfield:bool reinjected;\toffset:13;\tsize:1;\tsigned:0;\n\n"
	"print fmt: \"%s 0x%x%s\", REC->soft ? \"Soft/INTn\" : \"IRQ\", REC->vector, "
	"REC->reinjected ? \" [reinjected]\" : \"\"\n";
static const char sched_switch[] =
	"name: sched_switch\nID: 80\n" COMMON
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"prev_comm=%s prev_pid=%d ==> next_comm=%s next_pid=%d\", REC->prev_comm, "
	"REC->prev_pid, REC->next_comm, REC->next_pid\n";

static void common(uint8_t *e, uint16_t id, int32_t pid)
{
	put(e, id, 2);
	put(e + 4, (uint32_t)pid, 4);
}

static struct vperf_hostev_reader *reader_with(const char *const *formats, size_t n)
{
	static const char *const sys[] = { "kvm", "sched" };
	struct vperf_hostev_reader *r;

	assert_int_equal(vperf_hostev_reader__new(&r), 0);
	assert_int_equal(vperf_hostev_reader__add_header(r, header_page, strlen(header_page)), 0);
	for (size_t i = 0; i < n; i++) {
		const char *name = formats[i] + strlen("name: ");
		char ev[32];
		int err;

		snprintf(ev, sizeof(ev), "%.*s", (int)strcspn(name, "\n"), name);
		err = vperf_hostev_reader__add_format(r, sys[!strncmp(ev, "sched", 5)], ev, formats[i],
						      strlen(formats[i]));
		if (err)
			fail_msg("%s: %s", ev, vperf_hostev_reader__strerror(r));
	}
	return r;
}

struct collect {
	struct vperf_hostev ev[64];
	size_t n;
};

static int collect(const struct vperf_hostev *ev, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 64)
		c->ev[c->n++] = *ev;
	return 0;
}

/* kvm events: one page each on two CPUs, decoded with 6.1's formats and with older ones. */
static void kvm_pages(struct pgw *p0, struct pgw *p1)
{
	uint8_t e[72] = { 0 };

	pg_begin(p0, 1000000);
	common(e, 70, 4242);					/* kvm_entry */
	put(e + 8, 3, 4);
	put(e + 16, 0xffffffff81000010ull, 8);
	pg_event(p0, 1000100, e, 24);
	memset(e, 0, sizeof(e));				/* kvm_exit, 6.1 layout */
	common(e, 71, 4242);
	put(e + 8, 30, 4);					/* IO_INSTRUCTION */
	put(e + 16, 0xffffffff81000020ull, 8);
	put(e + 24, 1, 4);					/* VMX */
	put(e + 32, 0x5650, 8);
	put(e + 40, 0x77, 8);
	put(e + 56, 3, 4);
	pg_event(p0, 1000300, e, 64);
	pg_end(p0, false, 0);

	pg_begin(p1, 1000150);
	memset(e, 0, sizeof(e));				/* kvm_inj_virq */
	common(e, 72, 4243);
	put(e + 8, 0xec, 4);
	e[12] = 0;
	e[13] = 1;
	pg_event(p1, 1000200, e, 16);
	memset(e, 0, sizeof(e));				/* sched_switch */
	common(e, 80, 4243);
	memcpy(e + 8, "vcpu1", 6);
	put(e + 24, 4243, 4);
	put(e + 28, (uint32_t)-51, 4);
	put(e + 32, 2, 8);
	memcpy(e + 40, "cc1plus-long-name", 16);		/* 16 bytes, no NUL */
	put(e + 56, 999, 4);
	put(e + 60, 120, 4);
	pg_event(p1, 1000300, e, 64);				/* same time as cpu 0's exit */
	pg_end(p1, false, 0);
}

static void hostevents_kvm_events_decode_by_field_name_across_kernels(void **state)
{
	const char *new_f[] = { kvm_entry_61, kvm_exit_61, kvm_inj_virq, sched_switch };
	const char *old_f[] = { kvm_entry_old, kvm_exit_old, kvm_inj_virq, sched_switch };
	struct pgw *p0 = malloc(sizeof(*p0)), *p1 = malloc(sizeof(*p1));
	struct collect *c = calloc(1, sizeof(*c));

	(void)state;
	assert_non_null(p0);
	assert_non_null(p1);
	assert_non_null(c);
	kvm_pages(p0, p1);
	for (int k = 0; k < 2; k++) {
		struct vperf_hostev_reader *r = reader_with(k ? old_f : new_f, 4);
		const struct vperf_hostev *ev = c->ev;

		c->n = 0;
		assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p0->pg, PAGE), 0);
		assert_int_equal(vperf_hostev_reader__add_pages(r, 1, p1->pg, PAGE), 0);
		assert_int_equal(vperf_hostev_reader__read(r, collect, c), 0);
		assert_int_equal(c->n, 4);
		/* in time order across CPUs, a tie to the lower CPU */
		assert_int_equal(ev[0].type, VPERF_HOSTEV_KVM_ENTRY);
		assert_int_equal(ev[0].cpu, 0);
		assert_int_equal(ev[0].tsc, 1000100);
		assert_int_equal(ev[0].pid, 4242);
		assert_int_equal(ev[0].kvm_entry.vcpu_id, 3);
		assert_int_equal(ev[0].kvm_entry.rip, k ? 0 : 0xffffffff81000010ull);
		assert_int_equal(ev[1].type, VPERF_HOSTEV_KVM_INJ_VIRQ);
		assert_int_equal(ev[1].cpu, 1);
		assert_int_equal(ev[1].tsc, 1000200);
		assert_int_equal(ev[1].kvm_inj_virq.vector, 0xec);
		assert_int_equal(ev[1].kvm_inj_virq.soft, 0);
		assert_int_equal(ev[1].kvm_inj_virq.reinjected, 1);
		assert_int_equal(ev[2].type, VPERF_HOSTEV_KVM_EXIT);
		assert_int_equal(ev[2].cpu, 0);
		assert_int_equal(ev[2].tsc, 1000300);
		assert_int_equal(ev[2].kvm_exit.exit_reason, 30);
		assert_int_equal(ev[2].kvm_exit.guest_rip, 0xffffffff81000020ull);
		assert_int_equal(ev[2].kvm_exit.isa, 1);
		assert_int_equal(ev[2].kvm_exit.info1, 0x5650);
		assert_int_equal(ev[2].kvm_exit.info2, 0x77);
		assert_int_equal(ev[2].kvm_exit.vcpu_id, k ? 0 : 3);
		assert_int_equal(ev[3].type, VPERF_HOSTEV_SCHED_SWITCH);
		assert_int_equal(ev[3].cpu, 1);
		assert_int_equal(ev[3].tsc, 1000300);
		assert_string_equal(ev[3].sched_switch.prev_comm, "vcpu1");
		assert_int_equal(ev[3].sched_switch.prev_pid, 4243);
		assert_int_equal(ev[3].sched_switch.prev_prio, -51);	/* signed, sign-extended */
		assert_int_equal(ev[3].sched_switch.prev_state, 2);
		assert_memory_equal(ev[3].sched_switch.next_comm, "cc1plus-long-name", 16);
		assert_int_equal(ev[3].sched_switch.next_pid, 999);
		assert_int_equal(ev[3].sched_switch.next_prio, 120);
		assert_string_equal(vperf_hostev_reader__missing_fields(r),
				    k ? "kvm:kvm_entry.rip kvm:kvm_exit.vcpu_id" : "");
		vperf_hostev_reader__delete(r);
	}
	free(p0);
	free(p1);
	free(c);
}

/* Losses: counted on the page (overwrite), in the stats, and handed out where they happened. */
static void hostevents_lost_events_are_counted_from_pages_and_stats(void **state)
{
	const char *f[] = { sched_switch };
	struct pgw *p = calloc(2, sizeof(*p));
	struct collect *c = calloc(1, sizeof(*c));
	struct vperf_hostev_reader *r = reader_with(f, 1);
	struct vperf_hostev_cpu_stats st = { .size = sizeof(st) };
	static const char stats[] = "entries: 0\noverrun: 9\ncommit overrun: 1\nbytes: 0\n"
				    "oldest event ts: 1000\nnow ts: 2000\ndropped events: 2\n"
				    "read events: 100\n";
	static uint8_t two[2 * PAGE];
	uint8_t e[64] = { 0 };

	(void)state;
	assert_non_null(p);
	assert_non_null(c);
	common(e, 80, 7);
	put(e + 24, 7, 4);
	pg_begin(&p[0], 5000);
	pg_event(&p[0], 5010, e, 64);
	pg_end(&p[0], true, 7);				/* 7 lost before this page */
	pg_begin(&p[1], 6000);
	pg_event(&p[1], 6020, e, 64);
	pg_end(&p[1], true, 0);				/* some lost, count not stored */
	memcpy(two, p[0].pg, PAGE);
	memcpy(two + PAGE, p[1].pg, PAGE);
	if (vperf_hostev_reader__add_pages(r, 2, two, 2 * PAGE))
		fail_msg("%s", vperf_hostev_reader__strerror(r));
	assert_int_equal(vperf_hostev_reader__lost(r), 7);	/* pages only, no stats yet */
	assert_int_equal(vperf_hostev_reader__add_stats(r, 2, stats, strlen(stats)), 0);
	/* max(7 from pages, 9 overrun) + 1 commit overrun + 2 dropped */
	assert_int_equal(vperf_hostev_reader__lost(r), 12);
	assert_int_equal(vperf_hostev_reader__cpu_stats(r, 0, &st), 0);
	assert_int_equal(st.cpu, 2);
	assert_int_equal(st.pages, 2);
	assert_int_equal(st.lost_in_pages, 7);
	assert_int_equal(st.lost_pages_uncounted, 1);
	assert_int_equal(st.overrun, 9);
	assert_int_equal(st.lost, 12);
	assert_int_equal(vperf_hostev_reader__cpu_stats(r, 1, &st), -EINVAL);

	/* without report_lost: events only */
	assert_int_equal(vperf_hostev_reader__read(r, collect, c), 0);
	assert_int_equal(c->n, 2);
	c->n = 0;
	vperf_hostev_reader__report_lost(r, true);
	assert_int_equal(vperf_hostev_reader__read(r, collect, c), 0);
	assert_int_equal(c->n, 4);
	assert_int_equal(c->ev[0].type, VPERF_HOSTEV_LOST);
	assert_int_equal(c->ev[0].lost.count, 7);
	assert_int_equal(c->ev[0].tsc, 5010);		/* the first event after the loss */
	assert_int_equal(c->ev[1].type, VPERF_HOSTEV_SCHED_SWITCH);
	assert_int_equal(c->ev[2].type, VPERF_HOSTEV_LOST);
	assert_int_equal(c->ev[2].lost.count, 0);
	assert_int_equal(c->ev[2].tsc, 6020);
	assert_int_equal(c->ev[3].tsc, 6020);
	vperf_hostev_reader__delete(r);
	free(p);
	free(c);
}

/* ---- bad input: errors with a message, never a crash or a hang ---- */

static int stop_cb(const struct vperf_hostev *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	return 42;
}

static void hostevents_bad_input_is_an_error_not_a_crash(void **state)
{
	const char *f[] = { sched_switch };
	struct pgw *p = calloc(1, sizeof(*p));
	struct collect *c = calloc(1, sizeof(*c));
	struct vperf_hostev_reader *r;
	uint8_t e[64] = { 0 };
	static const struct {
		int line;
		const char *sys, *name, *text;
		int err;
		const char *says;
	} formats[] = {
		{ __LINE__, "sched", "sched_switch", "garbage that is no format\n", -EINVAL,
		  "does not parse" },
		{ __LINE__, "sched", "sched_switch", "name: sched_switch\nID: 80\nformat:\n\tfield:", -EINVAL,
		  "does not parse" },
		{ __LINE__, "sched", "other_name", sched_switch, -EINVAL, "not its name" },
		{ __LINE__, "sched", "bad/name", sched_switch, -EINVAL, "bad event name" },
		{ __LINE__, "sched", "sched_switch", "", -EINVAL, "not a text" },
		{ __LINE__, "sched", "sched_switch", "name: sched_switch\nID: 99999999\n" COMMON
		  "print fmt: \"x\"\n", -EINVAL, "has ID" },
		/* a field of one word (no type): no kernel writes one, libtraceevent leaks on it */
		{ __LINE__, "sched", "sched_switch", "name: sched_switch\nID: 80\n" COMMON
		  "\tfield:next_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n", -EINVAL,
		  "lines tracefs does not write" },
	};

	(void)state;
	assert_non_null(p);
	assert_non_null(c);

	/* formats */
	assert_int_equal(vperf_hostev_reader__new(&r), 0);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		int err = vperf_hostev_reader__add_format(r, formats[i].sys, formats[i].name,
							  formats[i].text, strlen(formats[i].text));

		if (err != formats[i].err || !vt_contains(vperf_hostev_reader__strerror(r), formats[i].says))
			fail_msg("line %d: %d (%s), want %d (%s)", formats[i].line, err,
				 vperf_hostev_reader__strerror(r), formats[i].err, formats[i].says);
	}
	assert_int_equal(vperf_hostev_reader__add_format_chunk(r, "sched", 5), -EINVAL);
	assert_int_equal(vperf_hostev_reader__add_format_chunk(r, "", 0), -EINVAL);
	/* pages from a CPU before any header */
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	assert_true(vt_contains(vperf_hostev_reader__strerror(r), "before the header_page"));
	/* headers that are no ring-buffer page */
	assert_int_equal(vperf_hostev_reader__add_header(r, "nonsense\n", 9), -EINVAL);
	assert_int_equal(vperf_hostev_reader__add_header(r, "\0\0", 2), -EINVAL);
	assert_int_equal(vperf_hostev_reader__add_stats(r, 0, "bytes: 1\n", 9), -EINVAL);
	assert_int_equal(vperf_hostev_reader__add_stats(r, 0, "overrun: x\n", 11), -EINVAL);
	vperf_hostev_reader__delete(r);

	r = reader_with(f, 1);
	assert_int_equal(vperf_hostev_reader__add_format(r, "sched", "sched_switch", sched_switch,
							 strlen(sched_switch)), -EEXIST);
	/* a cut page */
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE - 1), -EINVAL);
	assert_true(vt_contains(vperf_hostev_reader__strerror(r), "cut page"));
	/* a commit word bigger than the page */
	pg_begin(p, 100);
	put(p->pg + 8, PAGE, 8);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	put(p->pg + 8, 1ull << 40, 8);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	put(p->pg + 8, 0xffffffff00000010ull, 8);		/* sign-extended, but bit 31 clear */
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	/* an event that runs past the commit */
	common(e, 80, 1);
	pg_begin(p, 100);
	pg_event(p, 110, e, 64);
	put(p->pg + 8, 40, 8);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	assert_true(vt_contains(vperf_hostev_reader__strerror(r), "runs past"));
	/* a padding event whose length goes backwards (kbuffer would loop on it) */
	pg_begin(p, 100);
	put(p->pg + DATA, 29 | (1u << 5), 4);
	put(p->pg + DATA + 4, (uint32_t)-8, 4);
	put(p->pg + 8, 64, 8);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	/* a long event whose length is under its own header */
	pg_begin(p, 100);
	put(p->pg + DATA, 0, 4);
	put(p->pg + DATA + 4, 2, 4);
	put(p->pg + 8, 64, 8);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	/* a lost count that would be past the page */
	pg_begin(p, 100);
	put(p->pg + 8, (PAGE - DATA - 4) | 3ull << 30, 8);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), -EINVAL);
	/* none of these was kept */
	assert_int_equal(vperf_hostev_reader__nr_cpus(r), 0);

	/* an event shorter than its format: the pass fails with a message */
	pg_begin(p, 100);
	pg_event(p, 110, e, 16);
	pg_end(p, false, 0);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), 0);
	assert_int_equal(vperf_hostev_reader__read(r, collect, c), -EINVAL);
	assert_true(vt_contains(vperf_hostev_reader__strerror(r), "its format needs 64"));
	vperf_hostev_reader__delete(r);

	/* a callback that says stop */
	r = reader_with(f, 1);
	pg_begin(p, 100);
	pg_event(p, 110, e, 64);
	pg_end(p, false, 0);
	assert_int_equal(vperf_hostev_reader__add_pages(r, 0, p->pg, PAGE), 0);
	assert_int_equal(vperf_hostev_reader__read(r, stop_cb, NULL), 42);
	vperf_hostev_reader__delete(r);
	vperf_hostev_reader__delete(NULL);
	free(p);
	free(c);
}

/* The stored sample's pages with bytes changed at random: errors or events, nothing else. */
static void hostevents_damaged_pages_never_crash_the_reader(void **state)
{
	struct raw *raw = calloc(1, sizeof(*raw));
	uint32_t seed = 12345;
	size_t accepted = 0, refused = 0, events = 0;

	(void)state;
	assert_non_null(raw);
	load_raw(raw, "sample.raw");
	for (int round = 0; round < 3000; round++) {
		struct vperf_hostev_reader *r;
		struct seen *s = calloc(1, sizeof(*s));
		int err = 0;

		assert_non_null(s);
		assert_int_equal(vperf_hostev_reader__new(&r), 0);
		for (size_t i = 0; i < raw->n && !err; i++) {
			struct chunk ch = raw->c[i];
			uint8_t *copy = NULL;

			if (ch.type == VPERF_RAWREC_TRACEFS_PAGES && ch.size) {
				copy = malloc(ch.size);
				assert_non_null(copy);
				memcpy(copy, ch.data, ch.size);
				for (int k = 0; k < 1 + round % 8; k++) {
					size_t at;

					seed = seed * 1103515245u + 12345u;
					/* mostly the header and the first events, where it matters */
					at = (seed >> 8) % (round % 2 ? ch.size : 256u);
					seed = seed * 1103515245u + 12345u;
					copy[at] ^= (uint8_t)(1u << ((seed >> 16) % 8));
				}
				ch.data = copy;
			}
			err = feed(r, &ch, 1);
			free(copy);
		}
		if (!err)
			err = vperf_hostev_reader__read(r, see, s);
		if (err)
			refused++;
		else
			accepted++;
		events += s->events;
		vperf_hostev_reader__delete(r);
		free(s);
	}
	printf("# 3000 damaged samples: %zu refused with an error, %zu read (%zu events)\n", refused,
	       accepted, events);
	assert_true(refused > 0);
	free(raw->buf);
	free(raw);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostevents_sched_switch_counts_a_sleeping_thread),
		cmocka_unit_test(hosttrace_overrun_is_counted_in_pages_and_stats_alike),
		cmocka_unit_test(hosttrace_removes_a_stale_instance_and_its_own),
		cmocka_unit_test(hosttrace_missing_event_records_the_others_and_says_which),
		cmocka_unit_test(hosttrace_failed_start_leaves_nothing_behind),
		cmocka_unit_test(hosttrace_without_root_says_why_and_leaves_nothing),
		cmocka_unit_test(hostevents_stored_sample_decodes_to_known_values),
		cmocka_unit_test(hostevents_kvm_events_decode_by_field_name_across_kernels),
		cmocka_unit_test(hostevents_lost_events_are_counted_from_pages_and_stats),
		cmocka_unit_test(hostevents_bad_input_is_an_error_not_a_crash),
		cmocka_unit_test(hostevents_damaged_pages_never_crash_the_reader),
	};

	return VT_MAIN("hostevents", tests, NULL, NULL);
}
