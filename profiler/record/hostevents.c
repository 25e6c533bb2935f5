// SPDX-License-Identifier: MIT
/*
 * Decoding the host kernel's tracefs pages of a raw recording (hostevents.h).
 *
 * libtraceevent does the parsing: tep_parse_header_page() for the page layout,
 * tep_parse_format() for each event's fields, and kbuffer for walking a page's events and
 * their time stamps.  Neither checks its input against the buffer it is given (kbuffer follows
 * whatever lengths a page holds), so this file checks every page before kbuffer sees it: the
 * commit field within the page, and a walk of the event headers, the same walk kbuffer makes,
 * that must stay inside the data and move forward.  After that, kbuffer only reads inside the
 * page (and at most 8 bytes past its data, into slack kept zero).  Each event is then checked
 * against its format's size before a field is read.
 *
 * The page layout (Linux kernel/trace/ring_buffer.c, and header_page): u64 time stamp, a commit
 * word (long) whose low 27 bits are the bytes of events on the page, bit 31 "events were lost
 * before this page" and bit 30 "their count is stored after the events" (as a long), then the
 * events.  Each event starts with a u32: type_len (5 bits) and a time delta (27 bits);
 * type_len 1..28 is a data event of 4 * type_len bytes, 0 a data event whose length follows,
 * 29 padding (or a discarded event) whose length follows, 30 a time extend and 31 an absolute
 * time stamp (8 bytes each).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "hostevents-int.h"


int vperf_hostev_reader__new(struct vperf_hostev_reader **out)
{
	struct vperf_hostev_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->tep = tep_alloc();
	if (!r->tep) {
		free(r);
		return -ENOMEM;
	}
	/* raw recordings are written on x86: little-endian */
	tep_set_file_bigendian(r->tep, TEP_LITTLE_ENDIAN);
	*out = r;
	return 0;
}

void vperf_hostev_reader__delete(struct vperf_hostev_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_cpus; i++)
		free(r->cpus[i].pages);
	free(r->cpus);
	free(r->fmts);
	tep_free(r->tep);
	free(r);
}

const char *vperf_hostev_reader__strerror(const struct vperf_hostev_reader *r)
{
	return r && r->msg[0] ? r->msg : "no error";
}

void vperf_hostev_reader__report_lost(struct vperf_hostev_reader *r, bool on)
{
	r->report_lost = on;
}

/* A text that should be a tracefs file: NUL-free up to len (trailing NULs allowed). */
static bool is_text(const char *t, size_t len)
{
	while (len && !t[len - 1])
		len--;
	for (size_t i = 0; i < len; i++)
		if (!t[i])
			return false;
	return len > 0;
}

static char *dup_text(const char *t, size_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		memcpy(s, t, len);
		s[len] = '\0';
	}
	return s;
}

/* ---- what libtraceevent is given: checked first, since its parser trusts its input ---- */

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static const char *skip_num(const char *p)
{
	if (*p < '0' || *p > '9')
		return NULL;
	while (*p >= '0' && *p <= '9')
		p++;
	return p;
}

/*
 * A declaration as tracefs prints one: a type and a name, words each maybe with [len], between
 * spaces and '*'.  (A lone word, which no kernel writes, makes libtraceevent 1.7 leak.)
 */
static const char *decl_end(const char *p)
{
	unsigned int words = 0;

	while (*p && *p != ';') {
		if (is_ident(*p)) {
			while (is_ident(*p))
				p++;
			if (*p == '[') {
				for (p++; is_ident(*p); p++)
					;
				if (*p++ != ']')
					return NULL;
			}
			words++;
		} else if (*p == ' ' || *p == '*') {
			p++;
		} else {
			return NULL;
		}
	}
	return words >= 2 && *p == ';' ? p : NULL;
}

