// SPDX-License-Identifier: MIT
/*
 * A running KVM VMM from outside (kvmvmm.h): its descriptors, its vCPU threads, their TSC offsets.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvmvmm.h"
#include "why.h"

/*
 * How VMMs name their vCPU threads: QEMU "CPU 0/KVM", Firecracker "fc_vcpu 0", Cloud Hypervisor
 * and vperf-vmm "vcpu0", kvmtool "kvm-vcpu-0", crosvm "crosvm_vcpu0".  A name must be the whole
 * pattern with a decimal index, nothing before or after.
 */
static const struct {
	const char *prefix, *suffix, *who;
} names[] = {
	{ "CPU ", "/KVM", "QEMU: CPU N/KVM" },
	{ "fc_vcpu ", "", "Firecracker: fc_vcpu N" },
	{ "vcpu", "", "Cloud Hypervisor, vperf-vmm: vcpuN" },
	{ "kvm-vcpu-", "", "kvmtool: kvm-vcpu-N" },
	{ "crosvm_vcpu", "", "crosvm: crosvm_vcpuN" },
};

/* The index a thread name gives under pattern k, or -1. */
static long name_index(const char *comm, size_t k)
{
	size_t pl = strlen(names[k].prefix), sl = strlen(names[k].suffix), n = strlen(comm), i;
	long v = 0;

	if (n <= pl + sl || strncmp(comm, names[k].prefix, pl) ||
	    strcmp(comm + n - sl, names[k].suffix))
		return -1;
	for (i = pl; i < n - sl; i++) {
		if (!isdigit((unsigned char)comm[i]) || (i == pl && comm[i] == '0' && i + 1 < n - sl))
			return -1;
		v = v * 10 + (comm[i] - '0');
		if (v >= VPERF_KVM_MAX_VCPUS)
			return -1;
	}
	return v;
}

/* A small file's first line, without its newline: 0 or -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct vperf_kvm_vcpu *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The descriptors: the VMs and the vCPUs. */
static int find_fds(struct vperf_kvm_vmm *v, const char *proc, char *why, size_t why_len)
{
	char path[PATH_MAX], link[128];
	struct dirent *de;
	unsigned int cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/fd", proc, (int)v->pid);
	d = opendir(path);
	if (!d) {
		int err = -errno;

		if (err == -ENOENT)
			vperf_why(why, why_len, 0, "no process %d", (int)v->pid);
		else
			vperf_why(why, why_len, 0, "cannot read the descriptors of process %d (%s): %s",
			    (int)v->pid, path, strerror(-err));
		if (err == -EACCES)
			snprintf(why + strlen(why), why_len - strlen(why), " (it is another user's: "
				 "run as root or as its user)");
		return err == -ENOENT ? -ESRCH : err;
	}
	v->vm_fd = -1;
	while ((de = readdir(d))) {
		char lpath[PATH_MAX + 256];
		ssize_t n;
		long fd;
		unsigned int idx;
		char tail;

		if (!all_digits(de->d_name))
			continue;
		fd = strtol(de->d_name, NULL, 10);
		if (fd < 0 || fd > INT_MAX)
			continue;
		snprintf(lpath, sizeof(lpath), "%s/%s", path, de->d_name);
		n = readlink(lpath, link, sizeof(link) - 1);
		if (n < 0)
			continue;	/* closed meanwhile */
		link[n] = '\0';
		if (!strcmp(link, "anon_inode:kvm-vm")) {
			if (v->vm_fd < 0 || fd < v->vm_fd)
				v->vm_fd = (int)fd;
			v->nr_vms++;
		} else if (sscanf(link, "anon_inode:kvm-vcpu:%u%c", &idx, &tail) == 1 &&
			   idx < VPERF_KVM_MAX_VCPUS) {
			if (v->nr_vcpus == VPERF_KVM_MAX_VCPUS) {
				closedir(d);
				vperf_why(why, why_len, 0, "process %d holds more than %d vCPU descriptors",
				    (int)v->pid, VPERF_KVM_MAX_VCPUS);
				return -E2BIG;
			}
			if (v->nr_vcpus == cap) {
				unsigned int nc = cap ? cap * 2 : 8;
				struct vperf_kvm_vcpu *p = realloc(v->vcpus, nc * sizeof(*p));

				if (!p) {
					closedir(d);
					vperf_why(why, why_len, 0, "out of memory");
					return -ENOMEM;
				}
				v->vcpus = p;
				cap = nc;
			}
			v->vcpus[v->nr_vcpus++] = (struct vperf_kvm_vcpu){ .index = idx, .fd = (int)fd };
		}
	}
	closedir(d);
	if (v->vm_fd < 0) {
		vperf_why(why, why_len, 0, "process %d (%s) is not a KVM VMM: none of its descriptors in %s "
		    "is a KVM VM (anon_inode:kvm-vm)", (int)v->pid, v->comm, path);
		return -ENODEV;
	}
	if (!v->nr_vcpus) {
		vperf_why(why, why_len, 0, "process %d (%s) holds a KVM VM but no vCPU (anon_inode:kvm-vcpu:N) "
		    "yet: is it still starting?", (int)v->pid, v->comm);
		return -ENODEV;
	}
	qsort(v->vcpus, v->nr_vcpus, sizeof(*v->vcpus), cmp_vcpu);
	for (unsigned int i = 1; i < v->nr_vcpus; i++)
		if (v->vcpus[i].index == v->vcpus[i - 1].index) {
			vperf_why(why, why_len, 0, "process %d holds vCPU %u twice: more than one VM is not "
			    "supported", (int)v->pid, v->vcpus[i].index);
			return -ENOTSUP;
		}
	return 0;
}

