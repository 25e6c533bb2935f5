// SPDX-License-Identifier: MIT
/* VM exits by guest thread, guest code and reason, with their cost (exits.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "containers.h"
#include "hist.h"
#include "symbols.h"

#include "exits.h"

const char *const vperf_exit_key_names[VPERF_EXIT_NR_KEYS] = {
	"tid", "comm", "symbol", "dso", "reason", "vcpu",
};

int vperf_report__analyse_exits(const struct vperf_report *r, struct vperf_report_analysis *a)
{
	int err = vperf_report__analyse(r, VPERF_ANALYSE_EXITS, a);

	if (!err && !a->host_events) {
		vperf_report_analysis__exit(a);
		err = -ENOENT;
	}
	return err;
}

int vperf_exit_keys_parse(const char *list, enum vperf_exit_key *keys, size_t max, size_t *nr,
			  char *why, size_t why_len)
{
	int k[VPERF_EXIT_NR_KEYS * 4];
	int err = vperf_report_parse_keys(list, vperf_exit_key_names, VPERF_EXIT_NR_KEYS,
					  VPERF_EXIT_KEY_TID, " for --exits", k,
					  max < 4 * VPERF_EXIT_NR_KEYS ? max : 4 * VPERF_EXIT_NR_KEYS, nr,
					  why, why_len);

	for (size_t i = 0; !err && i < *nr; i++)
		keys[i] = (enum vperf_exit_key)k[i];
	return err;
}

static const char *key_of(struct vperf_report *r, const struct vperf_report_analysis *a,
			  struct vperf_exit_table *t, const struct vperf_report_exit *x, size_t frame,
			  const struct vperf_report_frame *f, enum vperf_exit_key k)
{
	const char *name;
	char num[32], buf[512];

	switch (k) {
	case VPERF_EXIT_KEY_TID:
		if (x->thread < 0)
			return "-";
		snprintf(num, sizeof(num), "%" PRIu32, r->threads[x->thread].tid);
		return vperf_report_strtab__intern(&t->owned, num);
	case VPERF_EXIT_KEY_COMM:
		if (x->thread < 0)
			return VPERF_EXIT_NO_THREAD;
		if (r->threads[x->thread].comm == UINT32_MAX)
			return VPERF_REPORT_UNKNOWN;
		return r->strings[r->threads[x->thread].comm];
	case VPERF_EXIT_KEY_SYMBOL:	/* "[unknown] in dso" keeps files apart */
		return !f ? VPERF_REPORT_UNKNOWN : f->found ? f->sym :
		       vperf_report_strtab__intern(&t->owned, vperf_report__frame_name(r, frame, buf, sizeof(buf)));
	case VPERF_EXIT_KEY_DSO:
		return f && f->dso ? f->dso : VPERF_REPORT_UNKNOWN;
	case VPERF_EXIT_KEY_REASON:
		name = vperf_report_exit_name(x->reason, a->svm);
		if (name)
			return name;
		snprintf(num, sizeof(num), "0x%" PRIx64, x->reason);
		return vperf_report_strtab__intern(&t->owned, num);
	case VPERF_EXIT_KEY_VCPU:
		snprintf(num, sizeof(num), "%" PRIu32, x->vcpu);
		return vperf_report_strtab__intern(&t->owned, num);
	default:
		return VPERF_REPORT_UNKNOWN;
	}
}

/* Each row's exits' costs, for its p99. */
struct costs {
	uint64_t *ns;
	size_t nr, cap;
};

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static int by_cost(const void *x, const void *y)
{
	const struct vperf_exit_row *a = x, *b = y;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	for (int i = 0; i < VPERF_EXIT_NR_KEYS; i++) {
		int c = strcmp(a->key[i] ? a->key[i] : "", b->key[i] ? b->key[i] : "");

		if (c)
			return c;
	}
	return 0;
}

/* The wall time of guest thread th in a (its states table), 0 if it has none. */
static uint64_t wall_of(const struct vperf_report_analysis *a, int32_t th)
{
	for (size_t i = 0; i < a->nr_threads; i++)
		if (a->threads[i].thread == th)
			return a->threads[i].end - a->threads[i].start;
	return 0;
}

