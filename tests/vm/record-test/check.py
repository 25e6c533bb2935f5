#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Known answers on a VM recording, through babeltrace2 (the reader users have).

  check.py conserve DIR THREADS TOTAL [REFUSED]
                                        every marker "c" there once, each thread's in order, all
                                        TOTAL of them, and the recording's losses exactly the REFUSED
                                        marker calls (-ENOSPC) the writers saw and made again (default 0)
  check.py order DIR N PORT             for each of N triples: t(A_i) < t(i-th exit at PORT) < t(B_i)
  check.py prefix DIR THREADS MIN       a recording cut short (its recorder killed): babeltrace2 reads it with
                                        exit 0, and each thread's "s" markers are 0, 1, ... k-1 (no gap, no
                                        duplicate, in order), from 1..THREADS threads, at least MIN in all

Prints what it found; exit 0 pass, 1 fail, 2 usage or unreadable recording.
"""
import re
import subprocess
import sys

EV = re.compile(r'^\[(\d+)\] \(.*?\) \S+ (\w+): \{ layer = \( "(\w+)".*?cpu_id = (\d+) \}, \{ (.*) \}$')


def events(d):
    p = subprocess.run(["babeltrace2", "--clock-cycles", d], capture_output=True, text=True)
    if p.returncode:
        print(f"babeltrace2 {d}: exit {p.returncode}: {p.stderr.strip()}")
        sys.exit(2)
    for line in p.stdout.splitlines():
        m = EV.match(line)
        if m:
            yield int(m.group(1)), m.group(2), m.group(5)
    # discarded-event warnings are the recording's losses; babeltrace2 prints them on stderr
    events.warnings = p.stderr


def field(payload, name):
    m = re.search(r'\b' + name + r' = ("[^"]*"|[^,]+)', payload)
    return m.group(1).strip('"') if m else None


def header_losses(d):
    lost = 0
    with open(d + "/metadata") as f:
        for line in f:
            m = re.match(r'\s*summary_lost_(\w+) = "(\d+)";', line)
            if m:
                lost += int(m.group(2))
    return lost


def conserve(d, threads, total, refused):
    seen = {}
    dups = disorder = 0
    for _, name, p in events(d):
        if name != "marker" or field(p, "name") != "c":
            continue
        v = int(field(p, "value"))
        t, i = v >> 32, v & 0xffffffff
        last = seen.setdefault(t, [])
        if last and i <= last[-1]:
            if i == last[-1]:
                dups += 1
            else:
                disorder += 1
        last.append(i)
    got = sum(len(v) for v in seen.values())
    lost = header_losses(d)
    print(f"conserve: {got} markers from {len(seen)} threads, lost (recording) {lost}, "
          f"duplicates {dups}, out of order {disorder}, expected {total} and {refused} refused calls")
    ok = got == total and lost == refused and not dups and not disorder and len(seen) <= threads
    return ok


def order(d, n, port):
    a, b, x = {}, {}, []
    for ts, name, p in events(d):
        if name == "marker" and field(p, "name") in ("A", "B"):
            (a if field(p, "name") == "A" else b)[int(field(p, "value"))] = ts
        elif name == "vmm_exit" and field(p, "addr") and int(field(p, "addr"), 16) == port:
            x.append(ts)
    bad = 0
    checked = 0
    for i in range(n):
        if i in a and i in b and i < len(x):
            checked += 1
            if not a[i] < x[i] < b[i]:
                bad += 1
                if bad <= 5:
                    print(f"order: triple {i}: A {a[i]} exit {x[i]} B {b[i]}")
    print(f"order: {checked} triples checked of {n} (A {len(a)}, B {len(b)}, exits {len(x)}), "
          f"violations {bad}")
    return checked == n and bad == 0


def prefix(d, threads, least):
    nxt = {}
    bad = 0
    for _, name, p in events(d):
        if name != "marker" or field(p, "name") != "s":
            continue
        v = int(field(p, "value"))
        t, i = v >> 32, v & 0xffffffff
        if i != nxt.get(t, 0):
            bad += 1
            if bad <= 5:
                print(f"prefix: thread {t}: marker {i} where {nxt.get(t, 0)} was due")
        nxt[t] = max(nxt.get(t, 0), i + 1)
    got = sum(nxt.values())
    print(f"prefix: {got} markers from {len(nxt)} threads ({', '.join(str(n) for n in nxt.values())}), "
          f"{bad} out of sequence; babeltrace2 warnings: {len(events.warnings.splitlines())} lines")
    return bad == 0 and got >= least and 1 <= len(nxt) <= threads


def main():
    if len(sys.argv) not in (5, 6) or sys.argv[1] not in ("conserve", "order", "prefix") or \
            (len(sys.argv) == 6 and sys.argv[1] != "conserve"):
        print(__doc__)
        return 2
    d, p1, p2 = sys.argv[2], int(sys.argv[3], 0), int(sys.argv[4], 0)
    if sys.argv[1] == "conserve":
        ok = conserve(d, p1, p2, int(sys.argv[5]) if len(sys.argv) == 6 else 0)
    elif sys.argv[1] == "prefix":
        ok = prefix(d, p1, p2)
    else:
        ok = order(d, p1, p2)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
