// SPDX-License-Identifier: MIT
/*
 * The shared-memory channel (docs/abi.md 8): the layout checks of hv/include/vperf/shm.h and the
 * host's reader of the file (profiler/record/shm.c), on files written here as vperf_guest.ko
 * writes them, and as a hostile guest or a hostile owner of the file could.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <vperf/shm.h>
#include <vperf/trace_rec.h>

#include "shm.h"
#include "vtest.h"

#define REGION		(1u << 20)
#define DATA		8192u

struct file {
	char path[64];
	int fd;
	struct vperf_shm_header h;
};

struct got {
	uint32_t cpu[16];
	int32_t code[4096];
	size_t nr;
	int fail;		/* the sink's answer */
};

static int sink_records(void *arg, uint32_t cpu, const void *recs, size_t len)
{
	struct got *g = arg;
	const unsigned char *p = recs;

	for (size_t off = 0; off < len;) {
		const struct vperf_trace_exit *e = (const void *)(p + off);

		assert_int_equal(vperf_trace_rec_check(e, (uint32_t)(len - off)), e->h.size);
		if (g->nr < 4096)
			g->code[g->nr++] = e->exit_code;
		g->cpu[cpu % 16]++;
		off += e->h.size;
	}
	return g->fail;
}

/* A region with nr rings of DATA bytes, one per CPU 0.., laid out as the guest lays it out. */
static void make(struct file *f, uint32_t nr)
{
	strcpy(f->path, "/tmp/vperf-test-shm-XXXXXX");
	f->fd = mkstemp(f->path);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, REGION), 0);
	memset(&f->h, 0, sizeof(f->h));
	f->h.magic = VPERF_SHM_MAGIC;
	f->h.size = sizeof(f->h);
	f->h.version = VPERF_SHM_VERSION;
	f->h.total_size = REGION;
	f->h.state = VPERF_SHM_READY;
	f->h.nr_rings = nr;
	f->h.generation = 1;
	f->h.tsc_khz = 2000000;
	for (uint32_t i = 0; i < nr; i++) {
		struct vperf_trace_ring r = { .size = sizeof(r), .version = VPERF_TRACE_RING_V2,
					      .data_size = DATA };

		f->h.ring[i].offset = 3 * 4096 + i * 4 * 4096;
		f->h.ring[i].data_size = DATA;
		f->h.ring[i].cpu = i;
		assert_int_equal(pwrite(f->fd, &r, sizeof(r), (off_t)f->h.ring[i].offset),
				 (ssize_t)sizeof(r));
	}
	assert_int_equal(vperf_shm_check_layout(&f->h, REGION), VPERF_SHM_OK);
	assert_int_equal(pwrite(f->fd, &f->h, sizeof(f->h), 0), (ssize_t)sizeof(f->h));
}

static void done(struct file *f)
{
	close(f->fd);
	unlink(f->path);
}

static struct vperf_trace_ring ring_hdr(struct file *f, uint32_t i)
{
	struct vperf_trace_ring r;

	assert_int_equal(pread(f->fd, &r, sizeof(r), (off_t)f->h.ring[i].offset), (ssize_t)sizeof(r));
	return r;
}

static void put_ring_hdr(struct file *f, uint32_t i, const struct vperf_trace_ring *r)
{
	assert_int_equal(pwrite(f->fd, r, sizeof(*r), (off_t)f->h.ring[i].offset),
			 (ssize_t)sizeof(*r));
}

/* Append bytes at the ring's head (wrapping) and advance it, as the guest's producer does. */
static void put(struct file *f, uint32_t i, const void *rec, uint32_t len)
{
	struct vperf_trace_ring r = ring_hdr(f, i);
	uint64_t base = f->h.ring[i].offset + sizeof(r), off = r.head % DATA;
	uint32_t first = DATA - off < len ? (uint32_t)(DATA - off) : len;

	assert_int_equal(pwrite(f->fd, rec, first, (off_t)(base + off)), (ssize_t)first);
	if (first < len)
		assert_int_equal(pwrite(f->fd, (const char *)rec + first, len - first, (off_t)base),
				 (ssize_t)(len - first));
	r.head += len;
	put_ring_hdr(f, i, &r);
}

static void put_exit(struct file *f, uint32_t i, int32_t code, uint32_t reserved)
{
	struct vperf_trace_exit e = { .h = { .size = sizeof(e), .type = VPERF_TRACE_EXIT,
					     .cpu = (uint16_t)i, .tsc = 1000 + (uint64_t)code,
					     .pid = 7, .tid = 7 },
				      .exit_code = code, .reserved = reserved };

	put(f, i, &e, sizeof(e));
}

static struct vperf_shm *open_ok(struct file *f)
{
	struct vperf_shm *s;
	char why[256] = "";

