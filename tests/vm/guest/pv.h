/* SPDX-License-Identifier: MIT */
/*
 * Guest user-space access to the vperf device, for test programs that run
 * as root inside a vperf-vmm guest (the KVM selftests' ucall idea): CPUID
 * discovery, the hypercall, guest-physical addresses of our own buffers
 * (/proc/self/pagemap), and reports to the host.  The guest kernel module
 * has its own kernel-side equivalent.
 */
#ifndef VPERF_GUEST_PV_H
#define VPERF_GUEST_PV_H

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <vperf/abi.h>

struct pv {
	uint16_t port;
	uint32_t gsi, features, version;
};

/* 0 and the device's parameters, or -ENODEV with a message on stderr. */
static inline int pv_open(struct pv *pv)
{
	unsigned int a, b, c, d;

	__cpuid(VPERF_CPUID_BASE, a, b, c, d);
	if (b != VPERF_CPUID_SIG_EBX || c != VPERF_CPUID_SIG_ECX || d != VPERF_CPUID_SIG_EDX ||
	    a < VPERF_CPUID_INFO) {
		fprintf(stderr, "no vperf device: CPUID 0x%x has no VPERF-KVM-PV signature\n",
			VPERF_CPUID_BASE);
		return -ENODEV;
	}
	__cpuid(VPERF_CPUID_INFO, a, b, c, d);
	pv->version = a;
	pv->features = b;
	pv->port = (uint16_t)c;
	pv->gsi = d;
	if (iopl(3)) {
		perror("iopl(3) (the hypercall port needs it; run as root)");
		return -errno;
	}
	return 0;
}

static inline int64_t pv_hc(const struct pv *pv, uint32_t op, uint64_t a0, uint64_t a1,
			    uint64_t a2, uint64_t a3)
{
	uint64_t rax = op;

	__asm__ __volatile__("outl %%eax, %%dx"
			     : "+a"(rax)
			     : "d"(pv->port), "b"(a0), "c"(a1), "S"(a2), "D"(a3)
			     : "memory");
	return (int64_t)rax;
}

/* A page-aligned, locked buffer and its guest-physical address. */
static inline void *pv_alloc(size_t len, uint64_t *gpa)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED,
		       -1, 0);
	uint64_t ent;
	int fd;

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)p / 4096 * 8)) != 8 ||
	    !(ent & (1ull << 63)) || !(ent & ((1ull << 55) - 1))) {
		fprintf(stderr, "cannot find the guest-physical address of a buffer "
			"(/proc/self/pagemap needs root)\n");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	*gpa = (ent & ((1ull << 55) - 1)) * 4096;
	return p;
}

/* Physically contiguous? Only the first page is guaranteed: use one page. */

static inline void pv_print(const struct pv *pv, const char *fmt, ...)
{
	static struct vperf_ucall *uc;
	static uint64_t gpa;
	va_list ap;

	if (!uc)
		uc = pv_alloc(4096, &gpa);
	va_start(ap, fmt);
	if (uc) {
		memset(uc, 0, sizeof(*uc));
		uc->cmd = VPERF_UCALL_PRINT;
		vsnprintf(uc->msg, sizeof(uc->msg), fmt, ap);
		pv_hc(pv, VPERF_HC_UCALL, gpa, 0, 0, 0);
	}
	va_end(ap);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
}

static inline uint64_t pv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A consistent copy of the shared page (seq protocol of docs/abi.md). */
static inline int pv_page_read(const volatile struct vperf_vcpu_page *pg, struct vperf_vcpu_page *out)
{
	for (int tries = 0; tries < 1000; tries++) {
		uint32_t s1 = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);

		if (s1 & 1)
			continue;
		memcpy(out, (const void *)pg, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == s1)
			return 0;
	}
	return -EAGAIN;
}

#endif
