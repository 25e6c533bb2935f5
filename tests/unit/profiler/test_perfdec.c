// SPDX-License-Identifier: MIT
/*
 * perf ring records (profiler/record/perfdec.c, what `vperf record` reads): records built here
 * byte by byte decode to exactly their fields, a record wrapping the ring's end is put back
 * together, impossible headers and lengths are refused, mutated records never crash the
 * decoder, and a real cpu-clock event's ring decodes without one refused record.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "perfdec.h"
#include "vtest.h"

#define ST_BASE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
		 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define ID_A	0x1111
#define ID_B	0x2222

/* A record under construction. */
struct rb {
	uint64_t w[512];
	size_t n;		/* u64 words */
};

static void put(struct rb *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static void put2(struct rb *b, uint32_t lo, uint32_t hi)
{
	put(b, (uint64_t)hi << 32 | lo);
}

static void header(struct rb *b, uint32_t type, uint16_t misc)
{
	b->n = 1;
	b->w[0] = type | (uint64_t)misc << 32;
}

/* Set the header's size; returns the length. */
static size_t done(struct rb *b)
{
	size_t len = b->n * 8;

	b->w[0] = (b->w[0] & 0xffffffffffffull) | (uint64_t)len << 48;
	return len;
}

/* sample_id_all trailer for ST_BASE: TID, TIME, CPU, IDENTIFIER */
static void trailer(struct rb *b, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		    uint64_t id)
{
	put2(b, pid, tid);
	put(b, time);
	put2(b, cpu, 0);
	put(b, id);
}

static void decoder(struct vperf_perfdec *d)
{
	memset(d, 0, sizeof(*d));
	assert_int_equal(vperf_perfdec__add(d, ID_B, ST_BASE | PERF_SAMPLE_CALLCHAIN, 1), 0);
	assert_int_equal(vperf_perfdec__add(d, ID_A, ST_BASE, 0), 0);
}

static void perfdec_sample_with_callchain_decodes_every_field(void **state)
{
	struct vperf_perfdec d;
	struct vperf_perfrec r;
	struct rb b;
	size_t len;
	char why[160];

	(void)state;
	decoder(&d);
	header(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put(&b, ID_B);
	put(&b, 0x401234);		/* ip */
	put2(&b, 100, 101);		/* pid, tid */
	put(&b, 123456789);		/* time */
	put2(&b, 1, 0);			/* cpu */
	put(&b, 1000000);		/* period */
	put(&b, 4);			/* callchain */
	put(&b, (uint64_t)PERF_CONTEXT_USER);
	put(&b, 0x401234);
	put(&b, 0x401500);
	put(&b, 0x7f0000001000);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_SAMPLE);
	assert_int_equal(r.misc, PERF_RECORD_MISC_USER);
	assert_int_equal(r.index, 1);
	assert_int_equal(r.sample.ip, 0x401234);
	assert_int_equal(r.pid, 100);
	assert_int_equal(r.tid, 101);
	assert_int_equal(r.time, 123456789);
	assert_int_equal(r.cpu, 1);
	assert_int_equal(r.sample.period, 1000000);
	assert_int_equal(r.sample.nr_chain, 4);
	assert_int_equal(r.sample.chain[3], 0x7f0000001000);

	/* the same without a callchain is another event's layout: one word too many for B */
	header(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, ID_B);
	put(&b, 1);
	put2(&b, 1, 1);
	put(&b, 1);
	put2(&b, 0, 0);
	put(&b, 1);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), -EINVAL);
	/* ... and right for A */
	b.w[1] = ID_A;
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.index, 0);
	/* an id nobody registered */
	b.w[1] = 0x3333;
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "unknown event"));
	vperf_perfdec__exit(&d);
}

