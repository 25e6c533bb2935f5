// SPDX-License-Identifier: GPL-2.0
/*
 * The shared-memory channel (docs/abi.md 8): a guest of a stock VMM has no vperf device, but
 * QEMU's ivshmem-plain PCI device (1af4:1110) shares a host file as its BAR2.  The trace rings
 * go there, laid out behind the header of hv/include/vperf/shm.h; the host reads the file, so
 * neither a record nor a flush costs an exit.  trace.c writes into these rings exactly as into
 * the rings it registers with the device; only the setup differs (no TRACE_REGISTER, no
 * TRACE_FLUSH: the host polls).
 *
 * The device table is not exported (no MODULE_DEVICE_TABLE): an ivshmem device does not load
 * this module; the module, loaded, takes the first one it is offered.
 */
#include <linux/cpumask.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <asm/tsc.h>

#include "vperf_guest.h"
#include <vperf/shm.h>

static struct {
	struct pci_dev *pdev;
	void *mem;
	u64 size;
	bool driver;			/* registered */
	struct vperf_trace_ring *ring[VPERF_SHM_MAX_RINGS];	/* by CPU, while laid out */
} shm;

static int shm_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	resource_size_t start, len;
	int ret;

	if (shm.mem)
		return -EBUSY;		/* one channel: the first device */
	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;
	start = pci_resource_start(pdev, 2);
	len = pci_resource_len(pdev, 2);
	if (len < VPERF_SHM_MIN_SIZE || len > VPERF_SHM_MAX_SIZE) {
		dev_err(&pdev->dev, "vperf: BAR2 has %llu bytes; the channel needs 64 KiB to 4 GiB\n",
			(u64)len);
		ret = -EINVAL;
		goto disable;
	}
	ret = pci_request_region(pdev, 2, "vperf_guest");
	if (ret)
		goto disable;
	/* ordinary memory on the host's side (a file): cached, as RAM is */
	shm.mem = memremap(start, len, MEMREMAP_WB);
	if (!shm.mem) {
		ret = -ENOMEM;
		goto release;
	}
	shm.size = len;
	shm.pdev = pdev;
	dev_info(&pdev->dev, "vperf: shared memory channel, %llu KiB at %pa\n", (u64)len >> 10,
		 &start);
	return 0;

release:
	pci_release_region(pdev, 2);
disable:
	pci_disable_device(pdev);
	return ret;
}

static void shm_remove(struct pci_dev *pdev)
{
	if (pdev != shm.pdev)
		return;
	memunmap(shm.mem);
	shm.mem = NULL;
	shm.pdev = NULL;
	pci_release_region(pdev, 2);
	pci_disable_device(pdev);
}

static const struct pci_device_id shm_ids[] = {
	{ PCI_DEVICE(0x1af4, 0x1110) },	/* QEMU ivshmem (ivshmem-plain: BAR2 the memory) */
	{ }
};

static struct pci_driver shm_driver = {
	.name = "vperf_shm",
	.id_table = shm_ids,
	.probe = shm_probe,
	.remove = shm_remove,
};

int vperf_shm_init(void)
{
	int ret = pci_register_driver(&shm_driver);

	if (ret)
		return ret;
	shm.driver = true;
	if (!shm.mem) {
		/* probing is synchronous for devices present at registration */
		vperf_shm_exit();
		return -ENODEV;
	}
	return 0;
}

void vperf_shm_exit(void)
{
	if (shm.driver)
		pci_unregister_driver(&shm_driver);
	shm.driver = false;
}

bool vperf_shm_present(void)
{
	return shm.mem != NULL;
}

/*
 * Lay the region out: a ring per possible CPU of up to want bytes of data (a power of two),
 * smaller where the region does not hold that many.  Returns the data size, or 0 (too many
 * CPUs for the region, or no region).  The header's state is EMPTY while it is written and
 * READY, with release order, once it is whole.
 */
u64 vperf_shm_layout(u64 want)
{
	struct vperf_shm_header *h = shm.mem;
	u64 hdr = ALIGN((u64)sizeof(*h), VPERF_SHM_ALIGN), per, ds, gen;
	unsigned int cpu, n = 0;

	if (!h || nr_cpu_ids > VPERF_SHM_MAX_RINGS)
		return 0;
	/* a ring is its 64-byte header and 2^k of data: one page more than the data, aligned */
	per = (shm.size - hdr) / nr_cpu_ids;
	if (per < VPERF_SHM_MIN_DATA + VPERF_SHM_ALIGN)
		return 0;
	ds = rounddown_pow_of_two(per - VPERF_SHM_ALIGN);
	ds = min3(ds, (u64)VPERF_SHM_MAX_DATA, rounddown_pow_of_two(max(want, VPERF_SHM_MIN_DATA)));
	gen = READ_ONCE(h->magic) == VPERF_SHM_MAGIC ? READ_ONCE(h->generation) + 1 : 1;
	WRITE_ONCE(h->state, VPERF_SHM_EMPTY);
	smp_wmb();		/* EMPTY before anything the host might read as the old layout */
	memset(h, 0, sizeof(*h));
	for_each_possible_cpu(cpu) {
		struct vperf_trace_ring *r;
		u64 off = hdr + (u64)n * (ds + VPERF_SHM_ALIGN);

		h->ring[n] = (struct vperf_shm_ring_desc){ .offset = off, .data_size = ds,
							   .cpu = cpu };
		r = (struct vperf_trace_ring *)((unsigned char *)shm.mem + off);
		memset(r, 0, sizeof(*r));
		r->size = sizeof(*r);
		r->version = VPERF_TRACE_RING_V2;
		r->data_size = ds;
		shm.ring[cpu] = r;
		n++;
	}
	h->magic = VPERF_SHM_MAGIC;
	h->size = sizeof(*h);
	h->version = VPERF_SHM_VERSION;
	h->total_size = shm.size;
	h->nr_rings = n;
	h->generation = gen;
	h->tsc_khz = tsc_khz;
	h->features = VPERF_SHM_FEATURES;
	smp_store_release(&h->state, VPERF_SHM_READY);
	/* whole now: checked as the host checks it (a bug here must not reach the host) */
	if (vperf_shm_check_layout(h, shm.size) != VPERF_SHM_OK) {
		WRITE_ONCE(h->state, VPERF_SHM_STOPPED);
		pr_err(VPERF_PR_PREFIX "the shared memory layout fails its own check\n");
		return 0;
	}
	return ds;
}

/* CPU cpu's ring of the layout, or NULL. */
struct vperf_trace_ring *vperf_shm_ring(unsigned int cpu)
{
	return shm.mem && cpu < VPERF_SHM_MAX_RINGS ? shm.ring[cpu] : NULL;
}

/* Tracing stopped: the host drains what is left and expects nothing more. */
void vperf_shm_stop(void)
{
	struct vperf_shm_header *h = shm.mem;

	if (h)
		smp_store_release(&h->state, VPERF_SHM_STOPPED);
	memset(shm.ring, 0, sizeof(shm.ring));
}
