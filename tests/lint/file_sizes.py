#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""file_sizes.py SOURCE_DIR: the profiler's product sources stay small enough to read.

Every .c file under profiler/ (its fuzzers left out: they are test code) has fewer than 1,000
lines, and builtin-record.c, which only parses options and calls the recorder, fewer than 500
(issue 22). Prints the five largest files either way, and exits 1 naming each file over its
limit.
"""
import glob
import os
import sys

LIMIT = 1000
LIMITS = {"profiler/builtin-record.c": 500}


def main():
    src = sys.argv[1]
    sizes = []
    for path in glob.glob(os.path.join(src, "profiler", "**", "*.c"), recursive=True):
        rel = os.path.relpath(path, src)
        if "/fuzz/" in rel:
            continue
        with open(path, encoding="utf-8") as f:
            sizes.append((sum(1 for _ in f), rel))
    if not sizes:
        print("no profiler sources under", src)
        return 1
    sizes.sort(reverse=True)
    print("largest:", ", ".join(f"{r} {n}" for n, r in sizes[:5]))
    over = [(n, r) for n, r in sizes if n >= LIMITS.get(r, LIMIT)]
    for n, r in over:
        print(f"FAIL {r}: {n} lines, limit {LIMITS.get(r, LIMIT)}: split it by what it does")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
