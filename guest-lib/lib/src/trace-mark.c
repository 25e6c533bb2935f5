// SPDX-License-Identifier: MIT
/*
 * User-space trace markers (vperf.h, docs/abi.md 7.3): each thread writes
 * version-2 marker records into its own buffer, which vperf_guest.ko maps
 * from /dev/vperf at VPERF_MARK_PGOFF and copies into the vCPU trace rings.
 *
 * The first marker of a thread opens the device, maps the buffer and closes
 * the file again (the mapping holds it); every later one writes the record
 * at head (in place, or through the stack when it wraps at the end of the
 * data) and publishes head with a release store: no system call, no VM
 * exit.  The
 * state is thread-local with the initial-exec model, so that not even the
 * first access to it from a thread allocates (a lazy TLS block would call
 * malloc, and malloc may call mmap).  At thread exit a destructor unmaps
 * the buffer: the module then copies what is left.  A child of fork() has
 * no mapping (the module does not let it be inherited) and starts afresh.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "vperf_guest_uapi.h"
#include <vperf/trace_rec.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define MARK_DEFAULT_KB	64
#define MARK_MIN_KB	4
#define MARK_MAX_KB	(VPERF_MARK_MAX_PAGES * 4)

_Static_assert((int)VPERF_MARK_BEGIN == VPERF_TRACE_MARK_BEGIN &&
	       (int)VPERF_MARK_END == VPERF_TRACE_MARK_END &&
	       (int)VPERF_MARK_INSTANT == VPERF_TRACE_MARK_INSTANT, "marker kinds differ from the ABI's");

struct mark_state {
	struct vperf_mark_buf *hdr;	/* the mapping; NULL: none */
	unsigned char *data;
	uint64_t data_size;
	uint64_t head;			/* ours; the header's is published from it */
	uint64_t lost;
	size_t map_len;
	bool tried;			/* the first call happened */
	int err;			/* and failed with this */
};

static __thread struct mark_state mark __attribute__((tls_model("initial-exec")));

static pthread_once_t mark_once = PTHREAD_ONCE_INIT;
static pthread_key_t mark_key;
static bool mark_key_ok;

/* Thread exit: unmap; the module copies what is left when the file goes. */
static void mark_thread_exit(void *arg)
{
	struct mark_state *st = arg;

	if (st->hdr)
		vperf__pv_munmap(st->hdr, st->map_len);
	memset(st, 0, sizeof(*st));
}

/* In a child of fork(): the buffer was not inherited. */
static void mark_atfork_child(void)
{
	memset(&mark, 0, sizeof(mark));
}

static void mark_init_once(void)
{
	mark_key_ok = pthread_key_create(&mark_key, mark_thread_exit) == 0;
	pthread_atfork(NULL, NULL, mark_atfork_child);
}

/* $VPERF_MARK_KB if it is a power of 2 in range, else the default. */
static size_t mark_kb(void)
{
	const char *s = secure_getenv("VPERF_MARK_KB");
	unsigned long kb;
	char *end;

	if (!s || !*s)
		return MARK_DEFAULT_KB;
	errno = 0;
	kb = strtoul(s, &end, 10);
	if (errno || *end || kb < MARK_MIN_KB || kb > MARK_MAX_KB || (kb & (kb - 1)))
		return MARK_DEFAULT_KB;
	return kb;
}

/* The first marker of the thread: map its buffer.  0, or the error every later call repeats. */
static int mark_setup(struct mark_state *st)
{
	size_t len = 4096 + mark_kb() * 1024;
	struct vperf_mark_buf *hdr;
	void *addr;
	int fd, ret;

	if (st->tried)
		return st->err;
	st->tried = true;
	if (!HAVE_TSC)
		return st->err = -EOPNOTSUPP;
	pthread_once(&mark_once, mark_init_once);
	fd = vperf__pv_open(vperf__pv_device());
	if (fd < 0)
		return st->err = (fd == -ENOENT || fd == -ENXIO) ? -ENODEV : fd;
	ret = vperf__pv_mmap_mark(fd, len, &addr);
	vperf__pv_close(fd);	/* the mapping holds the file */
	if (ret)	/* an offset a module without markers does not know: EINVAL */
		return st->err = ret == -EINVAL ? -EOPNOTSUPP : ret;
	hdr = addr;
	if (hdr->size < VPERF_MARK_BUF_SIZE_VER0 || hdr->version != VPERF_MARK_BUF_VERSION ||
	    hdr->data_size != len - 4096) {
		vperf__pv_munmap(addr, len);
		return st->err = -EPROTO;
	}
	st->hdr = hdr;
	st->data = (unsigned char *)addr + 4096;
	st->data_size = hdr->data_size;
	st->map_len = len;
	/* a buffer the thread had mapped before (and lost track of) goes on where it was */
	st->head = __atomic_load_n(&hdr->head, __ATOMIC_RELAXED);
	st->lost = __atomic_load_n(&hdr->lost, __ATOMIC_RELAXED);
	if (mark_key_ok)
		pthread_setspecific(mark_key, st);
	return 0;
}

static inline uint64_t tsc_now(void)
{
#if HAVE_TSC
	return __rdtsc();
#else
	return 0;
#endif
}

int vperf_trace_mark(const char *name, uint64_t value, enum vperf_mark_kind kind)
{
	uint64_t tsc = tsc_now();	/* first: the marker's time is the call's */
	struct mark_state *st = &mark;
	union {
		struct vperf_trace_mark m;
		unsigned char b[VPERF_MARK_REC_MAX];
	} rec;
	uint64_t tail, off;
	uint32_t size;
	size_t len;
	int ret;

	len = name ? strnlen(name, VPERF_TRACE_MARK_NAME_LEN + 1) : 0;
	if (!len || len > VPERF_TRACE_MARK_NAME_LEN || (unsigned int)kind >= VPERF_TRACE_MARK_NR_KINDS)
		return -EINVAL;
	if (__builtin_expect(!st->hdr, 0)) {
		ret = mark_setup(st);
		if (ret)
			return ret;
	}
	size = vperf_mark_rec_size((uint32_t)len);
	tail = __atomic_load_n(&st->hdr->tail, __ATOMIC_ACQUIRE);
	if (st->head - tail > st->data_size - size) {
		__atomic_store_n(&st->hdr->lost, ++st->lost, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	/* in place where it does not wrap (the module reads nothing past head); else through the stack */
	off = st->head & (st->data_size - 1);
	if (off + size <= st->data_size) {
		if (!vperf_mark_rec_fill(st->data + off, name, (uint32_t)len, value, kind, tsc))
			return -EINVAL;		/* not UTF-8 */
	} else {
		if (!vperf_mark_rec_fill(&rec, name, (uint32_t)len, value, kind, tsc))
			return -EINVAL;
		vperf_ring_copy_in(st->data, st->data_size, st->head, &rec, size);
	}
	st->head += size;
	__atomic_store_n(&st->hdr->head, st->head, __ATOMIC_RELEASE);
	return 0;
}

int vperf_trace_flush(void)
{
	struct mark_state *st = &mark;
	int fd, ret;

	if (!st->hdr)
		return st->tried ? st->err : 0;	/* no marker yet: nothing to copy */
	fd = vperf__pv_open(vperf__pv_device());
	if (fd < 0)
		return fd;
	ret = vperf__pv_ioctl(fd, VPERF_IOC_MARK_FLUSH, NULL);
	vperf__pv_close(fd);
	return ret;
}

uint64_t vperf_trace_marks_lost(void)
{
	return mark.lost;
}
