/* SPDX-License-Identifier: MIT */
/*
 * Reading a CTF trace back with babeltrace2 in a unit test: its exit
 * status, stdout and stderr.  babeltrace2 is found by CMake
 * (VT_BABELTRACE2, "" if absent); without it the caller skips, saying so.
 * Include after cmocka (vtest.h).
 */
#ifndef VT_BT2RUN_H
#define VT_BT2RUN_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vtest.h"

#ifndef VT_BABELTRACE2
#define VT_BABELTRACE2 ""
#endif

/* The whole file, NUL-terminated; "" if there is none. */
/* Remove a test's temporary directory and everything in it: 0, or -1. */
static inline int vt_rmtree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static inline char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		for (;;) {
			if (cap - len < 4096) {
				cap = cap ? 2 * cap : 65536;
				buf = realloc(buf, cap);
				assert_non_null(buf);
			}
			size_t n = fread(buf + len, 1, cap - len - 1, f);

			if (!n)
				break;
			len += n;
		}
		fclose(f);
	}
	if (!buf)
		buf = malloc(1);
	assert_non_null(buf);
	buf[len] = 0;
	return buf;
}

static inline size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

struct bt_run {
	int status;		/* exit status, or -1 if it did not exit */
	char *out, *err;
};

static inline void bt_run_free(struct bt_run *r)
{
	free(r->out);
	free(r->err);
}

/* `babeltrace2 dir`, its stdout and stderr kept in files under base. */
static inline void run_babeltrace2(const char *base, const char *dir, struct bt_run *r)
{
	char out[PATH_MAX], err[PATH_MAX];
	int status;
	pid_t pid;

	if (!VT_BABELTRACE2[0] || access(VT_BABELTRACE2, X_OK))
		vt_skip("babeltrace2 not found at configure time (%s): scripts/install-deps.sh "
			"installs it", VT_BABELTRACE2[0] ? VT_BABELTRACE2 : "none");
	snprintf(out, sizeof(out), "%s/bt2.out", base);
	snprintf(err, sizeof(err), "%s/bt2.err", base);
	fflush(stdout);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		setenv("TZ", "UTC0", 1);
		execl(VT_BABELTRACE2, "babeltrace2", dir, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	r->out = slurp(out);
	r->err = slurp(err);
}

/* babeltrace2 reads dir with exit 0 and an empty stderr; its stdout is r->out. */
static inline void read_clean(const char *base, const char *dir, struct bt_run *r)
{
	run_babeltrace2(base, dir, r);
	if (r->status != 0 || r->err[0])
		fail_msg("babeltrace2 %s: exit %d, stderr:\n%s", dir, r->status, r->err);
}

#endif /* VT_BT2RUN_H */
