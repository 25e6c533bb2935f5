// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vperf report's reader (profiler/report) and every exporter of vperf export
 * and vperf timeline (profiler/export) on hostile CTF recordings.  It calls them as the CLI does
 * and checks what they give; it changes none of them.
 *
 * Input: one byte of options, then files, each a name byte, a u32 length (little-endian) and
 * its bytes, until the input ends (a cut file ends it; a name given twice: the last one):
 *   name % 22:  0 metadata;  1..20 <layer>_cpu<k>, layer (name - 1) / 4 of host_kernel, vmm,
 *               guest_kernel, guest_user, host_user, k (name - 1) % 4;  21 .raw/guest/files
 *   options:    bit 0 exporters of one event take the last sampled event, not the first;
 *               bits 1-2 the timeline's window: all, its first half, its second half, past its end
 * The recording is written to /dev/shm/vperf-fuzz-report-PID/rec.
 *
 * Checked besides ASan, UBSan and LSan, when vperf_report__open() reads it (else: -errno and a
 * reason): the recording it gives is consistent (every index in range, time-ordered timeline
 * events, each sample's event known); every frame resolves to a name; histograms count every
 * sample of their event; and every export is well-formed or an error with a reason: folded's
 * lines "stack count", distinct, counting the event's samples; flame's and the timeline's SVG
 * well-formed XML (balanced tags, quoted attributes, entities, UTF-8, no control bytes); chrome's
 * JSON valid; pprof's gzip a profile.proto Profile whose samples, locations, functions and
 * strings refer to each other in range; the ctf export's LTTng traces well-formed byte by byte
 * and read by babeltrace2 to their end (ctf-check.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "ctf-check.h"
#include "export.h"
#include "profile.pb-c.h"
#include "report.h"
#include "timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
const char *__lsan_default_suppressions(void);

/*
 * babeltrace2 2.0.4's source.ctf.fs leaks when it refuses a trace or a packet: not vperf's, and
 * not to stop the fuzzer on.  What that plugin allocates itself is let go (its shared object
 * stays loaded: LLVMFuzzerInitialize()), and what glib allocates: with the fast unwinder, a
 * stack ends in glib (built without frame pointers) before it reaches the plugin.  (So a
 * babeltrace2 object the reader forgets to put would not be reported either; the reader's own
 * allocations are.)
 */
const char *__lsan_default_suppressions(void)
{
	return "leak:babeltrace-plugin-ctf.so\nleak:libglib-2.0.so\n";
}

#define NR_NAMES	22
#define MAX_DEPTH	256

static const char *const layers[] = { "host_kernel", "vmm", "guest_kernel", "guest_user",
				      "host_user" };
static const char *const lttng_layers[] = { "host_kernel", "vmm", "guest_kernel", "guest_user",
					    "host_user" };

static char work[64], rec[96], out_dir[96];

static void rm_rec(void);

/* The work folder goes with the process (a crash leaves it: it holds the recording read). */
static void remove_work(void)
{
	rm_rec();
	rmdir(work);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(work, sizeof(work), "/dev/shm/vperf-fuzz-report-%d", (int)getpid());
	snprintf(rec, sizeof(rec), "%s/rec", work);
	snprintf(out_dir, sizeof(out_dir), "%s/ctf", work);
	if (mkdir(work, 0700) && errno != EEXIST)
		fuzz_fail("cannot make %s", work);
	bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
	fuzz_bt2_plugins();
	atexit(remove_work);
	return 0;
}

/* ---- the recording's files ---- */

static void name_of(unsigned int n, char *buf, size_t len)
{
	n %= NR_NAMES;
	if (!n)
		snprintf(buf, len, "%s/metadata", rec);
	else if (n == NR_NAMES - 1)
		snprintf(buf, len, "%s/.raw/guest/files", rec);
	else
		snprintf(buf, len, "%s/%s_cpu%u", rec, layers[(n - 1) / 4], (n - 1) % 4);
}

static void rm_rec(void)
{
	char path[256];

	for (unsigned int n = 0; n < NR_NAMES; n++) {
		name_of(n, path, sizeof(path));
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/.raw/guest", rec);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/.raw", rec);
	rmdir(path);
	if (rmdir(rec) && errno != ENOENT)
		fuzz_fail("cannot remove %s", rec);
}

/* The input's files into rec; the options byte. */
static unsigned int write_rec(const uint8_t *data, size_t size)
{
	char path[256];
	size_t o = 1;

	if (mkdir(rec, 0700))
		fuzz_fail("cannot make %s", rec);
	while (size - o >= 5) {
		unsigned int n = data[o];
		uint32_t len;
		int fd;

		memcpy(&len, data + o + 1, 4);
		o += 5;
		if (len > size - o)
			break;
		if (n % NR_NAMES == NR_NAMES - 1) {
			snprintf(path, sizeof(path), "%s/.raw", rec);
			mkdir(path, 0700);
			snprintf(path, sizeof(path), "%s/.raw/guest", rec);
			mkdir(path, 0700);
		}
		name_of(n, path, sizeof(path));
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, data + o, len) != (ssize_t)len || close(fd))
			fuzz_fail("cannot write %s", path);
		o += len;
	}
	return data[0];
}

