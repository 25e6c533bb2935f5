// SPDX-License-Identifier: MIT
/* perf_event ring records, read and decoded without trusting them (perfdec.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "perfdec.h"

#define KNOWN_SAMPLE_BITS                                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |          \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |         \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* The sample_id_all trailer's bits, in the order they appear. */
#define ID_BITS                                                                                \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |           \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

int vperf_perf_ring__next(struct vperf_perf_ring *ring, const void **rec, size_t *len)
{
	struct perf_event_header h;
	uint64_t avail = ring->head - ring->tail, off = ring->tail & (ring->size - 1);

	if (!avail)
		return 0;
	if (avail < sizeof(h) || avail > ring->size)
		return -EINVAL;
	/* The header itself may wrap (the data area's size is a multiple of 8, records too). */
	if (off + sizeof(h) <= ring->size) {
		memcpy(&h, ring->data + off, sizeof(h));
	} else {
		size_t first = ring->size - off;

		memcpy(&h, ring->data + off, first);
		memcpy((uint8_t *)&h + first, ring->data, sizeof(h) - first);
	}
	if (h.size < sizeof(h) || h.size > avail || h.size > ring->bounce_len || (h.size & 7))
		return -EINVAL;
	if (off + h.size <= ring->size) {
		*rec = ring->data + off;
	} else {
		size_t first = ring->size - off;

		memcpy(ring->bounce, ring->data + off, first);
		memcpy(ring->bounce + first, ring->data, h.size - first);
		*rec = ring->bounce;
	}
	*len = h.size;
	ring->tail += h.size;
	return 1;
}

