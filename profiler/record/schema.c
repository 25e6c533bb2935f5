// SPDX-License-Identifier: MIT
/*
 * The recording schema (schema.h): the tables and the emitters, all made from the one list.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "schema.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

const char *const vperf_schema_irq_kinds[5] = {
	"other", "timer", "reschedule", "call_function", "device",
};
const char *const vperf_schema_counts_are[2] = { "thread_counts", "period" };
const char *const vperf_schema_marker_kinds[3] = { "begin", "end", "instant" };
const char *const vperf_schema_flush_sides[2] = { "guest", "host" };
const char *const vperf_schema_switch_dirs[2] = { "in", "out" };

const char *const vperf_schema_layer_names[VPERF_CTF_NR_LAYERS] = {
	[VPERF_CTF_HOST_KERNEL] = "host_kernel",
	[VPERF_CTF_VMM] = "vmm",
	[VPERF_CTF_GUEST_KERNEL] = "guest_kernel",
	[VPERF_CTF_GUEST_USER] = "guest_user",
	[VPERF_CTF_HOST_USER] = "host_user",
};

/* ---- the CTF writer's tables ---- */

#define HEX		VPERF_CTF_HEX
#define NOLABELS	.labels = NULL
#define LABELS(l)	.labels = (l), .nr_labels = ARRAY_SIZE(l)
#define DESC_FIELD(c, n, t, fl, lab, what) \
	{ .name = #n, .type = VPERF_CTF_TYPE_##t, .flags = (fl), lab },
#define DESC_FIELDS(id, name, layers, fields, what) \
	static const struct vperf_ctf_field_desc name##_fields[] = { fields(DESC_FIELD, name) };
VPERF_SCHEMA_CLASSES(DESC_FIELDS)
DESC_FIELDS(LOST_EVENTS, lost_events, 0, VPERF_SCHEMA_LOST_EVENTS, "")

#define DESC_CLASS(id, name, layers, fields, what) \
	[VPERF_EV_##id] = { #name, name##_fields, ARRAY_SIZE(name##_fields) },
const struct vperf_ctf_class_desc vperf_schema_desc[VPERF_EV_NR + 1] = {
	VPERF_SCHEMA_CLASSES(DESC_CLASS)
	DESC_CLASS(LOST_EVENTS, lost_events, 0, 0, "")
};

#define WHAT_FIELD(c, n, t, fl, lab, what) what,
#define WHAT_FIELDS(id, name, layers, fields, what) \
	static const char *const name##_what[] = { fields(WHAT_FIELD, name) };
VPERF_SCHEMA_CLASSES(WHAT_FIELDS)
WHAT_FIELDS(LOST_EVENTS, lost_events, 0, VPERF_SCHEMA_LOST_EVENTS, "")

#define CLASS_INFO(id, nm, lay, fields, w) \
	[VPERF_EV_##id] = { .name = #nm, .layers = (lay), .what = (w), .field_what = nm##_what },
const struct vperf_schema_class vperf_schema_class[VPERF_EV_NR + 1] = {
	VPERF_SCHEMA_CLASSES(CLASS_INFO)
	CLASS_INFO(LOST_EVENTS, lost_events, VPERF_L_ALL, 0,
		   "events of the stream were lost (the CTF writer's own: vperf_ctf__lost())")
};

_Static_assert(VPERF_F_sample__NR <= VPERF_SCHEMA_MAX_FIELDS &&
	       VPERF_F_mmap__NR <= VPERF_SCHEMA_MAX_FIELDS &&
	       VPERF_F_kvm_exit__NR <= VPERF_SCHEMA_MAX_FIELDS,
	       "VPERF_SCHEMA_MAX_FIELDS holds every class");

void vperf_schema__init(struct vperf_schema *s, const char *const *event_names, size_t nr_events)
{
	memcpy(s->classes, vperf_schema_desc, sizeof(s->classes));
	memcpy(s->sample_fields, sample_fields, sizeof(s->sample_fields));
	if (event_names && nr_events) {
		s->sample_fields[VPERF_F_sample_sample_event].labels = event_names;
		s->sample_fields[VPERF_F_sample_sample_event].nr_labels = nr_events;
	}
	s->classes[VPERF_EV_SAMPLE].fields = s->sample_fields;
}

/* ---- the documentation ---- */

static const char *type_doc(const struct vperf_ctf_field_desc *f)
{
	switch (f->type) {
	case VPERF_CTF_TYPE_U8: return f->labels ? "u8 enum" : "u8";
	case VPERF_CTF_TYPE_U16: return "u16";
	case VPERF_CTF_TYPE_U32: return f->labels ? "u32 enum" : "u32";
	case VPERF_CTF_TYPE_U64: return f->flags & HEX ? "u64 hex" : "u64";
	case VPERF_CTF_TYPE_S64: return "s64";
	case VPERF_CTF_TYPE_STRING: return "string";
	case VPERF_CTF_TYPE_U64_SEQ: return f->flags & HEX ? "u64 sequence, hex" : "u64 sequence";
	}
	return "?";
}

size_t vperf_schema__doc(char *buf, size_t len)
{
	size_t o = 0;

#define PUT(...) do {									\
	int w_ = snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, __VA_ARGS__); \
	if (w_ > 0)									\
		o += (size_t)w_;							\
} while (0)
	PUT("| id | class | layers | what |\n| --- | --- | --- | --- |\n");
	for (unsigned int c = 0; c <= VPERF_EV_NR; c++) {
		const struct vperf_schema_class *k = &vperf_schema_class[c];
		bool first = true;

		PUT("| %u | `%s` | ", c, k->name);
		if (k->layers == VPERF_L_ALL) {
			PUT("all");
		} else {
			for (unsigned int l = 0; l < VPERF_CTF_NR_LAYERS; l++)
				if (k->layers & (1u << l)) {
					PUT("%s%s", first ? "" : ", ", vperf_schema_layer_names[l]);
					first = false;
				}
		}
		PUT(" | %s |\n", k->what);
	}
	for (unsigned int c = 0; c <= VPERF_EV_NR; c++) {
		const struct vperf_ctf_class_desc *d = &vperf_schema_desc[c];

		PUT("\n`%s`:\n\n| field | type | meaning |\n| --- | --- | --- |\n", d->name);
		for (size_t i = 0; i < d->nr_fields; i++) {
			const struct vperf_ctf_field_desc *f = &d->fields[i];

			PUT("| `%s` | %s | %s", f->name, type_doc(f),
			    vperf_schema_class[c].field_what[i]);
			for (size_t j = 0; j < f->nr_labels; j++)
				PUT("%s`%s` = %zu", j ? ", " : ": ", f->labels[j], j);
			PUT(" |\n");
		}
	}
#undef PUT
	return o;
}

/* ---- schema 0 ---- */

/*
 * What vperf 0.1.0 wrote differently: `vperf record`'s samples had `values` (the period) and
 * `sample_event`, and no `user` or `counts_are`; `vm record`'s `vmm_exit`, `kvm_*` and the
 * rest already had today's names.  Fields not listed were there, or read as 0.
 */
const struct vperf_schema_v0 vperf_schema_v0[] = {
	{ VPERF_EV_SAMPLE, VPERF_F_sample_counts, "values", 0 },
	{ VPERF_EV_SAMPLE, VPERF_F_sample_counts, "counts", 0 },
	{ VPERF_EV_SAMPLE, VPERF_F_sample_counts_are, NULL, VPERF_COUNTS_ARE_PERIOD },
	{ VPERF_EV_IRQ_ENTRY, VPERF_F_irq_entry_irq, NULL, -1 },
};
const size_t vperf_schema_nr_v0 = ARRAY_SIZE(vperf_schema_v0);
