#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seeds of vperf record's fuzzers (CMakeLists.txt here):

corpus-perfdec/: 'records' (the ring-size and tail bytes, then a sample, a sample with a
callchain, a fork, a switch out, a tracepoint sample and an MMAP2, laid out as fuzz-perfdec.c
registers its events) and 'format' (a tracefs format text).

corpus-convert/ (fuzz-convert.c's input): 'host-sample' (tests/unit/profiler/data/hostevents/sample.raw
as it is: a raw recording with host kernel events), 'guest-every-record' (two vCPUs, one mapped by
KVM's TSC offset and one by TRACE_FLUSH samples: every guest record type, valid, with the kernel
text and a module symbol for the System.map the target gives, exits, losses, the host sample's
tracefs chunks in 512-byte pages), 'guest-refused' (the same records, each made invalid in its own
way, between valid ones) and 'cut' (a recording killed mid-chunk); 'regress-*': what the fuzzer
found, rebuilt here.

corpus-hostevents/ (fuzz-hostevents.c's operations): 'sample' (the stored sample's header,
formats, page and stats, then reads with and without losses reported) and 'small-pages' (its
events re-cut into 512-byte pages, alternately on CPUs 0 and 1, with a page that lost events);
'regress-*': what the fuzzer found, rebuilt here."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
D = os.path.join(HERE, "corpus-perfdec")
SAMPLE = os.path.join(HERE, "..", "..", "..", "tests", "unit", "profiler", "data", "hostevents", "sample.raw")


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

    write_convert()
    write_hostevents()
    write_shm()


# ---- raw recordings (hv/include/vperf/rawrec.h) and guest records (hv/include/vperf/abi.h) ----

def pad8(b):
    return b + b"\0" * ((-len(b)) % 8)


def chunk(t, payload, cpu=0, flags=0):
    return struct.pack("<IIII", t, len(payload), cpu, flags) + pad8(payload)


META, TSC_OFFSET, TSC_SAMPLE, GUEST, GUEST_LOST, EXITS, EXITS_LOST, END = 11, 5, 6, 1, 2, 3, 4, 12
TRACEFS = (7, 8, 9, 10)
START_TSC = 1000000000  # fuzz-convert.c's header


def grec(t, body, tsc, pid=100, tid=101, flags=0, cpu=0):
    """A guest record: header (size, type, cpu, flags, tsc, pid, tid), body, padded to 8."""
    body = pad8(body)
    return struct.pack("<HHHHQII", 24 + len(body), t, cpu, flags, tsc, pid, tid) + body


def comm(name):
    return name.encode().ljust(16, b"\0")


def guest_records(base, cpu):
    """One valid record of every type, at guest TSCs from base."""
    k = 0xffffffff81000100  # schedule (fuzz-convert.c's System.map)
    r = []
    r.append(grec(1, struct.pack("<IIII", 200, 201, 1, 0) + comm("sh") + comm("worker"), base + 10, cpu=cpu))
    r.append(grec(2, struct.pack("<IIII", 200, 201, cpu, 0), base + 20, cpu=cpu))
    r.append(grec(3, struct.pack("<II", 300, 300) + comm("child"), base + 30, cpu=cpu))
    r.append(grec(4, comm("child") + b"/usr/bin/child\0", base + 40, pid=300, tid=300, cpu=cpu))
    r.append(grec(10, struct.pack("<QQQ", 0x400000, 0x2000, 0) + b"/usr/bin/child\0", base + 45,
                  pid=300, tid=300, cpu=cpu))
    r.append(grec(6, struct.pack("<IIII", 236, 1, 0xffffffff, 0), base + 50, cpu=cpu))
    r.append(grec(6, struct.pack("<IIII", 33, 4, 11, 0), base + 55, cpu=cpu))
    # a kernel sample with two counts and a callchain into the kernel and the module
    r.append(grec(7, struct.pack("<QII", k + 8, 2, 3) + struct.pack("<QQQQQ", 1000, 2000, k + 8,
                  0xffffffffc0001010, 0x400100), base + 60, pid=300, tid=300, cpu=cpu))
    # a user sample of the trace sampler (a period)
    r.append(grec(7, struct.pack("<QII", 0x400100, 1, 1) + struct.pack("<QQ", 4000, 0x400100), base + 65,
                  pid=300, tid=300, flags=3, cpu=cpu))
    name = "phase1".encode()
    r.append(grec(8, struct.pack("<QII", 42, 0, len(name)) + name, base + 70, pid=300, tid=300, cpu=cpu))
    r.append(grec(8, struct.pack("<QII", 42, 1, len(name)) + name, base + 80, pid=300, tid=300, cpu=cpu))
    r.append(grec(9, struct.pack("<QII", 3, 2, 0), base + 85, cpu=cpu))
    r.append(grec(5, struct.pack("<iI", -9, 0), base + 90, pid=300, tid=300, cpu=cpu))
    return r