static void perfdec_comm_fork_exit_lost_switch_decode_with_their_sample_id(void **state)
{
	struct vperf_perfdec d;
	struct vperf_perfrec r;
	struct rb b;
	size_t len;
	char why[160];

	(void)state;
	decoder(&d);

	header(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put2(&b, 200, 201);
	memset(&b.w[b.n], 0, 16);
	memcpy(&b.w[b.n], "split", 6);
	b.n += 1;			/* "split\0" fits one word */
	trailer(&b, 200, 201, 5555, 0, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_COMM);
	assert_true(r.comm.exec);
	assert_string_equal(r.comm.comm, "split");
	assert_int_equal(r.comm.pid, 200);
	assert_int_equal(r.comm.tid, 201);
	assert_int_equal(r.time, 5555);

	/* a name that runs into the trailer without a NUL */
	header(&b, PERF_RECORD_COMM, 0);
	put2(&b, 200, 201);
	memcpy(&b.w[b.n], "abcdefgh", 8);
	b.n += 1;
	trailer(&b, 200, 201, 5555, 0, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), -EINVAL);

	header(&b, PERF_RECORD_FORK, 0);
	put2(&b, 300, 200);		/* pid, ppid */
	put2(&b, 302, 201);		/* tid, ptid */
	put(&b, 6666);
	trailer(&b, 200, 201, 6666, 1, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_FORK);
	assert_int_equal(r.task.pid, 300);
	assert_int_equal(r.task.ppid, 200);
	assert_int_equal(r.task.tid, 302);
	assert_int_equal(r.task.ptid, 201);
	assert_int_equal(r.cpu, 1);

	b.w[0] = (b.w[0] & ~0xffffffffull) | PERF_RECORD_EXIT;
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_EXIT);
	/* one word short */
	b.w[0] = (b.w[0] & 0xffffffffffffull) | (uint64_t)(len - 8) << 48;
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len - 8, &r, why, sizeof(why)), -EINVAL);

	header(&b, PERF_RECORD_LOST, 0);
	put(&b, ID_A);
	put(&b, 77);
	trailer(&b, 0, 0, 7777, 1, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_LOST);
	assert_int_equal(r.lost.count, 77);
	assert_int_equal(r.time, 7777);

	header(&b, PERF_RECORD_LOST_SAMPLES, 0);
	put(&b, 5);
	trailer(&b, 0, 0, 7778, 1, ID_B);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_LOST_SAMPLES);
	assert_int_equal(r.lost.count, 5);
	assert_int_equal(r.index, 1);

	header(&b, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	trailer(&b, 200, 202, 8888, 1, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_SWITCH);
	assert_true(r.switch_.out);
	assert_true(r.switch_.preempt);
	assert_int_equal(r.tid, 202);
	assert_int_equal(r.time, 8888);
	header(&b, PERF_RECORD_SWITCH, 0);
	trailer(&b, 200, 202, 8889, 1, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_false(r.switch_.out);
	put(&b, 0);	/* a word the layout does not have */
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), -EINVAL);

	/* KSYMBOL and the like: passed over */
	header(&b, PERF_RECORD_KSYMBOL, 0);
	put(&b, 0);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_OTHER);
	vperf_perfdec__exit(&d);
}

/* Put a NUL-terminated name padded to 8 bytes. */
static void put_name(struct rb *b, const char *name)
{
	size_t n = strlen(name) + 1, words = (n + 7) / 8;

	memset(&b->w[b->n], 0, words * 8);
	memcpy(&b->w[b->n], name, n);
	b->n += words;
}

/*
 * MMAP2 (inode form and build-id form) and the older MMAP decode to their mapping and file name;
 * a name that is not terminated, or a record cut before its prot and flags, is refused.
 */
