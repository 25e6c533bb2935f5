// SPDX-License-Identifier: MIT
/* An in-memory /dev/vperf behind libvperf's pv seams: see fake_vperf.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vperf/abi.h>

#include "internal.h"
#include "fake_vperf.h"

#define FAKE_FD_BASE	900
#define FAKE_PAGE_SIZE	4096

struct fake_vperf fake;
static int next_fd = FAKE_FD_BASE;

int __wrap_vperf__pv_open(const char *path);
int __wrap_vperf__pv_ioctl(int fd, unsigned long req, void *arg);
int __wrap_vperf__pv_mmap(int fd, size_t len, void **addr);
void __wrap_vperf__pv_munmap(void *addr, size_t len);
int __wrap_vperf__pv_mmap_doorbell(int fd, void **addr);
int __wrap_vperf__pv_mmap_ring(int fd, size_t len, void **addr);
void __wrap_vperf__pv_close(int fd);

void fake_reset(void)
{
	for (int i = 0; i < fake.nr_ctx; i++)
		free(fake.ctx[i].page);
	memset(&fake, 0, sizeof(fake));
	fake.nr_cpus = 2;
	fake.nr_pages = 2;
	fake.nr_counters = VPERF_THREAD_NR_CTRS;
	fake.page_version = VPERF_THREAD_PAGE_VERSION;
	fake.start_ver2 = true;
}

int fake_last_fd(void)
{
	return next_fd - 1;
}

static bool live(const struct fake_ctx *c)
{
	return c->fd >= 0 && !(c->row_flags & (VPERF_ROW_EXITED | VPERF_ROW_STOPPED));
}

struct fake_ctx *fake_ctx_of(pid_t tid)
{
	for (int i = 0; i < fake.nr_ctx; i++)
		if (fake.ctx[i].tid == tid && live(&fake.ctx[i]))
			return &fake.ctx[i];
	return NULL;
}

struct fake_ctx *fake_thread(int fd, pid_t pid, pid_t tid, const char *comm)
{
	struct fake_ctx *c;

	if (fake.nr_ctx == FAKE_MAX_CTX)
		return NULL;
	c = &fake.ctx[fake.nr_ctx++];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->pid = pid;
	c->tid = tid;
	snprintf(c->comm, sizeof(c->comm), "%s", comm ? comm : "");
	return c;
}

/* Copy the sums into the page as the module does: seq odd, write, seq even. */
static void publish(struct fake_ctx *c)
{
	struct vperf_thread_page *pg = c->page;

	if (!pg)
		return;
	__atomic_store_n(&pg->seq, pg->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(pg->counters, c->ctr, sizeof(c->ctr));
	pg->switches++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&pg->seq, pg->seq + 1, __ATOMIC_RELAXED);
}

void fake_run(struct fake_ctx *c, int k, uint64_t value, uint64_t enabled, uint64_t running)
{
	c->ctr[k].value += value;
	c->ctr[k].enabled += enabled;
	c->ctr[k].running += running;
	publish(c);
}

void fake_exit(struct fake_ctx *c)
{
	c->row_flags |= VPERF_ROW_EXITED;
}

static bool our_fd(int fd)
{
	return fd >= FAKE_FD_BASE && fd < next_fd;
}

int __wrap_vperf__pv_open(const char *path)
{
	fake.opens++;
	snprintf(fake.path, sizeof(fake.path), "%s", path);
	if (fake.open_err)
		return -fake.open_err;
	fake.open_fds++;
	return next_fd++;
}

void __wrap_vperf__pv_close(int fd)
{
	if (!our_fd(fd))
		return;
	fake.closes++;
	fake.open_fds--;
	/* Closing the file ends its contexts, and its rows go with it. */
	for (int i = 0; i < fake.nr_ctx; i++)
		if (fake.ctx[i].fd == fd)
			fake.ctx[i].fd = -1;
}

static int do_info(struct vperf_info *info)
{
	uint32_t usize = info->size;

	fake.infos++;
	if (fake.info_err)
		return -fake.info_err;
	if (usize < VPERF_INFO_SIZE_VER0)
		return -EINVAL;
	memset(info, 0, usize < sizeof(*info) ? usize : sizeof(*info));
	info->size = usize < sizeof(*info) ? usize : sizeof(*info);
	info->info_version = VPERF_INFO_VERSION;
	info->abi_version = 1;
	info->nr_cpus = fake.nr_cpus;
	info->nr_pages = fake.nr_pages;
	info->irq = -1;
	return 0;
}

