// SPDX-License-Identifier: MIT
/*
 * A recording's events, read into the report (sink.h): each event class resolved against the
 * recording schema once, then each event taken by its field numbers, following each process's
 * address space (mmap, exec, fork) and each thread's name (exec, comm, fork) as they were when
 * each sample was taken.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <babeltrace2/babeltrace.h>

#include "decode.h"
#include "session.h"
#include "space.h"
#include "containers.h"
#include "schema.h"
#include "sink.h"
#include "why.h"

#define KERNEL_START	0xffff800000000000ull	/* x86-64: kernel addresses from here */
#define LAYER_GUEST_KERNEL	VPERF_CTF_GUEST_KERNEL
#define LAYER_GUEST_USER	VPERF_CTF_GUEST_USER
#define LAYER_VMM		VPERF_CTF_VMM
#define LAYER_HOST_KERNEL	VPERF_CTF_HOST_KERNEL
#define LAYER_HOST_USER		VPERF_CTF_HOST_USER

static bool guest_layer(uint8_t layer)
{
	return layer == LAYER_GUEST_KERNEL || layer == LAYER_GUEST_USER;
}

/* A process's address space now: which of r->maps holds each address. */
struct space {
	uint32_t pid;
	bool guest;			/* a guest's process: its pids are not the host's */
	struct vperf_report_amap am;
};

/*
 * An event class of the recording, resolved against the schema (record/schema.h) when its
 * first event comes: which schema class it is, and where each of its fields is in the payload.
 */
#define MAX_CLASS_ID	4096
#define MAX_VCPUS	1024		/* vCPUs whose guest thread is followed */
struct rclass {
	bool resolved;
	int16_t ev;					/* enum vperf_ev; -1 not in the schema */
	int32_t idx[VPERF_SCHEMA_MAX_FIELDS];		/* payload member, -1 absent (schema 0) */
	int32_t len_idx[VPERF_SCHEMA_MAX_FIELDS];	/* a string's NAME_len member, or -1 */
	int64_t dflt[VPERF_SCHEMA_MAX_FIELDS];		/* what an absent field reads as */
};

/*
 * What the reader follows as it goes.  The recording chooses how many names, threads, processes
 * and mappings there are: each is found through a hash table or a tree, never a search through
 * all of them.
 */
struct sink {
	struct vperf_report *r;
	struct space *spaces;
	size_t nr_spaces, cap_spaces;
	size_t cap_samples, cap_frames, cap_maps, cap_ksyms, cap_gksyms, cap_threads, cap_tlevs;
	size_t cap_counts, cap_strings, cap_events;
	struct vperf_report_idx strings, threads, space_idx, events;
	uint64_t rng;			/* seeds each space's tree */
	bool env_read;
	int64_t schema;			/* the recording's schema_version (0: before it) */
	struct rclass *cls;		/* by event class id, MAX_CLASS_ID of them */
	int32_t on_vcpu[MAX_VCPUS];	/* the guest thread each vCPU runs (its last guest
					 * sched_switch), -1: none seen; a kvm_exit's */
	char why[256];			/* why take_event() stopped, for a person */
};

/* A string and the table it is looked up in, for same_*(). */
struct str_key {
	char *const *in;
	const char *s;
};

static bool same_str(const void *ctx, size_t i)
{
	const struct str_key *k = ctx;

	return !strcmp(k->in[i], k->s);
}

/*
 * The index of s in the table *arr of *nr strings (copied in if new), through its hash table t;
 * the table holds fewer than UINT32_MAX.  0 or -ENOMEM.
 */
static int str_index(struct vperf_report_idx *t, char ***arr, size_t *nr, size_t *cap,
		     const char *s, uint32_t *idx)
{
	uint64_t h = vperf_report_idx__hash(t, s, strlen(s));
	struct str_key key = { *arr, s };
	int64_t i = vperf_report_idx__find(t, h, same_str, &key);

	if (i >= 0) {
		*idx = (uint32_t)i;
		return 0;
	}
	if (*nr >= UINT32_MAX - 1 || vperf_report_grow(arr, cap, *nr, sizeof(**arr)))
		return -ENOMEM;
	(*arr)[*nr] = strdup(s);
	if (!(*arr)[*nr] || vperf_report_idx__add(t, h, *nr)) {
		free((*arr)[*nr]);
		return -ENOMEM;
	}
	*idx = (uint32_t)(*nr)++;
	return 0;
}

/* s's index in r->strings (the interned names), added if new. */
static int intern(struct sink *k, const char *s, uint32_t *idx)
{
	return str_index(&k->strings, &k->r->strings, &k->r->nr_strings, &k->cap_strings, s, idx);
}

/* The hash of a thread's or a process's key: its id on its machine. */
static uint64_t id_hash(struct vperf_report_idx *t, uint32_t id, bool guest)
{
	unsigned char b[5] = { (unsigned char)id, (unsigned char)(id >> 8),
			       (unsigned char)(id >> 16), (unsigned char)(id >> 24), guest };

	return vperf_report_idx__hash(t, b, sizeof(b));
}

/* A thread's or a process's key and the sink it is looked up in, for same_*(). */
struct id_ctx {
	const struct sink *k;
	uint32_t id;
	bool guest;
};

