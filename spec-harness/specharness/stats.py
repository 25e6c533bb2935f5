"""Statistics of spec-harness (METHOD.md): SPEC's median, geometric means, t-intervals of paired ratios, and the
noise test of `compare`. Standard library only."""

import math
import statistics

# Student's t, two-sided 95% (the 0.975 quantile), by degrees of freedom 1..30.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def median(xs):
    """SPEC CPU's median: the middle value; for an even count the lower of the two middle values (a value that
    was measured, never an average of two runs)."""
    if not xs:
        raise ValueError("median of nothing")
    s = sorted(xs)
    return s[(len(s) - 1) // 2]


def geomean(xs):
    if not xs or any(x <= 0 for x in xs):
        raise ValueError("geomean needs positive values")
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def t975(df):
    """The 0.975 quantile of Student's t with df degrees of freedom (table to 30, then the normal expansion)."""
    if df < 1:
        raise ValueError("df must be >= 1")
    if df <= 30:
        return _T975[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def ratio_ci(ratios):
    """95% interval of a ratio from paired per-iteration ratios: the mean of their logs +- t * sd / sqrt(n),
    exponentiated. (None, None) with fewer than 2 ratios."""
    if len(ratios) < 2:
        return (None, None)
    logs = [math.log(r) for r in ratios]
    m = statistics.mean(logs)
    half = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return (math.exp(m - half), math.exp(m + half))


def noise_test(a, b):
    """Welch's t-test on log-times of two samples. Returns (change, beyond_noise): change = median(b)/median(a)
    - 1; beyond_noise True/False at 95%, None when either side has fewer than 2 values."""
    change = median(b) / median(a) - 1
    if len(a) < 2 or len(b) < 2:
        return change, None
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    va, vb = statistics.variance(la) / len(la), statistics.variance(lb) / len(lb)
    diff = statistics.mean(lb) - statistics.mean(la)
    if va + vb == 0:
        return change, diff != 0
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va ** 2 / (len(la) - 1) if va else 0) + (vb ** 2 / (len(lb) - 1) if vb else 0))
    return change, abs(t) > t975(max(1, int(df)))
