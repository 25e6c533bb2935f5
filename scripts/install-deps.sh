#!/usr/bin/env bash
# Installs the Debian packages vperf needs to build, test and benchmark.
# Idempotent and non-interactive: safe to run on every CI run and by hand.
set -euo pipefail

PKGS=(
	build-essential cmake pkg-config
	libpfm4-dev            # event names and encodings
	libunwind-dev          # callchains for sampling callbacks
	libcmocka-dev          # unit tests
	libpapi-dev papi-tools # baseline in bench/read-latency
	python3                # integration tests parse -x / -j output
	clang libclang-rt-14-dev # the hypercall fuzzer (libFuzzer, ASan, UBSan)
	acpica-tools           # iasl checks vperf-vmm's ACPI tables
	libbabeltrace-ctf-dev babeltrace2 # CTF trace writer (profiler/record); tests read traces back
	libtraceevent-dev      # host kernel events of raw recordings (profiler/record/hostevents.c)
	libbabeltrace2-dev     # vperf report/export read recordings (profiler/report/reader.c)
	libelf-dev             # symbols of the files a recording mapped (profiler/report/symbols.c)
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev # vperf export --to pprof (profiler/export)
	golang-go              # go tool pprof reads the exported profile (tests/integration/report_tests.py)
	chromium               # headless, renders vperf timeline's SVG as a person sees it (tests/integration/timeline_tests.py)
	libvirt-clients        # virt-xml-validate checks docs/vperf-kvm.md's libvirt fragment (tests/integration/kvm_tests.py)
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ "${#missing[@]}" -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
else
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# speedscope (npm), a reader of the Trace Event Format that tests/integration/timeline_tests.py loads
# vperf export --to chrome into, in headless Chromium.  npm from Debian where there is none.
SPEEDSCOPE_DIR=/opt/vperf-speedscope
if [ ! -e "$SPEEDSCOPE_DIR/node_modules/speedscope/dist/release/index.html" ]; then
	if ! command -v npm >/dev/null; then
		$SUDO apt-get install -y -qq --no-install-recommends npm || true
	fi
	$SUDO npm install --no-audit --no-fund --prefix "$SPEEDSCOPE_DIR" speedscope@1.25.0 >/dev/null &&
		echo "install-deps: speedscope in $SPEEDSCOPE_DIR" ||
		echo "install-deps: npm could not install speedscope: its timeline test will skip"
fi

# What real guests need: QEMU for the nested stack, busybox, the guest kernel's tools.
bash "$(dirname "$0")/../tests/vm/deps.sh"

# tracefs: the host kernel's events (vperf-vmm --record's, vperf record's sched_switch and sched_wakeup, their tests).
# systemd mounts it; a container often does not.  Mounted here when root can and it is missing; otherwise those
# recordings go without and say why, and their tests skip.
if [ ! -e /sys/kernel/tracing/events ] && grep -qw tracefs /proc/filesystems 2>/dev/null && [ -d /sys/kernel/tracing ]; then
	if [ "$(id -u)" -eq 0 ] && mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
		echo "install-deps: mounted tracefs on /sys/kernel/tracing"
	else
		echo "install-deps: tracefs is not mounted and could not be (not root?): host kernel events are left out"
	fi
fi
# debugfs: KVM's per-vCPU TSC offsets (kvm/PID-FD/vcpuN/tsc-offset), which `vperf kvm record` maps the guest's
# clock with.  Mounted here the same way; without it such a recording says its guest records have no clock mapping.
if [ ! -e /sys/kernel/debug/kvm ] && grep -qw debugfs /proc/filesystems 2>/dev/null && [ -d /sys/kernel/debug ] &&
	! grep -q ' /sys/kernel/debug debugfs ' /proc/mounts; then
	if [ "$(id -u)" -eq 0 ] && mount -t debugfs none /sys/kernel/debug 2>/dev/null; then
		echo "install-deps: mounted debugfs on /sys/kernel/debug"
	else
		echo "install-deps: debugfs is not mounted and could not be (not root?): vperf kvm record maps no guest clock"
	fi
fi
