#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of the timelines (docs/report.md, section 4): `vperf export --to chrome` (the
Trace Event Format's JSON) and `vperf timeline` (an SVG).  The real binary records the
known-answer workload `split` (two threads burn 300 and 100 ms of their own CPU time and print
how much each used, and its perf task-clock: its time on a CPU) with `vperf record`, and the
timelines must show it: as many running slices as the recording has switches in, at the times
babeltrace2 (the reference reader) gives them, summing to the time on a CPU each thread measured
for itself.

Usage: timeline_tests.py --vperf PATH --workloads DIR TEST
       timeline_tests.py --list

Each test_<name>() below is one ctest, cli.timeline_<name> (tests/integration/CMakeLists.txt).
Exit status: 0 pass, 1 fail, 77 skip (after printing "SKIP: <reason>").
"""

import base64
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Skip, Fail, check, need_perf, show  # noqa: E402,F401
from harness import run, vperf, refused as bad, tmp_path as p  # noqa: E402
from harness import CHROMIUM, render, png_pixels  # noqa: E402

VPERF = None
WORKLOADS = None
TMP = None
BT2 = shutil.which("babeltrace2")
CPU_TIME_TOLERANCE = 0.02	# running time from the slices against the time on CPU measured


def record_split(name="rec", a_ms=300, b_ms=100):
    """Record split: (dir, {tid: ms on a CPU it measured}).  That is the worker's perf
    task-clock, which counts the time it held a CPU as the recording's switches do; its own CPU
    clock leaves out steal time (this kernel's CONFIG_PARAVIRT_TIME_ACCOUNTING) and is the
    fallback where task-clock was not counted."""
    need_perf()
    d = p(name)
    r = vperf("record", "-q", "-F", "1000", "-o", d, "--", os.path.join(WORKLOADS, "split"),
              str(a_ms), str(b_ms), timeout=90)
    check(r.returncode == 0, "vperf record exited %d" % r.returncode)
    got = re.findall(r"^[ab] (\d+) ([0-9.]+) ([0-9.]+|-)$", r.stdout, re.M)
    check(len(got) == 2, "split did not print its workers' CPU times: %r" % r.stdout)
    return d, {int(t): float(tc if tc != "-" else ms) for t, ms, tc in got}


def switches(d):
    """babeltrace2 --clock-cycles DIR: the thread_switch events, [(ns, tid, 'in'|'out', cpu)]."""
    if not BT2:
        raise Skip("babeltrace2 is not installed (scripts/install-deps.sh installs it): no "
                   "reference reader to compare the slices with")
    r = subprocess.run([BT2, "--clock-cycles", d], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "babeltrace2 exited %d: %s" % (r.returncode, r.stderr[-2000:]))
    out = []
    for line in r.stdout.splitlines():
        if " thread_switch: " not in line:
            continue
        m = re.match(r"^\[(\d+)\].*cpu_id = (\d+) \}, \{ pid = \d+, tid = (\d+), direction = "
                     r"\( \"(in|out)\"", line)
        check(m, "a thread_switch line not understood: %r" % line)
        out.append((int(m.group(1)), int(m.group(3)), m.group(4), int(m.group(2))))
    return out


def expected_slices(sw):
    """The slices the recording's switches make (docs/report.md): {tid: [start ns, ...]} for
    every in, and for a thread whose first switch is an out, one slice before it (None: starts
    at its exec)."""
    want = {}
    for ns, tid, d, cpu in sw:
        lst = want.setdefault(tid, [])
        if d == "in":
            lst.append(ns)
        elif not lst:
            lst.append(None)
    return want


def running_slices(j, tid):
    """How many running slices a chrome export has on thread tid's track."""
    return sum(1 for e in j["traceEvents"] if e["ph"] == "X" and e["cat"] == "sched" and
               e["name"] == "running" and e["tid"] == tid)


def chrome(d, name="t.json"):
    out = p(name)
    r = vperf("export", "-i", d, "--to", "chrome", "-o", out)
    check(r.returncode == 0 and not r.stderr, "vperf export --to chrome exited %d" % r.returncode)
    with open(out) as f:
        text = f.read()
    # strict JSON: Python's parser takes NaN and Infinity, the format's readers do not
    j = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(Fail("%s in JSON" % c)))
    print("%s: %d bytes, %d trace events" % (name, len(text), len(j["traceEvents"])))
    return j


