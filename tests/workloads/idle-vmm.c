// SPDX-License-Identifier: MIT
/*
 * idle-vmm: a KVM VMM whose vCPUs never run, for `vperf kvm record`'s tests on a host whose KVM
 * cannot boot a guest (tests/integration/kvm_tests.py).  It makes a real VM and N real vCPUs on
 * /dev/kvm, one thread per vCPU named as QEMU names them ("CPU N/KVM"), prints "pid P vm FD" and
 * each "vcpu N tid T", then waits SECONDS and exits 0.
 *
 * With --shm FILE it also plays the guest of the shared-memory channel (docs/abi.md 8): it lays
 * FILE out with one ring per vCPU (hv/include/vperf/shm.h, RING bytes of data each) and each
 * vCPU thread writes MARKERS marker records named "tick" (values 0, 1, ...) into its ring, as
 * vperf_guest.ko would: a record that does not fit is dropped and counted in the ring's lost,
 * never overwritten.  The vCPUs never ran, so KVM's TSC offset is 0 and the host's TSC is the
 * guest's: each record's time is rdtsc.  It prints "cpu N written W lost L" per ring, and with
 * --paced it waits for room instead of dropping (a ring the host drains as the guest writes).
 *
 * Usage: idle-vmm [--vcpus N] [--seconds S] [--shm FILE] [--ring BYTES] [--markers M] [--paced]
 * Exit: 0; 2 bad arguments; 77 no usable /dev/kvm (with the reason).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <vperf/shm.h>
#include <vperf/trace_rec.h>

#define MAX_VCPUS	8
#define REGION		(1u << 20)

static struct {
	int nr;
	double seconds;
	const char *shm;
	unsigned long ring;
	unsigned long markers;
	int paced;
	unsigned char *mem;
	struct vperf_shm_header *hdr;
} g = { .nr = 2, .seconds = 2, .ring = 65536, .markers = 0 };

struct vcpu {
	int index, fd;
	pid_t tid;
	pthread_t thread;
	unsigned long written, lost;
	atomic_int ready;
};

static struct vcpu vcpus[MAX_VCPUS];
static atomic_int done;		/* main's: the vCPU threads live until then, as a VMM's do */

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* The guest's producer: one record at head, or dropped and counted when it does not fit. */
static void produce(struct vcpu *v)
{
	struct vperf_shm_ring_desc *d = &g.hdr->ring[v->index];
	struct vperf_trace_ring *r = (struct vperf_trace_ring *)(g.mem + d->offset);
	unsigned char *data = (unsigned char *)(r + 1);
	unsigned char rec[VPERF_MARK_REC_MAX] __attribute__((aligned(8)));

	for (unsigned long i = 0; i < g.markers; i++) {
		uint32_t size = vperf_mark_rec_fill(rec, "tick", 4, i, VPERF_TRACE_MARK_INSTANT,
						    rdtsc());
		struct vperf_trace_mark *m = (struct vperf_trace_mark *)rec;
		uint64_t head = r->head, tail;

		m->h.cpu = (uint16_t)v->index;
		m->h.pid = (uint32_t)getpid();
		m->h.tid = (uint32_t)v->tid;
		for (;;) {
			tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
			if (head + size - tail <= d->data_size || !g.paced)
				break;
			usleep(1000);
		}
		if (head + size - tail > d->data_size) {
			__atomic_store_n(&r->lost, r->lost + 1, __ATOMIC_RELEASE);
			v->lost++;
			continue;
		}
		vperf_ring_copy_in(data, d->data_size, head, rec, size);
		__atomic_store_n(&r->head, head + size, __ATOMIC_RELEASE);
		v->written++;
	}
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	char name[16];

	snprintf(name, sizeof(name), "CPU %d/KVM", v->index);
	prctl(PR_SET_NAME, name);
	v->tid = (pid_t)syscall(SYS_gettid);
	atomic_store(&v->ready, 1);
	if (g.mem) {
		while (__atomic_load_n(&g.hdr->state, __ATOMIC_ACQUIRE) != VPERF_SHM_READY)
			usleep(1000);
		produce(v);
	}
	while (!atomic_load(&done))
		usleep(1000);
	return NULL;
}

