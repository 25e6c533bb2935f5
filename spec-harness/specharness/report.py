"""Reports of a summary (results.summarize): a text table, one self-contained HTML page with SVG charts, and the
comparison of two summaries."""

import html

from . import stats


def _pct(r):
    return "-" if r is None else "%+.2f%%" % (r * 100)


def _ci(ci):
    lo, hi = ci
    return "" if lo is None else " [%+.1f..%+.1f]" % ((lo - 1) * 100, (hi - 1) * 100)


def text_table(s):
    h = s["host"]
    lines = ["spec-harness: size %s, %d iteration(s), medians (SPEC's rule); host %s, %s, guests %s" % (
        s["size"], s["iterations"], h.get("cpu", "?"), h.get("kernel", "?"), h.get("virt_mode", "?")), ""]
    modes = s["modes"]
    lines.append("elapsed (s, median)")
    lines.append("%-10s" % "benchmark" + "".join("%18s" % m for m in modes))
    for b in s["benchmarks"]:
        row = "%-10s" % b
        for m in modes:
            c = s["cells"].get("%s|%s" % (b, m))
            invalid = any(i["benchmark"] == b and i["mode"] == m for i in s["invalid"])
            row += "%18s" % ("INVALID" if invalid else "%.3f" % c["median"] if c else "-")
        lines.append(row)
    lines.append("")
    for key, per in s["overhead"].items():
        gm = s["geomean"][key]
        lines.append("overhead %s: geomean %s%s over %d benchmarks" % (key, _pct(gm["ratio"] - 1), _ci(gm["ci"]),
                                                                     gm["benchmarks"]))
        lines.append("  " + ", ".join("%s %s%s" % (b, _pct(p["ratio"] - 1), _ci(p["ci"])) for b, p in per.items()))
    if s["accuracy"]:
        lines += ["", "accuracy (guest+count): per-thread vperf::vcpu-clock vs the thread's CPU time"]
        for b, a in s["accuracy"].items():
            lines.append("  %-10s worst %-9s median %-9s whole run %-9s threads %d (+%d under 150 ms, worst %s)%s" % (
                b, _pct(a.get("worst")), _pct(a.get("median")), _pct(a.get("whole_run")), a["threads_judged"],
                a["threads_too_short"], _pct(a.get("worst_short")),
                "  guest/native CPU %.2fx" % a["guest_vs_native_cpu"]
                if "guest_vs_native_cpu" in a else ""))
        first = next(iter(s["accuracy"].values()))
        lines.append("  hardware events: %s" % first["hardware_events"])
    for m, sm in s["sampling"].items():
        lines.append("sampling %s: %d samples in %.2f CPU-s = %.1f per CPU-s (asked %d Hz), lost %d" % (
            m, sm["samples"], sm["cpu_s"], sm["per_cpu_s"] or 0, sm["hz"], sm["lost"]))
    lines += ["", "goals"]
    for g in s["goals"]:
        v = "-" if g["value"] is None else ("%+.2f%%" % (g["value"] * 100))
        lines.append("  %-14s %-9s %s%s" % (g["result"], v, g["text"], " (%s)" % g["reason"] if g["reason"] else ""))
    if s["invalid"]:
        lines += ["", "INVALID runs (never counted):"]
        lines += ["  %s %s iteration %d: %s: %s" % (i["benchmark"], i["mode"], i["iteration"] + 1,
                                                    i["status"].upper(), i["reason"]) for i in s["invalid"]]
    for sk in s["skipped"]:
        lines.append("skipped %s: %s" % (sk["mode"], sk["reason"]))
    return "\n".join(lines) + "\n"


_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def _bars_svg(title, groups, series, values, limit=None, unit="%"):
    """Grouped horizontal bars: values[(group, series)] = (value, lo, hi) in percent; a dashed line at limit."""
    e = html.escape
    row_h, bar_h, left, width = 18 * max(1, len(series)) + 10, 14, 110, 520
    height = 60 + row_h * len(groups) + 20 * len(series)
    allv = [x for v in values.values() for x in v if x is not None] + ([limit] if limit is not None else []) + [0]
    lo_v, hi_v = min(allv), max(allv)
    if hi_v - lo_v < 1e-9:
        hi_v = lo_v + 1
    pad = (hi_v - lo_v) * 0.08
    lo_v, hi_v = lo_v - pad, hi_v + pad

    def x(v):
        return left + (v - lo_v) / (hi_v - lo_v) * width

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="11">' % (left + width + 20, height),
           '<text x="%d" y="16" font-size="13" font-weight="bold">%s</text>' % (left, e(title))]
    y0 = 30
    out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>' % (x(0), y0, x(0), y0 + row_h * len(groups)))
    if limit is not None:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c00" stroke-dasharray="4,3"/>'
                   % (x(limit), y0, x(limit), y0 + row_h * len(groups)))
        out.append('<text x="%.1f" y="%d" fill="#c00">goal %g%s</text>' % (x(limit) + 3, y0 - 3, limit, unit))
    for gi, g in enumerate(groups):
        gy = y0 + gi * row_h
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 6, gy + row_h / 2 + 4, e(g)))
        for si, sname in enumerate(series):
            v = values.get((g, sname))
            if not v or v[0] is None:
                continue
            val, lo, hi = v
            by = gy + 5 + si * 18
            x1, x2 = sorted((x(0), x(val)))
            out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %.2f%s</title>'
                       '</rect>' % (x1, by, max(x2 - x1, 1), bar_h, _COLORS[si % len(_COLORS)], e(g), e(sname),
                                    val, unit))
            if lo is not None and hi is not None:
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000"/>'
                           % (x(lo), by + bar_h / 2, x(hi), by + bar_h / 2))
    ay = y0 + row_h * len(groups) + 4
    for k in range(5):	# axis ticks
        v = lo_v + (hi_v - lo_v) * k / 4
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%.1f%s</text>' % (x(v), ay + 10, v, unit))
    for si, sname in enumerate(series):
        ly = ay + 24 + si * 16
        out.append('<rect x="%d" y="%d" width="12" height="10" fill="%s"/><text x="%d" y="%d">%s</text>'
                   % (left, ly - 9, _COLORS[si % len(_COLORS)], left + 16, ly, e(sname)))
    out.append("</svg>")
    return "\n".join(out)


