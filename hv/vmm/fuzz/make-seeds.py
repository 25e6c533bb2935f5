#!/usr/bin/env python3
"""Write the seed corpus of one vperf-vmm fuzzer: operation sequences a real guest (and a few
hostile ones) would make, in the input format its .c file documents (../../core/fuzz/README.md
sums them up).  Values are written raw (selector 0xc0 and 8 bytes), so the seeds keep their
meaning when a target's tables of interesting values change.

Usage: make-seeds.py TARGET DIR     TARGET: vmm-exits, doorbell or ucall"""
import os
import struct
import sys

LOW, HIGH_GPA, HIGH = 48 * 1024, 4 << 30, 16 * 1024      # fake-vmm.h's RAM
DOORBELL, IOAPIC, LAPIC = 0xfeb00000, 0xfec00000, 0xfee00000
PORT = 0x5650
VERSION, EXIT, UCALL, PAGE, COUNTERS, SNAP, OVF_SET, OVF_ACK, TRACE, FLUSH, EVENT_INFO = range(11)
SRC_PERF, SRC_KVM, SRC_EXITS, SRC_STEAL = 1, 2, 3, 4
PRINT, ASSERT, VALUES = 1, 2, 3
UART = 0x3f8


def raw(v):
    return b"\xc0" + struct.pack("<Q", v % 2**64)


def u8(v):
    return struct.pack("<B", v)


def desc(source, name=b"", arg=0, flags=0):
    return struct.pack("<IIQ64s", source, flags, arg, name)


def ucall_block(cmd, args=(), msg=b"", nr=None):
    a = list(args) + [0] * (8 - len(args))
    return struct.pack("<II8Q128s", cmd, len(args) if nr is None else nr, *a, msg)


# ---- fuzz-vmm-exits ----

def ram(gpa, data, vcpu=0):
    out = b""
    for i in range(0, len(data), 255):
        chunk = data[i:i + 255]
        out += u8(0) + u8(vcpu) + raw(gpa + i) + u8(len(chunk)) + chunk
    return out


def pio(port, out=False, size=1, data=b"", count=None, regs=None, vcpu=0, raw_size=None,
        raw_count=None, raw_offset=None):
    sizes = {1: 0, 2: 1, 4: 2}
    flags = int(out) | (3 if raw_size is not None else sizes[size]) << 1
    flags |= (8 if count else 0) | (16 if raw_count is not None else 0) | (32 if regs else 0)
    b = u8(1) + u8(vcpu) + u8(flags) + raw(port)
    if raw_size is not None:
        b += u8(raw_size)
    if count:
        b += u8(count - 1)
    if raw_count is not None:
        b += struct.pack("<I", raw_count) + raw(raw_offset)
    if regs:
        b += b"".join(raw(r) for r in regs)
    return b + data.ljust(16, b"\0")[:16]


def mmio(gpa, length=8, write=False, data=b"", vcpu=0):
    return u8(2) + u8(vcpu) + u8(int(write)) + raw(gpa) + u8(length) + data.ljust(8, b"\0")[:8]


def other(which, x=0, vcpu=0, reason=None):
    if reason is not None:
        return u8(3) + u8(vcpu) + u8(0xff) + struct.pack("<II", reason, x)
    return u8(3) + u8(vcpu) + u8(which) + struct.pack("<I", x)


def console_in(data):
    return u8(4) + u8(0) + u8(len(data)) + data


def hc(op, *args, vcpu=0):
    a = list(args) + [0] * (4 - len(args))
    return u8(5) + u8(vcpu) + u8(op) + b"".join(raw(x) for x in a)


