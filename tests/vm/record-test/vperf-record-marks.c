// SPDX-License-Identifier: MIT
/*
 * vperf-record-marks: the guest side of the recording's known answers (tests/vm/record-test).
 *
 *   vperf-record-marks conserve THREADS TOTAL
 *	THREADS threads write TOTAL markers between them, named "c", value = thread << 32 | i
 *	(i counting from 0 in each thread), then flush; a marker that finds the thread's buffer
 *	full gets a flush (the module copies the buffer) and one more try, and only then counts
 *	lost; prints "conserve: written W lost L flushes F".
 *   vperf-record-marks stream THREADS SECONDS
 *	THREADS threads write markers named "s", value = thread << 32 | i (i from 0), 100 at a
 *	time with a 10 ms sleep between (under 10 000 a second each), for SECONDS: a run that the
 *	recorder's SIGKILL (record-test's kill case) interrupts; prints "stream: written W lost L".
 *   vperf-record-marks order N PORT [devport]
 *	N triples: marker "A" (value i), a one-byte port write to PORT (an exit the VMM records),
 *	marker "B" (value i); prints "order: triples N lost L".
 *   vperf-record-marks sched THREADS SECONDS [HOP_MS]
 *	THREADS threads burn CPU for SECONDS of wall time, each moving itself to the other CPU
 *	(sched_setaffinity, CPUs 0 and 1) every HOP_MS (default 20) ms of its CPU time; at the end each writes
 *	marker "cpu" whose value is its CLOCK_THREAD_CPUTIME_ID in ns, read just before; prints
 *	"sched: threads T migrations M cpu-ms C".
 *   vperf-record-marks steal SECONDS
 *	in a new thread on CPU 0, marker "steal-begin", then burns CPU for SECONDS of wall time counting
 *	vperf::steal (libvperf, pv backend: the vCPU thread's host run delay while this thread
 *	ran), then marker "steal-end" whose value is the steal in ns; prints "steal: N ns".
 *   vperf-record-marks sample SECONDS
 *	samples its own vperf::vcpu-clock every 1 ms (libvperf, pv backend) while calling
 *	rm_hot3() (3 units of work) and rm_hot1() (1 unit) in turn from rm_burn() for SECONDS;
 *	the module puts each sample, with the user callchain, into the trace; prints "sample:
 *	rm_burn 0xADDR samples N" (ADDR: where rm_burn is loaded, to place nm's symbols).
 *	Built with frame pointers (tests/vm/CMakeLists.txt).
 *   vperf-record-marks profile SECONDS
 *	the same profile with no sampling of its own: rm_burn() for SECONDS in a second thread
 *	(the main thread only waits), for a sampler outside the program (`vperf vm record -F
 *	-g`: vperf_guest.ko's trace sampler, inherited by this process and its threads); prints
 *	"profile: rm_burn 0xADDR tid T".  Both modes also print "MODE: measured rm_hot3 C3 rm_hot1 C1
 *	TSC cycles": the time spent in each (the TSC read around every call), the known answer a
 *	profile's 3:1 is held to (the same loop, but under TCG not exactly 3:1 in time).
 *   vperf-record-marks scribble N CPU
 *	on another CPU than CPU: N/2 markers "w" (value i from 0), a flush, then CPU's ring
 *	header broken through vperf_guest.ko's trace_scribble test hook, marker "scribbled", the
 *	other N/2 "w" markers and a flush; then one marker "x" flushed on CPU itself (whose ring
 *	the host now refuses); prints "scribble: written W lost L; on the broken CPU: flush F"
 *	and the module's trace_stats flush lines.
 *
 *   vperf-record-marks sleep N MS
 *	sleeps N times MS ms (clock_nanosleep, CLOCK_MONOTONIC); prints "sleep: tid T N x MS ms"
 *	(the states case: its waits are the timer's).
 *   vperf-record-marks wake N
 *	two threads pinned to CPU 0 pass a futex word back and forth N times (FUTEX_WAIT until
 *	the other's FUTEX_WAKE): each side's waits end in the other's wake, and every pass makes
 *	one side block (the passer, or the woken side when the wakeup preempts the passer); prints
 *	"wake: waiter W waker K rounds N" (the states case: each side's waits name the other).
 *   vperf-record-marks exits N M PORT
 *	writes N times to PORT from rm_io3 and M times from rm_io1, interleaved (one write of
 *	rm_io1 after each N/M of rm_io3); prints "exits: tid T rm_io3 N rm_io1 M" (the exits
 *	case: `vperf report --exits` names each function with its count of io exits).
 *
 * Exits 0 when every marker call succeeded or was counted lost (-ENOSPC), 1 otherwise, 2 usage.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/io.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include <vperf/vperf.h>

struct worker {
	pthread_t t;
	unsigned int idx;
	uint64_t n, written, lost, flushes, migrations, cpu_ns;
	int err;
};

static void *conserve(void *arg)
{
	struct worker *w = arg;

	for (uint64_t i = 0; i < w->n; i++) {
		int err = vperf_trace_mark("c", (uint64_t)w->idx << 32 | i, VPERF_MARK_INSTANT);

		if (err == -ENOSPC) {
			/* the thread's buffer is full: have the module copy it now, then once more */
			w->flushes++;
			err = vperf_trace_flush();
			if (!err)
				err = vperf_trace_mark("c", (uint64_t)w->idx << 32 | i, VPERF_MARK_INSTANT);
		}
		if (!err) {
			w->written++;
		} else if (err == -ENOSPC) {
			w->lost++;
		} else {
			w->err = err;
			return NULL;
		}
	}
	w->err = vperf_trace_flush();
	return NULL;
}

