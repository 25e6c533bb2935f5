#!/usr/bin/env bash
# vm-record-test.sh VPERF MARKS: `VPERF vm record` on the real VM runner (four recorded guest boots; nested on the
# development machines, where the raw recording comes back from L1 through run-nested.sh --disk). In the guest, MARKS
# (record-test/vperf-record-marks.c, linked with libvperf) writes markers; record-test/check.py reads the CTF trace
# with babeltrace2. Cases (each prints "vm-record: PASS|FAIL <case> ..."):
#   raw       DIR exists and vperf-vmm's raw recording arrived in DIR/.raw/vmm.vraw with a valid header (magic
#             VPERFRAW, its size 72, version 1, 2 vCPUs, a TSC frequency)
#   conserve  4 threads write 100000 markers between them (1 MiB buffers; a writer that finds its buffer full
#             flushes it and tries again): each is in the trace exactly once, each thread's in the order written,
#             and the recording's losses are exactly the calls the writers saw refused (and made again)
#   order     1000 triples (marker A, a port write the VMM records as an exit, marker B) from one thread: in the
#             trace's one clock, A < the exit < B for every triple (guest TSC mapped onto the host's)
#   sched     8 threads burn CPU for 4 s on the 2 vCPUs, each moving itself to the other vCPU every 100 ms of its
#             CPU time: the CPU time the guest kernel's sched_switch records give each thread, up to the marker
#             carrying its CLOCK_THREAD_CPUTIME_ID, is within 1% of that (plus, at most, the waits of slices that
#             began on an idle vCPU, which Linux charges from the enqueue: tests/vm/README.md), with no switch
#             record missing
#   sample    a thread samples its own vperf::vcpu-clock every 1 ms for 3 s while calling rm_hot3 (3 units of work)
#             and rm_hot1 (1 unit) from rm_burn: the recording's samples, with the user callchains the guest module
#             walks by frame pointers, put 3:1 (2..4.5) of them in rm_hot3 and rm_hot1 and >= 90% of those have
#             rm_burn as the caller (symbols from nm on MARKS, placed by the address the program printed)
#   scribble  last in that run: vperf_guest.ko's trace_scribble test hook overwrites vCPU 0's ring header with
#             0xa5 bytes while a thread on vCPU 1 writes 1000 markers around it: all 1000 arrive, the recording
#             counts the drains it refused (guest_ring_invalid bad_headers, the summary), vCPU 0 has no record
#             from after the break, vCPU 1 goes on, and the run ends normally (the VMM and the recording survive)
#   states    `vperf report --states` of that run (docs/states.md), after `vperf-record-marks sleep 100 10` and
#             `wake 1000` (two threads on CPU 0 passing a futex word): the order thread alone has exits at PORT, all
#             1000, their time within 5% of the recorded exits' less what of them the vCPU thread spent switched
#             out on the host (that is "preempted on the host"); the sleeper's "waiting: timer" >= 95% of its 1 s
#             with the vector named; each futex side's "waiting: thread" name the other (>= 95% of them; thread
#             start-up can add a wait on the main thread), >= 500 of them together (which side blocks in a round
#             depends on the guest's wakeup preemption); its chrome export parses as JSON, has the sampling thread's
#             vcpu-clock counter track with exactly the recording's counts (a step of >= the 1 ms period), has the
#             threads' state slices, and every track's slices nest; its ctf export (LTTng kernel traces host/ and
#             guest/) reads in babeltrace2 with the recording's host sched_switch, kvm_entry, kvm_exit and guest
#             sched_switch and process_fork, one for one at the same times and CPUs
#   exits     `vperf report --exits` of that run (docs/states.md, "Exits"), after `vperf-record-marks exits 300 100`
#             (one thread writes EXITS_PORT 300 times from rm_io3 and 100 times from rm_io1): the io exits under
#             the two functions number 300 and 100 (within 1%), each with its cost, mean and p99, and the
#             thread's exits cost what `--states` says it spent in the host (within 2%); -j gives the same totals
#   states-steal  `vperf report --states` of the steal run: the thread's "preempted on the host" (its whole life,
#             a thread started for the count) within 5% of its vperf::steal, the hog the preemptor named most
#   profile   a third recorded run, `vperf vm record -F 2000 -g` of `vperf-record-marks profile 4` (rm_burn in a thread
#             for 4 s, no sampling of its own): vperf_guest.ko's trace sampler, started on the shell the guest runs
#             and inherited by the program and its thread, gives that thread's samples the same 3:1 profile and
#             callers as the sample case, each flagged as a guest perf event's period
#   report    that profile through `vperf report` (guest user frames named through the guest's mmap records and the
#             recording's files list, guest kernel frames through the bundled kernel's symbols): the same
#             rm_hot3 and rm_hot1 counts as the raw ips, their ratio within 10% of the program's measured time
#             in each (TSC around every call), >= 90% of the guest kernel samples named; go tool pprof -top
#             on its pprof export the same two counts
#   demo      a fourth recorded run, `vperf vm record -F 1000 -g -- vperf-demo`, through every reader: vperf report
#             (stdio, CSV, JSON; guest kernel and user frames named), --states, vperf timeline and the flame graph
#             rendered by headless Chromium, the chrome, folded, pprof (go tool pprof) and ctf (babeltrace2) exports
#   kill      a second recorded run, whose recorder (vperf-vmm, writing the raw recording) gets SIGKILL while 2
#             threads stream markers (through the VM runner's --host-bg, in a wrapper named by VPERF_VM_RUNNER):
#             `vperf vm record` still brings the recording back and converts it up to its last whole chunk, and
#             babeltrace2 reads it with exit 0; each thread's markers are a gap-free prefix 0..k-1, >= 1000 in all
# A failed case's recording is kept in ./vmrecord-failed/<case> (or $VPERF_RECORD_KEEP/<case>) for diagnosis.
# Exit status: 0 all passed, 1 a case failed, or the run's status (121..126) when the guest did not run.
set -uo pipefail
VPERF=${1:?usage: vm-record-test.sh VPERF MARKS}
MARKS=${2:?usage: vm-record-test.sh VPERF MARKS}
CHECK="$(dirname "$0")/record-test/check.py"
PORT=0x5700	# no device there: vperf-vmm records the exit and ignores the write
EXITS_PORT=0x5710	# the exits case's (the states case wants PORT's exits from one thread)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DIR="$WORK/rec"