static void perfdec_mmap2_and_mmap_decode_the_mapping_and_its_file(void **state)
{
	struct vperf_perfdec d;
	struct vperf_perfrec r;
	struct rb b;
	size_t len;
	char why[160];

	(void)state;
	decoder(&d);
	header(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put2(&b, 100, 101);
	put(&b, 0x555555554000);		/* addr */
	put(&b, 0x3000);			/* len */
	put(&b, 0x1000);			/* pgoff */
	put2(&b, 8, 1);				/* maj, min */
	put(&b, 123456);			/* ino */
	put(&b, 7);				/* ino_generation */
	put2(&b, 5, 2);				/* prot (r-x), flags (MAP_PRIVATE) */
	put_name(&b, "/usr/bin/hot");
	trailer(&b, 100, 101, 5555, 1, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_MMAP);
	assert_int_equal(r.mmap.pid, 100);
	assert_int_equal(r.mmap.tid, 101);
	assert_int_equal(r.mmap.addr, 0x555555554000);
	assert_int_equal(r.mmap.len, 0x3000);
	assert_int_equal(r.mmap.pgoff, 0x1000);
	assert_int_equal(r.mmap.prot, 5);
	assert_int_equal(r.mmap.flags, 2);
	assert_int_equal(r.mmap.build_id_size, 0);
	assert_string_equal(r.mmap.filename, "/usr/bin/hot");
	assert_int_equal(r.time, 5555);
	assert_int_equal(r.cpu, 1);

	/* the build-id form: size, 3 reserved bytes, 20 bytes of id in place of maj..ino_generation */
	header(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	put2(&b, 100, 101);
	put(&b, 0x7f0000000000);
	put(&b, 0x1000);
	put(&b, 0);
	put(&b, 20 | 0xabull << 32);		/* size 20, reserved, id bytes 0..3 = ab 00 00 00 */
	put(&b, 0x0102030405060708ull);
	put(&b, 0x1112131415161718ull);
	put2(&b, 5, 2);
	put_name(&b, "/lib/libc.so.6");
	trailer(&b, 100, 101, 5556, 0, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.mmap.build_id_size, 20);
	assert_int_equal(r.mmap.build_id[0], 0xab);
	assert_int_equal(r.mmap.build_id[4], 0x08);
	assert_int_equal(r.mmap.build_id[19], 0x11);
	assert_string_equal(r.mmap.filename, "/lib/libc.so.6");

	/* MMAP: no inode, prot or flags */
	header(&b, PERF_RECORD_MMAP, 0);
	put2(&b, 200, 200);
	put(&b, 0x400000);
	put(&b, 0x2000);
	put(&b, 0);
	put_name(&b, "[vdso]");
	trailer(&b, 200, 200, 5557, 0, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.kind, VPERF_PERFREC_MMAP);
	assert_int_equal(r.mmap.addr, 0x400000);
	assert_int_equal(r.mmap.prot, 0);
	assert_string_equal(r.mmap.filename, "[vdso]");

	/* a name filling its words without a NUL */
	header(&b, PERF_RECORD_MMAP, 0);
	put2(&b, 200, 200);
	put(&b, 0x400000);
	put(&b, 0x2000);
	put(&b, 0);
	memcpy(&b.w[b.n++], "abcdefgh", 8);
	trailer(&b, 200, 200, 5557, 0, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not terminated"));

	/* MMAP2 cut after pgoff: no room for the inode, prot and flags */
	header(&b, PERF_RECORD_MMAP2, 0);
	put2(&b, 200, 200);
	put(&b, 0x400000);
	put(&b, 0x2000);
	put(&b, 0);
	put_name(&b, "/x");
	trailer(&b, 200, 200, 5557, 0, ID_A);
	len = done(&b);
	assert_int_equal(vperf_perfdec__parse(&d, b.w, len, &r, why, sizeof(why)), -EINVAL);
	vperf_perfdec__exit(&d);
}

static void perfdec_refuses_unknown_sample_bits_and_duplicate_ids(void **state)
{
	struct vperf_perfdec d = { 0 };

	(void)state;
	assert_int_equal(vperf_perfdec__add(&d, 1, PERF_SAMPLE_IP, 0), -EINVAL);
	assert_int_equal(vperf_perfdec__add(&d, 1, ST_BASE | PERF_SAMPLE_READ, 0), -EINVAL);
	for (uint64_t id = 1000; id > 0; id--)
		assert_int_equal(vperf_perfdec__add(&d, id * 7, ST_BASE, (unsigned int)id), 0);
	assert_int_equal(vperf_perfdec__add(&d, 7, ST_BASE, 0), -EEXIST);
	assert_int_equal(d.nr, 1000);
	for (size_t i = 1; i < d.nr; i++)
		assert_true(d.ev[i - 1].id < d.ev[i].id);
	vperf_perfdec__exit(&d);
}

static void perf_ring_record_wrapping_the_end_is_reassembled(void **state)
{
	uint8_t data[256], bounce[65536];
	struct vperf_perf_ring ring = { .data = data, .size = sizeof(data), .bounce = bounce,
					.bounce_len = sizeof(bounce) };
	struct rb b;
	const void *rec;
	size_t len, off = 232;	/* 24 bytes before the end */
	struct vperf_perfdec d;
	struct vperf_perfrec r;
	char why[160];

	(void)state;
	decoder(&d);
	header(&b, PERF_RECORD_SAMPLE, 0);
	put(&b, ID_A);
	put(&b, 0xabc);
	put2(&b, 1, 2);
	put(&b, 99);
	put2(&b, 0, 0);
	put(&b, 10);
	len = done(&b);		/* 56 bytes: 24 at the end, 32 at the start */
	for (size_t i = 0; i < len; i++)
		data[(off + i) % sizeof(data)] = ((uint8_t *)b.w)[i];
	ring.tail = 1024 + off;	/* positions run on; the ring masks them */
	ring.head = ring.tail + len;
	assert_int_equal(vperf_perf_ring__next(&ring, &rec, &len), 1);
	assert_ptr_equal(rec, bounce);
	assert_int_equal(vperf_perfdec__parse(&d, rec, len, &r, why, sizeof(why)), 0);
	assert_int_equal(r.sample.ip, 0xabc);
	assert_int_equal(r.time, 99);
	assert_int_equal(vperf_perf_ring__next(&ring, &rec, &len), 0);

	/* a header that wraps too: its 8 bytes split 4 and 4 are not possible (records are
	 * multiples of 8), but a size past head, zero, or odd is refused */
	ring.tail = 0;
	ring.head = 16;
	memset(data, 0, sizeof(data));
	data[6] = 0;	/* size 0 */
	assert_int_equal(vperf_perf_ring__next(&ring, &rec, &len), -EINVAL);
	data[6] = 32;	/* past head */
	assert_int_equal(vperf_perf_ring__next(&ring, &rec, &len), -EINVAL);
	data[6] = 12;	/* not a multiple of 8 */
	assert_int_equal(vperf_perf_ring__next(&ring, &rec, &len), -EINVAL);
	ring.head = 1000;	/* more than the ring holds */
	data[6] = 16;
	assert_int_equal(vperf_perf_ring__next(&ring, &rec, &len), -EINVAL);
	vperf_perfdec__exit(&d);
}

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Under ASan in the sanitizer build: any read past a record is a crash. */
static void perfdec_mutated_records_never_crash_the_decoder(void **state)
{
	struct vperf_perfdec d;
	struct vperf_perfrec r;
	struct rb b, m;
	size_t len;
	char why[160];
	uint64_t seed = 0x9e3779b97f4a7c15ull, ok = 0, refused = 0;

	(void)state;
	decoder(&d);
	for (int it = 0; it < 200000; it++) {
		uint8_t *buf;
		size_t mlen;

		switch (it % 5) {
		case 0:
			header(&b, PERF_RECORD_SAMPLE, 0);
			put(&b, ID_B);
			for (int i = 0; i < 5; i++)
				put(&b, i);
			put(&b, 3);
			put(&b, 1);
			put(&b, 2);
			put(&b, 3);
			break;
		case 1:
			header(&b, PERF_RECORD_COMM, 0);
			put2(&b, 1, 2);
			memcpy(&b.w[b.n], "name\0\0\0", 8);
			b.n++;
			trailer(&b, 1, 2, 3, 0, ID_A);
			break;
		case 2:
			header(&b, PERF_RECORD_FORK, 0);
			for (int i = 0; i < 3; i++)
				put(&b, i);
			trailer(&b, 1, 2, 3, 0, ID_B);
			break;
		case 3:
			header(&b, PERF_RECORD_MMAP2, 0);
			put2(&b, 1, 2);
			for (int i = 0; i < 6; i++)
				put(&b, i);
			put_name(&b, "/bin/x");
			trailer(&b, 1, 2, 3, 0, ID_A);
			break;
		default:
			header(&b, PERF_RECORD_LOST, 0);
			put(&b, ID_A);
			put(&b, 5);
			trailer(&b, 1, 2, 3, 0, ID_A);
			break;
		}
		len = done(&b);
		/* mutate a few bytes, maybe cut or grow, then decode a heap copy of exactly len */
		m = b;
		for (int k = (int)(xs(&seed) % 4); k >= 0; k--)
			((uint8_t *)m.w)[xs(&seed) % len] = (uint8_t)xs(&seed);
		mlen = len;
		if (xs(&seed) % 3 == 0)
			mlen = (size_t)(xs(&seed) % (len + 16));
		buf = malloc(mlen ? mlen : 1);
		assert_non_null(buf);
		memcpy(buf, m.w, mlen < sizeof(m.w) ? mlen : sizeof(m.w));
		if (vperf_perfdec__parse(&d, buf, mlen, &r, why, sizeof(why)))
			refused++;
		else
			ok++;
		free(buf);
	}
	printf("mutated records: %llu decoded, %llu refused\n", (unsigned long long)ok,
	       (unsigned long long)refused);
	assert_true(refused > 1000);
	assert_true(ok > 1000);
	vperf_perfdec__exit(&d);
}

/* The kernel's own records: a cpu-clock event on this thread, 1 ms period, sampled 100 times. */
static void perf_ring_of_a_real_cpu_clock_event_decodes_cleanly(void **state)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000, .sample_type = ST_BASE | PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1, .comm = 1, .task = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.disabled = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC, .mmap = 1, .mmap2 = 1,
	};
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 64;
	struct vperf_perfdec d = { 0 };
	struct vperf_perf_ring ring;
	struct perf_event_mmap_page *pg;
	uint8_t *bounce = malloc(65536);
	const void *rec;
	size_t len;
	uint64_t id, samples = 0, bad = 0, t0, mmaps = 0;
	struct timespec ts;
	void *base, *exe;
	int fd, ret, exe_fd;
	char why[160];

	(void)state;
	assert_non_null(bounce);
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		free(bounce);
		vt_skip("perf_event_open(cpu-clock) refused here: %s", strerror(errno));
	}
	base = mmap(NULL, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(base != MAP_FAILED);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0);
	assert_int_equal(vperf_perfdec__add(&d, id, a.sample_type, 0), 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	/* one executable mapping of our own file while it runs: one MMAP2 record */
	exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(exe_fd >= 0);
	exe = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, exe_fd, 0);
	assert_true(exe != MAP_FAILED);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	do {
		/* user-mode work between the (system call) clock reads: exclude_kernel */
		for (volatile int i = 0; i < 200000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - t0 < 100000000ull);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	pg = base;
	ring = (struct vperf_perf_ring){ .data = (uint8_t *)base + page, .size = pages * page,
					 .head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE),
					 .tail = pg->data_tail, .bounce = bounce, .bounce_len = 65536 };
	while ((ret = vperf_perf_ring__next(&ring, &rec, &len)) > 0) {
		struct vperf_perfrec r;

		if (vperf_perfdec__parse(&d, rec, len, &r, why, sizeof(why))) {
			printf("refused: %s\n", why);
			bad++;
		} else if (r.kind == VPERF_PERFREC_SAMPLE) {
			samples++;
			assert_int_equal(r.tid, (uint32_t)syscall(SYS_gettid));
			assert_int_equal(r.sample.period, 1000000);
		} else if (r.kind == VPERF_PERFREC_MMAP) {
			assert_int_equal(r.type, PERF_RECORD_MMAP2);
			assert_int_equal(r.mmap.addr, (uint64_t)(uintptr_t)exe);
			assert_int_equal(r.mmap.len, page);
			assert_int_equal(r.mmap.prot, PROT_READ | PROT_EXEC);
			assert_non_null(strstr(r.mmap.filename, "test-perfdec"));
			mmaps++;
		}
	}
	munmap(exe, page);
	close(exe_fd);
	assert_int_equal(mmaps, 1);
	assert_int_equal(ret, 0);
	printf("%llu samples over 100 ms of CPU time at 1 ms\n", (unsigned long long)samples);
	assert_int_equal(bad, 0);
	assert_true(samples >= 85 && samples <= 102);
	munmap(base, (pages + 1) * page);
	close(fd);
	free(bounce);
	vperf_perfdec__exit(&d);
}

