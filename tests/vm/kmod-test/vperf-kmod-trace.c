/* SPDX-License-Identifier: MIT */
/*
 * vperf-kmod-trace MODE: the L2 tests of vperf_guest.ko's tracing (docs/abi.md
 * 2.5 version 2, 7.3) with tracing on (the parameter `trace`), each a known
 * answer read from the module's counters (the parameter trace_stats, per
 * record type, since load: every check takes differences):
 *   on       every online CPU has a ring
 *   marks N  a process makes N markers with libvperf's vperf_trace_mark(),
 *            all but the first under seccomp strict mode's rule (a system
 *            call other than read/write/exit/sigreturn kills it; as a
 *            filter, since strict mode also turns rdtsc off), in a 1 MiB
 *            buffer, and exits:
 *            exactly N marker records copied, none lost or refused, each
 *            with the kernel's tid (trace_watch), and the vCPUs' exits
 *            (VPERF_IOC_VCPU_TOTALS) grow by far less than N; prints the
 *            cycles per marker
 *   wrap     2000 markers of every name length through a 4 KiB buffer,
 *            flushed (VPERF_IOC_MARK_FLUSH) every 30: all 2000 copied
 *   lost     1000 markers into a 4 KiB buffer with no flush: the module
 *            reports exactly as many lost (LOST records, source USER) as
 *            vperf_trace_marks_lost() counted, and copies the rest
 *   sleep    a thread sleeps 100 times: as many switch records out of it and
 *            into it as the kernel counted context switches of it (getrusage;
 *            a sleep whose timer fires before the thread blocks switches
 *            nothing), at least 90 of them voluntary, and a wakeup record for
 *            each of those
 *   hostile  a process writes garbage into its marker buffer between valid
 *            records (bad type, flags, kind, name_len, size, padding,
 *            UTF-8, a NUL in the name, a claimed pid/tid/cpu), a size that
 *            cannot be followed, heads past the end and behind the tail,
 *            while another process makes 1000 good markers: the module
 *            copies exactly the valid records (with the writer's true tid),
 *            refuses exactly the bad ones (counted, LOST INVALID records),
 *            and every good marker of the other process; the mapping's
 *            refusals (size, private, another file)
 *   sample   a thread samples on vcpu-clock every 2 ms for 300 ms: one
 *            SAMPLE record per sampling NMI (its ring's records + lost)
 *   procs    20 fork + exec + exit of /bin/true: >= 20 records of each
 *   irq      timer, IPI and device interrupts were recorded, with vectors
 *            (none unknown)
 *   off      (after `trace` was set to 0) no ring left; every byte written
 *            was consumed by the host, and all of it through TRACE_FLUSH
 *            results (vperf-vmm without a recording); nothing lost
 *   loaded   (module loaded with trace=1 trace_ring_kb=64) on, rings of 64 KiB
 *   cost     prints TSC cycles per marker and per getppid(), interleaved
 *            (a figure: no verdict)
 *   sampler  at kernel.perf_event_paranoid >= 2 an unprivileged trace sampler
 *            needs VPERF_TRACE_SAMPLER_USER (EACCES without); root and
 *            paranoid 1 do not
 *   markquota one user maps at most max_user_kb of marker buffers (EDQUOT),
 *            and root still gets one from the pool
 *   exitdrain stress: processes exit while their marker file is released:
 *            every marker copied
 *   stats    print trace_stats
 * Prints "kmod-trace: MODE ok|FAIL what" per check, then "kmod-trace: MODE
 * PASSED|FAILED".  Exit 0 when all checks hold.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <vperf/abi.h>
#include <vperf/vperf.h>
#include "vperf_guest_uapi.h"
#include <vperf/trace_rec.h>

#define PARAMS "/sys/module/vperf_guest/parameters/"

static int fails;

static void check(int ok, const char *mode, const char *what)
{
	printf("kmod-trace: %s %s %s\n", mode, ok ? "ok" : "FAIL", what);
	if (!ok)
		fails++;
}

/* ---- trace_stats ---- */

struct stats {
	int on, rings, cpus, ring_kb, v2, marks;
	unsigned long long bytes, flushed, consumed, head, ring_lost, flushes, flush_errors, watermarks;
	unsigned long long produced[VPERF_TRACE_NR_TYPES], lost[VPERF_TRACE_NR_TYPES];
	unsigned long long irq[VPERF_TRACE_IRQ_NR_KINDS], novector;
	unsigned int vec_timer, vec_resched, vec_callfunc, vec_device;
	unsigned long long user_lost, invalid, orphaned;
	int watch;
	unsigned long long w_out, w_in, w_woken, w_marks;
};

static const char *const type_names[VPERF_TRACE_NR_TYPES] = {
	[VPERF_TRACE_SCHED_SWITCH] = "sched_switch", [VPERF_TRACE_SCHED_WAKEUP] = "sched_wakeup",
	[VPERF_TRACE_FORK] = "fork", [VPERF_TRACE_EXEC] = "exec", [VPERF_TRACE_EXIT] = "exit",
	[VPERF_TRACE_IRQ] = "irq", [VPERF_TRACE_SAMPLE] = "sample", [VPERF_TRACE_MARK] = "mark",
	[VPERF_TRACE_LOST] = "lost", [VPERF_TRACE_MMAP] = "mmap",
};

/* 0, or -1 when the parameter cannot be read or a line is missing. */
static int read_stats(struct stats *s)
{
	char line[512], name[32];
	unsigned long long p, l;
	int lines = 0;
	FILE *f;

	memset(s, 0, sizeof(*s));
	f = fopen(PARAMS "trace_stats", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "on %d rings %d cpus %d ring_kb %d v2 %d marks %d", &s->on, &s->rings,
			   &s->cpus, &s->ring_kb, &s->v2, &s->marks) == 6)
			lines++;
		else if (sscanf(line, "bytes %llu flushed %llu consumed %llu head %llu ring_lost %llu "
				"flushes %llu flush_errors %llu watermarks %llu", &s->bytes, &s->flushed,
				&s->consumed, &s->head, &s->ring_lost, &s->flushes, &s->flush_errors,
				&s->watermarks) == 8)
			lines++;
		else if (sscanf(line, "type %31s produced %llu lost %llu", name, &p, &l) == 3) {
			for (int i = 1; i < VPERF_TRACE_NR_TYPES; i++)
				if (!strcmp(name, type_names[i])) {
					s->produced[i] = p;
					s->lost[i] = l;
					lines++;
				}
		} else if (sscanf(line, "irq other %llu timer %llu resched %llu callfunc %llu device %llu "
				  "novector %llu", &s->irq[0], &s->irq[1], &s->irq[2], &s->irq[3], &s->irq[4],
				  &s->novector) == 6)
			lines++;
		else if (sscanf(line, "vectors timer %u resched %u callfunc %u device %u", &s->vec_timer,
				&s->vec_resched, &s->vec_callfunc, &s->vec_device) == 4)
			lines++;
		else if (sscanf(line, "marks user_lost %llu invalid %llu orphaned %llu", &s->user_lost,
				&s->invalid, &s->orphaned) == 3)
			lines++;
		else if (sscanf(line, "watch %d out %llu in %llu woken %llu marks %llu", &s->watch, &s->w_out,
				&s->w_in, &s->w_woken, &s->w_marks) == 5)
			lines++;
	}
	fclose(f);
	return lines == 6 + VPERF_TRACE_NR_TYPES - 1 ? 0 : -1;
}

