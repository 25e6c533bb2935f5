"""Units of the harness: statistics against known values, config errors, verification, the summary and its
reports (run by ctest as spec.python_units)."""

import html.parser
import io
import json
import os
import re
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from specharness import config, report, results, stats, verify  # noqa: E402

BENCHES = ["compress", "db"]


class Stats(unittest.TestCase):
    def test_median_is_specs_lower_middle(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2)
        self.assertEqual(stats.median([5]), 5)
        with self.assertRaises(ValueError):
            stats.median([])

    def test_geomean(self):
        self.assertAlmostEqual(stats.geomean([1, 4, 16]), 4.0)
        with self.assertRaises(ValueError):
            stats.geomean([1, 0])

    def test_t_quantiles(self):
        for df, t in ((1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042)):
            self.assertAlmostEqual(stats.t975(df), t, places=3)
        self.assertAlmostEqual(stats.t975(120), 1.980, places=2)

    def test_ratio_ci_by_hand(self):
        # logs of 1.0, 1.1, 1.2: mean 0.0924, sd 0.0912; t(2) = 4.303; half = 4.303 * 0.0912 / sqrt(3)
        lo, hi = stats.ratio_ci([1.0, 1.1, 1.2])
        import math
        logs = [math.log(x) for x in (1.0, 1.1, 1.2)]
        m = sum(logs) / 3
        sd = math.sqrt(sum((x - m) ** 2 for x in logs) / 2)
        half = 4.303 * sd / math.sqrt(3)
        self.assertAlmostEqual(lo, math.exp(m - half), places=9)
        self.assertAlmostEqual(hi, math.exp(m + half), places=9)
        self.assertEqual(stats.ratio_ci([1.0]), (None, None))

    def test_noise_test(self):
        ch, beyond = stats.noise_test([1.00, 1.01, 0.99, 1.00], [1.50, 1.51, 1.49, 1.50])
        self.assertAlmostEqual(ch, 0.5)
        self.assertTrue(beyond)
        _, beyond = stats.noise_test([1.0, 1.1, 0.9, 1.05], [1.02, 0.95, 1.08, 1.0])
        self.assertFalse(beyond)
        self.assertIsNone(stats.noise_test([1.0], [1.1])[1])


def write(d, name, text):
    p = os.path.join(d, name)
    with open(p, "w") as f:
        f.write(text)
    return p


