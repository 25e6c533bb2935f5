// SPDX-License-Identifier: MIT
/*
 * The host kernel's events for --record, captured through tracefs (tracefs.h).
 *
 * libc only: the instance is a directory made with mkdir(2), every setting a small write to one
 * of its files.  Pages come out of per_cpu/cpu<N>/trace_pipe_raw in two ways:
 *   - while tracing, splice(2) into a pipe, non-blocking: the kernel hands out only pages the
 *     writer has left (whole pages), so a page is never cut in two and never copied half-empty;
 *   - at the stop, after tracing_on=0, read(2), non-blocking: each read of one page size gives
 *     one page, and once the whole pages are out the page the writer was on comes out too, as a
 *     page of the full size whose commit field says how many bytes of events it holds (the rest
 *     zeros); then -EAGAIN.  (Linux's tracing_buffers_read() with ring_buffer_read_page(full=0);
 *     splice never gives that page.)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <vperf/rawrec.h>

#include "tracefs.h"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC		0x74726163
#endif

#define TRACE_CLOCK		"x86-tsc"
#define INSTANCE_PREFIX		"vperf-"
#define PIPE_WANT		(1u << 20)	/* splice through a 1 MiB pipe if allowed */
#define MAX_FILTER		4000		/* the kernel takes less than a page */

const struct hosttrace_event hosttrace_default_events[] = {
	{ "kvm", "kvm_entry", HOSTTRACE_FILTER_COMMON_PID },
	{ "kvm", "kvm_exit", HOSTTRACE_FILTER_COMMON_PID },
	{ "kvm", "kvm_inj_virq", HOSTTRACE_FILTER_COMMON_PID },
	{ "sched", "sched_switch", HOSTTRACE_FILTER_SWITCH },
	{ "sched", "sched_wakeup", HOSTTRACE_FILTER_PID },
};
const size_t hosttrace_nr_default_events = ARRAY_SIZE(hosttrace_default_events);

struct ht_cpu {
	unsigned int cpu;		/* N of per_cpu/cpuN */
	int fd;				/* its trace_pipe_raw, -1 if it would not open */
	int open_err;			/* why not (-errno) */
};

struct ht_format {
	const struct hosttrace_event *ev;
	char *text;			/* "system\0event\0" + the format file */
	size_t len;
};

struct hosttrace {
	struct hosttrace_sink sink;
	char inst[PATH_MAX / 2];	/* <tracefs>/instances/vperf-<pid> */
	bool have_inst;
	bool stopped;
	size_t page_size;		/* from header_page */
	struct ht_cpu *cpus;
	unsigned int nr_cpus;
	int pipe[2];
	size_t pipe_size;
	uint8_t *buf;			/* pipe_size bytes, a multiple of page_size */
	size_t buf_size;
	unsigned int max_loops;		/* splices per CPU and poll: the whole buffer, and some */
};

/* ---- small file helpers: 0 or -errno ---- */

static int pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t w;
	int err = 0;

	if (fd < 0)
		return -errno;
	do
		w = write(fd, s, len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		err = -errno;
	else if ((size_t)w != len)
		err = -EIO;
	close(fd);
	return err;
}

static int inst_write(struct hosttrace *ht, const char *file, const char *s)
{
	char path[PATH_MAX];
	int err = pathf(path, sizeof(path), "%s/%s", ht->inst, file);

	return err ? err : write_str(path, s);
}

/* The whole of a (tracefs: size 0 in stat) file, NUL-terminated, after `reserve` bytes of room. */
static int read_all(const char *path, size_t reserve, char **out, size_t *out_len)
{
	size_t cap = reserve + 4096, len = reserve;
	char *buf = malloc(cap), *n;
	int fd, err = 0;

	*out = NULL;
	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto free_buf;
	}
	for (;;) {
		ssize_t r;

		if (cap - len < 1024) {
			if (cap > (64u << 20)) {
				err = -EFBIG;
				goto close_fd;
			}
			n = realloc(buf, cap * 2);
			if (!n) {
				err = -ENOMEM;
				goto close_fd;
			}
			buf = n;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto close_fd;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
close_fd:
	close(fd);
free_buf:
	free(buf);
	return err;
}

/* "[a] b c" -> is `word` one of them (brackets: the current one)? */
static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += wl) {
		char before = p == list ? ' ' : p[-1], after = p[wl];

		if ((before == ' ' || before == '[') &&
		    (after == ' ' || after == ']' || after == '\n' || after == '\0'))
			return true;
	}
	return false;
}