def kernel_records(base):
    """vperf_guest.ko's kernel text record and one module symbol."""
    return [grec(10, struct.pack("<QQQ", 0xffffffff81000100, 0, 0) + b"[kernel.kallsyms]schedule\0", base,
                 pid=0, tid=0),
            grec(10, struct.pack("<QQQ", 0xffffffffc0001000, 0x80, 0) + b"[kvm]vcpu_run\0", base + 1,
                 pid=0, tid=0)]


def refused_records(base):
    """Each record invalid in its own way (vperf_trace_rec_check()), before a valid marker."""
    name = b"ok"
    good = grec(8, struct.pack("<QII", 1, 2, len(name)) + name, base + 500)
    bad = [
        grec(1, struct.pack("<IIII", 200, 201, 1, 7) + comm("a") + comm("b"), base),  # reserved
        grec(7, struct.pack("<QII", 1, 3, 5), base),  # counts and callchain past its size
        grec(8, struct.pack("<QII", 1, 9, 2) + b"\xff\xfe", base),  # kind, name not UTF-8
        grec(4, comm("x") + b"no-nul", base),  # filename not terminated
        grec(10, struct.pack("<QQQ", 0xffffffffc0000000, 0x10, 0) + b"[kernel.kallsyms]\0", base, pid=0,
             tid=0),
        grec(99, b"\0" * 8, base),  # no such type
        struct.pack("<HHHHQII", 2000, 8, 0, 0, base, 1, 1),  # a size past everything
    ]
    return [b + good for b in bad]


def tracefs_chunks(small):
    """The stored sample's TRACEFS chunks; small: its events re-cut into 512-byte pages."""
    d = open(SAMPLE, "rb").read()
    out, o = [], 72
    while o + 16 <= len(d):
        t, size, cpu, flags = struct.unpack_from("<IIII", d, o)
        p = d[o + 16:o + 16 + size]
        o += 16 + ((size + 7) & ~7)
        if t not in TRACEFS:
            continue
        if small and t == 7:
            p = p.replace(b"size:4080;", b"size:496;")
        if small and t == 9:
            for i, page in enumerate(small_pages(p, 512)):
                out.append((9, page, i % 2))
            continue
        out.append((t, p, cpu))
    return out


def page_events(page):
    """(offset, length, time after it) of each event of a 4096-byte ring-buffer page."""
    ts, commit = struct.unpack_from("<QQ", page, 0)
    data, size = page[16:], commit & ((1 << 27) - 1)
    o, t, ev = 0, ts, []
    while o < size:
        w = struct.unpack_from("<I", data, o)[0]
        tl, delta = w & 31, w >> 5
        if tl == 30:
            n, t = 8, t + delta + (struct.unpack_from("<I", data, o + 4)[0] << 27)
        elif tl == 31:
            n, t = 8, (struct.unpack_from("<I", data, o + 4)[0] << 27) | delta
        elif tl == 29:
            n = 4 + struct.unpack_from("<I", data, o + 4)[0]
        elif tl == 0:
            n, t = 8 + ((struct.unpack_from("<I", data, o + 4)[0] - 4 + 3) & ~3), t + delta
        else:
            n, t = 4 + 4 * tl, t + delta
        ev.append((o, n, t))
        o += n
    return ts, data, ev