/* The threads, and the vCPU each runs where the names say so. */
static int find_threads(struct vperf_kvm_vmm *v, const char *proc, char *why, size_t why_len)
{
	char path[PATH_MAX];
	struct dirent *de;
	size_t cap = 0, best = SIZE_MAX;
	unsigned int hits[sizeof(names) / sizeof(names[0])] = { 0 };
	char (*comms)[64];
	DIR *d;

	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)v->pid);
	d = opendir(path);
	if (!d) {
		vperf_why(why, why_len, 0, "cannot read the threads of process %d (%s): %s", (int)v->pid, path,
		    strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		long tid;

		if (!all_digits(de->d_name))
			continue;
		tid = strtol(de->d_name, NULL, 10);
		if (tid <= 0 || tid > INT_MAX)
			continue;
		if (v->nr_threads == cap) {
			size_t nc = cap ? cap * 2 : 16;
			pid_t *p = realloc(v->threads, nc * sizeof(*p));

			if (!p) {
				closedir(d);
				vperf_why(why, why_len, 0, "out of memory");
				return -ENOMEM;
			}
			v->threads = p;
			cap = nc;
		}
		v->threads[v->nr_threads++] = (pid_t)tid;
	}
	closedir(d);
	qsort(v->threads, v->nr_threads, sizeof(*v->threads), cmp_pid);
	/* each thread's name, once; then the scheme that names the most vCPUs wins */
	comms = calloc(v->nr_threads ? v->nr_threads : 1, sizeof(*comms));
	if (!comms)
		return vperf_why(why, why_len, -ENOMEM, "out of memory");
	for (size_t t = 0; t < v->nr_threads; t++) {
		snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc, (int)v->pid,
			 (int)v->threads[t]);
		if (read_line(path, comms[t], sizeof(comms[t])))
			comms[t][0] = '\0';	/* gone meanwhile */
	}
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		for (size_t t = 0; t < v->nr_threads; t++) {
			long idx = name_index(comms[t], k);

			for (unsigned int i = 0; idx >= 0 && i < v->nr_vcpus; i++)
				hits[k] += v->vcpus[i].index == (unsigned int)idx;
		}
		if (hits[k] && (best == SIZE_MAX || hits[k] > hits[best]))
			best = k;
	}
	for (size_t t = 0; best != SIZE_MAX && t < v->nr_threads; t++) {
		long idx = name_index(comms[t], best);

		for (unsigned int i = 0; idx >= 0 && i < v->nr_vcpus; i++)
			if (v->vcpus[i].index == (unsigned int)idx)
				/* two threads with one vCPU's name: trust neither */
				v->vcpus[i].tid = v->vcpus[i].tid ? -1 : v->threads[t];
	}
	free(comms);
	if (best == SIZE_MAX)
		return 0;
	for (unsigned int i = 0; i < v->nr_vcpus; i++)
		if (v->vcpus[i].tid < 0)
			v->vcpus[i].tid = 0;
	v->names = names[best].who;
	return 0;
}

