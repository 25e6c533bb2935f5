#!/usr/bin/env bash
# vmm-bench.sh [--rounds R] [--round-trips N] [--l2-smp N] [--l2-mem MB] [run-nested options...]:
# how long L2 takes with vperf-vmm and with QEMU (-M pc and -M microvm) as the L2 VMM, on the nested stack.
#
# 1. One L1 boot carries vperf-vmm (static), Debian's QEMU and the same kernel and L2 initramfs, and boots L2
#    R times (default 3) with each variant below, round-robin, timing each from VMM start to VMM exit (L1's
#    /proc/uptime). L2 runs the built-in check and powers off (or hands its status to vperf-vmm).
#      vmm                  vperf-vmm, its default command line (console=ttyS0 panic=-1 reboot=acpi quiet pci=off)
#      vmm-qemucmd          vperf-vmm with QEMU's command line (console=ttyS0 quiet panic=-1, as l2-boot.sh --vmm qemu)
#      qemu-pc              qemu-system-x86_64 -M pc -accel kvm (l2-boot.sh --vmm qemu's command)
#      qemu-microvm         qemu-system-x86_64 -M microvm -accel kvm
#      qemu-microvm-vmmcmd  -M microvm with vperf-vmm's command line
# 2. --round-trips N (default 1; 0 skips): the whole L0 -> L1 -> L2 -> back, N times each, as vmm-boot
#    (l2-boot.sh with vperf-vmm), l2-boot (--vmm qemu) and l2-boot-microvm (--vmm qemu --machine microvm)
#    (run-nested's "total" wall time).
# Prints medians and ratios; results in build-vm/vmm-bench/results.txt. Timings under TCG are not hardware
# timings: compare the ratios within one run (shared/design/TEST-STACK.md).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

ROUNDS=3
TRIPS=1
L2_SMP=2
L2_MEM=512
RUN_ARGS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) ROUNDS=${2:?}; shift 2 ;;
	--round-trips) TRIPS=${2:?}; shift 2 ;;
	--l2-smp) L2_SMP=${2:?}; shift 2 ;;
	--l2-mem) L2_MEM=${2:?}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) RUN_ARGS+=("$1"); shift ;;
	esac
done
for v in "$ROUNDS" "$TRIPS" "$L2_SMP" "$L2_MEM"; do
	[[ "$v" =~ ^[0-9]+$ ]] || die "$VM_EXIT_USAGE" "numbers only, got '$v'"
done

"$VM_DIR/mkimage.sh" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" || die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"
VMM="$(build_vmm)"
OUT="$VPERF_VM_BUILD/vmm-bench"
P="$OUT/payload"
rm -rf "$OUT"
mkdir -p "$P"
INTERP="$(stage_qemu "$P")"
cp "$VMM" "$P/vperf-vmm"
cp "$VPERF_VM_IMAGE/vmlinuz" "$VPERF_VM_IMAGE/initrd-l2.gz" "$P/"

QEMU_CMD="console=ttyS0 quiet panic=-1"
VMM_CMD="console=ttyS0 panic=-1 reboot=acpi quiet pci=off"
# What L1 runs: settings first, then the fixed part of the script (quoted: nothing expands here).
{
	echo '#!/bin/sh'
	echo '# written by vmm-bench.sh: time L2 boots with each VMM, round-robin'
	printf 'ROUNDS=%q\nSMP=%q\nMEM=%q\nINTERP=%q\nQEMU_CMD=%q\nVMM_CMD=%q\n' \
		"$ROUNDS" "$L2_SMP" "$L2_MEM" "$INTERP" "$QEMU_CMD" "$VMM_CMD"
	cat <<'L1SCRIPT'
up() { cut -d' ' -f1 /proc/uptime; }
Q="/payload/lib/$INTERP --library-path /payload/lib /payload/bin/qemu-system-x86_64 -L /payload/qemu-data"
COMMON="-accel kvm -cpu host -smp $SMP -m $MEM -nographic -no-reboot -nic none"
COMMON="$COMMON -kernel /payload/vmlinuz -initrd /payload/initrd-l2.gz"
V="/payload/vperf-vmm --kernel /payload/vmlinuz --initrd /payload/initrd-l2.gz --vcpus $SMP --mem $MEM"
V="$V --no-input --stats-json /tmp/stats.json"
bad=0
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for v in vmm vmm-qemucmd qemu-pc qemu-microvm qemu-microvm-vmmcmd; do
		rm -f /tmp/stats.json
		t0=$(up)
		case $v in
		vmm) $V </dev/null >/tmp/out 2>&1 ;;
		vmm-qemucmd) $V --cmdline "$QEMU_CMD" </dev/null >/tmp/out 2>&1 ;;
		qemu-pc) $Q -M pc -vga none $COMMON -append "$QEMU_CMD" </dev/null >/tmp/out 2>&1 ;;
		qemu-microvm) $Q -M microvm $COMMON -append "$QEMU_CMD" </dev/null >/tmp/out 2>&1 ;;
		qemu-microvm-vmmcmd) $Q -M microvm $COMMON -append "$VMM_CMD" </dev/null >/tmp/out 2>&1 ;;
		esac
		st=$?
		t1=$(up)
		l2=$(tr -d '\r' </tmp/out | sed -n 's/.*VPERF-L2-RESULT: status=\([0-9]*\).*/\1/p' | tail -n 1)
		init=$(tr -d '\r' </tmp/out | sed -n 's/.*VPERF-L2-INIT:.* uptime \([0-9.]*\) s.*/\1/p' | tail -n 1)
		runs=$(grep -o '"kvm_run": [0-9]*' /tmp/stats.json 2>/dev/null | awk '{ s += $2 } END { print s + 0 }')
		if [ "$st" != 0 ] || [ "$l2" != 0 ]; then
			bad=1
			tail -n 20 /tmp/out
		fi
		echo "vmm-bench: $v round $r secs $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
			"status $st l2-status ${l2:-none} l2-init ${init:-none} kvm-runs $runs"
	done
	r=$((r + 1))
