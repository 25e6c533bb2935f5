/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets that write CTF traces check of each trace they write (fuzz-convert: the
 * converter's; fuzz-report: vperf export --to ctf's), besides ASan and UBSan:
 *   - the metadata: vperf's CTF 1.8 text, its braces balanced outside strings and comments;
 *   - every stream file, byte by byte: a sequence of whole packets (docs/recording.md sections 3
 *     and 6), each with the CTF magic and the trace's UUID, sizes that fit (content within
 *     packet, packets ending at the file's end), time stamps that never go back within the
 *     packet or from one packet to the next, a running discarded count that never falls, and
 *     the layer and CPU of the file's name in every packet's context;
 *   - and then babeltrace2 itself (source.ctf.fs, filter.utils.muxer) reads the trace to its
 *     end, in time order, and counts its events by class.
 * A failed check prints what and aborts: libFuzzer keeps the input as a crash.  File-local
 * functions only: each target includes this once.
 */
#ifndef VPERF_FUZZ_CTF_CHECK_H
#define VPERF_FUZZ_CTF_CHECK_H

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

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

/* The whole file at dir/name (at most max bytes, else a failure), NUL-terminated; *len its size. */
static unsigned char *fuzz_slurp(const char *dir, const char *name, size_t max, size_t *len)
{
	char path[4096];
	unsigned char *buf;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size > max)
		fuzz_fail("%s: not a regular file of at most %zu bytes", path, max);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		abort();
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + *len, (size_t)st.st_size - *len, (off_t)*len);

		if (n <= 0)
			fuzz_fail("%s: cannot read it", path);
		*len += (size_t)n;
	}
	buf[*len] = 0;
	close(fd);
	return buf;
}

/* The metadata: CTF 1.8 of vperf's writer, braces balanced outside strings and comments. */
static void fuzz_check_metadata(const char *dir, unsigned char uuid[16])
{
	size_t len;
	unsigned char *m = fuzz_slurp(dir, "metadata", 16u << 20, &len);
	const char *s = (const char *)m, *u;
	long depth = 0;

	if (strlen(s) != len || strncmp(s, "/* CTF 1.8 */", 13) || !strstr(s, "vperf_version"))
		fuzz_fail("%s/metadata is not vperf's CTF 1.8 text", dir);
	for (size_t i = 0; i < len; i++) {
		if (m[i] == '"') {		/* strings: the writer leaves no quote or backslash */
			while (++i < len && m[i] != '"')
				if (m[i] == '\\' || m[i] == '\n')
					fuzz_fail("%s/metadata: a string with %#x", dir, m[i]);
		} else if (m[i] == '/' && i + 1 < len && m[i + 1] == '*') {
			const char *end = strstr(s + i + 2, "*/");

			if (!end)
				fuzz_fail("%s/metadata: an open comment", dir);
			i = (size_t)(end - s) + 1;
		} else if (m[i] == '{') {
			depth++;
		} else if (m[i] == '}' && --depth < 0) {
			fuzz_fail("%s/metadata: a } without its {", dir);
		} else if (m[i] < 0x20 && m[i] != '\n' && m[i] != '\t') {
			fuzz_fail("%s/metadata: control byte %#x", dir, m[i]);
		}
	}
	if (depth)
		fuzz_fail("%s/metadata: %ld braces left open", dir, depth);
	u = strstr(s, "\tuuid = \"");
	if (!u || sscanf(u + 9, "%2hhx%2hhx%2hhx%2hhx-%2hhx%2hhx-%2hhx%2hhx-%2hhx%2hhx-"
			 "%2hhx%2hhx%2hhx%2hhx%2hhx%2hhx", &uuid[0], &uuid[1], &uuid[2], &uuid[3],
			 &uuid[4], &uuid[5], &uuid[6], &uuid[7], &uuid[8], &uuid[9], &uuid[10],
			 &uuid[11], &uuid[12], &uuid[13], &uuid[14], &uuid[15]) != 16)
		fuzz_fail("%s/metadata: no trace uuid", dir);
	free(m);
}