(cd "$WORK" && "$VPERF" vm record --timeout 300 -o "$DIR" --add "$MARKS" -- \
	"export VPERF_MARK_KB=1024; vperf-record-marks conserve 4 100000 && vperf-record-marks order 1000 $PORT &&
	 vperf-record-marks sched 8 4 100 && vperf-record-marks sample 3 && vperf-record-marks sleep 100 10 &&
	 vperf-record-marks wake 1000 && vperf-record-marks exits 300 100 $EXITS_PORT &&
	 vperf-record-marks scribble 1000 0") \
	>"$WORK/out" 2>&1
st=$?
cat "$WORK/out"
echo "vm-record: vperf vm record exited with status $st"
case "$st" in
121 | 122 | 123 | 124 | 125 | 126) echo "vm-record: the guest run ended with status $st"; exit "$st" ;;
esac

fails=0
# a failed case's recording is kept for whoever looks into it (the next failure of that case replaces it)
KEEP=${VPERF_RECORD_KEEP:-$PWD/vmrecord-failed}
verdict() { # CASE OK DETAIL [RECORDING]
	if [ "$2" = 1 ]; then echo "vm-record: PASS $1 ($3)"; return; fi
	echo "vm-record: FAIL $1 ($3)"
	fails=1
	# a run cut short (the kill case, 25 s) can freeze too soon for vperf-vmm's probe: its records show it
	# (ctest-batch.sh then reruns the batch, as for the probe's own words)
	if [ -n "${4:-}" ] && [ -d "$4" ] && fz=$(python3 "$CHECK" frozen "$4" 2>&1); then
		echo "vm-record: $1: $fz"
	fi
	if [ -n "${4:-}" ] && [ -d "$4" ] && mkdir -p "$KEEP" && rm -rf "${KEEP:?}/$1" && cp -a "$4" "$KEEP/$1"; then
		echo "vm-record: $1's recording kept in $KEEP/$1"
	fi
}

# why a recorded run ended early (status 121..126), in a verdict's words: vperf-vmm's timeout or crash dump (which
# vCPU, where, what code is there) and run-nested.sh's word on L1, so that a failure in CI's log says which of the
# nested stack's known failures it was (tests/vm/README.md, "Freezes") or that it is none of them
stopped() { # STATUS OUTPUT-FILE
	case "$1" in 121 | 122 | 123 | 124 | 125 | 126) ;; *) return ;; esac
	printf '; how it stopped: '
	grep -aE 'vperf-vmm: error: (timeout|vcpu[0-9]+: (rip |code at |triple fault|[0-9]+ KVM_RUNs))|run-nested: .*(timeout: L1|nested stack froze|[Tt]riple fault|registers)|Kernel panic|soft lockup|RCU stall|rcu_sched detected|BUG: |Oops' "$2" |
		head -12 | cut -c1-300 | paste -sd'|'
}

