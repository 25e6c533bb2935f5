#!/usr/bin/env bash
# The README's main command: install what vperf needs, build it, boot the bundled guest under vperf-vmm and count
# the bundled demo workload per guest thread with vperf's virtualization events (the pv backend: vperf_guest.ko
# in the guest, the vperf device in the VMM):
#   vperf vm run -- vperf stat -e vperf::vcpu-clock,vperf::steal,vperf::exits --per-thread -- vperf-demo
# Where the host has no hardware virtualization the guest runs nested, inside a QEMU TCG guest (~25 s).
#   scripts/demo.sh -- ARGS...   runs `vperf stat ARGS...` in the guest instead
#   scripts/demo.sh --host       counts the demo on this host (perf backend) without a guest
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${VPERF_BUILD_DIR:-$root/build}

bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target vperf-cli vperf-demo >/dev/null
vperf="$build/profiler/vperf"

case "${1:-}" in
--host)
	echo "+ vperf stat --per-thread -e task-clock,context-switches,page-faults -- vperf-demo" >&2
	exec "$vperf" stat --per-thread -e task-clock,context-switches,page-faults -- "$build/profiler/vperf-demo"
	;;
--)
	shift
	exec "$vperf" vm run --quiet -- vperf stat "$@"
	;;
"") ;;
*)
	echo "usage: scripts/demo.sh [--host | -- VPERF-STAT-ARGS...]" >&2
	exit 2
	;;
esac
echo "+ vperf vm run -- vperf stat -e vperf::vcpu-clock,vperf::steal,vperf::exits --per-thread -- vperf-demo" >&2
exec "$vperf" vm run --quiet -- vperf stat -e vperf::vcpu-clock,vperf::steal,vperf::exits --per-thread -- vperf-demo
