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
#include "util/stats.h"
#include "util/strutil.h"
#include "util/workload.h"

#define NSEC_PER_SEC		1000000000ull
#define NSEC_PER_MSEC		1000000ull
#define MIN_INTERVAL_MS		10
#define THREAD_POLL_MS		100	/* --per-thread: drain the kernel's records */
#define TARGET_POLL_MS		100	/* -p/-t: is the target still alive? */

/* Exit statuses of a command that could not be run, as a shell's. */
#define EXIT_CANNOT_EXEC	126
#define EXIT_NOT_FOUND		127

static const char *const default_events[] = {
	"task-clock", "context-switches", "cpu-migrations", "page-faults",
	"cycles", "instructions",
};

static const char *const stat_synopsis[] = {
	"vperf stat [<options>] [--] <command> [<args>]",
	"vperf stat [<options>] -p <pid> | -t <tid>",
	NULL,
};

struct stat_opts {
	struct strlist events;
	bool explicit_events;	/* -e given: every event must open */
	pid_t pid, tid;
	const char *pid_arg, *tid_arg;
	struct stat_id { pid_t id; const char *arg; } p_opt, t_opt;	/* -p, -t as given */
	bool per_thread;
	const char *backend;	/* --backend, NULL: automatic */
	long repeat;		/* 0: no -r */
	long interval_ms;	/* 0: no -I */
	bool json;
	const char *csv_sep;	/* NULL: no -x */
	const char *output;	/* NULL: stderr */
	char **argv;		/* the command, NULL-terminated, or NULL */
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
	CLI_OPT_FN(T, 'p', "pid", "pid", p_opt, pid_arg, "count a running process until it exits "
		   "or ^C"),
	CLI_OPT_FN(T, 't', "tid", "tid", t_opt, tid_arg, "count a running thread until it exits "
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


/* One event as printed; its counts over the runs. */
struct counter {
	const char *name;
	char shown[272];	/* name, or "name:u" if only user space counted */
	bool user_only;		/* VPERF_COUNT_USER_ONLY seen */
	enum stat_event_kind kind;
	bool supported;		/* false: <not supported> (default set) */
	int idx;		/* index in this run's evset, -1 if none */
	struct stats value, enabled, running;
	int nr_counted;		/* runs in which it ran at all */
	struct vperf_count prev;	/* -I: totals at the last interval */
};

struct stat_ctx {
	struct stat_opts *o;
	struct stat_config cfg;
	struct counter *ctr;
	int nr_ctr;
	bool probed;
	char what[PATH_MAX];	/* for the header: "'ls -l'", "process id '1'" */
	char event_arg[PATH_MAX];	/* the events, comma separated */
	char fallback_comm[COMM_LEN];	/* name of exited threads */
	struct comm_cache comms;
	struct stats elapsed;	/* ns */
	int runs;
	bool interval_header;
};

/* One measurement: a run of the command, or a -p/-t session. */
struct run {
	struct vperf_evset *es;	/* NULL if no event could be opened */
	enum vperf_target target;
	pid_t pid;		/* the child, or the -p/-t target */
	int pidfd;		/* -p: readable when the process has exited */
	uint64_t t0, t1;	/* ns, CLOCK_MONOTONIC */
	uint64_t last_interval;	/* ns */
	int status;		/* wait status of the command */
	struct rusage ru;
};

/* ---- signals ------------------------------------------------------- */

static const int forward_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
};

/*
 * With a command: the forwarded signals and SIGCHLD; with -p/-t: SIGINT
 * and SIGTERM end counting (util/signals.h).
 */
static void signals_setup(struct cli_sigstate *s, bool command)
{
	int sigs[CLI_MAX_SIGNALS], n = 0;

	if (command) {
		for (size_t i = 0; i < sizeof(forward_signals) / sizeof(int); i++)
			sigs[n++] = forward_signals[i];
		sigs[n++] = SIGCHLD;
	} else {
		sigs[n++] = SIGINT;
		sigs[n++] = SIGTERM;
	}
	cli_signals_setup(s, sigs, n);
}

/* ---- helpers ------------------------------------------------------- */

/*
 * A warning while counting.  When CSV or JSON lines go to stderr too, it
 * is a '#' line, which parsers skip (as perf's "# started on" lines).
 */
static void stat_warn(const struct stat_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void stat_warn(const struct stat_ctx *ctx, const char *fmt, ...)
{
	bool comment = ctx->cfg.fmt != STAT_FMT_TEXT && ctx->cfg.out == stderr;
	va_list ap;

	fflush(ctx->cfg.out);
	fprintf(stderr, "%svperf stat: warning: ", comment ? "# " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * With -I, CSV and JSON are a series of intervals only (their sum is the
 * total), so that every line has the same fields; text ends with totals.
 */
static bool totals_wanted(const struct stat_ctx *ctx)
{
	return !ctx->o->interval_ms || ctx->cfg.fmt == STAT_FMT_TEXT;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static double tv_sec(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* The clock and cycles among counts, for the metrics. */
static struct stat_basis basis_of(const struct stat_ctx *ctx,
				  const double *values, double elapsed_ns)
{
	struct stat_basis b = { .elapsed_ns = elapsed_ns };
	double cpu_clock = 0;

	for (int i = 0; i < ctx->nr_ctr; i++) {
		switch (ctx->ctr[i].kind) {
		case STAT_EV_TASK_CLOCK:
			if (!b.clock_ns)
				b.clock_ns = values[i];
			break;
		case STAT_EV_CPU_CLOCK:
			if (!cpu_clock)
				cpu_clock = values[i];
			break;
		case STAT_EV_CYCLES:
			if (!b.cycles)
				b.cycles = values[i];
			break;
		default:
			break;
		}
	}
	if (!b.clock_ns)
		b.clock_ns = cpu_clock;
	return b;
}

/* A line from one reading (not averaged). */
static void line_from_count(struct stat_line *l, const struct counter *c,
			    const struct vperf_count *v)
{
	memset(l, 0, sizeof(*l));
	l->event = c->name;
	l->kind = c->kind;
	if (c->idx < 0) {
		l->state = STAT_NOT_SUPPORTED;
		return;
	}
	if (c->user_only || (v->flags & VPERF_COUNT_USER_ONLY))
		l->event = c->shown;
	l->value = (double)v->value;
	l->enabled = (double)v->enabled;
	l->running = (double)v->running;
	l->state = (v->flags & VPERF_COUNT_NOT_COUNTED) || !v->running ?
		   STAT_NOT_COUNTED : STAT_COUNTED;
}

/* Print one group of lines (a total, or a thread) from readings. */
static void print_counts(struct stat_ctx *ctx, const struct stat_prefix *pfx,
			 const struct vperf_count *counts, double elapsed_ns)
{
	struct stat_line *lines = calloc((size_t)ctx->nr_ctr, sizeof(*lines));
	double *values = calloc((size_t)ctx->nr_ctr, sizeof(*values));
	struct stat_basis b;

	if (!lines || !values)
		goto out;
	for (int i = 0; i < ctx->nr_ctr; i++) {
		struct counter *c = &ctx->ctr[i];

		line_from_count(&lines[i], c,
				c->idx >= 0 ? &counts[c->idx] : NULL);
		values[i] = lines[i].state == STAT_COUNTED ? lines[i].value : 0;
	}
	b = basis_of(ctx, values, elapsed_ns);
	for (int i = 0; i < ctx->nr_ctr; i++)
		stat_print_line(&ctx->cfg, pfx, &lines[i], &b);
out:
	free(lines);
	free(values);
}

/* ---- opening the events --------------------------------------------- */

static const char *stat_backend;	/* --backend, NULL: automatic */

static int new_evset(enum vperf_target target, pid_t pid, uint32_t flags,
		     struct vperf_evset **es)
{
	struct vperf_evset_opts opts = {
		.size = sizeof(opts),
		.backend = stat_backend,
		.target = target,
		.pid = pid,
		.flags = flags,
	};

	return vperf_evset__new(&opts, es);
}

/* Is err an event this host cannot count (rather than a real failure)? */
static bool not_supported_error(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV ||
	       err == -EINVAL || err == -E2BIG || err == -ENOSYS;
}

/*
 * Default set: open each event alone on the target; mark the ones this
 * host cannot count.  Returns 0, or 1 after printing why (permissions...).
 */
static int probe_defaults(struct stat_ctx *ctx, enum vperf_target target,
			  pid_t pid, uint32_t flags)
{
	for (int i = 0; i < ctx->nr_ctr; i++) {
		struct counter *c = &ctx->ctr[i];
		struct vperf_evset *es;
		int err;

		err = new_evset(target, pid, flags & ~VPERF_EVSET_PER_THREAD, &es);
		if (err)
			return cli_error("stat", "cannot create an event set: %s",
					 strerror(-err));
		err = vperf_evset__add(es, c->name);
		if (err >= 0)
			err = vperf_evset__open(es);
		c->supported = err >= 0;
		if (err < 0 && !not_supported_error(err)) {
			cli_error("stat", "%s", vperf_evset__strerror(es));
			vperf_evset__delete(es);
			return 1;
		}
		vperf_evset__delete(es);
	}
	ctx->probed = true;
	return 0;
}

/*
 * Open this run's set on the target.  *out stays NULL when no event can
 * be counted (a default set on a host that supports none of it).
 * Returns 0, or 1 after printing why.
 */
static int open_counters(struct stat_ctx *ctx, struct run *r, uint32_t flags)
{
	struct vperf_evset *es;
	int err, n = 0;

	r->es = NULL;
	if (!ctx->o->explicit_events && !ctx->probed) {
		err = probe_defaults(ctx, r->target, r->pid, flags);
		if (err)
			return err;
	}
	err = new_evset(r->target, r->pid, flags, &es);
	if (err)
		return cli_error("stat", "cannot create an event set: %s",
				 strerror(-err));
	for (int i = 0; i < ctx->nr_ctr; i++) {
		struct counter *c = &ctx->ctr[i];

		c->idx = -1;
		if (!c->supported)
			continue;
		err = vperf_evset__add(es, c->name);
		if (err < 0) {
			cli_error("stat", "-e '%s': %s", c->name,
				  vperf_evset__strerror(es));
			goto fail;
		}
		c->idx = err;
		n++;
	}
	if (!n) {
		vperf_evset__delete(es);
		return 0;
	}
	err = vperf_evset__open(es);
	if (err) {
		const char *msg = vperf_evset__strerror(es);

		/* Say the plain cause first, then the library's details. */
		if ((err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV) &&
		    !sys_has_cpu_pmu() && !strcasestr(msg, "no hardware PMU") &&
		    !strcasestr(msg, "no PMU"))
			cli_error("stat", "no hardware PMU on this host: -e '%s': "
				  "%s", ctx->event_arg, msg);
		else if (ctx->o->explicit_events)
			cli_error("stat", "-e '%s': %s", ctx->event_arg, msg);
		else
			cli_error("stat", "%s", msg);
		goto fail;
	}
	r->es = es;
	return 0;
fail:
	vperf_evset__delete(es);
	return 1;
}

/* ---- reading and printing ------------------------------------------ */

static int read_totals(struct stat_ctx *ctx, struct run *r,
		       struct vperf_count *counts)
{
	int n = r->es ? vperf_evset__nr_events(r->es) : 0;
	int err;

	memset(counts, 0, (size_t)ctx->nr_ctr * sizeof(*counts));
	if (!n)
		return 0;
	err = vperf_evset__read(r->es, counts, (size_t)n);
	if (err < 0)
		stat_warn(ctx, "cannot read the counts: %s",
			  vperf_evset__strerror(r->es));
	return err;
}

static const char *thread_comm(struct stat_ctx *ctx, pid_t tid)
{
	const char *comm = comm_cache__get(&ctx->comms, tid);

	return comm ? comm : ctx->fallback_comm;
}

/* -I: the counts since the last interval, with the time since the start. */
static void print_interval(struct stat_ctx *ctx, struct run *r, uint64_t now)
{
	struct vperf_count *cur, *delta;
	struct stat_prefix pfx = {
		.interval = true,
		.interval_ns = now - r->t0,
	};

	if (ctx->o->per_thread) {	/* -t: the one thread */
		pfx.comm = thread_comm(ctx, r->pid);
		pfx.tid = r->pid;
	}

	cur = calloc((size_t)ctx->nr_ctr, sizeof(*cur));
	delta = calloc((size_t)ctx->nr_ctr, sizeof(*delta));
	if (!cur || !delta)
		goto out;
	read_totals(ctx, r, cur);
	for (int i = 0; i < ctx->nr_ctr; i++) {
		struct counter *c = &ctx->ctr[i];
		struct vperf_count *d, *v;

		if (c->idx < 0)
			continue;
		v = &cur[c->idx];
		d = &delta[c->idx];
		d->value = v->value - c->prev.value;
		d->raw = v->raw - c->prev.raw;
		d->enabled = v->enabled - c->prev.enabled;
		d->running = v->running - c->prev.running;
		d->flags = d->running ? 0 : VPERF_COUNT_NOT_COUNTED;
		c->prev = *v;
	}
	if (!ctx->interval_header) {
		stat_print_interval_header(&ctx->cfg);
		ctx->interval_header = true;
	}
	print_counts(ctx, &pfx, delta, (double)(now - r->last_interval));
	fflush(ctx->cfg.out);
	r->last_interval = now;
out:
	free(cur);
	free(delta);
}

/* --per-thread: one group of lines per thread. */
static void print_threads(struct stat_ctx *ctx, struct run *r,
			  const struct vperf_count *totals, double elapsed_ns)
{
	struct stat_prefix pfx = { .interval = false };
	struct vperf_count *counts;
	int n, nr_threads, unreported = -1, nr_unreported = 0;
	uint64_t lost;

	if (r->target == VPERF_TARGET_THREAD || !r->es) {
		/* -t: the thread is the total. */
		pfx.comm = thread_comm(ctx, r->pid);
		pfx.tid = r->pid;
		print_counts(ctx, &pfx, totals, elapsed_ns);
		return;
	}
	n = vperf_evset__nr_events(r->es);
	counts = calloc((size_t)ctx->nr_ctr, sizeof(*counts));
	if (!counts)
		return;
	nr_threads = vperf_evset__nr_threads(r->es);
	for (int i = 0; i < nr_threads; i++) {
		pid_t pid, tid;

		if (vperf_evset__read_thread(r->es, i, &pid, &tid, counts,
					     (size_t)n))
			continue;
		/* a perf event the kernel sent no count of for a thread it did not start with */
		for (int e = 0; e < n && tid != r->pid; e++) {
			const char *canon = vperf_evset__event_canon(r->es, e);
			bool none = (counts[e].flags & VPERF_COUNT_NOT_COUNTED) || !counts[e].running;

			if (!none || !canon || !strncmp(canon, "vperf::", 7))
				continue;
			if (unreported < 0)
				unreported = e;
			nr_unreported += e == unreported;
		}
		/* The kernel's record of its name first: it outlives the thread. */
		pfx.comm = vperf_evset__thread_comm(r->es, i);
		if (!pfx.comm[0])
			pfx.comm = thread_comm(ctx, tid);
		pfx.tid = tid;
		print_counts(ctx, &pfx, counts, elapsed_ns);
	}
	free(counts);
	if (unreported >= 0)
		stat_warn(ctx, "the kernel sent no count of '%s' for %d thread%s "
			  "(<not counted> above): kernels before a 2025 fix of perf's "
			  "inherit_stat (Debian 12's 6.1 among them) write none when a "
			  "thread exits; their counts are in the line of the thread the "
			  "command started with",
			  vperf_evset__event_name(r->es, unreported), nr_unreported,
			  nr_unreported == 1 ? "" : "s");
	lost = vperf_evset__threads_lost(r->es);
	if (lost)
		stat_warn(ctx, "the kernel dropped %llu per-thread records "
			 "(its buffer was full): the counts of those threads "
			 "are in no line above, and the totals of their "
			 "creators may include them",
			 (unsigned long long)lost);
}

/* Add this run's totals to the statistics over runs. */
static void accumulate(struct stat_ctx *ctx, const struct vperf_count *counts)
{
	for (int i = 0; i < ctx->nr_ctr; i++) {
		struct counter *c = &ctx->ctr[i];
		const struct vperf_count *v;

		if (c->idx < 0)
			continue;
		v = &counts[c->idx];
		stats__update(&c->value, (double)v->value);
		stats__update(&c->enabled, (double)v->enabled);
		stats__update(&c->running, (double)v->running);
		if (!(v->flags & VPERF_COUNT_NOT_COUNTED) && v->running)
			c->nr_counted++;
		if ((v->flags & VPERF_COUNT_USER_ONLY) && !c->user_only) {
			c->user_only = true;
			snprintf(c->shown, sizeof(c->shown), "%s:u", c->name);
		}
	}
}

/* The final block: means over the runs (one run: its counts). */
static void print_summary(struct stat_ctx *ctx, const struct run *last,
			  bool rusage)
{
	struct stat_line *lines = calloc((size_t)ctx->nr_ctr, sizeof(*lines));
	double *values = calloc((size_t)ctx->nr_ctr, sizeof(*values));
	double elapsed = stats__mean(&ctx->elapsed);
	struct stat_footer f = { .elapsed_ns = elapsed };
	struct stat_basis b;

	if (!lines || !values)
		goto out;
	for (int i = 0; i < ctx->nr_ctr; i++) {
		struct counter *c = &ctx->ctr[i];
		struct stat_line *l = &lines[i];

		l->event = c->shown;
		l->kind = c->kind;
		if (c->idx < 0) {
			l->state = STAT_NOT_SUPPORTED;
			continue;
		}
		l->state = c->nr_counted ? STAT_COUNTED : STAT_NOT_COUNTED;
		l->value = stats__mean(&c->value);
		l->enabled = stats__mean(&c->enabled);
		l->running = stats__mean(&c->running);
		l->noise_pct = stats__rel_stddev_pct(&c->value);
		values[i] = l->state == STAT_COUNTED ? l->value : 0;
	}
	b = basis_of(ctx, values, elapsed);
	for (int i = 0; i < ctx->nr_ctr; i++)
		stat_print_line(&ctx->cfg, NULL, &lines[i], &b);
	f.elapsed_stddev_ns = stats__stddev_mean(&ctx->elapsed);
	f.elapsed_noise_pct = stats__rel_stddev_pct(&ctx->elapsed);
	f.rusage = rusage;
	if (rusage) {
		f.user_s = tv_sec(&last->ru.ru_utime);
		f.sys_s = tv_sec(&last->ru.ru_stime);
	}
	stat_print_footer(&ctx->cfg, &f);
out:
	free(lines);
	free(values);
}

/* ---- waiting ------------------------------------------------------- */

/*
 * Wait until the command exits (r->status set) or, for -p/-t, until the
 * target exits or SIGINT/SIGTERM; print intervals and drain per-thread
 * records meanwhile.
 */
static void wait_loop(struct stat_ctx *ctx, struct run *r,
		      const struct cli_sigstate *ss, bool command)
{
	uint64_t iv = (uint64_t)ctx->o->interval_ms * NSEC_PER_MSEC;
	uint64_t next_iv = r->t0 + iv, next_tick = r->t0;
	bool per_thread = ctx->o->per_thread;
	bool ticking = per_thread || (!command && r->pidfd < 0);

	for (;;) {
		struct pollfd pfd = { .fd = r->pidfd, .events = POLLIN };
		struct timespec ts, *tsp = NULL;
		uint64_t now, deadline = UINT64_MAX;

		if (command) {
			pid_t w = wait4(r->pid, &r->status, WNOHANG, &r->ru);

			if (w == r->pid || (w < 0 && errno == ECHILD))
				break;
		} else {
			if (cli_got_signal == SIGINT || cli_got_signal == SIGTERM)
				break;
			if (!proc_task_alive(r->pid))
				break;
		}
		now = now_ns();
		if (iv && now >= next_iv) {
			print_interval(ctx, r, now);
			next_iv += iv;
			if (next_iv <= now)	/* we were late: skip, don't burst */
				next_iv = now + iv;
		}
		if (ticking && now >= next_tick) {
			if (per_thread && r->es &&
			    r->target == VPERF_TARGET_PROCESS) {
				vperf_evset__poll_threads(r->es);
				comm_cache__scan(&ctx->comms, r->pid);
			}
			next_tick = now + (per_thread ? THREAD_POLL_MS :
					   TARGET_POLL_MS) * NSEC_PER_MSEC;
		}
		if (iv)
			deadline = next_iv;
		if (ticking && next_tick < deadline)
			deadline = next_tick;
		if (deadline != UINT64_MAX) {
			uint64_t d = deadline > now ? deadline - now : 0;

			ts.tv_sec = (time_t)(d / NSEC_PER_SEC);
			ts.tv_nsec = (long)(d % NSEC_PER_SEC);
			tsp = &ts;
		}
		ppoll(r->pidfd >= 0 ? &pfd : NULL, r->pidfd >= 0 ? 1 : 0, tsp,
		      &ss->orig_mask);
		if (r->pidfd >= 0 && (pfd.revents & (POLLIN | POLLHUP)))
			break;
	}
	r->t1 = now_ns();
}

/* ---- the two kinds of measurement ---------------------------------- */

static void finish_run(struct stat_ctx *ctx, struct run *r)
{
	struct vperf_count *counts = calloc((size_t)ctx->nr_ctr + 1,
					    sizeof(*counts));
	double elapsed = (double)(r->t1 - r->t0);

	if (!counts) {
		cli_error("stat", "out of memory");
		return;
	}
	if (r->es && ctx->o->per_thread && r->target == VPERF_TARGET_PROCESS)
		vperf_evset__poll_threads(r->es);
	read_totals(ctx, r, counts);
	if (ctx->o->interval_ms && r->t1 > r->last_interval)
		print_interval(ctx, r, r->t1);	/* the last, partial one */
	stats__update(&ctx->elapsed, elapsed);
	accumulate(ctx, counts);
	ctx->runs++;
	if (ctx->o->per_thread && totals_wanted(ctx)) {
		stat_print_header(&ctx->cfg, ctx->what, 0);
		print_threads(ctx, r, counts, elapsed);
		stat_print_footer(&ctx->cfg, &(struct stat_footer){
			.elapsed_ns = elapsed,
			.rusage = r->target != VPERF_TARGET_THREAD &&
				  ctx->o->argv,
			.user_s = tv_sec(&r->ru.ru_utime),
			.sys_s = tv_sec(&r->ru.ru_stime),
		});
	}
	free(counts);
}

/*
 * One run of the command.  Returns 0 with r->status set, or an exit
 * status for vperf (1: counters failed; 126/127: cannot run it).
 */
static int run_command(struct stat_ctx *ctx, struct run *r,
		       const struct cli_sigstate *ss)
{
	uint32_t flags = VPERF_EVSET_ENABLE_ON_EXEC;
	struct workload w;
	int err;

	memset(r, 0, sizeof(*r));
	r->pidfd = -1;
	r->target = VPERF_TARGET_PROCESS;
	if (ctx->o->per_thread)
		flags |= VPERF_EVSET_PER_THREAD;

	err = workload__prepare(&w, ctx->o->argv, &ss->orig_mask);
	if (err)
		return cli_error("stat", "cannot start '%s': fork: %s",
				 ctx->o->argv[0], strerror(-err));
	r->pid = w.pid;
	err = open_counters(ctx, r, flags);
	if (err) {
		workload__cancel(&w);
		return err;
	}
	cli_fwd_pid = w.pid;
	/*
	 * The clock starts when the child is released, not when we learn
	 * that its exec succeeded: the parent may not run again before a
	 * short command has finished (perf does the same).
	 */
	r->t0 = r->last_interval = now_ns();
	err = workload__start(&w);
	if (err) {
		cli_fwd_pid = 0;
		vperf_evset__delete(r->es);
		r->es = NULL;
		fprintf(stderr, "vperf: cannot run '%s': %s\n",
			ctx->o->argv[0], strerror(-err));
		return err == -ENOENT || err == -ENOTDIR ? EXIT_NOT_FOUND :
							   EXIT_CANNOT_EXEC;
	}
	if (ctx->o->per_thread)
		comm_cache__scan(&ctx->comms, r->pid);
	wait_loop(ctx, r, ss, true);
	cli_fwd_pid = 0;
	finish_run(ctx, r);
	vperf_evset__delete(r->es);
	r->es = NULL;
	return 0;
}

/* -p / -t: count until the target exits or SIGINT/SIGTERM. */
static int run_target(struct stat_ctx *ctx, struct run *r,
		      const struct cli_sigstate *ss)
{
	uint32_t flags = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->pidfd = -1;
	if (ctx->o->pid) {
		r->target = VPERF_TARGET_PROCESS;
		r->pid = ctx->o->pid;
		if (ctx->o->per_thread)
			flags |= VPERF_EVSET_PER_THREAD;
	} else {
		r->target = VPERF_TARGET_THREAD;
		r->pid = ctx->o->tid;
	}
	comm_cache__add(&ctx->comms, r->pid);
	if (ctx->o->per_thread && r->target == VPERF_TARGET_PROCESS)
		comm_cache__scan(&ctx->comms, r->pid);
	err = open_counters(ctx, r, flags);
	if (err)
		return err;
	if (r->es && vperf_evset__start(r->es)) {
		cli_error("stat", "cannot start counting: %s",
			  vperf_evset__strerror(r->es));
		vperf_evset__delete(r->es);
		return 1;
	}
	if (r->target == VPERF_TARGET_PROCESS)
		r->pidfd = pidfd_open_compat(r->pid);
	r->t0 = r->last_interval = now_ns();
	wait_loop(ctx, r, ss, false);
	if (r->es)
		vperf_evset__stop(r->es);
	if (r->pidfd >= 0)
		close(r->pidfd);
	finish_run(ctx, r);
	vperf_evset__delete(r->es);
	r->es = NULL;
	return 0;
}

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
	o->pid = o->p_opt.id;
	o->pid_arg = o->p_opt.arg;
	o->tid = o->t_opt.id;
	o->tid_arg = o->t_opt.arg;
	stat_backend = o->backend;
	if (first < argc)
		o->argv = argv + first;
	return 0;
}

/* Options that cannot go together, and a missing target. */
static int check_options(const struct stat_opts *o)
{
	const char *target = o->pid ? "-p" : "-t";
	const char *target_arg = o->pid ? o->pid_arg : o->tid_arg;

	if (o->csv_sep && o->json)
		return cli_usage_error(&stat_usage,
			"-x '%s' and -j cannot be used together: choose CSV "
			"(-x) or JSON (-j) output", o->csv_sep);
	if (o->pid && o->tid)
		return cli_usage_error(&stat_usage,
			"-p %s and -t %s cannot be used together: count a "
			"process (-p) or one thread (-t)",
			o->pid_arg, o->tid_arg);
	if ((o->pid || o->tid) && o->argv)
		return cli_usage_error(&stat_usage,
			"%s %s and a command ('%s') cannot be used together: "
			"count an existing %s, or run a command",
			target, target_arg, o->argv[0],
			o->pid ? "process" : "thread");
	if (!o->pid && !o->tid && !o->argv)
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
	if (o->interval_ms && o->per_thread && !o->tid)
		return cli_usage_error(&stat_usage,
			"-I %ld cannot be used with --per-thread on a %s: the "
			"counts of a new thread are known only once it exits; "
			"use one of them (or -t TID)", o->interval_ms,
			o->pid ? "process" : "command");
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
	pid_t id = o->pid ? o->pid : o->tid;
	const char *opt = o->pid ? "-p" : "-t";
	const char *what = o->pid ? "process" : "thread";
	int state;
	pid_t tgid;

	if (!o->pid && !o->tid)
		return 0;
	state = proc_task_state(id);
	if (state == -ENOENT)
		return cli_error("stat", "%s %d: no such %s (see 'ps -e%s')",
				 opt, (int)id, what, o->pid ? "" : "L");
	if (state < 0)
		return cli_error("stat", "%s %d: cannot read /proc/%d/stat: %s",
				 opt, (int)id, (int)id, strerror(-state));
	if (state == 'Z' || state == 'X')
		return cli_error("stat", "%s %d: the %s has already exited "
				 "(it is a zombie)", opt, (int)id, what);
	if (o->pid) {
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
		if (!proc_read_comm(ctx->o->pid ? ctx->o->pid : ctx->o->tid,
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
			 o.pid ? "process" : "thread", o.pid ? o.pid : o.tid);
	}
	set_fallback_comm(&ctx);
	for (size_t i = 0, n = 0; i < o.events.n && n < sizeof(ctx.event_arg);
	     i++)
		n += (size_t)snprintf(ctx.event_arg + n, sizeof(ctx.event_arg) - n,
				      "%s%s", i ? "," : "", o.events.v[i]);

	cli_got_signal = 0;
	signals_setup(&ss, o.argv != NULL);
	if (o.argv) {
		long runs = o.repeat ? o.repeat : 1;

		for (long i = 0; i < runs; i++) {
			int s;

			status = run_command(&ctx, &r, &ss);
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
		status = run_target(&ctx, &r, &ss);
	}
	cli_signals_restore(&ss);

	if (!status && ctx.runs && !o.per_thread && totals_wanted(&ctx)) {
		stat_print_header(&ctx.cfg, ctx.what, o.repeat > 1 ? ctx.runs : 0);
		print_summary(&ctx, &r, o.argv && o.repeat <= 1);
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
