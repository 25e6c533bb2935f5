// SPDX-License-Identifier: MIT
/*
 * The "perf" backend: Linux perf_event_open(2).
 *
 * Every event is opened once per root thread: the calling thread
 * (TARGET_SELF), one thread (TARGET_THREAD), or each thread a process has
 * at open (TARGET_PROCESS, with inherit, so that threads and processes it
 * creates later are counted too).  Events count on any CPU (cpu == -1).
 *
 * Per-thread counts (VPERF_EVSET_PER_THREAD): with inherit_stat, the
 * kernel writes a PERF_RECORD_READ with the pid, tid and final count of
 * every inherited counter when its thread exits; PERF_FORMAT_ID says which
 * event it was.  The kernel maps no ring buffer of an inherited per-task
 * event, so each root gets a non-inherited dummy event whose ring the
 * real events write into (PERF_EVENT_IOC_SET_OUTPUT).  That dummy also
 * keeps the kernel from treating the children's perf contexts as clones
 * of the root's, which would let a context switch swap them (and a thread
 * holding the root's original events exits without a report).  A root's
 * own count is its events' totals minus what its descendants reported.
 *
 * Fast reads: for TARGET_SELF each event's first mmap page is kept; if the
 * kernel sets cap_user_rdpmc the count is read in user mode
 * (vperf__mmap_read), otherwise with read(2).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "internal.h"

#define RING_PAGES_THREADS	8	/* data pages for per-thread records */
#define RING_PAGES_SAMPLES	1	/* data pages for samples */

struct perf_rec_read {			/* PERF_RECORD_READ, our read_format */
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t value, enabled, running, id;
};

struct perf_rec_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[16];			/* NUL-padded to 8 bytes, at most 16 */
};

struct perf_rec_lost {
	struct perf_event_header header;
	uint64_t id, lost;
};

struct perf_ring {
	void *base;			/* mmap page, then the data pages */
	size_t len;
};

struct perf_priv {
	int nr_roots;
	pid_t *roots;			/* tids the events were opened on */
	pid_t pid;			/* getpid() for TARGET_SELF, else opts.pid */
	bool group;			/* opened as a group: one read for all */
	/* [e * nr_roots + r] */
	int *fd;
	uint64_t *id;			/* PERF_EVENT_IOC_ID, per-thread sets */
	struct vperf_count *reported;	/* what r's descendants reported for e */
	struct perf_ring *page;		/* TARGET_SELF: mmap page or sample ring */
	/* [r]: per-thread sets */
	int *dummy;
	struct perf_ring *ring;
};

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

static int perf_probe(char *why, size_t len)
{
	if (access("/proc/sys/kernel/perf_event_paranoid", F_OK) != 0) {
		snprintf(why, len, "this kernel has no perf_event support "
			 "(/proc/sys/kernel/perf_event_paranoid is missing)");
		return -ENOSYS;
	}
	return 0;
}