static struct stats stats_or_fail(const char *mode)
{
	struct stats s;

	if (read_stats(&s))
		check(0, mode, "reading " PARAMS "trace_stats");
	return s;
}

static void print_stats(void)
{
	char line[512];
	FILE *f = fopen(PARAMS "trace_stats", "r");

	while (f && fgets(line, sizeof(line), f))
		printf("kmod-trace: stats %s", line);
	if (f)
		fclose(f);
}

static int write_param(const char *name, long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%ld\n", v) < 0 ? -EIO : 0;
	if (fclose(f))
		ret = -errno;
	return ret;
}

static void set_watch(pid_t tid)
{
	if (write_param("trace_watch", tid))
		check(0, "watch", "writing " PARAMS "trace_watch");
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Every vCPU's exits (counter 2 of VPERF_IOC_VCPU_TOTALS), summed. */
static uint64_t vcpu_exits(void)
{
	static struct vperf_vcpu_totals t;
	uint64_t sum = 0;
	int fd = open("/dev/" VPERF_DEV_NAME, O_RDONLY);

	memset(&t, 0, sizeof(t));
	t.size = sizeof(t);
	if (fd < 0 || ioctl(fd, VPERF_IOC_VCPU_TOTALS, &t)) {
		check(0, "exits", "VPERF_IOC_VCPU_TOTALS");
		if (fd >= 0)
			close(fd);
		return 0;
	}
	close(fd);
	for (uint32_t i = 0; i < t.nr_cpus; i++)
		sum += t.cpus[i].value[VPERF_THREAD_CTR_EXITS];
	return sum;
}

/* A marker name of 1..64 bytes, some not ASCII: "m" + i in letters, "é" now and then. */
static void mark_name(unsigned int i, char *name)
{
	size_t len = 1 + i % 62;

	for (size_t k = 0; k < len; k++)
		name[k] = (char)('a' + (i + k) % 26);
	if (i % 7 == 0) {	/* 2 more bytes: U+00E9 */
		name[len++] = (char)0xc3;
		name[len++] = (char)0xa9;
	}
	name[len] = 0;
}

/* ---- marks: N markers, all but the first with no system call possible ---- */

/*
 * Strict mode's rule (read, write, exit and sigreturn; any other system call
 * kills the process) as a seccomp filter: strict mode itself also turns
 * rdtsc off for the task (TIF_NOTSC), and a marker reads the TSC.
 */
static int seccomp_strict_but_tsc(void)
{
	static struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_read, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

struct marks_result {
	uint64_t fails, lost, cycles;
};

static void marks_child(unsigned int n, int go, int res)
{
	static struct marks_result r;
	static char names[64][80];	/* made before the clock starts: the cost is the markers' */
	uint64_t t0;
	char c;

	for (unsigned int i = 0; i < 64; i++)
		mark_name(i, names[i]);
	if (read(go, &c, 1) != 1)
		syscall(SYS_exit, 3);
	if (vperf_trace_mark("marks-start", 0, VPERF_MARK_BEGIN))	/* maps the buffer */
		r.fails++;
	if (seccomp_strict_but_tsc())
		syscall(SYS_exit, 5);
	t0 = __rdtsc();
	for (unsigned int i = 1; i < n; i++)
		if (vperf_trace_mark(names[i % 64], i, (enum vperf_mark_kind)(i % 3)))
			r.fails++;
	r.cycles = __rdtsc() - t0;
	r.lost = vperf_trace_marks_lost();
	if (write(res, &r, sizeof(r)) != (ssize_t)sizeof(r))
		syscall(SYS_exit, 6);
	syscall(SYS_exit, 0);	/* exit_group is not allowed in strict mode; the exit drains the buffer */
}

static void test_marks(unsigned int n)
{
	struct marks_result r = { 0 };
	struct stats s0, s1;
	int go[2], res[2], status;
	uint64_t exits0, exits1;
	char what[512];
	pid_t pid;

	if (pipe(go) || pipe(res)) {
		check(0, "marks", "pipe");
		return;
	}
	setenv("VPERF_MARK_KB", "1024", 1);	/* 10000 markers of ~56..112 bytes fit */
	pid = fork();
	if (pid == 0)
		marks_child(n, go[0], res[1]);
	close(go[0]);
	close(res[1]);	/* a child that dies gives read() an end */
	set_watch(pid);
	s0 = stats_or_fail("marks");
	exits0 = vcpu_exits();
	if (write(go[1], "g", 1) != 1)
		check(0, "marks", "starting the child");
	if (read(res[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		check(0, "marks", "no result from the child");
	waitpid(pid, &status, 0);
	exits1 = vcpu_exits();
	s1 = stats_or_fail("marks");
	set_watch(0);
	snprintf(what, sizeof(what), "the child made %u markers (%llu failed), %u under seccomp (read, write, "
		 "exit only), and "
		 "exited by itself (%s %d)", n, (unsigned long long)r.fails, n - 1,
		 WIFEXITED(status) ? "status" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && !r.fails, "marks", what);
	snprintf(what, sizeof(what), "marker records copied %llu (want %u), dropped in the ring %llu, lost in "
		 "the buffer %llu (the library counted %llu), refused %llu, with the child's tid %llu",
		 s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK], n,
		 s1.lost[VPERF_TRACE_MARK] - s0.lost[VPERF_TRACE_MARK], s1.user_lost - s0.user_lost,
		 (unsigned long long)r.lost, s1.invalid - s0.invalid, s1.w_marks - s0.w_marks);
	check(s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK] == n &&
	      s1.lost[VPERF_TRACE_MARK] == s0.lost[VPERF_TRACE_MARK] && s1.user_lost == s0.user_lost &&
	      !r.lost && s1.invalid == s0.invalid && s1.w_marks - s0.w_marks == n, "marks", what);
	/* the module's own hypercalls (flushes, snapshots) are not in the exits: 0 is possible */
	snprintf(what, sizeof(what), "the vCPUs' exits grew by %llu during %u markers (less than %u: no exit "
		 "per marker)", (unsigned long long)(exits1 - exits0), n, n / 10);
	check(exits1 >= exits0 && exits1 - exits0 < n / 10, "marks", what);
	printf("kmod-trace: marks cost %.0f TSC cycles per marker under seccomp\n", (double)r.cycles / (n - 1));
}

/*
 * cost (a figure, no verdict): TSC cycles per marker and per getppid()
 * system call, interleaved in 5 rounds of 2000 each; the median ratio.
 */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void test_cost(void)
{
	double mark[5], sys[5], ratio[5];
	int bad = 0;

	setenv("VPERF_MARK_KB", "1024", 1);
	vperf_trace_mark("cost", 0, VPERF_MARK_INSTANT);	/* maps the buffer */
	for (int r = 0; r < 5; r++) {
		uint64_t c0 = __rdtsc(), c1, c2;

		for (int i = 0; i < 2000; i++)
			bad |= vperf_trace_mark("request", (uint64_t)i, (enum vperf_mark_kind)(i & 1));
		c1 = __rdtsc();
		for (int i = 0; i < 2000; i++)
			syscall(SYS_getppid);
		c2 = __rdtsc();
		mark[r] = (c1 - c0) / 2000.0;
		sys[r] = (c2 - c1) / 2000.0;
		ratio[r] = mark[r] / sys[r];
		vperf_trace_flush();
	}
	qsort(mark, 5, sizeof(double), cmp_double);
	qsort(sys, 5, sizeof(double), cmp_double);
	qsort(ratio, 5, sizeof(double), cmp_double);
	printf("kmod-trace: cost per marker %.0f TSC cycles, per getppid() %.0f (medians of 5 x 2000); marker / "
	       "system call %.3f (%.3f..%.3f)%s\n", mark[2], sys[2], ratio[2], ratio[0], ratio[4],
	       bad ? "; some markers failed" : "");
}

/* ---- wrap and lost: a 4 KiB buffer in a thread of this process ---- */

struct small_arg {
	unsigned int n, flush_every;
	unsigned int ok, nospc, other;
	uint64_t lost;
	pid_t tid;
	int go;
};

static void *small_run(void *arg)
{
	struct small_arg *a = arg;
	char name[80];
	int ret;

	a->tid = gettid_();
	set_watch(a->tid);
	for (unsigned int i = 0; i < a->n; i++) {
		mark_name(i, name);
		ret = vperf_trace_mark(name, i, VPERF_MARK_INSTANT);
		if (!ret)
			a->ok++;
		else if (ret == -ENOSPC)
			a->nospc++;
		else
			a->other++;
		if (a->flush_every && (i + 1) % a->flush_every == 0 && vperf_trace_flush())
			a->other++;
	}
	if (vperf_trace_flush())
		a->other++;
	a->lost = vperf_trace_marks_lost();
	return NULL;
}

static void small_buffer(const char *mode, unsigned int n, unsigned int flush_every, struct small_arg *a,
			 struct stats *s0, struct stats *s1)
{
	pthread_t t;

	memset(a, 0, sizeof(*a));
	a->n = n;
	a->flush_every = flush_every;
	setenv("VPERF_MARK_KB", "4", 1);
	*s0 = stats_or_fail(mode);
	pthread_create(&t, NULL, small_run, a);
	pthread_join(t, NULL);	/* its exit unmaps the buffer: the file's release drains it */
	*s1 = stats_or_fail(mode);
	set_watch(0);
}

static void test_wrap(void)
{
	struct small_arg a;
	struct stats s0, s1;
	char what[400];

	small_buffer("wrap", 2000, 30, &a, &s0, &s1);
	snprintf(what, sizeof(what), "2000 markers through 4 KiB, flushed every 30: %u written, %u full, %u errors; "
		 "copied %llu (with the thread's tid %llu), lost %llu, refused %llu",
		 a.ok, a.nospc, a.other, s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK],
		 s1.w_marks - s0.w_marks, s1.user_lost - s0.user_lost, s1.invalid - s0.invalid);
	check(a.ok == 2000 && !a.nospc && !a.other &&
	      s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK] == 2000 &&
	      s1.w_marks - s0.w_marks == 2000 && s1.user_lost == s0.user_lost && s1.invalid == s0.invalid,
	      "wrap", what);
}

static void test_lost(void)
{
	struct small_arg a;
	struct stats s0, s1;
	char what[400];

	small_buffer("lost", 1000, 0, &a, &s0, &s1);
	snprintf(what, sizeof(what), "1000 markers into 4 KiB, no flush: %u written, %u found it full (library's "
		 "count %llu, %u errors); the module copied %llu and reported %llu lost in %llu LOST records",
		 a.ok, a.nospc, (unsigned long long)a.lost, a.other,
		 s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK], s1.user_lost - s0.user_lost,
		 s1.produced[VPERF_TRACE_LOST] - s0.produced[VPERF_TRACE_LOST]);
	check(a.nospc > 0 && a.lost == a.nospc && !a.other && a.ok + a.nospc == 1000 &&
	      s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK] == a.ok &&
	      s1.user_lost - s0.user_lost == a.nospc &&
	      s1.produced[VPERF_TRACE_LOST] > s0.produced[VPERF_TRACE_LOST], "lost", what);
}

