#!/usr/bin/env bash
# vm-run.sh [options] -- COMMAND [ARGS...]: run COMMAND in a guest booted by vperf-vmm, exit with its status.
# This is what `vperf vm run` executes.
#
# The guest is the bundled default image (Debian's kernel + a busybox initramfs, built by mkimage.sh) unless
# --kernel/--initrd name others. Where this host's /dev/kvm runs guests (hardware virtualization), vperf-vmm runs
# here; otherwise (no vmx/svm, as on the development machines) it runs inside an L1 guest under QEMU TCG with
# emulated SVM (run-nested.sh). The mode used is printed.
#
# Options:
#   --vcpus N               guest vCPUs (default 2)
#   --mem MiB               guest memory (default 512)
#   --kernel FILE           guest kernel (bzImage); default: the bundled image's
#   --initrd FILE           guest initramfs; default: the bundled image's (busybox + /init)
#   --add PATH[:GUEST_PATH] put a file or directory into the guest (default GUEST_PATH: /payload/<name>); a
#                           dynamically linked program brings the shared libraries ldd finds for it, into
#                           /payload/lib (on LD_LIBRARY_PATH), and its ELF interpreter (repeatable)
#   --timeout S             give up after S seconds (default 600): status 124
#   --mode auto|direct|nested   force a mode (default auto)
#   --quiet                 show only the command's output and vperf-vmm's messages
#   --vmm-arg ARG           an extra vperf-vmm argument, e.g. --vmm-arg --stats (repeatable)
#   --vmm-prefix WORDS      words before vperf-vmm's command, where it runs, e.g. 'taskset -c 0'
#   --host-bg CMD           a shell command started in the background where vperf-vmm runs (L1 when nested)
#                           before it, and killed when the guest has ended: e.g. a CPU hog for a steal test
#   --repeat N              boot the guest N times in a row (the same command each time; nested: in one L1), print
#                           "VM-RUN-REPEAT i/N status=S" after each, exit with the first non-zero status (soak.sh)
#   --l1-trace              nested: trace L1's KVM (kvm_exit, kvm_inj_virq, kvm_page_fault, kvm_nested_vmexit)
#                           into a small ring while vperf-vmm runs; after a guest crash (123) or timeout (124),
#                           print its last 400 lines between L1-TRACE-BEGIN and L1-TRACE-END: what each vCPU did
#                           last (the guest RIP of a triple fault's shutdown exit, which KVM's reset hides from
#                           vperf-vmm on AMD)
#   --vperf BIN             vperf in the guest: BIN (a vperf CLI) as /payload/bin/vperf, the vperf-demo next to it
#                           as /payload/bin/vperf-demo, and vperf_guest.ko (built by build-kmod.sh) loaded before
#                           COMMAND runs (`vperf vm run` passes its own executable)
#   --guest-trace           with --vperf: load vperf_guest.ko with trace=1, so that the guest writes its trace
#                           records (sched, irq, process, samples, markers) for the VMM to drain
#   --record FILE           vperf-vmm records the run (vperf-vmm --record: the raw recording of its exits, the
#                           guest's trace records, the TSC offsets, the host kernel's events) and the file ends up at
#                           FILE on this host, also when the guest crashed (123) or timed out (124): the exit status
#                           says how the run ended. Nested, vperf-vmm writes it in L1's memory and L1 copies it onto a
#                           virtio disk (a sparse file here) after vperf-vmm exits; vm-run.sh copies it out of that
#                           disk after QEMU exits. SIGINT, SIGTERM or SIGHUP stop the guest (vperf-vmm exits 143)
#                           and still bring the recording back. Not with --repeat
#   --guest-files DIR       with --record: what a report needs to name the guest's frames, into DIR (made if
#                           missing): DIR/files, a line "GUEST_PATH<TAB>HOST_PATH" for every file and directory put
#                           into the guest (the bundled busybox too), and DIR/System.map, the guest kernel's
#                           text symbols: --kernel-map's, or nested with the bundled kernel, L1's /proc/kallsyms
#                           (L1 runs that kernel image too; Debian's System.map is a placeholder); in that case
#                           also DIR/vdso.so, L1's vDSO image (the same kernel's), which names [vdso] frames
#   --kernel-map FILE       the System.map (or a saved /proc/kallsyms) of --kernel's kernel, for --guest-files
#   --vmm vperf|qemu        the VMM of the guest (default vperf: vperf-vmm).  qemu: Debian's qemu-system-x86_64
#                           -M pc -accel kvm (nested only, carried into L1), with an ivshmem-plain device backed by
#                           a file in L1 (16 MiB) that vperf_guest.ko, finding no vperf device, traces into
#                           (docs/abi.md 8); --record then records it from outside as `vperf kvm record` does
#                           (kvm-rec, the same recorder, static). The guest's status comes from its console.
#                           --vmm-arg and --vmm-prefix are vperf-vmm's only
#   --record-max MiB        the most the raw recording can hold (default 256; vperf-vmm --record-max; nested, the
#                           disk that brings it back is sparse); a fuller recording stops there, with a warning
# COMMAND runs in the guest as root, in /payload, with /payload and /payload/bin first in PATH. Quote a shell
# command line as one word: -- 'ls / | wc -l'.
#
# Exit status: COMMAND's (0..255 as the guest reported it), or 123 guest crash, 124 timeout, 125 VMM or boot
# failure, 126 no result, 122 (nested) L1 triple-faulted, 121 (nested) the nested stack froze (an L1 CPU stopped), 2
# usage error. SIGTERM, SIGINT or SIGHUP end the guest (with --record: after it brought the recording back).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

