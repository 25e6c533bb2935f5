#!/usr/bin/env bash
# run-nested.sh [options] [-- COMMAND...]: boot the L1 guest and run COMMAND inside it.
#
# Mode: nested. L1 is the Debian kernel from mkimage.sh under QEMU TCG with emulated AMD SVM; its initramfs loads
# kvm-amd, so COMMAND sees a working /dev/kvm and can run an L2 guest (this host's own /dev/kvm cannot).
#
# COMMAND is a shell command line run by L1's busybox sh in /payload (words joined with spaces, like ssh).
# Without COMMAND, L1 runs /payload/run.sh if the payload has one, else a built-in check that /dev/kvm exists.
# The console streams to stdout and to a log; the exit status is COMMAND's, or one of the runner's own:
#   124 timeout (L1 still running after --timeout seconds; QEMU killed)
#   125 boot failure (QEMU failed, or the kernel never reached /init)
#   126 no result line (/init started but no "VPERF-RESULT: status=N" line was seen)
#   122 L1 triple-faulted before its result line (QEMU's reset log, <run dir>/qemu-reset.log, says so)
#   121 the nested stack froze: an L1 CPU stopped (no heartbeat; see Freezes below); registers in the run dir
#   128+N stopped by signal N (TERM, INT, HUP) before L1 finished
#     2 usage error, missing image or tool
#
# Options:
#   --image DIR     images from mkimage.sh (default: build-vm/image; built on demand if missing)
#   --payload DIR   copy DIR's contents to /payload in L1 (may be given more than once)
#   --compress C    payload archive compression: none (default: fastest, TCG gunzips slowly) or gzip
#   --timeout S     seconds before QEMU is killed (default 600)
#   --smp N         L1 vCPUs (default 2)
#   --mem MB        L1 memory (default 2048)
#   --append ARGS   extra kernel command line for L1 (VPERF_L1_APPEND adds more, e.g. kvm_amd.npt=0 for an
#                   experiment; vm-run.sh and soak.sh pass it through the environment)
#   --disk FILE     attach FILE (an existing raw image) to L1 as a virtio disk: the first is /dev/vda, the next
#                   /dev/vdb, ...; L1's /init loads the virtio-blk modules (from the image's kernel) with the
#                   others. How L1 hands files back to this host (vm-run.sh --record)
#   --log FILE      console log (default: <run dir>/console.log; the run dir is printed)
#   --quiet         do not stream the console (the log is still written; the tail is shown on failure)
#   --shell         interactive busybox shell in L1 instead of a command (needs a terminal)
#   --grace S       on SIGTERM, SIGINT or SIGHUP give L1 S seconds to finish before it is ended (default 0: at
#                   once); for a caller that stops its guest its own way (vm-run.sh --record); a second signal
#                   ends it at once
#
# Freezes: L1's /init starts vperf-heartbeat (vperf.hb=ttyS1), a beat from every L1 CPU every 3 s on a second
# serial port. When no beat comes within 90 s of QEMU's start (VPERF_HB_BOOT_LIMIT), or a CPU misses its beats for
# 45 s (VPERF_HB_LIMIT), the stack is called frozen: L1's registers are dumped (QEMU's monitor), QEMU is ended and
# the status is 121. QEMU runs in a session of its own and dies with this script, however it ends.
#
# Only one QEMU runs at a time on this machine: runs queue on build-vm/qemu.lock.
#
# Debugging aids (environment): VPERF_QEMU_ACCEL replaces "tcg,thread=multi"; VPERF_QEMU_EXTRA adds QEMU
# arguments, e.g. "-gdb tcp::1234" (with --append nokaslr, gdb's `info threads` shows where L1's CPUs are).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

