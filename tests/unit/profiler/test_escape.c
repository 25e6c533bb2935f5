// SPDX-License-Identifier: MIT
/*
 * Strings someone else named, as text, JSON and XML (profiler/util/escape.h), table-driven with
 * known answers: a thread name that is an OSC 52 sequence (it would write the terminal's
 * clipboard), every kind of control, bidirectional overrides, line separators, the
 * noncharacters U+FFFE and U+FFFF, and invalid UTF-8 of every kind.
 */
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "vtest.h"

static char *render(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fn(f, s);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void xml_all(FILE *f, const char *s)
{
	esc_xml(f, s, SIZE_MAX);
}

struct esc_case {
	int line;
	const char *in;
	const char *text, *json, *xml;	/* json without its quotes */
};

#define FFFD	"\xef\xbf\xbd"
#define PRINTS	"h\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x94\xa5"

static const struct esc_case cases[] = {
	{ __LINE__, "plain main", "plain main", "plain main", "plain main" },
	{ __LINE__, "", "", "", "" },
	/* OSC 52: set the clipboard; BEL ends it */
	{ __LINE__, "\x1b]52;c;ZXZpbA==\x07x", "\\x1b]52;c;ZXZpbA==\\x07x",
	  "\\u001b]52;c;ZXZpbA==\\u0007x", FFFD "]52;c;ZXZpbA==" FFFD "x" },
	{ __LINE__, "a\tb\nc\rd", "a\\x09b\\x0ac\\x0dd", "a\\tb\\nc\\rd",
	  "a" FFFD "b" FFFD "c" FFFD "d" },
	{ __LINE__, "del\x7f", "del\\x7f", "del\\u007f", "del" FFFD },
	/* C1 CSI, U+009B, as UTF-8: its bytes */
	{ __LINE__, "c1\xc2\x9b" "31m", "c1\\xc2\\x9b31m", "c1\\u009b31m", "c1" FFFD "31m" },
	/* U+0080 and U+009F, the C1 range's ends; U+00A0 (no-break space) prints */
	{ __LINE__, "\xc2\x80\xc2\x9f\xc2\xa0", "\\xc2\\x80\\xc2\\x9f\xc2\xa0",
	  "\\u0080\\u009f\xc2\xa0", FFFD FFFD "\xc2\xa0" },
	/* right-to-left override U+202E, isolate U+2066, line separator U+2028 */
	{ __LINE__, "ab\xe2\x80\xae" "cd", "ab\\xe2\\x80\\xaecd", "ab\\u202ecd", "ab" FFFD "cd" },
	{ __LINE__, "\xe2\x81\xa6x\xe2\x80\xa8y", "\\xe2\\x81\\xa6x\\xe2\\x80\\xa8y",
	  "\\u2066x\\u2028y", FFFD "x" FFFD "y" },
	/* printable UTF-8 kept: é, 中, an emoji */
	{ __LINE__, PRINTS, PRINTS, PRINTS, PRINTS },
	/* U+FFFE, U+FFFF: text keeps them, JSON escapes them, XML may not hold them */
	{ __LINE__, "\xef\xbf\xbe\xef\xbf\xbf", "\xef\xbf\xbe\xef\xbf\xbf", "\\ufffe\\uffff",
	  FFFD FFFD },
	/* invalid UTF-8: a stray continuation byte, a lone lead byte, an overlong '/', a surrogate,
	 * beyond U+10FFFF, 0xff, a character cut short by the end */
	{ __LINE__, "a\x80z", "a\\x80z", "a\\ufffdz", "a" FFFD "z" },
	{ __LINE__, "\xc3(", "\\xc3(", "\\ufffd(", FFFD "(" },
	{ __LINE__, "\xc0\xaf", "\\xc0\\xaf", "\\ufffd\\ufffd", FFFD FFFD },
	{ __LINE__, "\xed\xa0\x80", "\\xed\\xa0\\x80", "\\ufffd\\ufffd\\ufffd", FFFD FFFD FFFD },
	{ __LINE__, "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\ufffd\\ufffd\\ufffd\\ufffd",
	  FFFD FFFD FFFD FFFD },
	{ __LINE__, "\xff", "\\xff", "\\ufffd", FFFD },
	{ __LINE__, "end\xe4\xb8", "end\\xe4\\xb8", "end\\ufffd\\ufffd", "end" FFFD FFFD },
	/* each output's own specials */
	{ __LINE__, "back\\x1b \"q\" <&>", "back\\\\x1b \"q\" <&>", "back\\\\x1b \\\"q\\\" <&>",
	  "back\\x1b &quot;q&quot; &lt;&amp;&gt;" },
};

static void strings_escape_as_text_json_and_xml(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct esc_case *c = &cases[i];
		char *text = render(esc_text, c->in), *json = render(esc_json, c->in);
		char *xml = render(xml_all, c->in), want[256], buf[256];
		char *dup = esc_text_dup(c->in);

		snprintf(want, sizeof(want), "\"%s\"", c->json);
		if (strcmp(text, c->text) || strcmp(json, want) || strcmp(xml, c->xml))
			fail_msg("%s:%d: text '%s' json '%s' xml '%s'", __FILE__, c->line, text,
				 json, xml);
		if (esc_text_len(c->in) != strlen(c->text) || !dup || strcmp(dup, c->text) ||
		    strcmp(esc_text_buf(buf, sizeof(buf), c->in), c->text))
			fail_msg("%s:%d: esc_text_len/dup/buf disagree with esc_text", __FILE__,
				 c->line);
		free(text);
		free(json);
		free(xml);
		free(dup);
	}
}

static void text_buffers_cut_between_escapes_and_columns_pad(void **state)
{
	char buf[8];
	char *padded;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* "ab\x1b..." is "ab\\x1b": 6 bytes, then the next escape does not fit in 8 */
	assert_string_equal(esc_text_buf(buf, sizeof(buf), "ab\x1b\x1b"), "ab\\x1b");
	/* nor half a character */
	assert_string_equal(esc_text_buf(buf, 5, "abc\xc3\xa9"), "abc");
	assert_string_equal(esc_text_buf(buf, 1, "abc"), "");
	f = open_memstream(&padded, &len);
	assert_non_null(f);
	esc_text_pad(f, "a\x07", 8);
	fputc('|', f);
	esc_text_pad(f, "longer than 4", 4);
	fputc('|', f);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(padded, "a\\x07   |longer than 4|");
	free(padded);
	padded = render(esc_json, NULL);
	assert_string_equal(padded, "\"\"");
	free(padded);
}

static void xml_cuts_at_a_character_and_never_inside_an_escape(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	esc_xml(f, "h\xc3\xa9llo", 4);		/* cut to 2: not inside é */
	fputc('|', f);
	esc_xml(f, "hello", 5);
	fputc('|', f);
	esc_xml(f, "a&\x01" "bcdef", 5);	/* cut to 3: the & and the control whole */
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "h..|hello|a&amp;" FFFD "..");
	free(buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_escape_as_text_json_and_xml),
		cmocka_unit_test(text_buffers_cut_between_escapes_and_columns_pad),
		cmocka_unit_test(xml_cuts_at_a_character_and_never_inside_an_escape),
	};

	return VT_MAIN("escape", tests, NULL, NULL);
}