VCPUS=2
MEM=512
KERNEL=""
INITRD=""
ADDS=()
TIMEOUT=600
MODE=auto
QUIET=0
VMM_EXTRA=()
VMM_PREFIX=""
HOST_BG=""
VPERF_BIN=""
REPEAT=1
L1_TRACE=0
GUEST_TRACE=0
RECORD=""
RECORD_MAX=256
GUEST_FILES=""
KERNEL_MAP=""
VMM_KIND=vperf
while [ $# -gt 0 ]; do
	case "$1" in
	--vcpus) VCPUS=${2:?--vcpus needs a number}; shift 2 ;;
	--l1-trace) L1_TRACE=1; shift ;;
	--mem) MEM=${2:?--mem needs MiB}; shift 2 ;;
	--kernel) KERNEL=${2:?--kernel needs a file}; shift 2 ;;
	--initrd) INITRD=${2:?--initrd needs a file}; shift 2 ;;
	--add) ADDS+=("${2:?--add needs PATH[:GUEST_PATH]}"); shift 2 ;;
	--timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
	--mode) MODE=${2:?--mode needs auto, direct or nested}; shift 2 ;;
	--quiet | -q) QUIET=1; shift ;;
	--vmm-arg) VMM_EXTRA+=("${2:?--vmm-arg needs an argument}"); shift 2 ;;
	--vmm-prefix) VMM_PREFIX=${2:?--vmm-prefix needs words}; shift 2 ;;
	--host-bg) HOST_BG=${2:?--host-bg needs a command}; shift 2 ;;
	--vperf) VPERF_BIN=${2:?--vperf needs the vperf executable}; shift 2 ;;
	--repeat) REPEAT=${2:?--repeat needs a number}; shift 2 ;;
	--guest-trace) GUEST_TRACE=1; shift ;;
	--record) RECORD=${2:?--record needs a file}; shift 2 ;;
	--record-max) RECORD_MAX=${2:?--record-max needs MiB}; shift 2 ;;
	--guest-files) GUEST_FILES=${2:?--guest-files needs a directory}; shift 2 ;;
	--kernel-map) KERNEL_MAP=${2:?--kernel-map needs a file}; shift 2 ;;
	--vmm) VMM_KIND=${2:?--vmm needs vperf or qemu}; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	*) die "$VM_EXIT_USAGE" "unknown option '$1' (see --help)" ;;
	esac
done
[ $# -gt 0 ] || die "$VM_EXIT_USAGE" "no command to run in the guest: vm-run.sh [options] -- COMMAND [ARGS...]"
[[ "$VCPUS" =~ ^[0-9]+$ ]] && [ "$VCPUS" -ge 1 ] && [ "$VCPUS" -le 16 ] ||
	die "$VM_EXIT_USAGE" "--vcpus '$VCPUS': a number from 1 to 16"
[[ "$MEM" =~ ^[0-9]+$ ]] && [ "$MEM" -ge 64 ] ||
	die "$VM_EXIT_USAGE" "--mem '$MEM': MiB, at least 64"
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] && [ "$TIMEOUT" -ge 1 ] || die "$VM_EXIT_USAGE" "--timeout '$TIMEOUT': seconds"
[[ "$REPEAT" =~ ^[0-9]+$ ]] && [ "$REPEAT" -ge 1 ] && [ "$REPEAT" -le 10000 ] ||
	die "$VM_EXIT_USAGE" "--repeat '$REPEAT': a number from 1 to 10000"
case "$MODE" in auto | direct | nested) ;; *) die "$VM_EXIT_USAGE" "--mode '$MODE': auto, direct or nested" ;; esac
case "$VMM_KIND" in vperf | qemu) ;; *) die "$VM_EXIT_USAGE" "--vmm '$VMM_KIND': vperf or qemu" ;; esac
[ "$VMM_KIND" = vperf ] || { [ "${#VMM_EXTRA[@]}" = 0 ] && [ -z "$VMM_PREFIX" ]; } ||
	die "$VM_EXIT_USAGE" "--vmm-arg and --vmm-prefix are vperf-vmm's: not with --vmm qemu"
