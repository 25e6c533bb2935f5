// SPDX-License-Identifier: MIT
/*
 * vperf record [-e ev,...] [-F hz | -c period] [-g] [-o DIR] [-p pid | -- cmd]
 *
 * Samples a command (or a running process) and everything it starts, on the machine vperf runs
 * on, into a CTF trace directory (docs/recording.md, section 12).  perf record's design: one
 * event per (thread, CPU) with inherit, every event of a CPU writing into one ring buffer
 * (PERF_EVENT_IOC_SET_OUTPUT), drained every RECORD_PERIOD_MS into the CTF writer, which flushes
 * whole packets every FLUSH_MS, so that a recorder killed at any time leaves a trace babeltrace2
 * reads up to its last flush.  Timestamps are the kernel's CLOCK_MONOTONIC (use_clockid).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include <linux/perf_event.h>

#include <vperf/vperf.h>

#include "builtin.h"
#include "util/options.h"
#include "util/recdir.h"
#include "util/signals.h"
#include "util/workload.h"

#ifdef VPERF_HAVE_RECORD
#include "ctf.h"
#include "ordered.h"
#include "schema.h"
#include "ksyms.h"
#include "perfdec.h"
#endif

#define RECORD_PERIOD_MS	50	/* drain the rings */
#define FLUSH_MS		250	/* write packets (what a killed recorder leaves) */
#define HOLD_NS			20000000ull	/* events younger than this wait a round: another
						 * CPU's ring may still get older ones */
#define PROGRESS_S		5
#define DEFAULT_FREQ		4000	/* perf record's */
#define DEFAULT_PAGES		128	/* data pages per CPU ring: 512 KiB */
#define MAX_STACK		127	/* kernel.perf_event_max_stack's default */
#define EXIT_CODE_UNKNOWN	INT64_MIN

enum {
	OPT_EVENT = 'e', OPT_FREQ = 'F', OPT_COUNT = 'c', OPT_CALLGRAPH = 'g', OPT_OUTPUT = 'o',
	OPT_PID = 'p', OPT_MMAP = 'm', OPT_QUIET = 'q', OPT_HELP = 'h', OPT_INTO_HOST = 256,
};

static const char *const record_synopsis[] = {
	"vperf record [-e ev[,ev...]] [-F hz | -c period] [-g] [-o DIR] -- cmd [args]",
	"vperf record [-e ev[,ev...]] [-F hz | -c period] [-g] [-o DIR] -p pid",
	NULL,
};

static const struct cli_option record_opts[] = {
	{ 'e', "event", "ev,...", "events to sample on, each on its own (libpfm4 names as in "
	  "`vperf list`; default cycles, or cpu-clock where there is no hardware PMU); repeatable",
	  OPT_EVENT },
	{ 'F', "freq", "hz", "about hz samples per second of each thread's running time (default "
	  "4000)", OPT_FREQ },
	{ 'c', "count", "period", "a sample every period events (cpu-clock, task-clock: ns)",
	  OPT_COUNT },
	{ 'g', "call-graph", NULL, "record callchains (frame pointers; up to 127 frames)",
	  OPT_CALLGRAPH },
	{ 'o', "output", "dir", "the recording (default " RECDIR_DEFAULT "; an existing one is "
	  "renamed to DIR.old first, and an existing DIR.old recording removed)", OPT_OUTPUT },
	{ 'p', "pid", "pid", "record this running process (its threads and what they start) until "
	  "it exits or Ctrl-C", OPT_PID },
	{ 'm', "mmap-pages", "n", "ring buffer data pages per CPU, a power of 2 (default 128)",
	  OPT_MMAP },
	{ 'q', "quiet", NULL, "no progress and summary lines on stderr", OPT_QUIET },
	{ 0, "into-host", NULL, "in a vperf guest: no file; one event's samples go into the "
	  "guest's trace rings, which `vperf vm record` records on the host (it runs this for "
	  "its -e/-F/-c/-g)", OPT_INTO_HOST },
	{ 'h', "help", NULL, "show this help", OPT_HELP },
};

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

#define MAX_EVENTS	16

struct record_opts {
	const char *events[MAX_EVENTS];
	int nr_events;
	bool default_event;
	uint64_t freq, period;
	bool callchain, quiet, into_host;
	const char *output;
	pid_t pid;
	unsigned int pages;
	char **argv;
};

static int add_events(struct record_opts *o, char *list)
{
	char *save = NULL;

	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (o->nr_events == MAX_EVENTS)
			return cli_usage_error(&record_usage, "at most %d events", MAX_EVENTS);
		if (!strncmp(t, "vperf::", 7))
			return cli_usage_error(&record_usage, "-e %s: vperf record samples perf "
					       "events; vperf:: events are counted per guest thread "
					       "by `vperf stat` in a vperf guest", t);
		o->events[o->nr_events++] = t;
	}
	return 0;
}

static int parse_opts(struct record_opts *o, int argc, char **argv)
{
	struct cli_parser p;
	int id, ret = -1;
	long v;

	memset(o, 0, sizeof(*o));
	o->pages = DEFAULT_PAGES;
	if (cli_parser__init(&p, &record_usage, argc, argv))
		return cli_error("record", "out of memory");
	while ((id = cli_getopt(&p)) != CLI_OPT_END) {
		switch (id) {
		case CLI_OPT_ERROR:
			ret = VPERF_EXIT_USAGE;
			goto out;
		case OPT_HELP:
			cli_usage__print(&record_usage, stdout);
			ret = 0;
			goto out;
		case OPT_EVENT:
			ret = add_events(o, (char *)p.optarg);
			if (ret)
				goto out;
			ret = -1;
			break;
		case OPT_FREQ:
			if (cli_parse_long(p.optarg, 1, 10000000, &v)) {
				ret = cli_usage_error(&record_usage, "-F '%s': a frequency in Hz, "
						      "1 to 10000000", p.optarg);
				goto out;
			}
			o->freq = (uint64_t)v;
			break;
		case OPT_COUNT:
			if (cli_parse_long(p.optarg, 1, LONG_MAX, &v)) {
				ret = cli_usage_error(&record_usage, "-c '%s': a period of 1 event "
						      "or more", p.optarg);
				goto out;
			}
			o->period = (uint64_t)v;
			break;
		case OPT_CALLGRAPH:
			o->callchain = true;
			break;
		case OPT_OUTPUT:
			o->output = p.optarg;
			break;
		case OPT_PID:
			if (cli_parse_long(p.optarg, 1, INT32_MAX, &v)) {
				ret = cli_usage_error(&record_usage, "-p '%s': a process id", p.optarg);
				goto out;
			}
			o->pid = (pid_t)v;
			break;
		case OPT_MMAP:
			if (cli_parse_long(p.optarg, 1, 1 << 20, &v) || (v & (v - 1))) {
				ret = cli_usage_error(&record_usage, "-m '%s': a power of 2 from 1 "
						      "to 1048576 pages", p.optarg);
				goto out;
			}
			o->pages = (unsigned int)v;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_INTO_HOST:
			o->into_host = true;
			break;
		}
	}
	if (o->freq && o->period) {
		ret = cli_usage_error(&record_usage, "-F and -c both given: sample by frequency or "
				      "by period, not both");
		goto out;
	}
	if (p.optind < argc)
		o->argv = &argv[p.optind];
	if (!o->argv && !o->pid) {
		ret = cli_usage_error(&record_usage, "nothing to record: give a command after -- "
				      "or a process with -p");
		goto out;
	}
	if (o->argv && o->pid) {
		ret = cli_usage_error(&record_usage, "-p and a command both given: record one or "
				      "the other");
		goto out;
	}
	if (o->into_host && o->nr_events > 1) {
		ret = cli_usage_error(&record_usage, "--into-host samples on one event, not %d",
				      o->nr_events);
		goto out;
	}
	if (o->into_host && (o->output || o->pages != DEFAULT_PAGES)) {
		ret = cli_usage_error(&record_usage, "--into-host writes no file: -o and -m do not "
				      "apply");
		goto out;
	}
	if (!o->freq && !o->period)
		o->freq = DEFAULT_FREQ;
	if (!o->nr_events) {
		o->events[o->nr_events++] = "cycles";
		o->default_event = true;
	}
out:
	cli_parser__exit(&p);
	return ret;
}

