#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of the `vperf` CLI, run as a user would run it.

Usage: cli_tests.py --vperf PATH --workloads DIR TEST
       cli_tests.py --list

Each test_<name>() below is one ctest, cli.<name> (tests/integration/
CMakeLists.txt finds them by the `def test_` lines).  Exit status: 0 pass,
1 fail, 77 skip (after printing "SKIP: <reason>").

The workloads (tests/workloads) have known answers: `burn MS` uses MS ms of
thread CPU time, `block N` blocks N times, `split` burns 300 and 100 ms in
two threads, `loop N` retires 2*N instructions.

Output spec the parsers implement (the CLI implements the same spec):
  counts go to stderr unless -o FILE.
  -x SEP: one line per event:
      value SEP unit SEP event SEP [stddev% SEP (only with -r)]
      run_time_ns SEP pct_running SEP metric_value SEP metric_unit
    with --per-thread a leading comm-tid field, with -I a leading timestamp
    field (timestamp first when both).  task-clock's value is in msec (unit
    "msec"); counts have an empty unit; "<not supported>" / "<not counted>"
    in the value field.
  -j: one JSON object per line per event with keys "counter-value"
    (string), "unit", "event", "event-runtime", "pcnt-running",
    "metric-value", "metric-unit", plus "thread" with --per-thread,
    "interval" with -I, "variance" with -r.
  Blank lines and lines starting with '#' are not events and are skipped.
"""

import json
import os
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Skip, Fail, check  # noqa: E402,F401

VPERF = None
WORKLOADS = None
TMP = None

PMU_PATH = "/sys/bus/event_source/devices/cpu"
# context-switches of `block N` may exceed N by this much: a switch at exec
# or exit, and preemption by other tasks on a busy 2-core host.  Measured on
# an idle host: exactly N (100 of 100).
CS_SLACK = 15


def host_has_pmu():
    return os.path.exists(PMU_PATH) or os.path.exists(PMU_PATH + "_core")


def wl(name):
    return os.path.join(WORKLOADS, name)


def steal_ticks():
    """This machine's stolen time so far (/proc/stat steal, USER_HZ ticks), 0 if unreadable."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) if fields[0] == "cpu" and len(fields) > 8 else 0
    except (OSError, ValueError):
        return 0


LAST_STEAL = 0.0    # the share of this machine's CPU time stolen during the last run()


def run(args, timeout=60, **kw):
    """Run a command, echo it and its output, return CompletedProcess."""
    global LAST_STEAL
    print("$ " + " ".join(shlex.quote(a) for a in args), flush=True)
    s0, t0 = steal_ticks(), time.monotonic()
    try:
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        raise Fail("timed out after %ds: %s" % (timeout, " ".join(args))) from e
    wall = time.monotonic() - t0
    LAST_STEAL = 0.0
    if wall > 0:
        LAST_STEAL = min(0.9, max(0.0, (steal_ticks() - s0) / os.sysconf("SC_CLK_TCK")
                                  / (wall * (os.cpu_count() or 1))))
    for name, text in (("stdout", r.stdout), ("stderr", r.stderr)):
        if text:
            print("--- %s ---" % name)
            print(text.rstrip("\n"))
    print("--- exit %d ---" % r.returncode, flush=True)
    return r


def vperf(*args, **kw):
    return run([VPERF] + list(args), **kw)


def check_ok(r):
    check(r.returncode == 0, "exit status %d, expected 0" % r.returncode)


# ---- output parsers: the spec in the docstring above ----------------------

def event_lines(text):
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        yield line


def parse_csv(text, sep=",", per_thread=False, interval=False, repeat=False):
    """Rows of -x output as dicts; fails on a line that does not fit."""
    want = 7 + per_thread + interval + repeat
    rows = []
    for line in event_lines(text):
        f = line.split(sep)
        check(len(f) == want, "CSV line has %d fields, the spec says %d: %r"
              % (len(f), want, line))
        row = {"line": line}
        if interval:
            row["time"] = f.pop(0)
        if per_thread:
            row["thread"] = f.pop(0)
        row["value"], row["unit"], row["event"] = f[0], f[1], f[2]
        rest = f[3:]
        if repeat:
            row["stddev"] = rest.pop(0)
        (row["run_time_ns"], row["pct_running"], row["metric_value"],
         row["metric_unit"]) = rest
        rows.append(row)
    return rows