def check_structure(j):
    """What every Trace Event Format reader needs: each event's phase, ids and a finite ts;
    each X a dur >= 0; each thread with events a thread_name; each process a process_name."""
    check(isinstance(j, dict) and isinstance(j.get("traceEvents"), list), "no traceEvents array")
    check(j.get("displayTimeUnit") in ("ms", "ns"), "displayTimeUnit %r" % j.get("displayTimeUnit"))
    names, pnames, tracks = {}, {}, set()
    for e in j["traceEvents"]:
        check(e.get("ph") in ("M", "X", "i", "B", "E", "C"), "phase %r: %r" % (e.get("ph"), e))
        check(isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), "ids: %r" % e)
        check(isinstance(e.get("name"), str) and e["name"], "no name: %r" % e)
        ts = e.get("ts")
        check(isinstance(ts, (int, float)) and math.isfinite(ts) and ts >= 0, "ts: %r" % e)
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e["name"] == "process_name":
                pnames[e["pid"]] = e["args"]["name"]
            continue
        tracks.add((e["pid"], e["tid"]))
        if e["ph"] == "X":
            check(isinstance(e.get("dur"), (int, float)) and math.isfinite(e["dur"]) and
                  e["dur"] >= 0, "X without a dur >= 0: %r" % e)
        if e["ph"] == "i":
            check(e.get("s", "t") in ("t", "p", "g"), "instant scope: %r" % e)
    missing = [t for t in tracks if t not in names]
    check(not missing, "tracks without a thread_name: %r" % missing[:10])
    check(all(pid in pnames for pid, _ in tracks), "a process without a process_name")
    return names, pnames


def test_chrome_running_slices_are_the_recordings_switches_and_its_cpu_times():
    d, cpu_ms = record_split()
    j = chrome(d)
    names, pnames = check_structure(j)
    ev = j["traceEvents"]
    sw = switches(d)
    want = expected_slices(sw)
    got = {}
    for e in ev:
        if e["ph"] == "X" and e["name"] == "running":
            got.setdefault(e["tid"], []).append(e)
    n_in = sum(1 for s in sw if s[2] == "in")
    n_want = sum(len(v) for v in want.values())
    n_got = sum(len(v) for v in got.values())
    print("switches in: %d; slices wanted %d (with a first switch out: %d), got %d"
          % (n_in, n_want, n_want - n_in, n_got))
    check(n_got == n_want, "%d running slices, the recording's switches make %d" % (n_got, n_want))
    for tid, starts in want.items():
        have = sorted(round(e["ts"] * 1000) for e in got.get(tid, []))
        exact = sorted(s for s in starts if s is not None)
        check(all(s in have for s in exact), "tid %d: slices do not start at its switches in "
              "(first: %r, %r)" % (tid, exact[:3], have[:3]))
    # per CPU: the same slices, on tracks named CPU n of a process CPUs
    cpu = [e for e in ev if e["ph"] == "X" and e["cat"] == "cpu"]
    check(len(cpu) == n_got, "%d per-CPU slices, %d running slices" % (len(cpu), n_got))
    check(all(names[(e["pid"], e["tid"])].startswith("CPU ") and pnames[e["pid"]] == "CPUs"
              for e in cpu), "per-CPU slices not on CPU tracks")
    # the known answer: each worker's running time is its time on a CPU as it measured it
    for tid, ms in cpu_ms.items():
        run_ms = sum(e["dur"] for e in got.get(tid, [])) / 1000
        harness.check_running("tid %d" % tid, run_ms, len(got.get(tid, [])), ms,
                              CPU_TIME_TOLERANCE)
        check(names.get((e_pid(ev, tid), tid)) == "split", "tid %d is not named split" % tid)


def e_pid(ev, tid):
    return next(e["pid"] for e in ev if e["tid"] == tid and e["ph"] != "M")


