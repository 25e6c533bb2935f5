/* SPDX-License-Identifier: MIT */
/*
 * The version-2 trace records' shared rules (hv/include/vperf/trace_rec.h,
 * used by vperf_guest.ko, libvperf and the host): the name check (UTF-8
 * without NUL), the check vperf_guest.ko makes on every marker record a
 * thread hands it, the record libvperf builds, and the copies that wrap at
 * the end of a data area.  Table-driven, each case with its line; and the
 * marker check against the host's whole-record check (hv/core's
 * hv_trace_rec_check(), which clamps what it is given and dispatches on the
 * type): a marker the module passes on must never make the host drop the
 * rest of a ring, and the module must not refuse one the host would take.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vperf/trace_rec.h>
#include "hv-internal.h"	/* hv_trace_rec_check(): the host's own check */

#include "vtest.h"

struct utf8_case {
	int line;
	const char *s;
	size_t n;
	bool valid;
};

#define U(s_, ok_)	{ __LINE__, s_, sizeof(s_) - 1, ok_ }

static const struct utf8_case utf8_cases[] = {
	U("parse", true),
	U("", true),
	U("caf\xc3\xa9", true),			/* U+00E9 */
	U("\xe2\x82\xac", true),		/* U+20AC */
	U("\xf0\x9f\x98\x80", true),		/* U+1F600 */
	U("\xf4\x8f\xbf\xbf", true),		/* U+10FFFF, the last */
	U("\x7f", true),
	U("\x80", false),			/* a continuation byte first */
	U("\xc3", false),			/* cut short */
	U("\xe2\x82", false),
	U("\xc0\x80", false),			/* overlong NUL */
	U("\xc1\xbf", false),			/* overlong */
	U("\xe0\x80\xaf", false),		/* overlong '/' */
	U("\xf0\x80\x80\xaf", false),		/* overlong, 4 bytes */
	U("\xed\xa0\x80", false),		/* U+D800, a surrogate */
	U("\xed\xbf\xbf", false),		/* U+DFFF */
	U("\xf4\x90\x80\x80", false),		/* U+110000 */
	U("\xf8\x88\x80\x80\x80", false),	/* 5 bytes */
	U("\xff", false),
	U("a\xc3(", false),			/* a continuation that is not */
	U("a\0b", false),			/* a NUL: not in a marker's name */
	U("\0", false),
};

static void trace_marker_names_are_utf8_without_nul(void **state)
{
	for (size_t i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++) {
		const struct utf8_case *c = &utf8_cases[i];

		if (vperf_trace_name_valid((const unsigned char *)c->s, (__u32)c->n) != c->valid)
			fail_msg("line %d: the name check says %d", c->line, !c->valid);
	}
}

/* A record's bytes, as the structures see them (no type punning through a u64 array). */
union recbuf {
	struct vperf_trace_rec h;
	struct vperf_trace_mark m;
	unsigned char b[VPERF_MARK_REC_MAX + 16];
	uint64_t align;
};

/* A valid marker record to start from: name "name" (4 bytes), 48 bytes. */
static __u32 base_rec(void *buf, const char *name)
{
	__u32 size = vperf_mark_rec_fill(buf, name, (__u32)strlen(name), 42, VPERF_TRACE_MARK_INSTANT,
					 123456789);

	assert_int_not_equal(size, 0);
	return size;
}

enum mut {
	M_NONE, M_TYPE, M_FLAGS, M_KIND, M_NAME_LEN_0, M_NAME_LEN_65, M_NAME_LEN_MORE, M_NAME_LEN_LESS,
	M_SIZE_SMALL, M_SIZE_MORE, M_PAD, M_UTF8, M_NUL_IN_NAME, M_CPU_PID_TID,
};

struct mark_case {
	int line;
	const char *name;
	enum mut mut;
	bool valid;
};

#define MC(n_, m_, ok_)	{ __LINE__, n_, m_, ok_ }