static bool same_space(const void *ctx, size_t i)
{
	const struct id_ctx *c = ctx;

	return c->k->spaces[i].pid == c->id && c->k->spaces[i].guest == c->guest;
}

static bool same_thread(const void *ctx, size_t i)
{
	const struct id_ctx *c = ctx;

	return c->k->r->threads[i].tid == c->id && c->k->r->threads[i].guest == c->guest;
}

/*
 * The address space of pid of the guest or the host, made (empty) if create; NULL if not there
 * (or out of memory).  A pointer into k->spaces: making another may move it.
 */
static struct space *space_of(struct sink *k, bool guest, uint32_t pid, bool create)
{
	struct id_ctx c = { k, pid, guest };
	uint64_t h = id_hash(&k->space_idx, pid, guest);
	int64_t i = vperf_report_idx__find(&k->space_idx, h, same_space, &c);
	struct space *n;

	if (i >= 0)
		return &k->spaces[i];
	if (!create || vperf_report_grow(&k->spaces, &k->cap_spaces, k->nr_spaces, sizeof(*n)) ||
	    vperf_report_idx__add(&k->space_idx, h, k->nr_spaces))
		return NULL;
	n = &k->spaces[k->nr_spaces++];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	n->guest = guest;
	k->rng = k->rng * 6364136223846793005ull + 1442695040888963407ull;
	n->am.rng = k->rng;
	return n;
}

/* The thread tid of the guest or the host (threads' index), made if create; -1 if not there. */
static int32_t thread_of(struct sink *k, bool guest, uint32_t tid, bool create)
{
	struct vperf_report *r = k->r;
	struct id_ctx c = { k, tid, guest };
	uint64_t h = id_hash(&k->threads, tid, guest);
	int64_t i = vperf_report_idx__find(&k->threads, h, same_thread, &c);
	struct vperf_report_thread *n;

	if (i >= 0)
		return (int32_t)i;
	if (!create || r->nr_threads >= INT32_MAX ||
	    vperf_report_grow(&r->threads, &k->cap_threads, r->nr_threads, sizeof(*n)) ||
	    vperf_report_idx__add(&k->threads, h, r->nr_threads))
		return -1;
	n = &r->threads[r->nr_threads];
	memset(n, 0, sizeof(*n));
	n->tid = tid;
	n->guest = guest;
	n->comm = UINT32_MAX;
	return (int32_t)r->nr_threads++;
}

/* The map of pid's address space holding ip now, or -1. */
static int32_t map_of(struct sink *k, bool guest, uint32_t pid, uint64_t ip)
{
	struct space *s = space_of(k, guest, pid, false);

	return s ? vperf_report_amap__find(&s->am, ip) : -1;
}

/* ---- fields ---- */

static const bt_field *member(const bt_field *st, const char *name)
{
	return st ? bt_field_structure_borrow_member_field_by_name_const(st, name) : NULL;
}

static uint64_t u64_of(const bt_field *f)
{
	bt_field_class_type t;

	if (!f)
		return 0;
	t = bt_field_get_class_type(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
		return bt_field_integer_unsigned_get_value(f);
	if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
		return (uint64_t)bt_field_integer_signed_get_value(f);
	return 0;
}

static const char *str_of(const bt_field *f)
{
	if (!f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_STRING))
		return "";
	return bt_field_string_get_value(f);
}

static uint64_t seq_len(const bt_field *f)
{
	if (!f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_ARRAY))
		return 0;
	return bt_field_array_get_length(f);
}

static uint64_t seq_at(const bt_field *f, uint64_t i)
{
	return u64_of(bt_field_array_borrow_element_field_by_index_const(f, i));
}

/* ---- the schema's fields ---- */

/* One event being read: its payload and its class's field places. */
struct ev {
	const bt_field *p;
	const struct rclass *c;
};

static const bt_field *fld(const struct ev *e, unsigned int f)
{
	int32_t i = e->c->idx[f];

	if (i < 0)
		return NULL;
	return bt_field_structure_borrow_member_field_by_index_const(e->p, (uint64_t)i);
}

/* Field f as an integer; an absent one (schema 0) as the schema says it reads. */
static uint64_t U(const struct ev *e, unsigned int f)
{
	const bt_field *x = fld(e, f);

	return x ? u64_of(x) : (uint64_t)e->c->dflt[f];
}

/*
 * Field f as a string, "" if absent.  vperf's CTF writes each string as a text sequence counted
 * by a "NAME_len" member: a length of 0 reads as "", for babeltrace2 2.0.4 (Debian 12) leaves
 * an empty text sequence's string as the one the field held before (fixed upstream:
 * https://review.lttng.org/c/babeltrace/+/4528).
 */
static const char *S(const struct ev *e, unsigned int f)
{
	int32_t l = e->c->len_idx[f];

	if (l >= 0 && !u64_of(bt_field_structure_borrow_member_field_by_index_const(e->p,
										(uint64_t)l)))
		return "";
	return str_of(fld(e, f));
}

/* The index of the member called name in the structure class st, or -1. */
static int32_t member_index(const bt_field_class *st, const char *name)
{
	uint64_t n = bt_field_class_structure_get_member_count(st);

	for (uint64_t i = 0; i < n && i < INT32_MAX; i++) {
		const bt_field_class_structure_member *m =
			bt_field_class_structure_borrow_member_by_index_const(st, i);

		if (!strcmp(bt_field_class_structure_member_get_name(m), name))
			return (int32_t)i;
	}
	return -1;
}

