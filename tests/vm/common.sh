# shellcheck shell=bash disable=SC2034 # variables here are used by the scripts that source this file
# Shared helpers for the tests/vm scripts. Sourced, never run.
#
# Paths: everything downloaded or built goes under $VPERF_VM_BUILD (default <repo>/build-vm, gitignored).

VM_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$VM_DIR/../.." && pwd)"
VPERF_VM_BUILD="${VPERF_VM_BUILD:-$REPO_DIR/build-vm}"
VPERF_VM_CACHE="${VPERF_VM_CACHE:-$VPERF_VM_BUILD/cache}"
VPERF_VM_IMAGE="${VPERF_VM_IMAGE:-$VPERF_VM_BUILD/image}"

# Exit statuses of the runner itself (a payload's own status is passed through unchanged).
VM_EXIT_USAGE=2         # bad arguments, missing image or tool
VM_EXIT_TIMEOUT=124     # L1 did not power off within --timeout
VM_EXIT_BOOTFAIL=125    # QEMU failed, or L1 never reached /init
VM_EXIT_NORESULT=126    # /init ran but printed no VPERF-RESULT line
VM_EXIT_L1CRASH=122     # L1 triple-faulted (QEMU reset it) before its VPERF-RESULT line
VM_EXIT_FROZE=121       # the nested stack froze: an L1 CPU stopped giving heartbeats (run-nested.sh)

# Every script that sources this file dies with the process that started it (parent-death signal TERM), so that
# ending a runner (Ctrl-C, SIGTERM from timeout(1), ctest, a harness) ends the scripts and guests under it, down to
# run-nested.sh, whose trap ends QEMU. The script re-executes itself once under setpriv(1) for that; its pid stays.
if [ "${BASH_SOURCE[1]:-}" = "$0" ] && [ "${VPERF_PDEATHSIG_PID:-}" != "$$" ] && [ -z "${VPERF_NO_PDEATHSIG:-}" ] &&
	command -v setpriv >/dev/null 2>&1; then
	export VPERF_PDEATHSIG_PID=$$
	exec setpriv --pdeathsig TERM -- "$BASH" "$0" "$@"
fi

vm_prog="$(basename "$0" .sh)"

say() { printf '%s: %s\n' "$vm_prog" "$*" >&2; }
die() {
	local rc=1
	if [[ "${1:-}" =~ ^[0-9]+$ ]]; then rc=$1; shift; fi
	printf '%s: error: %s\n' "$vm_prog" "$*" >&2
	exit "$rc"
}

# vm_lock FILE FD: take the machine-wide lock FILE on FD (flock), one holder at a time. A holder writes its pid
# and the commands above it into FILE (and run-nested.sh QEMU's pid later); a waiter says who holds it, and says so
# again every minute. VM_LOCK_FILE is FILE.
vm_lock() {
	local file=$1 fd=$2 t0=$EPOCHSECONDS p n=0 cmd
	VM_LOCK_FILE=$file
	eval "exec $fd>>\"\$file\""
	if ! flock -n "$fd"; then
		say "waiting for $file: $(vm_lock_holder "$file")"
		until flock -w 60 "$fd"; do
			say "still waiting for $file after $((EPOCHSECONDS - t0)) s: $(vm_lock_holder "$file")"
		done
		say "took $file after $((EPOCHSECONDS - t0)) s"
	fi
	{
		echo "holder pid $$ since $(date -u +%FT%TZ)"
		p=$$
		while [ "$p" -gt 1 ] && [ "$n" -lt 6 ] && [ -r "/proc/$p/cmdline" ]; do
			cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-200)
			echo "  pid $p: $cmd"
			p=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null || echo 0)
			n=$((n + 1))
		done
	} >"$file"
}
# vm_lock_holder FILE: who holds it, as its holder wrote it (and whether that pid still lives)
vm_lock_holder() {
	local pid cmd top qemu line
	pid=$(sed -n 's/^holder pid \([0-9][0-9]*\).*/\1/p' "$1" 2>/dev/null | head -1)
	if [ -z "$pid" ]; then
		echo "held by a process that did not say who it is"
		return
	fi
	cmd=$(sed -n 's/^  pid [0-9]*: //p' "$1" | head -1)
	top=$(sed -n 's/^  pid [0-9]*: //p' "$1" | tail -n 1)
	qemu=$(sed -n 's/^qemu pid \([0-9][0-9]*\).*/\1/p' "$1" | head -1)
	line="held by pid $pid ($cmd)"
	kill -0 "$pid" 2>/dev/null || line="$line, which has ended: a process it left holds the lock"
	[ "$top" = "$cmd" ] || line="$line, started under: $top"
	[ -z "$qemu" ] || line="$line; QEMU pid $qemu$(kill -0 "$qemu" 2>/dev/null || echo ' (ended)')"
	# what the holder wrote reaches this terminal: printable characters only
	printf '%s\n' "$line" | tr -c '[:print:]\n' '?'
}

