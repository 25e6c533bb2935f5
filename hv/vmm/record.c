// SPDX-License-Identifier: MIT
/*
 * vperf-vmm --record FILE: the raw recording (record.h, hv/include/vperf/rawrec.h).
 *
 * Three producers, one file:
 *   - each vCPU thread notes its exits in a ring of its own (single producer, single consumer:
 *     the recorder thread), no lock and no system call per exit; a full ring counts lost;
 *   - the guest's trace rings, drained by libvperf-hv (vperf_hv__trace_drain) every
 *     RECORD_PERIOD_MS from the recorder thread, or by a guest's TRACE_FLUSH in its vCPU thread:
 *     the valid records arrive through pvdev.c's trace_records op and go out as GUEST chunks;
 *   - the host kernel's events (tracefs.c), copied page by page.
 * Chunks are appended under one lock with one writev each, as long as they fit --record-max (a
 * guest decides how much it writes: its rings' records, its TRACE_FLUSHes): past it the file is
 * a valid recording without its END chunk.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <vperf/hv.h>
#include <vperf/rawrec.h>

#include "log.h"
#include "record.h"
#include "tracefs.h"
#include "vm.h"

#ifndef VPERF_VMM_VERSION
#define VPERF_VMM_VERSION "unknown"
#endif

#define EXIT_RING_SIZE	65536u		/* exit records per vCPU between two drains (2 MiB) */
#define HOST_BUFFER_KB	4096u		/* tracefs buffer per host CPU */

struct rec_vcpu {
	struct vperf_rawrec_exit *ring;		/* EXIT_RING_SIZE entries */
	_Atomic uint64_t head;			/* written by the vCPU thread */
	_Atomic uint64_t tail;			/* written by the recorder thread */
	_Atomic uint64_t lost;			/* exits the full ring could not take */
	uint64_t lost_written;			/* the lost total last written (recorder thread) */
	struct vperf_rawrec_exit cur;		/* the exit being handled (vCPU thread) */
	bool pending;
	struct vperf_hv_trace_stats last;	/* ring stats last written */
	int64_t tsc_offset;			/* read at the start */
	bool tsc_offset_ok;
	/* the tightest TRACE_FLUSH clock sample since the last drain (vCPU thread -> recorder) */
	pthread_mutex_t sample_lock;
	struct vperf_rawrec_tsc_sample sample;
	bool have_sample;
};

