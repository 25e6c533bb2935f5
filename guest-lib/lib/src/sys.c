// SPDX-License-Identifier: MIT
/*
 * The system-call seams.  They live in their own file so that unit tests
 * can replace them with -Wl,--wrap=<name>: vperf__perf_event_open for the
 * perf backend, vperf__pv_* for the pv backend's and the markers'
 * /dev/vperf (and where it is: vperf__pv_device()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "internal.h"
#include "vperf_guest_uapi.h"

int vperf__perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			   int group_fd, unsigned long flags)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

const char *vperf__pv_device(void)
{
	const char *dev = secure_getenv("VPERF_PV_DEVICE");

	return dev && *dev ? dev : "/dev/" VPERF_DEV_NAME;
}

/* Read-write where allowed (a sample ring maps writable), else read-only (counting needs no more). */
int vperf__pv_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
		fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int vperf__pv_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

int vperf__pv_mmap(int fd, size_t len, void **addr)
{
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return -errno;
	*addr = m;
	return 0;
}

int vperf__pv_mmap_doorbell(int fd, void **addr)
{
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, VPERF_DOORBELL_PGOFF * 4096L);

	if (m == MAP_FAILED)
		return -errno;
	*addr = m;
	return 0;
}

int vperf__pv_mmap_ring(int fd, size_t len, void **addr)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, VPERF_SAMPLE_PGOFF * 4096L);

	if (m == MAP_FAILED)
		return -errno;
	*addr = m;
	return 0;
}

int vperf__pv_mmap_mark(int fd, size_t len, void **addr)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, VPERF_MARK_PGOFF * 4096L);

	if (m == MAP_FAILED)
		return -errno;
	*addr = m;
	return 0;
}

void vperf__pv_munmap(void *addr, size_t len)
{
	munmap(addr, len);
}

void vperf__pv_close(int fd)
{
	close(fd);
}
