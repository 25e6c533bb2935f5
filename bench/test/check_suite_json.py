#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a bench/suite report against the vperf-bench-suite/1 schema (bench/README.md, "The suite").

    check_suite_json.py OUTDIR      # suite.json, suite.txt, suite.svg and every bench's log

check(doc) returns the list of what is wrong with one parsed suite.json (empty: it conforms); it also judges
every PASS/MISS again from value, op and limit.
"""

import json
import math
import os
import sys
import xml.etree.ElementTree as ET

SCHEMA = "vperf-bench-suite/1"
OPS = ("<=", "<", ">=", "==")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _holds(value, op, limit, tol):
    return {"<=": value <= limit, "<": value < limit, ">=": value >= limit,
            "==": abs(value - limit) <= tol}[op]


def check(doc):
    errs = []

    def want(cond, what):
        if not cond:
            errs.append(what)
        return cond

    if not want(isinstance(doc, dict), "the document is not an object"):
        return errs
    want(doc.get("schema") == SCHEMA, "schema is %r, not %r" % (doc.get("schema"), SCHEMA))
    want(isinstance(doc.get("host"), dict), "host is not an object")
    benches = doc.get("benchmarks")
    if not want(isinstance(benches, list), "benchmarks is not a list"):
        return errs
    ids, names = set(), set()
    for b in benches:
        if not want(isinstance(b, dict), "a benchmark is not an object: %r" % (b,)):
            continue
        n = b.get("name")
        w = "benchmark %r" % n
        want(isinstance(n, str) and n and n not in names, w + ": name missing or used twice")
        names.add(n)
        for k in ("name", "status", "reason", "duration_s", "metrics", "goals", "raw"):
            want(k in b, "%s: no %s" % (w, k))
        st = b.get("status")
        want(st in ("ok", "skipped", "error"), "%s: status %r" % (w, st))
        if st != "ok":
            want(isinstance(b.get("reason"), str) and b["reason"], w + ": not ok and no reason")
        else:
            want(isinstance(b.get("raw"), dict), w + ": ok but no raw JSON line")
        want(b.get("raw") is None or isinstance(b["raw"], dict), w + ": raw is neither an object nor null")
        want(_num(b.get("duration_s")) and b["duration_s"] >= 0, w + ": duration_s is not a number >= 0")
        metrics = b.get("metrics") if isinstance(b.get("metrics"), list) else []
        want(isinstance(b.get("metrics"), list), w + ": metrics is not a list")
        mnames = {}
        for m in metrics:
            if not want(isinstance(m, dict), "%s: a metric is not an object" % w):
                continue
            mw = "%s metric %r" % (w, m.get("name"))
            want(isinstance(m.get("name"), str) and m["name"] and m["name"] not in mnames,
                 mw + ": name missing or used twice")
            mnames[m.get("name")] = m
            want(isinstance(m.get("unit"), str) and m["unit"], mw + ": no unit")
            want(m.get("status") in ("ok", "skipped"), "%s: status %r" % (mw, m.get("status")))
            if m.get("status") == "ok":
                want(_num(m.get("value")), mw + ": ok but value is not a number")
            else:
                want(m.get("value") is None, mw + ": skipped but has a value")
                want(isinstance(m.get("reason"), str) and m["reason"], mw + ": skipped and no reason")
        want(isinstance(b.get("goals"), list), w + ": goals is not a list")
        for g in b.get("goals") if isinstance(b.get("goals"), list) else []:
            if not want(isinstance(g, dict), "%s: a goal is not an object" % w):
                continue
            gw = "%s goal %r" % (w, g.get("id"))
            for k in ("id", "text", "metric", "op", "limit", "value", "result"):
                want(k in g, "%s: no %s" % (gw, k))
            want(isinstance(g.get("id"), str) and g["id"] not in ids, gw + ": id missing or used twice")
            ids.add(g.get("id"))
            want(g.get("op") in OPS, "%s: op %r" % (gw, g.get("op")))
            want(_num(g.get("limit")), gw + ": limit is not a number")
            r = g.get("result")
            want(r in ("PASS", "MISS", "SKIP", "NOT-JUDGEABLE"), "%s: result %r" % (gw, r))
            if r in ("SKIP", "NOT-JUDGEABLE"):
                want(isinstance(g.get("reason"), str) and g["reason"], gw + ": %s and no reason" % r)
            if r == "SKIP":
                want(g.get("value") is None, gw + ": SKIP with a value")
            if r in ("PASS", "MISS", "NOT-JUDGEABLE"):
                want(_num(g.get("value")), gw + ": %s without a value" % r)
                m = mnames.get(g.get("metric"))
                want(m is not None and m.get("value") == g.get("value"),
                     gw + ": value is not its metric's (%r)" % (g.get("metric"),))
            if r in ("PASS", "MISS") and _num(g.get("value")) and _num(g.get("limit")) and g.get("op") in OPS:
                holds = _holds(g["value"], g["op"], g["limit"], g.get("tolerance", 0))
                want(holds == (r == "PASS"), "%s: %r %s %r is %s, but the result is %s" % (
                    gw, g["value"], g["op"], g["limit"], holds, r))
    return errs


def check_outdir(outdir):
    """What is wrong with a whole report directory."""
    errs = []
    try:
        with open(os.path.join(outdir, "suite.json"), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return ["suite.json: %s" % e]
    errs += ["suite.json: " + e for e in check(doc)]
    try:
        root = ET.parse(os.path.join(outdir, "suite.svg")).getroot()
        if root.tag != "{http://www.w3.org/2000/svg}svg":
            errs.append("suite.svg: the root is %s, not svg" % root.tag)
    except (OSError, ET.ParseError) as e:
        errs.append("suite.svg: %s" % e)
    if not os.path.isfile(os.path.join(outdir, "suite.txt")):
        errs.append("no suite.txt")
    for b in doc.get("benchmarks") or []:
        if isinstance(b, dict) and not os.path.isfile(os.path.join(outdir, "%s.log" % b.get("name"))):
            errs.append("no %s.log" % b.get("name"))
    return errs


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_suite_json.py OUTDIR")
    problems = check_outdir(sys.argv[1])
    for p in problems:
        print("check_suite_json: " + p, file=sys.stderr)
    print("check_suite_json: %s" % ("%d problems" % len(problems) if problems else "ok"))
    sys.exit(1 if problems else 0)