IMAGE="$VPERF_VM_IMAGE"
PAYLOADS=()
TIMEOUT=600
SMP=${VPERF_L1_SMP:-2}	# the environment too, for experiments through vm-run.sh and soak.sh
MEM=2048
APPEND="${VPERF_L1_APPEND:-}"
LOG=""
QUIET=0
COMPRESS=none
SHELL_MODE=0
GRACE=0
DISKS=()
CMD=()
while [ $# -gt 0 ]; do
	case "$1" in
	--image) IMAGE=${2:?--image needs a directory}; shift 2 ;;
	--payload) PAYLOADS+=("${2:?--payload needs a directory}"); shift 2 ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--smp) SMP=${2:?}; shift 2 ;;
	--mem) MEM=${2:?}; shift 2 ;;
	--append) APPEND="$APPEND ${2?}"; shift 2 ;;
	--log) LOG=${2:?}; shift 2 ;;
	--quiet) QUIET=1; shift ;;
	--compress) COMPRESS=${2:?}; shift 2 ;;
	--disk) DISKS+=("${2:?--disk needs an image file}"); shift 2 ;;
	--shell) SHELL_MODE=1; shift ;;
	--grace) GRACE=${2:?--grace needs seconds}; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; CMD=("$@"); break ;;
	*) say "unknown argument '$1'"; usage "$VM_EXIT_USAGE" ;;
	esac
done
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die "$VM_EXIT_USAGE" "--timeout wants whole seconds, got '$TIMEOUT'"
[[ "$GRACE" =~ ^[0-9]+$ ]] || die "$VM_EXIT_USAGE" "--grace wants whole seconds, got '$GRACE'"
[[ "$SMP" =~ ^[1-9][0-9]*$ ]] || die "$VM_EXIT_USAGE" "--smp (or VPERF_L1_SMP) wants a positive number of L1 vCPUs, got '$SMP'"
case "$COMPRESS" in gzip | none) ;; *) die "$VM_EXIT_USAGE" "--compress wants gzip or none, got '$COMPRESS'" ;; esac
for d in "${DISKS[@]}"; do
	[ -f "$d" ] && [ -w "$d" ] || die "$VM_EXIT_USAGE" "--disk '$d': not a writable file (create it first, e.g. truncate -s 64M)"
	case "$d" in *,*) die "$VM_EXIT_USAGE" "--disk '$d': QEMU cannot take a comma in a file name" ;; esac
done

need_cmd qemu-system-x86_64 qemu-system-x86
need_cmd cpio cpio
need_cmd gzip gzip
need_cmd flock util-linux
need_cmd setpriv util-linux
need_cmd setsid util-linux

# --- image ---------------------------------------------------------------------------------------------------
if [ ! -s "$IMAGE/vmlinuz" ] || [ ! -s "$IMAGE/initrd-l1.gz" ]; then
	say "no image in $IMAGE; building it with mkimage.sh"
	"$VM_DIR/mkimage.sh" "$IMAGE" || die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"
fi
KVER="$(cat "$IMAGE/kver" 2>/dev/null || echo unknown)"

# --- mode ----------------------------------------------------------------------------------------------------
if grep -qwE 'vmx|svm' /proc/cpuinfo; then
	say "note: this host has vmx/svm; a direct mode (vperf-vmm on the host's KVM) is not implemented yet"
fi
say "mode: nested: L1 under QEMU TCG with emulated SVM (kernel $KVER, $SMP vCPUs, $MEM MiB)"