/* Ctrl-C and friends reach the command; the recording ends when it has. */
static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD };

/* Alive: neither gone nor a zombie its parent has not reaped yet. */
static bool process_alive(pid_t pid)
{
	char path[64], buf[256], *rp;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	rp = strrchr(buf, ')');		/* the comm may hold anything, even ") Z" */
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

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
		fd = vperf_trace_sample_task(o->argv ? w.pid : o->pid, o->events[0],
					     o->period ? o->period : o->freq, flags, why, sizeof(why));
		if (fd == -ENOENT && o->default_event) {
			o->events[0] = "cpu-clock";
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
			o->events[0], o->period ? "every" : "at about", o->period ? o->period : o->freq,
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
		} else if (cli_got_signal || !process_alive(o->pid)) {
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

/* ---- the recorder ---------------------------------------------------- */


struct ring {
	int cpu;
	int fd;				/* the event whose buffer it is */
	void *base;
	size_t len;
	struct vperf_perf_ring r;
};

enum pend_kind { P_SAMPLE, P_FORK, P_EXEC, P_EXIT, P_LOST, P_SWITCH, P_SCHED_SWITCH, P_SCHED_WAKEUP,
		 P_SCHED_WAKING, P_MMAP, P_COMM };

/* A decoded record waiting to be written in time order. */
struct pend {
	struct vperf_ordered_ev h;	/* its time, first */
	enum pend_kind kind;
	uint32_t cpu;
	uint8_t layer;
	uint32_t a, b, c, d;		/* pids and tids; a sample's event index in c */
	uint64_t ip, period;		/* a sample's; P_LOST: the count in period */
	uint64_t start, len, pgoff;	/* P_MMAP's mapping; its prot in c */
	char *name;			/* P_MMAP's file name, malloc'd */
	uint64_t *chain;		/* malloc'd */
	uint32_t nr_chain;
	char comm[VPERF_PERFDEC_COMM_LEN + 1];
	char comm2[VPERF_PERFDEC_COMM_LEN + 1];	/* sched_switch's next_comm */
	int64_t state;				/* sched_switch's prev_state */
};

/* The sched tracepoints, system-wide (where allowed), filtered to the recorded threads. */
enum { TP_SWITCH, TP_WAKEUP, TP_WAKING, NR_TP };
#define TP_INDEX(tp)	(MAX_EVENTS + (tp))	/* their index in the decoder */

static const char *const tp_names[NR_TP] = { "sched_switch", "sched_wakeup", "sched_waking" };

/*
 * The waker: sched_waking runs in the waker's context, sched_wakeup may run in an IPI on the
 * wakee's CPU (a queued wakeup), so each wakee's last waking names it; a waking in an interrupt,
 * softirq or NMI (the tracepoint's common_flags, the kernel's TRACE_FLAG_*) has no waker task.
 */
#define TRACE_FLAG_HARDIRQ	0x08
#define TRACE_FLAG_SOFTIRQ	0x10
#define TRACE_FLAG_NMI		0x40
#define WAKER_SLOTS		1024

enum { F_PREV_COMM, F_PREV_PID, F_PREV_STATE, F_NEXT_COMM, F_NEXT_PID, NR_SWITCH_F };
enum { F_W_PID, F_W_TARGET_CPU, F_W_FLAGS, NR_WAKEUP_F };

struct sched_tp {
	bool on;			/* opened on every CPU */
	long id[NR_TP];
	struct vperf_tpfield sw[NR_SWITCH_F], wk[NR_TP][NR_WAKEUP_F];	/* wk: wakeup, waking */
	struct { pid_t wakee, waker; } wakers[WAKER_SLOTS];	/* each wakee's last waking */
	char why[512];			/* why not, when !on */
};

struct recorder {
	struct record_opts *o;
	struct perf_event_attr attr[MAX_EVENTS];
	int *fds;
	size_t nr_fds, cap_fds;
	struct ring *rings;
	size_t nr_rings;
	int *cpus;
	size_t nr_cpus;
	struct vperf_perfdec dec;
	bool guest;			/* in a vperf guest: guest_* layers */
	struct sched_tp sched;
	pid_t *tids;			/* the recorded threads so far (sorted): the sched filter */
	size_t nr_tids, cap_tids;
	bool user_only;			/* the kernel refused kernel samples */
	unsigned int pages_note;	/* said that the rings shrank */
	struct vperf_ctf *ctf;
	uint64_t *kips;			/* the kernel addresses samples hit: a hash set (0: empty) */
	size_t nr_kips, cap_kips;
	struct vperf_ordered pend;	/* struct pend, in time order */
	uint64_t last_ts, first_ts;
	size_t page;
	/* figures */
	uint64_t events, samples, samples_by[MAX_EVENTS], forks, execs, exits, switches;
	uint64_t switch_outs, sched_switches, sched_switch_outs, sched_wakeups, sched_other;
	uint64_t lost_ring, lost_samples, throttles, bad_records, bad_bytes, chain_trunc;
	uint64_t mmaps, comms, ksyms;
	char ksyms_why[160];		/* why no kernel symbols, when none */
	char vdso_note[160];		/* the vDSO image kept, or why none */
	char bad_why[160];
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* /sys/devices/system/cpu/online, "0-3,5" */
static int online_cpus(struct recorder *rc)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char *p, *save = NULL;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return cli_error("record", "cannot read /sys/devices/system/cpu/online: %s",
				 strerror(errno ? errno : EIO));
	}
	fclose(f);
	for (p = strtok_r(buf, ",\n", &save); p; p = strtok_r(NULL, ",\n", &save)) {
		char *dash = strchr(p, '-');
		long lo = strtol(p, NULL, 10), hi = dash ? strtol(dash + 1, NULL, 10) : lo;

		for (long c = lo; c <= hi && c < 65536; c++) {
			int *n = realloc(rc->cpus, (rc->nr_cpus + 1) * sizeof(*n));

			if (!n)
				return cli_error("record", "out of memory");
			rc->cpus = n;
			rc->cpus[rc->nr_cpus++] = (int)c;
		}
	}
	if (!rc->nr_cpus)
		return cli_error("record", "no online CPU found");
	return 0;
}

/* The threads of pid now (/proc/pid/task), at most max. */
static int task_list(pid_t pid, pid_t **out, size_t *nr)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *t = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);
		pid_t *g;

		if (tid <= 0)
			continue;
		g = realloc(t, (n + 1) * sizeof(*t));
		if (!g) {
			closedir(d);
			free(t);
			return -ENOMEM;
		}
		t = g;
		t[n++] = (pid_t)tid;
	}
	closedir(d);
	*out = t;
	*nr = n;
	return n ? 0 : -ESRCH;
}

