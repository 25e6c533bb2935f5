#!/usr/bin/env bash
# device-test.sh [vm-run options]: the vperf device's tests in one guest boot (vm-run.sh: direct where hardware
# virtualization works, else nested). Prints one line per case, "device-test: PASS|FAIL <case> (<detail>)":
#   count            the guest makes exactly 1000 VERSION hypercalls; the VMM's exit accounting shows exactly 1000
#   hostile          GPAs outside RAM, huge lengths, overlapping pages, unknown operations, forbidden and unknown
#                    events, an ack storm: every call gets its error code, the device still answers
#   task-clock       a vCPU-thread task-clock counter advances with guest time, within 5% over 1 s
#   overflow-100hz   task-clock overflow interrupts reach the guest at 100 Hz within 20% (vperf_irqcount.ko)
#   overflow-1000hz  the same at 1000 Hz
#   sources          1000 bare port writes show as exactly 1001 I/O exits in KVM's io_exits statistic and in the
#                    VMM's exit accounting (the snapshot is an exit too); the steal counter advances
# Exit status: 0 when every case passed, 1 otherwise, or vm-run's own (124 timeout, 125 boot failure, ...).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

[ "${1:-}" != "-h" ] && [ "${1:-}" != "--help" ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }

G="$("$VM_DIR/build-guest.sh")"
LOG="$VPERF_VM_BUILD/device-test.log"
GUEST_CMD='
run() { name=$1; shift; "$@"; echo "DEVICE-CASE $name status=$?"; }
run count vperf-hctest count 1000
run hostile vperf-hctest hostile
run task-clock vperf-hctest task-clock 1000
run sources vperf-hctest sources 1000
insmod /payload/vperf_irqcount.ko || echo "insmod vperf_irqcount.ko failed"
run overflow-100hz vperf-hctest overflow 100 1000
run overflow-1000hz vperf-hctest overflow 1000 1000
exit 0'

set +e
"$VM_DIR/vm-run.sh" --vcpus 2 --timeout 600 --vmm-arg --stats \
	--add "$G/vperf-hctest" --add "$G/vperf_irqcount.ko" "$@" -- "$GUEST_CMD" 2>&1 | tee "$LOG"
st=${PIPESTATUS[0]}
set -e
tr -d '\r' <"$LOG" >"$LOG.clean"

fails=0
report() {	# report CASE OK DETAIL
	if [ "$2" = 1 ]; then echo "device-test: PASS $1 ($3)"; else echo "device-test: FAIL $1 ($3)"; fails=$((fails + 1)); fi
}
case_status() { sed -n "s/.*DEVICE-CASE $1 status=\([0-9]*\).*/\1/p" "$LOG.clean" | tail -1; }
guest_line() { { grep -a "guest: $1" "$LOG.clean" || true; } | tail -1 | sed 's/.*guest: //'; }

# count: the guest's own check, and the VMM's accounting of exactly 1000 VERSION calls
versions="$(sed -n 's/.*vperf-vmm: stats: vcpu[0-9]* vperf VERSION \([0-9]*\).*/\1/p' "$LOG.clean" |
	awk '{ s += $1 } END { print s + 0 }')"
report count "$([ "$(case_status count)" = 0 ] && [ "$versions" = 1000 ] && echo 1 || echo 0)" \
	"guest status $(case_status count), VMM counted $versions VERSION hypercalls"
for c in hostile task-clock sources overflow-100hz overflow-1000hz; do
	s="$(case_status "$c")"
	case "$c" in
	overflow-*)
		hz=${c#overflow-}
		detail="$({ grep -a "guest: overflow: .* at ${hz%hz} Hz" "$LOG.clean" || true; } |
			tail -1 | sed 's/.*guest: //')" ;;
	*) detail="$(guest_line "$c:")" ;;
	esac
	report "$c" "$([ "$s" = 0 ] && echo 1 || echo 0)" "guest status ${s:-none}: ${detail:-no report}"
done
[ "$st" = 0 ] || { echo "device-test: the guest run ended with status $st"; exit "$st"; }
[ "$fails" = 0 ]