struct recorder {
	struct vm *vm;
	struct record_config cfg;
	int fd;
	pthread_mutex_t lock;			/* the file */
	int err;				/* the first write error, under lock */
	uint64_t size;				/* the file's, under lock */
	bool full;				/* --record-max reached, under lock */
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	struct hosttrace *ht;
	char host_why[256];			/* why host events are missing, or "" */
	struct rec_vcpu vcpus[VM_MAX_VCPUS];
	/* for the summary at the end, under lock */
	uint64_t bytes, chunks, exits, guest_bytes, host_bytes;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, struct iovec *iov, int n)
{
	while (n) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int recorder__chunk(struct recorder *rec, uint32_t type, uint32_t cpu, uint32_t flags,
		    const void *payload, uint32_t size)
{
	static const uint64_t zero;
	struct vperf_rawrec_chunk c = { .type = type, .size = size, .cpu = cpu, .flags = flags };
	struct iovec iov[3] = {
		{ &c, sizeof(c) },
		{ (void *)payload, size },
		{ (void *)&zero, (8 - size % 8) % 8 },
	};
	int err;

	if (!rec)
		return 0;
	if (size > VPERF_RAWREC_MAX_CHUNK)
		return -E2BIG;
	pthread_mutex_lock(&rec->lock);
	err = rec->err;
	if (!err && rec->size + sizeof(c) + size + iov[2].iov_len > rec->cfg.max_bytes) {
		/* whole chunks only: the file ends before the one that does not fit */
		err = rec->err = -EFBIG;
		rec->full = true;
		pr_err("--record %s: the recording reached --record-max (%" PRIu64 " MiB): "
		       "recording stops here, the guest runs on", rec->cfg.path,
		       rec->cfg.max_bytes >> 20);
	}
	if (!err) {
		err = write_all(rec->fd, iov, 3);
		rec->size += sizeof(c) + size + iov[2].iov_len;
		rec->bytes += sizeof(c) + size + iov[2].iov_len;
		rec->chunks++;
		if (type == VPERF_RAWREC_EXITS)
			rec->exits += size / sizeof(struct vperf_rawrec_exit);
		else if (type == VPERF_RAWREC_GUEST)
			rec->guest_bytes += size;
		else if (type == VPERF_RAWREC_TRACEFS_PAGES)
			rec->host_bytes += size;
		if (err) {
			rec->err = err;
			pr_err("--record %s: %s: recording stops here, the guest runs on", rec->cfg.path,
			       strerror(-err));
		}
	}
	pthread_mutex_unlock(&rec->lock);
	return err;
}

/* vCPU n's TSC offset (KVM_VCPU_TSC_OFFSET, Linux 5.16+): only while its thread is not in KVM_RUN. */
static int read_tsc_offset(struct vcpu *vcpu, int64_t *offset)
{
#ifdef KVM_VCPU_TSC_CTRL
	struct kvm_device_attr attr = {
		.group = KVM_VCPU_TSC_CTRL,
		.attr = KVM_VCPU_TSC_OFFSET,
		.addr = (uint64_t)(uintptr_t)offset,
	};

	if (ioctl(vcpu->fd, KVM_HAS_DEVICE_ATTR, &attr))
		return -errno;
	return ioctl(vcpu->fd, KVM_GET_DEVICE_ATTR, &attr) ? -errno : 0;
#else
	(void)vcpu;
	(void)offset;
	return -ENOTSUP;
#endif
}

static void write_tsc_offsets(struct recorder *rec, bool at_start)
{
	struct vm *vm = rec->vm;

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct rec_vcpu *rv = &rec->vcpus[i];
		struct vperf_rawrec_tsc t = { .how = VPERF_RAWREC_TSC_KVM_ATTR };
		int64_t offset = 0;
		int err = read_tsc_offset(&vm->vcpus[i], &offset);

		if (err) {
			if (at_start)
				pr_warn("--record: vCPU %u's TSC offset: %s; guest times will be mapped "
					"from TRACE_FLUSH samples (less exact)", i, strerror(-err));
			continue;
		}
		t.host_tsc = recorder__tsc();
		t.offset = offset;
		if (at_start) {
			rv->tsc_offset = t.offset;
			rv->tsc_offset_ok = true;
		} else if (rv->tsc_offset_ok && rv->tsc_offset != offset) {
			pr_warn("--record: vCPU %u's TSC offset changed during the recording "
				"(%" PRId64 " -> %" PRId64 "): the guest wrote its TSC", i, rv->tsc_offset,
				offset);
		}
		recorder__chunk(rec, VPERF_RAWREC_TSC_OFFSET, i, 0, &t, sizeof(t));
	}
}

/* The file, created as record.h says: an fd, or -errno with the reason printed. */
static int create_file(const char *path)
{
	char old[4096];
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			pr_err("--record %s: there is a %s there; vperf-vmm writes only a file of "
			       "its own", path, S_ISLNK(st.st_mode) ? "symbolic link" :
			       S_ISDIR(st.st_mode) ? "directory" : "file that is not a regular one");
			return -EEXIST;
		}
		if ((size_t)snprintf(old, sizeof(old), "%s.old", path) >= sizeof(old)) {
			pr_err("--record %s: the name is too long", path);
			return -ENAMETOOLONG;
		}
		if (rename(path, old)) {
			int err = -errno;

			pr_err("--record %s: renaming the file there to %s: %s", path, old,
			       strerror(-err));
			return err;
		}
		pr_info("--record %s: the file there is now %s", path, old);
	} else if (errno != ENOENT) {
		int err = -errno;

		pr_err("--record %s: %s", path, strerror(-err));
		return err;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int err = -errno;

		pr_err("--record %s: %s%s", path, strerror(-err),
		       err == -EEXIST ? " (it appeared while the old one was moved away)" : "");
		return err;
	}
	return fd;
}

