"""Raw runs (runs.jsonl, one JSON object per finished run) and the summary every report is made from."""

import json
import os
import sys

from . import stats

REQUIRED = ("benchmark", "mode", "iteration", "seq", "status", "elapsed_s", "verify")
STATUSES = ("ok", "verify-failed", "error", "skipped")
# Threads with less CPU time than this are not judged against the 2% goal (METHOD.md): the thread's own clock
# cannot see ~1..4 ms of its life that vperf counts (exec and set-up before counting starts, the exit after the
# thread's last clock read); 3 ms is 2% of 150 ms. Their errors are still reported, as worst_short.
MIN_THREAD_NS = 150_000_000

# The goals, in one place: (id, text, limit).
GOALS = (
    ("count-overhead", "counting overhead (guest+count vs guest) <= 1% geomean", 0.01),
    ("sample-overhead-1khz", "sampling overhead at 1 kHz (guest+sample@1000 vs guest) <= 3% geomean", 0.03),
    ("vcpu-clock-accuracy", "per-thread vperf::vcpu-clock within 2% of the thread's CPU time, every benchmark",
     0.02),
)


def append_run(path, rec):
    with open(path, "a") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def drop_unfinished_tail(path):
    """Cut a last line that an interrupted write left without its newline, so that appending goes on cleanly.
    Returns the number of bytes dropped."""
    with open(path, "rb+") as f:
        data = f.read()
        if not data or data.endswith(b"\n"):
            return 0
        keep = data.rfind(b"\n") + 1
        f.truncate(keep)
        return len(data) - keep


def load_runs(path):
    """Every run of runs.jsonl. A bad line is an error naming it; a cut-off last line (an interrupted write) is
    dropped with a warning, and its run is done again on --resume."""
    runs = []
    with open(path) as f:
        lines = f.read().split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            missing = [k for k in REQUIRED if k not in rec]
            if missing or rec["status"] not in STATUSES:
                raise ValueError("missing %s or bad status" % ", ".join(missing))
        except ValueError as e:
            if i == last and not line.endswith("}"):
                sys.stderr.write("spec-harness: %s:%d: an unfinished last line (interrupted?): ignored\n"
                                 % (path, i + 1))
                continue
            raise ValueError("%s:%d: not a run record: %s" % (path, i + 1, e)) from None
        runs.append(rec)
    return runs


def _ratio_block(times_a, times_b):
    """median(b)/median(a), the paired per-iteration ratios, their CI. times_*: {iteration: elapsed}."""
    its = sorted(set(times_a) & set(times_b))
    if not its:
        return None
    pairs = [times_b[i] / times_a[i] for i in its]
    lo, hi = stats.ratio_ci(pairs)
    return {"ratio": stats.median(list(times_b.values())) / stats.median(list(times_a.values())),
            "paired": pairs, "ci": [lo, hi], "iterations": its}


def _verdict(value, ci, limit):
    """met / MISSED when the 95% interval (or, without one, the median) is on one side of the limit; not
    judgeable when the interval straddles it."""
    lo, hi = ci
    if lo is None:
        return ("met" if value <= limit else "MISSED"), "one iteration: no interval, judged on the median"
    if hi - 1 <= limit:
        return "met", None
    if lo - 1 > limit:
        return "MISSED", None
    return "not judgeable", "the runs' 95%% interval %+.1f%%..%+.1f%% straddles the goal: more iterations or a " \
        "quieter machine" % ((lo - 1) * 100, (hi - 1) * 100)


