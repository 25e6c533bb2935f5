// SPDX-License-Identifier: MIT
/*
 * Raw recording -> CTF recording (convert.h).
 *
 * The raw file is read whole (mmap) and checked chunk by chunk; every event becomes one entry
 * {time, layer, cpu, where its bytes are} in an array, times mapped onto the host TSC in
 * nanoseconds:
 *   host and VMM events carry host TSC values already;
 *   guest records carry the guest TSC: host TSC = guest TSC - the vCPU's offset (KVM's, from a
 *   TSC_OFFSET chunk), or, where the VMM could not read it, the smallest offset the TRACE_FLUSH
 *   samples allow (guest_tsc - host_tsc of each sample is a lower bound; the recording says so).
 * Then one stable sort by time and one pass through the CTF writer: sorted input keeps every
 * stream in order and satisfies the writer's flush rule with any flush interval.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vperf/abi.h>
#include <vperf/rawrec.h>
#include <vperf/trace_rec.h>

#include "convert-int.h"
#include "ctf.h"
#include "escape.h"
#include "ordered.h"
#include "schema.h"
#include "ksyms.h"
#ifdef VPERF_RECORD_HOSTEVENTS
#include "hostevents.h"
#endif


_Static_assert(VPERF_TRACE_NR_TYPES <= sizeof(((struct vperf_convert_stats *)0)->guest_by_type) /
					sizeof(uint64_t), "guest_by_type holds every record type");

/* KVM_EXIT_* (linux/kvm.h) names; the number is kept whole beside it, named or not */
static const char *const kvm_exits[] = {
	"unknown", "exception", "io", "hypercall", "debug", "hlt", "mmio", "irq_window_open",
	"shutdown", "fail_entry", "intr", "set_tpr", "tpr_access", "s390_sieic", "s390_reset",
	"dcr", "nmi", "internal_error", "osi", "papr_hcall", "s390_ucontrol", "watchdog",
	"s390_tsch", "epr", "system_event", "s390_stsi", "ioapic_eoi", "hyperv", "arm_nisv",
	"x86_rdmsr", "x86_wrmsr", "dirty_ring_full", "ap_reset_hold", "x86_bus_lock", "xen",
	"riscv_sbi", "riscv_csr", "notify",
};

