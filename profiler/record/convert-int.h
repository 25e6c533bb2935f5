/* SPDX-License-Identifier: MIT */
/*
 * The raw-to-CTF converter's insides (convert.h), shared by convert.c (the passes over the raw
 * file, the events written in time order) and convert-syms.c (the guest's kernel and module
 * symbols its samples hit).  Calls go one way: convert.c to convert-syms.c.
 */
#ifndef VPERF_RECORD_CONVERT_INT_H
#define VPERF_RECORD_CONVERT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <vperf/rawrec.h>
#include <vperf/trace_rec.h>

#include "convert.h"
#include "ctf.h"
#include "ksyms.h"
#include "ordered.h"
#ifdef VPERF_RECORD_HOSTEVENTS
#include "hostevents.h"
#endif

#define VPERF_MAX_VCPUS_RAW	256	/* a raw file with more is refused */
#define VPERF_CONV_OFFSET_CHANGES 8	/* exact TSC offsets kept per vCPU; later changes are ignored */

/* ---- the events, before sorting ---- */

enum src { SRC_GUEST, SRC_EXIT, SRC_HOST, SRC_LOST, SRC_INVALID, SRC_FLUSH,
	   SRC_OUT_OF_RANGE /* past the trace clock: not written */ };

/* A guest module's code symbol, from its MMAP record (pid 0, "[MODULE]NAME", start, len). */
struct gmsym {
	uint64_t addr, len;
	const struct vperf_trace_mmap *rec;
	uint32_t mod_len;		/* "[MODULE]": the bytes of filename before NAME */
	uint32_t seq;			/* its order among them: the first of one address wins */
	bool used;
};

struct cev {
	struct vperf_ordered_ev h;	/* h.ts: host TSC in ns */
	const void *p;			/* the record in the mapped file, or the host event */
	uint64_t count;			/* SRC_LOST, SRC_INVALID: how many; SRC_FLUSH: its number */
	uint64_t count2;		/* SRC_INVALID: drains; SRC_FLUSH: its side (flush_sides) */
	uint64_t count3;		/* SRC_INVALID: drains refused for a bad ring header */
	uint32_t cpu;
	uint8_t layer;			/* enum vperf_ctf_layer */
	uint8_t src;			/* enum src */
};

struct conv {
	const unsigned char *map;
	size_t map_len;
	const struct vperf_rawrec_header *h;
	struct vperf_convert_stats *st;
	char *why;
	size_t why_len;

	struct vperf_ordered ev;	/* struct cev, put in time order when written */

	int64_t offset[VPERF_MAX_VCPUS_RAW];
	int offset_how[VPERF_MAX_VCPUS_RAW];	/* 0 none, 1 KVM, 2 samples */
	/*
	 * Exact offsets that changed during the recording (a VMM's reset writes the TSC after its
	 * vCPUs exist; a guest may write it): each from its host_tsc on.  [0] is offset[] above.
	 */
	struct conv_offset {
		uint64_t host_tsc;
		int64_t offset;
	} offset_chg[VPERF_MAX_VCPUS_RAW][VPERF_CONV_OFFSET_CHANGES];
	unsigned int nr_offset_chg[VPERF_MAX_VCPUS_RAW];
	uint64_t lost_vmm[VPERF_MAX_VCPUS_RAW];	/* running totals seen */
	uint64_t guest_lost[VPERF_MAX_VCPUS_RAW];
	uint64_t invalid_bytes[VPERF_MAX_VCPUS_RAW];
	uint64_t invalid_drains[VPERF_MAX_VCPUS_RAW];
	uint64_t bad_headers[VPERF_MAX_VCPUS_RAW];
	char meta[8192];
	size_t meta_len;
	bool ended;
	uint64_t min_ns, max_ns;	/* of the events written */
	struct vperf_ctf *ctf;		/* the writer, while events are written */
	uint64_t written;		/* events given to it */
	struct vperf_ksyms gsyms;	/* the guest kernel's text symbols */
	uint64_t gslide;		/* where they run: map address + gslide */
	struct gmsym *gmods;		/* guest modules' code symbols, by address */
	size_t nr_gmods;
	uint64_t nr_flushes;		/* TRACE_FLUSH samples seen (their numbers) */
#ifdef VPERF_RECORD_HOSTEVENTS
	struct vperf_hostev_reader *host;
	struct vperf_hostev *hostev;
	size_t nr_hostev, cap_hostev;
#endif
};

/* The i-th event queued. */
static inline const struct cev *ev_at(const struct conv *c, size_t i)
{
	return vperf_ordered__at(&c->ev, i);
}

/* convert-syms.c */
int vperf__conv_find_guest_module_syms(struct conv *c);
int vperf__conv_find_guest_ksyms(struct conv *c, const char *path, const char *as);
int vperf__conv_write_guest_ksyms(struct conv *c, struct vperf_ctf *ctf, uint64_t ns);

#endif /* VPERF_RECORD_CONVERT_INT_H */
