#!/bin/sh
# vmm-test: the cases, run in L1 (busybox sh, /payload) by tests/vm/vmm-test.sh. Each case boots L2 with
# vperf-vmm on L1's /dev/kvm and checks vperf-vmm's exit status, its stderr, the L2 console and --stats-json.
# Prints "vmm-test: PASS <case> ..." or "vmm-test: FAIL <case> ...", then "vmm-test: <p> passed, <f> failed";
# exits 0 when every case passed, 1 otherwise. VPERF_TEST_CASES="a b" runs only those cases.
VMM=/payload/vperf-vmm
KERNEL=/payload/vmlinuz
INITRD=/payload/initrd-l2.gz
MEM=256
W=/tmp/vmm-test
mkdir -p "$W"
passed=0
failed=0
up() { cut -d' ' -f1 /proc/uptime; }

# vmm NAME VCPUS L2SCRIPT [vperf-vmm args...]: boot L2 running /payload/l2/L2SCRIPT; sets $status
vmm() {
	name=$1 cpus=$2 script=$3
	shift 3
	t0=$(up)
	"$VMM" --kernel "$KERNEL" --initrd "$INITRD" --vcpus "$cpus" --mem "$MEM" --timeout 300 \
		--stats-json "$W/$name.json" --append "vperf.run=/payload/l2/$script vperf_test.cpus=$cpus" "$@" \
		>"$W/$name.out" 2>"$W/$name.err" </dev/null
	status=$?
	secs=$(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }')
}

problems=""
expect_status() { [ "$status" = "$1" ] || problems="$problems; status $status, want $1"; }
expect_grep() { # FILE-SUFFIX PATTERN
	grep -q -- "$2" "$W/$name.$1" || problems="$problems; no '$2' in $1"
}

# verdict NAME: PASS or FAIL (with the problems and the tail of the output)
verdict() {
	if [ -z "$problems" ]; then
		passed=$((passed + 1))
		echo "vmm-test: PASS $1 (status $status, $secs s)"
	else
		failed=$((failed + 1))
		echo "vmm-test: FAIL $1 (${problems#; }; $secs s)"
		echo "--- $1: vperf-vmm stderr"
		tail -n 20 "$W/$1.err"
		echo "--- $1: console (last lines)"
		tail -n 30 "$W/$1.out"
		echo "--- $1: stats"
		cat "$W/$1.json" 2>/dev/null
		echo "---"
	fi
	problems=""
}

want() { [ -z "$VPERF_TEST_CASES" ] || case " $VPERF_TEST_CASES " in *" $1 "*) ;; *) return 1 ;; esac; }

# Every vCPU online, and the guest's exit status (7) comes out of vperf-vmm.
for n in 1 2 4; do
	want "vcpus-$n" || continue
	vmm "vcpus-$n" "$n" online.sh
	expect_status 7
	expect_grep out "online-check: online=.* nproc=$n want=$n"
	expect_grep json '"stop": "guest-exit"'
	[ "$(grep -c '"id":' "$W/vcpus-$n.json")" = "$n" ] || problems="$problems; stats lack vCPUs"
	verdict "vcpus-$n"
done

if want poweroff; then
	vmm poweroff 2 poweroff.sh
	expect_status 0
	expect_grep json '"stop": "poweroff"'
	expect_grep json '"port": 1536, "dir": "out"'
	verdict poweroff
fi

if want reboot; then
	vmm reboot 1 reboot.sh
	expect_status 0
	expect_grep json '"stop": "reboot"'
	verdict reboot
fi

if want panic; then
	vmm panic 1 panic.sh
	expect_status 123
	expect_grep out "Kernel panic - not syncing"
	verdict panic
fi

if want ucall; then
	vmm ucall 1 ucall.sh
	expect_status 5
	expect_grep err "^guest: hello from L2$"
	expect_grep err "^guest: values: answer: 0x2a 0x2a \[vcpu[0-9]* thread switches: voluntary [0-9]* nonvoluntary [0-9]*\]$"
	expect_grep json '"UCALL": 2'
	verdict ucall
fi

if want assert; then
	vmm assert 1 assert.sh
	expect_status 123
	expect_grep err "^guest: assertion failed on vcpu0: something broke 1$"
	expect_grep json '"stop": "crash"'
	verdict assert
fi

if want hostile; then
	vmm hostile 1 hostile.sh
	expect_status 9
	expect_grep out "hostile: ok   ucall at 2^63"
	expect_grep json '"vperf_unknown_ops": 2'
	verdict hostile
fi

if want timeout; then
	vmm timeout 1 sleep.sh --timeout 20
	expect_status 124
	expect_grep err "timeout: the guest still runs after 20 s"
	expect_grep json '"stop": "timeout"'
	verdict timeout
fi

# SIGTERM once L2 runs its payload: a clean stop, status 128 + 15.
if want sigterm; then
	name=sigterm
	t0=$(up)
	"$VMM" --kernel "$KERNEL" --initrd "$INITRD" --vcpus 2 --mem "$MEM" --timeout 300 --stats-json "$W/$name.json" \
		--append "vperf.run=/payload/l2/sleep.sh" >"$W/$name.out" 2>"$W/$name.err" </dev/null &
	pid=$!
	i=0
	while [ $i -lt 300 ] && ! grep -q "VPERF-L2-PAYLOAD: start" "$W/$name.out"; do sleep 0.2; i=$((i + 1)); done
	kill -TERM "$pid"
	wait "$pid"
	status=$?
	secs=$(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }')
	expect_status 143
	expect_grep err "Terminated: stopping the guest"
	expect_grep json '"stop": "signal"'
	verdict "$name"
fi

# Console input: a FIFO on stdin feeds the UART; the guest's shell runs what arrives and exits with 11.
if want input; then
	name=input
	t0=$(up)
	rm -f "$W/in.fifo"
	mkfifo "$W/in.fifo"
	"$VMM" --kernel "$KERNEL" --initrd "$INITRD" --vcpus 1 --mem "$MEM" --timeout 300 --stats-json "$W/$name.json" \
		--append "vperf.shell=1" >"$W/$name.out" 2>"$W/$name.err" <"$W/in.fifo" &
	pid=$!
	exec 3>"$W/in.fifo"
	i=0
	while [ $i -lt 300 ] && ! grep -q "VPERF-L2-SHELL:" "$W/$name.out"; do sleep 0.2; i=$((i + 1)); done
	sleep 1
	# shellcheck disable=SC2016 # for the guest's shell
	# a VMM that already exited has no reader on the FIFO: say so, do not die of SIGPIPE
	if ! (trap '' PIPE; echo 'echo "INPUT-$((6 * 7))"; exit 11' >&3) 2>/dev/null; then
		echo "vmm-test: input: writing to the console FIFO failed: vperf-vmm exited first; last output:"
		tail -5 "$W/$name.out" "$W/$name.err"
	fi
	wait "$pid"
	status=$?
	exec 3>&-
	secs=$(awk -v a="$t0" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }')
	expect_status 11
	expect_grep out "INPUT-42"
	verdict "$name"
fi

# The guest's console bytes reach the host escaped: no control sequence of the guest's drives the terminal.
if want console; then
	vmm console 1 console.sh
	expect_status 6
	expect_grep out 'console-check: \\x1b\]52;c;ZXZpbA==\\x07 \\x1b\[2J \\xc2\\x9b2J done'
	! grep -q "$(printf '\033')" "$W/console.out" || problems="$problems; a raw ESC reached the console"
	verdict console
fi

echo "vmm-test: $passed passed, $failed failed"
[ "$failed" = 0 ]
