#!/usr/bin/env bash
# l2-boot.sh [options] [-- L2_COMMAND...]: an L0 -> L1 -> L2 round trip, with vperf-vmm or QEMU/KVM as the L2 VMM.
#
# Carries the L2 VMM into L1 with the kernel and the L2 initramfs of mkimage.sh, and runs it on L1's /dev/kvm
# (kvm-amd). L2 runs L2_COMMAND (default: the built-in check), prints "VPERF-L2-RESULT: status=N" and powers off;
# L1 exits with N, and so does this script (run-nested.sh): guest status N -> L1 payload N -> N.
#   --vmm vperf  the static vperf-vmm (cmake -S hv, in build-vm/vmm-build); L2's /init hands its status to
#                vperf-vmm through the vperf hypercall port (vperf-call exit N) and vperf-vmm exits with it
#   --vmm qemu   Debian's dynamically linked qemu-system-x86_64 (binary, the libraries ldd lists, its ELF
#                interpreter, the firmware it needs), -accel kvm; the status is L2's VPERF-L2-RESULT line.
#                This is the reference vperf-vmm is compared with (vmm-bench.sh): same kernel, same initramfs,
#                same console protocol
#
# Options (the rest go to run-nested.sh, e.g. --timeout 900 --quiet):
#   --vmm vperf|qemu   the L2 VMM (default vperf)
#   --l2-payload DIR   copy DIR's contents to /payload in L2
#   --l2-smp N         L2 vCPUs (default 2)
#   --l2-mem MB        L2 memory (default 512)
#   --l2-append ARGS   extra L2 kernel command line
#   --repeat N         boot L2 N times in one L1, printing "VM-RUN-REPEAT i/N status=S" after each; L1 exits
#                      with the first non-zero status (soak.sh)
#   --machine M        qemu: the machine for L2, pc (default: SeaBIOS, PCI, ...) or microvm (minimal: no PCI, no
#                      firmware tables beyond ACPI, its own SeaBIOS build)
#   --vmm-arg ARG      vperf: an extra vperf-vmm argument (repeatable), e.g. --vmm-arg --debug
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

KIND=vperf
L2_PAYLOAD=""
L2_SMP=2
L2_MEM=512
L2_APPEND=""
MACHINE=""
REPEAT=1
VMM_ARGS=()
RUN_ARGS=()
L2_CMD=()
while [ $# -gt 0 ]; do
	case "$1" in
	--vmm) KIND=${2:?--vmm needs vperf or qemu}; shift 2 ;;
	--l2-payload) L2_PAYLOAD=${2:?}; shift 2 ;;
	--l2-smp) L2_SMP=${2:?}; shift 2 ;;
	--l2-mem) L2_MEM=${2:?}; shift 2 ;;
	--l2-append) L2_APPEND=${2?}; shift 2 ;;
	--machine) MACHINE=${2:?}; shift 2 ;;
	--repeat) REPEAT=${2:?}; shift 2 ;;
	--vmm-arg) VMM_ARGS+=("${2?}"); shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; L2_CMD=("$@"); break ;;
	--image) VPERF_VM_IMAGE=${2:?}; RUN_ARGS+=("$1" "$2"); shift 2 ;;
	--timeout | --smp | --mem | --append | --log | --payload) RUN_ARGS+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
	*) RUN_ARGS+=("$1"); shift ;;
	esac
done

[[ "$REPEAT" =~ ^[0-9]+$ ]] && [ "$REPEAT" -ge 1 ] || die "$VM_EXIT_USAGE" "--repeat wants a number >= 1, got '$REPEAT'"
[[ "$L2_SMP" =~ ^[0-9]+$ ]] && [ "$L2_SMP" -ge 1 ] || die "$VM_EXIT_USAGE" "--l2-smp wants a number >= 1, got '$L2_SMP'"
[[ "$L2_MEM" =~ ^[0-9]+$ ]] && [ "$L2_MEM" -ge 64 ] || die "$VM_EXIT_USAGE" "--l2-mem wants MiB >= 64, got '$L2_MEM'"
case "$KIND" in
vperf)
	[ -z "$MACHINE" ] || die "$VM_EXIT_USAGE" "--machine is QEMU's (--vmm qemu)" ;;
qemu)
	[ ${#VMM_ARGS[@]} = 0 ] || die "$VM_EXIT_USAGE" "--vmm-arg is vperf-vmm's (--vmm vperf)"
	case "${MACHINE:=pc}" in
	pc) MACHINE_ARGS="-M pc -vga none" ;;
	microvm) MACHINE_ARGS="-M microvm" ;;
	*) die "$VM_EXIT_USAGE" "--machine wants pc or microvm, got '$MACHINE'" ;;
	esac ;;
