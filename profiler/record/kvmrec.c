// SPDX-License-Identifier: MIT
/*
 * `vperf kvm record`'s recorder (kvmrec.h): one thread, waking every POLL_MS to move the host
 * kernel's events and the guest's records into the raw recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <vperf/rawrec.h>
#include <vperf/shm.h>

#include "kvmrec.h"
#include "kvmvmm.h"
#include "shm.h"
#include "tracefs.h"

#define POLL_MS		10
#define LOST_EVERY_NS	1000000000ull	/* the channel's losses, written once a second */
#define OFFSETS_EVERY_NS 20000000ull	/* the vCPUs' TSC offsets, read again every 20 ms */
#define HOST_BUFFER_KB	4096u
#define DEFAULT_MAX	(1ull << 30)

struct rec {
	const struct vperf_kvm_rec_opts *o;
	struct vperf_kvm_rec_stats *st;
	struct vperf_kvm_vmm vmm;
	int fd;
	uint64_t bytes, max_bytes;
	int write_err;			/* the first failed chunk's -errno */
	struct hosttrace *ht;
	struct vperf_shm *shm;
	uint64_t start_tsc, start_raw_ns;
	struct vperf_rawrec_header hdr;
	int64_t last_off[VPERF_KVM_MAX_VCPUS];	/* by index: the offset last written, */
	bool have_off[VPERF_KVM_MAX_VCPUS];	/* if one was */
};

static void note(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct rec *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!r->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o->note(r->o->note_arg, msg);
}

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC and CLOCK_MONOTONIC_RAW read as close together as the tighter of three tries. */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t a = rdtsc(), n = now_ns(CLOCK_MONOTONIC_RAW), b = rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

/* One chunk, whole, with one writev(2); once a write fails (or the file is full) none follow. */
static int chunk(struct rec *r, uint32_t type, uint32_t cpu, const void *data, uint32_t size)
{
	static const unsigned char zeros[8];
	struct vperf_rawrec_chunk ch = { .type = type, .size = size, .cpu = cpu };
	uint32_t pad = (8 - size % 8) % 8;
	struct iovec iov[3] = { { &ch, sizeof(ch) }, { (void *)data, size }, { (void *)zeros, pad } };
	size_t len = sizeof(ch) + size + pad;
	ssize_t n;

	if (r->write_err)
		return r->write_err;
	if (size > VPERF_RAWREC_MAX_CHUNK || r->bytes + len > r->max_bytes) {
		r->write_err = -EFBIG;
		return r->write_err;
	}
	do
		n = writev(r->fd, iov, 3);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len) {
		r->write_err = n < 0 ? -errno : -EIO;
		return r->write_err;
	}
	r->bytes += len;
	return 0;
}

static int host_chunk(void *arg, uint32_t type, uint32_t cpu, const void *data, uint32_t size)
{
	return chunk(arg, type, cpu, data, size);
}

static int guest_records(void *arg, uint32_t cpu, const void *recs, size_t len)
{
	struct rec *r = arg;

	return chunk(r, VPERF_RAWREC_GUEST, cpu, recs, (uint32_t)len);
}

/* "key=value\n" lines. */
struct meta {
	char buf[8192];
	size_t n;
};

