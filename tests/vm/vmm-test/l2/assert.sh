#!/bin/sh
# L2 case: a failed guest assertion (VPERF_UCALL_ASSERT) stops the VM as a crash: vperf-vmm exits 123.
vperf-call assert something broke 1
exit 1