def write_html(s, path):
    e = html.escape
    def overhead_chart(keys, title):
        vals = {}
        for key in keys:
            for b, p in s["overhead"][key].items():
                lo, hi = p["ci"]
                vals[(b, key)] = ((p["ratio"] - 1) * 100, None if lo is None else (lo - 1) * 100,
                                  None if hi is None else (hi - 1) * 100)
        if not vals:
            return "<p>no runs to compare</p>"
        return _bars_svg(title, s["benchmarks"], keys, vals)

    vkeys = [k for k in s["overhead"] if k != "guest vs native"]
    over = overhead_chart(vkeys, "vperf's overhead: median ratio - 1, whiskers the 95% interval")
    virt = overhead_chart([k for k in s["overhead"] if k == "guest vs native"],
                          "The guest against native (the virtualization baseline)")
    acc_vals = {(b, "worst per-thread error"): (a["worst"] * 100, None, None)
                for b, a in s["accuracy"].items() if "worst" in a}
    acc = _bars_svg("Accuracy: worst per-thread vcpu-clock error vs CPU time",
                    [b for b in s["benchmarks"] if (b, "worst per-thread error") in acc_vals],
                    ["worst per-thread error"], acc_vals, limit=2.0) if acc_vals else "<p>no guest+count runs</p>"
    goals = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
        e(g["result"]), "-" if g["value"] is None else "%+.2f%%" % (g["value"] * 100), e(g["text"]),
        e(g["reason"] or "")) for g in s["goals"])
    invalid = "".join("<li>%s %s iteration %d: %s: %s</li>" % (e(i["benchmark"]), e(i["mode"]), i["iteration"] + 1,
                                                               e(i["status"]), e(str(i["reason"])))
                      for i in s["invalid"]) or "<li>none</li>"
    host = "".join("<tr><td>%s</td><td>%s</td></tr>" % (e(str(k)), e(str(v))) for k, v in s["host"].items())
    page = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>spec-harness report</title>
<style>body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}pre{background:#f6f6f6;padding:1em}</style></head>
<body><h1>spec-harness: vperf's overhead and accuracy</h1>
<h2>Goals</h2><table><tr><th>result</th><th>value</th><th>goal</th><th>note</th></tr>%s</table>
<h2>Overhead</h2>%s
<h2>Accuracy</h2>%s
<h2>Virtualization baseline</h2>%s
<h2>Invalid runs (never counted)</h2><ul>%s</ul>
<h2>Table</h2><pre>%s</pre>
<h2>Host</h2><table>%s</table>
</body></html>
""" % (goals, over, acc, virt, invalid, e(text_table(s)), host)
    with open(path, "w") as f:
        f.write(page)


def compare_text(a, b):
    lines = ["change from A to B in the median elapsed time; 'beyond noise' by Welch's t-test on log-times at 95%",
             "%-10s %-18s %10s %10s %9s  %s" % ("benchmark", "mode", "A (s)", "B (s)", "change", "verdict")]
    common = [k for k in a["cells"] if k in b["cells"]]
    ratios = []
    for k in sorted(common):
        ca, cb = a["cells"][k], b["cells"][k]
        change, beyond = stats.noise_test(ca["values"], cb["values"])
        ratios.append(1 + change)
        bench, mode = k.split("|")
        verdict = "cannot judge (1 iteration)" if beyond is None else "beyond noise" if beyond else "within noise"
        lines.append("%-10s %-18s %10.3f %10.3f %+8.2f%%  %s" % (bench, mode, ca["median"], cb["median"],
                                                                  change * 100, verdict))
    if ratios:
        lines.append("geomean change over %d cells: %+.2f%%" % (len(ratios), (stats.geomean(ratios) - 1) * 100))
    else:
        lines.append("no benchmark and mode in common")
    return "\n".join(lines) + "\n"
