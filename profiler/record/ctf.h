/* SPDX-License-Identifier: MIT */
/*
 * The CTF 1.8 trace writer of vperf recordings (libvperf_record).
 *
 * One trace directory holds the events of every layer a recording saw: the
 * host kernel, the VMM, the guest kernel and guest user space, one stream
 * per (layer, CPU), all on one clock.  `babeltrace2 DIR` reads it.  The
 * encoding is done by babeltrace 1.5's CTF writer library
 * (libbabeltrace-ctf); docs/recording.md describes the layout.
 *
 *	struct vperf_ctf_config cfg = { .size = sizeof(cfg), .vm_name = "vm0",
 *					.classes = my_classes, .nr_classes = 1 };
 *	struct vperf_ctf_stream *s;
 *	struct vperf_ctf *ctf;
 *	char why[256];
 *
 *	if (vperf_ctf__new("trace", &cfg, &ctf, why, sizeof(why)))
 *		die("%s", why);
 *	if (vperf_ctf__stream(ctf, VPERF_CTF_GUEST_KERNEL, 0, &s))
 *		die("%s", vperf_ctf__strerror(ctf));
 *	struct vperf_ctf_value v[] = { VPERF_CTF_U32(7) };
 *	if (vperf_ctf__emit(s, 0, ts, v, 1) ||
 *	    vperf_ctf__flush(ctf))
 *		die("%s", vperf_ctf__strerror(ctf));
 *	vperf_ctf__delete(ctf);
 *
 * Conventions
 *   - Functions return 0 on success and a negative errno on failure;
 *     vperf_ctf__strerror() then says what was wrong, for a person.  A
 *     refused event or loss changes nothing: the trace written before stays
 *     readable.  The library never prints and never exits; the babeltrace
 *     library underneath may print to stderr on I/O errors, and aborts the
 *     process when the disk is full (it asserts that posix_fallocate()
 *     succeeds): the trace then reads back as after a kill (below).
 *   - Timestamps are nanoseconds on the trace's one clock.  Within a stream
 *     they must not go backwards.  Across streams they may come in any
 *     order between two flushes (a flush sorts them), but nothing may be
 *     older than the newest event of the last flush: flush only once every
 *     source has been drained up to the same time.
 *   - Nothing reaches the disk before vperf_ctf__flush(): events wait in
 *     memory, so flush regularly (memory grows with the events waiting).  A
 *     flush closes one packet (at least 32 KiB) per stream that had events.
 *   - A writer killed at any moment after vperf_ctf__new() returned, even
 *     with SIGKILL in the middle of a flush, leaves a trace that babeltrace2
 *     reads without error, with at least everything up to its last
 *     completed flush (on a local file system: the guarantee rests on
 *     Linux never cutting a one-page write).
 *   - Each stream keeps a file open (the library keeps another): a writer
 *     needs two descriptors per stream, plus a few.
 *   - Not thread safe: one writer and its streams are used by one thread
 *     at a time.
 */
#ifndef VPERF_RECORD_CTF_H
#define VPERF_RECORD_CTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vperf_ctf;
struct vperf_ctf_stream;
struct vperf_ctf_value;	/* a field's value, see the end of this file */

/* The layers a recording sees; each stream belongs to one. */
enum vperf_ctf_layer {
	VPERF_CTF_HOST_KERNEL,
	VPERF_CTF_VMM,
	VPERF_CTF_GUEST_KERNEL,
	VPERF_CTF_GUEST_USER,
	VPERF_CTF_HOST_USER,	/* host processes other than the VMM (vperf record) */
	VPERF_CTF_NR_LAYERS
};

/* "host_kernel", "vmm", "guest_kernel", "guest_user", "host_user"; NULL if unknown. */
const char *vperf_ctf_layer_name(enum vperf_ctf_layer layer);

/* ---- event classes --------------------------------------------------- */

/* Field types.  0 is no type, so that a zeroed value is refused. */
enum vperf_ctf_type {
	VPERF_CTF_TYPE_U8 = 1,
	VPERF_CTF_TYPE_U16,
	VPERF_CTF_TYPE_U32,
	VPERF_CTF_TYPE_U64,
	VPERF_CTF_TYPE_S64,
	VPERF_CTF_TYPE_STRING,	/* UTF-8, at most VPERF_CTF_MAX_STRING bytes */
	VPERF_CTF_TYPE_U64_SEQ,	/* 0..VPERF_CTF_MAX_SEQ u64s (callchains) */
};

