// SPDX-License-Identifier: MIT
/*
 * The shared-memory channel's host reader (shm.h, docs/abi.md 8).  Every byte of the file comes
 * in through pread(2) into memory of our own and is looked at there only; offsets and sizes come
 * from the checked copy of the header, never from the file again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <vperf/shm.h>
#include <vperf/trace_rec.h>

#include "shm.h"
#include "why.h"

#define SHM_BUF		(64u << 10)	/* bytes of a ring read at a time */

struct shm_ring {
	struct vperf_shm_ring_desc d;	/* from the checked copy */
	uint64_t tail;			/* ours */
	bool fresh;			/* the first drain takes the header's tail */
	struct vperf_shm_ring_stats st;
};

struct vperf_shm {
	int fd;
	uint64_t size;			/* the file's, at open */
	struct vperf_shm_header hdr;	/* the last header read (a private copy) */
	struct shm_ring *rings;		/* the layout in use */
	uint32_t nr_rings;
	bool have_layout;
	uint64_t refused_gen;		/* the last refused header's generation and reason, */
	uint32_t refused_bad;		/* so that one bad header is counted once */
	struct vperf_shm_stats st;
	unsigned char buf[SHM_BUF + VPERF_TRACE_REC_MAX];
};

static const char *const bad_str[VPERF_SHM_NR_BAD] = {
	[VPERF_SHM_OK] = "a good layout",
	[VPERF_SHM_BAD_MAGIC] = "no vperf magic (not laid out by vperf_guest.ko)",
	[VPERF_SHM_BAD_VERSION] = "a layout version or header size this vperf does not know",
	[VPERF_SHM_BAD_SIZE] = "a total size that is not the file's",
	[VPERF_SHM_BAD_STATE] = "an unknown state",
	[VPERF_SHM_BAD_NR_RINGS] = "no rings, or more than 256",
	[VPERF_SHM_BAD_RESERVED] = "reserved fields or unknown feature bits set",
	[VPERF_SHM_BAD_RING] = "a ring not aligned, of a bad size, or past the end",
	[VPERF_SHM_BAD_OVERLAP] = "rings that overlap each other or the header",
	[VPERF_SHM_BAD_CPU] = "two rings of one CPU",
};

const char *vperf_shm__bad_str(uint32_t bad)
{
	return bad < VPERF_SHM_NR_BAD ? bad_str[bad] : "an unknown reason";
}