/* ---- setup ---- */

static void say(char *why, size_t why_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !why_len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* The tracefs mount: /sys/kernel/tracing, or debugfs's tracing (older systems). */
static int find_tracefs(char *root, size_t len, char *why, size_t why_len)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int denied = 0;

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		struct statfs sf;

		if (statfs(roots[i], &sf)) {
			if (errno == EACCES || errno == EPERM)
				denied = -errno;
			continue;
		}
		if ((unsigned long)sf.f_type != TRACEFS_MAGIC)
			continue;
		if (access(roots[i], R_OK | X_OK)) {
			denied = -errno;
			continue;
		}
		return pathf(root, len, "%s", roots[i]);
	}
	if (denied) {
		say(why, why_len, "no permission to use tracefs (%s): host kernel events need root "
		    "(or CAP_SYS_ADMIN with access to /sys/kernel/tracing)", strerror(-denied));
		return denied;
	}
	say(why, why_len, "no tracefs: neither /sys/kernel/tracing nor /sys/kernel/debug/tracing is "
	    "mounted (as root: mount -t tracefs nodev /sys/kernel/tracing)");
	return -ENOENT;
}

/*
 * Remove instances vperf-<pid> whose process is gone (a vperf-vmm killed before its stop).  An
 * instance still in use cannot be removed (its trace_pipe_raw files are open: rmdir says EBUSY),
 * so a live recorder in another pid namespace, whose pid this one cannot see, keeps its own.
 */
static void remove_stale(const char *root, char *list, size_t list_len)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	list[0] = '\0';
	if (pathf(dir, sizeof(dir), "%s/instances", root))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
			continue;
		errno = 0;
		pid = strtol(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
		if (errno || *end || pid <= 0 || pid > INT_MAX || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (pathf(path, sizeof(path), "%s/%s", dir, de->d_name) || rmdir(path))
			continue;
		if (n < list_len) {
			int w = snprintf(list + n, list_len - n, "%s%s", n ? "," : "", de->d_name);

			if (w > 0)
				n += (size_t)w;
		}
	}
	closedir(d);
}

/* "common_pid==1||common_pid==2" and such. */
static int make_filter(char *buf, size_t len, enum hosttrace_filter f, const pid_t *tids, size_t nr)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		int w;

		switch (f) {
		case HOSTTRACE_FILTER_COMMON_PID:
			w = snprintf(buf + n, len - n, "%scommon_pid==%d", i ? "||" : "", (int)tids[i]);
			break;
		case HOSTTRACE_FILTER_SWITCH:
			w = snprintf(buf + n, len - n, "%sprev_pid==%d||next_pid==%d", i ? "||" : "",
				     (int)tids[i], (int)tids[i]);
			break;
		case HOSTTRACE_FILTER_PID:
			w = snprintf(buf + n, len - n, "%spid==%d", i ? "||" : "", (int)tids[i]);
			break;
		default:
			return -EINVAL;
		}
		if (w < 0 || (size_t)w >= len - n)
			return -E2BIG;
		n += (size_t)w;
	}
	return 0;
}