static double stream_end;
static uint64_t hop_ns = 20000000u;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *stream(void *arg)
{
	struct worker *w = arg;
	uint64_t i = 0;

	while (mono_s() < stream_end) {
		for (int k = 0; k < 100; k++, i++) {
			int err = vperf_trace_mark("s", (uint64_t)w->idx << 32 | i, VPERF_MARK_INSTANT);

			if (err == -ENOSPC) {
				w->lost++;
			} else if (err) {
				w->err = err;
				return NULL;
			} else {
				w->written++;
			}
		}
		usleep(10000);
	}
	w->err = vperf_trace_flush();
	return NULL;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Burn CPU until stream_end, hopping between CPUs 0 and 1 every 20 ms of CPU; then marker "cpu" = CPU ns. */
static void *sched_burn(void *arg)
{
	struct worker *w = arg;
	int cpu = (int)(w->idx & 1), last = -1;
	uint64_t next = 0;
	volatile uint64_t spin = 0;

	while (mono_s() < stream_end) {
		uint64_t now = thread_cpu_ns();

		if (now >= next) {
			int err = pin(cpu);

			if (err) {
				w->err = err;
				return NULL;
			}
			cpu ^= 1;
			next = now + hop_ns;
		}
		if (sched_getcpu() != last) {
			w->migrations += last >= 0;
			last = sched_getcpu();
		}
		for (int k = 0; k < 10000; k++)
			spin++;
	}
	w->cpu_ns = thread_cpu_ns();
	w->err = vperf_trace_mark("cpu", w->cpu_ns, VPERF_MARK_INSTANT);
	if (!w->err)
		w->err = vperf_trace_flush();
	return NULL;
}

/* On CPU 0: "steal-begin", SECONDS of burning, "steal-end" = vperf::steal ns over them.  0, or 1 (said why). */
/*
 * In a thread of its own, so that the thread's life is the counting window give or take its set-up
 * (the states-steal case compares the whole thread's "preempted on the host" with the count).
 */
static int steal_body(double seconds);
static double steal_seconds;
static int steal_status;

static void *steal_thread(void *arg)
{
	(void)arg;
	steal_status = steal_body(steal_seconds);
	return NULL;
}

static int steal(double seconds)
{
	pthread_t t;

	steal_seconds = seconds;
	if (pthread_create(&t, NULL, steal_thread, NULL)) {
		fprintf(stderr, "vperf-record-marks: steal: pthread_create failed\n");
		return 1;
	}
	pthread_join(t, NULL);
	return steal_status;
}

static int steal_body(double seconds)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .backend = "pv" };
	struct vperf_evset *es = NULL;
	struct vperf_count c = { 0 };
	volatile uint64_t spin = 0;
	int err, idx;

	err = pin(0);
	if (err) {
		fprintf(stderr, "vperf-record-marks: steal: CPU 0: %s\n", strerror(-err));
		return 1;
	}
	err = vperf_evset__new(&o, &es);
	if (!err) {
		idx = vperf_evset__add(es, "vperf::steal");
		err = idx < 0 ? idx : vperf_evset__open(es);
	}
	if (!err)
		err = vperf_evset__start(es);
	if (!err)
		err = vperf_trace_mark("steal-begin", 0, VPERF_MARK_BEGIN);
	if (!err) {
		double end = mono_s() + seconds;

		while (mono_s() < end)
			for (int k = 0; k < 10000; k++)
				spin++;
		err = vperf_evset__read_one(es, 0, &c);
	}
	if (!err)
		err = vperf_trace_mark("steal-end", c.value, VPERF_MARK_END);
	if (!err)
		err = vperf_trace_flush();
	if (err) {
		fprintf(stderr, "vperf-record-marks: steal: %s (%s)\n", strerror(-err),
			es ? vperf_evset__strerror(es) : "no event set");
		vperf_evset__delete(es);
		return 1;
	}
	printf("steal: %llu ns in %.1f s\n", (unsigned long long)c.value, seconds);
	vperf_evset__delete(es);
	return 0;
}