def small_pages(page, size):
    """The page's events in pages of size bytes; each page's time stamp the time before its first."""
    ts, data, ev = page_events(page)
    pages, cur, start, prev = [], b"", ts, ts
    for o, n, t in ev:
        if len(cur) + n > size - 16:
            pages.append((start, cur))
            cur = b""
        if not cur:
            start = prev
        cur += data[o:o + n]
        prev = t
    if cur:
        pages.append((start, cur))
    out = []
    for i, (t, c) in enumerate(pages):
        commit = len(c)
        if i == 2:  # this page says events were lost before it: 5 of them, counted after its events
            commit |= (1 << 31) | (1 << 30)
            c += struct.pack("<Q", 5)
            commit |= 0xffffffff00000000  # the kernel's sign extension
        out.append((struct.pack("<QQ", t, commit) + c).ljust(size, b"\0"))
    return out


def write_convert():
    d = os.path.join(HERE, "corpus-convert")
    os.makedirs(d, exist_ok=True)
    with open(SAMPLE, "rb") as f:
        sample = f.read()
    with open(os.path.join(d, "host-sample"), "wb") as f:
        f.write(sample)

    off0 = -400000000  # vCPU 0: guest = host + offset (KVM's)
    g0 = START_TSC + off0 + 1000
    meta = b"vmm_pid=1\nnr_vcpus=2\nvcpu0_tid=10\nvcpu1_tid=11\nkernel=bzImage\nclock=x\n"
    body = [chunk(META, meta),
            chunk(TSC_OFFSET, struct.pack("<QqII", START_TSC, off0, 1, 0), cpu=0),
            chunk(TSC_SAMPLE, struct.pack("<QQ", 5000, START_TSC), cpu=1),
            chunk(TSC_SAMPLE, struct.pack("<QQ", 9000, START_TSC + 3000), cpu=1),
            chunk(EXITS, struct.pack("<QQQII", START_TSC + 1005, START_TSC + 1600, 0x5650, 2, 1) +
                  struct.pack("<QQQII", START_TSC + 1700, START_TSC + 1750, 0xfeb00008, 6, 0) +
                  struct.pack("<QQQII", START_TSC + 1800, START_TSC + 1700, 0, 99, 0), cpu=0),
            chunk(GUEST, b"".join(kernel_records(g0) + guest_records(g0 + 2, 0)), cpu=0),
            chunk(GUEST, b"".join(guest_records(9100, 1)), cpu=1),
            chunk(GUEST_LOST, struct.pack("<QQQQQ", START_TSC + 2000, 96, 1, 5, 1), cpu=0),
            chunk(EXITS_LOST, struct.pack("<QQ", START_TSC + 2100, 3), cpu=0)]
    body += [chunk(t, p, cpu=c) for t, p, c in tracefs_chunks(True)]
    body.append(chunk(END, struct.pack("<QQ", START_TSC * 3, 10)))
    params = bytes([0x04 | 1, 100])  # 2 vCPUs, the System.map; 2 GHz
    with open(os.path.join(d, "guest-every-record"), "wb") as f:
        f.write(params + b"".join(body))

    refused = [chunk(TSC_OFFSET, struct.pack("<QqII", START_TSC, 0, 1, 0))]
    refused += [chunk(GUEST, r) for r in refused_records(START_TSC + 100)]
    refused.append(chunk(END, struct.pack("<QQ", START_TSC * 3, 10)))
    with open(os.path.join(d, "guest-refused"), "wb") as f:
        f.write(bytes([0, 100]) + b"".join(refused))

    cut = params + b"".join(body[:6])
    with open(os.path.join(d, "cut"), "wb") as f:
        f.write(cut[:-20])

    # found by fuzz-convert: a guest event past what the trace's clock holds (2^63 ns from the
    # start's time of day: babeltrace2 could not read the trace)
    late = grec(8, struct.pack("<QII", 1, 2, 4) + b"late", (2 ** 63 - 10 ** 18) * 2)
    with open(os.path.join(d, "regress-time-past-the-clock"), "wb") as f:
        f.write(bytes([0, 100]) + chunk(TSC_OFFSET, struct.pack("<QqII", START_TSC, 0, 1, 0)) +
                chunk(GUEST, grec(8, struct.pack("<QII", 1, 2, 2) + b"ok", START_TSC) + late) +
                chunk(END, struct.pack("<QQ", START_TSC * 3, 10)))

    # found by fuzz-convert: a recording without events (qsort() of no array)
    with open(os.path.join(d, "regress-no-events-qsort-null"), "wb") as f:
        f.write(bytes([0, 100]) + chunk(END, struct.pack("<QQ", 1, 1)))