/* Exactly len bytes at off, or -EIO (the file is shorter now) or -errno. */
static int read_at(struct vperf_shm *s, void *dst, size_t len, uint64_t off)
{
	unsigned char *p = dst;

	while (len) {
		ssize_t n = pread(s->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int vperf_shm__open(const char *path, struct vperf_shm **out, char *why, size_t why_len)
{
	struct vperf_shm *s;
	struct stat sb;
	int fd, err;

	*out = NULL;
	/* O_NONBLOCK: a FIFO put there must not hang the open; a regular file ignores it */
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		err = -errno;
		vperf_why(why, why_len, 0, "cannot open %s for reading and writing: %s%s", path,
		    strerror(errno), errno == ELOOP ? " (a symbolic link is not followed)" :
		    errno == EACCES ? " (the VMM's user owns it: run as root or as that user)" : "");
		return err;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		vperf_why(why, why_len, 0, "%s is not a regular file (the file behind the VMM's "
		    "ivshmem-plain device, such as /dev/shm/vperf-NAME)", path);
		close(fd);
		return -EINVAL;
	}
	if ((uint64_t)sb.st_size < VPERF_SHM_MIN_SIZE || (uint64_t)sb.st_size > VPERF_SHM_MAX_SIZE) {
		vperf_why(why, why_len, 0, "%s has %lld bytes: a vperf region has 64 KiB to 4 GiB (docs/abi.md 8; "
		    "QEMU: memory-backend-file size=16M)", path, (long long)sb.st_size);
		close(fd);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		vperf_why(why, why_len, 0, "out of memory");
		return -ENOMEM;
	}
	s->fd = fd;
	s->size = (uint64_t)sb.st_size;
	*out = s;
	return 0;
}

/* Take the checked header s->hdr as the layout; a CPU's figures carry over from the last one. */
static int take_layout(struct vperf_shm *s)
{
	struct shm_ring *r = calloc(s->hdr.nr_rings, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->hdr.nr_rings; i++) {
		r[i].d = s->hdr.ring[i];
		r[i].fresh = true;
		r[i].st.cpu = r[i].d.cpu;
		for (uint32_t j = 0; j < s->nr_rings; j++)
			if (s->rings[j].d.cpu == r[i].d.cpu)
				r[i].st = s->rings[j].st;
		r[i].st.data_size = r[i].d.data_size;
	}
	free(s->rings);
	s->rings = r;
	s->nr_rings = s->hdr.nr_rings;
	s->have_layout = true;
	s->st.generation = s->hdr.generation;
	s->st.nr_rings = s->nr_rings;
	s->st.tsc_khz = s->hdr.tsc_khz;
	s->st.layouts++;
	return 0;
}

/* n bytes of ring r's data from free-running position pos. */
static int read_data(struct vperf_shm *s, const struct shm_ring *r, unsigned char *dst,
		     uint64_t pos, size_t n)
{
	uint64_t base = r->d.offset + sizeof(struct vperf_trace_ring);
	uint64_t off = pos & (r->d.data_size - 1), first = r->d.data_size - off;
	int err;

	if (first >= n)
		return read_at(s, dst, n, base + off);
	err = read_at(s, dst, (size_t)first, base + off);
	return err ? err : read_at(s, dst + first, n - (size_t)first, base);
}

/* The size of the whole valid record at p (avail bytes there, more may follow up to left), 0 if it
 * is not one, or SIZE_MAX if it needs more bytes than are read so far. */
static size_t next_record(const unsigned char *p, size_t avail, uint64_t left)
{
	uint16_t size;

	if (avail < sizeof(size))
		return left > avail ? SIZE_MAX : 0;
	memcpy(&size, p, sizeof(size));
	if (size < sizeof(struct vperf_trace_rec) || size > VPERF_TRACE_REC_MAX || size > left)
		return 0;
	if (size > avail)
		return SIZE_MAX;
	return vperf_trace_rec_check(p, size) == size ? size : 0;
}

static int drain_ring(struct vperf_shm *s, struct shm_ring *r, struct vperf_shm_sink sink)
{
	struct vperf_trace_ring h;
	uint64_t head, pos;
	size_t fill = 0;
	int err, sink_err = 0;

	err = read_at(s, &h, sizeof(h), r->d.offset);
	if (err)
		return err;
	head = h.head;
	if (r->fresh) {
		r->tail = h.tail;
		r->fresh = false;
	}
	if (head < r->tail || head - r->tail > r->d.data_size) {
		r->st.bad_headers++;	/* nothing read; our tail stays */
		return 0;
	}
	if (h.lost < r->st.guest_lost)
		r->st.guest_lost_decreases++;
	r->st.guest_lost = h.lost;
	if (head == r->tail)
		return 0;
	r->st.bytes += head - r->tail;
	pos = r->tail;		/* buf[0] is the byte at pos */
	if (h.version != VPERF_TRACE_RING_V2) {
		/* the channel carries records only (docs/abi.md 8): the bytes are refused */
		r->st.refused_bytes += head - pos;
		r->st.refused_drains++;
		goto done;
	}
	for (;;) {
		size_t n = head - pos - fill > SHM_BUF - fill ? SHM_BUF - fill : head - pos - fill;
		size_t p = 0, size = 0;

		err = read_data(s, r, s->buf + fill, pos + fill, n);
		if (err)
			return err;
		fill += n;
		while (p < fill) {
			size = next_record(s->buf + p, fill - p, head - pos - p);
			if (!size || size == SIZE_MAX)
				break;
			r->st.records++;
			p += size;
		}
		if (p && sink.records) {
			int e = sink.records(sink.arg, r->d.cpu, s->buf, p);

			if (e && !sink_err)
				sink_err = e;
		}
		if ((p < fill && !size) || (!n && !p)) {	/* (the second: no progress, never) */
			r->st.refused_bytes += head - pos - p;
			r->st.refused_drains++;
			break;
		}
		/* what is left is the start of a record whose rest is still to be read */
		pos += p;
		fill -= p;
		memmove(s->buf, s->buf + p, fill);
		if (pos == head)
			break;
	}
done:
	r->tail = head;
	err = 0;
	for (;;) {
		ssize_t w = pwrite(s->fd, &head, sizeof(head),
				   (off_t)(r->d.offset + offsetof(struct vperf_trace_ring, tail)));

		if (w < 0 && errno == EINTR)
			continue;
		if (w != (ssize_t)sizeof(head))
			err = w < 0 ? -errno : -EIO;
		break;
	}
	return err ? err : sink_err;
}

int vperf_shm__poll(struct vperf_shm *s, struct vperf_shm_sink sink, char *why, size_t why_len)
{
	struct stat sb;
	enum vperf_shm_bad bad;
	int err, first = 0;

	if (fstat(s->fd, &sb) < 0 || (uint64_t)sb.st_size != s->size) {
		vperf_why(why, why_len, 0, "the shared file changed size (%llu bytes, was %llu): the VMM "
		    "is gone or truncated it", (unsigned long long)sb.st_size,
		    (unsigned long long)s->size);
		return -EIO;
	}
	err = read_at(s, &s->hdr, sizeof(s->hdr), 0);
	if (err) {
		vperf_why(why, why_len, 0, "cannot read the shared file's header: %s", strerror(-err));
		return err;
	}
	s->st.state = s->hdr.state;
	bad = vperf_shm_check_layout(&s->hdr, s->size);
	if (bad != VPERF_SHM_OK) {
		if (!s->st.layouts_refused || s->refused_gen != s->hdr.generation ||
		    s->refused_bad != (uint32_t)bad) {
			s->st.layouts_refused++;
			s->refused_gen = s->hdr.generation;
			s->refused_bad = (uint32_t)bad;
		}
		s->st.last_refusal = (uint32_t)bad;
		/* a guest that wrote no magic yet is not refusing anything: keep waiting */
		if (bad == VPERF_SHM_BAD_MAGIC && !s->have_layout && !s->hdr.magic)
			s->st.layouts_refused--;
		return 0;
	}
	if (s->hdr.state == VPERF_SHM_EMPTY)
		return 0;		/* being laid out: the rings are not ours to read */
	if (!s->have_layout || s->hdr.generation != s->st.generation) {
		err = take_layout(s);
		if (err) {
			vperf_why(why, why_len, 0, "out of memory");
			return err;
		}
	}
	for (uint32_t i = 0; i < s->nr_rings; i++) {
		err = drain_ring(s, &s->rings[i], sink);
		if (err == -EIO) {
			vperf_why(why, why_len, 0, "the shared file is shorter than its layout says: the VMM "
			    "is gone or truncated it");
			return err;
		}
		if (err && !first)
			first = err;
	}
	if (first)
		vperf_why(why, why_len, 0, "records of the shared file were lost: %s", strerror(-first));
	return first;
}

void vperf_shm__stats(const struct vperf_shm *s, struct vperf_shm_stats *st)
{
	*st = s->st;
}

int vperf_shm__ring_stats(const struct vperf_shm *s, uint32_t i, struct vperf_shm_ring_stats *st)
{
	if (i >= s->nr_rings)
		return -EINVAL;
	*st = s->rings[i].st;
	return 0;
}

void vperf_shm__close(struct vperf_shm *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s->rings);
	free(s);
}