static const struct mark_case mark_cases[] = {
	MC("name", M_NONE, true),
	MC("a", M_NONE, true),				/* 41 bytes: 48 */
	MC("12345678", M_NONE, true),			/* exactly 48 */
	MC("123456789", M_NONE, true),			/* 56 */
	MC("0123456789012345678901234567890123456789012345678901234567890123", M_NONE, true),
	MC("caf\xc3\xa9", M_NONE, true),
	MC("name", M_CPU_PID_TID, true),		/* the module writes them */
	MC("name", M_TYPE, false),
	MC("name", M_FLAGS, false),
	MC("name", M_KIND, false),
	MC("name", M_NAME_LEN_0, false),
	MC("name", M_NAME_LEN_65, false),
	MC("name", M_NAME_LEN_MORE, false),		/* 9 > what the size holds */
	MC("12345678", M_NAME_LEN_LESS, false),		/* 7: the size would be 48, padding not 0 */
	MC("name", M_SIZE_SMALL, false),
	MC("name", M_SIZE_MORE, false),
	MC("name", M_PAD, false),
	MC("name", M_UTF8, false),
	MC("name", M_NUL_IN_NAME, false),		/* the ABI's names have none */
};

static void mutate(struct vperf_trace_mark *m, __u32 *size, enum mut mut)
{
	unsigned char *b = (unsigned char *)m;

	switch (mut) {
	case M_NONE:
		break;
	case M_TYPE:
		m->h.type = VPERF_TRACE_LOST;
		break;
	case M_FLAGS:
		m->h.flags = 1;
		break;
	case M_KIND:
		m->kind = VPERF_TRACE_MARK_NR_KINDS;
		break;
	case M_NAME_LEN_0:
		m->name_len = 0;
		break;
	case M_NAME_LEN_65:
		m->name_len = 65;
		break;
	case M_NAME_LEN_MORE:
		m->name_len = 9;
		break;
	case M_NAME_LEN_LESS:
		m->name_len = 7;
		break;
	case M_SIZE_SMALL:
		*size -= 8;
		m->h.size = *size;
		break;
	case M_SIZE_MORE:
		*size += 8;
		m->h.size = *size;
		break;
	case M_PAD:
		b[*size - 1] = 'x';
		break;
	case M_UTF8:
		m->name[1] = (char)0xc3;
		break;
	case M_NUL_IN_NAME:
		m->name[1] = 0;
		break;
	case M_CPU_PID_TID:
		m->h.cpu = 7;
		m->h.pid = 1;
		m->h.tid = 99999;
		break;
	}
}

static void trace_marker_check_table_module_and_host(void **state)
{
	for (size_t i = 0; i < sizeof(mark_cases) / sizeof(mark_cases[0]); i++) {
		const struct mark_case *c = &mark_cases[i];
		union recbuf buf = { .align = 0 };
		__u32 size = base_rec(&buf, c->name);
		size_t host;

		mutate(&buf.m, &size, c->mut);
		if (vperf_mark_rec_valid(&buf, size) != c->valid)
			fail_msg("line %d: the module's check says %d", c->line, !c->valid);
		host = hv_trace_rec_check(&buf, size);
		if (c->valid ? host != size : host != 0)
			fail_msg("line %d: the host's check says %zu of %u", c->line, host, size);
	}
}

