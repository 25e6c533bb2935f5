#!/bin/sh
# L2 case: bad hypercalls get errors and leave the VM running. Exit 9 when every answer is the expected one.
# VPERF_EINVAL 1, VPERF_ENOSYS 2, VPERF_EFAULT 3, VPERF_ESTATE 9 (abi.h); RAM is 256 MiB (vperf_test.mem).
# The device's own operations are tested further by device-test.sh (guest/vperf-hctest.c).
fails=0
check() { # check WHAT EXPECTED ARGS...
	what=$1 want=$2
	shift 2
	got=$(vperf-call "$@")
	if [ "$got" = "$want" ]; then
		echo "hostile: ok   $what: $got"
	else
		echo "hostile: FAIL $what: got '$got', want '$want'"
		fails=$((fails + 1))
	fi
}
# features: counters, overflow, trace, doorbell, overflow NMIs, version-2 trace rings, the event list, MMAP trace
# records, module symbols in them (0x3f7), plus hardware events (0x3ff) where the host has a PMU
case "$(vperf-call version)" in
"version 1 features 0x3f7" | "version 1 features 0x3ff") echo "hostile: ok   version" ;;
*) echo "hostile: FAIL version: got '$(vperf-call version)'"; fails=$((fails + 1)) ;;
esac
check "snapshot without a registered page" -9 raw 5 0x1000
check "unknown op 99" -2 raw 99
check "unknown op 0xffffffff" -2 raw 0xffffffff
check "exit status 256" -1 raw 1 256
check "exit status -1" -1 raw 1 -1
check "ucall at the IO-APIC (not RAM)" -3 ucall-gpa 0xfec00000
check "ucall across the end of RAM" -3 ucall-gpa $((256 * 1024 * 1024 - 100))
check "ucall at the top of the address space" -3 ucall-gpa 0xfffffffffffffff0
check "ucall at 2^63" -3 ucall-gpa 0x8000000000000000
[ "$fails" = 0 ] || exit 1
exit 9
