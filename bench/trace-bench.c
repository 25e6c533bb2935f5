// SPDX-License-Identifier: MIT
/*
 * trace-bench: what an event costs a guest thread on three ways into a trace, and how
 * much of a guest's fastest output the recording keeps (bench/trace/run.sh runs it
 * inside `vperf vm record`).
 *
 *   trace-bench cost [--events N] [--rounds R] [--port P]
 *	N events per block (default 10000), R rounds (default 5), each round one block per
 *	method in a rotating order:
 *	  marker        vperf_trace_mark() (libvperf: stores into the thread's marker buffer)
 *	  hypercall     one exit per event that the VMM records: a 4-byte port write to P
 *	                (default 0x5700, no device there), hypertracing's design of a
 *	                hypercall per event
 *	  trace_marker  a write() of the event to tracefs's trace_marker (of an ftrace instance
 *	                of its own, created and removed here)
 *	Per block: wall ns, the thread's VM exits (vperf::exits, read exactly) and system
 *	calls (a raw_syscalls:sys_enter counter of the thread), less those of an empty block
 *	(the reads' own). Prints "cost ..." lines, then the medians ("result ...").
 *   trace-bench drain [--seconds S] [--rate R] [--name NAME]
 *	markers named NAME (default "d") as fast as one thread can (R 0, the default) or at R
 *	per second, for S seconds (default 10); a marker that finds the buffer full gets a
 *	flush and one more try, and is only then counted refused. Reads vperf_guest.ko's
 *	trace_stats before and after: prints "drain NAME ... produced P refused F lost L"
 *	where P were accepted and L of them the module dropped (a full ring).
 *
 * Exit status 0 when it measured, 1 on an error (said on stderr), 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <vperf/vperf.h>

enum { M_MARKER, M_HYPERCALL, M_TRACE_MARKER, NR_METHODS };
static const char *const method_name[NR_METHODS] = { "marker", "hypercall", "trace_marker" };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128];

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace_marker", dirs[i]);
		if (access(path, F_OK) == 0)
			return dirs[i];
	}
	if (mount("nodev", dirs[0], "tracefs", 0, NULL) == 0)
		return dirs[0];
	return NULL;
}

/* A counter of the calling thread's system calls (raw_syscalls:sys_enter), or -1. */
static int syscall_counter(const char *tfs)
{
	struct perf_event_attr attr;
	char path[160];
	FILE *f;
	unsigned long long id;
	int fd;

	snprintf(path, sizeof(path), "%s/events/raw_syscalls/sys_enter/id", tfs);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &id) != 1) {
		fprintf(stderr, "trace-bench: %s: %s\n", path, f ? "unreadable" : strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = id;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "trace-bench: perf_event_open(raw_syscalls:sys_enter): %s\n", strerror(errno));
	return fd;
}

struct counters {
	struct vperf_evset *exits;	/* vperf::exits of this thread, read exactly */
	int sc_fd;
};

static int counts(struct counters *c, uint64_t *exits, uint64_t *calls)
{
	struct vperf_count v;

	if (read(c->sc_fd, calls, sizeof(*calls)) != (ssize_t)sizeof(*calls))
		return -1;
	if (vperf_evset__read_one(c->exits, 0, &v))
		return -1;
	*exits = v.value;
	return 0;
}

struct block {
	double ns, exits, calls;	/* per event */
};

static int tm_fd = -1;
static unsigned short port;

/* n events of method m; lost: markers refused (the buffer was full). */
static int run_events(int m, long n, uint64_t *lost)
{
	char buf[32];

	for (long i = 0; i < n; i++) {
		switch (m) {
		case M_MARKER: {
			int e = vperf_trace_mark("m", (uint64_t)i, VPERF_MARK_INSTANT);

			if (e == -ENOSPC) {
				++*lost;
			} else if (e) {
				fprintf(stderr, "trace-bench: vperf_trace_mark: %s\n", strerror(-e));
				return -1;
			}
			break;
		}
		case M_HYPERCALL:
			outl((unsigned int)i, port);
			break;
		case M_TRACE_MARKER: {
			int len = snprintf(buf, sizeof(buf), "m %ld\n", i);

			if (write(tm_fd, buf, (size_t)len) != len) {
				fprintf(stderr, "trace-bench: write trace_marker: %s\n", strerror(errno));
				return -1;
			}
			break;
		}
		}
	}
	return 0;
}

