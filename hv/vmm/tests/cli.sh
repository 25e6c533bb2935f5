#!/bin/sh
# cli.sh VPERF_VMM: vperf-vmm's command line as a user meets it: help, version, and clear errors with exit
# status 125 for bad options and bad files, before any guest runs (on any host: these do not need KVM).
set -u
vmm=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run WANT_STATUS WANT_TEXT ARGS...: stderr+stdout must contain WANT_TEXT
run() {
	want=$1 text=$2
	shift 2
	"$vmm" "$@" >"$tmp/out" 2>&1 </dev/null
	st=$?
	if [ "$st" != "$want" ] || ! grep -qF -- "$text" "$tmp/out"; then
		echo "FAIL: vperf-vmm $*: status $st (want $want), output:"
		sed 's/^/    /' "$tmp/out"
		echo "    (wanted: $text)"
		fail=1
	else
		echo "ok: vperf-vmm $* -> $st"
	fi
}

printf 'not a kernel\n' >"$tmp/notakernel"
head -c 2048 /dev/zero >"$tmp/zeros"
run 0 "exit status:" --help
run 0 "vperf-vmm " --version
run 0 "--record FILE" --help
run 125 "--no-host-events goes with --record FILE" --kernel "$tmp/x" --no-host-events
run 0 "--record-max MIB" --help
run 125 "--record-max goes with --record FILE" --kernel "$tmp/x" --record-max 10
run 125 "--record-max 0: out of range (1..65536)" --kernel "$tmp/x" --record "$tmp/r" --record-max 0
run 125 "--record-max: '1G' is not a whole number" --kernel "$tmp/x" --record "$tmp/r" --record-max 1G
run 0 "--allow LIST" --help
run 0 "hw:*,sw:task-clock" --help
run 125 "--allow 'foo:bar': not SOURCE:GLOB" --kernel "$tmp/x" --allow 'hw:*,foo:bar'
run 125 "--allow '*': not SOURCE:GLOB" --kernel "$tmp/x" --allow '*'
run 125 "--allow 'hw:': not SOURCE:GLOB" --kernel "$tmp/x" --allow 'hw:'
run 125 "--allow 'hw:*,': an empty pattern" --kernel "$tmp/x" --allow 'hw:*,'
run 125 "--allow '': an empty pattern" --kernel "$tmp/x" --allow ''
run 125 "--allow 'hw:a b': not SOURCE:GLOB" --kernel "$tmp/x" --allow 'hw:a b'
# a good list: on to the kernel
run 125 "cannot open kernel $tmp/missing" --kernel "$tmp/missing" --allow 'default,raw:*' --allow 'RAWMOD:cmask'

run 125 "no kernel: give one with --kernel" --vcpus 2
run 125 "unknown option" --frobnicate
run 125 "--vcpus 0: out of range (1..16)" --kernel "$tmp/x" --vcpus 0
run 125 "--vcpus 17: out of range (1..16)" --kernel "$tmp/x" --vcpus 17
run 125 "--mem: '1G' is not a whole number" --kernel "$tmp/x" --mem 1G
run 125 "--mem: '-5' is not a whole number" --kernel "$tmp/x" --mem -5
run 125 "--timeout: 'soon' is not a whole number" --kernel "$tmp/x" --timeout soon
run 125 "cannot open kernel $tmp/missing: No such file or directory" --kernel "$tmp/missing"
run 125 "kernel $tmp is not a regular file" --kernel "$tmp"
run 125 "file too small for a bzImage" --kernel "$tmp/notakernel"
run 125 "not a bzImage: no boot sector signature" --kernel "$tmp/zeros"
exit "$fail"
