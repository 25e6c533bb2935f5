#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write fuzz-report's seeds into corpus-report/: recordings packed as fuzz-report.c reads them
(an options byte, then each file as a name byte, its u32 length and its bytes), each packet of
their streams without its padding (packet_size = content_size: the same events, a fraction of
the bytes).

  vm-guest-every-record, vm-host-sample: the traces fuzz-convert makes of its seeds of those
      names (profiler/record/fuzz/corpus-convert), with a guest files list that names a host
      ELF file (/bin/true) for the guest's /usr/bin/child, so that its frames resolve;
  record-host: a `vperf record -g` of a shell loop on this machine (samples with callchains,
      mmaps of host files, kernel symbols where kallsyms shows them, thread switches).

Needs a build: make-seeds.py [BUILD_DIR] (default: build/ at the top of the tree).  The traces
are written under /dev/shm (fuzz-convert's VPERF_FUZZ_KEEP) and removed."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
D = os.path.join(HERE, "corpus-report")
LAYERS = ["host_kernel", "vmm", "guest_kernel", "guest_user", "host_user"]


def name_index(name):
    if name == "metadata":
        return 0
    for li, layer in enumerate(LAYERS):
        for cpu in range(4):
            if name == "%s_cpu%d" % (layer, cpu):
                return 1 + li * 4 + cpu
    return None


def trim(stream):
    """The stream's packets without their padding: each packet's packet_size (bits, at byte 48)
    cut to its content_size (at byte 40) in whole bytes, as ctf.c lays packets out."""
    out, o = b"", 0
    while o + 69 <= len(stream):
        content, size = struct.unpack_from("<QQ", stream, o + 40)
        keep = (content + 7) // 8
        pkt = bytearray(stream[o:o + keep])
        struct.pack_into("<Q", pkt, 48, keep * 8)
        out += bytes(pkt)
        o += size // 8
    return out


def pack(trace_dir, files_list=None, opts=0):
    out = bytes([opts])
    for name in sorted(os.listdir(trace_dir)):
        n = name_index(name)
        if n is None:
            continue
        with open(os.path.join(trace_dir, name), "rb") as f:
            data = f.read() if not n else trim(f.read())
        out += bytes([n]) + struct.pack("<I", len(data)) + data
    if files_list is not None:
        out += bytes([21]) + struct.pack("<I", len(files_list)) + files_list
    return out


def converted(build, seed):
    keep = tempfile.mkdtemp(prefix="vperf-seeds-", dir="/dev/shm")
    try:
        env = dict(os.environ, VPERF_FUZZ_KEEP=keep)
        subprocess.run([os.path.join(build, "profiler", "record", "fuzz", "fuzz-convert"),
                        os.path.join(TOP, "profiler", "record", "fuzz", "corpus-convert", seed)],
                       env=env, check=True, capture_output=True)
        return keep, os.path.join(keep, "0")
    except Exception:
        shutil.rmtree(keep)
        raise


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "build")
    os.makedirs(D, exist_ok=True)
    files = b"/usr/bin/child\t/bin/true\n/usr/bin/x\t/bin/true\n"
    for seed in ("guest-every-record", "host-sample"):
        keep, trace = converted(build, seed)
        try:
            with open(os.path.join(D, "vm-" + seed), "wb") as f:
                f.write(pack(trace, files, opts=2))
        finally:
            shutil.rmtree(keep)
    tmp = tempfile.mkdtemp(prefix="vperf-seeds-")
    try:
        rec = os.path.join(tmp, "rec")
        r = subprocess.run([os.path.join(build, "profiler", "vperf"), "record", "-q", "-g", "-c",
                            "200000", "-o", rec, "--", "sh", "-c",
                            "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"],
                           capture_output=True, text=True)
        if r.returncode:
            print("vperf record failed, no record-host seed:\n" + r.stderr, file=sys.stderr)
        else:
            with open(os.path.join(D, "record-host"), "wb") as f:
                f.write(pack(rec, opts=1))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
