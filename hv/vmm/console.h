/* SPDX-License-Identifier: MIT */
/*
 * The host side of the guest console: bytes the UART transmits go to stdout (and --console-log),
 * buffered by line; complete lines are also handed to a callback (the VM watches for a kernel
 * panic). Input: when stdin is a terminal (switched to non-canonical, no echo; Ctrl-C still stops
 * the VMM), a pipe or a socket, a thread reads it and feeds the UART's receive FIFO.
 */
#ifndef VMM_CONSOLE_H
#define VMM_CONSOLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "confilter.h"
#include "util.h"

struct serial8250;

#define CONSOLE_OUT_BUF		4096
#define CONSOLE_LINE_MAX	512

struct console {
	pthread_mutex_t lock;		/* output buffer and line */
	int out_fd;			/* stdout, not owned */
	int log_fd;			/* --console-log, owned, or -1 */
	char out[CONSOLE_OUT_BUF];
	size_t out_len;
	char line[CONSOLE_LINE_MAX];
	size_t line_len;
	void (*on_line)(void *ctx, const char *line);
	void *ctx;
	int out_errno;			/* first write error on stdout, 0 if none */
	int log_errno;			/* first write error on the log, 0 if none */
	bool out_broken;		/* stop writing stdout after an error */
	bool raw;			/* --raw-console: the guest's bytes as they are, unlimited */
	struct confilter filter;	/* else what the terminal may see, and how fast */

	/* input */
	int in_fd;			/* stdin when it is read, else -1 (not owned) */
	bool in_tty;
	bool termios_saved;
	struct termios saved_termios;
	int wake_fd;			/* eventfd that stops the input thread, owned */
	bool in_started;
	pthread_t in_thread;
	struct serial8250 *uart;	/* input goes there; not owned */
};

/*
 * log_path may be NULL; input: read stdin when it is a terminal, pipe or socket; raw: no filter
 * and no rate limit on the output (confilter.h).
 */
int console__init(struct console *c, const char *log_path, bool input, bool raw,
		  void (*on_line)(void *ctx, const char *line), void *ctx) __must_check;
/* Starts the input thread (a no-op when stdin is not read). */
int console__start(struct console *c, struct serial8250 *uart) __must_check;
/* Stops the input thread, flushes output, restores the terminal. Idempotent. */
void console__stop(struct console *c);
void console__exit(struct console *c);
/* serial8250_ops callbacks; ctx is the struct console. */
void console__tx(void *ctx, uint8_t byte);
void console__tx_idle(void *ctx);
void console__flush(struct console *c);

#endif /* VMM_CONSOLE_H */