static int add_fd(struct recorder *rc, int fd)
{
	if (rc->nr_fds == rc->cap_fds) {
		size_t cap = rc->cap_fds ? 2 * rc->cap_fds : 32;
		int *n = realloc(rc->fds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rc->fds = n;
		rc->cap_fds = cap;
	}
	rc->fds[rc->nr_fds++] = fd;
	return 0;
}

/* ---- the recorded threads, for the sched filter ---- */

static bool tid_find(const struct recorder *rc, pid_t tid, size_t *at)
{
	size_t lo = 0, hi = rc->nr_tids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rc->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < rc->nr_tids && rc->tids[lo] == tid;
}

static bool tid_recorded(const struct recorder *rc, pid_t tid)
{
	size_t at;

	return tid > 0 && tid_find(rc, tid, &at);
}

static int tid_add(struct recorder *rc, pid_t tid)
{
	size_t at;

	if (tid_find(rc, tid, &at))
		return 0;
	if (rc->nr_tids == rc->cap_tids) {
		size_t cap = rc->cap_tids ? 2 * rc->cap_tids : 64;
		pid_t *n = realloc(rc->tids, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rc->tids = n;
		rc->cap_tids = cap;
	}
	memmove(&rc->tids[at + 1], &rc->tids[at], (rc->nr_tids - at) * sizeof(*rc->tids));
	rc->tids[at] = tid;
	rc->nr_tids++;
	return 0;
}

/* ---- the sched tracepoints ---- */

static char *slurp_small(const char *path, size_t *len)
{
	char *buf = malloc(65536);
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	n = read(fd, buf, 65535);
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

/* Find the tracepoints' ids and layouts in tracefs; false with sched.why when they cannot be. */
static bool sched_formats(struct recorder *rc)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct sched_tp *st = &rc->sched;
	static const char *const swn[NR_SWITCH_F] = { "prev_comm", "prev_pid", "prev_state",
						      "next_comm", "next_pid" };
	static const char *const wkn[NR_WAKEUP_F] = { "pid", "target_cpu", "common_flags" };
	char path[256], why[160];
	const char *root = NULL;

	for (int i = 0; i < NR_SWITCH_F; i++)
		st->sw[i].name = swn[i];
	for (int t = TP_WAKEUP; t < NR_TP; t++)
		for (int i = 0; i < NR_WAKEUP_F; i++)
			st->wk[t][i].name = wkn[i];
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && !root; i++) {
		snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", roots[i]);
		if (!access(path, R_OK))
			root = roots[i];
	}
	if (!root) {
		snprintf(st->why, sizeof(st->why), "no readable tracefs (/sys/kernel/tracing: not "
			 "mounted, or not root)");
		return false;
	}
	for (int t = 0; t < NR_TP; t++) {
		size_t len;
		char *text;
		int err;

		snprintf(path, sizeof(path), "%s/events/sched/%s/format", root, tp_names[t]);
		text = slurp_small(path, &len);
		if (!text) {
			snprintf(st->why, sizeof(st->why), "cannot read %s: %s", path, strerror(errno));
			return false;
		}
		err = vperf_tpfmt_parse(text, len, &st->id[t], t == TP_SWITCH ? st->sw : st->wk[t],
					t == TP_SWITCH ? NR_SWITCH_F : NR_WAKEUP_F, why, sizeof(why));
		free(text);
		if (err) {
			snprintf(st->why, sizeof(st->why), "%s: %s", path, why);
			return false;
		}
	}
	return true;
}

/*
 * sched_switch and sched_wakeup on every CPU (pid -1: all tasks; the recorder keeps those of its
 * threads), into each CPU's ring.  Not an error when the kernel refuses them: the recording
 * goes on without, and says why.
 */
static void open_sched(struct recorder *rc)
{
	struct sched_tp *st = &rc->sched;
	size_t first = rc->nr_fds;

	if (!sched_formats(rc))
		return;
	for (size_t c = 0; c < rc->nr_rings; c++) {
		for (int t = 0; t < NR_TP; t++) {
			struct perf_event_attr a = {
				.size = sizeof(a), .type = PERF_TYPE_TRACEPOINT,
				.config = (uint64_t)st->id[t], .sample_period = 1,
				.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
					       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
				.sample_id_all = 1, .use_clockid = 1, .clockid = CLOCK_MONOTONIC,
				.disabled = 1,
			};
			uint64_t id;
			int fd = perf_open(&a, -1, rc->rings[c].cpu), err = 0;

			if (fd < 0) {
				snprintf(st->why, sizeof(st->why), "the kernel refused the system-wide "
					 "sched tracepoints (%s%s)", strerror(-fd),
					 fd == -EACCES || fd == -EPERM ? ": they need root or "
					 "CAP_PERFMON, or kernel.perf_event_paranoid -1" : "");
				goto undo;
			}
			if (add_fd(rc, fd)) {
				close(fd);
				snprintf(st->why, sizeof(st->why), "out of memory");
				goto undo;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rc->rings[c].fd) ||
			    ioctl(fd, PERF_EVENT_IOC_ID, &id))
				err = -errno;
			if (!err)
				err = vperf_perfdec__add(&rc->dec, id, a.sample_type,
							 (unsigned int)TP_INDEX(t));
			if (err) {
				snprintf(st->why, sizeof(st->why), "setting up the sched tracepoints: %s",
					 strerror(-err));
				goto undo;
			}
		}
	}
	st->on = true;
	return;
undo:
	while (rc->nr_fds > first)
		close(rc->fds[--rc->nr_fds]);
}

