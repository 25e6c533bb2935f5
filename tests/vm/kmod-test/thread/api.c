// SPDX-License-Identifier: MIT
/* vperf-kmod-thread's cases: the ioctl and mmap API. */
#include "kmod-thread.h"

void test_api(void)
{
	const char *m = "api";
	struct { struct vperf_thread_start st; uint32_t tail[2]; } big;
	const struct vperf_thread_page *pg;
	struct vperf_thread_start st;
	int rw, ret;
	void *p;

	memset(&st, 0, sizeof(st));
	st.size = VPERF_THREAD_START_SIZE_VER0 - 4;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, m,
	      "size below VER0: EINVAL");
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.flags = 2;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, m,
	      "unknown flags: EINVAL");
	st.flags = 0;
	st.tid = -1;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EINVAL, m,
	      "negative tid: EINVAL");
	st.tid = 0x3fffffff;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == ESRCH, m,
	      "no such tid: ESRCH");
	st.tid = 0;
	check(ioctl(fd, VPERF_IOC_THREAD_READ) == -1 && errno == ENOENT, m,
	      "READ without a context: ENOENT");
	memset(&big, 0, sizeof(big));
	big.st.size = sizeof(big);
	big.tail[1] = 1;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &big) == -1 && errno == E2BIG, m,
	      "larger struct with a nonzero tail: E2BIG");
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == -1 && errno == ENOENT, m,
	      "STOP without a context: ENOENT");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == ENOENT, m, "mmap without a context: ENOENT");

	memset(&big, 0, sizeof(big));
	big.st.size = sizeof(big);
	ret = ioctl(fd, VPERF_IOC_THREAD_START, &big);
	check(ret == 0 && big.st.size == sizeof(big.st), m,
	      "larger struct with a zero tail: accepted, our size back");
	check(threads_param() == 1, m, "parameter threads = 1");
	st.flags = 0;
	check(ioctl(fd, VPERF_IOC_THREAD_START, &st) == -1 && errno == EBUSY, m,
	      "second START: EBUSY");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, VPERF_SAMPLE_PGOFF * 4096);
	check(p == MAP_FAILED && errno == ENOENT, m, "the sample ring of a context that does not sample: ENOENT");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 12288);
	check(p == MAP_FAILED && errno == EINVAL, m, "mmap offset 12288: EINVAL");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 4096);
	check(p == MAP_FAILED && errno == EPERM, m, "writable doorbell mapping: EPERM");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	check(p != MAP_FAILED, m, "doorbell mapping (offset 4096) with a context");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == EINVAL, m, "mmap of 2 pages: EINVAL");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(p == MAP_FAILED && errno == EACCES, m,
	      "PROT_WRITE MAP_SHARED on an O_RDONLY fd: EACCES");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	check(p == MAP_FAILED && errno == EPERM, m, "PROT_WRITE MAP_PRIVATE: EPERM");
	rw = open("/dev/" VPERF_DEV_NAME, O_RDWR);
	if (rw >= 0) {
		/* another file: no context there for this thread */
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rw, 0);
		check(p == MAP_FAILED && errno == ENOENT, m, "mmap on another file: ENOENT");
		check(ioctl(rw, VPERF_IOC_THREAD_START, &st) == -1 && errno == EBUSY, m,
		      "START on another file: EBUSY (one context per thread)");
		close(rw);
	}
	pg = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	check(pg != MAP_FAILED, m, "mmap PROT_READ MAP_SHARED offset 0");
	if (pg == MAP_FAILED)
		return;
	check(mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE) == -1 && errno == EACCES, m,
	      "mprotect PROT_WRITE: EACCES");
	check(pg->size == sizeof(*pg) && pg->version == VPERF_THREAD_PAGE_VERSION &&
	      pg->nr == VPERF_THREAD_NR_CTRS && !(pg->seq & 1), m, "page header");
	test_list_api(m);
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == 0, m, "STOP");
	check(ioctl(fd, VPERF_IOC_THREAD_STOP) == -1 && errno == ENOENT, m, "second STOP: ENOENT");
	check(pg->switches >= 1 && pg->counters[0].value > 0, m,
	      "the page stays readable after STOP, with the last slice");
	report_hc(pg, 1);
	munmap((void *)pg, 4096);
	check(threads_param() == 0, m, "parameter threads = 0 after STOP");
}
