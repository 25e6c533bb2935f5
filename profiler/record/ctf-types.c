// SPDX-License-Identifier: MIT
/*
 * The CTF writer's class tables, checked, and the trace's types built from them (ctf-int.h):
 * integers of each width and base, enumerations, text sequences counted by a _len field, u64
 * sequences, and the one stream class whose packet context carries the layer and the CPU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctf-int.h"

const char *vperf__ctf_type_name(enum vperf_ctf_type type)
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

/* ---- checks ----------------------------------------------------------- */

/* A C identifier that is not one of CTF's keywords. */
bool vperf__ctf_is_identifier(const char *s)
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
bool vperf__ctf_is_metadata_text(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			return false;
	return true;
}

uint64_t vperf__ctf_type_max(enum vperf_ctf_type type)
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

void vperf__ctf_free_class(struct class *c)
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

int vperf__ctf_check_class(struct vperf_ctf *ctf, const struct vperf_ctf_class_desc *d)
{
	if (!vperf__ctf_is_identifier(d->name))
		return fail(ctf, -EINVAL, "event class name \"%s\" is not an identifier",
			    d->name ? d->name : "(null)");
	if (d->nr_fields && !d->fields)
		return fail(ctf, -EINVAL, "event class %s: %zu fields but no field table", d->name,
			    d->nr_fields);
	for (size_t i = 0; i < d->nr_fields; i++) {
		const struct vperf_ctf_field_desc *f = &d->fields[i];

		if (!vperf__ctf_is_identifier(f->name) || f->name[0] == '_')
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
			    f->nr_labels - 1 > vperf__ctf_type_max(f->type))
				return fail(ctf, -EINVAL,
					    "event class %s: field %s: labels need a u8, u16 or u32 "
					    "field and 1 to its maximum + 1 names",
					    d->name, f->name);
			for (size_t k = 0; k < f->nr_labels; k++)
				if (f->labels[k] && (!f->labels[k][0] ||
						     !vperf__ctf_is_metadata_text(f->labels[k])))
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
int vperf__ctf_make_class(struct vperf_ctf *ctf, const struct vperf_ctf_class_desc *d, struct class *c)
{
	int ret;

	ret = vperf__ctf_check_class(ctf, d);
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
	vperf__ctf_free_class(c);
	return ret;
}

int vperf__ctf_make_stream_class(struct vperf_ctf *ctf)
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