JSON_KEYS = ("counter-value", "unit", "event", "event-runtime", "pcnt-running",
             "metric-value", "metric-unit")


def parse_json(text, per_thread=False, interval=False, repeat=False):
    rows = []
    for line in event_lines(text):
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise Fail("not a JSON object: %r (%s)" % (line, e)) from e
        check(isinstance(obj, dict), "JSON line is not an object: %r" % line)
        keys = list(JSON_KEYS)
        if per_thread:
            keys.append("thread")
        if interval:
            keys.append("interval")
        if repeat:
            keys.append("variance")
        missing = [k for k in keys if k not in obj]
        check(not missing, "JSON line lacks %s: %r" % (missing, line))
        check(isinstance(obj["counter-value"], str),
              "counter-value is %r, the spec says a string" % (obj["counter-value"],))
        rows.append(obj)
    return rows


def number(s, what):
    try:
        return float(str(s).strip().rstrip("%"))
    except ValueError as e:
        raise Fail("%s is %r, not a number" % (what, s)) from e


def rows_for(rows, event, key="event"):
    return [r for r in rows if r[key] == event]


def one_row(rows, event, key="event"):
    found = rows_for(rows, event, key)
    check(len(found) == 1, "expected one line for event %r, got %d (events: %s)"
          % (event, len(found), [r[key] for r in rows]))
    return found[0]


def within(got, want, frac, what):
    """got within frac of want; when this machine lost CPU time to steal during the
    last run(), that share more is allowed: perf's task-clock counts stolen time,
    CLOCK_THREAD_CPUTIME_ID (what the workloads burn by) not (PARAVIRT_TIME_ACCOUNTING)."""
    err = (got - want) / want
    extra = LAST_STEAL / (1 - LAST_STEAL) if LAST_STEAL > 0 else 0.0
    print("%s: %.3f, want %.3f: %+.2f%% (limit +-%.0f%%%s)" % (
        what, got, want, err * 100, frac * 100,
        "; +%.1f%% more: this machine lost %.1f%% to steal meanwhile" % (extra * 100, LAST_STEAL * 100)
        if extra else ""))
    check(abs(err) <= frac + extra, "%s: %.3f is not within %.0f%% of %.3f"
          % (what, got, (frac + extra) * 100, want))


def burn_process_ms(stdout):
    """The CPU time burn's process(es) used, exec and loader included, as each printed it
    at its end (the mean over -r runs): what a task-clock counted from exec must match."""
    ms = [float(m) for m in re.findall(r"^burn: ([0-9.]+) ms process cpu$", stdout, re.M)]
    check(ms, "burn printed no process cpu line: %r" % stdout)
    return sum(ms) / len(ms)


def check_event_fields(r, sep_desc="CSV"):
    """The common fields of one parsed CSV row hold what the spec says."""
    if r["value"] not in ("<not supported>", "<not counted>"):
        number(r["value"], "%s value of %s" % (sep_desc, r["event"]))
    rt = number(r["run_time_ns"], "run_time_ns of %s" % r["event"])
    pct = number(r["pct_running"], "pct_running of %s" % r["event"])
    check(rt > 0, "run_time_ns of %s is %s, expected > 0" % (r["event"], r["run_time_ns"]))
    check(0 < pct <= 100, "pct_running of %s is %s, expected in (0, 100]"
          % (r["event"], r["pct_running"]))


# ---- stat: known answers ----------------------------------------------------

def test_stat_task_clock_200ms_within_5pct():
    r = vperf("stat", "-x,", "-e", "task-clock", "--", wl("burn"), "200")
    check_ok(r)
    row = one_row(parse_csv(r.stderr), "task-clock")
    check(row["unit"] == "msec", "task-clock unit is %r, expected 'msec'" % row["unit"])
    check_event_fields(row)
    within(number(row["value"], "task-clock"), burn_process_ms(r.stdout), 0.05,
           "task-clock msec against burn 200's process CPU time")


