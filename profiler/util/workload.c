// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

/* Exit status of a child that is told not to run (never seen by users). */
#define WORKLOAD_CANCELLED 126

static void reset_signals(const sigset_t *mask)
{
	struct sigaction sa;

	for (int sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, NULL, &sa) || sa.sa_handler == SIG_IGN ||
		    sa.sa_handler == SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(sig, &sa, NULL);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(fd, (char *)buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int workload__prepare(struct workload *w, char *const *argv,
		      const sigset_t *child_mask)
{
	int go[2], err[2];
	char c;
	int e;

	w->pid = 0;
	w->go_fd = w->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		e = -errno;
		goto close_go;
	}
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0) {
		e = -errno;
		w->pid = 0;
		goto close_err;
	}
	if (w->pid == 0) {
		/* The child: nothing here may return or use stdio. */
		close(go[1]);
		close(err[0]);
		reset_signals(child_mask);
		if (read_full(go[0], &c, 1) != 1)
			_exit(WORKLOAD_CANCELLED);
		close(go[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	w->go_fd = go[1];
	w->err_fd = err[0];
	return 0;

close_err:
	close(err[0]);
	close(err[1]);
close_go:
	close(go[0]);
	close(go[1]);
	return e;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int workload__start(struct workload *w)
{
	ssize_t n;
	char c = 'g';
	int e = 0;

	while (write(w->go_fd, &c, 1) < 0 && errno == EINTR)
		;
	close(w->go_fd);
	w->go_fd = -1;
	n = read_full(w->err_fd, &e, sizeof(e));
	close(w->err_fd);
	w->err_fd = -1;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(e) || e <= 0)
		e = EIO;
	reap(w->pid);
	w->pid = 0;
	return -e;
}

void workload__cancel(struct workload *w)
{
	if (w->go_fd >= 0)
		close(w->go_fd);
	if (w->err_fd >= 0)
		close(w->err_fd);
	w->go_fd = w->err_fd = -1;
	if (w->pid > 0)
		reap(w->pid);
	w->pid = 0;
}

int workload__exit_status(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 1;
}
