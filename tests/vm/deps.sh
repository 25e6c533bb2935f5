#!/usr/bin/env bash
# Installs the Debian packages the nested-KVM test stack (tests/vm) needs.
# Idempotent and non-interactive: checks with dpkg-query first, calls apt-get only for what is missing.
#
#   qemu-system-x86  L0 QEMU (TCG with emulated AMD SVM) that boots L1; also carried into L1 by l2-boot.sh
#   busybox-static   the only userland in the L1/L2 initramfs
#   cpio, gzip       pack the initramfs (cpio -H newc | gzip)
#   kmod             depmod, to build modules.dep for the extracted kernel package (Debian ships none in the .deb)
#   apt, dpkg        apt-get download / dpkg-deb -x of the kernel package (always present on Debian)
#   gcc, libc6-dev   static test binaries (kvm-smoke, vperf-call, vperf-vmm-static) for L1 and L2
#   cmake            builds vperf-vmm from hv/ (l2-boot.sh, vmm-test.sh, vmm-bench.sh)
#   util-linux       flock (one QEMU at a time), setsid
#   coreutils        timeout
#   procps, python3  pkill and qemu-regs.py: a frozen L1's registers from the QEMU monitor before the timeout
set -euo pipefail

PKGS=(qemu-system-x86 busybox-static cpio gzip kmod gcc libc6-dev cmake util-linux coreutils procps python3)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || {
		echo "deps: error: not root and no sudo; run as root: tests/vm/deps.sh" >&2
		exit 1
	}
	SUDO="sudo"
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
	echo "deps: all ${#PKGS[@]} packages present"
fi

# mkimage.sh resolves the kernel version with apt-cache: make sure the package lists know linux-image-amd64.
if ! apt-cache show linux-image-amd64 >/dev/null 2>&1; then
	echo "deps: apt lists do not know linux-image-amd64; running apt-get update"
	$SUDO apt-get update -qq
fi