int vperf__list_threads(pid_t pid, pid_t **out, int *nr)
{
	char path[64];
	struct dirent *d;
	pid_t *v = NULL;
	int n = 0, cap = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir))) {
		char *end;
		long tid = strtol(d->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (n == cap) {
			pid_t *nv;

			cap = cap ? cap * 2 : 8;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(dir);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (pid_t)tid;
	}
	closedir(dir);
	if (!n) {
		free(v);
		return -ESRCH;
	}
	*out = v;
	*nr = n;
	return 0;
}

static void ring_unmap(struct perf_ring *r)
{
	if (r->base)
		munmap(r->base, r->len);
	r->base = NULL;
}

static int ring_map(struct vperf_evset *es, struct perf_ring *r, int fd,
		    size_t data_pages, int prot, const char *what)
{
	size_t len = (1 + data_pages) * page_size();
	void *m = mmap(NULL, len, prot, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return vperf__evset_fail(es, -errno, "cannot map the kernel's buffer for %s: %s",
					 what, strerror(errno));
	r->base = m;
	r->len = len;
	return 0;
}

static void perf_close(struct vperf_evset *es)
{
	struct perf_priv *p = es->priv;

	if (!p)
		return;
	for (int i = 0; p->fd && i < es->nr_events * p->nr_roots; i++) {
		if (p->fd[i] < 0)
			continue;
		if (es->events[i / p->nr_roots].sampling)
			vperf__sample_unregister(p->fd[i]);
		ioctl(p->fd[i], PERF_EVENT_IOC_DISABLE, 0);
	}
	for (int i = 0; p->page && i < es->nr_events; i++)
		ring_unmap(&p->page[i]);
	for (int r = 0; p->ring && r < p->nr_roots; r++)
		ring_unmap(&p->ring[r]);
	for (int i = 0; p->fd && i < es->nr_events * p->nr_roots; i++)
		if (p->fd[i] >= 0)
			close(p->fd[i]);
	for (int r = 0; p->dummy && r < p->nr_roots; r++)
		if (p->dummy[r] >= 0)
			close(p->dummy[r]);
	free(p->roots);
	free(p->fd);
	free(p->id);
	free(p->reported);
	free(p->page);
	free(p->dummy);
	free(p->ring);
	free(p);
	es->priv = NULL;
}

static bool per_thread(const struct vperf_evset *es)
{
	return es->opts.flags & VPERF_EVSET_PER_THREAD;
}

static int open_one(struct vperf_evset *es, int e, int r, int group_fd)
{
	struct perf_priv *p = es->priv;
	struct vperf_event *ev = &es->events[e];
	struct perf_event_attr attr = ev->attr;
	pid_t pid = es->opts.target == VPERF_TARGET_SELF ? 0 : p->roots[r];
	int fd;

	attr.size = sizeof(attr);
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr.disabled = group_fd < 0;
	if (p->group && e == 0)
		attr.read_format |= PERF_FORMAT_GROUP;
	if (es->opts.target == VPERF_TARGET_PROCESS)
		attr.inherit = 1;
	if (per_thread(es)) {
		attr.inherit_stat = 1;
		attr.read_format |= PERF_FORMAT_ID;
		/* PERF_RECORD_COMM, once per thread: names outlive threads. */
		attr.comm = e == 0;
	}
	if (es->opts.flags & VPERF_EVSET_ENABLE_ON_EXEC)
		attr.enable_on_exec = group_fd < 0;
	if (ev->sampling) {
		if (ev->sopts.period) {
			attr.sample_period = ev->sopts.period;
		} else {
			attr.freq = 1;
			attr.sample_freq = ev->sopts.freq;
		}
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
		attr.wakeup_events = 1;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
	}

	fd = vperf__perf_event_open(&attr, pid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	if ((fd == -EACCES || fd == -EPERM) && !ev->user_plm && !attr.exclude_kernel) {
		/* As perf does: paranoid 2 still allows counting user space. */
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		fd = vperf__perf_event_open(&attr, pid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			ev->attr.exclude_kernel = 1;
			ev->attr.exclude_hv = 1;
			ev->user_only_fallback = true;
			pr_info("%s: counting user space only (kernel.perf_event_paranoid)\n",
				ev->name);
		}
	}
	if (fd < 0) {
		char msg[VPERF_ERRMSG_LEN];

		vperf__open_strerror(fd, ev->name, &attr, pid ? pid : es->opener_tid, "/",
				     msg, sizeof(msg));
		vperf__evset_fail(es, fd, "%s", msg);
		es->err_event = e;
		return fd;
	}
	p->fd[e * p->nr_roots + r] = fd;
	if (per_thread(es)) {
		if (ioctl(fd, PERF_EVENT_IOC_ID, &p->id[e * p->nr_roots + r]) ||
		    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p->dummy[r]))
			return vperf__evset_fail(es, -errno, "cannot route the per-thread counts of '%s': %s",
						 ev->name, strerror(errno));
	}
	return 0;
}

/* The ring that collects root r's per-thread records, see the top. */
static int open_thread_ring(struct vperf_evset *es, int r)
{
	struct perf_priv *p = es->priv;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.watermark = 1,
	};
	int fd;

	attr.wakeup_watermark = (uint32_t)(RING_PAGES_THREADS * page_size() / 2);
	fd = vperf__perf_event_open(&attr, p->roots[r], -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		char msg[VPERF_ERRMSG_LEN];

		vperf__open_strerror(fd, "per-thread bookkeeping (dummy)", &attr, p->roots[r],
				     "/", msg, sizeof(msg));
		return vperf__evset_fail(es, fd, "%s", msg);
	}
	p->dummy[r] = fd;
	return ring_map(es, &p->ring[r], fd, RING_PAGES_THREADS, PROT_READ | PROT_WRITE,
			"per-thread counts");
}

static unsigned int drain_samples(void *ring, uint64_t *time, uint64_t *period,
				  uint64_t *lost);

static int setup_sampling(struct vperf_evset *es, int e)
{
	struct perf_priv *p = es->priv;
	struct vperf_event *ev = &es->events[e];
	int fd = p->fd[e], ret;
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = es->opener_tid };

	ret = ring_map(es, &p->page[e], fd, RING_PAGES_SAMPLES, PROT_READ | PROT_WRITE,
		       ev->name);
	if (ret)
		return ret;
	ret = vperf__sample_register(fd, es, e, p->page[e].base, drain_samples);
	if (ret)
		return vperf__evset_fail(es, ret, "cannot sample '%s': %s", ev->name,
					 ret == -ENOSPC ? "too many sampling events in this process"
							: strerror(-ret));
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, ev->sopts.signo) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC)) {
		ret = -errno;
		vperf__sample_unregister(fd);
		return vperf__evset_fail(es, ret, "cannot route overflow signals of '%s': %s",
					 ev->name, strerror(-ret));
	}
	return 0;
}

