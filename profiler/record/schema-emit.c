// SPDX-License-Identifier: MIT
/*
 * The recording schema's emitters (schema.h): one per class, made from the one list, each
 * writing its struct's members in the class's field order.  Apart from schema.c, whose tables
 * the report reader links without the CTF writer.
 */
#include <errno.h>

#include "schema.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const uint64_t no_seq;

#define V_U8(n)		VPERF_CTF_U8(e->n),
#define V_U16(n)	VPERF_CTF_U16(e->n),
#define V_U32(n)	VPERF_CTF_U32(e->n),
#define V_U64(n)	VPERF_CTF_U64(e->n),
#define V_S64(n)	VPERF_CTF_S64(e->n),
#define V_STRING(n)	VPERF_CTF_STR(e->n ? e->n : ""),
#define V_U64_SEQ(n)	VPERF_CTF_SEQ(e->n ? e->n : &no_seq, e->n ? e->nr_##n : 0),
#define VALUE(c, n, t, fl, lab, what) V_##t(n)
#define EMITTER(id, name, lay, fields, what)						\
int vperf_ev__##name(struct vperf_ctf_stream *s, uint64_t ts, const struct vperf_ev_##name *e) \
{											\
	const struct vperf_ctf_value v[] = { fields(VALUE, name) };			\
											\
	if (!((lay) & (1u << vperf_ctf_stream__layer(s))))				\
		return -EINVAL;								\
	return vperf_ctf__emit(s, VPERF_EV_##id, ts, v, ARRAY_SIZE(v));			\
}
VPERF_SCHEMA_CLASSES(EMITTER)

