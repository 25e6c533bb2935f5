// SPDX-License-Identifier: MIT
/*
 * A running VMM seen from outside (profiler/record/kvmvmm.h), on /proc and debugfs trees made
 * here: descriptors as links with KVM's names, threads with each VMM's naming scheme, and the
 * hostile cases a VMM's user can arrange (names that lie, two threads with one vCPU's name, a
 * vCPU without a VM).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "kvmvmm.h"
#include "vtest.h"

#define PID 4242

static char root[64];

static void put(const char *path, const char *text)
{
	char full[PATH_MAX];
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", root, path);
	for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(full, 0700);
		*p = '/';
	}
	f = fopen(full, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void fd(int n, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/proc/%d/fd", root, PID);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/proc/%d/fd/%d", root, PID, n);
	assert_int_equal(symlink(target, path), 0);
}

static void thread(int tid, const char *comm)
{
	char path[64], text[64];

	snprintf(path, sizeof(path), "proc/%d/task/%d/comm", PID, tid);
	snprintf(text, sizeof(text), "%s\n", comm);
	put(path, text);
}

static int setup(void **state)
{
	(void)state;
	strcpy(root, "/tmp/vperf-test-kvmvmm-XXXXXX");
	assert_non_null(mkdtemp(root));
	put("proc/4242/comm", "qemu-system-x86\n");
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static int find(struct vperf_kvm_vmm *v, char *why, size_t len)
{
	char proc[96];

	snprintf(proc, sizeof(proc), "%s/proc", root);
	return vperf_kvm__find(PID, proc, v, why, len);
}

static void kvmvmm_qemu_vcpus_and_their_threads_are_found_by_name(void **state)
{
	struct vperf_kvm_vmm v;
	char why[256] = "";

	(void)state;
	fd(0, "/dev/null");
	fd(9, "anon_inode:kvm-vm");
	fd(11, "anon_inode:kvm-vcpu:1");
	fd(10, "anon_inode:kvm-vcpu:0");
	fd(12, "anon_inode:[eventfd]");
	thread(PID, "qemu-system-x86");
	thread(4300, "CPU 1/KVM");
	thread(4299, "CPU 0/KVM");
	thread(4301, "IO mon_iothread");
	assert_int_equal(find(&v, why, sizeof(why)), 0);
	assert_string_equal(v.comm, "qemu-system-x86");
	assert_int_equal(v.vm_fd, 9);
	assert_int_equal(v.nr_vms, 1);
	assert_int_equal(v.nr_vcpus, 2);
	assert_int_equal(v.vcpus[0].index, 0);
	assert_int_equal(v.vcpus[0].fd, 10);
	assert_int_equal(v.vcpus[0].tid, 4299);
	assert_int_equal(v.vcpus[1].tid, 4300);
	assert_int_equal(v.nr_threads, 4);
	assert_non_null(strstr(v.names, "QEMU"));
	assert_ptr_equal(vperf_kvm__vcpu_of(&v, 4300), &v.vcpus[1]);
	assert_null(vperf_kvm__vcpu_of(&v, 4301));
	vperf_kvm__free(&v);
}

static void kvmvmm_other_vmms_naming_schemes_are_known(void **state)
{
	static const char *const schemes[][2] = {
		{ "fc_vcpu 0", "fc_vcpu 1" }, { "vcpu0", "vcpu1" }, { "kvm-vcpu-0", "kvm-vcpu-1" },
		{ "crosvm_vcpu0", "crosvm_vcpu1" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(schemes) / sizeof(schemes[0]); k++) {
		struct vperf_kvm_vmm v;
		char why[256] = "", cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s/proc/%d/task'", root, PID);
		assert_int_equal(system(cmd), 0);
		if (!k) {
			fd(3, "anon_inode:kvm-vm");
			fd(4, "anon_inode:kvm-vcpu:0");
			fd(5, "anon_inode:kvm-vcpu:1");
		}
		thread(PID, "vmm");
		thread(5001, schemes[k][0]);
		thread(5002, schemes[k][1]);
		assert_int_equal(find(&v, why, sizeof(why)), 0);
		assert_int_equal(v.vcpus[0].tid, 5001);
		assert_int_equal(v.vcpus[1].tid, 5002);
		assert_non_null(v.names);
		vperf_kvm__free(&v);
	}
}

static void kvmvmm_names_that_lie_are_not_trusted(void **state)
{
	struct vperf_kvm_vmm v;
	char why[256] = "";

	(void)state;
	fd(3, "anon_inode:kvm-vm");
	fd(4, "anon_inode:kvm-vcpu:0");
	fd(5, "anon_inode:kvm-vcpu:1");
	thread(PID, "vmm");
	thread(6001, "CPU 0/KVM");
	thread(6002, "CPU 0/KVM");	/* two threads claim vCPU 0 */
	thread(6003, "CPU 1/KVMx");	/* not the whole pattern */
	thread(6004, "CPU 01/KVM");	/* a leading zero */
	thread(6005, "CPU 7/KVM");	/* no such vCPU */
	assert_int_equal(find(&v, why, sizeof(why)), 0);
	assert_int_equal(v.vcpus[0].tid, 0);
	assert_int_equal(v.vcpus[1].tid, 0);
	vperf_kvm__free(&v);
}

