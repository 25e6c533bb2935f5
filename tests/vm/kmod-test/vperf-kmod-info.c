/* SPDX-License-Identifier: MIT */
/*
 * vperf-kmod-info [NR_CPUS]: the L2 test of /dev/vperf (vperf_guest.ko).
 * Asks VPERF_IOC_INFO and checks its answer: ABI version 1, the struct's
 * size handshake, one registered page per online CPU (NR_CPUS, default
 * sysconf's count), too small a size refused with EINVAL, an unknown ioctl
 * with ENOTTY.  Prints "kmod-info: ..." lines; exit 0 when all hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vperf_guest_uapi.h"

static int fails;

static void check(int ok, const char *what)
{
	printf("kmod-info: %s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		fails++;
}

int main(int argc, char **argv)
{
	long ncpu = argc > 1 ? strtol(argv[1], NULL, 0) : sysconf(_SC_NPROCESSORS_ONLN);
	struct { struct vperf_info info; unsigned char tail[16]; } big;
	struct vperf_info info;
	int fd, ret;

	fd = open("/dev/" VPERF_DEV_NAME, O_RDONLY);
	if (fd < 0) {
		printf("kmod-info: FAIL open /dev/%s: %s\n", VPERF_DEV_NAME, strerror(errno));
		return 1;
	}

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ret = ioctl(fd, VPERF_IOC_INFO, &info);
	if (ret) {
		printf("kmod-info: FAIL VPERF_IOC_INFO: %s\n", strerror(errno));
		return 1;
	}
	printf("kmod-info: size %u info_version %u abi %u features 0x%x port 0x%x gsi %u cpus %u pages %u irq %d irq_count %llu\n",
	       info.size, info.info_version, info.abi_version, info.features, info.port, info.gsi,
	       info.nr_cpus, info.nr_pages, info.irq, (unsigned long long)info.irq_count);
	check(info.size == sizeof(info), "size handshake");
	check(info.info_version == VPERF_INFO_VERSION, "info_version");
	check(info.abi_version == 1, "ABI version 1");
	check(info.port != 0 && info.port <= 0xffff, "port");
	check(info.nr_cpus == ncpu, "nr_cpus = online CPUs");
	check(info.nr_pages == info.nr_cpus, "one registered page per online CPU");
	check(info.irq > 0, "the VPF0001 device is bound and has an IRQ");

	/* A caller with a bigger (newer) struct gets our size back; its tail is untouched. */
	memset(&big, 0xa5, sizeof(big));
	big.info.size = sizeof(big);
	ret = ioctl(fd, VPERF_IOC_INFO, &big);
	check(ret == 0 && big.info.size == sizeof(info) && big.tail[0] == 0xa5 && big.tail[15] == 0xa5,
	      "larger caller struct: module fills its own size only");

	/* Too small: EINVAL. */
	memset(&info, 0, sizeof(info));
	info.size = VPERF_INFO_SIZE_VER0 - 4;
	ret = ioctl(fd, VPERF_IOC_INFO, &info);
	check(ret == -1 && errno == EINVAL, "size below VER0 refused with EINVAL");

	/* Unknown number: ENOTTY. */
	ret = ioctl(fd, _IOR(VPERF_IOC_MAGIC, 0x7f, struct vperf_info), &info);
	check(ret == -1 && errno == ENOTTY, "unknown ioctl refused with ENOTTY");

	close(fd);
	printf("kmod-info: %s\n", fails ? "FAILED" : "PASSED");
	return fails ? 1 : 0;
}