	assert_int_equal(vperf_shm__open(f->path, &s, why, sizeof(why)), 0);
	return s;
}

static int poll(struct vperf_shm *s, struct got *g)
{
	char why[256] = "";

	return vperf_shm__poll(s, (struct vperf_shm_sink){ sink_records, g }, why, sizeof(why));
}

static struct vperf_shm_ring_stats rstats(struct vperf_shm *s, uint32_t i)
{
	struct vperf_shm_ring_stats st;

	assert_int_equal(vperf_shm__ring_stats(s, i, &st), 0);
	return st;
}

static void shm_records_of_each_ring_arrive_in_order_and_tails_are_written_back(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;

	(void)state;
	make(&f, 2);
	s = open_ok(&f);
	for (int i = 0; i < 10; i++)
		put_exit(&f, i % 2, i, 0);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 10);
	assert_int_equal(g.cpu[0], 5);
	assert_int_equal(g.cpu[1], 5);
	/* ring order: CPU 0's records, then CPU 1's */
	assert_int_equal(g.code[0], 0);
	assert_int_equal(g.code[4], 8);
	assert_int_equal(g.code[5], 1);
	assert_int_equal(ring_hdr(&f, 0).tail, 5 * 32);
	assert_int_equal(ring_hdr(&f, 1).tail, 5 * 32);
	assert_int_equal(rstats(s, 0).records, 5);
	assert_int_equal(rstats(s, 0).refused_bytes, 0);
	/* nothing new: nothing delivered twice */
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 10);
	vperf_shm__close(s);
	done(&f);
}

static void shm_records_that_wrap_the_ring_end_arrive_whole(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	int n = 0;

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	/* 5 rounds of 200 records of 32 bytes: 6400 bytes each, so the ring of 8192 wraps */
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 200; i++)
			put_exit(&f, 0, n++, 0);
		assert_int_equal(poll(s, &g), 0);
	}
	assert_int_equal(g.nr, 1000);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(g.code[i], i);
	assert_int_equal(rstats(s, 0).bytes, 32000);
	vperf_shm__close(s);
	done(&f);
}

static void shm_invalid_record_ends_the_drain_and_its_bytes_are_counted_as_refused(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;

	(void)state;
	make(&f, 2);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	put_exit(&f, 0, 2, 0xbad);	/* a reserved field set */
	put_exit(&f, 0, 3, 0);
	put_exit(&f, 1, 4, 0);		/* the other ring is not touched by it */
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 2);
	assert_int_equal(g.code[0], 1);
	assert_int_equal(g.code[1], 4);
	assert_int_equal(rstats(s, 0).refused_bytes, 64);
	assert_int_equal(rstats(s, 0).refused_drains, 1);
	assert_int_equal(rstats(s, 1).refused_bytes, 0);
	/* the guest's next records are read again */
	put_exit(&f, 0, 5, 0);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 3);
	assert_int_equal(g.code[2], 5);
	vperf_shm__close(s);
	done(&f);
}

static void shm_record_size_past_head_is_refused_not_waited_for(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_trace_exit e = { .h = { .size = 64, .type = VPERF_TRACE_EXIT } };

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put(&f, 0, &e, 32);		/* says 64 bytes, head is 32 past the tail */
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 0);
	assert_int_equal(rstats(s, 0).refused_bytes, 32);
	assert_int_equal(ring_hdr(&f, 0).tail, 32);
	vperf_shm__close(s);
	done(&f);
}

static void shm_impossible_head_is_refused_and_our_tail_kept(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_trace_ring r;

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	assert_int_equal(poll(s, &g), 0);
	r = ring_hdr(&f, 0);
	r.head = r.tail + DATA + 8;	/* more than the ring ahead */
	put_ring_hdr(&f, 0, &r);
	assert_int_equal(poll(s, &g), 0);
	r.head = 8;			/* behind the tail; the tail field rewritten too */
	r.tail = 0;
	put_ring_hdr(&f, 0, &r);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(rstats(s, 0).bad_headers, 2);
	assert_int_equal(g.nr, 1);
	/* put right: read on from our own tail (32), not the header's */
	r.head = 32;
	put_ring_hdr(&f, 0, &r);
	put_exit(&f, 0, 2, 0);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 2);
	assert_int_equal(g.code[1], 2);
	vperf_shm__close(s);
	done(&f);
}

static void shm_guest_lost_is_a_running_count_whose_decrease_is_counted(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_trace_ring r;

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	r = ring_hdr(&f, 0);
	r.lost = 9;
	put_ring_hdr(&f, 0, &r);
	assert_int_equal(poll(s, &g), 0);
	r.lost = 3;
	put_ring_hdr(&f, 0, &r);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(rstats(s, 0).guest_lost, 3);
	assert_int_equal(rstats(s, 0).guest_lost_decreases, 1);
	vperf_shm__close(s);
	done(&f);
}

