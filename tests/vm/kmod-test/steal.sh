#!/usr/bin/env bash
# kmod-test/steal.sh [vm-run options]: vperf::steal against the time a guest thread loses on the host.
# Boots a 1-vCPU guest whose vperf-vmm runs on host CPU 0 beside a CPU hog on the same CPU (vm-run.sh --vmm-prefix
# and --host-bg; the host is L1 when nested), loads vperf_guest.ko and runs `vperf-kmod-thread steal`: a thread
# burns 300 ms of guest CPU time three times; the host time its slices lasted less its vcpu-clock is what it lost
# to the hog, and its vperf::steal (the vCPU thread's schedstat run delay over its slices) must be within 10% of
# that in two rounds of three, with the loss at least 20% of the wall time. Then `vperf-kmod-thread steal-guest`:
# the same thread accounted by the guest alone (vcpu-clock and steal only: its clock and KVM's steal-time record,
# no hypercall per switch) against the host's figures for the vCPU (VPERF_IOC_VCPU_TOTALS): steal within 10%,
# vcpu-clock within 3%. Then `vperf-kmod-thread hostcs`: a thread's vperf::host:context-switches (the vCPU thread's
# host context switches over its slices) over a 300 ms burn between two UCALL VALUES reports, against the host's
# own count for the vCPU thread (vperf-vmm prints /proc/thread-self/status's switches with each report): within 5%
# or one switch (a report's boundary) in 2 rounds of 3, with at least 10 switches. Prints "kmod-test: PASS|FAIL steal|steal-guest|hostcs (<detail>)".
# Exit status: 0 passed, 1 failed, or vm-run's own (124 timeout, 125 boot failure, ...).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/.. source=../common.sh
. "$(dirname "$0")/../common.sh"

[ "${1:-}" != "-h" ] && [ "${1:-}" != "--help" ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; }

B="$("$VM_DIR/kmod-test/build.sh")"
LOG="$VPERF_VM_BUILD/kmod-steal.log"
# shellcheck disable=SC2016 # expands in the guest
GUEST_CMD='insmod /payload/vperf_guest.ko || exit 1
vperf-kmod-thread steal; st=$?
echo "KMOD-CASE steal status=$st"
vperf-kmod-thread steal-guest; st=$?
echo "KMOD-CASE steal-guest status=$st"
vperf-kmod-thread hostcs; st=$?
echo "KMOD-CASE hostcs status=$st"
rmmod vperf_guest
exit 0'

set +e
"$VM_DIR/vm-run.sh" --vcpus 1 --timeout 300 --vmm-prefix 'taskset -c 0' \
	--host-bg 'exec taskset -c 0 sh -c "while :; do :; done"' \
	--add "$B/vperf_guest.ko" --add "$B/vperf-kmod-thread" "$@" -- "$GUEST_CMD" 2>&1 | tee "$LOG"
st=${PIPESTATUS[0]}
set -e
tr -d '\r' <"$LOG" >"$LOG.clean"
fails=0
for c in steal steal-guest; do
	s="$(sed -n "s/.*KMOD-CASE $c status=\([0-9]*\).*/\1/p" "$LOG.clean" | tail -1)"
	detail="$({ grep -a "kmod-thread: $c [oF][kA]" "$LOG.clean" || true; } | head -1 | sed "s/.*kmod-thread: $c [a-zA-Z]* //")"
	if [ "$s" = 0 ]; then
		echo "kmod-test: PASS $c (${detail:-no report})"
	else
		echo "kmod-test: FAIL $c (guest status ${s:-none}: ${detail:-no report})"
		fails=1
	fi
done
# hostcs: the host's switches of the vCPU thread between each round's reports against the thread's count
sw() { sed -n "s/.*guest: values: hostcs-$1-$2:.*thread switches: voluntary \([0-9]*\) nonvoluntary \([0-9]*\)\].*/\1 \2/p" \
	"$LOG.clean" | head -1 | awk '{ print $1 + $2 }'; }
good=0
detail=""
for r in 1 2 3; do
	b="$(sw begin $r)"
	e="$(sw end $r)"
	t="$(sed -n "s/.*kmod-thread: hostcs-round $r: thread \([0-9]*\).*/\1/p" "$LOG.clean" | head -1)"
	if [ -z "$b" ] || [ -z "$e" ] || [ -z "$t" ]; then
		detail="$detail round $r: no figures;"
		continue
	fi
	h=$((e - b))
	err="$(awk -v t="$t" -v h="$h" 'BEGIN { printf "%+.1f", h ? 100 * (t - h) / h : 0 }')"
	# within 5%, or one switch either way: vperf-vmm reads its counts while it handles each report, and the
	# report's own exit can switch the vCPU thread after that read, inside the thread's slice (CI 2026-11-26:
	# thread 20, host 19 in two rounds, +5.3%)
	awk -v t="$t" -v h="$h" 'BEGIN { d = t - h; if (d < 0) d = -d
		exit !(h >= 10 && (d <= 1 || (t >= 0.95 * h && t <= 1.05 * h))) }' && good=$((good + 1))
	detail="$detail round $r: thread $t, host $h ($err%);"
done
s="$(sed -n "s/.*KMOD-CASE hostcs status=\([0-9]*\).*/\1/p" "$LOG.clean" | tail -1)"
if [ "$s" = 0 ] && [ "$good" -ge 2 ]; then
	echo "kmod-test: PASS hostcs ($good of 3 rounds within 5%:$detail)"
else
	echo "kmod-test: FAIL hostcs (guest status ${s:-none}; $good of 3 rounds within 5%:$detail)"
	fails=1
fi
[ "$fails" = 0 ] && exit 0
[ "$st" = 0 ] && exit 1 || exit "$st"