#define VPERF_CTF_MAX_STRING	4096
#define VPERF_CTF_MAX_SEQ	65536

/* Field flags. */
#define VPERF_CTF_HEX	(1u << 0)	/* integers (and sequence elements) shown in hex */

/*
 * One field of an event class.  name: a C identifier not starting with
 * '_'.  A STRING or U64_SEQ field "x" is preceded in the trace by its
 * length, a u32 field named "x_len" (so no other field of the class may be
 * named so; babeltrace2 prints it).
 * labels: for U8/U16/U32 fields, nr_labels names of the values 0..n-1 (the
 * field becomes a CTF enumeration; NULL entries leave a value unnamed);
 * values from nr_labels on are refused.
 */
struct vperf_ctf_field_desc {
	const char *name;
	enum vperf_ctf_type type;
	unsigned int flags;		/* VPERF_CTF_HEX */
	const char *const *labels;
	size_t nr_labels;
};

/* An event class: its name (a C identifier) and its payload fields. */
struct vperf_ctf_class_desc {
	const char *name;
	const struct vperf_ctf_field_desc *fields;
	size_t nr_fields;
};

/*
 * Every trace also has the class "lost_events" (one u64 field, count),
 * written by vperf_ctf__lost(); a table may not use that name.
 */
#define VPERF_CTF_LOST_CLASS	"lost_events"

/* ---- the writer ------------------------------------------------------ */

/*
 * One extra environment entry: key a C identifier, value printable ASCII.
 * integer: the value is a decimal integer (an optional '-' and 1 to 18
 * digits) written as a CTF integer, `key = 2;`, not a string: what readers
 * that parse a version number from the environment expect (Trace Compass's
 * tracer_major).
 */
struct vperf_ctf_env {
	const char *key;
	const char *value;
	bool integer;
};

struct vperf_ctf_config {
	size_t size;			/* sizeof(struct vperf_ctf_config) */

	/* The clock every stream shares. */
	const char *clock_name;		/* NULL: "monotonic" */
	const char *clock_description;	/* NULL: none */
	uint64_t clock_freq;		/* Hz, 0: 1000000000 (see docs) */
	int64_t clock_offset_s;		/* the clock's 0 is this many seconds */
	int64_t clock_offset;		/* plus cycles after its origin */
	bool clock_absolute;		/* origin is the Unix epoch */

	/* The environment (metadata "env" block); vperf_version is added. */
	const char *hostname;		/* NULL: gethostname() */
	const char *vm_name;		/* NULL: no "vm_name" key */
	uint32_t layers;		/* 1u << each vperf_ctf_layer recorded;
					 * 0: no "layers" key */
	const char *clock_note;		/* how each layer's clock was mapped on
					 * the trace clock; NULL: no key */
	const struct vperf_ctf_env *env;	/* more keys */
	size_t nr_env;

	/* The event classes (vperf's recordings: schema.h's); NULL: none but lost_events. */
	const struct vperf_ctf_class_desc *classes;
	size_t nr_classes;
};

/*
 * Create the trace directory dir (its parent must exist; an existing empty
 * directory is used) and a writer for it.  cfg may be NULL (all defaults).
 * The trace is private, as perf.data is: a directory made here is 0700 and
 * every file 0600, whatever the umask; an existing one must be the
 * caller's and writable by nobody else, and no file is created through a
 * link.  The descriptors are copied.  Errors: -EEXIST dir exists and is
 * not empty (nothing in it is touched), -ENOTDIR (also a link), -EPERM an
 * existing directory another user owns or may write to, -ENOENT, -EACCES
 * and others from creating it, -EINVAL a bad config (a name that is not an identifier, two
 * classes or fields with one name, an unknown type), -E2BIG a config from
 * a newer header with fields this library does not know set, -ENOMEM,
 * -EIO the library failed.  On failure *out is NULL, nothing is left
 * behind (a directory this call created is removed) and, if why is not
 * NULL, why holds the reason.
 */
int vperf_ctf__new(const char *dir, const struct vperf_ctf_config *cfg,
		   struct vperf_ctf **out, char *why, size_t why_len)
	__attribute__((warn_unused_result));

/* Flush (errors are lost: flush first to see them) and free.  NULL is fine. */
void vperf_ctf__delete(struct vperf_ctf *ctf);

/* What the last failed call on ctf or one of its streams was refused for. */
const char *vperf_ctf__strerror(const struct vperf_ctf *ctf);