def test_chrome_samples_forks_and_exits_are_instants_on_their_threads():
    d, cpu_ms = record_split()
    j = chrome(d)
    check_structure(j)
    ev = j["traceEvents"]
    r = vperf("report", "-i", d, "--sort", "tid,symbol", "-x", ",", quiet=True)
    check(r.returncode == 0, "vperf report exited %d" % r.returncode)
    by_tid = {}
    for row in csv.DictReader(io.StringIO(r.stdout)):
        by_tid[int(row["tid"])] = by_tid.get(int(row["tid"]), 0) + int(row["samples"])
    samples = [e for e in ev if e["ph"] == "i" and e["cat"] == "sample"]
    got = {}
    for e in samples:
        got[e["tid"]] = got.get(e["tid"], 0) + 1
    print("samples per tid: chrome %r, report %r" % (got, by_tid))
    check(got == by_tid, "the samples per thread differ from vperf report's")
    hot = [e for e in samples if e["tid"] in cpu_ms]
    named = sum(1 for e in hot if e["name"] != "[unknown]" and not e["name"].startswith("["))
    check(named >= 0.9 * len(hot), "only %d of the workers' %d samples have a symbol"
          % (named, len(hot)))
    proc = [e for e in ev if e["cat"] == "process"]
    for tid in cpu_ms:
        kinds = sorted(e["name"] for e in proc if e["tid"] == tid)
        check("fork" in kinds and "exit" in kinds, "worker %d: %r, not a fork and an exit"
              % (tid, kinds))
    check(any(e["name"] == "exec" and e["args"].get("filename") == "split" for e in proc),
          "no exec of split")


def test_chrome_counter_tracks_reach_each_workers_cpu_time_in_cpu_clock_ns():
    """Each thread's counter track of the sampled event rises at every sample of it, by the
    sample's period, to the thread's count: cpu-clock's ns, so the workers' time on a CPU, less
    the periods the kernel's timer skipped when it fired late (skipped_periods)."""
    d, cpu_ms = record_split()
    j = chrome(d)
    check_structure(j)
    ev = j["traceEvents"]
    samples = {}
    for e in ev:
        if e["ph"] == "i" and e["cat"] == "sample":
            samples[e["tid"]] = samples.get(e["tid"], 0) + 1
    tracks = {}
    for e in ev:
        if e["ph"] == "C":
            check(e["cat"] == "counter" and list(e["args"]) == ["count"], "counter: %r" % e)
            check(e["name"] == "cpu-clock, tid %d" % e["tid"], "counter %r on tid %d"
                  % (e["name"], e["tid"]))
            tracks.setdefault(e["tid"], []).append((e["ts"], e["args"]["count"]))
    check({t: len(v) for t, v in tracks.items()} == samples, "counter points per thread %r, "
          "samples %r" % ({t: len(v) for t, v in tracks.items()}, samples))
    for tid, pts in tracks.items():
        check(all(a[0] <= b[0] and a[1] < b[1] for a, b in zip(pts, pts[1:])),
              "tid %d: its counter does not rise with time" % tid)
    for tid, ms in cpu_ms.items():
        pts = tracks.get(tid, [(0, 0)])
        got = pts[-1][1] / 1e6
        skipped = skipped_periods(ev, tid, pts)
        print("tid %d: cpu-clock counter ends at %.3f ms, the thread measured %.3f ms on a CPU; "
              "periods the kernel's timer skipped (fired late), at least: %.3f ms" % (tid, got, ms, skipped))
        check(got <= ms * (1 + CPU_TIME_TOLERANCE), "tid %d: counter %.3f ms, more than its "
              "%.3f ms on a CPU" % (tid, got, ms))
        check(abs((got + skipped) / ms - 1) <= CPU_TIME_TOLERANCE, "tid %d: counter %.3f ms and "
              "%.3f ms skipped, on a CPU %.3f ms" % (tid, got, skipped, ms))


def skipped_periods(ev, tid, pts):
    """The ms of cpu-clock periods no sample stands for: the kernel's hrtimer of a cpu-clock
    event that fires late forwards past the periods it missed and writes one sample of one
    period (perf_swevent_hrtimer), so on a loaded host the sum of the periods falls short of
    the time on a CPU.  A gap between two samples (pts: [(ts us, count)]) of g ms on a CPU
    (from the thread's running slices) in which the count rose by one period p had at least
    floor(g / p) - 1 periods skipped: without a skip, two samples are one period apart on a CPU
    plus the second's lateness less the first's, and a lateness of a period is itself a skip."""
    run = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e["ph"] == "X" and
                 e["cat"] == "sched" and e["name"] == "running" and e["tid"] == tid)

    def on_cpu(a, b):
        return sum(max(0.0, min(b, hi) - max(a, lo)) for lo, hi in run) / 1000

    skipped = 0.0
    for (ta, ca), (tb, cb) in zip(pts, pts[1:]):
        p = (cb - ca) / 1e6
        if p > 0:
            skipped += max(0, math.floor(on_cpu(ta, tb) / p + 1e-6) - 1) * p
    return skipped


