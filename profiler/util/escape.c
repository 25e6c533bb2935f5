// SPDX-License-Identifier: MIT
/* Strings someone else named, escaped for text, JSON and XML (escape.h). */
#include <stdlib.h>
#include <string.h>

#include "escape.h"

#define MAX_PIECE	16	/* a 4-byte character as four "\xNN" */

static const char hex[] = "0123456789abcdef";

size_t esc_utf8n(const char *str, size_t len, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n;
	uint32_t c;

	if (!len || !s[0])
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;		/* a continuation byte, or 0xf8..0xff */
	}
	if (n > len)
		return 0;		/* cut short by the end */
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* the NUL too: a cut-short character */
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

size_t esc_utf8(const char *s, uint32_t *cp)
{
	return esc_utf8n(s, SIZE_MAX, cp);
}

long esc_utf8_error(const char *s, size_t len)
{
	uint32_t cp;

	for (size_t i = 0, k; i < len; i += k) {
		k = s[i] ? esc_utf8n(s + i, len - i, &cp) : 1;	/* a NUL inside len is a byte */
		if (!k)
			return (long)i;
	}
	return -1;
}

char *esc_utf8_clean(char *buf, size_t len, const char *s, size_t n)
{
	size_t m = strnlen(s, n), o = 0;
	uint32_t cp;

	for (size_t i = 0, k; i < m && o + 4 < len; i += k) {
		k = esc_utf8n(s + i, m - i, &cp);
		if (!k) {
			buf[o++] = '?';
			k = 1;
			continue;
		}
		memcpy(buf + o, s + i, k);
		o += k;
	}
	if (len)
		buf[o] = '\0';
	return buf;
}

bool esc_is_special(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||	/* C0, DEL, C1 */
	       cp == 0x061c || cp == 0x200e || cp == 0x200f ||	/* direction marks */
	       (cp >= 0x202a && cp <= 0x202e) ||		/* embeddings, overrides */
	       (cp >= 0x2066 && cp <= 0x2069) ||		/* isolates */
	       cp == 0x2028 || cp == 0x2029;			/* line, paragraph separators */
}

/* The text of the piece at the start of s into p (MAX_PIECE bytes): its length; *in: s's bytes. */
static size_t text_piece(const char *s, char *p, size_t *in)
{
	uint32_t cp;
	size_t n = esc_utf8(s, &cp), o = 0;

	if (n && cp == '\\') {
		p[0] = p[1] = '\\';
		*in = 1;
		return 2;
	}
	if (n && !esc_is_special(cp)) {
		memcpy(p, s, n);
		*in = n;
		return n;
	}
	if (!n)
		n = 1;			/* a byte that is no character */
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];

		p[o++] = '\\';
		p[o++] = 'x';
		p[o++] = hex[b >> 4];
		p[o++] = hex[b & 15];
	}
	*in = n;
	return o;
}

void esc_text(FILE *out, const char *s)
{
	char p[MAX_PIECE];
	size_t in;

	while (*s) {
		fwrite(p, 1, text_piece(s, p, &in), out);
		s += in;
	}
}

size_t esc_text_len(const char *s)
{
	char p[MAX_PIECE];
	size_t in, n = 0;

	while (*s) {
		n += text_piece(s, p, &in);
		s += in;
	}
	return n;
}

void esc_text_pad(FILE *out, const char *s, int width)
{
	size_t n = esc_text_len(s);

	esc_text(out, s);
	for (; width > 0 && n < (size_t)width; n++)
		fputc(' ', out);
}

char *esc_text_buf(char *buf, size_t len, const char *s)
{
	char p[MAX_PIECE];
	size_t in, n, o = 0;

	if (!len)
		return buf;
	while (*s) {
		n = text_piece(s, p, &in);
		if (o + n >= len)
			break;
		memcpy(buf + o, p, n);
		o += n;
		s += in;
	}
	buf[o] = '\0';
	return buf;
}

char *esc_text_dup(const char *s)
{
	size_t len = esc_text_len(s) + 1;
	char *buf = malloc(len);

	return buf ? esc_text_buf(buf, len, s) : NULL;
}

void esc_json(FILE *out, const char *str)
{
	const char *s = str ? str : "";

	fputc('"', out);
	while (*s) {
		uint32_t cp;
		size_t n = esc_utf8(s, &cp);

		if (!n) {
			fputs("\\ufffd", out);	/* JSON is Unicode: a stray byte has no escape */
			s++;
			continue;
		}
		switch (cp) {
		case '"':  fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\b': fputs("\\b", out); break;
		case '\f': fputs("\\f", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (esc_is_special(cp) || cp == 0xfffe || cp == 0xffff)
				fprintf(out, "\\u%04x", (unsigned int)cp);
			else
				fwrite(s, 1, n, out);
		}
		s += n;
	}
	fputc('"', out);
}

void esc_xml(FILE *out, const char *s, size_t max)
{
	size_t n = strlen(s);
	bool cut = n > max;

	if (cut) {
		n = max >= 2 ? max - 2 : 0;
		/* not inside a character: back over UTF-8 continuation bytes (so that no valid
		 * character runs past n) */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t l = esc_utf8(s + i, &cp);

		if (!l || esc_is_special(cp) || cp == 0xfffe || cp == 0xffff) {
			fputs("\xef\xbf\xbd", out);	/* U+FFFD */
			i += l ? l : 1;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fwrite(s + i, 1, l, out);
		}
		i += l;
	}
	if (cut)
		fputs("..", out);
}

void esc_csv(FILE *out, const char *str, const char *sep)
{
	char small[4096], *e = esc_text_dup(str);
	const char *s = e ? e : esc_text_buf(small, sizeof(small), str);

	if (!strstr(s, sep) && !strchr(s, '"')) {
		fputs(s, out);
	} else {
		fputc('"', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	}
	free(e);
}
