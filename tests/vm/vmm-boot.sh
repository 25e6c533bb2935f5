#!/usr/bin/env bash
# vmm-boot.sh [options] [-- L2_COMMAND...]: L0 -> L1 -> L2 round trip with vperf-vmm as the L2 VMM.
#
# Builds the static vperf-vmm (cmake -S hv, in build-vm/vmm-build), carries it into L1 with the same kernel and L2
# initramfs as l2-boot.sh, and runs it on L1's /dev/kvm. L2 runs L2_COMMAND (default: the built-in check), its
# /init hands the status to vperf-vmm through the vperf hypercall port (vperf-call exit N), vperf-vmm exits with
# it, and so does this script: guest status N -> vperf-vmm N -> L1 payload N -> run-nested.sh N.
#
# Options (the rest go to run-nested.sh, e.g. --timeout 900 --quiet):
#   --l2-payload DIR   copy DIR's contents to /payload in L2
#   --l2-smp N         L2 vCPUs (default 2)
#   --l2-mem MB        L2 memory (default 512, as l2-boot.sh)
#   --l2-append ARGS   extra L2 kernel command line (added to vperf-vmm's default)
#   --vmm-arg ARG      extra vperf-vmm argument (repeatable), e.g. --vmm-arg --debug
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

L2_PAYLOAD=""
L2_SMP=2
L2_MEM=512
L2_APPEND=""
VMM_ARGS=()
RUN_ARGS=()
L2_CMD=()
while [ $# -gt 0 ]; do
	case "$1" in
	--l2-payload) L2_PAYLOAD=${2:?}; shift 2 ;;
	--l2-smp) L2_SMP=${2:?}; shift 2 ;;
	--l2-mem) L2_MEM=${2:?}; shift 2 ;;
	--l2-append) L2_APPEND=${2?}; shift 2 ;;
	--vmm-arg) VMM_ARGS+=("${2?}"); shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; L2_CMD=("$@"); break ;;
	--image) VPERF_VM_IMAGE=${2:?}; RUN_ARGS+=("$1" "$2"); shift 2 ;;
	--timeout | --smp | --mem | --append | --log | --payload) RUN_ARGS+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
	*) RUN_ARGS+=("$1"); shift ;;
	esac
done

IMAGE="$VPERF_VM_IMAGE"
"$VM_DIR/mkimage.sh" "$IMAGE" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" "$IMAGE" ||
	die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"
VMM="$(build_vmm)"

OUT="$VPERF_VM_BUILD/vmm-boot"
P="$OUT/payload"
rm -rf "$OUT"
mkdir -p "$P"
cp "$VMM" "$P/vperf-vmm"
cp "$IMAGE/vmlinuz" "$P/vmlinuz"
L2_RUN="$(stage_l2_initrd "$P/initrd-l2.gz" "$OUT/l2extra" "$L2_PAYLOAD" "${L2_CMD[@]}")"
APPEND="$L2_RUN"
[ -z "$L2_APPEND" ] || APPEND="${APPEND:+$APPEND }$L2_APPEND"

# what L1 runs: vperf-vmm's own status is the payload's status
# shellcheck disable=SC2016 # the single-quoted $ are for L1's shell
{
	echo '#!/bin/sh'
	echo '# written by vmm-boot.sh: boot L2 with vperf-vmm on L1'"'"'s KVM and return its status'
	echo '[ -c /dev/kvm ] || { echo "vmm-boot: /dev/kvm missing in L1"; exit 125; }'
	echo "echo \"vmm-boot: starting L2 (vperf-vmm, $L2_SMP vCPUs, $L2_MEM MiB) at uptime \$(cut -d' ' -f1 /proc/uptime) s\""
	printf '/payload/vperf-vmm --kernel /payload/vmlinuz --initrd /payload/initrd-l2.gz --vcpus %q --mem %q --no-input' \
		"$L2_SMP" "$L2_MEM"
	[ -z "$APPEND" ] || printf ' --append %q' "$APPEND"
	for a in "${VMM_ARGS[@]}"; do printf ' %q' "$a"; done
	echo ' </dev/null'
	echo 'st=$?'
	echo 'echo "vmm-boot: vperf-vmm exited with status $st at uptime $(cut -d'"' '"' -f1 /proc/uptime) s"'
	echo 'exit $st'
} >"$P/run.sh"
chmod 0755 "$P/run.sh"
say "L1 payload $(du -sh "$P" | cut -f1): vperf-vmm (static), vmlinuz, initrd-l2.gz"

exec "$VM_DIR/run-nested.sh" --payload "$P" "${RUN_ARGS[@]}"
