#!/usr/bin/env python3
"""Write the fuzzer's seed corpus: well-formed call sequences a real guest
makes (see fuzz-hypercall.c for the input format).  Usage: make-seeds.py DIR"""
import os
import struct
import sys

BASE = 0x100000           # FAKE_RAM_BASE
VERSION, EXIT, UCALL, PAGE, COUNTERS, SNAP, OVF_SET, OVF_ACK, TRACE, FLUSH = range(10)
SRC_PERF, SRC_KVM, SRC_EXITS, SRC_STEAL = 1, 2, 3, 4


def call(op, vcpu=0, *args):
    args = list(args) + [0] * (4 - len(args))
    return struct.pack("<BB4Q", op, vcpu, *args)


def desc(source, name=b"", arg=0):
    return struct.pack("<IIQ64s", source, 0, arg, name)


def seed(calls, ram=b""):
    return bytes([len(calls)]) + b"".join(calls) + ram


def main(out):
    os.makedirs(out, exist_ok=True)
    descs = desc(SRC_EXITS, arg=2**64 - 1) + desc(SRC_STEAL, b"steal") + desc(SRC_PERF, b"task-clock")
    ucall = struct.pack("<II8Q128s", 1, 2, 7, 9, *[0] * 6, b"hello from the guest")
    ring = struct.pack("<IIQQQQ3Q", 64, 1, 4096, 128, 0, 0, 0, 0, 0)
    seeds = {
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
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "corpus")
