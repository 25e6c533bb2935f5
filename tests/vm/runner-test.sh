#!/usr/bin/env bash
# runner-test.sh [--cases "a b"]: the nested runner's own promises (run-nested.sh), each a case:
#   freeze-cpu     an L1 CPU that stops (vperf-rtspin takes it at SCHED_FIFO 50) is called a frozen nested stack
#                  (status 121) within 90 s of the stop, with L1's registers dumped, and QEMU is gone
#   freeze-boot    an L1 that never reaches /init (QEMU started paused) is called frozen at the boot limit
#   sigterm        SIGTERM to run-nested.sh ends its QEMU at once: status 143, nothing left running
#   parent-killed  SIGKILL to the shell that started run-nested.sh ends run-nested.sh and its QEMU (parent-death
#                  signals), and the lock is free again
#   runner-killed  SIGKILL to run-nested.sh itself ends its QEMU
#   lock-holder    a run that waits for the QEMU lock names the holder's pid and command, then runs
# Prints "runner-test: PASS|FAIL <case> (...)" per case (ctest-case.sh reads them); exits 0 when it could run.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

CASES="freeze-cpu freeze-boot sigterm parent-killed runner-killed lock-holder"
while [ $# -gt 0 ]; do
	case "$1" in
	--cases) CASES=${2:?}; shift 2 ;;
	*) die "$VM_EXIT_USAGE" "unknown argument '$1'" ;;
	esac
done
need_cmd gcc gcc
W="$VPERF_VM_BUILD/runner-test"
rm -rf "$W"
mkdir -p "$W/payload"
gcc -std=c11 -O2 -Wall -Wextra -static -o "$W/payload/vperf-rtspin" "$VM_DIR/guest/vperf-rtspin.c" ||
	die "$VM_EXIT_USAGE" "building guest/vperf-rtspin.c failed"
"$VM_DIR/mkimage.sh" >/dev/null || die "$VM_EXIT_USAGE" "mkimage.sh failed"
RN="$VM_DIR/run-nested.sh"

verdict() {	# CASE OK DETAIL
	if [ "$2" = 1 ]; then
		echo "runner-test: PASS $1 ($3)"
	else
		echo "runner-test: FAIL $1 ($3)"
		echo "--- $1:"
		[ ! -f "$W/$1.err" ] || tail -n 30 "$W/$1.err"
	fi
}
# rundir ERRFILE: the run dir run-nested.sh printed
rundir() { sed -n 's/^run-nested: run dir \([^;]*\);.*/\1/p' "$1" 2>/dev/null | head -1; }
# qemu_of RUNDIR: pids of QEMUs of that run (their command line names its monitor socket)
qemu_of() { pgrep -f -- "$1/monitor.sock" || true; }
# wait_payload ERRFILE SECONDS: until the run's console shows the payload started; 0 when it did
wait_payload() {
	local i d
	for ((i = 0; i < $2 * 10; i++)); do
		d=$(rundir "$1")
		[ -z "$d" ] || ! grep -aq 'VPERF-PAYLOAD: start' "$d/console.log" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}
# gone RUNDIR SECONDS: until no QEMU of that run is left; 0 when none is
gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ -n "$(qemu_of "$1")" ] || return 0
		sleep 0.1
	done
	return 1
}
lock_free() { flock -n "$VPERF_VM_BUILD/qemu.lock" true; }

case_freeze_cpu() {
	local c=freeze-cpu st t0 t1 d ok=1 why
	t0=$EPOCHSECONDS
	set +e
	"$RN" --quiet --payload "$W/payload" --timeout 400 -- \
		'echo -1 >/proc/sys/kernel/sched_rt_runtime_us; ./vperf-rtspin 1 380' >"$W/$c.out" 2>"$W/$c.err"
	st=$?
	set -e
	t1=$EPOCHSECONDS
	d=$(rundir "$W/$c.err")
	local tstart
	tstart=$(awk '$1 == "start" { print int($2) }' "$d/timing" 2>/dev/null)
	why="status $st, $((t1 - t0)) s in all"
	[ "$st" = "$VM_EXIT_FROZE" ] || ok=0
	grep -q 'nested stack froze (emulated SVM): L1 CPU 1 gave no heartbeat' "$W/$c.err" || { ok=0; why="$why; no freeze of CPU 1 named"; }
	if [ -n "$tstart" ]; then
		why="$why, $((t1 - tstart)) s from the payload's start (the stop) to QEMU's end"
		[ "$((t1 - tstart))" -le 90 ] || ok=0
	else
		ok=0; why="$why; the payload never started"
	fi
	grep -q 'CPU#1' "$d/l1-registers.txt" 2>/dev/null || { ok=0; why="$why; no registers of CPU 1 dumped"; }
	gone "$d" 5 || { ok=0; why="$why; QEMU still running"; }
	verdict "$c" "$ok" "$why"
}

