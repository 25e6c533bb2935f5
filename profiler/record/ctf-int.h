/* SPDX-License-Identifier: MIT */
/*
 * The CTF writer's insides (ctf.h), shared by ctf.c (the writer, its directory, streams and
 * events), ctf-flush.c (the metadata and the packets on disk) and ctf-types.c (the checks of a
 * class table and the trace's types built from it).  Calls go one way: from ctf.c to the others.
 */
#ifndef VPERF_RECORD_CTF_INT_H
#define VPERF_RECORD_CTF_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <babeltrace/ctf-ir/utils.h>
#include <babeltrace/ctf-writer/clock.h>
#include <babeltrace/ctf-writer/event-fields.h>
#include <babeltrace/ctf-writer/event-types.h>
#include <babeltrace/ctf-writer/event.h>
#include <babeltrace/ctf-writer/stream-class.h>
#include <babeltrace/ctf-writer/stream.h>
#include <babeltrace/ctf-writer/writer.h>

#include "ctf.h"
#include "schema.h"

/*
 * The library names stream files <stream class>_<stream id>: hidden, so
 * that babeltrace2 skips one a kill leaves before it is unlinked.
 */
#define STREAM_CLASS_NAME	".vperf"
#define METADATA_TMP		".metadata.tmp"

/*
 * The first bytes of every packet, at fixed offsets: the library's packet
 * header (magic u32, uuid u8[16], stream_id u32), then the packet context
 * (its timestamp_begin, timestamp_end, content_size and packet_size in
 * bits, events_discarded, all u64, then layer u8 and cpu_id u32), all
 * byte-aligned, in the host's byte order (the trace's).  Filler packets
 * are a copy of them with new times and sizes; publish() checks every
 * packet the library writes against this layout.
 */
#define PKT_MAGIC	0
#define PKT_TS_BEGIN	24
#define PKT_TS_END	32
#define PKT_CONTENT	40
#define PKT_SIZE	48
#define PKT_DISCARDED	56
#define PKT_LAYER	64
#define PKT_CPU		65
#define PKT_HEAD	69
#define CTF_MAGIC	0xc1fc1fc1u

/* The layers' names (stream files, the packet context's enumeration): the schema's. */
static const char *const *const layer_names = vperf_schema_layer_names;

/* ---- the writer's state ----------------------------------------------- */

struct field {
	char *name;
	char *len_name;			/* U64_SEQ: its length field */
	enum vperf_ctf_type type;
	size_t nr_labels;
};

struct class {
	char *name;
	struct field *fields;
	size_t nr_fields;
	struct bt_ctf_event_class *bt;	/* our reference */
};

/* An event built and waiting for the next flush; lost > 0: a loss. */
struct pending {
	uint64_t ts;
	uint64_t seq;			/* emit order, breaks ties in ts */
	struct vperf_ctf_stream *s;
	struct bt_ctf_event *ev;	/* our reference */
	uint64_t lost;
};

/* A library stream and the file it writes, unlinked, open here. */
struct bt_file {
	struct bt_ctf_stream *bt;	/* our reference */
	int fd;
};

struct vperf_ctf_stream {
	struct vperf_ctf *ctf;
	struct bt_file lib;
	enum vperf_ctf_layer layer;
	uint32_t cpu;
	uint64_t last_ts;		/* of its newest event queued */
	size_t appended;		/* events in its open packet */

	/* Publishing (see there). */
	char name[48];			/* the file babeltrace2 reads */
	uint64_t lib_done;		/* bytes of lib.fd published */
	uint64_t size;			/* of the published file */
	uint64_t filler;		/* offset of its last packet, a filler */
	uint64_t filler_ts;		/* that filler's time and discarded count */
	uint64_t filler_discarded;
	uint64_t discarded;		/* the running total handed to the library, <= INT64_MAX */
	unsigned char head[PKT_HEAD];	/* a packet's first bytes, for fillers */
	bool started;			/* the file holds its first fillers */
};

struct vperf_ctf {
	char *dir;
	int dirfd;
	bool created_dir;
	struct bt_ctf_writer *writer;
	struct bt_ctf_clock *clock;
	struct bt_ctf_stream_class *sc;
	struct bt_file spare;		/* the first stream, not yet handed out */
	size_t nr_lib_streams;		/* created in the library */
	size_t page;			/* the unit a write cannot be cut in */
	struct class *classes;		/* the config's, then lost_events */
	size_t nr_classes;		/* the config's */
	struct vperf_ctf_stream **streams;
	size_t nr_streams, cap_streams;
	struct pending *pending;
	size_t nr_pending, cap_pending;
	uint64_t seq;
	uint64_t watermark;		/* newest timestamp flushed */
	char *metadata;			/* as last written */
	char **int_keys;		/* environment keys whose values are integers */
	size_t nr_int_keys;
	bool broken;			/* a flush failed half-way */
	char err[512];
};

/* Say why the last call failed (vperf_ctf__strerror()), and return err. */
static inline int fail(struct vperf_ctf *ctf, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int fail(struct vperf_ctf *ctf, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctf->err, sizeof(ctf->err), fmt, ap);
	va_end(ap);
	return err;
}

/* ctf-flush.c */
int vperf__ctf_write_metadata(struct vperf_ctf *ctf);
int vperf__ctf_add_env(struct vperf_ctf *ctf, const char *key, const char *value);

/* ctf-types.c */
const char *vperf__ctf_type_name(enum vperf_ctf_type type);
bool vperf__ctf_is_identifier(const char *s);
bool vperf__ctf_is_metadata_text(const char *s);
uint64_t vperf__ctf_type_max(enum vperf_ctf_type type);
void vperf__ctf_free_class(struct class *c);
int vperf__ctf_check_class(struct vperf_ctf *ctf, const struct vperf_ctf_class_desc *d);
int vperf__ctf_make_class(struct vperf_ctf *ctf, const struct vperf_ctf_class_desc *d,
			  struct class *c);
int vperf__ctf_make_stream_class(struct vperf_ctf *ctf);

#endif /* VPERF_RECORD_CTF_INT_H */