def op(n, *parts):
    return bytes([n]) + b"".join(parts)


def ln(b):
    return struct.pack("<H", len(b)) + b


def write_hostevents():
    d = os.path.join(HERE, "corpus-hostevents")
    os.makedirs(d, exist_ok=True)
    for name, small in (("sample", False), ("small-pages", True)):
        ops = []
        for t, p, cpu in tracefs_chunks(small):
            if t == 7:
                ops.append(op(0, ln(p)))
            elif t == 8:
                ops.append(op(1, ln(p)))
            elif t == 9:
                ops.append(op(2, bytes([cpu]), ln(p)))
            else:
                ops.append(op(3, bytes([cpu]), ln(p)))
        ops += [op(4), op(5, b"\1"), op(4)]
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"".join(ops))
        if small:
            # found by fuzz-hostevents: a field declared with one word leaks in libtraceevent 1.7
            with open(os.path.join(d, "regress-lone-word-field-leak"), "wb") as f:
                f.write(b"".join(ops).replace(b"field:char next_comm[16];", b"field:cha4080xt_comm[16];"))



# ---- the shared-memory channel (hv/include/vperf/shm.h, docs/abi.md 8) ----

SHM_REGION = 64 << 10
SHM_HDR = 64 + 32 * 256


def shm_region(rings, gen=1, state=1):
    """A 64 KiB region laid out with rings [(offset, data_size, cpu, bytes written, tail)]."""
    b = bytearray(SHM_REGION)
    struct.pack_into("<QIIQIIQQQQ", b, 0, 0x4d48534652455056, SHM_HDR, 1, SHM_REGION, state,
                     len(rings), gen, 2000000, 0, 0)
    for i, (off, size, cpu, data, tail) in enumerate(rings):
        struct.pack_into("<QQIIQ", b, 64 + 32 * i, off, size, cpu, 0, 0)
        head = tail + len(data)
        struct.pack_into("<IIQQQQ", b, off, 64, 2, size, head, tail, 0)
        for k, byte in enumerate(data):
            b[off + 64 + (tail + k) % size] = byte
    return bytes(b)


def shm_patch(off, data):
    return struct.pack("<HB", off, len(data)) + data


def write_shm():
    """corpus-shm/ (fuzz-shm.c's input): 'two-rings' (records of every type on CPU 0, a ring
    that wraps on CPU 1), 'rewritten' (the same, then patches between polls: a record made
    invalid, a head moved behind the tail and back, a new generation), 'shrunk' (the file
    truncated mid-recording)."""
    d = os.path.join(HERE, "corpus-shm")
    os.makedirs(d, exist_ok=True)
    recs0 = b"".join(guest_records(1000, 0) + kernel_records(900))
    recs1 = b"".join(guest_records(5000, 1)[:6])
    rings = [(12288, 8192, 0, recs0, 0), (24576, 4096, 1, recs1, 4096 - 100)]
    base = shm_region(rings)
    with open(os.path.join(d, "two-rings"), "wb") as f:
        f.write(base)
    head0 = len(recs0)
    patches = [
        shm_patch(12288 + 64 + 6, b"\xff"),                      # a switch record's flags
        shm_patch(12288 + 16, struct.pack("<Q", 0)),              # ring 0's head behind its tail
        shm_patch(12288 + 16, struct.pack("<Q", head0 + 32)),     # ... and ahead again
        shm_patch(32, struct.pack("<Q", 2)),                      # a new generation
        shm_patch(64, struct.pack("<Q", 4096)),                   # ring 0 on the header
    ]
    with open(os.path.join(d, "rewritten"), "wb") as f:
        f.write(base + b"".join(patches))
    with open(os.path.join(d, "shrunk"), "wb") as f:
        f.write(base + shm_patch(0x8000 | 1024, b""))


if __name__ == "__main__":
    main()
