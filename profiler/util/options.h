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
#include <stddef.h>
#include <stdio.h>

/* The exit status of a usage error, like git and perf. */
#define VPERF_EXIT_USAGE	129

/*
 * What an option does when cli_parse() meets it: CLI_DO_ID leaves it to the builtin (its id
 * is what cli_getopt() returns); the others set a member of the builtin's options struct
 * (off, size), so that the option is written once, in its table entry.
 */
enum cli_do {
	CLI_DO_ID,		/* return id (cli_getopt()), or call cli_parse()'s handler */
	CLI_DO_HELP,		/* print --help, cli_parse() returns 0 */
	CLI_DO_FLAG,		/* a bool: true */
	CLI_DO_STR,		/* a const char *: the argument */
	CLI_DO_INT,		/* an integer of size bytes, the argument in [min, max], else
				 * the usage error "-X 'ARG': <what>" */
	CLI_DO_FN,		/* fn(member, arg, why, len): 0, or a usage error saying why */
};

struct cli_option {
	int short_name;		/* 'e', or 0 for a long-only option */
	const char *long_name;	/* "event", or NULL */
	const char *arg;	/* argument's name in help ("events"), or NULL
				 * for a flag */
	const char *help;
	int id;			/* value returned by cli_getopt() */
	/* declarative options (CLI_OPT_* below): what cli_parse() does */
	enum cli_do what;
	size_t off, size;	/* the member of the options struct */
	long min, max;		/* CLI_DO_INT's range */
	const char *range;	/* CLI_DO_INT's error: "a frequency in Hz, 1 to 10000000" */
	int (*fn)(void *member, const char *arg, char *why, size_t len);
};

/*
 * Table entries, each option once: T the options struct, m its member.
 *	CLI_OPT_FLAG(T, 'g', "call-graph", callchain, "record callchains")
 *	CLI_OPT_INT(T, 'F', "freq", "hz", freq, 1, 10000000, "a frequency in Hz, 1 to 10000000",
 *		    "about hz samples per second")
 */
#define CLI_MEMBER(T, m)	.off = offsetof(T, m), .size = sizeof(((T *)0)->m)
#define CLI_OPT_HELP()								\
	{ 'h', "help", NULL, "show this help", 'h', .what = CLI_DO_HELP }
#define CLI_OPT_FLAG(T, s, l, m, h)						\
	{ s, l, NULL, h, 0, .what = CLI_DO_FLAG, CLI_MEMBER(T, m) }
#define CLI_OPT_STR(T, s, l, a, m, h)						\
	{ s, l, a, h, 0, .what = CLI_DO_STR, CLI_MEMBER(T, m) }
#define CLI_OPT_INT(T, s, l, a, m, lo, hi, r, h)				\
	{ s, l, a, h, 0, .what = CLI_DO_INT, CLI_MEMBER(T, m), .min = (lo), .max = (hi),	\
	  .range = (r) }
#define CLI_OPT_FN(T, s, l, a, m, f, h)						\
	{ s, l, a, h, 0, .what = CLI_DO_FN, CLI_MEMBER(T, m), .fn = (f) }
/* An option that sets several members: f gets the whole options struct. */
#define CLI_OPT_CB(T, s, l, a, f, h)						\
	{ s, l, a, h, 0, .what = CLI_DO_FN, .off = 0, .size = sizeof(T), .fn = (f) }

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
	const struct cli_option *last;	/* the entry of the option cli_getopt() returned */
	bool last_long;			/* given by its long name */
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

/*
 * Parse argv[1..] with u's table into base (the options struct its CLI_OPT_* entries name),
 * handle(base, id, arg) for a CLI_DO_ID entry (0, or the exit status to stop with).  Returns
 * -1 when the command goes on (*operands: the index of the first operand, argc if none), 0
 * after --help, VPERF_EXIT_USAGE after a usage error (said on stderr), or handle's status.
 */
int cli_parse(const struct cli_usage *u, int argc, char **argv, void *base,
	      int (*handle)(void *base, int id, const char *arg), int *operands);

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