RAW="$DIR/.raw/vmm.vraw"
ok=0
detail="no $RAW"
if [ -d "$DIR" ] && [ -s "$RAW" ]; then
	# struct vperf_rawrec_header: magic[8], size u32, version u32, tsc_khz u64, nr_vcpus u32
	read -r magic size version khz vcpus < <(python3 -c '
import struct, sys
h = open(sys.argv[1], "rb").read(72)
m, size, ver, khz, n = struct.unpack_from("<8sIIQI", h)
print(m.decode("ascii", "replace"), size, ver, khz, n)' "$RAW")
	detail="$(stat -c %s "$RAW") bytes; magic $magic, header size $size, version $version, tsc_khz $khz, $vcpus vCPUs"
	[ "$magic" = VPERFRAW ] && [ "$size" = 72 ] && [ "$version" = 1 ] && [ "$vcpus" = 2 ] && [ "$khz" -gt 0 ] && ok=1
elif [ -d "$DIR" ]; then
	detail="$DIR exists, but no $RAW"
fi
verdict raw "$ok" "$detail; vm record status $st" "$DIR"
# the writers' own account: "conserve: written W lost L flushes F" (F calls refused, each made again)
read -r _ _ written _ lost _ refused < <(grep -a -m1 '^conserve: written' "$WORK/out" || echo "conserve: written 0 lost 0 flushes 0")
echo "vm-record: the writers wrote $written markers, lost $lost, had $refused calls refused and made again"
for c in "conserve 4 $((100000 - lost)) $refused" "order 1000 $PORT" "sched 8 1" "scribble 1000 0"; do
	# shellcheck disable=SC2086 # the case and its arguments, split on purpose
	set -- $c
	out=$(python3 "$CHECK" "$1" "$DIR" "${@:2}" 2>&1)
	ok=0
	[ "$st" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
	verdict "$1" "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $st$(stopped "$st" "$WORK/out")" "$DIR"
done
# sample: where the program said rm_burn was loaded places nm's symbols
addr=$(grep -a -m1 '^sample: rm_burn' "$WORK/out" | awk '{print $3}')
out=$(python3 "$CHECK" sample "$DIR" "$MARKS" "${addr:-0}" 2>&1)
ok=0
[ "$st" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict sample "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $st$(stopped "$st" "$WORK/out")" "$DIR"

# states: vperf report --states on the same recording (docs/states.md): the order case's 1000 port writes, the
# sleeper's 100 x 10 ms, the futex waiter's waker
read -r _ _ stid _ < <(grep -a -m1 '^sleep: tid' "$WORK/out" || echo "sleep: tid 0 x")
read -r _ _ waiter _ waker _ < <(grep -a -m1 '^wake: waiter' "$WORK/out" || echo "wake: waiter 0 waker 0 rounds 0")
out=$(python3 "$CHECK" states "$DIR" "$VPERF" "$PORT" 1000 "${stid:-0}" 1000 "${waiter:-0}" "${waker:-0}" 1000 2>&1)
ok=0
[ "$st" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict states "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $st$(stopped "$st" "$WORK/out")" "$DIR"

# exits: vperf report --exits (docs/states.md, "Exits"): the two functions' io exits by count, their cost
# (the guest's console ends its lines with \r\n)
read -r _ _ etid _ en _ em < <(grep -a -m1 '^exits: tid' "$WORK/out" | tr -d '\r' || echo "exits: tid 0 rm_io3 0 rm_io1 0")
out=$(python3 "$CHECK" exits "$DIR" "$VPERF" "${etid:-0}" "${en:-0}" "${em:-0}" 2>&1)
ok=0
[ "$st" = 0 ] && [ "$en" = 300 ] && [ "$em" = 100 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict exits "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $st$(stopped "$st" "$WORK/out")" "$DIR"

# profile: vm record's own sampling (-F -g: vperf record --into-host wraps the command in the guest)
PDIR="$WORK/profile"
(cd "$WORK" && "$VPERF" vm record --timeout 300 -F 2000 -g -o "$PDIR" --add "$MARKS" -- \
	"vperf-record-marks profile 4") >"$WORK/pout" 2>&1
pst=$?
cat "$WORK/pout"
echo "vm-record: vperf vm record -F 2000 -g exited with status $pst"
read -r _ _ paddr _ ptid < <(grep -a -m1 '^profile: rm_burn' "$WORK/pout" || echo "profile: rm_burn 0 tid 0")
out=$(python3 "$CHECK" sample "$PDIR" "$MARKS" "${paddr:-0}" "${ptid:-0}" 2>&1)
ok=0
[ "$pst" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict profile "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $pst$(stopped "$pst" "$WORK/pout")" "$PDIR"
# report: the same profile through vperf report's own symbols (the guest's mmap records, the files list, the guest
# kernel's System.map) and through go tool pprof on the pprof export
read -r _ _ _ m3 _ m1 _ < <(grep -a -m1 '^profile: measured' "$WORK/pout" || echo "profile: measured rm_hot3 0 rm_hot1 0 x")
ratio=$(awk -v a="${m3:-0}" -v b="${m1:-0}" 'BEGIN { printf "%.6f", (b > 0 ? a / b : 0) }')
out=$(python3 "$CHECK" report "$PDIR" "$VPERF" "$MARKS" "${paddr:-0}" "${ptid:-0}" "$ratio" 2>&1)
ok=0
[ "$pst" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict report "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $pst" "$PDIR"

# demo: the bundled demo recorded and read by every reader (issue 11's "one recording of the bundled demo")
DDIR="$WORK/demo"
(cd "$WORK" && "$VPERF" vm record --timeout 300 -F 1000 -g -o "$DDIR" -- vperf-demo) >"$WORK/dout" 2>&1
dst=$?
tail -5 "$WORK/dout"
echo "vm-record: vperf vm record -F 1000 -g -- vperf-demo exited with status $dst"
out=$(python3 "$CHECK" demo "$DDIR" "$VPERF" 2>&1)
ok=0
[ "$dst" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict demo "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $dst$(stopped "$dst" "$WORK/dout")" "$DDIR"

# kill: the recorder SIGKILLed mid-run. The wrapper adds --host-bg to the runner vperf would use: where vperf-vmm runs
# (L1 when nested), 25 s after it started, kill -9 it, while the guest's 2 threads stream markers for 120 s.
VMRUN=${VPERF_VM_RUNNER:-$(cd "$(dirname "$0")" && pwd)/vm-run.sh}
runner() { # NAME VM-RUN-OPTIONS...: a runner that is VMRUN with those options first
	{ printf '#!/bin/bash\nexec %q' "$VMRUN"; printf ' %q' "${@:2}"; printf ' "$@"\n'; } >"$WORK/$1"
	chmod +x "$WORK/$1"
}
# shellcheck disable=SC2016 # expands where vperf-vmm runs
runner killing-runner --host-bg 'sleep 25; kill -9 $(pidof vperf-vmm)'
KDIR="$WORK/killed"
(cd "$WORK" && VPERF_VM_RUNNER="$WORK/killing-runner" "$VPERF" vm record --timeout 300 -o "$KDIR" --add "$MARKS" -- \
	"export VPERF_MARK_KB=1024; vperf-record-marks stream 2 120") >"$WORK/kout" 2>&1
kst=$?
cat "$WORK/kout"
echo "vm-record: vperf vm record with its recorder killed exited with status $kst"
out=$(python3 "$CHECK" prefix "$KDIR" 2 1000 2>&1)
ok=0
cut=0
grep -aq 'cut short' "$WORK/kout" && cut=1
[ "$cut" = 1 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict kill "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); said cut short: $cut; vm record status $kst$(
	[ "$kst" = 137 ] || stopped "$kst" "$WORK/kout")" "$KDIR"

# steal: vperf-vmm and a CPU hog share host CPU 0 (L1's when nested)
runner hog-runner --vmm-prefix 'taskset -c 0' --host-bg 'exec taskset -c 0 sh -c "while :; do :; done"'
SDIR="$WORK/steal"
(cd "$WORK" && VPERF_VM_RUNNER="$WORK/hog-runner" "$VPERF" vm record --vcpus 1 --timeout 300 -o "$SDIR" \
	--add "$MARKS" -- "vperf-record-marks steal 5") >"$WORK/sout" 2>&1
sst=$?
cat "$WORK/sout"
echo "vm-record: vperf vm record beside a host CPU hog exited with status $sst"
out=$(python3 "$CHECK" steal "$SDIR" 5 2>&1)
ok=0
[ "$sst" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict steal "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $sst$(stopped "$sst" "$WORK/sout")" "$SDIR"
out=$(python3 "$CHECK" states-steal "$SDIR" "$VPERF" 5 2>&1)
ok=0
[ "$sst" = 0 ] && [ "$(echo "$out" | tail -1)" = PASS ] && ok=1
verdict states-steal "$ok" "$(echo "$out" | grep -v '^PASS$\|^FAIL$' | paste -sd';'); vm record status $sst$(stopped "$sst" "$WORK/sout")" "$SDIR"
exit "$fails"