static void kvmvmm_process_without_a_vm_says_what_was_looked_for(void **state)
{
	struct vperf_kvm_vmm v;
	char why[256] = "";

	(void)state;
	fd(0, "/dev/null");
	fd(4, "anon_inode:kvm-vcpu:0");	/* a vCPU but no VM: not a VMM we can name */
	thread(PID, "x");
	assert_int_equal(find(&v, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "is not a KVM VMM"));
	assert_non_null(strstr(why, "anon_inode:kvm-vm"));
	assert_null(v.vcpus);
}

static void kvmvmm_vm_without_vcpus_yet_is_reported_as_starting(void **state)
{
	struct vperf_kvm_vmm v;
	char why[256] = "";

	(void)state;
	fd(3, "anon_inode:kvm-vm");
	thread(PID, "x");
	assert_int_equal(find(&v, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "still starting"));
}

static void kvmvmm_no_such_process_and_bad_pids_are_refused(void **state)
{
	struct vperf_kvm_vmm v;
	char why[256] = "", proc[96];

	(void)state;
	snprintf(proc, sizeof(proc), "%s/proc", root);
	assert_int_equal(vperf_kvm__find(777, proc, &v, why, sizeof(why)), -ESRCH);
	assert_non_null(strstr(why, "no process 777"));
	assert_int_equal(vperf_kvm__find(0, proc, &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(vperf_kvm__find(-5, proc, &v, why, sizeof(why)), -EINVAL);
}

static void kvmvmm_tsc_offset_comes_from_debugfs_and_its_absence_is_explained(void **state)
{
	struct vperf_kvm_vmm v;
	char why[256] = "", dbg[96], path[128];
	uint64_t ratio;
	unsigned int bits;
	int64_t off;

	(void)state;
	fd(7, "anon_inode:kvm-vm");
	fd(8, "anon_inode:kvm-vcpu:0");
	thread(PID, "x");
	assert_int_equal(find(&v, why, sizeof(why)), 0);
	snprintf(dbg, sizeof(dbg), "%s/debug", root);
	/* no kvm directory: what is needed is said */
	assert_int_equal(vperf_kvm__tsc_offset(&v, 0, dbg, &off, &ratio, &bits, why, sizeof(why)),
			 -ENOENT);
	assert_non_null(strstr(why, "debugfs"));
	snprintf(path, sizeof(path), "debug/kvm/%d-7/vcpu0/tsc-offset", PID);
	put(path, "-123456789\n");
	assert_int_equal(vperf_kvm__tsc_offset(&v, 0, dbg, &off, &ratio, &bits, why, sizeof(why)), 0);
	assert_int_equal(off, -123456789);
	assert_int_equal(ratio, 0);	/* no scaling files: not scaled */
	/* KVM's default ratio (1.0) is no scaling; another is reported */
	snprintf(path, sizeof(path), "debug/kvm/%d-7/vcpu0/tsc-scaling-ratio", PID);
	put(path, "281474976710656\n");
	snprintf(path, sizeof(path), "debug/kvm/%d-7/vcpu0/tsc-scaling-ratio-frac-bits", PID);
	put(path, "48\n");
	assert_int_equal(vperf_kvm__tsc_offset(&v, 0, dbg, &off, &ratio, &bits, why, sizeof(why)), 0);
	assert_int_equal(ratio, 0);
	snprintf(path, sizeof(path), "debug/kvm/%d-7/vcpu0/tsc-scaling-ratio", PID);
	put(path, "140737488355328\n");
	assert_int_equal(vperf_kvm__tsc_offset(&v, 0, dbg, &off, &ratio, &bits, why, sizeof(why)), 0);
	assert_int_equal(ratio, 140737488355328ull);
	assert_int_equal(bits, 48);
	/* a file that is not a number is refused, not half read */
	snprintf(path, sizeof(path), "debug/kvm/%d-7/vcpu0/tsc-offset", PID);
	put(path, "12abc\n");
	assert_int_equal(vperf_kvm__tsc_offset(&v, 0, dbg, &off, &ratio, &bits, why, sizeof(why)),
			 -EINVAL);
	vperf_kvm__free(&v);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(kvmvmm_qemu_vcpus_and_their_threads_are_found_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(kvmvmm_other_vmms_naming_schemes_are_known, setup, teardown),
		cmocka_unit_test_setup_teardown(kvmvmm_names_that_lie_are_not_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(kvmvmm_process_without_a_vm_says_what_was_looked_for, setup, teardown),
		cmocka_unit_test_setup_teardown(kvmvmm_vm_without_vcpus_yet_is_reported_as_starting, setup, teardown),
		cmocka_unit_test_setup_teardown(kvmvmm_no_such_process_and_bad_pids_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(kvmvmm_tsc_offset_comes_from_debugfs_and_its_absence_is_explained, setup, teardown),
	};

	return VT_MAIN("kvmvmm", tests, NULL, NULL);
}