# stage_disk_modules TREE: the virtio-blk modules of the image's kernel (from mkimage.sh's extracted package in
# the cache) under TREE/lib/modules/<kver>, and TREE/etc/vperf/modules = the image's load order + them, so that
# L1's /init loads them with the others, while one CPU is online (init.sh). The appended archive's files replace
# the base image's.
stage_disk_modules() {
	local tree=$1 moddir="$VPERF_VM_CACHE/linux-image-$KVER/lib/modules/$KVER" name p
	local -A seen=()
	local order=()
	[ -s "$moddir/modules.dep" ] ||
		die "$VM_EXIT_USAGE" "--disk: no kernel modules of $KVER in $moddir (run tests/vm/mkimage.sh)"
	[ -s "$IMAGE/modules" ] || die "$VM_EXIT_USAGE" "--disk: $IMAGE/modules missing (run tests/vm/mkimage.sh)"
	while read -r p; do [ -z "$p" ] || seen[$p]=1; done <"$IMAGE/modules"
	add_mod() {	# PATH: its dependencies first, each once
		local d
		[ -z "${seen[$1]:-}" ] || return 0
		seen[$1]=1
		for d in $(awk -F': *' -v m="$1" '$1 == m { print $2 }' "$moddir/modules.dep"); do add_mod "$d"; done
		order+=("$1")
	}
	for name in virtio_pci virtio_blk; do
		p=$(awk -F: -v n="/$name.ko" 'substr($1, length($1) - length(n) + 1) == n { print $1; exit }' \
			"$moddir/modules.dep")
		[ -n "$p" ] || die "$VM_EXIT_USAGE" "--disk: module $name not in $moddir/modules.dep"
		add_mod "$p"
	done
	mkdir -p "$tree/etc/vperf"
	cp "$IMAGE/modules" "$tree/etc/vperf/modules"
	for p in "${order[@]}"; do
		mkdir -p "$tree/lib/modules/$KVER/$(dirname "$p")"
		cp "$moddir/$p" "$tree/lib/modules/$KVER/$p"
		echo "$p" >>"$tree/etc/vperf/modules"
	done
}

# --- initramfs: base + an appended archive with the payload and the command -----------------------------------
mkdir -p "$VPERF_VM_BUILD/run"
# keep the 20 newest run dirs (console logs), drop older ones
find "$VPERF_VM_BUILD/run" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' | sort -rn | tail -n +20 |
	cut -d' ' -f2- | while IFS= read -r old; do rm -rf "$old"; done
RUNDIR="$(mktemp -d "$VPERF_VM_BUILD/run/XXXXXX")"
ln -sfn "$RUNDIR" "$VPERF_VM_BUILD/run/last"
[ -n "$LOG" ] || LOG="$RUNDIR/console.log"
: >"$LOG"
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() { rm -rf "$RUNDIR/extra" "$RUNDIR/initrd" "$RUNDIR/extra.cpio" "$RUNDIR/console.fifo"; }
trap cleanup EXIT

# maxcpus=1: /init brings the other CPUs online once the kernel text patching of its setup is done (init.sh).
# tsc=reliable: QEMU TCG's TSC is the host's (invariant, the same on every vCPU), but Linux marks an AMD-like
# CPU's TSC unstable on any SMP guest and falls back to the HPET. Then KVM in L1 has no stable master clock, so
# L2's kvm-clock lacks PVCLOCK_TSC_STABLE_BIT and L2's sched_clock turns "unstable": it is clamped to one tick
# (4 ms) past the last tick, and a late tick under TCG loses CPU time from guest threads (measured: a 100 ms
# thread lost 2.7 ms of its CLOCK_THREAD_CPUTIME_ID). L1's own sched_clock (vCPU threads' task-clock) too.
KARGS="console=ttyS0 quiet panic=-1 maxcpus=1 tsc=reliable"
INITRD="$IMAGE/initrd-l1.gz"
if [ "${#PAYLOADS[@]}" -gt 0 ] || [ "${#CMD[@]}" -gt 0 ] || [ "${#DISKS[@]}" -gt 0 ]; then
	mkdir -p "$RUNDIR/extra/payload" "$RUNDIR/extra/vperf"
	[ "${#DISKS[@]}" = 0 ] || stage_disk_modules "$RUNDIR/extra"
	for p in "${PAYLOADS[@]}"; do
		[ -d "$p" ] || die "$VM_EXIT_USAGE" "--payload $p is not a directory"
		cp -a "$p/." "$RUNDIR/extra/payload/"
	done
	if [ "${#CMD[@]}" -gt 0 ]; then
		{
			echo '#!/bin/sh'
			echo '# written by run-nested.sh'
			printf '%s\n' "${CMD[*]}"
		} >"$RUNDIR/extra/vperf/cmd.sh"
		chmod 0755 "$RUNDIR/extra/vperf/cmd.sh"
		KARGS="$KARGS vperf.run=/vperf/cmd.sh"
	fi
	mkcpio "$RUNDIR/extra" "$RUNDIR/extra.cpio" "$COMPRESS"
	# The kernel finds an uncompressed cpio after another archive only at a 4-byte aligned offset (zero
	# padding is skipped): pad the base image to 512 bytes before appending.
	cp "$IMAGE/initrd-l1.gz" "$RUNDIR/initrd"
	truncate -s %512 "$RUNDIR/initrd"
	cat "$RUNDIR/extra.cpio" >>"$RUNDIR/initrd"
	INITRD="$RUNDIR/initrd"
