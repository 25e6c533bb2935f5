// SPDX-License-Identifier: MIT
/*
 * vperf record [-e ev,...] [-F hz | -c period] [-g] [-o DIR] [-p pid | -- cmd]
 *
 * Samples a command (or a running process) and everything it starts, on the machine vperf runs
 * on, into a CTF trace directory (docs/recording.md, section 12).  The options, the command and
 * the loop are here; the recorder (perf record's design) is record/local.h's: its rings are
 * drained every RECORD_PERIOD_MS, and its writer flushes so that a recorder killed at any time
 * leaves a trace babeltrace2 reads up to its last flush.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include <vperf/vperf.h>

#include "builtin.h"
#include "util/options.h"
#include "util/proc.h"
#include "util/recdir.h"
#include "util/signals.h"
#include "util/workload.h"

#ifdef VPERF_HAVE_RECORD
#include "local.h"
_Static_assert(16 == VPERF_LOCAL_MAX_EVENTS, "-e takes what the recorder records");
#endif

#define RECORD_PERIOD_MS	50	/* drain the rings */
#define PROGRESS_S		5
#define DEFAULT_FREQ		4000	/* perf record's */
#define DEFAULT_PAGES		128	/* data pages per CPU ring: 512 KiB */

#define MAX_EVENTS	16

struct record_opts {
	struct ev_list { const char *v[MAX_EVENTS]; int n; } ev;	/* -e */
	bool default_event;
	uint64_t freq, period;
	bool callchain, quiet, into_host;
	const char *output;
	pid_t pid;
	unsigned int pages;
	char **argv;
};

static int add_events(void *member, const char *arg, char *why, size_t len);
static int pages_arg(void *member, const char *arg, char *why, size_t len);

static const char *const record_synopsis[] = {
	"vperf record [-e ev[,ev...]] [-F hz | -c period] [-g] [-o DIR] -- cmd [args]",
	"vperf record [-e ev[,ev...]] [-F hz | -c period] [-g] [-o DIR] -p pid",
	NULL,
};

#define T struct record_opts
static const struct cli_option record_opts[] = {
	CLI_OPT_FN(T, 'e', "event", "ev,...", ev, add_events, "events to sample on, each on "
		   "its own (libpfm4 names as in `vperf list`; default cycles, or cpu-clock where "
		   "there is no hardware PMU); repeatable"),
	CLI_OPT_INT(T, 'F', "freq", "hz", freq, 1, 10000000, "a frequency in Hz, 1 to 10000000",
		    "about hz samples per second of each thread's running time (default 4000)"),
	CLI_OPT_INT(T, 'c', "count", "period", period, 1, LONG_MAX, "a period of 1 event or more",
		    "a sample every period events (cpu-clock, task-clock: ns)"),
	CLI_OPT_FLAG(T, 'g', "call-graph", callchain, "record callchains (frame pointers; up to "
		     "127 frames)"),
	CLI_OPT_STR(T, 'o', "output", "dir", output, "the recording (default " RECDIR_DEFAULT "; "
		    "an existing one is renamed to DIR.old first, and an existing DIR.old recording "
		    "removed)"),
	CLI_OPT_INT(T, 'p', "pid", "pid", pid, 1, INT32_MAX, "a process id", "record this running "
		    "process (its threads and what they start) until it exits or Ctrl-C"),
	CLI_OPT_FN(T, 'm', "mmap-pages", "n", pages, pages_arg, "ring buffer data pages per CPU, a "
		   "power of 2 (default 128)"),
	CLI_OPT_FLAG(T, 'q', "quiet", quiet, "no progress and summary lines on stderr"),
	CLI_OPT_FLAG(T, 0, "into-host", into_host, "in a vperf guest: no file; one event's samples "
		     "go into the guest's trace rings, which `vperf vm record` records on the host "
		     "(it runs this for its -e/-F/-c/-g)"),
	CLI_OPT_HELP(),
};
#undef T

static const struct cli_usage record_usage = {
	.cmd = "record",
	.synopsis = record_synopsis,
	.summary = "Sample a command (or a running process) and every thread it starts, on this "
		   "machine, into a CTF trace directory that `babeltrace2 DIR` reads: samples with "
		   "their counts and callchains, each thread's switches (with the sched tracepoints' "
		   "switches and wakeups where the kernel allows), forks, execs and exits, on "
		   "CLOCK_MONOTONIC. "
		   "`vperf report --header -i DIR` says what it holds. The exit status is the "
		   "command's. To record a guest from the host, see `vperf vm record`.",
	.opts = record_opts,
	.nr_opts = (int)(sizeof(record_opts) / sizeof(record_opts[0])),
};


