/* SPDX-License-Identifier: MIT */
/*
 * An 8250/16550A UART, enough for Linux's 8250 driver: divisor latch, scratch, FIFO control (IIR
 * reports the FIFO), MCR loopback reflected in MSR, LSR THRE/TEMT/DR/OE, THR-empty, receive,
 * line-status and modem-status interrupts on one IRQ line raised and lowered on the edges of the
 * interrupt condition.
 *
 * Transmission is instant: THR is always empty again by the time the guest reads LSR. The host side
 * (console.c) receives transmitted bytes through ops->tx and pushes input with
 * serial8250__receive().
 */
#ifndef VMM_SERIAL_H
#define VMM_SERIAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define SERIAL_COM1_BASE	0x3f8
#define SERIAL_COM1_IRQ		4
#define SERIAL_NR_REGS		8
#define SERIAL_RX_SIZE		64

/* Register offsets and bits (names as in Linux's serial_reg.h). */
#define UART_RX		0	/* in: receive buffer (DLAB=0) */
#define UART_TX		0	/* out: transmit holding (DLAB=0) */
#define UART_DLL	0	/* divisor latch low (DLAB=1) */
#define UART_IER	1
#define UART_DLM	1	/* divisor latch high (DLAB=1) */
#define UART_IIR	2	/* in */
#define UART_FCR	2	/* out */
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_MSR	6
#define UART_SCR	7

#define UART_IER_RDI	0x01
#define UART_IER_THRI	0x02
#define UART_IER_RLSI	0x04
#define UART_IER_MSI	0x08

#define UART_IIR_NO_INT	0x01
#define UART_IIR_MSI	0x00
#define UART_IIR_THRI	0x02
#define UART_IIR_RDI	0x04
#define UART_IIR_RLSI	0x06
#define UART_IIR_ID	0x0e
#define UART_IIR_FIFO	0xc0	/* FIFOs enabled (16550A) */

#define UART_FCR_ENABLE_FIFO	0x01
#define UART_FCR_CLEAR_RCVR	0x02
#define UART_FCR_CLEAR_XMIT	0x04

#define UART_LCR_DLAB	0x80

#define UART_MCR_DTR	0x01
#define UART_MCR_RTS	0x02
#define UART_MCR_OUT1	0x04
#define UART_MCR_OUT2	0x08
#define UART_MCR_LOOP	0x10

#define UART_LSR_DR	0x01
#define UART_LSR_OE	0x02
#define UART_LSR_THRE	0x20
#define UART_LSR_TEMT	0x40

#define UART_MSR_DCTS	0x01
#define UART_MSR_DDSR	0x02
#define UART_MSR_TERI	0x04
#define UART_MSR_DDCD	0x08
#define UART_MSR_CTS	0x10
#define UART_MSR_DSR	0x20
#define UART_MSR_RI	0x40
#define UART_MSR_DCD	0x80

struct vcpu;

struct serial8250_ops {
	/* Drive the interrupt line (level 1 or 0); only called when the level changes. */
	void (*set_irq)(void *ctx, unsigned int irq, int level);
	/* One transmitted byte (not called in loopback mode). */
	void (*tx)(void *ctx, uint8_t byte);
	/* The driver ended a burst (it wrote IER): a good moment to flush buffered output. */
	void (*tx_idle)(void *ctx);
};

struct serial8250 {
	pthread_mutex_t lock;		/* vCPU threads and the console input thread */
	unsigned int irq;
	const struct serial8250_ops *ops;
	void *ctx;

	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	uint8_t lsr_err;		/* sticky LSR error bits (OE), cleared by reading LSR */
	uint8_t msr_delta;		/* MSR delta bits, cleared by reading MSR */
	bool thr_ipending;		/* THR-empty interrupt pending */
	bool irq_level;			/* current level of the line */
	uint8_t rx[SERIAL_RX_SIZE];
	unsigned int rx_head, rx_count;

	uint64_t tx_bytes, rx_bytes, rx_dropped, irq_edges;
};

int serial8250__init(struct serial8250 *s, unsigned int irq, const struct serial8250_ops *ops,
		     void *ctx) __must_check;
void serial8250__exit(struct serial8250 *s);
/* A register access at offset 0..7 (the I/O port handler calls this). */
uint8_t serial8250__read(struct serial8250 *s, unsigned int offset);
void serial8250__write(struct serial8250 *s, unsigned int offset, uint8_t value);
/* Host input: queues up to len bytes, returns how many fit (0 when the receive FIFO is full). */
size_t serial8250__receive(struct serial8250 *s, const uint8_t *buf, size_t len);
/* ioport_handler_t for the UART's 8 ports; opaque is the struct serial8250. */
void serial8250__io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		    unsigned int size);

#endif /* VMM_SERIAL_H */
