#!/bin/sh
# L2 case: every vCPU came online. The expected count comes as vperf_test.cpus=N on the kernel command line.
# Exit 7 when /sys/devices/system/cpu/online and nproc match, 1 when not.
want=$(sed -n 's/.*vperf_test\.cpus=\([0-9]*\).*/\1/p' /proc/cmdline)
online=$(cat /sys/devices/system/cpu/online)
n=$(nproc)
exp=0
[ "${want:-0}" -gt 1 ] && exp="0-$((want - 1))"
echo "online-check: online=$online nproc=$n want=$want"
[ -n "$want" ] && [ "$online" = "$exp" ] && [ "$n" = "$want" ] || exit 1
exit 7