static int alloc_priv(struct vperf_evset *es, struct perf_priv *p)
{
	int n = es->nr_events * p->nr_roots;

	p->fd = malloc(n * sizeof(*p->fd));
	p->id = calloc(n, sizeof(*p->id));
	p->reported = calloc(n, sizeof(*p->reported));
	p->page = calloc(es->nr_events, sizeof(*p->page));
	p->dummy = malloc(p->nr_roots * sizeof(*p->dummy));
	p->ring = calloc(p->nr_roots, sizeof(*p->ring));
	if (!p->fd || !p->id || !p->reported || !p->page || !p->dummy || !p->ring)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	for (int i = 0; i < n; i++)
		p->fd[i] = -1;
	for (int r = 0; r < p->nr_roots; r++)
		p->dummy[r] = -1;
	return 0;
}

static int perf_open(struct vperf_evset *es)
{
	struct perf_priv *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return vperf__evset_fail(es, -ENOMEM, "out of memory");
	es->priv = p;

	if (es->opts.target == VPERF_TARGET_PROCESS) {
		p->pid = es->opts.pid;
		ret = vperf__list_threads(es->opts.pid, &p->roots, &p->nr_roots);
		if (ret) {
			vperf__evset_fail(es, ret, ret == -ESRCH ?
					  "no process with id %d (it may have exited)" :
					  "cannot list the threads of process %d", (int)es->opts.pid);
			goto out_close;
		}
	} else {
		p->roots = malloc(sizeof(*p->roots));
		if (!p->roots) {
			ret = vperf__evset_fail(es, -ENOMEM, "out of memory");
			goto out_close;
		}
		p->nr_roots = 1;
		p->pid = es->opts.target == VPERF_TARGET_SELF ? getpid() : es->opts.pid;
		p->roots[0] = es->opts.target == VPERF_TARGET_SELF ? es->opener_tid : es->opts.pid;
	}
	/* Per-thread records of a group would need another read_format. */
	p->group = (es->opts.flags & VPERF_EVSET_GROUP) && es->nr_events > 1 && !per_thread(es);
	ret = alloc_priv(es, p);
	if (ret)
		goto out_close;

	for (int r = 0; r < p->nr_roots; r++) {
		if (per_thread(es)) {
			ret = open_thread_ring(es, r);
			if (ret == -ESRCH && r > 0)
				continue;	/* exited since we listed it: fine */
			if (ret)
				goto out_close;
		}
		for (int e = 0; e < es->nr_events; e++) {
			int leader = p->group && e ? p->fd[r] : -1;

			ret = open_one(es, e, r, leader);
			if (ret == -ESRCH && r > 0)
				break;
			if (ret)
				goto out_close;
		}
	}

	for (int e = 0; e < es->nr_events; e++) {
		struct vperf_event *ev = &es->events[e];

		ev->read_path = VPERF_READ_SYSCALL;
		if (ev->sampling) {
			ret = setup_sampling(es, e);
			if (ret)
				goto out_close;
		}
		if (es->opts.target != VPERF_TARGET_SELF || p->group)
			continue;
		if (!p->page[e].base) {
			ret = ring_map(es, &p->page[e], p->fd[e], 0, PROT_READ, ev->name);
			if (ret)
				goto out_close;
		}
		if (((struct perf_event_mmap_page *)p->page[e].base)->cap_user_rdpmc)
			ev->read_path = VPERF_READ_RDPMC;
		else if (!ev->sampling)
			ring_unmap(&p->page[e]);
	}

	for (int r = 0; per_thread(es) && r < p->nr_roots; r++) {
		struct vperf_evset_row *row;
		char path[64];
		FILE *f;

		if (p->fd[r] < 0)
			continue;
		row = vperf__evset_row(es, p->pid, p->roots[r], true);
		if (!row) {
			ret = vperf__evset_fail(es, -ENOMEM, "out of memory");
			goto out_close;
		}
		/* Its name now; an exec or prctl later sends PERF_RECORD_COMM. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)p->pid, (int)p->roots[r]);
		f = fopen(path, "re");
		if (f) {
			if (fgets(row->comm, sizeof(row->comm), f))
				row->comm[strcspn(row->comm, "\n")] = '\0';
			fclose(f);
		}
	}
	return 0;

out_close:
	perf_close(es);
	return ret;
}

static int perf_ctl(struct vperf_evset *es, int op)
{
	struct perf_priv *p = es->priv;
	static const char *const verb[] = { "start", "stop", "reset" };
	unsigned long req = op == VPERF_CTL_START ? PERF_EVENT_IOC_ENABLE :
			    op == VPERF_CTL_STOP ? PERF_EVENT_IOC_DISABLE :
						   PERF_EVENT_IOC_RESET;

	for (int r = 0; r < p->nr_roots; r++) {
		for (int e = 0; e < es->nr_events; e++) {
			int fd = p->fd[e * p->nr_roots + r];

			if (fd < 0)
				continue;
			if (ioctl(fd, req, p->group ? PERF_IOC_FLAG_GROUP : 0))
				return vperf__evset_fail(es, -errno, "cannot %s '%s': %s", verb[op],
							 es->events[e].name, strerror(errno));
			if (p->group)
				break;	/* PERF_IOC_FLAG_GROUP did the members */
		}
	}
	if (op == VPERF_CTL_RESET) {
		memset(p->reported, 0, es->nr_events * p->nr_roots * sizeof(*p->reported));
		for (int i = 0; i < es->nr_rows; i++) {
			es->rows[i].reported = 0;
			memset(es->rows[i].counts, 0, es->nr_events * sizeof(*es->rows[i].counts));
			memset(es->rows[i].reads, 0, es->nr_events * sizeof(*es->rows[i].reads));
		}
	}
	return 0;
}

