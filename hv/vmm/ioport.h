/* SPDX-License-Identifier: MIT */
/*
 * The port-I/O bus: ranges of ports, each with a handler. Registered before the vCPUs start and
 * read-only afterwards, so lookups take no lock; a handler locks its own device state.
 */
#ifndef VMM_IOPORT_H
#define VMM_IOPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct vcpu;

/*
 * A handler sees one access of `size` bytes (1, 2 or 4) at `offset` = port - base, entirely inside
 * its range. On a read it fills data[0..size) (little-endian, as the guest sees it); on a write it
 * consumes it.
 */
typedef void (*ioport_handler_t)(struct vcpu *vcpu, void *opaque, uint16_t offset, bool is_write,
				 uint8_t *data, unsigned int size);

struct ioport_range {
	uint16_t base;
	uint32_t len;			/* number of ports, 1..65536 - base */
	ioport_handler_t handler;
	void *opaque;			/* the device; the bus does not own it */
	const char *name;		/* static string */
};

#define IOPORT_MAX_RANGES	32

struct ioport_bus {
	unsigned int nr;
	struct ioport_range ranges[IOPORT_MAX_RANGES];
};

void ioport_bus__init(struct ioport_bus *bus);
/*
 * -EINVAL (empty or past port 0xffff), -EEXIST (overlaps a registered range), -ENOSPC (bus full).
 */
int ioport_bus__register(struct ioport_bus *bus, uint16_t base, uint32_t len,
			 ioport_handler_t handler, void *opaque, const char *name) __must_check;
/* The range that holds all of [port, port + size), or NULL. */
const struct ioport_range *ioport_bus__find(const struct ioport_bus *bus, uint16_t port,
					    unsigned int size);
/*
 * One access. Returns true when a handler took it; false for an unknown port (or an access
 * straddling a range end): then a read returns all-ones and a write is dropped, and the caller
 * counts and reports it.
 */
bool ioport_bus__access(const struct ioport_bus *bus, struct vcpu *vcpu, uint16_t port,
			bool is_write, uint8_t *data, unsigned int size);

#endif /* VMM_IOPORT_H */
