#!/usr/bin/env bash
# build-guest.sh [OUTDIR]: build what L2 test guests run, into OUTDIR (default $VPERF_VM_BUILD/guest):
#   vperf-hctest         static test program for the vperf device (guest/vperf-hctest.c)
#   vperf_irqcount.ko    test module counting the device's interrupts, built against the headers of the guest
#                        image's kernel (Debian's linux-headers-<kver>, installed here if missing)
# Prints OUTDIR.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

OUT=${1:-$VPERF_VM_BUILD/guest}
need_cmd gcc gcc
need_cmd make make
"$VM_DIR/mkimage.sh" "$VPERF_VM_IMAGE" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" "$VPERF_VM_IMAGE" ||
	die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"
KVER="$(cat "$VPERF_VM_IMAGE/kver")"
mkdir -p "$OUT"

gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -I "$REPO_DIR/hv/include" \
	-o "$OUT/vperf-hctest" "$VM_DIR/guest/vperf-hctest.c" ||
	die "$VM_EXIT_USAGE" "building vperf-hctest failed (static linking needs libc6-dev)"

HDR="$(kernel_headers "$KVER" "to build test modules")"
K="$VPERF_VM_BUILD/guest-kmod"
rm -rf "$K"
mkdir -p "$K"
cp "$VM_DIR/guest/irqcount/vperf_irqcount.c" "$VM_DIR/guest/irqcount/Kbuild" "$K/"
make -s -C "$HDR" M="$K" modules >"$K/build.log" 2>&1 ||
	{ cat "$K/build.log" >&2; die "$VM_EXIT_USAGE" "building vperf_irqcount.ko against $HDR failed"; }
cp "$K/vperf_irqcount.ko" "$OUT/"
echo "$OUT"
