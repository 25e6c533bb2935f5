// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "options.h"

/* getopt_long() returns this plus the option's index for long options. */
#define CLI_LONG_BASE	0x10000

int cli_parser__init(struct cli_parser *p, const struct cli_usage *u,
		     int argc, char **argv)
{
	struct option *lo;
	size_t n = 0, nl = 0;
	int i;

	memset(p, 0, sizeof(*p));
	p->usage = u;
	p->argc = argc;
	p->argv = argv;

	lo = calloc((size_t)u->nr_opts + 1, sizeof(*lo));
	if (!lo)
		return -ENOMEM;
	/* "+": stop at the first operand; ":": report a missing argument. */
	if (!u->permute)
		p->optstring[n++] = '+';
	p->optstring[n++] = ':';
	for (i = 0; i < u->nr_opts; i++) {
		const struct cli_option *o = &u->opts[i];

		if (o->short_name && n + 3 < sizeof(p->optstring)) {
			p->optstring[n++] = (char)o->short_name;
			if (o->arg)
				p->optstring[n++] = ':';
		}
		if (!o->long_name)
			continue;
		lo[nl].name = o->long_name;
		lo[nl].has_arg = o->arg ? required_argument : no_argument;
		lo[nl].flag = NULL;
		lo[nl].val = CLI_LONG_BASE + i;	/* never a char */
		nl++;
	}
	p->optstring[n] = '\0';
	p->longopts = lo;
	return 0;
}

void cli_parser__exit(struct cli_parser *p)
{
	free(p->longopts);
	p->longopts = NULL;
}

static const struct cli_option *find_short(const struct cli_usage *u, int c)
{
	for (int i = 0; i < u->nr_opts; i++)
		if (u->opts[i].short_name == c)
			return &u->opts[i];
	return NULL;
}

int cli_getopt(struct cli_parser *p)
{
	const struct cli_usage *u = p->usage;
	const struct cli_option *o;
	int c, longidx = -1;

	/* optind = 0 makes glibc start over, as for a fresh argv. */
	if (p->optind == 0)
		optind = 0;
	else
		optind = p->optind;
	opterr = 0;
	c = getopt_long(p->argc, p->argv, p->optstring, p->longopts, &longidx);
	p->optind = optind;
	p->optarg = optarg;

	p->last = NULL;
	p->last_long = c >= CLI_LONG_BASE;
	if (c == -1)
		return CLI_OPT_END;
	if (c >= CLI_LONG_BASE) {
		p->last = &u->opts[c - CLI_LONG_BASE];
		return p->last->id;
	}
	if (c == '?') {
		if (optopt > 0 && optopt < CLI_LONG_BASE)
			cli_usage_error(u, "unknown option '-%c'", optopt);
		else
			cli_usage_error(u, "unknown option '%s'",
					p->argv[p->optind - 1]);
		return CLI_OPT_ERROR;
	}
	if (c == ':') {
		const char *arg = "a value";

		if (optopt > 0 && optopt < CLI_LONG_BASE) {
			o = find_short(u, optopt);
			if (o && o->arg)
				arg = o->arg;
			cli_usage_error(u, "option '-%c' needs an argument (%s)",
					optopt, arg);
		} else {
			if (optopt >= CLI_LONG_BASE)
				arg = u->opts[optopt - CLI_LONG_BASE].arg;
			cli_usage_error(u, "option '%s' needs an argument (%s)",
					p->argv[p->optind - 1], arg);
		}
		return CLI_OPT_ERROR;
	}
	o = find_short(u, c);
	if (!o) {
		cli_usage_error(u, "unknown option '-%c'", c);
		return CLI_OPT_ERROR;
	}
	p->last = o;
	return o->id;
}

#define HELP_WIDTH	100	/* columns the help text wraps at */

/*
 * Print text wrapped at HELP_WIDTH: the first line after `first` columns
 * already used, later ones indented by `indent`.  A '\n' in text breaks the
 * line where it stands (the blanks after it are dropped); words longer than
 * a line are printed whole.
 */
static void print_wrapped(FILE *out, const char *text, int first, int indent)
{
	int col = first;
	bool line_empty = true;

	while (*text) {
		size_t w;

		if (*text == '\n') {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			line_empty = true;
			text++;
			while (*text == ' ')
				text++;
			continue;
		}
		if (*text == ' ') {
			text++;
			continue;
		}
		w = strcspn(text, " \n");
		if (!line_empty && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			line_empty = true;
		}
		if (!line_empty) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)w, text);
		col += (int)w;
		line_empty = false;
		text += w;
	}
	fputc('\n', out);
}