int vperf_kvm__find(pid_t pid, const char *proc, struct vperf_kvm_vmm *out, char *why,
		    size_t why_len)
{
	char path[PATH_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	out->pid = pid;
	out->vm_fd = -1;
	if (!proc)
		proc = "/proc";
	if (pid <= 0) {
		vperf_why(why, why_len, 0, "%d is not a process id", (int)pid);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/%d/comm", proc, (int)pid);
	err = read_line(path, out->comm, sizeof(out->comm));
	if (err) {
		if (err == -ENOENT)
			vperf_why(why, why_len, 0, "no process %d", (int)pid);
		else
			vperf_why(why, why_len, 0, "cannot read %s: %s", path, strerror(-err));
		return err == -ENOENT ? -ESRCH : err;
	}
	err = find_fds(out, proc, why, why_len);
	if (!err)
		err = find_threads(out, proc, why, why_len);
	if (err)
		vperf_kvm__free(out);
	return err;
}

void vperf_kvm__free(struct vperf_kvm_vmm *v)
{
	free(v->vcpus);
	free(v->threads);
	v->vcpus = NULL;
	v->threads = NULL;
	v->nr_vcpus = 0;
	v->nr_threads = 0;
}

const struct vperf_kvm_vcpu *vperf_kvm__vcpu_of(const struct vperf_kvm_vmm *v, pid_t tid)
{
	for (unsigned int i = 0; i < v->nr_vcpus; i++)
		if (v->vcpus[i].tid == tid && tid > 0)
			return &v->vcpus[i];
	return NULL;
}

/* A decimal number from a debugfs file, the whole line. */
static int read_num(const char *path, bool is_signed, int64_t *s, uint64_t *u)
{
	char buf[64], *end;
	int err = read_line(path, buf, sizeof(buf));

	if (err)
		return err;
	errno = 0;
	if (is_signed)
		*s = strtoll(buf, &end, 10);
	else
		*u = strtoull(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

int vperf_kvm__tsc_offset(const struct vperf_kvm_vmm *v, unsigned int index, const char *debugfs,
			  int64_t *offset, uint64_t *ratio, unsigned int *frac_bits, char *why,
			  size_t why_len)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	uint64_t bits = 0;
	int err;

	if (!debugfs)
		debugfs = "/sys/kernel/debug";
	*ratio = 0;
	*frac_bits = 0;
	snprintf(dir, sizeof(dir), "%s/kvm/%d-%d/vcpu%u", debugfs, (int)v->pid, v->vm_fd, index);
	snprintf(path, sizeof(path), "%s/tsc-offset", dir);
	err = read_num(path, true, offset, NULL);
	if (err) {
		char kvm[PATH_MAX];

		snprintf(kvm, sizeof(kvm), "%s/kvm", debugfs);
		vperf_why(why, why_len, 0, "cannot read vCPU %u's TSC offset from %s: %s%s", index, path,
		    strerror(-err), access(kvm, F_OK) ? " (debugfs is not mounted there, or not "
		    "readable: root and `mount -t debugfs none /sys/kernel/debug` are needed)" : "");
		return err;
	}
	snprintf(path, sizeof(path), "%s/tsc-scaling-ratio", dir);
	if (!read_num(path, false, NULL, ratio)) {
		snprintf(path, sizeof(path), "%s/tsc-scaling-ratio-frac-bits", dir);
		if (!read_num(path, false, NULL, &bits) && bits < 64 && *ratio != 1ull << bits)
			*frac_bits = (unsigned int)bits;
		else
			*ratio = 0;
	}
	return 0;
}
