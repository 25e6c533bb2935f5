#!/usr/bin/env bash
# mkimage.sh [OUTDIR]: build the kernel + initramfs images of the nested test stack.
#
# Fetches Debian's kernel package (the version linux-image-amd64 depends on today, resolved at run time),
# extracts it with dpkg-deb -x (no update-initramfs), runs depmod on the extracted tree, and writes:
#   OUTDIR/vmlinuz        the bzImage (used for L1 and for L2)
#   OUTDIR/kver           the kernel version string (uname -r)
#   OUTDIR/config         the kernel's .config
#   OUTDIR/initrd-l1.gz   busybox-static + /init + irqbypass, kvm, ccp, kvm-amd and their dependencies
#   OUTDIR/initrd-l2.gz   busybox-static + /init, no modules (the L2 guest's initramfs; tag VPERF-L2)
#   OUTDIR/modules        the L1 module load order (paths under /lib/modules/<kver>)
# Both images carry /bin/vperf-call (guest/vperf-call.c, static): /init hands its result to vperf-vmm with it.
#
# Extra files are carried in by a second cpio.gz appended to the initramfs (the kernel unpacks concatenated
# archives in order): run-nested.sh --payload DIR does that, DIR lands in /payload.
#
# Idempotent and cached: the .deb and the extracted tree live in $VPERF_VM_CACHE (default build-vm/cache) and are
# reused for the same kernel version; the images are rebuilt only when an input changed.
#
# Environment:
#   VPERF_VM_KERNEL_PKG  kernel package to use instead of linux-image-amd64's dependency (e.g. linux-image-6.1.0-56-amd64)
#   VPERF_VM_MODULES     module names for L1 (default: "irqbypass kvm ccp kvm-amd"; dependencies are added)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}
case "${1:-}" in -h | --help) usage 0 ;; esac
[ $# -le 1 ] || usage "$VM_EXIT_USAGE"
OUTDIR="${1:-$VPERF_VM_IMAGE}"

need_cmd apt-get apt
need_cmd apt-cache apt
need_cmd dpkg-deb dpkg
need_cmd depmod kmod
need_cmd cpio cpio
need_cmd gzip gzip
need_cmd sha256sum coreutils
need_cmd gcc gcc
BUSYBOX=/bin/busybox
if ! pkg_installed busybox-static || [ ! -x "$BUSYBOX" ]; then
	die "busybox-static is not installed (the initramfs needs a static busybox); run tests/vm/deps.sh"
fi

MODULES="${VPERF_VM_MODULES:-irqbypass kvm ccp kvm-amd}"

# --- 1. resolve the kernel package -------------------------------------------------------------------------
resolve_kernel_pkg() {
	if [ -n "${VPERF_VM_KERNEL_PKG:-}" ]; then
		echo "$VPERF_VM_KERNEL_PKG"
		return
	fi
	apt-cache depends linux-image-amd64 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
KPKG="$(resolve_kernel_pkg)"
if [ -z "$KPKG" ]; then
	if [ -s "$OUTDIR/kver" ] && [ -d "$VPERF_VM_CACHE/linux-image-$(cat "$OUTDIR/kver")" ]; then
		KPKG="linux-image-$(cat "$OUTDIR/kver")"
		say "warning: apt-cache cannot resolve linux-image-amd64; reusing cached $KPKG"
	else
		die "cannot resolve linux-image-amd64's kernel package with apt-cache; run 'apt-get update' (or tests/vm/deps.sh)"
	fi
fi
KVER="${KPKG#linux-image-}"
say "kernel package $KPKG (version $KVER)"

# --- 2. download and extract (cached per kernel version) ---------------------------------------------------
mkdir -p "$VPERF_VM_CACHE"
TREE="$VPERF_VM_CACHE/linux-image-$KVER"
if [ ! -e "$TREE/.extracted" ]; then
	shopt -s nullglob
	debs=("$VPERF_VM_CACHE/${KPKG}"_*.deb)
	shopt -u nullglob
	if [ "${#debs[@]}" -eq 0 ]; then
		say "downloading $KPKG with apt-get download"
		# Sandbox::User=root: the cache dir belongs to root, and _apt could not write there.
		(cd "$VPERF_VM_CACHE" && apt-get download -q -o APT::Sandbox::User=root "$KPKG") ||
			die "apt-get download $KPKG failed; run 'apt-get update' and check the Debian mirror is reachable"
		debs=("$VPERF_VM_CACHE/${KPKG}"_*.deb)
	else
		say "using cached ${debs[0]##*/}"
	fi
	rm -rf "$TREE.tmp"
	mkdir -p "$TREE.tmp"
	dpkg-deb -x "${debs[0]}" "$TREE.tmp"
	[ -f "$TREE.tmp/boot/vmlinuz-$KVER" ] || die "${debs[0]##*/} has no boot/vmlinuz-$KVER"
	# Debian's .deb has no modules.dep (postinst runs depmod): build one for the extracted tree.
	depmod -b "$TREE.tmp" "$KVER"
	touch "$TREE.tmp/.extracted"
	rm -rf "$TREE"
	mv "$TREE.tmp" "$TREE"
else
	say "using cached tree $TREE"
fi
MODDIR="$TREE/lib/modules/$KVER"

# --- 3. module load order from modules.dep -----------------------------------------------------------------
declare -A MODPATH=() MODDEPS=() SEEN=()
while IFS= read -r line; do
	path="${line%%:*}"
	name="${path##*/}"
	name="${name%.ko*}"
	name="${name//-/_}"
	MODPATH[$name]="$path"
	MODDEPS[$path]="${line#*:}"
done <"$MODDIR/modules.dep"

ORDER=()
add_module_path() { # path: dependencies first (depth first), each module once
	local p=$1 d
	[ -z "${SEEN[$p]:-}" ] || return 0
	SEEN[$p]=1
	for d in ${MODDEPS[$p]}; do add_module_path "$d"; done
	ORDER+=("$p")
}
for m in $MODULES; do
	key="${m//-/_}"
	if [ -z "${MODPATH[$key]:-}" ]; then
		if grep -qE "/${m}\.ko|/${key}\.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
			say "module $m is built into $KVER; nothing to load"
			continue
		fi
		die "module $m not found in $MODDIR/modules.dep"
	fi
	add_module_path "${MODPATH[$key]}"
done
[[ "${MODULES// /}" == "" ]] || [ "${#ORDER[@]}" -gt 0 ] || say "warning: no module to load"

# --- 4. images (rebuilt only when an input changed) --------------------------------------------------------
mkdir -p "$OUTDIR"
STAMP_NEW="$(
	{
		echo "kver $KVER"
		echo "modules ${ORDER[*]}"
		sha256sum "$VM_DIR/init.sh" "$VM_DIR/mkimage.sh" "$VM_DIR/common.sh" "$BUSYBOX" "$TREE/boot/vmlinuz-$KVER" \
			"$VM_DIR/guest/vperf-call.c" "$VM_DIR/guest/vperf-keys.c" "$VM_DIR/guest/vperf-heartbeat.c" \
			"$REPO_DIR/hv/include/vperf/abi.h"
	} | sha256sum | cut -d' ' -f1
)"
if [ -s "$OUTDIR/.stamp" ] && [ "$(cat "$OUTDIR/.stamp")" = "$STAMP_NEW" ] &&
	[ -s "$OUTDIR/vmlinuz" ] && [ -s "$OUTDIR/initrd-l1.gz" ] && [ -s "$OUTDIR/initrd-l2.gz" ]; then
	say "images in $OUTDIR are up to date ($KVER)"
	exit 0
fi

mkdir -p "$VPERF_VM_BUILD"
STAGE="$(mktemp -d "$VPERF_VM_BUILD/stage.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT

# The guest side of the vperf hypercall port (static: the images have no libc).
gcc -std=c11 -O2 -Wall -Wextra -static -I "$REPO_DIR/hv/include" -o "$STAGE/vperf-call" "$VM_DIR/guest/vperf-call.c" ||
	die "building guest/vperf-call.c failed (static linking needs libc6-dev; run tests/vm/deps.sh)"
# Keeps the static keys that KVM, perf and vperf_guest.ko flip raised (see the program's comment: a TCG hang).
gcc -std=c11 -O2 -Wall -Wextra -static -o "$STAGE/vperf-keys" "$VM_DIR/guest/vperf-keys.c" ||
	die "building guest/vperf-keys.c failed"
# A beat per CPU on a serial port of its own: run-nested.sh tells a frozen L1 by it (see the program's comment).
gcc -std=c11 -O2 -Wall -Wextra -static -pthread -o "$STAGE/vperf-heartbeat" "$VM_DIR/guest/vperf-heartbeat.c" ||
	die "building guest/vperf-heartbeat.c failed"

# stage_rootfs DIR TAG: busybox, its applet links, /init, /bin/vperf-call, /etc/vperf/tag.
stage_rootfs() {
	local d=$1 tag=$2 applet
	rm -rf "$d"
	mkdir -p "$d"/{bin,sbin,usr/bin,usr/sbin,etc/vperf,proc,sys,dev,tmp,run,root,payload,lib/modules/"$KVER"}
	cp "$BUSYBOX" "$d/bin/busybox"
	# --list-full gives each applet's install path (bin/ls, sbin/insmod, usr/bin/...).
	while IFS= read -r applet; do
		[ -e "$d/$applet" ] || ln -s /bin/busybox "$d/$applet"
	done < <("$BUSYBOX" --list-full)
	install -m 0755 "$VM_DIR/init.sh" "$d/init"
	install -m 0755 "$STAGE/vperf-call" "$d/bin/vperf-call"
	install -m 0755 "$STAGE/vperf-keys" "$d/bin/vperf-keys"
	install -m 0755 "$STAGE/vperf-heartbeat" "$d/bin/vperf-heartbeat"
	echo "$tag" >"$d/etc/vperf/tag"
	: >"$d/etc/vperf/modules"
	echo "root:x:0:0:root:/root:/bin/sh" >"$d/etc/passwd"
	echo "root:x:0:" >"$d/etc/group"
	# the console device must exist before devtmpfs is mounted, for init's stdout
	mknod -m 600 "$d/dev/console" c 5 1 2>/dev/null || true
}

stage_rootfs "$STAGE/l1" VPERF
for p in "${ORDER[@]}"; do
	mkdir -p "$STAGE/l1/lib/modules/$KVER/$(dirname "$p")"
	cp "$MODDIR/$p" "$STAGE/l1/lib/modules/$KVER/$p"
	echo "$p" >>"$STAGE/l1/etc/vperf/modules"
done
# Same inputs, same bytes: fix every timestamp to the kernel image's.
find "$STAGE/l1" -exec touch -h -r "$TREE/boot/vmlinuz-$KVER" {} +
mkcpio "$STAGE/l1" "$OUTDIR/initrd-l1.gz"

stage_rootfs "$STAGE/l2" VPERF-L2
find "$STAGE/l2" -exec touch -h -r "$TREE/boot/vmlinuz-$KVER" {} +
mkcpio "$STAGE/l2" "$OUTDIR/initrd-l2.gz"

cp "$TREE/boot/vmlinuz-$KVER" "$OUTDIR/vmlinuz.tmp" && mv "$OUTDIR/vmlinuz.tmp" "$OUTDIR/vmlinuz"
cp "$TREE/boot/config-$KVER" "$OUTDIR/config"
printf '%s\n' "${ORDER[@]}" >"$OUTDIR/modules"
echo "$KVER" >"$OUTDIR/kver"
echo "$STAMP_NEW" >"$OUTDIR/.stamp"

say "wrote $OUTDIR: vmlinuz ($KVER), initrd-l1.gz ($(du -h "$OUTDIR/initrd-l1.gz" | cut -f1), modules: $(printf '%s ' "${ORDER[@]##*/}")), initrd-l2.gz ($(du -h "$OUTDIR/initrd-l2.gz" | cut -f1))"
