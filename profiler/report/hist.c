// SPDX-License-Identifier: MIT
/* One event's samples grouped by the --sort keys, most period first (report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

#include "hist.h"

const char *const vperf_report_key_names[VPERF_REPORT_NR_KEYS] = {
	"symbol", "dso", "tid", "pid", "comm", "layer",
};

int vperf_report_keys_parse(const char *list, enum vperf_report_key *keys, size_t max,
			    size_t *nr, char *why, size_t why_len)
{
	int k[VPERF_REPORT_NR_KEYS * 4];
	int err = vperf_report_parse_keys(list, vperf_report_key_names, VPERF_REPORT_NR_KEYS,
					  VPERF_REPORT_KEY_TID, "", k, max < 4 * VPERF_REPORT_NR_KEYS ?
					  max : 4 * VPERF_REPORT_NR_KEYS, nr, why, why_len);

	for (size_t i = 0; !err && i < *nr; i++)
		keys[i] = (enum vperf_report_key)k[i];
	return err;
}

/* ---- keys ---- */

static const char *key_of(struct vperf_report *r, struct vperf_report_hist *h,
			  const struct vperf_report_sample *s,
			  enum vperf_report_key k)
{
	const struct vperf_report_frame *f = s->nr_frames ? vperf_report__frame(r, s->frame) : NULL;
	char num[32];

	switch (k) {
	case VPERF_REPORT_KEY_SYMBOL:
		return f ? f->sym : VPERF_REPORT_UNKNOWN;
	case VPERF_REPORT_KEY_DSO:
		return f ? f->dso : VPERF_REPORT_UNKNOWN;
	case VPERF_REPORT_KEY_TID:
	case VPERF_REPORT_KEY_PID:
		snprintf(num, sizeof(num), "%u", k == VPERF_REPORT_KEY_TID ? s->tid : s->pid);
		return vperf_report_strtab__intern(&h->owned, num);
	case VPERF_REPORT_KEY_COMM:
		return r->strings[s->comm];
	case VPERF_REPORT_KEY_LAYER:
		return s->layer < 5 ? vperf_schema_layer_names[s->layer] : VPERF_REPORT_UNKNOWN;
	default:
		return VPERF_REPORT_UNKNOWN;
	}
}

/* The sample's frames' names joined by '\n' (a chain's identity). */
static char *chain_key(struct vperf_report *r, const struct vperf_report_sample *s)
{
	size_t len = 0, cap = 256;
	char *k = malloc(cap), buf[512];

	if (!k)
		return NULL;
	k[0] = 0;
	for (size_t i = 0; i < s->nr_frames; i++) {
		const char *n = vperf_report__frame_name(r, s->frame + i, buf, sizeof(buf));
		size_t l = strlen(n);

		if (len + l + 2 > cap) {
			char *g;

			while (len + l + 2 > cap)
				cap *= 2;
			g = realloc(k, cap);
			if (!g) {
				free(k);
				return NULL;
			}
			k = g;
		}
		memcpy(k + len, n, l);
		len += l;
		k[len++] = '\n';
		k[len] = 0;
	}
	return k;
}

static int add_chain(struct vperf_report *r, struct vperf_report_row *row,
		     struct vperf_report_strtab *t, size_t sample)
{
	const struct vperf_report_sample *s = &r->samples[sample];
	char *key = chain_key(r, s);
	size_t idx;
	bool added;
	int err;

