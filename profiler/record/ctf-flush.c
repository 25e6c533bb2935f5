// SPDX-License-Identifier: MIT
/*
 * The CTF writer's way to the disk (ctf-int.h): the metadata written whole and renamed into
 * place, and each flush's packets published so that a writer killed at any moment leaves a
 * trace babeltrace2 reads (docs/recording.md, section 6).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf-int.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}
/*
 * The library writes every environment value as a string; the integer
 * ones lose their quotes here: "\tkey = \"12\";" becomes "\tkey = 12;".
 */
static void unquote_integers(const struct vperf_ctf *ctf, char *m)
{
	char *env = strstr(m, "\nenv {");
	char pat[300];

	for (size_t i = 0; env && i < ctf->nr_int_keys; i++) {
		char *at, *end;

		snprintf(pat, sizeof(pat), "\n\t%s = \"", ctf->int_keys[i]);
		at = strstr(env, pat);
		if (!at)
			continue;
		at += strlen(pat) - 1;		/* the opening quote */
		end = strchr(at + 1, '"');
		if (!end)
			continue;
		memmove(at, at + 1, (size_t)(end - at - 1));
		memmove(end - 1, end + 1, strlen(end + 1) + 1);
	}
}
/* Write the metadata if it changed, whole or not at all. */
int vperf__ctf_write_metadata(struct vperf_ctf *ctf)
{
	char *m = bt_ctf_writer_get_metadata_string(ctf->writer);
	int fd, ret;

	if (!m)
		return fail(ctf, -ENOMEM, "cannot build the trace's metadata");
	unquote_integers(ctf, m);
	if (ctf->metadata && !strcmp(ctf->metadata, m)) {
		free(m);
		return 0;
	}
	/* a new file of ours, private: whatever had the name (a killed writer's) is not followed */
	unlinkat(ctf->dirfd, METADATA_TMP, 0);
	fd = openat(ctf->dirfd, METADATA_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = fchmod(fd, 0600) ? -errno : 0;
	if (!ret)
		ret = write_all(fd, m, strlen(m));
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(ctf->dirfd, METADATA_TMP, ctf->dirfd, "metadata"))
		ret = -errno;
	if (ret)
		goto out_free;
	free(ctf->metadata);
	ctf->metadata = m;
	return 0;

out_free:
	free(m);
	return fail(ctf, ret, "cannot write %s/metadata: %s", ctf->dir, strerror(-ret));
}
int vperf__ctf_add_env(struct vperf_ctf *ctf, const char *key, const char *value)
{
	if (!vperf__ctf_is_identifier(key))
		return fail(ctf, -EINVAL, "environment key \"%s\" is not an identifier",
			    key ? key : "(null)");
	if (!value || !vperf__ctf_is_metadata_text(value))
		return fail(ctf, -EINVAL,
			    "environment value of %s is NULL or not printable ASCII without '\"' "
			    "and '\\'", key);
	if (bt_ctf_writer_add_environment_field(ctf->writer, key, value))
		return fail(ctf, -EINVAL, "babeltrace refused environment key %s", key);
	return 0;
}

/* ---- publishing ------------------------------------------------------- */

/*
 * The file babeltrace2 reads for a stream is a copy of the library's,
 * written so that a kill at any moment leaves whole packets only.  A write
 * of one page at a page-aligned offset is not cut by a signal (Linux
 * copies a page at a time and looks for fatal signals between pages), so
 * the file changes by single-page writes, each from one valid state to the
 * next; everything else is written where no reader looks, in the padding
 * of a packet.
 *
 * The file ends with a filler: a packet without events whose padding runs
 * to the end of the file.  Publishing the library's new packets, L bytes:
 *   1. if the filler is shorter than L + a page, append one-page fillers
 *      (whole packets each, so a write cut between pages leaves whole
 *      packets), then rewrite the filler's first page to cover them;
 *   2. write a new filler at filler + L, in the old filler's padding;
 *   3. write the packets but their first page, in that padding too;
 *   4. write their first page over the filler's: the commit.
 * The file starts with a filler too, which stays, so that a stream's
 * first real packet has one before it: babeltrace2 counts discarded events
 * only as a difference from the previous packet.
 */

#define COPY_CHUNK	(64 * 1024)

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* One page: an empty packet of size bytes, at time ts. */
static void make_filler(const struct vperf_ctf_stream *s, unsigned char *page, uint64_t size,
			uint64_t ts, uint64_t discarded)
{
	memset(page, 0, s->ctf->page);
	memcpy(page, s->head, PKT_HEAD);
	put64(page + PKT_TS_BEGIN, ts);
	put64(page + PKT_TS_END, ts);
	put64(page + PKT_CONTENT, PKT_HEAD * 8);
	put64(page + PKT_SIZE, size * 8);
	put64(page + PKT_DISCARDED, discarded);
}

