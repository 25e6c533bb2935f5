// SPDX-License-Identifier: MIT
/*
 * vperf-kmod-fuzz SECONDS [SEED [WORKERS]]: a hostile user of /dev/vperf, for SECONDS.
 *
 * WORKERS threads (default 6) each draw random operations from their own generator (seeded from
 * SEED, printed, so a run can be repeated as far as scheduling allows) on a shared pool of open
 * files and mappings:
 *   open, close, dup; THREAD_START for itself (any flags, sizes short, exact and long with a junk
 *   tail, sampling arguments good and bad, any signal), for a sibling, a child process that is
 *   about to exit, init, or a random tid; THREAD_STOP, THREAD_READ, THREAD_LIST (row sizes and
 *   buffers good, short, NULL, read-only, unmapped), INFO, VCPU_TOTALS, any other ioctl number
 *   with any argument; mmap at every offset, length, protection and sharing; munmap (whole or
 *   part), mprotect; loads of the mapped pages and the doorbell, stores of ring tails; short-lived
 *   threads that start a context and exit without stopping it; forked children that start,
 *   map and exit; CPU migrations.
 * What this tests is the kernel, so the caller judges: dmesg without oops, BUG, WARNING, lockup
 * or RCU stall, and the module's `threads` parameter 0 once this process is gone (its short
 * threads' mappings hold their files until then), and rmmod then succeeding.  Exit 0 after the
 * time, 2 on bad usage or no /dev/vperf; a fault outside the guarded loads kills it (a bug here).
 * Faults of the guarded loads (a page the module refused, a range another worker unmapped) are
 * caught and counted: a hostile user's problem, not the kernel's.
 * Prints "kmod-fuzz: ..." lines: the seed, progress every 10 s, and a summary of operations and
 * results by errno.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vperf_guest_uapi.h"

#define NR_FDS		8
#define NR_MAPS		32
#define MAX_WORKERS	16
#define MAX_KIDS	6	/* short-lived threads and child processes alive at once */
#define PAGE		4096ul

enum op {
	OP_OPEN, OP_CLOSE, OP_DUP, OP_START_SELF, OP_START_OTHER, OP_STOP, OP_READ, OP_LIST,
	OP_INFO, OP_TOTALS, OP_RANDOM_IOCTL, OP_MMAP, OP_MUNMAP, OP_MPROTECT, OP_TOUCH,
	OP_THREAD, OP_FORK, OP_MIGRATE, NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"open", "close", "dup", "start-self", "start-other", "stop", "read", "list", "info",
	"totals", "ioctl-any", "mmap", "munmap", "mprotect", "touch", "thread", "fork", "migrate",
};

/* how often each is drawn, out of the sum */
static const unsigned int op_weight[NR_OPS] = {
	4, 3, 1, 8, 4, 5, 5, 3, 2, 1, 4, 8, 4, 2, 8, 2, 1, 2,
};

static atomic_int fds[NR_FDS];
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct map {
	uint8_t *addr;
	size_t len;
	int prot;
	unsigned long pgoff;
} maps[NR_MAPS];
static atomic_int worker_tids[MAX_WORKERS];
static atomic_int kid_pid;		/* the last forked child, likely exiting */
static atomic_int kids_alive;
static atomic_ulong ops[NR_OPS], errs[NR_OPS][4];	/* ok, EINVAL/EFAULT, other errno, fault */
static atomic_ulong signals_seen, faults;
static atomic_bool stop;
static uint8_t *ro_page, *hole;	/* a read-only page and an inaccessible one, for bad buffers */
static unsigned int nr_workers = 6;
static const char *dev_path = "/dev/vperf";	/* VPERF_FUZZ_DEV: another file, to test this program */

static __thread int my_fd = -1;	/* where this thread last started its own context */
static __thread sigjmp_buf fault_jmp;
static __thread volatile int fault_armed;

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static unsigned int below(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rnd(s) % n);
}

static void tally(enum op op, long ret)
{
	int e = ret < 0 ? errno : 0;

	atomic_fetch_add(&ops[op], 1);
	atomic_fetch_add(&errs[op][e == 0 ? 0 : (e == EINVAL || e == EFAULT) ? 1 : 2], 1);
}