SPEEDSCOPE = os.environ.get("VPERF_SPEEDSCOPE",
                            "/opt/vperf-speedscope/node_modules/speedscope/dist/release/index.html")


def speedscope_totals(trace):
    """Load trace in speedscope (a reader of the format, npm package speedscope) in headless
    Chromium, the way its own command line does (a script calling loadFileFromBase64); from the
    page it leaves: its title and each thread's total weight in ms, {track name: ms}."""
    if not CHROMIUM:
        raise Skip("chromium is not installed (Debian chromium, scripts/install-deps.sh)")
    if not os.path.exists(SPEEDSCOPE):
        raise Skip("speedscope is not installed at %s (scripts/install-deps.sh: npm install "
                   "--prefix /opt/vperf-speedscope speedscope; or set VPERF_SPEEDSCOPE to its "
                   "dist/release/index.html)" % SPEEDSCOPE)
    js = p("profile.js")
    with open(trace, "rb") as f, open(js, "w") as out:
        out.write("speedscope.loadFileFromBase64(%s, %s)" % (
            json.dumps(os.path.basename(trace)), json.dumps(base64.b64encode(f.read()).decode())))
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--user-data-dir=" + tempfile.mkdtemp(dir=TMP),
            "--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom",
            "file://%s#localProfilePath=%s" % (SPEEDSCOPE, js)]
    r = run(args, timeout=120, quiet=True)
    check(r.returncode == 0, "chromium exited %d: %s" % (r.returncode, r.stderr[-1500:]))
    texts = [t.strip() for t in re.findall(r">([^<>]+)<", r.stdout) if t.strip()]
    title = texts[0] if texts else ""
    totals = {}
    if "Total Weight" in texts:
        # the thread list: "1", name, weight; "2", name, weight...
        rest = texts[texts.index("Total Weight") + 1:]
        for name, weight in zip(rest, rest[1:]):
            m = re.match(r"^([0-9.]+)(ms|s|µs|us)$", weight)
            if m:
                totals[name] = float(m.group(1)) * {"ms": 1, "s": 1000, "µs": 1e-3,
                                                    "us": 1e-3}[m.group(2)]
    print("speedscope: title %r, totals %r" % (title, totals))
    return title, totals


def test_chrome_export_opens_in_speedscope_with_each_workers_running_time():
    d, cpu_ms = record_split()
    j = chrome(d)
    title, totals = speedscope_totals(p("t.json"))
    check(title == "t.json - speedscope", "speedscope did not load it: its title is %r" % title)
    pid = {e["tid"]: e["pid"] for e in j["traceEvents"] if e["cat"] == "sched"}
    for tid, ms in cpu_ms.items():
        name = "split (pid %d), split (tid %d)" % (pid[tid], tid)
        check(name in totals, "speedscope has no %r: %r" % (name, list(totals)))
        harness.check_running("tid %d in speedscope" % tid, totals[name],
                              running_slices(j, tid), ms, CPU_TIME_TOLERANCE)


def test_chrome_bad_input_is_refused_without_a_file():
    bad(["export", "-i", p("nothing"), "--to", "chrome", "-o", p("x.json")],
        r"^vperf export: .*nothing: no such directory$", "a missing directory")
    os.mkdir(p("empty"))
    bad(["export", "-i", p("empty"), "--to", "chrome", "-o", p("x.json")],
        r"^vperf export: .*empty: not a vperf recording", "an empty directory")
    check(not os.path.exists(p("x.json")), "a failed export left its file")
    bad(["export", "-i", p("empty"), "--to", "chrome", "-o", p("no-dir", "x.json")],
        r"^vperf export: cannot write .*no-dir/x.json", "an unwritable -o")


