#!/usr/bin/env bash
# soak.sh [options]: boot the guest again and again, or cycle CPUs or the module in it, and count the failures.
# Not part of CI (it runs for as long as it is told to); it measures the failure rates of tests/vm/README.md
# "Freezes and crashes" for one L2 VMM at a time, so that vperf-vmm and QEMU can be compared in the same L1.
#
#   --vmm vperf|qemu   the L2 VMM: vperf-vmm (default) or Debian's QEMU with -accel kvm in the same L1
#   --what W           boot: N boots that run `true`; cpu: in each boot, M offline/online cycles of every AP;
#                      kmod: in each boot, M cycles of insmod, a process with 4 monitored threads (as
#                      kmod-test's cycles case), rmmod (vperf only); fuzz: in each boot, vperf-kmod-fuzz for
#                      --seconds (a hostile user of /dev/vperf, kmod-test's fuzz case), then no context may be
#                      left, rmmod must succeed and dmesg must have no WARNING, BUG, Oops, stall (vperf only)
#   --boots N          guest boots (default 10; nested, all of them in one L1)
#   --cycles M         cycles per boot for cpu and kmod (default 50)
#   --seconds S        fuzz: seconds per boot (default 600)
#   --vcpus V          guest vCPUs (default 2)
#   --kmod             cpu: load vperf_guest.ko first (vperf only)
#   --record           vperf-vmm records each boot (--record /tmp/soak.vraw in L1, overwritten each time), host
#                      kernel events included: its tracefs instance enables kvm and sched tracepoints in L1 while
#                      the vCPU threads run (vperf only)
#   --l1-trace         trace L1's KVM and print its last lines after a crash or timeout (vm-run.sh --l1-trace;
#                      vperf only)
#   --host-bg CMD      a shell command run in the background where vperf-vmm runs (L1 when nested) beside each
#                      boot (vm-run.sh --host-bg), e.g. to provoke what the host kernel does to guest memory
#                      (vperf only)
#   --timeout S        per boot (default 300; fuzz: --seconds + 120)
#   --build DIR        the CMake build with profiler/vperf (default build/)
# Environment for experiments: VPERF_L1_SMP (L1's CPUs, default 2), VPERF_L1_APPEND and VPERF_L2_APPEND (more
# kernel parameters for L1 and for the guest, e.g. VPERF_L2_APPEND='page_poison=1 slub_debug=FZPU').
# Prints one line per boot and a summary: "soak: vmm=... what=... vcpus=... boots=N ok=A failed=B (statuses:
# 123 crash x, 124 timeout y, ...)". Exit status 0 when every boot passed, 1 when some failed, 2 usage.
# Each boot's console is in build-vm/soak-<vmm>-<what>-<date>.log.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

VMM=vperf
WHAT=boot
BOOTS=10
CYCLES=50
SECONDS_=600
VCPUS=2
KMOD=0
L1T=()
REC=()
HBG=()
TIMEOUT=
BUILD="$VM_DIR/../../build"
while [ $# -gt 0 ]; do
	case "$1" in
	--vmm) VMM=${2:?}; shift 2 ;;
	--what) WHAT=${2:?}; shift 2 ;;
	--boots) BOOTS=${2:?}; shift 2 ;;
	--cycles) CYCLES=${2:?}; shift 2 ;;
	--seconds) SECONDS_=${2:?}; shift 2 ;;
	--vcpus) VCPUS=${2:?}; shift 2 ;;
	--kmod) KMOD=1; shift ;;
	--l1-trace) L1T=(--l1-trace); shift ;;
	--record) REC=(--vmm-arg --record --vmm-arg /tmp/soak.vraw); shift ;;
	--timeout) TIMEOUT=${2:?}; shift 2 ;;
	--host-bg) HBG=(--host-bg "${2:?}"); shift 2 ;;
	--build) BUILD=${2:?}; shift 2 ;;
	-h | --help) usage 0 ;;
	*) die "$VM_EXIT_USAGE" "unknown option '$1' (see --help)" ;;
	esac
done
[ -n "$TIMEOUT" ] || TIMEOUT=$([ "$WHAT" = fuzz ] && echo $((SECONDS_ + 120)) || echo 300)
for n in BOOTS CYCLES SECONDS_ VCPUS TIMEOUT; do
	o=${n%_}
	[[ "${!n}" =~ ^[0-9]+$ ]] && [ "${!n}" -ge 1 ] || die "$VM_EXIT_USAGE" "--${o,,} '${!n}': a number >= 1"
done
case "$VMM" in vperf | qemu) ;; *) die "$VM_EXIT_USAGE" "--vmm '$VMM': vperf or qemu" ;; esac
case "$WHAT" in boot | cpu | kmod | fuzz) ;; *) die "$VM_EXIT_USAGE" "--what '$WHAT': boot, cpu, kmod or fuzz" ;; esac
[ "$VMM" = vperf ] || [ ${#REC[@]} = 0 ] || die "$VM_EXIT_USAGE" "--record: vperf-vmm records, --vmm vperf only"
if [ "$VMM" = qemu ] && { [ "$WHAT" = kmod ] || [ "$WHAT" = fuzz ] || [ "$KMOD" = 1 ]; }; then
	die "$VM_EXIT_USAGE" "vperf_guest.ko needs the vperf device: kmod, fuzz and --kmod run under --vmm vperf only"
fi

# The guest's command: the workload, then "SOAK-DONE" (a boot that prints it and powers off passed).
case "$WHAT" in
boot) CMD='echo SOAK-DONE' ;;
cpu)
	CMD="for i in \$(seq $CYCLES); do for c in /sys/devices/system/cpu/cpu[1-9]*/online; do"
	CMD="$CMD echo 0 >\$c || exit 11; echo 1 >\$c || exit 12; done; done; echo SOAK-DONE"
	;;
