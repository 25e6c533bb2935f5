#!/usr/bin/env bash
# vm-record-qemu-test.sh VPERF MARKS: `VPERF vm record --vmm qemu`: the guest under Debian's QEMU (-accel kvm in
# L1, nested here) with an ivshmem-plain device, no vperf device; vperf_guest.ko finds the shared memory instead
# (docs/abi.md 8) and kvm-rec (`vperf kvm record`'s recorder, static) records QEMU from outside. One recorded boot;
# in the guest MARKS (record-test/vperf-record-marks.c) writes markers; record-test/check.py reads the CTF trace.
# Cases (each prints "vm-record-qemu: PASS|FAIL <case> ..."):
#   raw       the raw recording came back with a valid header, written by `vperf kvm record`'s recorder
#   conserve  4 threads write 100000 markers between them through the shared memory: each is in the trace exactly
#             once, each thread's in the order written, the recording's losses the calls the writers saw refused
#   order     1000 triples (marker A, a port write, marker B) from one thread: the port write is the host kernel's
#             kvm_exit (SVM IOIO at the port), and in the one clock A < that exit < B every time
#   sched     8 threads burn CPU on the 2 vCPUs, migrating: the guest's sched_switch records give each its CPU time
#             within 5% (the issue's bound for this bed). The reference is the guest's own clock and the
#             records' times are the host TSC; in nested TCG the two rates part by up to a few % (the kmod batch
#             measures host/guest clock ratios of 0.97..1.00). vperf-vmm's case holds 1%; why this bed's guest
#             clock parts more (QEMU offers kvm-clock) is not established. Measured worst: 0.76%, 1.73%.
#   in-guest  every guest sched_switch and marker lies inside a kvm_entry..kvm_exit span of its vCPU on the host
#             (the clock mapping through KVM's debugfs TSC offsets): 0 outside
# A failed case's recording is kept in ./vmrecord-failed/qemu-<case> (or $VPERF_RECORD_KEEP/qemu-<case>).
# Exit status: 0 all passed, 1 a case failed, or the run's status (121..126) when the guest did not run.
set -uo pipefail
VPERF=${1:?usage: vm-record-qemu-test.sh VPERF MARKS}
MARKS=${2:?usage: vm-record-qemu-test.sh VPERF MARKS}
CHECK="$(dirname "$0")/record-test/check.py"
PORT=0x5700	# no device there: QEMU ignores the write, KVM's kvm_exit shows it
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DIR="$WORK/rec"

(cd "$WORK" && "$VPERF" vm record --vmm qemu --timeout 400 -o "$DIR" --add "$MARKS" -- \
	"export VPERF_MARK_KB=1024; vperf-record-marks conserve 4 100000 && vperf-record-marks order 1000 $PORT devport &&
	 vperf-record-marks sched 8 4 100 && cat /sys/module/vperf_guest/parameters/trace_stats") \
	>"$WORK/out" 2>&1
st=$?
cat "$WORK/out"
echo "vm-record-qemu: vperf vm record --vmm qemu exited with status $st"
case "$st" in
121 | 122 | 123 | 124 | 125 | 126) echo "vm-record-qemu: the guest run ended with status $st"; exit "$st" ;;
esac

fails=0
KEEP=${VPERF_RECORD_KEEP:-$PWD/vmrecord-failed}
verdict() { # CASE OK DETAIL [RECORDING]
	if [ "$2" = 1 ]; then echo "vm-record-qemu: PASS $1 ($3)"; return; fi
	echo "vm-record-qemu: FAIL $1 ($3)"
	fails=1
	if [ -n "${4:-}" ] && [ -d "$4" ] && mkdir -p "$KEEP" && rm -rf "${KEEP:?}/qemu-$1" &&
		cp -a "$4" "$KEEP/qemu-$1"; then
		echo "vm-record-qemu: $1's recording kept in $KEEP/qemu-$1"
	fi
}

RAW="$DIR/.raw/vmm.vraw"
ok=0
detail="no $RAW"
if [ -s "$RAW" ]; then
	read -r magic size version khz vcpus < <(python3 -c '
import struct, sys
h = open(sys.argv[1], "rb").read(72)
m, size, ver, khz, n = struct.unpack_from("<8sIIQI", h)
print(m.decode("ascii", "replace"), size, ver, khz, n)' "$RAW")
	rec=$(grep -a -o 'recorder = "[^"]*"' "$DIR/metadata" 2>/dev/null)
	detail="$(stat -c %s "$RAW") bytes; magic $magic, header size $size, version $version, tsc_khz $khz, $vcpus vCPUs; $rec"
	[ "$magic" = VPERFRAW ] && [ "$size" = 72 ] && [ "$version" = 1 ] && [ "$vcpus" = 2 ] && [ "$khz" -gt 0 ] &&
		[[ "$rec" == *"vperf kvm record"* ]] && ok=1
fi
verdict raw "$ok" "$detail; vm record status $st" "$DIR"
read -r _ _ written _ lost _ refused < <(grep -a -m1 '^conserve: written' "$WORK/out" || echo "conserve: written 0 lost 0 flushes 0")
echo "vm-record-qemu: the writers wrote $written markers, lost $lost, had $refused calls refused and made again"
for c in "conserve 4 $((100000 - lost)) $refused" "order-kvm 1000 $PORT" "sched 8 5" "in-guest"; do
	# shellcheck disable=SC2086 # the case and its arguments, split on purpose
	set -- $c
	out=$(python3 "$CHECK" "$1" "$DIR" "${@:2}" 2>&1)
	ok=0
	[ "$st" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
	name=$1
	[ "$name" != order-kvm ] || name=order
	verdict "$name" "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $st" "$DIR"
done
exit "$fails"
