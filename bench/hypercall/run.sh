#!/usr/bin/env bash
# bench/hypercall/run.sh [--calls N] [vm-run options]: in one guest run, the round trip of a vperf hypercall
# (VPERF_HC_VERSION), of a bare port-I/O exit (an OUT to a port with no device), and of a guest getppid()
# syscall, as measured by the guest (tests/vm/guest/vperf-hctest.c, mode bench: 7 interleaved rounds, medians).
# Prints the guest's table and one JSON line.  Goal: PV hypercall <= 1.2x a bare port-I/O exit.
# Runs directly where the host has hardware virtualization, else nested (TCG timings: compare ratios only).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
vm="$here/../../tests/vm"
calls=20000
if [ "${1:-}" = "--calls" ]; then
	calls=${2:?--calls needs a number}
	shift 2
fi
[[ "$calls" =~ ^[0-9]+$ ]] && [ "$calls" -ge 1 ] || { echo "hypercall: --calls '$calls': a positive number" >&2; exit 2; }
G="$("$vm/build-guest.sh")"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$vm/vm-run.sh" --vcpus 1 --quiet --add "$G/vperf-hctest" "$@" -- "vperf-hctest bench $calls" >"$out" 2>&1 ||
	{ cat "$out" >&2; echo "hypercall: the guest run failed" >&2; exit 1; }
tr -d '\r' <"$out" | sed -n '/^method /,/^{"bench":"hypercall"/p'
