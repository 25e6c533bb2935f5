// SPDX-License-Identifier: MIT
/*
 * A recording's CTF trace decoded by libbabeltrace2, vetted in a child process first (decode.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "decode.h"
#include "why.h"

#if defined(__SANITIZE_ADDRESS__)
#define DECODE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DECODE_SANITIZED 1
#endif
#endif

/* the vetting child's exit statuses */
enum {
	VET_OK = 0,
	VET_REFUSED = 1,	/* babeltrace2 refused it: decoding here gives its reason */
	VET_MEMORY = 2,		/* the memory bound was reached */
};

struct consumer {
	vperf_report_event_fn fn;
	void *data;
	int err;
};

/* babeltrace2's own account of what failed: its deepest cause. */
static int bt_fail(char *why, size_t len, const char *what)
{
	const bt_error *e = bt_current_thread_take_error();
	const char *msg = NULL;
	uint64_t n;

	if (e) {
		n = bt_error_get_cause_count(e);
		if (n)
			msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0));
		vperf_why(why, len, -EIO, "%s%s%s", what, msg ? ": " : "", msg ? msg : "");
		bt_error_release(e);
		return -EIO;
	}
	return vperf_why(why, len, -EIO, "%s", what);
}

static bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator *it,
								       void *data)
{
	(void)it;
	(void)data;
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it,
								       void *data)
{
	struct consumer *c = data;
	bt_message_array_const msgs;
	uint64_t n = 0;

	switch (bt_message_iterator_next(it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < n; i++) {
		if (!c->err && c->fn && bt_message_get_type(msgs[i]) == BT_MESSAGE_TYPE_EVENT)
			c->err = c->fn(c->data, msgs[i]);
		bt_message_put_ref(msgs[i]);
	}
	if (c->err)
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* source.ctf.fs -> filter.utils.muxer -> our sink, run to the end. */
static int run_graph(const char *dir, struct consumer *c, char *why, size_t len)
{
	const bt_plugin *ctf = NULL, *utils = NULL;
	const bt_component_class_source *fs_cls;
	const bt_component_class_filter *mux_cls;
	const bt_component_source *src;
	const bt_component_filter *mux;
	const bt_component_sink *snk;
	bt_value *params = NULL, *inputs;
	bt_graph *g;
	bt_graph_run_status rs;
	uint64_t nports;
	int err = -EIO;

	g = bt_graph_create(0);
	if (!g)
		return -ENOMEM;
	if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_TRUE, &ctf) !=
	    BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_TRUE, &utils) !=
	    BT_PLUGIN_FIND_STATUS_OK) {
		err = bt_fail(why, len, "babeltrace2's ctf and utils plugins were not found "
			      "(Debian package libbabeltrace2-0)");
		goto out_plugins;
	}
	fs_cls = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
	mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
	params = bt_value_map_create();
	if (!fs_cls || !mux_cls || !params ||
	    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) ||
	    bt_value_array_append_string_element(inputs, dir)) {
		err = fs_cls && mux_cls ? -ENOMEM : vperf_why(why, len, -EIO, "babeltrace2 has no "
							 "source.ctf.fs or filter.utils.muxer");
		goto out_plugins;
	}
	if (bt_graph_add_source_component(g, fs_cls, "src", params, BT_LOGGING_LEVEL_NONE, &src)) {
		err = bt_fail(why, len, "babeltrace2 cannot read it");
		goto out_plugins;
	}
	if (bt_graph_add_filter_component(g, mux_cls, "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) ||
	    bt_graph_add_simple_sink_component(g, "vperf", sink_init, sink_consume, NULL, c,
					       &snk)) {
		err = bt_fail(why, len, "setting up babeltrace2");
		goto out_plugins;
	}
	nports = bt_component_source_get_output_port_count(src);
	for (uint64_t i = 0; i < nports; i++) {
		/* the muxer makes a new input port each time one is connected */
		const bt_port_output *o;
		const bt_port_input *in;

		o = bt_component_source_borrow_output_port_by_index_const(src, i);
		in = bt_component_filter_borrow_input_port_by_index_const(mux, i);
		if (bt_graph_connect_ports(g, o, in, NULL)) {
			err = bt_fail(why, len, "setting up babeltrace2");
			goto out_plugins;
		}
	}
	if (bt_graph_connect_ports(g, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
				   bt_component_sink_borrow_input_port_by_index_const(snk, 0),
				   NULL)) {
		err = bt_fail(why, len, "setting up babeltrace2");
		goto out_plugins;
	}
	do
		rs = bt_graph_run(g);
	while (rs == BT_GRAPH_RUN_STATUS_AGAIN);
	if (c->err) {
		bt_current_thread_clear_error();
		err = c->err;
	} else if (rs == BT_GRAPH_RUN_STATUS_MEMORY_ERROR) {
		bt_current_thread_clear_error();
		err = -ENOMEM;
	} else if (rs != BT_GRAPH_RUN_STATUS_OK) {
		err = bt_fail(why, len, "babeltrace2 could not read it");
	} else {
		err = 0;
	}
out_plugins:
	bt_value_put_ref(params);
	bt_plugin_put_ref(ctf);
	bt_plugin_put_ref(utils);
	bt_graph_put_ref(g);
	return err;
}

unsigned long long vperf_report_decode_mem_limit(unsigned long long trace_bytes)
{
	unsigned long long base = 1ull << 30, max = ~0ull / 8;

	return trace_bytes > max ? ~0ull : base + 4 * trace_bytes;
}