/* All of len bytes at off, read (write false) or written, through EINTR and short counts. */
static int pio_all(int fd, unsigned char *buf, size_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const unsigned char *buf, size_t len, uint64_t off)
{
	return pio_all(fd, (unsigned char *)buf, len, off, true);
}

static int pread_all(int fd, unsigned char *buf, size_t len, uint64_t off)
{
	return pio_all(fd, buf, len, off, false);
}

/* Steps 1 to 4 above, for len bytes at lib_done; buf: COPY_CHUNK bytes. */
static int commit(struct vperf_ctf_stream *s, int fd, unsigned char *buf, uint64_t len,
		  uint64_t ts, uint64_t discarded)
{
	const size_t page = s->ctf->page;
	uint64_t room = s->size - s->filler;
	int ret;

	if (room < len + page) {
		uint64_t grow = len + page - room, done, n;

		for (size_t i = 0; i < COPY_CHUNK / page; i++)
			make_filler(s, buf + i * page, page, s->filler_ts, s->filler_discarded);
		for (done = 0; done < grow; done += n) {
			n = grow - done < COPY_CHUNK ? grow - done : COPY_CHUNK;
			ret = pwrite_all(fd, buf, n, s->size + done);
			if (ret)
				return ret;
		}
		s->size += grow;
		make_filler(s, buf, s->size - s->filler, s->filler_ts, s->filler_discarded);
		ret = pwrite_all(fd, buf, page, s->filler);
		if (ret)
			return ret;
	}
	make_filler(s, buf, s->size - s->filler - len, ts, discarded);
	ret = pwrite_all(fd, buf, page, s->filler + len);
	for (uint64_t done = page, n; !ret && done < len; done += n) {
		n = len - done < COPY_CHUNK ? len - done : COPY_CHUNK;
		ret = pread_all(s->lib.fd, buf, n, s->lib_done + done);
		if (!ret)
			ret = pwrite_all(fd, buf, n, s->filler + done);
	}
	if (!ret)
		ret = pread_all(s->lib.fd, buf, page, s->lib_done);
	if (!ret)
		ret = pwrite_all(fd, buf, page, s->filler);	/* the commit */
	if (ret)
		return ret;
	s->filler += len;
	s->filler_ts = ts;
	s->filler_discarded = discarded;
	return 0;
}

/* Copy the packets the library has written since the last time. */
static int publish(struct vperf_ctf_stream *s)
{
	struct vperf_ctf *ctf = s->ctf;
	const size_t page = ctf->page;
	uint64_t end, off, len, first_ts = 0, ts = 0, discarded = 0;
	unsigned char head[PKT_HEAD], *buf;
	struct stat st;
	int fd, ret;

	if (fstat(s->lib.fd, &st))
		return fail(ctf, -errno, "cannot stat babeltrace's file of %s: %s", s->name,
			    strerror(errno));
	end = (uint64_t)st.st_size;
	if (end == s->lib_done)
		return 0;
	/* Whole packets, laid out as expected. */
	for (off = s->lib_done; off < end; off += len) {
		ret = pread_all(s->lib.fd, head, PKT_HEAD, off);
		if (ret)
			return fail(ctf, ret, "cannot read babeltrace's file of %s: %s", s->name,
				    strerror(-ret));
		len = get64(head + PKT_SIZE) / 8;
		if (get32(head + PKT_MAGIC) != CTF_MAGIC || !len || len % page || len > end - off ||
		    get64(head + PKT_CONTENT) > len * 8 || head[PKT_LAYER] != s->layer ||
		    get32(head + PKT_CPU) != s->cpu)
			return fail(ctf, -EIO, "babeltrace wrote a packet of %s (at %" PRIu64 ") that "
				    "is not laid out as expected: is this libbabeltrace-ctf 1.5?",
				    s->name, off);
		if (off == s->lib_done) {
			first_ts = get64(head + PKT_TS_BEGIN);
			if (!s->started)
				memcpy(s->head, head, PKT_HEAD);
		}
		ts = get64(head + PKT_TS_END);
		discarded = get64(head + PKT_DISCARDED);
	}

	buf = malloc(COPY_CHUNK > page ? COPY_CHUNK : page);
	if (!buf)
		return fail(ctf, -ENOMEM, "no memory to write %s", s->name);
	fd = openat(ctf->dirfd, s->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = 0;
	if (!s->started) {
		/* [filler][filler]: a page each, one write each. */
		make_filler(s, buf, page, first_ts, 0);
		ret = pwrite_all(fd, buf, page, 0);
		if (!ret)
			ret = pwrite_all(fd, buf, page, page);
		s->size = 2 * page;
		s->filler = page;
		s->filler_ts = first_ts;
		s->filler_discarded = 0;
		s->started = !ret;
	}
	if (!ret)
		ret = commit(s, fd, buf, end - s->lib_done, ts, discarded);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret) {
		/* Give the library's copy's blocks back (best effort). */
		(void)fallocate(s->lib.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)s->lib_done, (off_t)(end - s->lib_done));
		s->lib_done = end;
	}
