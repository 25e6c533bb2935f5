// SPDX-License-Identifier: MIT
/* The port-I/O bus (see ioport.h). */
#include <errno.h>
#include <string.h>

#include "ioport.h"

void ioport_bus__init(struct ioport_bus *bus)
{
	memset(bus, 0, sizeof(*bus));
}

int ioport_bus__register(struct ioport_bus *bus, uint16_t base, uint32_t len,
			 ioport_handler_t handler, void *opaque, const char *name)
{
	unsigned int i;

	if (len == 0 || !handler || (uint32_t)base + len > 0x10000)
		return -EINVAL;
	for (i = 0; i < bus->nr; i++) {
		const struct ioport_range *r = &bus->ranges[i];

		if (ranges_overlap(base, len, r->base, r->len))
			return -EEXIST;
	}
	if (bus->nr == IOPORT_MAX_RANGES)
		return -ENOSPC;
	bus->ranges[bus->nr++] = (struct ioport_range){
		.base = base, .len = len, .handler = handler, .opaque = opaque, .name = name,
	};
	return 0;
}

const struct ioport_range *ioport_bus__find(const struct ioport_bus *bus, uint16_t port,
					    unsigned int size)
{
	unsigned int i;

	for (i = 0; i < bus->nr; i++) {
		const struct ioport_range *r = &bus->ranges[i];

		if (range_contains(r->base, r->len, port, size))
			return r;
	}
	return NULL;
}

bool ioport_bus__access(const struct ioport_bus *bus, struct vcpu *vcpu, uint16_t port,
			bool is_write, uint8_t *data, unsigned int size)
{
	const struct ioport_range *r = ioport_bus__find(bus, port, size);

	if (!r) {
		if (!is_write)
			memset(data, 0xff, size);
		return false;
	}
	r->handler(vcpu, r->opaque, (uint16_t)(port - r->base), is_write, data, size);
	return true;
}
