/* SPDX-License-Identifier: MIT */
/*
 * perf_event ring buffers, read and decoded, for `vperf record` (docs/recording.md, section 12).
 *
 * vperf record opens its events per CPU with every event of a CPU writing into one ring
 * (PERF_EVENT_IOC_SET_OUTPUT), all with PERF_SAMPLE_IDENTIFIER and sample_id_all, so that each
 * record names the event it came from, and the event says how the record is laid out.  This
 * file knows the layouts; it never trusts them: a record is a byte string the kernel wrote into
 * memory a user could map too, so every length is checked against the record's size and a
 * record that does not parse is an error with a message, never a crash (the unit tests feed it
 * mutated records).
 *
 *	struct vperf_perfdec d = { 0 };
 *	vperf_perfdec__add(&d, id, attr.sample_type, 0);	// each event opened
 *	while (vperf_perf_ring__next(&ring, &rec, &len) > 0)
 *		if (!vperf_perfdec__parse(&d, rec, len, &r, why, sizeof(why)))
 *			use(&r);
 */
#ifndef VPERF_RECORD_PERFDEC_H
#define VPERF_RECORD_PERFDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the ring ---------------------------------------------------------- */

/*
 * One perf ring's data area as mapped (after the struct perf_event_mmap_page): size a power of
 * two.  head: the kernel's data_head (read with acquire order by the caller), tail: where the
 * reader is.  Records that wrap around the end are copied into bounce (at least 64 KiB: a
 * record's size is a u16).
 */
struct vperf_perf_ring {
	const uint8_t *data;
	uint64_t size;
	uint64_t head, tail;
	uint8_t *bounce;
	size_t bounce_len;
};

/*
 * The next record between tail and head: 1 with *rec and *len set (tail moves past it), 0 when
 * none is left, -EINVAL for a record header that cannot be (size under 8 bytes, past head, or
 * larger than the bounce buffer): the caller then skips to head and counts the bytes lost.
 */
int vperf_perf_ring__next(struct vperf_perf_ring *ring, const void **rec, size_t *len);

/* ---- the records ------------------------------------------------------- */

#define VPERF_PERFDEC_COMM_LEN		16

/* The opened events by id (one per perf file descriptor), kept sorted.  Zeroed: empty. */
struct vperf_perfdec {
	size_t nr, cap;
	struct vperf_perfdec_ev {
		uint64_t id;		/* PERF_EVENT_IOC_ID */
		uint64_t sample_type;
		unsigned int index;	/* the caller's: which of its events */
	} *ev;
};

/*
 * Register an opened event.  sample_type must hold PERF_SAMPLE_IDENTIFIER and may hold only
 * the bits this decoder knows: IP, TID, TIME, ID, STREAM_ID, CPU, PERIOD, CALLCHAIN, RAW.
 * 0, -EINVAL (other bits, no IDENTIFIER), -EEXIST (the id is there), -ENOMEM.
 */
int vperf_perfdec__add(struct vperf_perfdec *d, uint64_t id, uint64_t sample_type,
		       unsigned int index);
void vperf_perfdec__exit(struct vperf_perfdec *d);

enum vperf_perfrec_kind {
	VPERF_PERFREC_SAMPLE,
	VPERF_PERFREC_COMM,
	VPERF_PERFREC_FORK,
	VPERF_PERFREC_EXIT,
	VPERF_PERFREC_LOST,		/* the ring was full: lost.count records dropped */
	VPERF_PERFREC_LOST_SAMPLES,	/* samples the kernel could not write: lost.count */
	VPERF_PERFREC_THROTTLE,		/* the kernel throttled the event (too many samples) */
	VPERF_PERFREC_UNTHROTTLE,
	VPERF_PERFREC_SWITCH,		/* the thread (pid, tid) switched in, or out (switch_) */
	VPERF_PERFREC_MMAP,		/* PERF_RECORD_MMAP2 (or the older MMAP): an executable mapping */
	VPERF_PERFREC_OTHER,		/* a type this decoder does not use (KSYMBOL, ...) */
};

struct vperf_perfrec {
	enum vperf_perfrec_kind kind;
	uint32_t type;			/* PERF_RECORD_* */
	uint16_t misc;
	bool has_id;			/* the sample_id fields below are valid */
	unsigned int index;		/* the event's (vperf_perfdec__add) */
	uint64_t time;			/* PERF_SAMPLE_TIME, else 0 */
	uint32_t pid, tid;		/* PERF_SAMPLE_TID: the thread it happened in */
	uint32_t cpu;			/* PERF_SAMPLE_CPU */
	union {
		struct {
			uint64_t ip, period;
			uint32_t nr_chain;	/* callchain entries, PERF_CONTEXT_* markers included */
			const uint64_t *chain;	/* into the record: unaligned-safe only if it is */
			uint32_t raw_size;
			const uint8_t *raw;	/* PERF_SAMPLE_RAW's data, into the record */
		} sample;
		struct {
			uint32_t pid, tid;
			char comm[VPERF_PERFDEC_COMM_LEN + 1];	/* NUL-terminated */
			bool exec;			/* PERF_RECORD_MISC_COMM_EXEC */
		} comm;
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} task;				/* FORK and EXIT */
		struct {
			uint64_t count;
		} lost;
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t prot, flags;	/* MMAP2's; 0 in an MMAP record */
			uint8_t build_id_size;	/* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID, else 0 */
			uint8_t build_id[20];
			const char *filename;	/* into the record, NUL-terminated there */
		} mmap;
		struct {
			bool out;		/* PERF_RECORD_MISC_SWITCH_OUT: switched out, else in */
			bool preempt;		/* out while runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) */
		} switch_;
	};
};

/*
 * Decode one record (as vperf_perf_ring__next gave it; 8-byte aligned).  0, or -EINVAL with
 * why saying what is wrong (a size that does not match the layout, an unknown event id).
 * Pointers in *out point into rec.
 */
int vperf_perfdec__parse(const struct vperf_perfdec *d, const void *rec, size_t len,
			 struct vperf_perfrec *out, char *why, size_t why_len);

/* ---- tracepoint records (PERF_SAMPLE_RAW) ------------------------------ */

/* One field of a tracepoint's raw record, found by name in its tracefs format text. */
struct vperf_tpfield {
	const char *name;		/* in: "prev_pid" */
	uint32_t offset, size;		/* out */
	bool found;			/* out */
};

/*
 * Parse a tracefs format text ("name: ...\nID: N\nformat:\n\tfield:TYPE NAME[N];\toffset:O;\t
 * size:S;\tsigned:X;\n..."): *id, and each of f[0..n)'s offset and size.  0, or -EINVAL with why
 * (no ID, a field line that does not parse, a field asked for that is missing).
 */
int vperf_tpfmt_parse(const char *text, size_t len, long *id, struct vperf_tpfield *f, size_t n,
		      char *why, size_t why_len);

/* Field f of a raw record of raw_size bytes as an unsigned integer (1, 2, 4 or 8 bytes); false
 * when it does not fit in the record or has another size. */
bool vperf_tp_u64(const uint8_t *raw, uint32_t raw_size, const struct vperf_tpfield *f,
		  uint64_t *out);
/* A char[] field (a comm) into buf (NUL-terminated, cut to len - 1); false when it does not fit. */
bool vperf_tp_str(const uint8_t *raw, uint32_t raw_size, const struct vperf_tpfield *f, char *buf,
		  size_t len);

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_PERFDEC_H */
