/* SPDX-License-Identifier: MIT */
/*
 * A running KVM VMM, seen from outside (`vperf kvm`): which of a process's descriptors are a KVM
 * VM and its vCPUs, which threads run the vCPUs, and each vCPU's TSC offset as KVM's debugfs
 * shows it.  Nothing here needs the VMM's cooperation, and nothing can: KVM refuses every ioctl
 * on a VM or vCPU descriptor from a process other than the one that made the VM.
 *
 * What is read, all of it hostile (the VMM's user controls its thread names, its descriptors and
 * when it exits): /proc/PID/fd/N links ("anon_inode:kvm-vm", "anon_inode:kvm-vcpu:N"),
 * /proc/PID/task/TID/comm, and debugfs kvm/PID-FD/vcpuN/tsc-offset.  A library: it prints nothing.
 */
#ifndef VPERF_RECORD_KVMVMM_H
#define VPERF_RECORD_KVMVMM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define VPERF_KVM_MAX_VCPUS	1024

struct vperf_kvm_vcpu {
	unsigned int index;		/* N of anon_inode:kvm-vcpu:N, KVM's vcpu_id */
	int fd;				/* its descriptor in the VMM */
	pid_t tid;			/* the thread that runs it, 0: not known from the names */
};

struct vperf_kvm_vmm {
	pid_t pid;
	char comm[17];			/* /proc/PID/comm, as the VMM named itself */
	int vm_fd;			/* the VM's descriptor (debugfs: kvm/PID-FD) */
	unsigned int nr_vms;		/* VM descriptors seen; the first (lowest fd) is used */
	struct vperf_kvm_vcpu *vcpus;	/* by index */
	unsigned int nr_vcpus;
	pid_t *threads;			/* every thread of the process when it was looked at */
	size_t nr_threads;
	const char *names;		/* how the vCPU threads were named ("QEMU: CPU N/KVM"), or NULL */
};

/*
 * Look at process pid under proc_root (NULL: /proc).  0; -ESRCH no such process; -EACCES its
 * descriptors cannot be read (another user's: root is needed); -ENODEV it holds no KVM VM; or
 * another -errno.  why says what was looked for and what was found.
 */
int vperf_kvm__find(pid_t pid, const char *proc_root, struct vperf_kvm_vmm *out, char *why,
		    size_t why_len);
void vperf_kvm__free(struct vperf_kvm_vmm *vmm);

/*
 * vCPU index's TSC offset (guest TSC = host TSC + offset) from debugfs_root (NULL:
 * /sys/kernel/debug)/kvm/PID-FD/vcpuN/tsc-offset, and its scaling ratio when KVM scales (1.0 is
 * written as 0 in *ratio_frac_bits).  0, or -errno with why saying what is missing (no debugfs
 * mounted, not root, a kernel without the file).
 */
int vperf_kvm__tsc_offset(const struct vperf_kvm_vmm *vmm, unsigned int index,
			  const char *debugfs_root, int64_t *offset, uint64_t *ratio,
			  unsigned int *ratio_frac_bits, char *why, size_t why_len);

/* The vCPU of thread tid, or NULL. */
const struct vperf_kvm_vcpu *vperf_kvm__vcpu_of(const struct vperf_kvm_vmm *vmm, pid_t tid);

#endif /* VPERF_RECORD_KVMVMM_H */