/* The system-wide ones do not follow enable_on_exec: enabled right before the command starts. */
static void enable_sched(struct recorder *rc)
{
	size_t first = rc->nr_fds - (rc->sched.on ? rc->nr_rings * NR_TP : 0);

	for (size_t i = first; i < rc->nr_fds; i++)
		ioctl(rc->fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

static void setup_attr(struct recorder *rc, int e)
{
	struct perf_event_attr *a = &rc->attr[e];

	a->disabled = 1;
	a->inherit = 1;
	a->enable_on_exec = rc->o->argv ? 1 : 0;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	if (rc->o->callchain) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->sample_max_stack = MAX_STACK;
	}
	if (rc->o->period) {
		a->sample_period = rc->o->period;
	} else {
		a->freq = 1;
		a->sample_freq = rc->o->freq;
	}
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(rc->o->pages * rc->page / 4);
	a->exclude_hv = 1;
	if (rc->user_only)
		a->exclude_kernel = 1;
	if (e == 0) {
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->context_switch = 1;
		a->mmap = 1;		/* executable mappings: what user samples resolve in */
		a->mmap2 = 1;
	}
}


static void close_all(struct recorder *rc)
{
	for (size_t i = 0; i < rc->nr_rings; i++) {
		if (rc->rings[i].base)
			munmap(rc->rings[i].base, rc->rings[i].len);
		free(rc->rings[i].r.bounce);
	}
	free(rc->rings);
	rc->rings = NULL;
	rc->nr_rings = 0;
	for (size_t i = 0; i < rc->nr_fds; i++)
		close(rc->fds[i]);
	free(rc->fds);
	rc->fds = NULL;
	rc->nr_fds = rc->cap_fds = 0;
	vperf_perfdec__exit(&rc->dec);
}

/*
 * Open every event for every thread of tids on every CPU; the first event of each CPU owns the
 * CPU's ring.  -errno of the first open that failed (with *failed_event set), or 0.
 */
static int open_all(struct recorder *rc, const pid_t *tids, size_t nr_tids, int *failed_event,
		    pid_t *failed_tid)
{
	int err;

	rc->rings = calloc(rc->nr_cpus, sizeof(*rc->rings));
	if (!rc->rings)
		return -ENOMEM;
	rc->nr_rings = rc->nr_cpus;
	for (size_t c = 0; c < rc->nr_cpus; c++) {
		struct ring *r = &rc->rings[c];

		r->cpu = rc->cpus[c];
		r->fd = -1;
		for (int e = 0; e < rc->o->nr_events; e++) {
			for (size_t t = 0; t < nr_tids; t++) {
				uint64_t id;
				int fd = perf_open(&rc->attr[e], tids[t], r->cpu);

				if (fd == -ESRCH && nr_tids > 1)
					continue;	/* -p: a thread that ended since the listing */
				if (fd < 0) {
					*failed_event = e;
					*failed_tid = tids[t];
					return fd;
				}
				err = add_fd(rc, fd);
				if (err) {
					close(fd);
					return err;
				}
				if (r->fd < 0) {
					r->len = (1 + (size_t)rc->o->pages) * rc->page;
					r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED,
						       fd, 0);
					if (r->base == MAP_FAILED) {
						r->base = NULL;
						*failed_event = -1;
						return -errno;
					}
					r->fd = fd;
					r->r.data = (const uint8_t *)r->base + rc->page;
					r->r.size = (uint64_t)rc->o->pages * rc->page;
					r->r.bounce_len = 65536;
					r->r.bounce = malloc(r->r.bounce_len);
					if (!r->r.bounce)
						return -ENOMEM;
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd)) {
					*failed_event = -1;
					return -errno;
				}
				if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
					*failed_event = -1;
					return -errno;
				}
				err = vperf_perfdec__add(&rc->dec, id, rc->attr[e].sample_type,
							 (unsigned int)e);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static bool no_pmu_error(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

/*
 * Encode and open the events; perf's fallbacks, each said once: no PMU for the default cycles
 * (cpu-clock instead), a paranoid kernel (user space only).
 */
static int open_events(struct recorder *rc, const pid_t *tids, size_t nr_tids)
{
	char why[1024];
	int err, fe;
	pid_t ft;

	for (;;) {
		for (int e = 0; e < rc->o->nr_events; e++) {
			memset(&rc->attr[e], 0, sizeof(rc->attr[e]));
			err = vperf_event__perf_attr(rc->o->events[e], &rc->attr[e],
						     sizeof(rc->attr[e]), why, sizeof(why));
			if (err)
				return cli_error("record", "-e %s: %s", rc->o->events[e], why);
			if (rc->attr[e].exclude_kernel && !rc->attr[e].exclude_user &&
			    rc->o->nr_events == 1)
				rc->user_only = true;
			setup_attr(rc, e);
		}
		fe = -1;
		ft = 0;
		err = open_all(rc, tids, nr_tids, &fe, &ft);
		if (!err)
			return 0;
		close_all(rc);
		if (fe == 0 && rc->o->default_event && no_pmu_error(err)) {
			rc->o->events[0] = "cpu-clock";
			rc->o->default_event = false;
			if (!rc->o->quiet)
				fprintf(stderr, "[ vperf record: no hardware PMU here (cycles cannot be "
					"sampled): sampling cpu-clock ]\n");
			continue;
		}
		if (fe >= 0 && (err == -EACCES || err == -EPERM) && !rc->user_only) {
			rc->user_only = true;
			if (!rc->o->quiet)
				fprintf(stderr, "[ vperf record: kernel samples are not allowed here "
					"(kernel.perf_event_paranoid; CAP_PERFMON): recording user "
					"space only ]\n");
			continue;
		}
		if (fe >= 0) {
			vperf_event__open_strerror(err, rc->o->events[fe], &rc->attr[fe], ft, why,
						   sizeof(why));
			return cli_error("record", "%s", why);
		}
		if (err == -EPERM && rc->o->pages > 1) {
			/* over kernel.perf_event_mlock_kb (users without CAP_IPC_LOCK): smaller rings */
			rc->o->pages /= 2;
			if (!rc->o->quiet && !rc->pages_note++)
				fprintf(stderr, "[ vperf record: the rings do not fit in "
					"kernel.perf_event_mlock_kb: trying fewer pages per CPU ]\n");
			continue;
		}
		return cli_error("record", "setting up the ring buffers: %s%s", strerror(-err),
				 err == -EPERM || err == -ENOMEM ?
				 " (kernel.perf_event_mlock_kb limits the locked memory of the "
				 "rings: fewer pages with -m)" : "");
	}
}

static void enable_all(struct recorder *rc, bool on)
{
	for (size_t i = 0; i < rc->nr_fds; i++)
		ioctl(rc->fds[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

/* ---- records into pending events ------------------------------------ */

static struct pend *pend_new(struct recorder *rc)
{
	return vperf_ordered__queue(&rc->pend, 0);
}

static uint8_t kernel_layer(const struct recorder *rc)
{
	return rc->guest ? VPERF_CTF_GUEST_KERNEL : VPERF_CTF_HOST_KERNEL;
}

static uint8_t user_layer(const struct recorder *rc)
{
	return rc->guest ? VPERF_CTF_GUEST_USER : VPERF_CTF_HOST_USER;
}

/* A sched tracepoint's record; one whose raw data does not fit its format is counted bad. */
static int take_sched(struct recorder *rc, const struct vperf_perfrec *r)
{
	const struct sched_tp *st = &rc->sched;
	const uint8_t *raw = r->sample.raw;
	uint32_t rs = r->sample.raw_size;
	uint64_t prev, next, state, wpid, tcpu, flags;
	struct pend *p;
	bool ok;

	if (r->index == TP_INDEX(TP_SWITCH)) {
		ok = vperf_tp_u64(raw, rs, &st->sw[F_PREV_PID], &prev) &&
		     vperf_tp_u64(raw, rs, &st->sw[F_NEXT_PID], &next) &&
		     vperf_tp_u64(raw, rs, &st->sw[F_PREV_STATE], &state);
		if (ok && (p = pend_new(rc))) {
			p->kind = P_SCHED_SWITCH;
			p->a = (uint32_t)prev;
			p->b = (uint32_t)next;
			p->state = (int64_t)state;
			vperf_tp_str(raw, rs, &st->sw[F_PREV_COMM], p->comm, sizeof(p->comm));
			vperf_tp_str(raw, rs, &st->sw[F_NEXT_COMM], p->comm2, sizeof(p->comm2));
		}
	} else {
		int t = (int)(r->index - MAX_EVENTS);

		ok = vperf_tp_u64(raw, rs, &st->wk[t][F_W_PID], &wpid) &&
		     vperf_tp_u64(raw, rs, &st->wk[t][F_W_TARGET_CPU], &tcpu) &&
		     vperf_tp_u64(raw, rs, &st->wk[t][F_W_FLAGS], &flags);
		if (ok && (p = pend_new(rc))) {
			p->kind = t == TP_WAKING ? P_SCHED_WAKING : P_SCHED_WAKEUP;
			p->a = (uint32_t)wpid;
			p->b = (uint32_t)tcpu;
			/* the thread the tracepoint ran in, unless that was an interrupt */
			p->c = flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ | TRACE_FLAG_NMI) ? 0 :
			       r->tid;
		}
	}
	if (!ok) {
		if (!rc->bad_records++)
			snprintf(rc->bad_why, sizeof(rc->bad_why), "a %s record shorter than its format",
				 tp_names[r->index - MAX_EVENTS]);
		return 0;
	}
	if (!p)
		return -ENOMEM;
	p->layer = kernel_layer(rc);
	p->h.ts = r->time;
	p->cpu = r->cpu;
	return 0;
}

static int take(struct recorder *rc, const struct ring *ring, const struct vperf_perfrec *r)
{
	struct pend *p;

	switch (r->kind) {
	case VPERF_PERFREC_SAMPLE: {
		uint32_t n = 0;

		if (r->index >= MAX_EVENTS)
			return take_sched(rc, r);
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_SAMPLE;
		p->layer = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER ?
			   user_layer(rc) : kernel_layer(rc);
		p->a = r->pid;
		p->b = r->tid;
		p->c = r->index;
		p->ip = r->sample.ip;
		p->period = r->sample.period;
		if (r->sample.nr_chain) {
			p->chain = malloc(r->sample.nr_chain * sizeof(uint64_t));
			if (!p->chain) {
				vperf_ordered__unqueue(&rc->pend);
				return -ENOMEM;
			}
			for (uint32_t i = 0; i < r->sample.nr_chain; i++) {
				uint64_t v;

				memcpy(&v, &r->sample.chain[i], sizeof(v));
				if (v >= (uint64_t)PERF_CONTEXT_MAX)
					continue;	/* PERF_CONTEXT_KERNEL, _USER... */
				p->chain[n++] = v;
			}
		}
		p->nr_chain = n;
		if (rc->o->callchain && r->sample.nr_chain >= MAX_STACK)
			rc->chain_trunc++;
		break;
	}
	case VPERF_PERFREC_COMM:
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = r->comm.exec ? P_EXEC : P_COMM;	/* else a rename (prctl) */
		p->layer = kernel_layer(rc);
		p->a = r->comm.pid;
		p->b = r->comm.tid;
		memcpy(p->comm, r->comm.comm, sizeof(p->comm));
		break;
	case VPERF_PERFREC_FORK:
	case VPERF_PERFREC_EXIT:
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = r->kind == VPERF_PERFREC_FORK ? P_FORK : P_EXIT;
		p->layer = kernel_layer(rc);
		p->a = r->task.ppid;
		p->b = r->task.ptid;
		p->c = r->task.pid;
		p->d = r->task.tid;
		break;
	case VPERF_PERFREC_LOST:
	case VPERF_PERFREC_LOST_SAMPLES:
		if (r->kind == VPERF_PERFREC_LOST)
			rc->lost_ring += r->lost.count;
		else
			rc->lost_samples += r->lost.count;
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_LOST;
		p->layer = kernel_layer(rc);
		p->period = r->lost.count;
		break;
	case VPERF_PERFREC_SWITCH:
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_SWITCH;
		p->layer = kernel_layer(rc);
		p->a = r->pid;
		p->b = r->tid;
		p->c = r->switch_.out;
		p->d = r->switch_.out && r->switch_.preempt;
		break;
	case VPERF_PERFREC_MMAP:
		if (r->mmap.prot && !(r->mmap.prot & PROT_EXEC))
			return 0;	/* data (attr.mmap_data is off: none expected) */
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->name = strdup(r->mmap.filename);
		if (!p->name) {
			vperf_ordered__unqueue(&rc->pend);
			return -ENOMEM;
		}
		p->kind = P_MMAP;
		p->layer = kernel_layer(rc);
		p->a = r->mmap.pid;
		p->b = r->mmap.tid;
		p->c = r->mmap.prot;
		p->start = r->mmap.addr;
		p->len = r->mmap.len;
		p->pgoff = r->mmap.pgoff;
		break;
	case VPERF_PERFREC_THROTTLE:
		rc->throttles++;
		return 0;
	default:
		return 0;
	}
	p->h.ts = r->time;
	/* Records without a time (none here: sample_id_all) would sort first. */
	p->cpu = r->has_id ? r->cpu : (uint32_t)ring->cpu;
	return 0;
}

/* Read what each ring holds now into the pending events. */
static int drain(struct recorder *rc)
{
	for (size_t i = 0; i < rc->nr_rings; i++) {
		struct ring *ring = &rc->rings[i];
		struct perf_event_mmap_page *pg = ring->base;
		const void *rec;
		size_t len;
		int ret;

		if (!pg)
			continue;
		ring->r.head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		ring->r.tail = pg->data_tail;
		while ((ret = vperf_perf_ring__next(&ring->r, &rec, &len)) > 0) {
			struct vperf_perfrec r;
			char why[160];

			if (vperf_perfdec__parse(&rc->dec, rec, len, &r, why, sizeof(why))) {
				if (!rc->bad_records++)
					snprintf(rc->bad_why, sizeof(rc->bad_why), "%s", why);
				continue;
			}
			ret = take(rc, ring, &r);
			if (ret)
				return ret;
		}
		if (ret < 0) {
			rc->bad_bytes += ring->r.head - ring->r.tail;
			if (!rc->bad_records++)
				snprintf(rc->bad_why, sizeof(rc->bad_why), "a record header that "
					 "cannot be, in CPU %d's ring", ring->cpu);
			ring->r.tail = ring->r.head;
		}
		__atomic_store_n(&pg->data_tail, ring->r.tail, __ATOMIC_RELEASE);
	}
	return 0;
}

#define KERNEL_START	0xffff800000000000ull	/* x86-64: kernel addresses from here */

/* Remember a kernel address a sample hit (open addressing; 0 is never a kernel address). */
static int kip_add(struct recorder *rc, uint64_t ip)
{
	size_t i;

	if (ip < KERNEL_START)
		return 0;
	if (2 * (rc->nr_kips + 1) > rc->cap_kips) {
		size_t cap = rc->cap_kips ? 2 * rc->cap_kips : 1024;
		uint64_t *n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t j = 0; j < rc->cap_kips; j++) {
			if (!rc->kips[j])
				continue;
			for (i = (rc->kips[j] * 0x9e3779b97f4a7c15ull) & (cap - 1); n[i];
			     i = (i + 1) & (cap - 1))
				;
			n[i] = rc->kips[j];
		}
		free(rc->kips);
		rc->kips = n;
		rc->cap_kips = cap;
	}
	for (i = (ip * 0x9e3779b97f4a7c15ull) & (rc->cap_kips - 1); rc->kips[i];
	     i = (i + 1) & (rc->cap_kips - 1))
		if (rc->kips[i] == ip)
			return 0;
	rc->kips[i] = ip;
	rc->nr_kips++;
	return 0;
}

/* A string field: the bytes as they are if they are UTF-8, else with '?' for bytes over 0x7f. */
/* A string the writer refused as not UTF-8 (perf's comm, a file name): its bytes from 0x80 '?'. */
static bool ascii(char *str)
{
	bool changed = false;

	for (char *c = str; *c; c++)
		if ((unsigned char)*c > 0x7f) {
			*c = '?';
			changed = true;
		}
	return changed;
}

/* EMIT(class, ...): the event of p, again with its strings in ASCII if they were refused. */
#define EMIT(cls, ...) ({								\
	int e_ = vperf_ev__##cls(s, p->h.ts, &(struct vperf_ev_##cls){ __VA_ARGS__ });	\
	if (e_ == -EILSEQ && (ascii(p->comm) | ascii(p->comm2) | (p->name && ascii(p->name)))) \
		e_ = vperf_ev__##cls(s, p->h.ts, &(struct vperf_ev_##cls){ __VA_ARGS__ });	\
	e_;										\
})

static int emit_one(struct recorder *rc, struct pend *p)
{
	struct vperf_ctf_stream *s;
	int err = vperf_ctf__stream(rc->ctf, p->layer, p->cpu, &s);

	if (err)
		return err;
	switch (p->kind) {
	case P_SAMPLE:
		rc->samples++;
		rc->samples_by[p->c]++;
		err = kip_add(rc, p->ip);
		for (uint32_t i = 0; i < p->nr_chain && !err; i++)
			err = kip_add(rc, p->chain[i]);
		if (err)
			return err;
		err = EMIT(sample, .ip = p->ip, .user = p->layer == user_layer(rc), .pid = p->a,
			   .tid = p->b, .counts = &p->period, .nr_counts = 1,
			   .counts_are = VPERF_COUNTS_ARE_PERIOD, .callchain = p->chain,
			   .nr_callchain = p->chain ? p->nr_chain : 0, .sample_event = p->c);
		break;
	case P_MMAP:
		err = EMIT(mmap, .pid = p->a, .tid = p->b, .start = p->start, .len = p->len,
			   .pgoff = p->pgoff, .prot = p->c, .filename = p->name);
		rc->mmaps += !err;
		break;
	case P_COMM:
		err = EMIT(comm, .pid = p->a, .tid = p->b, .comm = p->comm);
		rc->comms += !err;
		break;
	case P_SCHED_SWITCH:
		if (!tid_recorded(rc, (pid_t)p->a) && !tid_recorded(rc, (pid_t)p->b)) {
			rc->sched_other++;
			return 0;
		}
		rc->sched_switches++;
		rc->sched_switch_outs += tid_recorded(rc, (pid_t)p->a);
		err = EMIT(sched_switch, .prev_tid = p->a, .prev_comm = p->comm,
			   .prev_state = (uint64_t)p->state, .next_tid = p->b,
			   .next_comm = p->comm2);
		break;
	case P_SCHED_WAKING: {
		unsigned int slot = p->a % WAKER_SLOTS;

		rc->sched.wakers[slot].wakee = (pid_t)p->a;
		rc->sched.wakers[slot].waker = (pid_t)p->c;
		return 0;	/* not written: its waker goes into the wakeup */
	}
	case P_SCHED_WAKEUP: {
		unsigned int slot = p->a % WAKER_SLOTS;

		if (!tid_recorded(rc, (pid_t)p->a)) {
			rc->sched_other++;
			return 0;
		}
		if (rc->sched.wakers[slot].wakee == (pid_t)p->a) {
			p->c = (uint32_t)rc->sched.wakers[slot].waker;
			rc->sched.wakers[slot].wakee = 0;
		}
		rc->sched_wakeups++;
		err = EMIT(sched_wakeup, .tid = p->a, .target_cpu = p->b, .waker_tid = p->c);
		break;
	}
	case P_FORK:
		err = tid_add(rc, (pid_t)p->d);
		if (err)
			return err;
		rc->forks++;
		err = EMIT(process_fork, .parent_pid = p->a, .parent_tid = p->b, .child_pid = p->c,
			   .child_tid = p->d);
		break;
	case P_EXEC:
		/* perf's exec record names the new comm, not the file */
		rc->execs++;
		err = EMIT(process_exec, .pid = p->a, .tid = p->b, .comm = p->comm);
		break;
	case P_EXIT:
		rc->exits++;
		err = EMIT(process_exit, .pid = p->c, .tid = p->d, .exit_code = EXIT_CODE_UNKNOWN);
		break;
	case P_SWITCH:
		rc->switches++;
		rc->switch_outs += p->c;
		err = EMIT(thread_switch, .pid = p->a, .tid = p->b, .direction = (uint8_t)p->c,
			   .preempted = (uint8_t)p->d);
		break;
	case P_LOST:
		return vperf_ctf__lost(s, p->h.ts, p->period);
	default:
		return -EINVAL;
	}
	rc->events += !err;
	return err;
}
#undef EMIT

static void pend_free(void *ev)
{
	struct pend *p = ev;

	free(p->chain);
	free(p->name);
}

static int emit_pend(void *arg, void *ev)
{
	struct recorder *rc = arg;
	struct pend *p = ev;
	int err;

	if (!rc->first_ts)
		rc->first_ts = p->h.ts;
	rc->last_ts = p->h.ts;
	err = emit_one(rc, p);
	pend_free(p);
	return err;
}

/* Write the pending events up to watermark, in time order. */
static int emit(struct recorder *rc, uint64_t watermark)
{
	return vperf_ordered__flush(&rc->pend, watermark, emit_pend, rc);
}

/* ---- what samples resolve against, beyond the rings ---- */

/*
 * -p: the process was running before the events were opened, so its mappings and its threads'
 * names come from /proc, as mmap and comm events at the start (ts).  A process gone meanwhile
 * leaves fewer; not an error.
 */
static int synth_process(struct recorder *rc, const pid_t *tids, size_t nr_tids, uint64_t ts)
{
	char path[96], line[4096 + 128];
	pid_t pid = rc->o->pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], *name = NULL;
		int pos = 0;
		struct pend *p;

		/* "start-end perms offset dev inode   path" */
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
			   &pos) < 4 || perms[2] != 'x' || !pos)
			continue;
		name = line + pos;
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			continue;	/* anonymous executable memory (a JIT): no file */
		p = pend_new(rc);
		if (!p || !(p->name = strdup(name))) {
			if (p)
				vperf_ordered__unqueue(&rc->pend);
			fclose(f);
			return -ENOMEM;
		}
		p->kind = P_MMAP;
		p->layer = kernel_layer(rc);
		p->h.ts = ts;
		p->cpu = (uint32_t)rc->cpus[0];
		p->a = p->b = (uint32_t)pid;
		p->c = PROT_EXEC | (perms[0] == 'r' ? PROT_READ : 0) |
		       (perms[1] == 'w' ? PROT_WRITE : 0);
		p->start = start;
		p->len = end - start;
		p->pgoff = off;
	}
	if (f)
		fclose(f);
	for (size_t i = 0; i < nr_tids; i++) {
		struct pend *p;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tids[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(line, 1, VPERF_PERFDEC_COMM_LEN, f);
		fclose(f);
		line[n] = 0;
		line[strcspn(line, "\n")] = 0;
		p = pend_new(rc);
		if (!p)
			return -ENOMEM;
		p->kind = P_COMM;
		p->layer = kernel_layer(rc);
		p->h.ts = ts;
		p->cpu = (uint32_t)rc->cpus[0];
		p->a = (uint32_t)pid;
		p->b = (uint32_t)tids[i];
		memcpy(p->comm, line, n + 1);
	}
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The kernel symbols the samples hit (ip or callchain), from /proc/kallsyms at the end, as
 * kernel_symbol events: start, size (to the next symbol), name, module ("" for the kernel).
 * Only those: all of kallsyms is megabytes.  None, with ksyms_why, when there is nothing to
 * resolve or kallsyms shows no addresses (kernel.kptr_restrict, not root).
 */
static int emit_kernel_symbols(struct recorder *rc)
{
	struct vperf_ctf_stream *s;
	struct vperf_ksyms k;
	const struct vperf_ksym *last = NULL;
	uint64_t *ips = NULL;
	size_t n = 0;
	int err;

	if (!rc->nr_kips) {
		snprintf(rc->ksyms_why, sizeof(rc->ksyms_why), "no sample hit the kernel");
		return 0;
	}
	err = vperf_ksyms__read(&k, "/proc/kallsyms", VPERF_KSYMS_TEXT_ONLY);
	if (err) {
		vperf_ksyms__exit(&k);
		if (err == -ENOMEM)
			return err;
		snprintf(rc->ksyms_why, sizeof(rc->ksyms_why), "cannot read /proc/kallsyms: %s",
			 strerror(-err));
		return 0;
	}
	if (!k.nr || !k.sym[k.nr - 1].addr) {
		snprintf(rc->ksyms_why, sizeof(rc->ksyms_why), "/proc/kallsyms shows no addresses "
			 "here (kernel.kptr_restrict, or not root)");
		goto out;
	}
	ips = malloc(rc->nr_kips * sizeof(*ips));
	err = ips ? vperf_ctf__stream(rc->ctf, kernel_layer(rc), (uint32_t)rc->cpus[0], &s) :
	      -ENOMEM;
	if (err)
		goto out;
	for (size_t i = 0; i < rc->cap_kips; i++)
		if (rc->kips[i])
			ips[n++] = rc->kips[i];
	qsort(ips, n, sizeof(*ips), u64_cmp);
	for (size_t i = 0; i < n && !err; i++) {
		const struct vperf_ksym *y = vperf_ksyms__find(&k, ips[i]);

		if (!y || y == last)
			continue;	/* no symbol holds it, or the symbol is written already */
		last = y;
		err = vperf_ev__kernel_symbol(s, rc->last_ts, &(struct vperf_ev_kernel_symbol){
			.addr = y->addr, .size = vperf_ksyms__size(&k, y), .name = y->name,
			.module = y->module });
		rc->ksyms += !err;
		rc->events += !err;
	}
out:
	free(ips);
	vperf_ksyms__exit(&k);
	return err;
}

/* The vDSO's image into DIR/.vdso.so, so that a report can name [vdso] frames anywhere. */
static void keep_vdso(struct recorder *rc, const char *dir)
{
	char path[PATH_MAX];
	int64_t n = -ENAMETOOLONG;

	if (snprintf(path, sizeof(path), "%s/" VPERF_VDSO_FILE, dir) < (int)sizeof(path))
		n = vperf_vdso__save(path);
	if (n >= 0)
		snprintf(rc->vdso_note, sizeof(rc->vdso_note), "%s (%" PRId64 " bytes, the recorder's "
			 "own: this kernel's 64-bit vDSO)", VPERF_VDSO_FILE, n);
	else
		snprintf(rc->vdso_note, sizeof(rc->vdso_note), "none: %s", n == -ENOENT ?
			 "this process has no vDSO mapped" : strerror((int)-n));
}

static void progress(struct recorder *rc, const char *dir, uint64_t t0)
{
	fprintf(stderr, "[ vperf record: %.1f s, %" PRIu64 " events, %.1f MB, lost %" PRIu64 " ]\n",
		(double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9, rc->events,
		(double)recdir_bytes(dir) / 1e6, rc->lost_ring + rc->lost_samples);
}

struct envbuf {
	struct vperf_ctf_env e[32];
	char v[32][512];
	size_t n;
};

static void env_add(struct envbuf *b, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void env_add(struct envbuf *b, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (b->n == sizeof(b->e) / sizeof(b->e[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(b->v[b->n], sizeof(b->v[b->n]), fmt, ap);
	va_end(ap);
	/* metadata text: printable ASCII without quotes or backslashes */
	for (char *c = b->v[b->n]; *c; c++)
		if (*c < 0x20 || *c > 0x7e || *c == '"' || *c == '\\')
			*c = '?';
	b->e[b->n] = (struct vperf_ctf_env){ key, b->v[b->n], false };
	b->n++;
}

static void command_line(char *buf, size_t len, char **argv)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; argv[i] && off + 1 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

static int write_summary(struct recorder *rc, int status, bool have_status)
{
	struct envbuf b = { .n = 0 };
	char by[512] = "";
	size_t off = 0;
	int err = 0;

	for (int e = 0; e < rc->o->nr_events && off < sizeof(by); e++)
		off += (size_t)snprintf(by + off, sizeof(by) - off, "%s%s=%" PRIu64, e ? "," : "",
					rc->o->events[e], rc->samples_by[e]);
	env_add(&b, "summary_duration_ns", "%" PRIu64, rc->last_ts - rc->first_ts);
	env_add(&b, "summary_events", "%" PRIu64, rc->events);
	env_add(&b, "summary_samples", "%" PRIu64, rc->samples);
	env_add(&b, "summary_samples_by_event", "%s", by);
	env_add(&b, "summary_forks", "%" PRIu64, rc->forks);
	env_add(&b, "summary_execs", "%" PRIu64, rc->execs);
	env_add(&b, "summary_exits", "%" PRIu64, rc->exits);
	env_add(&b, "summary_switches", "%" PRIu64, rc->switches);
	env_add(&b, "summary_switch_outs", "%" PRIu64, rc->switch_outs);
	env_add(&b, "summary_sched_switches", "%" PRIu64, rc->sched_switches);
	env_add(&b, "summary_sched_switch_outs", "%" PRIu64, rc->sched_switch_outs);
	env_add(&b, "summary_sched_wakeups", "%" PRIu64, rc->sched_wakeups);
	env_add(&b, "summary_sched_other", "%" PRIu64, rc->sched_other);
	env_add(&b, "summary_lost_ring", "%" PRIu64, rc->lost_ring);
	env_add(&b, "summary_lost_samples", "%" PRIu64, rc->lost_samples);
	env_add(&b, "summary_throttles", "%" PRIu64, rc->throttles);
	env_add(&b, "summary_late", "%" PRIu64, rc->pend.late);
	env_add(&b, "summary_bad_records", "%" PRIu64, rc->bad_records);
	env_add(&b, "summary_bad_bytes", "%" PRIu64, rc->bad_bytes);
	env_add(&b, "summary_callchains_truncated", "%" PRIu64, rc->chain_trunc);
	env_add(&b, "summary_mmaps", "%" PRIu64, rc->mmaps);
	env_add(&b, "summary_comms", "%" PRIu64, rc->comms);
	if (rc->ksyms)
		env_add(&b, "kernel_symbols", "%" PRIu64 " (those samples hit, from /proc/kallsyms "
			"at the end)", rc->ksyms);
	else
		env_add(&b, "kernel_symbols", "none: %s", rc->ksyms_why);
	env_add(&b, "vdso", "%s", rc->vdso_note);
	if (have_status)
		env_add(&b, "workload_status", "%d", status);
	for (size_t i = 0; i < b.n && !err; i++)
		err = vperf_ctf__add_env(rc->ctf, b.e[i].key, b.e[i].value);
	return err;
}

static int make_writer(struct recorder *rc, const char *dir, struct vperf_schema *sch)
{
	struct envbuf b = { .n = 0 };
	char line[1024], evs[1024] = "";
	size_t off = 0;
	uint64_t mono = now_ns(CLOCK_MONOTONIC), real = now_ns(CLOCK_REALTIME);
	int64_t offs = (int64_t)(real - mono);
	char why[512];

	vperf_schema__init(sch, rc->o->events, (size_t)rc->o->nr_events);
	env_add(&b, "schema_version", "%d", VPERF_SCHEMA_VERSION);
	b.e[b.n - 1].integer = true;
	for (int e = 0; e < rc->o->nr_events && off < sizeof(evs); e++)
		off += (size_t)snprintf(evs + off, sizeof(evs) - off, "%s%s", e ? "," : "",
					rc->o->events[e]);
	env_add(&b, "recorder", "vperf record");
	env_add(&b, "machine", "%s", rc->guest ? "guest" : "host");
	if (rc->o->argv) {
		command_line(line, sizeof(line), rc->o->argv);
		env_add(&b, "target", "command: %s", line);
	} else {
		env_add(&b, "target", "pid %d", (int)rc->o->pid);
	}
	env_add(&b, "events", "%s", evs);
	if (rc->o->period)
		env_add(&b, "sample_period", "%" PRIu64, rc->o->period);
	else
		env_add(&b, "sample_freq", "%" PRIu64, rc->o->freq);
	env_add(&b, "callchains", "%d", rc->o->callchain ? 1 : 0);
	env_add(&b, "kernel_samples", "%s", rc->user_only ? "no: not allowed here or excluded "
		"by the event's modifier" : "yes");
	env_add(&b, "nr_cpus", "%zu", rc->nr_cpus);
	env_add(&b, "ring_pages", "%u", rc->o->pages);
	if (rc->sched.on)
		env_add(&b, "sched_events", "thread_switch (perf context_switch records), and "
			"sched_switch and sched_wakeup of the recorded threads (the system-wide sched "
			"tracepoints, filtered by the recorder)");
	else
		env_add(&b, "sched_events", "thread_switch (perf context_switch records) only; "
			"sched_switch and sched_wakeup not recorded: %s", rc->sched.why);
	{
		struct vperf_ctf_config cfg = {
			.size = sizeof(cfg),
			.clock_name = "monotonic",
			.clock_description = "CLOCK_MONOTONIC of the recording machine, in ns",
			.clock_offset_s = offs / 1000000000,
			.clock_offset = offs % 1000000000,
			.layers = (1u << kernel_layer(rc)) | (1u << user_layer(rc)),
			.clock_note = "perf_event time stamps taken on CLOCK_MONOTONIC (use_clockid); "
				      "the clock offset is CLOCK_REALTIME - CLOCK_MONOTONIC at the start",
			.env = b.e,
			.nr_env = b.n,
			.classes = sch->classes,
			.nr_classes = VPERF_EV_NR,
		};
		int err = vperf_ctf__new(dir, &cfg, &rc->ctf, why, sizeof(why));

		if (err) {
			rmdir(dir);
			return cli_error("record", "cannot create the recording %s: %s", dir, why);
		}
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct recorder rc;
	struct vperf_schema schema;
	struct cli_sigstate ss;
	struct workload w = { 0 };
	struct pollfd *pfd = NULL;
	char dirbuf[PATH_MAX];
	const char *dir;
	pid_t *tids = NULL;
	size_t nr_tids = 0;
	uint64_t t0, last_flush, last_progress;
	int ret = parse_opts(&o, argc, argv), status = 0, err;
	bool have_status = false, done = false, started = false;

	if (ret >= 0)
		return ret;
	if (o.into_host)
		return record_into_host(&o);
	memset(&rc, 0, sizeof(rc));
	vperf_ordered__init(&rc.pend, sizeof(struct pend));
	rc.o = &o;
	rc.page = (size_t)sysconf(_SC_PAGESIZE);
	rc.guest = !access("/dev/vperf", F_OK);
	snprintf(dirbuf, sizeof(dirbuf), "%s", o.output ? o.output : RECDIR_DEFAULT);
	for (size_t len = strlen(dirbuf); len > 1 && dirbuf[len - 1] == '/'; len--)
		dirbuf[len - 1] = '\0';
	dir = dirbuf;
	ret = recdir_check(&record_usage, dir, 64);
	if (ret)
		return ret;
	ret = online_cpus(&rc);
	if (ret)
		goto out_free;
	if (fflush(stdout) == EOF) {
		ret = cli_error("record", "cannot write to stdout: %s", strerror(errno));
		goto out_free;
	}

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
		err = task_list(o.pid, &tids, &nr_tids);
		if (err) {
			ret = cli_error("record", "-p %d: %s", (int)o.pid, err == -ENOENT ||
					err == -ESRCH ? "no such process" : strerror(-err));
			goto out_signals;
		}
	}
	ret = open_events(&rc, tids, nr_tids);
	if (ret) {
		if (o.argv)
			workload__cancel(&w);
		goto out_signals;
	}
	open_sched(&rc);
	if (!rc.sched.on && !o.quiet)
		fprintf(stderr, "[ vperf record: no sched_switch or sched_wakeup events: %s ]\n",
			rc.sched.why);
	for (size_t i = 0; i < nr_tids; i++) {
		if (tid_add(&rc, tids[i])) {
			if (o.argv)
				workload__cancel(&w);
			ret = cli_error("record", "out of memory");
			goto out_close;
		}
	}
	ret = recdir_prepare("record", dir);
	if (!ret)
		ret = make_writer(&rc, dir, &schema);
	if (ret) {
		if (o.argv)
			workload__cancel(&w);
		goto out_close;
	}
	pfd = calloc(rc.nr_rings, sizeof(*pfd));
	if (!pfd) {
		if (o.argv)
			workload__cancel(&w);
		ret = cli_error("record", "out of memory");
		goto out_close;
	}
	for (size_t i = 0; i < rc.nr_rings; i++) {
		pfd[i].fd = rc.rings[i].fd;
		pfd[i].events = POLLIN;
	}

	t0 = last_flush = last_progress = now_ns(CLOCK_MONOTONIC);
	enable_sched(&rc);
	if (o.argv) {
		cli_fwd_pid = w.pid;
		err = workload__start(&w);
		if (err) {
			cli_fwd_pid = 0;
			ret = cli_error("record", "cannot run '%s': %s", o.argv[0], strerror(-err));
			ret = err == -ENOENT || err == -ENOTDIR ? 127 : 126;
			goto out_writer;
		}
	} else {
		err = synth_process(&rc, tids, nr_tids, now_ns(CLOCK_MONOTONIC));
		if (err) {
			ret = cli_error("record", "out of memory");
			goto out_writer;
		}
		enable_all(&rc, true);
	}
	started = true;

	while (!done) {
		struct timespec tmo = { 0, RECORD_PERIOD_MS * 1000000L };
		uint64_t now;

		ppoll(pfd, rc.nr_rings, &tmo, &ss.orig_mask);
		if (o.argv) {
			int wst;
			pid_t r = waitpid(w.pid, &wst, WNOHANG);

			if (r == w.pid) {
				status = workload__exit_status(wst);
				have_status = true;
				done = true;
			}
		} else if (cli_got_signal || !process_alive(o.pid)) {
			done = true;
		}
		now = now_ns(CLOCK_MONOTONIC);
		err = drain(&rc);
		if (!err && !done)
			err = emit(&rc, now > HOLD_NS ? now - HOLD_NS : 0);
		if (!err && !done && now - last_flush >= FLUSH_MS * 1000000ull) {
			err = vperf_ctf__flush(rc.ctf);
			last_flush = now;
		}
		if (err) {
			ret = cli_error("record", "writing %s: %s", dir, err == -ENOMEM ?
					"out of memory" : vperf_ctf__strerror(rc.ctf));
			goto out_stop;
		}
		if (!o.quiet && now - last_progress >= PROGRESS_S * 1000000000ull) {
			progress(&rc, dir, t0);
			last_progress = now;
		}
	}

	enable_all(&rc, false);
	err = drain(&rc);
	if (!err)
		err = emit(&rc, UINT64_MAX);
	if (!err)
		err = emit_kernel_symbols(&rc);
	if (!err)
		keep_vdso(&rc, dir);
	if (!err)
		err = write_summary(&rc, status, have_status);
	if (!err)
		err = vperf_ctf__flush(rc.ctf);
	if (err) {
		ret = cli_error("record", "writing %s: %s", dir, err == -ENOMEM ? "out of memory" :
				vperf_ctf__strerror(rc.ctf));
		goto out_writer;
	}
	ret = have_status ? status : cli_got_signal && o.argv ? 128 + cli_got_signal : 0;
	if (!o.quiet) {
		if (have_status)
			fprintf(stderr, "[ vperf record: the command exited with status %d ]\n",
				status);
		fprintf(stderr, "[ vperf record: %" PRIu64 " samples, %" PRIu64 " thread switches, %"
			PRIu64 " forks, %" PRIu64 " execs, %" PRIu64 " exits over %.3f s on %zu CPUs ]\n",
			rc.samples, rc.switches, rc.forks, rc.execs, rc.exits,
			(double)(rc.last_ts - rc.first_ts) / 1e9, rc.nr_cpus);
		fprintf(stderr, "[ vperf record: lost %" PRIu64 " (ring full %" PRIu64
			", samples the kernel dropped %" PRIu64 "); throttled %" PRIu64 " times ]\n",
			rc.lost_ring + rc.lost_samples, rc.lost_ring, rc.lost_samples, rc.throttles);
		if (rc.bad_records)
			fprintf(stderr, "[ vperf record: %" PRIu64 " records could not be decoded "
				"(first: %s) ]\n", rc.bad_records, rc.bad_why);
		if (rc.pend.late)
			fprintf(stderr, "[ vperf record: %" PRIu64 " events came after younger ones "
				"were written: kept at the time of the last one ]\n", rc.pend.late);
		fprintf(stderr, "[ vperf record: Captured and wrote %.3f MB %s ]\n",
			(double)recdir_bytes(dir) / 1e6, dir);
	}
	goto out_writer;

out_stop:
	enable_all(&rc, false);
	if (o.argv && started && !have_status) {
		fprintf(stderr, "[ vperf record: recording stopped; waiting for the command to end ]\n");
		while (waitpid(w.pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
out_writer:
	vperf_ctf__delete(rc.ctf);
out_close:
	close_all(&rc);
out_signals:
	cli_signals_restore(&ss);
out_free:
	vperf_ordered__exit(&rc.pend, pend_free);
	free(rc.kips);
	free(pfd);
	free(tids);
	free(rc.cpus);
	free(rc.tids);
	return ret;
}
#endif /* VPERF_HAVE_RECORD */