/* Does the member's class hold what a field of type t needs? */
static bool type_fits(const bt_field_class *st, int32_t i, enum vperf_ctf_type t)
{
	const bt_field_class *fc = bt_field_class_structure_member_borrow_field_class_const(
		bt_field_class_structure_borrow_member_by_index_const(st, (uint64_t)i));
	bt_field_class_type k = bt_field_class_get_type(fc);

	switch (t) {
	case VPERF_CTF_TYPE_STRING:
		return bt_field_class_type_is(k, BT_FIELD_CLASS_TYPE_STRING);
	case VPERF_CTF_TYPE_U64_SEQ:
		return bt_field_class_type_is(k, BT_FIELD_CLASS_TYPE_ARRAY) &&
		       bt_field_class_type_is(bt_field_class_get_type(
			       bt_field_class_array_borrow_element_field_class_const(fc)),
					      BT_FIELD_CLASS_TYPE_INTEGER);
	default:
		return bt_field_class_type_is(k, BT_FIELD_CLASS_TYPE_INTEGER);
	}
}

/*
 * Class ec against the schema: which class it is and where its fields are.  A class the schema
 * does not have is skipped (a newer vperf's).  Schema 1 on: each field must be there, of its
 * type; schema 0: a field may have its old name, or be absent (vperf_schema_v0[]).
 */
static int resolve(struct sink *k, const bt_event_class *ec, struct rclass *c)
{
	const char *name = bt_event_class_get_name(ec);
	const bt_field_class *st = bt_event_class_borrow_payload_field_class_const(ec);
	const struct vperf_ctf_class_desc *d = NULL;

	c->resolved = true;
	c->ev = -1;
	for (unsigned int i = 0; name && i <= VPERF_EV_NR; i++)
		if (!strcmp(vperf_schema_desc[i].name, name)) {
			d = &vperf_schema_desc[i];
			c->ev = (int16_t)i;
		}
	if (!d)
		return 0;
	if (!st || bt_field_class_get_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE) {
		if (!k->schema)
			goto skip;
		return vperf_why(k->why, sizeof(k->why), -EINVAL, "its %s events have no fields (schema "
			    "%" PRId64 ")", name, k->schema);
	}
	for (size_t f = 0; f < d->nr_fields; f++) {
		enum vperf_ctf_type t = d->fields[f].type;
		char len_name[80];

		c->idx[f] = member_index(st, d->fields[f].name);
		c->dflt[f] = 0;
		for (size_t v = 0; !k->schema && v < vperf_schema_nr_v0; v++) {
			const struct vperf_schema_v0 *o = &vperf_schema_v0[v];

			if (o->ev != c->ev || o->field != f)
				continue;
			if (o->old_name && c->idx[f] < 0)
				c->idx[f] = member_index(st, o->old_name);
			if (!o->old_name)
				c->dflt[f] = o->dflt;
		}
		if (c->idx[f] >= 0 && !type_fits(st, c->idx[f], t)) {
			if (k->schema)
				return vperf_why(k->why, sizeof(k->why), -EINVAL, "its %s events' field "
					    "%s is not of the type schema %" PRId64 " says", name,
					    d->fields[f].name, k->schema);
			c->idx[f] = -1;
		}
		if (c->idx[f] < 0 && k->schema)
			return vperf_why(k->why, sizeof(k->why), -EINVAL, "its %s events have no "
				    "field %s, which schema %" PRId64 " has", name,
				    d->fields[f].name, k->schema);
		c->len_idx[f] = -1;
		if (t == VPERF_CTF_TYPE_STRING && c->idx[f] >= 0 &&
		    snprintf(len_name, sizeof(len_name), "%s_len", d->fields[f].name) <
		    (int)sizeof(len_name))
			c->len_idx[f] = member_index(st, len_name);
	}
	return 0;
skip:
	c->ev = -1;
	return 0;
}

/* ---- events ---- */

static void read_env(struct sink *k, const bt_event *ev)
{
	const bt_trace *t = bt_stream_borrow_trace_const(bt_event_borrow_stream_const(ev));
	const bt_value *v;

	k->env_read = true;
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "schema_version");
	if (v && bt_value_is_signed_integer(v))
		k->schema = bt_value_integer_signed_get(v);
	else if (v && bt_value_is_unsigned_integer(v))
		k->schema = (int64_t)(bt_value_integer_unsigned_get(v) & INT64_MAX);
	else if (v)
		k->schema = -1;
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "callchains");
	if (v && bt_value_is_string(v))
		k->r->callchains = !strcmp(bt_value_string_get(v), "1");
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "kernel_symbols");
	if (v && bt_value_is_string(v))
		k->r->ksyms_note = strdup(bt_value_string_get(v));
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "guest_kernel_symbols");
	if (v && bt_value_is_string(v))
		k->r->gksyms_note = strdup(bt_value_string_get(v));
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "vmm_pid");
	if (v && bt_value_is_string(v))
		k->r->vmm_pid = strtoull(bt_value_string_get(v), NULL, 10);
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "vm_name");
	if (v && bt_value_is_string(v))
		k->r->vm_name = strdup(bt_value_string_get(v));
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "events");
	if (v && bt_value_is_string(v))
		k->r->event_list = strdup(bt_value_string_get(v));
	v = bt_trace_borrow_environment_entry_value_by_name_const(t, "hostname");
	if (v && bt_value_is_string(v))
		k->r->hostname = strdup(bt_value_string_get(v));
}

