// SPDX-License-Identifier: MIT
/* What of a guest's console output may reach the host's terminal (see confilter.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "confilter.h"

void confilter__init(struct confilter *f, uint64_t now_ns)
{
	memset(f, 0, sizeof(*f));
	f->tokens = CONFILTER_BURST;
	f->last_ns = now_ns;
}

static size_t escape(uint8_t b, char *out)
{
	static const char hex[] = "0123456789abcdef";

	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[b >> 4];
	out[3] = hex[b & 15];
	return 4;
}

static size_t escape_pending(struct confilter *f, char *out)
{
	size_t n = 0;

	for (unsigned int i = 0; i < f->npend; i++)
		n += escape(f->pend[i], out + n);
	f->npend = 0;
	f->need = 0;
	return n;
}

/* The second byte's range after a lead byte: no overlong forms, no surrogates, nothing past U+10FFFF */
static int second_ok(uint8_t lead, uint8_t b)
{
	switch (lead) {
	case 0xe0: return b >= 0xa0 && b <= 0xbf;
	case 0xed: return b >= 0x80 && b <= 0x9f;
	case 0xf0: return b >= 0x90 && b <= 0xbf;
	case 0xf4: return b >= 0x80 && b <= 0x8f;
	default: return b >= 0x80 && b <= 0xbf;
	}
}

/* A complete sequence: does the terminal take it as a control? */
static int is_control(const uint8_t *p, unsigned int n)
{
	uint32_t cp;

	if (n == 2)
		cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
	else if (n == 3)
		cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
	else
		return 0;	/* nothing above U+FFFF is a control */
	return (cp >= 0x80 && cp <= 0x9f) ||		/* C1: CSI, OSC, DCS as one code point */
	       cp == 0x2028 || cp == 0x2029 ||		/* line and paragraph separators */
	       (cp >= 0x202a && cp <= 0x202e) ||	/* bidirectional embeddings, overrides */
	       (cp >= 0x2066 && cp <= 0x2069) ||	/* bidirectional isolates */
	       cp == 0x200e || cp == 0x200f;		/* direction marks */
}

size_t confilter__byte(struct confilter *f, uint8_t b, char out[CONFILTER_MAX_OUT])
{
	size_t n = 0;

	if (f->npend) {
		if ((f->npend == 1 && second_ok(f->pend[0], b)) ||
		    (f->npend > 1 && b >= 0x80 && b <= 0xbf)) {
			f->pend[f->npend++] = b;
			if (f->npend < f->need)
				return 0;
			if (is_control(f->pend, f->npend))
				return escape_pending(f, out);
			memcpy(out, f->pend, f->npend);
			n = f->npend;
			f->npend = 0;
			f->need = 0;
			return n;
		}
		n = escape_pending(f, out);	/* broken off: what came so far, then b afresh */
	}
	if ((b >= 0x20 && b < 0x7f) || b == '\n' || b == '\r' || b == '\t' || b == '\b') {
		out[n++] = (char)b;
	} else if (b >= 0xc2 && b <= 0xf4) {
		f->pend[0] = b;
		f->npend = 1;
		f->need = b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
	} else {
		n += escape(b, out + n);	/* C0, DEL, a stray continuation, C0/C1 leads, F5..FF */
	}
	return n;
}

size_t confilter__end(struct confilter *f, char out[CONFILTER_MAX_OUT])
{
	return escape_pending(f, out);
}

int confilter__admit(struct confilter *f, size_t len, uint64_t now_ns, char *note, size_t note_size)
{
	if (note_size)
		note[0] = '\0';
	if (now_ns > f->last_ns) {
		f->tokens += (double)(now_ns - f->last_ns) * CONFILTER_RATE / 1e9;
		if (f->tokens > CONFILTER_BURST)
			f->tokens = CONFILTER_BURST;
		f->last_ns = now_ns;
	}
	if (f->tokens < (double)len) {
		f->dropped += len;
		f->dropped_total += len;
		return 0;
	}
	f->tokens -= (double)len;
	if (f->dropped) {
		if (note_size)
			snprintf(note, note_size, "[vperf-vmm: %" PRIu64 " bytes of guest console output "
				 "left out: more than %u KiB/s]\n", f->dropped, CONFILTER_RATE >> 10);
		f->dropped = 0;
	}
	return 1;
}