[ "$VMM_KIND" = vperf ] || [ "$REPEAT" = 1 ] || die "$VM_EXIT_USAGE" "--repeat is vperf-vmm's: not with --vmm qemu"
[ "$GUEST_TRACE" = 0 ] || [ -n "$VPERF_BIN" ] ||
	die "$VM_EXIT_USAGE" "--guest-trace needs --vperf (vperf_guest.ko comes with it)"
[[ "$RECORD_MAX" =~ ^[0-9]+$ ]] && [ "$RECORD_MAX" -ge 1 ] && [ "$RECORD_MAX" -le 65536 ] ||
	die "$VM_EXIT_USAGE" "--record-max '$RECORD_MAX': MiB, from 1 to 65536"
if [ -n "$RECORD" ]; then
	[ "$REPEAT" = 1 ] || die "$VM_EXIT_USAGE" "--record with --repeat: one recording is one run"
	rdir=$(dirname -- "$RECORD")
	[ -d "$rdir" ] && [ -w "$rdir" ] || die "$VM_EXIT_USAGE" "--record '$RECORD': '$rdir' is not a writable directory"
	[ ! -d "$RECORD" ] || die "$VM_EXIT_USAGE" "--record '$RECORD' is a directory; name a file"
	rm -f -- "$RECORD"	# what is there after the run is this run's
fi
[ -z "$GUEST_FILES" ] || [ -n "$RECORD" ] || die "$VM_EXIT_USAGE" "--guest-files goes with --record"
[ -z "$KERNEL_MAP" ] || [ -n "$KERNEL" ] || die "$VM_EXIT_USAGE" "--kernel-map goes with --kernel (the bundled kernel's map is known)"
for f in "$KERNEL" "$INITRD" "$KERNEL_MAP"; do
	[ -z "$f" ] || [ -r "$f" ] || die "$VM_EXIT_USAGE" "cannot read '$f'"
done

# ---- the guest image ----
BUNDLED_INIT=0
[ -n "$INITRD" ] || BUNDLED_INIT=1
if [ -z "$KERNEL" ] || [ -z "$INITRD" ]; then
	"$VM_DIR/mkimage.sh" "$VPERF_VM_IMAGE" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" "$VPERF_VM_IMAGE" ||
		die "$VM_EXIT_USAGE" "building the bundled guest image failed; see above"
	KERNEL=${KERNEL:-$VPERF_VM_IMAGE/vmlinuz}
	INITRD=${INITRD:-$VPERF_VM_IMAGE/initrd-l2.gz}
fi

OUT="$VPERF_VM_BUILD/vm-run.$$"
TREE="$OUT/tree"
trap 'rm -rf "$OUT"' EXIT
mkdir -p "$TREE/payload/bin" "$TREE/vperf"
: >"$OUT/manifest"
[ "$BUNDLED_INIT" = 0 ] || printf '/bin/busybox\t/bin/busybox\n' >>"$OUT/manifest"	# mkimage.sh's

# copy_one SRC DEST: DEST is an absolute guest path. The manifest says where each came from (--guest-files).
copy_one() {
	mkdir -p "$TREE$(dirname "$2")"
	cp -aL "$1" "$TREE$2"
	printf '%s\t%s\n' "$2" "$(realpath -- "$1")" >>"$OUT/manifest"
}

# add_libs PROGRAM: the shared libraries and ELF interpreter a dynamic program needs, at their host paths.
add_libs() {
	local a b c
	ldd "$1" >/dev/null 2>&1 || return 0	# static, or not a program
	while read -r a b c _; do
		if [ "$b" = "=>" ] && [ "$c" = "not" ]; then
			die "$VM_EXIT_USAGE" "--add $1: it needs $a, which this host does not have"
		elif [ "$b" = "=>" ] && [ -f "$c" ]; then
			# /payload/lib is first in the guest's LD_LIBRARY_PATH: a library under a path the guest
			# mounts over (a build tree in /tmp: the guest's /tmp is a tmpfs) is still found
			[ -e "$TREE/payload/lib/$a" ] || copy_one "$c" "/payload/lib/$a"
		elif [ "${a#/}" != "$a" ] && [ -f "$a" ]; then
			[ -e "$TREE$a" ] || copy_one "$a" "$a"
		fi
	done < <(ldd "$1")
}

INSMOD=""
if [ -n "$VPERF_BIN" ]; then
	[ -x "$VPERF_BIN" ] || die "$VM_EXIT_USAGE" "--vperf '$VPERF_BIN' is not an executable"
	ADDS+=("$VPERF_BIN:/payload/bin/vperf")
	demo="$(dirname "$VPERF_BIN")/vperf-demo"
	[ ! -x "$demo" ] || ADDS+=("$demo:/payload/bin/vperf-demo")
	KO="$("$VM_DIR/build-kmod.sh")" || die "$VM_EXIT_USAGE" "building vperf_guest.ko failed; see above"
	ADDS+=("$KO:/payload/vperf_guest.ko")
	INSMOD=1