/* The clock's origin, from the first event's clock class: what exports write as theirs. */
static void read_clock(struct vperf_report *r, const bt_clock_snapshot *cs)
{
	const bt_clock_class *cc = bt_clock_snapshot_borrow_clock_class_const(cs);
	uint64_t hz = bt_clock_class_get_frequency(cc), cycles;
	int64_t s;

	bt_clock_class_get_offset(cc, &s, &cycles);
	r->clock_offset_s = s;
	r->clock_offset_ns = !hz || hz == 1000000000ull ? cycles :
			     (uint64_t)((unsigned __int128)cycles * 1000000000u / hz);
	r->clock_absolute = bt_clock_class_origin_is_unix_epoch(cc);
	r->clock_read = true;
}

/* The event a sample was taken on: its sample_event label, else the recording's one event. */
static int sample_event(struct sink *k, const bt_field *f, uint32_t *idx)
{
	struct vperf_report *r = k->r;
	const char *name = r->event_list && *r->event_list ? r->event_list : "sample";
	bt_field_class_enumeration_mapping_label_array labels;
	uint64_t n = 0;

	if (f && bt_field_class_type_is(bt_field_get_class_type(f),
					BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION) &&
	    bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n) ==
	    BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK && n)
		name = labels[0];
	return str_index(&k->events, &r->events, &r->nr_events, &k->cap_events, name, idx);
}

static int add_frame(struct sink *k, bool guest, uint32_t pid, uint64_t ip, bool ret)
{
	struct vperf_report *r = k->r;
	struct vperf_report_frame *f;

	if (vperf_report_grow(&r->frames, &k->cap_frames, r->nr_frames, sizeof(*r->frames)))
		return -ENOMEM;
	f = &r->frames[r->nr_frames++];
	memset(f, 0, sizeof(*f));
	f->ip = ip;
	f->ret = ret && ip;
	f->kernel = ip >= KERNEL_START;
	f->guest = guest;
	f->map = f->kernel ? -1 : map_of(k, guest, pid, ip);
	if (!f->kernel && f->map < 0)
		r->nr_unmapped++;
	return 0;
}

/*
 * The last timeline event's frame: a kvm_exit's guest RIP, resolved in the address space of the
 * guest thread t (-1: none known; its kernel symbols still name a kernel RIP).  A user RIP
 * without a mapping is not counted in nr_unmapped: that warns of samples without mmaps.
 */
static int exit_frame(struct sink *k, int32_t t, uint64_t rip)
{
	struct vperf_report *r = k->r;
	uint32_t pid = t < 0 ? 0 : r->threads[t].pid ? r->threads[t].pid : r->threads[t].tid;
	uint64_t unmapped = r->nr_unmapped;

	if (add_frame(k, true, pid, rip, false))
		return -ENOMEM;
	r->nr_unmapped = unmapped;
	r->tlevs[r->nr_tlevs - 1].frame = r->nr_frames - 1;
	return 0;
}

static int take_sample(struct sink *k, const struct ev *p, uint64_t ts, uint8_t layer,
		       uint32_t cpu)
{
	struct vperf_report *r = k->r;
	struct vperf_report_sample *s;
	const bt_field *chain = fld(p, VPERF_F_sample_callchain);
	const bt_field *vals = fld(p, VPERF_F_sample_counts);
	bool period = U(p, VPERF_F_sample_counts_are) == VPERF_COUNTS_ARE_PERIOD;
	uint64_t ip = U(p, VPERF_F_sample_ip), n = seq_len(chain);
	struct vperf_report_thread *t;
	int err;

	if (vperf_report_grow(&r->samples, &k->cap_samples, r->nr_samples, sizeof(*r->samples)))
		return -ENOMEM;
	s = &r->samples[r->nr_samples];
	memset(s, 0, sizeof(*s));
	s->ts = ts;
	s->layer = layer;
	/* a sample of user code may come through a kernel's ring: its layer is the user's */
	if (U(p, VPERF_F_sample_user) && layer == LAYER_GUEST_KERNEL)
		s->layer = LAYER_GUEST_USER;
	else if (U(p, VPERF_F_sample_user) && layer == LAYER_HOST_KERNEL)
		s->layer = LAYER_HOST_USER;
	s->cpu = cpu;
	s->pid = (uint32_t)U(p, VPERF_F_sample_pid);
	s->tid = (uint32_t)U(p, VPERF_F_sample_tid);
	s->period = period && seq_len(vals) ? seq_at(vals, 0) : 1;
	/* the sampling NMI's: the thread's vperf counts then (docs/abi.md 7.3) */
	if (!period) {
		const bt_field *c = vals;
		uint64_t nc = seq_len(c);

		if (nc > VPERF_REPORT_MAX_COUNTS)
			nc = VPERF_REPORT_MAX_COUNTS;
		s->counts = r->nr_counts;
		s->nr_counts = (uint8_t)nc;
		for (uint64_t i = 0; i < nc; i++) {
			if (vperf_report_grow(&r->counts, &k->cap_counts, r->nr_counts,
					      sizeof(*r->counts)))
				return -ENOMEM;
			r->counts[r->nr_counts++] = seq_at(c, i);
		}
	}
	err = sample_event(k, fld(p, VPERF_F_sample_sample_event), &s->event);
	if (err)
		return err;
	s->thread = thread_of(k, guest_layer(layer), s->tid, true);
	if (s->thread < 0)
		return -ENOMEM;
	t = &r->threads[s->thread];
	if (!t->pid)
		t->pid = s->pid;
	t->nr_samples++;
	if (t->comm == UINT32_MAX) {
		char name[32];

		snprintf(name, sizeof(name), ":%u", s->tid);	/* perf's name for the nameless */
		err = intern(k, name, &t->comm);
		if (err)
			return err;
	}
	s->comm = t->comm;
	s->frame = r->nr_frames;
	/* leaf first: the ip, then the callchain (whose first entry is the ip again) */
	if (!n || seq_at(chain, 0) != ip) {
		err = add_frame(k, guest_layer(layer), s->pid, ip, false);
		if (err)
			return err;
	}
	for (uint64_t i = 0; i < n; i++) {
		err = add_frame(k, guest_layer(layer), s->pid, seq_at(chain, i),
				r->nr_frames > s->frame);
		if (err)
			return err;
	}
	s->nr_frames = r->nr_frames - s->frame;
	r->nr_samples++;
	return 0;
}