/* The page size from header_page: "field: char data;\toffset:16;\tsize:4080;..." */
static int page_size_of(const char *header, size_t *page_size)
{
	const char *p = strstr(header, " data;");
	unsigned long off, size;

	if (!p || sscanf(p, " data; offset:%lu; size:%lu;", &off, &size) != 2 || !size ||
	    off + size < 64 || off + size > VPERF_RAWREC_MAX_CHUNK)
		return -EINVAL;
	*page_size = off + size;
	return 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct ht_cpu *x = a, *y = b;

	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int open_pipe_raw(struct hosttrace *ht, struct ht_cpu *c)
{
	char path[PATH_MAX];
	int err = pathf(path, sizeof(path), "%s/per_cpu/cpu%u/trace_pipe_raw", ht->inst, c->cpu);

	if (err)
		return err;
	c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	c->open_err = c->fd < 0 ? -errno : 0;
	return c->open_err;
}

/*
 * Every per_cpu/cpuN of the instance (the kernel makes one per possible CPU), each with its
 * trace_pipe_raw open; a CPU whose buffer does not exist (never online) stays closed and is
 * tried again at the stop.
 */
static int open_cpus(struct hosttrace *ht, unsigned int *opened)
{
	char path[PATH_MAX];
	struct dirent *de;
	unsigned int cap = 0;
	DIR *d;
	int err = pathf(path, sizeof(path), "%s/per_cpu", ht->inst);

	*opened = 0;
	if (err)
		return err;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned int cpu;
		char tail;

		if (sscanf(de->d_name, "cpu%u%c", &cpu, &tail) != 1)
			continue;
		if (ht->nr_cpus == cap) {
			struct ht_cpu *n = realloc(ht->cpus, (cap ? cap * 2 : 64) * sizeof(*n));

			if (!n) {
				closedir(d);
				return -ENOMEM;
			}
			ht->cpus = n;
			cap = cap ? cap * 2 : 64;
		}
		ht->cpus[ht->nr_cpus++] = (struct ht_cpu){ .cpu = cpu, .fd = -1 };
	}
	closedir(d);
	if (!ht->nr_cpus)
		return -ENOENT;
	qsort(ht->cpus, ht->nr_cpus, sizeof(*ht->cpus), cmp_cpu);
	for (unsigned int i = 0; i < ht->nr_cpus; i++)
		*opened += open_pipe_raw(ht, &ht->cpus[i]) == 0;
	return *opened ? 0 : ht->cpus[0].open_err;
}

static void close_cpus(struct hosttrace *ht)
{
	for (unsigned int i = 0; i < ht->nr_cpus; i++) {
		if (ht->cpus[i].fd >= 0)
			close(ht->cpus[i].fd);
		ht->cpus[i].fd = -1;
	}
}

static int setup_pipe(struct hosttrace *ht)
{
	int size;

	if (pipe2(ht->pipe, O_NONBLOCK | O_CLOEXEC))
		return -errno;
	/* best effort: a bigger pipe means fewer splices; it must hold one page at least */
	fcntl(ht->pipe[1], F_SETPIPE_SZ, (int)MAX(PIPE_WANT, ht->page_size));
	size = fcntl(ht->pipe[1], F_GETPIPE_SZ);
	if (size < 0)
		return -errno;
	ht->pipe_size = ALIGN_DOWN((size_t)size, ht->page_size);
	if (!ht->pipe_size)
		return -ENOSPC;
	ht->buf_size = ht->pipe_size;
	ht->buf = malloc(ht->buf_size);
	return ht->buf ? 0 : -ENOMEM;
}

static void close_pipe(struct hosttrace *ht)
{
	for (int i = 0; i < 2; i++) {
		if (ht->pipe[i] >= 0)
			close(ht->pipe[i]);
		ht->pipe[i] = -1;
	}
}

/* Stop tracing, close everything, remove the instance: what start undoes and delete does. */
static int teardown(struct hosttrace *ht)
{
	int err = 0;

	close_cpus(ht);
	close_pipe(ht);
	if (ht->have_inst) {
		inst_write(ht, "tracing_on", "0");
		if (rmdir(ht->inst))
			err = -errno;
		ht->have_inst = false;
	}
	return err;
}

/* One META chunk: "host_trace_<key>=<value>\n" lines (printable ASCII, no quotes). */
struct meta {
	char buf[2048];
	size_t n;
};

