#!/bin/sh
# L2 case: crash the kernel (sysrq c): "Kernel panic - not syncing", panic=-1 reboots: vperf-vmm exits 123.
echo c >/proc/sysrq-trigger