int recorder__new(struct vm *vm, const struct record_config *cfg, struct recorder **out)
{
	struct vperf_rawrec_header h = { .size = sizeof(h), .version = VPERF_RAWREC_VERSION };
	struct recorder *rec;
	int khz, err;

	*out = NULL;
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return -ENOMEM;
	rec->vm = vm;
	rec->cfg = *cfg;
	if (!rec->cfg.max_bytes)
		rec->cfg.max_bytes = (uint64_t)RECORD_DEFAULT_MAX_MIB << 20;
	rec->fd = -1;
	pthread_mutex_init(&rec->lock, NULL);
	for (unsigned int i = 0; i < VM_MAX_VCPUS; i++)
		pthread_mutex_init(&rec->vcpus[i].sample_lock, NULL);
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		rec->vcpus[i].ring = calloc(EXIT_RING_SIZE, sizeof(*rec->vcpus[i].ring));
		if (!rec->vcpus[i].ring) {
			err = -ENOMEM;
			goto fail;
		}
		rec->vcpus[i].last.size = sizeof(rec->vcpus[i].last);
	}
	/*
	 * The vCPUs' TSC frequency: every host time in the recording is a TSC value, and the
	 * converter turns them into ns with it.  vperf-vmm never sets a frequency, so the guest's
	 * TSC runs at the host's (no scaling).
	 */
	khz = ioctl(vm->vcpus[0].fd, KVM_GET_TSC_KHZ);
	if (khz <= 0) {
		err = khz < 0 ? -errno : -EINVAL;
		pr_err("--record: KVM_GET_TSC_KHZ: %s", strerror(-err));
		goto fail;
	}
	if (rec->cfg.max_bytes < sizeof(h)) {
		pr_err("--record %s: --record-max leaves no room for the file's header", cfg->path);
		err = -EINVAL;
		goto fail;
	}
	rec->fd = create_file(cfg->path);
	if (rec->fd < 0) {
		err = rec->fd;
		goto fail;
	}
	memcpy(h.magic, VPERF_RAWREC_MAGIC, sizeof(h.magic));
	h.tsc_khz = (uint64_t)khz;
	h.nr_vcpus = vm->nr_vcpus;
	h.start_tsc = recorder__tsc();
	h.start_realtime_ns = clock_ns(CLOCK_REALTIME);
	h.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	{
		struct iovec iov = { &h, sizeof(h) };

		err = write_all(rec->fd, &iov, 1);
	}
	if (err) {
		pr_err("--record %s: %s", cfg->path, strerror(-err));
		goto fail;
	}
	rec->size = sizeof(h);
	/* Before any vCPU runs: a vCPU ioctl waits for a running KVM_RUN to return. */
	write_tsc_offsets(rec, true);
	*out = rec;
	return 0;
fail:
	recorder__delete(rec);
	return err;
}

/* Move vCPU n's exit records into the file. */
static void drain_exits(struct recorder *rec, unsigned int n)
{
	struct rec_vcpu *rv = &rec->vcpus[n];
	uint64_t head = atomic_load_explicit(&rv->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&rv->tail, memory_order_relaxed);
	uint64_t lost = atomic_load_explicit(&rv->lost, memory_order_relaxed);

	while (tail != head) {
		uint64_t off = tail % EXIT_RING_SIZE, n_rec = head - tail;

		if (n_rec > EXIT_RING_SIZE - off)
			n_rec = EXIT_RING_SIZE - off;
		recorder__chunk(rec, VPERF_RAWREC_EXITS, n, 0, &rv->ring[off],
				(uint32_t)(n_rec * sizeof(rv->ring[0])));
		tail += n_rec;
		atomic_store_explicit(&rv->tail, tail, memory_order_release);
	}
	if (lost != rv->lost_written) {
		struct vperf_rawrec_lost l = { .host_tsc = recorder__tsc(), .count = lost };

		recorder__chunk(rec, VPERF_RAWREC_EXITS_LOST, n, 0, &l, sizeof(l));
		rv->lost_written = lost;
	}
}