/* The index of the first registered id >= id (the table is sorted). */
static size_t lower_bound(const struct vperf_perfdec *d, uint64_t id)
{
	size_t lo = 0, hi = d->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ev[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int vperf_perfdec__add(struct vperf_perfdec *d, uint64_t id, uint64_t sample_type,
		       unsigned int index)
{
	size_t lo;

	if (!(sample_type & PERF_SAMPLE_IDENTIFIER) || (sample_type & ~(uint64_t)KNOWN_SAMPLE_BITS))
		return -EINVAL;
	lo = lower_bound(d, id);
	if (lo < d->nr && d->ev[lo].id == id)
		return -EEXIST;
	if (d->nr == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct vperf_perfdec_ev *ev = realloc(d->ev, cap * sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		d->ev = ev;
		d->cap = cap;
	}
	memmove(&d->ev[lo + 1], &d->ev[lo], (d->nr - lo) * sizeof(*d->ev));
	d->ev[lo].id = id;
	d->ev[lo].sample_type = sample_type;
	d->ev[lo].index = index;
	d->nr++;
	return 0;
}

void vperf_perfdec__exit(struct vperf_perfdec *d)
{
	free(d->ev);
	memset(d, 0, sizeof(*d));
}

static int bad(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && why_len)
		vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A cursor over a record's bytes: every read is checked against the end. */
struct cur {
	const uint8_t *p, *end;
	bool short_;
};

static uint64_t u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->short_ = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void u32x2(struct cur *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = u64(c);

	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

static int find(const struct vperf_perfdec *d, uint64_t id)
{
	size_t lo = lower_bound(d, id);

	return lo < d->nr && d->ev[lo].id == id ? (int)lo : -1;
}

/* The sample_id trailer of a non-sample record: its size for sample_type. */
static size_t id_size(uint64_t sample_type)
{
	return 8 * (size_t)__builtin_popcountll(sample_type & ID_BITS);
}

static void read_ids(struct cur *c, uint64_t st, struct vperf_perfrec *out)
{
	uint32_t res;

	if (st & PERF_SAMPLE_TID)
		u32x2(c, &out->pid, &out->tid);
	if (st & PERF_SAMPLE_TIME)
		out->time = u64(c);
	if (st & PERF_SAMPLE_ID)
		u64(c);
	if (st & PERF_SAMPLE_STREAM_ID)
		u64(c);
	if (st & PERF_SAMPLE_CPU)
		u32x2(c, &out->cpu, &res);
	if (st & PERF_SAMPLE_IDENTIFIER)
		u64(c);
}

static int parse_sample(const struct vperf_perfdec *d, struct cur *c, struct vperf_perfrec *out,
			char *why, size_t why_len)
{
	uint64_t id = u64(c), st;
	int e = find(d, id);

	if (c->short_)
		return bad(why, why_len, "a sample record without its event id");
	if (e < 0)
		return bad(why, why_len, "a sample of an unknown event (id %llu)",
			   (unsigned long long)id);
	st = d->ev[e].sample_type;
	out->index = d->ev[e].index;
	out->has_id = true;
	if (st & PERF_SAMPLE_IP)
		out->sample.ip = u64(c);
	/* then TID, TIME, ID, STREAM_ID, CPU: the sample id's order (ADDR is not taken) */
	read_ids(c, st & ~(uint64_t)PERF_SAMPLE_IDENTIFIER, out);
	if (st & PERF_SAMPLE_PERIOD)
		out->sample.period = u64(c);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = u64(c);

		if (c->short_ || nr > (uint64_t)(c->end - c->p) / 8)
			return bad(why, why_len, "a sample whose callchain (%llu entries) runs past "
				   "its end", (unsigned long long)nr);
		out->sample.nr_chain = (uint32_t)nr;
		out->sample.chain = (const uint64_t *)(const void *)c->p;
		c->p += nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t size;

		if (c->end - c->p < 4)
			return bad(why, why_len, "a sample without its raw data's size");
		memcpy(&size, c->p, 4);
		c->p += 4;
		if (size > (uint64_t)(c->end - c->p))
			return bad(why, why_len, "a sample whose raw data (%u bytes) runs past its end",
				   size);
		out->sample.raw_size = size;
		out->sample.raw = c->p;
		c->p += size;
	}
	if (c->short_)
		return bad(why, why_len, "a sample record shorter than its layout");
	if (c->p != c->end)
		return bad(why, why_len, "a sample record with %zu bytes more than its layout",
			   (size_t)(c->end - c->p));
	return 0;
}

/*
 * MMAP: pid, tid, addr, len, pgoff, filename.  MMAP2 adds, before the name, either maj, min, ino,
 * ino_generation or (PERF_RECORD_MISC_MMAP_BUILD_ID) build_id_size, 3 reserved bytes and 20 bytes
 * of build id, then prot and flags.  The name is NUL-terminated and padded to 8 bytes.
 */
static int parse_mmap(struct cur *c, bool v2, uint16_t misc, struct vperf_perfrec *out)
{
	size_t n;

	u32x2(c, &out->mmap.pid, &out->mmap.tid);
	out->mmap.addr = u64(c);
	out->mmap.len = u64(c);
	out->mmap.pgoff = u64(c);
	if (v2) {
		uint8_t id[24];

		if (c->end - c->p < 32) {
			c->short_ = true;
			return -ENOENT;
		}
		memcpy(id, c->p, sizeof(id));
		c->p += sizeof(id);
		if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			out->mmap.build_id_size = id[0] > 20 ? 20 : id[0];
			memcpy(out->mmap.build_id, id + 4, 20);
		}
		u32x2(c, &out->mmap.prot, &out->mmap.flags);
	}
	if (c->short_ || c->p == c->end)
		return -ENOENT;
	n = strnlen((const char *)c->p, (size_t)(c->end - c->p));
	if (n == (size_t)(c->end - c->p))
		return -EINVAL;
	out->mmap.filename = (const char *)c->p;
	c->p = c->end;
	return 0;
}

int vperf_perfdec__parse(const struct vperf_perfdec *d, const void *rec, size_t len,
			 struct vperf_perfrec *out, char *why, size_t why_len)
{
	struct perf_event_header h;
	struct cur c;
	uint64_t id, st;
	size_t body;
	int e;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(h))
		return bad(why, why_len, "a record of %zu bytes", len);
	memcpy(&h, rec, sizeof(h));
	if (h.size != len)
		return bad(why, why_len, "a record whose header says %u bytes, of %zu", h.size, len);
	out->type = h.type;
	out->misc = h.misc;
	c.p = (const uint8_t *)rec + sizeof(h);
	c.end = (const uint8_t *)rec + len;
	c.short_ = false;
	if (h.type == PERF_RECORD_SAMPLE) {
		out->kind = VPERF_PERFREC_SAMPLE;
		return parse_sample(d, &c, out, why, why_len);
	}

	switch (h.type) {
	case PERF_RECORD_COMM: out->kind = VPERF_PERFREC_COMM; break;
	case PERF_RECORD_FORK: out->kind = VPERF_PERFREC_FORK; break;
	case PERF_RECORD_EXIT: out->kind = VPERF_PERFREC_EXIT; break;
	case PERF_RECORD_LOST: out->kind = VPERF_PERFREC_LOST; break;
	case PERF_RECORD_LOST_SAMPLES: out->kind = VPERF_PERFREC_LOST_SAMPLES; break;
	case PERF_RECORD_THROTTLE: out->kind = VPERF_PERFREC_THROTTLE; break;
	case PERF_RECORD_UNTHROTTLE: out->kind = VPERF_PERFREC_UNTHROTTLE; break;
	case PERF_RECORD_SWITCH: out->kind = VPERF_PERFREC_SWITCH; break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: out->kind = VPERF_PERFREC_MMAP; break;
	default: out->kind = VPERF_PERFREC_OTHER; return 0;
	}

	/* sample_id_all: the trailer ends with the event's id; it says how long the trailer is. */
	if (len - sizeof(h) < 8)
		return bad(why, why_len, "a record (type %u) without its event id", h.type);
	memcpy(&id, (const uint8_t *)rec + len - 8, 8);
	e = find(d, id);
	if (e < 0)
		return bad(why, why_len, "a record (type %u) of an unknown event (id %llu)", h.type,
			   (unsigned long long)id);
	st = d->ev[e].sample_type;
	if (id_size(st) > len - sizeof(h))
		return bad(why, why_len, "a record (type %u) shorter than its sample id", h.type);
	body = len - sizeof(h) - id_size(st);
	out->index = d->ev[e].index;
	out->has_id = true;
	c.end = c.p + body;

	switch (out->kind) {
	case VPERF_PERFREC_COMM: {
		size_t n;

		u32x2(&c, &out->comm.pid, &out->comm.tid);
		if (c.short_ || c.p == c.end)
			return bad(why, why_len, "a COMM record without its name");
		n = strnlen((const char *)c.p, (size_t)(c.end - c.p));
		if (n == (size_t)(c.end - c.p))
			return bad(why, why_len, "a COMM record whose name is not terminated");
		if (n > VPERF_PERFDEC_COMM_LEN)
			n = VPERF_PERFDEC_COMM_LEN;
		memcpy(out->comm.comm, c.p, n);
		out->comm.comm[n] = 0;
		out->comm.exec = h.misc & PERF_RECORD_MISC_COMM_EXEC;
		c.p = c.end;
		break;
	}
	case VPERF_PERFREC_FORK:
	case VPERF_PERFREC_EXIT:
		u32x2(&c, &out->task.pid, &out->task.ppid);
		u32x2(&c, &out->task.tid, &out->task.ptid);
		out->task.time = u64(&c);
		break;
	case VPERF_PERFREC_LOST:
		u64(&c);
		out->lost.count = u64(&c);
		break;
	case VPERF_PERFREC_LOST_SAMPLES:
		out->lost.count = u64(&c);
		break;
	case VPERF_PERFREC_THROTTLE:
	case VPERF_PERFREC_UNTHROTTLE:
		u64(&c);
		u64(&c);
		u64(&c);
		break;
	case VPERF_PERFREC_MMAP: {
		int err = parse_mmap(&c, h.type == PERF_RECORD_MMAP2, h.misc, out);

		if (err)
			return bad(why, why_len, "an MMAP record whose file name is %s",
				   err == -ENOENT ? "missing" : "not terminated");
		break;
	}
	case VPERF_PERFREC_SWITCH:	/* nothing but the sample id */
		out->switch_.out = h.misc & PERF_RECORD_MISC_SWITCH_OUT;
		out->switch_.preempt = h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
		break;
	default:
		break;
	}
	if (c.short_ || c.p != c.end)
		return bad(why, why_len, "a record (type %u) of %zu bytes where its layout says "
			   "otherwise", h.type, len);
	c.end = (const uint8_t *)rec + len;
	read_ids(&c, st, out);
	return 0;
}

/* ---- tracepoint records ---- */

int vperf_tpfmt_parse(const char *text, size_t len, long *id, struct vperf_tpfield *f, size_t n,
		      char *why, size_t why_len)
{
	const char *p = text, *end = text + len;
	bool have_id = false;

	for (size_t i = 0; i < n; i++)
		f[i].found = false;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t ll = (size_t)(le - p);
		char line[512];

		if (ll >= sizeof(line)) {
			if ((ll >= 7 && !memcmp(p, "\tfield:", 7)) || (ll >= 3 && !memcmp(p, "ID:", 3)))
				return bad(why, why_len, "a format line of %zu bytes", ll);
			p = nl ? nl + 1 : end;	/* the print fmt line: not needed */
			continue;
		}
		memcpy(line, p, ll);
		line[ll] = 0;
		p = nl ? nl + 1 : end;
		if (!strncmp(line, "ID: ", 4)) {
			char *e;

			*id = strtol(line + 4, &e, 10);
			if (e == line + 4 || *e || *id < 0)
				return bad(why, why_len, "a format whose ID line is \"%s\"", line);
			have_id = true;
			continue;
		}
		if (strncmp(line, "\tfield:", 7))
			continue;
		{
			/* "\tfield:TYPE... NAME[N];\toffset:O;\tsize:S;\tsigned:X;" */
			char *semi = strchr(line, ';'), *name, *br, *e;
			unsigned long off, size;
			char *o = semi ? strstr(semi, "offset:") : NULL;
			char *s = semi ? strstr(semi, "size:") : NULL;

			if (!semi || !o || !s)
				return bad(why, why_len, "a format field line that does not parse: \"%s\"",
					   line + 1);
			*semi = 0;
			name = strrchr(line, ' ');
			name = name ? name + 1 : NULL;
			off = strtoul(o + 7, &e, 10);
			if (!name || !*name || *e != ';' || off > 65535)
				return bad(why, why_len, "a format field line that does not parse");
			size = strtoul(s + 5, &e, 10);
			if (*e != ';' || !size || size > 65535)
				return bad(why, why_len, "a format field line that does not parse");
			br = strchr(name, '[');
			if (br)
				*br = 0;
			for (size_t i = 0; i < n; i++) {
				if (!strcmp(f[i].name, name)) {
					f[i].offset = (uint32_t)off;
					f[i].size = (uint32_t)size;
					f[i].found = true;
				}
			}
		}
	}
	if (!have_id)
		return bad(why, why_len, "a format without its ID");
	for (size_t i = 0; i < n; i++)
		if (!f[i].found)
			return bad(why, why_len, "the format has no field %s", f[i].name);
	return 0;
}

bool vperf_tp_u64(const uint8_t *raw, uint32_t raw_size, const struct vperf_tpfield *f,
		  uint64_t *out)
{
	uint64_t v = 0;

	if (!f->found || (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) ||
	    f->offset > raw_size || f->size > raw_size - f->offset)
		return false;
	memcpy(&v, raw + f->offset, f->size);	/* little-endian (x86) */
	*out = v;
	return true;
}

bool vperf_tp_str(const uint8_t *raw, uint32_t raw_size, const struct vperf_tpfield *f, char *buf,
		  size_t len)
{
	size_t n;

	if (!f->found || !len || f->offset > raw_size || f->size > raw_size - f->offset)
		return false;
	n = strnlen((const char *)raw + f->offset, f->size);
	if (n > len - 1)
		n = len - 1;
	memcpy(buf, raw + f->offset, n);
	buf[n] = 0;
	return true;
}