static uint64_t fuzz_get(const unsigned char *p, unsigned int n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);	/* the trace's byte order is the host's (x86: little-endian) */
	return v;
}

/*
 * Stream file name of dir: whole packets laid out as ctf.c writes them (PKT_* there: magic u32,
 * uuid 16 bytes, stream_id u32, then timestamp_begin, timestamp_end, content_size, packet_size,
 * events_discarded u64, layer u8, cpu_id u32).  Returns its packets.
 */
static size_t fuzz_check_stream(const char *dir, const char *name, const unsigned char uuid[16],
				const char *const *layers, unsigned int nr_layers)
{
	size_t len, off = 0, nr = 0;
	unsigned char *f = fuzz_slurp(dir, name, 256u << 20, &len);
	uint64_t last_end = 0, last_discarded = 0;
	unsigned int layer = nr_layers, cpu;
	char rest[16];

	for (unsigned int i = 0; i < nr_layers; i++) {
		size_t n = strlen(layers[i]);

		if (!strncmp(name, layers[i], n) && sscanf(name + n, "_cpu%u%15s", &cpu, rest) == 1)
			layer = i;
	}
	if (layer == nr_layers)
		fuzz_fail("%s/%s: not a stream file's name (<layer>_cpu<N>)", dir, name);
	while (off < len) {
		const unsigned char *p = f + off;
		uint64_t begin, end, content, size;

		if (len - off < 69)
			fuzz_fail("%s/%s: %zu bytes at %zu, less than a packet header", dir, name,
				  len - off, off);
		begin = fuzz_get(p + 24, 8);
		end = fuzz_get(p + 32, 8);
		content = fuzz_get(p + 40, 8);
		size = fuzz_get(p + 48, 8);
		if (fuzz_get(p, 4) != 0xc1fc1fc1u || memcmp(p + 4, uuid, 16))
			fuzz_fail("%s/%s: the packet at %zu has no CTF magic or another trace's uuid",
				  dir, name, off);
		if (size % 8 || size / 8 < 69 || size / 8 > len - off || content > size ||
		    content < 69 * 8)
			fuzz_fail("%s/%s: the packet at %zu has sizes %" PRIu64 "/%" PRIu64 " bits in "
				  "%zu bytes", dir, name, off, content, size, len - off);
		if (begin > end || begin < last_end)
			fuzz_fail("%s/%s: the packet at %zu runs %" PRIu64 "..%" PRIu64 " after one that "
				  "ended at %" PRIu64, dir, name, off, begin, end, last_end);
		if (fuzz_get(p + 56, 8) < last_discarded)
			fuzz_fail("%s/%s: the packet at %zu has fewer discarded events than the last",
				  dir, name, off);
		if (p[64] != layer || fuzz_get(p + 65, 4) != cpu)
			fuzz_fail("%s/%s: the packet at %zu is of layer %u cpu %" PRIu64, dir, name,
				  off, p[64], fuzz_get(p + 65, 4));
		last_end = end;
		last_discarded = fuzz_get(p + 56, 8);
		off += size / 8;
		nr++;
	}
	free(f);
	return nr;
}

/* The trace's structure (metadata, then each stream file): its number of stream files. */
static size_t fuzz_check_trace_files(const char *dir, const char *const *layers,
				     unsigned int nr_layers)
{
	unsigned char uuid[16];
	struct dirent *de;
	size_t nr = 0;
	DIR *d;

	fuzz_check_metadata(dir, uuid);
	d = opendir(dir);
	if (!d)
		fuzz_fail("%s: cannot read it", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "metadata"))
			continue;
		fuzz_check_stream(dir, de->d_name, uuid, layers, nr_layers);
		nr++;
	}
	closedir(d);
	return nr;
}

/* ---- babeltrace2 reads it ---- */

struct fuzz_bt2 {
	uint64_t events;		/* all of them */
	uint64_t lost_events;		/* of class lost_events */
	int64_t last_ns;
	bool have_last;
	bool backwards;
};

