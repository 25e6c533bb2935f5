// SPDX-License-Identifier: MIT
/*
 * spec-run: run one benchmark command and say what it cost, from outside.
 *
 *   spec-run [--log FILE] -- COMMAND [ARGS...]
 *
 * Forks, execs COMMAND, waits for it with wait4() and appends one line to
 * FILE (default: standard error):
 *
 *   run exit=<status> signal=<signo or 0> wall_ns=<N> utime_ns=<N> stime_ns=<N> maxrss_kb=<N>
 *
 * wall_ns is CLOCK_MONOTONIC from just before fork() to the reaped exit;
 * utime/stime are the command's rusage (all its threads and reaped
 * children).  The exit status of spec-run is the command's (128 + signal
 * if it was killed, 127 if it could not be executed, 2 on a usage error).
 * Built for the harness's guest runs, where busybox has no time(1) that
 * reports rusage in ns, and used the same way natively so that both sides
 * measure alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

static int usage(void)
{
	fprintf(stderr, "usage: spec-run [--log FILE] -- COMMAND [ARGS...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *log = NULL;
	struct rusage ru;
	uint64_t t0, t1;
	char line[256];
	int i = 1, status, fd, len;
	pid_t pid;

	while (i < argc && strcmp(argv[i], "--") != 0) {
		if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
			log = argv[i + 1];
			i += 2;
		} else {
			fprintf(stderr, "spec-run: unknown option '%s'\n", argv[i]);
			return usage();
		}
	}
	if (i >= argc || i + 1 >= argc)
		return usage();
	i++;

	fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : STDERR_FILENO;
	if (fd < 0) {
		fprintf(stderr, "spec-run: cannot open log '%s': %s\n", log, strerror(errno));
		return 2;
	}

	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "spec-run: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[i], &argv[i]);
		fprintf(stderr, "spec-run: cannot run '%s': %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "spec-run: wait4: %s\n", strerror(errno));
			return 2;
		}
	}
	t1 = now_ns();

	len = snprintf(line, sizeof(line),
		       "run exit=%d signal=%d wall_ns=%llu utime_ns=%llu stime_ns=%llu maxrss_kb=%ld\n",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0,
		       (unsigned long long)(t1 - t0),
		       (unsigned long long)tv_ns(&ru.ru_utime),
		       (unsigned long long)tv_ns(&ru.ru_stime), ru.ru_maxrss);
	if (write(fd, line, (size_t)len) != len) {
		fprintf(stderr, "spec-run: cannot write the log: %s\n", strerror(errno));
		return 2;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