def test_stat_context_switches_block_100_within_slack():
    n = 100
    r = vperf("stat", "-x,", "-e", "context-switches", "--", wl("block"), str(n))
    check_ok(r)
    row = one_row(parse_csv(r.stderr), "context-switches")
    check(row["unit"] == "", "context-switches unit is %r, expected empty" % row["unit"])
    cs = number(row["value"], "context-switches")
    print("context-switches: %d for %d blocking sleeps (allowed %d..%d)"
          % (cs, n, n, n + CS_SLACK))
    check(n <= cs <= n + CS_SLACK, "context-switches %d not in [%d, %d]"
          % (cs, n, n + CS_SLACK))


def split_workers(stdout):
    """split prints 'a <tid> <ms> <task-clock ms>' and the same for b: each worker's tid, its own
    CLOCK_THREAD_CPUTIME_ID over its burn, and its own perf task-clock ('-' where refused)."""
    workers = {}
    for line in stdout.splitlines():
        m = re.match(r"^([ab]) (\d+) ([\d.]+) ([\d.]+|-)$", line)
        if m:
            workers[m.group(1)] = (int(m.group(2)), float(m.group(3)),
                                   None if m.group(4) == "-" else float(m.group(4)))
    check(set(workers) == {"a", "b"}, "split did not report its workers: %r" % stdout)
    return workers


def split_tids(stdout):
    return {k: v[0] for k, v in split_workers(stdout).items()}


def thread_tid(field):
    m = re.match(r"^(.*)-(\d+)$", field.strip())
    check(m is not None, "thread field %r is not comm-tid" % field)
    return int(m.group(2))


def test_stat_per_thread_split_3to1_within_5pct():
    """Each worker's per-thread task-clock against the task-clock the worker read of itself (the
    same quantity: time on a CPU, which counts time this machine's hypervisor stole while the
    thread ran), and the 3:1 split of their own CPU clocks."""
    r = vperf("stat", "--per-thread", "-x,", "-e", "task-clock", "--", wl("split"))
    check_ok(r)
    workers = split_workers(r.stdout)
    tids = {k: v[0] for k, v in workers.items()}
    rows = rows_for(parse_csv(r.stderr, per_thread=True), "task-clock")
    by_tid = {thread_tid(row["thread"]): number(row["value"], "task-clock") for row in rows}
    print("per-thread task-clock msec by tid: %s; workers a=%d b=%d"
          % (by_tid, tids["a"], tids["b"]))
    check(tids["a"] in by_tid and tids["b"] in by_tid,
          "no per-thread line for worker tid %d and/or %d" % (tids["a"], tids["b"]))
    own = {}
    for name in ("a", "b"):
        tid, own_cpu, own_tc = workers[name]
        check(by_tid[tid] > 0, "worker %s task-clock is 0" % name)
        # the worker's own task-clock; where it could not count itself, its CPU clock (within()
        # then allows what this machine lost to steal meanwhile)
        own[name] = own_tc if own_tc is not None else own_cpu
        within(by_tid[tid], own[name], 0.05, "worker %s task-clock against its own %s"
               % (name, "task-clock" if own_tc is not None else "CPU clock"))
    within(by_tid[tids["a"]] / by_tid[tids["b"]], own["a"] / own["b"], 0.05,
           "task-clock ratio a:b against the workers' own (nominally 3:1)")


def test_stat_returns_command_exit_status():
    r = vperf("stat", "--", "sh", "-c", "exit 3")
    check(r.returncode == 3, "exit status %d, expected the command's 3" % r.returncode)


def test_stat_returns_command_exit_status_with_event():
    r = vperf("stat", "-e", "task-clock", "--", "sh", "-c", "exit 7")
    check(r.returncode == 7, "exit status %d, expected the command's 7" % r.returncode)