class Config(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def load(self, body):
        return config.load_config(write(self.d, "c.cfg", body), BENCHES)

    def err(self, body, word):
        with self.assertRaises(config.ConfigError) as cm:
            self.load(body)
        self.assertIn(word, str(cm.exception))
        self.assertIn("c.cfg", str(cm.exception))

    def test_good(self):
        c = self.load("[run]\nbenchmarks = all\nmodes = native, guest+sample\nsize = test\niterations = 3\n"
                      "sample_hz = 100, 1000\n[benchmark.db]\nthreads = 4\n")
        self.assertEqual(c.benchmarks, BENCHES)
        self.assertEqual(c.sample_hz, [100, 1000])
        self.assertEqual(c.threads, {"db": 4})
        self.assertEqual(c.vcpus, 2)

    def test_errors(self):
        base = "[run]\nbenchmarks = all\nmodes = native\nsize = test\n"
        self.err(base + "iterations = x\n", "not a number")
        self.err(base + "iterations = 0\n", "out of range")
        self.err(base.replace("native", "warp") + "iterations = 1\n", "unknown mode 'warp'")
        self.err(base + "iterations = 1\ncolour = red\n", "colour: unknown key")
        self.err(base.replace("all", "nosuch") + "iterations = 1\n", "unknown benchmark 'nosuch'")
        self.err(base + "iterations = 1\n[other]\n", "unknown section")
        self.err("[run]\nmodes = native\n", "missing")
        self.err(base + "iterations = 1\nsize = huge\n", "already exists")

    def test_bench_meta(self):
        write(self.d, "bench.conf", "# c\ndescription=x\nkind=fp\nthreads=2\nreltol=1e-9\nabstol=0\n")
        m = config.load_bench_meta(self.d)
        self.assertEqual((m.kind, m.threads, m.reltol), ("fp", 2, 1e-9))
        write(self.d, "bench.conf", "kind=fp\nwhat=1\n")
        with self.assertRaises(config.ConfigError) as cm:
            config.load_bench_meta(self.d)
        self.assertIn("bench.conf:2", str(cm.exception))


class Verify(unittest.TestCase):
    def test_rules(self):
        self.assertTrue(verify.verify_output("a 1.0000000001\n", "a 1.0\n", 1e-9, 0)[0])
        self.assertFalse(verify.verify_output("a 1.00001\n", "a 1.0\n", 1e-9, 0)[0])
        ok, d = verify.verify_output("roundtrip FAILED\n", "roundtrip ok\n", 0, 0)
        self.assertFalse(ok)
        self.assertIn("line 1", d)
        self.assertFalse(verify.verify_output("a\n", "a\nb\n", 0, 0)[0])
        self.assertFalse(verify.verify_output("", "a\n", 0, 0)[0])
        self.assertTrue(verify.verify_output("x 5", "x 5\n", 0, 0)[0])
        self.assertTrue(verify.verify_output("x 1e-13\n", "x 0\n", 0, 1e-12)[0])


def run(b, mode, it, el, status="ok", threads=None, counts=None):
    return {"benchmark": b, "mode": mode, "iteration": it, "seq": 0, "status": status, "reason": None,
            "elapsed_s": el, "verify": {"ok": status == "ok", "detail": ""}, "threads": threads or [],
            "counts": counts or {}, "samples": None, "samples_lost": None}


class Summary(unittest.TestCase):
    def setUp(self):
        d = tempfile.mkdtemp()
        self.cfg = config.load_config(write(d, "c.cfg", "[run]\nbenchmarks = all\nmodes = guest, guest+count\n"
                                            "size = test\niterations = 3\n"), BENCHES)
        th = [{"tid": 1, "comm": "main", "cpu_ns": 200_000_000, "counts": {"vperf::vcpu-clock": 202_000_000}},
              {"tid": 2, "comm": "w", "cpu_ns": 1_000_000, "counts": {"vperf::vcpu-clock": 2_000_000}}]
        self.runs = []
        for it in range(3):
            for b, base in (("compress", 1.0), ("db", 2.0)):
                self.runs.append(run(b, "guest", it, base))
                self.runs.append(run(b, "guest+count", it, base * 1.02, threads=th))
        self.runs.append(run("db", "guest+count", 3, 9.0, status="verify-failed"))
        self.s = results.summarize(self.runs, self.cfg, {"virt_mode": "nested", "hardware_pmu": False})

    def test_overhead_geomean_accuracy_invalid(self):
        g = self.s["geomean"]["guest+count vs guest"]
        self.assertAlmostEqual(g["ratio"], 1.02)
        self.assertEqual(self.s["invalid"][0]["status"], "verify-failed")
        self.assertNotIn("db|guest+count", self.s["cells"])	# never counted
        self.assertNotIn("db", self.s["overhead"]["guest+count vs guest"])
        a = self.s["accuracy"]["compress"]
        self.assertAlmostEqual(a["worst"], 0.01)
        self.assertEqual(a["threads_too_short"], 3)
        goals = {x["id"]: x for x in self.s["goals"]}
        self.assertEqual(goals["vcpu-clock-accuracy"]["result"], "met")
        self.assertEqual(goals["count-overhead"]["result"], "MISSED")

    def test_reports(self):
        text = report.text_table(self.s)
        self.assertIn("INVALID", text)
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "r.html")
            report.write_html(self.s, p)
            page = open(p).read()
        html.parser.HTMLParser().feed(page)
        svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
        self.assertTrue(svgs)
        for s in svgs:
            ET.fromstring(s)
        self.assertIn("compress", report.compare_text(self.s, self.s))

    def test_runs_file_round_trip_and_cut_last_line(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "runs.jsonl")
            for r in self.runs[:2]:
                results.append_run(p, r)
            with open(p, "a") as f:
                f.write('{"benchmark": "compress", "mo')
            sys.stderr, old = io.StringIO(), sys.stderr
            try:
                self.assertEqual(len(results.load_runs(p)), 2)
            finally:
                sys.stderr = old
            with open(p, "w") as f:
                f.write(json.dumps(self.runs[0]) + "\n{bad}\n" + json.dumps(self.runs[1]) + "\n")
            with self.assertRaises(ValueError) as cm:
                results.load_runs(p)
            self.assertIn("runs.jsonl:2", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