static void meta_add(struct meta *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void meta_add(struct meta *m, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(m->buf + m->n, sizeof(m->buf) - m->n, fmt, ap);
	va_end(ap);
	if (w > 0 && (size_t)w < sizeof(m->buf) - m->n)
		m->n += (size_t)w;
}

static int read_format(struct hosttrace *ht, const struct hosttrace_event *ev, struct ht_format *f)
{
	size_t sl = strlen(ev->system) + 1, nl = strlen(ev->name) + 1, len;
	char path[PATH_MAX], *text;
	int err = pathf(path, sizeof(path), "%s/events/%s/%s/format", ht->inst, ev->system, ev->name);

	if (err)
		return err;
	err = read_all(path, sl + nl, &text, &len);
	if (err)
		return err;
	memcpy(text, ev->system, sl);
	memcpy(text + sl, ev->name, nl);
	f->ev = ev;
	f->text = text;
	f->len = len;
	return 0;
}

/* What hosttrace__start_events() gathers before it writes anything into the recording. */
struct setup {
	char root[PATH_MAX / 4];	/* the tracefs mount */
	char stale[256];		/* instances of dead processes removed */
	char missing[512];		/* "kvm:kvm_entry, ..." not in this kernel */
	size_t missing_len;
	bool kvm_missing;
	struct ht_format *fmts;		/* the enabled events' format chunks */
	size_t nr_fmts;
	char *header;			/* events/header_page */
	size_t header_len;
	unsigned int opened;		/* CPUs whose trace_pipe_raw is open */
	char *why;
	size_t why_len;
};

static void setup_free(struct setup *st)
{
	for (size_t i = 0; st->fmts && i < st->nr_fmts; i++)
		free(st->fmts[i].text);
	free(st->fmts);
	free(st->header);
}

/* instances/vperf-<pid>; one of ours by that name (same pid, killed earlier) is replaced. */
static int make_instance(struct hosttrace *ht, struct setup *st)
{
	int err = pathf(ht->inst, sizeof(ht->inst), "%s/instances/" INSTANCE_PREFIX "%d", st->root,
			(int)getpid());

	if (err)
		return err;
	err = mkdir(ht->inst, 0700) ? -errno : 0;
	if (err == -EEXIST) {
		if (rmdir(ht->inst)) {
			err = -errno;
			say(st->why, st->why_len, "%s exists and is in use (%s): another host trace in "
			    "this process?", ht->inst, strerror(-err));
			return err;
		}
		err = mkdir(ht->inst, 0700) ? -errno : 0;
	}
	if (err == -EACCES || err == -EPERM)
		say(st->why, st->why_len, "no permission to create a tracefs instance in "
		    "%s/instances (%s): host kernel events need root", st->root, strerror(-err));
	else if (err)
		say(st->why, st->why_len, "cannot create the tracefs instance %s: %s", ht->inst,
		    strerror(-err));
	ht->have_inst = !err;
	return err;
}

/* Tracing off until the formats are in the recording, the x86-tsc clock, the buffer size. */
static int set_clock_and_buffer(struct hosttrace *ht, struct setup *st, unsigned int buffer_kb)
{
	char path[PATH_MAX], num[32], *clocks = NULL;
	size_t len;
	int err = inst_write(ht, "tracing_on", "0");

	if (err) {
		say(st->why, st->why_len, "%s/tracing_on: %s", ht->inst, strerror(-err));
		return err;
	}
	err = pathf(path, sizeof(path), "%s/trace_clock", ht->inst);
	if (!err)
		err = read_all(path, 0, &clocks, &len);
	if (err) {
		say(st->why, st->why_len, "%s: %s", path, strerror(-err));
		return err;
	}
	if (!has_word(clocks, TRACE_CLOCK)) {
		say(st->why, st->why_len, "this kernel has no " TRACE_CLOCK " trace clock (trace_clock "
		    "offers: %.*s): host events need TSC times", (int)strcspn(clocks, "\n"), clocks);
		free(clocks);
		return -ENOTSUP;
	}
	free(clocks);
	err = inst_write(ht, "trace_clock", TRACE_CLOCK);
	if (err) {
		say(st->why, st->why_len, "setting the trace clock to " TRACE_CLOCK ": %s",
		    strerror(-err));
		return err;
	}
	snprintf(num, sizeof(num), "%u", buffer_kb);
	err = inst_write(ht, "buffer_size_kb", num);
	if (err) {
		say(st->why, st->why_len, "a %u KiB trace buffer per CPU: %s", buffer_kb,
		    strerror(-err));
		return err;
	}
	/* when the recorder falls behind the oldest pages go, and the next page read says how many */
	inst_write(ht, "options/overwrite", "1");
	return 0;
}

/* Each event that this kernel has: its format read, its filter set, enabled. */
static int enable_events(struct hosttrace *ht, struct setup *st,
			 const struct hosttrace_event *events, size_t nr_events, const pid_t *tids,
			 size_t nr_tids)
{
	char path[PATH_MAX], filter[MAX_FILTER + 1];
	int err;

	for (size_t i = 0; i < nr_events; i++) {
		const struct hosttrace_event *ev = &events[i];

		err = pathf(path, sizeof(path), "%s/events/%s/%s/format", ht->inst, ev->system, ev->name);
		if (err)
			return err;
		if (access(path, R_OK)) {
			int w = snprintf(st->missing + st->missing_len,
					 sizeof(st->missing) - st->missing_len, "%s%s:%s",
					 st->missing_len ? ", " : "", ev->system, ev->name);

			if (w > 0 && (size_t)w < sizeof(st->missing) - st->missing_len)
				st->missing_len += (size_t)w;
			st->kvm_missing |= !strcmp(ev->system, "kvm");
			continue;
		}
		err = read_format(ht, ev, &st->fmts[st->nr_fmts]);
		if (err) {
			say(st->why, st->why_len, "%s: %s", path, strerror(-err));
			return err;
		}
		st->nr_fmts++;
		err = make_filter(filter, sizeof(filter), ev->filter, tids, nr_tids);
		if (!err)
			err = pathf(path, sizeof(path), "events/%s/%s/filter", ev->system, ev->name);
		if (!err)
			err = inst_write(ht, path, filter);
		if (err) {
			say(st->why, st->why_len, "the filter of %s:%s (%zu threads): %s", ev->system,
			    ev->name, nr_tids, strerror(-err));
			return err;
		}
		err = pathf(path, sizeof(path), "events/%s/%s/enable", ev->system, ev->name);
		if (!err)
			err = inst_write(ht, path, "1");
		if (err) {
			say(st->why, st->why_len, "enabling %s:%s: %s", ev->system, ev->name,
			    strerror(-err));
			return err;
		}
	}
	if (!st->nr_fmts) {
		say(st->why, st->why_len, "none of the host kernel events is in this kernel: %s missing",
		    st->missing);
		return -ENOENT;
	}
	return 0;
}

/* The page size (header_page), the CPUs' trace_pipe_raw, the pipe to splice through. */
static int open_buffers(struct hosttrace *ht, struct setup *st, unsigned int buffer_kb)
{
	char path[PATH_MAX];
	int err = pathf(path, sizeof(path), "%s/events/header_page", ht->inst);

	if (!err)
		err = read_all(path, 0, &st->header, &st->header_len);
	if (!err)
		err = page_size_of(st->header, &ht->page_size);
	if (err) {
		say(st->why, st->why_len, "%s: %s", path, strerror(-err));
		return err;
	}
	err = open_cpus(ht, &st->opened);
	if (err) {
		say(st->why, st->why_len, "%s/per_cpu/cpu*/trace_pipe_raw: %s", ht->inst,
		    strerror(-err));
		return err;
	}
	err = setup_pipe(ht);
	if (err) {
		say(st->why, st->why_len, "a pipe to splice trace pages through: %s", strerror(-err));
		return err;
	}
	ht->max_loops = (unsigned int)(((uint64_t)buffer_kb * 1024) / ht->buf_size) + 4;
	return 0;
}

/* META, TRACEFS_HEADER and the TRACEFS_FORMATs. */
static int write_setup(struct hosttrace *ht, const struct setup *st, unsigned int buffer_kb,
		       const pid_t *tids, size_t nr_tids)
{
	struct meta *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	meta_add(m, "host_trace_clock=%s\n", TRACE_CLOCK);
	meta_add(m, "host_trace_instance=%s\n", ht->inst);
	meta_add(m, "host_trace_page_size=%zu\n", ht->page_size);
	meta_add(m, "host_trace_buffer_kb=%u\n", buffer_kb);
	meta_add(m, "host_trace_cpus=%u of %u\n", st->opened, ht->nr_cpus);
	meta_add(m, "host_trace_events=");
	for (size_t i = 0; i < st->nr_fmts; i++)
		meta_add(m, "%s%s:%s", i ? "," : "", st->fmts[i].ev->system, st->fmts[i].ev->name);
	meta_add(m, "\nhost_trace_tids=");
	for (size_t i = 0; i < nr_tids; i++)
		meta_add(m, "%s%d", i ? "," : "", (int)tids[i]);
	meta_add(m, "\n");
	if (st->missing_len)
		meta_add(m, "host_trace_missing=%s\n", st->missing);
	if (st->stale[0])
		meta_add(m, "host_trace_stale_removed=%s\n", st->stale);
	err = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_META, 0, m->buf, (uint32_t)m->n);
	free(m);
	if (!err)
		err = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_TRACEFS_HEADER, 0, st->header,
				     (uint32_t)st->header_len);
	for (size_t i = 0; !err && i < st->nr_fmts; i++)
		err = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_TRACEFS_FORMAT, 0, st->fmts[i].text,
				     (uint32_t)st->fmts[i].len);
	if (err)
		say(st->why, st->why_len, "writing the host event formats into the recording: %s",
		    strerror(-err));
	return err;
}