fi

for spec in "${ADDS[@]}"; do
	src=${spec%%:*}
	dst=""
	[ "$src" = "$spec" ] || dst=${spec#*:}
	[ -e "$src" ] || die "$VM_EXIT_USAGE" "--add '$spec': no such file or directory '$src'"
	[ -n "$dst" ] || dst="/payload/$(basename "$src")"
	[ "${dst#/}" != "$dst" ] || die "$VM_EXIT_USAGE" "--add '$spec': the guest path must be absolute"
	copy_one "$src" "$dst"
	if [ -d "$src" ]; then
		while IFS= read -r -d '' f; do add_libs "$f"; done < <(find "$src" -type f -perm -u+x -print0)
	elif [ -x "$src" ]; then
		add_libs "$src"
	fi
done

{
	echo '#!/bin/sh'
	echo '# written by vm-run.sh'
	echo 'export PATH=/payload:/payload/bin:$PATH'
	echo 'export LD_LIBRARY_PATH=/payload/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}'
	echo 'cd /payload'
	KO_PARAMS=""
	[ "$GUEST_TRACE" = 0 ] || KO_PARAMS=" trace=1"
	[ -z "$INSMOD" ] || echo "insmod /payload/vperf_guest.ko$KO_PARAMS"' || { echo "vm-run: insmod vperf_guest.ko failed" >&2; exit 125; }'
	printf '%s\n' "$*"
} >"$TREE/vperf/cmd.sh"
chmod 0755 "$TREE/vperf/cmd.sh"
if [ -n "$GUEST_FILES" ]; then
	mkdir -p -- "$GUEST_FILES" || die "$VM_EXIT_USAGE" "--guest-files '$GUEST_FILES': cannot make the directory"
	cp -- "$OUT/manifest" "$GUEST_FILES/files"
	# the bundled kernel's symbols come back from L1 (nested), which runs that image too
	[ -z "$KERNEL_MAP" ] || cp -- "$KERNEL_MAP" "$GUEST_FILES/System.map"
fi
mkcpio "$TREE" "$OUT/extra.gz"
cp "$INITRD" "$OUT/initrd"
truncate -s %512 "$OUT/initrd"	# an appended archive must start aligned (README, pitfalls)
cat "$OUT/extra.gz" >>"$OUT/initrd"
# VPERF_L2_APPEND: more guest kernel parameters, for experiments (e.g. page_poison=1 slub_debug=FZPU)
APPEND="vperf.run=/vperf/cmd.sh${VPERF_L2_APPEND:+ $VPERF_L2_APPEND}"

# wait_for PID: wait until PID ended, whatever traps run meanwhile; st = its status.
wait_for() {
	while kill -0 "$1" 2>/dev/null; do wait "$1"; done
	wait "$1"
	st=$?
}

# report_record STATUS FILE: say what came back (the status says how the run ended).
report_record() {
	local how
	case "$1" in
	123) how="the guest crashed (status 123): the recording ends at the crash" ;;
	124) how="the guest timed out (status 124): the recording ends at the timeout" ;;
	125) how="vperf-vmm failed (status 125)" ;;
	128 | 129 | 13[0-9] | 14[0-9]) how="vperf-vmm was stopped (status $1): the recording ends there" ;;
	*) how="the guest command exited with status $1" ;;
	esac
	if [ -s "$2" ]; then
		[ "$QUIET" = 1 ] || say "recording: $2 ($(stat -c %s -- "$2") bytes); $how"
	else
		say "no recording came back; $how"
	fi
}

# ---- where to run it ----
if [ "$MODE" = auto ]; then
	if hw_virt; then MODE=direct; else MODE=nested; fi
fi
# --guest-files' System.map without --kernel-map: nested, L1 runs the bundled kernel the guest runs
L1_KSYMS=0
L1_KSYMS_MAX=0
# and the vDSO's image (which names [vdso] frames), with or without --kernel-map
L1_VDSO=0
if [ "$MODE" = nested ] && [ -n "$GUEST_FILES" ] && [ "$KERNEL" = "$VPERF_VM_IMAGE/vmlinuz" ]; then
	L1_VDSO=1
	L1_KSYMS_MAX=16
	[ -n "$KERNEL_MAP" ] || L1_KSYMS=1
fi
# Nested, the guest runs under QEMU TCG, where patching kernel text while two CPUs run can hang (see
# guest/vperf-keys.c): the bundled /init raises the static keys on one CPU and then brings the others online.
[ "$MODE" != nested ] || [ "$BUNDLED_INIT" = 0 ] || APPEND="$APPEND maxcpus=1"
[ "$VMM_KIND" = vperf ] || [ "$MODE" = nested ] ||
	die "$VM_EXIT_USAGE" "--vmm qemu runs nested only for now (--mode nested); here: vperf kvm record -p PID (docs/vperf-kvm.md)"
