// SPDX-License-Identifier: MIT
/*
 * The CTF writer: vperf's streams, event classes and losses on top of
 * babeltrace 1.5's CTF writer library.
 *
 * What that library imposes, and how this file lives with it:
 *  - One clock object holds "now": an event is stamped with the clock's
 *    value when it is appended to a stream, and the clock never goes back,
 *    across all streams.  So emit only builds the event (payload set, not
 *    appended) and queues it; a flush sorts the queue of every stream by
 *    time (then by emit order), sets the clock and appends each event.
 *  - A stream's events reach its file only in bt_ctf_stream_flush(), which
 *    writes one whole packet, in place: the file grows first, the packet's
 *    sizes are written last.  A kill in between leaves a packet that makes
 *    babeltrace2 refuse the whole trace.  So the library's files are
 *    unlinked at once (they live on as open files, read here) and the
 *    files babeltrace2 reads are this file's, updated so that every state
 *    a kill can leave is a valid file: see "publishing" below.
 *  - A flush resets the packet context, so layer and cpu_id are set again
 *    before each packet.
 *  - events_discarded is a running total; babeltrace2 turns it into a
 *    count by difference with the stream's previous packet.  A loss
 *    therefore closes the stream's packet, then raises the total, so the
 *    next packet carries it; a lost_events event keeps that packet from
 *    being empty (the library writes no packet without events).
 *  - Its string encoder sign-extends bytes from 0x80 up, which then fail
 *    to fit its 8-bit characters: a string with one makes bt_ctf_stream_flush()
 *    fail half-way (fields.c, bt_ctf_field_string_serialize(), up to
 *    1.5.11).  So strings are written as CTF text sequences (u8 elements
 *    with encoding UTF8 after a length field), which babeltrace2 prints as
 *    strings, after their length.
 *  - The metadata is valid (byte orders known) only once a stream exists,
 *    so the writer creates one stream up front and hands it out first.
 *  - The library rewrites "metadata" in place (truncate, then write).
 *    This file writes it itself to a hidden file renamed over "metadata",
 *    so that a kill never leaves it half written; the library's own
 *    descriptor then points at the replaced file, which nobody reads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

#ifndef VPERF_RECORD_VERSION
#define VPERF_RECORD_VERSION "unknown"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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

/* ---- the class every trace has ---------------------------------------- */

#define FIELD(n, t)	{ .name = n, .type = VPERF_CTF_TYPE_##t }
#define CLASS(n, f) { .name = n, .fields = f, .nr_fields = ARRAY_SIZE(f) }

static const struct vperf_ctf_field_desc lost_fields[] = {
	FIELD("count", U64),
};
static const struct vperf_ctf_class_desc lost_class = CLASS(VPERF_CTF_LOST_CLASS, lost_fields);
#undef CLASS
#undef FIELD


const char *vperf_ctf_layer_name(enum vperf_ctf_layer layer)
{
	return (unsigned int)layer < VPERF_CTF_NR_LAYERS ? layer_names[layer] : NULL;
}

static const char *type_name(enum vperf_ctf_type type)
{
	switch (type) {
	case VPERF_CTF_TYPE_U8: return "u8";
	case VPERF_CTF_TYPE_U16: return "u16";
	case VPERF_CTF_TYPE_U32: return "u32";
	case VPERF_CTF_TYPE_U64: return "u64";
	case VPERF_CTF_TYPE_S64: return "s64";
	case VPERF_CTF_TYPE_STRING: return "string";
	case VPERF_CTF_TYPE_U64_SEQ: return "u64 sequence";
	}
	return "no type";
}

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

static int fail(struct vperf_ctf *ctf, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct vperf_ctf *ctf, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctf->err, sizeof(ctf->err), fmt, ap);
	va_end(ap);
	return err;
}

const char *vperf_ctf__strerror(const struct vperf_ctf *ctf)
{
	if (!ctf)
		return "no CTF writer";
	return ctf->err[0] ? ctf->err : "no error";
}

/* ---- checks ----------------------------------------------------------- */

/* A C identifier that is not one of CTF's keywords. */
static bool is_identifier(const char *s)
{
	if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (const char *p = s + 1; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	return bt_ctf_validate_identifier(s) == 0;
}

/* Printable ASCII without quote or backslash: safe inside metadata's "...". */
static bool is_metadata_text(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			return false;
	return true;
}

/* Offset of the first byte of s that is not valid UTF-8, or -1. */
static long utf8_error(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		uint32_t cp;
		size_t n, k;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			n = 2;
			cp = s[i] & 0x1f;
		} else if ((s[i] & 0xf0) == 0xe0) {
			n = 3;
			cp = s[i] & 0x0f;
		} else if ((s[i] & 0xf8) == 0xf0) {
			n = 4;
			cp = s[i] & 0x07;
		} else {
			return (long)i;
		}
		if (i + n > len)
			return (long)i;
		for (k = 1; k < n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return (long)i;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		/* Overlong forms, surrogates, beyond U+10FFFF. */
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return (long)i;
		i += n;
	}
	return -1;
}

static uint64_t type_max(enum vperf_ctf_type type)
{
	switch (type) {
	case VPERF_CTF_TYPE_U8: return UINT8_MAX;
	case VPERF_CTF_TYPE_U16: return UINT16_MAX;
	case VPERF_CTF_TYPE_U32: return UINT32_MAX;
	default: return UINT64_MAX;
	}
}

/* ---- building the trace's types --------------------------------------- */

static struct bt_ctf_field_type *int_type(unsigned int bits, bool is_signed, bool hex)
{
	struct bt_ctf_field_type *t = bt_ctf_field_type_integer_create(bits);

	if (!t)
		return NULL;
	if (bt_ctf_field_type_integer_set_signed(t, is_signed) ||
	    bt_ctf_field_type_integer_set_base(t, hex ? BT_CTF_INTEGER_BASE_HEXADECIMAL :
						  BT_CTF_INTEGER_BASE_DECIMAL) ||
	    bt_ctf_field_type_set_alignment(t, 8)) {
		bt_ctf_field_type_put(t);
		return NULL;
	}
	return t;
}