out_free:
	free(buf);
	if (ret)
		return fail(ctf, ret, "cannot write %s/%s: %s", ctf->dir, s->name, strerror(-ret));
	return 0;
}

/* ---- flush ------------------------------------------------------------ */

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int set_context_uint(struct bt_ctf_field *pc, const char *name, uint64_t value, bool is_enum)
{
	struct bt_ctf_field *f = bt_ctf_field_structure_get_field(pc, name), *c = NULL;
	int ret = -1;

	if (f && is_enum)
		c = bt_ctf_field_enumeration_get_container(f);
	if (f && (!is_enum || c))
		ret = bt_ctf_field_unsigned_integer_set_value(is_enum ? c : f, value);
	if (c)
		bt_ctf_field_put(c);
	if (f)
		bt_ctf_field_put(f);
	return ret;
}

/* Write the stream's open packet, if it has events. */
static int close_packet(struct vperf_ctf_stream *s)
{
	struct vperf_ctf *ctf = s->ctf;
	struct bt_ctf_field *pc;
	int ret;

	if (!s->appended)
		return 0;
	/* The library's previous flush reset them. */
	pc = bt_ctf_stream_get_packet_context(s->lib.bt);
	ret = pc ? 0 : -1;
	if (!ret)
		ret = set_context_uint(pc, "layer", s->layer, true);
	if (!ret)
		ret = set_context_uint(pc, "cpu_id", s->cpu, false);
	if (pc)
		bt_ctf_field_put(pc);
	if (!ret)
		ret = bt_ctf_stream_flush(s->lib.bt);
	if (ret)
		return fail(ctf, -EIO, "babeltrace failed to write a packet of stream %s cpu %"
			    PRIu32 " in %s (disk full?)", layer_names[s->layer], s->cpu, ctf->dir);
	s->appended = 0;
	return 0;
}

int vperf_ctf__add_env(struct vperf_ctf *ctf, const char *key, const char *value)
{
	if (!ctf)
		return -EINVAL;
	if (ctf->broken)
		return fail(ctf, -EIO, "an earlier flush failed: the trace is incomplete");
	if (ctf->metadata && key && vperf__ctf_is_identifier(key) && strlen(key) < 256) {
		/* babeltrace adds keys to a frozen trace but never changes one. */
		const char *env = strstr(ctf->metadata, "\nenv {");
		const char *end = env ? strstr(env, "\n};") : NULL;
		char probe[300];
		const char *hit;

		snprintf(probe, sizeof(probe), "\n\t%s = ", key);
		hit = env ? strstr(env, probe) : NULL;
		if (hit && (!end || hit < end))
			return fail(ctf, -EEXIST, "environment key %s is already set", key);
	}
	return vperf__ctf_add_env(ctf, key, value);
}

int vperf_ctf__flush(struct vperf_ctf *ctf)
{
	size_t i = 0;
	int ret = 0;

	if (!ctf)
		return -EINVAL;
	if (ctf->broken)
		return fail(ctf, -EIO, "an earlier flush failed: the trace is incomplete");
	if (ctf->nr_pending)	/* none may mean no array yet (qsort() wants one) */
		qsort(ctf->pending, ctf->nr_pending, sizeof(*ctf->pending), by_time);
	for (; i < ctf->nr_pending; i++) {
		struct pending *p = &ctf->pending[i];

		/* Never fails: queued timestamps are checked against the watermark. */
		if (bt_ctf_clock_set_time(ctf->clock, (int64_t)p->ts)) {
			ret = fail(ctf, -EIO, "babeltrace refused timestamp %" PRIu64 " ns", p->ts);
			goto out_broken;
		}
		if (p->lost) {
			ret = close_packet(p->s);
			if (ret)
				goto out_broken;
			bt_ctf_stream_append_discarded_events(p->s->lib.bt, p->lost);
		}
		if (bt_ctf_stream_append_event(p->s->lib.bt, p->ev)) {
			ret = fail(ctf, -EIO, "babeltrace refused an event of stream %s cpu %" PRIu32,
				   layer_names[p->s->layer], p->s->cpu);
			goto out_broken;
		}
		/* The stream holds it now. */
		bt_ctf_event_put(p->ev);
		p->ev = NULL;
		p->s->appended++;
		ctf->watermark = p->ts;
	}
	ctf->nr_pending = 0;
	for (size_t k = 0; k < ctf->nr_streams; k++) {
		ret = close_packet(ctf->streams[k]);
		if (!ret)
			ret = publish(ctf->streams[k]);
		if (ret)
			goto out_broken;
	}
	return vperf__ctf_write_metadata(ctf);

out_broken:
	ctf->broken = true;
	for (; i < ctf->nr_pending; i++)
		if (ctf->pending[i].ev)
			bt_ctf_event_put(ctf->pending[i].ev);
	ctf->nr_pending = 0;
	return ret;
}