def summarize(runs, cfg, host):
    order = ("native", "native+count", "guest", "guest+count", "guest+sample", "guest+record")
    modes = sorted({r["mode"] for r in runs},
                   key=lambda m: (order.index(m.split("@")[0]), int(m.split("@")[1]) if "@" in m else 0))
    benches = [b for b in cfg.benchmarks if any(r["benchmark"] == b for r in runs)]
    out = {"host": host, "size": cfg.size, "iterations": cfg.iterations, "benchmarks": benches, "modes": modes,
           "cells": {}, "invalid": [], "skipped": [], "overhead": {}, "geomean": {}, "accuracy": {},
           "sampling": {}, "goals": []}
    times = {}		# (bench, mode) -> {iteration: elapsed}
    for r in runs:
        key = (r["benchmark"], r["mode"])
        if r["status"] in ("error", "verify-failed"):
            out["invalid"].append({"benchmark": r["benchmark"], "mode": r["mode"], "iteration": r["iteration"],
                                   "status": r["status"], "reason": r.get("reason")})
        elif r["status"] == "skipped":
            if not any(s["mode"] == r["mode"] for s in out["skipped"]):
                out["skipped"].append({"mode": r["mode"], "reason": r.get("reason")})
        else:
            times.setdefault(key, {})[r["iteration"]] = r["elapsed_s"]
    bad = {(i["benchmark"], i["mode"]) for i in out["invalid"]}
    for (b, m), t in times.items():
        if (b, m) in bad:
            continue
        v = list(t.values())
        out["cells"]["%s|%s" % (b, m)] = {"n": len(v), "median": stats.median(v), "min": min(v), "max": max(v),
                                          "values": [t[i] for i in sorted(t)]}

    def cell_times(b, m):
        return None if (b, m) in bad else times.get((b, m))

    # overheads: each guest+* mode against guest; guest against native; native+count against native
    pairs = [(m, "guest") for m in modes if m.startswith("guest+")] + [("guest", "native"),
                                                                      ("native+count", "native")]
    for m, base in pairs:
        per = {}
        for b in benches:
            ta, tb = cell_times(b, base), cell_times(b, m)
            if ta and tb:
                blk = _ratio_block(ta, tb)
                if blk:
                    per[b] = blk
        if not per:
            continue
        key = "%s vs %s" % (m, base)
        out["overhead"][key] = per
        gm = stats.geomean([p["ratio"] for p in per.values()])
        its = sorted(set.intersection(*[set(p["iterations"]) for p in per.values()]))
        per_it = [stats.geomean([p["paired"][p["iterations"].index(i)] for p in per.values()]) for i in its]
        lo, hi = stats.ratio_ci(per_it) if len(per) == len(benches) else (None, None)
        out["geomean"][key] = {"ratio": gm, "ci": [lo, hi], "benchmarks": len(per)}

    # accuracy: per-thread vcpu-clock against the thread's own CPU time (guest+count)
    for b in benches:
        errs, short, whole, short_errs = [], 0, [], []
        for r in runs:
            if r["benchmark"] != b or r["mode"] != "guest+count" or r["status"] != "ok":
                continue
            tot_c = tot_v = 0
            for t in r.get("threads", []):
                v = t.get("counts", {}).get("vperf::vcpu-clock")
                if v is None:
                    continue
                tot_c += t["cpu_ns"]
                tot_v += v
                if t["cpu_ns"] < MIN_THREAD_NS:
                    short += 1
                    if t["cpu_ns"]:
                        short_errs.append((v - t["cpu_ns"]) / t["cpu_ns"])
                    continue
                errs.append((v - t["cpu_ns"]) / t["cpu_ns"])
            if tot_c:
                whole.append((tot_v - tot_c) / tot_c)
        if not any(r["benchmark"] == b and r["mode"] == "guest+count" for r in runs):
            continue
        acc = {"threads_judged": len(errs), "threads_too_short": short}
        if errs:
            acc["worst"] = max(errs, key=abs)
            acc["median"] = stats.median(sorted(errs, key=abs))
        if whole:
            acc["whole_run"] = max(whole, key=abs)
        if short_errs:
            acc["worst_short"] = max(short_errs, key=abs)
        nat = [r for r in runs if r["benchmark"] == b and r["mode"] == "native+count" and r["status"] == "ok"]
        gst = [r for r in runs if r["benchmark"] == b and r["mode"] == "guest+count" and r["status"] == "ok"]
        if nat and gst:
            tc = stats.median([r["counts"].get("task-clock", 0) for r in nat])
            vc = stats.median([r["counts"].get("vperf::vcpu-clock", 0) for r in gst])
            if tc and vc:
                acc["guest_vs_native_cpu"] = vc / tc
        have_insn = nat and gst and all("instructions" in r["counts"] for r in nat + gst)
        acc["hardware_events"] = ("instructions: guest/native %.4f" % (
            stats.median([r["counts"]["instructions"] for r in gst]) /
            stats.median([r["counts"]["instructions"] for r in nat]))) if have_insn else \
            "not judgeable: no hardware PMU on this host" if not host.get("hardware_pmu") else \
            "not measured: add instructions to count_events"
        out["accuracy"][b] = acc

    # sampling: samples per CPU-second against the asked frequency
    for m in modes:
        if not m.startswith("guest+sample@"):
            continue
        hz = int(m.split("@")[1])
        rs = [r for r in runs if r["mode"] == m and r["status"] == "ok"]
        cpu = sum(sum(t["cpu_ns"] for t in r.get("threads", [])) for r in rs) / 1e9
        n = sum(r.get("samples") or 0 for r in rs)
        out["sampling"][m] = {"hz": hz, "samples": n, "lost": sum(r.get("samples_lost") or 0 for r in rs),
                              "cpu_s": cpu, "per_cpu_s": n / cpu if cpu else None}

    # goals
    nested = host.get("virt_mode") == "nested"
    for gid, text, limit in GOALS:
        g = {"id": gid, "text": text, "limit": limit, "value": None, "result": "not judgeable", "reason": None}
        if gid == "count-overhead":
            gm = out["geomean"].get("guest+count vs guest")
            if not gm:
                g["reason"] = "no guest+count and guest runs"
            else:
                g["value"] = gm["ratio"] - 1
                g["result"], g["reason"] = _verdict(g["value"], gm["ci"], limit)
                if nested:
                    g["reason"] = (g["reason"] + "; " if g["reason"] else "") + \
                        "measured under nested TCG: a ratio within this run"
        elif gid == "sample-overhead-1khz":
            gm = out["geomean"].get("guest+sample@1000 vs guest")
            measured = {k: v["ratio"] - 1 for k, v in out["geomean"].items() if k.startswith("guest+sample@")}
            g["measured"] = measured
            if gm:
                g["value"] = gm["ratio"] - 1
            if nested:
                g["reason"] = ("not judgeable here: nested TCG is not hardware speed (a sample costs ~0.5 ms "
                               "there); measured: %s" % (", ".join("%s %+.2f%%" % (k.split(" ")[0], v * 100)
                                                                   for k, v in measured.items()) or "none"))
            elif gm:
                g["result"], g["reason"] = _verdict(g["value"], gm["ci"], limit)
            else:
                g["reason"] = "no guest+sample@1000 runs"
        else:
            worst = [abs(a["worst"]) for a in out["accuracy"].values() if "worst" in a]
            if not worst:
                g["reason"] = "no guest+count thread long enough to judge"
            else:
                g["value"] = max(worst)
                g["result"] = "met" if g["value"] <= limit else "MISSED"
        out["goals"].append(g)
    return out