/* ---- text checks ---- */

/* Is s[0..n) UTF-8 (no overlong forms, surrogates, or past U+10FFFF) without NUL? */
static bool utf8_ok(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		unsigned int len, cp;

		if (!c)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		if (!len || n - i < len)
			return false;
		cp = c & (0x7f >> len);
		for (unsigned int k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

static bool xml_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == ':' || c == '.' || (unsigned char)c >= 0x80;
}

/* An entity reference at s ("&amp;", "&#60;", "&#x3c;"): its length, or 0. */
static size_t xml_entity(const char *s)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	size_t i = 2;

	for (size_t k = 0; k < 5; k++)
		if (!strncmp(s, named[k], strlen(named[k])))
			return strlen(named[k]);
	if (s[1] != '#')
		return 0;
	if (s[2] == 'x') {
		for (i = 3; (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			    (s[i] >= 'A' && s[i] <= 'F'); i++)
			;
		return i > 3 && s[i] == ';' ? i + 1 : 0;
	}
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		;
	return i > 2 && s[i] == ';' ? i + 1 : 0;
}

/* Well-formed XML: one root element, balanced tags, quoted attributes, entities, UTF-8. */
static void check_xml(const char *what, const char *s, size_t n)
{
	static char stack[MAX_DEPTH][64];
	size_t depth = 0, roots = 0;

	if (!utf8_ok((const unsigned char *)s, n))
		fuzz_fail("%s: not UTF-8", what);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			fuzz_fail("%s: control byte %#x at %zu", what, s[i], i);
	for (size_t i = 0; i < n;) {
		if (s[i] == '&') {
			size_t e = xml_entity(s + i);

			if (!e)
				fuzz_fail("%s: a bare & at %zu", what, i);
			i += e;
			continue;
		}
		if (s[i] != '<') {
			if (!depth && s[i] != ' ' && s[i] != '\n' && s[i] != '\t' && s[i] != '\r')
				fuzz_fail("%s: text outside the root at %zu", what, i);
			i++;
			continue;
		}
		if (!strncmp(s + i, "<?", 2) || !strncmp(s + i, "<!--", 4) || !strncmp(s + i, "<!DOCTYPE", 9)) {
			const char *end = strstr(s + i, s[i + 1] == '?' ? "?>" : s[i + 2] == '-' ? "-->" : ">");

			if (!end)
				fuzz_fail("%s: an open declaration or comment at %zu", what, i);
			i = (size_t)(end - s) + (s[i + 1] == '?' ? 2 : s[i + 2] == '-' ? 3 : 1);
			continue;
		}
		if (s[i + 1] == '/') {
			size_t k = i + 2, len;

			while (k < n && xml_name_char(s[k]))
				k++;
			len = k - i - 2;
			if (!depth || len >= 64 || strncmp(stack[depth - 1], s + i + 2, len) ||
			    stack[depth - 1][len] || k >= n || s[k] != '>')
				fuzz_fail("%s: an end tag that does not close the open one at %zu", what, i);
			depth--;
			i = k + 1;
			continue;
		}
		{
			size_t k = i + 1, len;

			while (k < n && xml_name_char(s[k]))
				k++;
			len = k - i - 1;
			if (!len || len >= 64)
				fuzz_fail("%s: a tag without a name at %zu", what, i);
			if (depth >= MAX_DEPTH)
				fuzz_fail("%s: nested too deep", what);
			if (!depth && roots++)
				fuzz_fail("%s: a second root element at %zu", what, i);
			memcpy(stack[depth], s + i + 1, len);
			stack[depth][len] = 0;
			for (;;) {		/* attributes */
				while (k < n && (s[k] == ' ' || s[k] == '\n' || s[k] == '\t'))
					k++;
				if (k < n && (s[k] == '>' || (s[k] == '/' && k + 1 < n && s[k + 1] == '>')))
					break;
				if (k >= n || !xml_name_char(s[k]))
					fuzz_fail("%s: a bad attribute at %zu", what, k);
				while (k < n && xml_name_char(s[k]))
					k++;
				if (k + 1 >= n || s[k] != '=' || (s[k + 1] != '"' && s[k + 1] != '\''))
					fuzz_fail("%s: an attribute without a quoted value at %zu", what, k);
				{
					char q = s[k + 1];

					for (k += 2; k < n && s[k] != q; k++) {
						if (s[k] == '<')
							fuzz_fail("%s: < in an attribute at %zu", what, k);
						if (s[k] == '&') {
							size_t e = xml_entity(s + k);

							if (!e)
								fuzz_fail("%s: a bare & in an attribute at %zu",
									  what, k);
							k += e - 1;
						}
					}
					if (k >= n)
						fuzz_fail("%s: an open attribute value", what);
					k++;
				}
			}
			if (s[k] == '/')
				k++;
			else
				depth++;
			i = k + 1;
		}
	}
	if (depth || roots != 1)
		fuzz_fail("%s: %zu elements left open, %zu roots", what, depth, roots);
}

/* ---- JSON ---- */

static size_t json_value(const char *what, const char *s, size_t n, size_t i, unsigned int depth);

static size_t json_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i;
}

