// SPDX-License-Identifier: MIT
/* 8250/16550A UART model (see serial.h). */
#include <errno.h>
#include <string.h>

#include "serial.h"

int serial8250__init(struct serial8250 *s, unsigned int irq, const struct serial8250_ops *ops,
		     void *ctx)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = pthread_mutex_init(&s->lock, NULL);
	if (err)
		return -err;
	s->irq = irq;
	s->ops = ops;
	s->ctx = ctx;
	return 0;
}

void serial8250__exit(struct serial8250 *s)
{
	pthread_mutex_destroy(&s->lock);
}

/*
 * MSR status bits: in loopback the modem outputs come back as inputs, else a connected, ready line.
 */
static uint8_t msr_status(const struct serial8250 *s)
{
	uint8_t m = 0;

	if (!(s->mcr & UART_MCR_LOOP))
		return UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
	if (s->mcr & UART_MCR_RTS)
		m |= UART_MSR_CTS;
	if (s->mcr & UART_MCR_DTR)
		m |= UART_MSR_DSR;
	if (s->mcr & UART_MCR_OUT1)
		m |= UART_MSR_RI;
	if (s->mcr & UART_MCR_OUT2)
		m |= UART_MSR_DCD;
	return m;
}

static uint8_t iir_value(const struct serial8250 *s)
{
	uint8_t fifo = (s->fcr & UART_FCR_ENABLE_FIFO) ? UART_IIR_FIFO : 0;

	if ((s->ier & UART_IER_RLSI) && (s->lsr_err & UART_LSR_OE))
		return fifo | UART_IIR_RLSI;
	if ((s->ier & UART_IER_RDI) && s->rx_count)
		return fifo | UART_IIR_RDI;
	if ((s->ier & UART_IER_THRI) && s->thr_ipending)
		return fifo | UART_IIR_THRI;
	if ((s->ier & UART_IER_MSI) && s->msr_delta)
		return fifo | UART_IIR_MSI;
	return fifo | UART_IIR_NO_INT;
}

/* Drive the line from the interrupt condition; the callback only sees edges. Lock held. */
static void update_irq(struct serial8250 *s)
{
	bool level = !(iir_value(s) & UART_IIR_NO_INT);

	if (level == s->irq_level)
		return;
	s->irq_level = level;
	if (level)
		s->irq_edges++;
	if (s->ops && s->ops->set_irq)
		s->ops->set_irq(s->ctx, s->irq, level);
}

static void rx_push(struct serial8250 *s, uint8_t byte)
{
	if (s->rx_count == SERIAL_RX_SIZE) {
		s->lsr_err |= UART_LSR_OE;
		s->rx_dropped++;
		return;
	}
	s->rx[(s->rx_head + s->rx_count) % SERIAL_RX_SIZE] = byte;
	s->rx_count++;
	s->rx_bytes++;
}

static uint8_t rx_pop(struct serial8250 *s)
{
	uint8_t byte;

	if (!s->rx_count)
		return 0;
	byte = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % SERIAL_RX_SIZE;
	s->rx_count--;
	return byte;
}

/* Modem control changed: record which MSR inputs changed (in loopback they follow MCR). */
static void mcr_write(struct serial8250 *s, uint8_t value)
{
	uint8_t before = msr_status(s), after, changed;

	s->mcr = value & 0x1f;
	after = msr_status(s);
	changed = before ^ after;
	if (changed & UART_MSR_CTS)
		s->msr_delta |= UART_MSR_DCTS;
	if (changed & UART_MSR_DSR)
		s->msr_delta |= UART_MSR_DDSR;
	if ((before & UART_MSR_RI) && !(after & UART_MSR_RI))
		s->msr_delta |= UART_MSR_TERI;
	if (changed & UART_MSR_DCD)
		s->msr_delta |= UART_MSR_DDCD;
}