if [ "$VMM_KIND" = vperf ]; then
	VMM="$(build_vmm)"
else
	VMM=""
	[ -z "$RECORD" ] || KVMREC="$(build_kvmrec)"
fi
VMM_ARGS=(--kernel "$KERNEL" --initrd "$OUT/initrd" --vcpus "$VCPUS" --mem "$MEM" --append "$APPEND" --no-input
	"${VMM_EXTRA[@]}")
# vperf-vmm bounds its recording itself, in every mode (nested, the tmpfs below is as large)
[ -z "$RECORD" ] || VMM_ARGS+=(--record-max "$RECORD_MAX")

if [ "$MODE" = direct ]; then
	[ "$L1_TRACE" = 0 ] || say "--l1-trace: there is no L1 in direct mode; nothing is traced"
	[ "$QUIET" = 1 ] || say "mode: direct: vperf-vmm on this host's /dev/kvm (hardware virtualization)"
	bg=""
	if [ -n "$HOST_BG" ]; then
		setsid sh -c "$HOST_BG" </dev/null >/dev/null 2>&1 &	# its own process group: killed whole
		bg=$!
	fi
	set +e
	st=0
	if [ -n "$RECORD" ]; then
		# In the background, so that a signal to this script runs its trap at once; vperf-vmm then stops
		# the guest cleanly (SIGTERM, through timeout) and finishes the recording.
		# shellcheck disable=SC2086 # VMM_PREFIX is words
		timeout --foreground -k 5 "$TIMEOUT" $VMM_PREFIX "$VMM" "${VMM_ARGS[@]}" --timeout "$TIMEOUT" \
			--record "$RECORD" </dev/null &
		vmm=$!
		stop_direct() {
			[ -n "${stopping:-}" ] || say "stopping: the guest stops, the recording is kept"
			stopping=1
			kill -TERM "$vmm" 2>/dev/null
		}
		trap stop_direct INT TERM HUP
		wait_for "$vmm"
		trap - INT TERM HUP
		REPEAT=0	# the loop below does not run
		report_record "$st" "$RECORD"
	fi
	for ((i = 1; i <= REPEAT; i++)); do
		# shellcheck disable=SC2086 # VMM_PREFIX is words
		timeout --foreground -k 5 "$TIMEOUT" $VMM_PREFIX "$VMM" "${VMM_ARGS[@]}" --timeout "$TIMEOUT" </dev/null
		s1=$?
		[ "$REPEAT" = 1 ] || echo "VM-RUN-REPEAT $i/$REPEAT status=$s1"
		[ "$st" != 0 ] || st=$s1
	done
	[ -z "$bg" ] || { kill -- "-$bg" 2>/dev/null; wait "$bg" 2>/dev/null; }
	exit "$st"
fi

P="$OUT/payload"
mkdir -p "$P"
if [ "$VMM_KIND" = vperf ]; then
	[ "$QUIET" = 1 ] || say "mode: nested: vperf-vmm in an L1 guest under QEMU TCG with emulated SVM (no vmx/svm here)"
	cp "$VMM" "$P/vperf-vmm"
else
	[ "$QUIET" = 1 ] || say "mode: nested: Debian's QEMU (-accel kvm, ivshmem-plain) in an L1 guest under QEMU TCG with emulated SVM"
	QEMU_INTERP="$(stage_qemu "$P/qemu")"
	[ -z "$RECORD" ] || cp "$KVMREC" "$P/kvm-rec"
fi
cp "$KERNEL" "$P/vmlinuz"
cp "$OUT/initrd" "$P/initrd"
# l1_stop_watch: the L1 script's watcher of a stop the host asks for: VPERF-STOP in the disk's second sector
# (vm-run.sh's trap), read past L1's page cache every 0.5 s, stops the VMM ($vmm); its pid in $watch.
l1_stop_watch() {
	cat <<-'EOT'
		( while sleep 0.5; do
			if dd if=/dev/vda bs=512 skip=1 count=1 iflag=direct 2>/dev/null | grep -q VPERF-STOP; then
				echo "vm-run: the host asks to stop: stopping the guest"
				kill -TERM $vmm
				break
			fi
		done ) </dev/null &
		watch=$!
		EOT
}

