// SPDX-License-Identifier: MIT
/* specbench: see specbench.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <vperf/vperf.h>

#include "specbench.h"

struct sb_thread {
	char name[16];
	struct vperf_evset *es;
	atomic_ulong samples;
};

static _Thread_local struct sb_thread self;
static atomic_int nr_threads;
static uint64_t t_begin;
static const char *prog = "bench";

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_sample(const struct vperf_sample *s, void *arg)
{
	struct sb_thread *t = arg;

	(void)s;
	atomic_fetch_add_explicit(&t->samples, 1, memory_order_relaxed);
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < lo || n > hi) {
		fprintf(stderr, "%s: %s='%s': a number from %ld to %ld\n", prog, name, v, lo, hi);
		exit(2);
	}
	return n;
}

static void start_sampling(void)
{
	long period = env_long("SPEC_SAMPLE_PERIOD_NS", 0, 1, 1000000000000L);
	const char *ev = getenv("SPEC_SAMPLE_EVENT");
	struct vperf_sample_opts so = { .size = sizeof(so) };
	struct vperf_evset_opts eo = { .size = sizeof(eo) };

	if (!period)
		return;
	if (!ev || !*ev)
		ev = "vperf::vcpu-clock";
	so.period = (uint64_t)period;
	so.fn = on_sample;
	so.arg = &self;
	so.max_frames = (uint32_t)env_long("SPEC_SAMPLE_FRAMES", 0, 0, VPERF_MAX_CALLCHAIN);
	eo.target = VPERF_TARGET_SELF;
	if (vperf_evset__new(&eo, &self.es) || vperf_evset__add(self.es, ev) < 0 ||
	    vperf_evset__sample(self.es, 0, &so) || vperf_evset__open(self.es) ||
	    vperf_evset__start(self.es)) {
		fprintf(stderr, "%s: thread %s: cannot sample %s every %ld: %s\n", prog, self.name, ev,
			period, self.es ? vperf_evset__strerror(self.es) : strerror(ENOMEM));
		exit(3);
	}
}

void sb_thread_begin(const char *name)
{
	snprintf(self.name, sizeof(self.name), "%s", name);
	pthread_setname_np(pthread_self(), self.name);
	atomic_fetch_add(&nr_threads, 1);
	start_sampling();
}

static void log_line(const char *line, size_t len)
{
	const char *path = getenv("SPEC_THREAD_LOG");
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, line, len) != (ssize_t)len) {
		fprintf(stderr, "%s: cannot write SPEC_THREAD_LOG %s: %s\n", prog, path, strerror(errno));
		exit(2);
	}
	close(fd);
}

void sb_thread_end(void)
{
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID), lost = 0;
	char line[160];
	int n;

	if (self.es) {
		vperf_evset__stop(self.es);
		lost = vperf_evset__samples_lost(self.es);
		vperf_evset__delete(self.es);
		self.es = NULL;
	}
	n = snprintf(line, sizeof(line), "thread tid=%ld comm=%s cpu_ns=%llu samples=%lu lost=%llu\n",
		     (long)syscall(SYS_gettid), self.name, (unsigned long long)cpu,
		     atomic_load(&self.samples), (unsigned long long)lost);
	log_line(line, (size_t)n);
}

static int usage(const char *msg)
{
	if (msg)
		fprintf(stderr, "%s: %s\n", prog, msg);
	fprintf(stderr, "usage: %s --size test|train|ref [--threads N] [--out FILE]\n", prog);
	return -EINVAL;
}

int sb_main_begin(int argc, char **argv, const char *name, struct sb_args *a)
{
	int have_size = 0;
	const char *out = NULL;

	prog = name;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--help")) {
			usage(NULL);
			exit(0);
		} else if (!strcmp(argv[i], "--size") && v) {
			if (!strcmp(v, "test"))
				a->size = SB_TEST;
			else if (!strcmp(v, "train"))
				a->size = SB_TRAIN;
			else if (!strcmp(v, "ref"))
				a->size = SB_REF;
			else
				return usage("--size: test, train or ref");
			have_size = 1;
			i++;
		} else if (!strcmp(argv[i], "--threads") && v) {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end || n < 1 || n > 256)
				return usage("--threads: a number from 1 to 256");
			a->threads = (int)n;
			i++;
		} else if (!strcmp(argv[i], "--out") && v) {
			out = v;
			i++;
		} else {
			fprintf(stderr, "%s: unknown or incomplete option '%s'\n", prog, argv[i]);
			return usage(NULL);
		}
	}
	if (!have_size)
		return usage("--size is required");
	a->out = stdout;
	if (out && !(a->out = fopen(out, "w"))) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, out, strerror(errno));
		return -errno;
	}
	t_begin = clock_ns(CLOCK_MONOTONIC);
	sb_thread_begin("main");
	return 0;
}

int sb_main_end(struct sb_args *a)
{
	char line[96];
	int n, bad;

	sb_thread_end();
	n = snprintf(line, sizeof(line), "bench elapsed_ns=%llu threads=%d\n",
		     (unsigned long long)(clock_ns(CLOCK_MONOTONIC) - t_begin), atomic_load(&nr_threads));
	bad = ferror(a->out) | (a->out == stdout ? fflush(a->out) : fclose(a->out));
	if (bad) {
		fprintf(stderr, "%s: writing the result failed\n", prog);
		return 1;
	}
	log_line(line, (size_t)n);
	return 0;
}