/* ---- sample: a known profile ---- */

#define RM_UNIT	20000
static volatile uint64_t rm_sink;
static volatile unsigned long rm_samples;

/* GCC sets up no frame in a leaf even with -fno-omit-frame-pointer: the hot functions call this. */
__attribute__((noinline)) static void rm_tick(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) static void rm_hot3(void)
{
	for (unsigned int i = 0; i < 3 * RM_UNIT; i++)
		rm_sink++;
	rm_tick();
}

__attribute__((noinline)) static void rm_hot1(void)
{
	for (unsigned int i = 0; i < RM_UNIT; i++)
		rm_sink++;
	rm_tick();
}

/* TSC cycles spent in each of the two (the calls' own, measured around them in rm_burn) */
static uint64_t rm_tsc3, rm_tsc1;

static inline uint64_t rm_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

__attribute__((noinline)) static void rm_burn(double end)
{
	while (mono_s() < end) {
		uint64_t a = rm_rdtsc(), b, c;

		rm_hot3();
		b = rm_rdtsc();
		rm_hot1();
		c = rm_rdtsc();
		rm_tsc3 += b - a;
		rm_tsc1 += c - b;
	}
}

static void rm_on_sample(const struct vperf_sample *smp, void *arg)
{
	(void)smp;
	(void)arg;
	rm_samples++;
}

static int sample(double seconds)
{
	struct vperf_evset_opts o = { .size = sizeof(o), .backend = "pv" };
	struct vperf_sample_opts so = { .size = sizeof(so), .period = 1000000, .fn = rm_on_sample };
	struct vperf_evset *es = NULL;
	int err, idx = -1;

	err = vperf_evset__new(&o, &es);
	if (!err) {
		idx = vperf_evset__add(es, "vperf::vcpu-clock");
		err = idx < 0 ? idx : vperf_evset__sample(es, idx, &so);
	}
	if (!err)
		err = vperf_evset__open(es);
	if (!err)
		err = vperf_evset__start(es);
	if (!err) {
		rm_burn(mono_s() + seconds);
		err = vperf_evset__stop(es);
	}
	if (err) {
		fprintf(stderr, "vperf-record-marks: sample: %s (%s)\n", strerror(-err),
			es ? vperf_evset__strerror(es) : "no event set");
		vperf_evset__delete(es);
		return 1;
	}
	printf("sample: rm_burn %p samples %lu\n", (void *)rm_burn, rm_samples);
	printf("sample: measured rm_hot3 %llu rm_hot1 %llu TSC cycles\n", (unsigned long long)rm_tsc3,
	       (unsigned long long)rm_tsc1);
	vperf_evset__delete(es);
	return 0;
}

static double profile_end;
static volatile pid_t profile_tid;

static void *profile_thread(void *arg)
{
	(void)arg;
	profile_tid = gettid();
	rm_burn(profile_end);
	return NULL;
}

