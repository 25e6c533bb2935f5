#!/usr/bin/env bash
# l2-boot.sh [options] [-- L2_COMMAND...]: L0 -> L1 -> L2 round trip with QEMU/KVM as the L2 VMM.
#
# Carries Debian's dynamically linked qemu-system-x86_64 into L1 (binary, the libraries ldd lists, its ELF
# interpreter, the firmware it needs), plus the same kernel and the L2 initramfs from mkimage.sh. In L1,
# /payload/run.sh starts QEMU with -accel kvm (L1's kvm-amd), the L2 kernel boots, runs L2_COMMAND (default: the
# built-in check), prints "VPERF-L2-RESULT: status=N" and powers off; L1 then exits with N.
#
# This is the reference vperf-vmm is compared with (vmm-boot.sh, vmm-bench.sh): same kernel, same initramfs, same
# console protocol.
#
# Options (the rest go to run-nested.sh, e.g. --timeout 900 --quiet):
#   --l2-payload DIR   copy DIR's contents to /payload in L2
#   --l2-smp N         L2 vCPUs (default 2)
#   --l2-mem MB        L2 memory (default 512)
#   --l2-append ARGS   extra L2 kernel command line
#   --repeat N         boot L2 N times in one L1, printing "VM-RUN-REPEAT i/N status=S" after each; L1 exits
#                      with the first non-zero status (soak.sh)
#   --machine M        QEMU machine for L2: pc (default: SeaBIOS, PCI, ...) or microvm (minimal: no PCI, no
#                      firmware tables beyond ACPI, its own SeaBIOS build)
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
MACHINE=pc
REPEAT=1
RUN_ARGS=()
L2_CMD=()
while [ $# -gt 0 ]; do
	case "$1" in
	--l2-payload) L2_PAYLOAD=${2:?}; shift 2 ;;
	--l2-smp) L2_SMP=${2:?}; shift 2 ;;
	--l2-mem) L2_MEM=${2:?}; shift 2 ;;
	--l2-append) L2_APPEND=${2?}; shift 2 ;;
	--machine) MACHINE=${2:?}; shift 2 ;;
	--repeat) REPEAT=${2:?}; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; L2_CMD=("$@"); break ;;
	--image) VPERF_VM_IMAGE=${2:?}; RUN_ARGS+=("$1" "$2"); shift 2 ;;
	--timeout | --smp | --mem | --append | --log | --payload) RUN_ARGS+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
	*) RUN_ARGS+=("$1"); shift ;;
	esac
done

[[ "$REPEAT" =~ ^[0-9]+$ ]] && [ "$REPEAT" -ge 1 ] || die "$VM_EXIT_USAGE" "--repeat wants a number >= 1, got '$REPEAT'"
case "$MACHINE" in
pc) MACHINE_ARGS="-M pc -vga none" ;;
microvm) MACHINE_ARGS="-M microvm" ;;
*) die "$VM_EXIT_USAGE" "--machine wants pc or microvm, got '$MACHINE'" ;;
esac
IMAGE="$VPERF_VM_IMAGE"
"$VM_DIR/mkimage.sh" "$IMAGE" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" "$IMAGE" ||
	die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"

OUT="$VPERF_VM_BUILD/l2"
P="$OUT/payload"
rm -rf "$OUT"
mkdir -p "$P"

# --- QEMU and what it loads (binary, libraries, ELF interpreter, firmware) ---------------------------------------
INTERP="$(stage_qemu "$P")"

# --- L2 kernel and initramfs (with an optional L2 payload and command appended) -----------------------------------
cp "$IMAGE/vmlinuz" "$P/vmlinuz"
L2_KARGS="console=ttyS0 quiet panic=-1"
L2_RUN="$(stage_l2_initrd "$P/initrd-l2.gz" "$OUT/l2extra" "$L2_PAYLOAD" "${L2_CMD[@]}")"
[ -z "$L2_RUN" ] || L2_KARGS="$L2_KARGS $L2_RUN"
[ -z "$L2_APPEND" ] || L2_KARGS="$L2_KARGS $L2_APPEND"

# --- what L1 runs -------------------------------------------------------------------------------------------------
cat >"$P/run.sh" <<EOF
#!/bin/sh
# written by l2-boot.sh: boot L2 with QEMU on L1's KVM and return L2's status
[ -c /dev/kvm ] || { echo "l2-boot: /dev/kvm missing in L1"; exit 125; }
first=0
i=1
while [ \$i -le $REPEAT ]; do
echo "l2-boot: starting L2 (QEMU -M $MACHINE -accel kvm, $L2_SMP vCPUs, $L2_MEM MiB) at uptime \$(cut -d' ' -f1 /proc/uptime) s"
/payload/lib/$INTERP --library-path /payload/lib /payload/bin/qemu-system-x86_64 \\
	-L /payload/qemu-data $MACHINE_ARGS -accel kvm -cpu host -smp $L2_SMP -m $L2_MEM \\
	-nographic -no-reboot -nic none \\
	-kernel /payload/vmlinuz -initrd /payload/initrd-l2.gz \\
	-append "$L2_KARGS" </dev/null 2>&1 | tee /tmp/l2.log
echo "l2-boot: L2 QEMU exited at uptime \$(cut -d' ' -f1 /proc/uptime) s"
st=\$(tr -d '\r' </tmp/l2.log | sed -n 's/.*VPERF-L2-RESULT: status=\([0-9][0-9]*\).*/\1/p' | tail -n 1)
if [ -z "\$st" ]; then
	echo "l2-boot: no VPERF-L2-RESULT line from L2"
	st=126
fi
[ $REPEAT = 1 ] || echo "VM-RUN-REPEAT \$i/$REPEAT status=\$st"
[ \$first != 0 ] || first=\$st
i=\$((i + 1))
done
exit "\$first"
EOF
chmod 0755 "$P/run.sh"
say "L1 payload $(du -sh "$P" | cut -f1): qemu-system-x86_64 + $(find "$P/lib" -type f | wc -l) libraries, vmlinuz, initrd-l2.gz"

exec "$VM_DIR/run-nested.sh" --payload "$P" "${RUN_ARGS[@]}"