/*
 * Drain vCPU n's guest ring (records arrive through recorder__guest_records), its losses, and the
 * clock sample its TRACE_FLUSHes left since the last drain.
 */
static void drain_guest(struct recorder *rec, unsigned int n)
{
	struct rec_vcpu *rv = &rec->vcpus[n];
	struct vperf_hv_trace_stats st = { .size = sizeof(st) };
	struct vperf_rawrec_tsc_sample sample;
	bool have;

	pthread_mutex_lock(&rv->sample_lock);
	sample = rv->sample;
	have = rv->have_sample;
	rv->have_sample = false;
	pthread_mutex_unlock(&rv->sample_lock);
	if (have)
		recorder__chunk(rec, VPERF_RAWREC_TSC_SAMPLE, n, 0, &sample, sizeof(sample));
	if (!rec->vm->pv)
		return;
	vperf_hv__trace_drain(rec->vm->pv, (int)n);	/* -ESTATE without a ring: nothing to do */
	if (vperf_hv__trace_stats(rec->vm->pv, (int)n, &st))
		return;
	if (st.invalid_bytes != rv->last.invalid_bytes || st.guest_lost != rv->last.guest_lost ||
	    st.bad_headers != rv->last.bad_headers) {
		struct vperf_rawrec_guest_lost gl = {
			.host_tsc = recorder__tsc(), .invalid_bytes = st.invalid_bytes,
			.invalid_records = st.invalid_drains, .guest_lost = st.guest_lost,
			.bad_headers = st.bad_headers,
		};

		recorder__chunk(rec, VPERF_RAWREC_GUEST_LOST, n, 0, &gl, sizeof(gl));
	}
	rv->last = st;
}

static void drain_all(struct recorder *rec)
{
	for (unsigned int i = 0; i < rec->vm->nr_vcpus; i++) {
		drain_exits(rec, i);
		drain_guest(rec, i);
	}
	if (rec->ht)
		hosttrace__poll(rec->ht);
}

void recorder__guest_records(struct recorder *rec, unsigned int vcpu, const void *records, size_t len)
{
	/* a drain delivers at most libvperf-hv's batch (64 KiB) at a time */
	if (rec && len <= VPERF_RAWREC_MAX_CHUNK)
		recorder__chunk(rec, VPERF_RAWREC_GUEST, vcpu, 0, records, (uint32_t)len);
}

void recorder__clock_sample(struct recorder *rec, unsigned int vcpu, uint64_t guest_tsc)
{
	struct vperf_rawrec_tsc_sample s = { .guest_tsc = guest_tsc, .host_tsc = recorder__tsc() };
	struct rec_vcpu *rv;

	if (!rec || vcpu >= rec->vm->nr_vcpus)
		return;
	rv = &rec->vcpus[vcpu];
	/* guest_tsc was read before host_tsc: guest - host bounds the offset from below */
	pthread_mutex_lock(&rv->sample_lock);
	if (!rv->have_sample || (int64_t)(s.guest_tsc - s.host_tsc) >
				(int64_t)(rv->sample.guest_tsc - rv->sample.host_tsc))
		rv->sample = s;
	rv->have_sample = true;
	pthread_mutex_unlock(&rv->sample_lock);
}

static void *recorder_thread(void *arg)
{
	struct recorder *rec = arg;
	struct timespec period = { 0, RECORD_PERIOD_MS * 1000000L };

	while (!atomic_load(&rec->stop)) {
		drain_all(rec);
		nanosleep(&period, NULL);
	}
	return NULL;
}