	if (!key)
		return -ENOMEM;
	err = vperf_report_strtab__get(t, key, row->nr_chains, &idx, &added);
	free(key);
	if (err)
		return err;
	if (added) {
		struct vperf_report_chain *n = realloc(row->chains,
						       (row->nr_chains + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		row->chains = n;
		row->chains[idx] = (struct vperf_report_chain){ .sample = sample };
		row->nr_chains++;
	}
	row->chains[idx].samples++;
	row->chains[idx].period += s->period;
	return 0;
}

static int by_period(const void *a, const void *b)
{
	const struct vperf_report_row *x = a, *y = b;

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	for (int i = 0; i < VPERF_REPORT_NR_KEYS; i++) {
		int c = strcmp(x->key[i] ? x->key[i] : "", y->key[i] ? y->key[i] : "");

		if (c)
			return c;
	}
	return 0;
}

static int by_children(const void *a, const void *b)
{
	const struct vperf_report_row *x = a, *y = b;

	if (x->children_period != y->children_period)
		return x->children_period > y->children_period ? -1 : 1;
	return by_period(a, b);
}

static int chain_by_period(const void *a, const void *b)
{
	const struct vperf_report_chain *x = a, *y = b;

	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/* The rows being built: their index by key tuple, and each one's chains' index. */
struct building {
	struct vperf_report_strtab rows, *ct;
	size_t cap;
};

/*
 * The row of the key tuple made of the sample's keys, with frame f's symbol and DSO for those
 * keys (f: the leaf for the sample's own row, a caller for a Children row; NULL: none).
 * Its index in *idx; 0 or -ENOMEM.
 */
static int row_of(struct vperf_report *r, struct vperf_report_hist *h, struct building *b,
		  const struct vperf_report_sample *s, const struct vperf_report_frame *f,
		  bool by_symbol, size_t *idx)
{
	const char *key[VPERF_REPORT_NR_KEYS] = { 0 };
	struct vperf_report_row *row;
	char tuple[4096];
	size_t off = 0;
	bool added;

	for (size_t k = 0; k < h->nr_keys; k++) {
		if (h->keys[k] == VPERF_REPORT_KEY_SYMBOL)
			key[k] = f ? f->sym : VPERF_REPORT_UNKNOWN;
		else if (h->keys[k] == VPERF_REPORT_KEY_DSO)
			key[k] = f ? f->dso : VPERF_REPORT_UNKNOWN;
		else
			key[k] = key_of(r, h, s, h->keys[k]);
		if (!key[k])
			return -ENOMEM;
		off += (size_t)snprintf(tuple + off, sizeof(tuple) - off, "%s\n", key[k]);
		if (off >= sizeof(tuple))
			off = sizeof(tuple) - 1;
	}
	/* a symbol's row is also its DSO's: "main" of two programs are two rows */
	if (f && by_symbol)
		snprintf(tuple + off, sizeof(tuple) - off, "%s", f->dso);
	if (vperf_report_strtab__get(&b->rows, tuple, h->nr_rows, idx, &added))
		return -ENOMEM;
	if (!added)
		return 0;
	if (h->nr_rows == b->cap) {
		size_t c = b->cap ? 2 * b->cap : 64;
		struct vperf_report_row *g = realloc(h->rows, c * sizeof(*g));
		struct vperf_report_strtab *n = realloc(b->ct, c * sizeof(*n));

		if (n)
			b->ct = n;
		if (g)
			h->rows = g;
		if (!g || !n)
			return -ENOMEM;
		b->cap = c;
	}
	row = &h->rows[h->nr_rows];
	memset(row, 0, sizeof(*row));
	memset(&b->ct[h->nr_rows], 0, sizeof(*b->ct));
	memcpy(row->key, key, sizeof(key));
	row->kernel = f && f->kernel;
	row->dso = f ? f->dso : VPERF_REPORT_UNKNOWN;
	h->nr_rows++;
	return 0;
}

/*
 * Children: the sample's period goes to the row of every function on its stack once (a
 * recursive one once), its own included, as perf report --children counts.
 */
static int add_children(struct vperf_report *r, struct vperf_report_hist *h, struct building *b,
			const struct vperf_report_sample *s)
{
	for (size_t j = 0; j < s->nr_frames; j++) {
		const struct vperf_report_frame *f = vperf_report__frame(r, s->frame + j);
		bool seen = false;
		size_t idx;

		for (size_t i = 0; i < j && !seen; i++) {
			const struct vperf_report_frame *g = vperf_report__frame(r, s->frame + i);

			seen = g->found == f->found && g->sym == f->sym && !strcmp(g->dso, f->dso);
		}
		if (seen)
			continue;
		if (row_of(r, h, b, s, f, true, &idx))
			return -ENOMEM;
		h->rows[idx].children_samples++;
		h->rows[idx].children_period += s->period;
	}
	return 0;
}

int vperf_report_hist__build(struct vperf_report *r, int event, const enum vperf_report_key *keys,
			     size_t nr_keys, unsigned int flags, struct vperf_report_hist *h)
{
	struct building b = { 0 };
	bool by_symbol = false;
	int err = 0;

	memset(h, 0, sizeof(*h));
	h->event = event;
	h->nr_keys = nr_keys < VPERF_REPORT_NR_KEYS ? nr_keys : VPERF_REPORT_NR_KEYS;
	memcpy(h->keys, keys, h->nr_keys * sizeof(*keys));
	for (size_t k = 0; k < h->nr_keys; k++)
		by_symbol |= h->keys[k] == VPERF_REPORT_KEY_SYMBOL;
	/* callers have rows of their own only where rows are by symbol */
	h->children = (flags & VPERF_HIST_CHILDREN) && by_symbol;
	for (size_t i = 0; i < r->nr_samples && !err; i++) {
		const struct vperf_report_sample *s = &r->samples[i];
		const struct vperf_report_frame *leaf;
		size_t idx;

		if ((int)s->event != event)
			continue;
		leaf = s->nr_frames ? vperf_report__frame(r, s->frame) : NULL;
		h->samples++;
		h->period += s->period;
		if (!leaf || !leaf->found)
			h->unresolved++;
		err = row_of(r, h, &b, s, leaf, by_symbol, &idx);
		if (err)
			break;
		h->rows[idx].samples++;
		h->rows[idx].period += s->period;
		if (!h->children) {
			h->rows[idx].children_samples++;
			h->rows[idx].children_period += s->period;
		}
		if (flags & VPERF_HIST_CHAINS)
			err = add_chain(r, &h->rows[idx], &b.ct[idx], i);
		if (!err && h->children) {
			if (s->nr_frames)
				err = add_children(r, h, &b, s);
			else {
				h->rows[idx].children_samples++;
				h->rows[idx].children_period += s->period;
			}
		}
	}
	for (size_t i = 0; b.ct && i < h->nr_rows; i++)
		vperf_report_strtab__exit(&b.ct[i]);
	free(b.ct);
	vperf_report_strtab__exit(&b.rows);
	if (err) {
		vperf_report_hist__exit(h);
		return err;
	}
	for (size_t i = 0; i < h->nr_rows; i++)
		if (h->rows[i].nr_chains > 1)
			qsort(h->rows[i].chains, h->rows[i].nr_chains, sizeof(*h->rows[i].chains),
			      chain_by_period);
	if (h->nr_rows > 1)
		qsort(h->rows, h->nr_rows, sizeof(*h->rows), h->children ? by_children : by_period);
	return 0;
}

void vperf_report_hist__exit(struct vperf_report_hist *h)
{
	for (size_t i = 0; i < h->nr_rows; i++)
		free(h->rows[i].chains);
	free(h->rows);
	vperf_report_strtab__exit(&h->owned);
	memset(h, 0, sizeof(*h));
}
