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
ctest --test-dir "$build" --output-on-failure --timeout 600 "$@"
