/* SPDX-License-Identifier: MIT */
/*
 * Option tables for the builtins: one table gives getopt_long(3) its
 * short and long options and prints `vperf <cmd> --help`, so the two
 * cannot disagree.  Parsing is POSIX style ("+": the first non-option
 * ends the options, so a command's own options are left to it).
 */
#ifndef VPERF_CLI_OPTIONS_H
#define VPERF_CLI_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>

/* The exit status of a usage error, like git and perf. */
#define VPERF_EXIT_USAGE	129

struct cli_option {
	int short_name;		/* 'e', or 0 for a long-only option */
	const char *long_name;	/* "event", or NULL */
	const char *arg;	/* argument's name in help ("events"), or NULL
				 * for a flag */
	const char *help;
	int id;			/* value returned by cli_getopt() */
};

struct cli_usage {
	const char *cmd;	/* "stat": messages say "vperf stat: ..." */
	const char *const *synopsis;	/* NULL-terminated usage lines */
	const char *summary;	/* one line under the synopsis */
	const struct cli_option *opts;
	int nr_opts;
	/* Options may follow operands ("list PATTERN -d"); else the first
	 * operand ends the options (a command's own options are its own). */
	bool permute;
};

/* Returned by cli_getopt() at the end of options, and on a usage error. */
#define CLI_OPT_END	(-1)
#define CLI_OPT_ERROR	(-2)

struct cli_parser {
	const struct cli_usage *usage;
	int argc;
	char **argv;
	int optind;		/* after CLI_OPT_END: first operand */
	const char *optarg;
	/* private */
	void *longopts;
	char optstring[128];
};

/*
 * Prepare parsing of argv[1..argc-1] (argv[0] is the command's name).
 * Returns 0 or -ENOMEM.
 */
int cli_parser__init(struct cli_parser *p, const struct cli_usage *u,
		     int argc, char **argv);
void cli_parser__exit(struct cli_parser *p);

/*
 * Next option's id (optarg set for options with an argument), CLI_OPT_END
 * after the last one, or CLI_OPT_ERROR after printing a one-line message
 * for an unknown option or a missing argument.
 */
int cli_getopt(struct cli_parser *p);

/* Print `vperf <cmd> --help` text. */
void cli_usage__print(const struct cli_usage *u, FILE *out);

/*
 * Print "vperf <cmd>: <message>" on stderr, then "  (see 'vperf <cmd>
 * --help')" hint, and return VPERF_EXIT_USAGE.
 */
int cli_usage_error(const struct cli_usage *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Print "vperf <cmd>: <message>" on stderr.  Returns 1.  These three write the message as text
 * (util/escape.h): a control character in it shows as "\xNN", never acts on the terminal.
 */
int cli_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cli_warn(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Strict decimal parse of a whole string into [min, max]: no sign unless
 * min < 0, no spaces, no trailing characters.  Returns 0, -EINVAL (not a
 * number) or -ERANGE (outside [min, max]).
 */
int cli_parse_long(const char *s, long min, long max, long *out);

#endif /* VPERF_CLI_OPTIONS_H */
