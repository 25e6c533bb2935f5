// SPDX-License-Identifier: MIT
/*
 * The host events of a raw recording, read (hostevents-int.h): every CPU's pages merged in time
 * order (a heap of cursors), each event decoded by its format's fields into struct vperf_hostev.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostevents-int.h"

/* ---- the pass ---- */

enum cur_state { CUR_EVENT, CUR_LOST, CUR_END };

struct cursor {
	struct cpu_data *c;
	struct kbuffer *kb;
	size_t page;			/* loaded page */
	bool at_first;			/* the next fetch is the loaded page's first event */
	enum cur_state state;
	unsigned long long ts;
	void *data;			/* CUR_EVENT: the event's data */
	unsigned int size;
	uint64_t lost;			/* CUR_LOST: count, 0 unknown */
};

/* Load page i; false past the last page. */
static bool load_page(struct vperf_hostev_reader *r, struct cursor *cu, size_t i)
{
	uint8_t *pg;
	uint64_t commit;

	if (i >= cu->c->nr_pages)
		return false;
	pg = cu->c->pages + i * r->page_size;
	cu->page = i;
	kbuffer_load_subbuffer(cu->kb, pg);
	cu->at_first = true;
	commit = get_le(pg + 8, r->commit_size);
	if (r->report_lost && (commit & MISSED_EVENTS)) {
		unsigned long long ts;

		cu->state = CUR_LOST;
		cu->lost = commit & MISSED_STORED ? get_le(pg + r->data_off + (commit & COMMIT_MASK),
							   r->commit_size) : 0;
		cu->ts = kbuffer_read_event(cu->kb, &ts) ? ts : kbuffer_subbuf_timestamp(cu->kb, pg);
		return true;
	}
	cu->state = CUR_EVENT;	/* filled by advance() */
	return true;
}

/* Move to the next event (or lost marker) of the CPU. */
static void advance(struct vperf_hostev_reader *r, struct cursor *cu)
{
	for (;;) {
		void *d;

		if (cu->state == CUR_END)
			return;
		d = cu->at_first ? kbuffer_read_event(cu->kb, &cu->ts) :
				   kbuffer_next_event(cu->kb, &cu->ts);
		cu->at_first = false;
		if (d) {
			cu->state = CUR_EVENT;
			cu->data = d;
			cu->size = (unsigned int)kbuffer_event_size(cu->kb);
			return;
		}
		if (!load_page(r, cu, cu->page + 1)) {
			cu->state = CUR_END;
			return;
		}
		if (cu->state == CUR_LOST)
			return;
	}
}

static bool cur_before(const struct cursor *a, const struct cursor *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->c->cpu < b->c->cpu);
}

