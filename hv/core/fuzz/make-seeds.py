#!/usr/bin/env python3
"""Write the seed corpus of one libvperf-hv fuzzer: well-formed call sequences a real guest makes,
and a few hostile ones, in the input format of fuzz-TARGET.c (README.md sums them up).

Usage: make-seeds.py [TARGET] DIR     TARGET: hypercall (the default) or trace"""
import os
import struct
import sys

BASE = 0x100000           # FAKE_RAM_BASE
VERSION, EXIT, UCALL, PAGE, COUNTERS, SNAP, OVF_SET, OVF_ACK, TRACE, FLUSH, EVENT_INFO = range(11)
DOORBELL_LOAD = 13        # VPERF_HC_NR_OPS + 2 in fuzz-hypercall.c
SRC_PERF, SRC_KVM, SRC_EXITS, SRC_STEAL = 1, 2, 3, 4


def call(op, vcpu=0, *args):
    args = list(args) + [0] * (4 - len(args))
    return struct.pack("<BB4Q", op, vcpu, *args)


def desc(source, name=b"", arg=0):
    return struct.pack("<IIQ64s", source, 0, arg, name)


def seed(calls, ram=b""):
    return bytes([len(calls)]) + b"".join(calls) + ram


def hypercall():
    descs = desc(SRC_EXITS, arg=2**64 - 1) + desc(SRC_STEAL, b"steal") + desc(SRC_PERF, b"task-clock")
    ucall = struct.pack("<II8Q128s", 1, 2, 7, 9, *[0] * 6, b"hello from the guest")
    ring = struct.pack("<IIQQQQ3Q", 64, 1, 4096, 128, 0, 0, 0, 0, 0)
    return {
        "version": seed([call(VERSION)]),
        "exit": seed([call(EXIT, 0, 7)]),
        "page-counters-snapshot": seed([
            call(PAGE, 0, BASE + 0x4000), call(COUNTERS, 0, BASE, 3), call(SNAP),
            call(OVF_SET, 0, 0, 5), call(SNAP), call(OVF_ACK, 0, 1), call(PAGE, 0, 0)], descs),
        "ucall": seed([call(UCALL, 0, BASE)], ucall),
        "trace": seed([call(TRACE, 0, BASE + 0x8000, 4096 + 64), call(FLUSH)],
                      b"\0" * 0x8000 + ring),
        "overlap": seed([call(PAGE, 0, BASE + 0x4000), call(PAGE, 1, BASE + 0x4000),
                         call(TRACE, 1, BASE + 0x4000, 4096 + 64)]),
        "hostile": seed([call(PAGE, 0, 2**64 - 4096), call(COUNTERS, 0, BASE, 2**63),
                         call(UCALL, 0, BASE + 0xFFFF), call(99, 0), call(OVF_ACK, 0, 2**64 - 1)]),
        "doorbell": seed([call(COUNTERS, 0, BASE, 1), call(DOORBELL_LOAD, 0, 0, 8),
                          call(DOORBELL_LOAD, 0, 8, 8), call(DOORBELL_LOAD, 0, 4, 4),
                          call(DOORBELL_LOAD, 0, 128, 8), call(DOORBELL_LOAD, 1, 0, 8)], descs),
        # a guest lists the host's events, then counts one it was told of
        "event-info": seed([call(EVENT_INFO, 0, i, BASE + 80 * i) for i in range(16)] + [
            call(COUNTERS, 0, BASE + 80 * 13, 2), call(EVENT_INFO, 0, 2**64 - 1, BASE),
            call(EVENT_INFO, 0, 0, BASE + 0xFFFF), call(EVENT_INFO, 1, 7, 2**64 - 40)]),
    }


# ---- fuzz-trace: op, vcpu, fields; values raw (selector 0xc0, 8 bytes) ----

R0, R1, HDR = 0, BASE, 64
(MEM, REG, FL, PG, PRODUCE, HEADER, SNAPSHOT) = range(7)


def raw(v):
    return b"\xc0" + struct.pack("<Q", v % 2**64)


def t_reg(gpa, length, vcpu=0):
    return bytes([REG, vcpu]) + raw(gpa) + raw(length)


def t_flush(vcpu=0):
    return bytes([FL, vcpu])


def t_page(gpa, vcpu=0):
    return bytes([PG, vcpu]) + raw(gpa)


def t_produce(n, vcpu=0):
    return bytes([PRODUCE, vcpu]) + struct.pack("<H", n)


def t_header(head, tail, vcpu=0):
    return bytes([HEADER, vcpu]) + raw(head) + raw(tail)


def t_mem(off, data, vcpu=0):
    return bytes([MEM, vcpu]) + struct.pack("<HB", off, len(data)) + data


def t_snap(vcpu=0):
    return bytes([SNAPSHOT, vcpu])


def trace():
    return {
        "produce-flush": (t_reg(0x1000, HDR + 4096) + t_produce(100) + t_flush() + t_produce(4096) +
                          t_flush() + t_produce(4097) + t_flush() + t_reg(0, 0) + t_flush()),
        "ring-at-gpa-0": (t_reg(0, HDR + 4096) + t_page(0, 1) + t_page(0x1000, 1) +
                          t_page(0x2000, 1) + t_produce(1) + t_flush() + t_snap(1)),
        "overlap": (t_page(0x4000) + t_reg(0x4000, HDR + 4096, 1) + t_reg(0x3000, HDR + 4096, 1) +
                    t_reg(0x3000, HDR + 2048, 1) + t_page(0x3000, 1) + t_page(0x3000) +
                    t_reg(0x5000, HDR + 64) + t_page(0x5000) + t_snap() + t_snap(1) +
                    t_reg(R1, HDR + 1024, 1) + t_flush(1)),
        "bounds": (t_reg(R1 + 0x7000, HDR + 4096) + t_reg(0x7000, HDR + 4096) +
                   t_reg(2**64 - 4096, HDR + 64) + t_reg(0x1000, HDR + (16 << 20)) +
                   t_reg(0x1000, 16 << 20) + t_reg(0x1000, HDR) + t_reg(0x1000, HDR + 100) +
                   t_reg(0x1001, HDR + 64) + t_reg(0, 2**64 - 1) + t_reg(R1 - 0x1000, HDR + 4096) +
                   t_page(0x8000) + t_page(R1 + 0x8000) + t_page(0x1008) + t_page(2**64 - 4096) +
                   t_reg(R1, HDR + 64, 2) + t_flush(2)),
        "hostile-header": (t_reg(R1, HDR + 64) + t_header(2**63, 2**64 - 1) + t_flush() +
                           t_header(2**64 - 1, 2**64 - 1) + t_flush() + t_header(64, 0) + t_flush() +
                           t_header(65, 0) + t_flush() + t_header(0, 1) + t_flush() +
                           t_mem(32 * 1024 + 16, b"\xff" * 16) + t_flush()),  # region 1: head, tail
    }


TARGETS = {"hypercall": hypercall, "trace": trace}


def main(argv):
    if len(argv) == 2:
        argv = [argv[0], "hypercall", argv[1]]
    if len(argv) != 3 or argv[1] not in TARGETS:
        sys.exit(__doc__)
    os.makedirs(argv[2], exist_ok=True)
    for name, data in TARGETS[argv[1]]().items():
        with open(os.path.join(argv[2], name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv)