static int profile(double seconds)
{
	pthread_t t;

	profile_end = mono_s() + seconds;
	if (pthread_create(&t, NULL, profile_thread, NULL)) {
		fprintf(stderr, "vperf-record-marks: profile: cannot create a thread\n");
		return 1;
	}
	pthread_join(t, NULL);
	printf("profile: rm_burn %p tid %d\n", (void *)rm_burn, (int)profile_tid);
	printf("profile: measured rm_hot3 %llu rm_hot1 %llu TSC cycles\n", (unsigned long long)rm_tsc3,
	       (unsigned long long)rm_tsc1);
	return 0;
}

static int mark_n(const char *name, uint64_t from, uint64_t n, uint64_t *lost)
{
	for (uint64_t i = from; i < from + n; i++) {
		int err = vperf_trace_mark(name, i, VPERF_MARK_INSTANT);

		if (err == -ENOSPC && !vperf_trace_flush())
			err = vperf_trace_mark(name, i, VPERF_MARK_INSTANT);
		if (err == -ENOSPC)
			++*lost;
		else if (err)
			return err;
	}
	return vperf_trace_flush();
}

/* Break CPU broken's ring header from another CPU, with markers around it.  0, or 1 (said why). */
static int scribble(uint64_t n, int broken)
{
	const char *hook = "/sys/module/vperf_guest/parameters/trace_scribble";
	uint64_t lost = 0;
	char line[256];
	FILE *f;
	int err, ferr;

	err = pin(broken ? 0 : 1);
	if (!err)
		err = mark_n("w", 0, n / 2, &lost);
	if (err) {
		fprintf(stderr, "vperf-record-marks: scribble: before: %s\n", strerror(-err));
		return 1;
	}
	f = fopen(hook, "w");
	if (!f || fprintf(f, "%d\n", broken) < 0 || fclose(f)) {
		fprintf(stderr, "vperf-record-marks: scribble: %s: %s\n", hook, strerror(errno));
		return 1;
	}
	err = vperf_trace_mark("scribbled", (uint64_t)broken, VPERF_MARK_INSTANT);
	if (!err)
		err = mark_n("w", n / 2, n - n / 2, &lost);
	if (err) {
		fprintf(stderr, "vperf-record-marks: scribble: after: %s\n", strerror(-err));
		return 1;
	}
	err = pin(broken);
	ferr = err ? err : vperf_trace_mark("x", 0, VPERF_MARK_INSTANT);
	if (!ferr)
		ferr = vperf_trace_flush();
	printf("scribble: written %llu lost %llu; on the broken CPU: flush %s\n", (unsigned long long)(n - lost),
	       (unsigned long long)lost, ferr ? strerror(-ferr) : "ok");
	f = fopen("/sys/module/vperf_guest/parameters/trace_stats", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "flush"))
			printf("scribble: trace_stats: %s", line);
	if (f)
		fclose(f);
	return 0;
}

static int parse(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* nr threads running fn, total markers split between them; their counts summed into *sum: 0, or 1 (said why). */
static int run_workers(void *(*fn)(void *), unsigned int nr, uint64_t total, struct worker *sum)
{
	struct worker w[64];
	int ret = 0;

	*sum = (struct worker){ 0 };
	for (unsigned int i = 0; i < nr; i++) {
		w[i] = (struct worker){ .idx = i, .n = total / nr + (i < total % nr) };
		if (pthread_create(&w[i].t, NULL, fn, &w[i])) {
			fprintf(stderr, "vperf-record-marks: pthread_create failed\n");
			return 1;
		}
	}
	for (unsigned int i = 0; i < nr; i++) {
		pthread_join(w[i].t, NULL);
		if (w[i].err) {
			fprintf(stderr, "vperf-record-marks: thread %u: %s\n", i, strerror(-w[i].err));
			ret = 1;
		}
		sum->written += w[i].written;
		sum->lost += w[i].lost;
		sum->flushes += w[i].flushes;
		sum->migrations += w[i].migrations;
		sum->cpu_ns += w[i].cpu_ns;
	}
	return ret;
}

/* sleep: N sleeps of MS ms. */
static int sleeper(uint64_t n, uint64_t ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 };

	for (uint64_t i = 0; i < n; i++) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);

		if (err) {
			fprintf(stderr, "vperf-record-marks: clock_nanosleep: %s\n", strerror(err));
			return 1;
		}
	}
	printf("sleep: tid %ld %llu x %llu ms\n", (long)syscall(SYS_gettid), (unsigned long long)n,
	       (unsigned long long)ms);
	return 0;
}

