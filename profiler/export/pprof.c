// SPDX-License-Identifier: MIT
/*
 * pprof's profile.proto (export.h), encoded with protobuf-c from our profile.proto and gzipped
 * with zlib, as pprof reads it.  Two values per sample: "samples" (count) and the event's period
 * ("cpu-clock" in nanoseconds, other events in their count).  One pprof sample per distinct
 * (command, thread, stack), labelled with "comm", "tid" and "pid"; one location and one function
 * per distinct frame name, the function's file name its shared object.  Locations carry no
 * address: reports are by function, as `go tool pprof -top` prints them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "escape.h"
#include "export.h"
#include "profile.pb-c.h"

struct pp {
	struct vperf_report *r;
	struct vperf_report_strtab str_idx, fn_idx;
	char **strs;
	size_t nr_strs, cap_strs;
	Vperf__Pprof__Function *fns;
	Vperf__Pprof__Location *locs;
	Vperf__Pprof__Line *lines;
	Vperf__Pprof__Line **line_ptrs;
	size_t nr_fns, cap_fns;
};

/* The string table index of s (added once). */
static int str(struct pp *p, const char *s, int64_t *idx)
{
	size_t i;
	bool added;
	int err = vperf_report_strtab__get(&p->str_idx, s, p->nr_strs, &i, &added);

	if (err)
		return err;
	if (added) {
		if (p->nr_strs == p->cap_strs) {
			size_t cap = p->cap_strs ? 2 * p->cap_strs : 64;
			char **n = realloc(p->strs, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			p->strs = n;
			p->cap_strs = cap;
		}
		p->strs[p->nr_strs] = esc_text_dup(s);	/* pprof prints them as they are */
		if (!p->strs[p->nr_strs])
			return -ENOMEM;
		p->nr_strs++;
	}
	*idx = (int64_t)i;
	return 0;
}

/* The function (and location: the same id) of frame f, by its name and shared object. */
static int fn(struct pp *p, size_t f, uint64_t *id)
{
	const struct vperf_report_frame *fr = vperf_report__frame(p->r, f);
	char buf[512], key[1024];
	const char *name = vperf_report__frame_name(p->r, f, buf, sizeof(buf));
	size_t i;
	bool added;
	int err;

	snprintf(key, sizeof(key), "%s\n%s", name, fr->dso);
	err = vperf_report_strtab__get(&p->fn_idx, key, p->nr_fns, &i, &added);
	if (err)
		return err;
	if (added) {
		Vperf__Pprof__Function *fu;

		if (p->nr_fns == p->cap_fns) {
			size_t cap = p->cap_fns ? 2 * p->cap_fns : 256;
			void *a = realloc(p->fns, cap * sizeof(*p->fns));

			if (a)
				p->fns = a;
			a = a ? realloc(p->locs, cap * sizeof(*p->locs)) : NULL;
			if (a)
				p->locs = a;
			a = a ? realloc(p->lines, cap * sizeof(*p->lines)) : NULL;
			if (a)
				p->lines = a;
			if (!a)
				return -ENOMEM;
			p->cap_fns = cap;
		}
		fu = &p->fns[i];
		vperf__pprof__function__init(fu);
		fu->id = i + 1;
		err = str(p, name, &fu->name);
		if (!err)
			err = str(p, name, &fu->system_name);
		if (!err)
			err = str(p, fr->dso, &fu->filename);
		if (err)
			return err;
		vperf__pprof__line__init(&p->lines[i]);
		p->lines[i].function_id = i + 1;
		vperf__pprof__location__init(&p->locs[i]);
		p->locs[i].id = i + 1;
		p->nr_fns++;
	}
	*id = i + 1;
	return 0;
}

static bool ns_event(const char *name)
{
	return !strncmp(name, "cpu-clock", 9) || !strncmp(name, "task-clock", 10);
}

/* gzip (RFC 1952) of buf into out. */
static int gzip_to(FILE *out, const uint8_t *buf, size_t len)
{
	z_stream z = { 0 };
	uint8_t chunk[65536];
	int zr;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)buf;
	z.avail_in = (uInt)len;
	do {
		size_t n;

		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR)
			break;
		n = sizeof(chunk) - z.avail_out;
		if (fwrite(chunk, 1, n, out) != n)
			break;
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0 : -EIO;
}