static int take_mmap(struct sink *k, const struct ev *p, uint8_t layer)
{
	struct vperf_report *r = k->r;
	struct vperf_report_map *m;
	struct space *s;
	uint32_t pid = (uint32_t)U(p, VPERF_F_mmap_pid);

	if (vperf_report_grow(&r->maps, &k->cap_maps, r->nr_maps, sizeof(*r->maps)))
		return -ENOMEM;
	m = &r->maps[r->nr_maps];
	m->start = U(p, VPERF_F_mmap_start);
	m->len = U(p, VPERF_F_mmap_len);
	m->pgoff = U(p, VPERF_F_mmap_pgoff);
	m->pid = pid;
	m->guest = guest_layer(layer);
	m->elf = -1;
	m->file = strdup(S(p, VPERF_F_mmap_filename));
	s = space_of(k, m->guest, pid, true);
	if (!m->file || !s || r->nr_maps >= INT32_MAX ||
	    vperf_report_amap__add(&s->am, m->start, m->len, (int32_t)r->nr_maps)) {
		free(m->file);
		return -ENOMEM;
	}
	r->nr_maps++;
	r->nr_mmap_events++;
	return 0;
}

static int set_comm(struct sink *k, bool guest, uint32_t tid, const char *comm)
{
	int32_t t = thread_of(k, guest, tid, true);

	return t >= 0 ? intern(k, comm, &k->r->threads[t].comm) : -ENOMEM;
}