def timeline(d, out="t.svg", *extra):
    """vperf timeline: (the SVG's root element, its text, the summary's {tid: running ms})."""
    path = p(out)
    r = vperf("timeline", "-i", d, "-o", path, *extra)
    check(r.returncode == 0 and not r.stderr, "vperf timeline exited %d" % r.returncode)
    with open(path) as f:
        text = f.read()
    root = ET.fromstring(text)	# well-formed, or this raises
    check(root.tag == "{http://www.w3.org/2000/svg}svg", "the root is %r, not svg" % root.tag)
    running = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^\s+([0-9.]+)\s+([0-9.]+)%\s+(\d+)\s+(\d+)\s+(.+)$", line)
        if m:
            running[int(m.group(4))] = float(m.group(1))
    return root, text, running


def bt2_events(d):
    """babeltrace2 --clock-cycles DIR, read clean (exit 0, nothing on stderr): each event as
    (cycles, name, {packet context field: value}, [(payload field, value)...]), the *_len
    fields our writer puts before strings left out."""
    if not BT2:
        raise Skip("babeltrace2 is not installed (scripts/install-deps.sh installs it): no "
                   "reader of CTF here")
    r = subprocess.run([BT2, "--clock-cycles", d], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0 and not r.stderr, "babeltrace2 %s: exit %d, stderr %r"
          % (d, r.returncode, r.stderr[-2000:]))
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"^\[(\d+)\] \(\S+\) \S+ (\w+): \{ (.*?) \}, \{ (.*) \}$", line)
        check(m, "a babeltrace2 line not understood: %r" % line)
        ctx = dict(re.findall(r"(\w+) = (\d+)", m.group(3)))
        fields = [(k, v.strip('"')) for k, v in
                  re.findall(r"(\w+) = (\"[^\"]*\"|0x[0-9A-Fa-f]+|-?\d+|\( [^)]* \))", m.group(4))
                  if not k.endswith("_len")]
        out.append((int(m.group(1)), m.group(2), ctx, fields))
    return out


# lttng-modules' payload fields of the events the ctf export writes (its instrumentation
# headers; Trace Compass's LttngEventLayout reads them by these names)
LTTNG_FIELDS = {
    "sched_switch": ["prev_comm", "prev_tid", "prev_prio", "prev_state", "next_comm", "next_tid",
                     "next_prio"],
    "sched_wakeup": ["comm", "tid", "prio", "target_cpu"],
    "sched_process_fork": ["parent_comm", "parent_tid", "parent_pid", "child_comm", "child_tid",
                           "child_pid"],
    "sched_process_exec": ["filename", "tid", "old_tid"],
    "sched_process_exit": ["comm", "tid", "prio"],
}
# the recording's event for each
LTTNG_OF = {"sched_switch": "sched_switch", "sched_wakeup": "sched_wakeup",
            "process_fork": "sched_process_fork", "process_exec": "sched_process_exec",
            "process_exit": "sched_process_exit"}


