/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Version-2 trace records (docs/abi.md 2.5): the one definition of what a
 * valid record is, and the copies into and out of a data area that wraps.
 * Pure functions, shared by the host (libvperf-hv checks every record a
 * guest wrote), vperf_guest.ko (every marker record user space hands it),
 * libvperf (the markers it writes) and the unit tests, so that all of them
 * agree byte for byte.
 */
#ifndef VPERF_TRACE_REC_H
#define VPERF_TRACE_REC_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#endif

#include <vperf/abi.h>

#define VPERF_TRACE_ALIGN(x)	(((x) + 7u) & ~7u)
/* The largest marker record: a 64-byte name. */
#define VPERF_MARK_REC_MAX	\
	VPERF_TRACE_ALIGN(sizeof(struct vperf_trace_mark) + VPERF_TRACE_MARK_NAME_LEN)

/* A marker record's size for a name of name_len bytes. */
static inline __u32 vperf_mark_rec_size(__u32 name_len)
{
	return VPERF_TRACE_ALIGN((__u32)sizeof(struct vperf_trace_mark) + name_len);
}

static inline bool vperf_trace_all_zero(const unsigned char *p, __u32 n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

/* Copy n bytes to free-running offset pos of a data area of data_size (2^k) bytes. */
static inline void vperf_ring_copy_in(unsigned char *data, __u64 data_size, __u64 pos,
				      const void *src, __u32 n)
{
	__u64 off = pos & (data_size - 1), first = data_size - off;

	if (first >= n) {
		memcpy(data + off, src, n);
	} else {
		memcpy(data + off, src, (size_t)first);
		memcpy(data, (const unsigned char *)src + first, (size_t)(n - first));
	}
}

/* The reverse: n bytes from free-running offset pos into dst. */
static inline void vperf_ring_copy_out(void *dst, const unsigned char *data, __u64 data_size,
				       __u64 pos, __u32 n)
{
	__u64 off = pos & (data_size - 1), first = data_size - off;

	if (first >= n) {
		memcpy(dst, data + off, n);
	} else {
		memcpy(dst, data + off, (size_t)first);
		memcpy((unsigned char *)dst + first, data, (size_t)(n - first));
	}
}

/*
 * A marker name as the ABI has it: well-formed UTF-8 (no overlong forms,
 * no surrogates, nothing above U+10FFFF) without NUL.  One pass: it is on
 * libvperf's fast path.
 */
static inline bool vperf_trace_name_valid(const unsigned char *s, __u32 n)
{
	__u32 i = 0;

	while (i < n) {
		unsigned char c = s[i];
		__u32 len, cp, k;

		if (c < 0x80) {
			if (!c)
				return false;
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;	/* a continuation byte first, or 0xf8..0xff */
		}
		if (n - i < len)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/*
 * Is rec, size bytes (a private copy: nobody writes it meanwhile), a marker
 * record the module passes on?  Type VPERF_TRACE_MARK, flags 0, a kind it
 * knows, a name of 1..64 bytes of UTF-8 without NUL, size exactly the
 * name's rounded up to 8, and zero padding.  tsc is the thread's to choose; cpu, pid and tid
 * are not looked at (the module writes them).
 */
static inline bool vperf_mark_rec_valid(const void *rec, __u32 size)
{
	const struct vperf_trace_mark *m = (const struct vperf_trace_mark *)rec;
	const unsigned char *b = (const unsigned char *)rec;
	__u32 end;

	if (size < sizeof(*m) || size > VPERF_MARK_REC_MAX || m->h.size != size ||
	    m->h.type != VPERF_TRACE_MARK || m->h.flags)
		return false;
	if (m->kind >= VPERF_TRACE_MARK_NR_KINDS || !m->name_len ||
	    m->name_len > VPERF_TRACE_MARK_NAME_LEN || size != vperf_mark_rec_size(m->name_len))
		return false;
	end = (__u32)sizeof(*m) + m->name_len;
	return vperf_trace_all_zero(b + end, size - end) &&
	       vperf_trace_name_valid(b + sizeof(*m), m->name_len);
}

/*
 * A module symbol's MMAP name (NUL-terminated): "[MODULE]SYMBOL", MODULE 1 to
 * VPERF_TRACE_KSYM_MOD_MAX of [A-Za-z0-9_-] (so never the kernel's
 * "[kernel.kallsyms]"), SYMBOL not empty.  The length of "[MODULE]" (the
 * symbol follows), or 0 if not one.
 */
static inline __u32 vperf_trace_ksym_name_valid(const char *name)
{
	__u32 i = 1;

	if (name[0] != '[')
		return 0;
	for (; name[i] && name[i] != ']'; i++) {
		char ch = name[i];

		if (i > VPERF_TRACE_KSYM_MOD_MAX ||
		    !((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '-'))
			return 0;
	}
	if (i == 1 || name[i] != ']' || !name[i + 1])
		return 0;
	return i + 1;
}

/*
 * The size of the valid record at buf (a private copy, avail bytes readable
 * there), or 0 if it is not one: the header's size a multiple of 8 within
 * VPERF_TRACE_REC_MAX and avail, flags only on samples, and each type's own
 * rules (exact sizes, zero reserved fields and padding, kinds and counts in
 * range, strings terminated, marker names as vperf_mark_rec_valid() has them).
 */
static inline __u32 vperf_trace_rec_check(const void *buf, __u32 avail)
{
	const struct vperf_trace_rec *h = (const struct vperf_trace_rec *)buf;
	const unsigned char *b = (const unsigned char *)buf;
	__u32 size;

	if (avail < sizeof(*h))
		return 0;
	size = h->size;
	if (size < sizeof(*h) || size % 8 || size > VPERF_TRACE_REC_MAX || size > avail)
		return 0;
	if (h->flags && h->type != VPERF_TRACE_SAMPLE)
		return 0;

	switch (h->type) {
	case VPERF_TRACE_SCHED_SWITCH: {
		const struct vperf_trace_switch *r = (const struct vperf_trace_switch *)buf;

		return size == sizeof(*r) && !r->reserved ? size : 0;
	}
	case VPERF_TRACE_SCHED_WAKEUP: {
		const struct vperf_trace_wakeup *r = (const struct vperf_trace_wakeup *)buf;

		return size == sizeof(*r) && !r->reserved ? size : 0;
	}
	case VPERF_TRACE_FORK:
		return size == sizeof(struct vperf_trace_fork) ? size : 0;
	case VPERF_TRACE_EXEC: {
		__u32 off = (__u32)offsetof(struct vperf_trace_exec, filename);

		/* a filename of at least one byte, NUL-terminated in the record */
		if (size <= off + 1 || b[off] == '\0' || !memchr(b + off, '\0', size - off))
			return 0;
		return size;
	}
	case VPERF_TRACE_EXIT: {
		const struct vperf_trace_exit *r = (const struct vperf_trace_exit *)buf;

		return size == sizeof(*r) && !r->reserved ? size : 0;
	}
	case VPERF_TRACE_IRQ: {
		const struct vperf_trace_irq *r = (const struct vperf_trace_irq *)buf;

		return size == sizeof(*r) && !r->reserved && r->kind < VPERF_TRACE_IRQ_NR_KINDS ? size : 0;
	}
	case VPERF_TRACE_SAMPLE: {
		const struct vperf_trace_sample *r = (const struct vperf_trace_sample *)buf;

		if (size < sizeof(*r) || (h->flags & ~VPERF_TRACE_SAMPLE_FLAGS) ||
		    r->nr_counts > VPERF_MAX_COUNTERS || r->nr_callchain > VPERF_TRACE_MAX_CALLCHAIN)
			return 0;
		return size == sizeof(*r) + 8 * (r->nr_counts + r->nr_callchain) ? size : 0;
	}
	case VPERF_TRACE_MARK:
		return vperf_mark_rec_valid(buf, size) ? size : 0;
	case VPERF_TRACE_LOST: {
		const struct vperf_trace_lost *r = (const struct vperf_trace_lost *)buf;

		return size == sizeof(*r) && !r->reserved && r->source >= VPERF_TRACE_LOST_USER &&
		       r->source <= VPERF_TRACE_LOST_INVALID ? size : 0;
	}
	case VPERF_TRACE_MMAP: {
		const struct vperf_trace_mmap *r = (const struct vperf_trace_mmap *)buf;
		__u32 off = (__u32)offsetof(struct vperf_trace_mmap, filename);
		__u32 klen = (__u32)sizeof(VPERF_TRACE_MMAP_KERNEL) - 1;

		if (size <= off + 1 || b[off] == '\0' || !memchr(b + off, '\0', size - off))
			return 0;
		if (!h->pid && !h->tid && !r->len)	/* the kernel's text: "[kernel.kallsyms]SYMBOL" */
			return !r->pgoff && size > off + klen + 1 && b[off + klen] &&
			       !memcmp(b + off, VPERF_TRACE_MMAP_KERNEL, klen) ? size : 0;
		if (!h->pid && !h->tid)	/* a module's code symbol: "[MODULE]SYMBOL" */
			return !r->pgoff && r->start >= VPERF_TRACE_KSYM_MIN &&
			       r->start + r->len > r->start &&
			       vperf_trace_ksym_name_valid((const char *)b + off) ? size : 0;
		return h->pid && h->tid && r->len && r->start + r->len > r->start ? size : 0;
	}
	default:
		return 0;
	}
}

/*
 * Build a marker record into buf (at least VPERF_MARK_REC_MAX bytes, 8-byte
 * aligned): its size, or 0 when the name (1..64 bytes of UTF-8, no NUL) or the kind
 * is not one the module accepts.  cpu, pid and tid stay 0: the module
 * writes them.
 */
static inline __u32 vperf_mark_rec_fill(void *buf, const char *name, __u32 name_len, __u64 value,
					__u32 kind, __u64 tsc)
{
	struct vperf_trace_mark *m = (struct vperf_trace_mark *)buf;
	__u32 size = vperf_mark_rec_size(name_len);

	if (!name_len || name_len > VPERF_TRACE_MARK_NAME_LEN ||
	    kind >= VPERF_TRACE_MARK_NR_KINDS ||
	    !vperf_trace_name_valid((const unsigned char *)name, name_len))
		return 0;
	/* the last 8 bytes hold the padding (the name, copied next, may cover some of them) */
	memset((unsigned char *)buf + size - 8, 0, 8);
	m->h.size = (__u16)size;
	m->h.type = VPERF_TRACE_MARK;
	m->h.cpu = 0;
	m->h.flags = 0;
	m->h.tsc = tsc;
	m->h.pid = 0;
	m->h.tid = 0;
	m->value = value;
	m->kind = kind;
	m->name_len = name_len;
	memcpy(m->name, name, name_len);
	return size;
}

#endif /* VPERF_TRACE_REC_H */