/* -e ev,...: each a perf event (vperf:: events are counted, by vperf stat). */
static int add_events(void *member, const char *arg, char *why, size_t len)
{
	struct ev_list *ev = member;
	char *save = NULL, *list = (char *)arg;	/* argv's own string: the names point into it */

	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (ev->n == MAX_EVENTS)
			return snprintf(why, len, "at most %d events", MAX_EVENTS);
		if (!strncmp(t, "vperf::", 7))
			return snprintf(why, len, "-e %s: vperf record samples perf events; "
					"vperf:: events are counted per guest thread by `vperf "
					"stat` in a vperf guest", t);
		ev->v[ev->n++] = t;
	}
	return 0;
}

static int pages_arg(void *member, const char *arg, char *why, size_t len)
{
	long v;

	if (cli_parse_long(arg, 1, 1 << 20, &v) || (v & (v - 1)))
		return snprintf(why, len, "-m '%s': a power of 2 from 1 to 1048576 pages", arg);
	*(unsigned int *)member = (unsigned int)v;
	return 0;
}

/* The options, checked together: -1 to go on, else the exit status. */
static int parse_opts(struct record_opts *o, int argc, char **argv)
{
	int ret, first;

	memset(o, 0, sizeof(*o));
	o->pages = DEFAULT_PAGES;
	ret = cli_parse(&record_usage, argc, argv, o, NULL, &first);
	if (ret >= 0)
		return ret;
	if (first < argc)
		o->argv = &argv[first];
	if (o->freq && o->period)
		return cli_usage_error(&record_usage, "-F and -c both given: sample by frequency "
				       "or by period, not both");
	if (!o->argv && !o->pid)
		return cli_usage_error(&record_usage, "nothing to record: give a command after -- "
				       "or a process with -p");
	if (o->argv && o->pid)
		return cli_usage_error(&record_usage, "-p and a command both given: record one or "
				       "the other");
	if (o->into_host && o->ev.n > 1)
		return cli_usage_error(&record_usage, "--into-host samples on one event, not %d",
				       o->ev.n);
	if (o->into_host && (o->output || o->pages != DEFAULT_PAGES))
		return cli_usage_error(&record_usage, "--into-host writes no file: -o and -m do not "
				       "apply");
	if (!o->freq && !o->period)
		o->freq = DEFAULT_FREQ;
	if (!o->ev.n) {
		o->ev.v[o->ev.n++] = "cycles";
		o->default_event = true;
	}
	return -1;
}

/* Ctrl-C and friends reach the command; the recording ends when it has. */
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };

/* Alive: neither gone nor a zombie its parent has not reaped yet. */
/*
 * --into-host: the guest module's trace sampler samples the command (or -p's process) into the
 * trace rings; this process only starts it, waits and passes signals on.  cycles falls back to
 * cpu-clock where the guest has no PMU, as for a recording of our own.
 */
static int record_into_host(struct record_opts *o)
{
	struct cli_sigstate ss;
	struct workload w = { 0 };
	unsigned int flags = (o->period ? 0 : VPERF_TRACE_SAMPLE_FREQ) |
			     (o->callchain ? VPERF_TRACE_SAMPLE_CALLCHAIN : 0);
	char why[512];
	int fd, err, ret = 0, status = 0;
	bool have_status = false;

	cli_signals_setup(&ss, handled_signals, 4);
	if (o->argv) {
		err = workload__prepare(&w, o->argv, &ss.orig_mask);
		if (err) {
			ret = cli_error("record", "cannot start '%s': fork: %s", o->argv[0],
					strerror(-err));
			goto out;
		}
	}
	for (;;) {
		fd = vperf_trace_sample_task(o->argv ? w.pid : o->pid, o->ev.v[0],
					     o->period ? o->period : o->freq, flags, why, sizeof(why));
		if (fd == -ENOENT && o->default_event) {
			o->ev.v[0] = "cpu-clock";
			o->default_event = false;
			if (!o->quiet)
				fprintf(stderr, "[ vperf record: cycles cannot be sampled in this guest "
					"(no PMU): sampling cpu-clock ]\n");
			continue;
		}
		break;
	}
	if (fd < 0) {
		if (o->argv)
			workload__cancel(&w);
		ret = cli_error("record", "--into-host: %s", why);
		goto out;
	}
	if (!o->quiet)
		fprintf(stderr, "[ vperf record: sampling %s %s %" PRIu64 "%s into the trace rings ]\n",
			o->ev.v[0], o->period ? "every" : "at about", o->period ? o->period : o->freq,
			o->period ? " events" : " Hz");
	if (o->argv) {
		cli_fwd_pid = w.pid;
		err = workload__start(&w);
		if (err) {
			close(fd);
			ret = cli_error("record", "cannot run '%s': %s", o->argv[0], strerror(-err));
			ret = err == -ENOENT || err == -ENOTDIR ? 127 : 126;
			goto out;
		}
	}
	while (!have_status) {
		struct timespec tmo = { 0, RECORD_PERIOD_MS * 1000000L };

		ppoll(NULL, 0, &tmo, &ss.orig_mask);
		if (o->argv) {
			int wst;

			if (waitpid(w.pid, &wst, WNOHANG) == w.pid) {
				status = workload__exit_status(wst);
				have_status = true;
			}
		} else if (cli_got_signal || !proc_task_alive(o->pid)) {
			break;
		}
	}
	close(fd);	/* the module stops sampling and frees the sampler */
	ret = have_status ? status : 0;
	if (have_status && !o->quiet)
		fprintf(stderr, "[ vperf record: the command exited with status %d ]\n", status);
out:
	cli_signals_restore(&ss);
	return ret;
}