static void sift_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && cur_before(h[l], h[m]))
			m = l;
		if (l + 1 < n && cur_before(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct cursor *t = h[i];

		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static const struct format *find_format(struct vperf_hostev_reader *r, int id, size_t *hint)
{
	if (*hint < r->nr_fmts && r->fmts[*hint].id == id)
		return &r->fmts[*hint];
	for (size_t i = 0; i < r->nr_fmts; i++) {
		if (r->fmts[i].id == id) {
			*hint = i;
			return &r->fmts[i];
		}
	}
	return NULL;
}

static void store(void *dst, size_t size, uint64_t v)
{
	uint8_t b1 = (uint8_t)v;
	uint16_t b2 = (uint16_t)v;
	uint32_t b4 = (uint32_t)v;

	switch (size) {
	case 1: memcpy(dst, &b1, 1); break;
	case 2: memcpy(dst, &b2, 2); break;
	case 4: memcpy(dst, &b4, 4); break;
	case 8: memcpy(dst, &v, 8); break;
	}
}

static uint64_t read_num(const uint8_t *p, const struct field_at *at)
{
	uint64_t v = get_le(p + at->off, (unsigned int)at->size);

	if (at->is_signed && at->size < 8 && (v >> (8 * at->size - 1)) & 1)
		v |= ~0ull << (8 * at->size);
	return v;
}

static int decode(struct vperf_hostev_reader *r, const struct cursor *cu, struct vperf_hostev *ev,
		  size_t *hint)
{
	const uint8_t *p = cu->data;
	const struct format *f;
	unsigned int need = r->have_common ?
		(unsigned int)MAX(r->common_type.off + r->common_type.size,
				  r->common_pid.off + r->common_pid.size) : 8;
	struct field_at ct = { .off = 0, .size = 2 }, cp = { .off = 4, .size = 4, .is_signed = true };
	uint32_t id;

	memset(ev, 0, sizeof(*ev));
	ev->cpu = cu->c->cpu;
	ev->tsc = cu->ts;
	if (cu->size < need)
		return fail(r, -EINVAL, "cpu %u page %zu: an event of %u bytes, shorter than the "
			    "common fields", cu->c->cpu, cu->page, cu->size);
	if (r->have_common) {
		ct = r->common_type;
		cp = r->common_pid;
	}
	id = (uint32_t)get_le(p + ct.off, (unsigned int)ct.size);
	ev->pid = (int32_t)read_num(p, &cp);
	f = find_format(r, (int)id, hint);
	if (!f || f->type == VPERF_HOSTEV_OTHER) {
		ev->type = VPERF_HOSTEV_OTHER;
		ev->other.id = id;
		return 0;
	}
	if (cu->size < f->need)
		return fail(r, -EINVAL, "cpu %u page %zu: a %s:%s event of %u bytes, its format needs "
			    "%u", cu->c->cpu, cu->page, f->system, f->name, cu->size, f->need);
	ev->type = f->type;
	for (size_t i = 0; i < NR_FIELDS; i++) {
		const struct field_at *at = &f->f[i];
		char *dst = (char *)ev + fields[i].off;

		if (fields[i].type != f->type || !at->present)
			continue;
		if (fields[i].kind == NUM) {
			store(dst, fields[i].size, read_num(p, at));
		} else if (!at->dynamic) {
			memcpy(dst, p + at->off, MIN(fields[i].size, (size_t)at->size));
		} else {
			uint32_t loc = (uint32_t)get_le(p + at->off, 4);
			size_t off = loc & 0xffff, len = loc >> 16;

			if (at->relative)
				off += (size_t)at->off + (size_t)at->size;
			if (off + len > cu->size)
				return fail(r, -EINVAL, "cpu %u page %zu: %s:%s's %s runs past the event",
					    cu->c->cpu, cu->page, f->system, f->name, fields[i].name);
			memcpy(dst, p + off, MIN(fields[i].size, len));
		}
	}
	return 0;
}

int vperf_hostev_reader__read(struct vperf_hostev_reader *r, vperf_hostev_cb cb, void *ctx)
{
	struct cursor *cur = NULL, **heap = NULL;
	size_t n = 0, hint = 0;
	int err = 0;

	if (!cb)
		return fail(r, -EINVAL, "no callback");
	for (size_t i = 0; i < r->nr_cpus; i++)
		r->cpus[i].events = 0;
	if (!r->nr_cpus)
		return 0;
	if (!r->have_header)
		return fail(r, -EINVAL, "no header_page");
	cur = calloc(r->nr_cpus, sizeof(*cur));
	heap = calloc(r->nr_cpus, sizeof(*heap));
	if (!cur || !heap) {
		err = fail(r, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r->nr_cpus; i++) {
		struct cursor *cu = &cur[i];

		cu->c = &r->cpus[i];
		cu->kb = kbuffer_alloc(r->commit_size == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
				       KBUFFER_ENDIAN_LITTLE);
		if (!cu->kb) {
			err = fail(r, -ENOMEM, "out of memory");
			goto out;
		}
		if (!load_page(r, cu, 0))
			continue;
		if (cu->state != CUR_LOST)
			advance(r, cu);
		if (cu->state != CUR_END)
			heap[n++] = cu;
	}
	for (size_t i = n; i-- > 0;)
		sift_down(heap, n, i);
	while (n) {
		struct cursor *cu = heap[0];
		struct vperf_hostev ev;

		if (cu->state == CUR_LOST) {
			memset(&ev, 0, sizeof(ev));
			ev.type = VPERF_HOSTEV_LOST;
			ev.cpu = cu->c->cpu;
			ev.tsc = cu->ts;
			ev.pid = -1;
			ev.lost.count = cu->lost;
		} else {
			err = decode(r, cu, &ev, &hint);
			if (err)
				goto out;
			cu->c->events++;
		}
		err = cb(&ev, ctx);
		if (err)
			goto out;
		advance(r, cu);
		if (cu->state == CUR_END)
			heap[0] = heap[--n];
		sift_down(heap, n, 0);
	}
out:
	for (size_t i = 0; cur && i < r->nr_cpus; i++)
		kbuffer_free(cur[i].kb);
	free(cur);
	free(heap);
	return err;
}
