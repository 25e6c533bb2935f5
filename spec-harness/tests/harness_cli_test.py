#!/usr/bin/env python3
"""The spec-harness command, run as a user runs it (ctest calls one case per test).

  harness_cli_test.py ci BUILD WORK        a CI-sized run (1 benchmark, native + guest+count, 1 iteration):
                                           exit 0, every output file there and well-formed, both runs verified
  harness_cli_test.py corrupt BUILD WORK   the benchmark's output corrupted on its way out (a wrapper in
                                           --bindir changes one digit): the run fails (exit 1), visibly
  harness_cli_test.py badconfig BUILD WORK bad configs: exit 2 with a message naming the problem
  harness_cli_test.py resume BUILD WORK    a run cut off (its last record half-written, one run missing) is
                                           finished by --resume: only the missing run runs again
  harness_cli_test.py sigterm BUILD WORK   SIGTERM (as timeout(1) sends it) while the guest boots: the harness
                                           exits 130 saying how to resume, and no QEMU is left running
Exit status 0 pass, 1 fail (what failed is printed).
"""

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(os.path.dirname(HERE), "spec-harness")
BENCH = "compress"
failed = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failed.append(what)


def write_cfg(work, name, body):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(body)
    return path


def harness(build, *args):
    p = subprocess.run([sys.executable, HARNESS] + list(args) + [], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    sys.stdout.write(p.stdout)
    sys.stdout.write(p.stderr)
    return p


def run_cfg(build, work, modes, extra=()):
    cfg = write_cfg(work, "ci.cfg", "[run]\nbenchmarks = %s\nmodes = %s\nsize = test\niterations = 1\n"
                    % (BENCH, modes))
    out = os.path.join(work, "results")
    shutil.rmtree(out, ignore_errors=True)
    p = harness(build, "run", "--config", cfg, "-o", out, "--build", build, "--no-build", *extra)
    return p, out


class SvgFinder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)


def check_outputs(out, want_runs, charts=True):
    for name in ("runs.jsonl", "results.json", "report.txt", "report.html", "config.ini", "host.json"):
        check(os.path.exists(os.path.join(out, name)), "%s written" % name)
    with open(os.path.join(out, "runs.jsonl")) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    check(len(runs) == want_runs, "runs.jsonl holds %d runs (want %d)" % (len(runs), want_runs))
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    check("summary" in res and len(res.get("runs", [])) == want_runs, "results.json has the summary and every run")
    with open(os.path.join(out, "report.html")) as f:
        page = f.read()
    finder = SvgFinder()
    finder.feed(page)
    check(finder.tags >= {"html", "body", "table"}, "report.html parses as HTML")
    if charts:
        check("svg" in finder.tags, "report.html holds an inline SVG chart")
    svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
    try:
        for s in svgs:
            ET.fromstring(s)
        check(bool(svgs) or not charts, "every inline SVG parses as XML (%d)" % len(svgs))
    except ET.ParseError as e:
        check(False, "an inline SVG does not parse: %s" % e)
    return runs


def case_ci(build, work):
    p, out = run_cfg(build, work, "native, guest+count")
    check(p.returncode == 0, "the run exits 0 (got %d)" % p.returncode)
    runs = check_outputs(out, 2)
    for r in runs:
        check(r["status"] == "ok" and r["verify"]["ok"], "%s %s: ok and verified (%s)" % (
            r["benchmark"], r["mode"], r["verify"]["detail"]))
        check(r["elapsed_s"] and r["elapsed_s"] > 0, "%s: elapsed %s s" % (r["mode"], r["elapsed_s"]))
    guest = [r for r in runs if r["mode"] == "guest+count"]
    if guest:
        g = guest[0]
        vc = g["counts"].get("vperf::vcpu-clock")
        check(vc is not None and vc > 0, "guest+count counted vperf::vcpu-clock (%s ns)" % vc)
        main = [t for t in g["threads"] if t["comm"] == "main"]
        check(bool(main) and "vperf::vcpu-clock" in main[0]["counts"],
              "the benchmark's main thread has its own vcpu-clock row")
    with open(os.path.join(out, "report.txt")) as f:
        text = f.read()
    check(BENCH in text, "report.txt has a row for %s" % BENCH)
    rep = harness(build, "report", out)
    check(rep.returncode == 0 and BENCH in rep.stdout, "`spec-harness report DIR` prints it again")
    cmp_ = harness(build, "compare", out, out)
    check(cmp_.returncode == 0, "`spec-harness compare A A` runs")


def case_corrupt(build, work):
    real = os.path.join(build, "spec-harness", "bin", BENCH)
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    wrapper = os.path.join(bindir, BENCH)
    # Runs the real benchmark, then turns the first digit 0-8 of its output into the next digit.
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n%s \"$@\" || exit $?\nout=\"\"\nwhile [ $# -gt 0 ]; do\n"
                "  [ \"$1\" = --out ] && out=$2\n  shift\ndone\n"
                "sed -i '0,/[0-8]/{s/0/1/;t;s/1/2/;t;s/2/3/;t;s/3/4/;t;s/4/5/;t;s/5/6/;t;s/6/7/;t;s/7/8/;t;s/8/9/}' "
                "\"$out\"\n" % real)
    os.chmod(wrapper, 0o755)
    p, out = run_cfg(build, work, "native", ("--bindir", bindir))
    check(p.returncode == 1, "a corrupted output fails the run: exit 1 (got %d)" % p.returncode)
    check("VERIFY-FAILED" in p.stderr, "stderr says VERIFY-FAILED as it happens")
    runs = check_outputs(out, 1, charts=False)	# nothing valid to chart
    check(runs and runs[0]["status"] == "verify-failed", "the run is recorded as verify-failed")
    with open(os.path.join(out, "report.txt")) as f:
        text = f.read()
    check(re.search(r"(?i)invalid|verify-failed", text) is not None, "report.txt lists it as invalid")
    p, out = run_cfg(build, work, "native")
    check(p.returncode == 0, "the same run with the real program passes (exit %d)" % p.returncode)