def test_ctf_export_is_an_lttng_kernel_trace_with_the_recordings_sched_events():
    """`vperf export --to ctf` of a `vperf record` recording: babeltrace2 reads the host trace
    without an error; its environment is an lttng-modules 2.12 kernel trace's (integers where
    Trace Compass parses them); every event has lttng-modules' fields, in its order; and it
    holds the recording's sched_switch, sched_wakeup, fork, exec and exit events, one for one,
    at the same clock values on the same CPUs, with the same tids and prev_state."""
    d, _ = record_split()
    rec = bt2_events(d)
    if not any(e[1] == "sched_switch" for e in rec):
        raise Skip("the recording has no sched_switch (the sched tracepoints are not allowed "
                   "here: `vperf report --header` says why)")
    out = p("lt")
    r = vperf("export", "-i", d, "--to", "ctf", "-o", out)
    check(r.returncode == 0 and not r.stderr, "vperf export --to ctf exited %d" % r.returncode)
    check(sorted(os.listdir(out)) == ["host"], "a vperf record export is host/ only: %r"
          % os.listdir(out))
    with open(os.path.join(out, "host", "metadata")) as f:
        meta = f.read()
    for want in ('domain = "kernel";', 'tracer_name = "lttng-modules";', "tracer_major = 2;",
                 "tracer_minor = 12;", 'sysname = "Linux";', "cpu_id;"):
        check(want in meta, "the metadata lacks %s" % want)
    got = bt2_events(os.path.join(out, "host"))
    for e in got:
        check(e[1] in LTTNG_FIELDS, "an event the export does not write here: %r" % (e,))
        check([k for k, _ in e[3]] == LTTNG_FIELDS[e[1]], "%s's fields %r, lttng-modules' %r"
              % (e[1], [k for k, _ in e[3]], LTTNG_FIELDS[e[1]]))
    counts = {}
    for name, lname in LTTNG_OF.items():
        a = [e for e in rec if e[1] == name]
        b = [e for e in got if e[1] == lname]
        counts[lname] = (len(a), len(b))
        check(len(a) == len(b), "%d %s in the recording, %d %s in the export"
              % (len(a), name, len(b), lname))
        for x, y in zip(a, b):
            check(x[0] == y[0] and x[2]["cpu_id"] == y[2]["cpu_id"], "%s at %d on CPU %s "
                  "exported at %d on CPU %s" % (name, x[0], x[2]["cpu_id"], y[0], y[2]["cpu_id"]))
            xf, yf = dict(x[3]), dict(y[3])
            for k in {"sched_switch": ("prev_tid", "prev_state", "next_tid", "prev_comm",
                                       "next_comm"),
                      "sched_wakeup": ("tid", "target_cpu"),
                      "process_fork": ("parent_tid", "parent_pid", "child_tid", "child_pid"),
                      "process_exec": ("tid",), "process_exit": ("tid",)}[name]:
                # integers compare by value: the recording writes prev_state in hex
                xv, yv = (int(v, 0) if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)", v) else v
                          for v in (xf[k], yf[k]))
                check(xv == yv, "%s at %d: %s %s in the recording, %s exported"
                      % (name, x[0], k, xf[k], yf[k]))
    print("recording vs export: %r" % counts)
    # names as they were: the workers are forked by split after its exec, and exit as split
    names = [(e[1], dict(e[3])) for e in got if e[1] in ("sched_process_fork", "sched_process_exit")]
    print("fork and exit names: %r" % [(n, f.get("child_comm", f.get("comm"))) for n, f in names])
    for name, f in names:
        if name == "sched_process_fork":
            check(f["child_comm"] == f["parent_comm"] == "split", "a fork's names: %r" % f)
        else:
            check(f["comm"] == "split", "an exit's name: %r" % f)


def test_ctf_export_bad_output_is_refused_without_touching_it():
    d, _ = record_split()
    os.mkdir(p("full"))
    with open(p("full", "keep"), "w") as f:
        f.write("mine")
    bad(["export", "-i", d, "--to", "ctf", "-o", p("full")],
        r"^vperf export: .*full exists and is not an empty directory", "a non-empty -o")
    check(os.listdir(p("full")) == ["keep"], "the export touched a non-empty directory")
    bad(["export", "-i", d, "--to", "ctf", "-o", "-"],
        r"^vperf export: --to ctf writes a directory: -o DIR, not -", "-o -")
    bad(["export", "-i", d, "--to", "ctf", "-e", "cpu-clock", "-o", p("x")],
        r"^vperf export: --to ctf writes events, not samples: no -e", "-e with ctf")
    check(not os.path.exists(p("x")), "a refused export left its directory")


