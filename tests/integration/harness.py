# SPDX-License-Identifier: MIT
"""What the integration test scripts share: their verdicts (Skip, Fail, check) and their main(),
which runs one named test in a fresh temporary directory and turns its verdict into ctest's exit
status: 0 pass, 1 fail, 77 skip (after printing "SKIP: <reason>")."""

import argparse
import os
import re
import shlex
import shutil
import struct
import subprocess
import tempfile
import zlib


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def show(cmd, out, err, status, tail=6000):
    """Print a command, the end of its stdout and stderr, and its exit status (the test's log)."""
    print("$ " + " ".join(shlex.quote(a) for a in cmd), flush=True)
    for name, text in (("stdout", out), ("stderr", err)):
        if text:
            print("--- %s ---" % name)
            print(text.rstrip("\n")[-tail:])
    print("--- exit %d ---" % status, flush=True)


def need_perf():
    """Skip where this machine lets no one sample (perf_event_paranoid 3 or more, no perf)."""
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            level = int(f.read())
    except (OSError, ValueError):
        raise Skip("no /proc/sys/kernel/perf_event_paranoid: this kernel has no perf events")
    if level >= 3 and os.geteuid() != 0:
        raise Skip("kernel.perf_event_paranoid is %d: sampling is not allowed to users here" % level)


# perf's own work at each context switch of a recorded thread (scheduling its perf context in and
# out, with the timers of its sampling events) is in the thread's task-clock but outside its
# switch records, which perf writes after the context is in and before it goes out.  Measured
# here: 6 to 11 us a slice (0.5 ms over 76 slices with two recordings side by side; 6.2 ms over
# 588 slices beside headless Chromium).  A slice may be short by up to this much.
SWITCH_COST_MS = 0.02


def check_running(who, running_ms, slices, on_cpu_ms, tolerance):
    """running_ms, a thread's time in the recording's `slices` running slices, against the time on
    a CPU it measured for itself (its task-clock): within tolerance (a fraction), less up to
    SWITCH_COST_MS a slice."""
    low = on_cpu_ms * (1 - tolerance) - slices * SWITCH_COST_MS
    high = on_cpu_ms * (1 + tolerance)
    print("%s: running %.3f ms in %d slices, %.3f ms on a CPU by its task-clock (%+.2f%%; "
          "allowed %.3f..%.3f)" % (who, running_ms, slices, on_cpu_ms,
                                   (running_ms / on_cpu_ms - 1) * 100, low, high))
    check(low <= running_ms <= high, "%s: %.3f ms running in %d slices, %.3f ms on a CPU "
          "(allowed %.3f..%.3f ms)" % (who, running_ms, slices, on_cpu_ms, low, high))


# The vperf binary under test, the workloads' directory and the test's temporary directory, for
# the scripts that run the CLI (cli_setup() fills them in).
CLI = argparse.Namespace(vperf=None, workloads=None, tmp=None)


def cli_setup(a, tmp):
    """A setup() for main(): the --vperf binary (an error message if it is not built) and
    --workloads, made absolute, and tmp, in CLI."""
    CLI.vperf, CLI.workloads, CLI.tmp = a.vperf, getattr(a, "workloads", None), tmp
    if not CLI.vperf or not os.access(CLI.vperf, os.X_OK):
        return "the vperf binary is not built: %r" % CLI.vperf
    CLI.vperf = os.path.abspath(CLI.vperf)
    if CLI.workloads:
        CLI.workloads = os.path.abspath(CLI.workloads)
    return None


def tmp_path(*parts):
    return os.path.join(CLI.tmp, *parts)


def run(args, timeout=60, quiet=False):
    """Run args in the test's directory, print it (quiet: without its output), return it."""
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=CLI.tmp)
    except subprocess.TimeoutExpired as e:
        raise Fail("timed out after %ds: %s" % (timeout, " ".join(args))) from e
    if quiet:
        print("$ %s  (exit %d, %d bytes of output)" % (" ".join(shlex.quote(a) for a in args),
                                                       r.returncode, len(r.stdout)))
    else:
        show(args, r.stdout, r.stderr, r.returncode)
    return r


def vperf(*args, **kw):
    return run([CLI.vperf] + list(args), **kw)


def refused(args, pattern, what):
    """vperf ARGS must fail: a one-line error matching pattern, a nonzero status, nothing on
    stdout."""
    r = vperf(*args)
    check(r.returncode != 0, "%s: exit status 0" % what)
    check(not r.stdout, "%s: something on stdout" % what)
    first = r.stderr.splitlines()[0] if r.stderr else ""
    check(re.search(pattern, first), "%s: the error %r does not match %r" % (what, first, pattern))
    return r


def tests_of(module_globals):
    """A test script's tests: each test_<name>() by <name>."""
    return {n[len("test_"):]: f for n, f in sorted(module_globals.items())
            if n.startswith("test_") and callable(f)}


def main(all_tests, prefix, setup, extra_args=()):
    """Parse --list | [--vperf PATH] [extra_args...] TEST; setup(args, tmpdir) returns an error
    message (a failure before the test) or None; then run all_tests[TEST]()."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--vperf")
    for name in extra_args:
        ap.add_argument(name)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("test", nargs="?")
    a = ap.parse_args()
    if a.list:
        print("\n".join(all_tests))
        return 0
    if a.test not in all_tests:
        print("no test named %r" % a.test)
        return 1
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        err = setup(a, tmp)
        if err:
            print("FAIL: " + err)
            return 1
        all_tests[a.test]()
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS")
    return 0


# Headless Chromium, the reader of the SVGs vperf draws (Debian chromium, scripts/install-deps.sh)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            check(depth == 8 and ctype in (2, 6) and interlace == 0,
                  "a PNG this test does not decode: depth %d, colour type %d" % (depth, ctype))
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def render(svg, png, w, h):
    """Headless Chromium's screenshot of svg at w x h."""
    if not CHROMIUM:
        raise Skip("chromium is not installed (Debian chromium, scripts/install-deps.sh): "
                   "cannot render the SVG as a person would see it")
    prof = tempfile.mkdtemp(dir=CLI.tmp)
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--user-data-dir=" + prof, "--screenshot=" + png,
            "--window-size=%d,%d" % (w, h), "file://" + svg]
    r = run(args, timeout=120, quiet=True)
    check(r.returncode == 0, "chromium exited %d: %s" % (r.returncode, r.stderr[-1500:]))
    check(os.path.exists(png), "chromium wrote no %s" % png)