static int any_fd(uint64_t *s)
{
	int fd = atomic_load(&fds[below(s, NR_FDS)]);

	/* now and then a descriptor that is not ours to use: stdin, a bad one */
	switch (below(s, 32)) {
	case 0:
		return -1;
	case 1:
		return 0;
	default:
		return fd;
	}
}

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code == POLL_IN) {	/* a sample's signal may be any number, these too */
		atomic_fetch_add(&signals_seen, 1);
		return;
	}
	if (fault_armed) {
		fault_armed = 0;
		siglongjmp(fault_jmp, 1);
	}
	signal(sig, SIG_DFL);	/* a fault outside a guarded access: ours, not the kernel's; die of it */
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&signals_seen, 1);
}

/*
 * A buffer for an ioctl: good, NULL, read-only, inaccessible, a kernel address, one below
 * mmap_min_addr (never mapped), or an unaligned copy of
 * the good one's len bytes (in a scratch buffer with room: what the kernel writes back must not
 * land past our own variable).
 */
static void *any_buf(uint64_t *s, void *good, size_t len)
{
	static __thread uint8_t scratch[8192 + 64] __attribute__((aligned(64)));

	switch (below(s, 12)) {
	case 0:
		return NULL;
	case 1:
		return ro_page;
	case 2:
		return hole;
	case 3:
		return below(s, 2) ? (void *)0xffffffff81000000ul : (void *)0x1000ul;	/* kernel; never mapped */
	case 4:
		if (len > sizeof(scratch) - 1)
			return good;
		memcpy(scratch + 1, good, len);
		return scratch + 1;
	default:
		return good;
	}
}

static int any_signo(uint64_t *s)
{
	static const int common[] = { 0, SIGUSR1, SIGIO, 0, SIGKILL, SIGSTOP, -1, 65, 200 };

	int sig;

	if (below(s, 4))
		return common[below(s, sizeof(common) / sizeof(common[0]))];
	sig = (int)below(s, 70);	/* includes the real-time ones */
	/*
	 * Not glibc's own 32 and 33: their default action kills us (glibc installs its handlers
	 * lazily and sigaction() refuses them); the module's path is the same for every number.
	 */
	return sig == 32 || sig == 33 ? SIGUSR2 : sig;
}

static void start(uint64_t *s, int fd, pid_t tid, enum op op)
{
	static const uint32_t sizes[] = { VPERF_THREAD_START_SIZE_VER0, VPERF_THREAD_START_SIZE_VER1,
					  VPERF_THREAD_START_SIZE_VER1, 0, 8, 47, 64, 4096 };
	uint8_t buf[4096 + 64] __attribute__((aligned(8)));
	struct vperf_thread_start *st = (void *)buf;
	uint32_t size = sizes[below(s, sizeof(sizes) / sizeof(sizes[0]))];

	memset(buf, 0, sizeof(buf));
	if (size > sizeof(*st) && below(s, 2))
		buf[sizeof(*st) + below(s, size - sizeof(*st))] = (uint8_t)rnd(s) | 1;	/* junk tail */
	st->size = size;
	st->flags = below(s, 8) ? (uint32_t)below(s, 4) : (uint32_t)rnd(s);
	st->tid = tid;
	if (st->flags & VPERF_THREAD_SAMPLE) {
		st->sample_counter = below(s, 6) ? VPERF_THREAD_CTR_VCPU_CLOCK : (uint32_t)rnd(s);
		st->sample_pages = below(s, 6) ? 1u << below(s, 7) : (uint32_t)below(s, 200);
		st->sample_period = below(s, 6) ? 1000000 : (uint64_t)rnd(s) % 3000000;
		st->sample_signo = any_signo(s);
		st->sample_cookie = (int32_t)rnd(s);
	}
	long ret = ioctl(fd, VPERF_IOC_THREAD_START, any_buf(s, st, size < 4096 ? size : 4096));

	tally(op, ret);
	if (!ret && (tid == 0 || tid == (pid_t)syscall(SYS_gettid)))
		my_fd = fd;
}