static int fail(struct conv *c, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct conv *c, int err, const char *fmt, ...)
{
	va_list ap;

	if (c->why && c->why_len) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static uint64_t tsc_ns(const struct conv *c, uint64_t tsc)
{
	return (uint64_t)((unsigned __int128)tsc * 1000000u / c->h->tsc_khz);
}

static int push(struct conv *c, struct cev e)
{
	struct cev *n = vperf_ordered__queue(&c->ev, e.h.ts);

	if (!n)
		return fail(c, -ENOMEM, "out of memory for %zu events",
			    vperf_ordered__nr(&c->ev) + 1);
	e.h = n->h;
	*n = e;
	return 0;
}


/* Guest TSC -> host TSC ns for vCPU n; false if no mapping is known. */
static bool guest_ns(const struct conv *c, unsigned int n, uint64_t guest_tsc, uint64_t *ns)
{
	int64_t off;

	if (!c->offset_how[n])
		return false;
	off = c->offset[n];
	/* the latest exact offset in force when the record was written (host TSC >= its start) */
	for (unsigned int k = c->nr_offset_chg[n]; k-- > 1;)
		if (guest_tsc - (uint64_t)c->offset_chg[n][k].offset >= c->offset_chg[n][k].host_tsc) {
			off = c->offset_chg[n][k].offset;
			break;
		}
	*ns = tsc_ns(c, guest_tsc - (uint64_t)off);
	return true;
}

/* ---- pass 1: the clock facts; pass 2: the events ---- */

typedef int (*chunk_fn)(struct conv *c, const struct vperf_rawrec_chunk *ch, const unsigned char *p);

static int walk(struct conv *c, chunk_fn fn)
{
	size_t off = sizeof(*c->h);

	while (off < c->map_len) {
		const struct vperf_rawrec_chunk *ch;
		size_t padded;
		int err;

		if (c->map_len - off < sizeof(*ch)) {
			c->st->truncated = true;
			break;
		}
		ch = (const void *)(c->map + off);
		padded = ((size_t)ch->size + 7) & ~(size_t)7;
		if (ch->size > VPERF_RAWREC_MAX_CHUNK)
			return fail(c, -EINVAL, "chunk at byte %zu: size %u is over the limit", off, ch->size);
		if (c->map_len - off - sizeof(*ch) < ch->size) {
			c->st->truncated = true;	/* a writer killed mid-chunk */
			break;
		}
		err = fn(c, ch, c->map + off + sizeof(*ch));
		if (err)
			return err;
		off += sizeof(*ch) + padded;
	}
	return 0;
}

static int clock_pass(struct conv *c, const struct vperf_rawrec_chunk *ch, const unsigned char *p)
{
	unsigned int n = ch->cpu;

	if (ch->type == VPERF_RAWREC_TSC_OFFSET && ch->size == sizeof(struct vperf_rawrec_tsc) &&
	    n < c->h->nr_vcpus) {
		const struct vperf_rawrec_tsc *t = (const void *)p;

		unsigned int *k = &c->nr_offset_chg[n];

		if (c->offset_how[n] != 1) {	/* the first KVM offset: the start's */
			c->offset[n] = t->offset;
			c->offset_how[n] = 1;
			*k = 0;
		}
		/* and each change after it, in the file's order (the recorder's time order) */
		if (*k < VPERF_CONV_OFFSET_CHANGES &&
		    (!*k || c->offset_chg[n][*k - 1].offset != t->offset) &&
		    (!*k || t->host_tsc >= c->offset_chg[n][*k - 1].host_tsc)) {
			c->offset_chg[n][*k] = (struct conv_offset){ t->host_tsc, t->offset };
			(*k)++;
		}
	} else if (ch->type == VPERF_RAWREC_TSC_SAMPLE && ch->size == sizeof(struct vperf_rawrec_tsc_sample) &&
		   n < c->h->nr_vcpus && c->offset_how[n] != 1) {
		const struct vperf_rawrec_tsc_sample *s = (const void *)p;
		int64_t lb = (int64_t)(s->guest_tsc - s->host_tsc);

		if (!c->offset_how[n] || lb > c->offset[n]) {
			c->offset[n] = lb;
			c->offset_how[n] = 2;
		}
	} else if (ch->type == VPERF_RAWREC_END) {
		c->ended = true;
	} else if (ch->type == VPERF_RAWREC_META) {
		/* 512 bytes spare: meta_env() may lengthen up to 80 keys by 5 bytes */
		size_t room = sizeof(c->meta) - 512 - c->meta_len, len = ch->size < room ? ch->size : room;

		memcpy(c->meta + c->meta_len, p, len);
		c->meta_len += len;
		c->meta[c->meta_len] = '\0';
	}
	return 0;
}

/*
 * vCPU n's guest records, len bytes at p (a GUEST chunk).  vperf-vmm wrote only records
 * libvperf-hv found valid, but the file is not trusted to say so: each record is checked again
 * by the guest ABI's rule (vperf_trace_rec_check()), so everything later read from a record
 * (counts, callchain, names) is inside it and well-formed.  As the host does with a ring, the
 * first invalid record ends the chunk: it and the bytes after it are counted, never read.
 */
static int add_guest(struct conv *c, unsigned int n, const unsigned char *p, size_t len)
{
	for (size_t off = 0; off < len;) {
		const struct vperf_trace_rec *r = (const void *)(p + off);
		struct cev e = { .p = r, .cpu = n, .src = SRC_GUEST, .layer = VPERF_CTF_GUEST_KERNEL };
		uint32_t size = vperf_trace_rec_check(r, (uint32_t)(len - off));	/* len <= 16 MiB */
		int err;

		if (!size) {
			c->st->guest_refused_records++;
			c->st->guest_refused_bytes += len - off;
			break;
		}
		off += size;
		c->st->guest_records++;
		c->st->guest_by_type[r->type]++;	/* a valid record's type is one the ABI has */
		if (!guest_ns(c, n, r->tsc, &e.h.ts)) {
			c->st->guest_unmapped++;	/* no clock mapping for this vCPU */
			continue;
		}
		if (r->type == VPERF_TRACE_MARK)
			e.layer = VPERF_CTF_GUEST_USER;
		if (r->type == VPERF_TRACE_LOST) {
			const struct vperf_trace_lost *l = (const void *)r;

			e.src = SRC_LOST;
			e.count = l->count;
			c->st->lost_producer += l->count;
		}
		err = push(c, e);
		if (err)
			return err;
	}
	return 0;
}

static int event_pass(struct conv *c, const struct vperf_rawrec_chunk *ch, const unsigned char *p)
{
	unsigned int n = ch->cpu;
	int err = 0;

	switch (ch->type) {
	case VPERF_RAWREC_GUEST:
		if (n >= c->h->nr_vcpus)
			return fail(c, -EINVAL, "guest chunk of vCPU %u, the VM had %u", n, c->h->nr_vcpus);
		return add_guest(c, n, p, ch->size);
	case VPERF_RAWREC_EXITS:
		if (n >= c->h->nr_vcpus || ch->size % sizeof(struct vperf_rawrec_exit))
			return fail(c, -EINVAL, "a bad exits chunk (vCPU %u, %u bytes)", n, ch->size);
		for (size_t i = 0; i < ch->size / sizeof(struct vperf_rawrec_exit); i++) {
			const struct vperf_rawrec_exit *x = (const struct vperf_rawrec_exit *)p + i;

			err = push(c, (struct cev){ .h.ts = tsc_ns(c, x->exit_tsc), .p = x, .cpu = n,
						    .src = SRC_EXIT, .layer = VPERF_CTF_VMM });
			if (err)
				return err;
			c->st->vmm_exits++;
		}
		return 0;
	case VPERF_RAWREC_TSC_SAMPLE: {
		/* a TRACE_FLUSH: the guest's time when it asked, the host's when the VMM handled it */
		const struct vperf_rawrec_tsc_sample *s = (const void *)p;
		uint64_t seq = c->nr_flushes++;

		if (n >= c->h->nr_vcpus || ch->size != sizeof(*s) || !c->offset_how[n])
			return 0;	/* the clock pass said why (guest_unmapped) or ignored it */
		err = push(c, (struct cev){ .h.ts = tsc_ns(c, s->guest_tsc - (uint64_t)c->offset[n]),
					    .count = seq, .count2 = 0, .cpu = n, .src = SRC_FLUSH,
					    .layer = VPERF_CTF_GUEST_KERNEL });
		if (!err)
			err = push(c, (struct cev){ .h.ts = tsc_ns(c, s->host_tsc), .count = seq,
						    .count2 = 1, .cpu = n, .src = SRC_FLUSH,
						    .layer = VPERF_CTF_VMM });
		return err;
	}
	case VPERF_RAWREC_EXITS_LOST:
	case VPERF_RAWREC_GUEST_LOST: {
		bool vmm = ch->type == VPERF_RAWREC_EXITS_LOST;
		uint64_t host_tsc, delta;

		if (n >= c->h->nr_vcpus ||
		    (vmm ? ch->size != sizeof(struct vperf_rawrec_lost) :
			   ch->size != sizeof(struct vperf_rawrec_guest_lost) &&
			   ch->size != offsetof(struct vperf_rawrec_guest_lost, bad_headers)))
			return fail(c, -EINVAL, "a bad lost chunk (vCPU %u, %u bytes)", n, ch->size);
		if (vmm) {
			const struct vperf_rawrec_lost *l = (const void *)p;

			host_tsc = l->host_tsc;
			delta = l->count > c->lost_vmm[n] ? l->count - c->lost_vmm[n] : 0;
			c->lost_vmm[n] = l->count;
			c->st->lost_vmm += delta;
			if (delta)
				err = push(c, (struct cev){ .h.ts = tsc_ns(c, host_tsc), .count = delta, .cpu = n,
							    .src = SRC_LOST, .layer = VPERF_CTF_VMM });
			return err;
		}
		{
			struct vperf_rawrec_guest_lost gl = { 0 };
			const struct vperf_rawrec_guest_lost *g = &gl;

			memcpy(&gl, p, ch->size);	/* an older writer's has no bad_headers: 0 */
			host_tsc = g->host_tsc;
			/* the guest's own count: a decrease is the guest's doing, never subtracted */
			delta = g->guest_lost > c->guest_lost[n] ? g->guest_lost - c->guest_lost[n] : 0;
			c->guest_lost[n] = g->guest_lost;
			c->st->lost_guest += delta;
			if (delta)
				err = push(c, (struct cev){ .h.ts = tsc_ns(c, host_tsc), .count = delta, .cpu = n,
							    .src = SRC_LOST, .layer = VPERF_CTF_GUEST_KERNEL });
			if (!err && (g->invalid_bytes > c->invalid_bytes[n] ||
				     g->bad_headers > c->bad_headers[n])) {
				uint64_t bad = g->bad_headers > c->bad_headers[n] ?
					       g->bad_headers - c->bad_headers[n] : 0;

				err = push(c, (struct cev){ .h.ts = tsc_ns(c, host_tsc),
							    .count = g->invalid_bytes > c->invalid_bytes[n] ?
								     g->invalid_bytes - c->invalid_bytes[n] : 0,
							    .count2 = g->invalid_records - c->invalid_drains[n],
							    .count3 = bad, .cpu = n, .src = SRC_INVALID,
							    .layer = VPERF_CTF_GUEST_KERNEL });
				if (g->invalid_bytes > c->invalid_bytes[n])
					c->st->lost_invalid_bytes += g->invalid_bytes - c->invalid_bytes[n];
				c->st->guest_bad_headers += bad;
				c->invalid_bytes[n] = g->invalid_bytes;
				c->invalid_drains[n] = g->invalid_records;
				c->bad_headers[n] = g->bad_headers;
			}
			return err;
		}
	}
#ifdef VPERF_RECORD_HOSTEVENTS
	case VPERF_RAWREC_TRACEFS_HEADER:
		err = vperf_hostev_reader__add_header(c->host, (const char *)p, ch->size);
		return err ? fail(c, err, "host events: %s", vperf_hostev_reader__strerror(c->host)) : 0;
	case VPERF_RAWREC_TRACEFS_FORMAT:
		err = vperf_hostev_reader__add_format_chunk(c->host, p, ch->size);
		return err ? fail(c, err, "host events: %s", vperf_hostev_reader__strerror(c->host)) : 0;
	case VPERF_RAWREC_TRACEFS_PAGES:
		err = vperf_hostev_reader__add_pages(c->host, n, p, ch->size);
		return err ? fail(c, err, "host events: %s", vperf_hostev_reader__strerror(c->host)) : 0;
	case VPERF_RAWREC_TRACEFS_STATS:
		err = vperf_hostev_reader__add_stats(c->host, n, (const char *)p, ch->size);
		return err ? fail(c, err, "host events: %s", vperf_hostev_reader__strerror(c->host)) : 0;
#endif
	default:
		return 0;
	}
}

#ifdef VPERF_RECORD_HOSTEVENTS
static int host_event(const struct vperf_hostev *ev, void *ctx)
{
	struct conv *c = ctx;

	if (ev->type == VPERF_HOSTEV_OTHER)
		return 0;
	/* losses the pages place in time are emitted as lost_events; the total is counted below */
	if (c->nr_hostev == c->cap_hostev) {
		size_t cap = c->cap_hostev ? c->cap_hostev * 2 : 65536;
		struct vperf_hostev *n = realloc(c->hostev, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->hostev = n;
		c->cap_hostev = cap;
	}
	c->hostev[c->nr_hostev++] = *ev;
	if (ev->type != VPERF_HOSTEV_LOST)
		c->st->host_events++;
	return 0;
}
#endif

#define NOT_WRITTEN	1	/* emit_*(): an event read, not written (0: written; -errno) */

static int emit_guest(struct conv *c, struct vperf_ctf_stream *s, const struct cev *e)
{
	const struct vperf_trace_rec *r = e->p;
	char a[64], b[64], fn[VPERF_TRACE_REC_MAX * 2];

	(void)c;
	switch (r->type) {
	case VPERF_TRACE_SCHED_SWITCH: {
		const struct vperf_trace_switch *x = (const void *)r;

		return vperf_ev__sched_switch(s, e->h.ts, &(struct vperf_ev_sched_switch){
			.prev_tid = r->tid,
			.prev_comm = esc_utf8_clean(a, sizeof(a), x->prev_comm, sizeof(x->prev_comm)),
			.prev_state = x->prev_state, .next_tid = x->next_tid,
			.next_comm = esc_utf8_clean(b, sizeof(b), x->next_comm, sizeof(x->next_comm)) });
	}
	case VPERF_TRACE_SCHED_WAKEUP: {
		const struct vperf_trace_wakeup *x = (const void *)r;

		return vperf_ev__sched_wakeup(s, e->h.ts, &(struct vperf_ev_sched_wakeup){
			.tid = x->wakee_tid, .target_cpu = x->target_cpu, .waker_tid = r->tid });
	}
	case VPERF_TRACE_FORK: {
		const struct vperf_trace_fork *x = (const void *)r;

		return vperf_ev__process_fork(s, e->h.ts, &(struct vperf_ev_process_fork){
			.parent_pid = r->pid, .parent_tid = r->tid, .child_pid = x->child_pid,
			.child_tid = x->child_tid,
			.child_comm = esc_utf8_clean(a, sizeof(a), x->comm, sizeof(x->comm)) });
	}
	case VPERF_TRACE_EXEC: {
		const struct vperf_trace_exec *x = (const void *)r;

		return vperf_ev__process_exec(s, e->h.ts, &(struct vperf_ev_process_exec){
			.pid = r->pid, .tid = r->tid,
			.comm = esc_utf8_clean(a, sizeof(a), x->comm, sizeof(x->comm)),
			.filename = esc_utf8_clean(fn, sizeof(fn), x->filename, r->size - sizeof(*x)) });
	}
	case VPERF_TRACE_EXIT: {
		const struct vperf_trace_exit *x = (const void *)r;

		return vperf_ev__process_exit(s, e->h.ts, &(struct vperf_ev_process_exit){
			.pid = r->pid, .tid = r->tid, .exit_code = x->exit_code });
	}
	case VPERF_TRACE_IRQ: {
		const struct vperf_trace_irq *x = (const void *)r;

		return vperf_ev__irq_entry(s, e->h.ts, &(struct vperf_ev_irq_entry){
			.vector = x->vector, .kind = x->kind,
			.irq = x->irq == UINT32_MAX ? -1 : (int64_t)x->irq, .tid = r->tid });
	}
	case VPERF_TRACE_SAMPLE: {
		const struct vperf_trace_sample *x = (const void *)r;
		const uint64_t *d = (const uint64_t *)x->data;

		return vperf_ev__sample(s, e->h.ts, &(struct vperf_ev_sample){
			.ip = x->ip, .user = r->flags & VPERF_TRACE_SAMPLE_USER ? 1 : 0,
			.pid = r->pid, .tid = r->tid, .counts = d, .nr_counts = x->nr_counts,
			.counts_are = r->flags & VPERF_TRACE_SAMPLE_PERIOD ?
				      VPERF_COUNTS_ARE_PERIOD : VPERF_COUNTS_ARE_THREAD_COUNTS,
			.callchain = d + x->nr_counts, .nr_callchain = x->nr_callchain });
	}
	case VPERF_TRACE_MARK: {
		const struct vperf_trace_mark *x = (const void *)r;

		return vperf_ev__marker(s, e->h.ts, &(struct vperf_ev_marker){
			.name = esc_utf8_clean(fn, sizeof(fn), x->name, x->name_len), .value = x->value,
			.kind = x->kind, .pid = r->pid, .tid = r->tid });
	}
	case VPERF_TRACE_MMAP: {
		const struct vperf_trace_mmap *x = (const void *)r;

		if (!r->pid)	/* the kernel's text, a module's symbol: symbols written at the end */
			return NOT_WRITTEN;
		return vperf_ev__mmap(s, e->h.ts, &(struct vperf_ev_mmap){
			.pid = r->pid, .tid = r->tid, .start = x->start, .len = x->len,
			.pgoff = x->pgoff,
			.filename = esc_utf8_clean(fn, sizeof(fn), x->filename, r->size - sizeof(*x)) });
	}
	default:
		return NOT_WRITTEN;	/* LOST is SRC_LOST; vperf_trace_rec_check() passes no other */
	}
}

#ifdef VPERF_RECORD_HOSTEVENTS
static int emit_host(struct vperf_ctf_stream *s, const struct cev *e)
{
	const struct vperf_hostev *h = e->p;
	char a[64], b[64];

	switch (h->type) {
	case VPERF_HOSTEV_KVM_ENTRY:
		return vperf_ev__kvm_entry(s, e->h.ts, &(struct vperf_ev_kvm_entry){
			.vcpu_id = h->kvm_entry.vcpu_id, .rip = h->kvm_entry.rip, .tid = h->pid });
	case VPERF_HOSTEV_KVM_EXIT:
		return vperf_ev__kvm_exit(s, e->h.ts, &(struct vperf_ev_kvm_exit){
			.vcpu_id = h->kvm_exit.vcpu_id, .exit_reason = h->kvm_exit.exit_reason,
			.guest_rip = h->kvm_exit.guest_rip, .info1 = h->kvm_exit.info1,
			.info2 = h->kvm_exit.info2, .tid = h->pid });
	case VPERF_HOSTEV_KVM_INJ_VIRQ:
		return vperf_ev__kvm_inj_virq(s, e->h.ts, &(struct vperf_ev_kvm_inj_virq){
			.vector = h->kvm_inj_virq.vector, .soft = h->kvm_inj_virq.soft ? 1 : 0,
			.reinjected = h->kvm_inj_virq.reinjected ? 1 : 0, .tid = h->pid });
	case VPERF_HOSTEV_SCHED_SWITCH:
		return vperf_ev__sched_switch(s, e->h.ts, &(struct vperf_ev_sched_switch){
			.prev_tid = (uint32_t)h->sched_switch.prev_pid,
			.prev_comm = esc_utf8_clean(a, sizeof(a), h->sched_switch.prev_comm,
					  sizeof(h->sched_switch.prev_comm)),
			.prev_state = (uint64_t)h->sched_switch.prev_state,
			.next_tid = (uint32_t)h->sched_switch.next_pid,
			.next_comm = esc_utf8_clean(b, sizeof(b), h->sched_switch.next_comm,
					  sizeof(h->sched_switch.next_comm)) });
	case VPERF_HOSTEV_SCHED_WAKEUP:
		return vperf_ev__sched_wakeup(s, e->h.ts, &(struct vperf_ev_sched_wakeup){
			.tid = (uint32_t)h->sched_wakeup.pid,
			.target_cpu = h->sched_wakeup.target_cpu, .waker_tid = (uint32_t)h->pid });
	default:
		return NOT_WRITTEN;
	}
}
#endif

static int emit_one(struct conv *c, struct vperf_ctf *ctf, const struct cev *e)
{
	struct vperf_ctf_stream *s;
	int err = vperf_ctf__stream(ctf, (enum vperf_ctf_layer)e->layer, e->cpu, &s);

	if (err)
		return err;
	switch (e->src) {
	case SRC_GUEST:
		return emit_guest(c, s, e);
	case SRC_EXIT: {
		const struct vperf_rawrec_exit *x = e->p;
		uint64_t end = x->resume_tsc > x->exit_tsc ? x->resume_tsc : x->exit_tsc;

		return vperf_ev__vmm_exit(s, e->h.ts, &(struct vperf_ev_vmm_exit){
			.vcpu = e->cpu, .reason = x->reason,
			.reason_name = x->reason < sizeof(kvm_exits) / sizeof(kvm_exits[0]) ?
				       kvm_exits[x->reason] : "unknown",
			.addr = x->addr, .write = x->flags & VPERF_RAWREC_EXIT_WRITE ? 1 : 0,
			.duration_ns = tsc_ns(c, end) - tsc_ns(c, x->exit_tsc) });
	}
	case SRC_LOST:
		return vperf_ctf__lost(s, e->h.ts, e->count);
	case SRC_FLUSH: {
		return vperf_ev__trace_flush(s, e->h.ts, &(struct vperf_ev_trace_flush){
			.vcpu = e->cpu, .seq = e->count, .side = (uint8_t)e->count2 });
	}
	case SRC_INVALID: {
		const struct vperf_ev_guest_ring_invalid v = {
			.bytes = e->count, .drains = e->count2, .bad_headers = e->count3 };

		return vperf_ev__guest_ring_invalid(s, e->h.ts, &v);
	}
#ifdef VPERF_RECORD_HOSTEVENTS
	case SRC_HOST:
		return emit_host(s, e);
#endif
	default:
		return NOT_WRITTEN;
	}
}

static int map_file(struct conv *c, const char *path)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return fail(c, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		return fail(c, err, "%s: %s", path, strerror(-err));
	}
	if ((size_t)sb.st_size < sizeof(struct vperf_rawrec_header)) {
		close(fd);
		return fail(c, -EINVAL, "%s: %lld bytes, not a vperf raw recording (no header)", path,
			    (long long)sb.st_size);
	}
	c->map_len = (size_t)sb.st_size;
	c->map = mmap(NULL, c->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	err = c->map == MAP_FAILED ? -errno : 0;
	close(fd);
	if (err) {
		c->map = NULL;
		return fail(c, err, "%s: mmap: %s", path, strerror(-err));
	}
	c->h = (const void *)c->map;
	if (memcmp(c->h->magic, VPERF_RAWREC_MAGIC, 8) || c->h->size != sizeof(*c->h) ||
	    c->h->version != VPERF_RAWREC_VERSION)
		return fail(c, -EINVAL, "%s: not a vperf raw recording of version %d", path,
			    VPERF_RAWREC_VERSION);
	if (!c->h->tsc_khz || !c->h->nr_vcpus || c->h->nr_vcpus > VPERF_MAX_VCPUS_RAW)
		return fail(c, -EINVAL, "%s: a header with tsc_khz %" PRIu64 " and %u vCPUs", path,
			    (uint64_t)c->h->tsc_khz, c->h->nr_vcpus);
	return 0;
}

static bool tsdl_keyword(const char *k)
{
	static const char *const kw[] = {
		"align", "callsite", "const", "char", "clock", "double", "enum", "env", "event",
		"floating_point", "float", "integer", "int", "long", "short", "signed", "stream", "string",
		"struct", "trace", "typealias", "typedef", "unsigned", "variant", "void", "_Bool",
		"_Complex", "_Imaginary",
	};

	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (!strcmp(k, kw[i]))
			return true;
	return false;
}

/* "key=value" lines of the META chunk into environment entries; "vcpuN_tid" and such kept. */
static size_t meta_env(char *meta, struct vperf_ctf_env *env, size_t max)
{
	size_t n = 0;

	for (char *line = meta, *next; line && *line && n < max; line = next) {
		char *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq || eq == line)
			continue;
		*eq = '\0';
		/* keys are identifiers; values printable ASCII (the writer checks) */
		for (char *k = line; *k; k++)
			if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '_'))
				*k = '_';
		for (char *v = eq + 1; *v; v++)
			if (*v < 0x20 || *v > 0x7e || *v == '"' || *v == '\\')
				*v = '?';
		/* a key that is a TSDL keyword ("clock", "trace", ...) would break the metadata */
		if (tsdl_keyword(line)) {
			memmove(line + 5, line, strlen(line) + 1);
			memcpy(line, "meta_", 5);
		}
		env[n] = (struct vperf_ctf_env){ line, eq + 1, false };
		n++;
	}
	return n;
}