struct built {
	Vperf__Pprof__Profile prof;
	Vperf__Pprof__ValueType vt[2], period_type;
	Vperf__Pprof__ValueType *vt_ptrs[2];
	Vperf__Pprof__Sample *samples, **sample_ptrs;
	Vperf__Pprof__Label *labels, **label_ptrs;
	uint64_t *locs;
	int64_t *values;
	Vperf__Pprof__Location **loc_ptrs;
	Vperf__Pprof__Function **fn_ptrs;
	size_t nr;
};

static int fill_samples(struct pp *p, const struct vperf_report_hist *h, struct built *b)
{
	size_t n = 0, nframes = 0, k = 0, lo = 0;
	int64_t comm_key, tid_key, pid_key;
	int err;

	for (size_t i = 0; i < h->nr_rows; i++) {
		n += h->rows[i].nr_chains;
		for (size_t c = 0; c < h->rows[i].nr_chains; c++)
			nframes += p->r->samples[h->rows[i].chains[c].sample].nr_frames;
	}
	b->samples = calloc(n ? n : 1, sizeof(*b->samples));
	b->sample_ptrs = calloc(n ? n : 1, sizeof(*b->sample_ptrs));
	b->labels = calloc(3 * n + 1, sizeof(*b->labels));
	b->label_ptrs = calloc(3 * n + 1, sizeof(*b->label_ptrs));
	b->values = calloc(2 * n + 1, sizeof(*b->values));
	b->locs = calloc(nframes + 1, sizeof(*b->locs));
	if (!b->samples || !b->sample_ptrs || !b->labels || !b->label_ptrs || !b->values ||
	    !b->locs)
		return -ENOMEM;
	err = str(p, "comm", &comm_key);
	if (!err)
		err = str(p, "tid", &tid_key);
	if (!err)
		err = str(p, "pid", &pid_key);
	for (size_t i = 0; i < h->nr_rows && !err; i++) {
		const struct vperf_report_row *row = &h->rows[i];

		for (size_t c = 0; c < row->nr_chains && !err; c++, k++) {
			const struct vperf_report_sample *s = &p->r->samples[row->chains[c].sample];
			Vperf__Pprof__Sample *sm = &b->samples[k];
			Vperf__Pprof__Label *l = &b->labels[3 * k];

			vperf__pprof__sample__init(sm);
			sm->location_id = &b->locs[lo];
			for (size_t f = 0; f < s->nr_frames && !err; f++)
				err = fn(p, s->frame + f, &b->locs[lo++]);	/* leaf first */
			sm->n_location_id = s->nr_frames;
			sm->value = &b->values[2 * k];
			sm->value[0] = (int64_t)row->chains[c].samples;
			sm->value[1] = (int64_t)row->chains[c].period;
			sm->n_value = 2;
			for (int j = 0; j < 3; j++) {
				vperf__pprof__label__init(&l[j]);
				b->label_ptrs[3 * k + j] = &l[j];
			}
			l[0].key = comm_key;
			if (!err)
				err = str(p, p->r->strings[s->comm], &l[0].str);
			l[1].key = tid_key;
			l[1].num = s->tid;
			l[2].key = pid_key;
			l[2].num = s->pid;
			sm->label = &b->label_ptrs[3 * k];
			sm->n_label = 3;
			b->sample_ptrs[k] = sm;
		}
	}
	b->nr = k;
	return err;
}

static void built_exit(struct built *b)
{
	free(b->samples);
	free(b->sample_ptrs);
	free(b->labels);
	free(b->label_ptrs);
	free(b->values);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->fn_ptrs);
}