/* "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;" (signed: since Linux 2.6.32) */
static bool field_line(const char *l)
{
	static const char *const keys[] = { "\toffset:", "\tsize:" };

	if (strncmp(l, "\tfield:", 7))
		return false;
	l += 7;
	if (*l == ' ')
		l++;
	l = decl_end(l);
	if (!l)
		return false;
	l++;
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strncmp(l, keys[i], strlen(keys[i])))
			return false;
		l = skip_num(l + strlen(keys[i]));
		if (!l || *l++ != ';')
			return false;
	}
	if (!strncmp(l, "\tsigned:", 8)) {
		l = skip_num(l + 8);
		if (!l || *l++ != ';')
			return false;
	}
	return *l == '\0';
}

/*
 * The header_page, or an event's format before its print fmt: only the lines tracefs writes
 * ("name: <name>", "ID: N", "format:", field lines, empty lines); name NULL: the header_page.
 * *id: the ID line's number.
 */
static bool check_lines(const char *text, const char *name, long *id)
{
	char *s = strdup(text), *line, *next;
	bool ok = s != NULL, have_id = false, header = !name;

	for (line = s; ok && line && *line; line = next) {
		const char *e;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!*line || field_line(line))
			continue;
		if (header)
			ok = false;
		else if (!strncmp(line, "name: ", 6))
			ok = !strcmp(line + 6, name);
		else if (!strcmp(line, "format:"))
			ok = true;
		else if (!strncmp(line, "ID: ", 4) && !have_id && (e = skip_num(line + 4)) && !*e &&
			 e - (line + 4) < 10)
			ok = have_id = true, *id = strtol(line + 4, NULL, 10);
		else
			ok = false;
	}
	free(s);
	return ok && (header || have_id);
}

/* ---- header_page ---- */

int vperf_hostev_reader__add_header(struct vperf_hostev_reader *r, const char *text, size_t len)
{
	unsigned int ts_size, commit_size;
	int sub;
	char *s;

	if (!text || !is_text(text, len) || len > 65536)
		return fail(r, -EINVAL, "header_page: not a text");
	s = dup_text(text, len);
	if (!s)
		return fail(r, -ENOMEM, "header_page: out of memory");
	if (!check_lines(s, NULL, NULL)) {
		free(s);
		return fail(r, -EINVAL, "header_page: not the field lines tracefs writes");
	}
	tep_parse_header_page(r->tep, s, strlen(s), 8);
	free(s);
	ts_size = (unsigned int)tep_get_header_timestamp_size(r->tep);
	commit_size = (unsigned int)tep_get_header_page_size(r->tep);
	sub = tep_get_sub_buffer_size(r->tep);
	/* tep_parse_header_page() reports nothing: check what it found */
	if (ts_size != 8 || (commit_size != 8 && commit_size != 4) ||
	    sub < (int)(8 + commit_size) + 64 || sub > (16 << 20))
		return fail(r, -EINVAL, "header_page does not describe a ring-buffer page "
			    "(timestamp %u bytes, commit %u bytes, page %d bytes)", ts_size,
			    commit_size, sub);
	if (r->have_header && (r->page_size != (size_t)sub || r->commit_size != commit_size))
		return fail(r, -EEXIST, "a second header_page with another layout (page %d bytes, "
			    "was %zu)", sub, r->page_size);
	r->page_size = (size_t)sub;
	r->commit_size = commit_size;
	r->data_off = 8 + commit_size;
	r->have_header = true;
	tep_set_long_size(r->tep, (int)commit_size);
	return 0;
}

/* ---- formats ---- */

static bool is_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > MAX_NAME)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* Where a field of the format is, if it is usable as `kind`; false if absent or odd. */
static bool place(struct tep_format_field *tf, enum kind kind, struct field_at *at)
{
	*at = (struct field_at){ 0 };
	if (!tf || tf->offset < 0 || tf->size <= 0 || tf->offset > 65535 || tf->size > 65535)
		return false;
	at->off = tf->offset;
	at->size = tf->size;
	at->is_signed = tf->flags & TEP_FIELD_IS_SIGNED;
	if (kind == NUM) {
		if (tf->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC))
			return false;
		if (tf->size != 1 && tf->size != 2 && tf->size != 4 && tf->size != 8)
			return false;
	} else if (tf->flags & TEP_FIELD_IS_DYNAMIC) {
		if (tf->size != 4)
			return false;
		at->dynamic = true;
		at->relative = tf->flags & TEP_FIELD_IS_RELATIVE;
	} else if (!(tf->flags & TEP_FIELD_IS_ARRAY)) {
		return false;
	}
	at->present = true;
	return true;
}

