#!/usr/bin/env python3
"""check_expected.py BINDIR: every benchmark at size test against benchmarks/<name>/expected/test.out (the
harness's own verification rule), and the benchmarks' usage errors (exit 2). Exit 0 all pass, 1 a failure."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from specharness import config, verify  # noqa: E402


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("outputs", "usage"):
        sys.stderr.write("usage: check_expected.py outputs|usage BINDIR\n")
        return 2
    what, bindir = sys.argv[1], sys.argv[2]
    bdir = os.path.join(ROOT, "benchmarks")
    names = sorted(d for d in os.listdir(bdir) if os.path.isfile(os.path.join(bdir, d, "bench.conf")))
    bad = 0
    for b in names:
        exe = os.path.join(bindir, b)
        if what == "usage":
            for args in ([], ["--size", "bogus"], ["--size", "test", "--threads", "0"], ["--nosuch"]):
                p = subprocess.run([exe] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                ok = p.returncode == 2 and "usage" in p.stderr
                print("%s: %s %s: exit %d" % ("ok" if ok else "FAIL", b, " ".join(args) or "(no args)",
                                              p.returncode))
                bad += not ok
            continue
        meta = config.load_bench_meta(os.path.join(bdir, b))
        with open(os.path.join(bdir, b, "expected", "test.out")) as f:
            expected = f.read()
        p = subprocess.run([exe, "--size", "test"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ok, detail = verify.verify_output(p.stdout, expected, meta.reltol, meta.abstol)
        ok = ok and p.returncode == 0
        print("%s: %s --size test: exit %d, %s" % ("ok" if ok else "FAIL", b, p.returncode, detail))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