/* sched_switch's format as Linux 6.1 writes it (tracefs events/sched/sched_switch/format). */
static const char switch_format[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d ...\", REC->prev_comm, REC->prev_pid\n";

/*
 * A tracepoint's format gives its id and each field's place; a raw record decodes through it,
 * and a record too short for a field, or a format without the field or its ID, is refused.
 */
static void tpfmt_sched_switch_fields_found_by_name_and_decoded(void **state)
{
	struct vperf_tpfield f[] = {
		{ .name = "prev_comm" }, { .name = "prev_pid" }, { .name = "prev_state" },
		{ .name = "next_pid" },
	};
	uint8_t raw[68] = { 0 };
	char why[160], comm[17], *text;
	uint64_t v;
	long id = -1;
	int32_t pid = 4321;
	int64_t st = 2;

	(void)state;
	assert_int_equal(vperf_tpfmt_parse(switch_format, sizeof(switch_format) - 1, &id, f, 4, why,
					   sizeof(why)), 0);
	assert_int_equal(id, 372);
	assert_int_equal(f[0].offset, 8);
	assert_int_equal(f[0].size, 16);
	assert_int_equal(f[1].offset, 24);
	assert_int_equal(f[2].size, 8);
	assert_int_equal(f[3].offset, 56);

	memcpy(raw + 8, "split", 6);
	memcpy(raw + 24, &pid, 4);
	memcpy(raw + 32, &st, 8);
	assert_true(vperf_tp_str(raw, sizeof(raw), &f[0], comm, sizeof(comm)));
	assert_string_equal(comm, "split");
	assert_true(vperf_tp_u64(raw, sizeof(raw), &f[1], &v));
	assert_int_equal(v, 4321);
	assert_true(vperf_tp_u64(raw, sizeof(raw), &f[2], &v));
	assert_int_equal(v, 2);
	assert_false(vperf_tp_u64(raw, 58, &f[3], &v));		/* next_pid past the end */
	assert_false(vperf_tp_u64(raw, sizeof(raw), &f[0], &v));	/* 16 bytes: not a number */
	assert_false(vperf_tp_str(raw, 20, &f[0], comm, sizeof(comm)));

	/* a field the format lacks; no ID; a field line cut short */
	f[3].name = "next_tgid";
	assert_int_equal(vperf_tpfmt_parse(switch_format, sizeof(switch_format) - 1, &id, f, 4, why,
					   sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "next_tgid"));
	f[3].name = "next_pid";
	text = strdup(switch_format);
	assert_non_null(text);
	memcpy(strstr(text, "ID: "), "XX: ", 4);
	assert_int_equal(vperf_tpfmt_parse(text, strlen(text), &id, f, 4, why, sizeof(why)), -EINVAL);
	free(text);
	text = strdup(switch_format);
	assert_non_null(text);
	strcpy(strstr(text, "\tfield:pid_t prev_pid;"), "\tfield:pid_t prev_pid\n");
	assert_int_equal(vperf_tpfmt_parse(text, strlen(text), &id, f, 4, why, sizeof(why)), -EINVAL);
	free(text);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perfdec_sample_with_callchain_decodes_every_field),
		cmocka_unit_test(perfdec_comm_fork_exit_lost_switch_decode_with_their_sample_id),
		cmocka_unit_test(perfdec_mmap2_and_mmap_decode_the_mapping_and_its_file),
		cmocka_unit_test(perfdec_refuses_unknown_sample_bits_and_duplicate_ids),
		cmocka_unit_test(perf_ring_record_wrapping_the_end_is_reassembled),
		cmocka_unit_test(perfdec_mutated_records_never_crash_the_decoder),
		cmocka_unit_test(perf_ring_of_a_real_cpu_clock_event_decodes_cleanly),
		cmocka_unit_test(tpfmt_sched_switch_fields_found_by_name_and_decoded),
	};

	return vt_main(argc, argv, "perfdec", tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
}