int hosttrace__start_events(struct hosttrace **out, const pid_t *tids, size_t nr_tids,
			    unsigned int buffer_kb, const struct hosttrace_event *events,
			    size_t nr_events, struct hosttrace_sink sink, char *why, size_t why_len,
			    bool *missing)
{
	struct setup st = { .why = why, .why_len = why_len };
	struct hosttrace *ht;
	int err;

	*out = NULL;
	if (missing)
		*missing = false;
	say(why, why_len, "%s", "");
	if (!tids || !nr_tids || !events || !nr_events || !buffer_kb) {
		say(why, why_len, "host kernel events: nothing to trace (no threads or no events)");
		return -EINVAL;
	}
	for (size_t i = 0; i < nr_tids; i++) {
		if (tids[i] <= 0) {
			say(why, why_len, "host kernel events: thread %zu has no tid", i);
			return -EINVAL;
		}
	}
	if (!sink.chunk) {
		say(why, why_len, "host kernel events: nowhere to write them");
		return -EINVAL;
	}
	ht = calloc(1, sizeof(*ht));
	st.fmts = calloc(nr_events, sizeof(*st.fmts));
	if (!ht || !st.fmts) {
		err = -ENOMEM;
		say(why, why_len, "host kernel events: out of memory");
		goto free_ht;
	}
	ht->sink = sink;
	ht->pipe[0] = ht->pipe[1] = -1;

	err = find_tracefs(st.root, sizeof(st.root), why, why_len);
	if (err)
		goto free_ht;
	remove_stale(st.root, st.stale, sizeof(st.stale));
	err = make_instance(ht, &st);
	if (err)
		goto free_ht;
	err = set_clock_and_buffer(ht, &st, buffer_kb);
	if (!err)
		err = enable_events(ht, &st, events, nr_events, tids, nr_tids);
	if (!err)
		err = open_buffers(ht, &st, buffer_kb);
	if (!err)
		err = write_setup(ht, &st, buffer_kb, tids, nr_tids);
	if (!err) {
		err = inst_write(ht, "tracing_on", "1");
		if (err)
			say(why, why_len, "%s/tracing_on: %s", ht->inst, strerror(-err));
	}
	if (err)
		goto remove_instance;
	if (st.missing_len) {
		say(why, why_len, "%s not in this kernel%s; recording the others", st.missing,
		    st.kvm_missing ? " (is the kvm module loaded?)" : "");
		if (missing)
			*missing = true;
	}
	setup_free(&st);
	*out = ht;
	return 0;

remove_instance:
	teardown(ht);
free_ht:
	setup_free(&st);
	if (ht) {
		free(ht->cpus);
		free(ht->buf);
	}
	free(ht);
	return err;
}