/* One event, in time order, into the trace (flushed every 200000): 0 or -errno. */
static int write_ev(void *arg, void *ev)
{
	struct conv *c = arg;
	const struct cev *e = ev;
	int err;

	if (e->src == SRC_OUT_OF_RANGE)
		return 0;
	err = emit_one(c, c->ctf, e);
	/* stats->events: the events the trace holds (lost_events aside) */
	if (!err && e->src != SRC_LOST)
		c->st->events++;
	if (err == NOT_WRITTEN)
		err = 0;
	if (!err && ++c->written % 200000 == 0)
		err = vperf_ctf__flush(c->ctf);
	return err;
}

int vperf_convert(const char *raw_path, const char *dir, const struct vperf_convert_opts *opts,
		  struct vperf_convert_stats *stats, char *why, size_t why_len)
{
	struct vperf_convert_stats local = { .size = sizeof(local) };
	struct conv *c;
	struct vperf_ctf *ctf = NULL;
	struct vperf_ctf_env env[80];
	struct vperf_schema schema;
	char vdso_note[256], gmod_note[128];
	char vals[32][24], type_key_buf[VPERF_TRACE_NR_TYPES][48];
	size_t nr_vals = 0;
	char clock_note[1024], khz[32], offsets[512], cwhy[256];
	size_t nr_env = 0, o = 0;
	int64_t clock_off;
	int err;

