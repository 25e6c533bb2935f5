// SPDX-License-Identifier: MIT
/* The host side of the guest console (see console.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "console.h"
#include "log.h"
#include "serial.h"

#define INPUT_RETRY_MS		10	/* receive FIFO full: try again after this long */

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };

				poll(&pfd, 1, 100);
				continue;
			}
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void write_out(struct console *c, const char *p, size_t len)
{
	int err;

	if (!c->out_broken) {
		err = write_all(c->out_fd, p, len);
		if (err) {
			c->out_errno = -err;
			c->out_broken = true;	/* keep the guest running; main reports it at the end */
		}
	}
	if (c->log_fd >= 0) {
		err = write_all(c->log_fd, p, len);
		if (err && !c->log_errno)
			c->log_errno = -err;
	}
}

static void flush_locked(struct console *c)
{
	char note[128];

	if (!c->out_len)
		return;
	if (!c->raw) {
		/* past the rate, the chunk is left out (counted); a note says so when output resumes */
		if (!confilter__admit(&c->filter, c->out_len, now_ns(), note, sizeof(note))) {
			c->out_len = 0;
			return;
		}
		if (note[0])
			write_out(c, note, strlen(note));
	}
	write_out(c, c->out, c->out_len);
	c->out_len = 0;
}

void console__flush(struct console *c)
{
	pthread_mutex_lock(&c->lock);
	flush_locked(c);
	pthread_mutex_unlock(&c->lock);
}

void console__tx(void *ctx, uint8_t byte)
{
	struct console *c = ctx;

	pthread_mutex_lock(&c->lock);
	if (c->raw) {
		c->out[c->out_len++] = (char)byte;
	} else {
		if (c->out_len + CONFILTER_MAX_OUT > sizeof(c->out))
			flush_locked(c);
		c->out_len += confilter__byte(&c->filter, byte, c->out + c->out_len);
	}
	/* the line for panic detection keeps the guest's own bytes */
	if (byte == '\n') {
		c->line[c->line_len] = '\0';
		if (c->on_line)
			c->on_line(c->ctx, c->line);
		c->line_len = 0;
	} else if (byte != '\r' && c->line_len < sizeof(c->line) - 1) {
		c->line[c->line_len++] = (char)byte;
	}
	if (byte == '\n' || c->out_len + CONFILTER_MAX_OUT > sizeof(c->out))
		flush_locked(c);
	pthread_mutex_unlock(&c->lock);
}

void console__tx_idle(void *ctx)
{
	console__flush(ctx);
}

/*
 * Read stdin when it is a terminal we own (foreground), a pipe or a socket; never a file or
 * /dev/null.
 */
static void pick_input(struct console *c)
{
	struct stat st;

	if (fstat(STDIN_FILENO, &st) < 0)
		return;
	if (isatty(STDIN_FILENO)) {
		struct termios t;

		/* A background job touching the terminal would be stopped (SIGTTIN/SIGTTOU). */
		if (tcgetpgrp(STDIN_FILENO) != getpgrp())
			return;
		if (tcgetattr(STDIN_FILENO, &c->saved_termios) < 0)
			return;
		t = c->saved_termios;
		/*
		 * Characters go to the guest as typed, the guest echoes; ISIG stays: Ctrl-C stops
		 * the VMM.
		 */
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHONL | IEXTEN);
		t.c_iflag &= ~(tcflag_t)(IXON | ICRNL | INLCR | IGNCR);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		if (tcsetattr(STDIN_FILENO, TCSANOW, &t) < 0)
			return;
		c->termios_saved = true;
		c->in_tty = true;
		c->in_fd = STDIN_FILENO;
	} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		c->in_fd = STDIN_FILENO;
	}
}

int console__init(struct console *c, const char *log_path, bool input, bool raw,
		  void (*on_line)(void *ctx, const char *line), void *ctx)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->out_fd = STDOUT_FILENO;
	c->log_fd = -1;
	c->in_fd = -1;
	c->wake_fd = -1;
	c->on_line = on_line;
	c->ctx = ctx;
	c->raw = raw;
	confilter__init(&c->filter, now_ns());
	err = pthread_mutex_init(&c->lock, NULL);
	if (err)
		return -err;
	if (log_path) {
		/* the guest's words: private, and never written through a link */
		c->log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (c->log_fd < 0) {
			err = -errno;
			pr_err("cannot open console log %s: %s", log_path, strerror(-err));
			goto err_lock;
		}
	}
	if (input) {
		c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (c->wake_fd < 0) {
			err = -errno;
			pr_err("eventfd: %s", strerror(-err));
			goto err_log;
		}
		pick_input(c);
	}
	return 0;

err_log:
	if (c->log_fd >= 0)
		close(c->log_fd);
err_lock:
	pthread_mutex_destroy(&c->lock);
	return err;
}

static void *input_thread(void *arg)
{
	struct console *c = arg;
	struct pollfd pfd[2] = {
		{ .fd = c->wake_fd, .events = POLLIN },
		{ .fd = c->in_fd, .events = POLLIN },
	};
	uint8_t buf[256];
	size_t len = 0, off = 0;
	int nfds = 2;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		int timeout = -1;

		if (off < len) {
			off += serial8250__receive(c->uart, buf + off, len - off);
			if (off < len)
				timeout =
					INPUT_RETRY_MS; /* FIFO full: wait for the guest to read */
		}
		/* While bytes wait, only watch the stop event; after EOF, only that. */
		if (poll(pfd, off < len ? 1 : (nfds_t)nfds, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		if (off < len || nfds < 2 || !pfd[1].revents)
			continue;
		{
			ssize_t n = read(c->in_fd, buf, sizeof(buf));

			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				nfds = 1;	/* EOF or error: no more input */
				continue;
			}
			len = (size_t)n;
			off = 0;
		}
	}
	return NULL;
}

int console__start(struct console *c, struct serial8250 *uart)
{
	int err;

	c->uart = uart;
	if (c->in_fd < 0)
		return 0;
	err = pthread_create(&c->in_thread, NULL, input_thread, c);
	if (err) {
		pr_err("console input thread: %s", strerror(err));
		return -err;
	}
	c->in_started = true;
	return 0;
}

void console__stop(struct console *c)
{
	uint64_t one = 1;

	if (c->in_started) {
		if (write(c->wake_fd, &one, sizeof(one)) < 0)
			pr_debug("console wake: %s", strerror(errno));
		pthread_join(c->in_thread, NULL);
		c->in_started = false;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->raw) {
		char tail[CONFILTER_MAX_OUT];
		size_t n = confilter__end(&c->filter, tail);

		if (n && c->out_len + n <= sizeof(c->out)) {
			memcpy(c->out + c->out_len, tail, n);
			c->out_len += n;
		}
	}
	flush_locked(c);
	if (!c->raw && c->filter.dropped_total)
		pr_warn("%llu bytes of the guest's console output were left out (more than %u KiB/s; "
			"--raw-console shows all)", (unsigned long long)c->filter.dropped_total,
			CONFILTER_RATE >> 10);
	pthread_mutex_unlock(&c->lock);
	if (c->termios_saved) {
		tcsetattr(STDIN_FILENO, TCSANOW, &c->saved_termios);
		c->termios_saved = false;
	}
}

void console__exit(struct console *c)
{
	console__stop(c);
	if (c->log_fd >= 0)
		close(c->log_fd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->log_fd = c->wake_fd = -1;
	pthread_mutex_destroy(&c->lock);
}