/* What vperf_mark_rec_fill() refuses, and what it writes. */
static void trace_marker_record_as_libvperf_builds_it(void **state)
{
	union recbuf u;
	void *buf = &u;
	const struct vperf_trace_mark *m = &u.m;
	static const char long_name[] =
		"01234567890123456789012345678901234567890123456789012345678901234";

	assert_int_equal(vperf_mark_rec_fill(buf, "x", 0, 0, 0, 0), 0);
	assert_int_equal(vperf_mark_rec_fill(buf, long_name, 65, 0, 0, 0), 0);
	assert_int_equal(vperf_mark_rec_fill(buf, "x", 1, 0, VPERF_TRACE_MARK_NR_KINDS, 0), 0);
	assert_int_equal(vperf_mark_rec_fill(buf, "\xff", 1, 0, 0, 0), 0);
	assert_int_equal(vperf_mark_rec_fill(buf, long_name, 64, 7, VPERF_TRACE_MARK_BEGIN, 9),
			 VPERF_MARK_REC_MAX);
	assert_int_equal(VPERF_MARK_REC_MAX, 104);
	assert_int_equal(m->h.size, 104);
	assert_int_equal(m->h.type, VPERF_TRACE_MARK);
	assert_int_equal(m->h.tsc, 9);
	assert_int_equal(m->value, 7);
	assert_int_equal(m->name_len, 64);
	assert_memory_equal(m->name, long_name, 64);
	assert_true(vperf_mark_rec_valid(buf, 104));
	assert_int_equal(vperf_mark_rec_fill(buf, "abc", 3, 1, VPERF_TRACE_MARK_END, 2), 48);
	for (int i = 43; i < 48; i++)
		assert_int_equal(u.b[i], 0);
	assert_int_equal(vperf_mark_rec_size(1), 48);
	assert_int_equal(vperf_mark_rec_size(8), 48);
	assert_int_equal(vperf_mark_rec_size(9), 56);
}

/*
 * Random marker-sized records: whenever the module's check passes one, the
 * host's passes it whole; a marker the host takes, the module takes too.
 */
static void trace_random_markers_module_never_passes_what_host_refuses(void **state)
{
	unsigned int seed = 12345;
	unsigned long agree_valid = 0;

	for (int iter = 0; iter < 200000; iter++) {
		union recbuf u;
		void *buf = &u;
		unsigned char *b = u.b;
		char name[VPERF_TRACE_MARK_NAME_LEN];
		__u32 len = 1 + rand_r(&seed) % VPERF_TRACE_MARK_NAME_LEN, size;
		bool guest;
		size_t host;

		for (__u32 i = 0; i < len; i++)
			name[i] = (char)('a' + rand_r(&seed) % 26);
		size = vperf_mark_rec_fill(buf, name, len, rand_r(&seed), rand_r(&seed) % 3,
					   rand_r(&seed));
		assert_int_not_equal(size, 0);
		/* flip 0..3 random bytes, sometimes to a random size field */
		for (int k = rand_r(&seed) % 4; k > 0; k--)
			b[rand_r(&seed) % size] ^= (unsigned char)(1 + rand_r(&seed) % 255);
		if (rand_r(&seed) % 8 == 0)
			size = 8 * (3 + rand_r(&seed) % 11);	/* 24..104 */
		guest = vperf_mark_rec_valid(buf, size);
		host = hv_trace_rec_check(buf, size);
		if (guest && host != size)
			fail_msg("iteration %d: the module passes a %u-byte record the host refuses", iter,
				 size);
		if (host == size && u.h.type == VPERF_TRACE_MARK && !guest)
			fail_msg("iteration %d: the module refuses a marker the host takes", iter);
		agree_valid += guest;
	}
	/* the mutations leave enough valid ones for the first rule to mean something */
	assert_true(agree_valid > 10000);
}

/*
 * A sample's flags: user, and the trace sampler's period (a guest perf event's sample) pass,
 * alone and together; any other bit makes the record invalid, for the module's and the host's
 * checks alike.
 */
static void trace_sample_flags_user_and_period_pass_others_do_not(void **state)
{
	__u64 buf[8] = { 0 };
	struct vperf_trace_sample *r = (struct vperf_trace_sample *)buf;
	__u32 size = sizeof(*r) + 2 * 8;

	(void)state;
	r->h.size = (__u16)size;
	r->h.type = VPERF_TRACE_SAMPLE;
	r->ip = 0x401000;
	r->nr_counts = 1;
	r->nr_callchain = 1;
	for (unsigned int f = 0; f < 16; f++) {
		bool ok = !(f & ~(VPERF_TRACE_SAMPLE_USER | VPERF_TRACE_SAMPLE_PERIOD));

		r->h.flags = (__u16)f;
		assert_int_equal(vperf_trace_rec_check(buf, size), ok ? size : 0);
		assert_int_equal(hv_trace_rec_check(buf, size), ok ? size : 0);
	}
}

