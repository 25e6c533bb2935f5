// SPDX-License-Identifier: MIT
/*
 * The guest's symbols a converted recording names its frames with (convert-int.h): the guest
 * modules' code symbols from their own MMAP records, and the guest kernel's from a System.map
 * placed where the guest said its text runs; only those its samples hit are written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>

#include "convert-int.h"
#include "escape.h"
#include "schema.h"

/* ---- the guest kernel's symbols (the ones its samples hit) ---- */

#define KERNEL_START	0xffff800000000000ull	/* x86-64: kernel addresses from here */
#define CONTEXT_MARKS	0xfffffffffffff001ull	/* perf's PERF_CONTEXT_* callchain marks */

/* The guest module symbol holding ip, or NULL. */
static struct gmsym *gmsym_find(const struct conv *c, uint64_t ip)
{
	size_t lo = 0, hi = c->nr_gmods;

	while (lo < hi) {		/* the first symbol above ip */
		size_t mid = lo + (hi - lo) / 2;

		if (c->gmods[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && ip - c->gmods[lo - 1].addr < c->gmods[lo - 1].len ? &c->gmods[lo - 1] : NULL;
}

static void gsym_mark(struct conv *c, uint64_t ip)
{
	struct gmsym *m;
	struct vperf_ksym *g;

	if (ip < KERNEL_START || ip >= CONTEXT_MARKS)
		return;
	m = gmsym_find(c, ip);
	if (m) {
		m->used = true;
		return;
	}
	g = c->gsyms.nr ? vperf_ksyms__find(&c->gsyms, ip - c->gslide) : NULL;
	if (g)
		g->used = true;
}

static int cmp_gmsym(const void *a, const void *b)
{
	const struct gmsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The guest modules' code symbols their MMAP records describe (a record the file's bytes do
 * not make valid is skipped), sorted, one per address: c->gmods.  0 or -ENOMEM.
 */
/* Event i's guest module symbol record (valid as the file has it), its "[MODULE]" length: or 0. */
static uint32_t module_sym_at(const struct conv *c, size_t i)
{
	const struct vperf_trace_mmap *x = ev_at(c, i)->p;

	if (ev_at(c, i)->src != SRC_GUEST || x->h.type != VPERF_TRACE_MMAP || x->h.pid ||
	    x->h.tid ||
	    !x->len || vperf_trace_rec_check(x, x->h.size) != x->h.size)
		return 0;
	return vperf_trace_ksym_name_valid(x->filename);
}

int vperf__conv_find_guest_module_syms(struct conv *c)
{
	size_t n = 0;

	for (size_t i = 0; i < vperf_ordered__nr(&c->ev); i++)
		n += !!module_sym_at(c, i);
	if (!n)
		return 0;
	c->gmods = calloc(n, sizeof(*c->gmods));
	if (!c->gmods)
		return -ENOMEM;
	for (size_t i = 0; i < vperf_ordered__nr(&c->ev); i++) {
		const struct vperf_trace_mmap *x = ev_at(c, i)->p;
		uint32_t mod_len = module_sym_at(c, i);

		if (!mod_len)
			continue;
		c->gmods[c->nr_gmods] = (struct gmsym){ .addr = x->start, .len = x->len, .rec = x,
							.mod_len = mod_len, .seq = (uint32_t)c->nr_gmods };
		c->nr_gmods++;
	}
	qsort(c->gmods, n, sizeof(*c->gmods), cmp_gmsym);
	c->nr_gmods = 0;
	for (size_t i = 0; i < n; i++)	/* a second name at one address (an alias) is left out */
		if (!c->nr_gmods || c->gmods[c->nr_gmods - 1].addr != c->gmods[i].addr)
			c->gmods[c->nr_gmods++] = c->gmods[i];
	return 0;
}

/*
 * Mark the guest symbols (kernel image's and modules') that the guest's kernel samples hit, and
 * the guest RIPs of the host's kvm_exit events (report --exits names the code they left).
 */
static void mark_guest_syms(struct conv *c)
{
	for (size_t i = 0; i < vperf_ordered__nr(&c->ev); i++) {
		const struct vperf_trace_sample *x = ev_at(c, i)->p;

#ifdef VPERF_RECORD_HOSTEVENTS
		if (ev_at(c, i)->src == SRC_HOST) {
			const struct vperf_hostev *h = ev_at(c, i)->p;

			if (h->type == VPERF_HOSTEV_KVM_EXIT)
				gsym_mark(c, h->kvm_exit.guest_rip);
			continue;
		}
#endif
		if (ev_at(c, i)->src != SRC_GUEST || x->h.type != VPERF_TRACE_SAMPLE)
			continue;
		if (!(x->h.flags & VPERF_TRACE_SAMPLE_USER))
			gsym_mark(c, x->ip);
		for (uint32_t j = 0; j < x->nr_callchain; j++) {
			uint64_t a;

			memcpy(&a, (const unsigned char *)x->data + 8 * (x->nr_counts + j), 8);
			gsym_mark(c, a);
		}
	}
	for (size_t i = 0; i < c->gsyms.nr; i++)
		c->st->guest_ksyms += c->gsyms.sym[i].used;
	for (size_t i = 0; i < c->nr_gmods; i++)
		c->st->guest_module_syms += c->gmods[i].used;
	c->st->guest_ksyms += c->st->guest_module_syms;
}

/*
 * Find the guest kernel symbols that the guest's samples hit, in path (a System.map or
 * kallsyms) placed where the guest's MMAP record of its kernel text says: c->gsyms, their
 * used flags set.  Nothing found is not an error: the stats' note says why.  0 or -ENOMEM.
 */
int vperf__conv_find_guest_ksyms(struct conv *c, const char *path, const char *as)
{
	struct vperf_convert_stats *st = c->st;
	const struct vperf_trace_mmap *kt = NULL;
	uint64_t ref = 0;
	char ref_name[128];
	bool have_ref = false;
	int err;

	if (!path) {
		snprintf(st->guest_ksyms_note, sizeof(st->guest_ksyms_note),
			 "none: no symbol map of the guest kernel was given");
		goto none;
	}
	for (size_t i = 0; i < vperf_ordered__nr(&c->ev) && !kt; i++) {
		const struct vperf_trace_rec *r = ev_at(c, i)->p;

		if (ev_at(c, i)->src == SRC_GUEST && r->type == VPERF_TRACE_MMAP && !r->pid &&
		    !((const struct vperf_trace_mmap *)r)->len &&
		    r->size > sizeof(*kt) + strlen(VPERF_TRACE_MMAP_KERNEL) &&
		    !memcmp(((const struct vperf_trace_mmap *)r)->filename, VPERF_TRACE_MMAP_KERNEL,
			    strlen(VPERF_TRACE_MMAP_KERNEL)))
			kt = (const void *)r;
	}
	if (!kt) {
		snprintf(st->guest_ksyms_note, sizeof(st->guest_ksyms_note),
			 "none: the guest did not say where its kernel text is (no MMAP record of it: "
			 "an older vperf_guest.ko, or its record was lost)");
		goto none;
	}
	esc_utf8_clean(ref_name, sizeof(ref_name), kt->filename + strlen(VPERF_TRACE_MMAP_KERNEL),
	     kt->h.size - sizeof(*kt) - strlen(VPERF_TRACE_MMAP_KERNEL));
	err = vperf_ksyms__read(&c->gsyms, path, VPERF_KSYMS_TEXT_ONLY | VPERF_KSYMS_NO_MODULES);
	if (err == -ENOMEM)
		return err;
	if (!err)
		have_ref = !vperf_ksyms__addr(&c->gsyms, ref_name, &ref);
	if (err || !have_ref || !ref) {
		snprintf(st->guest_ksyms_note, sizeof(st->guest_ksyms_note), "none: %s: %s", as,
			 err ? strerror(-err) : !have_ref ? "it does not name the guest's reference symbol" :
			 "its addresses are 0 (a kallsyms read without the right to see them)");
		vperf_ksyms__exit(&c->gsyms);
		goto none;
	}
	c->gslide = kt->start - ref;
	mark_guest_syms(c);
	snprintf(st->guest_ksyms_note, sizeof(st->guest_ksyms_note),
		 "%" PRIu64 " symbols the guest's samples hit, from %s (%s at %#" PRIx64 ": the kernel "
		 "runs %s%#" PRIx64 " from the map's addresses)", st->guest_ksyms - st->guest_module_syms,
		 as, ref_name, (uint64_t)kt->start, c->gslide >> 63 ? "-" : "+",
		 c->gslide >> 63 ? -c->gslide : c->gslide);
	return 0;
none:
	mark_guest_syms(c);	/* the modules' own symbols still name their frames */
	return 0;
}

/*
 * Write the guest symbols the samples hit (vperf__conv_find_guest_ksyms()'s, and the modules' own) on
 * vCPU 0's guest kernel stream at ns: 0 or -errno.
 */
int vperf__conv_write_guest_ksyms(struct conv *c, struct vperf_ctf *ctf, uint64_t ns)
{
	struct vperf_ctf_stream *s;
	int err = c->st->guest_ksyms ? vperf_ctf__stream(ctf, VPERF_CTF_GUEST_KERNEL, 0, &s) : 0;
	char name[VPERF_TRACE_REC_MAX * 2], mod[VPERF_TRACE_KSYM_MOD_MAX * 2 + 8];

	/* the kernel image's (module "") first: babeltrace2 2.0.4 shows an empty string after a
	 * non-empty one of the same field as the non-empty one (profiler/report/reader.c) */
	for (size_t i = 0; !err && c->st->guest_ksyms && i < c->gsyms.nr; i++) {
		const struct vperf_ksym *g = &c->gsyms.sym[i];

		if (!g->used)
			continue;
		err = vperf_ev__kernel_symbol(s, ns, &(struct vperf_ev_kernel_symbol){
			.addr = g->addr + c->gslide, .size = vperf_ksyms__size(&c->gsyms, g),
			.name = g->name, .module = "" });
		c->st->events++;
	}
	for (size_t i = 0; !err && i < c->nr_gmods; i++) {
		const struct gmsym *m = &c->gmods[i];
		const char *fn = m->rec->filename;

		if (!m->used)
			continue;
		err = vperf_ev__kernel_symbol(s, ns, &(struct vperf_ev_kernel_symbol){
			.addr = m->addr, .size = m->len,
			.name = esc_utf8_clean(name, sizeof(name), fn + m->mod_len,
				     m->rec->h.size - sizeof(*m->rec) - m->mod_len),
			.module = esc_utf8_clean(mod, sizeof(mod), fn, m->mod_len) });
		c->st->events++;
	}
	return err;
}

