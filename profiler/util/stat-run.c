// SPDX-License-Identifier: MIT
/*
 * vperf stat's measurement (stat-run.h).  Counting a command: the child is forked and held
 * (util/workload.c) until the event set is open on it with enable-on-exec, so counting starts
 * exactly at execvp() and covers every thread and process the command creates.  Signals sent to
 * vperf are passed on to the command.  The default set may not open whole (no hardware PMU
 * here): each default event is first opened alone, and those the host cannot count are shown as
 * <not supported>, as perf does.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "util/options.h"
#include "util/stat-run.h"
#include "util/workload.h"

/* ---- signals ------------------------------------------------------- */

static const int forward_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
};

/*
 * With a command: the forwarded signals and SIGCHLD; with -p/-t: SIGINT
 * and SIGTERM end counting (util/signals.h).
 */
void stat_signals_setup(struct cli_sigstate *s, bool command)
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
bool stat_totals_wanted(const struct stat_ctx *ctx)
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

static int new_evset(const char *backend, enum vperf_target target, pid_t pid, uint32_t flags,
		     struct vperf_evset **es)
{
	struct vperf_evset_opts opts = {
		.size = sizeof(opts),
		.backend = backend,
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

		err = new_evset(ctx->o->backend, target, pid, flags & ~VPERF_EVSET_PER_THREAD, &es);
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
	err = new_evset(ctx->o->backend, r->target, r->pid, flags, &es);
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
void stat_print_summary(struct stat_ctx *ctx, const struct run *last,
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
	if (ctx->o->per_thread && stat_totals_wanted(ctx)) {
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
int stat_run_command(struct stat_ctx *ctx, struct run *r,
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
int stat_run_target(struct stat_ctx *ctx, struct run *r,
		      const struct cli_sigstate *ss)
{
	uint32_t flags = 0;
	int err;

	memset(r, 0, sizeof(*r));
	r->pidfd = -1;
	if (ctx->o->pid.id) {
		r->target = VPERF_TARGET_PROCESS;
		r->pid = ctx->o->pid.id;
		if (ctx->o->per_thread)
			flags |= VPERF_EVSET_PER_THREAD;
	} else {
		r->target = VPERF_TARGET_THREAD;
		r->pid = ctx->o->tid.id;
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