static int add_exit(struct vperf_report *r, const struct vperf_report_analysis *a,
		    struct vperf_exit_table *t, struct vperf_report_strtab *rows,
		    struct costs **costs, size_t *cap,
		    const struct vperf_report_exit *x)
{
	size_t frame = r->tlevs[x->tlev].frame;
	const struct vperf_report_frame *f = frame < r->nr_frames ? vperf_report__frame(r, frame) : NULL;
	const char *key[VPERF_EXIT_NR_KEYS] = { 0 };
	uint64_t ns = x->kvm_ns + x->vmm_ns + x->preempted_ns + x->sleep_ns;
	struct vperf_exit_row *row;
	char tuple[4096];
	size_t off = 0, idx;
	bool added, by_symbol = false;

	for (size_t k = 0; k < t->nr_keys; k++) {
		key[k] = key_of(r, a, t, x, frame, f, t->keys[k]);
		if (!key[k])
			return -ENOMEM;
		by_symbol |= t->keys[k] == VPERF_EXIT_KEY_SYMBOL;
		off += (size_t)snprintf(tuple + off, sizeof(tuple) - off, "%s\n", key[k]);
		if (off >= sizeof(tuple))
			off = sizeof(tuple) - 1;
	}
	/* a symbol's row is also its file's: "main" of two programs are two rows */
	if (by_symbol && f && f->dso)
		snprintf(tuple + off, sizeof(tuple) - off, "%s", f->dso);
	if (vperf_report_strtab__get(rows, tuple, t->nr_rows, &idx, &added))
		return -ENOMEM;
	if (added) {
		if (t->nr_rows == *cap) {
			size_t c = *cap ? 2 * *cap : 64;
			struct vperf_exit_row *g = realloc(t->rows, c * sizeof(*g));
			struct costs *n;

			if (g)
				t->rows = g;
			n = realloc(*costs, c * sizeof(*n));
			if (n)
				*costs = n;
			if (!g || !n)
				return -ENOMEM;
			*cap = c;
		}
		row = &t->rows[t->nr_rows];
		memset(row, 0, sizeof(*row));
		memset(&(*costs)[t->nr_rows], 0, sizeof(**costs));
		memcpy(row->key, key, sizeof(key));
		row->thread = x->thread;
		t->nr_rows++;
	}
	row = &t->rows[idx];
	if (row->thread != x->thread)
		row->thread = -1;
	row->count++;
	row->ns += ns;
	row->kvm_ns += x->kvm_ns;
	row->vmm_ns += x->vmm_ns;
	row->preempted_ns += x->preempted_ns;
	row->sleep_ns += x->sleep_ns;
	if (ns > row->max_ns)
		row->max_ns = ns;
	{
		struct costs *c = &(*costs)[idx];

		if (vperf_report_grow(&c->ns, &c->cap, c->nr, sizeof(*c->ns)))
			return -ENOMEM;
		c->ns[c->nr++] = ns;
	}
	t->count++;
	t->ns += ns;
	t->no_thread += x->thread < 0;
	return 0;
}

int vperf_exit_table__build(struct vperf_report *r, const struct vperf_report_analysis *a,
			    const enum vperf_exit_key *keys, size_t nr_keys,
			    struct vperf_exit_table *t)
{
	struct vperf_report_strtab rows = { 0 };
	struct costs *costs = NULL;
	size_t cap = 0;
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->nr_keys = nr_keys < VPERF_EXIT_NR_KEYS ? nr_keys : VPERF_EXIT_NR_KEYS;
	memcpy(t->keys, keys, t->nr_keys * sizeof(*keys));
	for (size_t i = 0; i < a->nr_exits && !err; i++)
		err = add_exit(r, a, t, &rows, &costs, &cap, &a->exits[i]);
	for (size_t i = 0; i < t->nr_rows && !err; i++) {
		struct vperf_exit_row *row = &t->rows[i];
		struct costs *c = &costs[i];
		uint64_t wall = row->thread >= 0 ? wall_of(a, row->thread) : 0;

		qsort(c->ns, c->nr, sizeof(*c->ns), by_u64);
		/* nearest rank: the smallest cost at or above 99% of the exits */
		row->p99_ns = c->ns[(c->nr * 99 + 99) / 100 - 1];
		row->share = wall ? (double)row->ns / (double)wall : -1.0;
	}
	for (size_t i = 0; costs && i < t->nr_rows; i++)
		free(costs[i].ns);
	free(costs);
	vperf_report_strtab__exit(&rows);
	if (err) {
		vperf_exit_table__exit(t);
		return err;
	}
	if (t->nr_rows > 1)
		qsort(t->rows, t->nr_rows, sizeof(*t->rows), by_cost);
	return 0;
}