# need_cmd CMD PACKAGE: fail with a fix-it message when CMD is not on PATH.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 ||
		die "$VM_EXIT_USAGE" "'$1' not found (Debian package '$2'); run tests/vm/deps.sh"
}

# pkg_installed PKG: true when dpkg says PKG is installed.
pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# elapsed START END: seconds between two $EPOCHREALTIME values, 2 decimals.
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# Does this host's /dev/kvm run guests (hardware virtualization)? Else the tests nest (run-nested.sh).
hw_virt() { grep -qE '^flags.*\b(vmx|svm)\b' /proc/cpuinfo && [ -w /dev/kvm ]; }

# mkcpio SRC_DIR OUT [gzip|none]: pack the tree under SRC_DIR as a newc cpio (gzipped by default), all files
# owned by root. The kernel accepts compressed and uncompressed archives concatenated in one initrd.
mkcpio() {
	local src=$1 out=$2 comp=${3:-gzip}
	local filter=(gzip -6 -n)
	[ "$comp" = gzip ] || filter=(cat)
	(cd "$src" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --reproducible --quiet) | "${filter[@]}" >"$out.tmp"
	mv "$out.tmp" "$out"
}

# build_vmm: build the static vperf-vmm from hv/ (configured on its own: cmake -S hv) in $VPERF_VM_BUILD/vmm-build
# and print the binary's path. Quiet unless the build fails.
build_vmm() {
	local b="$VPERF_VM_BUILD/vmm-build" log
	need_cmd cmake cmake
	need_cmd gcc gcc
	mkdir -p "$b"
	log="$b/build.log"
	if [ ! -f "$b/CMakeCache.txt" ]; then
		cmake -S "$REPO_DIR/hv" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVPERF_WERROR=ON \
			-DVPERF_BUILD_TESTS=OFF >"$log" 2>&1 || { cat "$log" >&2; die "$VM_EXIT_USAGE" "cmake -S hv failed"; }
	fi
	cmake --build "$b" --target vperf-vmm-static -j2 >"$log" 2>&1 ||
		{ cat "$log" >&2; die "$VM_EXIT_USAGE" "building vperf-vmm-static failed (static linking needs libc6-dev)"; }
	[ -x "$b/vmm/vperf-vmm-static" ] || die "$VM_EXIT_USAGE" "no $b/vmm/vperf-vmm-static after the build"
	echo "$b/vmm/vperf-vmm-static"
}

# build_kvmrec: build kvm-rec (kvm-rec.c: `vperf kvm record`'s recorder as a static program of its own, for L1)
# into $VPERF_VM_BUILD/kvm-rec and print its path.  The recorder's sources are libc-only; gcc links them here.
build_kvmrec() {
	local b="$VPERF_VM_BUILD/kvm-rec" r="$REPO_DIR" log
	need_cmd gcc gcc
	mkdir -p "$b"
	log="$b/build.log"
	gcc -O2 -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -static -pthread \
		-I"$r/hv/include" -I"$r/hv/vmm" -I"$r/profiler/record" -I"$r/profiler/util" \
		"$r/tests/vm/kvm-rec.c" "$r/profiler/record/kvmrec.c" "$r/profiler/record/kvmvmm.c" \
		"$r/profiler/record/shm.c" "$r/hv/vmm/tracefs.c" "$r/profiler/util/why.c" -o "$b/kvm-rec.tmp" >"$log" 2>&1 ||
		{ cat "$log" >&2; die "$VM_EXIT_USAGE" "building kvm-rec failed (static linking needs libc6-dev)"; }
	mv "$b/kvm-rec.tmp" "$b/kvm-rec"
	echo "$b/kvm-rec"
}