static bool same_at(const struct field_at *a, const struct field_at *b)
{
	return a->off == b->off && a->size == b->size;
}

/* Keep a format (ct, cp: its common fields, NULL for one not decoded). */
static int add_fmt(struct vperf_hostev_reader *r, struct format *f, int id, const char *system,
		   const char *name, const struct field_at *ct, const struct field_at *cp)
{
	int ct_size = ct ? ct->size : r->have_common ? r->common_type.size : 2;
	struct format *n;

	if (id < 0 || (ct_size < 4 && id >= (1 << (8 * ct_size))))
		return fail(r, -EINVAL, "the format of %s:%s has ID %d", system, name, id);
	if (ct && r->have_common && (!same_at(ct, &r->common_type) || !same_at(cp, &r->common_pid)))
		return fail(r, -EINVAL, "the format of %s:%s has its common fields elsewhere than "
			    "the other formats", system, name);
	for (size_t i = 0; i < r->nr_fmts; i++)
		if (r->fmts[i].id == id)
			return fail(r, -EEXIST, "two formats with ID %d (%s:%s and %s:%s)", id,
				    r->fmts[i].system, r->fmts[i].name, system, name);
	n = realloc(r->fmts, (r->nr_fmts + 1) * sizeof(*n));
	if (!n)
		return fail(r, -ENOMEM, "out of memory");
	r->fmts = n;
	f->id = id;
	snprintf(f->system, sizeof(f->system), "%s", system);
	snprintf(f->name, sizeof(f->name), "%s", name);
	r->fmts[r->nr_fmts++] = *f;
	if (ct) {
		r->common_type = *ct;
		r->common_pid = *cp;
		r->have_common = true;
	}
	return 0;
}

int vperf_hostev_reader__add_format(struct vperf_hostev_reader *r, const char *system,
				    const char *name, const char *text, size_t len)
{
	struct field_at ct, cp;
	struct tep_event *ev = NULL;
	struct format f = { .type = VPERF_HOSTEV_OTHER };
	enum tep_errno te;
	char *s, *cut, buf[128];
	long id = -1;

	if (!system || !name || !is_name(system) || !is_name(name))
		return fail(r, -EINVAL, "a format with a bad event name");
	if (!text || !is_text(text, len) || len > (1u << 20))
		return fail(r, -EINVAL, "the format of %s:%s is not a text", system, name);
	s = dup_text(text, len);
	if (!s)
		return fail(r, -ENOMEM, "out of memory");
	/*
	 * Only the fields go to libtraceevent: the print fmt is never used here (nothing is
	 * printed), and its expression parser is where damaged formats crash libtraceevent 1.7.
	 */
	cut = strstr(s, "\nprint fmt:");
	if (cut)
		cut[1] = '\0';
	if (!check_lines(s, name, &id)) {
		free(s);
		return fail(r, -EINVAL, "the format of %s:%s does not parse: it has lines tracefs does "
			    "not write, or not its name and ID", system, name);
	}
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(known[i].system, system) && !strcmp(known[i].name, name))
			f.type = known[i].type;
	if (f.type == VPERF_HOSTEV_OTHER) {
		/* not decoded: its ID is all that is needed, libtraceevent is spared it */
		free(s);
		return add_fmt(r, &f, (int)id, system, name, NULL, NULL);
	}
	te = tep_parse_format(r->tep, &ev, s, strlen(s), system);
	free(s);
	if (!ev) {
		tep_strerror(r->tep, te, buf, sizeof(buf));
		return fail(r, -EINVAL, "the format of %s:%s does not parse: %s", system, name, buf);
	}
	/* the print fmt is left out, so the event says it failed: the fields are what counts */
	if (!place(tep_find_common_field(ev, "common_type"), NUM, &ct) ||
	    !place(tep_find_common_field(ev, "common_pid"), NUM, &cp) || ct.size > 4 ||
	    cp.size != 4)
		return fail(r, -EINVAL, "the format of %s:%s does not parse: no common_type and "
			    "common_pid fields", system, name);
	if (ev->id != id || strcmp(ev->name, name) || strcmp(ev->system, system))
		return fail(r, -EINVAL, "the format of %s:%s does not parse", system, name);
	f.need = (unsigned int)(MAX(ct.off + ct.size, cp.off + cp.size));
	for (size_t i = 0; i < NR_FIELDS; i++) {
		if (fields[i].type != f.type)
			continue;
		if (place(tep_find_field(ev, fields[i].name), fields[i].kind, &f.f[i]))
			f.need = MAX(f.need, (unsigned int)(f.f[i].off + f.f[i].size));
	}

	return add_fmt(r, &f, (int)id, system, name, &ct, &cp);
}