static void pp_exit(struct pp *p)
{
	vperf_report_strtab__exit(&p->str_idx);
	vperf_report_strtab__exit(&p->fn_idx);
	for (size_t i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	free(p->strs);
	free(p->fns);
	free(p->locs);
	free(p->lines);
	free(p->line_ptrs);
}

int vperf_export_pprof(struct vperf_report *r, int event, FILE *out, char *why, size_t why_len)
{
	static const enum vperf_report_key keys[] = {
		VPERF_REPORT_KEY_COMM, VPERF_REPORT_KEY_TID, VPERF_REPORT_KEY_PID,
	};
	struct vperf_report_hist h;
	struct pp p = { .r = r };
	struct built b = { .prof = VPERF__PPROF__PROFILE__INIT };
	const char *ev = r->events[event];
	uint64_t first = UINT64_MAX, last = 0;
	int64_t empty;
	uint8_t *buf = NULL;
	size_t len;
	int err;

	err = vperf_report_hist__build(r, event, keys, 3, VPERF_HIST_CHAINS, &h);
	if (err)
		goto out_msg;
	err = str(&p, "", &empty);	/* string_table[0] is "" */
	if (err)
		goto out_hist;
	for (int i = 0; i < 2; i++) {
		vperf__pprof__value_type__init(&b.vt[i]);
		b.vt_ptrs[i] = &b.vt[i];
	}
	vperf__pprof__value_type__init(&b.period_type);
	err = str(&p, "samples", &b.vt[0].type);
	if (!err)
		err = str(&p, "count", &b.vt[0].unit);
	if (!err)
		err = str(&p, ev, &b.vt[1].type);
	if (!err)
		err = str(&p, ns_event(ev) || vperf_report__cost_event(r, event) ? "nanoseconds" :
			  "count", &b.vt[1].unit);
	if (!err)
		err = fill_samples(&p, &h, &b);
	if (err)
		goto out_hist;
	b.period_type = b.vt[1];
	b.loc_ptrs = calloc(p.nr_fns + 1, sizeof(*b.loc_ptrs));
	b.fn_ptrs = calloc(p.nr_fns + 1, sizeof(*b.fn_ptrs));
	p.line_ptrs = calloc(p.nr_fns + 1, sizeof(*p.line_ptrs));
	if (!b.loc_ptrs || !b.fn_ptrs || !p.line_ptrs) {
		err = -ENOMEM;
		goto out_hist;
	}
	for (size_t i = 0; i < p.nr_fns; i++) {
		p.line_ptrs[i] = &p.lines[i];
		p.locs[i].line = &p.line_ptrs[i];
		p.locs[i].n_line = 1;
		b.loc_ptrs[i] = &p.locs[i];
		b.fn_ptrs[i] = &p.fns[i];
	}
	for (size_t i = 0; i < r->nr_samples; i++) {
		if ((int)r->samples[i].event != event)
			continue;
		first = r->samples[i].ts < first ? r->samples[i].ts : first;
		last = r->samples[i].ts > last ? r->samples[i].ts : last;
	}
	b.prof.n_sample_type = 2;
	b.prof.sample_type = b.vt_ptrs;
	b.prof.n_sample = b.nr;
	b.prof.sample = b.sample_ptrs;
	b.prof.n_location = p.nr_fns;
	b.prof.location = b.loc_ptrs;
	b.prof.n_function = p.nr_fns;
	b.prof.function = b.fn_ptrs;
	b.prof.n_string_table = p.nr_strs;
	b.prof.string_table = p.strs;
	b.prof.duration_nanos = last >= first ? (int64_t)(last - first) : 0;
	b.prof.period_type = &b.period_type;
	b.prof.period = h.samples ? (int64_t)(h.period / h.samples) : 0;
	b.prof.default_sample_type = b.vt[1].type;	/* (a string) the event's period first */
	len = vperf__pprof__profile__get_packed_size(&b.prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out_hist;
	}
	vperf__pprof__profile__pack(&b.prof, buf);
	err = gzip_to(out, buf, len);
	if (err)
		snprintf(why, why_len, "%s", err == -ENOMEM ? "out of memory" : "write error");
	free(buf);
out_hist:
	built_exit(&b);
	pp_exit(&p);
	vperf_report_hist__exit(&h);
out_msg:
	if (err == -ENOMEM)
		snprintf(why, why_len, "out of memory");
	return err;
}