static void list(uint64_t *s, int fd)
{
	static uint8_t rows[20 * 300];
	static const uint32_t row_sizes[] = { VPERF_THREAD_ROW_SIZE_VER0, VPERF_THREAD_ROW_SIZE_VER0,
					      0, 255, 257, 300, 65536, 70000 };
	struct vperf_thread_list l;

	memset(&l, 0, sizeof(l));
	l.size = below(s, 8) ? sizeof(l) : (uint32_t)below(s, 64);
	l.row_size = row_sizes[below(s, sizeof(row_sizes) / sizeof(row_sizes[0]))];
	l.nr_rows = below(s, 8) ? below(s, 21) : (uint32_t)rnd(s);
	if (l.row_size * (uint64_t)l.nr_rows > sizeof(rows) - 1)
		l.rows = (uint64_t)(uintptr_t)hole;	/* too big for ours: a fault, not our memory */
	else
		l.rows = (uint64_t)(uintptr_t)any_buf(s, rows, sizeof(rows) - 1);
	if (!below(s, 16))
		l.total = 1;	/* an out field set: refused */
	tally(OP_LIST, ioctl(fd, VPERF_IOC_THREAD_LIST, any_buf(s, &l, sizeof(l))));
}

static void random_ioctl(uint64_t *s, int fd)
{
	uint8_t buf[8192] __attribute__((aligned(8)));
	unsigned long cmd;
	unsigned int i;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 64; i++)
		((uint64_t *)buf)[i] = rnd(s);
	((uint32_t *)buf)[0] = (uint32_t)below(s, 8200);	/* the size field, as every struct has */
	((uint64_t *)buf)[3] = (uintptr_t)hole;	/* LIST's rows: never somewhere of ours by chance */
	cmd = _IOC(below(s, 4), below(s, 4) ? VPERF_IOC_MAGIC : (unsigned int)rnd(s) & 0xff,
		   below(s, 4) ? below(s, 8) : (unsigned int)rnd(s) & 0xff, below(s, 4) ? below(s, 64) * 8 :
		   (unsigned int)rnd(s) & 0x3fff);
	if (!below(s, 8))
		cmd = (unsigned long)rnd(s);
	tally(OP_RANDOM_IOCTL, ioctl(fd, cmd, any_buf(s, buf, sizeof(buf))));
}

static void do_mmap(uint64_t *s, int fd)
{
	static const unsigned long pgoffs[] = { 0, 0, 1, 1, 2, 2, 3, 4096, 1ul << 40 };
	static const int prots[] = { PROT_READ, PROT_READ, PROT_READ | PROT_WRITE,
				     PROT_READ | PROT_WRITE | PROT_EXEC, PROT_NONE, PROT_WRITE };
	unsigned long pgoff = pgoffs[below(s, sizeof(pgoffs) / sizeof(pgoffs[0]))];
	int prot = prots[below(s, sizeof(prots) / sizeof(prots[0]))];
	size_t len = below(s, 4) ? PAGE : (size_t)(1 + below(s, 70)) * PAGE;
	void *p;
	int i;

	if (pgoff == 2 && below(s, 2))
		len = (size_t)(1 + (1u << below(s, 7))) * PAGE;	/* a ring's size, for some ring */
	if (!below(s, 16))
		len = below(s, 2) ? 100 : 0;
	p = mmap(NULL, len, prot, below(s, 4) ? MAP_SHARED : MAP_PRIVATE, fd, (off_t)(pgoff * PAGE));
	tally(OP_MMAP, p == MAP_FAILED ? -1 : 0);
	if (p == MAP_FAILED)
		return;
	pthread_mutex_lock(&maps_lock);
	i = (int)below(s, NR_MAPS);
	if (maps[i].addr)
		munmap(maps[i].addr, maps[i].len);	/* the slot's old one goes */
	maps[i] = (struct map){ .addr = p, .len = len, .prot = prot, .pgoff = pgoff };
	pthread_mutex_unlock(&maps_lock);
}

static void do_munmap(uint64_t *s, bool part)
{
	struct map *m;

	pthread_mutex_lock(&maps_lock);
	m = &maps[below(s, NR_MAPS)];
	if (m->addr) {
		if (part && m->len > PAGE) {
			size_t off = (1 + below(s, (unsigned int)(m->len / PAGE) - 1)) * PAGE;

			tally(OP_MUNMAP, munmap(m->addr + off, m->len - off));
			m->len = off;
		} else {
			tally(OP_MUNMAP, munmap(m->addr, m->len));
			m->addr = NULL;
		}
	}
	pthread_mutex_unlock(&maps_lock);
}