int vperf_hostev_reader__add_format_chunk(struct vperf_hostev_reader *r, const void *payload,
					  size_t len)
{
	const char *p = payload, *sys_end, *name_end;

	if (!p || !len)
		return fail(r, -EINVAL, "an empty format chunk");
	sys_end = memchr(p, '\0', len);
	name_end = sys_end ? memchr(sys_end + 1, '\0', len - (size_t)(sys_end + 1 - p)) : NULL;
	if (!name_end)
		return fail(r, -EINVAL, "a format chunk without \"system\\0event\\0\" before its text");
	return vperf_hostev_reader__add_format(r, p, sys_end + 1, name_end + 1,
					       len - (size_t)(name_end + 1 - p));
}

const char *vperf_hostev_reader__missing_fields(struct vperf_hostev_reader *r)
{
	size_t n = 0;

	r->missing[0] = '\0';
	for (size_t i = 0; i < r->nr_fmts; i++) {
		const struct format *f = &r->fmts[i];

		for (size_t j = 0; j < NR_FIELDS; j++) {
			int w;

			if (fields[j].type != f->type || f->f[j].present)
				continue;
			w = snprintf(r->missing + n, sizeof(r->missing) - n, "%s%s:%s.%s", n ? " " : "",
				     f->system, f->name, fields[j].name);
			if (w < 0 || (size_t)w >= sizeof(r->missing) - n)
				return r->missing;
			n += (size_t)w;
		}
	}
	return r->missing;
}

/* ---- pages ---- */


/*
 * Check one page as kbuffer will walk it; *lost: the stored count of events lost before it,
 * *uncounted: lost, count not stored.
 */