/*
 * The stream of (layer, cpu), created on first use: the same pointer for
 * the same pair.  The writer owns it; it lives until vperf_ctf__delete().
 * Its file, <layer>_cpu<cpu>, stays empty until its first flush.  Errors:
 * -EINVAL unknown layer, -errno creating its file (-EMFILE, -ENOSPC...),
 * -EIO the library could not create its stream, -ENOMEM.
 */
int vperf_ctf__stream(struct vperf_ctf *ctf, enum vperf_ctf_layer layer,
		      uint32_t cpu, struct vperf_ctf_stream **out)
	__attribute__((warn_unused_result));

/* The layer s was made for. */
enum vperf_ctf_layer vperf_ctf_stream__layer(const struct vperf_ctf_stream *s);

/*
 * Queue one event of class class_id (an index into the config's table) at
 * timestamp_ns.  values[i] gives field i of the class; its type must be
 * the field's type.  Errors:
 *   -EINVAL  an unknown class id, nr_values not the class's field count, a
 *            value of the wrong type, a NULL string or sequence, a
 *            timestamp older than the stream's last one or than the newest
 *            event flushed, or beyond INT64_MAX
 *   -ERANGE  an integer too large for its field, or without a label
 *   -EILSEQ  a string that is not UTF-8
 *   -E2BIG   a string longer than VPERF_CTF_MAX_STRING bytes, a sequence
 *            longer than VPERF_CTF_MAX_SEQ
 *   -ENOMEM, or -EIO after a failed flush
 * Nothing is queued then.
 */
int vperf_ctf__emit(struct vperf_ctf_stream *s, unsigned int class_id,
		    uint64_t timestamp_ns, const struct vperf_ctf_value *values,
		    size_t nr_values);

/*
 * Record that count events of this stream were lost up to timestamp_ns
 * (count 0: nothing).  The stream's packet closes there and the next one's
 * events_discarded grows by count, which babeltrace2 reports on stderr as
 * "WARNING: Tracer discarded <count> events between [<end of the packet
 * before>] and [<end of the next>] ..."; a "lost_events" event at
 * timestamp_ns carries the count too.  Timestamps as for emit.
 */
int vperf_ctf__lost(struct vperf_ctf_stream *s, uint64_t timestamp_ns, uint64_t count);

/*
 * Add environment entry key = value after the writer was created (a
 * recorder's summary, known only at its end); it reaches the metadata at
 * the next flush.  Keys of the config and keys added before cannot be
 * changed.  Errors: -EINVAL a key that is not an identifier or a value
 * that is not printable ASCII without '"' and '\\', -EEXIST a key already
 * set, -EIO after a failed flush.
 */
int vperf_ctf__add_env(struct vperf_ctf *ctf, const char *key, const char *value)
	__attribute__((warn_unused_result));

/*
 * Write every queued event, in time order, and close the packets: once it
 * returns 0, the trace on disk reads back with everything emitted so far.
 * Errors: -EIO the library failed, -errno writing the files (-ENOSPC...).
 * Then the trace on disk still reads back, without some or all of the
 * events of this flush, and the writer takes no more events (-EIO).
 */
int vperf_ctf__flush(struct vperf_ctf *ctf) __attribute__((warn_unused_result));

/* ---- values ---------------------------------------------------------- */

struct vperf_ctf_value {
	enum vperf_ctf_type type;
	union {
		uint64_t u;		/* U8, U16, U32, U64 */
		int64_t s;		/* S64 */
		const char *str;	/* STRING */
		struct {
			const uint64_t *v;
			size_t len;
		} seq;			/* U64_SEQ */
	};
};

#define VPERF_CTF_U8(x)  ((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_U8, .u = (x) })
#define VPERF_CTF_U16(x) ((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_U16, .u = (x) })
#define VPERF_CTF_U32(x) ((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_U32, .u = (x) })
#define VPERF_CTF_U64(x) ((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_U64, .u = (x) })
#define VPERF_CTF_S64(x) ((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_S64, .s = (x) })
#define VPERF_CTF_STR(x) ((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_STRING, .str = (x) })
#define VPERF_CTF_SEQ(p, n) \
	((struct vperf_ctf_value){ .type = VPERF_CTF_TYPE_U64_SEQ, .seq = { .v = (p), .len = (n) } })

#ifdef __cplusplus
}
#endif

#endif /* VPERF_RECORD_CTF_H */