/* wake: the futex word is whose turn it is (0 the waiter's, 1 the waker's); each side waits for its turn. */
static uint32_t wake_turn;
static uint64_t wake_rounds;
static long wake_tid[2];

static void turn_wait(uint32_t mine)
{
	while (__atomic_load_n(&wake_turn, __ATOMIC_ACQUIRE) != mine)
		syscall(SYS_futex, &wake_turn, FUTEX_WAIT_PRIVATE, 1 - mine, NULL, NULL, 0);
}

static void turn_pass(uint32_t to)
{
	__atomic_store_n(&wake_turn, to, __ATOMIC_RELEASE);
	syscall(SYS_futex, &wake_turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *wake_side(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;

	if (pin(0))
		return (void *)1;
	wake_tid[me] = (long)syscall(SYS_gettid);
	for (uint64_t i = 0; i < wake_rounds; i++) {
		turn_wait(me);
		turn_pass(1 - me);
	}
	return NULL;
}

static int waker(uint64_t n)
{
	pthread_t t[2];
	void *r0 = NULL, *r1 = NULL;

	wake_rounds = n;
	wake_turn = 1;	/* the waker goes first: the waiter starts by waiting */
	if (pthread_create(&t[0], NULL, wake_side, (void *)0) ||
	    pthread_create(&t[1], NULL, wake_side, (void *)1)) {
		fprintf(stderr, "vperf-record-marks: pthread_create failed\n");
		return 1;
	}
	pthread_join(t[0], &r0);
	pthread_join(t[1], &r1);
	if (r0 || r1) {
		fprintf(stderr, "vperf-record-marks: wake: could not pin to CPU 0\n");
		return 1;
	}
	printf("wake: waiter %ld waker %ld rounds %llu\n", wake_tid[0], wake_tid[1],
	       (unsigned long long)n);
	return 0;
}

/*
 * One port write each: the guest RIP of the exit is inside the function that made it.  They
 * write different values so that the compiler cannot fold them into one (-fipa-icf).
 */
__attribute__((noinline)) static void rm_io3(unsigned short port)
{
	outb(3, port);
	__asm__ volatile("");
}

__attribute__((noinline)) static void rm_io1(unsigned short port)
{
	outb(1, port);
	__asm__ volatile("");
}

static int io_exits(uint64_t n, uint64_t m, unsigned short port)
{
	uint64_t done3 = 0, done1 = 0;

	if (ioperm(port, 1, 1)) {
		perror("vperf-record-marks: ioperm");
		return 1;
	}
	while (done3 < n || done1 < m) {
		if (done3 < n)
			rm_io3(port), done3++;
		if (done1 < m && (done3 == n || done3 * m >= (done1 + 1) * n))
			rm_io1(port), done1++;
	}
	printf("exits: tid %ld rm_io3 %llu rm_io1 %llu\n", (long)syscall(SYS_gettid),
	       (unsigned long long)done3, (unsigned long long)done1);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t a, b, c;

	if (argc == 4 && !strcmp(argv[1], "conserve") && !parse(argv[2], 1, 64, &a) &&
	    !parse(argv[3], 1, 100000000, &b)) {
		struct worker sum;
		int ret = run_workers(conserve, (unsigned int)a, b, &sum);

		printf("conserve: written %llu lost %llu flushes %llu\n", (unsigned long long)sum.written,
		       (unsigned long long)sum.lost, (unsigned long long)sum.flushes);
		return ret;
	}
	if (argc == 4 && !strcmp(argv[1], "stream") && !parse(argv[2], 1, 64, &a) &&
	    !parse(argv[3], 1, 3600, &b)) {
		struct worker sum;
		int ret;

		stream_end = mono_s() + (double)b;
		ret = run_workers(stream, (unsigned int)a, 0, &sum);
		printf("stream: written %llu lost %llu\n", (unsigned long long)sum.written,
		       (unsigned long long)sum.lost);
		return ret;
	}
	if ((argc == 4 || (argc == 5 && !strcmp(argv[4], "devport"))) && !strcmp(argv[1], "order") &&
	    !parse(argv[2], 1, 10000000, &a) && !parse(argv[3], 1, 0xffff, &b)) {
		uint64_t lost = 0;
		int port_fd = -1;
		unsigned char zero = 0;

		/*
		 * devport: the write from the kernel, through /dev/port: under QEMU as the VMM of the
		 * nested stack a user-mode out faults (#GP) despite ioperm (the emulated CPU's I/O
		 * bitmap check, not the guest's kernel: the same guest passes under vperf-vmm).
		 */
		if (argc == 5) {
			port_fd = open("/dev/port", O_WRONLY | O_CLOEXEC);
			if (port_fd < 0) {
				perror("vperf-record-marks: /dev/port");
				return 1;
			}
		} else if (ioperm((unsigned long)b, 1, 1)) {
			perror("vperf-record-marks: ioperm");
			return 1;
		}
		for (uint64_t i = 0; i < a; i++) {
			int e1 = vperf_trace_mark("A", i, VPERF_MARK_INSTANT);

			if (port_fd < 0)
				outb(0, (unsigned short)b);
			else if (pwrite(port_fd, &zero, 1, (off_t)b) != 1)
				return perror("vperf-record-marks: /dev/port write"), 1;
			int e2 = vperf_trace_mark("B", i, VPERF_MARK_INSTANT);

			if ((e1 && e1 != -ENOSPC) || (e2 && e2 != -ENOSPC)) {
				fprintf(stderr, "vperf-record-marks: marker: %s\n", strerror(-(e1 ? e1 : e2)));
				return 1;
			}
			lost += (e1 == -ENOSPC) + (e2 == -ENOSPC);
		}
		vperf_trace_flush();
		printf("order: triples %llu lost %llu\n", (unsigned long long)a, (unsigned long long)lost);
		return 0;
	}
	if ((argc == 4 || (argc == 5 && !parse(argv[4], 1, 100000, &hop_ns))) && !strcmp(argv[1], "sched") &&
	    !parse(argv[2], 1, 64, &a) && !parse(argv[3], 1, 3600, &b)) {
		struct worker sum;
		int ret;

		hop_ns *= argc == 5 ? 1000000u : 1u;
		stream_end = mono_s() + (double)b;
		ret = run_workers(sched_burn, (unsigned int)a, 0, &sum);
		printf("sched: threads %llu migrations %llu cpu-ms %.1f\n", (unsigned long long)a,
		       (unsigned long long)sum.migrations, (double)sum.cpu_ns / 1e6);
		return ret;
	}
	if (argc == 4 && !strcmp(argv[1], "scribble") && !parse(argv[2], 2, 10000000, &a) &&
	    !parse(argv[3], 0, 1, &b))
		return scribble(a, (int)b);
	if (argc == 3 && !strcmp(argv[1], "sample") && !parse(argv[2], 1, 3600, &a))
		return sample((double)a);
	if (argc == 3 && !strcmp(argv[1], "steal") && !parse(argv[2], 1, 3600, &a))
		return steal((double)a);
	if (argc == 3 && !strcmp(argv[1], "profile") && !parse(argv[2], 1, 3600, &a))
		return profile((double)a);
	if (argc == 4 && !strcmp(argv[1], "sleep") && !parse(argv[2], 1, 100000, &a) &&
	    !parse(argv[3], 1, 10000, &b))
		return sleeper(a, b);
	if (argc == 3 && !strcmp(argv[1], "wake") && !parse(argv[2], 1, 10000000, &a))
		return waker(a);
	if (argc == 5 && !strcmp(argv[1], "exits") && !parse(argv[2], 0, 10000000, &a) &&
	    !parse(argv[3], 0, 10000000, &b) && !parse(argv[4], 1, 0xffff, &c))
		return io_exits(a, b, (unsigned short)c);
	fprintf(stderr, "usage: vperf-record-marks conserve THREADS(1..64) TOTAL | stream THREADS SECONDS | "
		"order N PORT [devport] | sched THREADS SECONDS [HOP_MS] | steal SECONDS | sample SECONDS | profile SECONDS | scribble N CPU(0..1) | "
		"sleep N MS | wake N | exits N M PORT\n");
	return 2;
}