static void meta(struct meta *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void meta(struct meta *m, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(m->buf + m->n, sizeof(m->buf) - m->n, fmt, ap);
	va_end(ap);
	if (w > 0 && (size_t)w < sizeof(m->buf) - m->n)
		m->n += (size_t)w;
}

/* A name someone else chose, made safe for a "key=value" line: printable ASCII, no '='. */
static void clean(char *dst, size_t len, const char *src)
{
	size_t i = 0;

	for (; *src && i + 1 < len; src++)
		dst[i++] = (*src >= 0x20 && *src < 0x7f && *src != '=') ? *src : '?';
	dst[i] = '\0';
}

/* Each vCPU's TSC offset into the file (how: debugfs).  0 when every one was read. */
static int offsets(struct rec *r, bool first)
{
	int missing = 0;

	for (unsigned int i = 0; i < r->vmm.nr_vcpus; i++) {
		struct vperf_rawrec_tsc t = { .how = VPERF_RAWREC_TSC_DEBUGFS };
		unsigned int bits, idx;
		uint64_t ratio;
		int64_t off;
		char why[256];

		if (vperf_kvm__tsc_offset(&r->vmm, r->vmm.vcpus[i].index, r->o->debugfs_root,
					  &off, &ratio, &bits, why, sizeof(why))) {
			if (first && !missing)
				snprintf(r->st->tsc_why, sizeof(r->st->tsc_why), "%s", why);
			missing++;
			continue;
		}
		if (ratio && first && !missing)
			snprintf(r->st->tsc_why, sizeof(r->st->tsc_why), "vCPU %u's TSC is scaled "
				 "(ratio %" PRIu64 " / 2^%u): guest times map only roughly",
				 r->vmm.vcpus[i].index, ratio, bits);
		t.offset = off;
		t.host_tsc = rdtsc();
		/* written when it changed (the VMM or the guest wrote IA32_TSC): seen up to 20 ms late */
		idx = r->vmm.vcpus[i].index;
		if (r->have_off[idx] && r->last_off[idx] == off)
			continue;
		r->have_off[idx] = true;
		r->last_off[idx] = off;
		chunk(r, VPERF_RAWREC_TSC_OFFSET, idx, &t, sizeof(t));
	}
	return missing;
}

static void write_meta(struct rec *r, const char *host_events)
{
	struct meta *m = calloc(1, sizeof(*m));
	char name[64];

	if (!m)
		return;
	clean(name, sizeof(name), r->vmm.comm);
	meta(m, "recorder=vperf kvm record (attached to a running VMM)\n");
	meta(m, "vmm_pid=%d\n", (int)r->vmm.pid);
	meta(m, "vmm_comm=%s\n", name);
	meta(m, "nr_vcpus=%u\n", r->vmm.nr_vcpus);
	for (unsigned int i = 0; i < r->vmm.nr_vcpus; i++)
		meta(m, "vcpu%u_tid=%d\n", r->vmm.vcpus[i].index, (int)r->vmm.vcpus[i].tid);
	meta(m, "vcpu_threads=%s\n", r->vmm.names ? r->vmm.names :
	     "not named: taken from the host's kvm_entry events");
	meta(m, "clock_mapping=host TSC; guest TSC - offset = host TSC (KVM debugfs tsc-offset)\n");
	meta(m, "tsc_khz_how=measured: host TSC against CLOCK_MONOTONIC_RAW over the recording\n");
	if (r->st->tsc_why[0])
		meta(m, "tsc_offsets=%s\n", r->st->tsc_why);
	meta(m, "host_events=%s\n", host_events);
	meta(m, "guest_channel=%s\n", r->shm ? "shared memory (docs/abi.md 8)" :
	     "none: no --shm file, so no guest records");
	chunk(r, VPERF_RAWREC_META, 0, m->buf, (uint32_t)m->n);
	free(m);
}

/* The channel's losses per ring, as running totals. */
static void shm_lost(struct rec *r)
{
	struct vperf_shm_stats ss;

	if (!r->shm)
		return;
	vperf_shm__stats(r->shm, &ss);
	for (uint32_t i = 0; i < ss.nr_rings; i++) {
		struct vperf_shm_ring_stats rs;
		struct vperf_rawrec_guest_lost l;

		if (vperf_shm__ring_stats(r->shm, i, &rs))
			continue;
		l = (struct vperf_rawrec_guest_lost){ .host_tsc = rdtsc(),
			.invalid_bytes = rs.refused_bytes, .invalid_records = rs.refused_drains,
			.guest_lost = rs.guest_lost, .bad_headers = rs.bad_headers };
		chunk(r, VPERF_RAWREC_GUEST_LOST, rs.cpu, &l, sizeof(l));
	}
}

static void shm_figures(struct rec *r, struct vperf_shm *s);

static void shm_poll(struct rec *r)
{
	char why[256] = "";

	if (!r->shm)
		return;
	if (vperf_shm__poll(r->shm, (struct vperf_shm_sink){ guest_records, r }, why,
			    sizeof(why)) == -EIO) {
		note(r, "%s: no more guest records from it", why);
		shm_lost(r);
		shm_figures(r, r->shm);
		vperf_shm__close(r->shm);
		r->shm = NULL;
	}
}

static void shm_figures(struct rec *r, struct vperf_shm *s)
{
	struct vperf_shm_stats ss;

	vperf_shm__stats(s, &ss);
	r->st->guest_layouts_refused = ss.layouts_refused;
	for (uint32_t i = 0; i < ss.nr_rings; i++) {
		struct vperf_shm_ring_stats rs;

		if (vperf_shm__ring_stats(s, i, &rs))
			continue;
		r->st->guest_records += rs.records;
		r->st->guest_refused_bytes += rs.refused_bytes;
		r->st->guest_bad_headers += rs.bad_headers;
	}
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

static bool vmm_gone(int pidfd, pid_t pid)
{
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		return poll(&p, 1, 0) > 0;
	}
	return kill(pid, 0) && errno == ESRCH;
}

/* The recording's loop: until stopped, the duration, the VMM's exit or a failed write. */
static void run(struct rec *r, int pidfd)
{
	const struct vperf_kvm_rec_opts *o = r->o;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), last_lost = t0, last_off = t0;

	for (;;) {
		uint64_t t;

		if (pidfd >= 0) {
			struct pollfd p = { .fd = pidfd, .events = POLLIN };

			poll(&p, 1, POLL_MS);
		} else {
			struct timespec ts = { 0, POLL_MS * 1000000L };

			nanosleep(&ts, NULL);
		}
		if (r->ht)
			hosttrace__poll(r->ht);
		shm_poll(r);
		t = now_ns(CLOCK_MONOTONIC);
		if (t - last_lost >= LOST_EVERY_NS) {
			shm_lost(r);
			last_lost = t;
		}
		if (t - last_off >= OFFSETS_EVERY_NS) {
			offsets(r, false);	/* a change is written with the time it was seen */
			last_off = t;
		}
		if (r->write_err) {
			r->st->end = VPERF_KVM_END_ERROR;
			if (r->write_err == -EFBIG)
				snprintf(r->st->end_why, sizeof(r->st->end_why), "the raw recording "
					 "reached its most (%" PRIu64 " bytes)", r->max_bytes);
			else
				snprintf(r->st->end_why, sizeof(r->st->end_why), "writing the raw "
					 "recording failed: %s", strerror(-r->write_err));
			return;
		}
		if (o->stop && *o->stop) {
			r->st->end = VPERF_KVM_END_STOPPED;
			snprintf(r->st->end_why, sizeof(r->st->end_why), "stopped (a signal)");
			return;
		}
		if (o->duration_ns && t - t0 >= o->duration_ns) {
			r->st->end = VPERF_KVM_END_DURATION;
			snprintf(r->st->end_why, sizeof(r->st->end_why), "the duration asked for "
				 "(%.3f s) passed", (double)o->duration_ns / 1e9);
			return;
		}
		if (vmm_gone(pidfd, r->vmm.pid)) {
			r->st->end = VPERF_KVM_END_VMM_EXITED;
			snprintf(r->st->end_why, sizeof(r->st->end_why), "the VMM (pid %d) exited",
				 (int)r->vmm.pid);
			return;
		}
	}
}