static void do_mprotect(uint64_t *s)
{
	struct map *m;

	pthread_mutex_lock(&maps_lock);
	m = &maps[below(s, NR_MAPS)];
	if (m->addr)
		tally(OP_MPROTECT, mprotect(m->addr, PAGE, below(s, 2) ? PROT_READ | PROT_WRITE : PROT_READ));
	pthread_mutex_unlock(&maps_lock);
}

/* Loads from a mapping (the doorbell's slots among them), a store of a ring's tail. */
static void touch(uint64_t *s)
{
	volatile uint64_t sink = 0;
	struct map *m;

	pthread_mutex_lock(&maps_lock);
	m = &maps[below(s, NR_MAPS)];
	if (m->addr && (m->prot & PROT_READ)) {
		if (sigsetjmp(fault_jmp, 1)) {
			atomic_fetch_add(&faults, 1);
			tally(OP_TOUCH, 0);
		} else {
			size_t off = below(s, 4) ? 8 * below(s, 32) : below(s, (unsigned int)m->len);

			fault_armed = 1;
			if (off + 8 <= m->len)
				sink += *(volatile uint64_t *)(m->addr + (off & ~7ul));
			if ((m->prot & PROT_WRITE) && m->pgoff == VPERF_SAMPLE_PGOFF)
				((volatile struct vperf_sample_ring *)m->addr)->tail = below(s, 2) ? rnd(s) : sink;
			fault_armed = 0;
			tally(OP_TOUCH, 0);
		}
	}
	pthread_mutex_unlock(&maps_lock);
	(void)sink;
}

/* A thread that starts a context (maybe inheriting or sampling), maps it, exits without STOP. */
static void *short_thread(void *arg)
{
	uint64_t s = (uint64_t)(uintptr_t)arg;
	int fd = atomic_load(&fds[below(&s, NR_FDS)]);
	volatile uint64_t x = 0;
	void *p;

	start(&s, fd, 0, OP_THREAD);
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	for (unsigned int i = below(&s, 200000); i; i--)
		x += i;
	if (p != MAP_FAILED && below(&s, 2))
		munmap(p, PAGE);	/* else the mapping outlives the thread (and holds the file) */
	atomic_fetch_sub(&kids_alive, 1);
	return NULL;
}

/* A child process: system calls only (the parent has threads), then exit. */
static void child(uint64_t *s)
{
	struct vperf_thread_start st = { .size = sizeof(st), .flags = (uint32_t)below(s, 2) };
	int fd = atomic_load(&fds[below(s, NR_FDS)]);

	if (below(s, 2))
		fd = open(dev_path, O_RDWR);
	ioctl(fd, VPERF_IOC_THREAD_START, &st);
	if (below(s, 2))
		mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	if (below(s, 2))
		ioctl(fd, VPERF_IOC_THREAD_READ);
	_exit(0);
}