void vperf_exit_table__exit(struct vperf_exit_table *t)
{
	free(t->rows);
	vperf_report_strtab__exit(&t->owned);
	memset(t, 0, sizeof(*t));
}

/* A frame that names an exit's reason: resolved already, so that nothing looks it up. */
static struct vperf_report_frame reason_frame(const struct vperf_report_analysis *a,
					      const struct vperf_report_exit *x)
{
	const char *name = vperf_report_exit_name(x->reason, a->svm);

	return (struct vperf_report_frame){ .ip = x->reason, .map = -1, .guest = true,
					    .resolved = true, .found = true,
					    .sym = name ? name : "unknown exit reason",
					    .dso = "[exit reason]" };
}

int vperf_report__add_exit_samples(struct vperf_report *r, const struct vperf_report_analysis *a,
				   int *event)
{
	size_t n = a->nr_exits, nf = r->nr_frames, ns = r->nr_samples;
	struct vperf_report_frame *frames;
	struct vperf_report_sample *samples;
	char **events, **strings, *name = strdup(VPERF_EXIT_COST_EVENT), *none = strdup(VPERF_EXIT_NO_THREAD);
	uint32_t none_comm = (uint32_t)r->nr_strings;

	if (r->nr_events >= 64) {
		free(name);
		free(none);
		return -E2BIG;
	}
	if (!name || !none)
		goto nomem;
	frames = realloc(r->frames, (nf + 2 * n + 1) * sizeof(*frames));
	if (frames)
		r->frames = frames;
	samples = realloc(r->samples, (ns + n + 1) * sizeof(*samples));
	if (samples)
		r->samples = samples;
	events = realloc(r->events, (r->nr_events + 1) * sizeof(*events));
	if (events)
		r->events = events;
	strings = realloc(r->strings, (r->nr_strings + 1) * sizeof(*strings));
	if (strings)
		r->strings = strings;
	if (!frames || !samples || !events || !strings)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		const struct vperf_report_exit *x = &a->exits[i];
		size_t rip = r->tlevs[x->tlev].frame;
		const struct vperf_report_thread *t = x->thread >= 0 ? &r->threads[x->thread] : NULL;
		struct vperf_report_sample *sm = &r->samples[r->nr_samples++];

		memset(sm, 0, sizeof(*sm));
		sm->ts = x->ts;
		sm->period = x->kvm_ns + x->vmm_ns + x->preempted_ns + x->sleep_ns;
		sm->tid = t ? t->tid : 0;
		sm->pid = t ? t->pid : 0;
		sm->cpu = x->vcpu;
		sm->thread = x->thread;
		sm->event = (uint32_t)r->nr_events;
		sm->comm = t && t->comm != UINT32_MAX ? t->comm : none_comm;
		sm->frame = r->nr_frames;
		r->frames[r->nr_frames++] = reason_frame(a, x);
		if (rip < nf)	/* a copy: a sample's frames are consecutive */
			r->frames[r->nr_frames++] = r->frames[rip];
		sm->nr_frames = r->nr_frames - sm->frame;
		sm->layer = rip < nf && !r->frames[rip].kernel ? 3 : 2;	/* guest_user, guest_kernel */
	}
	r->events[r->nr_events] = name;
	r->strings[r->nr_strings++] = none;
	r->cost_events |= 1ull << r->nr_events;
	*event = (int)r->nr_events++;
	return 0;
nomem:
	r->nr_frames = nf;
	r->nr_samples = ns;
	free(name);
	free(none);
	return -ENOMEM;
}