/* Everything after the loop: the last events and records, the end's facts, END, the header. */
static void finish(struct rec *r)
{
	struct vperf_rawrec_end end;
	uint64_t tsc, ns;
	struct meta m = { .n = 0 };
	char why[256];

	shm_poll(r);
	if (r->st->end != VPERF_KVM_END_VMM_EXITED)
		offsets(r, false);
	if (r->ht) {
		hosttrace__stop(r->ht);
		hosttrace__delete(r->ht);
		r->ht = NULL;
	}
	shm_lost(r);
	if (r->shm) {
		shm_figures(r, r->shm);
		vperf_shm__close(r->shm);
		r->shm = NULL;
	}
	clean(why, sizeof(why), r->st->end_why);
	meta(&m, "recording_end=%s\n", why);
	r->write_err = 0;	/* the end's chunks are worth a try: a full file has room for them */
	r->max_bytes += 4096;
	chunk(r, VPERF_RAWREC_META, 0, m.buf, (uint32_t)m.n);
	clock_pair(&tsc, &ns);
	end = (struct vperf_rawrec_end){ .host_tsc = tsc, .monotonic_ns = now_ns(CLOCK_MONOTONIC) };
	chunk(r, VPERF_RAWREC_END, 0, &end, sizeof(end));
	/* the TSC's rate over the whole recording, into the header */
	if (ns > r->start_raw_ns && tsc > r->start_tsc) {
		r->hdr.tsc_khz = (uint64_t)((double)(tsc - r->start_tsc) * 1e6 /
					    (double)(ns - r->start_raw_ns) + 0.5);
		if (pwrite(r->fd, &r->hdr, sizeof(r->hdr), 0) != (ssize_t)sizeof(r->hdr))
			note(r, "rewriting the raw recording's header: %s", strerror(errno));
	}
	r->st->tsc_khz = r->hdr.tsc_khz;
	r->st->duration_ns = ns - r->start_raw_ns;
	r->st->raw_bytes = r->bytes;
}

/* The header with a first measure of the TSC's rate (POLL_MS long), rewritten at the end. */
static int start_file(struct rec *r)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };
	uint64_t tsc, ns;

	clock_pair(&r->start_tsc, &r->start_raw_ns);
	nanosleep(&ts, NULL);
	clock_pair(&tsc, &ns);
	memcpy(r->hdr.magic, VPERF_RAWREC_MAGIC, sizeof(r->hdr.magic));
	r->hdr.size = sizeof(r->hdr);
	r->hdr.version = VPERF_RAWREC_VERSION;
	r->hdr.tsc_khz = (uint64_t)((double)(tsc - r->start_tsc) * 1e6 /
				    (double)(ns - r->start_raw_ns) + 0.5);
	for (unsigned int i = 0; i < r->vmm.nr_vcpus; i++)
		if (r->vmm.vcpus[i].index + 1 > r->hdr.nr_vcpus)
			r->hdr.nr_vcpus = r->vmm.vcpus[i].index + 1;
	r->hdr.start_tsc = r->start_tsc;
	r->hdr.start_realtime_ns = now_ns(CLOCK_REALTIME);
	r->hdr.start_monotonic_ns = now_ns(CLOCK_MONOTONIC);
	if (write(r->fd, &r->hdr, sizeof(r->hdr)) != (ssize_t)sizeof(r->hdr))
		return errno ? -errno : -EIO;
	r->bytes = sizeof(r->hdr);
	return 0;
}