def test_stat_default_output_names_event_and_unit():
    r = vperf("stat", "-e", "task-clock", "--", wl("burn"), "20")
    check_ok(r)
    check("task-clock" in r.stderr, "stderr does not name task-clock")
    check("msec" in r.stderr, "stderr does not give task-clock in msec")


# ---- stat: output formats ---------------------------------------------------

def test_stat_csv_lists_requested_events():
    evs = ["task-clock", "context-switches", "page-faults"]
    r = vperf("stat", "-x,", "-e", ",".join(evs), "--", wl("burn"), "20")
    check_ok(r)
    rows = parse_csv(r.stderr)
    check([row["event"] for row in rows] == evs,
          "events %s, expected %s in order" % ([row["event"] for row in rows], evs))
    for row in rows:
        check_event_fields(row)
    check(number(one_row(rows, "page-faults")["value"], "page-faults") > 0,
          "a process that ran has page faults")


def test_stat_csv_custom_separator():
    r = vperf("stat", "-x", ";", "-e", "task-clock", "-e", "context-switches", "--",
              wl("burn"), "20")
    check_ok(r)
    rows = parse_csv(r.stderr, sep=";")
    check([row["event"] for row in rows] == ["task-clock", "context-switches"],
          "events %s" % [row["event"] for row in rows])
    for row in rows:
        check_event_fields(row)


def test_stat_json_lines_parse():
    r = vperf("stat", "-j", "-e", "task-clock", "-e", "context-switches", "--",
              wl("burn"), "50")
    check_ok(r)
    rows = parse_json(r.stderr)
    check([o["event"] for o in rows] == ["task-clock", "context-switches"],
          "events %s" % [o["event"] for o in rows])
    tc = one_row(rows, "task-clock")
    check(tc["unit"] == "msec", "task-clock unit %r" % tc["unit"])
    within(number(tc["counter-value"], "counter-value"), burn_process_ms(r.stdout), 0.10,
           "task-clock msec against burn 50's process CPU time")
    for o in rows:
        check(number(o["event-runtime"], "event-runtime") > 0, "event-runtime not > 0")
        check(0 < number(o["pcnt-running"], "pcnt-running") <= 100, "pcnt-running")


def test_stat_repeat_csv_has_stddev():
    r = vperf("stat", "-r", "3", "-x,", "-e", "task-clock", "--", wl("burn"), "30")
    check_ok(r)
    row = one_row(parse_csv(r.stderr, repeat=True), "task-clock")
    check_event_fields(row)
    sd = number(row["stddev"], "stddev")
    check(0 <= sd < 100, "stddev %s%% of a steady 30 ms burn" % row["stddev"])
    within(number(row["value"], "task-clock"), burn_process_ms(r.stdout), 0.10,
           "mean task-clock msec against burn 30's mean process CPU time")


def test_stat_repeat_json_has_variance():
    r = vperf("stat", "-r", "3", "-j", "-e", "task-clock", "--", wl("burn"), "30")
    check_ok(r)
    row = one_row(parse_json(r.stderr, repeat=True), "task-clock")
    number(row["variance"], "variance")


def test_stat_repeat_runs_command_r_times():
    log = os.path.join(TMP, "runs")
    r = vperf("stat", "-r", "3", "-e", "task-clock", "--", "sh", "-c",
              "echo run >> %s" % shlex.quote(log))
    check_ok(r)
    with open(log) as f:
        n = len(f.readlines())
    check(n == 3, "the command ran %d times, expected 3" % n)


def test_stat_interval_csv_has_timestamps():
    r = vperf("stat", "-I", "100", "-x,", "-e", "task-clock", "--", wl("burn"), "350")
    check_ok(r)
    rows = rows_for(parse_csv(r.stderr, interval=True), "task-clock")
    times = [number(row["time"], "timestamp") for row in rows]
    vals = [number(row["value"], "task-clock") for row in rows]
    print("intervals: %s" % list(zip(times, vals)))
    check(len(rows) >= 3, "%d interval lines for 350 ms at -I 100" % len(rows))
    check(all(b > a for a, b in zip(times, times[1:])), "timestamps do not increase")
    check(all(0 <= v <= 150 for v in vals),
          "a 100 ms interval of one thread holds more than 150 ms of task-clock")
    check(0.6 * 350 <= sum(vals) <= 1.1 * 350,
          "intervals add up to %.1f ms of task-clock for a 350 ms burn" % sum(vals))