/* Add field d (its length first, for a string or sequence) to the event class. */
static int add_field(struct bt_ctf_event_class *ec, const struct vperf_ctf_field_desc *d,
		     const char *len_name)
{
	bool hex = d->flags & VPERF_CTF_HEX;
	struct bt_ctf_field_type *t = NULL, *elem = NULL, *len = NULL;
	int ret = -1;

	switch (d->type) {
	case VPERF_CTF_TYPE_U8:
	case VPERF_CTF_TYPE_U16:
	case VPERF_CTF_TYPE_U32:
		t = int_type(d->type == VPERF_CTF_TYPE_U8 ? 8 : d->type == VPERF_CTF_TYPE_U16 ? 16 : 32,
			     false, hex);
		if (t && d->labels) {
			struct bt_ctf_field_type *e = bt_ctf_field_type_enumeration_create(t);

			bt_ctf_field_type_put(t);
			t = e;
			for (size_t i = 0; t && i < d->nr_labels; i++)
				if (d->labels[i] &&
				    bt_ctf_field_type_enumeration_add_mapping(t, d->labels[i],
									       (int64_t)i, (int64_t)i))
					goto out;
		}
		break;
	case VPERF_CTF_TYPE_U64:
	case VPERF_CTF_TYPE_S64:
		t = int_type(64, d->type == VPERF_CTF_TYPE_S64, hex);
		break;
	case VPERF_CTF_TYPE_STRING:
	case VPERF_CTF_TYPE_U64_SEQ:
		len = int_type(32, false, false);
		if (d->type == VPERF_CTF_TYPE_U64_SEQ) {
			elem = int_type(64, false, hex);
		} else {
			elem = int_type(8, false, false);
			if (elem && bt_ctf_field_type_integer_set_encoding(elem, CTF_STRING_UTF8))
				goto out;
		}
		if (!len || !elem || bt_ctf_event_class_add_field(ec, len, len_name))
			goto out;
		t = bt_ctf_field_type_sequence_create(elem, len_name);
		break;
	}
	if (t)
		ret = bt_ctf_event_class_add_field(ec, t, d->name);
out:
	if (t)
		bt_ctf_field_type_put(t);
	if (elem)
		bt_ctf_field_type_put(elem);
	if (len)
		bt_ctf_field_type_put(len);
	return ret ? -1 : 0;
}

static void free_class(struct class *c)
{
	if (c->bt)
		bt_ctf_event_class_put(c->bt);
	for (size_t i = 0; i < c->nr_fields; i++) {
		free(c->fields[i].name);
		free(c->fields[i].len_name);
	}
	free(c->fields);
	free(c->name);
	memset(c, 0, sizeof(*c));
}

static int check_class(struct vperf_ctf *ctf, const struct vperf_ctf_class_desc *d)
{
	if (!is_identifier(d->name))
		return fail(ctf, -EINVAL, "event class name \"%s\" is not an identifier",
			    d->name ? d->name : "(null)");
	if (d->nr_fields && !d->fields)
		return fail(ctf, -EINVAL, "event class %s: %zu fields but no field table", d->name,
			    d->nr_fields);
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct vperf_ctf_field_desc *f = &d->fields[i];

		if (!is_identifier(f->name) || f->name[0] == '_')
			return fail(ctf, -EINVAL,
				    "event class %s: field name \"%s\" is not an identifier "
				    "(or starts with '_', which babeltrace2 hides)",
				    d->name, f->name ? f->name : "(null)");
		if (f->type < VPERF_CTF_TYPE_U8 || f->type > VPERF_CTF_TYPE_U64_SEQ)
			return fail(ctf, -EINVAL, "event class %s: field %s has no known type (%d)",
				    d->name, f->name, (int)f->type);
		if (f->flags & ~VPERF_CTF_HEX)
			return fail(ctf, -EINVAL, "event class %s: field %s has unknown flags %#x",
				    d->name, f->name, f->flags);
		if (f->labels || f->nr_labels) {
			if (!f->labels || !f->nr_labels || f->type > VPERF_CTF_TYPE_U32 ||
			    f->nr_labels - 1 > type_max(f->type))
				return fail(ctf, -EINVAL,
					    "event class %s: field %s: labels need a u8, u16 or u32 "
					    "field and 1 to its maximum + 1 names",
					    d->name, f->name);
			for (size_t k = 0; k < f->nr_labels; k++)
				if (f->labels[k] && (!f->labels[k][0] || !is_metadata_text(f->labels[k])))
					return fail(ctf, -EINVAL,
						    "event class %s: field %s: label %zu is empty or "
						    "not printable ASCII without '\"' and '\\'",
						    d->name, f->name, k);
		}
		for (size_t j = 0; j < d->nr_fields; j++) {
			const struct vperf_ctf_field_desc *g = &d->fields[j];
			size_t n = strlen(g->name ? g->name : "");

			if (j < i && g->name && !strcmp(g->name, f->name))
				return fail(ctf, -EINVAL, "event class %s: two fields named %s",
					    d->name, f->name);
			/* f named like g's length field */
			if ((g->type == VPERF_CTF_TYPE_U64_SEQ || g->type == VPERF_CTF_TYPE_STRING) &&
			    g->name && !strncmp(f->name, g->name, n) && !strcmp(f->name + n, "_len"))
				return fail(ctf, -EINVAL,
					    "event class %s: field %s has the name of %s's length field",
					    d->name, f->name, g->name);
		}
	}
	return 0;
}

/* Copy descriptor d into c and register its event class with the stream class. */
static int make_class(struct vperf_ctf *ctf, const struct vperf_ctf_class_desc *d, struct class *c)
{
	int ret;

	ret = check_class(ctf, d);
	if (ret)
		return ret;
	c->name = strdup(d->name);
	c->fields = calloc(d->nr_fields ? d->nr_fields : 1, sizeof(*c->fields));
	c->bt = bt_ctf_event_class_create(d->name);
	if (!c->name || !c->fields || !c->bt) {
		ret = fail(ctf, -ENOMEM, "no memory for event class %s", d->name);
		goto out_free;
	}
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct vperf_ctf_field_desc *f = &d->fields[i];
		struct field *cf = &c->fields[i];

		c->nr_fields++;
		cf->type = f->type;
		cf->nr_labels = f->labels ? f->nr_labels : 0;
		cf->name = strdup(f->name);
		if (!cf->name) {
			ret = fail(ctf, -ENOMEM, "no memory for event class %s", d->name);
			goto out_free;
		}
		if (f->type == VPERF_CTF_TYPE_U64_SEQ || f->type == VPERF_CTF_TYPE_STRING) {
			size_t n = strlen(f->name) + sizeof("_len");

			cf->len_name = malloc(n);
			if (!cf->len_name) {
				ret = fail(ctf, -ENOMEM, "no memory for event class %s", d->name);
				goto out_free;
			}
			snprintf(cf->len_name, n, "%s_len", f->name);
		}
		if (add_field(c->bt, f, cf->len_name)) {
			ret = fail(ctf, -EINVAL, "babeltrace refused field %s of event class %s",
				   f->name, d->name);
			goto out_free;
		}
	}
	if (bt_ctf_stream_class_add_event_class(ctf->sc, c->bt)) {
		ret = fail(ctf, -EINVAL, "babeltrace refused event class %s", d->name);
		goto out_free;
	}
	return 0;

out_free:
	free_class(c);
	return ret;
}