static void thr_write(struct serial8250 *s, uint8_t value)
{
	if (s->mcr & UART_MCR_LOOP) {
		rx_push(s, value);
	} else {
		s->tx_bytes++;
		if (s->ops && s->ops->tx)
			s->ops->tx(s->ctx, value);
	}
	/*
	 * THR taken: the THRE interrupt drops, then rises again as the byte is sent at once (one
	 * edge per byte, as on hardware, so the driver's interrupt handler runs again for the next
	 * chunk).
	 */
	s->thr_ipending = false;
	update_irq(s);
	s->thr_ipending = true;
}

uint8_t serial8250__read(struct serial8250 *s, unsigned int offset)
{
	uint8_t v = 0xff;

	pthread_mutex_lock(&s->lock);
	switch (offset) {
	case UART_RX:
		v = (s->lcr & UART_LCR_DLAB) ? s->dll : rx_pop(s);
		break;
	case UART_IER:
		v = (s->lcr & UART_LCR_DLAB) ? s->dlm : s->ier;
		break;
	case UART_IIR:
		v = iir_value(s);
		/* Reading IIR while it reports THR empty acknowledges that interrupt. */
		if ((v & UART_IIR_ID) == UART_IIR_THRI)
			s->thr_ipending = false;
		break;
	case UART_LCR:
		v = s->lcr;
		break;
	case UART_MCR:
		v = s->mcr;
		break;
	case UART_LSR:
		v = UART_LSR_THRE | UART_LSR_TEMT | s->lsr_err | (s->rx_count ? UART_LSR_DR : 0);
		s->lsr_err = 0;
		break;
	case UART_MSR:
		v = msr_status(s) | s->msr_delta;
		s->msr_delta = 0;
		break;
	case UART_SCR:
		v = s->scr;
		break;
	}
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return v;
}

void serial8250__write(struct serial8250 *s, unsigned int offset, uint8_t value)
{
	bool idle = false;
	uint8_t old;

	pthread_mutex_lock(&s->lock);
	switch (offset) {
	case UART_TX:
		if (s->lcr & UART_LCR_DLAB)
			s->dll = value;
		else
			thr_write(s, value);
		break;
	case UART_IER:
		if (s->lcr & UART_LCR_DLAB) {
			s->dlm = value;
			break;
		}
		old = s->ier;
		s->ier = value & 0x0f;
		/*
		 * Enabling the THR-empty interrupt while THR is empty (always, here) raises it at
		 * once: Linux's THRE test and its transmit path depend on that.
		 */
		if ((s->ier & UART_IER_THRI) && !(old & UART_IER_THRI))
			s->thr_ipending = true;
		idle = true;
		break;
	case UART_FCR:
		if ((value ^ s->fcr) & UART_FCR_ENABLE_FIFO)
			value |= UART_FCR_CLEAR_RCVR;	/* toggling the FIFO enable clears it */
		if (value & UART_FCR_CLEAR_RCVR) {
			s->rx_count = 0;
			s->rx_head = 0;
		}
		s->fcr = value & (UART_FCR_ENABLE_FIFO | 0xc0);	/* enable + receive trigger level */
		break;
	case UART_LCR:
		s->lcr = value;
		break;
	case UART_MCR:
		mcr_write(s, value);
		break;
	case UART_SCR:
		s->scr = value;
		break;
	default:		/* LSR, MSR: read-only (factory test writes are ignored) */
		break;
	}
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	if (idle && s->ops && s->ops->tx_idle)
		s->ops->tx_idle(s->ctx);
}

size_t serial8250__receive(struct serial8250 *s, const uint8_t *buf, size_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&s->lock);
	if (s->mcr & UART_MCR_LOOP) {
		/*
		 * In loopback the serial input is disconnected: the bytes are lost, as on hardware.
		 */
		n = len;
	} else {
		while (n < len && s->rx_count < SERIAL_RX_SIZE)
			rx_push(s, buf[n++]);
	}
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

void serial8250__io(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write, uint8_t *data,
		    unsigned int size)
{
	struct serial8250 *s = opaque;
	unsigned int i;

	/*
	 * Wider accesses act on consecutive registers, byte by byte (the bus keeps them inside the
	 * range).
	 */
	for (i = 0; i < size; i++) {
		if (is_write)
			serial8250__write(s, offset + i, data[i]);
		else
			data[i] = serial8250__read(s, offset + i);
	}
}