def case_badconfig(build, work):
    cases = [
        ("[run]\nbenchmarks = all\nmodes = native, warp\nsize = test\niterations = 1\n", "warp"),
        ("[run]\nbenchmarks = nosuch\nmodes = native\nsize = test\niterations = 1\n", "nosuch"),
        ("[run]\nbenchmarks = all\nmodes = native\nsize = test\niterations = zero\n", "iterations"),
        ("[run]\nbenchmarks = all\nmodes = native\nsize = test\niterations = 1\ncolour = red\n", "colour"),
    ]
    for body, word in cases:
        cfg = write_cfg(work, "bad.cfg", body)
        p = harness(build, "run", "--config", cfg, "-o", os.path.join(work, "never"), "--build", build,
                    "--no-build")
        check(p.returncode == 2 and word in p.stderr, "bad config (%s): exit 2 naming it" % word)
    check(not os.path.exists(os.path.join(work, "never", "runs.jsonl")), "no run started")


def case_resume(build, work):
    cfg = write_cfg(work, "r.cfg", "[run]\nbenchmarks = interp, nbody\nmodes = native\nsize = test\n"
                    "iterations = 2\n")
    out = os.path.join(work, "results")
    p = harness(build, "run", "--config", cfg, "-o", out, "--build", build, "--no-build")
    check(p.returncode == 0, "the first run finishes")
    path = os.path.join(out, "runs.jsonl")
    with open(path) as f:
        lines = f.read().splitlines()
    check(len(lines) == 4, "4 runs recorded")
    with open(path, "w") as f:	# as if killed while writing the 4th record
        f.write("\n".join(lines[:3]) + "\n" + lines[3][:25])
    p = harness(build, "run", "--config", cfg, "-o", out, "--build", build, "--no-build")
    check(p.returncode == 2 and "--resume" in p.stderr, "a second run into the same directory is refused")
    p = harness(build, "run", "--resume", out, "--build", build, "--no-build")
    check(p.returncode == 0 and "3 done before" in p.stderr, "--resume keeps the 3 whole runs")
    with open(path) as f:
        runs = [json.loads(x) for x in f.read().splitlines()[3:] if x.strip().endswith("}")]
    keys = sorted((r["benchmark"], r["iteration"]) for r in runs)
    check(len(runs) == 1, "exactly one run ran again (%s)" % keys)


def guest_qemus():
    """Pids of the nested QEMUs this source tree's runner started (their monitor socket is under build-vm/run)."""
    vm_build = os.environ.get("VPERF_VM_BUILD", os.path.join(os.path.dirname(os.path.dirname(HERE)), "build-vm"))
    p = subprocess.run(["pgrep", "-f", "qemu-system-x86_64 .*%s/run/" % re.escape(vm_build)],
                       stdout=subprocess.PIPE, text=True)
    return p.stdout.split()


def case_sigterm(build, work):
    import signal
    import time
    cfg = write_cfg(work, "ci.cfg", "[run]\nbenchmarks = %s\nmodes = native, guest+count\nsize = test\n"
                    "iterations = 1\n" % BENCH)
    out = os.path.join(work, "results")
    h = subprocess.Popen([sys.executable, HARNESS, "run", "--config", cfg, "-o", out, "--build", build,
                          "--no-build"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t0 = time.monotonic()
    while not guest_qemus() and h.poll() is None and time.monotonic() - t0 < 300:
        time.sleep(0.5)
    booted = bool(guest_qemus())
    check(booted, "the guest's QEMU started (%.0f s)" % (time.monotonic() - t0))
    t1 = time.monotonic()
    h.send_signal(signal.SIGTERM)
    try:
        text, _ = h.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        h.kill()
        text, _ = h.communicate()
    sys.stdout.write(text)
    check(h.returncode == 130, "the harness exits 130 on SIGTERM (got %s, %.1f s after it)" % (
        h.returncode, time.monotonic() - t1))
    check("resume with: spec-harness run --resume" in text, "it says how to resume")
    while guest_qemus() and time.monotonic() - t1 < 30:
        time.sleep(0.5)
    left = guest_qemus()
    check(not left, "no QEMU left running %.1f s after SIGTERM (%s)" % (time.monotonic() - t1, left or "none"))
    for pid in left:
        os.kill(int(pid), signal.SIGKILL)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("ci", "corrupt", "badconfig", "resume", "sigterm"):
        sys.stderr.write(__doc__)
        return 2
    case, build, work = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    {"ci": case_ci, "corrupt": case_corrupt, "badconfig": case_badconfig, "resume": case_resume,
     "sigterm": case_sigterm}[case](build, work)
    if failed:
        print("%d check(s) failed" % len(failed))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
