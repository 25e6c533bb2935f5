// SPDX-License-Identifier: MIT
/*
 * `vperf <cmd> --help` (profiler/util/options.c): the summary and each
 * option's help wrap at 100 columns, continuation lines keep their column,
 * '\n' in a text still breaks the line, and no word is lost or reordered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/options.h"
#include "vtest.h"

static const char long_help[] =
	"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
	"sixteen seventeen eighteen nineteen twenty";
static const char summary[] =
	"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma "
	"tau upsilon phi chi psi omega\n second paragraph";

static const struct cli_option opts[] = {
	{ 'x', "example", "arg", long_help, 1, .what = CLI_DO_ID },
	{ 0, "a-very-long-option-name", "with-an-argument", "short", 2, .what = CLI_DO_ID },
};

static const char *const synopsis[] = { "vperf t [options]", NULL };

static const struct cli_usage usage = {
	.cmd = "t", .synopsis = synopsis, .summary = summary, .opts = opts, .nr_opts = 2,
};

static char *render(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_usage__print(&usage, f);
	fclose(f);
	return buf;
}

/* The words of s, blanks and line breaks collapsed to single spaces. */
static void words(const char *s, char *out, size_t n)
{
	size_t o = 0;
	bool blank = true;

	for (; *s && o + 1 < n; s++) {
		if (*s == ' ' || *s == '\n') {
			if (!blank)
				out[o++] = ' ';
			blank = true;
		} else {
			out[o++] = *s;
			blank = false;
		}
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

static void help_lines_fit_100_columns_and_keep_every_word(void **state)
{
	char *out = render(), *line, *save = NULL, all[4096], want[1024];
	int n = 0;

	(void)state;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++)
		if (strlen(line) > 100)
			fail_msg("line %d has %zu columns: '%s'", n, strlen(line), line);
	free(out);
	out = render();
	words(out, all, sizeof(all));
	words(summary, want, sizeof(want));
	assert_non_null(strstr(all, want));
	words(long_help, want, sizeof(want));
	assert_non_null(strstr(all, want));
	free(out);
}

static void help_continuation_lines_start_at_the_help_column(void **state)
{
	char *out = render();
	const char *p = strstr(out, "\n                             ");	/* 29 blanks */
	const char *second = strstr(out, "\n second paragraph");

	(void)state;
	/* the option's help went on to a second line, in its column */
	assert_non_null(p);
	assert_true(p[30] != ' ');
	/* the summary's '\n' broke the line there, indented as the summary */
	assert_non_null(second);
	/* a left column wider than 24: the help on the next line */
	assert_non_null(strstr(out, "--a-very-long-option-name <with-an-argument>\n"
				    "                             short\n"));
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_lines_fit_100_columns_and_keep_every_word),
		cmocka_unit_test(help_continuation_lines_start_at_the_help_column),
	};

	return VT_MAIN("cli-help", tests, NULL, NULL);
}
