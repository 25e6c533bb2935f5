#!/usr/bin/env bash
# kmod-test/build.sh [OUTDIR]: build vperf_guest.ko (guest-lib/kmod) against the headers of the guest image's
# kernel (Debian's linux-headers-<kver>, installed here if missing, as build-guest.sh does) and the static test
# programs vperf-kmod-info, vperf-kmod-irq, vperf-kmod-thread, vperf-kmod-fuzz and vperf-kmod-trace (kmod-test/*.c, the
# last with libvperf's markers), into OUTDIR (default
# $VPERF_VM_BUILD/kmod-test).
# The module is built from a copy of guest-lib/kmod, so the source tree stays clean. Prints OUTDIR.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR/.. source=../common.sh
. "$(dirname "$0")/../common.sh"

OUT=${1:-$VPERF_VM_BUILD/kmod-test}
SRC="$REPO_DIR/guest-lib/kmod"
mkdir -p "$OUT"
"$VM_DIR/build-kmod.sh" "$OUT" >/dev/null

gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -I "$SRC" \
	-o "$OUT/vperf-kmod-info" "$(dirname "$0")/vperf-kmod-info.c" ||
	die "$VM_EXIT_USAGE" "building vperf-kmod-info failed (static linking needs libc6-dev)"
gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -I "$REPO_DIR/hv/include" \
	-o "$OUT/vperf-kmod-irq" "$(dirname "$0")/vperf-kmod-irq.c" ||
	die "$VM_EXIT_USAGE" "building vperf-kmod-irq failed"
gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -pthread -I "$SRC" -I "$REPO_DIR/hv/include" \
	-o "$OUT/vperf-kmod-thread" "$(dirname "$0")/vperf-kmod-thread.c" "$(dirname "$0")"/thread/*.c ||
	die "$VM_EXIT_USAGE" "building vperf-kmod-thread failed"
gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -pthread -I "$SRC" \
	-o "$OUT/vperf-kmod-fuzz" "$(dirname "$0")/vperf-kmod-fuzz.c" ||
	die "$VM_EXIT_USAGE" "building vperf-kmod-fuzz failed"
# the tracing tests use libvperf's markers as an application would: its marker source and the device seams
LIB="$REPO_DIR/guest-lib/lib"
gcc -static -O2 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -I "$SRC" -I "$REPO_DIR/hv/include" \
	-I "$LIB/include" -I "$LIB/src" -o "$OUT/vperf-kmod-trace" "$(dirname "$0")/vperf-kmod-trace.c" \
	"$LIB/src/trace-mark.c" "$LIB/src/sys.c" ||
	die "$VM_EXIT_USAGE" "building vperf-kmod-trace failed"
echo "$OUT"
