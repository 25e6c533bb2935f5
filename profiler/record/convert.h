/* SPDX-License-Identifier: MIT */
/*
 * Raw recording (hv/include/vperf/rawrec.h, written by vperf-vmm --record)
 * to the CTF recording (docs/recording.md).  The raw file holds what each
 * layer saw on its own clock and in its own order; the conversion maps every
 * time onto the host TSC in nanoseconds, sorts, and writes the CTF trace.
 */
#ifndef VPERF_RECORD_CONVERT_H
#define VPERF_RECORD_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a conversion found, for the summary (`vperf vm record`, `--header`). */
struct vperf_convert_stats {
	size_t size;			/* sizeof(struct vperf_convert_stats) */
	uint64_t events;		/* written to the CTF trace */
	uint64_t guest_records;		/* guest trace records read */
	uint64_t guest_by_type[16];	/* by enum vperf_trace_type */
	uint64_t guest_unmapped;	/* guest records left out: no clock mapping for their vCPU */
	uint64_t vmm_exits;		/* VMM exit records */
	uint64_t host_events;		/* host kernel events */
	uint64_t lost_guest;		/* the guest's rings' lost (its own count) */
	uint64_t lost_invalid_bytes;	/* guest bytes the host refused */
	uint64_t guest_bad_headers;	/* drains refused: a guest ring header broken */
	uint64_t lost_producer;		/* guest LOST records' counts */
	uint64_t lost_vmm;		/* exit records the VMM dropped */
	uint64_t lost_host;		/* host kernel events lost (overrun) */
	uint64_t duration_ns;		/* from the first to the last event */
	unsigned int nr_vcpus;
	bool truncated;			/* the raw file had no END chunk (a killed VMM) */
	bool host_events_missing;	/* no host kernel events, see the metadata */
	uint64_t guest_ksyms;		/* guest kernel symbols written (those samples hit) */
	char guest_ksyms_note[256];	/* where they came from, or why there are none */
	uint64_t guest_module_syms;	/* of guest_ksyms, the guest modules' own (their MMAP records) */
	/*
	 * Guest records in the raw file that the guest ABI's rule (vperf_trace_rec_check()) refuses:
	 * each ends its GUEST chunk, and the bytes from it to the chunk's end are refused with it,
	 * never read.  vperf-vmm writes none; a damaged or forged file may.
	 */
	uint64_t guest_refused_records;
	uint64_t guest_refused_bytes;
	/*
	 * Events left out: their time is past what the trace's clock holds (2^63 - 1 ns from its
	 * origin, the start's time of day): a bogus TSC offset or a wrapped guest TSC.
	 */
	uint64_t out_of_range;
};

struct vperf_convert_opts {
	size_t size;			/* sizeof(struct vperf_convert_opts) */
	const char *vm_name;		/* NULL: "vm0" */
	/*
	 * The guest kernel's symbols: a System.map or a copy of its
	 * /proc/kallsyms (NULL: none).  The guest's MMAP record of its
	 * kernel text says where the kernel runs; the symbols the guest's
	 * samples hit are written as kernel_symbol events.
	 */
	const char *guest_kallsyms;
	const char *guest_kallsyms_as;	/* its name in the recording's notes (NULL: as given) */
	/* the guest's vDSO image kept with the recording, or why none: the note "guest_vdso" */
	const char *guest_vdso_note;
};

/*
 * Convert the raw recording raw_path into the CTF trace directory dir (it
 * must not exist or be empty).  Returns 0, or -errno with why filled:
 * -ENOENT/-EACCES the raw file, -EINVAL a raw file that is not one,
 * -EEXIST dir not empty, -EIO the writer failed.  A raw file cut short
 * (a killed VMM) converts up to its last whole chunk, with stats->truncated.
 */
int vperf_convert(const char *raw_path, const char *dir, const struct vperf_convert_opts *opts,
		  struct vperf_convert_stats *stats, char *why, size_t why_len)
	__attribute__((warn_unused_result));

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_CONVERT_H */
