#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""call_circles.py BUILD_DIR: no call circle between the source files of profiler/ and hv/vmm.

Each object file built for them says (nm) which functions it defines and which it calls from
other objects; a circle is a set of files that call each other round (a strongly connected
component of more than one file). Prints each group's graph size and every circle, and exits 1
if there is one (issue 22: "No call circle in profiler/ or hv/vmm"). Objects of the fuzzers
(built again from the same sources) are left out.
"""
import collections
import glob
import os
import subprocess
import sys

GROUPS = [
    ("profiler", "profiler/**/*.c.o"),
    ("hv/vmm", "hv/vmm/CMakeFiles/vperf_vmm_core.dir/*.c.o"),
]


def file_graph(objs):
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        name = os.path.relpath(o).split(".dir/", 1)[-1][:-2]   # the source's path
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDRB":
                defs.setdefault(f[2], name)
            elif len(f) == 2 and f[0] == "U":
                uses[name].add(f[1])
    g = collections.defaultdict(set)
    for f, us in uses.items():
        for u in us:
            if u in defs and defs[u] != f:
                g[f].add(defs[u])
    return g


def circles(g):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: call_circles.py BUILD_DIR", file=sys.stderr)
        return 2
    os.chdir(sys.argv[1])
    bad = 0
    for label, pattern in GROUPS:
        objs = [o for o in glob.glob(pattern, recursive=True) if "/fuzz" not in o]
        if not objs:
            print("SKIP: no object files of %s under %s (not built)" % (label, sys.argv[1]))
            return 77
        g = file_graph(objs)
        found = circles(g)
        print("%s: %d objects, %d calling others; circles: %s"
              % (label, len(objs), len(g), found or "none"))
        for c in found:
            for f in c:
                print("  %s calls %s" % (f, ", ".join(sorted(set(g[f]) & set(c)))))
        bad += len(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