static void step(uint64_t *s)
{
	static unsigned int total;
	unsigned int w, i;
	pid_t pid;
	int fd;

	if (!total)
		for (i = 0; i < NR_OPS; i++)
			total += op_weight[i];
	w = below(s, total);
	for (i = 0; w >= op_weight[i]; i++)
		w -= op_weight[i];

	switch ((enum op)i) {
	case OP_OPEN:
		fd = open(dev_path, O_RDWR | O_CLOEXEC);
		tally(OP_OPEN, fd);
		if (fd >= 0 && (fd = atomic_exchange(&fds[below(s, NR_FDS)], fd)) >= 0)
			close(fd);
		break;
	case OP_CLOSE:
		fd = atomic_exchange(&fds[below(s, NR_FDS)], -1);
		if (fd >= 0)
			tally(OP_CLOSE, close(fd));
		break;
	case OP_DUP:
		fd = dup(any_fd(s));
		tally(OP_DUP, fd);
		if (fd >= 0 && (fd = atomic_exchange(&fds[below(s, NR_FDS)], fd)) >= 0)
			close(fd);
		break;
	case OP_START_SELF:
		start(s, any_fd(s), below(s, 4) ? 0 : (pid_t)syscall(SYS_gettid), OP_START_SELF);
		break;
	case OP_START_OTHER:
		switch (below(s, 6)) {
		case 0:
		case 1:
			pid = atomic_load(&worker_tids[below(s, nr_workers)]);
			break;
		case 2:
			pid = atomic_load(&kid_pid);
			break;
		case 3:
			pid = 1;
			break;
		case 4:
			pid = getpid();
			break;
		default:
			pid = (pid_t)rnd(s);
			break;
		}
		start(s, any_fd(s), pid, OP_START_OTHER);
		break;
	case OP_STOP:
		tally(OP_STOP, ioctl(any_fd(s), VPERF_IOC_THREAD_STOP));
		break;
	case OP_READ:
		tally(OP_READ, ioctl(any_fd(s), VPERF_IOC_THREAD_READ));
		break;
	case OP_LIST:
		list(s, any_fd(s));
		break;
	case OP_INFO: {
		struct vperf_info info = { .size = below(s, 4) ? sizeof(info) : (uint32_t)rnd(s) };

		tally(OP_INFO, ioctl(any_fd(s), VPERF_IOC_INFO, any_buf(s, &info, sizeof(info))));
		break;
	}
	case OP_TOTALS: {
		static __thread struct vperf_vcpu_totals t;

		t.size = below(s, 4) ? sizeof(t) : (uint32_t)rnd(s);
		tally(OP_TOTALS, ioctl(any_fd(s), VPERF_IOC_VCPU_TOTALS, any_buf(s, &t, sizeof(t))));
		break;
	}
	case OP_RANDOM_IOCTL:
		random_ioctl(s, any_fd(s));
		break;
	case OP_MMAP:	/* half on the file of our own context: what a mapping needs */
		do_mmap(s, below(s, 2) ? my_fd : any_fd(s));
		break;
	case OP_MUNMAP:
		do_munmap(s, below(s, 4) == 0);
		break;
	case OP_MPROTECT:
		do_mprotect(s);
		break;
	case OP_TOUCH:
		touch(s);
		break;
	case OP_THREAD: {
		pthread_t t;

		if (atomic_fetch_add(&kids_alive, 1) >= MAX_KIDS) {
			atomic_fetch_sub(&kids_alive, 1);
			break;
		}
		if (pthread_create(&t, NULL, short_thread, (void *)(uintptr_t)(rnd(s) | 1))) {
			atomic_fetch_sub(&kids_alive, 1);
			break;
		}
		pthread_detach(t);
		break;
	}
	case OP_FORK:
		pid = fork();
		if (pid == 0)
			child(s);
		tally(OP_FORK, pid);
		if (pid > 0)
			atomic_store(&kid_pid, pid);	/* reaped by SIGCHLD's SIG_IGN */
		break;
	case OP_MIGRATE: {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(below(s, 2), &set);
		tally(OP_MIGRATE, below(s, 2) ? sched_setaffinity(0, sizeof(set), &set) : sched_yield());
		break;
	}
	case NR_OPS:
		break;
	}
}

struct worker {
	pthread_t thread;
	unsigned int idx;
	uint64_t seed;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	uint64_t s = w->seed;

	atomic_store(&worker_tids[w->idx], (int)syscall(SYS_gettid));
	while (!atomic_load(&stop))
		step(&s);
	return NULL;
}

/* The whole of str as a number in base (0: C's prefixes): 0, or -1 for anything else. */
static int parse_u64(const char *str, int base, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(str, &end, base);
	return errno || end == str || *end || *str == '-' ? -1 : 0;
}

static long threads_param(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/module/vperf_guest/parameters/threads", "r");
	long n = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			n = strtol(buf, NULL, 10);
		fclose(f);
	}
	return n;
}

static unsigned long sum_ops(void)
{
	unsigned long n = 0;

	for (int i = 0; i < NR_OPS; i++)
		n += atomic_load(&ops[i]);
	return n;
}