# l1_qemu: the L1 script's lines that run the guest under Debian's QEMU (--vmm qemu), with the ivshmem-plain
# channel, and with --record kvm-rec attached to it from outside; they leave the guest's status in $?.  The status
# comes from the guest's console (VPERF-L2-RESULT), which QEMU also logs to a file.
l1_qemu() {
	printf 'Q="/payload/qemu/lib/%s --library-path /payload/qemu/lib /payload/qemu/bin/qemu-system-x86_64"\n' "$QEMU_INTERP"
	printf 'rm -f /tmp/l2.log /tmp/qemu.pid /tmp/vperf-shm\n'
	printf 'timeout -s TERM %q $Q -L /payload/qemu/qemu-data -M pc -vga none -accel kvm -cpu host' "$TIMEOUT"
	printf ' -name vperf-guest,debug-threads=on -smp %q -m %q -display none -no-reboot -nic none' "$VCPUS" "$MEM"
	printf ' -monitor none -pidfile /tmp/qemu.pid'
	printf ' -chardev stdio,id=con,logfile=/tmp/l2.log,signal=off -serial chardev:con'
	printf ' -object memory-backend-file,id=vperf0,share=on,mem-path=/tmp/vperf-shm,size=16M'
	printf ' -device ivshmem-plain,memdev=vperf0'
	printf ' -kernel /payload/vmlinuz -initrd /payload/initrd -append %q </dev/null &\n' \
		"$APPEND console=ttyS0 quiet panic=-1"
	cat <<-'EOT'
	tmo=$!
	n=0
	while [ ! -s /tmp/qemu.pid ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
	vmm=$(cat /tmp/qemu.pid 2>/dev/null)
	[ -n "$vmm" ] || { echo "vm-run: QEMU did not start"; kill $tmo 2>/dev/null; wait $tmo; exit 125; }
	EOT
	if [ -n "$RECORD" ]; then
		# attached once every vCPU exists (their descriptors), before the guest's kernel is far
		printf 'n=0
while [ "$(ls -l /proc/$vmm/fd 2>/dev/null | grep -c kvm-vcpu)" -lt %d ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
' "$VCPUS"
		printf '/payload/kvm-rec --pid $vmm --shm /tmp/vperf-shm --out /rec/vmm.vraw --max %q &\nrec=$!\n' "$RECORD_MAX"
		l1_stop_watch
	fi
	cat <<-'EOT'
	wait $tmo
	qst=$?
	EOT
	[ -z "$RECORD" ] || printf 'wait $rec
kill $watch 2>/dev/null
wait $watch 2>/dev/null
'
	cat <<-'EOT'
	st=$(tr -d '\r' </tmp/l2.log | sed -n 's/.*VPERF-L2-RESULT: status=\([0-9][0-9]*\).*/\1/p' | tail -n 1)
	if [ -z "$st" ] && { [ $qst = 124 ] || [ $qst = 143 ]; }; then
		echo "vm-run: the guest timed out"
		st=124
	elif [ -z "$st" ] && [ $qst = 0 ]; then
		# the guest's /init reports a result before it powers off: QEMU ending by itself without one is a
		# guest reset, which -no-reboot turns into an exit (a triple fault; nested, the L2 crash of
		# tests/vm/README.md, "Known failure modes")
		echo "vm-run: the guest crashed: it reset itself (a triple fault or a reboot) before its VPERF-L2-RESULT line; QEMU -no-reboot exited 0"
		st=123
	elif [ -z "$st" ]; then
		echo "vm-run: no VPERF-L2-RESULT line from the guest (QEMU exited $qst)"
		st=126
	fi
	(exit $st)
	EOT
}

{
	echo '#!/bin/sh'
	echo '# written by vm-run.sh: boot the guest with vperf-vmm on L1'"'"'s KVM, return its status'
	echo '[ -c /dev/kvm ] || { echo "vm-run: /dev/kvm missing in L1"; exit 125; }'
	if [ -n "$HOST_BG" ]; then
		printf 'setsid sh -c %q </dev/null >/dev/null 2>&1 &\nbg=$!\n' "$HOST_BG"
	fi
	if [ "$L1_TRACE" = 1 ]; then
		cat <<-'EOT'
		T=/sys/kernel/tracing
		[ -d $T/events ] || mount -t tracefs nodev $T
		echo 0 >$T/tracing_on; echo 256 >$T/buffer_size_kb
		for e in kvm_exit kvm_inj_virq kvm_page_fault kvm_nested_vmexit; do echo 1 >$T/events/kvm/$e/enable; done
		l1_trace_dump() { echo 0 >$T/tracing_on; echo L1-TRACE-BEGIN; tail -n 400 $T/trace; echo L1-TRACE-END; }
		EOT
	fi
	[ "$REPEAT" = 1 ] || printf 'first=0\ni=1\nwhile [ $i -le %d ]; do\n' "$REPEAT"
	[ "$L1_TRACE" = 0 ] || printf 'echo >$T/trace; echo 1 >$T/tracing_on\n'

	if [ -n "$RECORD" ]; then
		# the recording goes to a tmpfs of --record-max; the disk is /dev/vda (run-nested.sh --disk)
		printf 'mkdir -p /rec && mount -t tmpfs -o size=%dk tmpfs /rec || exit 125\n' "$((RECORD_MAX * 1024))"
		cat <<-'EOT'
		i=0
		while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		[ -b /dev/vda ] || { echo "vm-run: no /dev/vda in L1 (the recording's way back)"; exit 125; }
		EOT
	fi
	if [ "$VMM_KIND" = qemu ]; then
		l1_qemu
	else
	printf '%s/payload/vperf-vmm --kernel /payload/vmlinuz --initrd /payload/initrd --vcpus %q --mem %q' "${VMM_PREFIX:+$VMM_PREFIX }" "$VCPUS" "$MEM"
	printf ' --append %q --no-input --timeout %q' "$APPEND" "$TIMEOUT"
	for a in "${VMM_EXTRA[@]}"; do printf ' %q' "$a"; done
	[ -z "$RECORD" ] || printf ' --record /rec/vmm.vraw --record-max %q' "$RECORD_MAX"
	fi
	if [ "$VMM_KIND" = qemu ]; then
		:	# l1_qemu waited for it
	elif [ -z "$RECORD" ]; then
		printf ' </dev/null\n'
	else
		# In the background with a watcher: the host asks for a stop by writing VPERF-STOP into the disk's
		# second sector (vm-run.sh's trap); the watcher reads it past L1's page cache every 0.5 s.
		printf ' </dev/null &\n'
		echo 'vmm=$!'
		l1_stop_watch
		cat <<-'EOT'
		wait $vmm
		st=$?
		kill $watch 2>/dev/null
		wait $watch 2>/dev/null
		(exit $st)
		EOT
	fi
	[ "$L1_TRACE" = 0 ] || printf 'st=$?; case $st in 123|124) l1_trace_dump ;; esac; (exit $st)\n'
	if [ -n "$RECORD" ]; then
		# The way back: the file from 1 MiB on, then sector 0 says it is there:
		# "VPERF-XFER 1 status=S size=N" (size -1: vperf-vmm wrote none).
		cat <<-'EOT'
		st=$?
		size=-1
		ksyms=0
		if [ -f /rec/vmm.vraw ]; then
			size=$(stat -c %s /rec/vmm.vraw)
			dd if=/rec/vmm.vraw of=/dev/vda bs=1M seek=1 conv=fsync 2>/dev/null ||
				{ echo "vm-run: copying the recording to /dev/vda failed"; size=-2; }
		fi
		EOT
		# L1 runs the guest's own kernel image (the bundled one): its text symbols name the guest kernel's
		# frames (their addresses move together with a random base; the converter places them by the
		# guest's word on where schedule is). They follow the recording on the disk, from the next MiB.
		# Its vDSO image (this shell's, read through /proc/$$/mem) names the guest's [vdso] frames: it
		# follows the symbols, from the MiB after them.
		[ "$L1_KSYMS" = 0 ] || cat <<-'EOT'
		if [ $size -ge 0 ] && grep -E '^[0-9a-f]+ [tTwW] [^[:space:]]+$' /proc/kallsyms >/tmp/kallsyms; then
			ksyms=$(stat -c %s /tmp/kallsyms)
			dd if=/tmp/kallsyms of=/dev/vda bs=1M seek=$((2 + size / 1048576)) conv=fsync 2>/dev/null || ksyms=0
		fi
		EOT
		echo 'vdso=0'
		[ "$L1_VDSO" = 0 ] || cat <<-'EOT'
		set -- $(sed -n 's/^\([0-9a-f]*\)-\([0-9a-f]*\) .*\[vdso\]$/\1 \2/p' /proc/$$/maps)
		if [ $size -ge 0 ] && [ $# = 2 ] && dd if=/proc/$$/mem of=/tmp/vdso.so bs=4096 \
			skip=$((0x$1 / 4096)) count=$(((0x$2 - 0x$1) / 4096)) 2>/dev/null; then
			vdso=$(stat -c %s /tmp/vdso.so)
			dd if=/tmp/vdso.so of=/dev/vda bs=1M seek=$((3 + size / 1048576 + ksyms / 1048576)) \
				conv=fsync 2>/dev/null || vdso=0
		fi
		EOT
		cat <<-'EOT'
		printf 'VPERF-XFER 1 status=%d size=%d ksyms=%d vdso=%d
' $st $size $ksyms $vdso | dd of=/dev/vda bs=512 count=1 conv=sync,fsync 2>/dev/null
		(exit $st)
		EOT
	fi
	if [ "$REPEAT" != 1 ]; then
		printf 'st=$?\necho "VM-RUN-REPEAT $i/%d status=$st"\n' "$REPEAT"
		printf '[ $first != 0 ] || first=$st\ni=$((i + 1))\ndone\n(exit $first)\n'
	fi
	if [ -n "$HOST_BG" ]; then
		# the background command and what it started end with the guest
		printf 'st=$?\nkill -- -$bg 2>/dev/null; wait $bg 2>/dev/null\nexit $st\n'
	fi
} >"$P/run.sh"
chmod 0755 "$P/run.sh"
# --quiet here still streams the console (the guest's output is on it); only our own notes are left out.
NESTED=("$VM_DIR/run-nested.sh" --payload "$P" --timeout "$((TIMEOUT * REPEAT + 120 + RECORD_MAX / 32))")
if [ -z "$RECORD" ]; then
	"${NESTED[@]}"
	exit
fi

# --record: the disk that brings the recording back (sparse: 1 MiB header area + --record-max), L1's memory grown
# to hold the recording beside the guest, and run-nested.sh in the background so that a signal here asks L1 to
# stop at once (a background job of this script ignores SIGINT: a Ctrl-C reaches it through this trap only).
DISK="$OUT/record.img"
truncate -s "$((RECORD_MAX + 1 + L1_KSYMS_MAX))M" "$DISK"
l1_mem=$((MEM + RECORD_MAX + 1024))
[ "$l1_mem" -ge 2048 ] || l1_mem=2048
# --grace: a signal that reaches run-nested.sh too (a process group's) leaves L1 the time to stop as asked here
NESTED+=(--disk "$DISK" --mem "$l1_mem" --grace "$((60 + RECORD_MAX / 4))")
set +e
"${NESTED[@]}" &
runner=$!
stop_nested() {
	if [ -n "${stopping:-}" ]; then
		say "stopping now: ending L1 (the recording is lost)"
		kill -TERM "$runner" 2>/dev/null
		return
	fi
	say "stopping: asking vperf-vmm in L1 to stop the guest; the recording comes back after (a second signal: at once)"
	stopping=1
	printf 'VPERF-STOP\n' | dd of="$DISK" bs=512 seek=1 conv=notrunc,sync status=none
}
trap stop_nested INT TERM HUP
wait_for "$runner"
trap - INT TERM HUP
hdr=$(head -c 512 "$DISK" | tr -d '\0' | head -n 1)
case "$hdr" in
"VPERF-XFER 1 "*) ;;
*)
	say "no recording came back: L1 ended before it copied the recording (status $st)"
	[ "$st" != 0 ] || st=$VM_EXIT_BOOTFAIL
	exit "$st"
	;;
esac
size=$(sed -n 's/.* size=\(-\{0,1\}[0-9][0-9]*\).*/\1/p' <<<"$hdr")
vst=$(sed -n 's/.* status=\([0-9][0-9]*\).*/\1/p' <<<"$hdr")
[ "$vst" = "$st" ] || say "warning: L1 reported vperf-vmm's status $vst, run-nested.sh $st"
if [ -n "$size" ] && [ "$size" -ge 0 ]; then
	dd if="$DISK" of="$RECORD.part" bs=1M skip=1 iflag=count_bytes count="$size" status=none &&
		[ "$(stat -c %s -- "$RECORD.part")" = "$size" ] && mv -f -- "$RECORD.part" "$RECORD" ||
		{ rm -f -- "$RECORD.part"; die "$VM_EXIT_USAGE" "copying the recording out of $DISK into $RECORD failed"; }
	[ "$((size + 65536))" -lt "$((RECORD_MAX << 20))" ] ||
		say "warning: the recording filled --record-max ($RECORD_MAX MiB) and stops there; give more"
fi
ksyms=$(sed -n 's/.* ksyms=\([0-9][0-9]*\).*/\1/p' <<<"$hdr")
if [ -n "$GUEST_FILES" ] && [ -n "$ksyms" ] && [ "$ksyms" -gt 0 ] && [ -n "$size" ] && [ "$size" -ge 0 ]; then
	dd if="$DISK" of="$GUEST_FILES/System.map" bs=1M skip="$((2 + size / 1048576))" iflag=count_bytes \
		count="$ksyms" status=none || say "warning: copying the guest kernel's symbols out of $DISK failed"
fi
vdso=$(sed -n 's/.* vdso=\([0-9][0-9]*\).*/\1/p' <<<"$hdr")
if [ -n "$GUEST_FILES" ] && [ -n "$vdso" ] && [ "$vdso" -gt 0 ] && [ -n "$ksyms" ] && [ "$size" -ge 0 ]; then
	dd if="$DISK" of="$GUEST_FILES/vdso.so" bs=1M skip="$((3 + size / 1048576 + ksyms / 1048576))" \
		iflag=count_bytes count="$vdso" status=none || say "warning: copying the guest's vDSO out of $DISK failed"
fi
report_record "$st" "$RECORD"
[ -s "$RECORD" ] || [ "$st" != 0 ] || st=$VM_EXIT_BOOTFAIL
exit "$st"
