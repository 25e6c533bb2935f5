/* SPDX-License-Identifier: MIT */
/*
 * What of a guest's console output may reach the host's terminal (and the console log).
 *
 * The guest is hostile: its console bytes must not drive the terminal that shows them (an OSC 52
 * sequence writes the clipboard, others retitle windows, remap keys, or hide text) nor flood it.
 *  - Filter, one byte at a time as the UART sends them: printable ASCII, newline, carriage return,
 *    tab and backspace pass; valid UTF-8 passes, except the C1 controls (U+0080..U+009F), the line
 *    and paragraph separators and the bidirectional controls; every other byte (ESC and the other
 *    C0 controls, DEL, invalid UTF-8) is written as "\xNN", so nothing is lost from sight.
 *  - Rate: a token bucket over the filtered bytes (burst CONFILTER_BURST, then CONFILTER_RATE bytes
 *    a second); bytes past it are left out and counted, and a line says how many once output fits
 *    again.
 * --raw-console turns both off (an interactive guest shell that needs the terminal).
 */
#ifndef VMM_CONFILTER_H
#define VMM_CONFILTER_H

#include <stddef.h>
#include <stdint.h>

#define CONFILTER_MAX_OUT	16		/* most one byte can write: 4 escaped bytes */
#define CONFILTER_RATE		(256u << 10)	/* bytes a second, sustained */
#define CONFILTER_BURST		(1u << 20)	/* bytes at once */

struct confilter {
	uint8_t pend[4];	/* an unfinished UTF-8 sequence */
	unsigned int npend;
	unsigned int need;	/* its length once complete */
	double tokens;		/* the rate's bucket, in bytes */
	uint64_t last_ns;	/* when it was last filled */
	uint64_t dropped;	/* bytes left out since the last note */
	uint64_t dropped_total;
};

void confilter__init(struct confilter *f, uint64_t now_ns);
/* One byte from the guest: what the terminal may see of it, into out; returns its length. */
size_t confilter__byte(struct confilter *f, uint8_t b, char out[CONFILTER_MAX_OUT]);
/* An unfinished UTF-8 sequence at the end (escaped), into out; returns its length. */
size_t confilter__end(struct confilter *f, char out[CONFILTER_MAX_OUT]);
/*
 * May len filtered bytes go out at now_ns? 1 yes, 0 no (they are counted as left out). note
 * receives the line to write first when output resumes after a gap ("" when none).
 */
int confilter__admit(struct confilter *f, size_t len, uint64_t now_ns, char *note, size_t note_size);

#endif