static bt_graph_simple_sink_component_initialize_func_status fuzz_bt2_init(bt_message_iterator *it,
									     void *data)
{
	(void)it;
	(void)data;
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static bt_graph_simple_sink_component_consume_func_status fuzz_bt2_consume(bt_message_iterator *it,
									   void *data)
{
	struct fuzz_bt2 *k = data;
	bt_message_array_const msgs;
	uint64_t n = 0;

	switch (bt_message_iterator_next(it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (bt_message_get_type(msgs[i]) == BT_MESSAGE_TYPE_EVENT) {
			const bt_event *ev = bt_message_event_borrow_event_const(msgs[i]);
			const char *cls = bt_event_class_get_name(bt_event_borrow_class_const(ev));
			const bt_clock_snapshot *cs =
				bt_message_event_borrow_default_clock_snapshot_const(msgs[i]);
			int64_t ns;

			k->events++;
			k->lost_events += cls && !strcmp(cls, "lost_events");
			if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) ==
			    BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
				k->backwards |= k->have_last && ns < k->last_ns;
				k->last_ns = ns;
				k->have_last = true;
			}
		}
		bt_message_put_ref(msgs[i]);
	}
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

static const bt_plugin *fuzz_bt2_ctf, *fuzz_bt2_utils;

/*
 * Find babeltrace2's ctf and utils plugins, and keep them: their shared objects stay loaded for
 * the process's life (so that LeakSanitizer can name them in a report).
 */
static void fuzz_bt2_plugins(void)
{
	if (!fuzz_bt2_ctf &&
	    (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_TRUE, &fuzz_bt2_ctf) ||
	     bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_TRUE, &fuzz_bt2_utils)))
		fuzz_fail("babeltrace2's ctf and utils plugins are not installed");
}

/* babeltrace2 reads the trace in dir to its end, in time order; its event counts into k. */
static void fuzz_bt2_read(const char *dir, struct fuzz_bt2 *k)
{
	const bt_plugin *ctf, *utils;
	const bt_component_class_source *fs_cls;
	const bt_component_class_filter *mux_cls;
	const bt_component_source *src;
	const bt_component_filter *mux;
	const bt_component_sink *snk;
	bt_value *params = bt_value_map_create(), *inputs;
	bt_graph *g = bt_graph_create(0);
	bt_graph_run_status rs;

	memset(k, 0, sizeof(*k));
	fuzz_bt2_plugins();
	ctf = fuzz_bt2_ctf;
	utils = fuzz_bt2_utils;
	fs_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
	mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
	if (!g || !params || !fs_cls || !mux_cls ||
	    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
	    bt_value_array_append_string_element(inputs, dir))
		abort();
	if (bt_graph_add_source_component(g, fs_cls, "src", params, BT_LOGGING_LEVEL_NONE, &src))
		fuzz_fail("babeltrace2 does not take %s as a CTF trace", dir);
	if (bt_graph_add_filter_component(g, mux_cls, "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) ||
	    bt_graph_add_simple_sink_component(g, "check", fuzz_bt2_init, fuzz_bt2_consume, NULL, k,
					       &snk))
		abort();
	for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++)
		if (bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(src, i),
					   bt_component_filter_borrow_input_port_by_index_const(mux, i),
					   NULL))
			abort();
	if (bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
				   bt_component_sink_borrow_input_port_by_index_const(snk, 0), NULL))
		abort();
	do
		rs = bt_graph_run(g);
	while (rs == BT_GRAPH_RUN_STATUS_AGAIN);
	if (rs != BT_GRAPH_RUN_STATUS_OK)
		fuzz_fail("babeltrace2 cannot read %s to its end (status %d)", dir, (int)rs);
	if (k->backwards)
		fuzz_fail("babeltrace2 read %s's events out of time order", dir);
	bt_value_put_ref(params);
	bt_graph_put_ref(g);
}

/* Empty directory dir (a trace: files only) and remove it; nothing there is fine. */
static void fuzz_rm_trace(const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (unlink(path))
				fuzz_fail("cannot remove %s", path);
		}
	closedir(d);
	if (rmdir(dir))
		fuzz_fail("cannot remove %s", dir);
}

#endif /* VPERF_FUZZ_CTF_CHECK_H */
