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

#include "ctf-int.h"
#include "escape.h"

#ifndef VPERF_RECORD_VERSION
#define VPERF_RECORD_VERSION "unknown"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))




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


const char *vperf_ctf__strerror(const struct vperf_ctf *ctf)
{
	if (!ctf)
		return "no CTF writer";
	return ctf->err[0] ? ctf->err : "no error";
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
	ret = vperf__ctf_add_env(ctf, "hostname", hostname);
	if (!ret)
		ret = vperf__ctf_add_env(ctf, "vperf_version", VPERF_RECORD_VERSION);
	if (!ret && cfg->vm_name)
		ret = vperf__ctf_add_env(ctf, "vm_name", cfg->vm_name);
	if (!ret && layers[0])
		ret = vperf__ctf_add_env(ctf, "layers", layers);
	if (!ret && cfg->clock_note)
		ret = vperf__ctf_add_env(ctf, "clock_note", cfg->clock_note);
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
		ret = vperf__ctf_add_env(ctf, key, cfg->env[i].value);
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

	if (!vperf__ctf_is_identifier(name))
		return fail(ctf, -EINVAL, "clock name \"%s\" is not an identifier", name);
	if (cfg->clock_description && !vperf__ctf_is_metadata_text(cfg->clock_description))
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
		if (!classes[i].name) /* vperf__ctf_check_class() says so below */
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
		ret = vperf__ctf_make_stream_class(ctf);
	if (ret)
		goto out_writer;

	ctf->classes = calloc(nr_classes + 1, sizeof(*ctf->classes));
	if (!ctf->classes) {
		ret = fail(ctf, -ENOMEM, "no memory for %zu event classes", nr_classes);
		goto out_writer;
	}
	for (size_t i = 0; i <= nr_classes; i++) {
		ret = vperf__ctf_make_class(ctf, i < nr_classes ? &classes[i] : &lost_class,
					    &ctf->classes[i]);
		if (ret)
			goto out_classes;
	}
	ctf->nr_classes = nr_classes;
	ret = lib_stream(ctf, &ctf->spare);
	if (ret)
		goto out_classes;
	/* Readable from now on: an empty trace. */
	ret = vperf__ctf_write_metadata(ctf);
	if (ret)
		goto out_spare;
	*out = ctf;
	return 0;

out_spare:
	put_lib_stream(&ctf->spare);
out_classes:
	for (size_t i = 0; i <= nr_classes; i++)
		vperf__ctf_free_class(&ctf->classes[i]);
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
		vperf__ctf_free_class(&ctf->classes[i]);
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
			    vperf__ctf_type_name(f->type), i, vperf__ctf_type_name(v->type));
	switch (f->type) {
	case VPERF_CTF_TYPE_U8:
	case VPERF_CTF_TYPE_U16:
	case VPERF_CTF_TYPE_U32:
		if (v->u > vperf__ctf_type_max(f->type))
			return fail(ctf, -ERANGE, "%s.%s: %" PRIu64 " does not fit a %s", c->name,
				    f->name, v->u, vperf__ctf_type_name(f->type));
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
		bad = esc_utf8_error(v->str, len);
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
