/* SPDX-License-Identifier: MIT */
/*
 * Strings that someone else named, written so that they cannot act on what reads them: a
 * recording's thread names, markers, paths, symbols and environment (a guest or a recorded
 * process chose them), and other processes' names.  One set of rules per kind of output
 * (docs/report.md, "Strings from a recording"), over one reading of UTF-8:
 *
 *   text  terminals, tables, CSV, folded stacks: valid UTF-8 that prints is kept; a control
 *         character (C0, DEL, C1), a bidirectional formatting character or a line or paragraph
 *         separator is written as "\xNN" for each of its bytes, as is each byte of invalid
 *         UTF-8; '\' is written "\\", so that "\x" in the output always means an escape.
 *   JSON  those characters as \uXXXX ('"', '\', \b \f \n \r \t as their short escapes), and
 *         the noncharacters U+FFFE and U+FFFF too; each byte of invalid UTF-8 as \ufffd.
 *   XML   (SVG) '&', '<', '>', '"' as entities; the characters text escapes, U+FFFE, U+FFFF
 *         and each byte of invalid UTF-8 as U+FFFD: XML 1.0 forbids most of them even as
 *         character references, and a renderer would act on the others.
 *   clean a string a recording stores (esc_utf8_clean()): valid UTF-8 kept as it is, each
 *         byte of invalid UTF-8 as '?'; the outputs above escape the rest when they print it.
 *
 * No function here fails but esc_text_dup() (NULL: out of memory); write errors are the
 * caller's to check on out.
 */
#ifndef VPERF_ESCAPE_H
#define VPERF_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The length (1 to 4) of the valid UTF-8 character at s, its code point in *cp; 0 if the
 * bytes at s are not one (a stray or missing continuation byte, an overlong form, a
 * surrogate, beyond U+10FFFF).  s is NUL-terminated; the NUL itself is not a character.
 */
size_t esc_utf8(const char *s, uint32_t *cp);
/* The same within the len bytes at s (a character cut by the end is not one). */
size_t esc_utf8n(const char *s, size_t len, uint32_t *cp);
/* The offset of the first byte of s[0..len) that is not valid UTF-8 (a NUL is a byte), or -1. */
long esc_utf8_error(const char *s, size_t len);
/*
 * The first n bytes of s (up to a NUL) into buf, NUL-terminated, each byte of invalid UTF-8 as
 * '?' (a guest's or a kernel's name, made a string a trace may hold); cut to fit len.  Returns buf.
 */
char *esc_utf8_clean(char *buf, size_t len, const char *s, size_t n);

/* Is code point cp one that no output writes as itself (a control, a direction change...)? */
bool esc_is_special(uint32_t cp);

/* s as text (the rules above). */
void esc_text(FILE *out, const char *s);
/* The bytes esc_text() writes for s. */
size_t esc_text_len(const char *s);
/* s as text, then spaces up to width bytes (a left-aligned column, as "%-*s"). */
void esc_text_pad(FILE *out, const char *s, int width);
/*
 * s as text into buf (NUL-terminated), cut where it no longer fits, never inside an escape or
 * a character.  Returns buf.
 */
char *esc_text_buf(char *buf, size_t len, const char *s);
/* s as text, malloc'd; NULL when out of memory. */
char *esc_text_dup(const char *s);

/* s as a JSON string, the quotes included; NULL as "". */
void esc_json(FILE *out, const char *s);

/*
 * s as one CSV field between separators sep: text as esc_text() makes it (no line breaks left),
 * quoted with '"' (inner ones doubled) when it holds sep or '"'.
 */
void esc_csv(FILE *out, const char *s, const char *sep);

/*
 * s as XML character data (text or a double-quoted attribute's value).  Longer than max bytes:
 * cut to max - 2 at a character's start, then "..".  SIZE_MAX: never cut.
 */
void esc_xml(FILE *out, const char *s, size_t max);

#endif /* VPERF_ESCAPE_H */
