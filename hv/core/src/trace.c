// SPDX-License-Identifier: MIT
/*
 * The trace-ring consumer (docs/abi.md 2.5): drain a vCPU's ring, validate
 * each version-2 record on a private copy, and hand the valid ones to the
 * VMM.  The ring lives in guest memory and the guest may rewrite any of it
 * while we read, so: head is loaded once per drain, each record is copied
 * once and only the copy is looked at, and the tail the guest sees is
 * rewritten from our own.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <vperf/trace_rec.h>

#include "hv-internal.h"

/* The record rules are vperf/trace_rec.h's, shared with the guest side. */
size_t hv_trace_rec_check(const void *buf, size_t avail)
{
	return vperf_trace_rec_check(buf, avail > VPERF_TRACE_REC_MAX ? VPERF_TRACE_REC_MAX : (__u32)avail);
}

/* Hand the batch to the VMM; a refusal there loses the records, not the drain. */
static void deliver(struct hv_vcpu *v, const unsigned char *batch, size_t len)
{
	struct vperf_hv *hv = v->hv;

	if (len && hv->ops->trace_records)
		hv->ops->trace_records(hv->vmm, v->idx, batch, len);
}

int64_t hv_trace_drain(struct hv_vcpu *v)
{
	struct vperf_hv *hv = v->hv;
	struct vperf_trace_ring *r;
	uint64_t gpa, len, head, tail, data_size, pos;
	unsigned char *data;
	size_t fill = 0;
	bool fresh;
	int64_t ret;

	pthread_mutex_lock(&v->trace_lock);
	pthread_mutex_lock(&hv->lock);
	gpa = v->trace_gpa;
	len = v->trace_len;
	fresh = v->trace_fresh;
	v->trace_fresh = false;
	pthread_mutex_unlock(&hv->lock);
	if (!len) {
		ret = -VPERF_ESTATE;
		goto out;
	}
	r = hv->ops->gpa_to_hva(hv->vmm, gpa, len);
	if (!r) {
		ret = -VPERF_EFAULT;
		goto out;
	}
	data_size = len - sizeof(*r);
	data = (unsigned char *)(r + 1);
	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	/*
	 * The tail is the guest's to read, ours to write: the first drain of
	 * a ring (after TRACE_REGISTER) starts from what its header says,
	 * later ones from our own copy.
	 */
	if (fresh)
		v->trace_tail = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
	tail = v->trace_tail;
	if (head < tail || head - tail > data_size) {
		/* the guest broke its own ring: refuse it (nothing read), count it, keep our tail */
		v->trace_bad_headers++;
		ret = -VPERF_EINVAL;
		goto out;
	}
	v->trace_bytes += head - tail;
	v->trace_guest_lost = __atomic_load_n(&r->lost, __ATOMIC_RELAXED);

	if (__atomic_load_n(&r->version, __ATOMIC_RELAXED) == VPERF_TRACE_RING_V2 &&
	    hv->ops->trace_records) {
		for (pos = tail; pos < head;) {
			unsigned char *rec = v->trace_batch + fill;
			size_t avail = head - pos, size;
			uint16_t rsize;

			if (avail < sizeof(struct vperf_trace_rec))
				goto invalid;
			/* the size first, then the record, each read once */
			vperf_ring_copy_out(&rsize, data, data_size, pos, sizeof(rsize));
			size = rsize;
			if (size < sizeof(struct vperf_trace_rec) || size > VPERF_TRACE_REC_MAX ||
			    size > avail)
				goto invalid;
			if (fill + size > sizeof(v->trace_batch)) {
				deliver(v, v->trace_batch, fill);
				fill = 0;
				rec = v->trace_batch;
			}
			vperf_ring_copy_out(rec, data, data_size, pos, (uint32_t)size);
			((struct vperf_trace_rec *)rec)->size = rsize;	/* the size we checked */
			if (hv_trace_rec_check(rec, size) != size)
				goto invalid;
			fill += size;
			v->trace_records++;
			pos += size;
			continue;
invalid:
			v->trace_invalid_bytes += head - pos;
			v->trace_invalid_drains++;
			break;
		}
		deliver(v, v->trace_batch, fill);
	}
	v->trace_tail = head;
	__atomic_store_n(&r->tail, head, __ATOMIC_RELEASE);
	ret = (int64_t)(head - tail);
out:
	pthread_mutex_unlock(&v->trace_lock);
	return ret;
}

int64_t vperf_hv__trace_drain(struct vperf_hv *hv, int vcpu)
{
	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus)
		return -VPERF_EINVAL;
	return hv_trace_drain(&hv->vcpus[vcpu]);
}

int vperf_hv__trace_stats(struct vperf_hv *hv, int vcpu, struct vperf_hv_trace_stats *st)
{
	struct hv_vcpu *v;

	if (vcpu < 0 || vcpu >= hv->cfg.nr_vcpus || !st || st->size < sizeof(*st))
		return -EINVAL;
	v = &hv->vcpus[vcpu];
	pthread_mutex_lock(&v->trace_lock);
	st->bytes = v->trace_bytes;
	st->records = v->trace_records;
	st->invalid_bytes = v->trace_invalid_bytes;
	st->invalid_drains = v->trace_invalid_drains;
	st->guest_lost = v->trace_guest_lost;
	st->registered = v->trace_len != 0;
	st->bad_headers = v->trace_bad_headers;
	pthread_mutex_unlock(&v->trace_lock);
	return 0;
}