int hosttrace__start(struct hosttrace **out, const pid_t *tids, size_t nr_tids,
		     unsigned int buffer_kb, struct hosttrace_sink sink, char *why, size_t why_len,
		     bool *missing)
{
	return hosttrace__start_events(out, tids, nr_tids, buffer_kb, hosttrace_default_events,
				       hosttrace_nr_default_events, sink, why, why_len, missing);
}

/* ---- copying pages ---- */

/* Read exactly len bytes that are in the pipe already. */
static int drain_pipe(struct hosttrace *ht, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(ht->pipe[0], ht->buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

int hosttrace__poll(struct hosttrace *ht)
{
	int first = 0;

	if (!ht || ht->stopped)
		return 0;
	for (unsigned int i = 0; i < ht->nr_cpus; i++) {
		struct ht_cpu *c = &ht->cpus[i];

		for (unsigned int loop = 0; c->fd >= 0 && loop < ht->max_loops; loop++) {
			ssize_t n = splice(c->fd, NULL, ht->pipe[1], NULL, ht->pipe_size,
					   SPLICE_F_NONBLOCK);
			int err;

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				/* EAGAIN: no whole page yet; anything else: this CPU's turn is over */
				if (n < 0 && errno != EAGAIN && !first)
					first = -errno;
				break;
			}
			err = drain_pipe(ht, (size_t)n);
			if (!err)
				err = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_TRACEFS_PAGES, c->cpu,
						     ht->buf, (uint32_t)n);
			if (err) {
				if (!first)
					first = err;
				break;
			}
		}
	}
	return first;
}