static size_t json_string(const char *what, const char *s, size_t n, size_t i)
{
	size_t start = ++i;

	for (; i < n && s[i] != '"'; i++) {
		if ((unsigned char)s[i] < 0x20)
			fuzz_fail("%s: control byte %#x in a string at %zu", what, s[i], i);
		if (s[i] == '\\') {
			if (++i >= n || !strchr("\"\\/bfnrtu", s[i]))
				fuzz_fail("%s: a bad escape at %zu", what, i);
			if (s[i] == 'u')
				for (int k = 0; k < 4; k++)
					if (++i >= n || !strchr("0123456789abcdefABCDEF", s[i]))
						fuzz_fail("%s: a bad \\u escape at %zu", what, i);
		}
	}
	if (i >= n)
		fuzz_fail("%s: an open string", what);
	if (!utf8_ok((const unsigned char *)s + start, i - start))
		fuzz_fail("%s: a string that is not UTF-8 at %zu", what, start);
	return i + 1;
}

static size_t json_number(const char *what, const char *s, size_t n, size_t i)
{
	size_t d;

	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else {
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			fuzz_fail("%s: a bad number at %zu", what, i);
	}
	if (i < n && s[i] == '.') {
		for (d = ++i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			fuzz_fail("%s: a bad fraction at %zu", what, i);
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			fuzz_fail("%s: a bad exponent at %zu", what, i);
	}
	return i;
}

static size_t json_value(const char *what, const char *s, size_t n, size_t i, unsigned int depth)
{
	if (depth > MAX_DEPTH)
		fuzz_fail("%s: nested too deep", what);
	i = json_ws(s, n, i);
	if (i >= n)
		fuzz_fail("%s: a value missing at its end", what);
	if (s[i] == '{' || s[i] == '[') {
		char close = s[i] == '{' ? '}' : ']';
		bool obj = s[i] == '{';

		i = json_ws(s, n, i + 1);
		if (i < n && s[i] == close)
			return i + 1;
		for (;;) {
			if (obj) {
				i = json_ws(s, n, i);
				if (i >= n || s[i] != '"')
					fuzz_fail("%s: an object key that is no string at %zu", what, i);
				i = json_ws(s, n, json_string(what, s, n, i));
				if (i >= n || s[i] != ':')
					fuzz_fail("%s: no : after a key at %zu", what, i);
				i++;
			}
			i = json_ws(s, n, json_value(what, s, n, i, depth + 1));
			if (i < n && s[i] == ',') {
				i++;
				continue;
			}
			if (i < n && s[i] == close)
				return i + 1;
			fuzz_fail("%s: no , or %c at %zu", what, close, i);
		}
	}
	if (s[i] == '"')
		return json_string(what, s, n, i);
	if (!strncmp(s + i, "true", 4) || !strncmp(s + i, "null", 4))
		return i + 4;
	if (!strncmp(s + i, "false", 5))
		return i + 5;
	return json_number(what, s, n, i);
}

static void check_json(const char *what, const char *s, size_t n)
{
	if (json_ws(s, n, json_value(what, s, n, 0, 0)) != n)
		fuzz_fail("%s: bytes after the JSON value", what);
}

/* ---- folded ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "stack count" lines, distinct stacks, counts summing to the event's samples. */
static void check_folded(const struct vperf_report *r, int event, char *s, size_t n)
{
	uint64_t want = 0, sum = 0;
	char **stacks = NULL;
	size_t nr = 0;

	for (size_t i = 0; i < r->nr_samples; i++)
		want += (int)r->samples[i].event == event;
	if (n && s[n - 1] != '\n')
		fuzz_fail("folded: no line break at its end");
	for (char *line = s, *nl; line < s + n; line = nl + 1) {
		char *sp, *end;
		unsigned long long c;

		nl = memchr(line, '\n', (size_t)(s + n - line));
		*nl = 0;
		sp = strrchr(line, ' ');
		if (!sp || sp == line || strlen(line) != (size_t)(nl - line))
			fuzz_fail("folded: a line that is not \"stack count\": %s", line);
		errno = 0;
		c = strtoull(sp + 1, &end, 10);
		if (*end || !c || errno || sp[1] < '0' || sp[1] > '9')
			fuzz_fail("folded: a bad count in: %s", line);
		sum += c;
		*sp = 0;
		stacks = realloc(stacks, (nr + 1) * sizeof(*stacks));
		if (!stacks)
			abort();
		stacks[nr++] = line;
	}
	if (sum != want)
		fuzz_fail("folded: counts sum to %" PRIu64 ", the event has %" PRIu64 " samples", sum,
			  want);
	if (nr)
		qsort(stacks, nr, sizeof(*stacks), cmp_str);
	for (size_t i = 1; i < nr; i++)
		if (!strcmp(stacks[i - 1], stacks[i]))
			fuzz_fail("folded: stack %s twice", stacks[i]);
	free(stacks);
}

/* ---- pprof ---- */

static void check_pprof(const unsigned char *gz, size_t n)
{
	size_t cap = 1 << 20, len = 0;
	unsigned char *buf = malloc(cap);
	z_stream z = { 0 };
	Vperf__Pprof__Profile *p;
	int zr;

	if (!buf || inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		abort();
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)n;
	do {
		if (len == cap) {
			if (cap >= (256u << 20))
				fuzz_fail("pprof: over 256 MiB inflated");
			cap *= 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		z.next_out = buf + len;
		z.avail_out = (uInt)(cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = cap - z.avail_out;
	} while (zr == Z_OK);
	inflateEnd(&z);
	if (zr != Z_STREAM_END || z.avail_in)
		fuzz_fail("pprof: not one whole gzip stream (zlib %d)", zr);
	p = vperf__pprof__profile__unpack(NULL, len, buf);
	if (!p)
		fuzz_fail("pprof: not a profile.proto Profile");
	if (!p->n_string_table || p->string_table[0][0])
		fuzz_fail("pprof: the string table does not start with \"\"");
	for (size_t i = 0; i < p->n_string_table; i++)
		if (!utf8_ok((const unsigned char *)p->string_table[i], strlen(p->string_table[i]))) {
			for (const unsigned char *c = (const unsigned char *)p->string_table[i]; *c; c++)
				fprintf(stderr, c[0] >= 0x20 && c[0] < 0x7f ? "%c" : "\\x%02x", *c);
			fprintf(stderr, "\n");
			fuzz_fail("pprof: string %zu (above) is not UTF-8 (protobuf strings must be)", i);
		}
	for (size_t i = 0; i < p->n_sample_type; i++)
		if (p->sample_type[i]->type < 0 || (size_t)p->sample_type[i]->type >= p->n_string_table ||
		    p->sample_type[i]->unit < 0 || (size_t)p->sample_type[i]->unit >= p->n_string_table)
			fuzz_fail("pprof: a sample type names no string");
	for (size_t i = 0; i < p->n_function; i++)
		if (!p->function[i]->id || p->function[i]->name < 0 ||
		    (size_t)p->function[i]->name >= p->n_string_table || p->function[i]->filename < 0 ||
		    (size_t)p->function[i]->filename >= p->n_string_table)
			fuzz_fail("pprof: function %zu names no string", i);
	for (size_t i = 0; i < p->n_location; i++) {
		const Vperf__Pprof__Location *l = p->location[i];

		if (!l->id)
			fuzz_fail("pprof: location %zu has id 0", i);
		for (size_t k = 0; k < l->n_line; k++) {
			bool found = false;

			for (size_t f = 0; f < p->n_function && !found; f++)
				found = p->function[f]->id == l->line[k]->function_id;
			if (!found)
				fuzz_fail("pprof: location %" PRIu64 " names no function", l->id);
		}
	}
	for (size_t i = 0; i < p->n_sample; i++) {
		const Vperf__Pprof__Sample *s = p->sample[i];

		if (s->n_value != p->n_sample_type)
			fuzz_fail("pprof: sample %zu has %zu values for %zu types", i, s->n_value,
				  p->n_sample_type);
		for (size_t k = 0; k < s->n_location_id; k++) {
			bool found = false;

			for (size_t l = 0; l < p->n_location && !found; l++)
				found = p->location[l]->id == s->location_id[k];
			if (!found)
				fuzz_fail("pprof: sample %zu names no location %" PRIu64, i,
					  s->location_id[k]);
		}
	}
	vperf__pprof__profile__free_unpacked(p, NULL);
	free(buf);
}

/* ---- the recording as the reader gives it ---- */

static void check_report(struct vperf_report *r)
{
	char buf[512];

	for (size_t i = 0; i < r->nr_samples; i++) {
		const struct vperf_report_sample *s = &r->samples[i];

		if (s->frame > r->nr_frames || s->nr_frames > r->nr_frames - s->frame ||
		    s->counts > r->nr_counts || s->nr_counts > r->nr_counts - s->counts ||
		    s->event >= r->nr_events || s->thread < -1 || s->thread >= (int32_t)r->nr_threads ||
		    (s->comm != UINT32_MAX && s->comm >= r->nr_strings))
			fuzz_fail("sample %zu: an index out of range", i);
	}
	for (size_t i = 0; i < r->nr_tlevs; i++) {
		const struct vperf_report_tlev *e = &r->tlevs[i];

		if (e->kind >= VPERF_REPORT_NR_EV_KINDS || e->thread < -1 ||
		    e->thread >= (int32_t)r->nr_threads || e->other < -1 ||
		    (e->kind != VPERF_REPORT_EV_VMM_EXIT && e->kind != VPERF_REPORT_EV_IRQ &&
		     e->other >= (int32_t)r->nr_threads) ||
		    (e->str != UINT32_MAX && e->str >= r->nr_strings))
			fuzz_fail("timeline event %zu: an index out of range", i);
		if (i && e->ts < r->tlevs[i - 1].ts)
			fuzz_fail("timeline events out of time order at %zu", i);
	}
	for (size_t i = 0; i < r->nr_threads; i++)
		if (r->threads[i].comm != UINT32_MAX && r->threads[i].comm >= r->nr_strings)
			fuzz_fail("thread %zu: its comm is no string", i);
	for (size_t i = 0; i < r->nr_frames; i++) {
		const struct vperf_report_frame *f = vperf_report__frame(r, i);

		if (!f->sym || (f->map >= 0 && (size_t)f->map >= r->nr_maps))
			fuzz_fail("frame %zu: no name, or a mapping out of range", i);
		if (strlen(vperf_report__frame_name(r, i, buf, sizeof(buf))) >= 1u << 20)
			fuzz_fail("frame %zu: a name past 1 MiB", i);
	}
	for (size_t i = 0; i < r->nr_threads; i++)
		vperf_report__thread_name(r, (int32_t)i, buf, sizeof(buf));
}

/*
 * --exits: each exit's cost lies within it, the table's rows add up to the exits, and the
 * exits as samples (the exporters' input) keep the recording's frames in range.
 */
static void check_exits(struct vperf_report *r)
{
	static const enum vperf_exit_key keys[] = {
		VPERF_EXIT_KEY_TID, VPERF_EXIT_KEY_COMM, VPERF_EXIT_KEY_SYMBOL, VPERF_EXIT_KEY_DSO,
		VPERF_EXIT_KEY_REASON, VPERF_EXIT_KEY_VCPU,
	};
	struct vperf_report_analysis a;
	struct vperf_exit_table t;
	uint64_t count = 0;
	int ev;

	if (vperf_report__analyse(r, VPERF_ANALYSE_EXITS, &a))
		return;
	for (size_t i = 0; i < a.nr_exits; i++) {
		const struct vperf_report_exit *x = &a.exits[i];

		if (x->end < x->ts || x->kvm_ns + x->vmm_ns + x->preempted_ns + x->sleep_ns > x->end - x->ts ||
		    x->tlev >= r->nr_tlevs || (x->thread >= 0 && (size_t)x->thread >= r->nr_threads))
			fuzz_fail("exit %zu: %" PRIu64 "..%" PRIu64 ", cost over its time or out of range",
				  i, x->ts, x->end);
	}
	if (!vperf_exit_table__build(r, &a, keys, sizeof(keys) / sizeof(keys[0]), &t)) {
		for (size_t i = 0; i < t.nr_rows; i++)
			count += t.rows[i].count;
		if (count != a.nr_exits || t.count != a.nr_exits)
			fuzz_fail("exits: rows count %" PRIu64 " of %zu exits", count, a.nr_exits);
		vperf_exit_table__exit(&t);
	}
	if (a.nr_exits && !vperf_report__add_exit_samples(r, &a, &ev))
		for (size_t i = 0; i < r->nr_samples; i++)
			if (r->samples[i].nr_frames && r->samples[i].frame + r->samples[i].nr_frames >
			    r->nr_frames)
				fuzz_fail("exit samples: sample %zu's frames out of range", i);
	vperf_report_analysis__exit(&a);
}

static void check_hist(struct vperf_report *r, int event)
{
	static const enum vperf_report_key keys[] = {
		VPERF_REPORT_KEY_COMM, VPERF_REPORT_KEY_DSO, VPERF_REPORT_KEY_SYMBOL,
		VPERF_REPORT_KEY_TID, VPERF_REPORT_KEY_PID, VPERF_REPORT_KEY_LAYER,
	};
	struct vperf_report_hist h;
	uint64_t want = 0, rows = 0;

	for (size_t i = 0; i < r->nr_samples; i++)
		want += (int)r->samples[i].event == event;
	if (vperf_report_hist__build(r, event, keys, sizeof(keys) / sizeof(keys[0]),
				     VPERF_HIST_CHAINS | VPERF_HIST_CHILDREN, &h))
		return;		/* -ENOMEM */
	for (size_t i = 0; i < h.nr_rows; i++) {
		uint64_t chains = 0;

		/* Children holds Self and is never more than every sample */
		if (h.rows[i].children_samples < h.rows[i].samples || h.rows[i].children_samples > want)
			fuzz_fail("hist: a row's Children %" PRIu64 " samples, Self %" PRIu64 ", of %"
				  PRIu64, h.rows[i].children_samples, h.rows[i].samples, want);
		rows += h.rows[i].samples;
		for (size_t c = 0; c < h.rows[i].nr_chains; c++) {
			chains += h.rows[i].chains[c].samples;
			if (h.rows[i].chains[c].sample >= r->nr_samples)
				fuzz_fail("hist: a chain's sample out of range");
		}
		if (chains != h.rows[i].samples)
			fuzz_fail("hist: a row's chains count %" PRIu64 " of its %" PRIu64 " samples",
				  chains, h.rows[i].samples);
	}
	if (h.samples != want || rows != want)
		fuzz_fail("hist: %" PRIu64 " samples (rows %" PRIu64 "), the event has %" PRIu64,
			  h.samples, rows, want);
	vperf_report_hist__exit(&h);
}

/* Run one exporter to a memory file; its output, or NULL after a refusal with a reason. */
static char *export_to_mem(struct vperf_report *r, const struct vperf_export_format *fmt, int event,
			   size_t *len)
{
	char *buf = NULL, why[512] = "";
	FILE *f = open_memstream(&buf, len);
	int err;

	if (!f)
		abort();
	err = fmt->write(r, event, f, why, sizeof(why));
	if (fclose(f))
		abort();
	if (err) {
		if (err > 0 || !why[0])
			fuzz_fail("export %s: %d without a reason", fmt->name, err);
		free(buf);
		return NULL;
	}
	return buf;
}

static void run_exports(struct vperf_report *r, unsigned int opts)
{
	int event = r->nr_events ? (opts & 1 ? (int)r->nr_events - 1 : 0) : -1;

	for (size_t i = 0; i < vperf_export_nr_formats; i++) {
		const struct vperf_export_format *fmt = &vperf_export_formats[i];
		char why[512] = "", *out;
		size_t len = 0;
		int ev = fmt->timeline && !(opts & 1) ? -1 : event;

		if (fmt->write_dir) {
			struct fuzz_bt2 bt;
			char sub[160];
			int err;

			err = fmt->write_dir(r, out_dir, why, sizeof(why));
			if (err && (err > 0 || !why[0]))
				fuzz_fail("export %s: %d without a reason", fmt->name, err);
			for (int k = 0; !err && k < 2; k++) {
				snprintf(sub, sizeof(sub), "%s/%s", out_dir, k ? "guest" : "host");
				if (access(sub, F_OK))
					continue;
				fuzz_check_trace_files(sub, lttng_layers, 5);
				fuzz_bt2_read(sub, &bt);
			}
			for (int k = 0; k < 2; k++) {
				snprintf(sub, sizeof(sub), "%s/%s", out_dir, k ? "guest" : "host");
				fuzz_rm_trace(sub);
			}
			rmdir(out_dir);
			continue;
		}
		if (ev < 0 && !fmt->timeline)
			continue;	/* no samples: the CLI says so before an export of one event */
		out = export_to_mem(r, fmt, ev, &len);
		if (!out)
			continue;
		if (!strcmp(fmt->name, "folded"))
			check_folded(r, ev, out, len);
		else if (!strcmp(fmt->name, "flame"))
			check_xml("flame", out, len);
		else if (!strcmp(fmt->name, "chrome"))
			check_json("chrome", out, len);
		else if (!strcmp(fmt->name, "pprof"))
			check_pprof((const unsigned char *)out, len);
		free(out);
	}
}

static void run_timeline(struct vperf_report *r, unsigned int opts)
{
	uint64_t span = r->last_ts > r->first_ts ? r->last_ts - r->first_ts : 0, from = 0,
		 to = UINT64_MAX;
	char *buf = NULL, why[512] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	switch ((opts >> 1) & 3) {
	case 1: to = span / 2; break;
	case 2: from = span / 2; break;
	case 3: from = span + 1; break;
	}
	if (!f)
		abort();
	err = vperf_timeline_svg(r, VPERF_TIMELINE_MIN_WIDTH, from, to, f, why, sizeof(why));
	if (fclose(f))
		abort();
	if (err && (err > 0 || !why[0]) && err != -ENOMEM)
		fuzz_fail("timeline: %d without a reason", err);
	if (!err)
		check_xml("timeline", buf, len);
	free(buf);
}

static void run_analyses(struct vperf_report *r)
{
	struct vperf_report_analysis a;
	struct vperf_report_slice *sl = NULL;
	size_t nr = 0;

	if (!vperf_report__running(r, &sl, &nr)) {
		for (size_t i = 0; i < nr; i++)
			if (sl[i].thread < 0 || (size_t)sl[i].thread >= r->nr_threads ||
			    sl[i].end < sl[i].start)
				fuzz_fail("running slice %zu: thread %d, %" PRIu64 "..%" PRIu64, i,
					  sl[i].thread, sl[i].start, sl[i].end);
		free(vperf_report__shown(r, sl, nr, -1));
		free(sl);
	}
	if (!vperf_report__analyse(r, VPERF_ANALYSE_SPANS, &a)) {
		for (size_t i = 0; i < a.nr_threads; i++) {
			uint64_t sum = 0;

			for (size_t k = 0; k < a.threads[i].nr_rows; k++)
				sum += a.threads[i].rows[k].ns;
			if (a.threads[i].end >= a.threads[i].start &&
			    sum != a.threads[i].end - a.threads[i].start) {
				for (size_t k = 0; k < a.threads[i].nr_rows; k++)
					fprintf(stderr, "  %s %s: %" PRIu64 " ns\n",
						vperf_report_state_names[a.threads[i].rows[k].state],
						a.threads[i].rows[k].detail, a.threads[i].rows[k].ns);
				fuzz_fail("states of thread %d (%" PRIu64 "..%" PRIu64 "): %" PRIu64 " ns in "
					  "rows over %" PRIu64 " ns (every ns in exactly one row)",
					  a.threads[i].thread, a.threads[i].start, a.threads[i].end, sum,
					  a.threads[i].end - a.threads[i].start);
			}
		}
		for (size_t i = 0; i < a.nr_spans; i++)
			if (a.spans[i].end < a.spans[i].start || a.spans[i].state >= VPERF_STATE_NR)
				fuzz_fail("span %zu: %" PRIu64 "..%" PRIu64 " state %u", i,
					  a.spans[i].start, a.spans[i].end, a.spans[i].state);
		vperf_report_analysis__exit(&a);
	}
	check_exits(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vperf_report *r = NULL;
	char why[512] = "";
	unsigned int opts;
	int err;

	if (!size)
		return 0;
	rm_rec();
	opts = write_rec(data, size);
	err = vperf_report__open(rec, &r, why, sizeof(why));
	if (err) {
		if (err > 0 || !why[0] || r)
			fuzz_fail("vperf_report__open: %d without a reason", err);
		rm_rec();
		return 0;
	}
	check_report(r);
	for (size_t e = 0; e < r->nr_events && e < 4; e++)
		check_hist(r, (int)e);
	run_exports(r, opts);
	run_timeline(r, opts);
	run_analyses(r);
	vperf_report__delete(r);
	rm_rec();
	return 0;
}