static int make_stream_class(struct vperf_ctf *ctf)
{
	struct bt_ctf_field_type *pc, *u8 = NULL, *layer = NULL, *cpu = NULL;
	int ret = -1;

	ctf->sc = bt_ctf_stream_class_create(STREAM_CLASS_NAME);
	if (!ctf->sc)
		return fail(ctf, -ENOMEM, "cannot create the stream class");
	if (bt_ctf_stream_class_set_clock(ctf->sc, ctf->clock))
		return fail(ctf, -EINVAL, "cannot put the clock on the stream class");
	/* The default context (timestamp_begin/end, sizes, events_discarded) + ours. */
	pc = bt_ctf_stream_class_get_packet_context_type(ctf->sc);
	if (!pc)
		return fail(ctf, -ENOMEM, "the stream class has no packet context");
	u8 = int_type(8, false, false);
	cpu = int_type(32, false, false);
	if (u8)
		layer = bt_ctf_field_type_enumeration_create(u8);
	if (!layer || !cpu)
		goto out;
	for (int i = 0; i < VPERF_CTF_NR_LAYERS; i++)
		if (bt_ctf_field_type_enumeration_add_mapping(layer, layer_names[i], i, i))
			goto out;
	if (bt_ctf_field_type_structure_add_field(pc, layer, "layer") ||
	    bt_ctf_field_type_structure_add_field(pc, cpu, "cpu_id"))
		goto out;
	ret = 0;
out:
	bt_ctf_field_type_put(pc);
	if (u8)
		bt_ctf_field_type_put(u8);
	if (layer)
		bt_ctf_field_type_put(layer);
	if (cpu)
		bt_ctf_field_type_put(cpu);
	return ret ? fail(ctf, -ENOMEM, "cannot build the packet context") : 0;
}

/* ---- the directory and the metadata ----------------------------------- */

/*
 * The trace directory, private: made 0700 (whatever the umask), or an empty one the caller owns
 * that no one else may write to, never through a link.  Everything after goes through dirfd,
 * and the library, which takes a path, gets one to dirfd itself (lib_path()): so nobody can put
 * a link where the writer creates a file, nor swap the directory under it.
 */
static int open_dir(struct vperf_ctf *ctf, const char *dir)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	if (!mkdir(dir, 0700))
		ctf->created_dir = true;
	else if (errno != EEXIST)
		return fail(ctf, -errno, "cannot create the trace directory %s: %s", dir,
			    strerror(errno));
	ctf->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ctf->dirfd < 0) {
		int err = errno;

		if (err == ENOTDIR || err == ELOOP)
			return fail(ctf, -ENOTDIR, "%s exists and is not a directory (or is a link)",
				    dir);
		return fail(ctf, -err, "cannot open the trace directory %s: %s", dir, strerror(err));
	}
	if (fstat(ctf->dirfd, &st))
		return fail(ctf, -errno, "cannot open the trace directory %s: %s", dir,
			    strerror(errno));
	if (st.st_uid != geteuid())
		return fail(ctf, -EPERM, "%s belongs to uid %u, not to the writer (uid %u)%s", dir,
			    (unsigned int)st.st_uid, (unsigned int)geteuid(),
			    ctf->created_dir ? ": it was replaced as it was made" : "");
	if (ctf->created_dir)
		return fchmod(ctf->dirfd, 0700) ? fail(ctf, -errno, "cannot make %s private: %s", dir,
						       strerror(errno)) : 0;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return fail(ctf, -EPERM, "%s may be written by other users (mode %04o): a trace "
			    "directory is private", dir, (unsigned int)(st.st_mode & 07777));
	fd = dup(ctf->dirfd);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		return fail(ctf, -err, "cannot read the directory %s: %s", dir, strerror(err));
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			closedir(d);
			return fail(ctf, -EEXIST,
				    "%s exists and is not empty: record into a new directory, or "
				    "remove it first", dir);
		}
	closedir(d);
	return 0;
}