def texts(root):
    return [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_timeline_svg_has_rows_axis_legend_and_the_workers_cpu_times():
    d, cpu_ms = record_split()
    root, text, running = timeline(d, "t.svg", "--width", "1200")
    check(root.get("width") == "1200", "width %r, not the --width" % root.get("width"))
    labels = texts(root)
    legend = root.find(".//{http://www.w3.org/2000/svg}g[@id='legend']")
    check(legend is not None and len(list(legend)) >= 10, "no legend")
    for tid in cpu_ms:
        check("split %d" % tid in labels, "no row for worker %d: %r" % (tid, labels))
    check("CPU 0" in labels, "no CPU row")
    axis = [t for t in labels if t and re.match(r"^\d+(\.\d+)? (s|ms|us|ns)$", t)]
    print("axis labels: %r" % axis)
    check(len(axis) >= 3 and axis[0].startswith("0"), "the time axis has labels %r" % axis)
    # samples: ticks under each worker's row, one path per thread
    check(text.count('stroke="#222222"') >= 3, "no sample ticks")
    j = chrome(d)
    for tid, ms in cpu_ms.items():
        harness.check_running("tid %d in the summary" % tid, running.get(tid, 0),
                              running_slices(j, tid), ms, CPU_TIME_TOLERANCE)


def test_timeline_renders_in_headless_chromium_with_the_threads_colours():
    d, cpu_ms = record_split()
    root, text, _ = timeline(d, "t.svg", "--width", "1000")
    w, h = int(root.get("width")), int(float(root.get("height")))
    png = p("t.png")
    render(p("t.svg"), png, w, h)
    pw, ph, px = png_pixels(png)
    print("rendered %s: %d x %d px (the SVG: %d x %d)" % (png, pw, ph, w, h))
    check((pw, ph) == (w, h), "the PNG is %d x %d, not %d x %d" % (pw, ph, w, h))
    count = {}
    for row in px:
        for c in row:
            count[c] = count.get(c, 0) + 1
    white = count.get((255, 255, 255), 0)
    print("%d colours; white %.1f%% of the pixels" % (len(count), 100.0 * white / (pw * ph)))
    check(len(count) > 1, "a single colour")
    check(white < 0.97 * pw * ph, "almost all white: nothing drawn")
    # each worker's running colour fills part of its row: the fills the SVG names are on screen
    # (not the greys of the rows' backgrounds: the threads' own colours)
    # (a thread that ran too briefly to take 10 px of its row, as split's main thread may, is not
    # asked to)
    area = {}
    for wid, f in re.findall(r'<rect x="[^"]+" y="[^"]+" width="([^"]+)" height="16.0" '
                             r'fill="#([0-9a-f]{6})"/>', text):
        area[f] = area.get(f, 0) + float(wid)
    fills = {f for f, wid in area.items() if wid >= 10} - {"e2e2e2", "f4f4f4"}
    seen = [f for f in fills if count.get(tuple(int(f[i:i + 2], 16) for i in (0, 2, 4)), 0) > 50]
    print("threads' fills %r; over 50 px each on screen: %r" % (sorted(fills), sorted(seen)))
    check(len(fills) >= 2 and len(seen) == len(fills), "of the threads' fills %r only %r reach "
          "the screen" % (sorted(fills), sorted(seen)))


def test_timeline_bad_input_is_refused_without_a_file():
    bad(["timeline", "-i", p("nothing"), "-o", p("x.svg")],
        r"^vperf timeline: .*nothing: no such directory$", "a missing directory")
    os.mkdir(p("empty"))
    bad(["timeline", "-i", p("empty"), "-o", p("x.svg")],
        r"^vperf timeline: .*empty: not a vperf recording", "an empty directory")
    check(not os.path.exists(p("x.svg")), "a failed timeline left its file")
    bad(["timeline", "-i", p("empty"), "-o", p("no-dir", "x.svg")],
        r"^vperf timeline: cannot write .*no-dir/x.svg", "an unwritable -o")
    for w in ("abc", "10", "99999", ""):
        bad(["timeline", "-i", p("empty"), "--width", w], r"^vperf timeline: --width '%s': a "
            r"number of pixels from 400 to 20000" % w, "--width %r" % w)
    bad(["timeline", "extra"], r"^vperf timeline: unexpected argument 'extra'", "an operand")


def test_help_documents_the_options_and_formats():
    r = vperf("timeline", "--help")
    check(r.returncode == 0, "exit status %d" % r.returncode)
    for opt in ("--input", "--output", "--width"):
        check(opt in r.stdout, "timeline --help lacks %s" % opt)
    r = vperf("export", "--help")
    check(r.returncode == 0 and "chrome" in r.stdout, "export --help lacks chrome")
    r = vperf("help")
    check("timeline" in r.stdout, "vperf help does not list timeline")


def tests():
    return harness.tests_of(globals())


def setup(a, tmp):
    global VPERF, WORKLOADS, TMP
    err = harness.cli_setup(a, tmp)
    VPERF, WORKLOADS, TMP = harness.CLI.vperf, harness.CLI.workloads, tmp
    return err


def main():
    return harness.main(tests(), "vperf-timeline-", setup, extra_args=("--workloads",))


if __name__ == "__main__":
    sys.exit(main())