/* ---- sleep: the scheduler's records of one thread ---- */

static void test_sleep(void)
{
	struct rusage r0, r1;
	struct stats s0, s1;
	unsigned long long out, in, woken, csw, vol;
	char what[400];

	/*
	 * The kernel's own count of this thread's context switches brackets the trace's: switches
	 * between a rusage read and a stats read (a stats read may block) are in the first only.
	 */
	set_watch(gettid_());
	getrusage(RUSAGE_THREAD, &r0);
	s0 = stats_or_fail("sleep");
	for (int i = 0; i < 100; i++)
		usleep(2000);
	s1 = stats_or_fail("sleep");
	getrusage(RUSAGE_THREAD, &r1);
	set_watch(0);
	out = s1.w_out - s0.w_out;
	in = s1.w_in - s0.w_in;
	woken = s1.w_woken - s0.w_woken;
	vol = (unsigned long long)(r1.ru_nvcsw - r0.ru_nvcsw);
	csw = vol + (unsigned long long)(r1.ru_nivcsw - r0.ru_nivcsw);
	snprintf(what, sizeof(what), "100 sleeps: switched out %llu, in %llu, woken %llu times; the kernel "
		 "counted %llu context switches (%llu voluntary); switch records %llu, wakeups %llu in all",
		 out, in, woken, csw, vol,
		 s1.produced[VPERF_TRACE_SCHED_SWITCH] - s0.produced[VPERF_TRACE_SCHED_SWITCH],
		 s1.produced[VPERF_TRACE_SCHED_WAKEUP] - s0.produced[VPERF_TRACE_SCHED_WAKEUP]);
	check(out <= csw && out + 2 >= csw && in <= csw && in + 2 >= csw && vol >= 90 && woken + 2 >= vol,
	      "sleep", what);
}

