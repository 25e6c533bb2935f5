# SPDX-License-Identifier: MIT
"""What the integration test scripts share: their verdicts (Skip, Fail, check) and their main(),
which runs one named test in a fresh temporary directory and turns its verdict into ctest's exit
status: 0 pass, 1 fail, 77 skip (after printing "SKIP: <reason>")."""

import argparse
import shutil
import tempfile


class Skip(Exception):
    pass


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


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