/* "key=value\n" lines (META chunk). */
static void write_meta(struct recorder *rec)
{
	struct vm *vm = rec->vm;
	char buf[4096];
	size_t n = 0;

#define META(...)                                                                             \
	do {                                                                                  \
		int w_ = snprintf(buf + n, sizeof(buf) - n, __VA_ARGS__);                    \
		if (w_ > 0 && (size_t)w_ < sizeof(buf) - n)                                   \
			n += (size_t)w_;                                                      \
	} while (0)
	META("recorder=vperf-vmm %s\n", VPERF_VMM_VERSION);
	META("vmm_pid=%d\n", (int)getpid());
	META("nr_vcpus=%u\n", vm->nr_vcpus);
	META("mem_bytes=%" PRIu64 "\n", vm->ram_size);
	META("kernel=%s\n", vm->cfg.kernel ? vm->cfg.kernel : "");
	META("cmdline=%s\n", vm->cfg.cmdline ? vm->cfg.cmdline : "");
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		META("vcpu%u_tid=%d\n", i, (int)atomic_load(&vm->vcpus[i].tid));
	META("clock_mapping=host TSC; guest TSC - offset = host TSC (KVM_VCPU_TSC_OFFSET)\n");
	if (rec->ht)
		META("host_events=kvm:kvm_entry,kvm:kvm_exit,kvm:kvm_inj_virq,sched:sched_switch,"
		     "sched:sched_wakeup%s%s\n", rec->host_why[0] ? "; " : "", rec->host_why);
	else
		META("host_events=none: %s\n", rec->host_why);
#undef META
	recorder__chunk(rec, VPERF_RAWREC_META, 0, 0, buf, (uint32_t)n);
}

/* The host kernel events' chunks (tracefs.c) go into the raw recording. */
static int host_chunk(void *arg, uint32_t type, uint32_t cpu, const void *data, uint32_t size)
{
	return recorder__chunk(arg, type, cpu, 0, data, size);
}

