#!/usr/bin/env bash
# build-kmod.sh [OUTDIR]: build vperf_guest.ko (guest-lib/kmod) against the headers of the guest image's kernel
# (Debian's linux-headers-<kver>, installed here if missing) into OUTDIR (default $VPERF_VM_BUILD/kmod) and print
# the module's path. The module is built from a copy of guest-lib/kmod, so the source tree stays clean; W=1 and
# more through VPERF_KMOD_W. Used by vm-run.sh --vperf and kmod-test/build.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

OUT=${1:-$VPERF_VM_BUILD/kmod}
SRC="$REPO_DIR/guest-lib/kmod"
need_cmd gcc gcc
need_cmd make make
"$VM_DIR/mkimage.sh" "$VPERF_VM_IMAGE" >/dev/null 2>&1 || "$VM_DIR/mkimage.sh" "$VPERF_VM_IMAGE" ||
	die "$VM_EXIT_USAGE" "mkimage.sh failed; see above"
KVER="$(cat "$VPERF_VM_IMAGE/kver")"
HDR="$(kernel_headers "$KVER" "to build vperf_guest.ko")"

K="$OUT/kbuild"
rm -rf "$K"
mkdir -p "$K"
cp "$SRC"/Kbuild "$SRC"/*.c "$SRC"/*.h "$K/"
make -s -C "$HDR" M="$K" VPERF_ABI_INCLUDE="$REPO_DIR/hv/include" ${VPERF_KMOD_W:+W=$VPERF_KMOD_W} modules \
	>"$K/build.log" 2>&1 ||
	{ cat "$K/build.log" >&2; die "$VM_EXIT_USAGE" "building vperf_guest.ko against $HDR failed"; }
grep -v "^Skipping BTF generation" "$K/build.log" >&2 || true	# anything but the usual note
cp "$K/vperf_guest.ko" "$OUT/"
echo "$OUT/vperf_guest.ko"