def vmm_exits():
    w = lambda reg, v: pio(UART + reg, True, 1, bytes([v]))
    r = lambda reg: pio(UART + reg)
    serial = (w(3, 0x80) + w(0, 1) + w(1, 0) + w(3, 0x03) + w(2, 0xc7) + w(4, 0x0b) +
              w(1, 0x0f) + r(2) + r(5) + r(6) + b"".join(w(0, c) for c in b"hi\n") + r(2) +
              w(4, 0x1b) + w(0, 0x55) + r(5) + r(0) + r(6) + w(4, 0x0b) +
              console_in(b"ls\r") + r(2) + r(0) + r(0) + r(0) + r(5) +
              console_in(bytes(range(70))) + r(5) + w(2, 0x07) + r(5) +
              pio(UART, True, 1, b"abcd", count=4) + pio(UART, False, 4) +
              pio(UART + 6, False, 2))
    panic = b"".join(w(0, c) for c in b"Kernel panic - not syncing: fuzz\n")
    platform = (pio(0x70, True, 1, b"\x00") + pio(0x71) + pio(0x70, True, 1, b"\x8a") +
                pio(0x71) + pio(0x70, True, 1, b"\x32") + pio(0x71, False, 2) + pio(0x80, True) +
                pio(0x64) + pio(0x92) + pio(0x601) + pio(0xcf8, True, 4, b"\0\0\0\x80") +
                pio(0xcfc, False, 4) + pio(0x600, True, 1, b"\x0c") + pio(0x603, False, 1) +
                pio(0x64, True, 1, b"\x01") + pio(0x20) + pio(0xffff, False, 1) +
                pio(0x600, False, 4) + pio(0x92, True, 1, b"\x01"))
    uc = ucall_block(VALUES, (1, 2**64 - 1), b"values\x1b[2J")
    descs = desc(SRC_EXITS, arg=2**64 - 1) + desc(SRC_EXITS, arg=2) + desc(SRC_PERF, b"task-clock")
    ring = struct.pack("<IIQQQQ3Q", 64, 1, 4096, 100, 0, 0, 0, 0, 0)
    device = (hc(VERSION) + ram(0x2000, descs) + hc(PAGE, 0x1000) + hc(COUNTERS, 0x2000, 3) +
              hc(SNAP) + mmio(DOORBELL) + mmio(DOORBELL + 8) + hc(OVF_SET, 1, 1) +
              pio(0x80, True) + hc(OVF_ACK, 1) + ram(0x4000, ring) + hc(TRACE, 0x4000, 4096 + 64) +
              hc(FLUSH) + ram(0x3000, uc) + hc(UCALL, 0x3000) + hc(PAGE, 0x1000, vcpu=1) +
              hc(PAGE, 0) + hc(EXIT, 3) +
              pio(PORT, True, 4, struct.pack("<I", VERSION), regs=(0, 0, 0, 0)) +
              pio(PORT, False, 4) + pio(PORT, True, 2) + pio(PORT + 2, True, 2) +
              pio(PORT, True, 4, b"\0" * 8, count=2))
    malformed = (pio(UART, raw_size=3) + pio(UART, raw_size=0) + pio(UART, raw_size=8) +
                 pio(UART, raw_count=0, raw_offset=4096) +
                 pio(UART, raw_count=1, raw_offset=0) +
                 pio(UART, raw_count=2, raw_offset=4096 * 3 - 1) +
                 pio(UART, raw_count=2**32 - 1, raw_offset=4096) +
                 pio(UART, raw_count=1, raw_offset=2**64 - 1) + pio(UART, True, 1, b"x"))
    mmios = (mmio(DOORBELL) + mmio(DOORBELL + 120) + mmio(DOORBELL + 128) + mmio(DOORBELL + 4, 4) +
             mmio(DOORBELL + 4095, 1) + mmio(DOORBELL + 8, 8, True, b"\x11" * 8) +
             mmio(DOORBELL + 4096) + mmio(DOORBELL - 8) + mmio(IOAPIC, 4) + mmio(LAPIC, 4, True) +
             mmio(0, 8) + mmio(2**64 - 1, 1) + mmio(DOORBELL, 0) + mmio(DOORBELL, 255))
    others = (other(0) + other(1) + other(2, 0) + other(2, 1) + other(2, 3) + other(3, 0xffffff01) +
              other(4, 0x1234) + other(5) + other(6) + other(0, reason=100) +
              other(0, reason=2**32 - 1) + pio(UART, True, 1, b"z"))
    return {
        "serial": serial, "panic-line": panic, "platform": platform, "device": device,
        "malformed": malformed, "mmio": mmios, "other-exits": others,
        # the host's event list into RAM, by the port and by hc; one entry counted; bad GPAs
        "event-info": (b"".join(hc(EVENT_INFO, i, 0x2000 + 80 * i) for i in range(24)) +
                       hc(COUNTERS, 0x2000 + 80 * 18, 2) + hc(PAGE, 0x1000) + hc(SNAP) +
                       pio(PORT, True, 4, struct.pack("<I", EVENT_INFO), regs=(14, 0x3000, 0, 0)) +
                       hc(EVENT_INFO, 2**64 - 1, 0x2000) + hc(EVENT_INFO, 0, LOW - 40) +
                       hc(EVENT_INFO, 0, DOORBELL, vcpu=1)),
        "two-vcpus": (hc(PAGE, 0x1000, vcpu=0) + hc(PAGE, 0x2000, vcpu=1) +
                      hc(TRACE, 0x2000, 4096 + 64, vcpu=0) + mmio(DOORBELL, vcpu=1) +
                      pio(UART, True, 1, b"a", vcpu=1)),
    }


# ---- fuzz-doorbell ----

def db_set(gpa, choices, vcpu=0, n=None):
    n = len(choices) if n is None else n
    return u8(0) + u8(vcpu) + raw(gpa) + u8(n) + bytes(choices)


def db_load(off, length=8, write=False, data=b"", vcpu=0):
    return u8(1) + u8(vcpu) + u8(int(write)) + raw(off) + raw(length) + data.ljust(8, b"\0")[:8]


def db_page(gpa, vcpu=0):
    return u8(2) + u8(vcpu) + raw(gpa)


def db_snap(vcpu=0):
    return u8(3) + u8(vcpu)


def db_other(which, vcpu=0):
    return u8(4) + u8(vcpu) + u8(which)