fi
[ "$SHELL_MODE" = 0 ] || KARGS="$KARGS vperf.shell=1"
[ -z "$APPEND" ] || KARGS="$KARGS $APPEND"

# The heartbeat port: L1's ttyS1 (the console is ttyS0) into a file, which the watchdog reads (see Freezes above).
HB=1
HBFILE="$RUNDIR/heartbeat"
: >"$HBFILE"
BOOT_LIMIT=${VPERF_HB_BOOT_LIMIT:-90}
HB_LIMIT=${VPERF_HB_LIMIT:-45}
[[ "$BOOT_LIMIT" =~ ^[0-9]+$ && "$HB_LIMIT" =~ ^[0-9]+$ ]] ||
	die "$VM_EXIT_USAGE" "VPERF_HB_BOOT_LIMIT and VPERF_HB_LIMIT want whole seconds"
# VPERF_HB_BOOT_LIMIT=0 (a debugging session, e.g. with gdb attached) or an interactive shell: no freeze detection
[ "$BOOT_LIMIT" != 0 ] && [ "$SHELL_MODE" = 0 ] || HB=0
[ "$HB" = 0 ] || KARGS="$KARGS vperf.hb=ttyS1"
# shellcheck disable=SC2054 # the commas are QEMU option syntax
QEMU=(qemu-system-x86_64
	-accel "${VPERF_QEMU_ACCEL:-tcg,thread=multi}" -cpu qemu64,+svm,+npt -smp "$SMP" -m "$MEM"
	-nographic -no-reboot -nic none
	-kernel "$IMAGE/vmlinuz" -initrd "$INITRD" -append "$KARGS")
# The monitor on a socket: before the timeout kills a frozen L1, qemu-regs.py asks it for every vCPU's registers.
MON="$RUNDIR/monitor.sock"
QEMU+=(-monitor "unix:$MON,server=on,wait=off")
# QEMU's own log of CPU resets: a triple fault in L1 resets it, and -no-reboot turns that into a QEMU exit with
# status 0 and nothing on the console; this log says "Triple fault" and holds the registers at the reset.
QLOG="$RUNDIR/qemu-reset.log"
QEMU+=(-d cpu_reset -D "$QLOG")
for d in "${DISKS[@]}"; do QEMU+=(-drive "file=$d,format=raw,if=virtio"); done
# ttyS0 stays the console on stdio; a -serial of our own would otherwise take its place
[ "$HB" = 0 ] || QEMU+=(-serial stdio -chardev "file,id=vperfhb,path=$HBFILE" -serial chardev:vperfhb)
# shellcheck disable=SC2206 # debugging aid: extra QEMU arguments, split on blanks
[ -z "${VPERF_QEMU_EXTRA:-}" ] || QEMU+=($VPERF_QEMU_EXTRA)

# --- one QEMU at a time --------------------------------------------------------------------------------------
vm_lock "$VPERF_VM_BUILD/qemu.lock" 9

say "run dir $RUNDIR; console log $LOG"
say "initrd $(du -h "$INITRD" | cut -f1); kernel command line: $KARGS"

if [ "$SHELL_MODE" = 1 ]; then
	# Interactive: the terminal talks to L1's console directly; tee (not the line-based stream) keeps prompts.
	set +e
	"${QEMU[@]}" | tee "$LOG"
	QRC=${PIPESTATUS[0]}
	set -e
	RESULT=$(tr -d '\r' <"$LOG" | sed -n 's/.*VPERF-RESULT: status=\([0-9][0-9]*\).*/\1/p' | tail -n 1)
	[ -n "$RESULT" ] || die "$VM_EXIT_NORESULT" "shell mode: no result line (QEMU status $QRC; log $LOG)"
	say "result: shell exit status $RESULT"
	exit "$RESULT"