static int check_page(struct vperf_hostev_reader *r, uint32_t cpu, size_t index, const uint8_t *pg,
		      uint64_t *lost, bool *uncounted)
{
	uint64_t commit = get_le(pg + 8, r->commit_size);
	size_t cap = r->page_size - r->data_off, size = commit & COMMIT_MASK, o = 0;
	const uint8_t *d = pg + r->data_off;

	*lost = 0;
	*uncounted = false;
	/*
	 * The kernel adds the flags to a signed long as ints: bit 31 comes sign-extended
	 * (0xffffffffc0000fe8 is "lost, count stored, 0xfe8 bytes").  Only the low 32 bits count.
	 */
	if (r->commit_size == 8 && (commit >> 32) != ((commit & MISSED_EVENTS) ? 0xffffffffu : 0))
		goto bad_commit;
	commit &= 0xffffffffu;
	if (commit & ~(uint64_t)(COMMIT_MASK | MISSED_EVENTS | MISSED_STORED))
		goto bad_commit;
	if (size > cap)
		return fail(r, -EINVAL, "cpu %u page %zu: says %zu bytes of events, a page holds %zu",
			    cpu, index, size, cap);
	if (commit & MISSED_EVENTS) {
		if (commit & MISSED_STORED) {
			if (size + r->commit_size > cap)
				return fail(r, -EINVAL, "cpu %u page %zu: lost count past the page",
					    cpu, index);
			*lost = get_le(d + size, r->commit_size);
		} else {
			*uncounted = true;
		}
	}
	while (o < size) {
		uint32_t w = (uint32_t)get_le(d + o, 4), type_len = w & 31, len;
		size_t next;

		switch (type_len) {
		case TYPE_TIME_EXTEND:
		case TYPE_TIME_STAMP:
			next = o + 8;
			if (next > size)
				goto cut;
			break;
		case TYPE_PADDING:
			/* padding or a discarded event: its length follows, counted from o + 4 */
			if (o + 8 > size)
				goto cut;
			len = (uint32_t)get_le(d + o + 4, 4);
			if (len > cap)
				goto bad_len;
			next = o + 4 + len;
			if (next > size)
				next = size;
			break;
		case 0:
			if (o + 8 > size)
				goto cut;
			len = (uint32_t)get_le(d + o + 4, 4);
			if (len < 4 || len > cap)
				goto bad_len;
			next = o + 8 + ((len - 4 + 3) & ~3u);
			if (next > size)
				goto cut;
			break;
		default:
			next = o + 4 + 4 * (size_t)type_len;
			if (next > size)
				goto cut;
			break;
		}
		o = next;
	}
	return 0;
cut:
	return fail(r, -EINVAL, "cpu %u page %zu: the event at byte %zu runs past the page's %zu "
		    "bytes of events (a cut or damaged page)", cpu, index, o, size);
bad_len:
	return fail(r, -EINVAL, "cpu %u page %zu: the event at byte %zu has a bad length", cpu,
		    index, o);
bad_commit:
	return fail(r, -EINVAL, "cpu %u page %zu: commit word %#llx is not a ring-buffer page's",
		    cpu, index, (unsigned long long)get_le(pg + 8, r->commit_size));
}

static struct cpu_data *get_cpu(struct vperf_hostev_reader *r, uint32_t cpu, bool create)
{
	struct cpu_data *n;