static void shm_ring_not_version_2_has_its_bytes_refused(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_trace_ring r;

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	r = ring_hdr(&f, 0);
	r.version = 1;
	put_ring_hdr(&f, 0, &r);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 0);
	assert_int_equal(rstats(s, 0).refused_bytes, 32);
	vperf_shm__close(s);
	done(&f);
}

static void shm_layout_checks_refuse_each_broken_header(void **state)
{
	struct file f;
	struct vperf_shm_header h;

	(void)state;
	make(&f, 3);
#define BAD(stmt, why)						\
	do {							\
		h = f.h;					\
		stmt;						\
		assert_int_equal(vperf_shm_check_layout(&h, REGION), why); \
	} while (0)
	BAD(h.magic ^= 1, VPERF_SHM_BAD_MAGIC);
	BAD(h.version = 2, VPERF_SHM_BAD_VERSION);
	BAD(h.size = 64, VPERF_SHM_BAD_VERSION);
	BAD(h.total_size = REGION * 2, VPERF_SHM_BAD_SIZE);
	BAD(h.state = 3, VPERF_SHM_BAD_STATE);
	BAD(h.nr_rings = 0, VPERF_SHM_BAD_NR_RINGS);
	BAD(h.nr_rings = VPERF_SHM_MAX_RINGS + 1, VPERF_SHM_BAD_NR_RINGS);
	BAD(h.reserved = 1, VPERF_SHM_BAD_RESERVED);
	BAD(h.features = 1, VPERF_SHM_BAD_RESERVED);
	BAD(h.ring[3].offset = 4096, VPERF_SHM_BAD_RESERVED);	/* an unused descriptor */
	BAD(h.ring[1].reserved0 = 1, VPERF_SHM_BAD_RESERVED);
	BAD(h.ring[1].offset += 8, VPERF_SHM_BAD_RING);
	BAD(h.ring[1].data_size = 3 * 4096, VPERF_SHM_BAD_RING);
	BAD(h.ring[1].data_size = 2048, VPERF_SHM_BAD_RING);
	BAD(h.ring[1].data_size = 32ull << 20, VPERF_SHM_BAD_RING);
	BAD(h.ring[1].offset = REGION - 4096, VPERF_SHM_BAD_RING);	/* runs past the end */
	BAD(h.ring[1].offset = UINT64_MAX & ~4095ull, VPERF_SHM_BAD_RING);	/* wraps */
	BAD(h.ring[1].offset = 4096, VPERF_SHM_BAD_OVERLAP);		/* on the header */
	BAD(h.ring[2].offset = h.ring[1].offset, VPERF_SHM_BAD_OVERLAP);
	BAD(h.ring[2].cpu = 0, VPERF_SHM_BAD_CPU);
	/* a guest still laying it out: only what comes first is checked */
	BAD((h.state = VPERF_SHM_EMPTY, h.nr_rings = 0), VPERF_SHM_OK);
#undef BAD
	done(&f);
}