/*
 * MMAP records: a user mapping and the kernel's text pass; each broken rule fails.
 * Build an MMAP record of filename into buf (8-aligned, zero-padded): its size.
 */
static __u32 mmap_rec(void *buf, __u32 pid, __u64 start, __u64 len, __u64 pgoff, const char *name)
{
	struct vperf_trace_mmap *m = buf;
	__u32 size = VPERF_TRACE_ALIGN((__u32)(sizeof(*m) + strlen(name) + 1));

	memset(buf, 0, size);
	m->h.size = (__u16)size;
	m->h.type = VPERF_TRACE_MMAP;
	m->h.pid = pid;
	m->h.tid = pid;
	m->start = start;
	m->len = len;
	m->pgoff = pgoff;
	memcpy(m->filename, name, strlen(name));
	return size;
}

static void trace_mmap_records_user_and_kernel_pass_malformed_do_not(void **state)
{
	_Alignas(8) unsigned char buf[VPERF_TRACE_REC_MAX + 64];
	struct vperf_trace_mmap *m = (struct vperf_trace_mmap *)buf;
	__u32 size;

	(void)state;
	size = mmap_rec(buf, 42, 0x400000, 0x1000, 0x2000, "/usr/bin/hot3to1");
	assert_int_equal(vperf_trace_rec_check(buf, size), size);
	assert_int_equal(hv_trace_rec_check(buf, size), size);
	size = mmap_rec(buf, 0, 0xffffffff81e00000ull, 0, 0, "[kernel.kallsyms]schedule");
	assert_int_equal(vperf_trace_rec_check(buf, size), size);

	/* a user mapping: no length, a length past 2^64, no task */
	size = mmap_rec(buf, 42, 0x400000, 0, 0, "/bin/x");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 42, ~0ull - 0xfff, 0x2000, 0, "/bin/x");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 42, 0x400000, 0x1000, 0, "/bin/x");
	m->h.tid = 0;
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	/* the kernel's: a length, an offset, no symbol, another name */
	size = mmap_rec(buf, 0, 0xffffffff81e00000ull, 0x1000, 0, "[kernel.kallsyms]schedule");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 0, 0xffffffff81e00000ull, 0, 8, "[kernel.kallsyms]schedule");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 0, 0xffffffff81e00000ull, 0, 0, "[kernel.kallsyms]");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 0, 0xffffffff81e00000ull, 0, 0, "/boot/vmlinuz");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	/* the name: empty, not terminated within the record, flags set */
	size = mmap_rec(buf, 42, 0x400000, 0x1000, 0, "");
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 42, 0x400000, 0x1000, 0, "/bin/abcdefg");	/* 48 + 13 -> 64 */
	memset(buf + 48, 'a', size - 48);
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 42, 0x400000, 0x1000, 0, "/bin/x");
	m->h.flags = 1;
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	assert_int_equal(hv_trace_rec_check(buf, size), 0);
}

/*
 * A guest module's code symbol (pid 0, "[MODULE]NAME", its address and size) passes; a
 * module name out of [A-Za-z0-9_-] or too long, no name, a user address, a length past 2^64, an
 * offset each fail.
 */