/* ---- hostile: garbage in a marker buffer ---- */

#define HB_PAGES 2
#define HB_DATA (HB_PAGES * 4096)

struct hostile_buf {
	volatile struct vperf_mark_buf *h;
	unsigned char *data;
	uint64_t head;
};

union rec {
	struct vperf_trace_rec h;
	struct vperf_trace_mark m;
	unsigned char b[VPERF_TRACE_REC_MAX];
};

static void hb_put(struct hostile_buf *hb, const void *rec, uint32_t size)
{
	vperf_ring_copy_in(hb->data, HB_DATA, hb->head, rec, size);
	hb->head += size;
}

/* A valid record claiming someone else's cpu, pid and tid. */
static uint32_t good_rec(union rec *r, unsigned int i)
{
	char name[80];
	uint32_t size;

	mark_name(i, name);
	size = vperf_mark_rec_fill(r, name, (uint32_t)strlen(name), i, i % 3, __rdtsc());
	r->h.cpu = 77;
	r->h.pid = 1;
	r->h.tid = 1;
	return size;
}

/* Bad record k (0..9, each with a size the module can skip): its size. */
static uint32_t bad_rec(union rec *r, int k)
{
	uint32_t size = good_rec(r, 5);	/* "fghij": 48 bytes */

	switch (k) {
	case 0: r->h.type = VPERF_TRACE_SCHED_SWITCH; break;
	case 1: r->h.flags = 1; break;
	case 2: r->m.kind = 3; break;
	case 3: r->m.name_len = 0; break;
	case 4: r->m.name_len = 65; break;
	case 5: r->m.name_len = 9; break;			/* more than the size holds */
	case 6: r->b[size - 1] = 'x'; break;			/* padding */
	case 7: r->m.name[0] = (char)0xff; break;		/* not UTF-8 */
	case 8: r->m.name[2] = 0; break;			/* a NUL in the name */
	case 9: size = 256; r->h.size = 256; memset(r->b + 48, 0, 208); break;	/* too big for a marker */
	}
	return size;
}

#define NR_BAD 10

static void hb_publish(struct hostile_buf *hb)
{
	__atomic_store_n(&hb->h->head, hb->head, __ATOMIC_RELEASE);
}

static int mark_flush(int f)
{
	return ioctl(f, VPERF_IOC_MARK_FLUSH) ? -errno : 0;
}

struct hostile_result {
	uint64_t copied[4], invalid[4];
	int api[6];
};

/* The hostile writer's expectations, phase by phase: valid copied, refused. */
static const unsigned int want_copied[4] = { 30, 30, 33, 33 };
static const unsigned int want_invalid[4] = { 2 * NR_BAD + 1, 2 * NR_BAD + 2, 2 * NR_BAD + 2, 2 * NR_BAD + 3 };

