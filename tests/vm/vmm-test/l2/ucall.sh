#!/bin/sh
# L2 case: test reports through VPERF_HC_UCALL reach the VMM's stderr; then exit 5.
vperf-call print hello from L2 || exit 1
vperf-call values answer 42 0x2a || exit 1
exit 5