/* One block of n events (n 0: the reads alone); totals, not per event. */
static int block(struct counters *c, int m, long n, double *ns, double *exits, double *calls, uint64_t *lost)
{
	uint64_t e0, e1, s0, s1, t0, t1;

	t0 = now_ns();
	if (counts(c, &e0, &s0))
		return -1;
	if (run_events(m, n, lost))
		return -1;
	if (counts(c, &e1, &s1))
		return -1;
	t1 = now_ns();
	*ns = (double)(t1 - t0);
	*exits = (double)(e1 - e0);
	*calls = (double)(s1 - s0);
	if (m == M_MARKER && vperf_trace_flush())
		return -1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cost(long events, int rounds)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .backend = "pv" };
	struct counters c = { NULL, -1 };
	double ns[NR_METHODS][64], ex[NR_METHODS][64], sc[NR_METHODS][64];
	double base_ns = 0, base_ex = 0, base_sc = 0;
	uint64_t lost = 0;
	const char *tfs = tracefs();
	char path[160], inst[128];
	int ret = 1;

	if (!tfs) {
		fprintf(stderr, "trace-bench: no tracefs (trace_marker) in this guest\n");
		return 1;
	}
	/*
	 * An ftrace instance of our own: its buffer is on (the top one may be off, and then
	 * trace_marker refuses with EBADF) and holds nothing but these writes.
	 */
	snprintf(inst, sizeof(inst), "%s/instances/trace-bench", tfs);
	if (mkdir(inst, 0700) && errno != EEXIST) {
		fprintf(stderr, "trace-bench: mkdir %s: %s\n", inst, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/trace_marker", inst);
	tm_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (tm_fd < 0) {
		fprintf(stderr, "trace-bench: %s: %s\n", path, strerror(errno));
		rmdir(inst);
		return 1;
	}
	if (ioperm(port, 4, 1)) {
		fprintf(stderr, "trace-bench: ioperm(0x%x): %s\n", port, strerror(errno));
		goto out;
	}
	c.sc_fd = syscall_counter(tfs);
	if (c.sc_fd < 0)
		goto out;
	if (vperf_evset__new(&o, &c.exits) || vperf_evset__add(c.exits, "vperf::exits") ||
	    vperf_evset__open(c.exits) || vperf_evset__start(c.exits)) {
		fprintf(stderr, "trace-bench: vperf::exits on pv: %s\n",
			c.exits ? vperf_evset__strerror(c.exits) : "out of memory");
		goto out;
	}
	printf("cost events %ld rounds %d port 0x%x exits_read %s\n", events, rounds, port,
	       vperf_read_path_name(vperf_evset__read_path(c.exits, 0)));
	/* warm up: the marker buffer's mapping, the page cache of trace_marker, the exits path */
	for (int m = 0; m < NR_METHODS; m++) {
		double a, b, d;

		if (block(&c, m, 100, &a, &b, &d, &lost))
			goto out;
	}
	for (int r = 0; r < rounds; r++) {
		double a, b, d;

		/* the reads' own time, exits and calls, subtracted from every block */
		if (block(&c, M_HYPERCALL, 0, &a, &b, &d, &lost))
			goto out;
		base_ns += a / rounds;
		base_ex += b / rounds;
		base_sc += d / rounds;
		for (int k = 0; k < NR_METHODS; k++) {
			int m = (r + k) % NR_METHODS;

			if (block(&c, m, events, &ns[m][r], &ex[m][r], &sc[m][r], &lost))
				goto out;
			printf("cost round %d %s ns %.0f exits %.0f syscalls %.0f\n", r, method_name[m],
			       ns[m][r], ex[m][r], sc[m][r]);
		}
	}
	printf("cost empty_block ns %.0f exits %.2f syscalls %.2f\n", base_ns, base_ex, base_sc);
	for (int m = 0; m < NR_METHODS; m++) {
		double n = median(ns[m], rounds), e = median(ex[m], rounds), s = median(sc[m], rounds);

		printf("result %s ns_per_event %.1f exits_per_event %.5f syscalls_per_event %.5f\n",
		       method_name[m], (n - base_ns) / (double)events, (e - base_ex) / (double)events,
		       (s - base_sc) / (double)events);
	}
	printf("result marker_lost %" PRIu64 "\n", lost);
	/* the most events per second a hypercall per event can reach, for the drain */
	{
		double h = median(ns[M_HYPERCALL], rounds) - base_ns;

		printf("result hypercall_rate %.0f\n", h > 0 ? 1e9 * (double)events / h : 0.0);
	}
	ret = 0;
out:
	vperf_evset__delete(c.exits);
	if (c.sc_fd >= 0)
		close(c.sc_fd);
	close(tm_fd);
	rmdir(inst);
	return ret;
}

/* vperf_guest.ko's counts of marker records: produced and lost (a full ring). */
static int mark_stats(uint64_t *produced, uint64_t *lost, uint64_t *user_lost)
{
	FILE *f = fopen("/sys/module/vperf_guest/parameters/trace_stats", "r");
	char line[256];
	int found = 0;

	if (!f) {
		fprintf(stderr, "trace-bench: vperf_guest's trace_stats: %s\n", strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "type mark produced %llu lost %llu", &a, &b) == 2) {
			*produced = a;
			*lost = b;
			found |= 1;
		} else if (sscanf(line, "marks user_lost %llu", &a) == 1) {
			*user_lost = a;
			found |= 2;
		}
	}
	fclose(f);
	if (found != 3) {
		fprintf(stderr, "trace-bench: trace_stats has no mark counts\n");
		return -1;
	}
	return 0;
}