#ifndef VPERF_HAVE_RECORD
int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int ret = parse_opts(&o, argc, argv);

	if (ret >= 0)
		return ret;
	if (o.into_host)
		return record_into_host(&o);
	return cli_error("record", "this vperf was built without the CTF writer (libbabeltrace-ctf "
			 "was missing: Debian package libbabeltrace-ctf-dev, scripts/install-deps.sh), "
			 "so it cannot write a recording; install it and rebuild");
}
#else

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void command_line(char *buf, size_t len, char **argv)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; argv[i] && off + 1 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/* The recorder's notes (a fallback it took), as perf says them. */
static void say(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "[ vperf record: %s ]\n", msg);
}

static void progress(struct vperf_local *l, const char *dir, uint64_t t0)
{
	const struct vperf_local_stats *st = vperf_local__stats(l);

	fprintf(stderr, "[ vperf record: %.1f s, %" PRIu64 " events, %.1f MB, lost %" PRIu64 " ]\n",
		(double)(now_ns() - t0) / 1e9, st->events, (double)recdir_bytes(dir) / 1e6,
		st->lost_ring + st->lost_samples);
}

static void summary(struct vperf_local *l, const char *dir, int status, bool have_status)
{
	const struct vperf_local_stats *st = vperf_local__stats(l);

	if (have_status)
		fprintf(stderr, "[ vperf record: the command exited with status %d ]\n", status);
	fprintf(stderr, "[ vperf record: %" PRIu64 " samples, %" PRIu64 " thread switches, %" PRIu64
		" forks, %" PRIu64 " execs, %" PRIu64 " exits over %.3f s on %zu CPUs ]\n",
		st->samples, st->switches, st->forks, st->execs, st->exits,
		(double)(st->last_ts - st->first_ts) / 1e9, st->nr_cpus);
	fprintf(stderr, "[ vperf record: lost %" PRIu64 " (ring full %" PRIu64 ", samples the "
		"kernel dropped %" PRIu64 "); throttled %" PRIu64 " times ]\n",
		st->lost_ring + st->lost_samples, st->lost_ring, st->lost_samples, st->throttles);
	if (st->bad_records)
		fprintf(stderr, "[ vperf record: %" PRIu64 " records could not be decoded (first: "
			"%s) ]\n", st->bad_records, st->bad_why);
	if (st->late)
		fprintf(stderr, "[ vperf record: %" PRIu64 " events came after younger ones were "
			"written: kept at the time of the last one ]\n", st->late);
	fprintf(stderr, "[ vperf record: Captured and wrote %.3f MB %s ]\n",
		(double)recdir_bytes(dir) / 1e6, dir);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct vperf_local_config cfg = { .size = sizeof(cfg) };
	struct vperf_local *l = NULL;
	struct cli_sigstate ss;
	struct workload w = { 0 };
	struct pollfd *pfd = NULL;
	char dirbuf[PATH_MAX], target[1100], line[1024], why[1024];
	const char *dir;
	pid_t *tids = NULL;
	size_t nr_tids = 0, nr_fds;
	uint64_t t0, last_progress;
	int ret = parse_opts(&o, argc, argv), status = 0, err;
	bool have_status = false, done = false, started = false;

	if (ret >= 0)
		return ret;
	if (o.into_host)
		return record_into_host(&o);
	snprintf(dirbuf, sizeof(dirbuf), "%s", o.output ? o.output : RECDIR_DEFAULT);
	for (size_t len = strlen(dirbuf); len > 1 && dirbuf[len - 1] == '/'; len--)
		dirbuf[len - 1] = '\0';
	dir = dirbuf;
	ret = recdir_check(&record_usage, dir, 64);
	if (ret)
		return ret;
	if (fflush(stdout) == EOF)
		return cli_error("record", "cannot write to stdout: %s", strerror(errno));

	memcpy(cfg.events, o.ev.v, sizeof(cfg.events));
	cfg.nr_events = o.ev.n;
	cfg.default_event = o.default_event;
	cfg.freq = o.freq;
	cfg.period = o.period;
	cfg.callchain = o.callchain;
	cfg.pages = o.pages;
	cfg.command = o.argv != NULL;
	cfg.pid = o.pid;
	cfg.note = o.quiet ? NULL : say;
	if (o.argv) {
		command_line(line, sizeof(line), o.argv);
		snprintf(target, sizeof(target), "command: %s", line);
	} else {
		snprintf(target, sizeof(target), "pid %d", (int)o.pid);
	}
	cfg.target = target;

	cli_signals_setup(&ss, handled_signals, 4);
	if (o.argv) {
		err = workload__prepare(&w, o.argv, &ss.orig_mask);
		if (err) {
			ret = cli_error("record", "cannot start '%s': fork: %s", o.argv[0],
					strerror(-err));
			goto out_signals;
		}
		tids = malloc(sizeof(*tids));
		if (!tids) {
			workload__cancel(&w);
			ret = cli_error("record", "out of memory");
			goto out_signals;
		}
		tids[0] = w.pid;
		nr_tids = 1;
	} else {
		err = proc_task_list(o.pid, &tids, &nr_tids);
		if (err) {
			ret = cli_error("record", "-p %d: %s", (int)o.pid, err == -ENOENT ||
					err == -ESRCH ? "no such process" : strerror(-err));
			goto out_signals;
		}
	}
	err = vperf_local__new(&cfg, tids, nr_tids, &l, why, sizeof(why));
	if (!err) {
		if (!vperf_local__stats(l)->sched && !o.quiet)
			fprintf(stderr, "[ vperf record: no sched_switch or sched_wakeup events: %s ]\n",
				vperf_local__stats(l)->sched_why);
		ret = recdir_prepare("record", dir);
		if (!ret && vperf_local__create(l, dir, why, sizeof(why))) {
			rmdir(dir);
			ret = cli_error("record", "%s", why);
		}
	} else {
		ret = cli_error("record", "%s", why);
	}
	nr_fds = l ? vperf_local__nr_fds(l) : 0;
	pfd = ret ? NULL : calloc(nr_fds, sizeof(*pfd));
	if (!ret && !pfd)
		ret = cli_error("record", "out of memory");
	if (ret) {
		if (o.argv)
			workload__cancel(&w);
		goto out_local;
	}
	for (size_t i = 0; i < nr_fds; i++) {
		pfd[i].fd = vperf_local__fd(l, i);
		pfd[i].events = POLLIN;
	}

	t0 = last_progress = now_ns();
	if (o.argv) {
		cli_fwd_pid = w.pid;
		err = workload__start(&w);
		if (err) {
			cli_fwd_pid = 0;
			ret = cli_error("record", "cannot run '%s': %s", o.argv[0], strerror(-err));
			ret = err == -ENOENT || err == -ENOTDIR ? 127 : 126;
			goto out_local;
		}
	}
	started = true;

	while (!done) {
		struct timespec tmo = { 0, RECORD_PERIOD_MS * 1000000L };
		uint64_t now;

		ppoll(pfd, nr_fds, &tmo, &ss.orig_mask);
		if (o.argv) {
			int wst;
			pid_t r = waitpid(w.pid, &wst, WNOHANG);

			if (r == w.pid) {
				status = workload__exit_status(wst);
				have_status = true;
				done = true;
			}
		} else if (cli_got_signal || !proc_task_alive(o.pid)) {
			done = true;
		}
		if (!done && vperf_local__step(l)) {
			ret = cli_error("record", "%s", vperf_local__strerror(l));
			goto out_stop;
		}
		now = now_ns();
		if (!o.quiet && now - last_progress >= PROGRESS_S * 1000000000ull) {
			progress(l, dir, t0);
			last_progress = now;
		}
	}
	if (vperf_local__finish(l, status, have_status)) {
		ret = cli_error("record", "%s", vperf_local__strerror(l));
		goto out_local;
	}
	ret = have_status ? status : cli_got_signal && o.argv ? 128 + cli_got_signal : 0;
	if (!o.quiet)
		summary(l, dir, status, have_status);
	goto out_local;

out_stop:
	vperf_local__stop(l);
	if (o.argv && started && !have_status) {
		fprintf(stderr, "[ vperf record: recording stopped; waiting for the command to end ]\n");
		while (waitpid(w.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
out_local:
	vperf_local__delete(l);
out_signals:
	cli_signals_restore(&ss);
	free(pfd);
	free(tids);
	return ret;
}
#endif /* VPERF_HAVE_RECORD */