int main(int argc, char **argv)
{
	struct worker workers[MAX_WORKERS];
	struct sigaction sa;
	unsigned int seconds, i;
	uint64_t seed, v;
	time_t t0;
	long left;

	if (argc < 2 || argc > 4 || parse_u64(argv[1], 10, &v) || !v || v > 86400) {
		fprintf(stderr, "usage: vperf-kmod-fuzz SECONDS (1..86400) [SEED [WORKERS (1..%d)]]\n",
			MAX_WORKERS);
		return 2;
	}
	seconds = (unsigned int)v;
	seed = (uint64_t)time(NULL) * 2654435761u;
	if (argc > 2 && (parse_u64(argv[2], 0, &seed) || !seed)) {
		fprintf(stderr, "vperf-kmod-fuzz: SEED '%s': a non-zero number (decimal or 0x hex)\n", argv[2]);
		return 2;
	}
	if (argc > 3) {
		if (parse_u64(argv[3], 10, &v) || !v || v > MAX_WORKERS) {
			fprintf(stderr, "vperf-kmod-fuzz: WORKERS '%s': 1..%d\n", argv[3], MAX_WORKERS);
			return 2;
		}
		nr_workers = (unsigned int)v;
	}
	if (getenv("VPERF_FUZZ_DEV"))
		dev_path = getenv("VPERF_FUZZ_DEV");
	printf("kmod-fuzz: seed 0x%llx, %u workers, %u s\n", (unsigned long long)seed, nr_workers,
	       seconds);
	fflush(stdout);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	for (i = 1; i < 65; i++)
		if (i != SIGSEGV && i != SIGBUS && i != SIGKILL && i != SIGSTOP && i != SIGCHLD &&
		    i != 32 && i != 33)	/* glibc's own */
			sigaction((int)i, &sa, NULL);
	signal(SIGCHLD, SIG_IGN);	/* children reap themselves */

	ro_page = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hole = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro_page == MAP_FAILED || hole == MAP_FAILED) {
		perror("vperf-kmod-fuzz: mmap");
		return 2;
	}
	/* hole stays mapped PROT_NONE: an unmapped one would be reused by the next mmap (a stack) */
	for (i = 0; i < NR_FDS; i++)
		atomic_store(&fds[i], i < 2 ? open(dev_path, O_RDWR | O_CLOEXEC) : -1);
	if (atomic_load(&fds[0]) < 0) {
		fprintf(stderr, "vperf-kmod-fuzz: %s: %s\n", dev_path, strerror(errno));
		return 2;
	}

	t0 = time(NULL);
	for (i = 0; i < nr_workers; i++) {
		workers[i].idx = i;
		workers[i].seed = seed ^ (0x9e3779b97f4a7c15ull * (i + 1));
		if (pthread_create(&workers[i].thread, NULL, worker_run, &workers[i])) {
			perror("vperf-kmod-fuzz: pthread_create");
			return 2;
		}
	}
	while ((left = (long)seconds - (long)(time(NULL) - t0)) > 0) {
		sleep(left < 10 ? (unsigned int)left : 10);
		printf("kmod-fuzz: %ld s, %lu operations, %ld contexts live\n", (long)(time(NULL) - t0),
		       sum_ops(), threads_param());
		fflush(stdout);
	}
	atomic_store(&stop, true);
	for (i = 0; i < nr_workers; i++)
		pthread_join(workers[i].thread, NULL);
	while (atomic_load(&kids_alive) > 0)
		usleep(1000);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;

	for (i = 0; i < NR_OPS; i++)
		printf("kmod-fuzz: %-11s %8lu: ok %lu, EINVAL/EFAULT %lu, other errors %lu\n", op_names[i],
		       atomic_load(&ops[i]), atomic_load(&errs[i][0]), atomic_load(&errs[i][1]),
		       atomic_load(&errs[i][2]));
	printf("kmod-fuzz: %lu signals, %lu faults on our own mappings\n", atomic_load(&signals_seen),
	       atomic_load(&faults));

	/* Everything closed: no context may be left (children and short threads are gone too). */
	for (i = 0; i < NR_MAPS; i++)
		if (maps[i].addr)
			munmap(maps[i].addr, maps[i].len);
	for (i = 0; i < NR_FDS; i++)
		if (atomic_load(&fds[i]) >= 0)
			close(atomic_load(&fds[i]));
	/* short threads' own mappings hold their files until the process's exit: count after it */
	printf("kmod-fuzz: DONE %lu operations in %ld s (seed 0x%llx)\n", sum_ops(),
	       (long)(time(NULL) - t0),
	       (unsigned long long)seed);
	return 0;
}