kmod)	# as kmod-test's cycles case: each cycle runs a process whose 4 threads are monitored, then unloads
	# the module's text address each cycle: a vCPU that stops in the module can be placed (nm on the .ko)
	# and every module's address at the start: a RIP elsewhere in the module area can be placed too
	CMD="rmmod vperf_guest; sed 's/^/SOAK-MODULE /' /proc/modules; for i in \$(seq $CYCLES); do insmod /payload/vperf_guest.ko || exit 11;"
	CMD="$CMD echo SOAK-CYCLE \$i text \$(cat /sys/module/vperf_guest/sections/.text) init \$(cat /sys/module/vperf_guest/sections/.init.text);"
	CMD="$CMD rm -f /tmp/r; vperf-kmod-thread churn 30 /tmp/r & p=\$!; w=0;"
	CMD="$CMD while [ ! -e /tmp/r ] && [ \$w -lt 500 ]; do sleep 0.01; w=\$((w + 1)); done; rm -f /tmp/r;"
	CMD="$CMD wait \$p || exit 13; rmmod vperf_guest || exit 12; done; echo SOAK-DONE"
	;;
fuzz)	# the module is loaded (--vperf); the seed is printed, so a failing boot can be repeated
	CMD="dmesg -c >/dev/null; vperf-kmod-fuzz $SECONDS_ || exit 13;"
	CMD="$CMD t=\$(cat /sys/module/vperf_guest/parameters/threads); echo SOAK-FUZZ threads left \$t;"
	CMD="$CMD [ \"\$t\" = 0 ] || exit 14; rmmod vperf_guest || exit 12;"
	CMD="$CMD bad=\$(dmesg | grep -cE 'WARNING|BUG|Oops|general protection|detected stalls|blocked for more than');"
	CMD="$CMD echo SOAK-FUZZ dmesg \$bad; [ \$bad = 0 ] || { dmesg; exit 15; }; echo SOAK-DONE"
	;;
esac

LOG="$VPERF_VM_BUILD/soak-$VMM-$WHAT-$(date +%Y%m%d-%H%M%S).log"
mkdir -p "$VPERF_VM_BUILD"
say "$VMM as the L2 VMM, $BOOTS boots of $VCPUS vCPUs, workload '$WHAT'$([ "$WHAT" = boot ] || echo ", $CYCLES cycles each")${REC:+, recorded}; log $LOG"
set +e
if [ "$VMM" = vperf ]; then
	VPERF="$BUILD/profiler/vperf"
	[ -x "$VPERF" ] || die "$VM_EXIT_USAGE" "no $VPERF: build first (cmake --build build)"
	VP=()	# vperf_guest.ko loaded before the command
	if [ "$WHAT" = kmod ] || [ "$WHAT" = fuzz ] || [ "$KMOD" = 1 ]; then VP=(--vperf "$VPERF"); fi
	if [ "$WHAT" = kmod ] || [ "$WHAT" = fuzz ]; then
		KT="$("$VM_DIR/kmod-test/build.sh")" || die "$VM_EXIT_USAGE" "building the kmod test programs failed"
		VP+=(--add "$KT/vperf-kmod-thread" --add "$KT/vperf-kmod-fuzz")
	fi
	"$VM_DIR/vm-run.sh" --vcpus "$VCPUS" --timeout "$TIMEOUT" --repeat "$BOOTS" "${L1T[@]}" "${REC[@]}" "${HBG[@]}" "${VP[@]}" \
		-- "$CMD" \
		>"$LOG" 2>&1
else
	# the same guest as vm-run's: the bundled /init with maxcpus=1 (vperf-keys, then the APs come online)
	"$VM_DIR/l2-boot.sh" --vmm qemu --l2-smp "$VCPUS" --l2-append maxcpus=1 --repeat "$BOOTS" \
		--timeout "$((TIMEOUT * BOOTS + 120))" -- "$CMD" >"$LOG" 2>&1
fi
st=$?
set -e

tr -d '\r' <"$LOG" | grep -E '^VM-RUN-REPEAT ' || true
ok=$(tr -d '\r' <"$LOG" | grep -cE '^VM-RUN-REPEAT [0-9]+/[0-9]+ status=0$' || true)
ran=$(tr -d '\r' <"$LOG" | grep -cE '^VM-RUN-REPEAT ' || true)
statuses=$(tr -d '\r' <"$LOG" | sed -n 's/^VM-RUN-REPEAT [0-9]*\/[0-9]* status=\([0-9]*\)$/\1/p' | grep -v '^0$' |
	sort | uniq -c | awk '{ n = $2 == 123 ? "crash" : $2 == 124 ? "timeout" : $2 == 126 ? "no status" : "status";
		printf "%s%s %s x%d", sep, $2, n, $1; sep = ", " }' || true)
crashes=$(tr -d '\r' <"$LOG" | grep -cE 'triple fault|Kernel panic|corrupted stack end' || true)
echo "soak: vmm=$VMM what=$WHAT vcpus=$VCPUS boots=$BOOTS ran=$ran ok=$ok failed=$((BOOTS - ok))" \
	"${statuses:+(statuses: $statuses)} panic/triple-fault lines=$crashes L1 status=$st"
[ "$ok" = "$BOOTS" ]