static void trace_mmap_module_symbols_pass_malformed_do_not(void **state)
{
	_Alignas(8) unsigned char buf[VPERF_TRACE_REC_MAX + 64];
	char name[128];
	__u32 size;
	static const char *const bad[] = {
		"vperf_guest]x", "[]x", "[vperf_guest]", "[vperf guest]x", "[vperf.guest]x",
		"[vperf_guest", "[kernel.kallsyms]schedule",
	};

	(void)state;
	size = mmap_rec(buf, 0, 0xffffffffc0612000ull, 0x1d0, 0, "[vperf_guest]trace_mmap");
	assert_int_equal(vperf_trace_rec_check(buf, size), size);
	assert_int_equal(hv_trace_rec_check(buf, size), size);
	assert_int_equal(vperf_trace_ksym_name_valid("[vperf_guest]trace_mmap"), 13);
	assert_int_equal(vperf_trace_ksym_name_valid("[a-b_9]x.isra.0"), 7);
	memset(name, 'm', sizeof(name));
	name[0] = '[';
	memcpy(name + 1 + VPERF_TRACE_KSYM_MOD_MAX, "]f", 3);	/* the longest module name */
	size = mmap_rec(buf, 0, 0xffffffffc0612000ull, 0x10, 0, name);
	assert_int_equal(vperf_trace_rec_check(buf, size), size);
	name[1 + VPERF_TRACE_KSYM_MOD_MAX] = 'm';			/* one byte longer */
	memcpy(name + 2 + VPERF_TRACE_KSYM_MOD_MAX, "]f", 3);
	size = mmap_rec(buf, 0, 0xffffffffc0612000ull, 0x10, 0, name);
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size = mmap_rec(buf, 0, 0xffffffffc0612000ull, 0x10, 0, bad[i]);
		if (vperf_trace_rec_check(buf, size))
			fail_msg("%s passed", bad[i]);
	}
	size = mmap_rec(buf, 0, 0x400000, 0x10, 0, "[vperf_guest]f");		/* user space */
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 0, ~0ull - 0xf, 0x20, 0, "[vperf_guest]f");	/* past 2^64 */
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 0, 0xffffffffc0612000ull, 0x10, 8, "[vperf_guest]f");	/* an offset */
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
	size = mmap_rec(buf, 0, 0xffffffffc0612000ull, 0x10, 0, "[vperf_guest]f");
	((struct vperf_trace_mmap *)buf)->h.tid = 7;				/* a task's */
	assert_int_equal(vperf_trace_rec_check(buf, size), 0);
}

/* Copies in and out at every offset around the end of a 64-byte area. */
static void trace_ring_copies_wrap_at_every_offset(void **state)
{
	unsigned char area[64], src[24], out[24];

	for (int i = 0; i < 24; i++)
		src[i] = (unsigned char)(0xa0 + i);
	for (__u64 pos = 0; pos < 200; pos++) {
		memset(area, 0, sizeof(area));
		vperf_ring_copy_in(area, sizeof(area), pos, src, sizeof(src));
		for (int i = 0; i < 24; i++)
			if (area[(pos + i) % 64] != src[i])
				fail_msg("pos %llu: byte %d in at %llu", (unsigned long long)pos, i,
					 (unsigned long long)((pos + i) % 64));
		memset(out, 0, sizeof(out));
		vperf_ring_copy_out(out, area, sizeof(area), pos, sizeof(out));
		assert_memory_equal(out, src, sizeof(src));
	}
	/* a whole area's worth from the middle */
	for (int i = 0; i < 64; i++)
		area[i] = (unsigned char)i;
	{
		unsigned char all[64];

		vperf_ring_copy_out(all, area, 64, 64 * 5 + 40, 64);
		for (int i = 0; i < 64; i++)
			assert_int_equal(all[i], (40 + i) % 64);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(trace_marker_names_are_utf8_without_nul),
		cmocka_unit_test(trace_marker_check_table_module_and_host),
		cmocka_unit_test(trace_marker_record_as_libvperf_builds_it),
		cmocka_unit_test(trace_random_markers_module_never_passes_what_host_refuses),
		cmocka_unit_test(trace_sample_flags_user_and_period_pass_others_do_not),
		cmocka_unit_test(trace_mmap_records_user_and_kernel_pass_malformed_do_not),
		cmocka_unit_test(trace_mmap_module_symbols_pass_malformed_do_not),
		cmocka_unit_test(trace_ring_copies_wrap_at_every_offset),
	};

	return VT_MAIN("trace-rec", tests, NULL, NULL);
}