done
exit $bad
L1SCRIPT
} >"$P/run.sh"
chmod 0755 "$P/run.sh"
say "L1 payload $(du -sh "$P" | cut -f1); $ROUNDS rounds x 5 variants, L2 with $L2_SMP vCPUs and $L2_MEM MiB"

set +e
"$VM_DIR/run-nested.sh" --payload "$P" --timeout 3000 --quiet "${RUN_ARGS[@]}"
rc=$?
set -e
LOG="$VPERF_VM_BUILD/run/last/console.log"
RES="$OUT/results.txt"
tr -d '\r' <"$LOG" | grep -a '^vmm-bench: ' >"$RES" || true
[ "$rc" = 0 ] || say "warning: a boot failed (status $rc; log $LOG)"

for t in $(seq 1 "$TRIPS"); do
	for how in vmm-boot l2-boot l2-boot-microvm; do
		case $how in
		vmm-boot) cmd=("$VM_DIR/l2-boot.sh" --vmm vperf --l2-smp "$L2_SMP" --l2-mem "$L2_MEM") ;;
		l2-boot) cmd=("$VM_DIR/l2-boot.sh" --vmm qemu --l2-smp "$L2_SMP" --l2-mem "$L2_MEM") ;;
		l2-boot-microvm) cmd=("$VM_DIR/l2-boot.sh" --vmm qemu --machine microvm --l2-smp "$L2_SMP" --l2-mem "$L2_MEM") ;;
		esac
		set +e
		total=$("${cmd[@]}" --quiet "${RUN_ARGS[@]}" 2>&1 | sed -n 's/.*timing (wall): total \([0-9.]*\) s.*/\1/p')
		st=${PIPESTATUS[0]}
		set -e
		echo "vmm-bench: round-trip-$how round $t secs ${total:-none} status $st" >>"$RES"
	done
done

# medians and ratios
awk '
	{ v = $2; s = $6; if (s != "none") { n[v]++; x[v, n[v]] = s } }
	END {
		for (v in n) {
			m = n[v]
			for (i = 1; i <= m; i++) a[i] = x[v, i]
			for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			med[v] = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
			printf "vmm-bench: median %-28s %7.2f s (%d runs)\n", v, med[v], m
		}
		r("vperf-vmm / qemu -M pc, in L1", "vmm", "qemu-pc")
		r("vperf-vmm / qemu -M microvm, in L1", "vmm", "qemu-microvm")
		r("same cmdline: vperf-vmm / qemu -M pc", "vmm-qemucmd", "qemu-pc")
		r("same cmdline: vperf-vmm / qemu -M microvm", "vmm", "qemu-microvm-vmmcmd")
		r("round trip: vmm-boot / l2-boot", "round-trip-vmm-boot", "round-trip-l2-boot")
		r("round trip: vmm-boot / l2-boot microvm", "round-trip-vmm-boot", "round-trip-l2-boot-microvm")
	}
	function r(what, a, b) { if (med[a] && med[b]) printf "vmm-bench: ratio %-42s %.2f\n", what, med[a] / med[b] }
' "$RES" | sort >"$OUT/summary.txt"
cat "$OUT/summary.txt" >>"$RES"
cat "$OUT/summary.txt"
say "results: $RES"
exit "$rc"
