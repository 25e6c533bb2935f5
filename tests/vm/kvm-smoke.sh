#!/usr/bin/env bash
# kvm-smoke.sh [N] [run-nested options...]: build kvm-smoke (static) and run it in L1.
#
# kvm-smoke opens L1's /dev/kvm, prints KVM capabilities and the KVM CPUID leaves, runs a real-mode guest that
# writes N times to an I/O port (default 1000) and halts, and checks the KVM_EXIT_IO count (and the vCPU's
# io_exits binary stat) against N. Exit status: kvm-smoke's, or run-nested.sh's own (124/125/126).
# Extra arguments go to run-nested.sh (e.g. --timeout 300 --quiet).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

N=1000
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
	N=$1
	shift
fi

need_cmd gcc gcc
OUT="$VPERF_VM_BUILD/kvm-smoke"
mkdir -p "$OUT/payload"
if [ ! -x "$OUT/payload/kvm-smoke" ] || [ "$VM_DIR/kvm-smoke.c" -nt "$OUT/payload/kvm-smoke" ]; then
	gcc -std=c11 -O2 -Wall -Wextra -Werror -static -o "$OUT/payload/kvm-smoke" "$VM_DIR/kvm-smoke.c" ||
		die "building kvm-smoke failed (static linking needs libc6-dev; run tests/vm/deps.sh)"
fi
exec "$VM_DIR/run-nested.sh" --payload "$OUT/payload" "$@" -- /payload/kvm-smoke "$N"