fi

# --- boot, stream, watch, time --------------------------------------------------------------------------------
TFILE="$RUNDIR/timing"
: >"$TFILE"
stream() {
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		# SeaBIOS and the kernel send terminal resets (ESC c, ESC [ ... x): drop them, they break parsing
		# and would reset the caller's terminal.
		line=${line//$'\e'c/}
		line=${line//$'\e'[[]*([0-9;?])[a-zA-Z]/}
		printf '%s\n' "$line" >>"$LOG"
		[ "$QUIET" = 1 ] || printf '%s\n' "$line"
		# Markers may follow other output on the same line (BIOS text, a payload's unterminated last line).
		case "$line" in
		*VPERF-INIT:*) echo "init $EPOCHREALTIME" >>"$TFILE" ;;
		*VPERF-PAYLOAD:\ start*) echo "start $EPOCHREALTIME" >>"$TFILE" ;;
		*VPERF-PAYLOAD:\ end*) echo "end $EPOCHREALTIME" >>"$TFILE" ;;
		*VPERF-RESULT:*) echo "result $EPOCHREALTIME" >>"$TFILE" ;;
		esac
	done
}

shopt -s extglob
REGS="$RUNDIR/l1-registers.txt"
dump_regs() {	# RIPs also as _text + offset, where L1 said where KASLR put _text
	local ktext
	ktext=$(sed -n 's/.*VPERF-KTEXT: \([0-9a-f][0-9a-f]*\).*/\1/p' "$LOG" | head -1)
	python3 "$VM_DIR/qemu-regs.py" "$MON" ${ktext:+"$ktext"}
}