static void hostile_child(int go, int res)
{
	static struct hostile_result r;
	struct hostile_buf hb;
	union rec rec;
	void *m;
	char c;
	int f, f2;

	if (read(go, &c, 1) != 1)
		_exit(3);
	f = open("/dev/" VPERF_DEV_NAME, O_RDWR);
	f2 = open("/dev/" VPERF_DEV_NAME, O_RDWR);
	if (f < 0 || f2 < 0)
		_exit(4);
	/* the mapping's refusals first */
	r.api[0] = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, VPERF_MARK_PGOFF * 4096) ==
		   MAP_FAILED && errno == EINVAL;	/* 3 data pages: not a power of 2 */
	r.api[1] = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, VPERF_MARK_PGOFF * 4096) ==
		   MAP_FAILED && errno == EINVAL;	/* no data page */
	r.api[2] = mmap(NULL, (1 + HB_PAGES) * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, f,
			VPERF_MARK_PGOFF * 4096) == MAP_FAILED && errno == EINVAL;
	m = mmap(NULL, (1 + HB_PAGES) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, VPERF_MARK_PGOFF * 4096);
	if (m == MAP_FAILED)
		_exit(5);
	r.api[3] = mmap(NULL, (1 + HB_PAGES) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f2,
			VPERF_MARK_PGOFF * 4096) == MAP_FAILED && errno == EBUSY;	/* another file's */
	r.api[4] = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f,
			VPERF_MARK_PGOFF * 4096) == MAP_FAILED && errno == EINVAL;	/* another size */
	close(f2);
	hb.h = m;
	hb.data = (unsigned char *)m + 4096;
	hb.head = 0;
	r.api[5] = hb.h->size == sizeof(struct vperf_mark_buf) && hb.h->version == VPERF_MARK_BUF_VERSION &&
		   hb.h->data_size == HB_DATA;

	/* phase 0: 30 valid, 2 x 10 bad between them, then a size that cannot be followed and 5 valid after it */
	for (int i = 0; i < 30; i++) {
		hb_put(&hb, &rec, good_rec(&rec, i));
		if (i % 3 == 0)
			hb_put(&hb, &rec, bad_rec(&rec, (i / 3) % NR_BAD));
		if (i % 3 == 1)
			hb_put(&hb, &rec, bad_rec(&rec, (i / 3 + 5) % NR_BAD));
	}
	good_rec(&rec, 99);
	rec.h.size = 13;	/* not a multiple of 8: the rest goes, as one refusal */
	hb_put(&hb, &rec, 48);
	for (int i = 0; i < 5; i++)
		hb_put(&hb, &rec, good_rec(&rec, i));
	hb_publish(&hb);
	mark_flush(f);
	r.copied[0] = hb.h->copied;
	r.invalid[0] = hb.h->invalid;

	/* phase 1: a head more than the buffer ahead of the tail */
	hb.head = hb.h->tail + HB_DATA + 8;
	hb_publish(&hb);
	mark_flush(f);
	r.copied[1] = hb.h->copied;
	r.invalid[1] = hb.h->invalid;

	/* phase 2: the buffer works again from where the module set the tail */
	hb.head = hb.h->tail;
	for (int i = 0; i < 3; i++)
		hb_put(&hb, &rec, good_rec(&rec, i));
	hb_publish(&hb);
	mark_flush(f);
	r.copied[2] = hb.h->copied;
	r.invalid[2] = hb.h->invalid;

	/* phase 3: a head behind the tail */
	hb.head = hb.h->tail - 8;
	hb_publish(&hb);
	mark_flush(f);
	r.copied[3] = hb.h->copied;
	r.invalid[3] = hb.h->invalid;

	/* phase 4: it scribbles over what is the module's to write (the module must not care) and
	 * writes 4 valid records that its exit hands over */
	hb.h->tail = 12345;
	hb.h->size = 0;
	hb.h->data_size = 3;
	hb.h->copied = ~0ull;
	for (int i = 0; i < 4; i++)
		hb_put(&hb, &rec, good_rec(&rec, i));
	hb_publish(&hb);
	if (write(res, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(6);
	_exit(0);	/* its exit drains the buffer a last time */
}

struct good_arg {
	unsigned int n, fails;
};

static void *good_run(void *arg)
{
	struct good_arg *a = arg;
	char name[80];

	for (unsigned int i = 0; i < a->n; i++) {
		mark_name(i, name);
		if (vperf_trace_mark(name, i, VPERF_MARK_INSTANT))
			a->fails++;
		if (i % 50 == 49)
			vperf_trace_flush();
	}
	vperf_trace_flush();
	return NULL;
}

static void test_hostile(void)
{
	struct hostile_result r = { 0 };
	struct good_arg good = { .n = 1000 };
	struct stats s0, s1;
	int go[2], res[2], status, ok = 1;
	char what[600];
	pthread_t t;
	pid_t pid;

	if (pipe(go) || pipe(res)) {
		check(0, "hostile", "pipe");
		return;
	}
	pid = fork();
	if (pid == 0)
		hostile_child(go[0], res[1]);
	close(go[0]);
	close(res[1]);
	set_watch(pid);
	s0 = stats_or_fail("hostile");
	setenv("VPERF_MARK_KB", "64", 1);
	pthread_create(&t, NULL, good_run, &good);	/* a well-behaved writer at the same time */
	if (write(go[1], "g", 1) != 1)
		check(0, "hostile", "starting the child");
	if (read(res[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		check(0, "hostile", "no result from the child");
	waitpid(pid, &status, 0);
	pthread_join(t, NULL);
	s1 = stats_or_fail("hostile");
	set_watch(0);

	snprintf(what, sizeof(what), "mapping refusals: 3 data pages %d, none %d, private %d, another file's "
		 "EBUSY %d, another size %d; the header %d", r.api[0], r.api[1], r.api[2], r.api[3], r.api[4],
		 r.api[5]);
	check(r.api[0] && r.api[1] && r.api[2] && r.api[3] && r.api[4] && r.api[5], "hostile", what);
	for (int p = 0; p < 4; p++) {
		snprintf(what, sizeof(what), "phase %d: copied %llu (want %u), refused %llu (want %u)", p,
			 (unsigned long long)r.copied[p], want_copied[p], (unsigned long long)r.invalid[p],
			 want_invalid[p]);
		check(r.copied[p] == want_copied[p] && r.invalid[p] == want_invalid[p], "hostile", what);
	}
	/* the good writer's 1000, the hostile one's 33 + 4 at its exit */
	snprintf(what, sizeof(what), "the module copied %llu markers (want %u good + %u hostile), the hostile "
		 "writer's with its true tid: %llu; refused %llu (want %u), lost %llu; "
		 "LOST records %llu; good writer's failures %u; the child exited %s %d",
		 s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK], good.n, want_copied[3] + 4,
		 s1.w_marks - s0.w_marks, s1.invalid - s0.invalid, want_invalid[3],
		 s1.user_lost - s0.user_lost, s1.produced[VPERF_TRACE_LOST] - s0.produced[VPERF_TRACE_LOST],
		 good.fails, WIFEXITED(status) ? "with" : "by signal",
		 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !good.fails &&
	     s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK] == good.n + want_copied[3] + 4 &&
	     s1.w_marks - s0.w_marks == want_copied[3] + 4 && s1.invalid - s0.invalid == want_invalid[3] &&
	     s1.user_lost == s0.user_lost && s1.produced[VPERF_TRACE_LOST] - s0.produced[VPERF_TRACE_LOST] >= 3;
	check(ok, "hostile", what);
}

/* ---- sample: one SAMPLE record per sampling NMI ---- */

static volatile uint64_t sink;

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_sample(void)
{
	const unsigned int pages = 16;
	struct vperf_thread_start st;
	volatile struct vperf_sample_ring *hdr;
	struct stats s0, s1;
	char what[300];
	uint64_t t0, samples;
	void *ring;
	int f;

	f = open("/dev/" VPERF_DEV_NAME, O_RDWR);
	if (f < 0) {
		check(0, "sample", "open /dev/vperf");
		return;
	}
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = VPERF_THREAD_SAMPLE;
	st.sample_counter = VPERF_THREAD_CTR_VCPU_CLOCK;
	st.sample_pages = pages;
	st.sample_period = 2000000;
	s0 = stats_or_fail("sample");
	if (ioctl(f, VPERF_IOC_THREAD_START, &st)) {
		check(0, "sample", strerror(errno));
		close(f);
		return;
	}
	ring = mmap(NULL, (1 + pages) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, VPERF_SAMPLE_PGOFF * 4096);
	if (ring == MAP_FAILED) {
		check(0, "sample", "mapping the sample ring");
		close(f);
		return;
	}
	hdr = ring;
	t0 = thread_ns();
	while (thread_ns() - t0 < 300000000)
		for (int i = 0; i < 20000; i++)
			sink += (uint64_t)i;
	ioctl(f, VPERF_IOC_THREAD_STOP);
	s1 = stats_or_fail("sample");
	samples = hdr->head + hdr->lost;
	snprintf(what, sizeof(what), "300 ms sampled every 2 ms: %llu samples (%llu lost in the thread's ring); "
		 "SAMPLE records %llu written, %llu dropped", (unsigned long long)hdr->head,
		 (unsigned long long)hdr->lost, s1.produced[VPERF_TRACE_SAMPLE] - s0.produced[VPERF_TRACE_SAMPLE],
		 s1.lost[VPERF_TRACE_SAMPLE] - s0.lost[VPERF_TRACE_SAMPLE]);
	check(samples >= 50 && s1.produced[VPERF_TRACE_SAMPLE] - s0.produced[VPERF_TRACE_SAMPLE] +
	      s1.lost[VPERF_TRACE_SAMPLE] - s0.lost[VPERF_TRACE_SAMPLE] == samples, "sample", what);
	munmap(ring, (1 + pages) * 4096);
	close(f);
}

/* ---- procs ---- */

static void test_procs(void)
{
	struct stats s0, s1;
	char what[300];
	int bad = 0;

	s0 = stats_or_fail("procs");
	for (int i = 0; i < 20; i++) {
		int status;
		pid_t pid = fork();

		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	s1 = stats_or_fail("procs");
	snprintf(what, sizeof(what), "20 x fork, exec /bin/true, exit (%d failed): fork %llu exec %llu exit %llu "
		 "records (each >= 20)", bad,
		 s1.produced[VPERF_TRACE_FORK] - s0.produced[VPERF_TRACE_FORK],
		 s1.produced[VPERF_TRACE_EXEC] - s0.produced[VPERF_TRACE_EXEC],
		 s1.produced[VPERF_TRACE_EXIT] - s0.produced[VPERF_TRACE_EXIT]);
	check(!bad && s1.produced[VPERF_TRACE_FORK] - s0.produced[VPERF_TRACE_FORK] >= 20 &&
	      s1.produced[VPERF_TRACE_EXEC] - s0.produced[VPERF_TRACE_EXEC] >= 20 &&
	      s1.produced[VPERF_TRACE_EXIT] - s0.produced[VPERF_TRACE_EXIT] >= 20, "procs", what);
}

/* ---- irq: two threads on two vCPUs wake each other (IPIs), the console prints (a device) ---- */

static int pp[2][2];

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	pin(1);
	while (read(pp[0][0], &c, 1) == 1 && c != 'q')
		if (write(pp[1][1], &c, 1) != 1)
			break;
	return NULL;
}

static void test_irq(void)
{
	struct stats s0, s1;
	char what[400], c = 'p';
	pthread_t t;

	s0 = stats_or_fail("irq");
	if (pipe(pp[0]) || pipe(pp[1])) {
		check(0, "irq", "pipe");
		return;
	}
	pthread_create(&t, NULL, pong, NULL);
	pin(0);
	for (int i = 0; i < 200; i++)
		if (write(pp[0][1], &c, 1) != 1 || read(pp[1][0], &c, 1) != 1)
			break;
	c = 'q';
	if (write(pp[0][1], &c, 1) != 1)
		check(0, "irq", "stopping the other thread");
	pthread_join(t, NULL);
	printf("kmod-trace: irq the console line makes a device interrupt\n");
	fflush(stdout);
	usleep(100000);
	s1 = stats_or_fail("irq");
	snprintf(what, sizeof(what), "interrupt records: timer %llu, reschedule %llu, function call %llu, device %llu, "
		 "other %llu, device without a vector %llu; vectors learned: timer 0x%x, reschedule 0x%x, "
		 "function call 0x%x, device 0x%x",
		 s1.irq[VPERF_TRACE_IRQ_TIMER] - s0.irq[VPERF_TRACE_IRQ_TIMER],
		 s1.irq[VPERF_TRACE_IRQ_RESCHED] - s0.irq[VPERF_TRACE_IRQ_RESCHED],
		 s1.irq[VPERF_TRACE_IRQ_CALLFUNC] - s0.irq[VPERF_TRACE_IRQ_CALLFUNC],
		 s1.irq[VPERF_TRACE_IRQ_DEVICE] - s0.irq[VPERF_TRACE_IRQ_DEVICE],
		 s1.irq[VPERF_TRACE_IRQ_OTHER] - s0.irq[VPERF_TRACE_IRQ_OTHER], s1.novector,
		 s1.vec_timer, s1.vec_resched, s1.vec_callfunc, s1.vec_device);
	/* x86 system vectors are 0xec and up, device vectors 0x20..0xeb, whatever the kernel chose */
	check(s1.irq[VPERF_TRACE_IRQ_TIMER] > s0.irq[VPERF_TRACE_IRQ_TIMER] &&
	      s1.irq[VPERF_TRACE_IRQ_RESCHED] + s1.irq[VPERF_TRACE_IRQ_CALLFUNC] >
	      s0.irq[VPERF_TRACE_IRQ_RESCHED] + s0.irq[VPERF_TRACE_IRQ_CALLFUNC] &&
	      s1.irq[VPERF_TRACE_IRQ_DEVICE] > 0 && !s1.novector && s1.vec_timer >= 0xec &&
	      s1.vec_device >= 0x20 && s1.vec_device < 0xec, "irq", what);
}

/* ---- on, off, loaded ---- */

static void test_on(void)
{
	struct stats s = stats_or_fail("on");
	char what[200];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	snprintf(what, sizeof(what), "tracing %d, rings %d, online CPUs %ld, rings of %d KiB, host records v2: %d",
		 s.on, s.rings, cpus, s.ring_kb, s.v2);
	check(s.on == 1 && s.rings == cpus && s.cpus == cpus, "on", what);
}

static void test_off(void)
{
	struct stats s = stats_or_fail("off");
	unsigned long long lost = 0;
	char what[600];

	for (int i = 1; i < VPERF_TRACE_NR_TYPES; i++)
		lost += s.lost[i];
	snprintf(what, sizeof(what), "tracing %d, rings %d; bytes written %llu, the rings' heads %llu, consumed by "
		 "the host %llu, TRACE_FLUSH results %llu (%llu flushes, %llu at a watermark, %llu errors); "
		 "records dropped %llu, the rings' lost %llu, markers orphaned %llu",
		 s.on, s.rings, s.bytes, s.head, s.consumed, s.flushed, s.flushes, s.watermarks, s.flush_errors,
		 lost, s.ring_lost, s.orphaned);
	check(!s.on && !s.rings && s.bytes > 0 && s.bytes == s.head && s.consumed == s.head &&
	      s.flushed == s.consumed && !s.flush_errors && !lost && !s.ring_lost, "off", what);
}

static void test_loaded(void)
{
	struct stats s = stats_or_fail("loaded");
	char what[200];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	snprintf(what, sizeof(what), "loaded with trace=1 trace_ring_kb=64: tracing %d, rings %d of %d KiB, CPUs %ld",
		 s.on, s.rings, s.ring_kb, cpus);
	check(s.on == 1 && s.rings == cpus && s.ring_kb == 64, "loaded", what);
}

/* ---- the hardening cases: other users, kernel mode, the marker pool, the last drains ---- */

static void become_nobody(void)
{
	if (setgid(65534) || setuid(65534))
		_exit(2);
}

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

static long read_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* A trace sampler on the caller (cpu-clock every 10 ms) with flags: 0, or -errno. */
static int sampler_try(uint32_t flags)
{
	struct vperf_trace_sampler req = {
		.size = sizeof(req), .flags = flags, .type = 1 /* PERF_TYPE_SOFTWARE */,
		.config = 0 /* PERF_COUNT_SW_CPU_CLOCK */, .period = 10000000,
	};
	int f = open("/dev/" VPERF_DEV_NAME, O_RDONLY), ret;

	if (f < 0)
		return -errno;
	ret = ioctl(f, VPERF_IOC_TRACE_SAMPLE, &req) ? -errno : 0;
	close(f);
	return ret;
}

/* As uid 65534: sampler_try(0) and sampler_try(VPERF_TRACE_SAMPLER_USER) into r[0], r[1]. */
static void sampler_nobody(int *r)
{
	int res[2], status;
	pid_t child;

	r[0] = r[1] = 1;
	if (pipe(res))
		return;
	child = fork();
	if (child == 0) {
		int x[2];

		become_nobody();
		x[0] = sampler_try(0);
		x[1] = sampler_try(VPERF_TRACE_SAMPLER_USER);
		if (write(res[1], x, sizeof(x)) != (ssize_t)sizeof(x))
			_exit(3);
		_exit(0);
	}
	if (read(res[0], r, 2 * sizeof(int)) != 2 * sizeof(int))
		r[0] = r[1] = 1;
	waitpid(child, &status, 0);
	close(res[0]);
	close(res[1]);
}

static const char *err_name(int r)
{
	return r > 0 ? "no answer" : r ? strerror(-r) : "started";
}

/*
 * sampler: the trace sampler under perf's rule (perf_allow_kernel()): at
 * kernel.perf_event_paranoid >= 2 a user without CAP_PERFMON gets EACCES
 * for a sampler that sees kernel mode, and a sampler with
 * VPERF_TRACE_SAMPLER_USER (user mode only); root gets one without it; at
 * paranoid 1 the user does too.
 */
static void test_sampler(void)
{
	int level = perf_paranoid(), r[2], mine, r1[2] = { 1, 1 };
	char what[400];

	if (level < 2 && set_perf_paranoid(2)) {
		check(0, "sampler", "setting kernel.perf_event_paranoid to 2");
		return;
	}
	sampler_nobody(r);
	mine = sampler_try(0);
	if (!set_perf_paranoid(1))
		sampler_nobody(r1);
	set_perf_paranoid(level);
	snprintf(what, sizeof(what), "kernel.perf_event_paranoid %d: as uid 65534 %s, user mode only %s; as "
		 "root %s; as uid 65534 at paranoid 1 %s", level < 2 ? 2 : level, err_name(r[0]), err_name(r[1]),
		 err_name(mine), err_name(r1[0]));
	check(r[0] == -EACCES && !r[1] && !mine && !r1[0] && perf_paranoid() == level, "sampler", what);
}

/*
 * markquota: one user cannot take the whole marker pool.  With the pool at
 * 2048 KiB (max_mark_kb) and one user's files at 1024 KiB (max_user_kb),
 * uid 65534's threads map three 64-page buffers (260 KiB each) and get
 * EDQUOT for the fourth; root then maps one.
 */
#define MQ_THREADS	8
#define MQ_LEN		((1 + 64) * 4096)

static int mq_fd, mq_ret[MQ_THREADS];
static sem_t mq_mapped, mq_release;

static void *mq_run(void *arg)
{
	int i = (int)(intptr_t)arg;
	void *m = mmap(NULL, MQ_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mq_fd, VPERF_MARK_PGOFF * 4096);

	mq_ret[i] = m == MAP_FAILED ? -errno : 0;
	sem_post(&mq_mapped);
	sem_wait(&mq_release);
	return NULL;
}

static void test_markquota(void)
{
	long old_pool = read_param("max_mark_kb"), old_user = read_param("max_user_kb");
	int res[2], go[2], status, ok = 0, err = 0, set, mine, r[MQ_THREADS];
	char what[400];
	pid_t child;
	void *m;

	set = write_param("max_mark_kb", 2048);
	set = set ? set : write_param("max_user_kb", 1024);
	if (pipe(res) || pipe(go))
		return;
	child = fork();
	if (child == 0) {
		pthread_t th[MQ_THREADS];
		char c;

		become_nobody();
		mq_fd = open("/dev/" VPERF_DEV_NAME, O_RDWR);
		sem_init(&mq_mapped, 0, 0);
		sem_init(&mq_release, 0, 0);
		for (int i = 0; i < MQ_THREADS; i++) {
			pthread_create(&th[i], NULL, mq_run, (void *)(intptr_t)i);
			sem_wait(&mq_mapped);
		}
		if (write(res[1], mq_ret, sizeof(mq_ret)) != (ssize_t)sizeof(mq_ret))
			_exit(3);
		/* the buffers stay until root has mapped its own */
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		for (int i = 0; i < MQ_THREADS; i++)
			sem_post(&mq_release);
		for (int i = 0; i < MQ_THREADS; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	}
	for (int i = 0; i < MQ_THREADS; i++)
		r[i] = 1;
	if (read(res[0], r, sizeof(r)) != (ssize_t)sizeof(r))
		check(0, "markquota", "the unprivileged process did not report");
	{
		int f = open("/dev/" VPERF_DEV_NAME, O_RDWR);

		m = mmap(NULL, MQ_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, f, VPERF_MARK_PGOFF * 4096);
		mine = m == MAP_FAILED ? -errno : 0;
		if (m != MAP_FAILED)
			munmap(m, MQ_LEN);
		close(f);
	}
	if (write(go[1], "x", 1) != 1)
		check(0, "markquota", "releasing the unprivileged process");
	waitpid(child, &status, 0);
	if (old_pool >= 0)
		write_param("max_mark_kb", old_pool);
	if (old_user >= 0)
		write_param("max_user_kb", old_user);
	for (int i = 0; i < MQ_THREADS; i++) {
		if (!r[i])
			ok++;
		else if (!err)
			err = r[i];
	}
	snprintf(what, sizeof(what), "max_mark_kb 2048, max_user_kb 1024 (set: %s): uid 65534's threads mapped "
		 "%d of %d marker buffers of 260 KiB, then %s; root's then: %s", set ? strerror(-set) : "ok", ok,
		 MQ_THREADS, err ? err_name(err) : "none refused", err_name(mine));
	check(!set && ok == 3 && err == -EDQUOT && !mine, "markquota", what);
}

/*
 * exitdrain: a stress case for the last drains of marker buffers, by the
 * exiting thread's probe and by the file's release at once (the release
 * holds a buffer's busy flag with preemption off, because the exit probe
 * spins on it with preemption off: a preempted holder on the spinner's CPU
 * would never run again).  20 rounds: 4 processes (2 on each vCPU) map
 * their buffers on one file they inherited, write 300 markers each, and
 * exit together while the parent closes the file.  Every marker is copied
 * (trace_stats: marker records written grow by exactly 24000, none dropped,
 * refused or orphaned), and the guest lives.
 */
#define ED_ROUNDS	20
#define ED_PROCS	4
#define ED_MARKS	300
#define ED_PAGES	16

static void exitdrain_child(int f, int i, int ready, int go)
{
	struct hostile_buf hb;
	union rec rec;
	void *m;
	char c = 0;

	pin(i & 1);
	m = mmap(NULL, (1 + ED_PAGES) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f, VPERF_MARK_PGOFF * 4096);
	if (m == MAP_FAILED)
		_exit(3);
	close(f);	/* the mapping holds the file */
	hb.h = m;
	hb.data = (unsigned char *)m + 4096;
	hb.head = 0;
	for (unsigned int k = 0; k < ED_MARKS; k++) {
		uint32_t size = good_rec(&rec, k);

		/* room (300 of them fill about a third of it): a switch-out copies 16 KiB */
		while (hb.head + size - __atomic_load_n(&hb.h->tail, __ATOMIC_ACQUIRE) > ED_PAGES * 4096)
			usleep(100);
		vperf_ring_copy_in(hb.data, ED_PAGES * 4096, hb.head, &rec, size);
		hb.head += size;
		hb_publish(&hb);
	}
	if (write(ready, &c, 1) != 1)
		_exit(4);
	if (read(go, &c, 1) < 0)	/* EOF: all go at once */
		_exit(5);
	_exit(0);
}

static void test_exitdrain(void)
{
	struct stats s0, s1;
	int bad = 0;
	char what[500];

	s0 = stats_or_fail("exitdrain");
	for (int r = 0; r < ED_ROUNDS; r++) {
		int ready[2], go[2], f, status;
		pid_t kids[ED_PROCS];
		char c;

		f = open("/dev/" VPERF_DEV_NAME, O_RDWR);
		if (f < 0 || pipe(ready) || pipe(go)) {
			bad++;
			break;
		}
		for (int i = 0; i < ED_PROCS; i++) {
			kids[i] = fork();
			if (kids[i] == 0) {
				close(ready[0]);
				close(go[1]);
				exitdrain_child(f, i, ready[1], go[0]);
			}
		}
		close(ready[1]);
		close(go[0]);
		for (int i = 0; i < ED_PROCS; i++)
			if (read(ready[0], &c, 1) != 1)
				bad++;
		close(go[1]);	/* they exit... */
		close(f);	/* ...while the file goes: the last of these releases it */
		for (int i = 0; i < ED_PROCS; i++)
			if (waitpid(kids[i], &status, 0) != kids[i] || !WIFEXITED(status) || WEXITSTATUS(status))
				bad++;
		close(ready[0]);
	}
	usleep(100000);
	s1 = stats_or_fail("exitdrain");
	snprintf(what, sizeof(what), "%d rounds of %d processes with %d markers each exiting as their file is "
		 "released (%d failed): marker records written %llu (want %d), dropped %llu, refused %llu, "
		 "orphaned %llu", ED_ROUNDS, ED_PROCS, ED_MARKS, bad,
		 s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK], ED_ROUNDS * ED_PROCS * ED_MARKS,
		 s1.lost[VPERF_TRACE_MARK] - s0.lost[VPERF_TRACE_MARK], s1.invalid - s0.invalid,
		 s1.orphaned - s0.orphaned);
	check(!bad && s1.produced[VPERF_TRACE_MARK] - s0.produced[VPERF_TRACE_MARK] ==
	      (unsigned long long)ED_ROUNDS * ED_PROCS * ED_MARKS && s1.lost[VPERF_TRACE_MARK] == s0.lost[VPERF_TRACE_MARK] &&
	      s1.invalid == s0.invalid && s1.orphaned == s0.orphaned, "exitdrain", what);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "stats";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "on"))
		test_on();
	else if (!strcmp(mode, "marks"))
		test_marks(argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 10000);
	else if (!strcmp(mode, "wrap"))
		test_wrap();
	else if (!strcmp(mode, "lost"))
		test_lost();
	else if (!strcmp(mode, "sleep"))
		test_sleep();
	else if (!strcmp(mode, "hostile"))
		test_hostile();
	else if (!strcmp(mode, "sample"))
		test_sample();
	else if (!strcmp(mode, "procs"))
		test_procs();
	else if (!strcmp(mode, "irq"))
		test_irq();
	else if (!strcmp(mode, "off"))
		test_off();
	else if (!strcmp(mode, "loaded"))
		test_loaded();
	else if (!strcmp(mode, "cost"))
		test_cost();
	else if (!strcmp(mode, "sampler"))
		test_sampler();
	else if (!strcmp(mode, "markquota"))
		test_markquota();
	else if (!strcmp(mode, "exitdrain"))
		test_exitdrain();
	else if (!strcmp(mode, "stats")) {
		print_stats();
		return 0;
	} else {
		fprintf(stderr, "usage: vperf-kmod-trace on|marks [N]|wrap|lost|sleep|hostile|sample|procs|irq|off|"
			"loaded|cost|sampler|markquota|exitdrain|stats\n");
		return 2;
	}
	printf("kmod-trace: %s %s\n", mode, fails ? "FAILED" : "PASSED");
	return fails ? 1 : 0;
}
