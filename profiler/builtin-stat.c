// SPDX-License-Identifier: MIT
/*
 * vperf stat: count events while a command runs (-- cmd args), or on an
 * existing process (-p) or thread (-t) until it exits or vperf is
 * interrupted, and print the counts like perf stat.
 *
 * Counting a command: the child is forked and held (util/workload.c)
 * until the event set is open on it with enable-on-exec, so counting
 * starts exactly at execvp() and covers every thread and process the
 * command creates.  Signals sent to vperf are passed on to the command.
 *
 * Event sets: events named with -e must all open, or nothing runs.  The
 * default set may not (no hardware PMU here): each default event is first
 * opened alone on the target, and those the host cannot count are shown
 * as <not supported>, as perf does.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <vperf/vperf.h>

#include "builtin.h"
#include "util/options.h"
#include "util/signals.h"
#include "util/proc.h"
#include "util/stat-display.h"
#include "util/stat-run.h"
#include "util/stats.h"
#include "util/strutil.h"
#include "util/workload.h"

#define MIN_INTERVAL_MS		10

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions",
};

static const char *const stat_synopsis[] = {
	"vperf stat [<options>] [--] <command> [<args>]",
	"vperf stat [<options>] -p <pid> | -t <tid>",
	NULL,
};


static int events_arg(void *member, const char *arg, char *why, size_t len);
static int pid_arg(void *member, const char *arg, char *why, size_t len);
static int tid_arg(void *member, const char *arg, char *why, size_t len);
static int backend_arg(void *member, const char *arg, char *why, size_t len);
static int repeat_arg(void *member, const char *arg, char *why, size_t len);
static int sep_arg(void *member, const char *arg, char *why, size_t len);
static int output_arg(void *member, const char *arg, char *why, size_t len);
static int interval_arg(void *member, const char *arg, char *why, size_t len);

#define T struct stat_opts
static const struct cli_option stat_options[] = {
	CLI_OPT_FN(T, 'e', "event", "events", events, events_arg, "events to count, comma "
		   "separated ('vperf list')"),
	CLI_OPT_FN(T, 'p', "pid", "pid", pid, pid_arg, "count a running process until it exits "
		   "or ^C"),
	CLI_OPT_FN(T, 't', "tid", "tid", tid, tid_arg, "count a running thread until it exits "
		   "or ^C"),
	CLI_OPT_FLAG(T, 0, "per-thread", per_thread, "show counts per thread ('comm-tid')"),
	CLI_OPT_FN(T, 0, "backend", "pv|perf", backend, backend_arg, "count through "
		   "vperf_guest.ko (pv: hardware events by the host's PMU) or the kernel's perf "
		   "only; default: pv for vperf:: events and, in a guest without a PMU, hardware "
		   "events"),
	CLI_OPT_FN(T, 'r', "repeat", "n", repeat, repeat_arg, "run the command n times: means, +- "
		   "spread"),
	CLI_OPT_FN(T, 'x', "field-separator", "sep", csv_sep, sep_arg, "CSV output with separator "
		   "sep"),
	CLI_OPT_FLAG(T, 'j', "json-output", json, "JSON output, one object per line"),
	CLI_OPT_FN(T, 'o', "output", "file", output, output_arg, "write the counts to file, not "
		   "stderr"),
	CLI_OPT_FN(T, 'I', "interval-print", "ms", interval_ms, interval_arg, "print counts every ms "
		   "milliseconds (>= 10)"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage stat_usage = {
	.cmd = "stat",
	.synopsis = stat_synopsis,
	.summary = "Count events while a command runs, or on a process or "
		   "thread.  Counts go to\n stderr (or -o file); the "
		   "command's exit status is vperf's.",
	.opts = stat_options,
	.nr_opts = sizeof(stat_options) / sizeof(stat_options[0]),
};



/* ---- options ------------------------------------------------------- */

static int parse_id(const char *opt, const char *arg, const char *what, void *member,
		    char *why, size_t len)
{
	struct stat_id *id = member;
	long v;

	if (cli_parse_long(arg, 1, INT_MAX, &v))
		return snprintf(why, len, "%s '%s': not a %s id (give a positive number, e.g. from "
				"'pidof' or 'ps')", opt, arg, what);
	id->id = (pid_t)v;
	id->arg = arg;
	return 0;
}

