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

#include "hv-internal.h"

#define ROUND8(x)	(((x) + 7u) & ~(size_t)7u)

/* Well-formed UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static bool all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

size_t hv_trace_rec_check(const void *buf, size_t avail)
{
	const struct vperf_trace_rec *h = buf;
	const unsigned char *b = buf;
	size_t size;

	if (avail < sizeof(*h))
		return 0;
	size = h->size;
	if (size < sizeof(*h) || size % 8 || size > VPERF_TRACE_REC_MAX || size > avail)
		return 0;
	if (h->flags && h->type != VPERF_TRACE_SAMPLE)
		return 0;

	switch (h->type) {
	case VPERF_TRACE_SCHED_SWITCH: {
		const struct vperf_trace_switch *r = buf;

		return size == sizeof(*r) && !r->reserved ? size : 0;
	}
	case VPERF_TRACE_SCHED_WAKEUP: {
		const struct vperf_trace_wakeup *r = buf;

		return size == sizeof(*r) && !r->reserved ? size : 0;
	}
	case VPERF_TRACE_FORK:
		return size == sizeof(struct vperf_trace_fork) ? size : 0;
	case VPERF_TRACE_EXEC: {
		size_t off = offsetof(struct vperf_trace_exec, filename);

		/* a filename of at least one byte, NUL-terminated in the record */
		if (size <= off + 1 || b[off] == '\0' || !memchr(b + off, '\0', size - off))
			return 0;
		return size;
	}
	case VPERF_TRACE_EXIT: {
		const struct vperf_trace_exit *r = buf;

		return size == sizeof(*r) && !r->reserved ? size : 0;
	}
	case VPERF_TRACE_IRQ: {
		const struct vperf_trace_irq *r = buf;

		return size == sizeof(*r) && !r->reserved && r->kind < VPERF_TRACE_IRQ_NR_KINDS ? size : 0;
	}
	case VPERF_TRACE_SAMPLE: {
		const struct vperf_trace_sample *r = buf;

		if (size < sizeof(*r) || (h->flags & ~VPERF_TRACE_SAMPLE_USER) ||
		    r->nr_counts > VPERF_MAX_COUNTERS || r->nr_callchain > VPERF_TRACE_MAX_CALLCHAIN)
			return 0;
		return size == sizeof(*r) + 8 * ((size_t)r->nr_counts + r->nr_callchain) ? size : 0;
	}
	case VPERF_TRACE_MARK: {
		const struct vperf_trace_mark *r = buf;
		size_t end;

		if (size < sizeof(*r) || r->kind >= VPERF_TRACE_MARK_NR_KINDS || !r->name_len ||
		    r->name_len > VPERF_TRACE_MARK_NAME_LEN)
			return 0;
		end = sizeof(*r) + r->name_len;
		if (size != ROUND8(end) || !all_zero(b + end, size - end))
			return 0;
		/* UTF-8 without NUL (docs/abi.md 2.5) */
		if (memchr(r->name, '\0', r->name_len))
			return 0;
		return utf8_valid((const unsigned char *)r->name, r->name_len) ? size : 0;
	}
	case VPERF_TRACE_LOST: {
		const struct vperf_trace_lost *r = buf;

		return size == sizeof(*r) && !r->reserved && r->source >= VPERF_TRACE_LOST_USER &&
		       r->source <= VPERF_TRACE_LOST_INVALID ? size : 0;
	}
	default:
		return 0;
	}
}

/* Copy n bytes at free-running offset pos of a ring's data area (wrapping). */
static void ring_copy(void *dst, const unsigned char *data, uint64_t data_size, uint64_t pos, size_t n)
{
	size_t off = (size_t)(pos & (data_size - 1)), first = data_size - off;

	if (first >= n) {
		memcpy(dst, data + off, n);
	} else {
		memcpy(dst, data + off, first);
		memcpy((unsigned char *)dst + first, data, n - first);
	}
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
			ring_copy(&rsize, data, data_size, pos, sizeof(rsize));
			size = rsize;
			if (size < sizeof(struct vperf_trace_rec) || size > VPERF_TRACE_REC_MAX ||
			    size > avail)
				goto invalid;
			if (fill + size > sizeof(v->trace_batch)) {
				deliver(v, v->trace_batch, fill);
				fill = 0;
				rec = v->trace_batch;
			}
			ring_copy(rec, data, data_size, pos, size);
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
	pthread_mutex_unlock(&v->trace_lock);
	return 0;
}