void cli_usage__print(const struct cli_usage *u, FILE *out)
{
	const char *const *s;

	fprintf(out, "\n");
	for (s = u->synopsis; s && *s; s++)
		fprintf(out, " %s %s\n", s == u->synopsis ? "usage:" : "   or:",
			*s);
	if (u->summary) {
		fprintf(out, "\n ");
		print_wrapped(out, u->summary, 1, 1);
	}
	fprintf(out, "\n");
	for (int i = 0; i < u->nr_opts; i++) {
		const struct cli_option *o = &u->opts[i];
		char left[80];
		int n = 0;

		if (o->short_name)
			n += snprintf(left + n, sizeof(left) - (size_t)n,
				      "-%c%s", o->short_name,
				      o->long_name ? ", " : "");
		else
			n += snprintf(left + n, sizeof(left) - (size_t)n,
				      "    ");
		if (o->long_name)
			n += snprintf(left + n, sizeof(left) - (size_t)n,
				      "--%s", o->long_name);
		if (o->arg)
			snprintf(left + n, sizeof(left) - (size_t)n, " <%s>",
				 o->arg);
		if (strlen(left) > 24)
			fprintf(out, "    %s\n    %-24s ", left, "");
		else
			fprintf(out, "    %-24s ", left);
		print_wrapped(out, o->help, 29, 29);
	}
	fprintf(out, "\n");
}

/*
 * One line on stderr.  Messages quote what others named (a recording's strings, paths, a
 * babeltrace2 error about its metadata): the whole line is written as text (escape.h).
 */
static void vmsg(const char *cmd, const char *prefix, const char *fmt,
		 va_list ap)
{
	char *msg = NULL;

	fflush(stdout);
	fprintf(stderr, "vperf%s%s: %s", cmd ? " " : "", cmd ? cmd : "",
		prefix);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	esc_text(stderr, msg ? msg : fmt);
	free(msg);
	fputc('\n', stderr);
}

int cli_usage_error(const struct cli_usage *u, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(u->cmd, "", fmt, ap);
	va_end(ap);
	fprintf(stderr, "  (see 'vperf %s --help')\n", u->cmd);
	return VPERF_EXIT_USAGE;
}

int cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, "", fmt, ap);
	va_end(ap);
	return 1;
}

void cli_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(cmd, "warning: ", fmt, ap);
	va_end(ap);
}

int cli_parse_long(const char *s, long min, long max, long *out)
{
	const char *p = s;
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	if (*p == '+' || (*p == '-' && min < 0))
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

/* The option as its error names it, as it was given: "-F", or "--freq". */
static void opt_name(const struct cli_option *o, bool given_long, char *buf, size_t len)
{
	if (o->short_name && !(given_long && o->long_name))
		snprintf(buf, len, "-%c", o->short_name);
	else
		snprintf(buf, len, "--%s", o->long_name ? o->long_name : "?");
}

static int set_int(const struct cli_usage *u, const struct cli_option *o, bool given_long,
		   void *m, const char *arg)
{
	char name[64];
	long v;

	if (cli_parse_long(arg, o->min, o->max, &v)) {
		opt_name(o, given_long, name, sizeof(name));
		return cli_usage_error(u, "%s '%s': %s", name, arg, o->range ? o->range :
				       "not a number in range");
	}
	switch (o->size) {
	case 1: *(int8_t *)m = (int8_t)v; break;
	case 2: *(int16_t *)m = (int16_t)v; break;
	case 4: *(int32_t *)m = (int32_t)v; break;
	default: *(int64_t *)m = (int64_t)v; break;
	}
	return 0;
}

int cli_parse(const struct cli_usage *u, int argc, char **argv, void *base,
	      int (*handle)(void *base, int id, const char *arg), int *operands)
{
	struct cli_parser p;
	int id, ret = -1;

	if (cli_parser__init(&p, u, argc, argv))
		return cli_error(u->cmd, "out of memory");
	while (ret < 0 && (id = cli_getopt(&p)) != CLI_OPT_END) {
		const struct cli_option *o = NULL;
		char why[256] = "";

		if (id == CLI_OPT_ERROR) {
			ret = VPERF_EXIT_USAGE;
			break;
		}
		/* which entry: getopt gave its id; declarative entries have id 0, so by position */
		o = p.last;
		switch (o ? o->what : CLI_DO_ID) {
		case CLI_DO_HELP:
			cli_usage__print(u, stdout);
			ret = 0;
			break;
		case CLI_DO_FLAG:
			*(bool *)((char *)base + o->off) = true;
			break;
		case CLI_DO_STR:
			*(const char **)((char *)base + o->off) = p.optarg;
			break;
		case CLI_DO_INT:
			if (set_int(u, o, p.last_long, (char *)base + o->off, p.optarg))
				ret = VPERF_EXIT_USAGE;
			break;
		case CLI_DO_FN:
			if (o->fn((char *)base + o->off, p.optarg, why, sizeof(why)))
				ret = cli_usage_error(u, "%s", why);
			break;
		case CLI_DO_ID:
			if (handle) {
				int r = handle(base, id, p.optarg);

				if (r)
					ret = r;
			}
			break;
		}
	}
	if (operands)
		*operands = p.optind < argc ? p.optind : argc;
	cli_parser__exit(&p);
	return ret;
}