*) die "$VM_EXIT_USAGE" "--vmm wants vperf or qemu, got '$KIND'" ;;
esac
IMAGE="$VPERF_VM_IMAGE"
"$VM_DIR/mkimage.sh" "$IMAGE" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" "$IMAGE" ||
	die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"

OUT="$VPERF_VM_BUILD/l2-boot-$KIND"
P="$OUT/payload"
rm -rf "$OUT"
mkdir -p "$P"

# --- the L2 kernel and initramfs (with an optional L2 payload and command appended) -------------------------------
cp "$IMAGE/vmlinuz" "$P/vmlinuz"
L2_RUN="$(stage_l2_initrd "$P/initrd-l2.gz" "$OUT/l2extra" "$L2_PAYLOAD" "${L2_CMD[@]}")"
APPEND="$L2_RUN"
[ -z "$L2_APPEND" ] || APPEND="${APPEND:+$APPEND }$L2_APPEND"

# --- the VMM: its command line in L1, and how L1 learns L2's status ---------------------------------------------
# VMM_CMD runs with L2's console on its stdout; STATUS_FROM is vmm (its exit status) or console (L2's result line)
if [ "$KIND" = vperf ]; then
	cp "$(build_vmm)" "$P/vperf-vmm"
	VMM_CMD="$(printf '/payload/vperf-vmm --kernel /payload/vmlinuz --initrd /payload/initrd-l2.gz --vcpus %q --mem %q --no-input' \
		"$L2_SMP" "$L2_MEM")"
	[ -z "$APPEND" ] || VMM_CMD+="$(printf ' --append %q' "$APPEND")"
	for a in "${VMM_ARGS[@]}"; do VMM_CMD+="$(printf ' %q' "$a")"; done
	STATUS_FROM=vmm
	WHAT="vperf-vmm"
	CONTENTS="vperf-vmm (static)"
else
	INTERP="$(stage_qemu "$P")"
	VMM_CMD="/payload/lib/$INTERP --library-path /payload/lib /payload/bin/qemu-system-x86_64"
	VMM_CMD+=" -L /payload/qemu-data $MACHINE_ARGS -accel kvm -cpu host -smp $L2_SMP -m $L2_MEM"
	VMM_CMD+=" -nographic -no-reboot -nic none -kernel /payload/vmlinuz -initrd /payload/initrd-l2.gz"
	VMM_CMD+="$(printf ' -append %q' "console=ttyS0 quiet panic=-1${APPEND:+ $APPEND}")"
	STATUS_FROM=console
	WHAT="QEMU -M $MACHINE -accel kvm"
	CONTENTS="qemu-system-x86_64 + $(find "$P/lib" -type f | wc -l) libraries"
fi

# --- what L1 runs ---------------------------------------------------------------------------------------------------
# shellcheck disable=SC2016 # the single-quoted $ are for L1's shell
{
	echo '#!/bin/sh'
	echo "# written by l2-boot.sh: boot L2 with $WHAT on L1's KVM and return L2's status"
	echo '[ -c /dev/kvm ] || { echo "l2-boot: /dev/kvm missing in L1"; exit 125; }'
	echo 'first=0'
	echo 'i=1'
	echo "while [ \$i -le $REPEAT ]; do"
	echo "echo \"l2-boot: starting L2 ($WHAT, $L2_SMP vCPUs, $L2_MEM MiB) at uptime \$(cut -d' ' -f1 /proc/uptime) s\""
	if [ "$STATUS_FROM" = vmm ]; then
		echo "$VMM_CMD </dev/null"
		echo 'st=$?'
	else
		echo "$VMM_CMD </dev/null 2>&1 | tee /tmp/l2.log"
		echo "st=\$(tr -d '\\r' </tmp/l2.log | sed -n 's/.*VPERF-L2-RESULT: status=\\([0-9][0-9]*\\).*/\\1/p' | tail -n 1)"
		echo '[ -n "$st" ] || { echo "l2-boot: no VPERF-L2-RESULT line from L2"; st=126; }'
	fi
	echo 'echo "l2-boot: the L2 VMM exited, L2 status $st, at uptime $(cut -d'"' '"' -f1 /proc/uptime) s"'
	[ "$REPEAT" = 1 ] || echo "echo \"VM-RUN-REPEAT \$i/$REPEAT status=\$st\""
	echo '[ $first != 0 ] || first=$st'
	echo 'i=$((i + 1))'
	echo 'done'
	echo 'exit "$first"'
} >"$P/run.sh"
chmod 0755 "$P/run.sh"
say "L1 payload $(du -sh "$P" | cut -f1): $CONTENTS, vmlinuz, initrd-l2.gz"

exec "$VM_DIR/run-nested.sh" --payload "$P" "${RUN_ARGS[@]}"