/* value, enabled, running of one fd (not a group leader). */
static int read_fd(struct vperf_evset *es, int e, int fd, uint64_t v[3])
{
	uint64_t buf[4];
	size_t want = (per_thread(es) ? 4 : 3) * sizeof(uint64_t);
	ssize_t n = read(fd, buf, want);

	if (n != (ssize_t)want)
		return vperf__evset_fail(es, n < 0 ? -errno : -EIO, "cannot read '%s': %s",
					 es->events[e].name, n < 0 ? strerror(errno) : "short read");
	memcpy(v, buf, 3 * sizeof(uint64_t));
	return 0;
}

/* {nr, enabled, running, value[nr]} of root r's group. */
static int read_group(struct vperf_evset *es, int r, uint64_t *g)
{
	struct perf_priv *p = es->priv;
	size_t want = (3 + es->nr_events) * sizeof(uint64_t);
	ssize_t n = read(p->fd[r], g, want);

	if (n != (ssize_t)want || g[0] != (uint64_t)es->nr_events)
		return vperf__evset_fail(es, n < 0 ? -errno : -EIO,
					 "cannot read the event group: %s",
					 n < 0 ? strerror(errno) : "short read");
	return 0;
}

static uint64_t rdpmc_insn(uint32_t counter, void *ctx)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static uint64_t rdtsc_insn(void *ctx)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static __thread pid_t cached_tid;