/* The bytes of dir's regular files (the trace's metadata and streams; not what is below). */
static unsigned long long trace_bytes(const char *dir)
{
	unsigned long long sum = 0;
	struct dirent *d;
	struct stat st;
	DIR *dp;
	int dfd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	dp = fdopendir(dfd);
	if (!dp) {
		close(dfd);
		return 0;
	}
	while ((d = readdir(dp)))
		if (!fstatat(dfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			sum += (unsigned long long)st.st_size;
	closedir(dp);
	return sum;
}

#ifdef DECODE_SANITIZED
/*
 * Under AddressSanitizer (the fuzz targets) an address-space limit would refuse the sanitizer's
 * own mappings: the child's resident memory is watched instead, every 2 ms.
 */
static unsigned long long rss_limit;

static void *watch_rss(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	struct timespec ts = { 0, 2000000 };

	(void)arg;
	for (;;) {
		unsigned long long size, rss;
		FILE *f = fopen("/proc/self/statm", "re");

		if (f && fscanf(f, "%llu %llu", &size, &rss) == 2 && rss * (unsigned long long)page >
		    rss_limit)
			_exit(VET_MEMORY);
		if (f)
			fclose(f);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void bound_memory(unsigned long long limit)
{
	pthread_t t;

	rss_limit = limit;
	if (pthread_create(&t, NULL, watch_rss, NULL))
		_exit(VET_MEMORY);
}
#else
static void bound_memory(unsigned long long limit)
{
	struct rlimit rl = { limit, limit };
	struct rlimit cur;

	if (!getrlimit(RLIMIT_AS, &cur) && cur.rlim_cur != RLIM_INFINITY && cur.rlim_cur < limit)
		return;		/* a lower bound set by the user stays */
	rl.rlim_max = cur.rlim_max;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
		rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_AS, &rl);
}
#endif

/* the signals of a crash: the child takes them as the system does (no handler of the parent's) */
static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGTRAP, SIGSYS };

static bool crash_signal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i] == sig)
			return true;
	return false;
}

/* The child: decode everything, keep nothing; a refusal's reason goes to fd.  Never returns. */
__attribute__((noreturn))
static void vet_child(const char *dir, unsigned long long limit, int fd)
{
	struct consumer c = { 0 };
	char why[512] = "";
	int err, null;

	/* a crash is a crash of this process, not a report of the parent's input */
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	/* what babeltrace2 and glib print on their way down: this process's verdict says it */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0 && null != STDERR_FILENO)
		dup2(null, STDERR_FILENO);
	bound_memory(limit);
	err = run_graph(dir, &c, why, sizeof(why));
	if (!err)
		_exit(VET_OK);
	if (err == -ENOMEM)
		_exit(VET_MEMORY);
	if (write(fd, why, strnlen(why, sizeof(why) - 1)) < 0)
		_exit(VET_REFUSED);
	_exit(VET_REFUSED);
}

/*
 * 0: the child decoded it to its end.  Else -EIO (or -errno) with the reason: babeltrace2's
 * refusal as the child met it, or what ended the child.
 */
static int vet(const char *dir, char *why, size_t len)
{
	unsigned long long limit = vperf_report_decode_mem_limit(trace_bytes(dir));
	char reason[512];
	int status, fds[2], err;
	ssize_t n = 0, got;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return vperf_why(why, len, -errno, "cannot vet the recording: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return vperf_why(why, len, err, "cannot start the process that vets the recording: %s",
			    strerror(-err));
	}
	if (pid == 0) {
		close(fds[0]);
		vet_child(dir, limit, fds[1]);
	}
	close(fds[1]);
	while (n < (ssize_t)sizeof(reason) - 1 &&
	       ((got = read(fds[0], reason + n, sizeof(reason) - 1 - (size_t)n)) > 0 ||
		(got < 0 && errno == EINTR)))
		n += got > 0 ? got : 0;
	reason[n] = '\0';
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return vperf_why(why, len, -errno, "lost the process that vets the recording: %s",
				    strerror(errno));
	if (WIFSIGNALED(status) && !crash_signal(WTERMSIG(status)))	/* Ctrl-C, kill, OOM */
		return vperf_why(why, len, WTERMSIG(status) == SIGKILL ? -EIO : -EINTR, "the process "
			    "that vets the recording was ended (%s)", strsignal(WTERMSIG(status)));
	if (WIFSIGNALED(status))
		return vperf_why(why, len, -EIO, "babeltrace2's CTF decoder crashed on it (%s): the "
			    "recording is damaged or hostile, and none of it was read",
			    strsignal(WTERMSIG(status)));
	switch (WEXITSTATUS(status)) {
	case VET_OK:
		return 0;
	case VET_REFUSED:
		return vperf_why(why, len, -EIO, "%s", n ? reason : "babeltrace2 could not read it");
	case VET_MEMORY:
		return vperf_why(why, len, -EIO, "babeltrace2's CTF decoder needs more than %llu MiB to "
			    "decode it: the recording is damaged or hostile, and none of it was read",
			    limit >> 20);
	default:
		return vperf_why(why, len, -EIO, "babeltrace2's CTF decoder failed on it (exit status "
			    "%d): the recording is damaged or hostile, and none of it was read",
			    WEXITSTATUS(status));
	}
}

int vperf_report_decode(const char *dir, vperf_report_event_fn fn, void *data, char *why,
			size_t len)
{
	struct consumer c = { .fn = fn, .data = data };
	int err = vet(dir, why, len);

	if (err)
		return err;
	return run_graph(dir, &c, why, len);
}