static int pid_arg(void *member, const char *arg, char *why, size_t len)
{
	return parse_id("-p", arg, "process", member, why, len);
}

static int tid_arg(void *member, const char *arg, char *why, size_t len)
{
	return parse_id("-t", arg, "thread", member, why, len);
}

static int events_arg(void *member, const char *arg, char *why, size_t len)
{
	int err = strlist__split(member, arg, ',');

	if (err == -EINVAL)
		return snprintf(why, len, "-e '%s': empty event name (give event names separated "
				"by single commas, e.g. -e task-clock,page-faults)", arg);
	return err ? snprintf(why, len, "out of memory") : 0;
}

static int backend_arg(void *member, const char *arg, char *why, size_t len)
{
	if (strcmp(arg, "pv") && strcmp(arg, "perf"))
		return snprintf(why, len, "--backend '%s': pv or perf", arg);
	*(const char **)member = arg;
	return 0;
}

static int repeat_arg(void *member, const char *arg, char *why, size_t len)
{
	long v;
	int err = cli_parse_long(arg, LONG_MIN, LONG_MAX, &v);

	if (err == -EINVAL)
		return snprintf(why, len, "-r '%s': not a number (give how many times to run the "
				"command, e.g. -r 5)", arg);
	if (err || v < 1 || v > INT_MAX)
		return snprintf(why, len, "-r %s: the number of runs must be a whole number from 1 "
				"to %d", arg, INT_MAX);
	*(long *)member = v;
	return 0;
}

static int sep_arg(void *member, const char *arg, char *why, size_t len)
{
	if (!*arg)
		return snprintf(why, len, "-x '': the field separator is empty (give one, e.g. -x , "
				"or -x ';')");
	*(const char **)member = arg;
	return 0;
}

static int output_arg(void *member, const char *arg, char *why, size_t len)
{
	if (!*arg)
		return snprintf(why, len, "-o '': empty file name (give the file to write the "
				"counts to)");
	*(const char **)member = arg;
	return 0;
}

static int interval_arg(void *member, const char *arg, char *why, size_t len)
{
	long v;
	int err = cli_parse_long(arg, LONG_MIN, LONG_MAX, &v);

	if (err == -EINVAL)
		return snprintf(why, len, "-I '%s': not a number (give the interval in "
				"milliseconds, e.g. -I 1000)", arg);
	if (err || v < MIN_INTERVAL_MS || v > INT_MAX)
		return snprintf(why, len, "-I %s: the interval must be at least %d ms (shorter ones "
				"cost more than they measure)", arg, MIN_INTERVAL_MS);
	*(long *)member = v;
	return 0;
}

/* 0 to go on, -1 after --help, else the exit status. */
static int parse_options(struct stat_opts *o, int argc, char **argv)
{
	int first, status = cli_parse(&stat_usage, argc, argv, o, NULL, &first);

	if (status >= 0)
		return status ? status : -1;
	o->explicit_events = o->events.n > 0;
	if (first < argc)
		o->argv = argv + first;
	return 0;
}

/* Options that cannot go together, and a missing target. */
static int check_options(const struct stat_opts *o)
{
	const char *target = o->pid.id ? "-p" : "-t";
	const char *target_arg = o->pid.id ? o->pid.arg : o->tid.arg;

	if (o->csv_sep && o->json)
		return cli_usage_error(&stat_usage,
			"-x '%s' and -j cannot be used together: choose CSV "
			"(-x) or JSON (-j) output", o->csv_sep);
	if (o->pid.id && o->tid.id)
		return cli_usage_error(&stat_usage,
			"-p %s and -t %s cannot be used together: count a "
			"process (-p) or one thread (-t)",
			o->pid.arg, o->tid.arg);
	if ((o->pid.id || o->tid.id) && o->argv)
		return cli_usage_error(&stat_usage,
			"%s %s and a command ('%s') cannot be used together: "
			"count an existing %s, or run a command",
			target, target_arg, o->argv[0],
			o->pid.id ? "process" : "thread");
	if (!o->pid.id && !o->tid.id && !o->argv)
		return cli_usage_error(&stat_usage,
			"nothing to count: give a command (vperf stat -- "
			"sleep 1), a process (-p PID) or a thread (-t TID)");
	if (o->repeat && !o->argv)
		return cli_usage_error(&stat_usage,
			"-r %ld repeats a command: it cannot be used with "
			"%s %s", o->repeat, target, target_arg);
	if (o->repeat > 1 && o->interval_ms)
		return cli_usage_error(&stat_usage,
			"-I %ld cannot be used with -r %ld: print intervals "
			"of a single run", o->interval_ms, o->repeat);
	if (o->interval_ms && o->per_thread && !o->tid.id)
		return cli_usage_error(&stat_usage,
			"-I %ld cannot be used with --per-thread on a %s: the "
			"counts of a new thread are known only once it exits; "
			"use one of them (or -t TID)", o->interval_ms,
			o->pid.id ? "process" : "command");
	if (o->repeat > 1 && o->per_thread)
		return cli_usage_error(&stat_usage,
			"--per-thread cannot be used with -r %ld: the threads "
			"of different runs are different threads", o->repeat);
	return 0;
}

