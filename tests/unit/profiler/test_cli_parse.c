// SPDX-License-Identifier: MIT
/*
 * Declarative options (profiler/util/options.h, cli_parse()): each table entry sets its member,
 * a bad argument is a usage error naming the option as it was given, --help returns 0, and the
 * first operand is where the options end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/options.h"
#include "vtest.h"

struct t_opts {
	bool flag;
	const char *str;
	int n;
	unsigned long long big;
	int odd;
	int both_a, both_b;
};

static int odd_arg(void *member, const char *arg, char *why, size_t len)
{
	long v;

	if (cli_parse_long(arg, 0, 1000, &v) || !(v & 1))
		return snprintf(why, len, "-d '%s': an odd number", arg);
	*(int *)member = (int)v;
	return 0;
}

static int both_arg(void *base, const char *arg, char *why, size_t len)
{
	struct t_opts *o = base;

	(void)arg, (void)why, (void)len;
	o->both_a = 1;
	o->both_b = 2;
	return 0;
}

#define T struct t_opts
static const struct cli_option opts[] = {
	CLI_OPT_FLAG(T, 'f', "flag", flag, "a flag"),
	CLI_OPT_STR(T, 's', "str", "text", str, "a string"),
	CLI_OPT_INT(T, 'n', "number", "n", n, 1, 10, "a number from 1 to 10", "an int"),
	CLI_OPT_INT(T, 0, "big", "n", big, 0, 1L << 40, "up to 2^40", "a u64"),
	CLI_OPT_FN(T, 'd', "odd", "n", odd, odd_arg, "an odd number"),
	CLI_OPT_CB(T, 'b', "both", NULL, both_arg, "sets two members"),
	CLI_OPT_HELP(),
};
#undef T

static const char *const synopsis[] = { "vperf t [options] [args]", NULL };
static const struct cli_usage usage = {
	.cmd = "t", .synopsis = synopsis, .summary = "a test", .opts = opts,
	.nr_opts = sizeof(opts) / sizeof(opts[0]),
};

/* Parse the NULL-terminated words (after "t") with stderr captured into err: cli_parse's value. */
static int parse(struct t_opts *o, int *first, char *err, size_t errlen, ...)
{
	char *argv[16] = { "t" };
	int argc = 1, ret, saved = dup(2);
	FILE *f = tmpfile();
	va_list ap;

	va_start(ap, errlen);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	memset(o, 0, sizeof(*o));
	assert_non_null(f);
	fflush(stderr);
	dup2(fileno(f), 2);
	ret = cli_parse(&usage, argc, argv, o, NULL, first);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	err[fread(err, 1, errlen - 1, f)] = '\0';
	fclose(f);
	return ret;
}

/* Every kind of entry sets its member; the operands start after the options. */
static void cli_parse_sets_each_entrys_member(void **state)
{
	struct t_opts o;
	char err[512];
	int first;

	(void)state;
	assert_int_equal(parse(&o, &first, err, sizeof(err), "-f", "--str=hi", "-n", "7",
			       "--big", "1099511627776", "-d", "9", "-b", "cmd", "arg", NULL), -1);
	assert_true(o.flag);
	assert_string_equal(o.str, "hi");
	assert_int_equal(o.n, 7);
	assert_true(o.big == 1ull << 40);
	assert_int_equal(o.odd, 9);
	assert_int_equal(o.both_a, 1);
	assert_int_equal(o.both_b, 2);
	assert_int_equal(first, 10);
	assert_string_equal(err, "");
	assert_int_equal(parse(&o, &first, err, sizeof(err), NULL), -1);
	assert_int_equal(first, 1);	/* no operand: argc */
	assert_false(o.flag);
}

/* A bad value is a usage error (129) naming the option as given, short or long. */
static void cli_parse_refuses_bad_values_naming_the_option_as_given(void **state)
{
	struct t_opts o;
	char err[512];
	int first;

	(void)state;
	assert_int_equal(parse(&o, &first, err, sizeof(err), "-n", "11", NULL), VPERF_EXIT_USAGE);
	assert_non_null(strstr(err, "vperf t: -n '11': a number from 1 to 10"));
	assert_int_equal(parse(&o, &first, err, sizeof(err), "--number=x", NULL),
			 VPERF_EXIT_USAGE);
	assert_non_null(strstr(err, "vperf t: --number 'x': a number from 1 to 10"));
	assert_int_equal(parse(&o, &first, err, sizeof(err), "-d", "4", NULL), VPERF_EXIT_USAGE);
	assert_non_null(strstr(err, "vperf t: -d '4': an odd number"));
	assert_int_equal(parse(&o, &first, err, sizeof(err), "--nope", NULL), VPERF_EXIT_USAGE);
	assert_non_null(strstr(err, "unknown option '--nope'"));
	assert_int_equal(parse(&o, &first, err, sizeof(err), "-s", NULL), VPERF_EXIT_USAGE);
	assert_non_null(strstr(err, "needs an argument (text)"));
}

/* --help prints the table's help and returns 0. */
static void cli_parse_help_prints_the_table_and_returns_0(void **state)
{
	struct t_opts o;
	char err[512];
	int first, saved = dup(1);
	FILE *f = tmpfile();
	char out[4096];

	(void)state;
	assert_non_null(f);
	fflush(stdout);
	dup2(fileno(f), 1);
	assert_int_equal(parse(&o, &first, err, sizeof(err), "--help", NULL), 0);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	out[fread(out, 1, sizeof(out) - 1, f)] = '\0';
	fclose(f);
	assert_non_null(strstr(out, "-n, --number <n>"));
	assert_non_null(strstr(out, "sets two members"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cli_parse_sets_each_entrys_member),
		cmocka_unit_test(cli_parse_refuses_bad_values_naming_the_option_as_given),
		cmocka_unit_test(cli_parse_help_prints_the_table_and_returns_0),
	};

	return VT_MAIN("cli-parse", tests, NULL, NULL);
}
