/* SPDX-License-Identifier: MIT */
/*
 * libvperf's trace markers (vperf_trace_mark(), src/trace-mark.c) against a
 * marker buffer in memory, behind the /dev/vperf seams (vperf__pv_open,
 * vperf__pv_mmap_mark, vperf__pv_ioctl, vperf__pv_close, vperf__pv_munmap):
 * the first marker of a thread maps the buffer, later ones make no call
 * into the seams at all; every record is one the module accepts
 * (vperf_mark_rec_valid()), in order, also across the end of the data; a
 * full buffer counts lost; errors are the documented ones and are
 * remembered.  Each case runs in a thread of its own (the state is per
 * thread), which reports back a failure as text: cmocka's assertions
 * belong to the test's own thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vperf_guest_uapi.h"
#include <vperf/trace_rec.h>

#include "vtest.h"

#define FAKE_FD		77
#define DATA_PAGES	1

static struct {
	int open_err, mmap_err, ioctl_err;	/* errno the call fails with, 0: works */
	bool bad_version;
	bool user_only;		/* TRACE_SAMPLE: EACCES without VPERF_TRACE_SAMPLER_USER (paranoid >= 2) */
	unsigned int opens, mmaps, ioctls, closes, munmaps;
	size_t mmap_len;
	unsigned long last_ioctl;
	struct vperf_trace_sampler sampler;	/* the last VPERF_IOC_TRACE_SAMPLE's */
	unsigned char buf[(1 + DATA_PAGES) * 4096] __attribute__((aligned(4096)));
} fake;

int __wrap_vperf__pv_open(const char *path);
int __wrap_vperf__pv_mmap_mark(int fd, size_t len, void **addr);
int __wrap_vperf__pv_ioctl(int fd, unsigned long req, void *arg);
void __wrap_vperf__pv_close(int fd);
void __wrap_vperf__pv_munmap(void *addr, size_t len);

int __wrap_vperf__pv_open(const char *path)
{
	fake.opens++;
	return fake.open_err ? -fake.open_err : FAKE_FD;
}

int __wrap_vperf__pv_mmap_mark(int fd, size_t len, void **addr)
{
	struct vperf_mark_buf *h = (struct vperf_mark_buf *)fake.buf;

	fake.mmaps++;
	fake.mmap_len = len;
	if (fd != FAKE_FD)
		return -EBADF;
	if (fake.mmap_err)
		return -fake.mmap_err;
	if (len != sizeof(fake.buf))
		return -EINVAL;
	memset(fake.buf, 0, sizeof(fake.buf));
	h->size = sizeof(*h);
	h->version = fake.bad_version ? 99 : VPERF_MARK_BUF_VERSION;
	h->data_size = DATA_PAGES * 4096;
	*addr = fake.buf;
	return 0;
}

int __wrap_vperf__pv_ioctl(int fd, unsigned long req, void *arg)
{
	fake.ioctls++;
	fake.last_ioctl = req;
	if (req == VPERF_IOC_TRACE_SAMPLE) {
		memcpy(&fake.sampler, arg, sizeof(fake.sampler));
		if (fake.user_only && !(fake.sampler.flags & VPERF_TRACE_SAMPLER_USER))
			return -EACCES;
	}
	return fake.ioctl_err ? -fake.ioctl_err : 0;
}

void __wrap_vperf__pv_close(int fd)
{
	fake.closes++;
}

void __wrap_vperf__pv_munmap(void *addr, size_t len)
{
	fake.munmaps++;
}

static unsigned int calls(void)
{
	return fake.opens + fake.mmaps + fake.ioctls + fake.closes + fake.munmaps;
}

static char why[256];