/* The guest's layout: header, then one ring per vCPU, 4 KiB-aligned. */
static int lay_out(void)
{
	int fd = open(g.shm, O_RDWR | O_CREAT, 0600);
	uint64_t off = (sizeof(struct vperf_shm_header) + VPERF_SHM_ALIGN - 1) &
		       ~(uint64_t)(VPERF_SHM_ALIGN - 1);

	if (fd < 0 || ftruncate(fd, REGION)) {
		fprintf(stderr, "idle-vmm: %s: %s\n", g.shm, strerror(errno));
		return -1;
	}
	g.mem = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (g.mem == MAP_FAILED) {
		fprintf(stderr, "idle-vmm: mmap %s: %s\n", g.shm, strerror(errno));
		return -1;
	}
	memset(g.mem, 0, REGION);
	g.hdr = (struct vperf_shm_header *)g.mem;
	g.hdr->magic = VPERF_SHM_MAGIC;
	g.hdr->size = sizeof(*g.hdr);
	g.hdr->version = VPERF_SHM_VERSION;
	g.hdr->total_size = REGION;
	g.hdr->nr_rings = (uint32_t)g.nr;
	g.hdr->generation = (uint64_t)time(NULL);
	for (int i = 0; i < g.nr; i++) {
		struct vperf_trace_ring *r = (struct vperf_trace_ring *)(g.mem + off);

		if (off + sizeof(*r) + g.ring > REGION) {
			fprintf(stderr, "idle-vmm: %d rings of %lu bytes do not fit in 1 MiB\n", g.nr,
				g.ring);
			return -1;
		}
		g.hdr->ring[i] = (struct vperf_shm_ring_desc){ .offset = off, .data_size = g.ring,
							       .cpu = (uint32_t)i };
		r->size = sizeof(*r);
		r->version = VPERF_TRACE_RING_V2;
		r->data_size = g.ring;
		off = (off + sizeof(*r) + g.ring + VPERF_SHM_ALIGN - 1) &
		      ~(uint64_t)(VPERF_SHM_ALIGN - 1);
	}
	if (vperf_shm_check_layout(g.hdr, REGION) != VPERF_SHM_OK) {
		fprintf(stderr, "idle-vmm: the layout fails its own check\n");
		return -1;
	}
	__atomic_store_n(&g.hdr->state, VPERF_SHM_READY, __ATOMIC_RELEASE);
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec ts;
	int kvm, vm;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--paced")) {
			g.paced = 1;
			continue;
		}
		if (!v)
			goto usage;
		if (!strcmp(a, "--vcpus"))
			g.nr = atoi(v);
		else if (!strcmp(a, "--seconds"))
			g.seconds = atof(v);
		else if (!strcmp(a, "--shm"))
			g.shm = v;
		else if (!strcmp(a, "--ring"))
			g.ring = strtoul(v, NULL, 0);
		else if (!strcmp(a, "--markers"))
			g.markers = strtoul(v, NULL, 0);
		else
			goto usage;
		i++;
	}
	if (g.nr < 1 || g.nr > MAX_VCPUS || g.seconds < 0 || !vperf_shm_pow2(g.ring) ||
	    g.ring < VPERF_SHM_MIN_DATA)
		goto usage;
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		printf("SKIP: /dev/kvm: %s\n", strerror(errno));
		return 77;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		printf("SKIP: KVM_CREATE_VM: %s\n", strerror(errno));
		return 77;
	}
	for (int i = 0; i < g.nr; i++) {
		vcpus[i].index = i;
		vcpus[i].fd = ioctl(vm, KVM_CREATE_VCPU, i);
		if (vcpus[i].fd < 0) {
			printf("SKIP: KVM_CREATE_VCPU %d: %s\n", i, strerror(errno));
			return 77;
		}
	}
	if (g.shm && lay_out())
		return 1;
	/* the vCPU threads wait for the layout; the recorder may attach first */
	if (g.mem)
		g.hdr->state = VPERF_SHM_EMPTY;
	for (int i = 0; i < g.nr; i++)
		if (pthread_create(&vcpus[i].thread, NULL, vcpu_thread, &vcpus[i]))
			return 1;
	for (int i = 0; i < g.nr; i++)
		while (!atomic_load(&vcpus[i].ready))
			usleep(1000);
	printf("pid %d vm %d\n", (int)getpid(), vm);
	for (int i = 0; i < g.nr; i++)
		printf("vcpu %d tid %d\n", i, (int)vcpus[i].tid);
	fflush(stdout);
	/* stdin: a line (or its end) says "go" to the producers, so that a recorder attaches first */
	if (g.mem) {
		char line[16];

		if (!fgets(line, sizeof(line), stdin))
			line[0] = '\0';
		__atomic_store_n(&g.hdr->state, VPERF_SHM_READY, __ATOMIC_RELEASE);
	}
	ts.tv_sec = (time_t)g.seconds;
	ts.tv_nsec = (long)((g.seconds - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&done, 1);
	for (int i = 0; i < g.nr; i++)
		pthread_join(vcpus[i].thread, NULL);
	for (int i = 0; g.mem && i < g.nr; i++)
		printf("cpu %d written %lu lost %lu\n", i, vcpus[i].written, vcpus[i].lost);
	fflush(stdout);
	return 0;
usage:
	fprintf(stderr, "usage: idle-vmm [--vcpus 1..8] [--seconds S] [--shm FILE] [--ring 2^k>=4096] "
		"[--markers M] [--paced]\n");
	return 2;
}
