#!/usr/bin/env bash
# ctest-batch.sh LOG CMD...: run one VM test batch (one guest boot, many cases) for ctest, output into LOG.
# The cases are judged by ctest-case.sh; this fails only when the batch could not run at all (timeout, boot
# failure, no result), so that the failure is reported once, here, as what it is.
#
# One retry, on the nested stack only: a run that timed out (status 124) or whose guest crashed (123) there is
# started once more, loudly, with the first run's log kept as LOG.hung. Under QEMU TCG a guest now and then stops
# dead (a vCPU that never takes another interrupt, the L1 kernel reporting an RCU stall on the CPU that runs it)
# or triple-faults without a word, so far only in the kmod batch: mostly during vperf_guest.ko's load/unload
# cycles (tests/vm/README.md, "Freezes"). Neither is a verdict on any case, and every case is still judged on the
# second run; a guest crash that is ours would show in both. Where vperf-vmm runs directly on hardware
# virtualization a timeout or a crash is a failure at once.
set -uo pipefail
log=$1
shift
"$@" >"$log" 2>&1
st=$?
if { [ "$st" = 124 ] || [ "$st" = 123 ]; } && grep -aq 'mode: nested' "$log"; then
	mv "$log" "$log.hung"
	echo "batch $*: the nested guest $([ "$st" = 124 ] && echo timed out || echo crashed) (status $st; a QEMU TCG" \
		"freeze?); its log is $log.hung, last lines:"
	tail -15 "$log.hung"
	echo "batch $*: running it once more"
	"$@" >"$log" 2>&1
	st=$?
fi
grep -aE '^(vmm-test|device-test|kmod-test|guest-stat): ' "$log" || true
case "$st" in
124 | 125 | 126 | 2) echo "batch $* failed to run (status $st); last lines of $log:"; tail -40 "$log"; exit "$st" ;;
esac
exit 0