static void shm_refused_layout_is_counted_once_and_the_good_one_kept(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_shm_stats st;
	struct vperf_shm_header h;

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	assert_int_equal(poll(s, &g), 0);
	h = f.h;
	h.generation = 2;
	h.ring[0].offset = 4096;	/* on the header */
	assert_int_equal(pwrite(f.fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	put_exit(&f, 0, 2, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(poll(s, &g), 0);
	vperf_shm__stats(s, &st);
	assert_int_equal(st.layouts_refused, 1);
	assert_int_equal(st.last_refusal, VPERF_SHM_BAD_OVERLAP);
	assert_int_equal(st.generation, 1);
	assert_int_equal(g.nr, 1);	/* nothing read under a refused header */
	vperf_shm__close(s);
	done(&f);
}

static void shm_new_generation_is_read_from_its_start_with_the_cpus_figures_kept(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_shm_stats st;
	struct vperf_trace_ring r = { .size = sizeof(r), .version = VPERF_TRACE_RING_V2,
				      .data_size = DATA };

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	assert_int_equal(poll(s, &g), 0);
	/* the module reloaded: the region laid out again, its ring elsewhere, empty */
	f.h.state = VPERF_SHM_EMPTY;
	assert_int_equal(pwrite(f.fd, &f.h, sizeof(f.h), 0), (ssize_t)sizeof(f.h));
	assert_int_equal(poll(s, &g), 0);
	f.h.ring[0].offset += 16 * 4096;
	put_ring_hdr(&f, 0, &r);
	f.h.generation = 2;
	f.h.state = VPERF_SHM_READY;
	assert_int_equal(pwrite(f.fd, &f.h, sizeof(f.h), 0), (ssize_t)sizeof(f.h));
	put_exit(&f, 0, 2, 0);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 2);
	assert_int_equal(g.code[1], 2);
	assert_int_equal(rstats(s, 0).records, 2);
	vperf_shm__stats(s, &st);
	assert_int_equal(st.generation, 2);
	assert_int_equal(st.layouts, 2);
	vperf_shm__close(s);
	done(&f);
}

static void shm_file_that_shrinks_is_an_error_not_a_crash(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	char why[256] = "";

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	assert_int_equal(ftruncate(f.fd, 8192), 0);
	assert_int_equal(vperf_shm__poll(s, (struct vperf_shm_sink){ sink_records, &g }, why,
					 sizeof(why)), -EIO);
	assert_non_null(strstr(why, "changed size"));
	vperf_shm__close(s);
	done(&f);
}

static void shm_open_refuses_links_fifos_and_wrong_sizes_with_a_reason(void **state)
{
	struct vperf_shm *s = (void *)1;
	char why[256], link[80], fifo[80];
	struct file f;

	(void)state;
	make(&f, 1);
	snprintf(link, sizeof(link), "%s.link", f.path);
	assert_int_equal(symlink(f.path, link), 0);
	assert_int_equal(vperf_shm__open(link, &s, why, sizeof(why)), -ELOOP);
	assert_null(s);
	assert_non_null(strstr(why, "symbolic link"));
	unlink(link);
	snprintf(fifo, sizeof(fifo), "%s.fifo", f.path);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(vperf_shm__open(fifo, &s, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a regular file"));
	unlink(fifo);
	assert_int_equal(ftruncate(f.fd, 4096), 0);
	assert_int_equal(vperf_shm__open(f.path, &s, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "64 KiB to 4 GiB"));
	assert_int_equal(vperf_shm__open("/nonexistent/vperf-x", &s, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "/nonexistent/vperf-x"));
	done(&f);
}

static void shm_not_laid_out_yet_is_waited_for_not_refused(void **state)
{
	struct file f;
	struct got g = { 0 };
	struct vperf_shm *s;
	struct vperf_shm_stats st;
	static const struct vperf_shm_header zero;

	(void)state;
	make(&f, 1);
	assert_int_equal(pwrite(f.fd, &zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
	s = open_ok(&f);
	assert_int_equal(poll(s, &g), 0);
	vperf_shm__stats(s, &st);
	assert_int_equal(st.layouts_refused, 0);
	assert_int_equal(st.layouts, 0);
	assert_int_equal(pwrite(f.fd, &f.h, sizeof(f.h), 0), (ssize_t)sizeof(f.h));
	put_exit(&f, 0, 1, 0);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 1);
	vperf_shm__close(s);
	done(&f);
}

static void shm_sink_refusal_loses_those_records_only(void **state)
{
	struct file f;
	struct got g = { .fail = -ENOSPC };
	struct vperf_shm *s;

	(void)state;
	make(&f, 1);
	s = open_ok(&f);
	put_exit(&f, 0, 1, 0);
	assert_int_equal(poll(s, &g), -ENOSPC);
	g.fail = 0;
	put_exit(&f, 0, 2, 0);
	assert_int_equal(poll(s, &g), 0);
	assert_int_equal(g.nr, 2);
	assert_int_equal(ring_hdr(&f, 0).tail, 64);
	vperf_shm__close(s);
	done(&f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shm_records_of_each_ring_arrive_in_order_and_tails_are_written_back),
		cmocka_unit_test(shm_records_that_wrap_the_ring_end_arrive_whole),
		cmocka_unit_test(shm_invalid_record_ends_the_drain_and_its_bytes_are_counted_as_refused),
		cmocka_unit_test(shm_record_size_past_head_is_refused_not_waited_for),
		cmocka_unit_test(shm_impossible_head_is_refused_and_our_tail_kept),
		cmocka_unit_test(shm_guest_lost_is_a_running_count_whose_decrease_is_counted),
		cmocka_unit_test(shm_ring_not_version_2_has_its_bytes_refused),
		cmocka_unit_test(shm_layout_checks_refuse_each_broken_header),
		cmocka_unit_test(shm_refused_layout_is_counted_once_and_the_good_one_kept),
		cmocka_unit_test(shm_new_generation_is_read_from_its_start_with_the_cpus_figures_kept),
		cmocka_unit_test(shm_file_that_shrinks_is_an_error_not_a_crash),
		cmocka_unit_test(shm_open_refuses_links_fifos_and_wrong_sizes_with_a_reason),
		cmocka_unit_test(shm_not_laid_out_yet_is_waited_for_not_refused),
		cmocka_unit_test(shm_sink_refusal_loses_those_records_only),
	};

	return VT_MAIN("shm", tests, NULL, NULL);
}