/* In a case's thread: a failure, returned as the thread's result. */
#define CHECK(c)								\
	do {									\
		if (!(c)) {							\
			snprintf(why, sizeof(why), "line %d: %s", __LINE__, #c);	\
			return why;						\
		}								\
	} while (0)

static int setup(void **state)
{
	memset(&fake, 0, sizeof(fake));
	unsetenv("VPERF_PV_DEVICE");
	setenv("VPERF_MARK_KB", "4", 1);	/* DATA_PAGES */
	return 0;
}

/* Run fn in a new thread (fresh thread-local state), then that thread's exit. */
static void in_thread(void *(*fn)(void *))
{
	pthread_t t;
	void *res;

	assert_int_equal(pthread_create(&t, NULL, fn, NULL), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	if (res)
		fail_msg("%s", (const char *)res);
}

/*
 * The module's side: take every record from tail to head, check it (and,
 * with expect_value, its value), advance tail.  How many, or -1.
 */
static int consume(uint64_t *expect_value)
{
	struct vperf_mark_buf *h = (struct vperf_mark_buf *)fake.buf;
	unsigned char *data = fake.buf + 4096;
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE), tail = h->tail;
	int n = 0;

	while (tail < head) {
		union {
			struct vperf_trace_mark m;
			unsigned char b[VPERF_MARK_REC_MAX];
		} rec;
		struct vperf_trace_rec hd;

		vperf_ring_copy_out(&hd, data, h->data_size, tail, sizeof(hd));
		if (hd.size > VPERF_MARK_REC_MAX || hd.size > head - tail)
			return -1;
		vperf_ring_copy_out(&rec, data, h->data_size, tail, hd.size);
		if (!vperf_mark_rec_valid(&rec, hd.size))
			return -1;
		if (expect_value && rec.m.value != (*expect_value)++)
			return -1;
		tail += hd.size;
		n++;
	}
	__atomic_store_n(&h->tail, tail, __ATOMIC_RELEASE);
	return n;
}

static void *t_first_maps(void *arg)
{
	struct vperf_mark_buf *h = (struct vperf_mark_buf *)fake.buf;
	uint64_t next = 0;
	unsigned int before;

	CHECK((vperf_trace_mark("start", 0, VPERF_MARK_BEGIN)) == (0));
	CHECK((fake.opens) == (1));
	CHECK((fake.mmaps) == (1));
	CHECK((fake.closes) == (1));	/* the mapping holds the file */
	CHECK((fake.mmap_len) == (4096 + 4096));
	before = calls();
	/* 1000 markers of every name length through a 4 KiB buffer: it wraps ~20 times */
	for (uint64_t i = 1; i < 1000; i++) {
		char name[65];
		size_t len = 1 + i % 64;

		memset(name, 'a' + (int)(i % 26), len);
		name[len] = 0;
		CHECK(vperf_trace_mark(name, i, (enum vperf_mark_kind)(i % 3)) == 0);
		if (i % 40 == 0)
			CHECK(consume(&next) >= 0);
	}
	CHECK(consume(&next) >= 0);
	CHECK((next) == (1000));
	CHECK((calls()) == (before));	/* no system call after the first */
	CHECK(h->head > h->data_size * 10);
	CHECK((vperf_trace_marks_lost()) == (0));
	return NULL;
}

static void mark_first_call_maps_later_ones_make_no_system_call(void **state)
{
	in_thread(t_first_maps);
	assert_int_equal(fake.munmaps, 1);	/* the thread's exit unmapped it */
}

static void *t_full_counts_lost(void *arg)
{
	struct vperf_mark_buf *h = (struct vperf_mark_buf *)fake.buf;
	int ok = 0, lost = 0;
	int ret;

	/* 48-byte records, 4096 bytes: 85 fit, the rest are lost */
	for (int i = 0; i < 100; i++) {
		ret = vperf_trace_mark("x", (uint64_t)i, VPERF_MARK_INSTANT);
		if (ret == 0)
			ok++;
		else if (ret == -ENOSPC)
			lost++;
		else
			CHECK(ret == 0 || ret == -ENOSPC);
	}
	CHECK((ok) == (4096 / 48));
	CHECK((lost) == (100 - 4096 / 48));
	CHECK((vperf_trace_marks_lost()) == ((uint64_t)lost));
	CHECK((h->lost) == ((uint64_t)lost));	/* for the module to report */
	CHECK((consume(NULL)) == (ok));
	CHECK((vperf_trace_mark("y", 0, VPERF_MARK_INSTANT)) == (0));	/* room again */
	return NULL;
}

static void mark_full_buffer_counts_lost_for_the_module(void **state)
{
	in_thread(t_full_counts_lost);
}

static void *t_bad_arguments(void *arg)
{
	static const char n65[] = "01234567890123456789012345678901234567890123456789012345678901234";

	CHECK((vperf_trace_mark(NULL, 0, VPERF_MARK_BEGIN)) == (-EINVAL));
	CHECK((vperf_trace_mark("", 0, VPERF_MARK_BEGIN)) == (-EINVAL));
	CHECK((vperf_trace_mark(n65, 0, VPERF_MARK_BEGIN)) == (-EINVAL));
	CHECK((vperf_trace_mark("a", 0, (enum vperf_mark_kind)3)) == (-EINVAL));
	CHECK((calls()) == (0));	/* refused before anything was mapped */
	CHECK((vperf_trace_mark(n65 + 1, 0, VPERF_MARK_BEGIN)) == (0));	/* 64 bytes */
	CHECK((vperf_trace_mark("caf\xc3\xa9", 0, VPERF_MARK_END)) == (0));
	CHECK((vperf_trace_mark("bad\xc3", 0, VPERF_MARK_END)) == (-EINVAL));
	CHECK((consume(NULL)) == (2));
	return NULL;
}

static void mark_bad_names_refused_before_any_system_call(void **state)
{
	in_thread(t_bad_arguments);
}

struct err_case {
	int line;
	int open_err, mmap_err;
	bool bad_version;
	int expect;
};

static const struct err_case *cur_err;

static void *t_error(void *arg)
{
	unsigned int before;

	CHECK((vperf_trace_mark("a", 0, VPERF_MARK_INSTANT)) == (cur_err->expect));
	before = calls();
	CHECK((vperf_trace_mark("a", 0, VPERF_MARK_INSTANT)) == (cur_err->expect));
	CHECK((calls()) == (before));	/* remembered, not tried again */
	CHECK((vperf_trace_flush()) == (cur_err->expect));
	return NULL;
}

static void mark_errors_are_the_documented_ones_and_remembered(void **state)
{
	static const struct err_case cases[] = {
		{ __LINE__, ENOENT, 0, false, -ENODEV },	/* no /dev/vperf */
		{ __LINE__, ENXIO, 0, false, -ENODEV },
		{ __LINE__, EACCES, 0, false, -EACCES },
		{ __LINE__, 0, ENODATA, false, -ENODATA },	/* tracing off */
		{ __LINE__, 0, ENODEV, false, -ENODEV },	/* no trace rings */
		{ __LINE__, 0, EINVAL, false, -EOPNOTSUPP },	/* a module without markers */
		{ __LINE__, 0, EBUSY, false, -EBUSY },
		{ __LINE__, 0, 0, true, -EPROTO },		/* a header this library does not know */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(NULL);
		fake.open_err = cases[i].open_err;
		fake.mmap_err = cases[i].mmap_err;
		fake.bad_version = cases[i].bad_version;
		cur_err = &cases[i];
		print_message("line %d\n", cases[i].line);
		in_thread(t_error);
		assert_int_equal(fake.munmaps, cases[i].bad_version ? 1 : 0);
	}
}

static void *t_flush(void *arg)
{
	CHECK((vperf_trace_flush()) == (0));	/* no marker yet: nothing, no call */
	CHECK((calls()) == (0));
	CHECK((vperf_trace_mark("a", 0, VPERF_MARK_INSTANT)) == (0));
	CHECK((vperf_trace_flush()) == (0));
	CHECK((fake.ioctls) == (1));
	CHECK((fake.last_ioctl) == (VPERF_IOC_MARK_FLUSH));
	fake.ioctl_err = ENODATA;
	CHECK((vperf_trace_flush()) == (-ENODATA));
	return NULL;
}

static void mark_flush_is_one_ioctl_and_nothing_without_markers(void **state)
{
	in_thread(t_flush);
}

/* A bad $VPERF_MARK_KB is ignored: the default, 64 KiB. */
static void *t_env(void *arg)
{
	CHECK((vperf_trace_mark("a", 0, VPERF_MARK_INSTANT)) == (-EOPNOTSUPP));	/* EINVAL: size */
	CHECK((fake.mmap_len) == (4096 + 65536));
	return NULL;
}

static void mark_bad_vperf_mark_kb_falls_back_to_64k(void **state)
{
	static const char *const bad[] = { "3", "2048", "100", "4k", "" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setup(NULL);
		setenv("VPERF_MARK_KB", bad[i], 1);
		in_thread(t_env);
	}
}

/*
 * vperf_trace_sample_task() (src/trace-sample.c): the event encoded into the module's request
 * (cpu-clock: PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK), the flags and period as given, the
 * file kept open (its descriptor returned); bad arguments refused before any system call; each
 * documented error of the module explained and the file closed.
 */
static void trace_sample_task_asks_the_module_and_explains_its_errors(void **state)
{
	static const struct { int err; int ret; const char *says; } errs[] = {
		{ ENODATA, -ENODATA, "trace=1" },
		{ ENOTTY, -EOPNOTSUPP, "no trace sampler" },
		{ ESRCH, -ESRCH, "no process 4321" },
		{ EACCES, -EACCES, "paranoid" },
		{ ENOENT, -ENOENT, "cpu-clock can always be sampled" },
	};
	char w[256];
	int fd;

	(void)state;
	fd = vperf_trace_sample_task(4321, "cpu-clock", 997,
				     VPERF_TRACE_SAMPLE_FREQ | VPERF_TRACE_SAMPLE_CALLCHAIN, w, sizeof(w));
	assert_int_equal(fd, FAKE_FD);
	assert_int_equal(fake.opens, 1);
	assert_int_equal(fake.closes, 0);
	assert_int_equal(fake.last_ioctl, VPERF_IOC_TRACE_SAMPLE);
	assert_int_equal(fake.sampler.size, sizeof(struct vperf_trace_sampler));
	assert_int_equal(fake.sampler.pid, 4321);
	assert_int_equal(fake.sampler.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(fake.sampler.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(fake.sampler.period, 997);
	assert_int_equal(fake.sampler.flags, VPERF_TRACE_SAMPLER_FREQ | VPERF_TRACE_SAMPLER_CALLCHAIN);

	memset(&fake, 0, sizeof(fake));
	assert_int_equal(vperf_trace_sample_task(0, "cpu-clock", 0, 0, w, sizeof(w)), -EINVAL);
	assert_int_equal(vperf_trace_sample_task(0, "cpu-clock", 100001, VPERF_TRACE_SAMPLE_FREQ, w,
						 sizeof(w)), -EINVAL);
	assert_int_equal(vperf_trace_sample_task(0, "cpu-clock", 1000, 1u << 7, w, sizeof(w)), -EINVAL);
	assert_true(vperf_trace_sample_task(0, "no-such-event-here", 1000, 0, w, sizeof(w)) < 0);
	assert_int_equal(calls(), 0);

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		memset(&fake, 0, sizeof(fake));
		fake.ioctl_err = errs[i].err;
		assert_int_equal(vperf_trace_sample_task(4321, "cpu-clock", 1000000, 0, w, sizeof(w)),
				 errs[i].ret);
		if (!strstr(w, errs[i].says))
			fail_msg("errno %d: \"%s\" does not say \"%s\"", errs[i].err, w, errs[i].says);
		assert_int_equal(fake.closes, 1);
	}
	memset(&fake, 0, sizeof(fake));
	fake.open_err = ENOENT;
	assert_int_equal(vperf_trace_sample_task(0, "cpu-clock", 1000, 0, w, sizeof(w)), -ENODEV);
	assert_non_null(strstr(w, "not a vperf guest"));
}

/*
 * A user who may not sample the guest kernel (the module's EACCES at
 * kernel.perf_event_paranoid >= 2 without CAP_PERFMON) samples user mode
 * only, as perf falls back to; an event named user mode only asks for that
 * at once.
 */
static void trace_sample_task_falls_back_to_user_mode_as_perf_does(void **state)
{
	char w[256];
	int fd;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.user_only = true;
	fd = vperf_trace_sample_task(0, "cpu-clock", 1000000, 0, w, sizeof(w));
	assert_int_equal(fd, FAKE_FD);
	assert_int_equal(fake.ioctls, 2);
	assert_int_equal(fake.sampler.flags, VPERF_TRACE_SAMPLER_USER);
	assert_int_equal(fake.closes, 0);

	memset(&fake, 0, sizeof(fake));
	fake.user_only = true;
	fd = vperf_trace_sample_task(0, "cpu-clock:u", 1000000, VPERF_TRACE_SAMPLE_CALLCHAIN, w, sizeof(w));
	assert_int_equal(fd, FAKE_FD);
	assert_int_equal(fake.ioctls, 1);
	assert_int_equal(fake.sampler.flags, VPERF_TRACE_SAMPLER_USER | VPERF_TRACE_SAMPLER_CALLCHAIN);

	/* a module that refuses the task itself (another user's process) still says paranoid */
	memset(&fake, 0, sizeof(fake));
	fake.ioctl_err = EACCES;
	assert_int_equal(vperf_trace_sample_task(4321, "cpu-clock", 1000000, 0, w, sizeof(w)), -EACCES);
	assert_int_equal(fake.ioctls, 2);
	assert_non_null(strstr(w, "paranoid"));
	assert_int_equal(fake.closes, 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(mark_first_call_maps_later_ones_make_no_system_call, setup),
		cmocka_unit_test_setup(mark_full_buffer_counts_lost_for_the_module, setup),
		cmocka_unit_test_setup(mark_bad_names_refused_before_any_system_call, setup),
		cmocka_unit_test_setup(mark_errors_are_the_documented_ones_and_remembered, setup),
		cmocka_unit_test_setup(mark_flush_is_one_ioctl_and_nothing_without_markers, setup),
		cmocka_unit_test_setup(mark_bad_vperf_mark_kb_falls_back_to_64k, setup),
		cmocka_unit_test_setup(trace_sample_task_asks_the_module_and_explains_its_errors, setup),
		cmocka_unit_test_setup(trace_sample_task_falls_back_to_user_mode_as_perf_does, setup),
	};

	return VT_MAIN("mark", tests, NULL, NULL);
}