static pid_t my_tid(void)
{
	if (!cached_tid)
		cached_tid = gettid();
	return cached_tid;
}

static int perf_read(struct vperf_evset *es, int e, struct vperf_count *c)
{
	struct perf_priv *p = es->priv;
	uint64_t tot[3] = { 0, 0, 0 };

	/* rdpmc reads the counter of the thread running it: only the opener. */
	if (es->events[e].read_path == VPERF_READ_RDPMC && my_tid() == es->opener_tid) {
		struct vperf_mmap_read_ops ops = { rdpmc_insn, rdtsc_insn, NULL, 0 };

		if (vperf__mmap_read(p->page[e].base, &ops, c) == 0)
			return 0;
		/* Not on a counter right now: read(2) knows. */
	}
	for (int r = 0; r < p->nr_roots; r++) {
		int fd = p->fd[e * p->nr_roots + r];
		uint64_t v[3 + VPERF_MAX_EVENTS];
		int ret;

		if (fd < 0)
			continue;
		if (p->group && e == 0) {
			ret = read_group(es, r, v);
			v[0] = v[3];	/* {value, enabled, running} of the leader */
		} else {
			ret = read_fd(es, e, fd, v);
		}
		if (ret)
			return ret;
		tot[0] += v[0];
		tot[1] += v[1];
		tot[2] += v[2];
	}
	vperf__count_set(c, tot[0], tot[1], tot[2]);
	return 0;
}

static int perf_read_all(struct vperf_evset *es, struct vperf_count *c, size_t n)
{
	struct perf_priv *p = es->priv;

	if (p->group && n > 1 && p->nr_roots == 1) {
		/* The whole group in one read(2). */
		uint64_t g[3 + VPERF_MAX_EVENTS];
		int ret = read_group(es, 0, g);

		if (ret)
			return ret;
		for (size_t i = 0; i < n; i++)
			vperf__count_set(&c[i], g[3 + i], g[1], g[2]);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int ret = perf_read(es, (int)i, &c[i]);

		if (ret)
			return ret;
	}
	return 0;
}

/* ---- samples ---- */

struct sample_acc {
	unsigned int n;
	uint64_t time, period, lost;
};

static void sample_record(const struct perf_event_header *h, void *arg)
{
	struct sample_acc *a = arg;

	if (h->type == PERF_RECORD_SAMPLE &&
	    h->size >= sizeof(*h) + 4 * sizeof(uint64_t)) {
		/* PERF_SAMPLE_IP | TID | TIME | PERIOD, in that order. */
		const uint64_t *v = (const uint64_t *)(h + 1);

		a->n++;
		a->time = v[2];
		a->period = v[3];
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(struct perf_rec_lost)) {
		a->lost += ((const struct perf_rec_lost *)h)->lost;
	}
}

/* Signal context: see sample.c. */
static unsigned int drain_samples(void *ring, uint64_t *time, uint64_t *period,
				  uint64_t *lost)
{
	struct sample_acc a = { 0 };

	vperf__ring_drain(ring, (char *)ring + page_size(), RING_PAGES_SAMPLES * page_size(),
			  sample_record, &a);
	*time = a.time;
	*period = a.period;
	*lost = a.lost;
	return a.n;
}

/* ---- per-thread counts ---- */

struct thread_acc {
	struct vperf_evset *es;
	int r;
	int err;
};

static int event_of_id(struct vperf_evset *es, int r, uint64_t id)
{
	struct perf_priv *p = es->priv;

	for (int e = 0; e < es->nr_events; e++)
		if (p->id[e * p->nr_roots + r] == id)
			return e;
	return -1;
}