# The watchdog (below) ends QEMU and leaves its reason here: "froze ..." or "timeout ...".
VERDICT="$RUNDIR/verdict"
: >"$VERDICT"
# stop_qemu PID: TERM, and KILL 10 s later if it is still there.
stop_qemu() {
	local i
	kill -TERM "$1" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
}
# watchdog QPID: the run's clock. It ends QEMU
# - when L1 froze: no heartbeat at all within $BOOT_LIMIT s of QEMU's start (L1's /init starts it once the
#   CPUs are online), or one of the CPUs that beat missed its beats for $HB_LIMIT s (vperf-heartbeat: a thread
#   bound to each L1 CPU writes to ttyS1 every 3 s; a CPU that stops never writes again, while the other may go
#   on printing, even RCU stall reports). L1's registers are dumped first (QEMU's monitor).
# - at --timeout (registers dumped 10 s before, as before).
# - after a stop was asked for (STOPFILE, by the signal trap) and the grace period is over.
watchdog() {
	local qpid=$1 now t_hb_start="" cpus="" c seq line
	local -A last_seq=() last_change=()
	local dumped=0
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 1
		now=$EPOCHSECONDS
		if [ -s "$STOPFILE" ]; then
			read -r line c seq <"$STOPFILE"	# deadline, signal number and name
			if [ "$now" -ge "$line" ]; then
				echo "signal $c $seq" >"$VERDICT"
				stop_qemu "$qpid"
				return
			fi
		fi
		if [ "$((now - T0S))" -ge "$TIMEOUT" ]; then
			echo "timeout" >"$VERDICT"
			stop_qemu "$qpid"
			return
		fi
		if [ "$dumped" = 0 ] && [ "$TIMEOUT" -gt 20 ] && [ "$((now - T0S))" -ge "$((TIMEOUT - 10))" ]; then
			dump_regs >"$REGS" 2>&1
			dumped=1
		fi
		[ "$HB" = 1 ] || continue
		# the result line is out: L1 powers off now, whatever its CPUs do
		grep -aq 'VPERF-RESULT:' "$LOG" && continue
		if [ ! -s "$HBFILE" ]; then
			if [ "$((now - T0S))" -ge "$BOOT_LIMIT" ]; then
				if grep -aq 'VPERF-INIT:' "$LOG"; then
					echo "froze: L1 started /init but no heartbeat came within ${BOOT_LIMIT} s of QEMU's start" >"$VERDICT"
				else
					echo "froze: L1 did not reach /init within ${BOOT_LIMIT} s of QEMU's start" >"$VERDICT"
				fi
				dump_regs >"$REGS" 2>&1
				stop_qemu "$qpid"
				return
			fi
			continue
		fi
		[ -n "$t_hb_start" ] || t_hb_start=$now
		# the newest beat of each CPU, and the CPUs the heartbeat bound itself to
		while read -r c seq; do
			if [ "$c" = start ]; then
				cpus=$seq
				continue
			fi
			if [ "${last_seq[$c]:-}" != "$seq" ]; then
				last_seq[$c]=$seq
				last_change[$c]=$now
			fi
		done < <(tail -n 64 "$HBFILE" | tr -d '\r' | awk '
			/^vperf-hb: start cpus=/ { sub(/.*cpus=/, ""); sub(/ .*/, ""); print "start", $0; next }
			/^vperf-hb: cpu=[0-9]+ seq=[0-9]+$/ { split($2, a, "="); split($3, b, "="); s[a[2]] = b[2] }
			END { for (c in s) print c, s[c] }')
		for c in ${cpus//,/ }; do
			line=${last_change[$c]:-$t_hb_start}
			if [ "$((now - line))" -ge "$HB_LIMIT" ]; then
				echo "froze: L1 CPU $c gave no heartbeat for $((now - line)) s (its last: seq ${last_seq[$c]:-none})" >"$VERDICT"
				dump_regs >"$REGS" 2>&1
				stop_qemu "$qpid"
				return
			fi
		done
	done
}

# Signals: with --grace 0 (the default) a TERM, INT or HUP ends L1 at once; with --grace S the caller stops
# the guest its own way (vm-run.sh --record asks L1 to stop and bring the recording back) and L1 gets S s for
# that, then is ended; a second signal ends it at once. QEMU runs in a session of its own (a terminal's Ctrl-C
# reaches it only through here) and dies with this script even when this script is killed (parent-death signal).
STOPFILE="$RUNDIR/stop-at"
: >"$STOPFILE"
on_signal() {	# NAME NUMBER
	if [ "$GRACE" -gt 0 ] && [ ! -s "$STOPFILE" ]; then
		say "SIG$1: L1 has ${GRACE} s to finish (the caller stops its guest), then it is ended"
		echo "$((EPOCHSECONDS + GRACE)) $2 $1" >"$STOPFILE"
		return
	fi
	say "SIG$1: ending L1 (QEMU pid $QPID)"
	echo "signal $2 $1" >"$VERDICT"
	stop_qemu "$QPID"
}

FIFO="$RUNDIR/console.fifo"
mkfifo "$FIFO"
T0=$EPOCHREALTIME
T0S=$EPOCHSECONDS
set +e
# pdeathsig: if this script dies by SIGKILL, so does QEMU; setsid: a terminal's signals reach QEMU only through
# this script's trap. Both exec in place, so $! is QEMU's pid.
setpriv --pdeathsig KILL -- setsid "${QEMU[@]}" </dev/null >"$FIFO" 2>&1 &
QPID=$!
echo "qemu pid $QPID" >>"$VM_LOCK_FILE"
# Only QEMU keeps the lock's descriptor: the lock is free the moment QEMU is gone, whatever is left of the rest.
stream <"$FIFO" 9>&- &
SPID=$!
watchdog "$QPID" </dev/null >/dev/null 2>&1 9>&- &
WPID=$!
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT
trap 'on_signal HUP 1' HUP
while kill -0 "$QPID" 2>/dev/null; do wait "$QPID"; done
wait "$QPID"
QRC=$?
trap - TERM INT HUP
wait "$SPID"
kill "$WPID" 2>/dev/null
wait "$WPID" 2>/dev/null
set -e
T1=$EPOCHREALTIME
tget() { awk -v k="$1" '$1 == k { v = $2 } END { print v }' "$TFILE"; }
TINIT=$(tget init)
TSTART=$(tget start)
TEND=$(tget end)
TRESULT=$(tget result)
timing="total $(elapsed "$T0" "$T1") s"
[ -z "$TINIT" ] || timing="$timing; QEMU start -> /init $(elapsed "$T0" "$TINIT") s"
[ -z "$TINIT" ] || [ -z "$TSTART" ] || timing="$timing; /init -> payload $(elapsed "$TINIT" "$TSTART") s"
[ -z "$TSTART" ] || [ -z "$TEND" ] || timing="$timing; payload $(elapsed "$TSTART" "$TEND") s"
[ -z "$TRESULT" ] || timing="$timing; result -> QEMU exit $(elapsed "$TRESULT" "$T1") s"
say "timing (wall): $timing"

show_tail() { [ "$QUIET" = 0 ] || { say "last console lines:"; tail -n 25 "$LOG" >&2; }; }
show_regs() {	# WHEN
	[ -s "$REGS" ] || return 0
	grep '^qemu-regs: CPU' "$REGS" | sed 's/^qemu-regs: /run-nested: L1 /' >&2 || true
	say "L1's vCPUs' registers $1: $REGS"
}

verdict=$(cat "$VERDICT")
case "$verdict" in
froze*)
	show_tail
	show_regs "when the freeze was seen"
	# what the kernels said about it (L1's and L2's lines share this console)
	grep -aE 'rcu: INFO|self-detected stall|soft lockup|hard LOCKUP|Watchdog detected' "$LOG" | tail -n 4 |
		sed 's/^/run-nested: console: /' >&2 || true
	die "$VM_EXIT_FROZE" "nested stack froze (emulated SVM): ${verdict#froze: }; QEMU ended $(elapsed "$T0" "$T1") s after its start (log $LOG; heartbeat $HBFILE)"
	;;
timeout)
	show_tail
	show_regs "before the timeout"
	die "$VM_EXIT_TIMEOUT" "timeout: L1 still running after ${TIMEOUT}s; QEMU killed (log $LOG)"
	;;
