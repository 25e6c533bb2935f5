#!/usr/bin/env bash
# The README's test command and what CI runs: install what the project needs,
# build with warnings as errors, run every test.  Extra arguments go to ctest
# (e.g. scripts/test.sh -L unit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VPERF_BUILD_DIR:-$root/build}

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DVPERF_WERROR=ON
cmake --build "$build" -j"$(nproc)"
# nested VM batches rerun (at most twice) for a stated reason (tests/vm/ctest-batch.sh); every rerun is reported here
reruns="$build/tests/vm/reruns.log"
rm -f "$reruns"
set +e
ctest --test-dir "$build" --output-on-failure --timeout 600 "$@"
st=$?
set -e
n=0
[ ! -f "$reruns" ] || n=$(wc -l <"$reruns")
echo "test.sh: nested VM batches rerun: $n"
[ "$n" = 0 ] || sed 's/^/test.sh: rerun: /' "$reruns"
# What ended each failed batch, last: CI shows a run's first failure and its last lines, and a batch's own
# report (ctest-batch.sh) sits in between. A guest's panic, oops or fault lines and the runner's verdicts.
crash='Kernel panic|BUG:|Oops|general protection|RIP: |Call Trace|triple fault|KVM_EXIT_|vperf-vmm: error|nested stack froze|timeout:|ended with status|failed to run'
failed="$build/Testing/Temporary/LastTestsFailed.log"
if [ -f "$failed" ]; then
	for b in $(sed -n 's/^[0-9]*:vm\.batch_//p' "$failed"); do
		for f in "$build/tests/vm/$b.log.first" "$build/tests/vm/$b.log.run2" "$build/tests/vm/$b.log"; do
			[ -f "$f" ] || continue
			echo "test.sh: batch $b failed; $(basename "$f"): its crash lines (at most 12) and last 3 lines:"
			grep -aE "$crash" "$f" | head -12 | cut -c1-200 | sed 's/^/test.sh:   /'
			tail -3 "$f" | cut -c1-200 | sed 's/^/test.sh:   ... /'
		done
	done
fi
exit "$st"