	if (stats && stats->size < sizeof(*stats))
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	vperf_ordered__init(&c->ev, sizeof(struct cev));
	c->st = stats ? stats : &local;
	memset(c->st, 0, sizeof(*c->st));
	c->st->size = sizeof(*c->st);
	c->why = why;
	c->why_len = why_len;
	err = map_file(c, raw_path);
	if (err)
		goto out;
	c->st->nr_vcpus = c->h->nr_vcpus;
	err = walk(c, clock_pass);
	if (err)
		goto out;
	c->st->truncated |= !c->ended;
#ifdef VPERF_RECORD_HOSTEVENTS
	err = vperf_hostev_reader__new(&c->host);
	if (err) {
		err = fail(c, err, "host events: %s", strerror(-err));
		goto out;
	}
	vperf_hostev_reader__report_lost(c->host, true);
#endif
	err = walk(c, event_pass);
	if (err)
		goto out;
#ifdef VPERF_RECORD_HOSTEVENTS
	err = vperf_hostev_reader__read(c->host, host_event, c);
	if (err) {
		err = fail(c, err, "host events: %s", vperf_hostev_reader__strerror(c->host));
		goto out;
	}
	c->st->lost_host = vperf_hostev_reader__lost(c->host);
	for (size_t i = 0; i < c->nr_hostev; i++) {
		bool lost = c->hostev[i].type == VPERF_HOSTEV_LOST;

		err = push(c, (struct cev){ .h.ts = tsc_ns(c, c->hostev[i].tsc), .p = &c->hostev[i],
					    .count = lost ? (c->hostev[i].lost.count ? c->hostev[i].lost.count : 1) : 0,
					    .cpu = c->hostev[i].cpu, .src = lost ? SRC_LOST : SRC_HOST,
					    .layer = VPERF_CTF_HOST_KERNEL });
		if (err)
			goto out;
	}
#endif
	c->st->host_events_missing = !c->st->host_events;
	/*
	 * The trace's clock counts ns from its origin (the start's time of day) in an int64, as
	 * babeltrace2 reads it: events past that are left out, counted.
	 */
	clock_off = (int64_t)(c->h->start_realtime_ns - tsc_ns(c, c->h->start_tsc));
	c->min_ns = UINT64_MAX;
	c->max_ns = 0;
	for (size_t i = 0; i < vperf_ordered__nr(&c->ev); i++) {
		struct cev *e = vperf_ordered__at(&c->ev, i);

		if (e->h.ts > (uint64_t)INT64_MAX - (clock_off > 0 ? clock_off : 0)) {
			e->src = SRC_OUT_OF_RANGE;
			c->st->out_of_range++;
			continue;
		}
		c->min_ns = e->h.ts < c->min_ns ? e->h.ts : c->min_ns;
		c->max_ns = e->h.ts > c->max_ns ? e->h.ts : c->max_ns;
	}
	if (c->min_ns > c->max_ns)
		c->min_ns = c->max_ns = 0;	/* no event */
	{
		bool has = opts && opts->size >= offsetof(struct vperf_convert_opts, guest_kallsyms_as) +
						   sizeof(char *);
		const char *path = has ? opts->guest_kallsyms : NULL;

		err = vperf__conv_find_guest_module_syms(c);
		if (!err)
			err = vperf__conv_find_guest_ksyms(c, path, has && opts->guest_kallsyms_as ?
						       opts->guest_kallsyms_as : path);
	}
	if (err) {
		err = fail(c, err, "reading the guest kernel's symbols: %s", strerror(-err));
		goto out;
	}