/* A timeline event (tlevs), 0 or -ENOMEM. */
static int add_tlev(struct sink *k, uint8_t kind, uint64_t ts, uint8_t layer, uint32_t cpu,
		    int32_t thread, struct vperf_report_tlev **out)
{
	struct vperf_report *r = k->r;
	struct vperf_report_tlev *e;

	if (vperf_report_grow(&r->tlevs, &k->cap_tlevs, r->nr_tlevs, sizeof(*e)))
		return -ENOMEM;
	e = &r->tlevs[r->nr_tlevs++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->ts = ts;
	e->layer = layer;
	e->cpu = cpu;
	e->thread = thread;
	e->other = -1;
	e->str = UINT32_MAX;
	e->frame = SIZE_MAX;
	if (out)
		*out = e;
	return 0;
}

/* The thread tid (pid if known) of the machine layer is in, made if new: index, or -1. */
static int32_t thread_pid(struct sink *k, uint8_t layer, uint32_t tid, uint32_t pid)
{
	int32_t t = thread_of(k, guest_layer(layer), tid, true);

	if (t >= 0 && pid && !k->r->threads[t].pid)
		k->r->threads[t].pid = pid;
	return t;
}

static int take_fork(struct sink *k, const struct ev *p, uint64_t ts, uint8_t layer, uint32_t cpu)
{
	uint32_t ppid = (uint32_t)U(p, VPERF_F_process_fork_parent_pid);
	uint32_t ptid = (uint32_t)U(p, VPERF_F_process_fork_parent_tid);
	uint32_t cpid = (uint32_t)U(p, VPERF_F_process_fork_child_pid);
	uint32_t ctid = (uint32_t)U(p, VPERF_F_process_fork_child_tid);
	const char *ccomm = S(p, VPERF_F_process_fork_child_comm);
	bool guest = guest_layer(layer);
	int32_t pt = thread_of(k, guest, ptid, false), ct = thread_pid(k, layer, ctid, cpid);
	struct vperf_report_tlev *e;
	struct space *ps, *cs;
	int err;

	if (ct < 0 || (pt < 0 && (pt = thread_pid(k, layer, ptid, ppid)) < 0))
		return -ENOMEM;
	if (*ccomm) {
		err = intern(k, ccomm, &k->r->threads[ct].comm);
		if (err)
			return err;
	} else if (k->r->threads[pt].comm != UINT32_MAX) {
		k->r->threads[ct].comm = k->r->threads[pt].comm;
	}
	err = add_tlev(k, VPERF_REPORT_EV_FORK, ts, layer, cpu, ct, &e);
	if (err)
		return err;
	e->other = pt;
	if (cpid == ppid || !(ps = space_of(k, guest, ppid, false)))
		return 0;
	/* a new process: a copy of its parent's address space */
	cs = space_of(k, guest, cpid, true);
	if (!cs)
		return -ENOMEM;
	ps = space_of(k, guest, ppid, false);	/* space_of(create) may have moved it */
	return vperf_report_amap__copy(&cs->am, &ps->am);
}

/* Thread t's name is now name (unless empty or unchanged): 0 or -ENOMEM. */
static int rename_to(struct sink *k, int32_t t, const char *name)
{
	struct vperf_report *r = k->r;
	uint32_t c = r->threads[t].comm;

	if (!*name || (c != UINT32_MAX && !strcmp(r->strings[c], name)))
		return 0;
	return intern(k, name, &r->threads[t].comm);
}

/* thread_switch, sched_switch, sched_wakeup: the timeline's scheduling events. */
static int take_sched(struct sink *k, const struct ev *p, uint64_t ts, uint8_t layer, uint32_t cpu)
{
	struct vperf_report *r = k->r;
	struct vperf_report_tlev *e;
	int32_t t, o;
	int err;

	if (p->c->ev == VPERF_EV_THREAD_SWITCH) {
		bool out = U(p, VPERF_F_thread_switch_direction) == 1;

		t = thread_pid(k, layer, (uint32_t)U(p, VPERF_F_thread_switch_tid),
			       (uint32_t)U(p, VPERF_F_thread_switch_pid));
		if (t < 0)
			return -ENOMEM;
		r->threads[t].switches = true;
		err = add_tlev(k, out ? VPERF_REPORT_EV_SWITCH_OUT : VPERF_REPORT_EV_SWITCH_IN, ts,
			       layer, cpu, t, &e);
		if (!err)
			e->arg = U(p, VPERF_F_thread_switch_preempted);
		return err;
	}
	if (p->c->ev == VPERF_EV_SCHED_WAKEUP) {
		t = thread_pid(k, layer, (uint32_t)U(p, VPERF_F_sched_wakeup_tid), 0);
		if (t < 0)
			return -ENOMEM;
		err = add_tlev(k, VPERF_REPORT_EV_WAKEUP, ts, layer, cpu, t, &e);
		if (!err) {
			e->arg = U(p, VPERF_F_sched_wakeup_waker_tid);
			e->arg2 = U(p, VPERF_F_sched_wakeup_target_cpu);
		}
		return err;
	}
	/*
	 * sched_switch: both threads' names as the kernel had them then, the latest kept (a thread
	 * that names itself, pthread_setname_np, is known by that name from its next switch on)
	 */
	t = thread_pid(k, layer, (uint32_t)U(p, VPERF_F_sched_switch_prev_tid), 0);
	o = thread_pid(k, layer, (uint32_t)U(p, VPERF_F_sched_switch_next_tid), 0);
	if (t < 0 || o < 0)
		return -ENOMEM;
	if (rename_to(k, t, S(p, VPERF_F_sched_switch_prev_comm)) ||
	    rename_to(k, o, S(p, VPERF_F_sched_switch_next_comm)))
		return -ENOMEM;
	err = add_tlev(k, VPERF_REPORT_EV_SCHED_SWITCH, ts, layer, cpu, t, &e);
	if (!err) {
		e->other = o;
		e->arg = U(p, VPERF_F_sched_switch_prev_state);
		e->arg2 = r->threads[t].comm;	/* the names then */
		e->str = r->threads[o].comm;
		if (guest_layer(layer) && cpu < MAX_VCPUS)
			k->on_vcpu[cpu] = o;
	}
	return err;
}

/* The thread of field f (pid from field pf, if any) on layer's machine: its index, or -1. */
static int32_t thread_field(struct sink *k, const struct ev *p, uint8_t layer, unsigned int f,
			    int pf)
{
	uint32_t pid = pf < 0 ? 0 : (uint32_t)U(p, (unsigned int)pf);

	return thread_pid(k, layer, (uint32_t)U(p, f), pid);
}

/* exec, exit, lost_events, marker, vmm_exit, irq_entry, trace_flush, kvm_entry, kvm_exit. */
static int take_other(struct sink *k, const struct ev *p, uint64_t ts, uint8_t layer, uint32_t cpu)
{
	struct vperf_report *r = k->r;
	struct vperf_report_tlev *e;
	bool guest = guest_layer(layer);
	int32_t t = -1;
	int err;

	switch (p->c->ev) {
	case VPERF_EV_PROCESS_EXEC: {
		/* a new program: a new address space (its mmaps follow), and its name */
		uint32_t pid = (uint32_t)U(p, VPERF_F_process_exec_pid);
		struct space *s = space_of(k, guest, pid, false);
		const char *comm = S(p, VPERF_F_process_exec_comm);
		const char *file = S(p, VPERF_F_process_exec_filename);

		if (s)
			vperf_report_amap__exit(&s->am);
		/* schema 0's vperf record wrote the comm as the filename */
		t = thread_field(k, p, layer, VPERF_F_process_exec_tid, VPERF_F_process_exec_pid);
		if (t < 0)
			return -ENOMEM;
		err = intern(k, *comm ? comm : file, &r->threads[t].comm);
		if (!err)
			err = add_tlev(k, VPERF_REPORT_EV_EXEC, ts, layer, cpu, t, &e);
		return err ? err : intern(k, *file ? file : comm, &e->str);
	}
	case VPERF_EV_PROCESS_EXIT:
		t = thread_field(k, p, layer, VPERF_F_process_exit_tid, VPERF_F_process_exit_pid);
		if (t < 0 || add_tlev(k, VPERF_REPORT_EV_EXIT, ts, layer, cpu, t, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_process_exit_exit_code);
		return 0;
	case VPERF_EV_LOST_EVENTS:
		r->lost += U(p, VPERF_F_lost_events_count);
		if (add_tlev(k, VPERF_REPORT_EV_LOST, ts, layer, cpu, -1, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_lost_events_count);
		return 0;
	case VPERF_EV_MARKER:
		/* tid 0: marked by no thread the recording names */
		if (U(p, VPERF_F_marker_tid) &&
		    (t = thread_field(k, p, layer, VPERF_F_marker_tid, VPERF_F_marker_pid)) < 0)
			return -ENOMEM;
		if (add_tlev(k, VPERF_REPORT_EV_MARKER, ts, layer, cpu, t, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_marker_value);
		e->arg2 = U(p, VPERF_F_marker_kind);
		return intern(k, S(p, VPERF_F_marker_name), &e->str);
	case VPERF_EV_VMM_EXIT:
		if (add_tlev(k, VPERF_REPORT_EV_VMM_EXIT, ts, layer,
			     (uint32_t)U(p, VPERF_F_vmm_exit_vcpu), -1, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_vmm_exit_duration_ns);
		e->arg2 = U(p, VPERF_F_vmm_exit_reason);
		/* the recording lasts until its last exit ended, not only began */
		if (e->arg < UINT64_MAX - ts && ts + e->arg > r->last_ts)
			r->last_ts = ts + e->arg;
		/* KVM_EXIT_IO: its port */
		if (e->arg2 == 2 && U(p, VPERF_F_vmm_exit_addr) <= 0xffff)
			e->other = (int32_t)U(p, VPERF_F_vmm_exit_addr);
		return intern(k, S(p, VPERF_F_vmm_exit_reason_name), &e->str);
	case VPERF_EV_IRQ_ENTRY:
		if (!guest)
			return 0;
		/* the interrupted thread is not the interrupt's: no thread */
		if (add_tlev(k, VPERF_REPORT_EV_IRQ, ts, layer, cpu, -1, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_irq_entry_vector);
		e->arg2 = U(p, VPERF_F_irq_entry_kind);
		e->other = (int32_t)(int64_t)U(p, VPERF_F_irq_entry_irq);
		return 0;
	case VPERF_EV_TRACE_FLUSH:
		if (add_tlev(k, VPERF_REPORT_EV_FLUSH, ts, layer,
			     (uint32_t)U(p, VPERF_F_trace_flush_vcpu), -1, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_trace_flush_seq);
		e->arg2 = U(p, VPERF_F_trace_flush_side);
		return 0;
	case VPERF_EV_KVM_EXIT:
		t = thread_field(k, p, layer, VPERF_F_kvm_exit_tid, -1);
		if (t < 0 || add_tlev(k, VPERF_REPORT_EV_KVM_EXIT, ts, layer, cpu, t, &e))
			return -ENOMEM;
		e->arg = U(p, VPERF_F_kvm_exit_exit_reason);
		e->arg2 = U(p, VPERF_F_kvm_exit_vcpu_id);
		/* the guest code it left: in the address space of the guest thread on that vCPU */
		e->other = e->arg2 < MAX_VCPUS ? k->on_vcpu[e->arg2] : -1;
		return exit_frame(k, e->other, U(p, VPERF_F_kvm_exit_guest_rip));
	case VPERF_EV_KVM_ENTRY:
		t = thread_field(k, p, layer, VPERF_F_kvm_entry_tid, -1);
		if (t < 0 || add_tlev(k, VPERF_REPORT_EV_KVM_ENTRY, ts, layer, cpu, t, &e))
			return -ENOMEM;
		e->arg2 = U(p, VPERF_F_kvm_entry_vcpu_id);
		return 0;
	default:
		return 0;	/* kvm_inj_virq, guest_ring_invalid: not on the timeline */
	}
}

/* A kernel_symbol: the host's, or (on a guest stream) the guest kernel's. */
static int take_ksym(struct sink *k, const struct ev *p, bool guest)
{
	struct vperf_report *r = k->r;
	struct vperf_report_sym **tab = guest ? &r->gksyms : &r->ksyms;
	size_t *nr = guest ? &r->nr_gksyms : &r->nr_ksyms;
	size_t *cap = guest ? &k->cap_gksyms : &k->cap_ksyms;
	char *name, *mod;

	if (vperf_report_grow(tab, cap, *nr, sizeof(**tab)))
		return -ENOMEM;
	name = strdup(S(p, VPERF_F_kernel_symbol_name));
	mod = strdup(S(p, VPERF_F_kernel_symbol_module));
	if (!name || !mod) {
		free(name);
		free(mod);
		return -ENOMEM;
	}
	(*tab)[*nr].addr = U(p, VPERF_F_kernel_symbol_addr);
	(*tab)[*nr].size = U(p, VPERF_F_kernel_symbol_size);
	(*tab)[*nr].name = name;
	(*tab)[*nr].module = mod;
	(*nr)++;
	if (guest)
		r->have_gksyms = true;
	else
		r->have_ksyms = true;
	return 0;
}

/* The clock value of ts in ns (the recording's clock is 1 GHz unless its class says else). */
static uint64_t ns_of(const bt_clock_snapshot *cs)
{
	uint64_t v = bt_clock_snapshot_get_value(cs);
	uint64_t hz = bt_clock_class_get_frequency(bt_clock_snapshot_borrow_clock_class_const(cs));

	if (!hz || hz == 1000000000ull)
		return v;
	return (uint64_t)((unsigned __int128)v * 1000000000u / hz);
}

static int take_event(void *data, const bt_message *msg)
{
	struct sink *k = data;
	const bt_event *bev = bt_message_event_borrow_event_const(msg);
	const bt_event_class *ec = bt_event_borrow_class_const(bev);
	const bt_packet *pk = bt_event_borrow_packet_const(bev);
	const bt_field *ctx = pk ? bt_packet_borrow_context_field_const(pk) : NULL;
	const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
	uint64_t ts = cs ? ns_of(cs) : 0, id = bt_event_class_get_id(ec);
	uint8_t layer = (uint8_t)u64_of(member(ctx, "layer"));
	uint32_t cpu = (uint32_t)u64_of(member(ctx, "cpu_id"));
	struct vperf_report *r = k->r;
	struct ev e = { .p = bt_event_borrow_payload_field_const(bev) };
	int err;

	if (!k->env_read) {
		read_env(k, bev);
		if (k->schema < 0 || k->schema > VPERF_SCHEMA_VERSION)
			return vperf_why(k->why, sizeof(k->why), -EPROTO, "its schema_version is not "
				    "one this vperf reads (0 to %d): made by a newer vperf?",
				    VPERF_SCHEMA_VERSION);
	}
	if (cs && !r->clock_read)
		read_clock(r, cs);
	if (id >= MAX_CLASS_ID)
		return 0;	/* not one of ours: vperf's writer numbers its classes from 0 */
	if (!k->cls[id].resolved) {
		err = resolve(k, ec, &k->cls[id]);
		if (err)
			return err;
	}
	e.c = &k->cls[id];
	/* a class the schema does not know, or on a layer it never goes to: not read */
	if (e.c->ev < 0 || layer >= VPERF_CTF_NR_LAYERS ||
	    !(vperf_schema_class[e.c->ev].layers & (1u << layer)))
		return 0;
	/* the recording's span: kernel symbols are written when it ended, not events in it */
	if (e.c->ev != VPERF_EV_KERNEL_SYMBOL) {
		if (!r->first_ts || ts < r->first_ts)
			r->first_ts = ts;
		if (ts > r->last_ts)
			r->last_ts = ts;
	}
	if (!guest_layer(layer) && layer != LAYER_VMM && cpu < 65536 && cpu + 1 > r->nr_cpus)
		r->nr_cpus = cpu + 1;
	switch (e.c->ev) {
	case VPERF_EV_SAMPLE:
		return take_sample(k, &e, ts, layer, cpu);
	case VPERF_EV_MMAP:
		return take_mmap(k, &e, layer);
	case VPERF_EV_COMM:
		return set_comm(k, guest_layer(layer), (uint32_t)U(&e, VPERF_F_comm_tid),
				S(&e, VPERF_F_comm_comm));
	case VPERF_EV_PROCESS_FORK:
		return take_fork(k, &e, ts, layer, cpu);
	case VPERF_EV_KERNEL_SYMBOL:
		return take_ksym(k, &e, guest_layer(layer));
	case VPERF_EV_THREAD_SWITCH:
	case VPERF_EV_SCHED_SWITCH:
	case VPERF_EV_SCHED_WAKEUP:
		return take_sched(k, &e, ts, layer, cpu);
	default:
		return take_other(k, &e, ts, layer, cpu);
	}
}


int vperf__sink_read(struct vperf_report *r, const char *dir, char *why, size_t why_len)
{
	struct sink k = { .r = r };
	int err = -ENOMEM;

	/* any value seeds the spaces' trees; one the recording cannot guess keeps them shallow:
	 * the hash of anything under a table's random key */
	k.rng = vperf_report_idx__hash(&k.space_idx, "spaces", 6);
	for (size_t v = 0; v < MAX_VCPUS; v++)
		k.on_vcpu[v] = -1;
	k.cls = calloc(MAX_CLASS_ID, sizeof(*k.cls));
	if (k.cls) {
		err = vperf_report_decode(dir, take_event, &k, why, why_len);
		if (err && k.why[0])
			vperf_why(why, why_len, err, "not a recording this vperf reads: %s", k.why);
	}
	for (size_t i = 0; i < k.nr_spaces; i++)
		vperf_report_amap__exit(&k.spaces[i].am);
	free(k.spaces);
	free(k.cls);
	vperf_report_idx__exit(&k.strings);
	vperf_report_idx__exit(&k.threads);
	vperf_report_idx__exit(&k.space_idx);
	vperf_report_idx__exit(&k.events);
	return err;
}