case_freeze_boot() {
	local c=freeze-boot st t0 t1 d ok=1 why
	t0=$EPOCHSECONDS
	set +e
	VPERF_QEMU_EXTRA=-S VPERF_HB_BOOT_LIMIT=15 "$RN" --quiet --timeout 300 -- true >"$W/$c.out" 2>"$W/$c.err"
	st=$?
	set -e
	t1=$EPOCHSECONDS
	d=$(rundir "$W/$c.err")
	why="status $st after $((t1 - t0)) s (boot limit 15 s)"
	[ "$st" = "$VM_EXIT_FROZE" ] && [ "$((t1 - t0))" -le 40 ] || ok=0
	grep -q 'nested stack froze (emulated SVM): L1 did not reach /init within 15 s' "$W/$c.err" ||
		{ ok=0; why="$why; the boot freeze was not named"; }
	gone "$d" 5 || { ok=0; why="$why; QEMU still running"; }
	verdict "$c" "$ok" "$why"
}

case_sigterm() {
	local c=sigterm pid st t0 d ok=1 why
	"$RN" --quiet --timeout 300 -- 'sleep 280' >"$W/$c.out" 2>"$W/$c.err" &
	pid=$!
	if ! wait_payload "$W/$c.err" 120; then
		kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		verdict "$c" 0 "the payload did not start within 120 s"
		return
	fi
	d=$(rundir "$W/$c.err")
	t0=$EPOCHSECONDS
	kill -TERM "$pid"
	set +e
	wait "$pid"
	st=$?
	set -e
	why="status $st, $((EPOCHSECONDS - t0)) s after SIGTERM"
	[ "$st" = 143 ] && [ "$((EPOCHSECONDS - t0))" -le 15 ] || ok=0
	grep -q 'stopped by SIGTERM before L1 finished' "$W/$c.err" || { ok=0; why="$why; the stop was not named"; }
	gone "$d" 5 || { ok=0; why="$why; QEMU still running"; }
	lock_free || { ok=0; why="$why; the QEMU lock is still held"; }
	verdict "$c" "$ok" "$why"
}

# killed_case CASE WHAT SECONDS CMD...: start CMD (which runs run-nested.sh) in the background, SIGKILL it once the
# payload runs, and want no QEMU of that run left within SECONDS, and the lock free again. WHAT names CMD.
killed_case() {
	local c=$1 what=$2 secs=$3 pid t0 d ok=1 why
	shift 3
	"$@" >"$W/$c.out" 2>"$W/$c.err" &
	pid=$!
	if ! wait_payload "$W/$c.err" 120; then
		pkill -TERM -f -- "$(rundir "$W/$c.err")/monitor.sock" 2>/dev/null; kill -KILL "$pid" 2>/dev/null
		verdict "$c" 0 "the payload did not start within 120 s"
		return
	fi
	d=$(rundir "$W/$c.err")
	t0=$EPOCHSECONDS
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	if gone "$d" "$secs"; then
		why="QEMU gone $((EPOCHSECONDS - t0)) s after $what was killed"
	else
		ok=0; why="QEMU still running $secs s after $what was killed"
		pkill -KILL -f -- "$d/monitor.sock" || true
	fi
	sleep 1
	lock_free || { ok=0; why="$why; the QEMU lock is still held"; }
	verdict "$c" "$ok" "$why"
}

# the parent: a shell that waits for run-nested.sh in the foreground, as any script does
case_parent_killed() {
	killed_case parent-killed "the shell above run-nested.sh" 15 \
		bash -c "\"$RN\" --quiet --timeout 300 -- 'sleep 280'; echo parent-after"
}

case_runner_killed() {
	killed_case runner-killed run-nested.sh 10 "$RN" --quiet --timeout 300 -- 'sleep 280'
}

case_lock_holder() {
	local c=lock-holder pa st ok=1 why
	"$RN" --quiet --timeout 300 -- 'sleep 15' >"$W/$c.a.out" 2>"$W/$c.a.err" &
	pa=$!
	if ! wait_payload "$W/$c.a.err" 120; then
		kill -TERM "$pa" 2>/dev/null; wait "$pa" 2>/dev/null
		verdict "$c" 0 "the first run's payload did not start within 120 s"
		return
	fi
	set +e
	"$RN" --quiet --timeout 300 -- 'exit 5' >"$W/$c.out" 2>"$W/$c.err"
	st=$?
	wait "$pa"
	set -e
	why="second run: status $st"
	[ "$st" = 5 ] || ok=0
	if grep -q "waiting for $VPERF_VM_BUILD/qemu.lock: held by pid $pa (.*run-nested.sh" "$W/$c.err"; then
		why="$why; it said: $(grep -m1 -o 'held by pid [0-9]* ([^)]*)' "$W/$c.err" | cut -c1-80)..."
	else
		ok=0; why="$why; it did not name the holder (pid $pa)"
	fi
	grep -q 'QEMU pid [0-9]' "$W/$c.err" || { ok=0; why="$why; no QEMU pid named"; }
	verdict "$c" "$ok" "$why"
}

say "run-nested.sh's own cases: $CASES"
for c in $CASES; do
	case "$c" in
	freeze-cpu) case_freeze_cpu ;;
	freeze-boot) case_freeze_boot ;;
	sigterm) case_sigterm ;;
	parent-killed) case_parent_killed ;;
	runner-killed) case_runner_killed ;;
	lock-holder) case_lock_holder ;;
	*) die "$VM_EXIT_USAGE" "unknown case '$c'" ;;
	esac
done
exit 0
