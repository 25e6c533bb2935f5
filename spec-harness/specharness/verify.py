"""Output verification, as SPEC's specdiff: line by line, words exactly, numbers within a tolerance."""

import re

_NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _is_num(tok):
    return _NUM.match(tok) is not None


def verify_output(actual, expected, reltol, abstol):
    """(ok, detail): every line of actual matches expected's: non-numeric tokens equal, numeric tokens within
    abstol + reltol * |expected|. A trailing newline is not a difference; an empty output never verifies."""
    if not actual.strip():
        return False, "the benchmark wrote no output"
    al, el = actual.rstrip("\n").split("\n"), expected.rstrip("\n").split("\n")
    if len(al) != len(el):
        return False, "%d lines, %d expected" % (len(al), len(el))
    for n, (a, e) in enumerate(zip(al, el), 1):
        at, et = a.split(), e.split()
        if len(at) != len(et):
            return False, "line %d: '%s', expected '%s'" % (n, a, e)
        for x, y in zip(at, et):
            if x == y:
                continue
            if _is_num(x) and _is_num(y):
                if abs(float(x) - float(y)) <= abstol + reltol * abs(float(y)):
                    continue
                return False, "line %d: %s, expected %s (tolerance %g + %g relative)" % (n, x, y, abstol, reltol)
            return False, "line %d: '%s', expected '%s'" % (n, x, y)
    return True, "%d lines match" % len(el)