/* Undo open_dir() and whatever the library wrote into the directory. */
static void remove_dir(struct vperf_ctf *ctf)
{
	if (ctf->dirfd < 0)
		return;
	unlinkat(ctf->dirfd, METADATA_TMP, 0);
	if (ctf->writer)
		unlinkat(ctf->dirfd, "metadata", 0);
	close(ctf->dirfd);
	ctf->dirfd = -1;
	if (ctf->created_dir)
		rmdir(ctf->dir);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The library writes every environment value as a string; the integer
 * ones lose their quotes here: "\tkey = \"12\";" becomes "\tkey = 12;".
 */
static void unquote_integers(const struct vperf_ctf *ctf, char *m)
{
	char *env = strstr(m, "\nenv {");
	char pat[300];

	for (size_t i = 0; env && i < ctf->nr_int_keys; i++) {
		char *at, *end;

		snprintf(pat, sizeof(pat), "\n\t%s = \"", ctf->int_keys[i]);
		at = strstr(env, pat);
		if (!at)
			continue;
		at += strlen(pat) - 1;		/* the opening quote */
		end = strchr(at + 1, '"');
		if (!end)
			continue;
		memmove(at, at + 1, (size_t)(end - at - 1));
		memmove(end - 1, end + 1, strlen(end + 1) + 1);
	}
}

/* Write the metadata if it changed, whole or not at all. */
static int write_metadata(struct vperf_ctf *ctf)
{
	char *m = bt_ctf_writer_get_metadata_string(ctf->writer);
	int fd, ret;

	if (!m)
		return fail(ctf, -ENOMEM, "cannot build the trace's metadata");
	unquote_integers(ctf, m);
	if (ctf->metadata && !strcmp(ctf->metadata, m)) {
		free(m);
		return 0;
	}
	/* a new file of ours, private: whatever had the name (a killed writer's) is not followed */
	unlinkat(ctf->dirfd, METADATA_TMP, 0);
	fd = openat(ctf->dirfd, METADATA_TMP, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = fchmod(fd, 0600) ? -errno : 0;
	if (!ret)
		ret = write_all(fd, m, strlen(m));
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(ctf->dirfd, METADATA_TMP, ctf->dirfd, "metadata"))
		ret = -errno;
	if (ret)
		goto out_free;
	free(ctf->metadata);
	ctf->metadata = m;
	return 0;

out_free:
	free(m);
	return fail(ctf, ret, "cannot write %s/metadata: %s", ctf->dir, strerror(-ret));
}

/* Create a library stream, open its file and unlink it. */
static int lib_stream(struct vperf_ctf *ctf, struct bt_file *f)
{
	char name[64];

	f->fd = -1;
	f->bt = bt_ctf_writer_create_stream(ctf->writer, ctf->sc);
	if (!f->bt)
		return fail(ctf, -EIO, "babeltrace cannot create a stream file in %s", ctf->dir);
	snprintf(name, sizeof(name), STREAM_CLASS_NAME "_%zu", ctf->nr_lib_streams++);
	f->fd = openat(ctf->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (f->fd < 0) {
		int err = errno;

		bt_ctf_stream_put(f->bt);
		f->bt = NULL;
		return fail(ctf, -EIO, "cannot open babeltrace's stream file %s/%s (%s): "
			    "not the libbabeltrace-ctf 1.5 this was written for?", ctf->dir, name,
			    strerror(err));
	}
	unlinkat(ctf->dirfd, name, 0);
	return 0;
}

static void put_lib_stream(struct bt_file *f)
{
	if (f->bt)
		bt_ctf_stream_put(f->bt);
	if (f->fd >= 0)
		close(f->fd);
	f->bt = NULL;
	f->fd = -1;
}

/* ---- new / delete ----------------------------------------------------- */

static int copy_config(struct vperf_ctf *ctf, struct vperf_ctf_config *dst,
		       const struct vperf_ctf_config *src)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t n = src->size;

	if (n < sizeof(size_t))
		return fail(ctf, -EINVAL, "vperf_ctf_config.size is %zu: set it to sizeof the struct",
			    n);
	memset(dst, 0, sizeof(*dst));
	if (n > sizeof(*dst)) {
		for (size_t i = sizeof(*dst); i < n; i++)
			if (p[i])
				return fail(ctf, -E2BIG,
					    "vperf_ctf_config has fields this library (%zu bytes of it) "
					    "does not know set", sizeof(*dst));
		n = sizeof(*dst);
	}
	memcpy(dst, src, n);
	dst->size = sizeof(*dst);
	return 0;
}

static int add_env(struct vperf_ctf *ctf, const char *key, const char *value)
{
	if (!is_identifier(key))
		return fail(ctf, -EINVAL, "environment key \"%s\" is not an identifier",
			    key ? key : "(null)");
	if (!value || !is_metadata_text(value))
		return fail(ctf, -EINVAL,
			    "environment value of %s is NULL or not printable ASCII without '\"' "
			    "and '\\'", key);
	if (bt_ctf_writer_add_environment_field(ctf->writer, key, value))
		return fail(ctf, -EINVAL, "babeltrace refused environment key %s", key);
	return 0;
}

static void free_int_keys(struct vperf_ctf *ctf)
{
	for (size_t i = 0; i < ctf->nr_int_keys; i++)
		free(ctf->int_keys[i]);
	free(ctf->int_keys);
}

/* Mark key's value (already added) an integer: 0, -EINVAL not one, -ENOMEM. */
static int add_int_key(struct vperf_ctf *ctf, const char *key, const char *value)
{
	const char *d = value + (*value == '-');
	size_t n = strspn(d, "0123456789");
	char **keys;

	if (!n || n > 18 || d[n])
		return fail(ctf, -EINVAL, "environment value of %s, \"%s\", is not a decimal "
			    "integer", key, value);
	keys = realloc(ctf->int_keys, (ctf->nr_int_keys + 1) * sizeof(*keys));
	if (!keys)
		return fail(ctf, -ENOMEM, "out of memory");
	ctf->int_keys = keys;
	keys[ctf->nr_int_keys] = strdup(key);
	if (!keys[ctf->nr_int_keys])
		return fail(ctf, -ENOMEM, "out of memory");
	ctf->nr_int_keys++;
	return 0;
}

static int make_env(struct vperf_ctf *ctf, const struct vperf_ctf_config *cfg)
{
	static const char *const builtin[] = {
		"hostname", "vperf_version", "vm_name", "layers", "clock_note",
	};
	char host[256], layers[64] = "";
	const char *hostname = cfg->hostname;
	int ret;

	if (!hostname) {
		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = 0;
		hostname = host;
	}
	if (cfg->layers & ~((1u << VPERF_CTF_NR_LAYERS) - 1))
		return fail(ctf, -EINVAL, "layers %#x: unknown layer bits", cfg->layers);
	for (int i = 0; i < VPERF_CTF_NR_LAYERS; i++)
		if (cfg->layers & (1u << i)) {
			if (layers[0])
				strcat(layers, ",");
			strcat(layers, layer_names[i]);
		}
	ret = add_env(ctf, "hostname", hostname);
	if (!ret)
		ret = add_env(ctf, "vperf_version", VPERF_RECORD_VERSION);
	if (!ret && cfg->vm_name)
		ret = add_env(ctf, "vm_name", cfg->vm_name);
	if (!ret && layers[0])
		ret = add_env(ctf, "layers", layers);
	if (!ret && cfg->clock_note)
		ret = add_env(ctf, "clock_note", cfg->clock_note);
	if (ret)
		return ret;
	if (cfg->nr_env && !cfg->env)
		return fail(ctf, -EINVAL, "%zu environment entries but no table", cfg->nr_env);
	for (size_t i = 0; i < cfg->nr_env; i++) {
		const char *key = cfg->env[i].key;

		for (size_t j = 0; key && j < ARRAY_SIZE(builtin) + i; j++)
			if (!strcmp(key, j < ARRAY_SIZE(builtin) ? builtin[j] :
					 cfg->env[j - ARRAY_SIZE(builtin)].key))
				return fail(ctf, -EINVAL, "environment key %s given twice (or a "
					    "key the writer sets itself)", key);
		ret = add_env(ctf, key, cfg->env[i].value);
		if (!ret && cfg->env[i].integer)
			ret = add_int_key(ctf, key, cfg->env[i].value);
		if (ret)
			return ret;
	}
	return 0;
}

static int make_clock(struct vperf_ctf *ctf, const struct vperf_ctf_config *cfg)
{
	const char *name = cfg->clock_name ? cfg->clock_name : "monotonic";

	if (!is_identifier(name))
		return fail(ctf, -EINVAL, "clock name \"%s\" is not an identifier", name);
	if (cfg->clock_description && !is_metadata_text(cfg->clock_description))
		return fail(ctf, -EINVAL,
			    "clock description is not printable ASCII without '\"' and '\\'");
	if (cfg->clock_offset_s < 0 || cfg->clock_offset < 0)
		return fail(ctf, -EINVAL, "negative clock offset (babeltrace writes them unsigned)");
	ctf->clock = bt_ctf_clock_create(name);
	if (!ctf->clock)
		return fail(ctf, -ENOMEM, "cannot create clock %s", name);
	if (bt_ctf_clock_set_frequency(ctf->clock, cfg->clock_freq ? cfg->clock_freq : 1000000000) ||
	    (cfg->clock_description &&
	     bt_ctf_clock_set_description(ctf->clock, cfg->clock_description)) ||
	    bt_ctf_clock_set_offset_s(ctf->clock, cfg->clock_offset_s) ||
	    bt_ctf_clock_set_offset(ctf->clock, cfg->clock_offset) ||
	    bt_ctf_clock_set_is_absolute(ctf->clock, cfg->clock_absolute) ||
	    bt_ctf_writer_add_clock(ctf->writer, ctf->clock))
		return fail(ctf, -EINVAL, "babeltrace refused the clock's settings");
	return 0;
}

/*
 * The path the library opens the trace directory by: /proc/self/fd/N of dirfd, so that it opens
 * the directory open_dir() checked, whatever its name leads to by then; dir where /proc is not
 * mounted.
 */
static const char *lib_path(const struct vperf_ctf *ctf, const char *dir, char *buf, size_t len)
{
	struct stat a, b;

	snprintf(buf, len, "/proc/self/fd/%d", ctf->dirfd);
	if (stat(buf, &a) || fstat(ctf->dirfd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return dir;
	return buf;
}

int vperf_ctf__new(const char *dir, const struct vperf_ctf_config *config,
		   struct vperf_ctf **out, char *why, size_t why_len)
{
	struct vperf_ctf_config cfg = { .size = sizeof(cfg) };
	char lib_dir[64];
	const struct vperf_ctf_class_desc *classes;
	struct vperf_ctf *ctf;
	size_t nr_classes;
	int ret;

	if (why && why_len)
		why[0] = 0;
	if (!out || !dir || !dir[0]) {
		if (why && why_len)
			snprintf(why, why_len, "vperf_ctf__new: no directory or no result pointer");
		return -EINVAL;
	}
	*out = NULL;
	ctf = calloc(1, sizeof(*ctf));
	if (!ctf || !(ctf->dir = strdup(dir))) {
		free(ctf);
		if (why && why_len)
			snprintf(why, why_len, "no memory for a CTF writer");
		return -ENOMEM;
	}
	ctf->dirfd = -1;
	ctf->spare.fd = -1;
	ctf->page = (size_t)sysconf(_SC_PAGESIZE);
	if (config) {
		ret = copy_config(ctf, &cfg, config);
		if (ret)
			goto out_free;
	}
	classes = cfg.classes;
	nr_classes = cfg.classes ? cfg.nr_classes : 0;
	for (size_t i = 0; i < nr_classes; i++) {
		if (!classes[i].name) /* check_class() says so below */
			continue;
		if (!strcmp(classes[i].name, VPERF_CTF_LOST_CLASS)) {
			ret = fail(ctf, -EINVAL, "event class name %s is the writer's own",
				   VPERF_CTF_LOST_CLASS);
			goto out_free;
		}
		for (size_t j = 0; j < i; j++)
			if (classes[j].name && !strcmp(classes[i].name, classes[j].name)) {
				ret = fail(ctf, -EINVAL, "two event classes named %s", classes[i].name);
				goto out_free;
			}
	}

	ret = open_dir(ctf, dir);
	if (ret)
		goto out_dir;
	ctf->writer = bt_ctf_writer_create(lib_path(ctf, dir, lib_dir, sizeof(lib_dir)));
	if (!ctf->writer) {
		ret = fail(ctf, -EIO, "babeltrace cannot create a trace in %s", dir);
		goto out_dir;
	}
	ret = make_clock(ctf, &cfg);
	if (!ret)
		ret = make_env(ctf, &cfg);
	if (!ret)
		ret = make_stream_class(ctf);
	if (ret)
		goto out_writer;

	ctf->classes = calloc(nr_classes + 1, sizeof(*ctf->classes));
	if (!ctf->classes) {
		ret = fail(ctf, -ENOMEM, "no memory for %zu event classes", nr_classes);
		goto out_writer;
	}
	for (size_t i = 0; i <= nr_classes; i++) {
		ret = make_class(ctf, i < nr_classes ? &classes[i] : &lost_class, &ctf->classes[i]);
		if (ret)
			goto out_classes;
	}
	ctf->nr_classes = nr_classes;
	ret = lib_stream(ctf, &ctf->spare);
	if (ret)
		goto out_classes;
	/* Readable from now on: an empty trace. */
	ret = write_metadata(ctf);
	if (ret)
		goto out_spare;
	*out = ctf;
	return 0;

out_spare:
	put_lib_stream(&ctf->spare);
out_classes:
	for (size_t i = 0; i <= nr_classes; i++)
		free_class(&ctf->classes[i]);
	free(ctf->classes);
out_writer:
	if (ctf->sc)
		bt_ctf_stream_class_put(ctf->sc);
	if (ctf->clock)
		bt_ctf_clock_put(ctf->clock);
	bt_ctf_writer_put(ctf->writer);
out_dir:
	remove_dir(ctf);
out_free:
	if (why && why_len)
		snprintf(why, why_len, "%s", ctf->err);
	free_int_keys(ctf);
	free(ctf->metadata);
	free(ctf->dir);
	free(ctf);
	return ret;
}

void vperf_ctf__delete(struct vperf_ctf *ctf)
{
	if (!ctf)
		return;
	if (vperf_ctf__flush(ctf)) {
		/* Nothing to tell: the caller flushes first to see errors. */
	}
	for (size_t i = 0; i < ctf->nr_pending; i++)
		bt_ctf_event_put(ctf->pending[i].ev);
	free(ctf->pending);
	for (size_t i = 0; i < ctf->nr_streams; i++) {
		put_lib_stream(&ctf->streams[i]->lib);
		free(ctf->streams[i]);
	}
	free(ctf->streams);
	for (size_t i = 0; i <= ctf->nr_classes; i++)
		free_class(&ctf->classes[i]);
	free(ctf->classes);
	put_lib_stream(&ctf->spare);
	bt_ctf_stream_class_put(ctf->sc);
	bt_ctf_clock_put(ctf->clock);
	/* Last: it rewrites its (by now replaced) metadata file and closes it. */
	bt_ctf_writer_put(ctf->writer);
	close(ctf->dirfd);
	free_int_keys(ctf);
	free(ctf->metadata);
	free(ctf->dir);
	free(ctf);
}

/* ---- streams ---------------------------------------------------------- */

int vperf_ctf__stream(struct vperf_ctf *ctf, enum vperf_ctf_layer layer, uint32_t cpu,
		      struct vperf_ctf_stream **out)
{
	struct vperf_ctf_stream *s;
	int fd, ret;

	if (!ctf || !out)
		return -EINVAL;
	*out = NULL;
	if ((unsigned int)layer >= VPERF_CTF_NR_LAYERS)
		return fail(ctf, -EINVAL, "unknown layer %d", (int)layer);
	for (size_t i = 0; i < ctf->nr_streams; i++)
		if (ctf->streams[i]->layer == layer && ctf->streams[i]->cpu == cpu) {
			*out = ctf->streams[i];
			return 0;
		}
	if (ctf->nr_streams == ctf->cap_streams) {
		size_t cap = ctf->cap_streams ? 2 * ctf->cap_streams : 16;
		void *p = realloc(ctf->streams, cap * sizeof(*ctf->streams));

		if (!p)
			return fail(ctf, -ENOMEM, "no memory for stream %s cpu %" PRIu32,
				    layer_names[layer], cpu);
		ctf->streams = p;
		ctf->cap_streams = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail(ctf, -ENOMEM, "no memory for stream %s cpu %" PRIu32, layer_names[layer],
			    cpu);
	s->ctf = ctf;
	s->layer = layer;
	s->cpu = cpu;
	/* Named for people and for babeltrace2's messages, which name files. */
	snprintf(s->name, sizeof(s->name), "%s_cpu%" PRIu32, layer_names[layer], cpu);
	fd = openat(ctf->dirfd, s->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0 || fchmod(fd, 0600)) {
		ret = fail(ctf, -errno, "cannot create %s/%s: %s", ctf->dir, s->name,
			   strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(ctf->dirfd, s->name, 0);
		}
		free(s);
		return ret;
	}
	close(fd);
	if (ctf->spare.bt) {
		s->lib = ctf->spare;
		ctf->spare = (struct bt_file){ .fd = -1 };
	} else {
		ret = lib_stream(ctf, &s->lib);
		if (ret) {
			unlinkat(ctf->dirfd, s->name, 0);
			free(s);
			return ret;
		}
	}
	ctf->streams[ctf->nr_streams++] = s;
	*out = s;
	return 0;
}

/* ---- events ----------------------------------------------------------- */

static int check_time(struct vperf_ctf_stream *s, uint64_t ts)
{
	struct vperf_ctf *ctf = s->ctf;

	if (ctf->broken)
		return fail(ctf, -EIO, "an earlier flush failed: the trace is incomplete and "
			    "takes no more events");
	if (ts > INT64_MAX)
		return fail(ctf, -EINVAL, "timestamp %" PRIu64 " ns is beyond the clock's range",
			    ts);
	if (ts < s->last_ts)
		return fail(ctf, -EINVAL,
			    "timestamp %" PRIu64 " ns on stream %s cpu %" PRIu32 " is older than "
			    "its previous event (%" PRIu64 " ns): a stream's events come in time order",
			    ts, layer_names[s->layer], s->cpu, s->last_ts);
	if (ts < ctf->watermark)
		return fail(ctf, -EINVAL,
			    "timestamp %" PRIu64 " ns is older than the newest event already "
			    "flushed (%" PRIu64 " ns): flush only once every source is drained up "
			    "to one time", ts, ctf->watermark);
	return 0;
}

static int check_value(struct vperf_ctf *ctf, const struct class *c, size_t i,
		       const struct vperf_ctf_value *v)
{
	const struct field *f = &c->fields[i];
	size_t len;
	long bad;

	if (v->type != f->type)
		return fail(ctf, -EINVAL, "%s.%s is a %s field: value %zu is a %s", c->name, f->name,
			    type_name(f->type), i, type_name(v->type));
	switch (f->type) {
	case VPERF_CTF_TYPE_U8:
	case VPERF_CTF_TYPE_U16:
	case VPERF_CTF_TYPE_U32:
		if (v->u > type_max(f->type))
			return fail(ctf, -ERANGE, "%s.%s: %" PRIu64 " does not fit a %s", c->name,
				    f->name, v->u, type_name(f->type));
		if (f->nr_labels && v->u >= f->nr_labels)
			return fail(ctf, -ERANGE, "%s.%s: %" PRIu64 " has no label (0 to %zu)",
				    c->name, f->name, v->u, f->nr_labels - 1);
		break;
	case VPERF_CTF_TYPE_STRING:
		if (!v->str)
			return fail(ctf, -EINVAL, "%s.%s: the string is NULL", c->name, f->name);
		len = strnlen(v->str, VPERF_CTF_MAX_STRING + 1);
		if (len > VPERF_CTF_MAX_STRING)
			return fail(ctf, -E2BIG, "%s.%s: the string is longer than %d bytes",
				    c->name, f->name, VPERF_CTF_MAX_STRING);
		bad = utf8_error(v->str, len);
		if (bad >= 0)
			return fail(ctf, -EILSEQ, "%s.%s: the string is not UTF-8 (byte %ld)",
				    c->name, f->name, bad);
		break;
	case VPERF_CTF_TYPE_U64_SEQ:
		if (v->seq.len > VPERF_CTF_MAX_SEQ)
			return fail(ctf, -E2BIG, "%s.%s: %zu elements, more than %d", c->name,
				    f->name, v->seq.len, VPERF_CTF_MAX_SEQ);
		if (v->seq.len && !v->seq.v)
			return fail(ctf, -EINVAL, "%s.%s: %zu elements at NULL", c->name, f->name,
				    v->seq.len);
		break;
	default:
		break;
	}
	return 0;
}

/* Store value v, already checked, into event field f. */
static int set_value(struct bt_ctf_event *ev, const struct field *f,
		     const struct vperf_ctf_value *v)
{
	struct bt_ctf_field *field = NULL, *len = NULL, *inner = NULL;
	int ret = -1;

	field = bt_ctf_event_get_payload(ev, f->name);
	if (!field)
		return -1;
	switch (f->type) {
	case VPERF_CTF_TYPE_U8:
	case VPERF_CTF_TYPE_U16:
	case VPERF_CTF_TYPE_U32:
		if (f->nr_labels) {
			inner = bt_ctf_field_enumeration_get_container(field);
			ret = inner ? bt_ctf_field_unsigned_integer_set_value(inner, v->u) : -1;
			break;
		}
		/* fall through */
	case VPERF_CTF_TYPE_U64:
		ret = bt_ctf_field_unsigned_integer_set_value(field, v->u);
		break;
	case VPERF_CTF_TYPE_S64:
		ret = bt_ctf_field_signed_integer_set_value(field, v->s);
		break;
	case VPERF_CTF_TYPE_STRING:
	case VPERF_CTF_TYPE_U64_SEQ: {
		bool str = f->type == VPERF_CTF_TYPE_STRING;
		size_t n = str ? strlen(v->str) : v->seq.len;

		len = bt_ctf_event_get_payload(ev, f->len_name);
		if (!len || bt_ctf_field_unsigned_integer_set_value(len, n) ||
		    bt_ctf_field_sequence_set_length(field, len))
			break;
		ret = 0;
		for (size_t i = 0; !ret && i < n; i++) {
			struct bt_ctf_field *e = bt_ctf_field_sequence_get_field(field, i);
			uint64_t x = str ? (unsigned char)v->str[i] : v->seq.v[i];

			ret = e ? bt_ctf_field_unsigned_integer_set_value(e, x) : -1;
			if (e)
				bt_ctf_field_put(e);
		}
		break;
	}
	}
	if (inner)
		bt_ctf_field_put(inner);
	if (len)
		bt_ctf_field_put(len);
	bt_ctf_field_put(field);
	return ret ? -1 : 0;
}

static int queue(struct vperf_ctf_stream *s, uint64_t ts, struct bt_ctf_event *ev, uint64_t lost)
{
	struct vperf_ctf *ctf = s->ctf;

	if (ctf->nr_pending == ctf->cap_pending) {
		size_t cap = ctf->cap_pending ? 2 * ctf->cap_pending : 1024;
		void *p = realloc(ctf->pending, cap * sizeof(*ctf->pending));

		if (!p) {
			bt_ctf_event_put(ev);
			return fail(ctf, -ENOMEM, "no memory to queue %zu events: flush more often",
				    cap);
		}
		ctf->pending = p;
		ctf->cap_pending = cap;
	}
	ctf->pending[ctf->nr_pending++] = (struct pending){
		.ts = ts, .seq = ctf->seq++, .s = s, .ev = ev, .lost = lost,
	};
	s->last_ts = ts;
	return 0;
}

/* Build an event of class c from values already checked. */
static int build(struct vperf_ctf *ctf, const struct class *c, const struct vperf_ctf_value *values,
		 struct bt_ctf_event **out)
{
	struct bt_ctf_event *ev = bt_ctf_event_create(c->bt);

	if (!ev)
		return fail(ctf, -ENOMEM, "cannot create a %s event", c->name);
	for (size_t i = 0; i < c->nr_fields; i++)
		if (set_value(ev, &c->fields[i], &values[i])) {
			bt_ctf_event_put(ev);
			return fail(ctf, -ENOMEM, "cannot set %s.%s", c->name, c->fields[i].name);
		}
	*out = ev;
	return 0;
}

enum vperf_ctf_layer vperf_ctf_stream__layer(const struct vperf_ctf_stream *s)
{
	return s->layer;
}

int vperf_ctf__emit(struct vperf_ctf_stream *s, unsigned int class_id, uint64_t timestamp_ns,
		    const struct vperf_ctf_value *values, size_t nr_values)
{
	struct vperf_ctf *ctf;
	struct bt_ctf_event *ev;
	const struct class *c;
	int ret;

	if (!s)
		return -EINVAL;
	ctf = s->ctf;
	ret = check_time(s, timestamp_ns);
	if (ret)
		return ret;
	if (class_id >= ctf->nr_classes)
		return fail(ctf, -EINVAL, "unknown event class id %u: the trace has %zu classes",
			    class_id, ctf->nr_classes);
	c = &ctf->classes[class_id];
	if (nr_values != c->nr_fields || (nr_values && !values))
		return fail(ctf, -EINVAL, "%s takes %zu values: %zu given%s", c->name, c->nr_fields,
			    nr_values, nr_values && !values ? " at NULL" : "");
	for (size_t i = 0; i < nr_values; i++) {
		ret = check_value(ctf, c, i, &values[i]);
		if (ret)
			return ret;
	}
	ret = build(ctf, c, values, &ev);
	if (ret)
		return ret;
	return queue(s, timestamp_ns, ev, 0);
}

int vperf_ctf__lost(struct vperf_ctf_stream *s, uint64_t timestamp_ns, uint64_t count)
{
	struct vperf_ctf *ctf;
	struct bt_ctf_event *ev;
	struct vperf_ctf_value v = VPERF_CTF_U64(count);
	int ret;

	if (!s)
		return -EINVAL;
	ctf = s->ctf;
	ret = check_time(s, timestamp_ns);
	if (ret || !count)
		return ret;
	ret = build(ctf, &ctf->classes[ctf->nr_classes], &v, &ev);
	if (ret)
		return ret;
	/*
	 * The packets' events_discarded is a running total, which a reader takes differences of: a
	 * recording's counts (a guest's, say) that add past 2^64 would make it wrap and fall.  The
	 * total stops at INT64_MAX (babeltrace2 takes UINT64_MAX for "none" and asserts on it); the
	 * lost_events event keeps the count as given.
	 */
	if (count > (uint64_t)INT64_MAX - s->discarded)
		count = (uint64_t)INT64_MAX - s->discarded;
	s->discarded += count;
	return queue(s, timestamp_ns, ev, count);
}

/* ---- publishing ------------------------------------------------------- */

/*
 * The file babeltrace2 reads for a stream is a copy of the library's,
 * written so that a kill at any moment leaves whole packets only.  A write
 * of one page at a page-aligned offset is not cut by a signal (Linux
 * copies a page at a time and looks for fatal signals between pages), so
 * the file changes by single-page writes, each from one valid state to the
 * next; everything else is written where no reader looks, in the padding
 * of a packet.
 *
 * The file ends with a filler: a packet without events whose padding runs
 * to the end of the file.  Publishing the library's new packets, L bytes:
 *   1. if the filler is shorter than L + a page, append one-page fillers
 *      (whole packets each, so a write cut between pages leaves whole
 *      packets), then rewrite the filler's first page to cover them;
 *   2. write a new filler at filler + L, in the old filler's padding;
 *   3. write the packets but their first page, in that padding too;
 *   4. write their first page over the filler's: the commit.
 * The file starts with a filler too, which stays, so that a stream's
 * first real packet has one before it: babeltrace2 counts discarded events
 * only as a difference from the previous packet.
 */

#define COPY_CHUNK	(64 * 1024)

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* One page: an empty packet of size bytes, at time ts. */
static void make_filler(const struct vperf_ctf_stream *s, unsigned char *page, uint64_t size,
			uint64_t ts, uint64_t discarded)
{
	memset(page, 0, s->ctf->page);
	memcpy(page, s->head, PKT_HEAD);
	put64(page + PKT_TS_BEGIN, ts);
	put64(page + PKT_TS_END, ts);
	put64(page + PKT_CONTENT, PKT_HEAD * 8);
	put64(page + PKT_SIZE, size * 8);
	put64(page + PKT_DISCARDED, discarded);
}

/* All of len bytes at off, read (write false) or written, through EINTR and short counts. */
static int pio_all(int fd, unsigned char *buf, size_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

static int pwrite_all(int fd, const unsigned char *buf, size_t len, uint64_t off)
{
	return pio_all(fd, (unsigned char *)buf, len, off, true);
}

static int pread_all(int fd, unsigned char *buf, size_t len, uint64_t off)
{
	return pio_all(fd, buf, len, off, false);
}

/* Steps 1 to 4 above, for len bytes at lib_done; buf: COPY_CHUNK bytes. */
static int commit(struct vperf_ctf_stream *s, int fd, unsigned char *buf, uint64_t len,
		  uint64_t ts, uint64_t discarded)
{
	const size_t page = s->ctf->page;
	uint64_t room = s->size - s->filler;
	int ret;

	if (room < len + page) {
		uint64_t grow = len + page - room, done, n;

		for (size_t i = 0; i < COPY_CHUNK / page; i++)
			make_filler(s, buf + i * page, page, s->filler_ts, s->filler_discarded);
		for (done = 0; done < grow; done += n) {
			n = grow - done < COPY_CHUNK ? grow - done : COPY_CHUNK;
			ret = pwrite_all(fd, buf, n, s->size + done);
			if (ret)
				return ret;
		}
		s->size += grow;
		make_filler(s, buf, s->size - s->filler, s->filler_ts, s->filler_discarded);
		ret = pwrite_all(fd, buf, page, s->filler);
		if (ret)
			return ret;
	}
	make_filler(s, buf, s->size - s->filler - len, ts, discarded);
	ret = pwrite_all(fd, buf, page, s->filler + len);
	for (uint64_t done = page, n; !ret && done < len; done += n) {
		n = len - done < COPY_CHUNK ? len - done : COPY_CHUNK;
		ret = pread_all(s->lib.fd, buf, n, s->lib_done + done);
		if (!ret)
			ret = pwrite_all(fd, buf, n, s->filler + done);
	}
	if (!ret)
		ret = pread_all(s->lib.fd, buf, page, s->lib_done);
	if (!ret)
		ret = pwrite_all(fd, buf, page, s->filler);	/* the commit */
	if (ret)
		return ret;
	s->filler += len;
	s->filler_ts = ts;
	s->filler_discarded = discarded;
	return 0;
}

/* Copy the packets the library has written since the last time. */
static int publish(struct vperf_ctf_stream *s)
{
	struct vperf_ctf *ctf = s->ctf;
	const size_t page = ctf->page;
	uint64_t end, off, len, first_ts = 0, ts = 0, discarded = 0;
	unsigned char head[PKT_HEAD], *buf;
	struct stat st;
	int fd, ret;

	if (fstat(s->lib.fd, &st))
		return fail(ctf, -errno, "cannot stat babeltrace's file of %s: %s", s->name,
			    strerror(errno));
	end = (uint64_t)st.st_size;
	if (end == s->lib_done)
		return 0;
	/* Whole packets, laid out as expected. */
	for (off = s->lib_done; off < end; off += len) {
		ret = pread_all(s->lib.fd, head, PKT_HEAD, off);
		if (ret)
			return fail(ctf, ret, "cannot read babeltrace's file of %s: %s", s->name,
				    strerror(-ret));
		len = get64(head + PKT_SIZE) / 8;
		if (get32(head + PKT_MAGIC) != CTF_MAGIC || !len || len % page || len > end - off ||
		    get64(head + PKT_CONTENT) > len * 8 || head[PKT_LAYER] != s->layer ||
		    get32(head + PKT_CPU) != s->cpu)
			return fail(ctf, -EIO, "babeltrace wrote a packet of %s (at %" PRIu64 ") that "
				    "is not laid out as expected: is this libbabeltrace-ctf 1.5?",
				    s->name, off);
		if (off == s->lib_done) {
			first_ts = get64(head + PKT_TS_BEGIN);
			if (!s->started)
				memcpy(s->head, head, PKT_HEAD);
		}
		ts = get64(head + PKT_TS_END);
		discarded = get64(head + PKT_DISCARDED);
	}

	buf = malloc(COPY_CHUNK > page ? COPY_CHUNK : page);
	if (!buf)
		return fail(ctf, -ENOMEM, "no memory to write %s", s->name);
	fd = openat(ctf->dirfd, s->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = 0;
	if (!s->started) {
		/* [filler][filler]: a page each, one write each. */
		make_filler(s, buf, page, first_ts, 0);
		ret = pwrite_all(fd, buf, page, 0);
		if (!ret)
			ret = pwrite_all(fd, buf, page, page);
		s->size = 2 * page;
		s->filler = page;
		s->filler_ts = first_ts;
		s->filler_discarded = 0;
		s->started = !ret;
	}
	if (!ret)
		ret = commit(s, fd, buf, end - s->lib_done, ts, discarded);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret) {
		/* Give the library's copy's blocks back (best effort). */
		(void)fallocate(s->lib.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)s->lib_done, (off_t)(end - s->lib_done));
		s->lib_done = end;
	}
out_free:
	free(buf);
	if (ret)
		return fail(ctf, ret, "cannot write %s/%s: %s", ctf->dir, s->name, strerror(-ret));
	return 0;
}

/* ---- flush ------------------------------------------------------------ */

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int set_context_uint(struct bt_ctf_field *pc, const char *name, uint64_t value, bool is_enum)
{
	struct bt_ctf_field *f = bt_ctf_field_structure_get_field(pc, name), *c = NULL;
	int ret = -1;

	if (f && is_enum)
		c = bt_ctf_field_enumeration_get_container(f);
	if (f && (!is_enum || c))
		ret = bt_ctf_field_unsigned_integer_set_value(is_enum ? c : f, value);
	if (c)
		bt_ctf_field_put(c);
	if (f)
		bt_ctf_field_put(f);
	return ret;
}

/* Write the stream's open packet, if it has events. */
static int close_packet(struct vperf_ctf_stream *s)
{
	struct vperf_ctf *ctf = s->ctf;
	struct bt_ctf_field *pc;
	int ret;

	if (!s->appended)
		return 0;
	/* The library's previous flush reset them. */
	pc = bt_ctf_stream_get_packet_context(s->lib.bt);
	ret = pc ? 0 : -1;
	if (!ret)
		ret = set_context_uint(pc, "layer", s->layer, true);
	if (!ret)
		ret = set_context_uint(pc, "cpu_id", s->cpu, false);
	if (pc)
		bt_ctf_field_put(pc);
	if (!ret)
		ret = bt_ctf_stream_flush(s->lib.bt);
	if (ret)
		return fail(ctf, -EIO, "babeltrace failed to write a packet of stream %s cpu %"
			    PRIu32 " in %s (disk full?)", layer_names[s->layer], s->cpu, ctf->dir);
	s->appended = 0;
	return 0;
}

int vperf_ctf__add_env(struct vperf_ctf *ctf, const char *key, const char *value)
{
	if (!ctf)
		return -EINVAL;
	if (ctf->broken)
		return fail(ctf, -EIO, "an earlier flush failed: the trace is incomplete");
	if (ctf->metadata && key && is_identifier(key) && strlen(key) < 256) {
		/* babeltrace adds keys to a frozen trace but never changes one. */
		const char *env = strstr(ctf->metadata, "\nenv {");
		const char *end = env ? strstr(env, "\n};") : NULL;
		char probe[300];
		const char *hit;

		snprintf(probe, sizeof(probe), "\n\t%s = ", key);
		hit = env ? strstr(env, probe) : NULL;
		if (hit && (!end || hit < end))
			return fail(ctf, -EEXIST, "environment key %s is already set", key);
	}
	return add_env(ctf, key, value);
}

int vperf_ctf__flush(struct vperf_ctf *ctf)
{
	size_t i = 0;
	int ret = 0;

	if (!ctf)
		return -EINVAL;
	if (ctf->broken)
		return fail(ctf, -EIO, "an earlier flush failed: the trace is incomplete");
	if (ctf->nr_pending)	/* none may mean no array yet (qsort() wants one) */
		qsort(ctf->pending, ctf->nr_pending, sizeof(*ctf->pending), by_time);
	for (; i < ctf->nr_pending; i++) {
		struct pending *p = &ctf->pending[i];

		/* Never fails: queued timestamps are checked against the watermark. */
		if (bt_ctf_clock_set_time(ctf->clock, (int64_t)p->ts)) {
			ret = fail(ctf, -EIO, "babeltrace refused timestamp %" PRIu64 " ns", p->ts);
			goto out_broken;
		}
		if (p->lost) {
			ret = close_packet(p->s);
			if (ret)
				goto out_broken;
			bt_ctf_stream_append_discarded_events(p->s->lib.bt, p->lost);
		}
		if (bt_ctf_stream_append_event(p->s->lib.bt, p->ev)) {
			ret = fail(ctf, -EIO, "babeltrace refused an event of stream %s cpu %" PRIu32,
				   layer_names[p->s->layer], p->s->cpu);
			goto out_broken;
		}
		/* The stream holds it now. */
		bt_ctf_event_put(p->ev);
		p->ev = NULL;
		p->s->appended++;
		ctf->watermark = p->ts;
	}
	ctf->nr_pending = 0;
	for (size_t k = 0; k < ctf->nr_streams; k++) {
		ret = close_packet(ctf->streams[k]);
		if (!ret)
			ret = publish(ctf->streams[k]);
		if (ret)
			goto out_broken;
	}
	return write_metadata(ctf);

out_broken:
	ctf->broken = true;
	for (; i < ctf->nr_pending; i++)
		if (ctf->pending[i].ev)
			bt_ctf_event_put(ctf->pending[i].ev);
	ctf->nr_pending = 0;
	return ret;
}