def test_stat_interval_json_has_interval_key():
    r = vperf("stat", "-I", "100", "-j", "-e", "task-clock", "--", wl("burn"), "250")
    check_ok(r)
    rows = parse_json(r.stderr, interval=True)
    check(len(rows) >= 2, "%d interval objects for 250 ms at -I 100" % len(rows))
    times = [number(o["interval"], "interval") for o in rows]
    check(all(b > a for a, b in zip(times, times[1:])), "intervals do not increase")


def test_stat_per_thread_json_has_thread_key():
    r = vperf("stat", "--per-thread", "-j", "-e", "task-clock", "--", wl("split"), "60", "20")
    check_ok(r)
    tids = split_tids(r.stdout)
    rows = parse_json(r.stderr, per_thread=True)
    seen = {thread_tid(o["thread"]) for o in rows}
    check(tids["a"] in seen and tids["b"] in seen,
          "threads %s lack worker tids %s" % (sorted(seen), tids))


def test_stat_output_file_gets_the_counts():
    out = os.path.join(TMP, "counts.csv")
    r = vperf("stat", "-o", out, "-x,", "-e", "task-clock", "--", wl("burn"), "20")
    check_ok(r)
    check(not list(event_lines(r.stderr)),
          "with -o the counts must not also go to stderr: %r" % r.stderr)
    with open(out) as f:
        text = f.read()
    print("--- %s ---\n%s" % (out, text.rstrip("\n")))
    within(number(one_row(parse_csv(text), "task-clock")["value"], "task-clock"),
           burn_process_ms(r.stdout), 0.15, "task-clock msec against burn 20's process CPU time")


def test_stat_command_not_found_fails_naming_it():
    r = vperf("stat", "-e", "task-clock", "--", "/nonexistent/cmd")
    check(r.returncode != 0, "exit 0 for a command that does not exist")
    check("/nonexistent/cmd" in r.stderr, "stderr does not name the command")


# ---- hardware events --------------------------------------------------------

def test_stat_hardware_event_on_this_host():
    r = vperf("stat", "-x,", "-e", "instructions", "--", "true")
    if host_has_pmu():
        print("branch: this host has a PMU (%s): instructions must count" % PMU_PATH)
        check_ok(r)
        row = one_row(parse_csv(r.stderr), "instructions")
        check(number(row["value"], "instructions") > 0, "instructions counted 0")
    else:
        print("branch: no PMU on this host (%s absent): instructions must fail clearly"
              % PMU_PATH)
        check(r.returncode != 0, "exit 0 although instructions cannot be counted here")
        check(r.returncode > 0, "killed by signal %d" % -r.returncode)
        check(re.search(r"no hardware PMU", r.stderr, re.I),
              "stderr does not say 'no hardware PMU'")


def test_stat_instructions_u_counts_known_loop():
    if not host_has_pmu():
        raise Skip("no PMU on this host (%s is absent): hardware events cannot be "
                   "counted" % PMU_PATH)
    n = 10000000
    r = vperf("stat", "-x,", "-e", "instructions:u", "--", wl("loop"), str(n))
    check_ok(r)
    v = number(one_row(parse_csv(r.stderr), "instructions:u")["value"], "instructions:u")
    # 2*n in the loop, plus start-up and exit of a small dynamic binary
    check(2 * n <= v <= 2 * n + 2000000, "instructions:u %d for a %d-instruction loop"
          % (v, 2 * n))


# ---- bad input: clear message, non-zero status, nothing run ----------------

