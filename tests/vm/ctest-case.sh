#!/usr/bin/env bash
# ctest-case.sh LOG PREFIX CASE: the verdict of one case of a batch run by ctest-batch.sh.
set -uo pipefail
log=$1 prefix=$2 case=$3
line="$(grep -aE "^$prefix: (PASS|FAIL) $case( \(|:|$)" "$log" | tail -1)"
echo "${line:-no verdict for '$case' in $log}"
case "$line" in
"$prefix: PASS"*) exit 0 ;;
"$prefix: FAIL"*) grep -a -A30 -E "^--- $case:" "$log" | head -60; exit 1 ;;
*) exit 1 ;;
esac