static int drain(double seconds, double rate, const char *name)
{
	uint64_t p0, l0, u0, p1, l1, u1, produced = 0, refused = 0, flushes = 0, t0, t1, end;
	double per_ns = rate > 0 ? rate / 1e9 : 0;
	int e;

	if (mark_stats(&p0, &l0, &u0))
		return 1;
	t0 = now_ns();
	end = t0 + (uint64_t)(seconds * 1e9);
	for (uint64_t i = 0;; i++) {
		if ((i & 15) == 0) {
			uint64_t t = now_ns();

			if (t >= end)
				break;
			/* at a rate: wait until this batch of 16 is due */
			while (per_ns > 0 && (double)(t - t0) * per_ns < (double)i)
				t = now_ns();
		}
		e = vperf_trace_mark(name, i, VPERF_MARK_INSTANT);
		if (e == -ENOSPC) {
			flushes++;
			e = vperf_trace_flush();
			if (!e)
				e = vperf_trace_mark(name, i, VPERF_MARK_INSTANT);
		}
		if (!e) {
			produced++;
		} else if (e == -ENOSPC) {
			refused++;
		} else {
			fprintf(stderr, "trace-bench: vperf_trace_mark: %s\n", strerror(-e));
			return 1;
		}
	}
	e = vperf_trace_flush();
	t1 = now_ns();
	if (e) {
		fprintf(stderr, "trace-bench: vperf_trace_flush: %s\n", strerror(-e));
		return 1;
	}
	if (mark_stats(&p1, &l1, &u1))
		return 1;
	printf("drain %s rate %.0f seconds %.3f produced %" PRIu64 " refused %" PRIu64 " flushes %" PRIu64
	       " module_produced %" PRIu64 " lost %" PRIu64 " user_lost %" PRIu64 "\n", name, rate,
	       (double)(t1 - t0) / 1e9, produced, refused, flushes, p1 - p0, l1 - l0, u1 - u0);
	return 0;
}

static int number(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "trace-bench: '%s' is not a number in [%g, %g]\n", s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: trace-bench cost [--events N] [--rounds R] [--port P]\n"
		   "       trace-bench drain [--seconds S] [--rate R] [--name NAME]\n");
}

int main(int argc, char **argv)
{
	double events = 10000, rounds = 5, p = 0x5700, seconds = 10, rate = 0;
	const char *name = "d";

	if (argc < 2 || (strcmp(argv[1], "cost") && strcmp(argv[1], "drain"))) {
		usage(stderr);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad;

		if (!v) {
			fprintf(stderr, "trace-bench: %s needs a value\n", o);
			return 2;
		}
		if (!strcmp(o, "--events"))
			bad = number(v, 1, 1e7, &events);
		else if (!strcmp(o, "--rounds"))
			bad = number(v, 1, 64, &rounds);
		else if (!strcmp(o, "--port"))
			bad = number(v, 1, 0xfffc, &p);
		else if (!strcmp(o, "--seconds"))
			bad = number(v, 0.1, 3600, &seconds);
		else if (!strcmp(o, "--rate"))
			bad = number(v, 0, 1e9, &rate);
		else if (!strcmp(o, "--name"))
			bad = (name = v, strlen(v) < 1 || strlen(v) > 64);
		else {
			fprintf(stderr, "trace-bench: unknown option %s\n", o);
			usage(stderr);
			return 2;
		}
		if (bad)
			return 2;
		i++;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	port = (unsigned short)p;
	if (!strcmp(argv[1], "cost"))
		return cost((long)events, (int)rounds);
	return drain(seconds, rate, name);
}