int recorder__start(struct recorder *rec)
{
	struct vm *vm = rec->vm;
	pid_t tids[VM_MAX_VCPUS];
	struct timespec ms = { 0, 1000000L };
	int err;

	/* the vCPU threads say their tids first thing; give them a second */
	for (int tries = 0; tries < 1000; tries++) {
		unsigned int have = 0;

		for (unsigned int i = 0; i < vm->nr_vcpus; i++)
			have += atomic_load(&vm->vcpus[i].tid) != 0;
		if (have == vm->nr_vcpus)
			break;
		nanosleep(&ms, NULL);
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		tids[i] = atomic_load(&vm->vcpus[i].tid);
	if (!rec->cfg.host_events) {
		snprintf(rec->host_why, sizeof(rec->host_why), "not asked for (--no-host-events)");
	} else {
		bool missing = false;

		err = hosttrace__start(&rec->ht, tids, vm->nr_vcpus, HOST_BUFFER_KB,
				       (struct hosttrace_sink){ host_chunk, rec }, rec->host_why,
				       sizeof(rec->host_why), &missing);
		if (err) {
			rec->ht = NULL;
			pr_warn("--record: no host kernel events: %s", rec->host_why);
		} else if (missing) {
			pr_warn("--record: some host kernel events are missing: %s", rec->host_why);
		}
	}
	write_meta(rec);
	err = pthread_create(&rec->thread, NULL, recorder_thread, rec);
	if (err) {
		pr_err("--record: thread: %s", strerror(err));
		return -err;
	}
	rec->thread_started = true;
	return 0;
}

void recorder__stop(struct recorder *rec)
{
	struct vperf_rawrec_end end;

	if (!rec)
		return;
	atomic_store(&rec->stop, true);
	if (rec->thread_started) {
		pthread_join(rec->thread, NULL);
		rec->thread_started = false;
	}
	/* the vCPU threads are gone: their last exits and the rings' last records */
	for (unsigned int i = 0; i < rec->vm->nr_vcpus; i++)
		recorder__exit_end(&rec->vm->vcpus[i]);
	drain_all(rec);
	if (rec->ht) {
		hosttrace__stop(rec->ht);
		hosttrace__delete(rec->ht);
		rec->ht = NULL;
	}
	write_tsc_offsets(rec, false);
	end.host_tsc = recorder__tsc();
	end.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
	recorder__chunk(rec, VPERF_RAWREC_END, 0, 0, &end, sizeof(end));
	if (rec->fd >= 0 && close(rec->fd) && !rec->err)
		pr_err("--record %s: %s", rec->cfg.path, strerror(errno));
	rec->fd = -1;
	{
		uint64_t lost = 0;

		for (unsigned int i = 0; i < rec->vm->nr_vcpus; i++)
			lost += atomic_load(&rec->vcpus[i].lost);
		pr_info("--record %s: %" PRIu64 " bytes, %" PRIu64 " exit records (%" PRIu64 " lost), %"
			PRIu64 " bytes of guest records, %" PRIu64 " bytes of host kernel events"
			"%s%s%s",
			rec->cfg.path, rec->bytes, rec->exits, lost, rec->guest_bytes, rec->host_bytes,
			rec->full ? "; cut at --record-max" : "",
			rec->host_why[0] ? "; host events: " : "", rec->host_why);
	}
}

void recorder__delete(struct recorder *rec)
{
	if (!rec)
		return;
	if (rec->ht) {
		hosttrace__stop(rec->ht);
		hosttrace__delete(rec->ht);
	}
	if (rec->fd >= 0)
		close(rec->fd);
	for (unsigned int i = 0; i < VM_MAX_VCPUS; i++) {
		free(rec->vcpus[i].ring);
		pthread_mutex_destroy(&rec->vcpus[i].sample_lock);
	}
	pthread_mutex_destroy(&rec->lock);
	free(rec);
}

void recorder__exit_begin(struct vcpu *vcpu)
{
	struct recorder *rec = vcpu->vm->rec;
	struct rec_vcpu *rv;
	struct kvm_run *run = vcpu->run;

	if (!rec)
		return;
	rv = &rec->vcpus[vcpu->id];
	rv->cur.exit_tsc = recorder__tsc();
	rv->cur.reason = run->exit_reason;
	rv->cur.flags = 0;
	rv->cur.addr = 0;
	if (run->exit_reason == KVM_EXIT_IO) {
		rv->cur.addr = run->io.port;
		if (run->io.direction == KVM_EXIT_IO_OUT)
			rv->cur.flags |= VPERF_RAWREC_EXIT_WRITE;
	} else if (run->exit_reason == KVM_EXIT_MMIO) {
		rv->cur.addr = run->mmio.phys_addr;
		if (run->mmio.is_write)
			rv->cur.flags |= VPERF_RAWREC_EXIT_WRITE;
	}
	rv->pending = true;
}

void recorder__exit_end(struct vcpu *vcpu)
{
	struct recorder *rec = vcpu->vm->rec;
	struct rec_vcpu *rv;
	uint64_t head;

	if (!rec)
		return;
	rv = &rec->vcpus[vcpu->id];
	if (!rv->pending)
		return;
	rv->pending = false;
	rv->cur.resume_tsc = recorder__tsc();
	head = atomic_load_explicit(&rv->head, memory_order_relaxed);
	if (head - atomic_load_explicit(&rv->tail, memory_order_acquire) >= EXIT_RING_SIZE) {
		atomic_fetch_add_explicit(&rv->lost, 1, memory_order_relaxed);
		return;
	}
	rv->ring[head % EXIT_RING_SIZE] = rv->cur;
	atomic_store_explicit(&rv->head, head + 1, memory_order_release);
}
