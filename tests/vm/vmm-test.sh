#!/usr/bin/env bash
# vmm-test.sh [--cases "A B ..."] [--no-chain] [run-nested options...]: vperf-vmm's tests on the nested stack.
#
# 1. One L1 boot runs every case of vmm-test/l1-run.sh: each boots L2 with vperf-vmm (static, from hv/) and
#    checks its exit status, stderr, the L2 console and --stats-json:
#      vcpus-1, vcpus-2, vcpus-4  every vCPU online (/sys/devices/system/cpu/online, nproc); guest status 7 out
#      poweroff, reboot           ACPI S5 and the ACPI reset register end the VMM with 0
#      panic                      a kernel panic (panic=-1 reboots) ends it with 123
#      ucall, assert              VPERF_HC_UCALL print/values reach stderr; a failed assertion ends it with 123
#      hostile                    bad hypercalls (unknown ops, bad exit status, ucall GPAs outside RAM) get
#                                 VPERF_E* errors and the VM keeps running
#      timeout, sigterm           --timeout gives 124, SIGTERM a clean stop with 143
#      input                      a FIFO on stdin reaches the guest's shell through the UART
#      console                    a hostile console line (OSC 52, CSI, C1) reaches the host escaped
# 2. The status chain end to end: l2-boot.sh -- 'exit 7' (vperf-vmm) must make run-nested.sh exit 7 (skip: --no-chain).
# Exit status 0 when everything passed, 1 otherwise (or run-nested's 124/125/126).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

CASES=""
CHAIN=1
RUN_ARGS=()
while [ $# -gt 0 ]; do
	case "$1" in
	--cases) CASES=${2?}; shift 2 ;;
	--no-chain) CHAIN=0; shift ;;
	-h | --help) usage 0 ;;
	*) RUN_ARGS+=("$1"); shift ;;
	esac
done
[[ "$CASES" =~ ^[a-z0-9\ -]*$ ]] || die "$VM_EXIT_USAGE" "--cases wants case names, got '$CASES'"

"$VM_DIR/mkimage.sh" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" || die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"
VMM="$(build_vmm)"

OUT="$VPERF_VM_BUILD/vmm-test"
P="$OUT/payload"
rm -rf "$OUT"
mkdir -p "$P" "$OUT/l2payload"
cp "$VMM" "$P/vperf-vmm"
cp "$VPERF_VM_IMAGE/vmlinuz" "$P/vmlinuz"
cp -a "$VM_DIR/vmm-test/l2" "$OUT/l2payload/l2"
stage_l2_initrd "$P/initrd-l2.gz" "$OUT/l2extra" "$OUT/l2payload" >/dev/null
install -m 0755 "$VM_DIR/vmm-test/l1-run.sh" "$P/run.sh"

set +e
"$VM_DIR/run-nested.sh" --payload "$P" --timeout 600 "${RUN_ARGS[@]}" -- "VPERF_TEST_CASES='$CASES' /payload/run.sh"
rc=$?
set -e
LOG="$VPERF_VM_BUILD/run/last/console.log"
say "cases:"
grep -a '^vmm-test: ' "$LOG" >&2 || true

chain_rc=0
if [ "$CHAIN" = 1 ]; then
	set +e
	"$VM_DIR/l2-boot.sh" --vmm vperf --quiet "${RUN_ARGS[@]}" -- 'exit 7'
	chain_rc=$?
	set -e
	if [ "$chain_rc" = 7 ]; then
		say "PASS status chain: L2 exit 7 -> vperf-vmm 7 -> run-nested 7"
	else
		say "FAIL status chain: run-nested exited $chain_rc, want 7"
	fi
fi
if [ "$rc" != 0 ]; then
	say "FAIL: the cases (status $rc; log $LOG)"
	exit $(( rc == 1 ? 1 : rc ))
fi
[ "$CHAIN" = 0 ] || [ "$chain_rc" = 7 ] || exit 1
say "all passed"