	/* the clock: host TSC in ns; its offset makes readers print the time of day */
	snprintf(khz, sizeof(khz), "%" PRIu64, (uint64_t)c->h->tsc_khz);
	for (unsigned int i = 0; i < c->h->nr_vcpus && o < sizeof(offsets); i++) {
		int w = snprintf(offsets + o, sizeof(offsets) - o, "%s%" PRId64 "%s", i ? "," : "",
				 (int64_t)c->offset[i], c->offset_how[i] == 1 ? "" :
					       c->offset_how[i] == 2 ? "(samples)" : "(none)");

		if (w > 0)
			o += (size_t)w;
	}
	snprintf(clock_note, sizeof(clock_note),
		 "one clock: the host TSC at %" PRIu64 " kHz in ns (ns = tsc * 10^6 / tsc_khz); "
		 "host kernel events: trace clock x86-tsc; vmm events: rdtsc; guest records: guest "
		 "TSC - the vCPU's offset (KVM_VCPU_TSC_OFFSET, exact; '(samples)': the smallest "
		 "offset TRACE_FLUSH samples allow, a lower bound)", (uint64_t)c->h->tsc_khz);
	env[nr_env++] = (struct vperf_ctf_env)VPERF_SCHEMA_ENV;
	env[nr_env++] = (struct vperf_ctf_env){ "tsc_khz", khz, false };
	env[nr_env++] = (struct vperf_ctf_env){ "vcpu_tsc_offsets", offsets, false };
	env[nr_env++] = (struct vperf_ctf_env){ "raw_truncated", c->st->truncated ? "1" : "0", false };
	for (char *v = c->st->guest_ksyms_note; *v; v++)	/* a path may hold anything */
		if (*v < 0x20 || *v > 0x7e || *v == '"' || *v == '\\')
			*v = '?';
	env[nr_env++] = (struct vperf_ctf_env){ "guest_kernel_symbols", c->st->guest_ksyms_note, false };
	snprintf(gmod_note, sizeof(gmod_note), "%" PRIu64 " (those samples hit, of %zu the guest's "
		 "modules described in their own MMAP records)", c->st->guest_module_syms, c->nr_gmods);
	env[nr_env++] = (struct vperf_ctf_env){ "guest_module_symbols", gmod_note, false };
	if (opts && opts->size >= offsetof(struct vperf_convert_opts, guest_vdso_note) + sizeof(char *) &&
	    opts->guest_vdso_note) {
		snprintf(vdso_note, sizeof(vdso_note), "%s", opts->guest_vdso_note);
		for (char *v = vdso_note; *v; v++)
			if (*v < 0x20 || *v > 0x7e || *v == '"' || *v == '\\')
				*v = '?';
		env[nr_env++] = (struct vperf_ctf_env){ "guest_vdso", vdso_note, false };
	}
	/* what the recording holds, for `vperf report --header` (counted before writing) */
	{
		static const char *const type_keys[VPERF_TRACE_NR_TYPES] = {
			[VPERF_TRACE_SCHED_SWITCH] = "guest_sched_switch",
			[VPERF_TRACE_SCHED_WAKEUP] = "guest_sched_wakeup",
			[VPERF_TRACE_FORK] = "guest_fork", [VPERF_TRACE_EXEC] = "guest_exec",
			[VPERF_TRACE_EXIT] = "guest_exit", [VPERF_TRACE_IRQ] = "guest_irq",
			[VPERF_TRACE_SAMPLE] = "guest_sample", [VPERF_TRACE_MARK] = "guest_marker",
			[VPERF_TRACE_LOST] = "guest_lost_records", [VPERF_TRACE_MMAP] = "guest_mmap",
		};
		struct { const char *key; uint64_t v; } sum[32] = {
			{ "summary_guest_records", c->st->guest_records },
			{ "summary_guest_unmapped", c->st->guest_unmapped },
			{ "summary_vmm_exits", c->st->vmm_exits },
			{ "summary_host_events", c->st->host_events },
			{ "summary_lost_guest_ring", c->st->lost_guest },
			{ "summary_lost_guest_producer", c->st->lost_producer },
			{ "summary_guest_invalid_bytes", c->st->lost_invalid_bytes },
			{ "summary_guest_bad_ring_headers", c->st->guest_bad_headers },
			{ "summary_guest_refused_records", c->st->guest_refused_records },
			{ "summary_guest_refused_bytes", c->st->guest_refused_bytes },
			{ "summary_out_of_range", c->st->out_of_range },
			{ "summary_lost_vmm", c->st->lost_vmm },
			{ "summary_lost_host", c->st->lost_host },
			{ "summary_duration_ns", c->max_ns - c->min_ns },
		};
		size_t nr_sum = 0;

		while (nr_sum < 32 && sum[nr_sum].key)	/* the fixed ones above */
			nr_sum++;

		for (unsigned int ty = 1; ty < VPERF_TRACE_NR_TYPES && nr_sum < 32; ty++) {
			if (!c->st->guest_by_type[ty] || !type_keys[ty])
				continue;
			snprintf(type_key_buf[ty], sizeof(type_key_buf[ty]), "summary_%s", type_keys[ty]);
			sum[nr_sum].key = type_key_buf[ty];
			sum[nr_sum++].v = c->st->guest_by_type[ty];
		}
		for (size_t i = 0; i < nr_sum && nr_vals < 32; i++) {
			snprintf(vals[nr_vals], sizeof(vals[nr_vals]), "%" PRIu64, sum[i].v);
			env[nr_env++] = (struct vperf_ctf_env){ sum[i].key, vals[nr_vals++], false };
		}
	}
	nr_env += meta_env(c->meta, env + nr_env, sizeof(env) / sizeof(env[0]) - nr_env);
	{
		struct vperf_ctf_config cfg = {
			.size = sizeof(cfg),
			.clock_name = "host_tsc",
			.clock_description = "host TSC in ns",
			.clock_offset_s = clock_off / 1000000000,
			.clock_offset = clock_off % 1000000000,
			.vm_name = opts && opts->vm_name ? opts->vm_name : "vm0",
			.layers = (1u << VPERF_CTF_HOST_KERNEL) | (1u << VPERF_CTF_VMM) |
				  (1u << VPERF_CTF_GUEST_KERNEL) | (1u << VPERF_CTF_GUEST_USER),
			.clock_note = clock_note,
			.env = env,
			.nr_env = nr_env,
			.classes = schema.classes,
			.nr_classes = VPERF_EV_NR,
		};

		vperf_schema__init(&schema, NULL, 0);

		err = vperf_ctf__new(dir, &cfg, &ctf, cwhy, sizeof(cwhy));
		if (err) {
			err = fail(c, err, "%s", cwhy);
			goto out;
		}
	}
	c->ctf = ctf;
	err = vperf_ordered__flush(&c->ev, UINT64_MAX, write_ev, c);
	if (err) {
		err = fail(c, err, "writing %s: %s", dir, vperf_ctf__strerror(ctf));
		goto out;
	}
	if (!err)
		err = vperf__conv_write_guest_ksyms(c, ctf, c->max_ns);
	if (!err)
		err = vperf_ctf__flush(ctf);
	if (err) {
		err = fail(c, err, "writing %s: %s", dir, vperf_ctf__strerror(ctf));
		goto out;
	}
	c->st->duration_ns = c->max_ns - c->min_ns;
out:
	vperf_ctf__delete(ctf);
#ifdef VPERF_RECORD_HOSTEVENTS
	vperf_hostev_reader__delete(c->host);
	free(c->hostev);
#endif
	if (c->map)
		munmap((void *)c->map, c->map_len);
	vperf_ksyms__exit(&c->gsyms);
	free(c->gmods);
	vperf_ordered__exit(&c->ev, NULL);
	free(c);
	return err;
}
