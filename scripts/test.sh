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
# nested VM batches rerun once for a stated reason (tests/vm/ctest-batch.sh); every rerun is reported here
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
exit "$st"