# kernel_headers KVER WHY: print the directory of Debian's linux-headers-KVER (the guest kernel's, to build
# modules for it), installing the package if it is missing. WHY says what they are for.
kernel_headers() {
	local kver=$1 why=$2 hdr="/usr/src/linux-headers-$1"
	if [ ! -d "$hdr" ]; then
		say "installing linux-headers-$kver (the guest kernel's, $why)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends "linux-headers-$kver" >&2 ||
			{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "linux-headers-$kver" >&2; } ||
			die "$VM_EXIT_USAGE" "cannot install linux-headers-$kver"
	fi
	echo "$hdr"
}

# stage_qemu DIR: copy Debian's qemu-system-x86_64 into DIR/bin, the libraries ldd lists and the ELF interpreter
# into DIR/lib, and the firmware the pc and microvm machines load with -kernel into DIR/qemu-data. Prints the
# interpreter's file name (run QEMU as DIR/lib/<interp> --library-path DIR/lib DIR/bin/qemu-system-x86_64).
stage_qemu() {
	local dir=$1 qbin interp="" a b c f d found
	need_cmd qemu-system-x86_64 qemu-system-x86
	need_cmd ldd libc-bin
	mkdir -p "$dir/bin" "$dir/lib" "$dir/qemu-data"
	qbin="$(command -v qemu-system-x86_64)"
	cp -L "$qbin" "$dir/bin/qemu-system-x86_64"
	while read -r a b c _; do
		# "libfoo.so.1 => /lib/.../libfoo.so.1 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
		if [ "$b" = "=>" ] && [ -f "$c" ]; then
			cp -L "$c" "$dir/lib/$a"
		elif [ "${a#/}" != "$a" ] && [ -f "$a" ]; then
			interp="$(basename "$a")"
			cp -L "$a" "$dir/lib/$interp"
		elif [ "$b" = "=>" ] && [ "$c" = "not" ]; then
			die "$VM_EXIT_USAGE" "qemu-system-x86_64 needs $a, which is not installed"
		fi
	done < <(ldd "$qbin")
	[ -n "$interp" ] || die "$VM_EXIT_USAGE" "could not find qemu-system-x86_64's ELF interpreter in ldd's output"
	# "-machine pc" with -kernel: SeaBIOS and the linuxboot option ROM (kvmvapic is loaded with KVM);
	# "-machine microvm": its own SeaBIOS build. Debian's QEMU searches /usr/share/qemu, /usr/share/seabios
	# (package seabios) and /usr/lib/ipxe/qemu.
	for f in bios-256k.bin linuxboot_dma.bin linuxboot.bin kvmvapic.bin bios-microvm.bin; do
		found=""
		for d in /usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu; do
			if [ -e "$d/$f" ]; then found="$d/$f"; break; fi
		done
		[ -n "$found" ] || die "$VM_EXIT_USAGE" "QEMU firmware $f not found; reinstall qemu-system-x86 and seabios (tests/vm/deps.sh)"
		cp -L "$found" "$dir/qemu-data/$f"
	done
	echo "$interp"
}

# stage_l2_initrd OUT WORK PAYLOAD [CMD...]: OUT = the L2 initramfs (initrd-l2.gz from the image) with, when
# PAYLOAD (a directory, or "") or CMD is given, a second archive appended: PAYLOAD's contents in /payload and CMD
# in /vperf/cmd.sh. Prints the kernel parameter that runs CMD ("vperf.run=/vperf/cmd.sh"), or nothing.
stage_l2_initrd() {
	local out=$1 work=$2 payload=$3
	shift 3
	if [ -z "$payload" ] && [ $# -eq 0 ]; then
		cp "$VPERF_VM_IMAGE/initrd-l2.gz" "$out"
		return 0
	fi
	rm -rf "$work"
	mkdir -p "$work/tree/payload" "$work/tree/vperf"
	if [ -n "$payload" ]; then
		[ -d "$payload" ] || die "$VM_EXIT_USAGE" "L2 payload $payload is not a directory"
		cp -a "$payload/." "$work/tree/payload/"
	fi
	if [ $# -gt 0 ]; then
		printf '#!/bin/sh\n%s\n' "$*" >"$work/tree/vperf/cmd.sh"
		chmod 0755 "$work/tree/vperf/cmd.sh"
	fi
	mkcpio "$work/tree" "$work/extra.gz"
	cp "$VPERF_VM_IMAGE/initrd-l2.gz" "$out"
	# an archive appended to a compressed one must start 4-byte aligned (see README, pitfalls)
	truncate -s %512 "$out"
	cat "$work/extra.gz" >>"$out"
	[ $# -eq 0 ] || echo "vperf.run=/vperf/cmd.sh"
}