static void thread_record(const struct perf_event_header *h, void *arg)
{
	struct thread_acc *a = arg;
	struct vperf_evset *es = a->es;
	struct perf_priv *p = es->priv;
	struct vperf_evset_row *row;

	if (h->type == PERF_RECORD_READ && h->size >= sizeof(struct perf_rec_read)) {
		const struct perf_rec_read *rr = (const void *)h;
		int e = event_of_id(es, a->r, rr->id);
		struct vperf_count *rep;

		if (e < 0)
			return;
		rep = &p->reported[e * p->nr_roots + a->r];
		vperf__count_set(rep, rep->raw + rr->value, rep->enabled + rr->enabled,
				 rep->running + rr->running);
		row = vperf__evset_row(es, (pid_t)rr->pid, (pid_t)rr->tid, false);
		if (!row) {
			a->err = -ENOMEM;
			es->threads_lost++;
			return;
		}
		vperf__count_set(&row->reads[e], row->reads[e].raw + rr->value,
				 row->reads[e].enabled + rr->enabled,
				 row->reads[e].running + rr->running);
		row->reported |= 1ull << e;
	} else if (h->type == PERF_RECORD_COMM &&
		   h->size >= sizeof(struct perf_event_header) + 8 + 8) {
		const struct perf_rec_comm *cr = (const void *)h;
		size_t max = h->size - sizeof(struct perf_event_header) - 8;

		row = vperf__evset_row(es, (pid_t)cr->pid, (pid_t)cr->tid, false);
		if (!row) {
			a->err = -ENOMEM;
			return;
		}
		if (max > sizeof(row->comm))
			max = sizeof(row->comm);
		memcpy(row->comm, cr->comm, max);
		row->comm[sizeof(row->comm) - 1] = '\0';
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(struct perf_rec_lost)) {
		es->threads_lost += ((const struct perf_rec_lost *)h)->lost;
	}
}

static int perf_poll_threads(struct vperf_evset *es)
{
	struct perf_priv *p = es->priv;
	int err = 0;

	/* Take in what the kernel reported since the last poll. */
	for (int r = 0; r < p->nr_roots; r++) {
		struct thread_acc a = { es, r, 0 };
		struct perf_ring *ring = &p->ring[r];

		if (!ring->base)
			continue;
		vperf__ring_drain(ring->base, (char *)ring->base + page_size(),
				  RING_PAGES_THREADS * page_size(), thread_record, &a);
		if (a.err)
			err = a.err;
	}
	for (int k = 0; k < es->nr_rows; k++)
		memcpy(es->rows[k].counts, es->rows[k].reads,
		       es->nr_events * sizeof(*es->rows[k].counts));

	/* Then each root's own share: its total minus what its tree reported. */
	for (int r = 0; r < p->nr_roots; r++) {
		struct vperf_evset_row *root = NULL;

		for (int k = 0; k < es->nr_rows; k++)
			if (es->rows[k].root && es->rows[k].tid == p->roots[r])
				root = &es->rows[k];
		if (!root)
			continue;
		for (int e = 0; e < es->nr_events; e++) {
			int i = e * p->nr_roots + r;
			struct vperf_count *rep = &p->reported[i], *c;
			uint64_t v[3];
			int ret;

			if (p->fd[i] < 0)
				continue;
			ret = read_fd(es, e, p->fd[i], v);
			if (ret) {
				err = ret;
				continue;
			}
			c = &root->counts[e];
			vperf__count_set(c, c->raw + (v[0] > rep->raw ? v[0] - rep->raw : 0),
					 c->enabled + (v[1] > rep->enabled ? v[1] - rep->enabled : 0),
					 c->running + (v[2] > rep->running ? v[2] - rep->running : 0));
		}
	}
	if (err == -ENOMEM)
		return vperf__evset_fail(es, err, "out of memory: per-thread counts were lost");
	return err;
}

const struct vperf_backend_ops vperf_backend_perf = {
	.name = "perf",
	.probe = perf_probe,
	.open = perf_open,
	.close = perf_close,
	.ctl = perf_ctl,
	.read = perf_read,
	.read_all = perf_read_all,
	.poll_threads = perf_poll_threads,
};
