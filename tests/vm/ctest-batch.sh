#!/usr/bin/env bash
# ctest-batch.sh LOG CMD...: run one VM test batch (one guest boot, many cases) for ctest, output into LOG.
# The cases are judged by ctest-case.sh; this fails only when the batch could not run at all (timeout, boot
# failure, no result), so that the failure is reported once, here, as what it is.
set -uo pipefail
log=$1
shift
"$@" >"$log" 2>&1
st=$?
grep -aE '^(vmm-test|device-test|kmod-test|guest-stat): ' "$log" || true
case "$st" in
124 | 125 | 126 | 2) echo "batch $* failed to run (status $st); last lines of $log:"; tail -40 "$log"; exit "$st" ;;
esac
exit 0
