/* SPDX-License-Identifier: MIT */
/*
 * portio [N]: a known answer for per-thread exit counts in a guest.  Thread
 * "pio-writer" makes N port writes (default 1000) to port 0x80, where
 * nothing is (each is one VM exit to the VMM); thread "pio-quiet" burns
 * about as long without I/O.  Both wait 300 ms first, so that console
 * output still draining from the shell (port writes from the serial
 * driver's interrupts, charged to whichever thread they interrupt) is done;
 * before they start, the main thread waits until every terminal it writes to
 * (and the console) has sent all it holds (tcdrain), however slow the guest.
 * Needs ioperm (root).  Prints on stdout, after both finished:
 *	writer <tid> <N>
 *	quiet <tid> 0
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

struct worker {
	const char *name;
	unsigned long n;
	pid_t tid;
	int err;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, w->name);
	w->tid = gettid();
	usleep(300000);
	if (w->n && ioperm(0x80, 1, 1)) {
		w->err = errno;
		return NULL;
	}
	for (unsigned long i = 0; i < w->n; i++)
		__asm__ __volatile__("outb %%al, $0x80" : : "a"(0));
	if (!w->n)
		for (volatile unsigned long k = 0; k < 2000000; k++)
			;
	return NULL;
}

/* Wait until the terminals of stdin, stdout, stderr and the console have sent their output. */
static void drain_terminals(void)
{
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	for (int i = 0; i <= 2; i++)
		if (isatty(i))
			tcdrain(i);
	if (fd >= 0) {
		tcdrain(fd);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	struct worker w[2] = { { "pio-writer", 1000, 0, 0 }, { "pio-quiet", 0, 0, 0 } };
	pthread_t th[2];

	if (argc > 1) {
		char *end;

		w[0].n = strtoul(argv[1], &end, 10);
		if (*end || !w[0].n || w[0].n > 100000000) {
			fprintf(stderr, "usage: portio [N]: N port writes, 1..100000000\n");
			return 2;
		}
	}
	drain_terminals();
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, work, &w[i])) {
			fprintf(stderr, "portio: cannot create a thread\n");
			return 1;
		}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	if (w[0].err) {
		fprintf(stderr, "portio: ioperm(0x80): %s (needs root)\n", strerror(w[0].err));
		return 1;
	}
	printf("writer %d %lu\nquiet %d 0\n", (int)w[0].tid, w[0].n, (int)w[1].tid);
	return 0;
}
