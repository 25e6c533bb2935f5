"""The config of a run (README.md, "Config") and each benchmark's bench.conf."""

import configparser
import dataclasses
import datetime
import os

MODES = ("native", "native+count", "guest", "guest+count", "guest+sample", "guest+record")
SIZES = ("test", "train", "ref")
RUN_KEYS = ("benchmarks", "modes", "size", "iterations", "sample_hz", "sample_frames", "vcpus", "count_events",
            "timeout", "output")


class ConfigError(Exception):
    pass


@dataclasses.dataclass
class Config:
    path: str
    benchmarks: list
    modes: list
    size: str
    iterations: int
    sample_hz: list
    sample_frames: int
    vcpus: int
    count_events: str
    timeout: int
    output: str
    threads: dict


@dataclasses.dataclass
class BenchMeta:
    description: str
    kind: str
    threads: int
    reltol: float
    abstol: float


def _int(path, where, val, lo, hi):
    try:
        n = int(val)
    except ValueError:
        raise ConfigError("%s: %s: '%s' is not a number" % (path, where, val)) from None
    if not lo <= n <= hi:
        raise ConfigError("%s: %s: %d is out of range (%d..%d)" % (path, where, n, lo, hi))
    return n


def _list(val):
    return [x.strip() for x in val.split(",") if x.strip()]


def load_config(path, known_benchmarks):
    cp = configparser.ConfigParser(interpolation=None)
    try:
        with open(path) as f:
            cp.read_file(f)
    except configparser.Error as e:
        raise ConfigError("%s: %s" % (path, str(e).replace("\n", " "))) from None
    if "run" not in cp:
        raise ConfigError("%s: no [run] section" % path)
    for sec in cp.sections():
        if sec != "run" and not sec.startswith("benchmark."):
            raise ConfigError("%s: [%s]: unknown section (allowed: [run], [benchmark.NAME])" % (path, sec))
    run = cp["run"]
    for k in run:
        if k not in RUN_KEYS:
            raise ConfigError("%s: [run] %s: unknown key (allowed: %s)" % (path, k, ", ".join(RUN_KEYS)))
    for k in ("benchmarks", "modes", "size", "iterations"):
        if k not in run:
            raise ConfigError("%s: [run] %s: missing" % (path, k))

    benches = _list(run["benchmarks"])
    if benches == ["all"]:
        benches = list(known_benchmarks)
    for b in benches:
        if b not in known_benchmarks:
            raise ConfigError("%s: [run] benchmarks: unknown benchmark '%s' (known: %s)"
                              % (path, b, ", ".join(known_benchmarks)))
    if not benches or len(set(benches)) != len(benches):
        raise ConfigError("%s: [run] benchmarks: empty or repeated" % path)
    modes = _list(run["modes"])
    for m in modes:
        if m not in MODES:
            raise ConfigError("%s: [run] modes: unknown mode '%s' (allowed: %s)" % (path, m, ", ".join(MODES)))
    if not modes or len(set(modes)) != len(modes):
        raise ConfigError("%s: [run] modes: empty or repeated" % path)
    size = run["size"].strip()
    if size not in SIZES:
        raise ConfigError("%s: [run] size: '%s' (allowed: %s)" % (path, size, ", ".join(SIZES)))
    iterations = _int(path, "[run] iterations", run["iterations"], 1, 1000)
    hz = [_int(path, "[run] sample_hz", x, 1, 10000) for x in _list(run.get("sample_hz", "100"))]
    if not hz:
        raise ConfigError("%s: [run] sample_hz: empty" % path)
    frames = _int(path, "[run] sample_frames", run.get("sample_frames", "0"), 0, 64)
    vcpus = _int(path, "[run] vcpus", run.get("vcpus", "2"), 1, 16)
    timeout = _int(path, "[run] timeout", run.get("timeout", "1800"), 10, 86400)
    events = run.get("count_events", "vperf::vcpu-clock,vperf::steal,vperf::exits").strip()
    if not events or " " in events:
        raise ConfigError("%s: [run] count_events: a comma list of event names without spaces" % path)
    stem = os.path.splitext(os.path.basename(path))[0]
    output = run.get("output", "").strip() or os.path.join(
        "spec-results", "%s-%s" % (stem, datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
    threads = {}
    for sec in cp.sections():
        if not sec.startswith("benchmark."):
            continue
        b = sec[len("benchmark."):]
        if b not in known_benchmarks:
            raise ConfigError("%s: [%s]: unknown benchmark '%s'" % (path, sec, b))
        for k in cp[sec]:
            if k != "threads":
                raise ConfigError("%s: [%s] %s: unknown key (allowed: threads)" % (path, sec, k))
        threads[b] = _int(path, "[%s] threads" % sec, cp[sec]["threads"], 1, 256)
    return Config(path, benches, modes, size, iterations, hz, frames, vcpus, events, timeout, output, threads)


def load_bench_meta(d):
    path = os.path.join(d, "bench.conf")
    kv = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if "=" not in line:
                raise ConfigError("%s:%d: want key=value, got '%s'" % (path, n, line))
            k, v = (x.strip() for x in line.split("=", 1))
            if k not in ("description", "kind", "threads", "reltol", "abstol"):
                raise ConfigError("%s:%d: unknown key '%s'" % (path, n, k))
            kv[k] = (v, n)
    try:
        kind = kv.get("kind", ("int", 0))[0]
        if kind not in ("int", "fp"):
            raise ConfigError("%s:%d: kind: int or fp" % (path, kv["kind"][1]))
        return BenchMeta(kv.get("description", ("", 0))[0], kind, int(kv.get("threads", ("1", 0))[0]),
                         float(kv.get("reltol", ("0", 0))[0]), float(kv.get("abstol", ("0", 0))[0]))
    except ValueError as e:
        raise ConfigError("%s: %s" % (path, e)) from None