	for (size_t i = 0; i < r->nr_cpus; i++)
		if (r->cpus[i].cpu == cpu)
			return &r->cpus[i];
	if (!create)
		return NULL;
	n = realloc(r->cpus, (r->nr_cpus + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->cpus = n;
	n = &r->cpus[r->nr_cpus++];
	*n = (struct cpu_data){ .cpu = cpu };
	return n;
}

int vperf_hostev_reader__add_pages(struct vperf_hostev_reader *r, uint32_t cpu, const void *data,
				   size_t len)
{
	const uint8_t *p = data;
	uint64_t lost = 0, uncounted = 0;
	struct cpu_data *c;
	size_t nr, first;
	int err;

	if (!r->have_header)
		return fail(r, -EINVAL, "cpu %u: ring-buffer pages before the header_page that says "
			    "how to read them", cpu);
	if (cpu >= MAX_CPU)
		return fail(r, -EINVAL, "pages of cpu %u: no such CPU", cpu);
	if (!len)
		return 0;
	if (!p || len % r->page_size)
		return fail(r, -EINVAL, "cpu %u: %zu bytes of pages is not a whole number of %zu-byte "
			    "pages (a cut page)", cpu, len, r->page_size);
	nr = len / r->page_size;
	c = get_cpu(r, cpu, false);
	first = c ? c->nr_pages : 0;
	for (size_t i = 0; i < nr; i++) {
		uint64_t l;
		bool u;

		err = check_page(r, cpu, first + i, p + i * r->page_size, &l, &u);
		if (err)
			return err;
		lost += l;
		uncounted += u;
	}
	c = get_cpu(r, cpu, true);
	if (!c)
		return fail(r, -ENOMEM, "out of memory");
	if (c->nr_pages + nr > c->cap_pages) {
		size_t cap = c->cap_pages ? c->cap_pages : 16;
		uint8_t *n;

		while (cap < c->nr_pages + nr)
			cap *= 2;
		n = realloc(c->pages, cap * r->page_size + PAGE_SLACK);
		if (!n)
			return fail(r, -ENOMEM, "out of memory for %zu pages of cpu %u", cap, cpu);
		c->pages = n;
		c->cap_pages = cap;
	}
	memcpy(c->pages + c->nr_pages * r->page_size, p, len);
	c->nr_pages += nr;
	memset(c->pages + c->nr_pages * r->page_size, 0, PAGE_SLACK);
	c->lost_in_pages += lost;
	c->lost_uncounted += uncounted;
	return 0;
}

/* ---- stats ---- */

int vperf_hostev_reader__add_stats(struct vperf_hostev_reader *r, uint32_t cpu, const char *text,
				   size_t len)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "entries", offsetof(struct cpu_data, entries) },
		{ "overrun", offsetof(struct cpu_data, overrun) },
		{ "commit overrun", offsetof(struct cpu_data, commit_overrun) },
		{ "dropped events", offsetof(struct cpu_data, dropped) },
	};
	uint64_t val[ARRAY_SIZE(keys)] = { 0 };
	unsigned int found = 0;
	struct cpu_data *c;
	char *s, *line, *next;

	if (cpu >= MAX_CPU)
		return fail(r, -EINVAL, "stats of cpu %u: no such CPU", cpu);
	if (!text || !is_text(text, len) || len > 65536)
		return fail(r, -EINVAL, "stats of cpu %u: not a text", cpu);
	s = dup_text(text, len);
	if (!s)
		return fail(r, -ENOMEM, "out of memory");
	for (line = s; line && *line; line = next) {
		char *colon, *end;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
			unsigned long long v;

			if (strcmp(line, keys[k].key))
				continue;
			errno = 0;
			v = strtoull(colon + 1, &end, 10);
			if (errno || end == colon + 1 || (*end && *end != ' ')) {
				free(s);
				return fail(r, -EINVAL, "stats of cpu %u: \"%s\" is not a number",
					    cpu, keys[k].key);
			}
			val[k] = v;
			found |= 1u << k;
		}
	}
	free(s);
	if (!(found & 2))
		return fail(r, -EINVAL, "stats of cpu %u: not a per_cpu stats file (no overrun)", cpu);
	c = get_cpu(r, cpu, true);
	if (!c)
		return fail(r, -ENOMEM, "out of memory");
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++)
		memcpy((char *)c + keys[k].off, &val[k], sizeof(val[k]));
	c->has_stats = true;
	return 0;
}

static uint64_t cpu_lost(const struct cpu_data *c)
{
	if (!c->has_stats)
		return c->lost_in_pages;
	return MAX(c->lost_in_pages, c->overrun) + c->commit_overrun + c->dropped + c->entries;
}

uint64_t vperf_hostev_reader__lost(const struct vperf_hostev_reader *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nr_cpus; i++)
		n += cpu_lost(&r->cpus[i]);
	return n;
}

unsigned int vperf_hostev_reader__nr_cpus(const struct vperf_hostev_reader *r)
{
	return (unsigned int)r->nr_cpus;
}

int vperf_hostev_reader__cpu_stats(const struct vperf_hostev_reader *r, unsigned int index,
				   struct vperf_hostev_cpu_stats *st)
{
	struct vperf_hostev_cpu_stats s = { .size = sizeof(s) };
	const struct cpu_data *c;

	/* st->size: the caller's idea of the struct; an older, shorter one gets its part */
	if (index >= r->nr_cpus || !st || st->size < offsetof(struct vperf_hostev_cpu_stats, pages))
		return -EINVAL;
	c = &r->cpus[index];
	s.cpu = c->cpu;
	s.pages = c->nr_pages;
	s.events = c->events;
	s.lost_in_pages = c->lost_in_pages;
	s.lost_pages_uncounted = c->lost_uncounted;
	s.has_stats = c->has_stats;
	s.overrun = c->overrun;
	s.commit_overrun = c->commit_overrun;
	s.dropped = c->dropped;
	s.entries = c->entries;
	s.lost = cpu_lost(c);
	s.size = st->size < sizeof(s) ? st->size : (uint32_t)sizeof(s);
	memcpy(st, &s, s.size);
	return 0;
}
