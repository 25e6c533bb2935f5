// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the host kernel events reader (hostevents.c, libtraceevent inside) on what a
 * raw recording's TRACEFS chunks may hold, in any order: header_page texts, event formats,
 * ring-buffer pages of any CPU, per-CPU stats.
 *
 * Input: operations until the input ends (a cut one ends it), each one byte, then its operands;
 * lengths are u16, little-endian:
 *   0 header  len, text			vperf_hostev_reader__add_header()
 *   1 format  len, payload			add_format_chunk() ("system\0event\0" format)
 *   2 pages   cpu (u8), len, bytes		add_pages() (whole pages of the header's size)
 *   3 stats   cpu (u8), len, text		add_stats()
 *   4 read						read() twice
 *   5 lost    on (u8 & 1)			report_lost()
 * and one last read().  Each operand is copied to a buffer of its own size, so that ASan sees a
 * read past it.
 *
 * Checked besides ASan and UBSan: every call returns 0 or a negative errno, with a message when
 * it fails; each event handed out has a known type, a CPU that has pages, and LOST only when
 * asked for; two passes hand out the same events; the per-CPU figures count the events the pass
 * handed out, and the losses add up to vperf_hostev_reader__lost().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostevents.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/*
 * libtraceevent 1.7 leaks a few bytes parsing some formats it accepts (a field named
 * VIF_PR_FMT, for one: regress-libtraceevent-leaks-on-a-field-name in corpus-hostevents):
 * not vperf's, and not to stop the fuzzer on.  Only what libtraceevent allocates itself is let go.
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:libtraceevent.so\n";
}

#define MAX_CPUS	256	/* cpu is one byte */

__attribute__((noreturn, format(printf, 1, 2)))
static void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fuzz check failed: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

struct pass {
	struct vperf_hostev_reader *r;
	bool report_lost;
	uint64_t hash, nr;
	uint64_t events[MAX_CPUS];	/* decoded (not LOST) per CPU */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

static int take(const struct vperf_hostev *ev, void *ctx)
{
	struct pass *p = ctx;
	struct vperf_hostev_cpu_stats st = { .size = sizeof(st) };
	unsigned int nr = vperf_hostev_reader__nr_cpus(p->r);
	bool has_pages = false;
	uint64_t h = p->hash;

	if ((unsigned int)ev->type >= VPERF_HOSTEV_NR_TYPES || ev->cpu >= MAX_CPUS)
		fuzz_fail("an event of type %d on cpu %u", (int)ev->type, ev->cpu);
	if (ev->type == VPERF_HOSTEV_LOST && !p->report_lost)
		fuzz_fail("a LOST event without report_lost");
	for (unsigned int i = 0; i < nr; i++)
		if (!vperf_hostev_reader__cpu_stats(p->r, i, &st) && st.cpu == ev->cpu && st.pages)
			has_pages = true;
	if (!has_pages)
		fuzz_fail("an event of cpu %u, which has no pages", ev->cpu);
	h = mix(h, ev->type);
	h = mix(h, ev->cpu);
	h = mix(h, ev->tsc);
	h = mix(h, (uint32_t)ev->pid);
	switch (ev->type) {
	case VPERF_HOSTEV_KVM_EXIT:
		h = mix(h, ev->kvm_exit.exit_reason ^ ev->kvm_exit.guest_rip ^ ev->kvm_exit.info1 ^
			   ev->kvm_exit.info2 ^ ev->kvm_exit.vcpu_id ^ ev->kvm_exit.isa);
		break;
	case VPERF_HOSTEV_SCHED_SWITCH:
		for (size_t i = 0; i < VPERF_HOSTEV_COMM_LEN; i++)
			h = mix(h, (uint8_t)ev->sched_switch.prev_comm[i] ^
				   (uint8_t)ev->sched_switch.next_comm[i]);
		h = mix(h, (uint64_t)ev->sched_switch.prev_state ^ (uint32_t)ev->sched_switch.next_pid);
		break;
	case VPERF_HOSTEV_LOST:
		h = mix(h, ev->lost.count);
		break;
	default:
		break;
	}
	p->hash = h;
	p->nr++;
	if (ev->type != VPERF_HOSTEV_LOST)
		p->events[ev->cpu]++;
	return 0;
}

static void check_err(struct vperf_hostev_reader *r, int err, const char *what)
{
	const char *msg = vperf_hostev_reader__strerror(r);

	if (err > 0 || (err && (!msg || !msg[0] || strlen(msg) >= 512)))
		fuzz_fail("%s: %d without a reason", what, err);
}

/* Two passes: the same events, and the figures they leave. */
static void read_twice(struct vperf_hostev_reader *r, bool report_lost)
{
	struct pass *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	unsigned int nr = vperf_hostev_reader__nr_cpus(r);
	struct vperf_hostev_cpu_stats st;
	uint64_t lost = 0;
	int ea, eb;

	if (!a || !b)
		abort();
	a->r = b->r = r;
	a->report_lost = b->report_lost = report_lost;
	ea = vperf_hostev_reader__read(r, take, a);
	check_err(r, ea, "read");
	eb = vperf_hostev_reader__read(r, take, b);
	if (ea != eb || a->nr != b->nr || a->hash != b->hash)
		fuzz_fail("two passes differ: %d, %" PRIu64 " events; %d, %" PRIu64, ea, a->nr, eb,
			  b->nr);
	for (unsigned int i = 0; i < nr; i++) {
		st = (struct vperf_hostev_cpu_stats){ .size = sizeof(st) };
		if (vperf_hostev_reader__cpu_stats(r, i, &st) || st.size != sizeof(st) ||
		    st.cpu >= MAX_CPUS)
			fuzz_fail("cpu_stats(%u) of %u", i, nr);
		if (!ea && st.events != b->events[st.cpu])
			fuzz_fail("cpu %u: %" PRIu64 " events counted, %" PRIu64 " handed out", st.cpu,
				  st.events, b->events[st.cpu]);
		lost += st.lost;
	}
	st.size = sizeof(st);
	if (!vperf_hostev_reader__cpu_stats(r, nr, &st))
		fuzz_fail("cpu_stats past the last CPU");
	if (lost != vperf_hostev_reader__lost(r))
		fuzz_fail("losses per CPU add up to %" PRIu64 ", the reader says %" PRIu64, lost,
			  vperf_hostev_reader__lost(r));
	if (strlen(vperf_hostev_reader__missing_fields(r)) >= 1024)
		fuzz_fail("missing_fields() too long");
	free(a);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vperf_hostev_reader *r;
	bool report_lost = false;
	size_t o = 0;

	if (vperf_hostev_reader__new(&r))
		abort();
	while (o < size) {
		uint8_t op = data[o++] % 6, cpu = 0;
		size_t len = 0;
		char *buf;
		int err;

		if (op == 4) {
			read_twice(r, report_lost);
			continue;
		}
		if (op == 5) {
			if (o >= size)
				break;
			report_lost = data[o++] & 1;
			vperf_hostev_reader__report_lost(r, report_lost);
			continue;
		}
		if (op == 2 || op == 3) {
			if (o >= size)
				break;
			cpu = data[o++];
		}
		if (size - o < 2)
			break;
		len = data[o] | (size_t)data[o + 1] << 8;
		o += 2;
		if (size - o < len)
			break;
		buf = malloc(len ? len : 1);
		if (!buf)
			abort();
		memcpy(buf, data + o, len);
		o += len;
		switch (op) {
		case 0:
			err = vperf_hostev_reader__add_header(r, buf, len);
			break;
		case 1:
			err = vperf_hostev_reader__add_format_chunk(r, buf, len);
			break;
		case 2:
			err = vperf_hostev_reader__add_pages(r, cpu, buf, len);
			break;
		default:
			err = vperf_hostev_reader__add_stats(r, cpu, buf, len);
			break;
		}
		check_err(r, err, "add");
		free(buf);
	}
	read_twice(r, report_lost);
	vperf_hostev_reader__delete(r);
	return 0;
}