int vperf_kvm__record(const struct vperf_kvm_rec_opts *o, struct vperf_kvm_rec_stats *st,
		      char *why, size_t why_len)
{
	struct rec r = { .o = o, .st = st, .fd = -1 };
	char host[400] = "none: not asked for";
	pid_t *tids;
	size_t nr_tids = 0;
	int err, pidfd;

	memset((char *)st + sizeof(st->size), 0, sizeof(*st) - sizeof(st->size));
	if (!o || o->size < sizeof(*o) || !st || st->size < sizeof(*st) || !o->raw_path) {
		snprintf(why, why_len, "bad arguments");
		return -EINVAL;
	}
	r.max_bytes = o->max_bytes ? o->max_bytes : DEFAULT_MAX;
	err = vperf_kvm__find(o->pid, o->proc_root, &r.vmm, why, why_len);
	if (err)
		return err;
	st->pid = r.vmm.pid;
	memcpy(st->comm, r.vmm.comm, sizeof(st->comm));
	st->nr_vcpus = r.vmm.nr_vcpus;
	pidfd = open_pidfd(o->pid);
	if (o->shm_path) {
		err = vperf_shm__open(o->shm_path, &r.shm, why, why_len);
		if (err)
			goto out;
	}
	r.fd = open(o->raw_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r.fd < 0) {
		err = -errno;
		snprintf(why, why_len, "creating %s: %s", o->raw_path, strerror(errno));
		goto out;
	}
	err = start_file(&r);
	if (err) {
		snprintf(why, why_len, "writing %s: %s", o->raw_path, strerror(-err));
		goto out_unlink;
	}
	/* the host's events of the vCPU threads: of every thread where the names do not say */
	tids = calloc(r.vmm.nr_threads ? r.vmm.nr_threads : 1, sizeof(*tids));
	if (!tids) {
		err = -ENOMEM;
		snprintf(why, why_len, "out of memory");
		goto out_unlink;
	}
	for (unsigned int i = 0; i < r.vmm.nr_vcpus; i++)
		if (r.vmm.vcpus[i].tid) {
			tids[nr_tids++] = r.vmm.vcpus[i].tid;
			st->nr_vcpu_threads++;
		}
	if (st->nr_vcpu_threads < r.vmm.nr_vcpus) {
		memcpy(tids, r.vmm.threads, r.vmm.nr_threads * sizeof(*tids));
		nr_tids = r.vmm.nr_threads;
	}
	if (o->host_events) {
		bool missing = false;

		err = hosttrace__start(&r.ht, tids, nr_tids, HOST_BUFFER_KB,
				       (struct hosttrace_sink){ host_chunk, &r }, st->host_events_why,
				       sizeof(st->host_events_why), &missing);
		if (err) {
			r.ht = NULL;
			note(&r, "no host kernel events: %s", st->host_events_why);
			snprintf(host, sizeof(host), "none: %s", st->host_events_why);
		} else {
			st->host_events = true;
			if (missing)
				note(&r, "some host kernel events are missing: %s",
				     st->host_events_why);
			snprintf(host, sizeof(host), "kvm:kvm_entry,kvm:kvm_exit,kvm:kvm_inj_virq,"
				 "sched:sched_switch,sched:sched_wakeup%s%s",
				 st->host_events_why[0] ? "; " : "", st->host_events_why);
		}
	}
	free(tids);
	st->tsc_offsets = offsets(&r, true) == 0;
	if (!st->tsc_offsets)
		note(&r, "%s: the guest's records cannot be placed on the host's clock",
		     st->tsc_why);
	else if (st->tsc_why[0])
		note(&r, "%s", st->tsc_why);
	write_meta(&r, host);
	if (o->started)
		o->started(o->note_arg);
	run(&r, pidfd);
	finish(&r);
	err = 0;
	goto out;
out_unlink:
	unlink(o->raw_path);
out:
	if (r.ht)
		hosttrace__delete(r.ht);
	vperf_shm__close(r.shm);
	if (r.fd >= 0)
		close(r.fd);
	if (pidfd >= 0)
		close(pidfd);
	vperf_kvm__free(&r.vmm);
	return err;
}
