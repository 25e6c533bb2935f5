#!/bin/sh
# /init of the vperf test initramfs (busybox sh). Installed by mkimage.sh; used for L1 and for L2 guests.
#
# 1. mounts proc, sys, dev, tmp
# 2. insmods the modules listed in /etc/vperf/modules (paths under /lib/modules/<kver>, in load order)
# 3. reports /dev/kvm; starts vperf-keys (holds static keys raised: a QEMU TCG hang, see its source), then
#    brings the CPUs that maxcpus=1 left offline online, then (vperf.hb=TTY) starts vperf-heartbeat on TTY
# 4. runs the payload: kernel parameter vperf.run=PATH, else /payload/run.sh, else a built-in check
#    (vperf.shell=1 instead starts an interactive shell on the console, for debugging)
# 5. prints "<TAG>-RESULT: status=N", hands N to the VMM when it is vperf-vmm (vperf-call exit N: the vperf
#    hypercall port, found by CPUID; elsewhere vperf-call returns at once), then powers off (QEMU exits because
#    it runs with -no-reboot; vperf-vmm exits on ACPI poweroff too, with status 0)
#
# <TAG> comes from /etc/vperf/tag ("VPERF" in L1, "VPERF-L2" in L2) so that nested consoles, which all end up
# on the L0 serial, can be told apart. Every line this script prints starts with "<TAG>-".

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

TAG=VPERF
[ -r /etc/vperf/tag ] && TAG=$(cat /etc/vperf/tag)
KVER=$(uname -r)

log() { echo "$TAG-$*"; }

finish() {
	log "RESULT: status=$1"
	sync
	# Under vperf-vmm this does not return: the VMM exits with status $1.
	[ -x /bin/vperf-call ] && /bin/vperf-call exit "$1" 2>/dev/null
	poweroff -f
	# poweroff should not return; if ACPI is missing, try the sysrq path, then halt.
	echo o >/proc/sysrq-trigger 2>/dev/null
	sleep 5
	halt -f
}

mkdir -p /proc /sys /dev /tmp /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || mdev -s
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
[ -e /sys/kernel/debug ] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -e /sys/kernel/tracing ] && mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname "$(echo "$TAG" | tr '[:upper:]' '[:lower:]')"

log "INIT: kernel $KVER, $(grep -c '^processor' /proc/cpuinfo) cpus, uptime $(cut -d' ' -f1 /proc/uptime) s"
# where KASLR put the kernel: run-nested.sh names a frozen guest's RIPs with it (qemu-regs.py)
log "KTEXT: $(grep -m1 ' _text$' /proc/kallsyms | cut -d' ' -f1)"

# Kernel parameters. Parameters with a dot never reach init's environment, so parse /proc/cmdline.
RUN=""
SHELL_MODE=0
HEARTBEAT=""
# shellcheck disable=SC2013 # words, not lines
for word in $(cat /proc/cmdline); do
	case "$word" in
	vperf.run=*) RUN=${word#vperf.run=} ;;
	vperf.shell=1) SHELL_MODE=1 ;;
	vperf.hb=*) HEARTBEAT=${word#vperf.hb=} ;;
	esac
done

# Modules, in the dependency order mkimage.sh computed from modules.dep.
modfail=0
if [ -s /etc/vperf/modules ]; then
	while read -r mod; do
		[ -n "$mod" ] || continue
		if ! out=$(insmod "/lib/modules/$KVER/$mod" 2>&1); then
			log "MODULE: FAILED $mod: $out"
			modfail=1
		fi
	done </etc/vperf/modules
	if [ "$modfail" = 1 ]; then
		dmesg | tail -n 20
	else
		log "MODULES: loaded $(tr '\n' ' ' </etc/vperf/modules | sed 's#[^ ]*/##g; s#\.ko##g')"
	fi
fi

VPERF_KVM=0
if [ -c /dev/kvm ]; then
	VPERF_KVM=1
	log "KVM: /dev/kvm present"
else
	log "KVM: /dev/kvm missing"
fi
# Under QEMU TCG: hold the static keys that VMs, perf events and vperf_guest.ko's tracepoints flip
# (tests/vm/guest/vperf-keys.c). The tracepoints are the module's, held where it can be loaded (L2).
if [ -x /bin/vperf-keys ]; then
	tps=""
	# the module's own, then those its tracing (trace=1) adds
	[ "$TAG" = VPERF ] || tps="sched:sched_switch sched:sched_process_exit sched:sched_process_fork
		sched:sched_waking sched:sched_wakeup sched:sched_wakeup_new sched:sched_process_exec
		irq:irq_handler_entry irq_vectors:local_timer_entry irq_vectors:reschedule_entry
		irq_vectors:call_function_entry irq_vectors:call_function_single_entry mmap:vma_store"
	# shellcheck disable=SC2086 # words
	vperf-keys $tps >/tmp/vperf-keys.log 2>&1 &
	i=0
	while [ $i -lt 50 ] && ! grep -q holding /tmp/vperf-keys.log; do sleep 0.1; i=$((i + 1)); done
	log "KEYS: $(tr '\n' ' ' </tmp/vperf-keys.log)"
fi
# run-nested boots L1, and vm-run.sh a nested L2, with maxcpus=1, so that loading the modules and raising the keys
# above patch kernel text while one CPU runs (the TCG hang needs a second CPU running the patched code): the
# others come online now.
late=0
for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ -w "$c" ] && [ "$(cat "$c")" = 0 ] || continue
	late=1
	echo 1 >"$c" || log "CPU: cannot bring ${c%/online} online"
done
[ "$late" = 0 ] || log "CPUS: $(grep -c '^processor' /proc/cpuinfo) online"
# vperf.hb=ttyS1: a beat per CPU on that port, which the runner watches to tell a frozen guest (run-nested.sh)
if [ -n "$HEARTBEAT" ]; then
	if [ -x /bin/vperf-heartbeat ] && [ -c "/dev/$HEARTBEAT" ]; then
		vperf-heartbeat "/dev/$HEARTBEAT" </dev/null >/dev/null 2>/tmp/vperf-heartbeat.log &
		log "HEARTBEAT: on /dev/$HEARTBEAT, every 3 s from each CPU"
	else
		log "HEARTBEAT: none: no /bin/vperf-heartbeat or no /dev/$HEARTBEAT"
	fi
fi
VPERF_TAG=$TAG
VPERF_KVER=$KVER
export VPERF_KVM VPERF_TAG VPERF_KVER

if [ "$SHELL_MODE" = 1 ]; then
	log "SHELL: interactive shell on the console; 'exit N' ends with status N"
	setsid cttyhack sh -l
	finish $?
fi

if [ -z "$RUN" ] && [ -e /payload/run.sh ]; then
	RUN=/payload/run.sh
fi

if [ -z "$RUN" ]; then
	log "PAYLOAD: none given; built-in check: /dev/kvm must exist"
	[ "$VPERF_KVM" = 1 ] || [ ! -s /etc/vperf/modules ]
	status=$?
elif [ ! -e "$RUN" ]; then
	log "PAYLOAD: $RUN does not exist"
	status=127
else
	log "PAYLOAD: start $RUN (uptime $(cut -d' ' -f1 /proc/uptime) s)"
	cd /payload 2>/dev/null || cd /
	if [ -x "$RUN" ]; then
		"$RUN" </dev/null
	else
		sh "$RUN" </dev/null
	fi
	status=$?
	cd /
	log "PAYLOAD: end status $status (uptime $(cut -d' ' -f1 /proc/uptime) s)"
fi
finish "$status"