static int do_start(int fd, struct vperf_thread_start *st)
{
	struct fake_ctx *c;
	pid_t tid;

	if (fake.starts < FAKE_MAX_CALLS)
		fake.start_arg[fake.starts] = *st;
	fake.starts++;
	if (st->size < VPERF_THREAD_START_SIZE_VER0 || (st->flags & ~VPERF_THREAD_FLAGS))
		return -EINVAL;
	if (fake.start_err)
		return -fake.start_err;
	for (uint32_t i = 0; fake.kernel_paranoid && st->size >= VPERF_THREAD_START_SIZE_VER2 &&
	     i < st->nr_events && i < VPERF_THREAD_MAX_COUNTERS; i++) {
		const struct vperf_thread_event *ev = (const void *)(uintptr_t)st->events;
		size_t n = strnlen(ev[i].name, sizeof(ev[i].name));

		if (ev[i].source == VPERF_SRC_PERF && (n < 2 || strcmp(ev[i].name + n - 2, ":u"))) {
			st->bad_event = (int32_t)i;
			return -EACCES;
		}
	}
	tid = st->tid ? st->tid : gettid();
	if (fake_ctx_of(tid))
		return -EBUSY;
	c = fake_thread(fd, getpid(), tid, "fake");
	if (!c)
		return -ENOMEM;
	c->start_flags = st->flags;
	if (st->size >= VPERF_THREAD_START_SIZE_VER2 && st->nr_events) {
		const struct vperf_thread_event *ev = (const void *)(uintptr_t)st->events;

		if (st->nr_events > VPERF_THREAD_MAX_COUNTERS) {
			st->bad_event = VPERF_THREAD_MAX_COUNTERS;
			return -E2BIG;
		}
		/* the host's refusal of one event, as the module passes it on */
		if (fake.event_err) {
			st->bad_event = fake.event_err_idx;
			return -fake.event_err;
		}
		memcpy(c->events, ev, st->nr_events * sizeof(*ev));
		c->nr_events = st->nr_events;
	}
	if (st->flags & VPERF_THREAD_SAMPLE) {
		struct vperf_sample_ring *h = (struct vperf_sample_ring *)fake.ring;

		if (st->size < VPERF_THREAD_START_SIZE_VER1 || st->tid || st->sample_pages != 16)
			return -EINVAL;
		memset(fake.ring, 0, sizeof(fake.ring));
		h->size = sizeof(*h);
		h->version = VPERF_SAMPLE_RING_VERSION;
		h->record_size = sizeof(struct vperf_sample_record);
		h->nr_records = 16 * 4096 / sizeof(struct vperf_sample_record);
		h->period = st->sample_period;
	}
	if (!st->tid) {
		c->page = aligned_alloc(FAKE_PAGE_SIZE, FAKE_PAGE_SIZE);
		if (!c->page)
			return -ENOMEM;
		memset(c->page, 0, FAKE_PAGE_SIZE);
		c->page->size = sizeof(*c->page);
		c->page->version = fake.page_version;
		c->page->nr = c->nr_events ? c->nr_events : fake.nr_counters;
		for (uint32_t k = 0; k < VPERF_THREAD_MAX_COUNTERS; k++)
			c->page->slot[k] = (uint8_t)(k + fake.slot_offset);
	}
	st->size = fake.start_ver2 ? VPERF_THREAD_START_SIZE_VER2 : VPERF_THREAD_START_SIZE_VER0;
	st->nr_counters = c->nr_events ? c->nr_events : fake.nr_counters;
	st->page_size = FAKE_PAGE_SIZE;
	st->page_version = fake.page_version;
	return 0;
}

/* The calling thread's context on this file. */
static struct fake_ctx *own(int fd)
{
	struct fake_ctx *c = fake_ctx_of(gettid());

	return c && c->fd == fd ? c : NULL;
}

static int do_read(int fd)
{
	struct fake_ctx *c = own(fd);

	fake.reads++;
	if (!c)
		return -ENOENT;
	for (int k = 0; k < VPERF_THREAD_MAX_COUNTERS; k++) {
		c->ctr[k].value += c->slice[k].value;
		c->ctr[k].enabled += c->slice[k].enabled;
		c->ctr[k].running += c->slice[k].running;
	}
	memset(c->slice, 0, sizeof(c->slice));
	publish(c);
	return 0;
}

static int do_stop(int fd)
{
	struct fake_ctx *c = own(fd);

	if (!c)
		return -ENOENT;
	do_read(fd);
	c->row_flags |= VPERF_ROW_STOPPED;
	return 0;
}

static int do_list(int fd, struct vperf_thread_list *l)
{
	char *buf = (char *)(uintptr_t)l->rows;
	uint32_t n = 0, total = 0;

	if (fake.lists < FAKE_MAX_CALLS)
		fake.list_cap[fake.lists] = l->nr_rows;
	fake.lists++;
	if (l->size < VPERF_THREAD_LIST_SIZE_VER0 || l->row_size < VPERF_THREAD_ROW_SIZE_VER0)
		return -EINVAL;
	if (fake.appear_at == fake.lists)
		for (int i = 0; i < fake.appear_n; i++)
			fake_run(fake_thread(fd, fake.appear_pid, 20000 + fake.nr_ctx, "newcomer"),
				 VPERF_THREAD_CTR_EXITS, 1, 10, 10);
	for (int i = 0; i < fake.nr_ctx; i++) {
		const struct fake_ctx *c = &fake.ctx[i];
		struct vperf_thread_row r;

		if (c->fd != fd)
			continue;
		total++;
		if (n == l->nr_rows)
			continue;
		memset(&r, 0, sizeof(r));
		r.pid = c->pid;
		r.tid = c->tid;
		r.flags = c->row_flags;
		r.nr = fake.nr_counters;
		memcpy(r.comm, c->comm, sizeof(r.comm));
		memcpy(r.counters, c->ctr, sizeof(c->ctr));
		/* The caller's stride; as many bytes as both know. */
		memcpy(buf + (size_t)n * l->row_size, &r,
		       l->row_size < sizeof(r) ? l->row_size : sizeof(r));
		n++;
	}
	l->size = VPERF_THREAD_LIST_SIZE_VER0;
	if (l->row_size > sizeof(struct vperf_thread_row))
		l->row_size = sizeof(struct vperf_thread_row);
	l->nr_rows = n;
	l->total = total;
	l->lost = fake.lost;
	return 0;
}