/* After tracing_on=0: read() hands out every page left, the partial one last (see the top). */
static int read_rest(struct hosttrace *ht, struct ht_cpu *c)
{
	size_t fill = 0;
	unsigned int pages = 0, max_pages = ht->max_loops * (unsigned int)(ht->buf_size / ht->page_size);
	int err = 0;

	while (pages++ < max_pages) {
		ssize_t r = read(c->fd, ht->buf + fill, ht->page_size);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno != EAGAIN)
			err = -errno;
		if (r <= 0)
			break;
		/* always a whole page so far; were it ever less, the page header still says its length */
		memset(ht->buf + fill + r, 0, ht->page_size - (size_t)r);
		fill += ht->page_size;
		if (fill + ht->page_size > ht->buf_size) {
			err = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_TRACEFS_PAGES, c->cpu, ht->buf,
					     (uint32_t)fill);
			fill = 0;
			if (err)
				return err;
		}
	}
	if (fill) {
		int e = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_TRACEFS_PAGES, c->cpu, ht->buf,
				       (uint32_t)fill);

		if (!err)
			err = e;
	}
	return err;
}

static int write_stats(struct hosttrace *ht, const struct ht_cpu *c)
{
	char path[PATH_MAX], *text;
	size_t len;
	int err = pathf(path, sizeof(path), "%s/per_cpu/cpu%u/stats", ht->inst, c->cpu);

	if (!err)
		err = read_all(path, 0, &text, &len);
	if (err)
		return err;
	err = ht->sink.chunk(ht->sink.arg, VPERF_RAWREC_TRACEFS_STATS, c->cpu, text, (uint32_t)len);
	free(text);
	return err;
}

int hosttrace__stop(struct hosttrace *ht)
{
	int first = 0, err;

	if (!ht || ht->stopped)
		return 0;
	ht->stopped = true;
	first = inst_write(ht, "tracing_on", "0");
	for (unsigned int i = 0; i < ht->nr_cpus; i++) {
		struct ht_cpu *c = &ht->cpus[i];

		/* a CPU that came online during the recording has a buffer now */
		if (c->fd < 0 && open_pipe_raw(ht, c))
			continue;
		err = read_rest(ht, c);
		if (err && !first)
			first = err;
		err = write_stats(ht, c);
		if (err && !first)
			first = err;
	}
	err = teardown(ht);
	return first ? first : err;
}

void hosttrace__delete(struct hosttrace *ht)
{
	if (!ht)
		return;
	teardown(ht);
	free(ht->cpus);
	free(ht->buf);
	free(ht);
}

const char *hosttrace__instance(const struct hosttrace *ht)
{
	return ht ? ht->inst : NULL;
}