def bad_input(args, must_mention, run_marker=True):
    """Run vperf with bad args (+ a command that leaves a marker file when
    run_marker); it must fail cleanly, say something on stderr that contains
    one of each group of must_mention (case-insensitive), and run nothing."""
    marker = os.path.join(TMP, "ran")
    cmd = list(args)
    if run_marker:
        cmd += ["--", "touch", marker]
    r = vperf(*cmd, timeout=20)
    check(r.returncode != 0, "exit status 0 for bad input")
    check(r.returncode > 0, "killed by signal %d" % -r.returncode)
    check(r.stderr.strip(), "no message on stderr")
    check("Traceback" not in r.stderr and "Segmentation" not in r.stderr,
          "stderr shows a crash")
    for group in must_mention:
        alts = group if isinstance(group, (list, tuple)) else [group]
        check(any(a.lower() in r.stderr.lower() for a in alts),
              "stderr does not mention %s" % " or ".join(repr(a) for a in alts))
    check(not os.path.exists(marker), "the command ran although the input was bad")


def test_bad_event_named_and_close_name_suggested():
    bad_input(["stat", "-e", "task-clok"], ["task-clok", "task-clock"])


def test_bad_event_modifier_rejected():
    bad_input(["stat", "-e", "task-clock:zz"], ["task-clock:zz"])


def test_bad_pid_not_a_number():
    bad_input(["stat", "-e", "task-clock", "-p", "abc"], ["abc"], run_marker=False)


def test_bad_pid_no_such_process():
    bad_input(["stat", "-e", "task-clock", "-p", "999999999"], ["999999999"],
              run_marker=False)


def test_missing_command():
    bad_input(["stat", "-e", "task-clock"], [["command", "usage"]], run_marker=False)


def test_repeat_zero_rejected():
    bad_input(["stat", "-r", "0", "-e", "task-clock"], [["-r", "repeat"]])


def test_repeat_not_a_number_rejected():
    bad_input(["stat", "-r", "x", "-e", "task-clock"], [["-r", "repeat"]])


def test_output_unwritable_rejected():
    bad_input(["stat", "-o", "/nonexistent/dir/f", "-e", "task-clock"],
              ["/nonexistent/dir/f"])


def test_interval_too_small_rejected():
    bad_input(["stat", "-I", "1", "-e", "task-clock"], [["-I", "interval"]])


def test_csv_with_json_rejected():
    bad_input(["stat", "-x,", "-j", "-e", "task-clock"], [["-j", "json"], ["-x", "csv"]])


def test_unknown_option_rejected():
    bad_input(["stat", "--no-such-option", "-e", "task-clock"], ["no-such-option"])


def test_unknown_command_rejected():
    bad_input(["frobnicate"], ["frobnicate"], run_marker=False)


# ---- list and help -----------------------------------------------------------

NOT_USABLE = re.compile(r"not usable|unusable|unavailable|not supported|<not", re.I)


def test_list_shows_task_clock_usable():
    r = vperf("list")
    check_ok(r)
    lines = [l for l in r.stdout.splitlines() if re.search(r"\btask-clock\b", l)]
    check(lines, "task-clock is not listed")
    check(not any(NOT_USABLE.search(l) for l in lines),
          "task-clock is listed as not usable: %r" % lines)


def test_list_has_virtualization_section():
    r = vperf("list")
    check_ok(r)
    check(re.search(r"virtuali[sz]ation", r.stdout, re.I),
          "no virtualization section in vperf list")


def test_pv_device_that_is_not_vperf_is_explained():
    # VPERF_PV_DEVICE points the pv backend elsewhere; /dev/null is no vperf device.
    env = dict(os.environ, VPERF_PV_DEVICE="/dev/null")
    r = vperf("list", "vperf::steal", env=env)
    check_ok(r)
    check(re.search(r"vperf::steal\s+\[not usable: /dev/null is not a vperf device\]", r.stdout),
          "vperf::steal does not say why /dev/null cannot be used")
    r = vperf("stat", "-e", "task-clock,vperf::steal", "--", "true", env=env)
    check(r.returncode == 1, "exit status %d, expected 1" % r.returncode)
    check("'vperf::steal' needs the pv backend" in r.stderr and
          "/dev/null is not a vperf device" in r.stderr,
          "stat does not say why vperf::steal cannot be counted")