signal*)
	# a result line that came first stands: L1 finished in the grace period
	if ! grep -aq 'VPERF-RESULT:' "$LOG"; then
		read -r _ signo signame <<<"$verdict"
		die "$((128 + signo))" "stopped by SIG$signame before L1 finished: QEMU ended (log $LOG)"
	fi
	;;
esac
if grep -q 'Initramfs unpacking failed' "$LOG"; then
	say "warning: the L1 kernel could not unpack the whole initramfs (payload missing?): $(grep -m1 'Initramfs unpacking failed' "$LOG")"
fi
RESULT=$(sed -n 's/.*VPERF-RESULT: status=\([0-9][0-9]*\).*/\1/p' "$LOG" | tail -n 1)
if [ -n "$RESULT" ]; then
	[ "$QRC" = 0 ] || say "warning: QEMU exited with status $QRC after the result line"
	say "result: payload status $RESULT"
	exit "$RESULT"
fi
show_tail
if [ -z "$TINIT" ]; then
	die "$VM_EXIT_BOOTFAIL" "boot failure: L1 never reached /init (QEMU status $QRC; log $LOG)"
fi
if [ "$QRC" = 0 ] && grep -q 'Triple fault' "$QLOG" 2>/dev/null; then
	# the registers of the last reset of each CPU, as QEMU logged them
	awk '/Triple fault/ { tf = 1 } tf && /^(RAX|RSI|R8 |R12|RIP|ES |CS |SS |CR0|EFER)/' "$QLOG" | tail -n 20 |
		sed 's/^/run-nested: L1 at the reset: /' >&2
	die "$VM_EXIT_L1CRASH" "L1 triple-faulted (QEMU reset it; no panic on the console): no result line (QEMU log $QLOG; console $LOG)"
fi
die "$VM_EXIT_NORESULT" "no result line: /init started but printed no VPERF-RESULT (QEMU status $QRC; log $LOG)"