/* A host without a PMU whose allowlist refuses page faults: what EVENT_INFO lists. */
static const struct {
	uint32_t source;
	uint64_t arg;
	const char *name;
	int status;
} host_list[] = {
	{ 1, 0, "instructions", -ENODEV },
	{ 1, 0, "task-clock", 0 },
	{ 1, 0, "page-faults", -EPERM },
	{ 2, 0, "exits", 0 },
	{ 2, 0, "halt_exits", 0 },
	{ 3, UINT64_MAX, "all", 0 },
	{ 3, 2, "io", 0 },
	{ 3, 5, "hlt", 0 },
	{ 4, 0, "steal", 0 },
};

static int do_event_info(struct vperf_event_query *q)
{
	if (!fake.host_events)
		return -EOPNOTSUPP;
	if (q->size < VPERF_EVENT_QUERY_SIZE_VER0)
		return -EINVAL;
	if (q->index >= sizeof(host_list) / sizeof(host_list[0]))
		return -ENOENT;
	memset(&q->event, 0, sizeof(q->event));
	q->event.source = host_list[q->index].source;
	q->event.arg = host_list[q->index].arg;
	snprintf(q->event.name, sizeof(q->event.name), "%s", host_list[q->index].name);
	q->status = host_list[q->index].status;
	return 0;
}

int __wrap_vperf__pv_ioctl(int fd, unsigned long req, void *arg)
{
	if (!our_fd(fd))
		return -EBADF;
	switch (req) {
	case VPERF_IOC_INFO:
		return do_info(arg);
	case VPERF_IOC_THREAD_START:
		return do_start(fd, arg);
	case VPERF_IOC_THREAD_READ:
		return do_read(fd);
	case VPERF_IOC_THREAD_STOP:
		return do_stop(fd);
	case VPERF_IOC_THREAD_LIST:
		return do_list(fd, arg);
	case VPERF_IOC_EVENT_INFO:
		return do_event_info(arg);
	default:
		return -ENOTTY;
	}
}

int __wrap_vperf__pv_mmap(int fd, size_t len, void **addr)
{
	struct fake_ctx *c;

	fake.mmaps++;
	if (!our_fd(fd))
		return -EBADF;
	if (len != FAKE_PAGE_SIZE)
		return -EINVAL;
	c = own(fd);
	if (!c || !c->page)
		return -ENOENT;
	*addr = c->page;
	return 0;
}

int __wrap_vperf__pv_mmap_doorbell(int fd, void **addr)
{
	fake.doorbell_mmaps++;
	if (!our_fd(fd))
		return -EBADF;
	if (!fake.doorbell)
		return -ENODEV;
	if (!own(fd))
		return -ENOENT;
	*addr = fake.doorbell_page;
	return 0;
}

void __wrap_vperf__pv_munmap(void *addr, size_t len)
{
	fake.munmaps++;
}

int __wrap_vperf__pv_mmap_ring(int fd, size_t len, void **addr)
{
	struct fake_ctx *c;

	fake.ring_mmaps++;
	if (!our_fd(fd))
		return -EBADF;
	c = own(fd);
	if (!c || !(c->start_flags & VPERF_THREAD_SAMPLE))
		return -ENOENT;
	if (len != sizeof(fake.ring))
		return -EINVAL;
	*addr = fake.ring;
	return 0;
}

void fake_sample(uint64_t ip, bool signal)
{
	struct vperf_sample_ring *h = (struct vperf_sample_ring *)fake.ring;
	struct vperf_sample_record *r = (struct vperf_sample_record *)(fake.ring + 4096) +
					h->head % h->nr_records;
	struct fake_ctx *c = fake_ctx_of(gettid());
	siginfo_t si;

	memset(r, 0, sizeof(*r));
	r->time = 1000 * (h->head + 1);
	r->ip = ip;
	r->flags = VPERF_SAMPLE_USER;
	r->tid = gettid();
	__atomic_store_n(&h->head, h->head + 1, __ATOMIC_RELEASE);
	if (!c || !signal)
		return;
	/* what the module's irq_work sends: to itself, so a user si_code is allowed */
	memset(&si, 0, sizeof(si));
	si.si_signo = fake.start_arg[0].sample_signo;
	si.si_code = POLL_IN;
	si.si_fd = fake.start_arg[0].sample_cookie;
	syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), si.si_signo, &si);
}
