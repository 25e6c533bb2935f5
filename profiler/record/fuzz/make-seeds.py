#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the perfdec fuzzer's seeds into corpus-perfdec/: 'records' (the ring-size and tail bytes,
then a sample, a sample with a callchain, a fork, a switch out, a tracepoint sample and an
MMAP2, laid out as
fuzz-perfdec.c registers its events) and 'format' (a tracefs format text)."""
import os
import struct

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus-perfdec")


def hdr(t, misc, size):
    return struct.pack("<IHH", t, misc, size)


def rec(t, misc, body):
    body += b"\0" * ((-len(body)) % 8)
    return hdr(t, misc, 8 + len(body)) + body


def main():
    trailer = struct.pack("<IIQIIQ", 10, 11, 1236, 0, 0, 1)  # tid, time, cpu, id 1
    s1 = rec(9, 2, struct.pack("<QQIIQIIQ", 1, 0x401000, 10, 11, 1234, 0, 0, 1000000))
    s2 = rec(9, 2, struct.pack("<QQIIQIIQQQQ", 2, 0x401000, 10, 11, 1235, 1, 0, 1000000, 2,
                               0x401000, 0x401100))
    f1 = rec(7, 0, struct.pack("<IIIIQ", 12, 10, 12, 11, 1236) + trailer)
    w1 = rec(14, 0x2000 | 0x4000, trailer)
    raw = struct.pack("<HBBi", 300, 0, 0, 10) + b"\0" * 4  # u32 size + raw: 8-byte aligned, as perf writes it
    t1 = rec(9, 0, struct.pack("<QIIQII", 3, 10, 11, 1238, 0, 0) + struct.pack("<I", len(raw)) + raw)
    name = b"/usr/bin/x\0"
    name += b"\0" * ((-len(name)) % 8)
    m1 = rec(10, 2, struct.pack("<IIQQQIIQQII", 10, 11, 0x400000, 0x1000, 0, 8, 1, 42, 0, 5, 2)
             + name + trailer)
    os.makedirs(D, exist_ok=True)
    with open(os.path.join(D, "records"), "wb") as f:
        f.write(bytes([3, 0]) + s1 + s2 + f1 + w1 + t1 + m1)
    with open(os.path.join(D, "format"), "wb") as f:
        f.write(b"name: sched_switch\nID: 372\nformat:\n"
                b"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                b"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
                b"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
                b"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n")


if __name__ == "__main__":
    main()
