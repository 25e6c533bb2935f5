#!/bin/sh
# L2 case: reboot (reboot=acpi: the FADT reset register): vperf-vmm exits 0.
reboot -f