/* Are the event names known?  (Before anything runs or is written.) */
static int check_events(const struct stat_opts *o)
{
	struct vperf_evset *es;
	int err;

	err = vperf_evset__new(NULL, &es);
	if (err)
		return cli_error("stat", "cannot create an event set: %s",
				 strerror(-err));
	for (size_t i = 0; i < o->events.n; i++) {
		err = vperf_evset__add(es, o->events.v[i]);
		if (err == -E2BIG) {
			cli_usage_error(&stat_usage, "-e: too many events: %s",
					vperf_evset__strerror(es));
			vperf_evset__delete(es);
			return VPERF_EXIT_USAGE;
		}
		if (err < 0 && err != -EOPNOTSUPP) {
			cli_usage_error(&stat_usage, "-e '%s': %s",
					o->events.v[i],
					vperf_evset__strerror(es));
			vperf_evset__delete(es);
			return VPERF_EXIT_USAGE;
		}
		if (err == -EOPNOTSUPP) {
			/* Known, but not countable here (e.g. vperf:: events). */
			cli_error("stat", "-e '%s': %s", o->events.v[i],
				  vperf_evset__strerror(es));
			vperf_evset__delete(es);
			return 1;
		}
	}
	vperf_evset__delete(es);
	return 0;
}

/* Does the -p/-t target exist?  Returns 0 or 1 after saying why not. */
static int check_target(const struct stat_opts *o)
{
	pid_t id = o->pid.id ? o->pid.id : o->tid.id;
	const char *opt = o->pid.id ? "-p" : "-t";
	const char *what = o->pid.id ? "process" : "thread";
	int state;
	pid_t tgid;

	if (!o->pid.id && !o->tid.id)
		return 0;
	state = proc_task_state(id);
	if (state == -ENOENT)
		return cli_error("stat", "%s %d: no such %s (see 'ps -e%s')",
				 opt, (int)id, what, o->pid.id ? "" : "L");
	if (state < 0)
		return cli_error("stat", "%s %d: cannot read /proc/%d/stat: %s",
				 opt, (int)id, (int)id, strerror(-state));
	if (state == 'Z' || state == 'X')
		return cli_error("stat", "%s %d: the %s has already exited "
				 "(it is a zombie)", opt, (int)id, what);
	if (o->pid.id) {
		tgid = proc_tgid(id);
		if (tgid > 0 && tgid != id)
			return cli_error("stat", "-p %d: %d is a thread of "
					 "process %d, not a process: use -t %d, "
					 "or -p %d", (int)id, (int)id, (int)tgid,
					 (int)id, (int)tgid);
	}
	return 0;
}

static void set_fallback_comm(struct stat_ctx *ctx)
{
	const char *name = NULL, *slash;

	if (ctx->o->argv) {
		name = ctx->o->argv[0];
		slash = strrchr(name, '/');
		if (slash && slash[1])
			name = slash + 1;
	} else {
		if (!proc_read_comm(ctx->o->pid.id ? ctx->o->pid.id : ctx->o->tid.id,
				    ctx->fallback_comm,
				    sizeof(ctx->fallback_comm)))
			return;
		name = "?";
	}
	snprintf(ctx->fallback_comm, sizeof(ctx->fallback_comm), "%s", name);
}

int cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .events = { NULL, 0, 0 } };
	struct stat_ctx ctx = { .o = &o };
	struct cli_sigstate ss;
	struct run r = { .pidfd = -1 };
	int status, cmd_status = 0;
	FILE *out = NULL;

	status = parse_options(&o, argc, argv);
	if (status)
		goto out;	/* -1: --help */
	status = check_options(&o);
	if (status)
		goto out;
	if (!o.explicit_events) {
		for (size_t i = 0; i < sizeof(default_events) /
				       sizeof(default_events[0]); i++) {
			const char *e = default_events[i];

			if (strlist__add(&o.events, e, strlen(e))) {
				status = cli_error("stat", "out of memory");
				goto out;
			}
		}
	}
	status = check_events(&o);
	if (status)
		goto out;
	status = check_target(&o);
	if (status)
		goto out;
	if (o.output) {
		out = fopen(o.output, "we");
		if (!out) {
			status = cli_error("stat", "-o %s: cannot open the output "
					   "file: %s", o.output, strerror(errno));
			goto out;
		}
	}

	ctx.cfg.out = out ? out : stderr;
	ctx.cfg.fmt = o.json ? STAT_FMT_JSON :
		      o.csv_sep ? STAT_FMT_CSV : STAT_FMT_TEXT;
	ctx.cfg.sep = o.csv_sep ? o.csv_sep : ",";
	ctx.cfg.show_noise = o.repeat > 1;
	ctx.nr_ctr = (int)o.events.n;
	ctx.ctr = calloc(o.events.n, sizeof(*ctx.ctr));
	if (!ctx.ctr) {
		status = cli_error("stat", "out of memory");
		goto out;
	}
	for (int i = 0; i < ctx.nr_ctr; i++) {
		ctx.ctr[i].name = o.events.v[i];
		snprintf(ctx.ctr[i].shown, sizeof(ctx.ctr[i].shown), "%s", o.events.v[i]);
		ctx.ctr[i].kind = stat_event_kind(o.events.v[i]);
		ctx.ctr[i].supported = true;
		ctx.ctr[i].idx = -1;
	}
	if (o.argv) {
		char cmdline[PATH_MAX - 3];

		str_join_argv(cmdline, sizeof(cmdline), o.argv);
		snprintf(ctx.what, sizeof(ctx.what), "'%s'", cmdline);
	} else {
		snprintf(ctx.what, sizeof(ctx.what), "%s id '%d'",
			 o.pid.id ? "process" : "thread", o.pid.id ? o.pid.id : o.tid.id);
	}
	set_fallback_comm(&ctx);
	for (size_t i = 0, n = 0; i < o.events.n && n < sizeof(ctx.event_arg);
	     i++)
		n += (size_t)snprintf(ctx.event_arg + n, sizeof(ctx.event_arg) - n,
				      "%s%s", i ? "," : "", o.events.v[i]);

	cli_got_signal = 0;
	stat_signals_setup(&ss, o.argv != NULL);
	if (o.argv) {
		long runs = o.repeat ? o.repeat : 1;

		for (long i = 0; i < runs; i++) {
			int s;

			status = stat_run_command(&ctx, &r, &ss);
			if (status)
				break;
			s = workload__exit_status(r.status);
			if (s)
				cmd_status = s;
			/* Interrupted: stop repeating, show what we have. */
			if (WIFSIGNALED(r.status) || cli_got_signal)
				break;
		}
	} else {
		status = stat_run_target(&ctx, &r, &ss);
	}
	cli_signals_restore(&ss);

	if (!status && ctx.runs && !o.per_thread && stat_totals_wanted(&ctx)) {
		stat_print_header(&ctx.cfg, ctx.what, o.repeat > 1 ? ctx.runs : 0);
		stat_print_summary(&ctx, &r, o.argv && o.repeat <= 1);
	}
	if (!status)
		status = cmd_status;

	/* Counts that did not reach their file are a failure. */
	if (out) {
		if (fflush(out) || ferror(out)) {
			cli_error("stat", "-o %s: cannot write the counts: %s",
				  o.output, strerror(errno ? errno : EIO));
			status = status ? status : 1;
		}
		if (fclose(out) && !status) {
			cli_error("stat", "-o %s: cannot write the counts: %s",
				  o.output, strerror(errno));
			status = 1;
		}
	} else if (fflush(stderr) || ferror(stderr)) {
		status = status ? status : 1;
	}
out:
	comm_cache__exit(&ctx.comms);
	free(ctx.ctr);
	strlist__exit(&o.events);
	return status < 0 ? 0 : status;
}