def test_list_filter_clock():
    full = vperf("list")
    check_ok(full)
    r = vperf("list", "clock")
    check_ok(r)
    check(re.search(r"\btask-clock\b", r.stdout), "task-clock missing from 'list clock'")
    check(re.search(r"\bcpu-clock\b", r.stdout), "cpu-clock missing from 'list clock'")
    for other in ("context-switches", "page-faults", "cpu-migrations"):
        check(other not in r.stdout, "'list clock' lists %s" % other)
    check(len(r.stdout) < len(full.stdout), "'list clock' is not shorter than 'list'")


def test_help_exits_0():
    r = vperf("help")
    check_ok(r)
    out = r.stdout + r.stderr
    for cmd in ("stat", "list"):
        check(re.search(r"\b%s\b" % cmd, out), "help does not mention %s" % cmd)


def test_stat_help_exits_0():
    r = vperf("stat", "--help")
    check_ok(r)
    out = r.stdout + r.stderr
    for opt in ("-e", "-x", "-j", "-r", "-I", "-o", "-p", "--per-thread"):
        check(opt in out, "stat --help does not document %s" % opt)


def test_list_help_exits_0():
    r = vperf("list", "--help")
    check_ok(r)
    check((r.stdout + r.stderr).strip(), "list --help prints nothing")


# ---- runner -------------------------------------------------------------------


# ---- vm run (a fake runner stands in for tests/vm/vm-run.sh) ------------------

def fake_runner():
    path = os.path.join(TMP, "fake-vm-run.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nfor a in \"$@\"; do echo \"ARG $a\"; done\nexit 7\n")
    os.chmod(path, 0o755)
    return dict(os.environ, VPERF_VM_RUNNER=path)


def test_vm_run_gives_the_runner_this_vperf_and_the_command():
    r = vperf("vm", "run", "--vcpus", "2", "--", "vperf", "stat", "-e", "vperf::steal", "--", "vperf-demo",
              env=fake_runner())
    check(r.returncode == 7, "exit status %d, expected the runner's 7" % r.returncode)
    args = [l[4:] for l in r.stdout.splitlines() if l.startswith("ARG ")]
    want_tail = ["--", "vperf", "stat", "-e", "vperf::steal", "--", "vperf-demo"]
    check(args[-len(want_tail):] == want_tail, "command not passed as is: %r" % args)
    check("--vperf" in args and os.path.samefile(args[args.index("--vperf") + 1], VPERF),
          "the runner is not given this vperf executable: %r" % args)
    check(args[:2] == ["--vcpus", "2"], "options not passed first: %r" % args)


def test_vm_run_no_vperf_leaves_vperf_out():
    r = vperf("vm", "run", "--no-vperf", "--", "true", env=fake_runner())
    check(r.returncode == 7, "exit status %d, expected the runner's 7" % r.returncode)
    check("ARG --vperf" not in r.stdout, "--no-vperf still passes --vperf")


def test_vm_run_without_command_rejected():
    r = vperf("vm", "run", env=fake_runner())
    check(r.returncode == 129, "exit status %d, expected 129 (usage)" % r.returncode)
    check("no command" in r.stderr, "no clear message: %r" % r.stderr)


def tests():
    return {n[len("test_"):]: f for n, f in sorted(globals().items())
            if n.startswith("test_") and callable(f)}


def setup(a, tmp):
    global VPERF, WORKLOADS, TMP
    VPERF, WORKLOADS, TMP = a.vperf, a.workloads, tmp
    if not VPERF or not os.access(VPERF, os.X_OK):
        return "the vperf binary is not built: %r" % VPERF
    for w in ("burn", "block", "split", "loop"):
        if not os.access(wl(w), os.X_OK):
            return "workload %s is not built in %r" % (w, WORKLOADS)
    return None


def main():
    return harness.main(tests(), "vperf-cli-", setup, extra_args=("--workloads",))


if __name__ == "__main__":
    sys.exit(main())