def doorbell():
    loads = lambda n, vcpu=0: b"".join(db_load(8 * i, vcpu=vcpu) for i in range(n))
    return {
        "known-exits": (db_set(0x1000, [0, 1, 2, 3, 4]) + loads(6) + db_other(0) + db_other(1) +
                        db_other(2) + loads(6) + db_page(0x3000) + db_snap() + loads(5) +
                        db_load(0, 8, True, b"\x42" * 8) + loads(1)),
        "other-loads": (db_set(0x1000, [0, 0, 0]) + db_load(1) + db_load(4, 4) + db_load(0, 2) +
                        db_load(0, 1) + db_load(0, 0) + db_load(0, 16) + db_load(0, 255) +
                        db_load(128) + db_load(4088) + db_load(4095, 1) + db_load(4096) +
                        db_load(2**64 - 8) + db_load(120) + db_load(7, 3)),
        "refused-sets": (db_set(0x1000, [0, 1]) + db_set(0x1000, [0] * 17) +
                         db_set(LOW - 80, [0, 1]) + db_set(2**64 - 80, [0]) + db_set(0x1000, [1, 5]) +
                         db_set(0x1000, [10]) + db_set(0x1000, [11]) + db_set(0x1000, [7, 10]) +
                         db_set(0x1000, [6, 8, 9]) + loads(3) + db_set(0x1000, []) + loads(2)),
        "two-vcpus": (db_set(0x1000, [0, 2], vcpu=0) + db_set(HIGH_GPA, [1], vcpu=1) +
                      db_page(0x3000, vcpu=0) + db_page(0x3000, vcpu=1) + db_page(0x4000, vcpu=1) +
                      loads(2, vcpu=0) + loads(2, vcpu=1) + db_snap(1) + db_other(2, vcpu=1) +
                      loads(2, vcpu=0) + db_page(0, vcpu=0) + db_snap(0)),
        "host-counters": (db_set(0x1000, [7, 6, 0]) + loads(3) + db_page(0x2000) + db_snap() +
                          loads(3)),
    }


# ---- fuzz-ucall ----

def uc_ram(gpa, data, vcpu=0):
    return u8(0) + u8(vcpu) + raw(gpa) + u8(len(data)) + data


def uc_block(gpa, cmd, nr, args=(), msg=b"", vcpu=0):
    a = list(args) + [0] * (8 - len(args))
    return (u8(1) + u8(vcpu) + raw(gpa) + raw(cmd) + raw(nr) +
            b"".join(struct.pack("<Q", x) for x in a) + u8(len(msg)) + msg)


def uc_call(gpa, vcpu=0):
    return u8(2) + u8(vcpu) + raw(gpa)


def ucall():
    ctl = bytes(range(1, 32)) + b"\x7f\x80\xff\x1b[31mred"
    return {
        "print": uc_block(0x1000, PRINT, 0, msg=b"hello from the guest") + uc_call(0x1000),
        "values": (uc_block(0x1000, VALUES, 2, (1, 2**64 - 1), b"v") + uc_call(0x1000) +
                   uc_block(0x1000, VALUES, 8, range(8), b"eight") + uc_call(0x1000, 1)),
        "assert": (uc_block(0x2000, ASSERT, 1, (5,), b"x == y") + uc_call(0x2000) +
                   uc_block(0x2000, PRINT, 0, msg=b"after") + uc_call(0x2000, 1) +
                   uc_block(0x2000, ASSERT, 0, msg=b"again") + uc_call(0x2000)),
        "hostile": (uc_block(0x1000, PRINT, 0, msg=(ctl * 4)[:128]) + uc_call(0x1000) +
                    uc_block(0x1000, VALUES, 9) + uc_call(0x1000) + uc_block(0x1000, 0, 0) +
                    uc_call(0x1000) + uc_block(0x1000, 4, 0) + uc_call(0x1000) +
                    uc_block(0x1000, 2**32 - 1, 2**32 - 1) + uc_call(0x1000) +
                    uc_ram(0x1000 + 8 + 64, b"no terminator " * 10) + uc_block(0x1000, PRINT, 0) +
                    uc_ram(0x1000 + 72, b"A" * 128) + uc_call(0x1000)),
        "edges": (uc_block(LOW - 208, PRINT, 0, msg=b"last fit") + uc_call(LOW - 208) +
                  uc_call(LOW - 207) + uc_call(LOW) + uc_call(HIGH_GPA - 8) +
                  uc_block(HIGH_GPA + HIGH - 208, PRINT, 0, msg=b"high") +
                  uc_call(HIGH_GPA + HIGH - 208) + uc_call(HIGH_GPA + HIGH - 100) + uc_call(0) +
                  uc_call(DOORBELL) + uc_call(2**64 - 208) + uc_call(2**64 - 1)),
    }


TARGETS = {"vmm-exits": vmm_exits, "doorbell": doorbell, "ucall": ucall}


def main(argv):
    if len(argv) != 3 or argv[1] not in TARGETS:
        sys.exit(__doc__)
    os.makedirs(argv[2], exist_ok=True)
    for name, data in TARGETS[argv[1]]().items():
        with open(os.path.join(argv[2], name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv)
